/* A kernel whose warpgroups trade registers (setmaxnreg, sm_90a): ptxas
 * records that in the kernel's .nv.info by an attribute of no value
 * (EIFMT_NVAL), which takes four bytes there as every other does. */
extern "C" __global__ void __launch_bounds__(256, 1)
k(const float *x, float *y, long long n)
{
	if (threadIdx.x < 128) {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 240;" ::: "memory");
		if (threadIdx.x < n)
			y[threadIdx.x] = 2.0f * x[threadIdx.x];
	} else {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 24;" ::: "memory");
	}
}
