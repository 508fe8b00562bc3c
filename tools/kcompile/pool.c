/* pool.c: kcompile's compiles, each in a child process of its own. A
 * process is the one thing that can stop NVRTC when it runs past its
 * deadline (there is no cancel call), and it keeps NVRTC's crashes and
 * memory away from the stream. kcompile has no CUDA driver in it, so
 * fork is safe. The child's alarm is the deadline; the pool kills the
 * child a little later in case the alarm did not do it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "die.h"
#include "proc.h"
#include "kcompile.h"
#include "util.h"

/* Seconds after the deadline before the pool kills a child itself. */
#define GRACE_S 2
/* A reply larger than this (a cubin of absurd size) stops the child. */
#define REPLY_MAX ((size_t)256 << 20)

struct job *
pool_job(struct pool *p, const char *key, const char *source,
	const json_t *options, int keep)
{
	struct job *j;

	for (j = p->jobs; j; j = j->next)
		if (strcmp(j->key, key) == 0) {
			j->refs += 1 + (keep && !j->kept);
			j->kept |= keep;
			return j;
		}
	j = xcalloc(1, sizeof(*j));
	memcpy(j->key, key, sizeof(j->key));
	j->refs = 1 + keep;
	j->kept = keep;
	j->fd = -1;
	if ((j->result = cache_get(p->cache, key))) {
		j->state = JOB_DONE;
	} else {
		j->state = JOB_QUEUED;
		j->source = xstrdup(source);
		j->options = json_incref((json_t *)options);
	}
	if (p->last)
		p->last->next = j;
	else
		p->jobs = j;
	p->last = j;
	return j;
}

static void
job_free(struct job *j)
{
	free(j->source);
	free(j->reply);
	json_decref(j->options);
	json_decref(j->result);
	free(j);
}

void
job_release(struct pool *p, struct job *j)
{
	struct job **at, *prev = NULL;

	if (--j->refs > 0)
		return;
	for (at = &p->jobs; *at != j; at = &(*at)->next)
		prev = *at;
	*at = j->next;
	if (p->last == j)
		p->last = prev;
	job_free(j);
}

/* Forks the compile process of j. */
static void
job_spawn(struct pool *p, struct job *j)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) < 0)
		die(EXIT_FAIL, "pipe:");
	if ((pid = fork()) < 0)
		die(EXIT_FAIL, "fork:");
	if (pid == 0) {
		close(fds[0]);
		compile_child(p->tc, fds[1], j->source, j->options);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	j->pid = pid;
	j->fd = fds[0];
	j->started = now_ms();
	j->state = JOB_RUNNING;
	p->running++;
}

void
pool_start(struct pool *p)
{
	struct job *j;

	for (j = p->jobs; j && p->running < p->max; j = j->next)
		if (j->state == JOB_QUEUED)
			job_spawn(p, j);
}

/* Collects the child of j, which has closed its pipe or been killed, and
 * turns its reply into the compile object (cached when it may be). */
static void
job_reap(struct pool *p, struct job *j)
{
	int status = 0, cacheable;
	double ms = now_ms() - j->started;

	close(j->fd);
	j->fd = -1;
	proc_reap(j->pid, &status);
	j->result = compile_reply(p->tc, j->options, j->reply, j->len, status,
		j->killed, ms, &cacheable);
	if (cacheable)
		cache_put(p->cache, j->key, j->result);
	free(j->reply);
	j->reply = NULL;
	j->len = j->cap = 0;
	free(j->source);
	j->source = NULL;
	j->state = JOB_DONE;
	p->running--;
}

static void
job_kill(struct pool *p, struct job *j)
{
	kill(j->pid, SIGKILL);
	j->killed = 1;
	job_reap(p, j);
}

/* Reads what the child of j has written; reaps it at the end. */
static void
job_read(struct pool *p, struct job *j)
{
	long long total = (long long)j->len;
	int ended = proc_read_now(j->fd, &j->reply, &j->len, &j->cap, REPLY_MAX + 1, &total);

	if (total > (long long)REPLY_MAX) {
		kill(j->pid, SIGKILL);
		j->len = 0;    /* reported as "no reply" */
		job_reap(p, j);
	} else if (ended) {
		job_reap(p, j);    /* the end, or an error: the child is done */
	}
}

int
pool_wait(struct pool *p, int infd)
{
	struct pollfd *fds = xcalloc((size_t)p->running + 1, sizeof(*fds));
	struct job **who = xcalloc((size_t)p->running + 1, sizeof(*who));
	double now = now_ms(), wake = -1;
	struct job *j;
	int n = 0, i, readable = 0;

	for (j = p->jobs; j; j = j->next) {
		double until;
		if (j->state != JOB_RUNNING)
			continue;
		until = j->started + (p->tc->timeout_s + GRACE_S) * 1000.0;
		if (j->len == 0 && (wake < 0 || until < wake))
			wake = until;
		fds[n].fd = j->fd;
		fds[n].events = POLLIN;
		who[n++] = j;
	}
	if (infd >= 0) {
		fds[n].fd = infd;
		fds[n].events = POLLIN;
	}
	if (poll(fds, (nfds_t)n + (infd >= 0), wake < 0 ? -1 :
	    wake <= now ? 0 : (int)(wake - now) + 1) < 0 && errno != EINTR)
		die(EXIT_FAIL, "poll:");
	for (i = 0; i < n; i++)
		if (fds[i].revents)
			job_read(p, who[i]);
	/* A child that has begun its reply has finished compiling in time;
	 * if it is slow to finish writing, that is the pool's own delay. */
	now = now_ms();
	for (i = 0; i < n; i++)
		if (who[i]->state == JOB_RUNNING && who[i]->len == 0 &&
		    now >= who[i]->started + (p->tc->timeout_s + GRACE_S) * 1000.0)
			job_kill(p, who[i]);
	if (infd >= 0 && fds[n].revents)
		readable = 1;
	free(fds);
	free(who);
	return readable;
}

void
pool_free(struct pool *p)
{
	struct job *j, *next;

	for (j = p->jobs; j; j = next) {
		next = j->next;
		if (j->state == JOB_RUNNING) {
			close(j->fd);
			proc_end(j->pid, 1, 0, NULL);
		}
		job_free(j);
	}
	p->jobs = p->last = NULL;
}
