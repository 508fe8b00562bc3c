/* stat_norm family: x viewed as (outer, groups, inner); group b's
 * statistics are over its outer * inner values x[a][b][i]: y = (x - mean)
 * * rstd, rstd = 1/sqrt(var + eps) with the biased variance (as torch),
 * then, with an affine, * w[c] + bias[c] for c = ((b % channels) * inner
 * + i) / spatial: batch norm (outer batch, groups channels), instance norm
 * (outer 1, groups batch * channels), group norm (outer 1, groups batch *
 * groups, inner channels/groups * spatial).
 *   sn_partial (groups * SPLIT blocks): each block sums its share of a
 *       group's flat places j = a * inner + i, shifted by the group's first
 *       value (no cancellation when the mean is far from 0), in float per
 *       thread and double across threads.
 *   sn_stats (one thread per group): mean and rstd from the SPLIT sums.
 *   sn_apply (a capped grid, grid-stride): every value once, streamed.
 * x is read twice and y written once: 3 passes; the floor (one read, one
 * write) needs a whole group on chip. Vectors of VEC need inner % VEC == 0
 * and aligned buffers, else one value at a time. Indices are 64-bit.
 * Variant warp (outer 1: a group's values side by side, a group norm of a
 * product's rows): sn_warp, a warp a group, its sums and then its values
 * in one kernel, the group read twice (the second time from cache).
 * Variant cols (inner 1: a row's groups side by side, a batch norm of a
 * product): sn_cols, a thread a group and a share of its rows (a warp
 * reads 32 neighbours of a row), then sn_stats, then sn_cols_apply, VEC
 * groups side by side a step. */
#define VARIANT_{{variant}} 1
#define SN_AFFINE {{affine}}
/* warp: how many of its places a lane sums in float before the sums go
 * into double */
#define SN_RUN 64

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> sn_vec;

static __device__ __forceinline__ bool sn_vec_ok(const void *p, long long inner)
{
	return VEC == 1 || (inner % VEC == 0 &&
		reinterpret_cast<unsigned long long>(p) % (VEC * REAL_BYTES) == 0);
}

#if !defined(VARIANT_warp) && !defined(VARIANT_cols)
/* Grid (groups * SPLIT): block k sums share k % SPLIT of group k / SPLIT:
 * part[2k] = sum(x - x0), part[2k + 1] = sum((x - x0)^2), x0 the group's
 * first value. Shares are whole vectors of the flat places, split evenly. */
extern "C" __global__ void __launch_bounds__(BLOCK)
sn_partial(const real *__restrict__ x, double *__restrict__ part, long long outer,
	long long groups, long long inner)
{
	const long long b = blockIdx.x / SPLIT;
	const int share = blockIdx.x % SPLIT;
	const real *xg = x + b * inner;            /* place (a, i): xg[a * groups * inner + i] */
	const long long stride = groups * inner;
	float s1 = 0.0f, s2 = 0.0f;

	if (b >= groups)
		return;
	const float x0 = real_ldg(xg);
	if (sn_vec_ok(x, inner)) {
		const long long per = inner / VEC, nv = outer * per;
		const long long v0 = nv * share / SPLIT, v1 = nv * (share + 1) / SPLIT;

		for (long long q = v0 + threadIdx.x; q < v1; q += (long long)BLOCK * UNROLL) {
			sn_vec v[UNROLL];
			const bool whole = q + (long long)(UNROLL - 1) * BLOCK < v1;

#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (whole || q + u * BLOCK < v1) {
					const long long r = q + u * BLOCK;
					v[u] = rv_ldg(reinterpret_cast<const sn_vec *>(xg + r / per * stride) + r % per);
				}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (whole || q + u * BLOCK < v1)
#pragma unroll
					for (int l = 0; l < VEC; l++) {
						const float d = v[u].at(l) - x0;
						s1 += d;
						s2 = fmaf(d, d, s2);
					}
		}
	} else {
		const long long n = outer * inner;
		const long long j0 = n * share / SPLIT, j1 = n * (share + 1) / SPLIT;

		for (long long j = j0 + threadIdx.x; j < j1; j += BLOCK) {
			const float d = real_ldg(xg + j / inner * stride + j % inner) - x0;
			s1 += d;
			s2 = fmaf(d, d, s2);
		}
	}
	double a = s1, q = s2;
	block_sum2(a, q);
	if (threadIdx.x == 0) {
		part[2 * blockIdx.x] = a;
		part[2 * blockIdx.x + 1] = q;
	}
}

#endif

#if defined(VARIANT_cols)
/* Grid (cdiv(groups, BLOCK), SPLIT), inner 1 (a batch norm of a product:
 * a row's groups side by side): thread t of block (g, k) sums share k of
 * group b = g * BLOCK + t's outer places, so that a warp reads 32
 * neighbours of a row at once, shifted by the group's first value, in
 * float, UNROLL rows in flight; its two sums where sn_partial's block
 * b * SPLIT + k writes them, for sn_stats. */
extern "C" __global__ void __launch_bounds__(BLOCK)
sn_cols(const real *__restrict__ x, double *__restrict__ part, long long outer,
	long long groups)
{
	const long long b = (long long)blockIdx.x * BLOCK + threadIdx.x;
	const long long k = blockIdx.y;
	float s1 = 0.0f, s2 = 0.0f;

	if (b >= groups)
		return;
	const float x0 = real_ldg(x + b);
	const long long a1 = outer * (k + 1) / SPLIT;
	long long a = outer * k / SPLIT;

	for (; a + UNROLL <= a1; a += UNROLL) {
		float v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			v[u] = real_ldg(x + (a + u) * groups + b);
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const float d = v[u] - x0;
			s1 += d;
			s2 = fmaf(d, d, s2);
		}
	}
	for (; a < a1; a++) {
		const float d = real_ldg(x + a * groups + b) - x0;
		s1 += d;
		s2 = fmaf(d, d, s2);
	}
	part[2 * (b * SPLIT + k)] = s1;
	part[2 * (b * SPLIT + k) + 1] = s2;
}
#endif

#if !defined(VARIANT_warp)
/* Grid (cdiv(groups, 128)), 128 threads: stats[2b] = mean, stats[2b + 1] =
 * rstd of group b, from its SPLIT partial sums in order. */
extern "C" __global__ void __launch_bounds__(128)
sn_stats(const real *__restrict__ x, const double *__restrict__ part,
	float *__restrict__ stats, long long outer, long long groups, long long inner, float eps)
{
	const long long b = (long long)blockIdx.x * 128 + threadIdx.x;
	double a = 0.0, q = 0.0;

	if (b >= groups)
		return;
	for (int s = 0; s < SPLIT; s++) {
		a += part[2 * (b * SPLIT + s)];
		q += part[2 * (b * SPLIT + s) + 1];
	}
	const double n = (double)outer * (double)inner;
	const double m = a / n;
	double var = q / n - m * m;

	if (var < 0.0)
		var = 0.0;
	stats[2 * b] = (float)((double)real_f(x[b * inner]) + m);
	stats[2 * b + 1] = (float)(1.0 / sqrt(var + (double)eps));
}
#endif

/* One value: place i of group b. */
static __device__ __forceinline__ float sn_one(float v, float mean, float rstd,
	const real *__restrict__ w, const real *__restrict__ bias, long long b,
	long long i, long long inner, long long channels, long long spatial)
{
	const float t = (v - mean) * rstd;
#if SN_AFFINE
	const long long c = ((b % channels) * inner + i) / spatial;
	return fmaf(t, real_ldg(w + c), real_ldg(bias + c));
#else
	(void)w, (void)bias, (void)b, (void)i, (void)inner, (void)channels, (void)spatial;
	return t;
#endif
}

#if !defined(VARIANT_warp)
/* The apply passes' stream (capped grid, grid-stride): the nv vectors of
 * x, UNROLL in flight BLOCK apart, each put through f(v, j) (j: the flat
 * place of its first value) and stored to y. */
template <class F>
static __device__ __forceinline__ void sn_stream(const real *__restrict__ x,
	real *__restrict__ y, long long nv, F f)
{
	const long long step = (long long)gridDim.x * BLOCK * UNROLL;
	const sn_vec *xv = reinterpret_cast<const sn_vec *>(x);
	sn_vec *yv = reinterpret_cast<sn_vec *>(y);

	for (long long q = (long long)blockIdx.x * BLOCK * UNROLL + threadIdx.x; q < nv; q += step) {
		sn_vec v[UNROLL];
		const bool whole = q + (long long)(UNROLL - 1) * BLOCK < nv;

#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || q + u * BLOCK < nv)
				v[u] = rv_ldcs(xv + q + u * BLOCK);
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || q + u * BLOCK < nv) {
				f(v[u], (q + u * BLOCK) * VEC);
				rv_stcs(yv + q + u * BLOCK, v[u]);
			}
	}
}
#endif

#if defined(VARIANT_warp)
/* Grid (cdiv(groups, BLOCK / 32)), outer 1: warp w of block k normalises
 * group k * BLOCK / 32 + w, its inner values side by side: sums of the
 * values shifted by its first (float over a lane's runs of SN_RUN places,
 * double across the runs and the warp), then each value again (from
 * cache), VEC at a time where aligned. */
extern "C" __global__ void __launch_bounds__(BLOCK)
sn_warp(const real *__restrict__ x, const real *__restrict__ w,
	const real *__restrict__ bias, real *__restrict__ y, long long groups,
	long long inner, long long channels, long long spatial, float eps)
{
	const long long b = (long long)blockIdx.x * (BLOCK / 32) + threadIdx.x / 32;
	const int lane = threadIdx.x % 32;
	double a = 0.0, q = 0.0;

	if (b >= groups)
		return;
	const real *xg = x + b * inner;
	real *yg = y + b * inner;
	const float x0 = real_ldg(xg);
	const bool vec = sn_vec_ok(x, inner) && sn_vec_ok(y, inner);
	const long long nv = inner / VEC;

	/* a lane sums in float over runs of SN_RUN of its places, each run's
	 * sums then into double: float alone over a group of 2^21 values (a
	 * lane's 2^16) was off by 2e-5 (KernelBench 35) */
	const long long places = vec ? nv : inner;

	for (long long r0 = 0; r0 < places; r0 += 32 * SN_RUN) {
		const long long r1 = min(places, r0 + 32 * SN_RUN);
		float s1 = 0.0f, s2 = 0.0f;

		if (vec) {
			for (long long r = r0 + lane; r < r1; r += 32) {
				const sn_vec v = rv_ldg(reinterpret_cast<const sn_vec *>(xg) + r);
#pragma unroll
				for (int l = 0; l < VEC; l++) {
					const float d = v.at(l) - x0;
					s1 += d;
					s2 = fmaf(d, d, s2);
				}
			}
		} else {
			for (long long i = r0 + lane; i < r1; i += 32) {
				const float d = real_ldg(xg + i) - x0;
				s1 += d;
				s2 = fmaf(d, d, s2);
			}
		}
		a += s1;
		q += s2;
	}
	a = warp_sum(a);
	q = warp_sum(q);
	/* one reciprocal and rsqrt, not double divisions: ptxas spilled
	 * around the divisions' calls at VEC 1 */
	const double rn = 1.0 / (double)inner, m = a * rn;
	double var = q * rn - m * m;

	if (var < 0.0)
		var = 0.0;
	const float mean = (float)((double)x0 + m), rstd = (float)rsqrt(var + (double)eps);
	if (vec) {
		for (long long r = lane; r < nv; r += 32) {
			sn_vec v = rv_ldg(reinterpret_cast<const sn_vec *>(xg) + r);
#if SN_AFFINE
			/* the channel of the vector's first value, and how far into
			 * it: one 64-bit division a vector, not one a value */
			const long long at = (b % channels) * inner + r * VEC;
			long long c = at / spatial, k = at - c * spatial;
#pragma unroll
			for (int l = 0; l < VEC; l++) {
				v.set(l, fmaf((v.at(l) - mean) * rstd, real_ldg(w + c), real_ldg(bias + c)));
				if (++k == spatial) {
					k = 0;
					c++;
				}
			}
#else
#pragma unroll
			for (int l = 0; l < VEC; l++)
				v.set(l, (v.at(l) - mean) * rstd);
#endif
			rv_stcs(reinterpret_cast<sn_vec *>(yg) + r, v);
		}
		return;
	}
#if SN_AFFINE
	/* the channel stepped with the place, as above */
	const long long at = (b % channels) * inner + lane;
	long long c = at / spatial, k = at - c * spatial;

	for (long long i = lane; i < inner; i += 32) {
		yg[i] = real_of(fmaf((real_ldg(xg + i) - mean) * rstd, real_ldg(w + c), real_ldg(bias + c)));
		for (k += 32; k >= spatial; k -= spatial)
			c++;
	}
#else
	for (long long i = lane; i < inner; i += 32)
		yg[i] = real_of((real_ldg(xg + i) - mean) * rstd);
#endif
}
#elif defined(VARIANT_cols)
/* Grid (capped), grid-stride over every value, inner 1: VEC adjacent
 * values of a row, VEC groups side by side (groups % VEC == 0 and aligned
 * buffers, else one value at a time), UNROLL steps BLOCK apart. */
extern "C" __global__ void __launch_bounds__(BLOCK)
sn_cols_apply(const real *__restrict__ x, const real *__restrict__ w,
	const real *__restrict__ bias, const float *__restrict__ stats,
	real *__restrict__ y, long long outer, long long groups, long long channels,
	long long spatial)
{
	const long long n = outer * groups;

	if (sn_vec_ok(x, groups) && sn_vec_ok(y, groups)) {
		sn_stream(x, y, n / VEC, [&](sn_vec &v, long long j) {
			const long long b0 = j % groups;
#pragma unroll
			for (int l = 0; l < VEC; l++)
				v.set(l, sn_one(v.at(l), __ldg(stats + 2 * (b0 + l)),
					__ldg(stats + 2 * (b0 + l) + 1), w, bias, b0 + l, 0, 1,
					channels, spatial));
		});
		return;
	}
	for (long long j = (long long)blockIdx.x * BLOCK + threadIdx.x; j < n;
	     j += (long long)gridDim.x * BLOCK) {
		const long long b = j % groups;
		y[j] = real_of(sn_one(real_f(x[j]), __ldg(stats + 2 * b), __ldg(stats + 2 * b + 1),
			w, bias, b, 0, 1, channels, spatial));
	}
}
#else
/* Grid (capped), grid-stride over every value: VEC adjacent values (of
 * one group, inner % VEC == 0) per step, UNROLL steps BLOCK apart. */
extern "C" __global__ void __launch_bounds__(BLOCK)
sn_apply(const real *__restrict__ x, const real *__restrict__ w,
	const real *__restrict__ bias, const float *__restrict__ stats,
	real *__restrict__ y, long long outer, long long groups, long long inner,
	long long channels, long long spatial)
{
	const long long n = outer * groups * inner;

	if (sn_vec_ok(x, inner) && sn_vec_ok(y, inner)) {
		sn_stream(x, y, n / VEC, [&](sn_vec &v, long long j) {
			const long long b = j / inner % groups, i = j % inner;
			const float mean = __ldg(stats + 2 * b), rstd = __ldg(stats + 2 * b + 1);
#pragma unroll
			for (int l = 0; l < VEC; l++)
				v.set(l, sn_one(v.at(l), mean, rstd, w, bias, b, i + l, inner, channels,
					spatial));
		});
		return;
	}
	for (long long j = (long long)blockIdx.x * BLOCK + threadIdx.x; j < n;
	     j += (long long)gridDim.x * BLOCK) {
		const long long b = j / inner % groups, i = j % inner;
		y[j] = real_of(sn_one(real_f(x[j]), __ldg(stats + 2 * b), __ldg(stats + 2 * b + 1),
			w, bias, b, i, inner, channels, spatial));
	}
}
#endif
