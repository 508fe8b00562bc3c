// expect: refused: line 2: #include <...: the header name is not closed
#include <cuda_fp16.h
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
