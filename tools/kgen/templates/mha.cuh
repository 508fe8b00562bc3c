/* mha.cuh: the mha family's choices for the gemm family's warpgroup
 * kernels (gemm_wg.cu), in place of gemm_spec.cuh: its two projections
 * are F.linear's, x W^T + b, row-major, no epilogue. mha.cu says how the
 * family works. */

#define VARIANT_wg 1
#define HAS_BIAS 1
#define BATCHED 0
#define TRIL 0
#define TRIU 0
#define A_T 0
#define B_LAYOUT_nk 1

static __device__ __forceinline__ float gemm_epilogue(float v)
{
	return v;
}

/* attention.cu's attn_flash by the spec's act: relu(scale S) V, or the
 * softmax's */
#define MHA_ACT_{{act}} 1
#ifdef MHA_ACT_relu
#define FA_RELU 1
#endif

/* x's layout (the spec's, mha.cu's mha_strides): only norm_flash reads
 * x through mha_gather and writes the output through mha_norm; the other
 * variants take x and write y as batch x seq x embd, row-major */
#define MHA_LAYOUT_{{layout}} 1
#define MHA_VARIANT_{{variant}} 1
#if !defined(MHA_LAYOUT_bsc) && !defined(MHA_VARIANT_norm_flash)
#error "mha: only variant norm_flash reads x laid out other than batch x seq x embd (spec.layout bsc)"
#endif
