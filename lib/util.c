/* util.c: checked allocation, bounded number parsing, whole-file I/O. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "die.h"
#include "util.h"

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die(EXIT_FAIL, "out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die(EXIT_FAIL, "out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(EXIT_FAIL, "out of memory (%zu bytes)", n);
	return p;
}

char *
xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die(EXIT_FAIL, "out of memory");
	return d;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die(EXIT_FAIL, "out of memory");
	return s;
}

int
parse_i64(const char *s, int64_t min, int64_t max, int64_t *out,
	const char **errstr)
{
	char *end;
	long long v;

	*errstr = "invalid";
	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || end == s)
		return -1;
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*errstr = "too small";
		return -1;
	}
	if ((errno == ERANGE && v == LLONG_MAX) || v > max) {
		*errstr = "too large";
		return -1;
	}
	*errstr = NULL;
	*out = v;
	return 0;
}

int
parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end != '\0' || end == s || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

char *
read_file(const char *path, size_t *len)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!(f = fopen(path, "rb")))
		return NULL;
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = xrealloc(buf, cap + 1);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int saved = errno;
		fclose(f);
		free(buf);
		errno = saved ? saved : EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int
write_file_atomic(const char *path, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	const char *p = data;
	int fd, saved;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) < 0)
		goto fail_fd;
	if (close(fd) < 0) {
		fd = -1;
		goto fail_fd;
	}
	if (rename(tmp, path) < 0)
		goto fail_unlink;
	free(tmp);
	return 0;
fail_fd:
	saved = errno;
	if (fd >= 0)
		close(fd);
	errno = saved;
fail_unlink:
	saved = errno;
	unlink(tmp);
	errno = saved;
fail:
	saved = errno;
	free(tmp);
	errno = saved;
	return -1;
}

int
mkdir_p(const char *path, int mode)
{
	char *p, *s;
	int rc = 0;

	if (!path || !*path) {
		errno = ENOENT;
		return -1;
	}
	p = xstrdup(path);
	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, (mode_t)mode) < 0 && errno != EEXIST) {
				rc = -1;
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

int
is_c_identifier(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return s[0] != 0;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
		cp = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		cp = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	/* shortest form, no surrogates, at most U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return len;
}

char *
utf8_clean(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out = xmalloc(3 * n + 1), *o = out;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(u + i, n - i);
		if (len == 0) {
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, s + i, len);
		o += len;
		i += len;
	}
	*o = '\0';
	return out;
}

char *
data_dir(const char *env, const char *in_tree, const char **how)
{
	const char *v = env ? getenv(env) : NULL, *base = strrchr(in_tree, '/');
	char exe[PATH_MAX], *slash, *p;
	ssize_t n;

	base = base ? base + 1 : in_tree;
	if (v && *v) {
		if (how)
			*how = env;
		return xstrdup(v);
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		const char *const up[] = { "/..", "/../../.." };
		for (size_t i = 0; i < LEN(up); i++) {
			p = xasprintf("%s%s/%s", exe, up[i], in_tree);
			if (access(p, R_OK) == 0) {
				if (how)
					*how = "beside the executable";
				return p;
			}
			free(p);
		}
		p = xasprintf("%s/../share/htam/%s", exe, base);
		if (access(p, R_OK) == 0) {
			if (how)
				*how = "installed";
			return p;
		}
		free(p);
	}
	if (how)
		*how = "the working folder";
	return xstrdup(in_tree);
}
