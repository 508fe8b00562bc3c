// expect: refused: line 3: #include </etc/passwd>: a path is not allowed
#include <cuda_fp16.h>
#include </etc/passwd>
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
