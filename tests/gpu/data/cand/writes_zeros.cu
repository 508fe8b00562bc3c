/* Cheat: writes zeros. */
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 0.f;
}
