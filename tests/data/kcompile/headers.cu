/* Every header of kcompile's allow-list, in both spellings: all compile. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <mma.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/scan.h>
#include <cuda_pipeline.h>
#include <cuda_awbarrier.h>
#include <math_constants.h>
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cuda/atomic>
#include <cuda/std/cstdint>
#include <cuda/std/cstddef>
#include <cuda/std/climits>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda/std/utility>
#include <cuda/std/cmath>
#include <cuda/std/array>
#include "cuda_fp16.h"
#include "cuda/std/cstdint"

namespace cg = cooperative_groups;

extern "C" __global__ void k(const float *x, float *y)
{
	cg::thread_block block = cg::this_thread_block();
	cuda::std::int64_t i = block.thread_rank();
	__half h = __float2half(x[i]);

	y[i] = __half2float(h) * CUDART_PI_F / CUDART_PI_F;
}
