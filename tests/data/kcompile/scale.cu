/* A candidate for the scale task: BLOCK threads a block, each thread a
 * grid-stride loop; SCALE is a knob given as a string ("2.0f"). */
extern "C" __global__ void __launch_bounds__(BLOCK)
scale_grid(const float *__restrict__ x, float *__restrict__ y, long long n)
{
	for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
	     i += (long long)gridDim.x * BLOCK)
		y[i] = SCALE * x[i];
}
