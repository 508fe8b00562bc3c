/* A kernel without extern "C": NVRTC compiles it under its C++ name, so a
 * launch plan that says "k" cannot find it. */
__global__ void k(const float *x, float *y)
{
	y[threadIdx.x] = 2.0f * x[threadIdx.x];
}
