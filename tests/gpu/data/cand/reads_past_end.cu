/* Bug: every output depends on x[n], one past the end (0 * x[n] is 0 only
 * when x[n] happens to be finite). */
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = fmaxf(x[i], 0.f) + 0.f * x[n];
}
