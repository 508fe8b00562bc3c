// expect: refused: line 3: #include <stdio.h>: stdio.h is not an allowed header (allowed
/* commented out, and still refused: the scanner does not bet on where
#include <stdio.h>
   ends */
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
