/* pool family: x has shape (planes, in_d, in_h, in_w), y (planes, out_d,
 * out_h, out_w); y[p][z][r][c] is the op over the window of input places
 * (z*sd - pd + i*dd, r*sh - ph + j*dh, c*sw - pw + k*dw) for i < kd, j < kh,
 * k < kw that lie inside x: padded places take no part. The op is the
 * task's, as expressions (docs/templates.md): a fold, v = combine(v,
 * map(x)) from its identity, then finalize(v, n) with n the divisor
 * (count padded: the window clipped to the padded input, as PyTorch's
 * count_include_pad; valid: the places inside x; an override > 0 instead
 * of both); or one that keeps the maximum or the minimum (NaN counts as
 * the extreme, as in torch). A window with no place inside x gives the
 * identity's finalize (a fold) or -inf / +inf.
 *   direct: one thread per OUTS outputs adjacent along w. The window's
 *           bounds are compile-time, its loops unrolled: a window row's
 *           span, (OUTS - 1)*sw + (kw - 1)*dw + 1 values, is loaded into
 *           registers at once and each of the OUTS windows folds from it.
 * One read of x (overlapping windows hit L1) and one write: the floor.
 * Indices are 64-bit. */
#define PL_KEEP ({{op_keep}})
#if {{op_index}}
#error "pool: an op that keeps an index (return_indices) is not served: its value only"
#endif
#define PL_MAP(x) ({{op_map}})
#define PL_COMBINE(a, b) ({{op_combine}})
#define PL_IDENTITY ({{op_identity}})
#define PL_FINALIZE(v, n) ({{op_finalize}})
#define PL_COUNT_{{count}} 1
#define PL_OVERRIDE ({{override}})
#define PL_BEATS(p, q) (PL_KEEP > 0 ? (p) > (q) : (p) < (q))

#define KD ({{kd}})
#define KH ({{kh}})
#define KW ({{kw}})
#define SD ({{sd}})
#define SH ({{sh}})
#define SW ({{sw}})
#define PD ({{pd}})
#define PH ({{ph}})
#define PW ({{pw}})
#define DD ({{dd}})
#define DH ({{dh}})
#define DW ({{dw}})
/* the span along w of a thread's OUTS windows */
#define SPAN ((OUTS - 1) * SW + (KW - 1) * DW + 1)

static __device__ __forceinline__ float pl_load(const float *p)
{
#if CACHE_HINT
	return __ldcs(p);
#else
	return __ldg(p);
#endif
}

/* Takes value x into the running result v. */
static __device__ __forceinline__ void pl_take(float &v, float x)
{
	const float y = PL_MAP(x);
#if PL_KEEP == 0
	v = PL_COMBINE(v, y);
#else
	/* NaN beats everything */
	if (PL_BEATS(y, v) || (y != y && v == v))
		v = y;
#endif
}

#if PL_KEEP == 0
/* The divisor of a window starting at (z0, r0, c0) (padded coordinates
 * already subtracted), over an input of (in_d, in_h, in_w). */
static __device__ __forceinline__ float pl_count(long long z0, long long r0, long long c0,
	long long in_d, long long in_h, long long in_w)
{
	if (PL_OVERRIDE > 0)
		return (float)PL_OVERRIDE;
#if defined(PL_COUNT_padded)
	/* the window clipped to the padded input (PyTorch's pool_size) */
	const long long z1 = min(z0 + (long long)((KD - 1) * DD + 1), in_d + PD);
	const long long r1 = min(r0 + (long long)((KH - 1) * DH + 1), in_h + PH);
	const long long c1 = min(c0 + (long long)((KW - 1) * DW + 1), in_w + PW);
	return (float)((z1 - z0) * (r1 - r0) * (c1 - c0));
#else
	long long n = 0;
#pragma unroll
	for (int i = 0; i < KD; i++)
#pragma unroll
		for (int j = 0; j < KH; j++)
#pragma unroll
			for (int k = 0; k < KW; k++)
				n += (z0 + i * DD >= 0 && z0 + i * DD < in_d) &&
					(r0 + j * DH >= 0 && r0 + j * DH < in_h) &&
					(c0 + k * DW >= 0 && c0 + k * DW < in_w);
	return (float)n;
#endif
}
#endif

/* Grid (cdiv(planes * out_d * out_h * cdiv(out_w, OUTS), BLOCK)). */
extern "C" __global__ void __launch_bounds__(BLOCK)
pool_direct(const float *__restrict__ x, float *__restrict__ y, long long planes,
	long long in_d, long long in_h, long long in_w,
	long long out_d, long long out_h, long long out_w)
{
	const long long groups = (out_w + OUTS - 1) / OUTS;
	const long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;

	if (t >= planes * out_d * out_h * groups)
		return;
	const long long g = t % groups;
	const long long row = t / groups;          /* (p, z, r) of the outputs */
	const long long r = row % out_h;
	const long long z = row / out_h % out_d;
	const long long p = row / out_h / out_d;
	const long long c = g * OUTS;
	const long long z0 = z * SD - PD, r0 = r * SH - PH, c0 = c * SW - PW;
	const float *xp = x + p * in_d * in_h * in_w;
	float v[OUTS];

#pragma unroll
	for (int o = 0; o < OUTS; o++)
#if PL_KEEP == 0
		v[o] = PL_IDENTITY;
#else
		v[o] = PL_KEEP > 0 ? __int_as_float(0xff800000) : __int_as_float(0x7f800000);
#endif
#pragma unroll
	for (int i = 0; i < KD; i++) {
		const long long zi = z0 + i * DD;
		if (zi < 0 || zi >= in_d)
			continue;
#pragma unroll
		for (int j = 0; j < KH; j++) {
			const long long rj = r0 + j * DH;
			if (rj < 0 || rj >= in_h)
				continue;
			const float *xr = xp + (zi * in_h + rj) * in_w;
			float s[SPAN];
			bool in[SPAN];

#pragma unroll
			for (int k = 0; k < SPAN; k++) {
				const long long ck = c0 + k;
				in[k] = ck >= 0 && ck < in_w;
				s[k] = in[k] ? pl_load(xr + ck) : 0.0f;
			}
#pragma unroll
			for (int o = 0; o < OUTS; o++)
#pragma unroll
				for (int k = 0; k < KW; k++)
					if (in[o * SW + k * DW])
						pl_take(v[o], s[o * SW + k * DW]);
		}
	}
	float *yp = y + row * out_w + c;
#pragma unroll
	for (int o = 0; o < OUTS; o++)
		if (c + o < out_w) {
#if PL_KEEP == 0
			const float n = pl_count(z0, r0, c0 + o * SW, in_d, in_h, in_w);
			const float w = v[o];
			(void)n;
			yp[o] = PL_FINALIZE(w, n);
#else
			yp[o] = v[o];
#endif
		}
}
