// expect: ok
__device__ const char *s = "#include <stdio.h>";
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
