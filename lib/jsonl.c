/* jsonl.c: JSON lines in and out over jansson (jsonl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "jsonl.h"
#include "util.h"

struct jsonl {
	FILE *f;
	char *buf;
	size_t cap;
	long line;
};

struct jsonl *
jsonl_open(FILE *f)
{
	struct jsonl *r = xcalloc(1, sizeof(*r));

	r->f = f;
	return r;
}

void
jsonl_close(struct jsonl *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

long
jsonl_line(const struct jsonl *r)
{
	return r->line;
}

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Reads one line (with its newline, if any) into r->buf, NUL-terminated,
 * never holding more than JSONL_LINE_MAX bytes of it. Returns its length,
 * -1 at the end of input or on a read error, -2 when it is too long. */
static ssize_t
read_line(struct jsonl *r)
{
	size_t len = 0;

	for (;;) {
		if (r->cap - len < 2) {
			if (r->cap >= JSONL_LINE_MAX + 2)
				return -2;
			r->cap = r->cap ? 2 * r->cap : 1 << 16;
			if (r->cap > JSONL_LINE_MAX + 2)
				r->cap = JSONL_LINE_MAX + 2;
			r->buf = xrealloc(r->buf, r->cap);
		}
		if (!fgets(r->buf + len, (int)(r->cap - len), r->f))
			return len ? (ssize_t)len : -1;
		len += strlen(r->buf + len);
		if (len && r->buf[len - 1] == '\n')
			return (ssize_t)len;
		if (len > JSONL_LINE_MAX)
			return -2;
	}
}

int
jsonl_read(struct jsonl *r, json_t **rec, char *err, size_t errlen)
{
	ssize_t n;
	json_error_t je;
	json_t *v;

	*rec = NULL;
	errno = 0;
	n = read_line(r);
	if (n == -2) {
		snprintf(err, errlen, "line %ld: longer than %d MiB (a record that large is "
			"not one htam writes)", r->line + 1, JSONL_LINE_MAX >> 20);
		return -1;
	}
	if (n < 0) {
		if (ferror(r->f)) {
			snprintf(err, errlen, "line %ld: read error: %s",
				r->line + 1, strerror(errno));
			return -1;
		}
		return 0;
	}
	r->line++;
	if (n > 0 && r->buf[n - 1] == '\n')
		r->buf[--n] = '\0';
	if (n > 0 && r->buf[n - 1] == '\r')
		r->buf[--n] = '\0';
	if (strspn(r->buf, " \t") == (size_t)n) {
		snprintf(err, errlen, "line %ld: blank line (one JSON object per line expected)",
			r->line);
		return -1;
	}
	v = json_loadb(r->buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		snprintf(err, errlen, "line %ld, column %d: %s", r->line,
			je.column, je.text);
		return -1;
	}
	if (!json_is_object(v)) {
		snprintf(err, errlen, "line %ld: expected a JSON object, got %s",
			r->line, type_name(v));
		json_decref(v);
		return -1;
	}
	*rec = v;
	return 1;
}

json_t *
jsonl_next(struct jsonl *r)
{
	char err[512];
	json_t *rec;

	if (jsonl_read(r, &rec, err, sizeof(err)) < 0)
		die(EXIT_DATAERR, "%s", err);
	return rec;
}

int
jsonl_write(FILE *f, const json_t *rec)
{
	if (json_dumpf(rec, f, JSON_COMPACT | JSON_ENSURE_ASCII) < 0)
		return -1;
	if (fputc('\n', f) == EOF || fflush(f) == EOF)
		return -1;
	return 0;
}

void
jsonl_put(FILE *f, const json_t *rec)
{
	if (jsonl_write(f, rec) < 0)
		die(EXIT_FAIL, "write error:");
}

json_t *
json_text(const char *s)
{
	json_t *v;
	char *clean;

	if (!s)
		return json_null();
	if ((v = json_string(s)))
		return v;
	clean = utf8_clean(s, strlen(s));
	v = json_string(clean);
	free(clean);
	return v;
}

const char *
json_unknown_member(const json_t *obj, const char *const known[])
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v) {
		int i;
		for (i = 0; known[i] && strcmp(known[i], k) != 0; i++)
			;
		if (!known[i])
			return k;
	}
	return NULL;
}

size_t
json_array_find_string(const json_t *arr, const char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach((json_t *)arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return i;
	return SIZE_MAX;
}
