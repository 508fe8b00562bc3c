/* Reference for the swish task, y = x * torch.sigmoid(x):
 * a grid-stride loop, each value computed in double and rounded once. */

extern "C" __global__ void swish_ref(const float *x, float *y, long long n)
{
	long long step = (long long)gridDim.x * blockDim.x;

	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < n; i += step) {
		double v = x[i];

		y[i] = (float)(v / (1.0 + exp(-v)));
	}
}
