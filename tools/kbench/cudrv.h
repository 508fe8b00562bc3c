/* cudrv.h: the CUDA driver API, loaded at run time (dlopen of libcuda.so.1)
 * so that kbench builds and starts on machines without a GPU. Only the
 * worker process calls cudrv_load; kbench's parent never touches CUDA. */
#ifndef KBENCH_CUDRV_H
#define KBENCH_CUDRV_H

#include <stddef.h>
#include <cuda.h>

/* The entry points kbench uses. cuda.h renames some (cuMemAlloc to
 * cuMemAlloc_v2): the member names follow, and cuGetProcAddress, asked at
 * CUDA_VERSION, returns the version that matches the prototype. */
#define CUDRV_FUNCS(X) \
	X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) \
	X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) \
	X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSetLimit) \
	X(cuCtxSynchronize) X(cuMemGetInfo) X(cuStreamCreate) \
	X(cuStreamSynchronize) X(cuModuleLoadData) X(cuModuleUnload) \
	X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) \
	X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuMemAlloc) X(cuMemFree) \
	X(cuMemsetD32Async) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) \
	X(cuMemcpyDtoDAsync) X(cuEventCreate) X(cuEventDestroy) \
	X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) \
	X(cuGetErrorName) X(cuGetErrorString) X(cuModuleGetGlobal) \
	X(cuMemsetD8Async) X(cuFuncGetParamInfo) X(cuDeviceGetPCIBusId) \
	X(cuDeviceGetUuid) X(cuIpcGetMemHandle)

struct cudrv {
#define X(name) __typeof__(name) *name;
	CUDRV_FUNCS(X)
#undef X
};

extern struct cudrv cu;

/* Loads libcuda.so.1 and every entry point. Returns 0, or -1 with err
 * saying what is missing ("no CUDA driver (libcuda.so.1): ..."). */
int cudrv_load(char *err, size_t errlen);

/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" */
const char *cudrv_strerror(CUresult r);

#endif
