/* Reference for the kbench test task rowsum: y[r] = sum of row r, in double. */
extern "C" __global__ void rowsum_ref(const float *x, float *y, long long rows, long long cols)
{
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	double s = 0;
	for (long long j = 0; j < cols; j++)
		s += x[r * cols + j];
	y[r] = (float)s;
}
