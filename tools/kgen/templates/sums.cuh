/* sums.cuh: sums in double across a warp, and of two values across a
 * block of BLOCK threads, each in a fixed order (the same bits every run):
 * the statistics of the norms (layer_norm, stat_norm) and of the losses
 * (row_loss). */

static __device__ __forceinline__ double warp_sum(double v)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* The block's sums of a and b, in thread 0. */
static __device__ __forceinline__ void block_sum2(double &a, double &b)
{
	__shared__ double sums_a[BLOCK / 32], sums_b[BLOCK / 32];

	a = warp_sum(a);
	b = warp_sum(b);
	if (threadIdx.x % 32 == 0) {
		sums_a[threadIdx.x / 32] = a;
		sums_b[threadIdx.x / 32] = b;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		a = b = 0.0;
		for (int w = 0; w < BLOCK / 32; w++) {
			a += sums_a[w];
			b += sums_b[w];
		}
	}
}
