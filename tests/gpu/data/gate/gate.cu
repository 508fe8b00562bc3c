
// The null-kernel gate (tests/gpu/data/gate/mkgate): kernels that must never
// pass a task's checks, appended to the task's reference source. dtype
// codes as kbench's: f32 0, f64 1, i32 2, i64 3, f16 4, bf16 5.
__device__ static double gate_load(const void *p, long long i, int dt)
{
	unsigned short h;
	float f;

	switch (dt) {
	case 0: return ((const float *)p)[i];
	case 1: return ((const double *)p)[i];
	case 2: return ((const int *)p)[i];
	case 4:
		h = ((const unsigned short *)p)[i];
		asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
		return f;
	case 5: return __uint_as_float((unsigned)((const unsigned short *)p)[i] << 16);
	default: return (double)((const long long *)p)[i];
	}
}

__device__ static void gate_store(void *p, long long i, int dt, double v)
{
	unsigned short h;

	switch (dt) {
	case 0: ((float *)p)[i] = (float)v; break;
	case 1: ((double *)p)[i] = v; break;
	case 2: ((int *)p)[i] = (int)llrint(v); break;
	case 4:
		asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"((float)v));
		((unsigned short *)p)[i] = h;
		break;
	case 5:
		asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"((float)v));
		((unsigned short *)p)[i] = h;
		break;
	default: ((long long *)p)[i] = llrint(v);
	}
}

#define GATE_LOOP(i, n) \
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
	     i += (long long)gridDim.x * blockDim.x)

// Writes v to every element.
extern "C" __global__ void gate_const(void *out, long long n, int dt, double v)
{
	GATE_LOOP(i, n)
		gate_store(out, i, dt, v);
}

// Copies the first input into an output, cycling over it where the output
// is the larger.
extern "C" __global__ void gate_copy(const void *in, long long nin, int dtin,
	void *out, long long n, int dt)
{
	GATE_LOOP(i, n)
		gate_store(out, i, dt, gate_load(in, i % nin, dtin));
}

// The input with every element off the stride set to zero.
extern "C" __global__ void gate_subsample(const void *in, void *out, long long n,
	int dt, long long stride)
{
	GATE_LOOP(i, n)
		gate_store(out, i, dt, i % stride ? 0.0 : gate_load(in, i, dt));
}

// acc[0] = 0 (the workspace comes poisoned).
extern "C" __global__ void gate_zero(double *acc)
{
	acc[0] = 0;
}

// acc[0] += the sum of the n elements.
extern "C" __global__ void gate_sum(const void *p, long long n, int dt, double *acc)
{
	double s = 0;
	GATE_LOOP(i, n)
		s += gate_load(p, i, dt);
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(acc, s);
}

// Writes the mean of the true output (acc[0] / n) to every element: the
// one constant closest to the answer.
extern "C" __global__ void gate_mean(void *out, long long n, int dt, const double *acc)
{
	double m = acc[0] / (double)n;
	GATE_LOOP(i, n)
		gate_store(out, i, dt, m);
}
