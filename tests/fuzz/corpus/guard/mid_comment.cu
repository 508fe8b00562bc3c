// expect: ok
/* see how #include <stdio.h> is refused at the start of a line, not here */
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
