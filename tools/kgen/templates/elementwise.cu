/* elementwise family: out[i] = EXPR(inputs[i]) over numel values, for any
 * number of float inputs (f32, f16 or bf16 in memory, float in registers:
 * real.cuh). Each block streams a tile of BLOCK*VEC*UNROLL
 * values: UNROLL independent VEC-wide loads per input are in flight before
 * the first use; a grid-stride loop covers what the grid does not (a capped,
 * persistent grid). One read of each input and one write: the floor.
 *
 * Knobs (defines): BLOCK, VEC (1, 2, 4 values per access; 8 for the
 * 2-byte types: 16 bytes at most), UNROLL,
 * CACHE_HINT (pointwise.cuh, which comes before this file, says). */

extern "C" __global__ void __launch_bounds__(BLOCK)
elementwise({{in_params}}, real *__restrict__ ew_out, long long n)
{
	const real *ew_in[NIN] = { {{in_ptrs}} };
	const long long tid = (long long)blockIdx.x * BLOCK + threadIdx.x;
	const long long nthreads = (long long)gridDim.x * BLOCK;
	bool aligned = (reinterpret_cast<unsigned long long>(ew_out) % (VEC * REAL_BYTES)) == 0;

#pragma unroll
	for (int k = 0; k < NIN; k++)
		aligned &= (reinterpret_cast<unsigned long long>(ew_in[k]) % (VEC * REAL_BYTES)) == 0;
	/* buffers not VEC-aligned (never from cudaMalloc) go one value at a
	 * time, in the loop at the end that otherwise takes the last n % VEC */
	const long long nvec = VEC == 1 || aligned ? n / VEC : 0;
	const long long step = (long long)gridDim.x * BLOCK * UNROLL;
	for (long long base = (long long)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
	     base < nvec; base += step) {
		/* a whole tile needs no bounds check between the loads */
		const bool whole = base + (long long)(UNROLL - 1) * BLOCK < nvec;
		pw_vec v[NIN][UNROLL];

		if (whole) {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int k = 0; k < NIN; k++)
					v[k][u] = pw_load(ew_in[k] + (base + (long long)u * BLOCK) * VEC);
		} else {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int k = 0; k < NIN; k++)
					if (base + (long long)u * BLOCK < nvec)
						v[k][u] = pw_load(ew_in[k] + (base + (long long)u * BLOCK) * VEC);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			long long i = base + (long long)u * BLOCK;
			pw_vec r;

			if (i >= nvec)
				break;
#pragma unroll
			for (int l = 0; l < VEC; l++) {
				float a[NIN];
#pragma unroll
				for (int k = 0; k < NIN; k++)
					a[k] = v[k][u].at(l);
				r.set(l, pw_op(a));
			}
			pw_store(ew_out + i * VEC, r);
		}
	}
	/* the last n % VEC values (or all of them, unaligned) */
	for (long long i = nvec * VEC + tid; i < n; i += nthreads) {
		float a[NIN];
#pragma unroll
		for (int k = 0; k < NIN; k++)
			a[k] = real_f(ew_in[k][i]);
		ew_out[i] = real_of(pw_op(a));
	}
}
