/* Bug: never terminates (waits for a flag nothing ever sets). */
__device__ int go;
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	while (!*(volatile int *)&go)
		;
}
