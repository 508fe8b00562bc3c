/* Bug: one thread too many writes, one element past the end of y. */
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i <= n)
		y[i] = i < n ? fmaxf(x[i], 0.f) : 0.f;
}
