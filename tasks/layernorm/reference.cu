/* Reference for the layernorm task, y = F.layer_norm(x, (channels, h, w),
 * weight, bias, eps) with x of shape (batch, channels, h, w): each of the
 * batch rows of n = channels*h*w values is normalized with its mean and
 * biased variance. Rows are long (4M values) and few (16), so the sums run
 * in two passes (mean, then squared deviations), each as CHUNKS blocks per
 * row writing double partial sums and one block per row combining them. */

#define BLOCK 256
#define CHUNKS 256

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

/* Grid (CHUNKS, batch). Pass 0 sums x; pass 1 sums (x - mean)^2 with the
 * mean in stats[2*row]. Writes partial[row*CHUNKS + chunk]. */
extern "C" __global__ void ln_partial_ref(const float *x, const double *stats,
	double *partial, long long n, int pass)
{
	long long row = blockIdx.y, chunk = blockIdx.x;
	const float *xr = x + row * n;
	double mean = pass ? stats[2 * row] : 0.0, sum = 0.0;

	for (long long j = chunk * BLOCK + threadIdx.x; j < n;
	     j += (long long)CHUNKS * BLOCK) {
		double d = (double)xr[j] - mean;

		sum += pass ? d * d : d;
	}
	sum = block_sum(sum);
	if (threadIdx.x == 0)
		partial[row * CHUNKS + chunk] = sum;
}

/* Grid (batch). Pass 0 stores the mean in stats[2*row]; pass 1 stores
 * 1 / sqrt(var + eps) in stats[2*row + 1]. */
extern "C" __global__ void ln_stats_ref(const double *partial, double *stats,
	long long n, double eps, int pass)
{
	long long row = blockIdx.x;
	double sum = block_sum(threadIdx.x < CHUNKS ?
	    partial[row * CHUNKS + threadIdx.x] : 0.0);

	if (threadIdx.x != 0)
		return;
	if (pass == 0)
		stats[2 * row] = sum / (double)n;
	else
		stats[2 * row + 1] = 1.0 / sqrt(sum / (double)n + eps);
}

/* y = (x - mean) * rstd * weight + bias, a grid-stride loop over all
 * batch*n values. */
extern "C" __global__ void ln_apply_ref(const float *x, const float *weight,
	const float *bias, const double *stats, float *y, long long n,
	long long total)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < total; i += step) {
		long long row = i / n, j = i % n;
		double xhat = ((double)x[i] - stats[2 * row]) * stats[2 * row + 1];

		y[i] = (float)(xhat * (double)weight[j] + (double)bias[j]);
	}
}
