/* A candidate that does not compile: the statement on line 5 lacks its ';'. */
extern "C" __global__ void k(const float *x, float *y)
{
	int i = threadIdx.x;
	y[i] = 2.0f * x[i]
}
