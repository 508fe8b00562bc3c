/* A toy source for the engine's tests: placeholders, no real work. */
#define VARIANT_{{variant}} 1
#define OP_{{op}} 1
extern "C" __global__ void toy_{{variant}}(const float *x, float *y, long long rows, long long cols)
{
	const float init[2][2] = {{1, 2}, {3, 4}};
	y[0] = x[0] * init[1][1] + (float)(rows + cols);
}
