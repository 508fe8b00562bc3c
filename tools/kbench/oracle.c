/* oracle.c: the reference of an imported task, which is the problem's own
 * PyTorch module (docs/tasks.md, "Imported tasks"). An oracle process
 * (pytorch/oracle.py, on the same GPU) computes it on kbench's own
 * buffers, shared with it by CUDA IPC: kbench draws the inputs (and the
 * module's weights, which are inputs) as for any task, hands the oracle
 * handles to them and to the reference's output buffers, and waits for
 * its answer; it also times PyTorch eager (and torch.compile when asked)
 * on those inputs, in the same run as the candidate. The C stages never
 * load Python for a task that has its reference.cu. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jsonl.h"
#include "proc.h"
#include "util.h"
#include "gpu.h"
#include "oracle.h"

static struct {
	pid_t pid;
	FILE *to;
	struct jsonl *from;
	FILE *from_f;
} O;

/* "GPU-xxxxxxxx-xxxx-...": the device as CUDA_VISIBLE_DEVICES names it,
 * so that the oracle's device 0 is this worker's device. */
static void
device_uuid(char *buf, size_t n)
{
	CUuuid u;
	const unsigned char *b = (const unsigned char *)u.bytes;
	if (cu.cuDeviceGetUuid(&u, G.dev) != CUDA_SUCCESS) {
		snprintf(buf, n, "%d", G.index);
		return;
	}
	snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
		b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* Ends the oracle: asked to (its input closed; 5 s to go) or at once. */
static void
oracle_end(int kill_now, char *how, size_t howlen)
{
	int st;
	if (O.pid <= 0)
		return;
	fclose(O.to);
	jsonl_close(O.from);
	fclose(O.from_f);
	proc_end(O.pid, kill_now, 5000, &st);
	if (how)
		proc_describe(st, how, howlen);
	memset(&O, 0, sizeof O);
}

void
oracle_stop(void)
{
	oracle_end(0, NULL, 0);
}

/* Reads the oracle's answer to the last message: its "error" member, if
 * any, becomes err. Returns the answer (new reference) or NULL. */
static json_t *
oracle_answer(char *err, size_t errlen)
{
	json_t *a = NULL;
	char e[256];
	int r = jsonl_read(O.from, &a, e, sizeof e);
	if (r <= 0) {
		char how[128] = "";
		oracle_end(1, how, sizeof how);
		snprintf(err, errlen, "the PyTorch oracle %s%s (its messages are on kbench's "
			"standard error)", r < 0 ? "answered garbage: " : "ended: ", r < 0 ? e : how);
		return NULL;
	}
	const char *why = json_string_value(json_object_get(a, "error"));
	if (why) {
		snprintf(err, errlen, "the PyTorch oracle: %s", why);
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *
oracle_ask(json_t *msg, char *err, size_t errlen)
{
	if (jsonl_write(O.to, msg) < 0 || fflush(O.to) != 0) {
		json_decref(msg);
		snprintf(err, errlen, "the PyTorch oracle is gone (%s)", strerror(errno));
		return NULL;
	}
	json_decref(msg);
	return oracle_answer(err, errlen);
}

int
oracle_start(const json_t *task, char *err, size_t errlen)
{
	/* One oracle serves task after task: PyTorch loads once per worker. */
	if (O.pid > 0) {
		json_t *a = oracle_ask(json_pack("{ss sO}", "op", "task", "task", task), err, errlen);
		if (!a)
			return -1;
		json_decref(a);
		return 0;
	}
	const char *py = getenv("HTAM_PYTHON");
	char *dir = data_dir("HTAM_PYTORCH", "pytorch", NULL);
	char *script = xasprintf("%s/oracle.py", dir);
	char uuid[64];
	int to[2], from[2];

	free(dir);
	device_uuid(uuid, sizeof uuid);
	proc_pipe(to, 4);
	proc_pipe(from, 4);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the PyTorch oracle: %s", strerror(errno));
		free(script);
		return -1;
	}
	if (pid == 0) {
		/* stdin: requests; descriptor 3: answers; stdout: whatever the
		 * problem's code prints, kept apart from the answers (on stderr). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(to[0], 0);
		dup2(2, 1);
		dup2(from[1], 3);
		setenv("CUDA_VISIBLE_DEVICES", uuid, 1);
		const char *p = py && *py ? py : "python3";
		execlp(p, p, script, (char *)NULL);
		fprintf(stderr, "kbench: cannot run %s %s: %s\n", p, script, strerror(errno));
		_exit(127);
	}
	free(script);
	close(to[0]);
	close(from[1]);
	O.pid = pid;
	O.to = fdopen(to[1], "w");
	O.from_f = fdopen(from[0], "r");
	O.from = jsonl_open(O.from_f);
	json_t *a = oracle_ask(json_pack("{ss sO}", "op", "task", "task", task), err, errlen);
	if (!a)
		return -1;
	json_decref(a);
	return 0;
}

/* The tensors of a request: each buffer's IPC handle (of its allocation,
 * with the offset of its data), its name and whether it is an input. */
static json_t *
tensors_json(int n, const struct oracle_tensor *t, char *err, size_t errlen)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++) {
		CUipcMemHandle h;
		char hex[2 * sizeof h.reserved + 1];
		CUresult r = cu.cuIpcGetMemHandle(&h, t[i].buf->base);
		if (r != CUDA_SUCCESS) {
			snprintf(err, errlen, "cuIpcGetMemHandle: %s", cudrv_strerror(r));
			json_decref(arr);
			return NULL;
		}
		for (size_t j = 0; j < sizeof h.reserved; j++)
			snprintf(hex + 2 * j, 3, "%02x", (unsigned char)h.reserved[j]);
		json_t *shape = json_array();
		for (int d = 0; d < t[i].ndim; d++)
			json_array_append_new(shape, json_integer(t[i].shape[d]));
		json_array_append_new(arr, json_pack("{ss ss sI sI sb ss so}", "name", t[i].name,
			"handle", hex, "offset", (json_int_t)(t[i].buf->ptr - t[i].buf->base),
			"bytes", (json_int_t)t[i].buf->bytes, "input", t[i].input,
			"dtype", dtype_name(t[i].dt), "shape", shape));
	}
	return arr;
}

/* The tensors of a request to the running oracle, once the worker's
 * stream, where the inputs were drawn, is done; NULL with err set. */
static json_t *
request_tensors(int n, const struct oracle_tensor *t, char *err, size_t errlen)
{
	if (O.pid <= 0) {
		snprintf(err, errlen, "the PyTorch oracle is not running");
		return NULL;
	}
	CUresult e = cu.cuStreamSynchronize(G.stream);
	if (e != CUDA_SUCCESS) {
		snprintf(err, errlen, "before the oracle: %s", cudrv_strerror(e));
		return NULL;
	}
	return tensors_json(n, t, err, errlen);
}

int
oracle_run(int k, const json_t *sizes, int n, const struct oracle_tensor *t,
	char *err, size_t errlen)
{
	json_t *ts = request_tensors(n, t, err, errlen);
	if (!ts)
		return -1;
	json_t *a = oracle_ask(json_pack("{ss si sO so}", "op", "run", "k", k, "sizes", sizes,
		"tensors", ts), err, errlen);
	if (!a)
		return -1;
	json_decref(a);
	return 0;
}

int
oracle_time(const json_t *sizes, int n, const struct oracle_tensor *t,
	const json_t *opts, double *eager_us, double *compile_us, char *err, size_t errlen)
{
	*eager_us = *compile_us = 0;
	json_t *ts = request_tensors(n, t, err, errlen);
	if (!ts)
		return -1;
	json_t *a = oracle_ask(json_pack("{ss si sO so sO sO sO}", "op", "time", "k", 0,
		"sizes", sizes, "tensors", ts, "min_reps", json_object_get(opts, "min_reps"),
		"budget_ms", json_object_get(opts, "budget_ms"), "compile",
		json_object_get(opts, "torch_compile")), err, errlen);
	if (!a)
		return -1;
	*eager_us = json_number_value(json_object_get(a, "eager_us"));
	*compile_us = json_number_value(json_object_get(a, "compile_us"));
	json_decref(a);
	if (!(*eager_us > 0)) {
		snprintf(err, errlen, "the PyTorch oracle gave no eager time");
		return -1;
	}
	return 0;
}
