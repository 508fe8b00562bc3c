/* gemm_spec.cuh: the gemm family's task spec as the macros its kernels
 * read (gemm.cuh comes after it, tiles.cuh before): which variant, the
 * bias, the layouts, the triangle and the epilogue. A family that
 * runs the gemm kernels on its own products (mha.cu) defines them
 * itself instead. */

#define VARIANT_{{variant}} 1
#define HAS_BIAS ({{bias}})
#define BATCHED ({{batched}})
/* C is tril(...): values above the diagonal (col > row) are 0, and tiles
 * wholly above it are not computed; triu(...) the same below it (col <
 * row). Only the warpgroup variants (wg, wgk, wgf) take them. */
#define TRIL ({{tril}})
#define TRIU ({{triu}})
/* A stored K x M (A.T @ B): only the warpgroup variants take it. */
#define A_T ({{a_transposed}})
#define B_LAYOUT_{{b_layout}} 1

/* The task's epilogue on v, the product plus bias. */
static __device__ __forceinline__ float gemm_epilogue(float v)
{
	return ({{epilogue}});
}

