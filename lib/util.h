/* util.h: small helpers every tool needs: checked allocation, numbers
 * parsed with bounds, whole files read and written atomically. */
#ifndef HTAM_UTIL_H
#define HTAM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that dies (exit 1) instead of returning NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* asprintf that dies on failure; returns a string the caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses a whole decimal integer in [min, max], like OpenBSD's strtonum.
 * Returns 0, or -1 with *errstr set to "invalid", "too small" or "too large". */
int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out,
	const char **errstr);
/* Parses a whole finite floating number. Returns 0 or -1. */
int parse_double(const char *s, double *out);

/* Reads a whole file into a NUL-terminated buffer the caller frees; *len
 * gets its length (may be NULL). Returns NULL with errno set on failure. */
char *read_file(const char *path, size_t *len);
/* Writes data to path atomically: a temporary file in the same folder,
 * fsync, then rename. Returns 0 or -1 with errno set. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* mkdir -p. Returns 0 or -1 with errno set. */
int mkdir_p(const char *path, int mode);

/* Is s a C identifier (a letter or '_', then letters, digits, '_')? */
int is_c_identifier(const char *s);
/* Formats a message into err (as snprintf) and returns -1, so a checker
 * can say `return errf(err, errlen, "...", ...);`. */
int errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A copy of n bytes of s that is valid UTF-8 (RFC 3629) however s was
 * cut: every byte that does not begin a complete, shortest-form sequence
 * of a Unicode scalar value, and every NUL, becomes U+FFFD. The caller
 * frees it. jansson refuses invalid UTF-8, so text that comes from
 * outside (a compiler's log, a kernel's printf, a server's answer) goes
 * through this before it goes into a record. */
char *utf8_clean(const char *s, size_t n);

/* The folder of htam's own data named in_tree (a path relative to the
 * checkout: "tasks", "tools/kgen/templates"), for a tool wherever it
 * runs: $env when set (may be NULL), else in_tree above the running
 * executable's folder (bin/, or build/NAME/bin/), else share/htam/BASE
 * above it (an installed tree, BASE being in_tree's last part), else
 * in_tree under the working folder. Returns a string the caller frees;
 * *how, if not NULL, says which ("HTAM_TASKS", "beside the executable",
 * "installed", "the working folder"). */
char *data_dir(const char *env, const char *in_tree, const char **how);

/* Monotonic clock in milliseconds. */
double now_ms(void);

#endif
