// expect: refused: line 2: #include_next is not allowed
#include_next <cuda_fp16.h>
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
