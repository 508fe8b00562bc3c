/* Reference for the new_gelu task,
 * y = 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))):
 * a grid-stride loop, each value computed in double and rounded once. */

extern "C" __global__ void new_gelu_ref(const float *x, float *y, long long n)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < n; i += step) {
		double v = x[i];

		y[i] = (float)(0.5 * v * (1.0 + tanh(0.79788456080286535588 *
		    (v + 0.044715 * v * v * v))));
	}
}
