/* Reference for the GPU tests' matmul_small task, A @ B:
 * C (m x n) = A (m x k) @ B (k x n), row-major. One thread per output,
 * 16 x 16 tiles of A and B staged in shared memory, products accumulated
 * in double. */

#define TILE 16

extern "C" __global__ void matmul_ref(const float *A, const float *B, float *C,
	long long m, long long n, long long k)
{
	__shared__ float As[TILE][TILE], Bs[TILE][TILE];
	long long row = (long long)blockIdx.y * TILE + threadIdx.y;
	long long col = (long long)blockIdx.x * TILE + threadIdx.x;
	double acc = 0.0;

	for (long long k0 = 0; k0 < k; k0 += TILE) {
		long long ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;

		As[threadIdx.y][threadIdx.x] =
		    row < m && ka < k ? A[row * k + ka] : 0.0f;
		Bs[threadIdx.y][threadIdx.x] =
		    kb < k && col < n ? B[kb * n + col] : 0.0f;
		__syncthreads();
		for (int i = 0; i < TILE; i++)
			acc += (double)As[threadIdx.y][i] * (double)Bs[i][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n)
		C[row * n + col] = (float)acc;
}
