// devcode.cu: kbench's own device code: input generation, comparison of an
// output with the reference (reduced in double on the device, so no tensor
// is copied to the host), and checksums that prove inputs were not changed.
// Built by nvcc into a fatbin that devcode.S embeds in the kbench binary.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "rng.h"

// dtype codes, as enum dtype in lib/plan.h
#define KB_F32 0
#define KB_F64 1
#define KB_I32 2
#define KB_I64 3
#define KB_F16 4
#define KB_BF16 5
#define KB_BOOL 6

// distributions of docs/tasks.md
#define KB_NORMAL 0
#define KB_UNIFORM 1
#define KB_RANDINT 2
#define KB_TRIL 3

// What kb_compare accumulates over a whole output (kbench.h has the twin).
struct kb_stats {
	double sq_diff, sq_ref, max_abs, max_rel;
	unsigned long long bad, first_bad, collide, zero_bad;
};

// The bits of v rounded to nearest in a 2-byte float type, and back.
__device__ static unsigned short
kb_to16(float v, int dtype)
{
	return dtype == KB_F16 ? __half_as_ushort(__float2half_rn(v))
		: __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

__device__ static float
kb_from16(unsigned short u, int dtype)
{
	return dtype == KB_F16 ? __half2float(__ushort_as_half(u))
		: __bfloat162float(__ushort_as_bfloat16(u));
}

// A uniform draw v < hi in a 2-byte type: rounding may reach hi, which
// the range excludes; then the next value below it (bits one step toward
// minus infinity: down for a positive value, up for a negative one).
__device__ static unsigned short
kb_below16(float v, float hi, int dtype, bool clamp)
{
	unsigned short u = kb_to16(v, dtype);
	while (clamp && kb_from16(u, dtype) >= hi)
		u = (u & 0x7FFF) == 0 ? 0x8001 : (u & 0x8000) ? u + 1 : u - 1;
	return u;
}

// Fills n elements of p with draws of one distribution: normal (a mean,
// b std), uniform [a, b), randint [a, b); float draws are multiplied by
// scale. tril is no draw: matrices of a rows by b columns, 1 where the
// column is at most the row, else 0 (a causal mask; the task gives it no
// scale). Element i depends only on (key, i): any grid gives the same
// data.
// Float normal and uniform draws in f32, f16 and bf16, the common case
// and the one every timed run pays for (kbench draws fresh inputs for
// each), come two from one 64-bit hash of (key, i / 2) in float
// arithmetic: Box-Muller's two normals, or two 24-bit uniforms, rounded
// to nearest in the 2-byte types. The rest come one per hash, in double.
extern "C" __global__ void
kb_fill(void *p, long long n, int dtype, int dist, double a, double b,
	double scale, unsigned long long key)
{
	long long stride = (long long)gridDim.x * blockDim.x;
	long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	bool half = dtype == KB_F16 || dtype == KB_BF16;
	if ((dtype == KB_F32 || half) && (dist == KB_NORMAL || dist == KB_UNIFORM)) {
		float lo = (float)(a * scale), hi = (float)(b * scale);
		float *f = (float *)p;
		for (long long j = first; 2 * j < n; j += stride) {
			unsigned long long h = kb_bits(key, (unsigned long long)j);
			float u1 = (float)((h >> 40) + 1) * (1.0f / 16777216.0f);   // (0, 1]
			float u2 = (float)(h & 0xFFFFFF) * (1.0f / 16777216.0f);    // [0, 1)
			float v0, v1;
			if (dist == KB_NORMAL) {
				float r = sqrtf(-2.0f * __logf(u1)), sn, cs;
				sincospif(2.0f * u2, &sn, &cs);
				v0 = lo + hi * (r * cs);   // lo is mean * scale, hi std * scale
				v1 = lo + hi * (r * sn);
			} else {
				v0 = lo + (hi - lo) * (u1 - 1.0f / 16777216.0f);
				v1 = lo + (hi - lo) * u2;
				// Rounding must not reach the excluded upper bound.
				if (scale > 0 && v0 >= hi)
					v0 = nextafterf(hi, -INFINITY);
				if (scale > 0 && v1 >= hi)
					v1 = nextafterf(hi, -INFINITY);
			}
			if (half) {
				bool clamp = dist == KB_UNIFORM && scale > 0;
				unsigned short *h = (unsigned short *)p;
				unsigned short h0 = kb_below16(v0, hi, dtype, clamp);
				unsigned short h1 = kb_below16(v1, hi, dtype, clamp);
				if (2 * j + 1 < n)
					((unsigned *)h)[j] = (unsigned)h1 << 16 | h0;
				else
					h[2 * j] = h0;
			} else if (2 * j + 1 < n) {
				((float2 *)f)[j] = make_float2(v0, v1);
			} else {
				f[2 * j] = v0;
			}
		}
		return;
	}
	for (long long i = first; i < n; i += stride) {
		unsigned long long h = kb_bits(key, (unsigned long long)i);
		double v;
		if (dist == KB_NORMAL) {
			// Box-Muller on two 24-bit uniforms: u1 in (0, 1], u2 in [0, 1).
			float u1 = (float)((h >> 40) + 1) * (1.0f / 16777216.0f);
			float u2 = (float)(h & 0xFFFFFF) * (1.0f / 16777216.0f);
			v = a + b * (double)(sqrtf(-2.0f * __logf(u1)) * __cosf(6.2831853f * u2));
		} else if (dist == KB_UNIFORM) {
			v = a + (b - a) * kb_unit(h);
		} else if (dist == KB_TRIL) {
			const long long cols = (long long)b, row = i / cols % (long long)a;

			v = i % cols <= row ? 1.0 : 0.0;
		} else {
			v = a + floor(kb_unit(h) * (b - a));
		}
		switch (dtype) {
		case KB_F32:
			((float *)p)[i] = (float)(v * scale);
			break;
		case KB_F64:
			((double *)p)[i] = v * scale;
			break;
		case KB_I32:
			((int *)p)[i] = (int)v;
			break;
		case KB_F16:
		case KB_BF16:
			((unsigned short *)p)[i] = kb_to16((float)(v * scale), dtype);
			break;
		case KB_BOOL:
			((unsigned char *)p)[i] = v != 0;
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
	case KB_F16:
	case KB_BF16: return kb_from16(((const unsigned short *)p)[i], dtype);
	case KB_BOOL: return ((const unsigned char *)p)[i];
	default: return (double)((const long long *)p)[i];
	}
}

// The mask of 32-bit word w of a masked buffer (kb_mask).
__device__ static unsigned
kb_word_mask(unsigned long long key, long long w)
{
	return (unsigned)kb_bits(key, (unsigned long long)w);
}

// Element i of a masked buffer, unmasked (key 0: not masked).
__device__ static double
kb_load_masked(const void *p, long long i, int dtype, unsigned long long key)
{
	if (!key)
		return kb_load(p, i, dtype);
	const unsigned *w = (const unsigned *)p;
	if (dtype == KB_F16 || dtype == KB_BF16) {
		// element i is half (i & 1) of word i / 2, little-endian
		unsigned u = w[i >> 1] ^ kb_word_mask(key, i >> 1);
		return kb_from16((unsigned short)(u >> 16 * (i & 1)), dtype);
	}
	if (dtype == KB_BOOL) {
		// byte i & 3 of word i / 4
		unsigned u = w[i >> 2] ^ kb_word_mask(key, i >> 2);
		return (double)(unsigned char)(u >> 8 * (i & 3));
	}
	if (dtype == KB_F32 || dtype == KB_I32) {
		unsigned u = w[i] ^ kb_word_mask(key, i);
		return dtype == KB_F32 ? (double)__uint_as_float(u) : (double)(int)u;
	}
	unsigned long long lo = w[2 * i] ^ kb_word_mask(key, 2 * i);
	unsigned long long hi = w[2 * i + 1] ^ kb_word_mask(key, 2 * i + 1);
	long long b = (long long)(hi << 32 | lo);
	return dtype == KB_F64 ? __longlong_as_double(b) : (double)b;
}

// Masks (or unmasks: the mask is its own inverse) n 32-bit words in place:
// word w is xored with 32 bits of kb_bits(key, w). kbench keeps the
// reference's cached outputs masked with a key of the worker's, so that a
// candidate that reads memory outside its buffers finds no answer there.
extern "C" __global__ void
kb_mask(unsigned *p, long long n, unsigned long long key)
{
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
		p[i] ^= kb_word_mask(key, i);
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
// multiple of 32 threads. ref is masked with key (kb_mask), unless key is 0.
extern "C" __global__ void
kb_compare(const void *out, const void *ref, long long n, int dtype,
	double atol, double rtol, unsigned long long key, struct kb_stats *st)
{
	double sq_diff = 0, sq_ref = 0, max_abs = 0, max_rel = 0;
	unsigned long long bad = 0, collide = 0, zero_bad = 0;
	unsigned long long first = ~0ULL;
	bool isint = dtype == KB_I32 || dtype == KB_I64 || dtype == KB_BOOL;
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
		double o = kb_load(out, i, dtype), r = kb_load_masked(ref, i, dtype, key);
		bool mismatch;
		if (isint) {
			mismatch = o != r;
			collide += r == -1;  // the integer poison: all bits 1
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
