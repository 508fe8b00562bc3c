// expect: refused: line 2: __has_include is not allowed
#if __has_include("/etc/passwd")
#endif
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
