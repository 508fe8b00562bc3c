/* row_reduce family: the task's inputs are same-shaped (rows, cols); each
 * row gives up to four terms, t_k = finalize_k(the combine_k of map_k over
 * the row's places, cols), the row's value r = ROW(t0 .. t3, n = cols),
 * and the output is the op over the rows: finalize(the combine of map(r),
 * rows). The maps read the inputs as x (the first), by name, or IN(k).
 * rr_rows: 32*WARPS_PER_ROW threads per row (BLOCK / that rows per block),
 * UNROLL vectors of each input in flight; each term in float per tile and
 * double across tiles and threads; each block combines its rows' values
 * (in order) into a workspace. rr_final: one block combines the blocks'
 * in a fixed order and finalizes. One read of each input: the floor.
 * Rows that are not VEC-aligned (cols % VEC) are read one value at a
 * time; indices are 64-bit. */
#define NIN {{ninputs}}
#define RR_NT ({{terms_count}})
#define RR_GROUP (32 * WARPS_PER_ROW)
#define RR_ROWS (BLOCK / RR_GROUP)

#if BLOCK % (32 * WARPS_PER_ROW) != 0
#error "BLOCK must be a multiple of 32 * WARPS_PER_ROW"
#endif

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> rr_vec;

/* The terms' maps over one place of every input (rr_a[j]: input j). */
#define IN(k) rr_a[k]
static __device__ __forceinline__ float rr_map0(const float *rr_a)
{
	const float x = IN(0);
	(void)x;
	{
		{{bind}}
		return ({{terms0_map}});
	}
}

static __device__ __forceinline__ float rr_map1(const float *rr_a)
{
	const float x = IN(0);
	(void)x;
	{
		{{bind}}
		return ({{terms1_map}});
	}
}

static __device__ __forceinline__ float rr_map2(const float *rr_a)
{
	const float x = IN(0);
	(void)x;
	{
		{{bind}}
		return ({{terms2_map}});
	}
}

static __device__ __forceinline__ float rr_map3(const float *rr_a)
{
	const float x = IN(0);
	(void)x;
	{
		{{bind}}
		return ({{terms3_map}});
	}
}
#undef IN

template <typename T> static __device__ __forceinline__ T rr_comb0(T a, T b) { return ({{terms0_combine}}); }
template <typename T> static __device__ __forceinline__ T rr_comb1(T a, T b) { return ({{terms1_combine}}); }
template <typename T> static __device__ __forceinline__ T rr_comb2(T a, T b) { return ({{terms2_combine}}); }
template <typename T> static __device__ __forceinline__ T rr_comb3(T a, T b) { return ({{terms3_combine}}); }
template <typename T> static __device__ __forceinline__ T rr_combine(T a, T b) { return ({{op_combine}}); }

static __device__ __forceinline__ void rr_identity(float (&t)[4])
{
	t[0] = {{terms0_identity}};
	t[1] = {{terms1_identity}};
	t[2] = {{terms2_identity}};
	t[3] = {{terms3_identity}};
}

static __device__ __forceinline__ void rr_take(float (&t)[4], const float *a)
{
	t[0] = rr_comb0(t[0], rr_map0(a));
	if (RR_NT > 1)
		t[1] = rr_comb1(t[1], rr_map1(a));
	if (RR_NT > 2)
		t[2] = rr_comb2(t[2], rr_map2(a));
	if (RR_NT > 3)
		t[3] = rr_comb3(t[3], rr_map3(a));
}

static __device__ __forceinline__ void rr_merge(double (&d)[4], const double (&e)[4])
{
	d[0] = rr_comb0(d[0], e[0]);
	if (RR_NT > 1)
		d[1] = rr_comb1(d[1], e[1]);
	if (RR_NT > 2)
		d[2] = rr_comb2(d[2], e[2]);
	if (RR_NT > 3)
		d[3] = rr_comb3(d[3], e[3]);
}

/* The row's value from its terms' folds (finalized with n = cols). */
static __device__ __forceinline__ double rr_row(const double (&d)[4], long long cols)
{
	const double n = (double)cols;
	double v;
	(void)n;
	v = d[0];
	const double t0 = ({{terms0_finalize}});
	v = d[1];
	const double t1 = ({{terms1_finalize}});
	v = d[2];
	const double t2 = ({{terms2_finalize}});
	v = d[3];
	const double t3 = ({{terms3_finalize}});
	(void)t0, (void)t1, (void)t2, (void)t3, (void)v;
	return ({{row}});
}

static __device__ __forceinline__ double rr_map_row(double x)
{
	return ({{op_map}});
}

/* Grid (cdiv(rows, RR_ROWS)): part[block] = the combine of its rows' mapped
 * values. */
extern "C" __global__ void __launch_bounds__(BLOCK)
rr_rows({{in_params}}, double *__restrict__ part, long long rows, long long cols)
{
	const real *const in[NIN] = { {{in_ptrs}} };
	__shared__ double rr_w[BLOCK / 32][4];
	__shared__ double rr_r[RR_ROWS];
	const int lane = threadIdx.x % RR_GROUP, grp = threadIdx.x / RR_GROUP;
	const long long row = (long long)blockIdx.x * RR_ROWS + grp;
	double d[4];
	float t[4];

	rr_identity(t);
	for (int k = 0; k < 4; k++)
		d[k] = (double)t[k];
	if (row < rows) {
		bool vec = cols % VEC == 0;
#pragma unroll
		for (int j = 0; j < NIN; j++)
			vec &= reinterpret_cast<unsigned long long>(in[j]) % (VEC * REAL_BYTES) == 0;
		const long long base = row * cols;
		if (vec) {
			const long long nv = cols / VEC;
			for (long long i = lane; i < nv; i += (long long)RR_GROUP * UNROLL) {
				rr_vec v[NIN][UNROLL];
				const bool whole = i + (long long)(UNROLL - 1) * RR_GROUP < nv;
#pragma unroll
				for (int u = 0; u < UNROLL; u++)
					if (whole || i + u * RR_GROUP < nv)
#pragma unroll
						for (int j = 0; j < NIN; j++)
							v[j][u] = rv_ldcs(reinterpret_cast<const rr_vec *>(in[j] + base) +
								i + u * RR_GROUP);
				rr_identity(t);
#pragma unroll
				for (int u = 0; u < UNROLL; u++)
					if (whole || i + u * RR_GROUP < nv)
#pragma unroll
						for (int l = 0; l < VEC; l++) {
							float a[NIN];
#pragma unroll
							for (int j = 0; j < NIN; j++)
								a[j] = v[j][u].at(l);
							rr_take(t, a);
						}
				const double e[4] = { t[0], t[1], t[2], t[3] };
				rr_merge(d, e);
			}
		} else {
			for (long long i = lane; i < cols; i += RR_GROUP) {
				float a[NIN];
#pragma unroll
				for (int j = 0; j < NIN; j++)
					a[j] = real_f(in[j][base + i]);
				rr_identity(t);
				rr_take(t, a);
				const double e[4] = { t[0], t[1], t[2], t[3] };
				rr_merge(d, e);
			}
		}
	}
	/* the row's threads: a warp by shuffles, then its warps in shared memory */
#pragma unroll
	for (int o = 16; o > 0; o /= 2) {
		double e[4];
#pragma unroll
		for (int k = 0; k < 4; k++)
			e[k] = __shfl_xor_sync(0xffffffffu, d[k], o);
		rr_merge(d, e);
	}
	if (threadIdx.x % 32 == 0)
		for (int k = 0; k < 4; k++)
			rr_w[threadIdx.x / 32][k] = d[k];
	__syncthreads();
	if (lane == 0) {
		double s[4];
		for (int k = 0; k < 4; k++)
			s[k] = rr_w[grp * WARPS_PER_ROW][k];
		for (int w = 1; w < WARPS_PER_ROW; w++) {
			double e[4];
			for (int k = 0; k < 4; k++)
				e[k] = rr_w[grp * WARPS_PER_ROW + w][k];
			rr_merge(s, e);
		}
		rr_r[grp] = row < rows ? rr_map_row(rr_row(s, cols)) : 0.0;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		double acc = (double)({{op_identity}});
		for (int g = 0; g < RR_ROWS; g++)
			if ((long long)blockIdx.x * RR_ROWS + g < rows)
				acc = rr_combine(acc, rr_r[g]);
		part[blockIdx.x] = acc;
	}
}

/* Grid (1): out[0] = finalize(the combine of the nparts results, rows). */
extern "C" __global__ void __launch_bounds__(BLOCK)
rr_final(const double *__restrict__ part, real *__restrict__ out, long long nparts,
	long long rows)
{
	__shared__ double rr_w[BLOCK];

	double acc = (double)({{op_identity}});
	for (long long i = threadIdx.x; i < nparts; i += BLOCK)
		acc = rr_combine(acc, part[i]);
	rr_w[threadIdx.x] = acc;
	__syncthreads();
	if (threadIdx.x == 0) {
		acc = rr_w[0];
		for (int i = 1; i < BLOCK; i++)
			acc = rr_combine(acc, rr_w[i]);
		const double v = acc, n = (double)rows;
		(void)n;
		out[0] = real_of((float)({{op_finalize}}));
	}
}
