/* mha.cu: the mha family's own kernels (docs/templates.md), variants wg,
 * heads, flash and heads_flash.
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
