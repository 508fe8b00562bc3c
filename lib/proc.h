/* proc.h: the child processes of the tools' pools, kcompile's compiles
 * (one fork each, many at once) and kbench's GPU worker (one exec, kept),
 * which differ in how they talk and share everything else here: pipes
 * whose ends no child inherits by accident, writes and reads that survive
 * signals, reading what a child wrote without waiting, and ending a child
 * against a deadline and saying how it ended. */
#ifndef HTAM_PROC_H
#define HTAM_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* A pipe whose two ends are close-on-exec and numbered above min_fd (so
 * that placing them on a child's 0, 1, 2 or 3 never clobbers one another).
 * Dies (exit 1) when the system has no pipe to give. */
void proc_pipe(int fd[2], int min_fd);

/* Writes all n bytes of buf to fd, through EINTR and short writes.
 * Returns 0, or -1 when the other end is gone (errno set). */
int proc_write_all(int fd, const void *buf, size_t n);

/* Reads what fd (non-blocking) holds now, appending to *buf (grown, with
 * *len and *cap) and keeping at most max bytes in all (what is past max
 * is read and counted in *total but not kept). Returns 1 when the writer
 * closed its end (or on an error), else 0. */
int proc_read_now(int fd, char **buf, size_t *len, size_t *cap, size_t max,
	long long *total);

/* Waits for child pid, through EINTR; *status gets its wait status. */
void proc_reap(pid_t pid, int *status);

/* Ends child pid: when kill_now, SIGKILL at once; else waits up to
 * grace_ms for it to exit by itself (its input closed), then SIGKILL.
 * Reaps it; *status gets its wait status. */
void proc_end(pid_t pid, int kill_now, double grace_ms, int *status);

/* How a child ended, for messages: "exited with status 1", "killed by
 * signal 9 (Killed)". */
void proc_describe(int status, char *buf, size_t n);

#endif
