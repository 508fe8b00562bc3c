/* row_loss family: a loss reduced over rows: the mean over rows of
 * apply(the row's softmax statistic, the target's logit), targets int64.
 * The op is the task's, as expressions (docs/templates.md): apply sees, in
 * double, m (the row's max), s (the sum of exp(x - m)), ls = log(s), rs =
 * 1/s, x (the target's logit) and e = exp(x - m). cross_entropy: m + ls -
 * x, i.e. logsumexp(x[row]) - x[row][target[row]].
 *
 * row_loss_rows: 32*WARPS_PER_ROW threads per row (BLOCK / that rows per
 * block) find the row's max and sum of exponentials in one read (online:
 * the running sum is rescaled when the max grows, once per tile of
 * VEC*UNROLL values), with UNROLL vector loads in flight; each block
 * writes the sum of its rows' losses (double) to a workspace.
 * row_loss_mean: one block adds the partial sums in a fixed order.
 * One read of x: the floor. Rows are aligned per row (scalar head and tail
 * when cols is not a multiple of VEC); indices are 64-bit. */

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> rl_vec;

#define RL_LN2 0.69314718055994531f
#define RL_GROUP (32 * WARPS_PER_ROW)
#define RL_ROWS (BLOCK / RL_GROUP)

#if BLOCK % (32 * WARPS_PER_ROW) != 0
#error "BLOCK must be a multiple of 32 * WARPS_PER_ROW"
#endif

/* the running max and sum of exp (softmax.cuh) */
typedef sm_stat rl_stat;

static __device__ __forceinline__ void rl_add_vec(rl_stat &st, rl_vec v)
{
	float a[VEC];
#pragma unroll
	for (int l = 0; l < VEC; l++)
		a[l] = v.at(l);
	sm_add(st, a);
}

static __device__ __forceinline__ rl_stat rl_warp_reduce(rl_stat st)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2) {
		rl_stat t = {__shfl_xor_sync(0xffffffffu, st.m, o),
			__shfl_xor_sync(0xffffffffu, st.s, o)};
		st = sm_combine(st, t);
	}
	return st;
}

/* Grid (cdiv(rows, RL_ROWS)): group g of the block owns row
 * blockIdx.x * RL_ROWS + g. part[blockIdx.x] = the sum of its rows'
 * losses. */
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
row_loss_rows(const real *__restrict__ x, const long long *__restrict__ target,
	double *__restrict__ part, long long rows, long long cols)
{
	__shared__ rl_stat rl_warps[BLOCK / 32];
	__shared__ double rl_loss[RL_ROWS];
	const int g = threadIdx.x / RL_GROUP, t = threadIdx.x % RL_GROUP;
	const long long row = (long long)blockIdx.x * RL_ROWS + g;
	rl_stat st = {SM_NEG_INF, 0.0f};
	float xt = 0.0f;

	if (row < rows) {
		const real *xr = x + row * cols;

		/* the target's logit: two dependent loads, issued before the row's
		 * so their latency hides behind it */
		if (t == 0) {
			const long long k = target[row];
			xt = k >= 0 && k < cols ? real_f(xr[k]) : __int_as_float(0x7fffffff);
		}
		const unsigned long long ax = reinterpret_cast<unsigned long long>(xr);
		long long h = VEC > 1 ? (VEC - (long long)((ax / REAL_BYTES) % VEC)) % VEC : 0;

		if (h > cols)
			h = cols;
		const long long nv = (cols - h) / VEC;
		const rl_vec *xb = reinterpret_cast<const rl_vec *>(xr + h);

		for (long long i = t; i < h; i += RL_GROUP) {
			const float a[1] = {real_f(xr[i])};
			sm_add(st, a);
		}
		for (long long i = h + nv * VEC + t; i < cols; i += RL_GROUP) {
			const float a[1] = {real_f(xr[i])};
			sm_add(st, a);
		}
		for (long long b = t; b < nv; b += (long long)RL_GROUP * UNROLL) {
			rl_vec v[UNROLL];

			if (b + (long long)(UNROLL - 1) * RL_GROUP < nv) {
				float a[VEC * UNROLL];
#pragma unroll
				for (int u = 0; u < UNROLL; u++)
					v[u] = rv_ldcs(xb + b + u * RL_GROUP);
#pragma unroll
				for (int u = 0; u < UNROLL; u++)
#pragma unroll
					for (int l = 0; l < VEC; l++)
						a[u * VEC + l] = v[u].at(l);
				sm_add(st, a);
			} else {
#pragma unroll
				for (int u = 0; u < UNROLL; u++)
					if (b + u * RL_GROUP < nv)
						rl_add_vec(st, rv_ldcs(xb + b + u * RL_GROUP));
			}
		}
	}
	st = rl_warp_reduce(st);
	if (WARPS_PER_ROW > 1) {
		if (threadIdx.x % 32 == 0)
			rl_warps[threadIdx.x / 32] = st;
		__syncthreads();
		if (t == 0)
			for (int w = 1; w < WARPS_PER_ROW; w++)
				st = sm_combine(st, rl_warps[threadIdx.x / 32 + w]);
	}
	if (t == 0) {
		double loss = 0.0;

		if (row < rows) {
			const double m = st.m, s = st.s, x = xt;
			const double ls = (double)(log2f(st.s) * RL_LN2), rs = 1.0 / s;
			const double e = exp(x - m);
			(void)s, (void)rs, (void)e;
			loss = ({{op_apply}});
		}
		rl_loss[g] = loss;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		double sum = 0.0;

		for (int i = 0; i < RL_ROWS; i++)
			sum += rl_loss[i];
		part[blockIdx.x] = sum;
	}
}

/* Grid (1), BLOCK threads: loss[0] = the sum of the n partial sums / rows,
 * added in a fixed order. */
extern "C" __global__ void __launch_bounds__(BLOCK)
row_loss_mean(const double *__restrict__ part, real *__restrict__ loss,
	long long n, long long rows)
{
	__shared__ double rl_sums[BLOCK / 32];
	double sum = 0.0;

	for (long long i = threadIdx.x; i < n; i += BLOCK)
		sum += part[i];
	sum = warp_sum(sum);
	if (threadIdx.x % 32 == 0)
		rl_sums[threadIdx.x / 32] = sum;
	__syncthreads();
	if (threadIdx.x == 0) {
		sum = 0.0;
		for (int w = 0; w < BLOCK / 32; w++)
			sum += rl_sums[w];
		loss[0] = real_of((float)(sum / (double)rows));
	}
}
