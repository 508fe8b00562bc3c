/* input.c: stdin as a FILE for jsonl_read that never holds more than the
 * line being read. kcompile must know whether a whole record can be read
 * now (then it reads it while compiles run) or would have to be waited
 * for (then it waits for the compiles and stdin together, in poll): with
 * stdio's own buffer it could not tell, since lines hide there. So the
 * FILE is a cookie stream fed from our buffer one line at a time. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "die.h"
#include "kcompile.h"
#include "util.h"

/* Reads once from the fd into the buffer: blocks only if nothing is there. */
void
input_fill(struct input *in)
{
	ssize_t n;

	if (in->eof)
		return;
	if (in->off > 0 && in->off == in->len)
		in->off = in->len = 0;
	if (in->cap - in->len < 65536) {
		if (in->off > 0) {
			memmove(in->buf, in->buf + in->off, in->len - in->off);
			in->len -= in->off;
			in->off = 0;
		}
		if (in->cap - in->len < 65536) {
			in->cap = in->cap ? in->cap * 2 : 65536;
			in->buf = xrealloc(in->buf, in->cap);
		}
	}
	do
		n = read(in->fd, in->buf + in->len, in->cap - in->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die(EXIT_FAIL, "read error:");
	if (n == 0)
		in->eof = 1;
	in->len += (size_t)n;
}

/* The cookie's read: at most the rest of the current line. */
static ssize_t
input_read(void *cookie, char *out, size_t size)
{
	struct input *in = cookie;
	const char *nl;
	size_t n;

	while (in->off == in->len && !in->eof)
		input_fill(in);
	if ((n = in->len - in->off) == 0)
		return 0;
	if ((nl = memchr(in->buf + in->off, '\n', n)))
		n = (size_t)(nl - (in->buf + in->off)) + 1;
	if (n > size)
		n = size;
	memcpy(out, in->buf + in->off, n);
	in->off += n;
	return (ssize_t)n;
}

void
input_open(struct input *in, int fd)
{
	static const cookie_io_functions_t io = { .read = input_read };

	memset(in, 0, sizeof(*in));
	in->fd = fd;
	if (!(in->f = fopencookie(in, "r", io)))
		die(EXIT_FAIL, "fopencookie:");
}

void
input_close(struct input *in)
{
	fclose(in->f);
	free(in->buf);
}

int
input_ready(struct input *in)
{
	struct pollfd pfd = { .fd = in->fd, .events = POLLIN };

	for (;;) {
		if (in->eof || (in->len > in->off &&
		    memchr(in->buf + in->off, '\n', in->len - in->off)))
			return 1;
		if (poll(&pfd, 1, 0) <= 0)
			return 0;
		input_fill(in);
	}
}
