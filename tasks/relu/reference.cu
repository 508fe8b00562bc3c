/* Reference for the relu task, y = torch.relu(x):
 * a grid-stride loop, each value computed in double and rounded once. */

extern "C" __global__ void relu_ref(const float *x, float *y, long long n)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < n; i += step) {
		double v = x[i];

		y[i] = (float)(v > 0.0 ? v : 0.0);
	}
}
