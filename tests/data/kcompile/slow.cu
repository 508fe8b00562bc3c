/* A kernel that takes NVRTC long to compile (about 9 s on a 2-core Xeon
 * for N = 96, and it grows as N^2): a fully unrolled all-pairs loop over
 * N registers' worth of values, spilled. With N = 160 it is far past any
 * deadline the tests give. */
#define N 160
extern "C" __global__ void __launch_bounds__(1024, 2)
slow(const float *x, float *y)
{
	float a[N];
	float s = 0;

#pragma unroll
	for (int i = 0; i < N; i++)
		a[i] = x[threadIdx.x + i * 1024];
#pragma unroll
	for (int j = 0; j < N; j++)
#pragma unroll
		for (int i = 0; i < N; i++)
			s += a[i] * a[(i + j) % N];
	y[threadIdx.x] = s;
}
