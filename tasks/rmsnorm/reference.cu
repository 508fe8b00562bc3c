/* Reference for the rmsnorm task, y = x / sqrt(mean(x^2, dim=1,
 * keepdim=True) + eps) with x of shape (batch, channels, h, w): one thread
 * per (batch, h*w position) sums the squares over the channels in double
 * (neighbouring threads read neighbouring positions) and writes its
 * channels' outputs. */

extern "C" __global__ void rmsnorm_ref(const float *x, float *y,
	long long batch, long long channels, long long inner, double eps)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     p < batch * inner; p += step) {
		long long base = (p / inner) * channels * inner + p % inner;
		double sum = 0.0, r;

		for (long long c = 0; c < channels; c++) {
			double v = x[base + c * inner];

			sum += v * v;
		}
		r = 1.0 / sqrt(sum / (double)channels + eps);
		for (long long c = 0; c < channels; c++)
			y[base + c * inner] = (float)((double)x[base + c * inner] * r);
	}
}
