/* cudrv.c: loads the CUDA driver API at run time (see cudrv.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cudrv.h"

struct cudrv cu;

typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t,
	CUdriverProcAddressQueryResult *);

/* Fills cu from libcuda.so.1 through cuGetProcAddress, so that each name
 * resolves to the version of the entry point that cuda.h declares. */
int
cudrv_load(char *err, size_t errlen)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, errlen, "no CUDA driver (libcuda.so.1): %s", dlerror());
		return -1;
	}
	getproc_fn getproc = (getproc_fn)dlsym(lib, "cuGetProcAddress_v2");
	if (!getproc) {
		snprintf(err, errlen, "no CUDA driver (libcuda.so.1): it lacks "
			"cuGetProcAddress_v2 (driver older than CUDA 12)");
		return -1;
	}
	void *p;
	CUdriverProcAddressQueryResult q;
#define X(name) \
	if (getproc(#name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q) \
		!= CUDA_SUCCESS || !p) { \
		snprintf(err, errlen, "no CUDA driver (libcuda.so.1): it lacks " \
			"%s for CUDA %d (update the driver)", #name, CUDA_VERSION); \
		return -1; \
	} \
	memcpy(&cu.name, &p, sizeof p);
	CUDRV_FUNCS(X)
#undef X
	return 0;
}

/* The error's name and description, in a static buffer. */
const char *
cudrv_strerror(CUresult r)
{
	static char buf[256];
	const char *name = NULL, *desc = NULL;
	if (cu.cuGetErrorName)
		cu.cuGetErrorName(r, &name);
	if (cu.cuGetErrorString)
		cu.cuGetErrorString(r, &desc);
	snprintf(buf, sizeof buf, "%s (%s)", name ? name : "CUDA error",
		desc ? desc : "no description");
	if (!name) {
		snprintf(buf, sizeof buf, "CUDA error %d", (int)r);
	}
	return buf;
}
