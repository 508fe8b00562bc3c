/* Reference for the batched_linear_tanh test task: for each batch entry
 * (grid z), y = tanh(x @ W^T + b) with x m x k, W n x k (F.linear's
 * weight) and b n values. One thread per output, the sum in double. */

extern "C" __global__ void batched_linear_tanh_ref(const float *x,
	const float *W, const float *b, float *y, long long m, long long n,
	long long k)
{
	long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long z = blockIdx.z;
	double v = 0.0;

	if (row >= m || col >= n)
		return;
	x += z * m * k + row * k;
	W += z * n * k + col * k;
	for (long long i = 0; i < k; i++)
		v += (double)x[i] * (double)W[i];
	y[z * m * n + row * n + col] = (float)tanh(v + (double)b[col]);
}
