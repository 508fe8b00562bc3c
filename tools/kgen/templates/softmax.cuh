/* softmax.cuh: a softmax's running statistic over a row (online softmax),
 * as row_norm's softmax and row_loss's cross-entropy keep it: the max so
 * far and the sum of exp(x - max), rescaled as the max grows. */

#define SM_LOG2E 1.4426950408889634f
#define SM_NEG_INF __int_as_float(0xff800000)

/* m: the max so far; s: the sum of exp(x - m). */
struct sm_stat {
	float m, s;
};

/* a and b together (commutative bit for bit, so every thread that
 * combines the same parts in the same order gets the same answer). */
static __device__ __forceinline__ sm_stat sm_combine(sm_stat a, sm_stat b)
{
	float m = fmaxf(a.m, b.m);

	if (m == SM_NEG_INF)
		return a;
	return {m, a.s * exp2f((a.m - m) * SM_LOG2E) + b.s * exp2f((b.m - m) * SM_LOG2E)};
}

/* Adds N values to st, one rescale a call, so callers pass whole tiles. A
 * chunk of -inf alone changes nothing (masked rows). */
template <int N>
static __device__ __forceinline__ void sm_add(sm_stat &st, const float (&v)[N])
{
	float cm = v[0];
#pragma unroll
	for (int i = 1; i < N; i++)
		cm = fmaxf(cm, v[i]);
	const float m = fmaxf(st.m, cm);
	if (m == SM_NEG_INF)
		return;
	const float ms = m * SM_LOG2E;
	float s = st.s * exp2f(fmaf(st.m, SM_LOG2E, -ms));
#pragma unroll
	for (int i = 0; i < N; i++)
		s += exp2f(fmaf(v[i], SM_LOG2E, -ms));
	st.m = m;
	st.s = s;
}
