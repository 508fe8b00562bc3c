/* pointwise.cuh: what the families that map their inputs' values share
 * (elementwise, broadcast): the task's expression over one value of each
 * input, and VEC-wide loads and stores as the CACHE_HINT knob asks
 * (1: streaming, ld.global.cs / st.global.cs, which do not keep the
 * stream in L2; 0: loads through the read-only path). */

#define NIN {{ninputs}}

#if VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8
#error "VEC must be 1, 2, 4 or 8"
#endif
typedef realv<VEC> pw_vec;

/* The task's expression over one value of each input; IN(k) is the value
 * of input k. */
static __device__ __forceinline__ float pw_op(const float *pw_a)
{
#define IN(k) pw_a[k]
	{{bind}}
#undef IN
	return ({{expr}});
}

static __device__ __forceinline__ pw_vec pw_load(const real *p)
{
#if CACHE_HINT
	return rv_ldcs(reinterpret_cast<const pw_vec *>(p));
#else
	return rv_ldg(reinterpret_cast<const pw_vec *>(p));
#endif
}

static __device__ __forceinline__ void pw_store(real *p, pw_vec v)
{
#if CACHE_HINT
	rv_stcs(reinterpret_cast<pw_vec *>(p), v);
#else
	*reinterpret_cast<pw_vec *>(p) = v;
#endif
}
