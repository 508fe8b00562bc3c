/* gemm.cuh: what the gemm family's kernels share (gemm_tiled.cu and
 * gemm_wg.cu come after it, gemm_spec.cuh's macros before): the store of
 * a result through the bias and the epilogue (cp.async is tiles.cuh's). */

/* The kernel takes the task's inputs last, in its order (x, W and, with
 * bias, b), so that the launch plan can pass them all as one list. */
#if HAS_BIAS
#define BIAS_PARAM , const float *__restrict__ bias
#else
#define BIAS_PARAM
#endif
#if defined(B_LAYOUT_nk)
#define B_NK 1
#elif defined(B_LAYOUT_kn)
#define B_NK 0
#else
#error "gemm.cuh: b_layout must be kn or nk"
#endif

/* v (times 2^sh) plus the bias of column col, through the epilogue; 0
 * above the diagonal when TRIL, below it when TRIU. */
static __device__ __forceinline__ float finish(float v, int sh,
	const float *bias, long long row, long long col)
{
	if ((TRIL && col > row) || (TRIU && col < row))
		return 0.0f;
	if (sh)
		v = scalbnf(v, sh);
	if (HAS_BIAS)
		v += __ldg(bias + col);
	return gemm_epilogue(v);
}

/* Writes v0, v1 (columns col, col + 1 of row row of C, at crow) through
 * finish, as one 8-byte store where both are inside and aligned. */
static __device__ __forceinline__ void store_pair(float *crow, int sh,
	const float *bias, long long row, long long col, long long N, float v0,
	float v1)
{
	if (col + 1 < N && (N & 1) == 0) {
		float2 o = make_float2(finish(v0, sh, bias, row, col),
			finish(v1, sh, bias, row, col + 1));
		*(float2 *)(crow + col) = o;
	} else {
		if (col < N)
			crow[col] = finish(v0, sh, bias, row, col);
		if (col + 1 < N)
			crow[col + 1] = finish(v1, sh, bias, row, col + 1);
	}
}
