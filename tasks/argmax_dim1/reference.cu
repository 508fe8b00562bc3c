/* Reference for the argmax_dim1 task, y = torch.argmax(x, dim=1) (int64)
 * with x of shape (batch, rows, cols): one thread per (batch, col) output
 * walks the rows and keeps the first index of the maximum, as torch does. */

extern "C" __global__ void argmax_dim1_ref(const float *x, long long *y,
	long long batch, long long rows, long long cols)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     o < batch * cols; o += step) {
		const float *xc = x + (o / cols) * rows * cols + o % cols;
		float m = xc[0];
		long long best = 0;

		for (long long r = 1; r < rows; r++) {
			if (xc[r * cols] > m) {
				m = xc[r * cols];
				best = r;
			}
		}
		y[o] = best;
	}
}
