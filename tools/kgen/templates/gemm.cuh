/* gemm.cuh: what the gemm family's kernels share (gemm_tiled.cu and
 * gemm_wg.cu come after it): the task's spec as macros, the epilogue, the
 * order in which blocks take the tiles of C, and the store of a result. */

#define VARIANT_{{variant}} 1
#define HAS_BIAS ({{bias}})
#define BATCHED ({{batched}})
/* The kernel takes the task's inputs last, in its order (x, W and, with
 * bias, b), so that the launch plan can pass them all as one list. */
#if HAS_BIAS
#define BIAS_PARAM , const float *__restrict__ bias
#else
#define BIAS_PARAM
#endif
/* A stored K x M (A.T @ B): only variants wg and wgk take it. */
#define A_T ({{a_transposed}})
#define B_LAYOUT_{{b_layout}} 1
#if defined(B_LAYOUT_nk)
#define B_NK 1
#elif defined(B_LAYOUT_kn)
#define B_NK 0
#else
#error "gemm.cuh: b_layout must be kn or nk"
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

/* The origin (m0, n0) of this block's tile of C, tiles tm x tn: blocks
 * are numbered along n within groups of GROUP_M tile rows. */
static __device__ __forceinline__ void tile_origin(long long M, long long N,
	int tm, int tn, long long *m0, long long *n0)
{
	long long tiles_m = CDIV(M, tm), tiles_n = CDIV(N, tn);
	long long pid = blockIdx.x, in_group = GROUP_M * tiles_n;
	long long first = pid / in_group * GROUP_M;
	long long rows = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
	long long r = pid % in_group;

	*m0 = (first + r % rows) * tm;
	*n0 = r / rows * tn;
}

/* v (times 2^sh) plus the bias of column col, through the epilogue. */
static __device__ __forceinline__ float finish(float v, int sh,
	const float *bias, long long col)
{
	if (sh)
		v = scalbnf(v, sh);
	if (HAS_BIAS)
		v += __ldg(bias + col);
	return gemm_epilogue(v);
}

/* Writes v0, v1 (columns col, col + 1 of one row of C) through finish,
 * as one 8-byte store where both are inside and aligned. */
static __device__ __forceinline__ void store_pair(float *crow, int sh,
	const float *bias, long long col, long long N, float v0, float v1)
{
	if (col + 1 < N && (N & 1) == 0) {
		float2 o = make_float2(finish(v0, sh, bias, col),
			finish(v1, sh, bias, col + 1));
		*(float2 *)(crow + col) = o;
	} else {
		if (col < N)
			crow[col] = finish(v0, sh, bias, col);
		if (col + 1 < N)
			crow[col + 1] = finish(v1, sh, bias, col + 1);
	}
}
