/* die.h: error messages and exit codes shared by every htam tool.
 *
 * Every message starts with the tool's name (argv0) and, where it is about
 * an input record, the record's line: "kbench: line 3: task \"softmax\": ...".
 * A format that ends in ':' has the system error (errno) appended. */
#ifndef HTAM_DIE_H
#define HTAM_DIE_H

#include <stdarg.h>

/* The exit codes every tool uses: 0 ok, 2 a bad command line, 65 a bad
 * input record, 69 a missing device or service, 1 anything else;
 * sysexits.h names in comments. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,        /* anything else */
	EXIT_USAGE = 2,       /* bad command line */
	EXIT_DATAERR = 65,    /* EX_DATAERR: a malformed input record */
	EXIT_UNAVAILABLE = 69 /* EX_UNAVAILABLE: a device or service is missing */
};

extern const char *argv0;

/* Sets argv0 from argv[0], without its directory. */
void setprogname(const char *name);

void warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vwarnf(const char *fmt, va_list ap);
_Noreturn void die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* As warnf and die, with "line N: " after the tool's name. */
void warn_line(long line, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
_Noreturn void die_line(int code, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
