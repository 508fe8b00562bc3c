/* Bug: reads a terabyte past its input: the access faults. */
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = fmaxf(x[i + (1LL << 38)], 0.f);
}
