/* wg.cuh: 3xFP16 split precision on warpgroup MMA (wgmma.mma_async,
 * sm_90a), what the gemm family's variants wg, wgk and wgf (gemm_wg.cu)
 * and the attention family (attention.cu) share: the split of an operand
 * into the tiled, swizzled fp16 planes wgmma reads, the mbarriers and
 * bulk copies that bring them into shared memory, the instructions, and
 * a block's main loop. The knobs WGS, TILE_N, STAGES and PROMOTE shape it;
 * gemm_wg.cu's top says how it works. tiles.cuh and gemm_h3.cuh come
 * before it. */

#ifndef __CUDA_ARCH_FEAT_SM90_ALL
#error "wg.cuh: warpgroup MMA (wgmma) is an sm_90a instruction (kcompile --arch sm_90a)"
#endif

/* ---- the split ---- */

#define TILE_M (64 * WGS)
#define THREADS (128 * WGS + 32)
#define WG_K 64                        /* k of a tile: a 128-byte row of fp16 */
#define A_BYTES (2 * TILE_M * WG_K * 2) /* an A tile's hi and lo planes */
#define B_BYTES (2 * TILE_N * WG_K * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define NACC (TILE_N / 2)              /* accumulators a thread holds */
#ifndef PROMOTE
#define PROMOTE 1 /* gemm's wgf, whose k-tiles each have their own scales */
#endif

/* Writes the pieces of 8 scaled values v (8 values of k of one row) as
 * one 16-byte chunk of the hi plane at dst and one of the lo plane a
 * plane further. */
static __device__ __forceinline__ void wg_put(unsigned short *dst, int plane,
	const float (&v)[8], float p1, float p2)
{
	unsigned hw[4], lw[4];

#pragma unroll
	for (int j = 0; j < 8; j += 2) {
		unsigned short hi[2], lo[2];

		h3_pieces(v[j] * p1 * p2, &hi[0], &lo[0]);
		h3_pieces(v[j + 1] * p1 * p2, &hi[1], &lo[1]);
		hw[j / 2] = hi[0] | (unsigned)hi[1] << 16;
		lw[j / 2] = lo[0] | (unsigned)lo[1] << 16;
	}
	*reinterpret_cast<uint4 *>(dst) = make_uint4(hw[0], hw[1], hw[2], hw[3]);
	*reinterpret_cast<uint4 *>(dst + plane) = make_uint4(lw[0], lw[1], lw[2], lw[3]);
}

/* Where an operand's matrices lie in memory: row r of matrix mat (a row
 * of rows, or of k where the operand is stored k x rows) starts at x +
 * (mat / heads) outer + (mat % heads) inner + r ld, its values
 * contiguous. An operand stored whole is wg_plain's view; the heads of
 * the mha family are strided views of one projection (mha.cu). */
struct wg_view {
	long long heads, outer, inner, ld;
};

/* The view of an operand stored whole: matrices of rows x k, one after
 * another (k x rows when transposed). */
static __device__ __forceinline__ wg_view wg_plain(long long rows, long long k,
	bool transposed)
{
	wg_view v = { 1, rows * k, 0, transposed ? rows : k };

	return v;
}

/* Where matrix mat of view v starts. */
static __device__ __forceinline__ long long wg_at(const wg_view &v, long long mat)
{
	long long o, i;

	if (v.heads == 1)
		return mat * v.outer;
	h3_divmod(mat, v.heads, &o, &i);
	return o * v.outer + i * v.inner;
}

/* Whether 16-byte loads of view v's rows of len values fit: x, the
 * matrices, the rows and their ends on 16 bytes. */
static __device__ __forceinline__ bool wg_vec(const float *x, const wg_view &v,
	long long len)
{
	return ((v.ld | v.outer | v.inner | len) & 3) == 0 &&
		((unsigned long long)x & 15) == 0;
}

/* lg for wg_chunk: log2 of tr where tr is a power of two, else -1. */
static __device__ __forceinline__ int wg_lg(int tr)
{
	return (tr & (tr - 1)) == 0 ? __ffs(tr) - 1 : -1;
}

/* Where chunk q (values 8 q to 8 q + 7 of k) of row r of matrix mat goes:
 * tile (mat, r / tr, q / 8), its row r % tr, chunk q % 8 swizzled (tr is
 * a multiple of 8, so r % 8 is the row's within its tile too). lg is
 * wg_lg(tr): a shift and a mask where tr is a power of two, else a
 * division (TILE_N 192: rows of a matrix below 2^32). */
static __device__ __forceinline__ unsigned short *wg_chunk(unsigned short *h,
	long long mat, long long r, long long q, long long tiles, long long ktiles,
	int tr, int lg)
{
	const long long rt = lg >= 0 ? r >> lg :
		(long long)((unsigned)r / (unsigned)tr);
	const long long tile = (mat * tiles + rt) * ktiles + (q >> 3);

	return h + tile * 2 * tr * WG_K + (r - rt * tr) * WG_K +
		(((int)q & 7) ^ ((int)r & 7)) * 8;
}

/* Loads this thread's four float4 of 64 x 64 block b of an operand stored
 * k x rows (wg_split_t): rows kr = tid / 16 + 16 i of the block's k,
 * columns tid % 16 * 4 on; zeros outside x. */
static __device__ __forceinline__ void wg_block_load(const float *__restrict__ x,
	const wg_view &w, long long rows, long long k, long long nb, long long ktiles,
	long long b, bool vec, float4 (&v)[4])
{
	long long mat, kb, t, n0;

	h3_divmod(b, nb, &t, &n0);
	h3_divmod(t, ktiles, &mat, &kb);
	const float *src = x + wg_at(w, mat);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		const int kr = threadIdx.x / 16 + 16 * i, c = threadIdx.x % 16 * 4;
		const long long kk = kb * WG_K + kr, n = n0 * 64 + c;

		v[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
		if (kk < k && vec && n < rows) {
			v[i] = __ldcs(reinterpret_cast<const float4 *>(src + kk * w.ld + n));
		} else if (kk < k) {
			v[i].x = n < rows ? __ldcs(src + kk * w.ld + n) : 0.0f;
			v[i].y = n + 1 < rows ? __ldcs(src + kk * w.ld + n + 1) : 0.0f;
			v[i].z = n + 2 < rows ? __ldcs(src + kk * w.ld + n + 2) : 0.0f;
			v[i].w = n + 3 < rows ? __ldcs(src + kk * w.ld + n + 3) : 0.0f;
		}
	}
}

/* The tiles of an operand stored k x rows (B kn, A transposed), tr rows a
 * tile, transposed on the way: a block takes 64 x 64 blocks of it (64
 * values of k, one k-tile, by 64 rows of the planes), reads them along
 * the rows into shared memory (16-byte loads where the row count allows)
 * and writes each plane row's eight chunks from consecutive threads; the
 * loads of its next block are in flight while it writes this one's.
 * Returns the largest finite magnitude of the values this thread read. */
static __device__ __forceinline__ float wg_split_t(const float *__restrict__ x,
	const wg_view &w, long long mats, long long rows, long long k,
	unsigned short *__restrict__ h, float p1, float p2, int tr)
{
	__shared__ float sx[64][65];
	const int lg = wg_lg(tr);
	const long long tiles = CDIV(rows, tr), ktiles = CDIV(k, WG_K);
	const long long nb = tiles * tr / 64, blocks = mats * ktiles * nb;
	const bool vec = wg_vec(x, w, rows);
	const int tid = threadIdx.x;
	float4 v4[4];
	float m = 0.0f;

	if (blockIdx.x < blocks)
		wg_block_load(x, w, rows, k, nb, ktiles, blockIdx.x, vec, v4);
	for (long long b = blockIdx.x; b < blocks; b += gridDim.x) {
		long long mat, kb, t, n0;

		h3_divmod(b, nb, &t, &n0);
		h3_divmod(t, ktiles, &mat, &kb);
		n0 *= 64;
		__syncthreads();
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const int kr = tid / 16 + 16 * i, c = tid % 16 * 4;

			sx[kr][c] = v4[i].x, sx[kr][c + 1] = v4[i].y;
			sx[kr][c + 2] = v4[i].z, sx[kr][c + 3] = v4[i].w;
			m = fmaxf(m, fmaxf(fmaxf(h3_mag(v4[i].x), h3_mag(v4[i].y)),
				fmaxf(h3_mag(v4[i].z), h3_mag(v4[i].w))));
		}
		__syncthreads();
		if (b + gridDim.x < blocks)
			wg_block_load(x, w, rows, k, nb, ktiles, b + gridDim.x, vec, v4);
#pragma unroll
		for (int i = 0; i < 2; i++) {
			const int q = tid % 8, n = tid / 8 + 32 * i;
			float v[8];

#pragma unroll
			for (int j = 0; j < 8; j++)
				v[j] = sx[q * 8 + j][n];
			wg_put(wg_chunk(h, mat, n0 + n, kb * 8 + q, tiles, ktiles, tr, lg),
				tr * WG_K, v, p1, p2);
		}
	}
	return m;
}

/* Writes operand x (mats matrices of rows x k, k contiguous; of k x rows
 * when transposed) scaled by p1 p2 (h3_factors) and split into the tiled
 * planes at h, tiles of tr rows (gemm_wg.cu's top), the grid's blocks of
 * 256 threads striding over it; returns the largest finite magnitude of
 * the values this thread read. Where k is contiguous a thread takes a
 * 16-byte chunk of a plane at a time, 8 values of k of one row,
 * consecutive threads consecutive chunks of a row; a transposed operand
 * goes through wg_split_t. */
static __device__ __forceinline__ float wg_split_by(const float *__restrict__ x,
	const wg_view &w, long long mats, long long rows, long long k,
	unsigned short *__restrict__ h, float p1, float p2, int tr, bool transposed)
{
	const int lg = wg_lg(tr);
	const long long tiles = CDIV(rows, tr), ktiles = CDIV(k, WG_K);
	const long long rp = tiles * tr, kc = ktiles * 8, chunks = mats * rp * kc;
	const long long stride = (long long)gridDim.x * 256;
	const bool vec = wg_vec(x, w, k);
	float m = 0.0f;

	if (transposed)
		return wg_split_t(x, w, mats, rows, k, h, p1, p2, tr);
	/* two chunks a thread at a time, both loaded before either is split,
	 * so that 64 bytes a thread are in flight */
	for (long long c0 = (long long)blockIdx.x * 256 + threadIdx.x; c0 < chunks;
		c0 += 2 * stride) {
		float v[2][8];
		unsigned short *dst[2];

#pragma unroll
		for (int u = 0; u < 2; u++) {
			const long long c = c0 + u * stride;
			long long mat, r, q, t;

			dst[u] = 0;
			if (c >= chunks)
				continue;
			h3_divmod(c, kc, &t, &q);
			h3_divmod(t, rp, &mat, &r);
			const long long k0 = q * 8;
			const float *src = x + wg_at(w, mat) + r * w.ld + k0;
			if (r >= rows || k0 >= k) {
#pragma unroll
				for (int j = 0; j < 8; j++)
					v[u][j] = 0.0f;
			} else if (vec) {
				const float4 v0 = __ldcs(reinterpret_cast<const float4 *>(src));
				const float4 v1 = k0 + 4 < k ?
					__ldcs(reinterpret_cast<const float4 *>(src) + 1) :
					make_float4(0.0f, 0.0f, 0.0f, 0.0f);

				v[u][0] = v0.x, v[u][1] = v0.y, v[u][2] = v0.z, v[u][3] = v0.w;
				v[u][4] = v1.x, v[u][5] = v1.y, v[u][6] = v1.z, v[u][7] = v1.w;
			} else {
#pragma unroll
				for (int j = 0; j < 8; j++)
					v[u][j] = k0 + j < k ? __ldcs(src + j) : 0.0f;
			}
			dst[u] = wg_chunk(h, mat, r, q, tiles, ktiles, tr, lg);
#pragma unroll
			for (int j = 0; j < 8; j++)
				m = fmaxf(m, h3_mag(v[u][j]));
		}
#pragma unroll
		for (int u = 0; u < 2; u++)
			if (dst[u])
				wg_put(dst[u], tr * WG_K, v[u], p1, p2);
	}
	return m;
}

/* wg_split_by with the scale of h3_scale: a grid (G) of 256 threads as
 * gemm_h3_absmax's (attn_absmax's) calls it, which found the partial
 * maxima of operand o in scale; it writes the exponent to scale[o]. */
static __device__ __forceinline__ void wg_split_view(const float *__restrict__ x,
	const wg_view &w, long long mats, long long rows, long long k,
	unsigned short *__restrict__ h, int *__restrict__ scale, int o, int tr,
	bool transposed)
{
	float p1, p2;

	h3_scale(scale, o, &p1, &p2);
	wg_split_by(x, w, mats, rows, k, h, p1, p2, tr, transposed);
}

/* wg_split_view of an operand stored whole: mats matrices of rows x k (k
 * x rows when transposed). */
static __device__ __forceinline__ void wg_split(const float *__restrict__ x,
	long long mats, long long rows, long long k, unsigned short *__restrict__ h,
	int *__restrict__ scale, int o, int tr, bool transposed)
{
	wg_split_view(x, wg_plain(rows, k, transposed), mats, rows, k, h, scale, o, tr,
		transposed);
}

/* ---- the scale guessed from a sample, then checked ----
 *
 * The gemm family's wg and wgk do not read A and B once for their largest
 * magnitudes before the split (a third of the passes before the product):
 * gemm_wg_guess takes the scale from a sample, the split uses it and finds
 * the true largest magnitude on the way, and gemm_wg_resplit keeps the
 * split where the guess puts that magnitude in [2^13, 2^15), below fp16's
 * largest 65504 (the sample's largest is at most the true one, so the
 * guess's exponent is at least the true one's: equal, or one more, which
 * puts the largest in [2^14, 2^15) and keeps a bit more of the smallest
 * values); anything else, it splits the operand again at the true scale.
 * So the split is never at a scale that overflows or that loses more of
 * the small values than one fp16 bit, whatever the sample saw. The slots
 * of scale: WG_USED + o the exponent the product takes out for operand o,
 * WG_SAMPLED + o WG_GUESS_BLOCKS + b the largest magnitude of block b's
 * part of operand o's sample, WG_TRUE + o operand o's largest magnitude as
 * the split read it (a float's bits, which order as ints for non-negative
 * floats: the split's blocks take their atomicMax into it, 0 from the
 * guess). The sample is 8192 values an operand: one block of 256 threads,
 * 32 loads each, took 8.8 us by ncu, and one of 1024 threads, 8 each, as
 * long, so it is spread over WG_GUESS_BLOCKS blocks. */
#define WG_USED 0
#define WG_GUESS_BLOCKS 16
#define WG_SAMPLE 2 /* values each of their 256 threads reads */
#define WG_SAMPLED 2
#define WG_TRUE (WG_SAMPLED + 2 * WG_GUESS_BLOCKS)
/* For the GPU tests only (tests/gpu/kbench.bats), which put them before
 * the source: WG_GUESS_BIAS is added to every guess (1 is kept by the
 * check, 2 or more split again), and WG_RESPLIT 0 leaves the second split
 * out, to show that such a guess is wrong without it. */
#ifndef WG_GUESS_BIAS
#define WG_GUESS_BIAS 0
#endif
#ifndef WG_RESPLIT
#define WG_RESPLIT 1
#endif

#define WG_SAMPLES (WG_GUESS_BLOCKS * WG_SAMPLE * 256)

/* The largest finite magnitude of block blockIdx.x's part of a sample of
 * the n values at x (of all of them where n is at most 8 times the
 * sample), to every thread of the block of 256: value i of the sample is
 * at i span + (i 2654435761 mod span), span = n / WG_SAMPLES, so that rows
 * whose length divides span are still sampled at many columns. */
static __device__ __forceinline__ float wg_sample(const float *__restrict__ x,
	long long n)
{
	const long long span = n / WG_SAMPLES;
	float m = 0.0f;

	if (span < 8) {
		for (long long i = blockIdx.x * 256 + threadIdx.x; i < n;
			i += WG_GUESS_BLOCKS * 256)
			m = fmaxf(m, h3_mag(__ldg(x + i)));
	} else {
		float v[WG_SAMPLE];

#pragma unroll
		for (int s = 0; s < WG_SAMPLE; s++) {
			const unsigned i = (blockIdx.x * WG_SAMPLE + s) * 256 + threadIdx.x;

			v[s] = __ldg(x + i * span + (long long)((i * 2654435761u) % span));
		}
#pragma unroll
		for (int s = 0; s < WG_SAMPLE; s++)
			m = fmaxf(m, h3_mag(v[s]));
	}
	return h3_block_max(m);
}

/* Operand o's guessed exponent, from gemm_wg_guess's maxima in scale. */
static __device__ __forceinline__ int wg_guessed(const int *__restrict__ scale, int o)
{
	const float *part = reinterpret_cast<const float *>(scale) + WG_SAMPLED +
		o * WG_GUESS_BLOCKS;
	float m = 0.0f;

#pragma unroll
	for (int b = 0; b < WG_GUESS_BLOCKS; b++)
		m = fmaxf(m, part[b]);
	return h3_exponent(m) + WG_GUESS_BIAS;
}

/* The split of operand o at the guessed scale (wg_guessed), taking this
 * block's largest magnitude into scale[WG_TRUE + o]; block 0 writes the
 * guess to scale[WG_USED + o]. */
static __device__ __forceinline__ void wg_split_guessed(const float *__restrict__ x,
	long long mats, long long rows, long long k, unsigned short *__restrict__ h,
	int *__restrict__ scale, int o, int tr, bool transposed)
{
	const int g = wg_guessed(scale, o);
	float p1, p2;

	h3_factors(g, &p1, &p2);
	const float m = h3_block_max(wg_split_by(x, wg_plain(rows, k, transposed), mats,
		rows, k, h, p1, p2, tr, transposed));

	if (threadIdx.x == 0)
		atomicMax(scale + WG_TRUE + o, __float_as_int(m));
	if (blockIdx.x == 0 && threadIdx.x == 0)
		scale[WG_USED + o] = g;
}

/* Operand o's check of its guess, by a grid of 256 threads: the true
 * exponent from the split's largest magnitude; where the guess is it or
 * one more, nothing (scale[WG_USED + o] holds the guess already); else the
 * operand split again at the true scale, which goes to scale[WG_USED + o]
 * (no block reads that slot here). */
static __device__ __forceinline__ void wg_resplit(const float *__restrict__ x,
	long long mats, long long rows, long long k, unsigned short *__restrict__ h,
	int *__restrict__ scale, int o, int tr, bool transposed)
{
	const int e = h3_exponent(__int_as_float(scale[WG_TRUE + o]));
	const int d = wg_guessed(scale, o) - e;
	float p1, p2;

	if (!WG_RESPLIT || d == 0 || d == 1)
		return;
	h3_factors(e, &p1, &p2);
	wg_split_by(x, wg_plain(rows, k, transposed), mats, rows, k, h, p1, p2, tr,
		transposed);
	if (blockIdx.x == 0 && threadIdx.x == 0)
		scale[WG_USED + o] = e;
}


/* ---- mbarriers and bulk copies ---- */

static __device__ __forceinline__ void bar_init(unsigned bar, int count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count)
		: "memory");
}

/* Waits until the phase of parity ph of bar has completed. */
static __device__ __forceinline__ void bar_wait(unsigned bar, int ph)
{
	asm volatile("{\n\t.reg .pred p;\n"
		"wg_wait:\n\t"
		"mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
		"@!p bra wg_wait;\n\t}" :: "r"(bar), "r"(ph) : "memory");
}

static __device__ __forceinline__ void bar_arrive(unsigned bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}

/* Copies bytes from global src to shared dst, their arrival counted on bar
 * (which this arrival also tells to expect them). */
static __device__ __forceinline__ void bulk_load(unsigned dst, const void *src,
	unsigned bytes, unsigned bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
		" [%0], [%1], %2, [%3];" :: "r"(dst), "l"(src), "r"(bytes), "r"(bar)
		: "memory");
}

static __device__ __forceinline__ void bar_expect(unsigned bar, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
		:: "r"(bar), "r"(bytes) : "memory");
}

/* Tells bar to expect bytes more, without arriving (gemm's wgb: a
 * converter's bulk copy of A into a stage its arrival later completes). */
static __device__ __forceinline__ void bar_expect_tx(unsigned bar, unsigned bytes)
{
	asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;"
		:: "r"(bar), "r"(bytes) : "memory");
}

/* ---- warpgroup MMA ---- */

/* The descriptor of a k-major operand at shared address addr, in the
 * 128-byte swizzle (mode 1 in bits 62-63): 8-row groups 1024 bytes apart
 * (the stride, bits 32-45, in 16-byte units); the leading offset (bits
 * 16-29) is unused for this layout and set to 1. */
static __device__ __forceinline__ unsigned long long wg_desc(unsigned addr)
{
	return (unsigned long long)((addr & 0x3FFFF) >> 4) | 1ull << 16 |
		(unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}

/* The accumulators as wgmma's operands, in blocks of 32 (one per 64 of
 * TILE_N): their registers in the instruction (WG_R<i>) and as the asm
 * statement's operands (WG_O<i>); the descriptors and the scale flag come
 * after them (WG_AB, WG_SCALE). */
#define WG_R0 \
	"%0, %1, %2, %3, %4, %5, %6, %7, " \
	"%8, %9, %10, %11, %12, %13, %14, %15, " \
	"%16, %17, %18, %19, %20, %21, %22, %23, " \
	"%24, %25, %26, %27, %28, %29, %30, %31"
#define WG_O0 \
	"+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
	"+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
	"+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
	"+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WG_R1 \
	", %32, %33, %34, %35, %36, %37, %38, %39, " \
	"%40, %41, %42, %43, %44, %45, %46, %47, " \
	"%48, %49, %50, %51, %52, %53, %54, %55, " \
	"%56, %57, %58, %59, %60, %61, %62, %63"
#define WG_O1 \
	, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
	"+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
	"+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
	"+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WG_R2 \
	", %64, %65, %66, %67, %68, %69, %70, %71, " \
	"%72, %73, %74, %75, %76, %77, %78, %79, " \
	"%80, %81, %82, %83, %84, %85, %86, %87, " \
	"%88, %89, %90, %91, %92, %93, %94, %95"
#define WG_O2 \
	, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
	"+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
	"+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
	"+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#if TILE_N == 64
#define WG_SHAPE "m64n64k16"
#define WG_DREGS WG_R0
#define WG_DOPS WG_O0
#define WG_AB "%32, %33"
#define WG_SCALE "%34"
#elif TILE_N == 128
#define WG_SHAPE "m64n128k16"
#define WG_DREGS WG_R0 WG_R1
#define WG_DOPS WG_O0 WG_O1
#define WG_AB "%64, %65"
#define WG_SCALE "%66"
#elif TILE_N == 192
#define WG_SHAPE "m64n192k16"
#define WG_DREGS WG_R0 WG_R1 WG_R2
#define WG_DOPS WG_O0 WG_O1 WG_O2
#define WG_AB "%96, %97"
#define WG_SCALE "%98"
#else
#error "wg.cuh: TILE_N must be 64, 128 or 192"
#endif

/* d (+)= A @ B^T for a 64 x 16 A and a TILE_N x 16 B, both k-major in
 * shared memory (descriptors a, b); d is overwritten when acc is 0. The
 * accumulators are laid out as mma.sync's m16n8 ones, warp w of the
 * warpgroup at rows 16 w: d[4 j + e] is row lane / 4 + 8 (e / 2), column
 * 8 j + 2 (lane % 4) + e % 2. */
static __device__ __forceinline__ void wg_mma(float (&d)[NACC],
	unsigned long long a, unsigned long long b, int acc)
{
	asm volatile("{\n\t.reg .pred p;\n\t"
		"setp.ne.b32 p, " WG_SCALE ", 0;\n\t"
		"wgmma.mma_async.sync.aligned." WG_SHAPE ".f32.f16.f16 "
		"{" WG_DREGS "}, " WG_AB ", p, 1, 1, 0, 0;\n\t}"
		: WG_DOPS : "l"(a), "l"(b), "r"(acc));
}

static __device__ __forceinline__ void wg_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

static __device__ __forceinline__ void wg_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* Keeps every write of the accumulators d before this point and every
 * read after it: around the products that own them. */
template <int A>
static __device__ __forceinline__ void wg_hold(float (&d)[A])
{
#pragma unroll
	for (int i = 0; i < A; i++)
		asm volatile("" : "+f"(d[i]) :: "memory");
}

/* Waits until at most N of this warpgroup's groups of products are in
 * flight; with N 0 the accumulators d are the instruction's until here, so
 * their reads are kept after it. */
template <int N, int A>
static __device__ __forceinline__ void wg_wait(float (&d)[A])
{
	asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
	if (N == 0)
		wg_hold(d);
}


/* ---- a block's product ---- */

/* The ring of stages a block's producer fills with k-tiles and its
 * consumer warpgroups drain: one tile's k-tiles, or several tiles' in turn
 * (gemm_wg's TILES), the next stage and its parity carrying over from one
 * tile to the next. Shared addresses: stage 0, and the barriers of stage
 * s at full + 8 s and empty + 8 s. */
struct wg_ring {
	unsigned base, full, empty;
	int nst, s, ph;
	int used; /* the producer's k-tiles so far: it waits once every stage has held one */
};

/* The roles wg_ring_init gives the threads of a block. */
enum { WG_CONSUMER, WG_PRODUCER, WG_IDLE };

/* Sets up q, a ring of nst stages (at most STAGES, and no more than the
 * launch gave shared memory for), a stage full once fills threads have
 * arrived on it; every thread of the block calls it. Returns this
 * thread's role: a consumer warpgroup's (the first 4 WGS warps); with
 * fills 1 the producer's (the first lane of the warp after them) or idle
 * (that warp's other lanes); with more, every thread after the consumers
 * is a producer (gemm's wgf, whose converter warpgroups fill the stages
 * themselves, wgf.cuh). */
static __device__ __forceinline__ int wg_ring_init(wg_ring &q, int nst,
	int fills)
{
	extern __shared__ __align__(1024) unsigned char wg_smem[];
	__shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

	/* the swizzle repeats every 1024 bytes and follows the address */
	q.base = (smem_addr(wg_smem) + 1023) & ~1023u;
	q.full = smem_addr(full);
	q.empty = smem_addr(empty);
	q.nst = nst;
	q.s = q.ph = q.used = 0;
	if (tid == 0) {
		for (int s = 0; s < nst; s++) {
			bar_init(q.full + 8 * s, fills);
			bar_init(q.empty + 8 * s, 4 * WGS);
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	if (warp < 4 * WGS)
		return WG_CONSUMER;
	return lane == 0 || fills > 1 ? WG_PRODUCER : WG_IDLE;
}

/* The producer: k-tiles kt0 to kt1 - 1 of the block row of A tiles at ga
 * (A_BYTES each) and of B tiles at gb, each into the next stage once the
 * warpgroups are done with what it held before. */
static __device__ __forceinline__ void wg_produce(wg_ring &q,
	const unsigned char *ga, const unsigned char *gb, int kt0, int kt1)
{
	for (int kt = kt0; kt < kt1; kt++) {
		const unsigned sa = q.base + q.s * STAGE_BYTES, bar = q.full + 8 * q.s;

		if (q.used++ >= q.nst)
			bar_wait(q.empty + 8 * q.s, q.ph ^ 1);
		bar_expect(bar, STAGE_BYTES);
		bulk_load(sa, ga + (long long)kt * A_BYTES, A_BYTES, bar);
		bulk_load(sa + A_BYTES, gb + (long long)kt * B_BYTES, B_BYTES, bar);
		if (++q.s == q.nst)
			q.s = 0, q.ph ^= 1;
	}
}

/* Issues, as one group, a warpgroup's products of one stage: part (+)=
 * the 3xFP16 product of its 64 rows of the A tile at a0 (hi plane, then
 * lo a plane further) and the B tile at b0, overwriting part when fresh.
 * The caller waits for them (wg_wait). */
static __device__ __forceinline__ void wg_stage(float (&part)[NACC],
	unsigned a0, unsigned b0, bool fresh)
{
	wg_fence();
#pragma unroll
	for (int kk = 0; kk < WG_K / 16; kk++) {
		const unsigned long long ah = wg_desc(a0 + kk * 32);
		const unsigned long long al = wg_desc(a0 + TILE_M * 128 + kk * 32);
		const unsigned long long bh = wg_desc(b0 + kk * 32);
		const unsigned long long bl = wg_desc(b0 + TILE_N * 128 + kk * 32);

		wg_mma(part, al, bh, !fresh || kk > 0);
		wg_mma(part, ah, bl, 1);
		wg_mma(part, ah, bh, 1);
	}
	wg_commit();
}

/* A consumer warpgroup (rows 64 g of the tile): acc = the product of the
 * kt1 - kt0 k-tiles the producer brings for this tile, in the accumulator
 * layout of wg_mma. Every stage goes back to the producer by the end. */
static __device__ __forceinline__ void wg_consume(wg_ring &q,
	float (&acc)[NACC], int kt0, int kt1)
{
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = warp / 4;
	float part[NACC];
	/* the stage whose products may still be running, released once they are done */
	int pend = -1;

#pragma unroll
	for (int i = 0; i < NACC; i++)
		acc[i] = 0.0f;
	for (int kt = kt0; kt < kt1; kt++) {
		const unsigned a0 = q.base + q.s * STAGE_BYTES + g * 64 * 128;
		const unsigned b0 = q.base + q.s * STAGE_BYTES + A_BYTES;
		const bool fresh = (kt - kt0) % PROMOTE == 0;

		bar_wait(q.full + 8 * q.s, q.ph);
		wg_stage(part, a0, b0, fresh);
		/* the partial of PROMOTE k-tiles joins the running sum: wait for
		 * all; else wait for the products before these, so that their
		 * stage goes back while these run */
		const bool promote = (kt - kt0) % PROMOTE == PROMOTE - 1 || kt == kt1 - 1;
		if (promote)
			wg_wait<0>(part);
		else
			wg_wait<1>(part);
		__syncwarp();
		if (lane == 0 && pend >= 0)
			bar_arrive(q.empty + 8 * pend);
		pend = q.s;
		if (promote) {
			if (lane == 0)
				bar_arrive(q.empty + 8 * q.s);
			pend = -1;
#pragma unroll
			for (int i = 0; i < NACC; i++)
				acc[i] += part[i];
		}
		if (++q.s == q.nst)
			q.s = 0, q.ph ^= 1;
	}
}

/* The main loop of a block for one tile: acc = the product of k-tiles kt0
 * to kt1 - 1 of the block row of A tiles at ga and of B tiles at gb, in
 * each consumer thread; returns false in the producer warp, which holds
 * nothing. Every thread of the block calls it. A block with fewer k-tiles
 * than STAGES uses only as many stages (its launch asks for no more
 * shared memory than those). */
static __device__ __forceinline__ bool wg_mainloop(float (&acc)[NACC],
	const unsigned char *ga, const unsigned char *gb, int kt0, int kt1)
{
	wg_ring q;
	const int role = wg_ring_init(q, min(STAGES, max(kt1 - kt0, 1)), 1);

	if (role == WG_PRODUCER)
		wg_produce(q, ga, gb, kt0, kt1);
	if (role != WG_CONSUMER)
		return false;
	wg_consume(q, acc, kt0, kt1);
	return true;
}

/* Where a consumer thread's accumulators lie in the block's tile: rows
 * r and r + 8 hold acc[4 j] and acc[4 j + 1], and acc[4 j + 2] and
 * acc[4 j + 3], at columns c + 8 j and c + 8 j + 1 (j < TILE_N / 8). A
 * store walks the two rows, then the columns, so that the row's checks
 * and address are worked out once (a callback per pair measured 21%
 * slower on a product whose time is its stores, KernelBench's K = 64). */
static __device__ __forceinline__ void wg_origin(int *r, int *c)
{
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

	*r = (warp / 4) * 64 + (warp % 4) * 16 + (lane >> 2);
	*c = 2 * (lane & 3);
}
