// expect: ok
#include "cuda_fp16.h"
#  include <cuda/std/limits>
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
