/* gemv_split.cu: the gemv family's kernels (docs/templates.md): y = A @ x
 * with A M x K row-major and x K values; memory-bound, one pass over A.
 *
 * gemv_split: block (bx, s) sums the products of ROWS_PER_BLOCK rows of A
 * with x over the s-th of SPLIT equal ranges of k (a multiple of 4 long,
 * so that each range starts as aligned as the rows), and writes one
 * partial per row into partial[row * SPLIT + s]: SPLIT keeps many blocks
 * busy however few the rows. Each thread keeps UNROLL loads of VEC floats
 * per row in flight (16-byte loads at VEC 4); rows of a block share each
 * load of x, which stays in L2; CACHE_HINT 1 reads A with the streaming
 * hint (evict first). Where rows are not aligned to the vector (K % VEC)
 * the same sums are taken one float at a time.
 * gemv_sum: y[row] = the row's SPLIT partials, added in order.
 *
 * On the H200, 2048 x 1048576 (8.6 GB) took 1.90 ms at the defaults
 * (4.53 TB/s; CACHE_HINT 1: 1.93 ms), against cuBLAS's 2.31 ms. */

#define WARPS (BLOCK / 32)

/* Loads VEC floats at p (VEC-aligned) into v; stream marks data read once. */
template <bool STREAM>
static __device__ __forceinline__ void load_vec(const float *p, float *v)
{
#if VEC == 4
	float4 t = STREAM && CACHE_HINT ? __ldcs((const float4 *)p) :
		__ldg((const float4 *)p);

	v[0] = t.x;
	v[1] = t.y;
	v[2] = t.z;
	v[3] = t.w;
#elif VEC == 2
	float2 t = STREAM && CACHE_HINT ? __ldcs((const float2 *)p) :
		__ldg((const float2 *)p);

	v[0] = t.x;
	v[1] = t.y;
#else
	v[0] = STREAM && CACHE_HINT ? __ldcs(p) : __ldg(p);
#endif
}

/* The sum of v over the block, in thread 0; red holds WARPS floats. */
static __device__ __forceinline__ float block_sum(float v, float *red)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	v = 0.0f;
	if (threadIdx.x == 0)
		for (int w = 0; w < WARPS; w++)
			v += red[w];
	return v;
}

/* Partial sums of rows blockIdx.x * ROWS_PER_BLOCK... over k range
 * blockIdx.y of SPLIT (above); BLOCK threads. */
extern "C" __global__ void __launch_bounds__(BLOCK)
gemv_split(const float *__restrict__ A, const float *__restrict__ x,
	float *__restrict__ partial, long long M, long long K)
{
	__shared__ float red[ROWS_PER_BLOCK][WARPS];
	const long long row0 = (long long)blockIdx.x * ROWS_PER_BLOCK;
	const int s = blockIdx.y;
	/* Ranges are a multiple of 4 long, so each starts 16-byte aligned
	 * wherever rows do. */
	const long long chunk = ((K + SPLIT - 1) / SPLIT + 3) / 4 * 4;
	const long long kb = s * chunk < K ? s * chunk : K;
	const long long ke = kb + chunk < K ? kb + chunk : K;
	const float *a[ROWS_PER_BLOCK];
	float sum[ROWS_PER_BLOCK];

	/* Rows past M (the last block's) repeat row M - 1 and are not
	 * written. */
#pragma unroll
	for (int r = 0; r < ROWS_PER_BLOCK; r++) {
		long long row = row0 + r < M ? row0 + r : M - 1;

		a[r] = A + row * K;
		sum[r] = 0.0f;
	}
	if (K % VEC == 0 && ((unsigned long long)A | (unsigned long long)x) %
		(VEC * 4) == 0) {
		const long long ve = ke / VEC;
		long long j = kb / VEC + threadIdx.x;

		for (; j + (UNROLL - 1) * BLOCK < ve; j += UNROLL * BLOCK) {
			float xv[UNROLL][VEC], av[UNROLL][ROWS_PER_BLOCK][VEC];

#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				load_vec<false>(x + (j + u * BLOCK) * VEC, xv[u]);
#pragma unroll
				for (int r = 0; r < ROWS_PER_BLOCK; r++)
					load_vec<true>(a[r] + (j + u * BLOCK) * VEC, av[u][r]);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int r = 0; r < ROWS_PER_BLOCK; r++)
#pragma unroll
					for (int e = 0; e < VEC; e++)
						sum[r] = fmaf(av[u][r][e], xv[u][e], sum[r]);
		}
		for (; j < ve; j += BLOCK) {
			float xv[VEC], av[VEC];

			load_vec<false>(x + j * VEC, xv);
#pragma unroll
			for (int r = 0; r < ROWS_PER_BLOCK; r++) {
				load_vec<true>(a[r] + j * VEC, av);
#pragma unroll
				for (int e = 0; e < VEC; e++)
					sum[r] = fmaf(av[e], xv[e], sum[r]);
			}
		}
	} else {
		for (long long j = kb + threadIdx.x; j < ke; j += BLOCK) {
			float xj = __ldg(x + j);

#pragma unroll
			for (int r = 0; r < ROWS_PER_BLOCK; r++)
				sum[r] = fmaf(__ldg(a[r] + j), xj, sum[r]);
		}
	}
#pragma unroll
	for (int r = 0; r < ROWS_PER_BLOCK; r++) {
		float t = block_sum(sum[r], red[r]);

		if (threadIdx.x == 0 && row0 + r < M)
			partial[(row0 + r) * SPLIT + s] = t;
	}
}

/* y[row] = the sum of the row's SPLIT partials; 256 threads, a row each. */
extern "C" __global__ void __launch_bounds__(256)
gemv_sum(const float *__restrict__ partial, float *__restrict__ y, long long M)
{
	long long row = (long long)blockIdx.x * 256 + threadIdx.x;
	float t = 0.0f;

	if (row >= M)
		return;
	for (int s = 0; s < SPLIT; s++)
		t += partial[row * SPLIT + s];
	y[row] = t;
}
