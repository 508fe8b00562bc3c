/* Reference for the frobenius_norm task, y = x / torch.norm(x, p='fro')
 * over all n values: PARTS blocks write double partial sums of squares,
 * one block adds them and takes the square root, then a grid-stride loop
 * divides. */

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

/* Grid (PARTS): partial[block] = the sum of x^2 over its grid-stride share. */
extern "C" __global__ void fro_partial_ref(const float *x, double *partial,
	long long n)
{
	double sum = 0.0;

	for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
	     i += (long long)PARTS * BLOCK) {
		double v = x[i];

		sum += v * v;
	}
	sum = block_sum(sum);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = sum;
}

/* Grid (1): norm[0] = sqrt(the sum of the PARTS partial sums). */
extern "C" __global__ void fro_norm_ref(const double *partial, double *norm)
{
	double sum = 0.0;

	for (int i = threadIdx.x; i < PARTS; i += BLOCK)
		sum += partial[i];
	sum = block_sum(sum);
	if (threadIdx.x == 0)
		norm[0] = sqrt(sum);
}

extern "C" __global__ void fro_apply_ref(const float *x, const double *norm,
	float *y, long long n)
{
	long long step = (long long)gridDim.x * blockDim.x;
	double d = norm[0];

	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < n; i += step)
		y[i] = (float)((double)x[i] / d);
}
