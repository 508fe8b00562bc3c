/* Reference for the matvec task, y = A @ B with A of shape (m, k) and B of
 * shape (k, 1): one block of 256 threads per row, the dot product in
 * double. */

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

extern "C" __global__ void matvec_ref(const float *A, const float *B,
	float *C, long long m, long long k)
{
	long long row = blockIdx.x;
	const float *ar = A + row * k;
	double sum = 0.0;

	if (row >= m)
		return;
	for (long long j = threadIdx.x; j < k; j += BLOCK)
		sum += (double)ar[j] * (double)B[j];
	sum = block_sum(sum);
	if (threadIdx.x == 0)
		C[row] = (float)sum;
}
