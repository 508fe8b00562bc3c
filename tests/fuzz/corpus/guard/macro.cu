// expect: refused: line 3: #include must name a header in <> or "", not a macro
#define HEADER <stdio.h>
#include HEADER
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
