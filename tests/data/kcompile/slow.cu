/* A kernel that takes NVRTC long to compile: a fully unrolled all-pairs
 * loop over N registers' worth of values, spilled. With CUDA 13.0's NVRTC
 * on this project's 2-core machines N = 160 took 2.6 s (inside the 3 s
 * deadline of a test that wants a timeout), 480 took 5.6 s and 1024 takes
 * 29 s: ten times any deadline the tests give. */
#define N 1024
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
