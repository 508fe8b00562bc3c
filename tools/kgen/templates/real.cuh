/* real.cuh: the storage type of the task's float tensors, which kgen puts
 * before every family's source. In memory a float tensor is `real`: f32,
 * or f16 or bf16 in two bytes (REAL_KIND 0, 1, 2, from the task); in
 * registers every value is a float, so sums and statistics accumulate in
 * f32 whatever the storage. real_f widens one value, real_of rounds a
 * float to nearest for a store. realv<N> is N reals in one access (16
 * bytes at most), loaded whole through an integer vector of its width;
 * realv<N>::at(l) is element l widened, set(l, v) stores v rounded. */
#define REAL_KIND {{real_kind}}
#define REAL_BYTES {{real_bytes}}

#if REAL_KIND == 0
typedef float real;
static __device__ __forceinline__ float real_f(real v) { return v; }
static __device__ __forceinline__ real real_of(float v) { return v; }
#else
struct __align__(2) real { unsigned short bits; };
#if REAL_KIND == 1
static __device__ __forceinline__ float real_f(real v)
{
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
	return f;
}
static __device__ __forceinline__ real real_of(float f)
{
	real v;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v.bits) : "f"(f));
	return v;
}
#else
static __device__ __forceinline__ float real_f(real v)
{
	return __uint_as_float((unsigned)v.bits << 16);
}
static __device__ __forceinline__ real real_of(float f)
{
	real v;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v.bits) : "f"(f));
	return v;
}
#endif
#endif

/* An access's register type: f32's own vector types (the code f32
 * kernels had before the storage type), integer words for the 2-byte
 * types, whose values are taken out by name (registers, not memory: the
 * word index is a constant once the loops are unrolled). */
template <int BYTES> struct real_raw;
#if REAL_KIND == 0
template <> struct real_raw<4> { typedef float t; };
template <> struct real_raw<8> { typedef float2 t; };
template <> struct real_raw<16> { typedef float4 t; };
#else
template <> struct real_raw<2> { typedef unsigned short t; };
template <> struct real_raw<4> { typedef unsigned t; };
template <> struct real_raw<8> { typedef uint2 t; };
template <> struct real_raw<16> { typedef uint4 t; };

static __device__ __forceinline__ unsigned &real_word(unsigned &r, int) { return r; }
static __device__ __forceinline__ unsigned &real_word(uint2 &r, int i) { return i ? r.y : r.x; }
static __device__ __forceinline__ unsigned &real_word(uint4 &r, int i)
{
	return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w;
}
#endif

template <int N> struct realv {
	typedef typename real_raw<REAL_BYTES * N>::t raw_t;
	raw_t raw;
	__device__ __forceinline__ float at(int l) const
	{
#if REAL_KIND == 0
		return reinterpret_cast<const float *>(&raw)[l];
#else
		if constexpr (N == 1)
			return real_f(real{raw});
		else {
			const unsigned w = real_word(const_cast<raw_t &>(raw), l / 2);
			return real_f(real{(unsigned short)(l % 2 ? w >> 16 : w & 0xFFFFu)});
		}
#endif
	}
	__device__ __forceinline__ void set(int l, float v)
	{
#if REAL_KIND == 0
		reinterpret_cast<float *>(&raw)[l] = v;
#else
		if constexpr (N == 1)
			raw = real_of(v).bits;
		else {
			unsigned &w = real_word(raw, l / 2);
			const unsigned b = real_of(v).bits;
			w = l % 2 ? (w & 0xFFFFu) | b << 16 : (w & 0xFFFF0000u) | b;
		}
#endif
	}
};

/* Loads of N reals at p (aligned to the access): through the read-only
 * path, streaming (evict-first), cached in L2 only, and kept in L2
 * (evict-last, for data read again); a streaming store. A plain *p reads
 * or writes through the default path. */
template <int N> static __device__ __forceinline__ realv<N> rv_ldg(const realv<N> *p)
{
	realv<N> r;
	r.raw = __ldg(&p->raw);
	return r;
}
template <int N> static __device__ __forceinline__ realv<N> rv_ldcs(const realv<N> *p)
{
	realv<N> r;
	r.raw = __ldcs(&p->raw);
	return r;
}
template <int N> static __device__ __forceinline__ realv<N> rv_ldcg(const realv<N> *p)
{
	realv<N> r;
	r.raw = __ldcg(&p->raw);
	return r;
}
#if REAL_KIND == 0
#define RV_KEEP_T "f32"
#define RV_KEEP_R "=f"
typedef float rv_keep_word;
#else
#define RV_KEEP_T "b32"
#define RV_KEEP_R "=r"
typedef unsigned rv_keep_word;
#endif
template <int N> static __device__ __forceinline__ realv<N> rv_ld_keep(const realv<N> *p)
{
	realv<N> r;
	rv_keep_word *w = reinterpret_cast<rv_keep_word *>(&r.raw);
	if constexpr (sizeof(r.raw) == 16)
		asm("{\n\t.reg .b64 pol;\n\t"
		    "createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
		    "ld.global.nc.L2::cache_hint.v4." RV_KEEP_T " {%0, %1, %2, %3}, [%4], pol;\n\t}"
		    : RV_KEEP_R(w[0]), RV_KEEP_R(w[1]), RV_KEEP_R(w[2]), RV_KEEP_R(w[3]) : "l"(p));
	else if constexpr (sizeof(r.raw) == 8)
		asm("{\n\t.reg .b64 pol;\n\t"
		    "createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
		    "ld.global.nc.L2::cache_hint.v2." RV_KEEP_T " {%0, %1}, [%2], pol;\n\t}"
		    : RV_KEEP_R(w[0]), RV_KEEP_R(w[1]) : "l"(p));
	else if constexpr (sizeof(r.raw) == 4)
		asm("{\n\t.reg .b64 pol;\n\t"
		    "createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
		    "ld.global.nc.L2::cache_hint." RV_KEEP_T " %0, [%1], pol;\n\t}"
		    : RV_KEEP_R(w[0]) : "l"(p));
	else
		asm("{\n\t.reg .b64 pol;\n\t"
		    "createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n\t"
		    "ld.global.nc.L2::cache_hint.b16 %0, [%1], pol;\n\t}"
		    : "=h"(*reinterpret_cast<unsigned short *>(&r.raw)) : "l"(p));
	return r;
}
#undef RV_KEEP_T
#undef RV_KEEP_R
template <int N> static __device__ __forceinline__ void rv_stcs(realv<N> *p, realv<N> v)
{
	__stcs(&p->raw, v.raw);
}

/* One real widened: through the read-only path; streaming. A 2-byte one
 * is a plain load: the intrinsics' 16-bit forms are volatile asm, which
 * ptxas keeps in place and in some kernels spills around (measured by the
 * sweep's spill check). */
static __device__ __forceinline__ float real_ldg(const real *p)
{
#if REAL_KIND == 0
	return __ldg(p);
#else
	return real_f(*p);
#endif
}
static __device__ __forceinline__ float real_ldcs(const real *p)
{
#if REAL_KIND == 0
	return __ldcs(p);
#else
	return real_f(*p);
#endif
}
/* One float stored rounded, streaming (a 2-byte one plainly, as above). */
static __device__ __forceinline__ void real_stcs(real *p, float v)
{
#if REAL_KIND == 0
	__stcs(p, v);
#else
	*p = real_of(v);
#endif
}
