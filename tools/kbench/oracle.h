/* oracle.h: the worker's PyTorch oracle, the reference of imported tasks
 * (oracle.c). */
#ifndef KBENCH_ORACLE_H
#define KBENCH_ORACLE_H

#include <jansson.h>
#include "gpu.h"

/* One buffer the oracle reads (an input) or writes (an output). */
struct oracle_tensor {
	const char *name;
	const struct dbuf *buf;
	int input;
	enum dtype dt;
	int ndim;
	const int64_t *shape;
};

/* Gives the oracle the task, starting it first if it is not running
 * (HTAM_PYTHON, else python3, running oracle.py from the pytorch folder
 * beside the tools, on this worker's device). Returns 0, or -1 with err. */
int oracle_start(const json_t *task, char *err, size_t errlen);
/* Has the oracle compute the reference's outputs at size set k (sizes)
 * from the inputs, into the output buffers. Synchronous. */
int oracle_run(int k, const json_t *sizes, int n, const struct oracle_tensor *t,
	char *err, size_t errlen);
/* Times PyTorch eager (and torch.compile when opts.torch_compile) at size
 * set 0 on these buffers; *compile_us is 0 when not timed. */
int oracle_time(const json_t *sizes, int n, const struct oracle_tensor *t,
	const json_t *opts, double *eager_us, double *compile_us, char *err, size_t errlen);
/* Ends the oracle, if any (the worker's end, or a task of its own
 * reference.cu: the oracle's GPU memory goes back). */
void oracle_stop(void);

#endif
