// expect: refused: line 2: #include <stdio.h>
# /* a comment is one space */ include <stdio.h>
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
