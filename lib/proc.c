/* proc.c: child processes of the pools (proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "die.h"
#include "proc.h"
#include "util.h"

void
proc_pipe(int fd[2], int min_fd)
{
	int raw[2];

	if (pipe2(raw, O_CLOEXEC) < 0)
		die(EXIT_FAIL, "pipe:");
	for (int i = 0; i < 2; i++) {
		fd[i] = fcntl(raw[i], F_DUPFD_CLOEXEC, min_fd);
		if (fd[i] < 0)
			die(EXIT_FAIL, "fcntl:");
		close(raw[i]);
	}
}

int
proc_write_all(int fd, const void *buf, size_t n)
{
	const char *s = buf;

	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int
proc_read_now(int fd, char **buf, size_t *len, size_t *cap, size_t max,
	long long *total)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return 1;
		if (total)
			*total += n;
		size_t keep = *len < max ? max - *len : 0;
		if (keep > (size_t)n)
			keep = (size_t)n;
		if (keep) {
			if (*cap - *len < keep + 1) {
				*cap = *cap ? *cap : 65536;
				while (*cap - *len < keep + 1)
					*cap *= 2;
				*buf = xrealloc(*buf, *cap);
			}
			memcpy(*buf + *len, chunk, keep);
			*len += keep;
			(*buf)[*len] = '\0';
		}
	}
}

void
proc_reap(pid_t pid, int *status)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
}

void
proc_end(pid_t pid, int kill_now, double grace_ms, int *status)
{
	int st = 0;

	if (kill_now)
		kill(pid, SIGKILL);
	for (double end = now_ms() + grace_ms; !kill_now; ) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			if (status)
				*status = st;
			return;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (now_ms() > end) {
			kill(pid, SIGKILL);
			break;
		}
		usleep(10000);
	}
	proc_reap(pid, status);
}

void
proc_describe(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
}
