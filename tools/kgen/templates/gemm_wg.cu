/* gemm_wg.cu: the gemm family's warpgroup kernels (docs/templates.md),
 * variant wg. C[b] = epilogue(A[b] @ op(B[b]) + bias) as gemm_tiled.cu
 * computes it, in 3xFP16 split precision as variant h3 (gemm_tiled.cu's
 * top says how accurate), on warpgroup MMA: wgmma.mma_async, sm_90a.
 *
 * gemm_h3_absmax (gemm_h3.cuh) finds the largest magnitude of A and of B.
 * gemm_wg_split then writes each operand scaled and split into fp16 hi
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
 * memory as wgmma reads it, and nothing is built on the host.
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
 * do. */

/* Grid (G) as gemm_h3_absmax's, 256 threads: writes operand o (0: A, mats
 * row-major matrices of rows x k, of k x rows when A_T; 1: B, of rows (n)
 * x k when nk, of k x rows when kn) scaled and split into the tiled planes
 * at h (wg_split), and its scale exponent to scale[o]. */
extern "C" __global__ void __launch_bounds__(256)
gemm_wg_split(const float *__restrict__ x, long long mats, long long rows,
	long long k, unsigned short *__restrict__ h, int *__restrict__ scale,
	int o)
{
	wg_split(x, mats, rows, k, h, scale, o, o ? TILE_N : TILE_M,
		o == 1 ? !B_NK : A_T);
}

#if defined(VARIANT_wgk)
#define KSPLIT SPLITK /* slices of k, one a block; gemm_wg_reduce sums them */
#define TILES 1
#else
#define KSPLIT 1
#endif

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

/* C = epilogue(A @ op(B) + bias) from the tiled planes of A (wa) and B
 * (wb) and their scale exponents, for batch blockIdx.y: tiles blockIdx.x,
 * blockIdx.x + gridDim.x, ... (TILES of them, tile_at's order), one after
 * another through one ring of stages, so that the producer brings the
 * next tile's k-tiles while the warpgroups finish and store this one's.
 * A and B themselves are not read (they come with the task's inputs,
 * before the bias). With split-K (variant wgk) block z of SPLITK takes
 * slice z of the k-tiles and writes its share of the product to slice z
 * of C, the partials, instead. A tile wholly above the diagonal of a tril
 * C is not computed: zeros (gemm_wg_reduce masks the partials it does not
 * write). */
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

	const int role = wg_ring_init(q, min(STAGES, max(TILES * (kt1 - kt0), 1)));
	if (role == WG_IDLE)
		return;
	C += ((long long)kz * gridDim.y + bz) * M * N;
	for (int i = 0; i < TILES; i++) {
		const long long t = blockIdx.x + (long long)i * gridDim.x;
		long long m0, n0;

		if (t >= tiles)
			break;
		tile_at(t, M, N, TILE_M, TILE_N, &m0, &n0);
		const bool skip = TRIL && n0 > m0 + TILE_M - 1;
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
}
#if defined(VARIANT_wgk)
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
		C[i] = finish(v, 0, bias, TRIL ? i / N % M : 0,
			HAS_BIAS || TRIL ? i % N : 0);
	}
}
#endif
