// expect: ok
// #include <stdio.h> in a line comment is no directive
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
