/* Reference for the t_triu test task: y[b] = triu(A[b] @ B[b] + 1), A m x
 * k and B k x n per batch (blockIdx.z). One thread per output, the sum in
 * double; below the diagonal (col < row) exactly 0. */

extern "C" __global__ void t_triu_ref(const float *A, const float *B, float *y,
	long long m, long long n, long long k)
{
	long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long b = blockIdx.z;
	double v = 0.0;

	if (row >= m || col >= n)
		return;
	A += b * m * k;
	B += b * k * n;
	for (long long i = 0; i < k; i++)
		v += (double)A[row * k + i] * (double)B[i * n + col];
	y[(b * m + row) * n + col] = col < row ? 0.0f : (float)(v + 1.0);
}
