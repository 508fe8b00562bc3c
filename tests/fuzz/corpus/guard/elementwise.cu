/* elementwise family: out[i] = EXPR(inputs[i]) over numel values, for any
 * number of float inputs. Each block streams a tile of BLOCK*VEC*UNROLL
 * values: UNROLL independent VEC-wide loads per input are in flight before
 * the first use; a grid-stride loop covers what the grid does not (a capped,
 * persistent grid). One read of each input and one write: the floor.
 *
 * Knobs (defines): BLOCK, VEC (1, 2, 4 floats per access), UNROLL,
 * CACHE_HINT (1: streaming loads and stores, ld.global.cs / st.global.cs,
 * which do not keep the stream in L2; 0: loads through the read-only path). */

#define NIN {{ninputs}}

#if VEC == 4
typedef float4 ew_vec;
#elif VEC == 2
typedef float2 ew_vec;
#elif VEC == 1
typedef float ew_vec;
#else
#error "VEC must be 1, 2 or 4"
#endif

/* The task's expression over one value of each input; IN(k) is the value
 * of input k. */
static __device__ __forceinline__ float ew_op(const float *ew_a)
{
#define IN(k) ew_a[k]
	{{bind}}
#undef IN
	return ({{expr}});
}

static __device__ __forceinline__ ew_vec ew_load(const float *p)
{
#if CACHE_HINT
	return __ldcs(reinterpret_cast<const ew_vec *>(p));
#else
	return __ldg(reinterpret_cast<const ew_vec *>(p));
#endif
}

static __device__ __forceinline__ void ew_store(float *p, ew_vec v)
{
#if CACHE_HINT
	__stcs(reinterpret_cast<ew_vec *>(p), v);
#else
	*reinterpret_cast<ew_vec *>(p) = v;
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK)
elementwise({{in_params}}, float *__restrict__ ew_out, long long n)
{
	const float *ew_in[NIN] = { {{in_ptrs}} };
	const long long tid = (long long)blockIdx.x * BLOCK + threadIdx.x;
	const long long nthreads = (long long)gridDim.x * BLOCK;
	bool aligned = (reinterpret_cast<unsigned long long>(ew_out) % (VEC * 4)) == 0;

#pragma unroll
	for (int k = 0; k < NIN; k++)
		aligned &= (reinterpret_cast<unsigned long long>(ew_in[k]) % (VEC * 4)) == 0;
	if (VEC > 1 && !aligned) {
		/* buffers not VEC-aligned (never from cudaMalloc): one value at a time */
		for (long long i = tid; i < n; i += nthreads) {
			float a[NIN];
#pragma unroll
			for (int k = 0; k < NIN; k++)
				a[k] = ew_in[k][i];
			ew_out[i] = ew_op(a);
		}
		return;
	}

	const long long nvec = n / VEC;
	const long long step = (long long)gridDim.x * BLOCK * UNROLL;
	for (long long base = (long long)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
	     base < nvec; base += step) {
		/* a whole tile needs no bounds check between the loads */
		const bool whole = base + (long long)(UNROLL - 1) * BLOCK < nvec;
		ew_vec v[NIN][UNROLL];

		if (whole) {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int k = 0; k < NIN; k++)
					v[k][u] = ew_load(ew_in[k] + (base + (long long)u * BLOCK) * VEC);
		} else {
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int k = 0; k < NIN; k++)
					if (base + (long long)u * BLOCK < nvec)
						v[k][u] = ew_load(ew_in[k] + (base + (long long)u * BLOCK) * VEC);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			long long i = base + (long long)u * BLOCK;
			ew_vec r;

			if (i >= nvec)
				break;
#pragma unroll
			for (int l = 0; l < VEC; l++) {
				float a[NIN];
#pragma unroll
				for (int k = 0; k < NIN; k++)
					a[k] = reinterpret_cast<const float *>(&v[k][u])[l];
				reinterpret_cast<float *>(&r)[l] = ew_op(a);
			}
			ew_store(ew_out + i * VEC, r);
		}
	}
	/* the last n % VEC values */
	if (tid < n - nvec * VEC) {
		long long i = nvec * VEC + tid;
		float a[NIN];
#pragma unroll
		for (int k = 0; k < NIN; k++)
			a[k] = ew_in[k][i];
		ew_out[i] = ew_op(a);
	}
}
