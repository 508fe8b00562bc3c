/* gemm_h3.cuh: 3xFP16 split precision, what variants h3 (gemm_tiled.cu)
 * and wg (gemm_wg.cu) share: the scale of each operand and the split of a
 * scaled value into fp16 hi and lo. gemm_tiled.cu's top says why and how
 * accurate it is. */

/* fp16 bits of x rounded to nearest, and back. */
static __device__ __forceinline__ unsigned short h3_f16(float x)
{
	unsigned short h;

	asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(h) : "f"(x));
	return h;
}

static __device__ __forceinline__ float h3_f32(unsigned short h)
{
	float x;

	asm("cvt.f32.f16 %0, %1;\n" : "=f"(x) : "h"(h));
	return x;
}

/* The largest m over a block of 256 threads, returned to every thread. */
static __device__ __forceinline__ float h3_block_max(float m)
{
	__shared__ float h3_red[8];

#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if (threadIdx.x % 32 == 0)
		h3_red[threadIdx.x / 32] = m;
	__syncthreads();
	m = h3_red[0];
#pragma unroll
	for (int w = 1; w < 8; w++)
		m = fmaxf(m, h3_red[w]);
	__syncthreads();
	return m;
}

/* |x| where finite, else 0. */
static __device__ __forceinline__ float h3_mag(float x)
{
	const float m = fabsf(x);

	return m < __int_as_float(0x7f800000) ? m : 0.0f;
}

/* This thread's largest finite magnitude of its share of the n values at
 * x, the grid's blocks of 256 threads along x striding over them. */
static __device__ __forceinline__ float h3_absmax_part(const float *__restrict__ x,
	long long n)
{
	const long long stride = (long long)gridDim.x * 256;
	long long i = (long long)blockIdx.x * 256 + threadIdx.x, done = 0;
	float m = 0.0f;

	if (((unsigned long long)x & 15) == 0) {
		const float4 *x4 = reinterpret_cast<const float4 *>(x);

		long long j = i;

		/* four vectors a thread in flight, then one at a time */
		for (; j + 3 * stride < n / 4; j += 4 * stride) {
			float4 v[4];

#pragma unroll
			for (int u = 0; u < 4; u++)
				v[u] = __ldcs(x4 + j + u * stride);
#pragma unroll
			for (int u = 0; u < 4; u++)
				m = fmaxf(m, fmaxf(fmaxf(h3_mag(v[u].x), h3_mag(v[u].y)),
					fmaxf(h3_mag(v[u].z), h3_mag(v[u].w))));
		}
		for (; j < n / 4; j += stride) {
			const float4 v = __ldcs(x4 + j);

			m = fmaxf(m, fmaxf(fmaxf(h3_mag(v.x), h3_mag(v.y)),
				fmaxf(h3_mag(v.z), h3_mag(v.w))));
		}
		done = n / 4 * 4;
	}
	for (long long j = done + i; j < n; j += stride)
		m = fmaxf(m, h3_mag(x[j]));
	return m;
}

/* Grid (G, 2), 256 threads: block (b, o) writes the largest finite
 * magnitude of its share of operand o (0: a, na values; 1: b) to
 * scale[2 + o * G + b]. */
extern "C" __global__ void __launch_bounds__(256)
gemm_h3_absmax(const float *__restrict__ a, long long na,
	const float *__restrict__ b, long long nb, int *__restrict__ scale)
{
	const float m = h3_block_max(h3_absmax_part(blockIdx.y ? b : a,
		blockIdx.y ? nb : na));

	if (threadIdx.x == 0)
		reinterpret_cast<float *>(scale)[2 + blockIdx.y * gridDim.x + blockIdx.x] = m;
}

/* q = a / b and r = a % b, in 32 bits where both fit (a 64-bit division
 * is a long subroutine). */
static __device__ __forceinline__ void h3_divmod(long long a, long long b,
	long long *q, long long *r)
{
	if (((unsigned long long)a | (unsigned long long)b) >> 32 == 0) {
		const unsigned q32 = (unsigned)a / (unsigned)b;

		*q = q32;
		*r = (unsigned)a - q32 * (unsigned)b;
	} else {
		*q = a / b;
		*r = a % b;
	}
}

/* The exponent e of the scale 2^e that puts the largest magnitude m of an
 * operand in [2^13, 2^14): from 13 - 127 to 13 + 149 (m the largest float
 * or the smallest subnormal); 0 where m is 0. */
static __device__ __forceinline__ int h3_exponent(float m)
{
	return m > 0.0f ? 13 - ilogbf(m) : 0;
}

/* 2^e as two normal factors p1 p2 (2^e1 2^e2), so that x p1 p2 is
 * exactly scalbnf(x, e) for any e h3_exponent gives. */
static __device__ __forceinline__ void h3_factors(int e, float *p1, float *p2)
{
	const int e1 = min(e, 127);

	*p1 = __int_as_float((127 + e1) << 23);
	*p2 = __int_as_float((127 + e - e1) << 23);
}

/* The scale of operand o (0: A, 1: B) from gemm_h3_absmax's partial
 * maxima in scale (a grid of as many blocks, 256 threads, calls it): 2^e
 * of h3_exponent, as two factors p1 p2; block 0 writes e to scale[o]. */
static __device__ __forceinline__ void h3_scale(int *scale, int o, float *p1,
	float *p2)
{
	const float *part = reinterpret_cast<const float *>(scale) + 2 + o * gridDim.x;
	float m = 0.0f;

	for (int i = threadIdx.x; i < (int)gridDim.x; i += 256)
		m = fmaxf(m, part[i]);
	const int e = h3_exponent(h3_block_max(m));

	h3_factors(e, p1, p2);
	if (blockIdx.x == 0 && threadIdx.x == 0)
		scale[o] = e;
}

/* The fp16 pieces of a scaled value s: hi = fp16(s) (rounded) and lo =
 * fp16(s - hi); an infinite hi (an infinite x) keeps lo 0, not NaN. */
static __device__ __forceinline__ void h3_pieces(float s, unsigned short *hi,
	unsigned short *lo)
{
	const float back = h3_f32(*hi = h3_f16(s));

	*lo = h3_f16(fabsf(back) < __int_as_float(0x7f800000) ? s - back : 0.0f);
}
