/* attention.cu: the attention family's kernels (docs/templates.md),
 * variant wg. O[b] = softmax(scale Q[b] K[b]^T, masked) V[b] for each of
 * the batch's matrices: Q q_len x head_dim, K kv_len x head_dim, V kv_len
 * x v_dim, O q_len x v_dim, all row-major; causal masks key j from query i
 * where j > i (PyTorch's is_causal, the mask's diagonal at the top left).
 * fp32-accurate: both products in 3xFP16 split precision on warpgroup
 * MMA, through the gemm family's wg machinery (wg.cuh; gemm_wg.cu's top
 * says how it works and how accurate it is).
 *
 * The scores are written out, not kept on chip as flash attention does:
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

#define CAUSAL ({{causal}})
/* the scale: a constant, times 1 / sqrt(head_dim) when scale_root */
#define SM_SCALE ((float)({{scale}}))
#define SCALE_ROOT ({{scale_root}})
#define P_EXP 13 /* P's scale exponent: 2^13 P is at most 8192, in fp16's range */
#define ATT_NEG_INF __int_as_float(0xff800000)

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
 * or wv, with its scale from slot 0 or 1 of sqk or slot 0 of spv. */
extern "C" __global__ void __launch_bounds__(256)
attn_split(const float *__restrict__ q, const float *__restrict__ k,
	const float *__restrict__ v, long long mats, long long q_len, long long kv_len,
	long long head_dim, long long v_dim, unsigned short *__restrict__ wq,
	unsigned short *__restrict__ wk, unsigned short *__restrict__ wv,
	int *__restrict__ sqk, int *__restrict__ spv)
{
	if (blockIdx.y == 0)
		wg_split(q, mats, q_len, head_dim, wq, sqk, 0, TILE_M, false);
	else if (blockIdx.y == 1)
		wg_split(k, mats, kv_len, head_dim, wk, sqk, 1, TILE_N, false);
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

/* The scores' scale: the spec's constant, over the root of the head
 * dimension d when SCALE_ROOT. */
static __device__ __forceinline__ float attn_scale(long long d)
{
	return SM_SCALE * (SCALE_ROOT ? 1.0f / sqrtf((float)d) : 1.0f);
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
