// devcode.cu: kbench's own device code: input generation, comparison of an
// output with the reference (reduced in double on the device, so no tensor
// is copied to the host), and checksums that prove inputs were not changed.
// Built by nvcc into a fatbin that devcode.S embeds in the kbench binary.
#include "rng.h"

// dtype codes, as enum dtype in lib/plan.h
#define KB_F32 0
#define KB_F64 1
#define KB_I32 2
#define KB_I64 3

// distributions of docs/tasks.md
#define KB_NORMAL 0
#define KB_UNIFORM 1
#define KB_RANDINT 2

// What kb_compare accumulates over a whole output (kbench.h has the twin).
struct kb_stats {
	double sq_diff, sq_ref, max_abs, max_rel;
	unsigned long long bad, first_bad, collide, zero_bad;
};

// Fills n elements of p with draws of one distribution: normal (a mean,
// b std), uniform [a, b), randint [a, b); float draws are multiplied by
// scale. Element i depends only on (key, i): any grid gives the same data.
extern "C" __global__ void
kb_fill(void *p, long long n, int dtype, int dist, double a, double b,
	double scale, unsigned long long key)
{
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
		unsigned long long h = kb_bits(key, (unsigned long long)i);
		double v;
		if (dist == KB_NORMAL) {
			// Box-Muller on two 24-bit uniforms: u1 in (0, 1], u2 in [0, 1).
			float u1 = (float)((h >> 40) + 1) * (1.0f / 16777216.0f);
			float u2 = (float)(h & 0xFFFFFF) * (1.0f / 16777216.0f);
			v = a + b * (double)(sqrtf(-2.0f * __logf(u1)) * __cosf(6.2831853f * u2));
		} else if (dist == KB_UNIFORM) {
			v = a + (b - a) * kb_unit(h);
		} else {
			v = a + floor(kb_unit(h) * (b - a));
		}
		switch (dtype) {
		case KB_F32: {
			float f = (float)(v * scale);
			float hi = (float)(b * scale);
			// Rounding to float must not reach an excluded upper bound.
			if (dist == KB_UNIFORM && scale > 0 && f >= hi)
				f = nextafterf(hi, -INFINITY);
			((float *)p)[i] = f;
			break;
		}
		case KB_F64:
			((double *)p)[i] = v * scale;
			break;
		case KB_I32:
			((int *)p)[i] = (int)v;
			break;
		default:
			((long long *)p)[i] = (long long)v;
		}
	}
}

__device__ static double
kb_load(const void *p, long long i, int dtype)
{
	switch (dtype) {
	case KB_F32: return ((const float *)p)[i];
	case KB_F64: return ((const double *)p)[i];
	case KB_I32: return ((const int *)p)[i];
	default: return (double)((const long long *)p)[i];
	}
}

// Whether element i of an integer tensor equals the poison (all bits 1).
__device__ static bool
kb_int_poison(const void *p, long long i, int dtype)
{
	if (dtype == KB_I32)
		return ((const int *)p)[i] == -1;
	return ((const long long *)p)[i] == -1LL;
}

__device__ static void
kb_max(double *m, double v)
{
	// Non-negative doubles order like their bit patterns.
	atomicMax((unsigned long long *)m, (unsigned long long)__double_as_longlong(v));
}

__device__ static double
kb_warp_sum(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

__device__ static double
kb_warp_max(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
	return v;
}

__device__ static unsigned long long
kb_warp_sumu(unsigned long long v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

// Compares out with ref elementwise: abs(out - ref) <= atol + rtol*abs(ref)
// for floats (exact for integers); NaN matches only NaN, an infinity only
// itself. Accumulates squared differences and squared reference values
// (finite pairs), the largest errors, the mismatches and the first one,
// the reference elements equal to the poison ("collide": an unwritten
// element there would go unseen), and the elements where an all-zero
// output would fail (zero_bad: the weak-task check). The block must be a
// multiple of 32 threads.
extern "C" __global__ void
kb_compare(const void *out, const void *ref, long long n, int dtype,
	double atol, double rtol, struct kb_stats *st)
{
	double sq_diff = 0, sq_ref = 0, max_abs = 0, max_rel = 0;
	unsigned long long bad = 0, collide = 0, zero_bad = 0;
	unsigned long long first = ~0ULL;
	bool isint = dtype == KB_I32 || dtype == KB_I64;
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
		double o = kb_load(out, i, dtype), r = kb_load(ref, i, dtype);
		bool mismatch;
		if (isint) {
			mismatch = o != r;
			collide += kb_int_poison(ref, i, dtype);
			zero_bad += r != 0;
			double d = fabs(o - r);
			sq_diff += d * d;
			sq_ref += r * r;
			max_abs = fmax(max_abs, d);
			if (r != 0)
				max_rel = fmax(max_rel, d / fabs(r));
		} else if (isnan(r) || isnan(o)) {
			mismatch = !(isnan(r) && isnan(o));
			collide += isnan(r);
			zero_bad++;
		} else if (isinf(r) || isinf(o)) {
			mismatch = o != r;
			zero_bad += isinf(r);
		} else {
			double d = fabs(o - r), lim = atol + rtol * fabs(r);
			mismatch = !(d <= lim);
			zero_bad += !(fabs(r) <= lim);
			sq_diff += d * d;
			sq_ref += r * r;
			max_abs = fmax(max_abs, d);
			if (r != 0)
				max_rel = fmax(max_rel, d / fabs(r));
		}
		if (mismatch) {
			bad++;
			if ((unsigned long long)i < first)
				first = i;
		}
	}
	sq_diff = kb_warp_sum(sq_diff);
	sq_ref = kb_warp_sum(sq_ref);
	max_abs = kb_warp_max(max_abs);
	max_rel = kb_warp_max(max_rel);
	bad = kb_warp_sumu(bad);
	collide = kb_warp_sumu(collide);
	zero_bad = kb_warp_sumu(zero_bad);
	for (int o = 16; o > 0; o >>= 1)
		first = min(first, __shfl_down_sync(0xffffffffu, first, o));
	if ((threadIdx.x & 31) == 0) {
		if (sq_diff != 0)
			atomicAdd(&st->sq_diff, sq_diff);
		if (sq_ref != 0)
			atomicAdd(&st->sq_ref, sq_ref);
		kb_max(&st->max_abs, max_abs);
		kb_max(&st->max_rel, max_rel);
		if (bad) {
			atomicAdd(&st->bad, bad);
			atomicMin(&st->first_bad, first);
		}
		if (collide)
			atomicAdd(&st->collide, collide);
		if (zero_bad)
			atomicAdd(&st->zero_bad, zero_bad);
	}
}

// A position-sensitive checksum of n 32-bit words: the wrapping sum of a
// hash of (word, index). Any change to any word changes it, except with
// probability about 2^-64.
extern "C" __global__ void
kb_checksum(const unsigned *p, long long n, unsigned long long *sum)
{
	unsigned long long s = 0;
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
		s += kb_mix(((unsigned long long)p[i] << 32 ^ (unsigned long long)i) + 0x9E3779B97F4A7C15ULL * (unsigned long long)(i >> 32));
	s = kb_warp_sumu(s);
	if ((threadIdx.x & 31) == 0 && s)
		atomicAdd(sum, s);
}

// Counts the 32-bit words of p that differ from pattern (guard zones).
extern "C" __global__ void
kb_count_ne(const unsigned *p, long long n, unsigned pattern, unsigned long long *count)
{
	unsigned long long c = 0;
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
		c += p[i] != pattern;
	c = kb_warp_sumu(c);
	if ((threadIdx.x & 31) == 0 && c)
		atomicAdd(count, c);
}
