// expect: refused: line 3: #include <stdio.h>
__device__ int a = 1'000 + '/*';
#include <stdio.h>
__device__ int b = '*/';
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
