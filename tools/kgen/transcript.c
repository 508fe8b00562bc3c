/* transcript.c: kgen's transcripts (--transcripts DIR), one JSON file per
 * request attempt holding the prompt, the answer and what came of it, so
 * a user can read what the model was asked and said, and the replay
 * backend can answer the same prompt the same way again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "die.h"
#include "record.h"
#include "util.h"
#include "kgen.h"

/* Appends s to buf (of size n, holding len bytes) with every character
 * that is not a letter, digit, '_' or '.' written as '_', so a run id
 * cannot make a path; a leading '.' becomes '_' too. */
static size_t
append_safe(char *buf, size_t n, size_t len, const char *s)
{
	for (; *s && len + 1 < n; s++, len++) {
		char c = *s;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_' || (c == '.' && len > 0);
		buf[len] = ok ? c : '_';
	}
	buf[len] = '\0';
	return len;
}

char *
transcript_name(const json_t *state, int index, int attempt)
{
	char buf[512];
	size_t len = 0;

	len = append_safe(buf, 200, len, record_run(state));
	buf[len++] = '-';
	len = append_safe(buf, 400, len, record_task_id(state));
	snprintf(buf + len, sizeof buf - len, "-s%lld-c%d-a%d.json",
		(long long)record_step(state), index, attempt);
	return xstrdup(buf);
}

void
transcript_write(const char *dir, const char *name, const json_t *rec)
{
	char *path, *text;

	if (mkdir_p(dir, 0777) < 0)
		die(EXIT_FAIL, "--transcripts %s:", dir);
	text = json_dumps(rec, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	if (text == NULL)
		die(EXIT_FAIL, "transcript %s: cannot write JSON", name);
	path = xasprintf("%s/%s", dir, name);
	/* One line at the end, so `cat` and editors are happy. */
	text = xrealloc(text, strlen(text) + 2);
	strcat(text, "\n");
	if (write_file_atomic(path, text, strlen(text)) < 0)
		die(EXIT_FAIL, "%s:", path);
	free(path);
	free(text);
}

void
prompt_sha256(const json_t *messages, char hex[65])
{
	json_sha256_hex(messages, hex);
}
