/* attention_small.cu: the attention family's variant `small`
 * (docs/templates.md), O[b] = softmax(scale Q[b] K[b]^T, masked) V[b] in
 * one launch on the CUDA cores, in fp32 (each product a sum of fp32
 * fused multiply-adds, no split): for problems so small that the tensor
 * core variants' passes and launches (wg's five, flash's three) cost more
 * than the work. Shapes and the mask as attention.cu's.
 *
 * A block takes ROWS = WARPS x RW rows of O of one matrix (grid: the
 * batch's matrices times their blocks of rows), a warp RW of them, and
 * walks the keys 32 at a time, the block's last row's last key the end
 * where causal. Each step's 32 rows of K (each padded by one float, so
 * that lane j reads key j's values without bank conflicts) and of V come
 * into shared memory by cp.async, one step ahead of the one computed (two
 * buffers), every copy of a step in flight at once: a copy loop that
 * waited on each load took 20 us for 32 matrices of 32 x 32. Lane j
 * computes key j's score against each of its warp's rows (Q's rows in
 * shared memory, read four values at once as every lane reads the same),
 * scales and masks it, and the warp keeps each row's running maximum (a
 * shuffle reduction a step) while every lane keeps its own share of the
 * row's sum; the probabilities go to shared memory, and each lane sums
 * them times V's values into a step's partial of O's columns lane, lane +
 * 32, ... (at most VC = 8 of them: v_dim at most 256), which joins the
 * running O, rescaled by the new maximum, once a step: sums of 32 and
 * then of the steps, not one of every key (rel_l2 1.05e-6 over 3000 keys
 * summed one by one). O's rows are divided by their sum (the lanes'
 * shares added by shuffles) and stored once. exp2f with log2(e) folded
 * into the scale. */

#define SMALL_ROWS (WARPS * RW)
#define SMALL_VC 8 /* O's columns a lane holds: v_dim at most 256 */
#define SMALL_LOG2E 1.4426950408889634f

/* Starts the copies of step k0's rows of K (32 x hq, rows hp apart) and
 * V (32 x vd) into ks and vs, zeros past kv_len and the head dimension. */
static __device__ __forceinline__ void small_load(float *ks, float *vs,
	const float *__restrict__ k, const float *__restrict__ v, long long k0,
	long long kv_len, int hd, int hq, int hp, int vd)
{
	for (int i = threadIdx.x; i < 32 * hq; i += 32 * WARPS) {
		const int j = i / hq, d = i - j * hq;
		const bool in = k0 + j < kv_len && d < hd;

		cp_async4(smem_addr(ks + j * hp + d), in ? k + (k0 + j) * hd + d : k, in ? 4 : 0);
	}
	for (int i = threadIdx.x; i < 32 * vd; i += 32 * WARPS) {
		const bool in = k0 + i / vd < kv_len;

		cp_async4(smem_addr(vs + i), in ? v + k0 * vd + i : v, in ? 4 : 0);
	}
	cp_async_commit();
}

/* Grid cdiv(q_len, ROWS) times the batch's matrices, 32 WARPS threads,
 * dynamic shared memory for two steps' K (32 x (hq + 1)) and V (32 x
 * v_dim), Q's rows (ROWS x hq) and the probabilities (ROWS x 32), hq the
 * head dimension rounded up to 4. */
extern "C" __global__ void __launch_bounds__(32 * WARPS)
attn_small(float *__restrict__ o, const float *__restrict__ q,
	const float *__restrict__ k, const float *__restrict__ v, long long q_len,
	long long kv_len, long long head_dim, long long v_dim)
{
	extern __shared__ float4 small_smem[];
	const int hd = (int)head_dim, vd = (int)v_dim, hq = (hd + 3) & ~3, hp = hq + 1;
	const int vc = (vd + 31) / 32, kvs = 32 * hp + 32 * vd; /* a step's floats */
	float *const qs = reinterpret_cast<float *>(small_smem), *const ps = qs + SMALL_ROWS * hq;
	float *const steps = ps + SMALL_ROWS * 32;
	const long long blocks = CDIV(q_len, SMALL_ROWS);
	const long long mat = blockIdx.x / blocks, r0 = blockIdx.x % blocks * SMALL_ROWS;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, rw = w * RW;
	const int rows = (int)min((long long)SMALL_ROWS, q_len - r0);
	const float c = attn_scale(head_dim) * SMALL_LOG2E;
	const long long kend = CAUSAL ? min(kv_len, r0 + SMALL_ROWS) : kv_len;
	float m[RW], l[RW], acc[RW][SMALL_VC];

	q += (mat * q_len + r0) * hd;
	k += mat * kv_len * hd;
	v += mat * kv_len * vd;
	o += (mat * q_len + r0) * vd;
	/* Q's rows, zero past q_len and past the head dimension, with step 0 */
	for (int i = threadIdx.x; i < SMALL_ROWS * hq; i += 32 * WARPS) {
		const int r = i / hq, d = i - r * hq;
		const bool in = r < rows && d < hd;

		cp_async4(smem_addr(qs + i), in ? q + (long long)r * hd + d : q, in ? 4 : 0);
	}
	small_load(steps, steps + 32 * hp, k, v, 0, kv_len, hd, hq, hp, vd);
#pragma unroll
	for (int r = 0; r < RW; r++) {
		m[r] = ATT_NEG_INF;
		l[r] = 0.0f;
#pragma unroll
		for (int j = 0; j < SMALL_VC; j++)
			acc[r][j] = 0.0f;
	}
	for (long long k0 = 0, st = 0; k0 < kend; k0 += 32, st ^= 1) {
		const int kn = (int)min(32LL, kv_len - k0);
		const float *const ks = steps + st * kvs, *const vs = ks + 32 * hp;

		/* the next step's copies go out before this one's wait */
		if (k0 + 32 < kend) {
			float *const nk = steps + (st ^ 1) * kvs;

			small_load(nk, nk + 32 * hp, k, v, k0 + 32, kv_len, hd, hq, hp, vd);
			cp_async_wait<1>();
		} else {
			cp_async_wait<0>();
		}
		__syncthreads();

		float s[RW], alpha[RW], part[RW][SMALL_VC];
#pragma unroll
		for (int r = 0; r < RW; r++)
			s[r] = 0.0f;
		const float *kr = ks + lane * hp;
		for (int d = 0; d < hq; d += 4) {
			const float k0v = kr[d], k1v = kr[d + 1], k2v = kr[d + 2], k3v = kr[d + 3];
#pragma unroll
			for (int r = 0; r < RW; r++) {
				const float4 x = *reinterpret_cast<const float4 *>(qs + (rw + r) * hq + d);
				s[r] = fmaf(x.x, k0v, s[r]);
				s[r] = fmaf(x.y, k1v, s[r]);
				s[r] = fmaf(x.z, k2v, s[r]);
				s[r] = fmaf(x.w, k3v, s[r]);
			}
		}
#pragma unroll
		for (int r = 0; r < RW; r++) {
			const long long key = k0 + lane, row = r0 + rw + r;
			const float x = lane < kn && !(CAUSAL && key > row) ? s[r] * c : ATT_NEG_INF;
			float mx = x;
#pragma unroll
			for (int off = 16; off; off >>= 1)
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
			const float mn = fmaxf(m[r], mx);
			/* a row that sees no key of this step yet keeps what it has */
			const float p = mn == ATT_NEG_INF ? 0.0f : exp2f(x - mn);

			alpha[r] = mn == ATT_NEG_INF ? 1.0f : exp2f(m[r] - mn);
			m[r] = mn;
			l[r] = fmaf(l[r], alpha[r], p);
			ps[(rw + r) * 32 + lane] = p;
#pragma unroll
			for (int j = 0; j < SMALL_VC; j++)
				part[r][j] = 0.0f;
		}
		__syncwarp();
		/* keys past kn have p 0 and V's rows 0: whole fours of keys */
		for (int j = 0; j < kn; j += 4) {
			float4 p[RW];
#pragma unroll
			for (int r = 0; r < RW; r++)
				p[r] = *reinterpret_cast<const float4 *>(ps + (rw + r) * 32 + j);
#pragma unroll
			for (int cc = 0; cc < SMALL_VC; cc++) {
				const int col = cc * 32 + lane;

				if (cc < vc) {
					const float *vj = vs + j * vd + col;
					const float x0 = col < vd ? vj[0] : 0.0f, x1 = col < vd ? vj[vd] : 0.0f;
					const float x2 = col < vd ? vj[2 * vd] : 0.0f, x3 = col < vd ? vj[3 * vd] : 0.0f;
#pragma unroll
					for (int r = 0; r < RW; r++) {
						part[r][cc] = fmaf(p[r].x, x0, part[r][cc]);
						part[r][cc] = fmaf(p[r].y, x1, part[r][cc]);
						part[r][cc] = fmaf(p[r].z, x2, part[r][cc]);
						part[r][cc] = fmaf(p[r].w, x3, part[r][cc]);
					}
				}
			}
		}
#pragma unroll
		for (int r = 0; r < RW; r++)
#pragma unroll
			for (int cc = 0; cc < SMALL_VC; cc++)
				if (cc < vc)
					acc[r][cc] = fmaf(acc[r][cc], alpha[r], part[r][cc]);
		__syncthreads(); /* this step's buffer is the one after next's */
	}
#pragma unroll
	for (int r = 0; r < RW; r++) {
		float sum = l[r];
#pragma unroll
		for (int off = 16; off; off >>= 1)
			sum += __shfl_xor_sync(0xffffffffu, sum, off);
		if (rw + r < rows) {
			const float inv = 1.0f / sum;
#pragma unroll
			for (int cc = 0; cc < SMALL_VC; cc++)
				if (cc < vc && cc * 32 + lane < vd)
					o[(long long)(rw + r) * vd + cc * 32 + lane] = acc[r][cc] * inv;
		}
	}
}
