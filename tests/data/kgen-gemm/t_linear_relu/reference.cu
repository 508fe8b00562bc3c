/* Reference for the t_linear_relu test task: y = relu(x^T @ W^T + b) with
 * x stored k x m, W n x k (F.linear's weight) and b n values. One thread
 * per output, the sum in double. */

extern "C" __global__ void t_linear_relu_ref(const float *x, const float *W,
	const float *b, float *y, long long m, long long n, long long k)
{
	long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	double v = 0.0;

	if (row >= m || col >= n)
		return;
	for (long long i = 0; i < k; i++)
		v += (double)x[i * m + row] * (double)W[col * k + i];
	v += (double)b[col];
	y[row * n + col] = (float)(v > 0.0 ? v : 0.0);
}
