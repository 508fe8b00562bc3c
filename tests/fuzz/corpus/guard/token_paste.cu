// expect: refused: line 2: token pasting (##) is not allowed: it can build __has_include, which probes for files
#define C(a, b) a##b
#if C(__has_, include)(</etc/passwd>)
#error the file exists
#endif
extern "C" __global__ void k(const float *x, float *y) { y[threadIdx.x] = x[threadIdx.x]; }
