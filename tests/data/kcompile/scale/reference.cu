/* Reference of the kcompile tests' task: y = 2 * x, one thread a value. */
extern "C" __global__ void scale_ref(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = 2.0f * x[i];
}
