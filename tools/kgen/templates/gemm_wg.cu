/* gemm_wg.cu: the gemm family's warpgroup kernels (docs/templates.md),
 * variant wg. C[b] = epilogue(A[b] @ op(B[b]) + bias) as gemm_tiled.cu
 * computes it, in 3xFP16 split precision as variant h3 (gemm_tiled.cu's
 * top says how accurate), on warpgroup MMA: wgmma.mma_async, sm_90a.
 *
 * gemm_wg_guess guesses the scale of A and of B from a sample of each,
 * gemm_wg_split writes each operand scaled and split into fp16 hi
 * and lo planes in the order the product reads them: tiles of TR rows
 * (TILE_M for A, TILE_N for B) by WG_K = 64 values of k, k-major (B kn is
 * transposed on the way), a tile's hi plane then its lo plane, and the
 * tiles of a block row of C (the k-tiles of one m- or n-tile) one after
 * another. A stored K x M (A.T @ B) is transposed the same way, so the
 * product never sees either layout. Inside a plane a row is 128 bytes,
 * its eight 16-byte chunks in the order of wgmma's 128-byte swizzle
 * (chunk c of row r at c ^ (r % 8)).
 * Zeros pad M, N and K to whole tiles. So one bulk copy (cp.async.bulk,
 * completing on an mbarrier) brings an operand's k-tile into shared
 * memory as wgmma reads it, and nothing is built on the host. The split
 * finds each operand's largest magnitude as it reads it, and
 * gemm_wg_resplit splits an operand again where the guess was too far
 * from it (wg.cuh's guessed scale), so that no pass over A and B only
 * for their largest magnitudes comes first.
 *
 * gemm_wg (its main loop in wg.cuh, shared with the attention family):
 * WGS consumer warpgroups, each 64 rows of the block's TILE_M x
 * TILE_N tile of C (TILE_M = 64 WGS), and one producer warp whose first
 * lane keeps STAGES k-tiles in flight. For each k-tile a warpgroup issues,
 * at each of its 4 steps of 16 along k, the m64nNk16 products A_lo B_hi,
 * A_hi B_lo and A_hi B_hi into a partial accumulator. Every PROMOTE
 * k-tiles it waits for them and adds the partial to its running sum (why:
 * gemm_tiled.cu's top); between, it waits only for the k-tile before, so
 * that the tensor cores always have the next products queued, and gives
 * each stage back to the producer once its products are done. A block
 * takes TILES tiles of C in turn (variant wg; 1 by default) through the
 * same ring of stages: where K is short (KernelBench's 64, one k-tile) a
 * block's life is otherwise its set-up and the latency of its one load,
 * and the next tile's load now runs while this one's products and stores
 * do.
 *
 * Variants wgk, wgf and wgb split k across blocks too (gemm_wg_reduce
 * sums their slices), and wgf has no pass over A and B before the
 * product: its converter warpgroups split each k-tile into the stages
 * themselves (gemm_wgf, wgf.cuh). wgb is wgf for B alone: A is split by
 * the pass as wg's is and comes into the stages by bulk copies, so that
 * where A is a few rows (a batch of 128 through a layer's weights) the
 * weights are read once, by the converters, and the converters split
 * nothing but them. */

#if !defined(VARIANT_wgf)
/* Grid (WG_GUESS_BLOCKS, 2), 256 threads: block (b, o) writes the largest
 * magnitude of its part of a sample of operand o (0: a, na values; 1: b)
 * to its slot of WG_SAMPLED in scale, and block (0, o) sets WG_TRUE + o to
 * 0 for the split (wg.cuh's guessed scale). */
extern "C" __global__ void __launch_bounds__(256)
gemm_wg_guess(const float *__restrict__ a, long long na,
	const float *__restrict__ b, long long nb, int *__restrict__ scale)
{
	const float m = wg_sample(blockIdx.y ? b : a, blockIdx.y ? nb : na);

	if (threadIdx.x == 0) {
		reinterpret_cast<float *>(scale)[WG_SAMPLED + blockIdx.y * WG_GUESS_BLOCKS +
			blockIdx.x] = m;
		if (blockIdx.x == 0)
			scale[WG_TRUE + blockIdx.y] = 0;
	}
}

/* Grid (G), 256 threads: writes operand o (0: A, mats row-major matrices
 * of rows x k, of k x rows when A_T; 1: B, of rows (n) x k when nk, of
 * k x rows when kn) scaled by its guess and split into the tiled planes
 * at h (wg_split_guessed), and each block's largest magnitude to scale. */
extern "C" __global__ void __launch_bounds__(256)
gemm_wg_split(const float *__restrict__ x, long long mats, long long rows,
	long long k, unsigned short *__restrict__ h, int *__restrict__ scale,
	int o)
{
	wg_split_guessed(x, mats, rows, k, h, scale, o, o ? TILE_N : TILE_M,
		o == 1 ? !B_NK : A_T);
}

/* Grid (G, 2), 256 threads: block row o checks operand o's guess and
 * splits the operand again at its true scale where the guess does not
 * hold (wg_resplit); the operands as gemm_wg_split takes them. */
extern "C" __global__ void __launch_bounds__(256)
gemm_wg_resplit(const float *__restrict__ a, long long amats, long long arows,
	long long ak, unsigned short *__restrict__ ha, const float *__restrict__ b,
	long long bmats, long long brows, long long bk, unsigned short *__restrict__ hb,
	int *__restrict__ scale)
{
	if (blockIdx.y == 0)
		wg_resplit(a, amats, arows, ak, ha, scale, 0, TILE_M, A_T);
	else
		wg_resplit(b, bmats, brows, bk, hb, scale, 1, TILE_N, !B_NK);
}
#endif

#if defined(VARIANT_wgk) || defined(VARIANT_wgf) || defined(VARIANT_wgb)
#define KSPLIT SPLITK /* slices of k, one a block; gemm_wg_reduce sums them */
#define TILES 1
#else
#define KSPLIT 1
#endif

/* Whether the tile of C at (m0, n0) lies wholly outside the triangle a
 * tril or triu C keeps: every value of it 0, its product not computed. */
static __device__ __forceinline__ bool wg_outside(long long m0, long long n0)
{
	return (TRIL && n0 > m0 + TILE_M - 1) || (TRIU && m0 > n0 + TILE_N - 1);
}

/* Writes v0, v1 (columns col, col + 1 of row row of C, at crow) times
 * 2^sh: through the bias and the epilogue, or with split-K as they are, a
 * slice's share of the sum. */
static __device__ __forceinline__ void wg_store(float *crow, int sh,
	const float *bias, long long row, long long col, long long N, float v0,
	float v1)
{
	if (KSPLIT == 1) {
		store_pair(crow, sh, bias, row, col, N, v0, v1);
		return;
	}
	if (col < N)
		crow[col] = scalbnf(v0, sh);
	if (col + 1 < N)
		crow[col + 1] = scalbnf(v1, sh);
}

/* A consumer thread's share of the tile of C at (m0, n0), its
 * accumulators acc in wg_mma's layout, through wg_store. */
static __device__ __forceinline__ void wg_tile_store(float *C, long long M,
	long long N, long long m0, long long n0, int sh, const float *bias,
	const float (&acc)[NACC])
{
	int r, c;

	wg_origin(&r, &c);
#pragma unroll
	for (int hh = 0; hh < 2; hh++) {
		const long long row = m0 + r + hh * 8;

		if (row >= M)
			continue;
#pragma unroll
		for (int j = 0; j < TILE_N / 8; j++)
			wg_store(C + row * N, sh, bias, row, n0 + 8 * j + c, N,
				acc[4 * j + 2 * hh], acc[4 * j + 2 * hh + 1]);
	}
}

#if !defined(VARIANT_wgf) && !defined(VARIANT_wgb)
/* C = epilogue(A @ op(B) + bias) from the tiled planes of A (wa) and B
 * (wb) and their scale exponents, for batch blockIdx.y: tiles blockIdx.x,
 * blockIdx.x + gridDim.x, ... (TILES of them, tile_at's order), one after
 * another through one ring of stages, so that the producer brings the
 * next tile's k-tiles while the warpgroups finish and store this one's.
 * A and B themselves are not read (they come with the task's inputs,
 * before the bias). With split-K (variant wgk) block z of SPLITK takes
 * slice z of the k-tiles and writes its share of the product to slice z
 * of C, the partials, instead. A tile wholly outside the triangle of a
 * tril or triu C is not computed: zeros (gemm_wg_reduce masks the
 * partials it does not write). */
extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_wg(float *__restrict__ C, long long M, long long N, long long K,
	const unsigned short *__restrict__ wa, const unsigned short *__restrict__ wb,
	const int *__restrict__ scale, const float *__restrict__ A,
	const float *__restrict__ B BIAS_PARAM)
{
	const int ktiles = (int)CDIV(K, WG_K), kz = blockIdx.z;
	const int kt0 = (int)((long long)ktiles * kz / KSPLIT);
	const int kt1 = (int)((long long)ktiles * (kz + 1) / KSPLIT);
	const long long bz = blockIdx.y, tiles = CDIV(M, TILE_M) * CDIV(N, TILE_N);
	const int sh = -(scale[0] + scale[1]);
	float acc[NACC];
	wg_ring q;
#if !HAS_BIAS
	const float *bias = 0;
#endif

	const int role = wg_ring_init(q, min(STAGES, max(TILES * (kt1 - kt0), 1)), 1);
	if (role == WG_IDLE)
		return;
	C += ((long long)kz * gridDim.y + bz) * M * N;
	for (int i = 0; i < TILES; i++) {
		const long long t = blockIdx.x + (long long)i * gridDim.x;
		long long m0, n0;

		if (t >= tiles)
			break;
		tile_at(t, M, N, TILE_M, TILE_N, &m0, &n0);
		const bool skip = wg_outside(m0, n0);
		if (role == WG_PRODUCER) {
			if (!skip)
				wg_produce(q, reinterpret_cast<const unsigned char *>(wa) +
					(bz * CDIV(M, TILE_M) + m0 / TILE_M) * ktiles *
					(long long)A_BYTES, reinterpret_cast<const unsigned char *>(wb) +
					((BATCHED ? bz : 0) * CDIV(N, TILE_N) + n0 / TILE_N) *
					ktiles * (long long)B_BYTES, kt0, kt1);
			continue;
		}
		if (skip && KSPLIT > 1)
			continue;
		if (skip) {
#pragma unroll
			for (int j = 0; j < NACC; j++)
				acc[j] = 0.0f;
		} else {
			wg_consume(q, acc, kt0, kt1);
		}

		wg_tile_store(C, M, N, m0, n0, sh, bias, acc);
	}
}
#else
#define WGF_AK (!A_T)   /* A's k contiguous */
#define WGF_BK (B_NK != 0)
#define WGF_PIECES (WGS + TILE_N / 64) /* of a k-tile: A's, then B's */
#if defined(VARIANT_wgb)
#define WGF_APRE 1 /* A's pieces come by bulk copies (the split's planes) */
#else
#define WGF_APRE 0
#endif
#define WGF_FIRST (WGF_APRE ? WGS : 0) /* the first piece a converter splits */

/* Converter w's next copy, as one cp.async group (empty past k-tile
 * kt1 - 1, so that every piece split waits on the same count): this
 * thread's part (wgf_copy) of its piece fi of k-tile fkt (piece WGF_FIRST
 * + w + fi CONVS: A's rows m0 + 64 p on, or B's from n0) into slot fs of
 * those at shared address slots; then the next piece and slot. */
template <bool VEC>
static __device__ __forceinline__ void wgf_next(const wgf_src &a,
	const wgf_src &b, long long m0, long long n0, int w, int mine, int kt1,
	int t, unsigned slots, int *fkt, int *fi, int *fs)
{
	const int p = WGF_FIRST + w + *fi * CONVS;
	const unsigned slot = slots + *fs * WGF_SLOT;
	const long long k0 = (long long)*fkt * WG_K;

	if (*fkt < kt1) {
		if (p < WGS)
			wgf_copy<WGF_AK, VEC>(a, m0 + 64 * p, k0, t, slot);
		else
			wgf_copy<WGF_BK, VEC>(b, n0 + 64 * (p - WGS), k0, t, slot);
	}
	cp_async_commit();
	if (++*fi == mine)
		*fi = 0, ++*fkt;
	if (++*fs == AHEAD + 1)
		*fs = 0;
}

/* Converter warpgroup w of CONVS (wgf.cuh): k-tiles kt0 to kt1 - 1 of
 * A's rows m0 on and B's n0 on, its pieces of each (w, w + CONVS, ...)
 * split into the next stage once the consumers are done with what it
 * held before, the rows' inverse scales into ia and ib beside it. The
 * pieces go through the warpgroup's own AHEAD + 1 slots after the ring's
 * stages, AHEAD in flight while one is split; VEC: copied by float4
 * (wgf_vec). With WGF_APRE (wgb) the converters split B's pieces alone,
 * and the first thread of the first brings each k-tile's A tile, split
 * by the pass, from ga (A_BYTES a k-tile) into the stage by a bulk copy,
 * which the stage's full barrier then also waits for. Not inlined:
 * inlined, ptxas kept the consumers' accumulators live across it and
 * spilled. */
template <bool VEC>
static __device__ __noinline__ void wgf_produce(wg_ring q, wgf_src a,
	wgf_src b, long long m0, long long n0, int kt0, int kt1,
	float (*ia)[TILE_M], float (*ib)[TILE_N], const unsigned char *ga)
{
	extern __shared__ __align__(1024) unsigned char wg_smem[];
	unsigned char *const base = wg_smem + (q.base - smem_addr(wg_smem));
	const int w = (threadIdx.x >> 7) - WGS, t = threadIdx.x & 127;
	/* this warpgroup's pieces of a k-tile (gemm.json's wgb keeps it at
	 * least 1: CONVS * 64 <= TILE_N) */
	const int mine = (WGF_PIECES - WGF_FIRST - w + CONVS - 1) / CONVS;
	const unsigned slots = q.base + q.nst * STAGE_BYTES + w * (AHEAD + 1) * WGF_SLOT;
	/* the next piece to copy (piece w + fi CONVS of k-tile fkt) and its
	 * slot, and the slot of the next to split: counters, as with divisions
	 * by mine one converter took 1236 us on KernelBench 6 against 1054
	 * with them (two runs, bench/results/gemm-fused-gpu.md) */
	int fkt = kt0, fi = 0, fs = 0, ts = 0;
	unsigned have;

	/* the launch gives no byte to align the stages (the static shared
	 * memory before them is taken up to a whole KB, gemm.json's wgf):
	 * should the base ever not be aligned, stop rather than write past */
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(have));
	if (slots + (AHEAD + 1) * WGF_SLOT - smem_addr(wg_smem) > have)
		__trap();
	for (int n = 0; n < AHEAD; n++)
		wgf_next<VEC>(a, b, m0, n0, w, mine, kt1, t, slots, &fkt, &fi, &fs);
#pragma unroll 1
	for (int kt = kt0; kt < kt1; kt++) {
		unsigned char *const st = base + q.s * STAGE_BYTES;

#pragma unroll 1
		for (int i = 0; i < mine; i++) {
			const int p = WGF_FIRST + w + i * CONVS;
			float4 v[8];

			wgf_next<VEC>(a, b, m0, n0, w, mine, kt1, t, slots, &fkt, &fi, &fs);
			/* all but the AHEAD newest groups done: this piece is in */
			cp_async_wait<AHEAD>();
			wgf_take(base + (slots - q.base) + ts * WGF_SLOT, t, v);
			if (++ts == AHEAD + 1)
				ts = 0;
			if (i == 0 && q.used++ >= q.nst)
				bar_wait(q.empty + 8 * q.s, q.ph ^ 1);
			if (WGF_APRE && i == 0 && w == 0 && t == 0) {
				/* told before this thread's own arrival below, so
				 * the phase waits for the bytes too */
				bar_expect_tx(q.full + 8 * q.s, A_BYTES);
				bulk_load(q.base + q.s * STAGE_BYTES,
					ga + (long long)kt * A_BYTES, A_BYTES, q.full + 8 * q.s);
			}
			if (p < WGS)
				wgf_put<WGF_AK>(v, reinterpret_cast<unsigned short *>(st),
					ia[q.s], TILE_M, 64 * p, t);
			else
				wgf_put<WGF_BK>(v, reinterpret_cast<unsigned short *>(st + A_BYTES),
					ib[q.s], TILE_N, 64 * (p - WGS), t);
		}
		/* the planes were written by the generic proxy, wgmma reads them
		 * by the async one */
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
		bar_arrive(q.full + 8 * q.s);
		if (++q.s == q.nst)
			q.s = 0, q.ph ^= 1;
	}
}

/* A consumer warpgroup of wgf: acc = the product of k-tiles kt0 to kt1 -
 * 1, each k-tile's scaled product taken out of its scales (the inverses
 * of its rows of A, ia, and of B, ib) before it joins the sum; wgb's A
 * has one scale, taken out as gemm_wg's is, at the store. */
static __device__ __forceinline__ void wgf_consume(wg_ring &q,
	float (&acc)[NACC], int kt0, int kt1, const float (*ia)[TILE_M],
	const float (*ib)[TILE_N])
{
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = warp / 4;
	float part[NACC];
	int r, c;

	wg_origin(&r, &c);
#pragma unroll
	for (int i = 0; i < NACC; i++)
		acc[i] = 0.0f;
	for (int kt = kt0; kt < kt1; kt++) {
		const unsigned a0 = q.base + q.s * STAGE_BYTES + g * 64 * 128;

		bar_wait(q.full + 8 * q.s, q.ph);
		wg_stage(part, a0, q.base + q.s * STAGE_BYTES + A_BYTES, true);
		wg_wait<0>(part);
		const float r0 = WGF_APRE ? 1.0f : ia[q.s][r];
		const float r1 = WGF_APRE ? 1.0f : ia[q.s][r + 8];
#pragma unroll
		for (int j = 0; j < TILE_N / 8; j++) {
			const float2 f = *reinterpret_cast<const float2 *>(&ib[q.s][8 * j + c]);

			acc[4 * j] = fmaf(part[4 * j], r0 * f.x, acc[4 * j]);
			acc[4 * j + 1] = fmaf(part[4 * j + 1], r0 * f.y, acc[4 * j + 1]);
			acc[4 * j + 2] = fmaf(part[4 * j + 2], r1 * f.x, acc[4 * j + 2]);
			acc[4 * j + 3] = fmaf(part[4 * j + 3], r1 * f.y, acc[4 * j + 3]);
		}
		__syncwarp();
		if (lane == 0)
			bar_arrive(q.empty + 8 * q.s);
		if (++q.s == q.nst)
			q.s = 0, q.ph ^= 1;
	}
}

/* Variant wgf: block (x, batch y, slice z) writes its share of tile x of
 * C, the product over slice z of the k-tiles, to slice z of the partials
 * C, straight from A and B (fp32, as the task gives them): WGS consumer
 * warpgroups as gemm_wg's and CONVS converter warpgroups that fill their
 * stages (wgf.cuh). gemm_wg_reduce sums the slices through the bias and
 * the epilogue. A tile wholly outside the triangle of a tril or triu C
 * writes nothing (gemm_wg_reduce masks it). Variant wgb: the same, A's
 * k-tiles from its split planes wa (scaled by 2^scale[0], taken out at
 * the store) and B's from B itself. */
extern "C" __global__ void __launch_bounds__(WGF_THREADS, 1)
gemm_wgf(float *__restrict__ C, long long M, long long N, long long K,
#if WGF_APRE
	const unsigned short *__restrict__ wa, const int *__restrict__ scale,
#endif
	const float *__restrict__ A, const float *__restrict__ B BIAS_PARAM)
{
	__shared__ float ia[STAGES][TILE_M], ib[STAGES][TILE_N];
	const int ktiles = (int)CDIV(K, WG_K), kz = blockIdx.z;
	const int kt0 = (int)((long long)ktiles * kz / KSPLIT);
	const int kt1 = (int)((long long)ktiles * (kz + 1) / KSPLIT);
	const long long bz = blockIdx.y;
	long long m0, n0;
	float acc[NACC];
	wg_ring q;
#if !HAS_BIAS
	const float *bias = 0;
#endif

	tile_origin(M, N, TILE_M, TILE_N, &m0, &n0);
	if (wg_outside(m0, n0))
		return;
	const int role = wg_ring_init(q, min(STAGES, max(kt1 - kt0, 1)), 128 * CONVS);
#if WGF_APRE
	/* the block row of A's split tiles, as gemm_wg's producer reads it */
	const unsigned char *const ga = reinterpret_cast<const unsigned char *>(wa) +
		(bz * CDIV(M, TILE_M) + m0 / TILE_M) * ktiles * (long long)A_BYTES;
	const int sh = -scale[0];
#else
	const unsigned char *const ga = 0;
	const int sh = 0;
#endif
	if (role == WG_PRODUCER) {
		wgf_regs<false>();
		const wgf_src a = wgf_source(A + bz * M * K, M, K);
		const wgf_src b = wgf_source(B + (BATCHED ? bz : 0) * N * K, N, K);

		/* (wgb copies no piece of A: B's rows alone decide) */
		if ((WGF_APRE || wgf_vec<WGF_AK>(a)) && wgf_vec<WGF_BK>(b))
			wgf_produce<true>(q, a, b, m0, n0, kt0, kt1, ia, ib, ga);
		else
			wgf_produce<false>(q, a, b, m0, n0, kt0, kt1, ia, ib, ga);
		return;
	}
	wgf_regs<true>();
	wgf_consume(q, acc, kt0, kt1, ia, ib);
	C += ((long long)kz * gridDim.y + bz) * M * N;

	wg_tile_store(C, M, N, m0, n0, sh, bias, acc);
}
#endif
#if defined(VARIANT_wgk) || defined(VARIANT_wgf) || defined(VARIANT_wgb)
/* Grid-stride, 256 threads: C = epilogue(the sum of gemm_wg's SPLITK
 * slices of partials + bias), total values of C (every batch), matrices
 * of M rows N long; A and B come with the task's inputs and are not read. */
extern "C" __global__ void __launch_bounds__(256)
gemm_wg_reduce(float *__restrict__ C, const float *__restrict__ part,
	long long total, long long M, long long N, const float *__restrict__ A,
	const float *__restrict__ B BIAS_PARAM)
{
#if !HAS_BIAS
	const float *bias = 0;
#endif

	for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < total;
		i += (long long)gridDim.x * 256) {
		float v = 0.0f;

#pragma unroll
		for (int z = 0; z < KSPLIT; z++)
			v += __ldcs(part + z * total + i);
		C[i] = finish(v, 0, bias, TRIL || TRIU ? i / N % M : 0,
			HAS_BIAS || TRIL || TRIU ? i % N : 0);
	}
}
#endif
