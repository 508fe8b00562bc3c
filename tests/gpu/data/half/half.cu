// Kernels that get 2-byte floats wrong in ways a loose check would let
// pass (tests/gpu/oracle.bats), for an imported cumsum task (rows, len)
// of bf16 or f16 (F16 1) tensors, and the control that gets them right.

__device__ static float half_f(unsigned short h)
{
#if F16
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
#else
	return __uint_as_float((unsigned)h << 16);
#endif
}

__device__ static unsigned short half_of(float f)
{
	unsigned short h;
#if F16
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#else
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
	return h;
}

// The running sum kept in the 2-byte type, rounded at every step (as
// PyTorch's CUDA cumsum does for half types): one thread a row.
extern "C" __global__ void scan_in_half(const unsigned short *x, unsigned short *y,
	long long rows, long long len)
{
	long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	unsigned short run = half_of(0.0f);
	for (long long i = 0; i < len; i++) {
		run = half_of(half_f(run) + half_f(x[r * len + i]));
		y[r * len + i] = run;
	}
}

// The running sum in fp32, each output rounded once (the control, ulps 0),
// or then ulps larger in magnitude: a kernel one rounding off passes (2u),
// one two ulps off must not.
extern "C" __global__ void scan_fp32(const unsigned short *x, unsigned short *y,
	long long rows, long long len, int ulps)
{
	long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	float run = 0.0f;
	for (long long i = 0; i < len; i++) {
		run += half_f(x[r * len + i]);
		y[r * len + i] = half_of(run) + ulps;
	}
}

// The right sums, and one 2-byte element written past the output's end:
// where the output holds an odd number of them that element is the rest
// of the buffer's last 32-bit word, not yet the guard zone.
extern "C" __global__ void scan_past_end(const unsigned short *x, unsigned short *y,
	long long rows, long long len)
{
	long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	float run = 0.0f;
	for (long long i = 0; i < len; i++) {
		run += half_f(x[r * len + i]);
		y[r * len + i] = half_of(run);
	}
	if (r == rows - 1)
		y[rows * len] = half_of(run);
}
