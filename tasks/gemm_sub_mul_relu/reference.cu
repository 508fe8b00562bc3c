/* Reference for the gemm_sub_mul_relu task,
 * y = relu((F.linear(x, W, b) - 2.0) * 1.5): v = x (m x k) @ W^T + b with W
 * of shape (n, k) as F.linear's weight, then y = relu((v - 2) * 1.5). One
 * thread per output, 16 x 16 tiles of x and W staged in shared memory (W
 * read along k, so loads are coalesced), products accumulated in double,
 * the epilogue in double. */

#define TILE 16

extern "C" __global__ void gemm_sub_mul_relu_ref(const float *x, const float *W,
	const float *b, float *y, long long m, long long n, long long k)
{
	__shared__ float xs[TILE][TILE], ws[TILE][TILE];
	long long row = (long long)blockIdx.y * TILE + threadIdx.y;
	long long col = (long long)blockIdx.x * TILE + threadIdx.x;
	long long wrow = (long long)blockIdx.x * TILE + threadIdx.y;
	double v = 0.0;

	for (long long k0 = 0; k0 < k; k0 += TILE) {
		long long kk = k0 + threadIdx.x;

		xs[threadIdx.y][threadIdx.x] =
		    row < m && kk < k ? x[row * k + kk] : 0.0f;
		/* ws[i][j] = W[tile's first col + j][k0 + i] */
		ws[threadIdx.x][threadIdx.y] =
		    wrow < n && kk < k ? W[wrow * k + kk] : 0.0f;
		__syncthreads();
		for (int i = 0; i < TILE; i++)
			v += (double)xs[threadIdx.y][i] * (double)ws[i][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n) {
		double u = (v + (double)b[col] - 2.0) * 1.5;

		y[row * n + col] = (float)(u > 0.0 ? u : 0.0);
	}
}
