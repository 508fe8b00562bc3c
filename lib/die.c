/* die.c: "tool: message" diagnostics and exits (die.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "die.h"

const char *argv0 = "htam";

void
setprogname(const char *name)
{
	const char *slash;

	if (!name || !*name)
		return;
	slash = strrchr(name, '/');
	argv0 = slash ? slash + 1 : name;
}

/* Prints the message; a format ending in ':' gets the system error. */
static void
vmessage(long line, const char *fmt, va_list ap)
{
	int saved = errno;
	size_t n = strlen(fmt);

	fflush(stdout);
	fprintf(stderr, "%s: ", argv0);
	if (line > 0)
		fprintf(stderr, "line %ld: ", line);
	vfprintf(stderr, fmt, ap);
	if (n > 0 && fmt[n - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
}

void
vwarnf(const char *fmt, va_list ap)
{
	vmessage(0, fmt, ap);
}

void
warnf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(0, fmt, ap);
	va_end(ap);
}

/* Ends the process after an error: every stream flushed, then _exit, so
 * what the process still holds (the record it was reading) is not taken
 * for a leak by the sanitizers' exit-time check. No htam tool registers
 * exit handlers. */
static _Noreturn void
end(int code)
{
	fflush(NULL);
	_exit(code);
}

void
die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(0, fmt, ap);
	va_end(ap);
	end(code);
}

void
warn_line(long line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(line, fmt, ap);
	va_end(ap);
}

void
die_line(int code, long line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(line, fmt, ap);
	va_end(ap);
	end(code);
}
