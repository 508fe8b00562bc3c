/* cubin.c: the cubin reader (lib/cubin.h) on any bytes: kernels, each
 * kernel's parameters, the module-scope memory, every offset checked. */
#include "cubin.h"
#include "fuzz.h"

static int
each_kernel(void *ctx, const char *name)
{
	size_t sizes[CUBIN_MAX_PARAMS];
	int n = cubin_params(ctx, name, sizes, CUBIN_MAX_PARAMS);
	FUZZ_ASSERT(n <= CUBIN_MAX_PARAMS);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cubin c;
	struct cubin_state st;
	char err[256];

	if (cubin_open(&c, data, size, err, sizeof err) < 0)
		return 0;
	cubin_kernels(&c, each_kernel, &c);
	if (cubin_state(&c, &st, err, sizeof err) == 0) {
		for (int i = 0; i < st.nobj; i++)
			FUZZ_ASSERT(st.obj[i].offset + st.obj[i].size <= st.sec[st.obj[i].section].size);
		cubin_state_free(&st);
	}
	return 0;
}
