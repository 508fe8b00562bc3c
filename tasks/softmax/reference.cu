/* Reference for the softmax task, y = torch.softmax(x, dim=1) over a
 * rows x cols matrix: one block of 256 threads per row, three passes over
 * the row (max, sum of exponentials, output), all in double. */

#define BLOCK 256

/* The block's reduction of v (sum, or max when want_max) handed to every
 * thread; blockDim.x must be BLOCK. */
static __device__ double block_reduce(double v, int want_max)
{
	__shared__ double s[BLOCK];

	s[threadIdx.x] = v;
	__syncthreads();
	for (unsigned h = BLOCK / 2; h > 0; h /= 2) {
		if (threadIdx.x < h) {
			double o = s[threadIdx.x + h];

			if (want_max)
				s[threadIdx.x] = o > s[threadIdx.x] ? o : s[threadIdx.x];
			else
				s[threadIdx.x] += o;
		}
		__syncthreads();
	}
	v = s[0];
	__syncthreads();
	return v;
}

extern "C" __global__ void softmax_ref(const float *x, float *y,
	long long rows, long long cols)
{
	long long row = blockIdx.x;
	const float *xr = x + row * cols;
	float *yr = y + row * cols;
	double m, sum = 0.0;

	if (row >= rows)
		return;
	m = xr[0];
	for (long long j = threadIdx.x; j < cols; j += BLOCK)
		m = xr[j] > m ? xr[j] : m;
	m = block_reduce(m, 1);
	for (long long j = threadIdx.x; j < cols; j += BLOCK)
		sum += exp((double)xr[j] - m);
	sum = block_reduce(sum, 0);
	for (long long j = threadIdx.x; j < cols; j += BLOCK)
		yr[j] = (float)(exp((double)xr[j] - m) / sum);
}
