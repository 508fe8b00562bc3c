/* A correct relu: float4 loads where aligned, a scalar tail. */
extern "C" __global__ void relu(const float *x, float *y, long long n)
{
	long long nv = n / 4, step = (long long)gridDim.x * blockDim.x;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += step) {
		float4 v = ((const float4 *)x)[i];
		((float4 *)y)[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
	}
	for (long long i = nv * 4 + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		y[i] = fmaxf(x[i], 0.f);
}
