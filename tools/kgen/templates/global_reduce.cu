/* global_reduce family: one reduction over all n values.
 *   mse:           loss = mean((a - b)^2): one read of a and b (the floor).
 *   fro_normalize: y = x / sqrt(sum(x^2)): a read for the sum, then a read
 *                  and a write: 3 passes (nothing can be written before
 *                  every value has been read).
 * gr_partial: SPLIT blocks stride over the data (UNROLL vectors in flight
 * per thread), each thread sums a tile in float and adds the tile to a
 * double; each block writes its sum (double) to a workspace. gr_final:
 * one block adds the SPLIT sums in a fixed order. gr_apply (fro): y = x *
 * (1 / norm), streamed. Buffers not aligned to VEC floats (never from
 * cudaMalloc) take the scalar path. Indices are 64-bit. */
#define VARIANT_{{variant}} 1
#define OP_{{op}} 1

#if VEC == 4
typedef float4 gr_vec;
#elif VEC == 2
typedef float2 gr_vec;
#elif VEC == 1
typedef float gr_vec;
#else
#error "VEC must be 1, 2 or 4"
#endif

static __device__ __forceinline__ bool gr_aligned(const void *p)
{
	return reinterpret_cast<unsigned long long>(p) % (VEC * 4) == 0;
}

static __device__ __forceinline__ float gr_lane(const gr_vec &v, int l)
{
	return reinterpret_cast<const float *>(&v)[l];
}

static __device__ __forceinline__ double gr_warp_sum(double v)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* The block's sum, in thread 0 (a fixed order: the same bits every run). */
static __device__ __forceinline__ double gr_block_sum(double v)
{
	__shared__ double gr_w[BLOCK / 32];

	v = gr_warp_sum(v);
	if (threadIdx.x % 32 == 0)
		gr_w[threadIdx.x / 32] = v;
	__syncthreads();
	if (threadIdx.x == 0) {
		v = 0.0;
		for (int w = 0; w < BLOCK / 32; w++)
			v += gr_w[w];
	}
	return v;
}

/* The term one value contributes: (a - b)^2 or x^2. */
#if defined(OP_mse)
#define GR_TERM(a, b) (((a) - (b)) * ((a) - (b)))
#else
#define GR_TERM(a, b) ((a) * (a))
#endif

/* Grid (SPLIT): part[block] = the sum of the terms over the block's
 * grid-stride share. b is ignored (may equal a) for fro_normalize. */
extern "C" __global__ void __launch_bounds__(BLOCK)
gr_partial(const float *__restrict__ a, const float *__restrict__ b,
	double *__restrict__ part, long long n)
{
	double sum = 0.0;

	if (gr_aligned(a) && gr_aligned(b)) {
		const gr_vec *av = reinterpret_cast<const gr_vec *>(a);
#if defined(OP_mse)
		const gr_vec *bv = reinterpret_cast<const gr_vec *>(b);
#endif
		const long long nv = n / VEC;
		const long long step = (long long)SPLIT * BLOCK * UNROLL;

		for (long long i = (long long)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
		     i < nv; i += step) {
			gr_vec x[UNROLL];
#if defined(OP_mse)
			gr_vec y[UNROLL];
#endif
			const bool whole = i + (long long)(UNROLL - 1) * BLOCK < nv;
			float t = 0.0f;

#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (whole || i + u * BLOCK < nv) {
					x[u] = __ldcs(av + i + u * BLOCK);
#if defined(OP_mse)
					y[u] = __ldcs(bv + i + u * BLOCK);
#endif
				}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				if (whole || i + u * BLOCK < nv)
#pragma unroll
					for (int l = 0; l < VEC; l++)
#if defined(OP_mse)
						t += GR_TERM(gr_lane(x[u], l), gr_lane(y[u], l));
#else
						t += GR_TERM(gr_lane(x[u], l), 0.0f);
#endif
			sum += t;
		}
		/* the last n % VEC values */
		if (blockIdx.x == 0)
			for (long long j = nv * VEC + threadIdx.x; j < n; j += BLOCK)
				sum += GR_TERM(a[j], b[j]);
	} else {
		for (long long j = (long long)blockIdx.x * BLOCK + threadIdx.x; j < n;
		     j += (long long)SPLIT * BLOCK)
			sum += GR_TERM(a[j], b[j]);
	}
	sum = gr_block_sum(sum);
	if (threadIdx.x == 0)
		part[blockIdx.x] = sum;
}

/* Grid (1): mse: out[0] = sum / n (the loss); fro_normalize: out[0] =
 * 1 / sqrt(sum) (the scale gr_apply multiplies by). */
extern "C" __global__ void __launch_bounds__(BLOCK)
gr_final(const double *__restrict__ part, float *__restrict__ out, long long n)
{
	double sum = 0.0;

	for (int i = threadIdx.x; i < SPLIT; i += BLOCK)
		sum += part[i];
	sum = gr_block_sum(sum);
	if (threadIdx.x == 0) {
#if defined(OP_mse)
		out[0] = (float)(sum / (double)n);
#else
		out[0] = (float)(1.0 / sqrt(sum));
#endif
	}
}

#if defined(VARIANT_fro)
/* Grid (cdiv(cdiv(n, VEC), BLOCK*UNROLL)), walked from the last tile to the
 * first: the tiles gr_partial read last may still be in L2. */
extern "C" __global__ void __launch_bounds__(BLOCK)
gr_apply(const float *__restrict__ x, const float *__restrict__ scale,
	float *__restrict__ y, long long n)
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
				v[u] = __ldcs(xv + i + u * BLOCK);
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			if (whole || i + u * BLOCK < nv) {
				float *f = reinterpret_cast<float *>(&v[u]);
#pragma unroll
				for (int l = 0; l < VEC; l++)
					f[l] *= s;
				__stcs(yv + i + u * BLOCK, v[u]);
			}
		if (tile == 0)
			for (long long j = nv * VEC + threadIdx.x; j < n; j += BLOCK)
				y[j] = x[j] * s;
		return;
	}
	for (long long j = tile * BLOCK * UNROLL * VEC + threadIdx.x;
	     j < n && j < (tile + 1) * BLOCK * UNROLL * VEC; j += BLOCK)
		y[j] = x[j] * s;
}
#endif
