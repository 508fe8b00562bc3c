/* kcompile.h: the parts of kcompile, one file each: the guard that reads
 * a source before NVRTC does (guard.c), NVRTC itself (compile.c), what its
 * log says (log.c), the content-addressed cache (cache.c), the compile
 * processes and their deadlines (pool.c), and stdin read without blocking
 * the pool (input.c). JSON ownership as in lib/jsonl.h. */
#ifndef KCOMPILE_H
#define KCOMPILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <jansson.h>

/* A source larger than this is refused: no kernel needs it, and it would
 * be copied into every record. */
#define SOURCE_MAX (1024 * 1024)
/* compile.log is cut to this many bytes, keeping the first errors and the
 * end (see log_bound). */
#define LOG_MAX (16 * 1024)

/* guard.c */

/* The headers a source may include, NULL-terminated. */
extern const char *const guard_headers[];

/* Reads src as the preprocessor will and checks every #include (and every
 * line that looks like one inside a block comment or raw string) against
 * guard_headers. Returns 0, or -1 with why holding the line and the reason
 * ("line 3: #include <stdio.h>: stdio.h is not an allowed header ..."). */
int guard_source(const char *src, char *why, size_t whylen);

/* Checks defines (an object, or NULL): names are C identifiers, values
 * integers or strings of [A-Za-z0-9_.+-], so that nothing but a macro
 * reaches NVRTC's command line. Returns 0, or -1 with why set. */
int guard_defines(const json_t *defines, char *why, size_t whylen);

/* compile.c */

/* What every compile of this run shares: the target and the compiler. */
struct toolchain {
	char arch[32];      /* sm_90 */
	char nvrtc[32];     /* NVRTC's version, "13.0" */
	char build[64];     /* libnvrtc's file identity: size and mtime */
	char *include;      /* the CUDA headers folder */
	char *cccl;         /* its cccl/ folder (cuda/std/...), or NULL */
	int timeout_s;      /* the deadline of one compile */
};

/* Finds NVRTC's version, checks that it supports arch, and finds the
 * headers. Returns 0, or -1 with err set. */
int toolchain_init(struct toolchain *tc, const char *arch, int timeout_s,
	char *err, size_t errlen);
void toolchain_free(struct toolchain *tc);

/* The NVRTC options for one compile: the target, the resource report, the
 * headers, and -DNAME=VALUE per define in name order (defines already
 * guarded; may be NULL). A new array of strings. */
json_t *compile_options(const struct toolchain *tc, const json_t *defines);

/* The cache key of a compile: SHA-256 over the source, the options (which
 * hold the arch and the defines) and NVRTC's version and build. */
void compile_key(const struct toolchain *tc, const char *source,
	const json_t *options, char key[65]);

/* A compile object (docs/records.md) with every member present: not ok,
 * the given status and reason, nothing compiled. options may be NULL. */
json_t *compile_object(const struct toolchain *tc, const json_t *options,
	const char *status, const char *reason);

/* Runs in a forked child: compiles source with NVRTC (the child's
 * deadline is an alarm), writes the reply to fd and exits. */
_Noreturn void compile_child(const struct toolchain *tc, int fd,
	const char *source, const json_t *options);

/* Turns a child's reply and exit status into a compile object. killed
 * says the pool stopped it at the deadline. *cacheable is set when the
 * outcome depends only on the key (NVRTC finished, with or without
 * errors), not on the deadline or an accident. */
json_t *compile_reply(const struct toolchain *tc, const json_t *options,
	const char *reply, size_t len, int wstatus, int killed, double ms,
	int *cacheable);

/* log.c */

/* The first error line of an NVRTC log, without its newline and at most
 * 400 bytes: the reason a reader needs first. A new string, or NULL. */
char *log_first_error(const char *log);

/* The per-kernel resources of a ptxas -v report: a new object, kernel name
 * to {registers, spill_stores, spill_loads, smem_static, stack, barriers}. */
json_t *ptxas_kernels(const char *log);

/* log cut to at most max bytes (max >= 1024): the part from the first
 * error line on and the end are kept, and a line in between says how many
 * bytes were cut. A new string. */
char *log_bound(const char *log, size_t max);

/* cache.c */

struct cache {
	char *dir;          /* .../kcompile, or NULL when there is none */
	int warned;
};

/* $HTAM_CACHE, else $XDG_CACHE_HOME/htam, else $HOME/.cache/htam; the
 * entries live in its kcompile/ folder. enabled 0 means no cache. */
void cache_open(struct cache *c, int enabled);
void cache_close(struct cache *c);
/* The compile object stored under key, with cached set, or NULL. A
 * corrupt or truncated entry is reported on stderr and never used. */
json_t *cache_get(struct cache *c, const char *key);
/* Stores result (borrowed) under key, atomically. A cache that cannot be
 * written is reported once and not used again. */
void cache_put(struct cache *c, const char *key, const json_t *result);

/* pool.c */

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

/* One compile, shared by every record that needs the same key. */
struct job {
	char key[65];
	enum job_state state;
	int refs;           /* records waiting on it, plus one if kept */
	int kept;           /* held by the pool for the whole run */
	char *source;
	json_t *options;
	json_t *result;     /* the compile object, once done */
	pid_t pid;
	int fd;             /* the child's reply pipe */
	int killed;
	double started;
	char *reply;
	size_t len, cap;
	struct job *next;
};

struct pool {
	int max;            /* compiles at once (-j) */
	int running;
	const struct toolchain *tc;
	struct cache *cache;
	struct job *jobs;   /* in the order they were made */
	struct job *last;
};

/* The job of key: the one in the pool, else one from the cache, else a
 * new queued one for source and options (borrowed). The caller holds one
 * reference; keep adds one the pool holds until pool_free. */
struct job *pool_job(struct pool *p, const char *key, const char *source,
	const json_t *options, int keep);
void job_release(struct pool *p, struct job *j);
/* Starts queued jobs, oldest first, while fewer than max run. */
void pool_start(struct pool *p);
/* Waits until a running job makes progress, one passes its deadline, or
 * infd (if not -1) can be read. Returns 1 if infd can be read. */
int pool_wait(struct pool *p, int infd);
void pool_free(struct pool *p);

/* input.c */

/* stdin for jsonl_read, with a way to ask whether a whole record can be
 * read without waiting: the FILE is fed one line at a time from our own
 * buffer, so nothing hides in stdio's. */
struct input {
	int fd;
	char *buf;
	size_t off, len, cap;
	int eof;
	FILE *f;
};

void input_open(struct input *in, int fd);
void input_close(struct input *in);
/* 1 if a whole line (or the end) is buffered; reads what fd has now. */
int input_ready(struct input *in);
/* Reads once from fd into the buffer (after poll says it can be read). */
void input_fill(struct input *in);

#endif
