/* A kernel that spills: 40 live floats, all-pairs products fully unrolled,
 * under __launch_bounds__(1024, 2), which caps it at 32 registers. */
extern "C" __global__ void __launch_bounds__(1024, 2)
spill(const float *x, float *y)
{
	float a[40];
	float s = 0;

#pragma unroll
	for (int i = 0; i < 40; i++)
		a[i] = x[threadIdx.x + i * 1024];
#pragma unroll
	for (int j = 0; j < 40; j++)
#pragma unroll
		for (int i = 0; i < 40; i++)
			s += a[i] * a[(i + j) % 40];
	y[threadIdx.x] = s;
}
