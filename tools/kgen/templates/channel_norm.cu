/* channel_norm family: normalisation over a strided axis. x has shape
 * (outer, channels, inner); for each (outer, inner) position, y =
 * apply(x, v), v = finalize(the combine of map(x) over the channels,
 * n = channels), the op the task's, as expressions (docs/templates.md),
 * finalize seeing the task's eps too:
 *   rms: v = rsqrt(sum of x^2 / n + eps), y = x * v.
 * A thread owns VEC positions and walks the channels (stride inner):
 * neighbouring threads read neighbouring positions, so every load of a
 * warp is coalesced. The position's values stay on chip between the sum
 * and the output, so the data moves once: one read and one write.
 * Variants:
 *   regs: the values in registers (CHANNELS of them per position, all
 *         loads in flight at once); a task with more channels than that
 *         reads them again (from L2 when the block's rows fit there).
 *   smem: the values in dynamic shared memory (channels * BLOCK * VEC
 *         floats per block), any channel count that fits.
 * VEC > 1 needs inner % VEC == 0 (whole vectors within a row); otherwise
 * the thread takes VEC positions BLOCK apart, one value at a time, still
 * coalesced. Indices are 64-bit. */
#define VARIANT_{{variant}} 1
#define CN_MAP(x) ({{op_map}})
#define CN_COMBINE(a, b) ({{op_combine}})
#define CN_IDENTITY ({{op_identity}})
#define CN_FINALIZE(v, n) ({{op_finalize}})
#define CN_APPLY(x, v) ({{op_apply}})

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> cn_vec;

static __device__ __forceinline__ float cn_lane(const cn_vec &v, int l)
{
	return v.at(l);
}

static __device__ __forceinline__ cn_vec cn_scale(cn_vec v, const float (&r)[VEC])
{
#pragma unroll
	for (int l = 0; l < VEC; l++)
		v.set(l, CN_APPLY(v.at(l), r[l]));
	return v;
}

/* The factor for one position from its fold. */
static __device__ __forceinline__ float cn_factor(float v, long long channels, float eps)
{
	const float n = (float)channels;
	(void)n, (void)eps;
	return CN_FINALIZE(v, n);
}

/* One value into a position's fold. */
static __device__ __forceinline__ float cn_take(float acc, float x)
{
	return CN_COMBINE(acc, CN_MAP(x));
}

/* Whether this launch can use VEC-wide accesses. */
static __device__ __forceinline__ bool cn_vec_ok(const real *x, const real *y,
	long long inner)
{
	return VEC == 1 || (inner % VEC == 0 &&
		reinterpret_cast<unsigned long long>(x) % (VEC * REAL_BYTES) == 0 &&
		reinterpret_cast<unsigned long long>(y) % (VEC * REAL_BYTES) == 0);
}

#if defined(VARIANT_regs)
/* Grid (cdiv(outer*inner, BLOCK*VEC)). */
extern "C" __global__ void __launch_bounds__(BLOCK)
channel_norm_regs(const real *__restrict__ x, real *__restrict__ y,
	long long outer, long long channels, long long inner, float eps)
{
	const long long npos = outer * inner;

	if (cn_vec_ok(x, y, inner)) {
		/* VEC adjacent positions of one row */
		const long long p = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;

		if (p >= npos)
			return;
		const long long base = p / inner * channels * inner + p % inner;
		const cn_vec *xv = reinterpret_cast<const cn_vec *>(x + base);
		cn_vec *yv = reinterpret_cast<cn_vec *>(y + base);
		const long long sv = inner / VEC; /* the channel stride in vectors */
		float ss[VEC], r[VEC];

#pragma unroll
		for (int l = 0; l < VEC; l++)
			ss[l] = CN_IDENTITY;
		if (channels <= CHANNELS) {
			cn_vec v[CHANNELS];
#pragma unroll
			for (int c = 0; c < CHANNELS; c++)
				if (c < channels)
					v[c] = rv_ldcs(xv + c * sv);
#pragma unroll
			for (int c = 0; c < CHANNELS; c++)
				if (c < channels)
#pragma unroll
					for (int l = 0; l < VEC; l++)
						ss[l] = cn_take(ss[l], cn_lane(v[c], l));
#pragma unroll
			for (int l = 0; l < VEC; l++)
				r[l] = cn_factor(ss[l], channels, eps);
#pragma unroll
			for (int c = 0; c < CHANNELS; c++)
				if (c < channels)
					rv_stcs(yv + c * sv, cn_scale(v[c], r));
			return;
		}
		/* more channels than registers: sum, then read again */
		for (long long c = 0; c < channels; c++) {
			const cn_vec v = rv_ldg(xv + c * sv);
#pragma unroll
			for (int l = 0; l < VEC; l++)
				ss[l] = cn_take(ss[l], cn_lane(v, l));
		}
#pragma unroll
		for (int l = 0; l < VEC; l++)
			r[l] = cn_factor(ss[l], channels, eps);
		for (long long c = 0; c < channels; c++)
			rv_stcs(yv + c * sv, cn_scale(rv_ldcs(xv + c * sv), r));
		return;
	}

	/* VEC positions BLOCK apart, one value at a time */
	const long long p0 = (long long)blockIdx.x * BLOCK * VEC + threadIdx.x;
	long long base[VEC];
	float ss[VEC], r[VEC];

#pragma unroll
	for (int l = 0; l < VEC; l++) {
		const long long p = p0 + (long long)l * BLOCK;

		base[l] = p < npos ? p / inner * channels * inner + p % inner : -1;
		ss[l] = CN_IDENTITY;
	}
	if (channels <= CHANNELS) {
		float v[VEC][CHANNELS];
#pragma unroll
		for (int c = 0; c < CHANNELS; c++)
#pragma unroll
			for (int l = 0; l < VEC; l++)
				if (c < channels && base[l] >= 0)
					v[l][c] = real_ldcs(x + base[l] + c * inner);
#pragma unroll
		for (int c = 0; c < CHANNELS; c++)
#pragma unroll
			for (int l = 0; l < VEC; l++)
				if (c < channels && base[l] >= 0)
					ss[l] = cn_take(ss[l], v[l][c]);
#pragma unroll
		for (int l = 0; l < VEC; l++)
			r[l] = cn_factor(ss[l], channels, eps);
#pragma unroll
		for (int c = 0; c < CHANNELS; c++)
#pragma unroll
			for (int l = 0; l < VEC; l++)
				if (c < channels && base[l] >= 0)
					real_stcs(y + base[l] + c * inner, CN_APPLY(v[l][c], r[l]));
		return;
	}
	for (long long c = 0; c < channels; c++)
#pragma unroll
		for (int l = 0; l < VEC; l++)
			if (base[l] >= 0) {
				const float v = real_ldg(x + base[l] + c * inner);
				ss[l] = cn_take(ss[l], v);
			}
#pragma unroll
	for (int l = 0; l < VEC; l++)
		r[l] = cn_factor(ss[l], channels, eps);
	for (long long c = 0; c < channels; c++)
#pragma unroll
		for (int l = 0; l < VEC; l++)
			if (base[l] >= 0)
				real_stcs(y + base[l] + c * inner, CN_APPLY(real_ldcs(x + base[l] + c * inner), r[l]));
}
#endif

#if defined(VARIANT_smem)
/* Grid (cdiv(outer*inner, BLOCK*VEC)); dynamic shared memory holds
 * channels * BLOCK vectors: value c of this thread at [c * BLOCK + tid]
 * (conflict-free). UNROLL loads in flight. */
extern "C" __global__ void __launch_bounds__(BLOCK)
channel_norm_smem(const real *__restrict__ x, real *__restrict__ y,
	long long outer, long long channels, long long inner, float eps)
{
	extern __shared__ float4 cn_dyn[];
	const long long npos = outer * inner;

	if (cn_vec_ok(x, y, inner)) {
		cn_vec *buf = reinterpret_cast<cn_vec *>(cn_dyn) + threadIdx.x;
		const long long p = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;

		if (p >= npos)
			return;
		const long long base = p / inner * channels * inner + p % inner;
		const cn_vec *xv = reinterpret_cast<const cn_vec *>(x + base);
		cn_vec *yv = reinterpret_cast<cn_vec *>(y + base);
		const long long sv = inner / VEC;
		float ss[VEC], r[VEC];

#pragma unroll
		for (int l = 0; l < VEC; l++)
			ss[l] = CN_IDENTITY;
		for (long long c0 = 0; c0 < channels; c0 += UNROLL) {
			cn_vec v[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (c0 + u < channels)
					v[u] = rv_ldcs(xv + (c0 + u) * sv);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (c0 + u < channels) {
					buf[(c0 + u) * BLOCK] = v[u];
#pragma unroll
					for (int l = 0; l < VEC; l++)
						ss[l] = cn_take(ss[l], cn_lane(v[u], l));
				}
		}
#pragma unroll
		for (int l = 0; l < VEC; l++)
			r[l] = cn_factor(ss[l], channels, eps);
		for (long long c = 0; c < channels; c++)
			rv_stcs(yv + c * sv, cn_scale(buf[c * BLOCK], r));
		return;
	}

	/* VEC positions BLOCK apart, one value at a time */
	float *buf = reinterpret_cast<float *>(cn_dyn) + threadIdx.x;
	const long long p0 = (long long)blockIdx.x * BLOCK * VEC + threadIdx.x;
	long long base[VEC];
	float ss[VEC], r[VEC];

#pragma unroll
	for (int l = 0; l < VEC; l++) {
		const long long p = p0 + (long long)l * BLOCK;

		base[l] = p < npos ? p / inner * channels * inner + p % inner : -1;
		ss[l] = CN_IDENTITY;
	}
	for (long long c = 0; c < channels; c++) {
		float v[VEC];
#pragma unroll
		for (int l = 0; l < VEC; l++)
			v[l] = base[l] >= 0 ? real_ldcs(x + base[l] + c * inner) : 0.0f;
#pragma unroll
		for (int l = 0; l < VEC; l++) {
			buf[(c * VEC + l) * BLOCK] = v[l];
			ss[l] = cn_take(ss[l], v[l]);
		}
	}
#pragma unroll
	for (int l = 0; l < VEC; l++)
		r[l] = cn_factor(ss[l], channels, eps);
	for (long long c = 0; c < channels; c++)
#pragma unroll
		for (int l = 0; l < VEC; l++)
			if (base[l] >= 0)
				real_stcs(y + base[l] + c * inner, CN_APPLY(buf[(c * VEC + l) * BLOCK], r[l]));
}
#endif
