/* wgf.cuh: the split inside the product (gemm's variant wgf): a converter
 * warpgroup reads A and B as they are, fp32 in global memory, and writes
 * each k-tile into a stage of wg.cuh's ring as the planes wgmma reads
 * (tiled, swizzled fp16 hi and lo, wg_put), so that no pass over A and B
 * comes before the product. Without that pass there is no largest
 * magnitude to scale by: each row of a k-tile (64 values of k of one row
 * of A, or of one column of B) is scaled by its own power of two, 2^e
 * putting the row's largest magnitude in [2^13, 2^14) as h3_scale puts an
 * operand's, and its inverse goes to the stage beside the planes, for the
 * consumer to take out of that k-tile's product (gemm_wg.cu's gemm_wgf).
 * A scale per row and k-tile is never coarser than h3's one per operand,
 * so the split is at least as accurate.
 *
 * A k-tile goes in pieces of 64 rows by the 64 values of k, 8 float4 a
 * thread. The converter's threads copy pieces into slots of shared
 * memory by cp.async, AHEAD pieces ahead of the one they split, so that
 * AHEAD x 16 KB are in flight without holding a register: loads into
 * registers, the next piece's while this one was split, kept 16 KB in
 * flight, and a k-tile took 4.4 us, bound by the latency
 * (bench/results/gemm-fused-gpu.md). A thread takes back from a slot
 * only what it copied itself, so the copies' wait_group is all the
 * converter waits on. Lane % 8 of a thread names the 16-byte chunk (8
 * values of k) it writes, of four rows: where k is contiguous (A, B nk)
 * the thread copies its chunk of each row as two float4; where the rows
 * are (B kn, A stored K x M) it copies 4 rows at each of its 8 values of
 * k and transposes them in registers. An operand whose rows are not
 * whole float4 is copied a float at a time. The rows' maxima are taken
 * across the 8 lanes that share them (shuffles), and a warp's stores
 * cover whole 128-byte rows of a plane, free of bank
 * conflicts. wg.cuh comes before it. */

#define WGF_THREADS (128 * (WGS + CONVS)) /* the consumers, then the converters */

/* Registers a thread. A consumer's: its TILE_N accumulators (running sum
 * and k-tile partial) and 24 more, rounded up to 8 (152 at TILE_N 128;
 * ptxas used 146 of them). Where the launch's even share (65536 /
 * WGF_THREADS: 128 at two consumer and two converter warpgroups) is less,
 * the converters give theirs back down to what is left (104) and the
 * consumers take them (setmaxnreg; ptxas allocates each side within its
 * count). At 128 each, the consumers spilled 108 bytes; at 168 and 88,
 * none and the converters 12; at 152 and 104, none and 4. A converter
 * needs 88. */
#define WGF_SHARE (65536 / WGF_THREADS / 8 * 8)
#define WGF_CREG ((TILE_N + 24 + 7) / 8 * 8)
#define WGF_REALLOC (WGF_SHARE < WGF_CREG)
#define WGF_PREG ((65536 / 128 - WGS * WGF_CREG) / CONVS / 8 * 8)
#if WGF_REALLOC && WGF_PREG < 88
#error "wgf.cuh: the consumers' registers leave the converters fewer than 88"
#endif

/* Where WGF_REALLOC, the registers of this thread's warpgroup become the
 * consumers' (more) or the converters' count; every thread of the
 * warpgroup calls it. */
template <bool more>
static __device__ __forceinline__ void wgf_regs(void)
{
#if WGF_REALLOC
	if (more)
		asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(WGF_CREG) : "memory");
	else
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(WGF_PREG) : "memory");
#endif
}

/* An operand as the converter reads it: a matrix of rows x k at x, k
 * contiguous (KMAJ, a template argument, as the layout is known when the
 * kernel is compiled) or the rows (k x rows). */
struct wgf_src {
	const float *x;
	long long rows, k;
};

static __device__ __forceinline__ wgf_src wgf_source(const float *x,
	long long rows, long long k)
{
	wgf_src o;

	o.x = x, o.rows = rows, o.k = k;
	return o;
}

/* Whether o's rows are whole float4: a 16-byte aligned base, and the
 * contiguous size a multiple of 4. */
template <bool KMAJ>
static __device__ __forceinline__ bool wgf_vec(const wgf_src &o)
{
	return ((KMAJ ? o.k : o.rows) & 3) == 0 && ((unsigned long long)o.x & 15) == 0;
}

#define WGF_SLOT (128 * 8 * 16) /* a piece's staging: float4 j of thread t at (j 128 + t) 16 */

/* Copies this thread's part of the piece of 64 rows from row r0 by the
 * k-tile from k k0 into the slot at shared address slot (t: the thread
 * among the converter's 128), zeros outside the operand, by float4 where
 * VEC (wgf_vec), else a float at a time. KMAJ: rows r0 + t / 8 + 16 i (i
 * < 4), its chunk's 8 values as float4 2 i and 2 i + 1; else rows r0 + 4
 * (t / 8) to + 3 as float4 j's x, y, z, w, at k k0 + 8 (t % 8) + j. */
template <bool KMAJ, bool VEC>
static __device__ __forceinline__ void wgf_copy(const wgf_src &o,
	long long r0, long long k0, int t, unsigned slot)
{
	const int c = t & 7, g = t >> 3;

#pragma unroll
	for (int j = 0; j < 8; j++) {
		const unsigned dst = slot + (j * 128 + t) * 16;
		/* the float4's first value */
		const long long r = KMAJ ? r0 + g + 16 * (j / 2) : r0 + 4 * g;
		const long long kk = KMAJ ? k0 + 8 * c + 4 * (j % 2) : k0 + 8 * c + j;
		const long long at = KMAJ ? r * o.k + kk : kk * o.rows + r;

		if (VEC) {
			const bool in = r < o.rows && kk < o.k;

			cp_async16(dst, in ? o.x + at : o.x, in ? 16 : 0);
			continue;
		}
#pragma unroll
		for (int e = 0; e < 4; e++) {
			const bool in = KMAJ ? r < o.rows && kk + e < o.k :
				r + e < o.rows && kk < o.k;

			cp_async4(dst + 4 * e, in ? o.x + at + e : o.x, in ? 4 : 0);
		}
	}
}

/* This thread's part of the piece in the slot at generic address slot
 * (wgf_copy's, once its copies are done). */
static __device__ __forceinline__ void wgf_take(const unsigned char *slot,
	int t, float4 (&v)[8])
{
#pragma unroll
	for (int j = 0; j < 8; j++)
		v[j] = *reinterpret_cast<const float4 *>(slot + (j * 128 + t) * 16);
}

/* The scales of the 4 rows whose 8 values in this thread are w[i], the
 * other 56 in the lanes beside it (lane % 8 the chunk): 2^e as a factor
 * f[i], and its inverse inv[i]. e puts the row's largest magnitude in
 * [2^13, 2^14), within the normal floats (e from -126 to 126, so that
 * both factors are normal: a row that needs more holds values whose
 * products leave float's range anyway); a row of zeros, or one holding an
 * infinity, is not scaled. The 4 rows go together, a tree of maxima in
 * the thread, then the lanes' shuffles of all 4: one row after another,
 * the converter's warps spent most of their time waiting on the chain of
 * each (ncu's short-scoreboard and wait stalls,
 * bench/results/gemm-fused-gpu.md). */
static __device__ __forceinline__ void wgf_scales(const float (&w)[4][8],
	float (&f)[4], float (&inv)[4])
{
	float m[4];

#pragma unroll
	for (int i = 0; i < 4; i++) {
		const float a = fmaxf(fmaxf(fabsf(w[i][0]), fabsf(w[i][1])),
			fmaxf(fabsf(w[i][2]), fabsf(w[i][3])));
		const float b = fmaxf(fmaxf(fabsf(w[i][4]), fabsf(w[i][5])),
			fmaxf(fabsf(w[i][6]), fabsf(w[i][7])));

		m[i] = fmaxf(a, b);
	}
#pragma unroll
	for (int d = 1; d < 8; d <<= 1)
#pragma unroll
		for (int i = 0; i < 4; i++)
			m[i] = fmaxf(m[i], __shfl_xor_sync(0xffffffffu, m[i], d));
#pragma unroll
	for (int i = 0; i < 4; i++) {
		int e = 0;

		if (m[i] > 0.0f && m[i] < __int_as_float(0x7f800000))
			e = min(max(13 - ((__float_as_int(m[i]) >> 23) - 127), -126), 126);
		inv[i] = __int_as_float((127 - e) << 23);
		f[i] = __int_as_float((127 + e) << 23);
	}
}

/* Splits this thread's part of a piece (v, as wgf_take left it) into the
 * planes of a tile of tr rows at h (generic address of its hi plane in
 * shared memory; the piece's rows from row p0 of the tile), and writes
 * the rows' inverse scales to inv_out[row of the tile]. */
template <bool KMAJ>
static __device__ __forceinline__ void wgf_put(const float4 (&v)[8],
	unsigned short *h, float *inv_out, int tr, int p0, int t)
{
	const int c = t & 7, g = t >> 3;
	float w[4][8], f[4], inv[4];

#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 8; j++) {
			const float4 q = KMAJ ? v[2 * i + j / 4] : v[j];
			const int e = KMAJ ? j % 4 : i;

			w[i][j] = e == 0 ? q.x : e == 1 ? q.y : e == 2 ? q.z : q.w;
		}
	wgf_scales(w, f, inv);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		const int r = p0 + (KMAJ ? g + 16 * i : 4 * g + i);
		unsigned short *const dst = h + r * WG_K + ((c ^ (r & 7)) * 8);

		/* h3's pieces, conversions both ways (F2F): Veltkamp's split in
		 * float arithmetic and one packed conversion, tried for fewer
		 * conversions, made the converter slower (1118 us against 1020 us
		 * on KernelBench 6, bench/results/gemm-fused-gpu.md); a row holding
		 * an infinity gets f 1 and lo 0 where hi is infinite */
		wg_put(dst, tr * WG_K, w[i], f[i], 1.0f);
		if (c == 0)
			inv_out[r] = inv[i];
	}
}
