/* mid_reduce family: x has shape (outer, reduce, inner); out[o][i] = op over
 * r of x[o][r][i]. The op is the task's, as expressions (docs/templates.md):
 * a fold, v = combine(v, map(x)) from its identity, then finalize(v, n)
 * with n the length reduced; or one that keeps the maximum or the minimum
 * of map(x), its value or its int64 index (the first one; NaN counts as
 * the extreme, as in torch); or a softmax statistic (MR_STAT): the running
 * maximum m of x and s, the sum of exp(x - m), rescaled when m grows, the
 * result MR_STAT_FINAL(m, s) (logsumexp: m + log(s)) where m is finite and
 * m itself where it is infinite or NaN (PyTorch's logsumexp: inf for a row
 * holding inf, -inf for one of -inf alone, NaN for one holding NaN).
 * A thread owns VEC outputs and walks r: consecutive threads own
 * consecutive i, so every load of a warp is coalesced; UNROLL steps of r
 * are loaded before the first is used. One read of x: the floor.
 *   thread: one thread per VEC outputs; VEC adjacent outputs (one vector
 *           load per r) when inner % VEC == 0, else VEC outputs BLOCK apart
 *           (VEC coalesced scalar loads per r).
 *   split:  the r range split over SPLIT blocks (grid y) with partial
 *           results in a workspace and a second kernel that combines them
 *           in order: for few outputs and long reductions.
 *   tile:   a block of 32 COLW x WARPS threads owns 32 COLW adjacent
 *           outputs; its WARPS row groups take the rows in turn (group w:
 *           rows w, w + WARPS, ...), so the block reads WARPS*UNROLL rows
 *           of 128 COLW bytes at once and neighbouring blocks read
 *           neighbouring columns; the groups' results meet in shared
 *           memory (argmax: the larger value, on a tie the smaller index).
 *           Rows whose length is not a multiple of 8 make every row of a
 *           strip start off a 32-byte sector: wider strips (COLW) share
 *           fewer sectors with their neighbours.
 *   row:    inner 1 (each output a row of reduce values side by side: a
 *           product's rows summed, KernelBench level 2's 55 and 56): a
 *           warp an output, lane l taking values VEC l to VEC l + VEC - 1
 *           of each 32 VEC, the lanes' results met by shuffles. The other
 *           variants' neighbouring threads would read rows reduce apart.
 * Indices are 64-bit. */
#define VARIANT_{{variant}} 1
/* The op: MR_KEEP 0 a fold, 1 the maximum, -1 the minimum; MR_INDEX the
 * output is the index kept. */
#define MR_KEEP ({{op_keep}})
#define MR_INDEX {{op_index}}
#define MR_MAP(x) ({{op_map}})
#define MR_COMBINE(a, b) ({{op_combine}})
#define MR_IDENTITY ({{op_identity}})
#define MR_FINALIZE(v, n) ({{op_finalize}})
#define MR_STAT {{op_softmax}}
#define MR_STAT_FINAL(m, s) ({{op_finalize}})
/* p beats q as the kept extreme */
#define MR_BEATS(p, q) (MR_KEEP > 0 ? (p) > (q) : (p) < (q))

#if defined(VARIANT_thread) || defined(VARIANT_split) || defined(VARIANT_row)
#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> mr_vec;
#endif

/* An output: an index (i64), or a value of the storage type, rounded from
 * the float result. */
#if MR_INDEX
typedef long long mr_res_t;
typedef long long mr_out_t;
static __device__ __forceinline__ mr_out_t mr_out(long long v) { return v; }
#else
typedef float mr_res_t;
typedef real mr_out_t;
static __device__ __forceinline__ mr_out_t mr_out(float v) { return real_of(v); }
#endif

#define MR_NEG_INF __int_as_float(0xff800000)

/* The running result of one output: v the fold or the extreme so far (a
 * statistic's maximum), k the index of the extreme (-1 before the first
 * value); a statistic's sum of exponentials s. */
struct mr_acc {
	float v;
	long long k;
#if MR_STAT
	float s;
#endif
};

static __device__ __forceinline__ mr_acc mr_init()
{
#if MR_STAT
	return {MR_NEG_INF, 0, 0.0f};
#elif MR_KEEP == 0
	return {MR_IDENTITY, 0};
#else
	return {MR_NEG_INF, -1};
#endif
}

/* Takes value x at index r; r grows from call to call. */
static __device__ __forceinline__ void mr_take(mr_acc &a, float x, long long r)
{
	const float y = MR_MAP(x);
#if MR_STAT
	(void)r;
	/* NaN sticks as the maximum (nothing is greater); -inf adds nothing;
	 * +inf again makes s NaN, which the result does not read */
	if (y != y || y > a.v) {
		a.s = y != y ? y : a.s * expf(a.v - y) + 1.0f;
		a.v = y;
	} else if (y != MR_NEG_INF) {
		a.s += expf(y - a.v);
	}
#elif MR_KEEP == 0
	a.v = MR_COMBINE(a.v, y);
#else
	/* the first extreme wins; NaN beats everything, the first NaN wins */
	if (MR_BEATS(y, a.v) || (y != y && a.v == a.v) || a.k < 0) {
		a.v = y;
		a.k = r;
	}
#endif
}

#if MR_STAT
/* Two statistics of disjoint values as one: the larger maximum (NaN
 * either side: NaN), each sum rescaled to it. */
static __device__ __forceinline__ mr_acc mr_stat_join(mr_acc a, mr_acc b)
{
	if (a.v != a.v || b.v != b.v)
		return {__int_as_float(0x7fffffff), 0, __int_as_float(0x7fffffff)};
	const float m = fmaxf(a.v, b.v);
	if (isinf(m))
		return {m, 0, 1.0f};
	return {m, 0, a.s * expf(a.v - m) + b.s * expf(b.v - m)};
}
#endif

#if defined(VARIANT_split)
/* a then b (b covers larger indices than a). */
static __device__ __forceinline__ mr_acc mr_merge(mr_acc a, mr_acc b)
{
#if MR_STAT
	return mr_stat_join(a, b);
#elif MR_KEEP == 0
	return {MR_COMBINE(a.v, b.v), 0};
#else
	if (b.k >= 0 && (a.k < 0 || MR_BEATS(b.v, a.v) || (b.v != b.v && a.v == a.v)))
		return b;
	return a;
#endif
}
#endif

/* The output of one accumulator over n values. */
static __device__ __forceinline__ mr_res_t mr_result(mr_acc a, long long n)
{
#if MR_INDEX
	return a.k < 0 ? 0 : a.k;
#elif MR_STAT
	(void)n;
	const float m = a.v, s = a.s;
	return m != m || isinf(m) ? m : MR_STAT_FINAL(m, s);
#elif MR_KEEP == 0
	const float v = a.v;
	(void)n;
	return MR_FINALIZE(v, n);
#else
	(void)n;
	return a.v;
#endif
}

#if defined(VARIANT_thread) || defined(VARIANT_split)
/* Reduces x[o][r][i] for r in [r0, r1) into acc[0..VEC) for the outputs
 * at flat positions pos[l] (o*inner + i, -1 for none), UNROLL steps of r
 * in flight. vec: the VEC positions are adjacent and aligned. */
static __device__ __forceinline__ void mr_walk(const real *__restrict__ x,
	long long reduce, long long inner, const long long (&pos)[VEC], bool vec,
	long long r0, long long r1, mr_acc (&acc)[VEC])
{
	long long base[VEC];

#pragma unroll
	for (int l = 0; l < VEC; l++)
		base[l] = pos[l] < 0 ? -1 : pos[l] / inner * reduce * inner + pos[l] % inner;
	if (vec && VEC > 1) {
		/* (adjacent positions past the end are all past it, since
		 * inner, and so outer * inner, is a multiple of VEC: nothing to
		 * read, and x + base[0] would be x - 1, off the vectors) */
		if (pos[0] < 0)
			return;
		const mr_vec *xv = reinterpret_cast<const mr_vec *>(x + base[0]);
		const long long sv = inner / VEC;
		long long r = r0;

		for (; r + UNROLL <= r1; r += UNROLL) {
			mr_vec v[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = rv_ldcs(xv + (r + u) * sv);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int l = 0; l < VEC; l++)
					mr_take(acc[l], v[u].at(l), r + u);
		}
		for (; r < r1; r++) {
			const mr_vec v = rv_ldcs(xv + r * sv);
#pragma unroll
			for (int l = 0; l < VEC; l++)
				mr_take(acc[l], v.at(l), r);
		}
		return;
	}
	long long r = r0;
	for (; r + UNROLL <= r1; r += UNROLL) {
		float v[UNROLL][VEC];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
#pragma unroll
			for (int l = 0; l < VEC; l++)
				if (base[l] >= 0)
					v[u][l] = real_ldcs(x + base[l] + (r + u) * inner);
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
#pragma unroll
			for (int l = 0; l < VEC; l++)
				if (base[l] >= 0)
					mr_take(acc[l], v[u][l], r + u);
	}
	for (; r < r1; r++)
#pragma unroll
		for (int l = 0; l < VEC; l++)
			if (base[l] >= 0)
				mr_take(acc[l], real_ldcs(x + base[l] + r * inner), r);
}

/* This thread's VEC output positions for block bx: adjacent when the
 * launch can use vectors (*vec set), else BLOCK apart. */
static __device__ __forceinline__ void mr_positions(const real *x, long long inner,
	long long npos, long long bx, long long (&pos)[VEC], bool &vec)
{
	vec = VEC > 1 && inner % VEC == 0 &&
		reinterpret_cast<unsigned long long>(x) % (VEC * REAL_BYTES) == 0;
#pragma unroll
	for (int l = 0; l < VEC; l++) {
		const long long p = vec ? (bx * BLOCK + threadIdx.x) * VEC + l :
			bx * BLOCK * VEC + (long long)l * BLOCK + threadIdx.x;
		pos[l] = p < npos ? p : -1;
	}
}

#endif

#if defined(VARIANT_thread)
/* Grid (cdiv(outer*inner, BLOCK*VEC)). */
extern "C" __global__ void __launch_bounds__(BLOCK)
mid_reduce_thread(const real *__restrict__ x, mr_out_t *__restrict__ out,
	long long outer, long long reduce, long long inner)
{
	long long pos[VEC];
	mr_acc acc[VEC];
	bool vec;

	mr_positions(x, inner, outer * inner, blockIdx.x, pos, vec);
#pragma unroll
	for (int l = 0; l < VEC; l++)
		acc[l] = mr_init();
	mr_walk(x, reduce, inner, pos, vec, 0, reduce, acc);
#pragma unroll
	for (int l = 0; l < VEC; l++)
		if (pos[l] >= 0)
			out[pos[l]] = mr_out(mr_result(acc[l], reduce));
}
#endif

#if defined(VARIANT_split)
/* Grid (cdiv(outer*inner, BLOCK*VEC), SPLIT): block y reduces r in
 * [reduce*y/SPLIT, reduce*(y+1)/SPLIT) into pv, pk[y * npos + p]. */
extern "C" __global__ void __launch_bounds__(BLOCK)
mid_reduce_partial(const real *__restrict__ x, float *__restrict__ pv,
	long long *__restrict__ pk, long long outer, long long reduce, long long inner)
{
	const long long npos = outer * inner;
	const long long r0 = reduce * blockIdx.y / SPLIT, r1 = reduce * (blockIdx.y + 1) / SPLIT;
	long long pos[VEC];
	mr_acc acc[VEC];
	bool vec;

	mr_positions(x, inner, npos, blockIdx.x, pos, vec);
#pragma unroll
	for (int l = 0; l < VEC; l++)
		acc[l] = mr_init();
	mr_walk(x, reduce, inner, pos, vec, r0, r1, acc);
#pragma unroll
	for (int l = 0; l < VEC; l++)
		if (pos[l] >= 0) {
			pv[blockIdx.y * npos + pos[l]] = acc[l].v;
#if MR_STAT
			/* a statistic keeps no index: its sum travels in pk */
			pk[blockIdx.y * npos + pos[l]] = __float_as_uint(acc[l].s);
#else
			pk[blockIdx.y * npos + pos[l]] = acc[l].k;
#endif
		}
}

/* Grid (cdiv(outer*inner, BLOCK)): combines the SPLIT partial results of
 * each output in order of r. */
extern "C" __global__ void __launch_bounds__(BLOCK)
mid_reduce_combine(const float *__restrict__ pv, const long long *__restrict__ pk,
	mr_out_t *__restrict__ out, long long npos, long long reduce)
{
	const long long p = (long long)blockIdx.x * BLOCK + threadIdx.x;
	mr_acc acc = mr_init();

	if (p >= npos)
		return;
	for (int s = 0; s < SPLIT; s++) {
#if MR_STAT
		acc = mr_merge(acc, mr_acc{pv[s * npos + p], 0,
			__uint_as_float((unsigned)pk[s * npos + p])});
#else
		acc = mr_merge(acc, mr_acc{pv[s * npos + p], pk[s * npos + p]});
#endif
	}
	out[p] = mr_out(mr_result(acc, reduce));
}
#endif

#if defined(VARIANT_tile) || defined(VARIANT_row)
/* a and b covering interleaved rows: the fold of both, or the extreme, on
 * a tie (or two NaNs) the smaller index. */
static __device__ __forceinline__ mr_acc mr_pick(mr_acc a, mr_acc b)
{
#if MR_STAT
	return mr_stat_join(a, b);
#elif MR_KEEP == 0
	return {MR_COMBINE(a.v, b.v), 0};
#else
	const bool an = a.v != a.v, bn = b.v != b.v;

	if (b.k < 0)
		return a;
	if (a.k < 0)
		return b;
	if (an || bn)
		return an && bn ? (b.k < a.k ? b : a) : (bn ? b : a);
	if (MR_BEATS(b.v, a.v) || (b.v == a.v && b.k < a.k))
		return b;
	return a;
#endif
}
#endif

#if defined(VARIANT_tile)
/* Loads of the tile variant: streaming (evict first) or plain, which keeps
 * the sectors that a block's misaligned rows share with its neighbours
 * in L2 for them. */
#if CACHE_HINT
#define MR_LOAD(p) real_ldcs(p)
#else
#define MR_LOAD(p) real_ldg(p)
#endif

#define MR_COLS (32 * COLW)

/* Grid (cdiv(outer*inner, 32 * COLW)), block (32 * COLW * WARPS). */
extern "C" __global__ void __launch_bounds__(MR_COLS * WARPS)
mid_reduce_tile(const real *__restrict__ x, mr_out_t *__restrict__ out,
	long long outer, long long reduce, long long inner)
{
	__shared__ mr_acc mr_part[WARPS][MR_COLS];
	const int c = threadIdx.x % MR_COLS, w = threadIdx.x / MR_COLS;
	const long long p = (long long)blockIdx.x * MR_COLS + c;
	const long long npos = outer * inner;
	mr_acc acc = mr_init();

	if (p < npos) {
		const real *col = x + p / inner * reduce * inner + p % inner;
		long long r = w;

		for (; r + (long long)(UNROLL - 1) * WARPS < reduce; r += (long long)UNROLL * WARPS) {
			float v[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = MR_LOAD(col + (r + (long long)u * WARPS) * inner);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				mr_take(acc, v[u], r + (long long)u * WARPS);
		}
		for (; r < reduce; r += WARPS)
			mr_take(acc, MR_LOAD(col + r * inner), r);
	}
	mr_part[w][c] = acc;
	__syncthreads();
	if (w == 0 && p < npos) {
		for (int i = 1; i < WARPS; i++)
			acc = mr_pick(acc, mr_part[i][c]);
		out[p] = mr_out(mr_result(acc, reduce));
	}
}
#endif

#if defined(VARIANT_row)
/* The accumulator of the lane lane ^ m. */
static __device__ __forceinline__ mr_acc mr_shfl(mr_acc a, int m)
{
	mr_acc b;

	b.v = __shfl_xor_sync(0xffffffffu, a.v, m);
	b.k = __shfl_xor_sync(0xffffffffu, a.k, m);
#if MR_STAT
	b.s = __shfl_xor_sync(0xffffffffu, a.s, m);
#endif
	return b;
}

/* Grid (cdiv(outer * inner, BLOCK / 32)), BLOCK threads: warp p of the
 * grid reduces output p, by vectors of VEC where its values lie side by
 * side (inner 1, reduce % VEC == 0, x aligned), UNROLL loads in flight,
 * else value by value, inner apart (correct at any size, the variant's
 * when aside); a lane's indices grow from take to take, as mr_take needs. */
extern "C" __global__ void __launch_bounds__(BLOCK)
mid_reduce_row(const real *__restrict__ x, mr_out_t *__restrict__ out,
	long long outer, long long reduce, long long inner)
{
	const long long p = (long long)blockIdx.x * (BLOCK / 32) + threadIdx.x / 32;
	const int lane = threadIdx.x & 31;
	mr_acc acc = mr_init();

	/* the warp returns whole: the shuffles below take every lane */
	if (p >= outer * inner)
		return;
	const real *row = x + p / inner * reduce * inner + p % inner;
	if (VEC > 1 && inner == 1 && reduce % VEC == 0 &&
	    reinterpret_cast<unsigned long long>(x) % (VEC * REAL_BYTES) == 0) {
		const mr_vec *rv = reinterpret_cast<const mr_vec *>(row);
		const long long nv = reduce / VEC;
		long long i = lane;

		for (; i + (long long)(UNROLL - 1) * 32 < nv; i += (long long)UNROLL * 32) {
			mr_vec v[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = rv_ldcs(rv + i + u * 32);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int l = 0; l < VEC; l++)
					mr_take(acc, v[u].at(l), (i + u * 32) * VEC + l);
		}
		for (; i < nv; i += 32) {
			const mr_vec v = rv_ldcs(rv + i);
#pragma unroll
			for (int l = 0; l < VEC; l++)
				mr_take(acc, v.at(l), i * VEC + l);
		}
	} else {
		long long r = lane;

		for (; r + (long long)(UNROLL * VEC - 1) * 32 < reduce; r += (long long)UNROLL * VEC * 32) {
			float v[UNROLL * VEC];
#pragma unroll
			for (int u = 0; u < UNROLL * VEC; u++)
				v[u] = real_ldcs(row + (r + u * 32) * inner);
#pragma unroll
			for (int u = 0; u < UNROLL * VEC; u++)
				mr_take(acc, v[u], r + u * 32);
		}
		for (; r < reduce; r += 32)
			mr_take(acc, real_ldcs(row + r * inner), r);
	}
#pragma unroll
	for (int m = 16; m > 0; m /= 2)
		acc = mr_pick(acc, mr_shfl(acc, m));
	if (lane == 0)
		out[p] = mr_out(mr_result(acc, reduce));
}
#endif
