/* Reference for the mse_loss task, loss = torch.mean((a - b)**2) over all
 * n values: PARTS blocks write double partial sums, one block adds them
 * and divides by n. */

#define BLOCK 256
#define PARTS 1024

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

/* Grid (PARTS): partial[block] = the sum of (a - b)^2 over its share. */
extern "C" __global__ void mse_partial_ref(const float *a, const float *b,
	double *partial, long long n)
{
	double sum = 0.0;

	for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
	     i += (long long)PARTS * BLOCK) {
		double d = (double)a[i] - (double)b[i];

		sum += d * d;
	}
	sum = block_sum(sum);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = sum;
}

/* Grid (1): loss[0] = the sum of the PARTS partial sums over n. */
extern "C" __global__ void mse_mean_ref(const double *partial, float *loss,
	long long n)
{
	double sum = 0.0;

	for (int i = threadIdx.x; i < PARTS; i += BLOCK)
		sum += partial[i];
	sum = block_sum(sum);
	if (threadIdx.x == 0)
		loss[0] = (float)(sum / (double)n);
}
