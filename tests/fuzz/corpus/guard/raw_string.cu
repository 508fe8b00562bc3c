// expect: refused: line 3: #include <stdio.h>
__device__ const char *s = R"(" /* )";
#include <stdio.h>
// */
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
