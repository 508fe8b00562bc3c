/* gemm_tiled.cu: the gemm family's tiled kernels (docs/templates.md).
 * C[b] = epilogue(A[b] @ op(B[b]) + bias) for b < gridDim.y, with A M x K
 * row-major, op(B) K x N (b_layout "kn": B stored K x N; "nk": B stored
 * N x K, F.linear's weight, which is exactly mma's "col" operand) and C
 * M x N row-major; without batching B is shared by every b.
 *
 * Each block computes a TILE_M x TILE_N tile of C; its warps each own a
 * WARP_M x WARP_N part. Tiles of A and B stream through STAGES buffers of
 * shared memory with cp.async (16-byte copies where rows are 16-byte
 * aligned, else 4-byte ones), zero-filled past M, N and K, so that any
 * size runs the same code; the copies of tile kt + STAGES - 1 start once
 * a warp's first products of tile kt are issued. The arithmetic:
 *
 *   variant tiled, TC=1: tensor cores with split precision (3xTF32),
 *         mma.sync m16n8k8 (sm_80 and later). Each value x is split into
 *         hi, x with its 13 low mantissa bits cleared (a tf32 value), and
 *         lo = x - hi (exact), and a*b ~= a_hi*b_hi + a_hi*b_lo + a_lo*b_hi:
 *         the tensor cores read lo's top 19 bits, and a_lo*b_lo is below
 *         fp32's rounding. (Rounding hi with cvt.rna instead measured 20%
 *         slower on the H200 for no accuracy that the tolerance sees.)
 *   variant tiled, TC=0: fp32 FFMA on the CUDA cores, a register-tiled
 *         fallback.
 *   variant h3: split precision in fp16 (3xFP16), mma.sync m16n8k16, half
 *         the tensor work of 3xTF32 for the same 22 bits of each operand.
 *         Two small kernels run first: gemm_h3_absmax finds the largest
 *         finite magnitude of A and of B, and gemm_h3_split scales each by
 *         a power of two 2^e that puts it in [2^13, 2^14) and splits every
 *         value s = x * 2^e into hi = fp16(s) (rounded) and lo =
 *         fp16(s - hi), both fp16 planes with rows padded to a multiple of
 *         8 (16 bytes) in a workspace. The scale keeps hi far from fp16's
 *         overflow (65504), and values within about 2^-15 of the operand's
 *         largest keep 3xTF32's precision; below that lo falls into fp16's
 *         subnormals and bits go (two at 2^-17 of the largest), and values
 *         under about 2^-38 of it count as zero. One scale serves a whole
 *         operand (every batch): an operand whose rows or columns differ
 *         in magnitude by more than about 2^15 loses accuracy where 3xTF32
 *         would not, and kbench's checks at the task's inputs are what
 *         catch it. The product is unscaled exactly (scalbnf) before the
 *         bias and the epilogue. NaN propagates; an infinite operand gives
 *         NaN in some outputs where fp32 gives +-inf (lo of an infinite hi
 *         is 0, but a_lo * inf is NaN when a_lo is 0). The GEMM reads the
 *         planes with ldmatrix (.trans for B stored K x N); a_lo*b_lo is
 *         dropped as for 3xTF32.
 *
 * All sum each k-tile into a partial accumulator that is then added to
 * the running sum. The tensor cores' fp32 additions truncate: summed
 * straight into one accumulator, 4096^3 on the H200 erred by 2.9e-5
 * relative L2 and 1024 x 8192 x 8192 (F.linear) by 5.8e-5, above the
 * pack's 5e-5; with the partials, 6e-7 to 8e-7, better than cuBLAS SGEMM
 * (1.2e-6). The price is a second set of accumulator registers, which is
 * why a warp tile is at most 2048 outputs.
 *
 * gemm.cuh (the spec, the epilogue, the tile order, the store) and, for
 * h3, gemm_h3.cuh (the scale and the split of a value) come before this
 * file. */

#define WARPS_M (TILE_M / WARP_M)
#define WARPS_N (TILE_N / WARP_N)
#define THREADS (WARPS_M * WARPS_N * 32)

/* Shared-memory rows are padded so that a warp's fragment reads hit
 * distinct banks and rows stay 16-byte aligned for cp.async and ldmatrix.
 * Floats: k-contiguous rows by 4 floats (with TILE_K 16, 32 or 64, eight
 * consecutive rows start on eight distinct groups of 4 banks),
 * n-contiguous rows by 8 floats (rows k = t, t < 4, put column g on bank
 * 8 * t + g). fp16 (h3): every row by 8 halves, 16 bytes (rows of 80,
 * 144, 272 or 528 bytes: eight consecutive rows start on eight distinct
 * groups of 4 banks). A stage holds A's tile and B's (h3: each as a hi
 * and a lo plane). */
#if defined(VARIANT_h3)
typedef unsigned short elem_t; /* an fp16 value's bits */
#define PAD 8
#define PLANES 2
#else
typedef float elem_t;
#define PAD 4
#define PLANES 1
#endif
#define LDA (TILE_K + PAD)
#define A_TILE (TILE_M * LDA)
#if B_NK
#define LDB (TILE_K + PAD)
#define B_TILE (TILE_N * LDB)
#else
#define LDB (TILE_N + 8)
#define B_TILE (TILE_K * LDB)
#endif
#define A_STAGE (PLANES * A_TILE)
#define B_STAGE (PLANES * B_TILE)

/* A thread's share of the copies of one operand, tile after tile: the
 * ROWS x COLS tile at the current (row, col) of a row-major matrix goes to
 * a stage buffer of LD elements per row. With PLANES 2 (h3) the matrix is
 * two planes, hi and lo, plane elements apart, and so is the buffer, ROWS
 * * LD elements apart. The thread copies chunks
 * of 16 bytes, tile rows r + i * STEP at column q, with 16-byte copies
 * when vec (row length a multiple of 16 bytes and the matrix 16-byte
 * aligned, so a chunk is wholly inside the matrix or wholly outside),
 * else 4-byte ones (floats only: h3's planes are always vec). Elements
 * outside the matrix become zeros. Everything but the step to the next
 * tile is set up once. Sizes and indices fit in int. */
template <int ROWS, int COLS, int LD>
struct tile_copy {
	static const int CH = 16 / sizeof(elem_t); /* elements per chunk */
	static const int CPR = COLS / CH, STEP = THREADS / CPR;
	const elem_t *src; /* this thread's first element in the current tile */
	int row, col;      /* its matrix coordinates */
	int r, off;        /* its tile row, and offset in a stage buffer */

	__device__ __forceinline__ void init(const elem_t *m, long long ld,
		int row0, int col0, int tid)
	{
		int q = tid % CPR * CH;

		r = tid / CPR;
		off = r * LD + q;
		row = row0 + r;
		col = col0 + q;
		src = m + (long long)row * ld + col;
	}

	/* Starts the copies of the current tile into dst; the matrix (at safe,
	 * read instead of nothing when a chunk is outside) is rows x cols with
	 * rows ld elements apart. */
	__device__ __forceinline__ void issue(elem_t *dst, const elem_t *safe,
		long long ld, long long plane, int rows, int cols, bool vec) const
	{
		/* h3's planes are always vec: the 4-byte path copies floats */
		if (PLANES == 2 || vec) {
#pragma unroll
			for (int i = 0; i < CDIV(ROWS, STEP); i++) {
				if (ROWS % STEP != 0 && r + i * STEP >= ROWS)
					break;
				bool ok = row + i * STEP < rows && col < cols;

#pragma unroll
				for (int p = 0; p < PLANES; p++)
					cp_async16(smem_addr(dst + p * ROWS * LD + off + i * STEP * LD),
						ok ? src + p * plane + i * STEP * ld : safe,
						ok ? 16 : 0);
			}
			return;
		}
#pragma unroll
		for (int i = 0; i < CDIV(ROWS, STEP); i++) {
			if (ROWS % STEP != 0 && r + i * STEP >= ROWS)
				break;
#pragma unroll
			for (int e = 0; e < 4; e++) {
				bool ok = row + i * STEP < rows && col + e < cols;

				cp_async4(smem_addr(dst + off + i * STEP * LD + e),
					ok ? src + i * STEP * ld + e : safe, ok ? 4 : 0);
			}
		}
	}

	/* Moves to the tile drow rows and dcol columns further on. */
	__device__ __forceinline__ void next(long long ld, int drow, int dcol)
	{
		src += drow * ld + dcol;
		row += drow;
		col += dcol;
	}
};

/* The copies of both operands: A, M x K (rows lda apart), and B (nk:
 * N x K like A; kn: K x N; rows ldb apart), each PLANES planes plane_a
 * (plane_b) elements apart; the tiles move along k. */
struct stage_copy {
	tile_copy<TILE_M, TILE_K, LDA> a;
#if B_NK
	tile_copy<TILE_N, TILE_K, LDB> b;
#else
	tile_copy<TILE_K, TILE_N, LDB> b;
#endif
	const elem_t *A, *B;
	long long lda, ldb, plane_a, plane_b;
	int M, N, K;
	bool vec_a, vec_b;

	__device__ __forceinline__ void init(const elem_t *A_, const elem_t *B_,
		long long M_, long long N_, long long K_, long long lda_,
		long long ldb_, long long plane_a_, long long plane_b_,
		long long m0, long long n0, int tid)
	{
		const int ch = 16 / sizeof(elem_t);

		A = A_, B = B_, M = (int)M_, N = (int)N_, K = (int)K_;
		lda = lda_, ldb = ldb_, plane_a = plane_a_, plane_b = plane_b_;
		vec_a = lda % ch == 0 && ((unsigned long long)A & 15) == 0;
		vec_b = ldb % ch == 0 && ((unsigned long long)B & 15) == 0;
		a.init(A, lda, (int)m0, 0, tid);
#if B_NK
		b.init(B, ldb, (int)n0, 0, tid);
#else
		b.init(B, ldb, 0, (int)n0, tid);
#endif
	}

	/* Starts copying the current k-tile into sa, sb and moves to the next.
	 * A row of A (or of B nk) is lda (ldb) long: K, or K padded (h3). */
	__device__ __forceinline__ void issue_next(elem_t *sa, elem_t *sb)
	{
		a.issue(sa, A, lda, plane_a, M, (int)lda, vec_a);
		a.next(lda, 0, TILE_K);
#if B_NK
		b.issue(sb, B, ldb, plane_b, N, (int)ldb, vec_b);
		b.next(ldb, 0, TILE_K);
#else
		b.issue(sb, B, ldb, plane_b, K, (int)ldb, vec_b);
		b.next(ldb, TILE_K, 0);
#endif
	}
};

#if defined(VARIANT_h3) || TC
/* ---- tensor cores: mma.sync fragments ---- */

#define MI (WARP_M / 16) /* m16n8 tiles per warp along m */
#define NJ (WARP_N / 8)  /* ... along n */

/* Four 8 x 16-byte blocks from shared memory, one per group of eight
 * lanes' row addresses: lane l gets 32-bit word l % 4 of row l / 4 of
 * each (for fp16: elements 2 (l % 4) and 2 (l % 4) + 1). */
static __device__ __forceinline__ void ldsm_x4(unsigned *r, const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
		"{%0, %1, %2, %3}, [%4];\n"
		: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		: "r"(smem_addr(p)));
}

/* The variant's mma.sync: m16n8k16 on fp16 (h3) or m16n8k8 on tf32, both
 * with fragments of four a and two b registers as the PTX ISA lays them
 * out (a0..a3 rows g, g + 8 at the low and high halves of k; b0, b1 the
 * low and high halves of k at n g) and fp32 accumulators. */
#if defined(VARIANT_h3)
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#else
#define MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
#endif

/* d += a @ b for one tile. */
static __device__ __forceinline__ void mma(float *d, const unsigned *a,
	const unsigned *b)
{
	asm(MMA_OP "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		"{%0, %1, %2, %3};\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d = a @ b for one tile. */
static __device__ __forceinline__ void mma_first(float *d, const unsigned *a,
	const unsigned *b)
{
	asm(MMA_OP "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		"{%10, %10, %10, %10};\n"
		: "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
		  "f"(0.0f));
}

/* part (= when first, else +=) the warp's split product of one k-step,
 * a_lo*b_hi + a_hi*b_lo + a_hi*b_hi: the small terms first, then the
 * large one. */
static __device__ __forceinline__ void mma_split(float (&part)[MI][NJ][4],
	const unsigned (&ah)[MI][4], const unsigned (&al)[MI][4],
	const unsigned (&bh)[NJ][2], const unsigned (&bl)[NJ][2], bool first)
{
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int j = 0; j < NJ; j++) {
			if (first)
				mma_first(part[i][j], al[i], bh[j]);
			else
				mma(part[i][j], al[i], bh[j]);
			mma(part[i][j], ah[i], bl[j]);
			mma(part[i][j], ah[i], bh[j]);
		}
}
#endif

#if defined(VARIANT_h3)
/* ---- 3xFP16: the split kernel ---- */

/* Chunks of 8 values a thread splits per round, all loaded first so that
 * their loads are in flight together. */
#define H3_CHUNKS 2

/* Grid (G) as gemm_h3_absmax's, 256 threads: splits operand o (0: A, 1:
 * B) into the fp16 planes hi and lo at h (lo right after hi), rows padded
 * to a multiple of 8 elements with zeros, and writes its scale exponent
 * e to scale[o]. The operand is mats row-major matrices of mn x k (A;
 * B nk), or of k x mn (B kn). A thread takes H3_CHUNKS chunks of 8
 * values a round, G * 256 chunks apart. */
extern "C" __global__ void __launch_bounds__(256)
gemm_h3_split(const float *__restrict__ x, long long mats, long long mn,
	long long k, unsigned short *__restrict__ h, int *__restrict__ scale,
	int o)
{
	const bool kn = o == 1 && !B_NK;
	const long long rows = mats * (kn ? k : mn), cols = kn ? mn : k;
	const long long cp = CDIV(cols, 8) * 8, chunks = rows * (cp / 8);
	const long long stride = (long long)gridDim.x * 256;
	const bool vec = (cols & 3) == 0 && ((unsigned long long)x & 15) == 0;
	unsigned short *lo = h + rows * cp;
	float p1, p2;

	h3_scale(scale, o, &p1, &p2);
	for (long long c0 = (long long)blockIdx.x * 256 + threadIdx.x; c0 < chunks;
		c0 += H3_CHUNKS * stride) {
		float v[H3_CHUNKS][8];
		long long r[H3_CHUNKS], k0[H3_CHUNKS];

#pragma unroll
		for (int u = 0; u < H3_CHUNKS; u++) {
			const long long c = c0 + u * stride;

			h3_divmod(c, cp / 8, &r[u], &k0[u]);
			k0[u] *= 8;
			const float *src = x + r[u] * cols + k0[u];
			if (c >= chunks) {
#pragma unroll
				for (int j = 0; j < 8; j++)
					v[u][j] = 0.0f;
			} else if (vec) {
				const float4 v0 = __ldcs(reinterpret_cast<const float4 *>(src));
				const float4 v1 = k0[u] + 4 < cols ?
					__ldcs(reinterpret_cast<const float4 *>(src) + 1) :
					make_float4(0.0f, 0.0f, 0.0f, 0.0f);

				v[u][0] = v0.x, v[u][1] = v0.y, v[u][2] = v0.z, v[u][3] = v0.w;
				v[u][4] = v1.x, v[u][5] = v1.y, v[u][6] = v1.z, v[u][7] = v1.w;
			} else {
#pragma unroll
				for (int j = 0; j < 8; j++)
					v[u][j] = k0[u] + j < cols ? __ldcs(src + j) : 0.0f;
			}
		}
#pragma unroll
		for (int u = 0; u < H3_CHUNKS; u++) {
			unsigned hw[4], lw[4];

			if (c0 + u * stride >= chunks)
				break;
#pragma unroll
			for (int j = 0; j < 8; j += 2) {
				unsigned short hi[2], lw16[2];

#pragma unroll
				for (int d = 0; d < 2; d++)
					h3_pieces(v[u][j + d] * p1 * p2, &hi[d], &lw16[d]);
				hw[j / 2] = hi[0] | (unsigned)hi[1] << 16;
				lw[j / 2] = lw16[0] | (unsigned)lw16[1] << 16;
			}
			const long long at = r[u] * cp + k0[u];
			*reinterpret_cast<uint4 *>(h + at) = make_uint4(hw[0], hw[1], hw[2], hw[3]);
			*reinterpret_cast<uint4 *>(lo + at) = make_uint4(lw[0], lw[1], lw[2], lw[3]);
		}
	}
}

/* ---- 3xFP16: the product ---- */

/* As ldsm_x4, each 8 x 8 block transposed: lane l gets elements
 * (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4) of each. */
static __device__ __forceinline__ void ldsm_x4_t(unsigned *r, const void *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
		"{%0, %1, %2, %3}, [%4];\n"
		: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		: "r"(smem_addr(p)));
}

/* part = this warp's share of one stage's A tile @ B tile (hi planes
 * first, lo planes A_TILE and B_TILE further); calls between() once the
 * first k-step's products are issued. */
template <typename F>
static __device__ __forceinline__ void stage_mma(const elem_t *sa,
	const elem_t *sb, float (&part)[MI][NJ][4], int wm0, int wn0, int lane,
	F between)
{
	const int q = lane >> 3, r8 = lane & 7;
	/* ldmatrix row addresses: A blocks (rows 0-7 | 8-15) x (k 0-7 | 8-15)
	 * give a0..a3; B blocks (k 0-7 | 8-15) x (n tile j | j + 1) give b0,
	 * b1 of two tiles: nk rows are n, kn rows are k (transposed). */
	const elem_t *pa = sa + (wm0 + (q & 1) * 8 + r8) * LDA + (q >> 1) * 8;
#if B_NK
	const elem_t *pb = sb + (wn0 + (q >> 1) * 8 + r8) * LDB + (q & 1) * 8;
#else
	const elem_t *pb = sb + ((q & 1) * 8 + r8) * LDB + wn0 + (q >> 1) * 8;
#endif

#pragma unroll
	for (int kk = 0; kk < TILE_K; kk += 16) {
		unsigned ah[MI][4], al[MI][4], bh[NJ][2], bl[NJ][2];

#pragma unroll
		for (int i = 0; i < MI; i++) {
			ldsm_x4(ah[i], pa + i * 16 * LDA + kk);
			ldsm_x4(al[i], pa + A_TILE + i * 16 * LDA + kk);
		}
#pragma unroll
		for (int j = 0; j < NJ; j += 2) {
			unsigned rh[4], rl[4];

#if B_NK
			ldsm_x4(rh, pb + j * 8 * LDB + kk);
			ldsm_x4(rl, pb + B_TILE + j * 8 * LDB + kk);
#else
			ldsm_x4_t(rh, pb + kk * LDB + j * 8);
			ldsm_x4_t(rl, pb + B_TILE + kk * LDB + j * 8);
#endif
			bh[j][0] = rh[0], bh[j][1] = rh[1], bh[j + 1][0] = rh[2], bh[j + 1][1] = rh[3];
			bl[j][0] = rl[0], bl[j][1] = rl[1], bl[j + 1][0] = rl[2], bl[j + 1][1] = rl[3];
		}
		mma_split(part, ah, al, bh, bl, kk == 0);
		if (kk == 0)
			between();
	}
}

#elif TC
/* ---- 3xTF32 ---- */

/* Splits x into tf32 parts, x ~= hi + lo: hi is x with the 13 low mantissa
 * bits cleared (a tf32 value, so the hi products are exact) and lo = x - hi
 * exactly, |lo| < 2^-10 |x|; the tensor cores read lo's top 19 bits, so
 * hi + lo as they see it is x to about 2^-20 relative. */
static __device__ __forceinline__ void split_tf32(float x, unsigned *hi,
	unsigned *lo)
{
	unsigned h = __float_as_uint(x) & 0xffffe000u;

	*hi = h;
	*lo = __float_as_uint(x - __uint_as_float(h));
}

/* part = this warp's share of one stage's A tile @ B tile; calls between()
 * once the first k-step's products are issued. */
template <typename F>
static __device__ __forceinline__ void stage_mma(const float *sa,
	const float *sb, float (&part)[MI][NJ][4], int wm0, int wn0, int lane,
	F between)
{
	const int q = lane >> 3, r8 = lane & 7;
	/* ldmatrix row addresses: A blocks (rows 0-7 | 8-15) x (k 0-3 | 4-7)
	 * give a0..a3; B (nk) blocks (k 0-3 | 4-7) x (n tile j | j + 1) give
	 * b0, b1 of two tiles. */
	const float *pa = sa + (wm0 + (q & 1) * 8 + r8) * LDA + (q >> 1) * 4;
#if B_NK
	const float *pb = sb + (wn0 + (q >> 1) * 8 + r8) * LDB + (q & 1) * 4;
#else
	const int g = lane >> 2, t = lane & 3;
	const float *pb = sb + t * LDB + wn0 + g;
#endif

#pragma unroll
	for (int kk = 0; kk < TILE_K; kk += 8) {
		unsigned ah[MI][4], al[MI][4], bh[NJ][2], bl[NJ][2];

#pragma unroll
		for (int i = 0; i < MI; i++) {
			unsigned raw[4];

			ldsm_x4(raw, pa + i * 16 * LDA + kk);
#pragma unroll
			for (int e = 0; e < 4; e++)
				split_tf32(__uint_as_float(raw[e]), &ah[i][e], &al[i][e]);
		}
#if B_NK
#pragma unroll
		for (int j = 0; j < NJ; j += 2) {
			unsigned raw[4];

			ldsm_x4(raw, pb + j * 8 * LDB + kk);
			split_tf32(__uint_as_float(raw[0]), &bh[j][0], &bl[j][0]);
			split_tf32(__uint_as_float(raw[1]), &bh[j][1], &bl[j][1]);
			split_tf32(__uint_as_float(raw[2]), &bh[j + 1][0], &bl[j + 1][0]);
			split_tf32(__uint_as_float(raw[3]), &bh[j + 1][1], &bl[j + 1][1]);
		}
#else
#pragma unroll
		for (int j = 0; j < NJ; j++) {
			split_tf32(pb[kk * LDB + j * 8], &bh[j][0], &bl[j][0]);
			split_tf32(pb[(kk + 4) * LDB + j * 8], &bh[j][1], &bl[j][1]);
		}
#endif
		mma_split(part, ah, al, bh, bl, kk == 0);
		if (kk == 0)
			between();
	}
}
#endif

#if defined(VARIANT_h3) || TC
/* ---- tensor cores: accumulators ---- */

/* A warp's running sums: m16n8 tile (i, j), the PTX fragment's four. */
struct tile_acc {
	float v[MI][NJ][4];
};

/* Sets every running sum to zero. */
static __device__ __forceinline__ void acc_zero(tile_acc &acc)
{
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int j = 0; j < NJ; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc.v[i][j][e] = 0.0f;
}

/* acc += this warp's share of one stage's A tile @ B tile, summed apart
 * first (see the top of the file). */
template <typename F>
static __device__ __forceinline__ void stage_compute(const elem_t *sa,
	const elem_t *sb, tile_acc &acc, int wm0, int wn0, int lane, F between)
{
	float part[MI][NJ][4];

	stage_mma(sa, sb, part, wm0, wn0, lane, between);
#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int j = 0; j < NJ; j++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				acc.v[i][j][e] += part[i][j][e];
}

/* Writes this warp's part of the block's tile of C, times 2^sh.
 * Accumulator e of m16n8 tile (i, j) is its row g + 8 * (e / 2), column
 * 2 * t + e % 2. */
static __device__ __forceinline__ void acc_store(const tile_acc &acc,
	float *C, int sh, const float *bias, long long M, long long N,
	long long m0, long long n0, int wm0, int wn0, int lane)
{
	const int g = lane >> 2, t = lane & 3;

#pragma unroll
	for (int i = 0; i < MI; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			long long row = m0 + wm0 + i * 16 + h * 8 + g;

			if (row >= M)
				continue;
#pragma unroll
			for (int j = 0; j < NJ; j++)
				store_pair(C + row * N, sh, bias, row, n0 + wn0 + j * 8 + 2 * t, N,
					acc.v[i][j][2 * h], acc.v[i][j][2 * h + 1]);
		}
}

#else
/* ---- CUDA cores, fp32 FFMA ---- */

/* Lanes form an 8 x 4 grid; lane (ly, lx) owns rows wm0 + ly + 8 * i of
 * the warp tile and TNC columns: for nk, wn0 + lx + 4 * c (so the four
 * lanes of a row read four consecutive rows of B's tile); for kn, groups
 * of four consecutive columns wn0 + 16 * (c / 4) + 4 * lx + c % 4 (one
 * 16-byte read per group). */
#define TMR (WARP_M / 8)
#define TNC (WARP_N / 4)

/* Lane lx's column c of the warp tile, as above. */
static __device__ __forceinline__ int simt_col(int c, int lx)
{
	return B_NK ? lx + 4 * c : 16 * (c / 4) + 4 * lx + c % 4;
}

/* Component e of v (e a compile-time constant once unrolled). */
static __device__ __forceinline__ float comp(float4 v, int e)
{
	return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

/* part += this lane's share of one stage's A tile @ B tile. */
template <typename F>
static __device__ __forceinline__ void stage_fma(const float *sa,
	const float *sb, float (&part)[TMR][TNC], int wm0, int wn0, int lane,
	F between)
{
	const int ly = lane >> 2, lx = lane & 3;

#pragma unroll
	for (int kk = 0; kk < TILE_K; kk += 4) {
		float4 a[TMR];

#pragma unroll
		for (int i = 0; i < TMR; i++)
			a[i] = *(const float4 *)(sa + (wm0 + ly + 8 * i) * LDA + kk);
#if B_NK
		float4 b[TNC];

#pragma unroll
		for (int c = 0; c < TNC; c++)
			b[c] = *(const float4 *)(sb + (wn0 + simt_col(c, lx)) * LDB + kk);
#pragma unroll
		for (int e = 0; e < 4; e++)
#pragma unroll
			for (int i = 0; i < TMR; i++)
#pragma unroll
				for (int c = 0; c < TNC; c++)
					part[i][c] = fmaf(comp(a[i], e), comp(b[c], e), part[i][c]);
#else
#pragma unroll
		for (int e = 0; e < 4; e++) {
			float4 b[TNC / 4];

#pragma unroll
			for (int c = 0; c < TNC / 4; c++)
				b[c] = *(const float4 *)(sb + (kk + e) * LDB + wn0 +
					simt_col(4 * c, lx));
#pragma unroll
			for (int i = 0; i < TMR; i++)
#pragma unroll
				for (int c = 0; c < TNC; c++)
					part[i][c] = fmaf(comp(a[i], e), comp(b[c / 4], c % 4),
						part[i][c]);
		}
#endif
		if (kk == 0)
			between();
	}
}

/* A lane's running sums: its rows i and columns c. */
struct tile_acc {
	float v[TMR][TNC];
};

/* Sets every running sum to zero. */
static __device__ __forceinline__ void acc_zero(tile_acc &acc)
{
#pragma unroll
	for (int i = 0; i < TMR; i++)
#pragma unroll
		for (int c = 0; c < TNC; c++)
			acc.v[i][c] = 0.0f;
}

/* acc += this lane's share of one stage's A tile @ B tile, summed apart
 * first (see the top of the file). */
template <typename F>
static __device__ __forceinline__ void stage_compute(const float *sa,
	const float *sb, tile_acc &acc, int wm0, int wn0, int lane, F between)
{
	float part[TMR][TNC];

#pragma unroll
	for (int i = 0; i < TMR; i++)
#pragma unroll
		for (int c = 0; c < TNC; c++)
			part[i][c] = 0.0f;
	stage_fma(sa, sb, part, wm0, wn0, lane, between);
#pragma unroll
	for (int i = 0; i < TMR; i++)
#pragma unroll
		for (int c = 0; c < TNC; c++)
			acc.v[i][c] += part[i][c];
}

/* Writes this lane's part of the block's tile of C, times 2^sh. */
static __device__ __forceinline__ void acc_store(const tile_acc &acc,
	float *C, int sh, const float *bias, long long M, long long N,
	long long m0, long long n0, int wm0, int wn0, int lane)
{
	const int ly = lane >> 2, lx = lane & 3;

#pragma unroll
	for (int i = 0; i < TMR; i++) {
		long long row = m0 + wm0 + ly + 8 * i;

		if (row >= M)
			continue;
#pragma unroll
		for (int c = 0; c < TNC; c++) {
			long long col = n0 + wn0 + simt_col(c, lx);

			if (col < N)
				C[row * N + col] = finish(acc.v[i][c], sh, bias, row, col);
		}
	}
}
#endif

/* acc = this block's tile of the product: the stages of A's and B's
 * tiles stream through shared memory (sa, sb) while the warps multiply. */
static __device__ __forceinline__ void gemm_mainloop(stage_copy &copy,
	elem_t *sa, elem_t *sb, tile_acc &acc, long long K, int wm0, int wn0,
	int lane)
{
	const int ktiles = (int)CDIV(K, TILE_K);

	acc_zero(acc);
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < ktiles)
			copy.issue_next(sa + s * A_STAGE, sb + s * B_STAGE);
		cp_async_commit();
	}
	int rd = 0, wr = STAGES - 1;
	for (int kt = 0; kt < ktiles; kt++) {
		/* Tile kt has landed, and every warp is done with the buffer
		 * that the next copy overwrites (it held tile kt - 1). */
		cp_async_wait<STAGES - 2>();
		__syncthreads();
		/* The copies of tile kt + STAGES - 1 start once this warp's
		 * first products of tile kt are issued, so that the tensor
		 * cores are not idle while the copies are set up. */
		const bool more = kt + STAGES - 1 < ktiles;
		elem_t *na = sa + wr * A_STAGE, *nb = sb + wr * B_STAGE;
		stage_compute(sa + rd * A_STAGE, sb + rd * B_STAGE, acc, wm0, wn0,
			lane, [&]() {
				if (more)
					copy.issue_next(na, nb);
				cp_async_commit();
			});
		wr = wr + 1 == STAGES ? 0 : wr + 1;
		rd = rd + 1 == STAGES ? 0 : rd + 1;
	}
	cp_async_wait<0>();
}

#if defined(VARIANT_h3)
/* C = epilogue(A @ op(B) + bias) from the fp16 planes of A (ah) and B
 * (bh) and their scale exponents, as gemm_tiled; A and B themselves are
 * not read (they come with the task's inputs, before the bias). */
extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_h3(float *__restrict__ C, long long M, long long N, long long K,
	const elem_t *__restrict__ ah, const elem_t *__restrict__ bh,
	const int *__restrict__ scale, const float *__restrict__ A,
	const float *__restrict__ B BIAS_PARAM)
{
	extern __shared__ float4 smem4[];
	elem_t *sa = (elem_t *)smem4, *sb = sa + STAGES * A_STAGE;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int wm0 = warp / WARPS_N * WARP_M, wn0 = warp % WARPS_N * WARP_N;
	const long long kp = CDIV(K, 8) * 8, np = CDIV(N, 8) * 8;
	const long long lda = kp, ldb = B_NK ? kp : np;
	const long long mats_b = BATCHED ? gridDim.y : 1;
	long long m0, n0, bz = blockIdx.y;
	tile_acc acc;
	stage_copy copy;
#if !HAS_BIAS
	const float *bias = 0;
#endif

	tile_origin(M, N, TILE_M, TILE_N, &m0, &n0);
	ah += bz * M * lda;
	bh += BATCHED ? bz * (B_NK ? N : K) * ldb : 0;
	C += bz * M * N;
	copy.init(ah, bh, M, N, K, lda, ldb, gridDim.y * M * lda,
		mats_b * (B_NK ? N : K) * ldb, m0, n0, tid);
	gemm_mainloop(copy, sa, sb, acc, K, wm0, wn0, lane);
	acc_store(acc, C, -(scale[0] + scale[1]), bias, M, N, m0, n0, wm0, wn0,
		lane);
}
#else
/* C = epilogue(A @ op(B) + bias) for batch blockIdx.y, tile blockIdx.x
 * (tile_origin), THREADS threads, STAGES stage buffers of dynamic shared
 * memory. */
extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_tiled(float *__restrict__ C, long long M, long long N, long long K,
	const float *__restrict__ A, const float *__restrict__ B BIAS_PARAM)
{
	extern __shared__ float4 smem4[];
	float *sa = (float *)smem4, *sb = sa + STAGES * A_STAGE;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int wm0 = warp / WARPS_N * WARP_M, wn0 = warp % WARPS_N * WARP_N;
	long long m0, n0, bz = blockIdx.y;
	tile_acc acc;
	stage_copy copy;
#if !HAS_BIAS
	const float *bias = 0;
#endif

	tile_origin(M, N, TILE_M, TILE_N, &m0, &n0);
	A += bz * M * K;
	B += BATCHED ? bz * N * K : 0;
	C += bz * M * N;
	copy.init(A, B, M, N, K, K, B_NK ? K : N, 0, 0, m0, n0, tid);
	gemm_mainloop(copy, sa, sb, acc, K, wm0, wn0, lane);
	acc_store(acc, C, 0, bias, M, N, m0, n0, wm0, wn0, lane);
}
#endif
