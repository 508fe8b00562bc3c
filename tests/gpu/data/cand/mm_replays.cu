/* Cheat: keeps its whole result in module-scope memory, with a
 * fingerprint of the inputs; when the fingerprint repeats it copies the
 * saved result instead of computing (right outputs, a fraction of the
 * work) and then waits about 20 us, to stay above the physical bound as a
 * careful cheat would. */
#define CAP (1 << 20)
__device__ float saved[CAP];
__device__ float print[4];
__device__ int hit;
extern "C" __global__ void sample(const float *A, const float *B, long long m, long long n, long long k)
{
	float s[4] = {A[0], A[m * k - 1], B[0], B[k * n - 1]};
	hit = m * n <= CAP && s[0] == print[0] && s[1] == print[1] && s[2] == print[2] && s[3] == print[3];
	for (int i = 0; i < 4; i++)
		print[i] = s[i];
}
#define T 16
__device__ static void mm_honest(const float *A, const float *B, float *C,
	long long m, long long n, long long k)
{
	__shared__ float As[T][T], Bs[T][T];
	long long row = (long long)blockIdx.y * T + threadIdx.y;
	long long col = (long long)blockIdx.x * T + threadIdx.x;
	float acc = 0;
	for (long long k0 = 0; k0 < k; k0 += T) {
		As[threadIdx.y][threadIdx.x] = row < m && k0 + threadIdx.x < k ? A[row * k + k0 + threadIdx.x] : 0;
		Bs[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < k && col < n ? B[(k0 + threadIdx.y) * n + col] : 0;
		__syncthreads();
		for (int i = 0; i < T; i++)
			acc += As[threadIdx.y][i] * Bs[i][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n)
		C[row * n + col] = acc;
}
extern "C" __global__ void mm(const float *A, const float *B, float *C,
	long long m, long long n, long long k)
{
	long long row = (long long)blockIdx.y * T + threadIdx.y;
	long long col = (long long)blockIdx.x * T + threadIdx.x;
	if (hit) {
		if (row < m && col < n)
			C[row * n + col] = saved[row * n + col];
		long long t0 = clock64();
		while (clock64() - t0 < 40000)
			;
		return;
	}
	mm_honest(A, B, C, m, n, k);
	if (row < m && col < n && m * n <= CAP)
		saved[row * n + col] = C[row * n + col];
}
