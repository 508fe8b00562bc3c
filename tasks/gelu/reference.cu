/* Reference for the gelu task, y = F.gelu(x) (exact, erf):
 * a grid-stride loop, each value computed in double and rounded once. */

extern "C" __global__ void gelu_ref(const float *x, float *y, long long n)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < n; i += step) {
		double v = x[i];

		y[i] = (float)(0.5 * v * (1.0 + erf(v * 0.70710678118654752440)));
	}
}
