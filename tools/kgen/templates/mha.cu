/* mha.cu: the mha family's own kernels (docs/templates.md), variants wg,
 * heads, flash, heads_flash and norm_flash (at the end of the file).
 * Multi-head self-attention as minGPT writes it: x (batch x seq x embd,
 * embd = heads x head_dim) through one linear to Q, K and V side by side
 * (qkv, seq rows of 3 embd a matrix of the batch), each head's
 * softmax(scale Q K^T, causal or not) V, the heads' outputs side by side
 * again (y, batch x seq x embd) and through a second linear to the
 * output (variant wg); or, as minGPT's ReLU attention, relu in place of
 * the softmax (mha_relu, below) and y the output (variant heads, the
 * plan's first ten launches). fp32-accurate throughout: both linears are the gemm family's
 * wg kernels (gemm_wg.cu, with mha.cuh's choices), the attention the
 * attention family's (attention.cu), all in 3xFP16 split precision on
 * warpgroup MMA. Variants flash and heads_flash put attention.cu's
 * attn_flash between the linears in place of the two products and the
 * softmax or relu (the scores never written; mha.cuh picks relu's).
 *
 * The heads are never copied out: mha_split reads each head's Q, K and V
 * where the first linear wrote them, as strided views of qkv (wg.cuh's
 * wg_view: matrix b heads + h at b seq 3 embd + h head_dim, rows 3 embd
 * apart), into the tiled planes of the attention's products, and the
 * output's product writes each head's rows into its columns of y
 * (attn_product's heads). So the block costs the two linears, one pass
 * over qkv for its largest magnitude (mha_absmax: Q, K and V share one
 * scale; they come out of one product), the split, and the attention's
 * scores, written and read once. */

/* Grid (G), 256 threads: the largest finite magnitude of block b's share
 * of qkv (n values) as the partial maximum b of scale slot 0 and 1 of sqk
 * (Q, K) and slot 0 of spv (V), attn_absmax's layout. */
extern "C" __global__ void __launch_bounds__(256)
mha_absmax(const float *__restrict__ qkv, long long n, int *__restrict__ sqk,
	int *__restrict__ spv)
{
	const float m = h3_block_max(h3_absmax_part(qkv, n));

	if (threadIdx.x == 0) {
		float *const q = reinterpret_cast<float *>(sqk) + 2;

		q[blockIdx.x] = m;
		q[gridDim.x + blockIdx.x] = m;
		reinterpret_cast<float *>(spv)[2 + blockIdx.x] = m;
	}
}

/* Grid (G, 3) as mha_absmax's, 256 threads: block row o splits the heads'
 * Q (o 0), K (1) or V (2, transposed: keys by columns of O) out of qkv
 * (batch matrices of seq rows of 3 heads head_dim), batch heads matrices
 * each, into the planes wq, wk and wv as attn_split does (K in tiles of
 * ktr keys: TILE_N for attn_product, FA_KV for attn_flash). */
extern "C" __global__ void __launch_bounds__(256)
mha_split(const float *__restrict__ qkv, long long batch, long long seq,
	long long heads, long long head_dim, unsigned short *__restrict__ wq,
	unsigned short *__restrict__ wk, unsigned short *__restrict__ wv,
	int *__restrict__ sqk, int *__restrict__ spv, int ktr)
{
	const long long embd = heads * head_dim, mats = batch * heads;
	const wg_view w = { heads, seq * 3 * embd, head_dim, 3 * embd };

	if (blockIdx.y == 0)
		wg_split_view(qkv, w, mats, seq, head_dim, wq, sqk, 0, TILE_M, false);
	else if (blockIdx.y == 1)
		wg_split_view(qkv + embd, w, mats, seq, head_dim, wk, sqk, 1, ktr, false);
	else
		wg_split_view(qkv + 2 * embd, w, mats, head_dim, seq, wv, spv, 0, TILE_N, true);
}

/* The attention's middle, by the spec's act (the plan launches
 * mha_{{act}}): mha_softmax is attn_softmax's; mha_relu writes relu(scale
 * s) in place of the probabilities (the masked keys 0), as minGPT's ReLU
 * attention computes them, in one pass over S (no sum). Those are
 * unbounded, so they are scaled by 2^E for a bound of them, c d m^2 (d
 * the head dimension, m the largest magnitude of Q and K, which share
 * mha_split's exponent e with V in scale[0]: m < 2^(14 - e)), E from
 * h3_exponent of the bound, kept in [-100, 200] so that its factors stay
 * normal; E to scale[1]. Same grid and arguments as attn_softmax. */
extern "C" __global__ void __launch_bounds__(256)
mha_softmax(unsigned short *__restrict__ P, const float *__restrict__ S,
	int *__restrict__ scale, long long mats, long long M, long long N,
	long long d)
{
	attn_softmax_rows(P, S, scale, mats, M, N, d);
}

extern "C" __global__ void __launch_bounds__(256)
mha_relu(unsigned short *__restrict__ P, const float *__restrict__ S,
	int *__restrict__ scale, long long mats, long long M, long long N,
	long long d)
{
	const float c = attn_scale(d);
	/* the bound is under 2^(ilogb(c d) + 1 + 28 - 2 e): times 2^E, under
	 * 2^14 (fp16's largest is 65504) */
	const int E = min(max(13 - ilogbf(c * (float)d) - 28 + 2 * scale[0], -100), 200);
	float p1, p2;

	h3_factors(E, &p1, &p2);
	if (blockIdx.x == 0 && threadIdx.x == 0)
		scale[1] = E;
	attn_each_row(S, mats, M, N, [&](const attn_row &w) {
		attn_put_row(P, w, c, p1, p2, attn_relu_op());
	});
}

/* Variant norm_flash, a block as nn.MultiheadAttention and a residual
 * LayerNorm compute it (KernelBench level 3's 31): x (the spec's layout,
 * below) gathered into rows of embd, batch-major (mha_gather), flash's
 * linears and attention over those rows, and LayerNorm(x + the
 * projection) over embd stored back in x's layout (mha_norm). A row's
 * place among the linears' rows does not change its values, so the
 * attention's batch of heads is the spec's batch whatever order x keeps
 * its rows in. */
struct mha_layout {
	long long b, t, c; /* the strides of x's batch, seq and embd axes */
};

/* bsc: batch x seq x embd (minGPT's); sbc: seq x batch x embd
 * (nn.MultiheadAttention's, batch_first off); bcs: batch x embd x seq (a
 * feature map's channels, its pixels the sequence). MHA_SEQ_UNIT: the
 * sequence is x's contiguous axis. */
static __device__ __forceinline__ mha_layout
mha_strides(long long B, long long T, long long C)
{
#if defined(MHA_LAYOUT_sbc)
	return { C, B * C, 1 };
#elif defined(MHA_LAYOUT_bcs)
	return { C * T, 1, T };
#else
	return { T * C, C, 1 };
#endif
}
#ifdef MHA_LAYOUT_bcs
#define MHA_SEQ_UNIT 1
#else
#define MHA_SEQ_UNIT 0
#endif

/* Grid (cdiv(T, 32) cdiv(C, 32), B), 256 threads: block (i, b) copies a
 * tile of 32 positions by 32 channels of matrix b of x into xr (B T rows
 * of C), through shared memory so that both sides are read and written
 * along their contiguous axes. */
extern "C" __global__ void __launch_bounds__(256)
mha_gather(const float *__restrict__ x, long long T, long long C,
	float *__restrict__ xr)
{
	__shared__ float tile[32][33];
	const mha_layout s = mha_strides(gridDim.y, T, C);
	const long long tiles_t = CDIV(T, 32), b = blockIdx.y;
	const long long t0 = 32 * (blockIdx.x % tiles_t), c0 = 32 * (blockIdx.x / tiles_t);
	const int lx = threadIdx.x % 32, ly = threadIdx.x / 32;

	for (int i = ly; i < 32; i += 8) {
		/* tile[t][c], read along the contiguous axis */
		const long long t = t0 + (MHA_SEQ_UNIT ? lx : i), c = c0 + (MHA_SEQ_UNIT ? i : lx);
		if (t < T && c < C)
			tile[t - t0][c - c0] = x[b * s.b + t * s.t + c * s.c];
	}
	__syncthreads();
	for (int i = ly; i < 32; i += 8) {
		const long long t = t0 + i, c = c0 + lx;
		if (t < T && c < C)
			xr[(b * T + t) * C + c] = tile[i][lx];
	}
}

/* Grid (cdiv(T, 32), B), 256 threads, 32 (C + 1) floats of dynamic shared
 * memory: block (i, b) takes rows b T + 32 i .. of the projection o (B T
 * rows of C, its bias added), adds x's values at them (the residual) and
 * normalises each row over its C values as nn.LayerNorm does (the biased
 * variance, (v - mean) / sqrt(var + eps) w + bias), storing the rows into
 * y in x's layout; reads and writes of x and y along their contiguous
 * axis. */
extern "C" __global__ void __launch_bounds__(256)
mha_norm(float *__restrict__ y, const float *__restrict__ o,
	const float *__restrict__ x, const float *__restrict__ w,
	const float *__restrict__ bias, long long T, long long C, float eps)
{
	extern __shared__ float v[]; /* 32 rows of C, C + 1 apart */
	const mha_layout s = mha_strides(gridDim.y, T, C);
	const long long b = blockIdx.y, t0 = 32LL * blockIdx.x;
	const int rows = (int)min(32LL, T - t0), ld = (int)C + 1, n = 32 * (int)C;
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const float *const ob = o + (b * T + t0) * C;
	const long long xb = b * s.b + t0 * s.t;

	for (int i = threadIdx.x; i < rows * (int)C; i += 256)
		v[i / (int)C * ld + i % (int)C] = ob[i];
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += 256) {
		const int r = MHA_SEQ_UNIT ? i % 32 : i / (int)C, c = MHA_SEQ_UNIT ? i / 32 : i % (int)C;
		if (r < rows)
			v[r * ld + c] += x[xb + r * s.t + c * s.c];
	}
	__syncthreads();
	for (int r = warp; r < rows; r += 8) {
		float *const row = v + r * ld;
		float sum = 0.0f, sq = 0.0f;

		for (int c = lane; c < (int)C; c += 32)
			sum += row[c];
		for (int m = 16; m > 0; m >>= 1)
			sum += __shfl_xor_sync(0xffffffffu, sum, m);
		const float mean = sum / (float)C;
		for (int c = lane; c < (int)C; c += 32)
			sq = fmaf(row[c] - mean, row[c] - mean, sq);
		for (int m = 16; m > 0; m >>= 1)
			sq += __shfl_xor_sync(0xffffffffu, sq, m);
		const float rstd = 1.0f / sqrtf(sq / (float)C + eps);
		for (int c = lane; c < (int)C; c += 32)
			row[c] = fmaf((row[c] - mean) * rstd, w[c], bias[c]);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += 256) {
		const int r = MHA_SEQ_UNIT ? i % 32 : i / (int)C, c = MHA_SEQ_UNIT ? i / 32 : i % (int)C;
		if (r < rows)
			y[xb + r * s.t + c * s.c] = v[r * ld + c];
	}
}
