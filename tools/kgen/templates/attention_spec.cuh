/* attention_spec.cuh: the attention task's spec as the macros its
 * kernels read (attention.cu's and attention_small.cu's, and the mha
 * family's, whose spec has the same three members): the causal mask and
 * the scores' scale. */

#define CAUSAL ({{causal}})
/* the scale: a constant, times 1 / sqrt(head_dim) when scale_root */
#define SM_SCALE ((float)({{scale}}))
#define SCALE_ROOT ({{scale_root}})
#define ATT_NEG_INF __int_as_float(0xff800000)

/* The scores' scale: the spec's constant, over the root of the head
 * dimension d when SCALE_ROOT. */
static __device__ __forceinline__ float attn_scale(long long d)
{
	return SM_SCALE * (SCALE_ROOT ? 1.0f / sqrtf((float)d) : 1.0f);
}
