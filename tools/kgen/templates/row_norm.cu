/* row_norm family: y = apply(x, the row's statistic) on each row of a rows
 * x cols matrix. The op is the task's, as expressions (docs/templates.md),
 * of one of two kinds:
 *   softmax: the statistic is the row's max m and s, the sum of exp(x - m),
 *            found in one read (online: the running sum is rescaled when
 *            the max grows); apply sees x, m, s, e = exp(x - m), rs = 1/s
 *            and ls = log(s) (softmax: e * rs; log_softmax: x - m - ls);
 *   a fold:  v = finalize(the combine of map(x) over the row, cols), and
 *            apply sees x and v (l1: v = cols / sum|x|, y = x * v).
 * Variants (docs/templates.md says which pays where):
 *   cluster: a thread-block cluster of CLUSTER blocks per row; each block
 *            keeps its share of the row in shared memory, the blocks swap
 *            their partial statistics through distributed shared memory,
 *            then write the output from shared memory: one read and one
 *            write of the data (the floor), for rows up to ~CLUSTER*225 KB.
 *   block:   one block per row: a statistics pass (read), then the output
 *            pass (read again, write): 3 passes (the second read hits L2
 *            only when the rows in flight fit there).
 *   split:   SPLIT blocks per row, two kernels: partial statistics into a
 *            workspace, then each block combines its row's and writes its
 *            share: 3 passes, for few long rows.
 * Tensors are f32, f16 or bf16 in memory (real.cuh), float in registers.
 * Rows are not vector-aligned when cols is not a multiple of VEC: each row
 * has a scalar head up to its first aligned vector and a scalar tail.
 * Indices are 64-bit. */
#define VARIANT_{{variant}} 1
#define RN_SOFTMAX {{op_softmax}}
#define RN_MAP(x) ({{op_map}})
#define RN_COMBINE(a, b) ({{op_combine}})
#define RN_IDENTITY ({{op_identity}})
#define RN_FINALIZE(v, n) ({{op_finalize}})

#if defined(VARIANT_cluster)
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#endif

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh): 16 bytes at most */
typedef realv<VEC> rn_vec;

#ifndef CACHE_HINT
#define CACHE_HINT 1
#endif

/* A row's statistic, or part of one. softmax: m the max so far and s the
 * sum of exp(x - m) (softmax.cuh); a fold: s the fold so far. */
typedef sm_stat rn_stat;

static __device__ __forceinline__ rn_stat rn_identity()
{
#if RN_SOFTMAX
	return {SM_NEG_INF, 0.0f};
#else
	return {SM_NEG_INF, RN_IDENTITY};
#endif
}

/* a and b together (commutative bit for bit, so every thread that combines
 * the same parts in the same order gets the same answer). */
static __device__ __forceinline__ rn_stat rn_combine(rn_stat a, rn_stat b)
{
#if RN_SOFTMAX
	return sm_combine(a, b);
#else
	return {a.m, RN_COMBINE(a.s, b.s)};
#endif
}

/* Adds N values to st: for softmax one rescale per call, so callers pass
 * whole tiles. A chunk of -inf alone changes nothing (masked rows). */
template <int N>
static __device__ __forceinline__ void rn_add(rn_stat &st, const float (&v)[N])
{
#if RN_SOFTMAX
	sm_add(st, v);
#else
	float s = RN_IDENTITY;
#pragma unroll
	for (int i = 0; i < N; i++)
		s = RN_COMBINE(s, RN_MAP(v[i]));
	st.s = RN_COMBINE(st.s, s);
#endif
}

static __device__ __forceinline__ void rn_add1(rn_stat &st, float x)
{
	const float a[1] = {x};

	rn_add(st, a);
}

/* What the output needs from the row's statistic. softmax: a = m * log2e
 * (e = exp2(x * log2e - a)), b = 1/s, m, and ls = log(s); a fold: b =
 * finalize(v, cols). */
struct rn_out {
	float a, b, m, ls;
};

static __device__ __forceinline__ rn_out rn_finish(rn_stat st, long long cols)
{
#if RN_SOFTMAX
	(void)cols;
	return {st.m * SM_LOG2E, 1.0f / st.s, st.m, logf(st.s)};
#else
	const float v = st.s;
	const float n = (float)cols;
	(void)n;
	return {0.0f, RN_FINALIZE(v, n), 0.0f, 0.0f};
#endif
}

static __device__ __forceinline__ float rn_apply(float x, rn_out o)
{
#if RN_SOFTMAX
	const float m = o.m, rs = o.b, ls = o.ls, s = 1.0f / o.b;
	const float e = exp2f(fmaf(x, SM_LOG2E, -o.a));
	(void)m, (void)rs, (void)ls, (void)s, (void)e;
#else
	const float v = o.b;
	(void)v;
#endif
	return ({{op_apply}});
}

static __device__ __forceinline__ rn_vec rn_apply_vec(rn_vec v, rn_out o)
{
#pragma unroll
	for (int l = 0; l < VEC; l++)
		v.set(l, rn_apply(v.at(l), o));
	return v;
}

/* The whole warp's statistic, in every lane. */
static __device__ __forceinline__ rn_stat rn_warp_reduce(rn_stat st)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2) {
		rn_stat t = {__shfl_xor_sync(0xffffffffu, st.m, o),
			__shfl_xor_sync(0xffffffffu, st.s, o)};
		st = rn_combine(st, t);
	}
	return st;
}

/* The whole block's statistic, in every thread, each combining the warps'
 * parts in the same order. Call once per kernel (its shared array is not
 * guarded for reuse). */
static __device__ rn_stat rn_block_reduce(rn_stat st)
{
	__shared__ rn_stat rn_part[BLOCK / 32];

	st = rn_warp_reduce(st);
	if (threadIdx.x % 32 == 0)
		rn_part[threadIdx.x / 32] = st;
	__syncthreads();
	st = rn_identity();
#pragma unroll
	for (int i = 0; i < BLOCK / 32; i++)
		st = rn_combine(st, rn_part[i]);
	return st;
}

/* The vectors of a row: values [h, h + nv*VEC) are nv whole vectors at
 * VEC*REAL_BYTES-aligned addresses in x and y; [0, h) is the head and the rest
 * the tail, fewer than VEC values each. When x and y are not aligned alike
 * (never with cudaMalloc'd buffers) everything is head. */
struct rn_span {
	long long h, nv;
};

static __device__ __forceinline__ rn_span rn_body(const real *xr, const real *yr,
	long long cols)
{
	const unsigned long long ax = reinterpret_cast<unsigned long long>(xr);
	const unsigned long long ay = reinterpret_cast<unsigned long long>(yr);
	long long h = 0;

	if (VEC > 1) {
		if ((ax ^ ay) % (VEC * REAL_BYTES) != 0)
			return {cols, 0};
		h = (VEC - (long long)((ax / REAL_BYTES) % VEC)) % VEC;
		if (h > cols)
			h = cols;
	}
	return {h, (cols - h) / VEC};
}

/* Unpacks UNROLL vectors into one array, for one rn_add per tile. */
static __device__ __forceinline__ void rn_unpack(const rn_vec (&v)[UNROLL],
	float (&a)[VEC * UNROLL])
{
#pragma unroll
	for (int u = 0; u < UNROLL; u++)
#pragma unroll
		for (int l = 0; l < VEC; l++)
			a[u * VEC + l] = v[u].at(l);
}

static __device__ __forceinline__ void rn_add_vec(rn_stat &st, rn_vec v)
{
	float a[VEC];
#pragma unroll
	for (int l = 0; l < VEC; l++)
		a[l] = v.at(l);
	rn_add(st, a);
}

/* Adds the row's values outside the body, [0, h) and [h + nv*VEC, cols),
 * read straight from memory. */
static __device__ __forceinline__ void rn_edges_stat(rn_stat &st, const real *xr,
	rn_span sp, long long cols, bool head, bool tail)
{
	if (head)
		for (long long i = threadIdx.x; i < sp.h; i += BLOCK)
			rn_add1(st, real_f(xr[i]));
	if (tail)
		for (long long i = sp.h + sp.nv * VEC + threadIdx.x; i < cols; i += BLOCK)
			rn_add1(st, real_f(xr[i]));
}

static __device__ __forceinline__ void rn_edges_out(const real *xr, real *yr,
	rn_span sp, long long cols, rn_out o, bool head, bool tail)
{
	if (head)
		for (long long i = threadIdx.x; i < sp.h; i += BLOCK)
			yr[i] = real_of(rn_apply(real_f(xr[i]), o));
	if (tail)
		for (long long i = sp.h + sp.nv * VEC + threadIdx.x; i < cols; i += BLOCK)
			yr[i] = real_of(rn_apply(real_f(xr[i]), o));
}

#if defined(VARIANT_block) || defined(VARIANT_split)
/* Loads: the read-only path, streaming (evict first: read once more at
 * most), or kept in L2 (evict last, for a pass that is read again). */
static __device__ __forceinline__ rn_vec rn_ld_stream(const rn_vec *p)
{
#if CACHE_HINT
	return rv_ldcs(p);
#else
	return rv_ldg(p);
#endif
}

static __device__ __forceinline__ rn_vec rn_ld_keep(const rn_vec *p)
{
#if CACHE_HINT == 2
	return rv_ld_keep(p);
#else
	return rv_ldg(p);
#endif
}

static __device__ __forceinline__ void rn_st(rn_vec *p, rn_vec v)
{
#if CACHE_HINT
	rv_stcs(p, v);
#else
	*p = v;
#endif
}

/* Adds body vectors [v0, v1) (this thread's: v0 + threadIdx.x, step BLOCK)
 * to st, UNROLL loads in flight. */
static __device__ __forceinline__ void rn_stat_range(rn_stat &st, const rn_vec *xb,
	long long v0, long long v1)
{
	for (long long b = v0 + threadIdx.x; b < v1; b += (long long)BLOCK * UNROLL) {
		rn_vec v[UNROLL];

		if (b + (long long)(UNROLL - 1) * BLOCK < v1) {
			float a[VEC * UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = rn_ld_keep(xb + b + u * BLOCK);
			rn_unpack(v, a);
			rn_add(st, a);
		} else {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (b + u * BLOCK < v1)
					rn_add_vec(st, rn_ld_keep(xb + b + u * BLOCK));
		}
	}
}

/* Writes the output of body vectors [v0, v1), read again from memory. */
static __device__ __forceinline__ void rn_out_range(const rn_vec *xb, rn_vec *yb,
	long long v0, long long v1, rn_out o)
{
	for (long long b = v0 + threadIdx.x; b < v1; b += (long long)BLOCK * UNROLL) {
		rn_vec v[UNROLL];

		if (b + (long long)(UNROLL - 1) * BLOCK < v1) {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = rn_ld_stream(xb + b + u * BLOCK);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				rn_st(yb + b + u * BLOCK, rn_apply_vec(v[u], o));
		} else {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (b + u * BLOCK < v1)
					rn_st(yb + b + u * BLOCK,
						rn_apply_vec(rn_ld_stream(xb + b + u * BLOCK), o));
		}
	}
}
#endif

#if defined(VARIANT_block)
/* Grid (rows): block r owns row r. */
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
row_norm_block(const real *__restrict__ x, real *__restrict__ y,
	long long rows, long long cols)
{
	const long long row = blockIdx.x;
	const real *xr = x + row * cols;
	real *yr = y + row * cols;
	const rn_span sp = rn_body(xr, yr, cols);
	const rn_vec *xb = reinterpret_cast<const rn_vec *>(xr + sp.h);
	rn_vec *yb = reinterpret_cast<rn_vec *>(yr + sp.h);
	rn_stat st = rn_identity();

	if (row >= rows)
		return;
	rn_edges_stat(st, xr, sp, cols, true, true);
	rn_stat_range(st, xb, 0, sp.nv);
	const rn_out o = rn_finish(rn_block_reduce(st), cols);
	rn_edges_out(xr, yr, sp, cols, o, true, true);
	rn_out_range(xb, yb, 0, sp.nv, o);
}
#endif

#if defined(VARIANT_split)
/* Grid (rows*SPLIT): block b does share b % SPLIT of row b / SPLIT, the
 * body's vectors split evenly, the head to share 0 and the tail to the
 * last. Writes its partial statistic to part[b] (two floats). */
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
row_norm_partial(const real *__restrict__ x, float *__restrict__ part,
	long long rows, long long cols)
{
	const long long row = blockIdx.x / SPLIT;
	const int share = blockIdx.x % SPLIT;
	const real *xr = x + row * cols;
	/* the output is aligned like the input: rn_body needs only x here */
	const rn_span sp = rn_body(xr, xr, cols);
	const rn_vec *xb = reinterpret_cast<const rn_vec *>(xr + sp.h);
	rn_stat st = rn_identity();

	if (row >= rows)
		return;
	rn_edges_stat(st, xr, sp, cols, share == 0, share == SPLIT - 1);
	rn_stat_range(st, xb, sp.nv * share / SPLIT, sp.nv * (share + 1) / SPLIT);
	st = rn_block_reduce(st);
	if (threadIdx.x == 0) {
		part[2 * blockIdx.x] = st.m;
		part[2 * blockIdx.x + 1] = st.s;
	}
}

/* Grid (rows*SPLIT): combines the row's SPLIT partial statistics (the
 * first warp, in a fixed order) and writes the block's share. */
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
row_norm_apply(const real *__restrict__ x, const float *__restrict__ part,
	real *__restrict__ y, long long rows, long long cols)
{
	__shared__ rn_stat rn_row;
	const long long row = blockIdx.x / SPLIT;
	const int share = blockIdx.x % SPLIT;
	const real *xr = x + row * cols;
	real *yr = y + row * cols;
	const rn_span sp = rn_body(xr, yr, cols);

	if (row >= rows)
		return;
	if (threadIdx.x < 32) {
		rn_stat st = rn_identity();

		for (int i = threadIdx.x; i < SPLIT; i += 32)
			st = rn_combine(st, rn_stat{part[2 * (row * SPLIT + i)],
				part[2 * (row * SPLIT + i) + 1]});
		st = rn_warp_reduce(st);
		if (threadIdx.x == 0)
			rn_row = st;
	}
	__syncthreads();
	const rn_out o = rn_finish(rn_row, cols);
	rn_edges_out(xr, yr, sp, cols, o, share == 0, share == SPLIT - 1);
	rn_out_range(reinterpret_cast<const rn_vec *>(xr + sp.h),
		reinterpret_cast<rn_vec *>(yr + sp.h), sp.nv * share / SPLIT,
		sp.nv * (share + 1) / SPLIT, o);
}
#endif

#if defined(VARIANT_cluster)
#ifndef TMA
#define TMA 0
#endif
#if TMA && VEC * REAL_BYTES != 16
#error "TMA moves whole 16-byte vectors: it needs VEC * REAL_BYTES 16"
#endif

/* Bulk copies (the tensor memory accelerator's 1-D form): a chunk of
 * RN_CHUNK vectors per mbarrier, all issued at once by one thread, so the
 * block's whole share of the row is in flight; threads wait chunk by
 * chunk. */
#define RN_CHUNK (BLOCK * UNROLL)
#define RN_NCHUNK (230400 / 16 / RN_CHUNK + 2)

static __device__ __forceinline__ unsigned rn_saddr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ bool rn_bar_done(unsigned bar)
{
	unsigned ok;

	asm volatile("{\n\t.reg .pred p;\n\t"
	    "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
	    "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(ok) : "r"(bar) : "memory");
	return ok != 0;
}

/* Grid (rows*CLUSTER), clusters of CLUSTER blocks: cluster r owns row r,
 * block rank k of it holds share k of the row's body in dynamic shared
 * memory (at most cdiv(cols, CLUSTER*VEC) vectors); the head goes to rank
 * 0 and the tail to the last rank, read from memory twice (fewer than VEC
 * values each). TMA 1: the share arrives by bulk copies; 2: it also
 * leaves by bulk copies (the output computed in place). */
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
row_norm_cluster(const real *__restrict__ x, real *__restrict__ y,
	long long rows, long long cols)
{
	extern __shared__ float4 rn_dyn[];
	__shared__ rn_stat rn_mine;
	rn_vec *buf = reinterpret_cast<rn_vec *>(rn_dyn);
	cg::cluster_group cluster = cg::this_cluster();
	const unsigned rank = cluster.block_rank();
	const long long row = blockIdx.x / CLUSTER;
	const real *xr = x + row * cols;
	real *yr = y + row * cols;
	const rn_span sp = rn_body(xr, yr, cols);
	const long long v0 = sp.nv * rank / CLUSTER, v1 = sp.nv * (rank + 1) / CLUSTER;
	const rn_vec *xb = reinterpret_cast<const rn_vec *>(xr + sp.h);
	rn_vec *yb = reinterpret_cast<rn_vec *>(yr + sp.h);
	rn_stat st = rn_identity();

	/* rows * CLUSTER blocks exactly: no block is idle, so none may skip
	 * the cluster barriers below */
#if TMA
	__shared__ __align__(8) unsigned long long rn_bar[RN_NCHUNK];
	const long long n = v1 - v0;
	const int nchunk = (int)((n + RN_CHUNK - 1) / RN_CHUNK);

	if (threadIdx.x == 0) {
		for (int c = 0; c < nchunk; c++)
			asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;"
			    :: "r"(rn_saddr(&rn_bar[c])) : "memory");
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		for (int c = 0; c < nchunk; c++) {
			const long long b = (long long)c * RN_CHUNK;
			const unsigned bytes = (unsigned)((n - b < RN_CHUNK ? n - b : RN_CHUNK) * 16);
			const unsigned bar = rn_saddr(&rn_bar[c]);

			asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
			    :: "r"(bar), "r"(bytes) : "memory");
			asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
			    " [%0], [%1], %2, [%3];"
			    :: "r"(rn_saddr(buf + b)), "l"(xb + v0 + b), "r"(bytes), "r"(bar)
			    : "memory");
		}
	}
	__syncthreads();
	rn_edges_stat(st, xr, sp, cols, rank == 0, rank == CLUSTER - 1);
	for (int c = 0; c < nchunk; c++) {
		const long long b = (long long)c * RN_CHUNK + threadIdx.x;

		while (!rn_bar_done(rn_saddr(&rn_bar[c])))
			;
		if (b + (long long)(UNROLL - 1) * BLOCK < n) {
			rn_vec v[UNROLL];
			float a[VEC * UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = buf[b + u * BLOCK];
			rn_unpack(v, a);
			rn_add(st, a);
		} else {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (b + u * BLOCK < n)
					rn_add_vec(st, buf[b + u * BLOCK]);
		}
	}
#else
	rn_edges_stat(st, xr, sp, cols, rank == 0, rank == CLUSTER - 1);
	for (long long b = v0 + threadIdx.x; b < v1; b += (long long)BLOCK * UNROLL) {
		rn_vec v[UNROLL];

		if (b + (long long)(UNROLL - 1) * BLOCK < v1) {
			float a[VEC * UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				v[u] = rv_ldcs(xb + b + u * BLOCK);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				buf[b - v0 + u * BLOCK] = v[u];
			rn_unpack(v, a);
			rn_add(st, a);
		} else {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (b + u * BLOCK < v1) {
					v[u] = rv_ldcs(xb + b + u * BLOCK);
					buf[b - v0 + u * BLOCK] = v[u];
					rn_add_vec(st, v[u]);
				}
		}
	}
#endif
	st = rn_block_reduce(st);
	if (threadIdx.x == 0)
		rn_mine = st;
	cluster.sync();
	/* every thread combines the blocks' parts in rank order: the same
	 * statistic in every block of the row */
	st = rn_identity();
#pragma unroll
	for (int r = 0; r < CLUSTER; r++)
		st = rn_combine(st, *cluster.map_shared_rank(&rn_mine, r));
	/* no block leaves (freeing its shared memory) before all have read */
	cluster.sync();
	const rn_out o = rn_finish(st, cols);
	rn_edges_out(xr, yr, sp, cols, o, rank == 0, rank == CLUSTER - 1);
#if TMA == 2
	for (long long b = threadIdx.x; b < v1 - v0; b += BLOCK)
		buf[b] = rn_apply_vec(buf[b], o);
	/* the bulk copy engine reads shared memory through the async proxy */
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	if (threadIdx.x == 0 && v1 > v0) {
		asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
		    :: "l"(yb + v0), "r"(rn_saddr(buf)), "r"((unsigned)((v1 - v0) * 16))
		    : "memory");
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		/* shared memory must outlive the copy's reads */
		asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
	}
#else
	for (long long b = v0 + threadIdx.x; b < v1; b += BLOCK)
		rv_stcs(yb + b, rn_apply_vec(buf[b - v0], o));
#endif
}
#endif
