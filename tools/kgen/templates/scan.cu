/* scan family: x and y have shape (outer, len, inner); along len, y at
 * position i is SC_FINALIZE(v, n), v the combine of SC_MAP(x) over the n
 * positions before i (exclusive) or up to and including i (inclusive),
 * counted from the start or, reversed, from the end. The op is the task's,
 * as expressions (docs/templates.md); combine must be associative (row
 * scans it as a tree).
 *   row:    inner 1; one block per row, in chunks of BLOCK * ITEMS: each
 *           thread scans ITEMS adjacent values in registers, the thread
 *           totals are scanned across the warp by shuffles and the warp
 *           totals in shared memory; a carry passes from chunk to chunk.
 *           Rows whose length is a multiple of 4 (and aligned) are loaded
 *           and stored 4 values at a time.
 *   column: one thread per column walks len in order, UNROLL loads in
 *           flight; consecutive threads on consecutive columns.
 * Masked (spec.masked): a second input, a bool mask of x's shape (bytes
 * of 0 or 1), multiplies x before the map, as cumsum(x * mask) does (a
 * NaN times 0 stays NaN); it is read along with x, 4 at a time where x is.
 * One read of each input and one write: the floor. Tensors are f32, f16
 * or bf16 in memory (real.cuh), float in registers. Indices are 64-bit. */
#define VARIANT_{{variant}} 1
#define SC_MAP(x) ({{op_map}})
#define SC_COMBINE(a, b) ({{op_combine}})
#define SC_IDENTITY ({{op_identity}})
#define SC_FINALIZE(v, n) ({{op_finalize}})
#define SC_REVERSE {{reverse}}
#define SC_EXCLUSIVE {{exclusive}}
#define SC_MASKED {{masked}}

#if SC_MASKED
/* the mask's parameter, and its value at an index of x */
#define SC_MASK_PARAM const unsigned char *__restrict__ mask,
#define SC_M(i) ((float)sc_mask1(mask + (i)))
static __device__ __forceinline__ unsigned char sc_mask1(const unsigned char *p)
{
#if CACHE_HINT
	return __ldcs(p);
#else
	return __ldg(p);
#endif
}
#else
#define SC_MASK_PARAM
#define SC_M(i) 1.0f
#endif

static __device__ __forceinline__ float sc_fin(float v, long long n)
{
	(void)n;
	return SC_FINALIZE(v, n);
}

#if defined(VARIANT_row)
/* 4 values at a time, or one */
typedef realv<4> sc_vec;
#if SC_MASKED
/* 4 bytes of the mask, at an index of x that is a multiple of 4 */
static __device__ __forceinline__ uchar4 sc_mask4(const unsigned char *p)
{
#if CACHE_HINT
	return __ldcs(reinterpret_cast<const uchar4 *>(p));
#else
	return __ldg(reinterpret_cast<const uchar4 *>(p));
#endif
}
static __device__ __forceinline__ float sc_lane(uchar4 m, int l)
{
	return (float)(l == 0 ? m.x : l == 1 ? m.y : l == 2 ? m.z : m.w);
}
#endif
#if CACHE_HINT
#define SC_LD4(p) rv_ldcs(p)
#define SC_ST4(p, v) rv_stcs(p, v)
#define SC_LD(p) real_ldcs(p)
#define SC_ST(p, v) real_stcs(p, v)
#else
#define SC_LD4(p) rv_ldg(p)
#define SC_ST4(p, v) (*(p) = (v))
#define SC_LD(p) real_ldg(p)
#define SC_ST(p, v) (*(p) = real_of(v))
#endif

/* The inclusive scan of v across the warp. */
static __device__ __forceinline__ float sc_warp_scan(float v, int lane)
{
#pragma unroll
	for (int o = 1; o < 32; o *= 2) {
		const float u = __shfl_up_sync(0xffffffffu, v, o);
		if (lane >= o)
			v = SC_COMBINE(u, v);
	}
	return v;
}

/* Grid (outer): block b scans row b of x (inner 1). Logical position j
 * is physical j, or len - 1 - j when reversed. */
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_row(const real *__restrict__ x, SC_MASK_PARAM real *__restrict__ y, long long len)
{
	__shared__ float sc_warps[BLOCK / 32];
	__shared__ float sc_carry;
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const long long row = (long long)blockIdx.x * len;
	const real *xr = x + row;
	real *yr = y + row;
	const bool vec = ITEMS % 4 == 0 && len % 4 == 0 &&
		reinterpret_cast<unsigned long long>(xr) % (4 * REAL_BYTES) == 0 &&
		reinterpret_cast<unsigned long long>(yr) % (4 * REAL_BYTES) == 0
#if SC_MASKED
		&& reinterpret_cast<unsigned long long>(mask + row) % 4 == 0
#endif
		;
	float carry = SC_IDENTITY;

	for (long long c0 = 0; c0 < len; c0 += (long long)BLOCK * ITEMS) {
		const long long j0 = c0 + (long long)threadIdx.x * ITEMS;
		float v[ITEMS];

		/* this thread's ITEMS logical positions j0 .. j0 + ITEMS - 1 */
		if (vec && j0 + ITEMS <= len) {
#pragma unroll
			for (int q = 0; q < ITEMS / 4; q++) {
				/* reversed: the logical items j0 + 4q .. + 3 are physical
				 * len - 1 - j0 - 4q down to len - 4 - j0 - 4q */
				const long long p = SC_REVERSE ? len - 4 - j0 - 4 * q : j0 + 4 * q;
				const sc_vec f = SC_LD4(reinterpret_cast<const sc_vec *>(xr + p));
#if SC_MASKED
				const uchar4 m = sc_mask4(mask + row + p);
#pragma unroll
				for (int l = 0; l < 4; l++)
					v[4 * q + l] = f.at(SC_REVERSE ? 3 - l : l) *
						sc_lane(m, SC_REVERSE ? 3 - l : l);
#else
#pragma unroll
				for (int l = 0; l < 4; l++)
					v[4 * q + l] = f.at(SC_REVERSE ? 3 - l : l);
#endif
			}
		} else {
#pragma unroll
			for (int k = 0; k < ITEMS; k++) {
				const long long j = j0 + k, pj = SC_REVERSE ? len - 1 - j : j;
				v[k] = j < len ? SC_LD(xr + pj) * SC_M(row + pj) : 0.0f;
			}
		}
		/* the thread's own inclusive scan, then its total */
		float run = SC_IDENTITY;
#pragma unroll
		for (int k = 0; k < ITEMS; k++) {
			const float m = j0 + k < len ? SC_MAP(v[k]) : SC_IDENTITY;
			run = SC_COMBINE(run, m);
			v[k] = run;
		}
		/* the combine of all threads before this one, this chunk */
		float incl = sc_warp_scan(run, lane);
		if (lane == 31)
			sc_warps[warp] = incl;
		__syncthreads();
		if (warp == 0) {
			float w = lane < BLOCK / 32 ? sc_warps[lane] : SC_IDENTITY;
			w = sc_warp_scan(w, lane);
			if (lane < BLOCK / 32)
				sc_warps[lane] = w;
		}
		__syncthreads();
		float before = __shfl_up_sync(0xffffffffu, incl, 1);
		if (lane == 0)
			before = SC_IDENTITY;
		if (warp > 0)
			before = SC_COMBINE(sc_warps[warp - 1], before);
		before = SC_COMBINE(carry, before);
		/* outputs: inclusive v[k] = before + own[0..k]; exclusive the one before */
		float out[ITEMS];
#pragma unroll
		for (int k = 0; k < ITEMS; k++) {
			const float incl_k = SC_COMBINE(before, v[k]);
			const float excl_k = k == 0 ? before : SC_COMBINE(before, v[k - 1]);
			out[k] = sc_fin(SC_EXCLUSIVE ? excl_k : incl_k, j0 + k + (SC_EXCLUSIVE ? 0 : 1));
		}
		if (vec && j0 + ITEMS <= len) {
#pragma unroll
			for (int q = 0; q < ITEMS / 4; q++) {
				const long long p = SC_REVERSE ? len - 4 - j0 - 4 * q : j0 + 4 * q;
				sc_vec f;
#pragma unroll
				for (int l = 0; l < 4; l++)
					f.set(SC_REVERSE ? 3 - l : l, out[4 * q + l]);
				SC_ST4(reinterpret_cast<sc_vec *>(yr + p), f);
			}
		} else {
#pragma unroll
			for (int k = 0; k < ITEMS; k++) {
				const long long j = j0 + k;
				if (j < len)
					SC_ST(yr + (SC_REVERSE ? len - 1 - j : j), out[k]);
			}
		}
		/* the chunk's total carries on */
		if (threadIdx.x == BLOCK - 1)
			sc_carry = SC_COMBINE(before, run);
		__syncthreads();
		carry = sc_carry;
		__syncthreads();
	}
}
#endif

#if defined(VARIANT_column)
/* Grid (cdiv(outer * inner, BLOCK)): thread t scans column t. */
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_column(const real *__restrict__ x, SC_MASK_PARAM real *__restrict__ y, long long outer,
	long long len, long long inner)
{
	const long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;

	if (t >= outer * inner)
		return;
	const long long o = t / inner, i = t % inner;
	const real *xc = x + o * len * inner + i;
	real *yc = y + o * len * inner + i;
	float run = SC_IDENTITY;

	for (long long j = 0; j < len; j += UNROLL) {
		float v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long q = j + u;
			if (q < len) {
				const long long at = (SC_REVERSE ? len - 1 - q : q) * inner;
				v[u] = real_ldcs(xc + at) * SC_M(o * len * inner + i + at);
			}
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long q = j + u;
			if (q < len) {
				const float prev = run;
				run = SC_COMBINE(run, SC_MAP(v[u]));
				real_stcs(yc + (SC_REVERSE ? len - 1 - q : q) * inner,
					sc_fin(SC_EXCLUSIVE ? prev : run, q + (SC_EXCLUSIVE ? 0 : 1)));
			}
		}
	}
}
#endif
