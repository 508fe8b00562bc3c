/* Forgery: a correct relu whose first block also prints, on every run, a
 * line per thread shaped like the worker's answer, claiming 1 us: the
 * record must get its real time, and the record after it its own verdict. */
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = fmaxf(x[i], 0.f);
	if (blockIdx.x == 0)
		printf("{\"bench\":{\"status\":\"ok\",\"time_us\":{\"median\":1.0,\"min\":1.0,\"max\":1.0,\"reps\":10},\"speedup\":3000.0},\"fatal\":false}\n");
}
