/* Reference for the l1norm task, y = x / torch.mean(torch.abs(x), dim=1,
 * keepdim=True) over a rows x cols matrix: one block of 256 threads per
 * row, the sum of absolute values in double. */

#define BLOCK 256

/* The block's sum of v handed to every thread; blockDim.x must be BLOCK. */
static __device__ double block_sum(double v)
{
	__shared__ double s[BLOCK];

	s[threadIdx.x] = v;
	__syncthreads();
	for (unsigned h = BLOCK / 2; h > 0; h /= 2) {
		if (threadIdx.x < h)
			s[threadIdx.x] += s[threadIdx.x + h];
		__syncthreads();
	}
	v = s[0];
	__syncthreads();
	return v;
}

extern "C" __global__ void l1norm_ref(const float *x, float *y,
	long long rows, long long cols)
{
	long long row = blockIdx.x;
	const float *xr = x + row * cols;
	float *yr = y + row * cols;
	double sum = 0.0, mean;

	if (row >= rows)
		return;
	for (long long j = threadIdx.x; j < cols; j += BLOCK)
		sum += fabs((double)xr[j]);
	mean = block_sum(sum) / (double)cols;
	for (long long j = threadIdx.x; j < cols; j += BLOCK)
		yr[j] = (float)((double)xr[j] / mean);
}
