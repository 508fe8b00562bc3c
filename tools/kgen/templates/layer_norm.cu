/* layer_norm family: y = (x - mean) / sqrt(var + eps) * weight + bias over
 * each row of a rows x cols matrix (weight and bias: cols values), for few
 * very long rows (16 rows of 4M values): no block, nor cluster, holds a
 * row, so each row is split over SPLIT blocks.
 *   ln_partial (rows*SPLIT blocks): each block sums its share of a row,
 *       shifted by the row's first value (no cancellation when the mean is
 *       far from 0), in float per thread and double across threads, into a
 *       workspace.
 *   ln_stats (rows blocks): the row's mean and 1/sqrt(var + eps).
 *   ln_apply (cdiv(cols, BLOCK*VEC*UNROLL) blocks): each thread keeps its
 *       columns' weight and bias in registers and walks every row, so
 *       weight and bias are read once.
 * x is read twice (3 passes over the data with the write; a one-pass
 * version needs a grid-wide barrier, which a launch plan cannot promise).
 * Indices are 64-bit; rows whose start is not vector-aligned are split
 * into a scalar head, whole vectors and a scalar tail. */

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
/* VEC values of the storage type (real.cuh: f32, f16 or bf16 in memory,
 * float in registers), 16 bytes at most */
typedef realv<VEC> ln_vec;

/* Grid (rows*SPLIT): block k does share k % SPLIT of row k / SPLIT:
 * part[2k] = sum(x - x0), part[2k+1] = sum((x - x0)^2) over the share,
 * x0 the row's first value. The row's whole vectors are split evenly, its
 * head goes to share 0 and its tail to the last. */
extern "C" __global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
ln_partial(const real *__restrict__ x, double *__restrict__ part, long long rows,
	long long cols)
{
	const long long row = blockIdx.x / SPLIT;
	const int share = blockIdx.x % SPLIT;
	const real *xr = x + row * cols;
	const unsigned long long ax = reinterpret_cast<unsigned long long>(xr);
	long long h = VEC > 1 ? (VEC - (long long)((ax / REAL_BYTES) % VEC)) % VEC : 0;
	float s1 = 0.0f, s2 = 0.0f;

	if (row >= rows)
		return;
	if (h > cols)
		h = cols;
	const float x0 = real_ldg(xr);
	const long long nv = (cols - h) / VEC;
	const long long v0 = nv * share / SPLIT, v1 = nv * (share + 1) / SPLIT;
	const ln_vec *xb = reinterpret_cast<const ln_vec *>(xr + h);
	if (share == 0)
		for (long long i = threadIdx.x; i < h; i += BLOCK) {
			const float d = real_f(xr[i]) - x0;
			s1 += d;
			s2 = fmaf(d, d, s2);
		}
	if (share == SPLIT - 1)
		for (long long i = h + nv * VEC + threadIdx.x; i < cols; i += BLOCK) {
			const float d = real_f(xr[i]) - x0;
			s1 += d;
			s2 = fmaf(d, d, s2);
		}
	for (long long b = v0 + threadIdx.x; b < v1; b += (long long)BLOCK * UNROLL) {
		ln_vec v[UNROLL];
		const bool whole = b + (long long)(UNROLL - 1) * BLOCK < v1;

#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || b + u * BLOCK < v1)
				v[u] = rv_ldg(xb + b + u * BLOCK);
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || b + u * BLOCK < v1)
#pragma unroll
				for (int l = 0; l < VEC; l++) {
					const float d = v[u].at(l) - x0;
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

/* Grid (rows): stats[2r] = mean, stats[2r+1] = 1/sqrt(var + eps) of row r
 * (biased variance, as torch), from its SPLIT partial sums. */
extern "C" __global__ void __launch_bounds__(BLOCK)
ln_stats(const real *__restrict__ x, const double *__restrict__ part,
	float *__restrict__ stats, long long rows, long long cols, float eps)
{
	const long long row = blockIdx.x;
	double a = 0.0, q = 0.0;

	if (row >= rows)
		return;
	for (int i = threadIdx.x; i < SPLIT; i += BLOCK) {
		a += part[2 * (row * SPLIT + i)];
		q += part[2 * (row * SPLIT + i) + 1];
	}
	block_sum2(a, q);
	if (threadIdx.x == 0) {
		const double n = (double)cols;
		const double m = a / n;
		double var = q / n - m * m;

		if (var < 0.0)
			var = 0.0;
		stats[2 * row] = (float)((double)real_f(x[row * cols]) + m);
		stats[2 * row + 1] = (float)(1.0 / sqrt(var + (double)eps));
	}
}

/* Grid (cdiv(cols, BLOCK*VEC*UNROLL)): the block's BLOCK*VEC*UNROLL
 * columns (UNROLL vectors BLOCK apart per thread) for every row. Vectors
 * need cols % VEC == 0 (every row aligned); otherwise the same columns
 * one value at a time. */
extern "C" __global__ void __launch_bounds__(BLOCK)
ln_apply(const real *__restrict__ x, const real *__restrict__ w,
	const real *__restrict__ bias, const float *__restrict__ stats,
	real *__restrict__ y, long long rows, long long cols)
{
	const bool vec_ok = VEC == 1 || (cols % VEC == 0 &&
		((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(y) |
		  reinterpret_cast<unsigned long long>(w) | reinterpret_cast<unsigned long long>(bias)) %
		 (VEC * REAL_BYTES)) == 0);

	if (vec_ok) {
		const long long nvc = cols / VEC;
		const long long c0 = (long long)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
		const ln_vec *wv = reinterpret_cast<const ln_vec *>(w);
		const ln_vec *bv = reinterpret_cast<const ln_vec *>(bias);
		ln_vec wr[UNROLL], br[UNROLL];

#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (c0 + u * BLOCK < nvc) {
				wr[u] = rv_ldg(wv + c0 + u * BLOCK);
				br[u] = rv_ldg(bv + c0 + u * BLOCK);
			}
		for (long long r = 0; r < rows; r++) {
			const float mean = __ldg(stats + 2 * r), rstd = __ldg(stats + 2 * r + 1);
			const ln_vec *xv = reinterpret_cast<const ln_vec *>(x + r * cols);
			ln_vec *yv = reinterpret_cast<ln_vec *>(y + r * cols);
			ln_vec v[UNROLL];

#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (c0 + u * BLOCK < nvc)
					v[u] = rv_ldcs(xv + c0 + u * BLOCK);
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (c0 + u * BLOCK < nvc) {
#pragma unroll
					for (int l = 0; l < VEC; l++)
						v[u].set(l, fmaf((v[u].at(l) - mean) * rstd,
							wr[u].at(l), br[u].at(l)));
					rv_stcs(yv + c0 + u * BLOCK, v[u]);
				}
		}
		return;
	}
	const long long c0 = (long long)blockIdx.x * BLOCK * UNROLL * VEC + threadIdx.x;
	float wr[UNROLL * VEC], br[UNROLL * VEC];

#pragma unroll
	for (int u = 0; u < UNROLL * VEC; u++)
		if (c0 + u * BLOCK < cols) {
			wr[u] = real_ldg(w + c0 + u * BLOCK);
			br[u] = real_ldg(bias + c0 + u * BLOCK);
		}
	for (long long r = 0; r < rows; r++) {
		const float mean = __ldg(stats + 2 * r), rstd = __ldg(stats + 2 * r + 1);
#pragma unroll
		for (int u = 0; u < UNROLL * VEC; u++)
			if (c0 + u * BLOCK < cols)
				y[r * cols + c0 + u * BLOCK] = real_of(fmaf((real_ldcs(x + r * cols +
					c0 + u * BLOCK) - mean) * rstd, wr[u], br[u]));
	}
}
