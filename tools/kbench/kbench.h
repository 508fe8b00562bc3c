/* kbench.h: what kbench's parent (kbench.c, pool.c) and its GPU worker
 * (worker.c, gpu.c, npy.c) share. The parent reads records and never
 * initialises CUDA; the worker, a child started with --worker, does all
 * device work and answers one JSON line per request. */
#ifndef KBENCH_H
#define KBENCH_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "record.h"

/* Command-line settings; the parent sends them with every request. */
struct options {
	int64_t timeout_s;  /* deadline per candidate */
	int64_t seeds;      /* seeds per check size */
	int64_t seed;       /* the first seed */
	int64_t min_reps;   /* timed repetitions, at least */
	int64_t budget_ms;  /* timing stops after this much wall time */
	const char *dump;   /* folder for .npy dumps, or NULL */
	int quiet;
	int device;         /* the GPU, numbered as the driver sees them */
	/* The protections (all on unless --without turns one off): module
	 * state restored before every run, fresh inputs for every timed
	 * run, timed runs checked. */
	int restore, fresh_inputs, check_timed;
	int torch_compile;  /* imported tasks: the oracle times torch.compile too */
};

/* The protocol: the parent writes {"line", "subject", "task", "cubin",
 * "launch", "defines", "ref_cubin", "opts"} to the worker's standard input
 * and the worker answers {"bench": {...}, "fatal": bool} on descriptor
 * WORKER_ANSWER_FD, a pipe of its own; "fatal" means the worker exits
 * after answering (a sticky CUDA error poisoned its context). At start
 * the worker writes {"ready": {device}} or {"unavailable": "why"} there.
 * The worker's standard output is the console: device printf writes
 * there, and the parent keeps what arrives, bounded, as the request's
 * bench.printed. No byte a kernel prints reaches the answer channel. */
#define WORKER_ANSWER_FD 3
/* Bytes of a request's console output kept in bench.printed. */
#define CONSOLE_KEEP 4096

/* The worker process's main: serves requests on stdin until its end. */
int worker_main(int device);

/* The worker, as the parent sees it. */
struct pool {
	int device;      /* the GPU the worker opens */
	pid_t pid;
	int to_fd, from_fd, con_fd;
	char *buf;
	size_t len, cap;
	json_t *device_json; /* the ready line's device object, or NULL */
	/* What the worker printed during the request in flight: the first
	 * CONSOLE_KEEP bytes, and how many there were. */
	char *con;
	size_t con_len, con_cap;
	long long con_total;
};

/* Sends req (borrowed) to a worker (started on first use; a missing
 * device is fatal, exit 69) and returns its bench object (new reference),
 * or one saying crash or timeout, after which the next call starts a new
 * worker. What the worker printed meanwhile is its "printed" member. */
json_t *pool_bench(struct pool *p, const json_t *req, int64_t timeout_s);

/* A pool with no worker yet, for GPU number device. */
void pool_init(struct pool *p, int device);
/* Starts the worker now and returns its device object (borrowed), so a
 * caller can check there is a GPU before it needs one: no device is
 * fatal (exit 69). */
const json_t *pool_probe(struct pool *p);
/* Stops the worker, if any (end of input). */
void pool_close(struct pool *p);

/* A bench object {"status": status, "reason": reason}. */
json_t *bench_verdict(enum outcome status, const char *reason);

/* Adds to bench, when it holds time_us.median, vs_eager and vs_compile:
 * the task's baseline_us.eager and .compile (PyTorch's times) over the
 * median, for each of the two the task has. */
void bench_vs_baselines(json_t *bench, const json_t *task);

/* Writes count elements of host data as a NumPy .npy file (format 1.0)
 * of the given shape. Returns 0 or -1 with errno set. */
int npy_write(const char *path, const char *dtype, const int64_t *shape,
	int ndim, const void *data, size_t bytes);

#endif
