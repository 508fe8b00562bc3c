/* pool.c: kbench's parent side of the worker: starts it (a fresh exec of
 * this program with --worker, so no CUDA state is ever forked), sends it
 * one request per candidate, waits for the answer on the answer channel
 * against a deadline while keeping what the worker prints on its console,
 * and replaces it when it crashes, reports a sticky error or hangs. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "die.h"
#include "jsonl.h"
#include "proc.h"
#include "util.h"
#include "kbench.h"

extern char **environ;

/* How long a new worker may take to load the driver and measure the
 * device before it is declared broken. */
#define START_DEADLINE_MS 120000

json_t *
bench_verdict(enum outcome status, const char *reason)
{
	json_t *b = json_object();
	json_object_set_new(b, "status", json_string(outcome_names[status]));
	if (reason)
		json_object_set_new(b, "reason", json_text(reason));
	return b;
}

/* Kills (when kill_it) and reaps the worker; describes how it ended. A
 * worker told to end (its stdin closed) gets 10 s to release the device;
 * one wedged in the driver is killed then. */
static void
worker_end(struct pool *p, int kill_it, char *how, size_t howlen)
{
	int st = 0;
	if (p->pid <= 0)
		return;
	close(p->to_fd);
	close(p->from_fd);
	if (p->con_fd >= 0)
		close(p->con_fd);
	p->con_fd = -1;
	proc_end(p->pid, kill_it, 10000, &st);
	if (how)
		proc_describe(st, how, howlen);
	p->pid = 0;
	p->len = 0;
}

/* Reads what the console holds now, keeping its first CONSOLE_KEEP
 * bytes; at its end (the worker closed it or died) closes it. */
static void
console_drain(struct pool *p)
{
	if (proc_read_now(p->con_fd, &p->con, &p->con_len, &p->con_cap, CONSOLE_KEEP,
	    &p->con_total)) {
		close(p->con_fd);
		p->con_fd = -1;
	}
}

/* Reads one answer from the worker within ms milliseconds, draining its
 * console meanwhile (a worker blocked on a full console pipe would never
 * answer). Returns the parsed object (new reference), or NULL with *why
 * set: "timeout", "eof" or "garbage". */
static json_t *
worker_read(struct pool *p, int64_t ms, const char **why)
{
	double end = now_ms() + (double)ms;
	for (;;) {
		char *nl = p->len ? memchr(p->buf, '\n', p->len) : NULL;
		if (nl) {
			*nl = '\0';
			json_t *v = json_loads(p->buf, 0, NULL);
			size_t used = (size_t)(nl - p->buf) + 1;
			memmove(p->buf, nl + 1, p->len - used);
			p->len -= used;
			if (!json_is_object(v)) {
				json_decref(v);
				*why = "garbage";
				return NULL;
			}
			return v;
		}
		double left = end - now_ms();
		if (left <= 0) {
			*why = "timeout";
			return NULL;
		}
		struct pollfd pfd[2] = {{.fd = p->from_fd, .events = POLLIN},
			{.fd = p->con_fd, .events = POLLIN}};
		int r = poll(pfd, p->con_fd >= 0 ? 2 : 1, left > 1e9 ? 1000000000 : (int)left + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (p->con_fd >= 0 && pfd[1].revents)
			console_drain(p);
		if (!pfd[0].revents)
			continue;
		if (p->cap - p->len < 65536) {
			p->cap = p->cap ? p->cap * 2 : 1 << 20;
			p->buf = xrealloc(p->buf, p->cap);
		}
		ssize_t n = read(p->from_fd, p->buf + p->len, p->cap - p->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*why = "eof";
			return NULL;
		}
		p->len += (size_t)n;
	}
}

/* Starts a worker and waits for its ready line. A machine without driver
 * or device is fatal (exit 69); so is a worker that cannot start. */
static void
worker_start(struct pool *p)
{
	int to[2], from[2], con[2];
	/* above the descriptors the worker is given (0, 1, 2 and the answer
	 * channel), so that placing them there never overwrites one another */
	proc_pipe(to, WORKER_ANSWER_FD + 1);
	proc_pipe(from, WORKER_ANSWER_FD + 1);
	proc_pipe(con, WORKER_ANSWER_FD + 1);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, con[1], 1);
	posix_spawn_file_actions_adddup2(&fa, from[1], WORKER_ANSWER_FD);
	char devno[16];
	snprintf(devno, sizeof devno, "%d", p->device);
	char *argv[] = {(char *)argv0, "--worker", "--device", devno, NULL};
	int e = posix_spawn(&p->pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	close(con[1]);
	if (e) {
		errno = e;
		die(EXIT_FAIL, "cannot start the worker (/proc/self/exe):");
	}
	p->to_fd = to[1];
	p->from_fd = from[0];
	p->con_fd = con[0];
	if (fcntl(p->con_fd, F_SETFL, O_NONBLOCK) < 0)
		die(EXIT_FAIL, "fcntl:");
	const char *why = NULL;
	json_t *hello = worker_read(p, START_DEADLINE_MS, &why);
	const char *no = json_string_value(json_object_get(hello, "unavailable"));
	json_t *dev = json_object_get(hello, "ready");
	if (!hello || (!no && !json_is_object(dev))) {
		char how[128] = "";
		worker_end(p, 1, how, sizeof how);
		die(EXIT_FAIL, "the GPU worker did not start (%s; %s)",
			why ? why : "unexpected first line", how);
	}
	if (no) {
		char *msg = xstrdup(no);
		json_decref(hello);
		worker_end(p, 0, NULL, 0);
		die(EXIT_UNAVAILABLE, "%s; kbench needs an NVIDIA GPU", msg);
	}
	json_decref(p->device_json);
	p->device_json = json_incref(dev);
	json_decref(hello);
}

/* Adds what the worker printed during the request to bench, when it
 * printed anything: {"bytes": N, "text": the first bytes as valid UTF-8,
 * "truncated": whether there were more}. */
static void
printed(json_t *bench, const struct pool *p)
{
	if (p->con_total == 0)
		return;
	char *text = utf8_clean(p->con ? p->con : "", p->con_len);
	json_object_set_new(bench, "printed", json_pack("{sI ss sb}", "bytes",
		(json_int_t)p->con_total, "text", text, "truncated",
		p->con_total > (long long)p->con_len));
	free(text);
}

json_t *
pool_bench(struct pool *p, const json_t *req, int64_t timeout_s)
{
	if (p->pid <= 0)
		worker_start(p);
	char *line = json_dumps(req, JSON_COMPACT);
	if (!line)
		die(EXIT_FAIL, "cannot encode a request for the worker");
	size_t n = strlen(line);
	line = xrealloc(line, n + 2);
	line[n++] = '\n';
	/* What the worker printed before this request is not this one's. */
	if (p->con_fd >= 0)
		console_drain(p);
	p->con_len = 0;
	p->con_total = 0;
	/* The worker reads whole requests while idle; a write that fails
	 * means it died, which the read below reports. */
	(void)proc_write_all(p->to_fd, line, n);
	free(line);
	const char *why = NULL;
	json_t *ans = worker_read(p, timeout_s * 1000, &why);
	json_t *bench = json_object_get(ans, "bench");
	if (ans && json_is_object(bench)) {
		json_incref(bench);
		/* The worker flushed its console before answering. */
		if (p->con_fd >= 0)
			console_drain(p);
		printed(bench, p);
		if (json_is_true(json_object_get(ans, "fatal")))
			worker_end(p, 0, NULL, 0);
		json_decref(ans);
		return bench;
	}
	json_decref(ans);
	char how[128] = "", reason[256];
	json_t *b;
	if (why && !strcmp(why, "timeout")) {
		worker_end(p, 1, how, sizeof how);
		snprintf(reason, sizeof reason, "no answer within %lld s: the worker "
			"was killed and replaced", (long long)timeout_s);
		b = bench_verdict(OUT_TIMEOUT, reason);
	} else {
		worker_end(p, 1, how, sizeof how);
		snprintf(reason, sizeof reason, "the worker died (%s) while running the "
			"candidate; replaced", how);
		b = bench_verdict(OUT_CRASH, reason);
	}
	printed(b, p);
	return b;
}

void
pool_init(struct pool *p, int device)
{
	memset(p, 0, sizeof *p);
	p->con_fd = -1;
	p->device = device;
}

const json_t *
pool_probe(struct pool *p)
{
	if (p->pid <= 0)
		worker_start(p);
	return p->device_json;
}

void
pool_close(struct pool *p)
{
	if (p->pid > 0)
		worker_end(p, 0, NULL, 0);
	free(p->buf);
	free(p->con);
	json_decref(p->device_json);
	memset(p, 0, sizeof *p);
}
