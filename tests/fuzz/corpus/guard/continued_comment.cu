// expect: ok
// a line comment continued \
#include <stdio.h>
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
