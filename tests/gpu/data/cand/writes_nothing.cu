/* Cheat: writes nothing (the output keeps whatever was there). */
extern "C" __global__ void relu(const float *x, float *y, long long n) {}
