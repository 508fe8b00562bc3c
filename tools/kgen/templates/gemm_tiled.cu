/* gemm_tiled.cu: the gemm family's tiled kernel (docs/templates.md).
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
 * a warp's first products of tile kt are issued. Knob TC picks the
 * arithmetic:
 *
 *   TC=1: tensor cores with split precision (3xTF32), mma.sync m16n8k8
 *         (sm_80 and later). Each value x is split into hi, x with its 13
 *         low mantissa bits cleared (a tf32 value), and lo = x - hi
 *         (exact), and a*b ~= a_hi*b_hi + a_hi*b_lo + a_lo*b_hi: the
 *         tensor cores read lo's top 19 bits, and a_lo*b_lo is below
 *         fp32's rounding. (Rounding hi with cvt.rna instead measured 20%
 *         slower on the H200 for no accuracy that the tolerance sees.)
 *   TC=0: fp32 FFMA on the CUDA cores, a register-tiled fallback.
 *
 * Both sum each k-tile into a partial accumulator that is then added to
 * the running sum. The tensor cores' fp32 additions truncate: summed
 * straight into one accumulator, 4096^3 on the H200 erred by 2.9e-5
 * relative L2 and 1024 x 8192 x 8192 (F.linear) by 5.8e-5, above the
 * pack's 5e-5; with the partials, 6e-7 to 8e-7, better than cuBLAS SGEMM
 * (1.2e-6). The price is a second set of accumulator registers, which is
 * why a warp tile is at most 2048 outputs. */

#define HAS_BIAS ({{bias}})
#define BATCHED ({{batched}})
/* The kernel takes the task's inputs last, in its order (x, W and, with
 * bias, b), so that the launch plan can pass them all as one list. */
#if HAS_BIAS
#define BIAS_PARAM , const float *__restrict__ bias
#else
#define BIAS_PARAM
#endif
#define B_LAYOUT_{{b_layout}} 1
#if defined(B_LAYOUT_nk)
#define B_NK 1
#elif defined(B_LAYOUT_kn)
#define B_NK 0
#else
#error "gemm_tiled.cu: b_layout must be kn or nk"
#endif

#define WARPS_M (TILE_M / WARP_M)
#define WARPS_N (TILE_N / WARP_N)
#define THREADS (WARPS_M * WARPS_N * 32)

/* Shared-memory rows are padded so that a warp's fragment reads hit
 * distinct banks and rows stay 16-byte aligned for cp.async and ldmatrix:
 * k-contiguous rows by 4 floats (with TILE_K 16, 32 or 64, eight
 * consecutive rows start on eight distinct groups of 4 banks), n-contiguous rows by 8
 * floats (rows k = t, t < 4, put column g on bank 8 * t + g). */
#define LDA (TILE_K + 4)
#define A_TILE (TILE_M * LDA)
#if B_NK
#define LDB (TILE_K + 4)
#define B_TILE (TILE_N * LDB)
#else
#define LDB (TILE_N + 8)
#define B_TILE (TILE_K * LDB)
#endif

/* Tile rows of C that consecutive blocks cover before moving along n, so
 * that blocks running together share panels of A and B in L2. */
#define GROUP_M 8

#define CDIV(a, b) (((a) + (b) - 1) / (b))

/* The task's epilogue on v, the product plus bias. */
static __device__ __forceinline__ float gemm_epilogue(float v)
{
	return ({{epilogue}});
}

/* The shared-state-space address of p, for PTX that wants one. */
static __device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* Copies bytes (16 or 0) from global src to shared dst, zero-filling the
 * rest of the 16 bytes, without waiting. */
static __device__ __forceinline__ void cp_async16(float *dst, const float *src,
	int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
		:: "r"(smem_addr(dst)), "l"(src), "r"(bytes) : "memory");
}

/* As cp_async16 for one float (bytes 4 or 0). */
static __device__ __forceinline__ void cp_async4(float *dst, const float *src,
	int bytes)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
		:: "r"(smem_addr(dst)), "l"(src), "r"(bytes) : "memory");
}

/* Closes this thread's group of copies started since the last commit. */
static __device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's copy groups are in flight. */
template <int N>
static __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* The origin (m0, n0) of this block's tile of C: blocks are numbered along
 * n within groups of GROUP_M tile rows. */
static __device__ __forceinline__ void tile_origin(long long M, long long N,
	long long *m0, long long *n0)
{
	long long tiles_m = CDIV(M, TILE_M), tiles_n = CDIV(N, TILE_N);
	long long pid = blockIdx.x, in_group = GROUP_M * tiles_n;
	long long first = pid / in_group * GROUP_M;
	long long rows = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
	long long r = pid % in_group;

	*m0 = (first + r % rows) * TILE_M;
	*n0 = r / rows * TILE_N;
}

/* A thread's share of the copies of one operand, tile after tile: the
 * ROWS x COLS tile at the current (row, col) of a row-major matrix goes to
 * a stage buffer of LD floats per row. The thread copies chunks of 4
 * floats, tile rows r + i * STEP at column q, with 16-byte copies when vec
 * (row length a multiple of 4 and the matrix 16-byte aligned, so a chunk
 * is wholly inside the matrix or wholly outside), else 4-byte ones.
 * Elements outside the matrix become zeros. Everything but the step to
 * the next tile is set up once. Sizes and indices fit in int. */
template <int ROWS, int COLS, int LD>
struct tile_copy {
	static const int CPR = COLS / 4, STEP = THREADS / CPR;
	const float *src; /* this thread's first element in the current tile */
	int row, col;     /* its matrix coordinates */
	int r, off;       /* its tile row, and offset in a stage buffer */

	__device__ __forceinline__ void init(const float *m, long long ld,
		int row0, int col0, int tid)
	{
		int q = tid % CPR * 4;

		r = tid / CPR;
		off = r * LD + q;
		row = row0 + r;
		col = col0 + q;
		src = m + (long long)row * ld + col;
	}

	/* Starts the copies of the current tile into dst; the matrix (at safe,
	 * read instead of nothing when a chunk is outside) is rows x cols with
	 * rows ld floats apart. */
	__device__ __forceinline__ void issue(float *dst, const float *safe,
		long long ld, int rows, int cols, bool vec) const
	{
		if (vec) {
#pragma unroll
			for (int i = 0; i < CDIV(ROWS, STEP); i++) {
				if (ROWS % STEP != 0 && r + i * STEP >= ROWS)
					break;
				bool ok = row + i * STEP < rows && col < cols;

				cp_async16(dst + off + i * STEP * LD,
					ok ? src + i * STEP * ld : safe, ok ? 16 : 0);
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

				cp_async4(dst + off + i * STEP * LD + e,
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

/* The copies of both operands. A's tiles and B's (nk: N x K like A; kn:
 * K x N) move along k. */
struct stage_copy {
	tile_copy<TILE_M, TILE_K, LDA> a;
#if B_NK
	tile_copy<TILE_N, TILE_K, LDB> b;
#else
	tile_copy<TILE_K, TILE_N, LDB> b;
#endif

	__device__ __forceinline__ void init(const float *A, const float *B,
		long long N, long long K, long long m0, long long n0, int tid)
	{
		a.init(A, K, (int)m0, 0, tid);
#if B_NK
		b.init(B, K, (int)n0, 0, tid);
#else
		b.init(B, N, 0, (int)n0, tid);
#endif
	}

	/* Starts copying the current k-tile into sa, sb and moves to the next. */
	__device__ __forceinline__ void issue_next(float *sa, float *sb,
		const float *A, const float *B, long long M, long long N,
		long long K, bool vec_a, bool vec_b)
	{
		a.issue(sa, A, K, (int)M, (int)K, vec_a);
		a.next(K, 0, TILE_K);
#if B_NK
		b.issue(sb, B, K, (int)N, (int)K, vec_b);
		b.next(K, 0, TILE_K);
#else
		b.issue(sb, B, N, (int)K, (int)N, vec_b);
		b.next(N, TILE_K, 0);
#endif
	}
};

/* v plus the bias of column col, through the epilogue. */
static __device__ __forceinline__ float finish(float v, const float *bias,
	long long col)
{
	if (HAS_BIAS)
		v += __ldg(bias + col);
	return gemm_epilogue(v);
}

#if TC
/* ---- tensor cores, 3xTF32 ---- */

#define MI (WARP_M / 16) /* m16n8k8 tiles per warp along m */
#define NJ (WARP_N / 8)  /* ... along n */

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

/* d += a @ b for one m16n8k8 tile (fragments as the PTX ISA lays out). */
static __device__ __forceinline__ void mma_tf32(float *d, const unsigned *a,
	const unsigned *b)
{
	asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		"{%0, %1, %2, %3};\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d = a @ b for one m16n8k8 tile. */
static __device__ __forceinline__ void mma_tf32_first(float *d,
	const unsigned *a, const unsigned *b)
{
	asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
		"{%10, %10, %10, %10};\n"
		: "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
		  "f"(0.0f));
}

/* Four 8x4 blocks of 32-bit words from shared memory, one per group of
 * eight lanes' row addresses: lane l gets word l % 4 of row l / 4 of each. */
static __device__ __forceinline__ void ldsm_x4(unsigned *r, const float *p)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
		"{%0, %1, %2, %3}, [%4];\n"
		: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		: "r"(smem_addr(p)));
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
		/* The small terms first, then the large one. */
#pragma unroll
		for (int i = 0; i < MI; i++)
#pragma unroll
			for (int j = 0; j < NJ; j++) {
				if (kk == 0)
					mma_tf32_first(part[i][j], al[i], bh[j]);
				else
					mma_tf32(part[i][j], al[i], bh[j]);
				mma_tf32(part[i][j], ah[i], bl[j]);
				mma_tf32(part[i][j], ah[i], bh[j]);
			}
		if (kk == 0)
			between();
	}
}

/* Writes v0, v1 (columns col, col + 1 of one row of C) through the
 * epilogue, as one 8-byte store where both are inside and aligned. */
static __device__ __forceinline__ void store_pair(float *crow,
	const float *bias, long long col, long long N, float v0, float v1)
{
	if (col + 1 < N && (N & 1) == 0) {
		float2 o = make_float2(finish(v0, bias, col), finish(v1, bias, col + 1));
		*(float2 *)(crow + col) = o;
	} else {
		if (col < N)
			crow[col] = finish(v0, bias, col);
		if (col + 1 < N)
			crow[col + 1] = finish(v1, bias, col + 1);
	}
}

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
static __device__ __forceinline__ void stage_compute(const float *sa,
	const float *sb, tile_acc &acc, int wm0, int wn0, int lane, F between)
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

/* Writes this warp's part of the block's tile of C. Accumulator e of m16n8
 * tile (i, j) is its row g + 8 * (e / 2), column 2 * t + e % 2. */
static __device__ __forceinline__ void acc_store(const tile_acc &acc,
	float *C, const float *bias, long long M, long long N, long long m0,
	long long n0, int wm0, int wn0, int lane)
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
				store_pair(C + row * N, bias, n0 + wn0 + j * 8 + 2 * t, N,
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

/* Writes this lane's part of the block's tile of C. */
static __device__ __forceinline__ void acc_store(const tile_acc &acc,
	float *C, const float *bias, long long M, long long N, long long m0,
	long long n0, int wm0, int wn0, int lane)
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
				C[row * N + col] = finish(acc.v[i][c], bias, col);
		}
	}
}
#endif

/* C = epilogue(A @ op(B) + bias) for batch blockIdx.y, tile blockIdx.x
 * (tile_origin), THREADS threads, STAGES stage buffers of dynamic shared
 * memory. */
extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_tiled(float *__restrict__ C, long long M, long long N, long long K,
	const float *__restrict__ A, const float *__restrict__ B BIAS_PARAM)
{
	extern __shared__ float4 smem4[];
	float *sa = (float *)smem4, *sb = sa + STAGES * A_TILE;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int wm0 = warp / WARPS_N * WARP_M, wn0 = warp % WARPS_N * WARP_N;
	const int ktiles = (int)CDIV(K, TILE_K);
	long long m0, n0, bz = blockIdx.y;
	tile_acc acc;
	stage_copy copy;
#if !HAS_BIAS
	const float *bias = 0;
#endif

	tile_origin(M, N, &m0, &n0);
	A += bz * M * K;
	B += BATCHED ? bz * N * K : 0;
	C += bz * M * N;
	const bool vec_a = (K & 3) == 0 && ((unsigned long long)A & 15) == 0;
	const bool vec_b = ((B_NK ? K : N) & 3) == 0 &&
		((unsigned long long)B & 15) == 0;

	acc_zero(acc);
	copy.init(A, B, N, K, m0, n0, tid);
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < ktiles)
			copy.issue_next(sa + s * A_TILE, sb + s * B_TILE, A, B, M, N, K,
				vec_a, vec_b);
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
		float *na = sa + wr * A_TILE, *nb = sb + wr * B_TILE;
		stage_compute(sa + rd * A_TILE, sb + rd * B_TILE, acc, wm0, wn0, lane,
			[&]() {
				if (more)
					copy.issue_next(na, nb, A, B, M, N, K, vec_a, vec_b);
				cp_async_commit();
			});
		wr = wr + 1 == STAGES ? 0 : wr + 1;
		rd = rd + 1 == STAGES ? 0 : rd + 1;
	}
	cp_async_wait<0>();
	acc_store(acc, C, bias, M, N, m0, n0, wm0, wn0, lane);
}
