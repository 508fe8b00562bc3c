/* Reference for the cross_entropy task, loss = F.cross_entropy(x, targets)
 * (mean over rows): one block per row writes its loss, logsumexp(x[row]) -
 * x[row][targets[row]], in double to row_loss; one block then averages. */

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

extern "C" __global__ void ce_rows_ref(const float *x,
	const long long *targets, double *row_loss, long long rows,
	long long classes)
{
	long long row = blockIdx.x;
	const float *xr = x + row * classes;
	double m, sum = 0.0;

	if (row >= rows)
		return;
	m = xr[0];
	for (long long j = threadIdx.x; j < classes; j += BLOCK)
		m = xr[j] > m ? xr[j] : m;
	m = block_reduce(m, 1);
	for (long long j = threadIdx.x; j < classes; j += BLOCK)
		sum += exp((double)xr[j] - m);
	sum = block_reduce(sum, 0);
	if (threadIdx.x == 0)
		row_loss[row] = m + log(sum) - (double)xr[targets[row]];
}

extern "C" __global__ void ce_mean_ref(const double *row_loss, float *loss,
	long long rows)
{
	double sum = 0.0;

	for (long long i = threadIdx.x; i < rows; i += BLOCK)
		sum += row_loss[i];
	sum = block_reduce(sum, 0);
	if (threadIdx.x == 0)
		loss[0] = (float)(sum / (double)rows);
}
