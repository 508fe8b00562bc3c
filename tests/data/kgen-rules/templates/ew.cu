/* A toy elementwise source: every input bound to its name. */
extern "C" __global__ void ew({{in_params}}, float *out, long long n)
{
	const float *in[{{ninputs}}] = { {{in_ptrs}} };
#define IN(k) in[k][0]
	{{bind}}
	out[0] = ({{expr}});
}
