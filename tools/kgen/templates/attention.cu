/* attention.cu: the attention family's kernels (docs/templates.md),
 * variants wg and flash (attn_flash, at the end of the file, which the
 * mha family's flash variants use too). O[b] = softmax(scale Q[b] K[b]^T,
 * masked) V[b] for each of
 * the batch's matrices: Q q_len x head_dim, K kv_len x head_dim, V kv_len
 * x v_dim, O q_len x v_dim, all row-major; causal masks key j from query i
 * where j > i (PyTorch's is_causal, the mask's diagonal at the top left).
 * fp32-accurate: both products in 3xFP16 split precision on warpgroup
 * MMA, through the gemm family's wg machinery (wg.cuh; gemm_wg.cu's top
 * says how it works and how accurate it is).
 *
 * In wg the scores are written out, not kept on chip as flash does:
 * a flash kernel holds a block's rows of O in registers across the whole
 * pass over the keys, and a warpgroup's registers hold 64 rows of at most
 * 256 columns, so a head dimension past that makes it compute the scores
 * once per slice of O (KernelBench's 1024: four times, 2.5 times the
 * work). Here the scores are half the size of Q, so writing and reading
 * them costs less than the passes over Q, K and V.
 *
 * attn_absmax finds the largest magnitudes of Q and K (scale slots 0 and
 * 1 of att_sqk) and of V (slot 0 of att_spv). attn_split writes each
 * operand scaled and split into wgmma's tiled planes: Q as A and K as B of
 * the scores' product, V (stored k x n) transposed as B of the output's.
 * Each is one launch over the three operands (a row of blocks each), so a
 * small problem waits on five launches, not eight.
 * attn_product then computes S = Q K^T into att_s (rows padded to a
 * multiple of 8); attn_softmax turns each row of S into probabilities,
 * scaled by 2^13, written straight into the A planes of the output's
 * product (att_p; slot 1 of att_spv says 13); attn_product again makes O
 * = P V. Causal: the scores' product skips tiles above the diagonal
 * (attn_softmax reads none of their values) and the output's stops at the
 * last k-tile a block's rows attend to. */

/* CAUSAL, SM_SCALE, SCALE_ROOT and attn_scale: attention_spec.cuh */
#define P_EXP 13 /* P's scale exponent: 2^13 P is at most 8192, in fp16's range */

/* Grid (G, 3), 256 threads: block (b, o) writes the largest finite
 * magnitude of its share of Q (o 0, nq values), K (1) or V (2) to the
 * partial maxima of scale slot 0 and 1 of sqk, and slot 0 of spv. */
extern "C" __global__ void __launch_bounds__(256)
attn_absmax(const float *__restrict__ q, long long nq, const float *__restrict__ k,
	long long nk, const float *__restrict__ v, long long nv, int *__restrict__ sqk,
	int *__restrict__ spv)
{
	const int o = blockIdx.y;
	const float m = h3_block_max(h3_absmax_part(o == 0 ? q : o == 1 ? k : v,
		o == 0 ? nq : o == 1 ? nk : nv));

	if (threadIdx.x == 0)
		reinterpret_cast<float *>(o == 2 ? spv : sqk)[2 + (o & 1) * gridDim.x + blockIdx.x] = m;
}

/* Grid (G, 3) as attn_absmax's, 256 threads: block row o splits Q (o 0,
 * rows q_len), K (1, rows kv_len) or V (2, kv_len x v_dim, keys by columns
 * of O, transposed), mats matrices each, into the tiled planes at wq, wk
 * or wv, with its scale from slot 0 or 1 of sqk or slot 0 of spv; K in
 * tiles of ktr keys (wg's TILE_N, flash's FA_KV). */
extern "C" __global__ void __launch_bounds__(256)
attn_split(const float *__restrict__ q, const float *__restrict__ k,
	const float *__restrict__ v, long long mats, long long q_len, long long kv_len,
	long long head_dim, long long v_dim, unsigned short *__restrict__ wq,
	unsigned short *__restrict__ wk, unsigned short *__restrict__ wv,
	int *__restrict__ sqk, int *__restrict__ spv, int ktr)
{
	if (blockIdx.y == 0)
		wg_split(q, mats, q_len, head_dim, wq, sqk, 0, TILE_M, false);
	else if (blockIdx.y == 1)
		wg_split(k, mats, kv_len, head_dim, wk, sqk, 1, ktr, false);
	else
		wg_split(v, mats, v_dim, kv_len, wv, spv, 0, TILE_N, true);
}

/* C = A @ B^T from the tiled planes of A (wa) and B (wb) and their scale
 * exponents, for matrix blockIdx.y, tile blockIdx.x (tile_origin); C is
 * M x N, its rows ld apart, matrix z at (z / heads) M ld + (z % heads) N
 * (heads 1: one after another; more: the heads of a row side by side, as
 * mha.cu's output). scores: C is S (ld is CDIV(N, 8) * 8, and the
 * padding is written too), and causal tiles wholly above the diagonal
 * are skipped; else C is O and a causal block stops at the k-tile of its
 * last row. */
extern "C" __global__ void __launch_bounds__(THREADS, 1)
attn_product(float *__restrict__ C, long long M, long long N, long long K,
	const unsigned short *__restrict__ wa, const unsigned short *__restrict__ wb,
	const int *__restrict__ scale, int scores, long long heads, long long ld)
{
	const long long bz = blockIdx.y, cw = scores ? ld : N;
	int ktiles = (int)CDIV(K, WG_K);
	long long m0, n0;
	float acc[NACC];

	tile_origin(M, N, TILE_M, TILE_N, &m0, &n0);
	if (CAUSAL && scores && n0 > m0 + TILE_M - 1)
		return;
	const unsigned char *ga = reinterpret_cast<const unsigned char *>(wa) +
		(bz * CDIV(M, TILE_M) + m0 / TILE_M) * ktiles * (long long)A_BYTES;
	const unsigned char *gb = reinterpret_cast<const unsigned char *>(wb) +
		(bz * CDIV(N, TILE_N) + n0 / TILE_N) * ktiles * (long long)B_BYTES;
	const int kt1 = CAUSAL && !scores ? (int)min((long long)ktiles,
		CDIV(m0 + TILE_M, WG_K)) : ktiles;
	if (!wg_mainloop(acc, ga, gb, 0, kt1))
		return;

	const int sh = -(scale[0] + scale[1]);

	int r, c;

	wg_origin(&r, &c);
	C += bz / heads * M * ld + bz % heads * N;
	const bool pairs = ((ld | (bz % heads * N)) & 1) == 0;
#pragma unroll
	for (int hh = 0; hh < 2; hh++) {
		const long long row = m0 + r + hh * 8;

		if (row >= M)
			continue;
		float *crow = C + row * ld;
#pragma unroll
		for (int j = 0; j < TILE_N / 8; j++) {
			const long long col = n0 + 8 * j + c;
			const float v0 = scalbnf(acc[4 * j + 2 * hh], sh);
			const float v1 = scalbnf(acc[4 * j + 2 * hh + 1], sh);

			if (col + 1 < cw && pairs) {
				*reinterpret_cast<float2 *>(crow + col) = make_float2(v0, v1);
			} else {
				if (col < cw)
					crow[col] = v0;
				if (col + 1 < cw)
					crow[col + 1] = v1;
			}
		}
	}
}

/* The 8 scores of chunk q of a row of S (s), times c, -inf from column
 * lim on. */
static __device__ __forceinline__ void attn_chunk(const float *s, long long q,
	long long lim, float c, float (&v)[8])
{
	const long long j0 = q * 8;

	if (j0 + 8 <= lim) {
		const float4 a = reinterpret_cast<const float4 *>(s + j0)[0];
		const float4 b = reinterpret_cast<const float4 *>(s + j0)[1];

		v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
		v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
	} else {
#pragma unroll
		for (int j = 0; j < 8; j++)
			v[j] = j0 + j < lim ? s[j0 + j] : ATT_NEG_INF;
	}
#pragma unroll
	for (int j = 0; j < 8; j++)
		v[j] *= c; /* -inf stays -inf: c > 0 */
}

/* A row of S as a warp walks it: matrix mat's row r, its scores at s,
 * the keys it sees (lim: from lim on masked, 0 for the rows that pad M to
 * whole tiles), this thread's lane, and where its chunks go in the A
 * planes of the output's product (tiles of TILE_M rows, ktiles of keys;
 * lg for wg_chunk). */
struct attn_row {
	const float *s;
	long long mat, r, lim, tiles, ktiles;
	int lane, lg;
};

/* f(row) for each row of S (mats matrices of M rows of N scores, rows
 * CDIV(N, 8) * 8 apart) and each padding row of the planes: a warp a
 * row, the grid's blocks of 256 threads striding over them. */
template <typename F>
static __device__ __forceinline__ void attn_each_row(const float *__restrict__ S,
	long long mats, long long M, long long N, F f)
{
	const long long ld = CDIV(N, 8) * 8, tiles = CDIV(M, TILE_M), rp = tiles * TILE_M;

	for (long long w = (long long)blockIdx.x * 8 + threadIdx.x / 32; w < mats * rp;
		w += (long long)gridDim.x * 8) {
		long long mat, r;

		h3_divmod(w, rp, &mat, &r);
		f(attn_row{ S + (mat * M + r) * ld, mat, r, r >= M ? 0 : CAUSAL ? min(N, r + 1) : N,
			tiles, CDIV(N, WG_K), (int)(threadIdx.x & 31), __ffs(TILE_M) - 1 });
	}
}

/* Writes row w into the A planes of the output's product at P
 * (attn_softmax's layout), each chunk of 8 scores times c through f(v)
 * and scaled by p1 p2; chunks past the keys zeros. */
template <typename F>
static __device__ __forceinline__ void attn_put_row(unsigned short *__restrict__ P,
	const attn_row &w, float c, float p1, float p2, F f)
{
	const float zero[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
	const long long lim = w.lim;
	float v[8];

	for (long long q = w.lane; q < w.ktiles * 8; q += 32) {
		unsigned short *dst = wg_chunk(P, w.mat, w.r, q, w.tiles, w.ktiles, TILE_M, w.lg);

		if (q * 8 >= lim) {
			wg_put(dst, TILE_M * WG_K, zero, 1.0f, 1.0f);
			continue;
		}
		attn_chunk(w.s, q, lim, c, v);
		f(v);
		wg_put(dst, TILE_M * WG_K, v, p1, p2);
	}
}

/* attn_softmax's probabilities of a chunk: 2^(v - m) / l, times 2^P_EXP
 * (inv). */
struct attn_prob {
	float m, inv;

	__device__ void operator()(float (&v)[8]) const
	{
#pragma unroll
		for (int j = 0; j < 8; j++)
			v[j] = exp2f(v[j] - m) * inv;
	}
};

/* A grid of 256 threads, a warp a row: each row of S (mats matrices of M
 * rows, N scores each; head dimension d) as the probabilities softmax(scale s) (those the
 * causal mask removes 0) times 2^P_EXP, written into the A planes of the
 * output's product at P (tiles of TILE_M rows by 64 keys; rows past M and
 * keys past N zeros), and P_EXP to scale[1]. The row's maximum and sum of
 * exponentials come from one pass (each lane's running pair, merged
 * across the warp), the probabilities from a second, which finds the row
 * in L1 or L2. */
static __device__ __forceinline__ void attn_softmax_rows(unsigned short *__restrict__ P,
	const float *__restrict__ S, int *__restrict__ scale, long long mats, long long M,
	long long N, long long d)
{
	const float c = attn_scale(d) * 1.4426950408889634f; /* in powers of 2 */

	if (blockIdx.x == 0 && threadIdx.x == 0)
		scale[1] = P_EXP;
	attn_each_row(S, mats, M, N, [&](const attn_row &w) {
		float m = ATT_NEG_INF, l = 0.0f, v[8];

		for (long long q = w.lane; q * 8 < w.lim; q += 32) {
			float mx = m;

			attn_chunk(w.s, q, w.lim, c, v);
#pragma unroll
			for (int j = 0; j < 8; j++)
				mx = fmaxf(mx, v[j]);
			l *= exp2f(m - mx); /* m -inf: l is 0 */
			m = mx;
#pragma unroll
			for (int j = 0; j < 8; j++)
				l += exp2f(v[j] - m);
		}
#pragma unroll
		for (int o = 16; o > 0; o >>= 1) {
			const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
			const float l2 = __shfl_xor_sync(0xffffffffu, l, o);
			const float mx = fmaxf(m, m2);

			/* a lane that saw no score has m -inf and l 0 */
			l = (m == ATT_NEG_INF ? 0.0f : l * exp2f(m - mx)) +
				(m2 == ATT_NEG_INF ? 0.0f : l2 * exp2f(m2 - mx));
			m = mx;
		}
		const attn_prob prob = { m, w.lim ? __int_as_float((127 + P_EXP) << 23) / l : 0.0f };

		attn_put_row(P, w, c, 1.0f, 1.0f, prob);
	});
}

extern "C" __global__ void __launch_bounds__(256)
attn_softmax(unsigned short *__restrict__ P, const float *__restrict__ S,
	int *__restrict__ scale, long long mats, long long M, long long N,
	long long d)
{
	attn_softmax_rows(P, S, scale, mats, M, N, d);
}

/* relu(v), NaN kept (as PyTorch's): the masked keys' -inf become 0. */
struct attn_relu_op {
	__device__ void operator()(float (&v)[8]) const
	{
#pragma unroll
		for (int j = 0; j < 8; j++)
			v[j] = v[j] < 0.0f ? 0.0f : v[j];
	}
};

/* ---- flash (variant flash): the scores kept on chip ----
 *
 * attn_flash computes a block's TILE_M rows of O in one pass over the
 * keys, FA_KV at a step, as flash attention does: a consumer warpgroup's
 * 64 rows of S = Q K^T for the step (3xFP16, both operands' planes in
 * shared memory), scaled, masked and exponentiated against the rows'
 * running maximum (O and the running sum rescaled where it grows), the
 * probabilities times 2^P_EXP split into fp16 hi and lo pieces in the
 * registers that held S (wgmma's A operand from registers: the
 * accumulators of two columns of 8 are an A fragment's k of 16, as for
 * mma.sync), and O += P V in 3xFP16 against V's planes, each step's
 * product summed apart and joined to O in fp32. The producer
 * warpgroup's first thread brings the block's Q planes once and each
 * step's K planes (tiles of FA_KV keys, every k-tile of the head
 * dimension) and V planes (the step's keys as one k-tile of the output's
 * product, all of O's TILE_N columns) into a ring of FSTAGES stages. Neither the scores nor the
 * probabilities leave the multiprocessor: the passes are Q, K and V's
 * scale and split and O's one write. O's columns are one tile (v_dim at
 * most TILE_N) and the S accumulators a step are 32, so a consumer thread
 * holds TILE_N / 2 + 32 accumulators and 32 registers of pieces. */

#ifndef FA_RELU
#define FA_RELU 0 /* relu(scale S) V, unnormalised, for mha's act relu (mha.cuh) */
#endif
#ifndef FSTAGES
#define FSTAGES STAGES /* attn_flash's ring: mha's FSTAGES, apart from its products' STAGES */
#endif
#define FA_KV 64                             /* keys a step */
#define FA_K_BYTES (2 * FA_KV * WG_K * 2)    /* a step's K planes, a k-tile of the head dimension */
/* The block: WGS consumer warpgroups and a producer warpgroup, whose
 * first thread issues the bulk copies; the producer gives its registers
 * back (FA_PREG) and the consumers take them (FA_CREG: at WGS 2 and
 * TILE_N 128, 168 each spilled 192 bytes) */
#define FA_THREADS (128 * WGS + 128)
#define FA_PREG 24
#define FA_CREG (WGS == 1 ? 240 : 232)
#define FA_HK 2 /* k-tiles of the head dimension at most (128): the scores' loop unrolled */

/* 64 x 64 (+)= A B^T, A 64 x 16 and B 64 x 16 k-major in shared memory:
 * the scores of a step (32 accumulators, wg_mma's layout at TILE_N 64). */
static __device__ __forceinline__ void fa_mma_s(float (&d)[32],
	unsigned long long a, unsigned long long b, int acc)
{
	asm volatile("{\n\t.reg .pred p;\n\t"
		"setp.ne.b32 p, %34, 0;\n\t"
		"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
		"{" WG_R0 "}, %32, %33, p, 1, 1, 0, 0;\n\t}"
		: WG_O0 : "l"(a), "l"(b), "r"(acc));
}

/* part (+)= P V for a 64 x 16 P in registers (a: an A fragment, 8 fp16
 * as mma.sync's m16n8k16 A, warp w of the warpgroup at rows 16 w) and 64
 * columns of V, 64 x 16 k-major in shared memory (descriptor b); part is
 * overwritten when acc is 0. */
static __device__ __forceinline__ void fa_mma_o(float (&d)[32],
	const unsigned (&a)[4], unsigned long long b, int acc)
{
	asm volatile("{\n\t.reg .pred p;\n\t"
		"setp.ne.b32 p, %37, 0;\n\t"
		"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
		"{" WG_R0 "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n\t}"
		: WG_O0 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(acc));
}

/* Two fp16 (a lower k, b the next) as one register of an A fragment. */
static __device__ __forceinline__ unsigned fa_pack(unsigned short a, unsigned short b)
{
	return a | (unsigned)b << 16;
}

/* O = softmax(scale Q K^T, masked) V for block row blockIdx.x of matrix
 * blockIdx.y, from the tiled planes of Q (wq: tiles of TILE_M rows), K
 * (wk: tiles of FA_KV keys) and V (wv: one tile of TILE_N columns,
 * k-tiles of keys) and their scale exponents (sqk slots 0 and 1, spv slot
 * 0); M queries, N keys, d the head dimension, dv the values'. O's rows
 * are ld apart, matrix z at (z / heads) M ld + (z % heads) dv (as
 * attn_product's). */
extern "C" __global__ void __launch_bounds__(FA_THREADS, 1)
attn_flash(float *__restrict__ O, long long M, long long N, long long d, long long dv,
	const unsigned short *__restrict__ wq, const unsigned short *__restrict__ wk,
	const unsigned short *__restrict__ wv, const int *__restrict__ sqk,
	const int *__restrict__ spv, long long heads, long long ld)
{
	extern __shared__ __align__(1024) unsigned char fa_smem[];
	__shared__ __align__(8) unsigned long long qbar, full[FSTAGES], empty[FSTAGES];
	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = warp / 4;
	const long long bz = blockIdx.y, m0 = (long long)blockIdx.x * TILE_M;
	const int hk = (int)CDIV(d, WG_K), kvt = (int)CDIV(N, FA_KV);
	/* a causal block's last step holds its last row's key */
	const int steps = CAUSAL ? (int)min((long long)kvt, CDIV(m0 + TILE_M, FA_KV)) : kvt;
	const int nst = min(FSTAGES, steps);
	const unsigned sbytes = hk * FA_K_BYTES + B_BYTES;
	const unsigned qs = (smem_addr(fa_smem) + 1023) & ~1023u, ring = qs + hk * A_BYTES;
	const unsigned qb = smem_addr(&qbar), fb = smem_addr(full), eb = smem_addr(empty);

	if (tid == 0) {
		bar_init(qb, 1);
		for (int s = 0; s < nst; s++) {
			bar_init(fb + 8 * s, 1);
			bar_init(eb + 8 * s, 4 * WGS);
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	if (warp >= 4 * WGS) {
		/* the producer warpgroup: its first thread issues the copies */
		asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(FA_PREG) : "memory");
		if (warp > 4 * WGS || lane != 0)
			return;
		const unsigned char *gq = reinterpret_cast<const unsigned char *>(wq) +
			(bz * CDIV(M, TILE_M) + blockIdx.x) * hk * (long long)A_BYTES;
		const unsigned char *gk = reinterpret_cast<const unsigned char *>(wk) +
			bz * kvt * hk * (long long)FA_K_BYTES;
		const unsigned char *gv = reinterpret_cast<const unsigned char *>(wv) +
			bz * kvt * (long long)B_BYTES;

		bar_expect(qb, hk * A_BYTES);
		for (int kt = 0; kt < hk; kt++)
			bulk_load(qs + kt * A_BYTES, gq + (long long)kt * A_BYTES, A_BYTES, qb);
		for (int t = 0, s = 0, ph = 0; t < steps; t++) {
			const unsigned st = ring + s * sbytes, bar = fb + 8 * s;

			if (t >= nst)
				bar_wait(eb + 8 * s, ph ^ 1);
			bar_expect(bar, sbytes);
			bulk_load(st, gk + (long long)t * hk * FA_K_BYTES, hk * FA_K_BYTES, bar);
			bulk_load(st + hk * FA_K_BYTES, gv + (long long)t * B_BYTES, B_BYTES, bar);
			if (++s == nst)
				s = 0, ph ^= 1;
		}
		return;
	}

	/* a consumer warpgroup: rows 64 g of the block; this thread's rows r
	 * and r + 8, its columns of a step c + 8 j and c + 8 j + 1 */
	int r, c;

	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(FA_CREG) : "memory");
	wg_origin(&r, &c);
	const long long row0 = m0 + r;
	/* the scores in powers of two, the planes' scales taken out */
#if FA_RELU
	/* relu's values are unbounded: times 2^E for mha_relu's bound of
	 * them, under 2^14 (mha.cu) */
	const float sc = scalbnf(attn_scale(d), -(sqk[0] + sqk[1]));
	const int E = min(max(13 - ilogbf(attn_scale(d) * (float)d) - 28 + 2 * sqk[0], -100), 200);
#else
	const float sc = scalbnf(attn_scale(d) * 1.4426950408889634f, -(sqk[0] + sqk[1]));
	const int E = P_EXP;
#endif
	float o[NACC], m[2] = {ATT_NEG_INF, ATT_NEG_INF}, l[2] = {0.0f, 0.0f}, pe1, pe2;

	h3_factors(E, &pe1, &pe2);

#pragma unroll
	for (int i = 0; i < NACC; i++)
		o[i] = 0.0f;
	bar_wait(qb, 0);
	for (int t = 0, s = 0, ph = 0; t < steps; t++) {
		const unsigned st = ring + s * sbytes;
		float sv[32];

		bar_wait(fb + 8 * s, ph);
		/* defined here, so that they are not live across the step */
#pragma unroll
		for (int i = 0; i < 32; i++)
			sv[i] = 0.0f;
		wg_hold(sv);
		/* Q's address anew each step, so that its descriptors are not
		 * kept in registers across the loop */
		unsigned qa;

		asm volatile("mov.b32 %0, %1;" : "=r"(qa) : "r"(qs));
		wg_fence();
#pragma unroll
		for (int kt = 0; kt < FA_HK; kt++) {
			if (kt >= hk)
				break;
#pragma unroll
			for (int kk = 0; kk < WG_K / 16; kk++) {
				/* the planes' zeros past the head dimension: not multiplied */
				if (kk > 0 && kt * WG_K + kk * 16 >= d)
					break;
				const unsigned a0 = qa + kt * A_BYTES + g * 64 * 128 + kk * 32;
				const unsigned b0 = st + kt * FA_K_BYTES + kk * 32;
				const unsigned long long ah = wg_desc(a0), al = wg_desc(a0 + TILE_M * 128);
				const unsigned long long bh = wg_desc(b0), bl = wg_desc(b0 + FA_KV * 128);

				fa_mma_s(sv, al, bh, kt > 0 || kk > 0);
				fa_mma_s(sv, ah, bl, 1);
				fa_mma_s(sv, ah, bh, 1);
			}
		}
		wg_commit();
		wg_wait<0>(sv);

		/* scale and mask; each row's maximum over the step (the quad of
		 * lanes that holds a row shares it) */
		float mx[2] = {ATT_NEG_INF, ATT_NEG_INF}, x[32];
		/* the step's keys: a column at or past kn is past the last key,
		 * one past lq[h] after the query of row r + 8 h */
		const long long k0 = (long long)t * FA_KV;
		const int kn = (int)min((long long)FA_KV, N - k0);
		const int lq[2] = {(int)max(-1LL, min(row0 - k0, (long long)FA_KV)),
			(int)max(-1LL, min(row0 + 8 - k0, (long long)FA_KV))};
#pragma unroll
		for (int j = 0; j < 8; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int col = 8 * j + c + (e & 1);
				float v = sv[4 * j + e] * sc;

				if (col >= kn || (CAUSAL && col > lq[e >> 1]))
					v = ATT_NEG_INF;
				x[4 * j + e] = v;
				mx[e >> 1] = fmaxf(mx[e >> 1], v);
			}
		float corr[2] = {1.0f, 1.0f};
#pragma unroll
		for (int h = 0; h < 2 && !FA_RELU; h++) {
			mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
			mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
			const float mn = fmaxf(m[h], mx[h]);

			/* a row that has seen only masked keys keeps m -inf, l 0, O 0 */
			corr[h] = mn == ATT_NEG_INF ? 1.0f : exp2f(m[h] - mn);
			m[h] = mn;
			l[h] *= corr[h];
		}

		/* the probabilities, times 2^P_EXP, as A fragments of fp16 pieces */
		unsigned ph_[4][4], pl_[4][4];
#pragma unroll
		for (int cc = 0; cc < 4; cc++)
#pragma unroll
			for (int u = 0; u < 4; u++) {
				unsigned short hi[2], lo[2];

#pragma unroll
				for (int b = 0; b < 2; b++) {
					const int i = 8 * cc + 2 * u + b, h = (i >> 1) & 1;
#if FA_RELU
					/* relu, NaN kept as PyTorch's; the masked keys' -inf 0 */
					const float p = x[i] < 0.0f ? 0.0f : x[i];
#else
					const float p = m[h] == ATT_NEG_INF ? 0.0f : exp2f(x[i] - m[h]);

					l[h] += p;
#endif
					h3_pieces(p * pe1 * pe2, &hi[b], &lo[b]);
				}
				ph_[cc][u] = fa_pack(hi[0], hi[1]);
				pl_[cc][u] = fa_pack(lo[0], lo[1]);
			}

		/* O = corr O + P V, 64 of O's columns at a time: the step's keys
		 * are one k-tile of V's planes; its product is summed apart, in
		 * fresh accumulators, and joins O in fp32 (wgmma's accumulation
		 * over every step measured 20 times the error of the split) */
#pragma unroll
		for (int h = 0; h < TILE_N / 64; h++) {
			float part[32];

			if (h > 0 && h * 64 >= dv)
				break; /* V's zero columns past its last */

#pragma unroll
			for (int i = 0; i < 32; i++)
				part[i] = 0.0f;
			wg_hold(part);
			wg_fence();
#pragma unroll
			for (int cc = 0; cc < 4; cc++) {
				const unsigned b0 = st + hk * FA_K_BYTES + h * 64 * 128 + cc * 32;
				const unsigned long long bh = wg_desc(b0), bl = wg_desc(b0 + TILE_N * 128);

				fa_mma_o(part, pl_[cc], bh, cc > 0);
				fa_mma_o(part, ph_[cc], bl, 1);
				fa_mma_o(part, ph_[cc], bh, 1);
			}
			wg_commit();
			wg_wait<0>(part);
#pragma unroll
			for (int i = 0; i < 32; i++)
				o[32 * h + i] = fmaf(o[32 * h + i], corr[(i >> 1) & 1], part[i]);
		}
		__syncwarp();
		if (lane == 0)
			bar_arrive(eb + 8 * s);
		if (++s == nst)
			s = 0, ph ^= 1;
	}

	/* each row's sum over its quad (softmax); O out of the planes' and
	 * the probabilities' scales */
	const int sh = -(E + spv[0]);

	O += bz / heads * M * ld + bz % heads * dv;
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const long long row = row0 + 8 * h;
		float sum = l[h];

		sum += __shfl_xor_sync(0xffffffffu, sum, 1);
		sum += __shfl_xor_sync(0xffffffffu, sum, 2);
		if (row >= M)
			continue;
		const float inv = FA_RELU ? 1.0f : 1.0f / sum;
		float *orow = O + row * ld;
#pragma unroll
		for (int j = 0; j < TILE_N / 8; j++) {
			const long long col = 8 * j + c;

			if (col < dv)
				orow[col] = scalbnf(o[4 * j + 2 * h] * inv, sh);
			if (col + 1 < dv)
				orow[col + 1] = scalbnf(o[4 * j + 2 * h + 1] * inv, sh);
		}
	}
}
