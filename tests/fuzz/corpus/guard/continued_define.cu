// expect: refused: line 4: #include <stdio.h>
#define X 1 \
/* the directive above goes on: this line, */ #include <stdio.h>
#include <stdio.h>
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
