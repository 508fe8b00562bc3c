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
 *   direct: a block per output row (grid-stride), its threads on groups
 *           of OUTS outputs adjacent along w, BLOCK groups apart. The window's
 *           bounds are compile-time, its loops unrolled: a window row's
 *           span, (OUTS - 1)*sw + (kw - 1)*dw + 1 values, is loaded into
 *           registers at once and each of the OUTS windows folds from it.
 *   tile:   a block per TH x TW outputs of one plane and depth: the input
 *           rows and columns they read are staged in shared memory once
 *           per depth, coalesced, and every window folds from there.
 *   walk:   a thread per OUTS adjacent outputs of TH adjacent output rows
 *           (one plane and depth): each input row the TH rows' windows
 *           reach is loaded once (its span, KD depths) and folded along w
 *           into OUTS partials held in registers; each output then folds
 *           its KH rows' partials. Overlapping windows (stride below the
 *           kernel) share both their columns and their rows' loads.
 *   stream: as walk's threads, each walking a chunk of ZC output depths in
 *           order and keeping its window's KD slices' row partials: the
 *           next depth's window shares KD - SHIFT of them, so each slice
 *           is read once per chunk. SMEM: a block's TY row groups stage
 *           each new slice's rows once in shared memory (cp.async).
 *   roll:   a block per band of TH output rows (one plane and depth) and
 *           BLOCK * OUTS columns walks the band's input rows in order
 *           through a ring in shared memory, AHEAD rows in flight
 *           (cp.async); each thread folds the new row along w and keeps
 *           the last rows' partials in registers, storing an output row
 *           when its window's last row has come: each row read once.
 * direct and walk, with WVEC: where a thread's first column is the same
 * place in a 16-byte vector for every thread ((OUTS * sw) % (16 / real
 * bytes) == 0) and rows are whole vectors (in_w too), a row's span is read
 * as the aligned vectors that cover it: a warp's loads are contiguous, not
 * OUTS * sw values apart (stream too). walk with PREFETCH loads every
 * vector of every row (and depth) its windows reach before folding any,
 * all in flight. direct and stream with STAGE store a warp's outputs
 * through shared memory, 32 adjacent values a store.
 * One read of x (overlapping windows hit L1) and one write: the floor.
 * Indices are 64-bit. */
#define VARIANT_{{variant}} 1
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
/* the span along w of a direct thread's OUTS windows */
#define SPAN ((OUTS - 1) * SW + (KW - 1) * DW + 1)

/* The op's neutral value: its identity, or -inf / +inf. */
static __device__ __forceinline__ float pl_neutral()
{
#if PL_KEEP == 0
	return PL_IDENTITY;
#else
	return PL_KEEP > 0 ? __int_as_float(0xff800000) : __int_as_float(0x7f800000);
#endif
}

/* Folds a mapped value or a partial result p into v (NaN beats
 * everything, as in torch): for max and min one instruction, max.NaN or
 * min.NaN (sm_80 on: a NaN operand gives NaN), not a compare, a NaN test
 * and a select. */
static __device__ __forceinline__ void pl_merge(float &v, float p)
{
#if PL_KEEP == 0
	v = PL_COMBINE(v, p);
#elif PL_KEEP > 0
	asm("max.NaN.f32 %0, %0, %1;" : "+f"(v) : "f"(p));
#else
	asm("min.NaN.f32 %0, %0, %1;" : "+f"(v) : "f"(p));
#endif
}

#if defined(VARIANT_direct) || defined(VARIANT_walk) || defined(VARIANT_stream) || \
	defined(VARIANT_roll)
/* Takes value x into the running result v. */
static __device__ __forceinline__ void pl_take(float &v, float x)
{
	pl_merge(v, PL_MAP(x));
}

/* WVEC: a span read as 16-byte vectors of VW values. A thread's first
 * column c * SW - PW (c a multiple of OUTS) sits VOFF values into its
 * vector, the same for every thread when OUTS * SW is a multiple of VW;
 * NV vectors cover VOFF + SPAN values. */
#define VW (16 / REAL_BYTES)
#define VOFF ((VW - PW % VW) % VW)
#define NV ((VOFF + SPAN + VW - 1) / VW)
typedef realv<VW> pl_vec;

/* The span's values and whether each is inside x, from its vectors. */
static __device__ __forceinline__ void pl_span_unpack(const pl_vec (&f)[NV],
	const bool (&vin)[NV], float (&s)[SPAN], bool (&in)[SPAN])
{
#pragma unroll
	for (int v = 0; v < NV; v++)
#pragma unroll
		for (int l = 0; l < VW; l++) {
			const int k = v * VW + l - VOFF;
			if (k >= 0 && k < SPAN) {
				in[k] = vin[v];
				s[k] = f[v].at(l);
			}
		}
}
#endif

#if defined(VARIANT_direct) || defined(VARIANT_walk) || defined(VARIANT_stream)
/* WVEC's vector reads, where every thread's first column is the same
 * place in a vector */
#define PL_WVEC (WVEC && (OUTS * SW) % VW == 0)

static __device__ __forceinline__ float pl_load(const real *p)
{
#if CACHE_HINT
	return real_ldcs(p);
#else
	return real_ldg(p);
#endif
}

static __device__ __forceinline__ pl_vec pl_vload(const pl_vec *p)
{
#if CACHE_HINT
	return rv_ldcs(p);
#else
	return rv_ldg(p);
#endif
}

/* Whether x's rows are whole, aligned vectors, so that spans can be read
 * as vectors (WVEC). */
static __device__ __forceinline__ bool pl_vec_rows(const real *x, long long in_w)
{
	return PL_WVEC && in_w % VW == 0 && reinterpret_cast<unsigned long long>(x) % 16 == 0;
}

/* The NV aligned vectors that cover the SPAN values of input row xr from
 * column c0 on (a vector is inside x whole or not at all; none is when the
 * row is not, !row), and whether each is inside x. */
static __device__ __forceinline__ void pl_span_load(const real *xr, long long c0,
	long long in_w, bool inner_w, bool row, pl_vec (&f)[NV], bool (&vin)[NV])
{
#pragma unroll
	for (int v = 0; v < NV; v++) {
		const long long cv = c0 - VOFF + v * VW;
		vin[v] = row && (inner_w || (cv >= 0 && cv < in_w));
		f[v] = pl_vec{};
		if (vin[v])
			f[v] = pl_vload(reinterpret_cast<const pl_vec *>(xr + c0 - VOFF) + v);
	}
}

/* The SPAN values of input row xr from column c0 on, and whether each is
 * inside x (every one when inner_w): as the aligned vectors that cover
 * them (vec: pl_vec_rows), or one by one. */
static __device__ __forceinline__ void pl_span(const real *xr, long long c0, long long in_w,
	bool inner_w, bool vec, float (&s)[SPAN], bool (&in)[SPAN])
{
	if (vec) {
		pl_vec f[NV];
		bool vin[NV];
		pl_span_load(xr, c0, in_w, inner_w, true, f, vin);
		pl_span_unpack(f, vin, s, in);
		return;
	}
#pragma unroll
	for (int k = 0; k < SPAN; k++) {
		in[k] = inner_w || (c0 + k >= 0 && c0 + k < in_w);
		s[k] = in[k] ? pl_load(xr + c0 + k) : 0.0f;
	}
}
#endif

#if defined(VARIANT_direct) || defined(VARIANT_walk) || defined(VARIANT_stream) || \
	defined(VARIANT_roll)
/* Folds a span's values inside x (in) into its OUTS windows' results v:
 * window o takes values o * SW + k * DW of the span, k < KW. */
static __device__ __forceinline__ void pl_fold_span(const float (&s)[SPAN], const bool (&in)[SPAN],
	float (&v)[OUTS])
{
#pragma unroll
	for (int o = 0; o < OUTS; o++)
#pragma unroll
		for (int k = 0; k < KW; k++)
			if (in[o * SW + k * DW])
				pl_take(v[o], s[o * SW + k * DW]);
}
#endif

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

/* A window's stored result from its fold v: finalize(v, n) for a fold, n
 * the kernel's size (or the override) for a window wholly inside x, else
 * pl_count of the window at (z0, r0, c0); the value itself for a keep. */
static __device__ __forceinline__ real pl_out(float v, bool inside, long long z0,
	long long r0, long long c0, long long in_d, long long in_h, long long in_w)
{
#if PL_KEEP == 0
	const float n = inside ? (PL_OVERRIDE > 0 ? (float)PL_OVERRIDE : (float)(KD * KH * KW))
		: pl_count(z0, r0, c0, in_d, in_h, in_w);
	(void)n;
	return real_of(PL_FINALIZE(v, n));
#else
	(void)inside, (void)z0, (void)r0, (void)c0, (void)in_d, (void)in_h, (void)in_w;
	return real_of(v);
#endif
}

#if defined(VARIANT_stream) || defined(VARIANT_roll)
/* Starts a 16-byte asynchronous copy (cp.async) of src into shared memory
 * at dst, zeros where !in (src then only a valid address). */
static __device__ __forceinline__ void pl_copy16(void *dst, const void *src, bool in)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
		:: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "r"(in ? 16 : 0) : "memory");
}
#endif

#if defined(VARIANT_direct) || defined(VARIANT_stream) || defined(VARIANT_roll)
/* STAGE (with OUTS above 1): a warp's 32 * OUTS adjacent outputs pass
 * through shared memory, so that its stores are 32 adjacent values, not
 * 32 values OUTS apart (each sector written OUTS times over); the pitch
 * OUTS + 1 keeps the lanes' writes on distinct banks. */
#define PL_STAGE (STAGE && OUTS > 1)
#define PL_STW (PL_STAGE ? 32 * (OUTS + 1) : 1)

/* Stores r, the OUTS outputs of this lane from column cw + lane * OUTS on
 * (cw the warp's first), into output row yr: those before out_w. Every
 * lane of the warp takes part (STAGE: st is the warp's staging). */
static __device__ __forceinline__ void pl_store(real *st, real *__restrict__ yr,
	long long cw, long long out_w, const real (&r)[OUTS])
{
	const int lane = threadIdx.x % 32;
#if PL_STAGE
	/* the row's values from this lane's first on, up to the warp's */
	const int mine = (int)min(out_w - cw, (long long)(32 * OUTS)) - lane;
	static_assert(32 % OUTS == 0, "pool: STAGE takes OUTS dividing a warp");
#pragma unroll
	for (int o = 0; o < OUTS; o++)
		st[lane * (OUTS + 1) + o] = r[o];
	__syncwarp();
	/* the warp's value lane + 32 * k is output lane % OUTS of lane
	 * lane / OUTS + k * 32 / OUTS (OUTS divides 32) */
	const real *sl = st + lane / OUTS * (OUTS + 1) + lane % OUTS;
#pragma unroll
	for (int k = 0; k < OUTS; k++)
		if (32 * k < mine)
			yr[cw + lane + 32 * k] = sl[k * (32 / OUTS) * (OUTS + 1)];
	__syncwarp();
#else
	(void)st;
	const long long c = cw + (long long)lane * OUTS;
#pragma unroll
	for (int o = 0; o < OUTS; o++)
		if (c + o < out_w)
			yr[c + o] = r[o];
#endif
}
#endif

#if defined(VARIANT_direct)
/* The OUTS outputs from c on of an output row whose windows start at
 * depth z0 and row r0 of plane xp (padded coordinates subtracted), into
 * r (those from out_w on are not outputs: their values are of no use). */
static __device__ __forceinline__ void pl_group(const real *__restrict__ xp,
	real (&r)[OUTS], long long z0, long long r0, long long c,
	long long in_d, long long in_h, long long in_w, long long out_w, bool vec)
{
	const long long c0 = c * SW - PW;
	/* every window of the group inside x along w, and every depth and row
	 * the windows reach inside too: no check per value, and the divisor is
	 * the kernel's (the common case; the edges take the checked path) */
	const bool inner_w = c0 >= 0 && c0 + SPAN <= in_w && c + OUTS <= out_w;
	const bool inner = inner_w && z0 >= 0 && z0 + (KD - 1) * DD < in_d &&
		r0 >= 0 && r0 + (KH - 1) * DH < in_h;
	float v[OUTS];

#pragma unroll
	for (int o = 0; o < OUTS; o++)
		v[o] = pl_neutral();
	if (inner) {
		const long long plane = in_h * in_w;
#pragma unroll
		for (int i = 0; i < KD; i++)
#pragma unroll
			for (int j = 0; j < KH; j++) {
				float s[SPAN];
				bool in[SPAN];
				pl_span(xp + (z0 + i * DD) * plane + (r0 + j * DH) * in_w, c0, in_w,
					true, vec, s, in);
#pragma unroll
				for (int o = 0; o < OUTS; o++)
#pragma unroll
					for (int k = 0; k < KW; k++)
						pl_take(v[o], s[o * SW + k * DW]);
			}
#pragma unroll
		for (int o = 0; o < OUTS; o++)
			r[o] = pl_out(v[o], true, z0, r0, c0 + o * SW, in_d, in_h, in_w);
		return;
	}
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
			float s[SPAN];
			bool in[SPAN];

			pl_span(xp + (zi * in_h + rj) * in_w, c0, in_w, false, vec, s, in);
			pl_fold_span(s, in, v);
		}
	}
#pragma unroll
	for (int o = 0; o < OUTS; o++)
		r[o] = pl_out(v[o], false, z0, r0, c0 + o * SW, in_d, in_h, in_w);
}

/* Grid (min(planes * out_d * out_h, 2^20)): the blocks walk the output
 * rows with a grid stride, each row's place found once (the same for the
 * whole block: no division per output), and the block's threads walk the
 * row's groups of OUTS outputs BLOCK apart; a warp whose first column is
 * inside the row takes part whole (pl_store). */
extern "C" __global__ void __launch_bounds__(BLOCK)
pool_direct(const real *__restrict__ x, real *__restrict__ y, long long planes,
	long long in_d, long long in_h, long long in_w,
	long long out_d, long long out_h, long long out_w)
{
	__shared__ real pl_st[BLOCK / 32][PL_STW];
	const long long rows = planes * out_d * out_h;
	const bool vec = pl_vec_rows(x, in_w);
	const long long lane = threadIdx.x % 32, warp0 = threadIdx.x - lane;

	for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
		const long long r = row % out_h, z = row / out_h % out_d, p = row / out_h / out_d;
		const real *xp = x + p * in_d * in_h * in_w;
		real *yp = y + row * out_w;

		for (long long cw = warp0 * OUTS; cw < out_w; cw += (long long)BLOCK * OUTS) {
			const long long c = cw + lane * OUTS;
			real v[OUTS];
			/* (a lane past the row's end only takes part in the store: had it
			 * folded its checked windows, the warp would have waited on it) */
			if (c < out_w)
				pl_group(xp, v, z * SD - PD, r * SH - PH, c, in_d, in_h, in_w, out_w, vec);
			pl_store(pl_st[threadIdx.x / 32], yp, cw, out_w, v);
		}
	}
}
#endif

#if defined(VARIANT_tile)
/* The input rows and columns a tile of TH x TW outputs reads. */
#define RH ((TH - 1) * SH + (KH - 1) * DH + 1)
#define RW ((TW - 1) * SW + (KW - 1) * DW + 1)
#define OPT (TH * TW / BLOCK)

#if (TH * TW) % BLOCK != 0
#error "TH * TW must be a multiple of BLOCK"
#endif

static __device__ __forceinline__ void pl_tile(const real *__restrict__ x, real *__restrict__ y,
	float *pl_s, long long b, long long tw, long long th, long long in_d, long long in_h,
	long long in_w, long long out_d, long long out_h, long long out_w);

/* Grid (min(tiles, 8448)), tiles = planes * out_d * cdiv(out_h, TH) *
 * cdiv(out_w, TW), walked with a grid stride: a tile owns
 * the outputs [r0, r0 + TH) x [c0, c0 + TW) of one plane and depth. For
 * each depth the window reaches, the RH x RW input values those outputs
 * read are staged once in shared memory, mapped, places outside x holding
 * the op's neutral value (identity, or -inf/+inf), so every window folds
 * from there without a branch; each thread keeps OPT outputs' results in
 * registers across the depths. */
extern "C" __global__ void __launch_bounds__(BLOCK)
pool_tile(const real *__restrict__ x, real *__restrict__ y, long long planes,
	long long in_d, long long in_h, long long in_w,
	long long out_d, long long out_h, long long out_w)
{
	__shared__ float pl_s[RH * RW];
	const long long tw = (out_w + TW - 1) / TW, th = (out_h + TH - 1) / TH;
	const long long ntiles = planes * out_d * th * tw;

	/* the blocks walk the tiles with a grid stride: the tile's place is
	 * found once per tile, the same for the whole block */
	for (long long b = blockIdx.x; b < ntiles; b += gridDim.x)
		pl_tile(x, y, pl_s, b, tw, th, in_d, in_h, in_w, out_d, out_h, out_w);
}

/* Tile b of pool_tile's grid. */
static __device__ __forceinline__ void pl_tile(const real *__restrict__ x, real *__restrict__ y,
	float *pl_s, long long b, long long tw, long long th, long long in_d, long long in_h,
	long long in_w, long long out_d, long long out_h, long long out_w)
{
	const long long bw = b % tw;
	b /= tw;
	const long long bh = b % th;
	b /= th;
	const long long z = b % out_d, p = b / out_d;
	const long long r0 = bh * TH, c0 = bw * TW;
	const long long ir0 = r0 * SH - PH, ic0 = c0 * SW - PW;
	const real *xp = x + p * in_d * in_h * in_w;
	const float neutral = pl_neutral();
	float v[OPT];

#pragma unroll
	for (int o = 0; o < OPT; o++)
		v[o] = neutral;
#pragma unroll
	for (int i = 0; i < KD; i++) {
		const long long zi = z * SD - PD + i * DD;
		if (zi < 0 || zi >= in_d)
			continue;
		const real *xz = xp + zi * in_h * in_w;
		__syncthreads();
		for (int e = threadIdx.x; e < RH * RW; e += BLOCK) {
			const int rr = e / RW, cc = e % RW;
			const long long r = ir0 + rr, c = ic0 + cc;
			float s = neutral;
			if (r >= 0 && r < in_h && c >= 0 && c < in_w) {
#if CACHE_HINT
				const float q = real_ldcs(xz + r * in_w + c);
#else
				const float q = real_ldg(xz + r * in_w + c);
#endif
				s = PL_MAP(q);
			}
			pl_s[e] = s;
		}
		__syncthreads();
#pragma unroll
		for (int o = 0; o < OPT; o++) {
			const int t = threadIdx.x + o * BLOCK;
			const int orr = t / TW, occ = t % TW;
			const float *s = pl_s + orr * SH * RW + occ * SW;
#pragma unroll
			for (int j = 0; j < KH; j++)
#pragma unroll
				for (int k = 0; k < KW; k++)
					pl_merge(v[o], s[j * DH * RW + k * DW]);
		}
	}
#pragma unroll
	for (int o = 0; o < OPT; o++) {
		const int t = threadIdx.x + o * BLOCK;
		const long long r = r0 + t / TW, c = c0 + t % TW;
		if (r >= out_h || c >= out_w)
			continue;
		y[((p * out_d + z) * out_h + r) * out_w + c] = pl_out(v[o], false, z * SD - PD,
			r * SH - PH, c * SW - PW, in_d, in_h, in_w);
	}
}
#endif

#if defined(VARIANT_walk) || defined(VARIANT_stream)
/* The input rows TH output rows' windows reach, from the first one's. */
#define RHW ((TH - 1) * SH + (KH - 1) * DH + 1)

/* Whether input row q (of RHW) is in some window: t * SH + j * DH == q. */
static __device__ __forceinline__ constexpr bool pl_used(int q)
{
	for (int t = 0; t < TH; t++)
		for (int j = 0; j < KH; j++)
			if (t * SH + j * DH == q)
				return true;
	return false;
}
#endif

#if defined(VARIANT_walk)

/* Grid (capped): the blocks walk (plane and depth, group of TH output rows,
 * group of BLOCK * OUTS output columns) with a grid stride, the place
 * found once per block; thread t of a block takes the OUTS columns from
 * (group * BLOCK + t) * OUTS. */
/* (min blocks 1: with BLOCK alone ptxas aims at 64 registers for the
 * small blocks and spills the partials; the plan's constraint bounds them) */
extern "C" __global__ void __launch_bounds__(BLOCK, 1)
pool_walk(const real *__restrict__ x, real *__restrict__ y, long long planes,
	long long in_d, long long in_h, long long in_w,
	long long out_d, long long out_h, long long out_w)
{
	/* block places in 32 bits (the plan's constraint: fewer than 2^32),
	 * whose division is inline, not a call */
	const unsigned ncb = (unsigned)((out_w + (long long)BLOCK * OUTS - 1) / ((long long)BLOCK * OUTS));
	const unsigned nrt = (unsigned)((out_h + TH - 1) / TH);
	const unsigned nb = (unsigned)(planes * out_d) * nrt * ncb;

	for (unsigned b = blockIdx.x; b < nb; b += gridDim.x) {
		const unsigned cb = b % ncb, rt = b / ncb % nrt, pz = b / ncb / nrt;
		const unsigned z = pz % (unsigned)out_d, p = pz / (unsigned)out_d;
		const long long c = ((long long)cb * BLOCK + threadIdx.x) * OUTS;
		if (c >= out_w)
			continue;
		const real *xp = x + (long long)p * in_d * in_h * in_w;
		real *yp = y + ((long long)pz * out_h + (long long)rt * TH) * out_w;
		/* (signed: the padding takes them below 0) */
		const long long z0 = (long long)z * SD - PD, r0 = (long long)rt * TH * SH - PH;
		const long long c0 = (long long)c * SW - PW;
		/* every column of the group's span inside x: no check per value */
		const bool inner_w = c0 >= 0 && c0 + SPAN <= in_w;
		const bool vec = pl_vec_rows(x, in_w);
		float h[RHW][OUTS];

#if PREFETCH
		/* every vector of every row (and depth) the windows reach loaded
		 * first, all in flight at once, then folded */
		if (vec) {
			pl_vec f[RHW * KD][NV];
			bool vin[RHW * KD][NV];
#pragma unroll
			for (int q = 0; q < RHW; q++)
#pragma unroll
				for (int i = 0; i < KD; i++) {
					const long long rq = r0 + q, zi = z0 + i * DD;
					pl_span_load(xp + (zi * in_h + rq) * in_w, c0, in_w, inner_w,
						pl_used(q) && rq >= 0 && rq < in_h && zi >= 0 && zi < in_d,
						f[q * KD + i], vin[q * KD + i]);
				}
#pragma unroll
			for (int q = 0; q < RHW; q++) {
#pragma unroll
				for (int o = 0; o < OUTS; o++)
					h[q][o] = pl_neutral();
				if (!pl_used(q))
					continue;
#pragma unroll
				for (int i = 0; i < KD; i++) {
					float s[SPAN];
					bool in[SPAN];
					pl_span_unpack(f[q * KD + i], vin[q * KD + i], s, in);
					pl_fold_span(s, in, h[q]);
				}
			}
		} else
#endif
#pragma unroll
		for (int q = 0; q < RHW; q++) {
#pragma unroll
			for (int o = 0; o < OUTS; o++)
				h[q][o] = pl_neutral();
			const long long rq = r0 + q;
			if (!pl_used(q))
				continue;
			/* (a row outside x skips each depth, not the row at once:
			 * that continue cost ptxas a stack frame) */
			const bool row_in = rq >= 0 && rq < in_h;
#pragma unroll
			for (int i = 0; i < KD; i++) {
				const long long zi = z0 + i * DD;
				if (!row_in || zi < 0 || zi >= in_d)
					continue;
				float s[SPAN];
				bool in[SPAN];
				pl_span(xp + (zi * in_h + rq) * in_w, c0, in_w, inner_w, vec, s, in);
				pl_fold_span(s, in, h[q]);
			}
		}
		/* each output: its KH rows' partials */
		const bool inner_d = z0 >= 0 && z0 + (KD - 1) * DD < in_d;
#pragma unroll
		for (int t = 0; t < TH; t++) {
			/* (continue, not break: a break out of the unrolled loop
			 * costs ptxas a stack frame) */
			if ((long long)rt * TH + t >= out_h)
				continue;
			const long long rs = r0 + t * SH;
			const bool inner = inner_w && inner_d && rs >= 0 && rs + (KH - 1) * DH < in_h;
#pragma unroll
			for (int o = 0; o < OUTS; o++) {
				if (c + o >= out_w)
					continue;
				float v = pl_neutral();
#pragma unroll
				for (int j = 0; j < KH; j++)
					pl_merge(v, h[t * SH + j * DH][o]);
				yp[t * out_w + c + o] = pl_out(v, inner, z0, rs, c0 + o * SW, in_d, in_h, in_w);
			}
		}
	}
}
#endif

#if defined(VARIANT_stream)
/* The slices (depths) a window shares with the next output depth's: the
 * next window's slice i is this one's i + SHIFT where the depth stride is
 * a multiple of the dilation; none otherwise. */
#define SHIFT (SD % DD == 0 && SD / DD < KD ? SD / DD : KD)

/* The vectors of input slice zi's rows from r0 that some window uses
 * (their spans from column c0), and whether each is inside x: none is
 * where the slice or a row is outside x, or the lane has no outputs
 * (!live). */
static __device__ __forceinline__ void pl_slice_load(const real *__restrict__ xp, long long zi,
	long long r0, long long c0, long long in_d, long long in_h, long long in_w, bool inner_w,
	bool live, pl_vec (&f)[RHW][NV], bool (&vin)[RHW][NV])
{
	const bool slice = live && zi >= 0 && zi < in_d;
	const real *xz = xp + zi * in_h * in_w;

#pragma unroll
	for (int q = 0; q < RHW; q++)
		pl_span_load(xz + (r0 + q) * in_w, c0, in_w, inner_w,
			slice && pl_used(q) && r0 + q >= 0 && r0 + q < in_h, f[q], vin[q]);
}

/* P: a slice's row partials from its vectors (pl_slice_load), each used
 * row's span folded along w into OUTS partials; the op's neutral value
 * where nothing is inside x. */
static __device__ __forceinline__ void pl_slice_fold(const pl_vec (&f)[RHW][NV],
	const bool (&vin)[RHW][NV], float (&P)[RHW][OUTS])
{
#pragma unroll
	for (int q = 0; q < RHW; q++) {
#pragma unroll
		for (int o = 0; o < OUTS; o++)
			P[q][o] = pl_neutral();
		if (!pl_used(q))
			continue;
		float s[SPAN];
		bool in[SPAN];
		pl_span_unpack(f[q], vin[q], s, in);
		pl_fold_span(s, in, P[q]);
	}
}

/* P: the row partials of input slice zi for the TH output rows from r0,
 * as pl_slice_load and pl_slice_fold make them (VEC: pl_vec_rows), or
 * from its values one by one. */
template <bool VEC>
static __device__ __forceinline__ void pl_slice(const real *__restrict__ xp, long long zi,
	long long r0, long long c0, long long in_d, long long in_h, long long in_w, bool inner_w,
	bool live, float (&P)[RHW][OUTS])
{
	if (VEC) {
		pl_vec f[RHW][NV];
		bool vin[RHW][NV];
		pl_slice_load(xp, zi, r0, c0, in_d, in_h, in_w, inner_w, live, f, vin);
		pl_slice_fold(f, vin, P);
		return;
	}
	const bool slice = live && zi >= 0 && zi < in_d;
	const real *xz = xp + zi * in_h * in_w;

#pragma unroll
	for (int q = 0; q < RHW; q++) {
#pragma unroll
		for (int o = 0; o < OUTS; o++)
			P[q][o] = pl_neutral();
		if (!pl_used(q) || !slice || r0 + q < 0 || r0 + q >= in_h)
			continue;
		float s[SPAN];
		bool in[SPAN];
		pl_span(xz + (r0 + q) * in_w, c0, in_w, inner_w, false, s, in);
		pl_fold_span(s, in, P[q]);
	}
}

#if SMEM
/* SMEM: a block of BLOCK x TY threads (TY row groups of TH rows each, as
 * many apart as a group is tall) stages each new slice's band of input
 * rows once in shared memory, by 16-byte asynchronous copies (zeros for
 * vectors outside x), NBUF bands deep: the RB rows its windows reach, CBW
 * values wide from column CB0 (a vector boundary), so that the rows the
 * row groups share are read from L2 once, not once per group. */
#define RB ((TY * TH - 1) * SH + (KH - 1) * DH + 1)
#define CBW (((BLOCK * OUTS - 1) * SW + (KW - 1) * DW + 1 + 2 * VW + VW - 1) / VW * VW)
#define NBUF (1 + DBUF)
#define BANDV (RB * CBW / VW)

/* Starts the copies of slice zi's band (rows from R0, columns from CB0)
 * into band; each thread of the block a share. */
static __device__ __forceinline__ void pl_band_fill(real *band, const real *__restrict__ xp,
	long long zi, long long R0, long long CB0, long long in_d, long long in_h, long long in_w)
{
	const bool slice = zi >= 0 && zi < in_d;
	const real *xz = xp + zi * in_h * in_w;

	for (int e = threadIdx.y * BLOCK + threadIdx.x; e < BANDV; e += BLOCK * TY) {
		const int rr = e / (CBW / VW), vv = e % (CBW / VW);
		const long long r = R0 + rr, col = CB0 + (long long)vv * VW;
		/* (rows are whole vectors: a vector is inside x or not at all) */
		const bool in = slice && r >= 0 && r < in_h && col >= 0 && col < in_w;
		pl_copy16(band + rr * CBW + vv * VW, in ? xz + r * in_w + col : xp, in);
	}
	asm volatile("cp.async.commit_group;" ::: "memory");
}

/* As pl_slice_load, from a staged band (its row q0 this thread's first,
 * its column CB0 x's): the vectors of the rows from r0 that some window
 * uses, and whether each is inside x. */
static __device__ __forceinline__ void pl_band_load(const real *band, int q0, long long CB0,
	long long zi, long long r0, long long c0, long long in_d, long long in_h, long long in_w,
	bool inner_w, bool live, pl_vec (&f)[RHW][NV], bool (&vin)[RHW][NV])
{
	const bool slice = live && zi >= 0 && zi < in_d;

#pragma unroll
	for (int q = 0; q < RHW; q++) {
		const bool row = slice && pl_used(q) && r0 + q >= 0 && r0 + q < in_h;
		const real *br = band + (q0 + q) * CBW + (c0 - VOFF - CB0);
#pragma unroll
		for (int v = 0; v < NV; v++) {
			const long long cv = c0 - VOFF + v * VW;
			vin[q][v] = row && (inner_w || (cv >= 0 && cv < in_w));
			f[q][v] = pl_vec{};
			if (vin[q][v])
				f[q][v] = *reinterpret_cast<const pl_vec *>(br + v * VW);
		}
	}
}
#endif

/* The outputs of one block place of pool_stream: plane p, the chunk of
 * ZC output depths from za, the TH output rows from rt * TH, this lane's
 * OUTS columns from c (cw the warp's first); VEC: pl_vec_rows. With SMEM
 * (and VEC) the block's threads take part together: every one of them
 * runs the loop, whatever its rows and columns (R0 and CB0 the band's
 * first row and column). (A template: with both the vector and the
 * scalar loads in the loop, ptxas holds the invariants of both, 229
 * registers against 85.) */
template <bool VEC>
static __device__ __forceinline__ void pl_chunk(const real *__restrict__ x, real *__restrict__ y,
	real *st, real *band, unsigned p, long long za, unsigned rt, long long R0, long long CB0,
	long long cw, long long c, long long in_d, long long in_h, long long in_w, long long out_d,
	long long out_h, long long out_w)
{
	const bool live = c < out_w && (long long)rt * TH < out_h;
	const real *xp = x + (long long)p * in_d * in_h * in_w;
	/* (signed: the padding takes them below 0) */
	const long long r0 = (long long)rt * TH * SH - PH, c0 = c * SW - PW;
	/* every column of the group's span inside x: no check per value */
	const bool inner_w = live && c0 >= 0 && c0 + SPAN <= in_w;
	const long long zb = min(za + ZC, out_d);
	float P[KD][RHW][OUTS];
#if SMEM
	const int q0 = (int)(r0 - R0);
	/* the bands staged in order: slice n the n % SHIFT-th new one of
	 * output depth za + n / SHIFT */
	const long long nslices = (zb - za) * SHIFT;
	long long n = 0;
	if (VEC)
		pl_band_fill(band, xp, za * SD - PD + (KD - SHIFT) * DD, R0, CB0, in_d, in_h, in_w);
#else
	(void)band, (void)R0, (void)CB0;
#endif

	/* the chunk's first window's slices that a window would share with
	 * the one before, where the loop's move takes them from */
#pragma unroll
	for (int i = 0; i < KD - SHIFT; i++)
		pl_slice<VEC>(xp, za * SD - PD + i * DD, r0, c0, in_d, in_h, in_w, inner_w, live,
			P[i + SHIFT]);
	/* (not unrolled: its copies' loads would all be in registers) */
#pragma unroll 1
	for (long long z = za; z < zb; z++) {
		const long long z0 = z * SD - PD;
		/* the slices this window shares with the last one's, moved down;
		 * the rest loaded */
#pragma unroll
		for (int i = 0; i < KD - SHIFT; i++)
#pragma unroll
			for (int q = 0; q < RHW; q++)
#pragma unroll
				for (int o = 0; o < OUTS; o++)
					P[i][q][o] = P[i + SHIFT][q][o];
		/* the row and column, opaque to ptxas in each iteration: hoisting
		 * what they give every load out of the loop took all registers */
		long long rq = r0, cq = c0;
		asm volatile("" : "+l"(rq), "+l"(cq));
#if SMEM
		if (VEC) {
#pragma unroll
			for (int i = 0; i < SHIFT; i++, n++) {
				const real *cur = band + (n % NBUF) * (RB * CBW);
				/* slice n staged (this thread's copies, then everyone's);
				 * everyone done with the band the next fill overwrites */
				asm volatile("cp.async.wait_all;" ::: "memory");
				__syncthreads();
				if (NBUF > 1 && n + 1 < nslices)
					pl_band_fill(band + ((n + 1) % NBUF) * (RB * CBW), xp,
						(za + (n + 1) / SHIFT) * SD - PD + (KD - SHIFT + (n + 1) % SHIFT) * DD,
						R0, CB0, in_d, in_h, in_w);
				pl_vec f[RHW][NV];
				bool vin[RHW][NV];
				pl_band_load(cur, q0, CB0, z0 + (KD - SHIFT + i) * DD, rq, cq, in_d, in_h,
					in_w, inner_w, live, f, vin);
				pl_slice_fold(f, vin, P[KD - SHIFT + i]);
				if (NBUF == 1 && n + 1 < nslices) {
					__syncthreads();
					pl_band_fill(band, xp,
						(za + (n + 1) / SHIFT) * SD - PD + (KD - SHIFT + (n + 1) % SHIFT) * DD,
						R0, CB0, in_d, in_h, in_w);
				}
			}
		} else
#endif
		if (VEC) {
			/* the new slices' vectors all in flight at once, then folded */
			pl_vec f[SHIFT][RHW][NV];
			bool vin[SHIFT][RHW][NV];
#pragma unroll
			for (int i = 0; i < SHIFT; i++)
				pl_slice_load(xp, z0 + (KD - SHIFT + i) * DD, rq, cq, in_d, in_h, in_w,
					inner_w, live, f[i], vin[i]);
#pragma unroll
			for (int i = 0; i < SHIFT; i++)
				pl_slice_fold(f[i], vin[i], P[KD - SHIFT + i]);
		} else {
#pragma unroll
			for (int i = KD - SHIFT; i < KD; i++)
				pl_slice<VEC>(xp, z0 + i * DD, rq, cq, in_d, in_h, in_w, inner_w, live,
					P[i]);
		}
		real *yp = y + (((long long)p * out_d + z) * out_h + (long long)rt * TH) * out_w;
		const bool inner_d = z0 >= 0 && z0 + (KD - 1) * DD < in_d;
#pragma unroll
		for (int t = 0; t < TH; t++) {
			/* (continue, not break: see walk) */
			if ((long long)rt * TH + t >= out_h)
				continue;
			const long long rs = r0 + t * SH;
			const bool inner = inner_w && inner_d && rs >= 0 && rs + (KH - 1) * DH < in_h;
			real r[OUTS];
#pragma unroll
			for (int o = 0; o < OUTS; o++) {
				float v = pl_neutral();
#pragma unroll
				for (int i = 0; i < KD; i++)
#pragma unroll
					for (int j = 0; j < KH; j++)
						pl_merge(v, P[i][t * SH + j * DH][o]);
				r[o] = pl_out(v, inner, z0, rs, c0 + o * SW, in_d, in_h, in_w);
			}
			pl_store(st, yp + t * out_w, cw, out_w, r);
		}
	}
#if SMEM
	/* (the band is free for the block's next place once all are done) */
	if (VEC)
		__syncthreads();
#endif
}

/* Grid (capped): the blocks walk (plane, chunk of ZC output depths, group
 * of TY * TH output rows, group of BLOCK * OUTS output columns) with a
 * grid stride, the place found once per block; thread (t, g) takes the
 * OUTS columns from (group * BLOCK + t) * OUTS of the TH rows of row group
 * g, and walks the chunk's output depths in order. It keeps the row
 * partials of each of the KD slices of the current depth's window (P[i],
 * slice z * SD - PD + i * DD): the next depth's window shares KD - SHIFT
 * of them, so only SHIFT slices are loaded per output depth, and each
 * slice once per chunk. A warp whose first column is inside the row
 * takes part whole (pl_store); with SMEM every thread of the block. */
/* (min blocks for 512 threads an SM: 128 registers, which the plan's
 * constraint on the partials fits; with fewer blocks ptxas takes all 255
 * for loads in flight) */
extern "C" __global__ void __launch_bounds__(BLOCK * TY, (512 + BLOCK * TY - 1) / (BLOCK * TY))
pool_stream(const real *__restrict__ x, real *__restrict__ y, long long planes,
	long long in_d, long long in_h, long long in_w,
	long long out_d, long long out_h, long long out_w)
{
	__shared__ real pl_st[BLOCK * TY / 32][PL_STW];
#if SMEM
	extern __shared__ __align__(16) unsigned char pl_dyn[];
	real *band = reinterpret_cast<real *>(pl_dyn);
#else
	real *band = nullptr;
#endif
	/* block places in 32 bits (the plan's constraint: fewer than 2^32),
	 * whose division is inline, not a call */
	const unsigned ncb = (unsigned)((out_w + (long long)BLOCK * OUTS - 1) / ((long long)BLOCK * OUTS));
	const unsigned nrt = (unsigned)((out_h + TH * TY - 1) / (TH * TY));
	const unsigned nzc = (unsigned)((out_d + ZC - 1) / ZC);
	const unsigned nb = (unsigned)planes * nzc * nrt * ncb;
	const bool vec = pl_vec_rows(x, in_w);
	const int lane = threadIdx.x % 32;
	real *st = pl_st[(threadIdx.y * BLOCK + threadIdx.x) / 32];

	for (unsigned b = blockIdx.x; b < nb; b += gridDim.x) {
		const unsigned cb = b % ncb, rg = b / ncb % nrt, zc = b / ncb / nrt % nzc;
		const unsigned p = b / ncb / nrt / nzc, rt = rg * TY + threadIdx.y;
		const long long cw = ((long long)cb * BLOCK + (threadIdx.x - lane)) * OUTS;
		const long long c = cw + (long long)lane * OUTS, za = (long long)zc * ZC;
		/* the band's first row and column (a vector boundary) */
		const long long R0 = (long long)rg * TY * TH * SH - PH;
		const long long CB0 = (long long)cb * BLOCK * OUTS * SW - PW - VOFF;
		if (vec) {
			/* (the same for the warp's lanes, and with SMEM for the block's) */
			if (!SMEM && (cw >= out_w || (long long)rt * TH >= out_h))
				continue;
			pl_chunk<true>(x, y, st, band, p, za, rt, R0, CB0, cw, c, in_d, in_h, in_w,
				out_d, out_h, out_w);
		} else {
			if (cw >= out_w || (long long)rt * TH >= out_h)
				continue;
			pl_chunk<false>(x, y, st, band, p, za, rt, R0, CB0, cw, c, in_d, in_h, in_w,
				out_d, out_h, out_w);
		}
	}
}
#endif

#if defined(VARIANT_roll)
/* roll: a block walks the TH output rows of a band of one plane in order,
 * its input rows streamed through a ring of RNR rows in shared memory,
 * AHEAD of them in flight (cp.async) while it folds the current one.
 * Each thread folds the new row along w into OUTS partials and keeps the
 * partials of the last NHR rows in registers, in NHR slots taken in turn;
 * an output row is due when its window's last row has come, and folds its
 * KH rows' partials. Each input row is read once per band (the
 * band's (TH - 1) * SH + NHR rows for TH output rows). */
#define NHR ((KH - 1) * DH + 1)
#define RNR (AHEAD + 2)
/* a ring row's values: the block's span from CB0 (a vector boundary),
 * with room for the last thread's NV vectors */
#define RCWV (((BLOCK - 1) * OUTS * SW + SPAN + 2 * VW - 2 + VW - 1) / VW * VW)
/* a thread's span read from shared memory as vectors: its first column
 * VOFF into a vector, the same for every thread */
#define PL_RVEC ((OUTS * SW) % VW == 0)

#if KD != 1 || SD != 1 || PD != 0
#error "roll walks the rows of one depth: kd and sd 1, pd 0 (planes * depths planes)"
#endif

/* VEC: the ring row's vectors a thread copies, e = threadIdx.x + i * BLOCK
 * of its RCWV / VW (column CB0 + e * VW of x), and which of them lie
 * inside x (bit i), found once per band: those outside are never copied,
 * and the fold masks their columns. */
#define PL_RFV ((RCWV / VW + BLOCK - 1) / BLOCK)
static __device__ __forceinline__ unsigned long long pl_ring_copies(long long CB0, long long in_w)
{
	static_assert(PL_RFV <= 64, "roll: a thread's copies of a ring row are marked in 64 bits");
	unsigned long long m = 0;
#pragma unroll
	for (int i = 0; i < PL_RFV; i++) {
		const int e = threadIdx.x + i * BLOCK;
		const long long col = CB0 + (long long)e * VW;
		if (e < RCWV / VW && col >= 0 && col < in_w)
			m |= 1ull << i;
	}
	/* (opaque: else the compiler tests the columns again at every row) */
	asm("mov.b64 %0, %0;" : "+l"(m));
	return m;
}

/* Starts the copies of input row r (columns from CB0) into ring row rr:
 * the thread's vectors inside x (VEC: rows are whole vectors; m from
 * pl_ring_copies) as 16-byte cp.async, else its values inside x loaded
 * and stored; nothing where the row is not in the band (!want) or not in
 * x. Every thread commits a group (VEC), empty or not, so that the groups
 * count rows. */
template <bool VEC>
static __device__ __forceinline__ void pl_ring_fill(real *rr, const real *__restrict__ xp,
	long long r, long long CB0, long long in_h, long long in_w, bool want, unsigned long long m)
{
	if (want && r >= 0 && r < in_h) {
		if (VEC) {
			const long long o = r * in_w + CB0 + (long long)threadIdx.x * VW;
#pragma unroll
			for (int i = 0; i < PL_RFV; i++)
				if ((m >> i) & 1)
					pl_copy16(rr + (threadIdx.x + i * BLOCK) * VW, xp + o + i * BLOCK * VW, true);
		} else {
			const real *xr = xp + r * in_w;
			for (int e = threadIdx.x; e < RCWV; e += BLOCK) {
				const long long col = CB0 + e;
				if (col >= 0 && col < in_w)
					rr[e] = xr[col];
			}
		}
	}
	if (VEC)
		asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Which of a span's SPAN values, from column c0 of x on, lie inside x
 * along w: bit k for column c0 + k (the same for every row). */
static __device__ __forceinline__ unsigned long long pl_span_inside(long long c0, long long in_w)
{
	static_assert(SPAN <= 64, "roll: a span's places are marked in 64 bits");
	unsigned long long m = 0;
#pragma unroll
	for (int k = 0; k < SPAN; k++)
		if (c0 + k >= 0 && c0 + k < in_w)
			m |= 1ull << k;
	/* (opaque: else the compiler tests the columns again at every row) */
	asm("mov.b64 %0, %0;" : "+l"(m));
	return m;
}

/* The SPAN values of this thread's span in ring row rr (its first column
 * c0, x's, at rr[c0 - CB0]), mapped, the neutral value where outside x
 * (bit k of inside clear; those places of the ring are never written):
 * read as vectors where rows are whole vectors (VEC) and every thread's
 * span starts at the same place in one (PL_RVEC), else one by one. */
template <bool VEC>
static __device__ __forceinline__ void pl_ring_span(const real *rr, long long c0, long long CB0,
	unsigned long long inside, float (&m)[SPAN])
{
	float s[SPAN];
	if (VEC && PL_RVEC) {
		pl_vec f[NV];
		bool vin[NV], in[SPAN];
		const real *br = rr + (c0 - VOFF - CB0);
#pragma unroll
		for (int v = 0; v < NV; v++) {
			vin[v] = true;
			f[v] = *reinterpret_cast<const pl_vec *>(br + v * VW);
		}
		pl_span_unpack(f, vin, s, in);
	} else {
#pragma unroll
		for (int k = 0; k < SPAN; k++)
			s[k] = real_f(rr[c0 - CB0 + k]);
	}
#pragma unroll
	for (int k = 0; k < SPAN; k++)
		m[k] = (inside >> k) & 1 ? PL_MAP(s[k]) : pl_neutral();
}

/* p merged into the neutral value: p itself for a keep (max.NaN and
 * min.NaN of the extreme and p give p), combine(identity, p) for a fold. */
static __device__ __forceinline__ float pl_first(float p)
{
#if PL_KEEP == 0
	float v = pl_neutral();
	pl_merge(v, p);
	return v;
#else
	return p;
#endif
}

/* Folds a mapped span m (pl_ring_span) into its OUTS windows' partials:
 * window o takes values o * SW + k * DW of the span, k < KW. */
static __device__ __forceinline__ void pl_fold_mapped(const float (&m)[SPAN], float (&v)[OUTS])
{
#pragma unroll
	for (int o = 0; o < OUTS; o++) {
		v[o] = pl_first(m[o * SW]);
#pragma unroll
		for (int k = 1; k < KW; k++)
			pl_merge(v[o], m[o * SW + k * DW]);
	}
}

/* Band rt of plane p, the block's columns from group cb: every thread of
 * the block runs the loop (the ring is the block's), whatever its
 * columns. VEC: rows are whole vectors. (A template: one register set
 * for each path, as stream's.) The loop is unrolled NHR steps at a time,
 * so that row q's partials sit in h[q % NHR] with no shifting: the band's
 * steps start at 0, a multiple of NHR. */
template <bool VEC>
static __device__ __forceinline__ void pl_band_roll(const real *__restrict__ x,
	real *__restrict__ y, real *ring, real *st, unsigned p, unsigned rt, unsigned cb,
	long long in_h, long long in_w, long long out_h, long long out_w)
{
	const int lane = threadIdx.x % 32;
	const long long cw = ((long long)cb * BLOCK + (threadIdx.x - lane)) * OUTS;
	const long long c = cw + (long long)lane * OUTS;
	const real *xp = x + (long long)p * in_h * in_w;
	real *yp = y + ((long long)p * out_h + (long long)rt * TH) * out_w;
	/* (signed: the padding takes them below 0) */
	const long long R0 = (long long)rt * TH * SH - PH, c0 = c * SW - PW;
	const long long CB0 = (long long)cb * BLOCK * OUTS * SW - PW - VOFF;
	const bool live = c < out_w;
	/* the columns of the thread's span inside x, and its copies */
	const unsigned long long inside = pl_span_inside(c0, in_w);
	const unsigned long long copies = VEC ? pl_ring_copies(CB0, in_w) : 0;
	/* every column of the thread's span inside x (a fold's divisor) */
	const bool inner_w = live && c0 >= 0 && c0 + SPAN <= in_w;
	/* the band's output rows, and the input rows their windows reach */
	const int nt = (int)min((long long)TH, out_h - (long long)rt * TH);
	const int nq = (nt - 1) * SH + NHR;
	real *const rend = ring + RNR * RCWV;
	float h[NHR][OUTS];

	/* the first AHEAD rows' copies, into ring rows 0 to AHEAD - 1 */
#pragma unroll 1
	for (int a = 0; a < AHEAD; a++)
		pl_ring_fill<VEC>(ring + a * RCWV, xp, R0 + a, CB0, in_h, in_w, a < nq, copies);
	/* t: the next output row, due when input row q reaches its window's
	 * last, t * SH + NHR - 1; rc: row q's ring row, rf: row q + AHEAD's */
	int t = 0, due = NHR - 1;
	real *rc = ring, *rf = ring + AHEAD * RCWV;
#pragma unroll 1
	for (int q0 = 0; q0 < nq; q0 += NHR) {
#pragma unroll
		for (int u = 0; u < NHR; u++) {
			const int q = q0 + u;
			if (q >= nq)
				break;
			/* row q + AHEAD into the ring row of row q - 2, which every
			 * thread is done with (all have passed row q - 1's barrier,
			 * and a row's ring row is read only at its own step) */
			pl_ring_fill<VEC>(rf, xp, R0 + q + AHEAD, CB0, in_h, in_w, q + AHEAD < nq, copies);
			rf = rf + RCWV == rend ? ring : rf + RCWV;
			/* row q's copies landed (this thread's, then everyone's) */
			if (VEC)
				asm volatile("cp.async.wait_group %0;" :: "n"(AHEAD) : "memory");
			__syncthreads();
			const long long r = R0 + q;
			if (live && r >= 0 && r < in_h) {
				float m[SPAN];
				pl_ring_span<VEC>(rc, c0, CB0, inside, m);
				pl_fold_mapped(m, h[u]);
			} else {
#pragma unroll
				for (int o = 0; o < OUTS; o++)
					h[u][o] = pl_neutral();
			}
			rc = rc + RCWV == rend ? ring : rc + RCWV;
			if (q != due)
				continue;
			/* output row t: its window's rows q - NHR + 1 + j * DH sit
			 * in h[(u + 1 + j * DH) % NHR] */
			const long long rs = R0 + (long long)t * SH;
			const bool inner = inner_w && rs >= 0 && rs + NHR - 1 < in_h;
			real res[OUTS];
#pragma unroll
			for (int o = 0; o < OUTS; o++) {
				float v = pl_first(h[(u + 1) % NHR][o]);
#pragma unroll
				for (int j = 1; j < KH; j++)
					pl_merge(v, h[(u + 1 + j * DH) % NHR][o]);
				res[o] = pl_out(v, inner, 0, rs, c0 + o * SW, 1, in_h, in_w);
			}
			/* (the warp's lanes together: pl_store's STAGE) */
			if (cw < out_w)
				pl_store(st, yp + (long long)t * out_w, cw, out_w, res);
			t++;
			due += SH;
		}
	}
	/* (the ring is free for the block's next band once all are done) */
	__syncthreads();
}
/* Grid (capped): the blocks walk (plane, band of TH output rows, group of
 * BLOCK * OUTS output columns) with a grid stride, the place found once
 * per block; thread t takes the OUTS columns from (group * BLOCK + t) *
 * OUTS of every row of the band. Dynamic shared memory: the ring, RNR
 * rows of RCWV values. */
/* (min blocks 1: with BLOCK alone ptxas aimed at 64 registers and spilled
 * at AHEAD 6, as walk's) */
extern "C" __global__ void __launch_bounds__(BLOCK, 1)
pool_roll(const real *__restrict__ x, real *__restrict__ y, long long planes,
	long long in_d, long long in_h, long long in_w,
	long long out_d, long long out_h, long long out_w)
{
	__shared__ real pl_st[BLOCK / 32][PL_STW];
	extern __shared__ __align__(16) unsigned char pl_dyn[];
	real *ring = reinterpret_cast<real *>(pl_dyn);
	/* block places in 32 bits (the plan's constraint: fewer than 2^32),
	 * whose division is inline, not a call */
	const unsigned ncb = (unsigned)((out_w + (long long)BLOCK * OUTS - 1) / ((long long)BLOCK * OUTS));
	const unsigned nrt = (unsigned)((out_h + TH - 1) / TH);
	const unsigned nb = (unsigned)(planes * out_d) * nrt * ncb;
	/* rows whole, aligned vectors: copied by cp.async */
	const bool vec = in_w % VW == 0 && reinterpret_cast<unsigned long long>(x) % 16 == 0;
	real *st = pl_st[threadIdx.x / 32];
	(void)in_d, (void)out_d;

	for (unsigned b = blockIdx.x; b < nb; b += gridDim.x) {
		const unsigned cb = b % ncb, rt = b / ncb % nrt, p = b / ncb / nrt;
		if (vec)
			pl_band_roll<true>(x, y, ring, st, p, rt, cb, in_h, in_w, out_h, out_w);
		else
			pl_band_roll<false>(x, y, ring, st, p, rt, cb, in_h, in_w, out_h, out_w);
	}
}
#endif
