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
 * where causal: the block copies the step's 32 rows of K (each padded by
 * one float, so that lane j reads key j's values without bank conflicts)
 * and of V into shared memory; lane j computes key j's score against
 * each of its warp's rows (Q's rows in shared memory, read four values at
 * once as every lane reads the same), scales and masks it, and the warp
 * keeps each row's running maximum (a shuffle reduction a step) while
 * every lane keeps its own share of the row's sum; the probabilities go
 * to shared memory, and each lane adds them times V's values into O's
 * columns lane, lane + 32, ... (at most VC = 8 of them: v_dim at most
 * 256) in registers, rescaled first by the new maximum. O's rows are
 * divided by their sum (the lanes' shares added by shuffles) and stored
 * once. exp2f with log2(e) folded into the scale. */

#define SMALL_ROWS (WARPS * RW)
#define SMALL_VC 8 /* O's columns a lane holds: v_dim at most 256 */
#define SMALL_LOG2E 1.4426950408889634f

/* Grid cdiv(q_len, ROWS) x the batch's matrices, 32 WARPS threads,
 * dynamic shared memory for K's (32 x (hq + 1)), V's (32 x v_dim) and Q's
 * (ROWS x hq) rows and the probabilities (ROWS x 32), hq the head
 * dimension rounded up to 4. */
extern "C" __global__ void __launch_bounds__(32 * WARPS)
attn_small(float *__restrict__ o, const float *__restrict__ q,
	const float *__restrict__ k, const float *__restrict__ v, long long q_len,
	long long kv_len, long long head_dim, long long v_dim)
{
	extern __shared__ float4 small_smem[];
	const int hd = (int)head_dim, vd = (int)v_dim, hq = (hd + 3) & ~3, hp = hq + 1;
	const int vc = (vd + 31) / 32;
	float *ks = reinterpret_cast<float *>(small_smem), *qs = ks + 32 * hp;
	float *vs = qs + SMALL_ROWS * hq, *ps = vs + 32 * vd;
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
	/* Q's rows, zero past q_len and past the head dimension */
	for (int r = w; r < SMALL_ROWS; r += WARPS)
		for (int d = lane; d < hq; d += 32)
			qs[r * hq + d] = r < rows && d < hd ? q[(long long)r * hd + d] : 0.0f;
#pragma unroll
	for (int r = 0; r < RW; r++) {
		m[r] = ATT_NEG_INF;
		l[r] = 0.0f;
#pragma unroll
		for (int j = 0; j < SMALL_VC; j++)
			acc[r][j] = 0.0f;
	}
	for (long long k0 = 0; k0 < kend; k0 += 32) {
		const int kn = (int)min(32LL, kv_len - k0);

		__syncthreads(); /* the last step's readers are done */
		for (int j = w; j < 32; j += WARPS) {
			for (int d = lane; d < hq; d += 32)
				ks[j * hp + d] = j < kn && d < hd ? k[(k0 + j) * hd + d] : 0.0f;
			for (int d = lane; d < vd; d += 32)
				vs[j * vd + d] = j < kn ? v[(k0 + j) * vd + d] : 0.0f;
		}
		__syncthreads();

		float s[RW];
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
			const float alpha = mn == ATT_NEG_INF ? 1.0f : exp2f(m[r] - mn);
			const float p = mn == ATT_NEG_INF ? 0.0f : exp2f(x - mn);

			m[r] = mn;
			l[r] = fmaf(l[r], alpha, p);
#pragma unroll
			for (int j = 0; j < SMALL_VC; j++)
				if (j < vc)
					acc[r][j] *= alpha;
			ps[(rw + r) * 32 + lane] = p;
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

				if (cc >= vc)
					break;
				const float *vj = vs + j * vd + col;
				const float x0 = col < vd ? vj[0] : 0.0f, x1 = col < vd ? vj[vd] : 0.0f;
				const float x2 = col < vd ? vj[2 * vd] : 0.0f, x3 = col < vd ? vj[3 * vd] : 0.0f;
#pragma unroll
				for (int r = 0; r < RW; r++) {
					acc[r][cc] = fmaf(p[r].x, x0, acc[r][cc]);
					acc[r][cc] = fmaf(p[r].y, x1, acc[r][cc]);
					acc[r][cc] = fmaf(p[r].z, x2, acc[r][cc]);
					acc[r][cc] = fmaf(p[r].w, x3, acc[r][cc]);
				}
			}
		}
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
