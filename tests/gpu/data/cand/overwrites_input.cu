/* Cheat: computes in place in its input, then copies. */
extern "C" __global__ void relu(float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		x[i] = fmaxf(x[i], 0.f);
		y[i] = x[i];
	}
}
