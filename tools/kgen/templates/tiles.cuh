/* tiles.cuh: what the kernels that tile a product share (the gemm and
 * attention families): the order in which blocks take the tiles of C,
 * shared-memory addresses for PTX and cp.async. */

/* Tile rows of C that consecutive blocks cover before moving along n, so
 * that blocks running together share panels of A and B in L2. */
#define GROUP_M 8

#define CDIV(a, b) (((a) + (b) - 1) / (b))

/* The shared-state-space address of p, for PTX that wants one. */
static __device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* ---- cp.async (gemm's tiled and wgf, attention's small) ---- */

/* Copies bytes (16 or 0) from global src to shared address dst,
 * zero-filling the rest of the 16 bytes, without waiting. */
static __device__ __forceinline__ void cp_async16(unsigned dst, const void *src,
	int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
		:: "r"(dst), "l"(src), "r"(bytes) : "memory");
}

/* As cp_async16 for one float (bytes 4 or 0). */
static __device__ __forceinline__ void cp_async4(unsigned dst, const void *src,
	int bytes)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
		:: "r"(dst), "l"(src), "r"(bytes) : "memory");
}

/* Closes this thread's group of copies started since the last commit. */
static __device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's copy groups are in flight. */
template <int N>
static __device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* The origin (m0, n0) of tile pid of C, tiles tm x tn: tiles are
 * numbered along n within groups of GROUP_M tile rows. */
static __device__ __forceinline__ void tile_at(long long pid, long long M,
	long long N, int tm, int tn, long long *m0, long long *n0)
{
	long long tiles_m = CDIV(M, tm), tiles_n = CDIV(N, tn);
	long long in_group = GROUP_M * tiles_n;
	long long first = pid / in_group * GROUP_M;
	long long rows = tiles_m - first < GROUP_M ? tiles_m - first : GROUP_M;
	long long r = pid % in_group;

	*m0 = (first + r % rows) * tm;
	*n0 = r / rows * tn;
}

/* The origin (m0, n0) of this block's tile of C: tile blockIdx.x. */
static __device__ __forceinline__ void tile_origin(long long M, long long N,
	int tm, int tn, long long *m0, long long *n0)
{
	tile_at(blockIdx.x, M, N, tm, tn, m0, n0);
}
