/* log.c: what NVRTC's log says: the ptxas resource report per kernel,
 * the first error, and a copy of bounded size that keeps what matters. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcompile.h"
#include "util.h"

/* Whether a line of NVRTC's log reports an error: "kernel.cu(6): error:
 * ...", "catastrophic error: ...", "ptxas error   : ...", but not a warning
 * about a variable named error_count. */
static int
is_error_line(const char *line, size_t n)
{
	const char *p = line, *end = line + n;

	while ((p = memmem(p, (size_t)(end - p), "error", 5))) {
		const char *q = p + 5;
		while (q < end && *q == ' ')
			q++;
		if (q < end && *q == ':')
			return 1;
		p += 5;
	}
	return 0;
}

/* Where the first error line of log starts, or NULL. */
static const char *
find_error(const char *log)
{
	const char *p = log;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		if (is_error_line(p, n))
			return p;
		if (!eol)
			break;
		p = eol + 1;
	}
	return NULL;
}

char *
log_first_error(const char *log)
{
	const char *p = find_error(log), *eol;
	size_t n;

	if (!p)
		return NULL;
	n = (eol = strchr(p, '\n')) ? (size_t)(eol - p) : strlen(p);
	if (n > 400)
		return xasprintf("%.397s...", p);
	return xasprintf("%.*s", (int)n, p);
}

/* The number before what in item ("512 bytes stack frame"), or after it
 * ("Used 32 registers"): sets *v and returns 1 if item matches. */
static int
report_number(const char *item, const char *before, const char *after,
	json_int_t *v)
{
	long long n;
	char tail[64];
	size_t m;

	while (*item == ' ')
		item++;
	if (before) {
		m = strlen(before);
		if (strncmp(item, before, m) != 0)
			return 0;
		item += m;
	}
	if (sscanf(item, " %lld %63[^,\n]", &n, tail) < 2)
		return 0;
	for (m = strlen(tail); m > 0 && isspace((unsigned char)tail[m - 1]); m--)
		tail[m - 1] = '\0';
	if (strcmp(tail, after) != 0)
		return 0;
	*v = (json_int_t)n;
	return 1;
}

/* Reads one comma-separated line of the report into kernel k. */
static void
report_line(json_t *k, const char *line)
{
	static const struct {
		const char *before, *after, *member;
	} items[] = {
		{ "Used", "registers", "registers" },
		{ "used", "barriers", "barriers" },
		{ NULL, "bytes smem", "smem_static" },
		{ NULL, "bytes stack frame", "stack" },
		{ NULL, "bytes spill stores", "spill_stores" },
		{ NULL, "bytes spill loads", "spill_loads" },
	};
	char *copy = xstrdup(line), *save = NULL, *item;
	size_t i;

	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
		for (i = 0; i < LEN(items); i++) {
			json_int_t v;
			if (report_number(item, items[i].before, items[i].after, &v))
				json_object_set_new(k, items[i].member, json_integer(v));
		}
	free(copy);
}

/* ptxas -v says, per entry function:
 *   ptxas info    : Compiling entry function 'relu' for 'sm_90'
 *   ptxas info    : Function properties for relu
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 10 registers, used 0 barriers, 1024 bytes smem
 * and "Function properties" for device functions that were not inlined,
 * which are not kernels and are skipped. */
json_t *
ptxas_kernels(const char *log)
{
	json_t *kernels = json_object(), *cur = NULL;
	int props = 0;  /* the next '.' line belongs to cur */
	const char *p = log;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xmalloc(n + 1), name[256];
		const char *m;
		memcpy(line, p, n);
		line[n] = '\0';
		if (sscanf(line, "ptxas info : Compiling entry function '%255[^']'", name) == 1) {
			cur = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "registers", 0,
				"spill_stores", 0, "spill_loads", 0, "smem_static", 0,
				"stack", 0, "barriers", 0);
			json_object_set_new(kernels, name, cur);
			props = 0;
		} else if ((m = strstr(line, "Function properties for "))) {
			m += strlen("Function properties for ");
			props = cur && json_object_get(kernels, m) == cur;
		} else if (strncmp(line, "ptxas ", 6) == 0 && strstr(line, " . ") &&
		    strstr(line, "stack frame")) {
			if (props)
				report_line(cur, strstr(line, " . ") + 3);
			props = 0;
		} else if (cur && strncmp(line, "ptxas", 5) == 0 &&
		    (m = strstr(line, ": Used "))) {
			report_line(cur, m + 2);
		}
		free(line);
		p = eol ? eol + 1 : NULL;
	}
	return kernels;
}

/* Where the line holding byte at starts. */
static size_t
line_start(const char *s, size_t at)
{
	while (at > 0 && s[at - 1] != '\n')
		at--;
	return at;
}

/* Where the line after byte at starts (or len). */
static size_t
next_line(const char *s, size_t len, size_t at)
{
	const char *nl = memchr(s + at, '\n', len - at);

	return nl ? (size_t)(nl + 1 - s) : len;
}

char *
log_bound(const char *log, size_t max)
{
	size_t len = strlen(log), room = max - 256, e = 0, keep[3][2], n = 0, i;
	const char *err = find_error(log);
	char *out, *p;

	if (len <= max)
		return xstrdup(log);
	/* Keep the log from its first error on, which a reader needs first;
	 * if that fits, fill the room with the log's first lines, else keep
	 * the beginning and the end of it. Notes say where bytes were cut. */
	if (err)
		e = (size_t)(err - log);
	if (len - e <= room) {
		keep[n][0] = 0;
		keep[n][1] = line_start(log, room - (len - e));
		keep[n][1] = keep[n][1] < e ? keep[n][1] : e;
		n++;
		keep[n][0] = e;
		keep[n++][1] = len;
	} else {
		keep[n][0] = e;
		keep[n][1] = line_start(log, e + room / 2) > e ?
			line_start(log, e + room / 2) : e + room / 2;
		n++;
		keep[n][0] = next_line(log, len, len - room / 2);
		keep[n][0] = keep[n][0] < len ? keep[n][0] : len - room / 2;
		keep[n++][1] = len;
	}
	p = out = xmalloc(max + 1);
	for (i = 0; i < n; i++) {
		size_t from = i ? keep[i - 1][1] : 0, cut = keep[i][0] - from;
		if (cut > 0)
			p += sprintf(p, "%s[kcompile: %zu bytes of the log cut here]\n",
				p > out && p[-1] != '\n' ? "\n" : "", cut);
		memcpy(p, log + keep[i][0], keep[i][1] - keep[i][0]);
		p += keep[i][1] - keep[i][0];
	}
	*p = '\0';
	return out;
}
