/* broadcast family: out[r][c] = EXPR(inputs) over a rows x cols output,
 * each input either of the output's shape, one value per row (broadcast
 * along the columns: diag(a) @ B is a[r] * B[r][c], KernelBench's 12), or
 * one value per column (a bias along the rows), or one value for the whole
 * output (a module's scalar parameter: in both masks). bc_kind says which,
 * an input at a time (0: whole, 1: per row, 2: per column, 3: one), from
 * the spec's bit masks per_row and per_col (bit k: input k). Each block takes
 * BLOCK * VEC columns of a row at a time and walks the rows; a per-row
 * input is one load a row (the same address for the whole block), a
 * per-column one VEC values that stay in registers across the rows, a
 * single value a load a row as a per-row one is (at index 0). One read of
 * each input and one write: the floor.
 *
 * Knobs (defines): BLOCK, VEC (values per access: 1, 2, 4; 8 for the
 * 2-byte types), ROWS (the rows a block takes, their loads all in flight
 * before the first use: the grid is cdiv(cols, BLOCK VEC) by cdiv(rows,
 * ROWS)), CACHE_HINT (pointwise.cuh, which comes before this file, says;
 * the per-row and per-column inputs are read through the read-only path
 * whatever it is). */

#define PER_ROW ({{per_row}})
#define PER_COL ({{per_col}})
/* input k's kind: 0 whole, 1 per row, 2 per column, 3 one value */
#define bc_kind(k) (((PER_ROW >> (k) & 1) ? 1 : 0) + ((PER_COL >> (k) & 1) ? 2 : 0))
/* a value per row, or the one value (index 0), read once a row */
#define bc_scalar(k) (bc_kind(k) == 1 || bc_kind(k) == 3)

extern "C" __global__ void __launch_bounds__(BLOCK)
broadcast({{in_params}}, real *__restrict__ bc_out, long long rows, long long cols)
{
	const real *bc_in[NIN] = { {{in_ptrs}} };
	const long long c0 = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;
	const long long r0 = (long long)blockIdx.y * ROWS;
	const long long r1 = min(r0 + ROWS, rows);
	bool vec = cols % VEC == 0 && (reinterpret_cast<unsigned long long>(bc_out) % (VEC * REAL_BYTES)) == 0;

#pragma unroll
	for (int k = 0; k < NIN; k++)
		vec &= bc_scalar(k) ||
			(reinterpret_cast<unsigned long long>(bc_in[k]) % (VEC * REAL_BYTES)) == 0;
	if (c0 >= cols)
		return;
	if (vec) {
		/* the per-column inputs' VEC values, the same for every row */
		pw_vec colv[NIN];

#pragma unroll
		for (int k = 0; k < NIN; k++)
			if (bc_kind(k) == 2)
				colv[k] = rv_ldg(reinterpret_cast<const pw_vec *>(bc_in[k] + c0));
		/* ROWS rows of loads in flight before the first use */
		pw_vec v[ROWS][NIN];
		float rowv[ROWS][NIN];

#pragma unroll
		for (int i = 0; i < ROWS; i++) {
			const long long r = r0 + i;

#pragma unroll
			for (int k = 0; k < NIN; k++) {
				if (r >= r1)
					continue;
				if (bc_kind(k) == 0)
					v[i][k] = pw_load(bc_in[k] + r * cols + c0);
				else if (bc_scalar(k))
					rowv[i][k] = real_ldg(bc_in[k] + (bc_kind(k) == 1 ? r : 0));
				else
					v[i][k] = colv[k];
			}
		}
#pragma unroll
		for (int i = 0; i < ROWS; i++) {
			const long long r = r0 + i;
			pw_vec o;

			if (r >= r1)
				continue;
#pragma unroll
			for (int l = 0; l < VEC; l++) {
				float a[NIN];

#pragma unroll
				for (int k = 0; k < NIN; k++)
					a[k] = bc_scalar(k) ? rowv[i][k] : v[i][k].at(l);
				o.set(l, pw_op(a));
			}
			pw_store(bc_out + r * cols + c0, o);
		}
		return;
	}
	/* unaligned buffers, or rows not a whole number of vectors: a value at
	 * a time */
	for (long long r = r0; r < r1; r++)
		for (long long c = c0; c < min(c0 + VEC, cols); c++) {
			float a[NIN];

#pragma unroll
			for (int k = 0; k < NIN; k++)
				a[k] = real_f(bc_in[k][bc_kind(k) == 0 ? r * cols + c : bc_kind(k) == 1 ? r :
					bc_kind(k) == 2 ? c : 0]);
			bc_out[r * cols + c] = real_of(pw_op(a));
		}
}
