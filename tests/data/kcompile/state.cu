// Module-scope memory of every kind a kernel can keep between launches:
// zero-initialised (count, hidden), initialised (table), and a pointer to
// another variable (initialised through a relocation).
__device__ unsigned long long count;
static __device__ int hidden[7];
__device__ float table[100] = {1, 2, 3};
__device__ unsigned long long *counter = &count;

extern "C" __global__ void k(const float *x, float *y, long long n, int m, float a,
	double d, char c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		y[i] = x[i] * a + table[i % 100] + (float)d + c + m;
		atomicAdd(counter, 1ULL);
		hidden[i % 7]++;
	}
}
