/* global_reduce family: one reduction over all n values of the task's
 * same-shaped inputs, with the op as expressions (docs/templates.md):
 *   fold:  out[0] = finalize(v, count), v the combine of map(inputs) over
 *          every place (a loss: mse, huber, KL divergence): one read of
 *          each input (the floor).
 *   apply: the same fold into a one-value scale, then y = apply(x, scale)
 *          over the first input x (fro_normalize: y = x / sqrt(sum(x^2))):
 *          a read for the fold, then a read and a write: 3 passes
 *          (nothing can be written before every value has been read).
 * The map reads an input as x (the first), by its name, or as IN(k).
 * An input is whole (a value per place), or, viewing the places as rows
 * of cols (spec.cols), one value per row (bit k of spec.per_row: a
 * (rows, 1) tensor) or per column (bit k of spec.per_col: (cols,), read
 * again by every row: from L1/L2); the vector path then walks each
 * thread's (row, column) along with its index, and needs cols % VEC == 0.
 * gr_partial: SPLIT blocks stride over the data (UNROLL vectors of each
 * input in flight per thread); each thread combines a tile in float, and
 * the tiles in double; each block writes its result (double) to a
 * workspace. gr_final: one block combines the SPLIT results in a fixed
 * order and finalizes (in double). gr_apply (apply): streamed. Buffers
 * not aligned to VEC values (never from cudaMalloc) take the scalar path.
 * Tensors are f32, f16 or bf16 in memory (real.cuh), float in registers.
 * Indices are 64-bit. */
#define VARIANT_{{variant}} 1
#define NIN {{ninputs}}
#define GR_IDENTITY ({{op_identity}})
#define GR_PER_ROW ({{per_row}})
#define GR_PER_COL ({{per_col}})
#define GR_BCAST (GR_PER_ROW | GR_PER_COL)

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> gr_vec;

static __device__ __forceinline__ bool gr_aligned(const void *p)
{
	return reinterpret_cast<unsigned long long>(p) % (VEC * REAL_BYTES) == 0;
}

static __device__ __forceinline__ float gr_lane(const gr_vec &v, int l)
{
	return v.at(l);
}

/* The op's map over one value of each input (gr_a[k]: input k). */
static __device__ __forceinline__ float gr_map(const float *gr_a)
{
#define IN(k) gr_a[k]
	const float x = IN(0);
	(void)x;
	{
		{{bind}}
		return ({{op_map}});
	}
#undef IN
}

/* The op's combine, in float (tiles) and double (across tiles). */
template <typename T>
static __device__ __forceinline__ T gr_combine(T a, T b)
{
	return ({{op_combine}});
}

static __device__ __forceinline__ double gr_finalize(double v, double n)
{
	(void)n;
	return ({{op_finalize}});
}

static __device__ __forceinline__ double gr_warp(double v)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2)
		v = gr_combine(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* The block's result, in thread 0 (a fixed order: the same bits every run). */
static __device__ __forceinline__ double gr_block(double v)
{
	__shared__ double gr_w[BLOCK / 32];

	v = gr_warp(v);
	if (threadIdx.x % 32 == 0)
		gr_w[threadIdx.x / 32] = v;
	__syncthreads();
	if (threadIdx.x == 0) {
		v = gr_w[0];
		for (int w = 1; w < BLOCK / 32; w++)
			v = gr_combine(v, gr_w[w]);
	}
	return v;
}

/* Where input k is read for place j of a view of rows of cols places. */
static __device__ __forceinline__ long long gr_index(int k, long long j, long long cols)
{
	if (GR_PER_COL >> k & 1)
		return j % cols;
	if (GR_PER_ROW >> k & 1)
		return j / cols;
	return j;
}

/* One place j of every input, mapped. */
static __device__ __forceinline__ float gr_at(const real *const (&in)[NIN], long long j,
	long long cols)
{
	float a[NIN];

#pragma unroll
	for (int k = 0; k < NIN; k++)
		a[k] = real_f(in[k][GR_BCAST ? gr_index(k, j, cols) : j]);
	return gr_map(a);
}

/* A (row, vector column) position in a view of rows of cv vectors, moved
 * by whole vectors: the broadcast inputs' indices without a division in
 * the loop. */
struct gr_pos {
	long long r, c;
};

static __device__ __forceinline__ gr_pos gr_pos_of(long long i, long long cv)
{
	return gr_pos{ i / cv, i % cv };
}

static __device__ __forceinline__ gr_pos gr_add(gr_pos a, gr_pos d, long long cv)
{
	a.r += d.r;
	a.c += d.c;
	if (a.c >= cv) {
		a.c -= cv;
		a.r++;
	}
	return a;
}

/* Grid (SPLIT): part[block] = the combine of the mapped values over the
 * block's grid-stride share. */
extern "C" __global__ void __launch_bounds__(BLOCK)
gr_partial({{in_params}}, double *__restrict__ part, long long n, long long cols)
{
	const real *const in[NIN] = { {{in_ptrs}} };
	double acc = (double)GR_IDENTITY;
	bool aligned = !GR_BCAST || cols % VEC == 0;

#pragma unroll
	for (int k = 0; k < NIN; k++)
		aligned &= gr_aligned(in[k]);
	if (aligned) {
		const long long nv = n / VEC;
		const long long step = (long long)SPLIT * BLOCK * UNROLL;
		const long long i0 = (long long)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
		const long long cv = GR_BCAST ? cols / VEC : 1;
		gr_pos at{0, 0}, by{0, 0}, off[UNROLL];

		if (GR_BCAST) {
			at = gr_pos_of(i0, cv);
			by = gr_pos_of(step, cv);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				off[u] = gr_pos_of((long long)u * BLOCK, cv);
		}
		for (long long i = i0; i < nv; i += step) {
			gr_vec x[NIN][UNROLL];
			float row[NIN][UNROLL];
			const bool whole = i + (long long)(UNROLL - 1) * BLOCK < nv;
			float t = GR_IDENTITY;

#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (whole || i + u * BLOCK < nv) {
					const gr_pos p = GR_BCAST ? gr_add(at, off[u], cv) : at;
#pragma unroll
					for (int k = 0; k < NIN; k++)
						if (GR_PER_COL >> k & 1)
							x[k][u] = rv_ldg(reinterpret_cast<const gr_vec *>(in[k]) + p.c);
						else if (GR_PER_ROW >> k & 1)
							row[k][u] = real_ldg(in[k] + p.r);
						else
							x[k][u] = rv_ldcs(reinterpret_cast<const gr_vec *>(in[k]) + i + u * BLOCK);
				}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (whole || i + u * BLOCK < nv)
#pragma unroll
					for (int l = 0; l < VEC; l++) {
						float a[NIN];
#pragma unroll
						for (int k = 0; k < NIN; k++)
							a[k] = GR_PER_ROW >> k & 1 ? row[k][u] : gr_lane(x[k][u], l);
						t = gr_combine(t, gr_map(a));
					}
			acc = gr_combine(acc, (double)t);
			if (GR_BCAST)
				at = gr_add(at, by, cv);
		}
		/* the last n % VEC values */
		if (blockIdx.x == 0)
			for (long long j = nv * VEC + threadIdx.x; j < n; j += BLOCK)
				acc = gr_combine(acc, (double)gr_at(in, j, cols));
	} else {
		for (long long j = (long long)blockIdx.x * BLOCK + threadIdx.x; j < n;
		     j += (long long)SPLIT * BLOCK)
			acc = gr_combine(acc, (double)gr_at(in, j, cols));
	}
	acc = gr_block(acc);
	if (threadIdx.x == 0)
		part[blockIdx.x] = acc;
}

/* Grid (1): out[0] = finalize(the combine of the SPLIT results, count):
 * the loss (fold: the task's output), or the scale gr_apply takes (apply:
 * an f32 workspace). */
#if defined(VARIANT_apply)
typedef float gr_final_t;
#else
typedef real gr_final_t;
#endif
static __device__ __forceinline__ void gr_put(float *p, float v) { *p = v; }
#if REAL_KIND != 0
static __device__ __forceinline__ void gr_put(real *p, float v) { *p = real_of(v); }
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
gr_final(const double *__restrict__ part, gr_final_t *__restrict__ out, long long count)
{
	double acc = (double)GR_IDENTITY;

	for (int i = threadIdx.x; i < SPLIT; i += BLOCK)
		acc = gr_combine(acc, part[i]);
	acc = gr_block(acc);
	if (threadIdx.x == 0)
		gr_put(out, (float)gr_finalize(acc, (double)count));
}

#if defined(VARIANT_apply)
static __device__ __forceinline__ float gr_apply_one(float x, float v)
{
	return ({{op_apply}});
}

/* Grid (cdiv(cdiv(n, VEC), BLOCK*UNROLL)), walked from the last tile to the
 * first: the tiles gr_partial read last may still be in L2. */
extern "C" __global__ void __launch_bounds__(BLOCK)
gr_apply(const real *__restrict__ x, const float *__restrict__ scale,
	real *__restrict__ y, long long n)
{
	const float s = __ldg(scale);
	const long long tile = (long long)gridDim.x - 1 - blockIdx.x;

	if (gr_aligned(x) && gr_aligned(y)) {
		const gr_vec *xv = reinterpret_cast<const gr_vec *>(x);
		gr_vec *yv = reinterpret_cast<gr_vec *>(y);
		const long long nv = n / VEC;
		const long long i = tile * BLOCK * UNROLL + threadIdx.x;
		const bool whole = i + (long long)(UNROLL - 1) * BLOCK < nv;
		gr_vec v[UNROLL];

#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || i + u * BLOCK < nv)
				v[u] = rv_ldcs(xv + i + u * BLOCK);
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || i + u * BLOCK < nv) {
#pragma unroll
				for (int l = 0; l < VEC; l++)
					v[u].set(l, gr_apply_one(v[u].at(l), s));
				rv_stcs(yv + i + u * BLOCK, v[u]);
			}
		/* the last n % VEC values: fewer than BLOCK */
		if (tile == 0 && nv * VEC + threadIdx.x < n) {
			const long long j = nv * VEC + threadIdx.x;
			y[j] = real_of(gr_apply_one(real_ldg(x + j), s));
		}
		return;
	}
	for (long long j = tile * BLOCK * UNROLL * VEC + threadIdx.x;
	     j < n && j < (tile + 1) * BLOCK * UNROLL * VEC; j += BLOCK)
		y[j] = real_of(gr_apply_one(real_f(x[j]), s));
}
#endif
