/* answer.c: a model's answer read into a candidate. The answer is free
 * text in Markdown; the kernel is its ```cuda block and the launch plan its
 * ```json block. Everything the harness would trip over later and that
 * needs no compiler is checked here: the plan's kernels are defined in the
 * code, its args name buffers or typed scalars, its sizes evaluate at
 * every size the task checks. What fails becomes a gen_error candidate
 * with the reason, never a crash.
 *
 * Choices, as kgen(1) documents them: text before the last "</think>" is
 * the model's reasoning and is skipped; with several cuda blocks (or json
 * blocks) the last one is taken and a note says so, since models that show
 * the old kernel before the new one put the new one last; a fence left open
 * at the end matters only when a block is missing; the json block is a
 * launch plan ({"launches": ...}) or {"defines": ..., "launch": ...}. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "plan.h"
#include "task.h"
#include "record.h"
#include "util.h"
#include "kgen.h"

#define SOURCE_MAX (1 << 20)

/* A fenced block of the answer: its info string's first word (the
 * language, lowercased) and its body. */
struct block {
	char lang[16];
	const char *body;
	size_t len;
};

json_t *
gen_error(const char *fmt, ...)
{
	char reason[KGEN_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	/* json_text: the reason may be cut inside a character, or quote bad bytes */
	return json_pack("{s:s, s:o}", "status", outcome_names[OUT_GEN_ERROR],
		"reason", json_text(reason));
}

/* The line after p (or the end of text). */
static const char *
next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

/* If the line at p is a fence (up to three spaces, then three or more
 * backticks), returns the number of backticks and sets *info to what
 * follows them; else 0. */
static size_t
fence(const char *p, const char **info)
{
	size_t n = 0, sp = 0;

	while (p[sp] == ' ' && sp < 3)
		sp++;
	while (p[sp + n] == '`')
		n++;
	if (n < 3)
		return 0;
	*info = p + sp + n;
	return n;
}

/* Finds the fenced blocks of text, at most max, into blocks. Returns how
 * many, with *unclosed set if the last block is not closed (and is left
 * out). */
static int
find_blocks(const char *text, struct block *blocks, int max, int *unclosed)
{
	const char *p = text, *info, *q, *end;
	size_t ticks, t;
	int n = 0;

	while (*p) {
		if ((ticks = fence(p, &info)) == 0) {
			p = next_line(p);
			continue;
		}
		struct block b = {0};
		size_t i = 0;
		while (*info == ' ')
			info++;
		while (info[i] && !isspace((unsigned char)info[i]) &&
		    info[i] != '`' && i + 1 < sizeof b.lang) {
			b.lang[i] = (char)tolower((unsigned char)info[i]);
			i++;
		}
		b.body = q = next_line(p);
		for (;;) {
			if (*q == '\0') {
				*unclosed = 1;
				return n;
			}
			if ((t = fence(q, &info)) >= ticks) {
				for (end = info; *end == ' ' || *end == '\t' ||
				    *end == '\r'; end++)
					;
				if (*end == '\n' || *end == '\0')
					break;
			}
			q = next_line(q);
		}
		b.len = (size_t)(q - b.body);
		/* Keep the last max blocks: the last code block is the answer. */
		if (n == max) {
			memmove(blocks, blocks + 1, (size_t)(max - 1) * sizeof(*blocks));
			n--;
		}
		blocks[n++] = b;
		p = next_line(q);
	}
	return n;
}

static int
lang_is(const struct block *b, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(b->lang, *names) == 0)
			return 1;
	return 0;
}

/* Does the block's body contain s? */
static int
block_has(const struct block *b, const char *s)
{
	size_t n = strlen(s), i;

	for (i = 0; i + n <= b->len; i++)
		if (memcmp(b->body + i, s, n) == 0)
			return 1;
	return 0;
}

/* A CUDA block: labelled cuda, or C/C++ or unlabelled holding a kernel. */
static int
is_cuda(const struct block *b)
{
	static const char *const cuda[] = { "cuda", "cu", "cuh", NULL };
	static const char *const cxx[] = { "c", "cpp", "c++", "cc", "cxx",
		"", NULL };

	return lang_is(b, cuda) || (lang_is(b, cxx) && block_has(b, "__global__"));
}

/* A JSON block: labelled json, or unlabelled and starting with '{'. */
static int
is_json(const struct block *b)
{
	static const char *const json[] = { "json", "jsonc", NULL };
	size_t i = 0;

	if (lang_is(b, json))
		return 1;
	while (i < b->len && isspace((unsigned char)b->body[i]))
		i++;
	return b->lang[0] == '\0' && i < b->len && b->body[i] == '{';
}

/* A copy of the source with comments blanked out, so the kernel scan does
 * not find a kernel that is commented out. */
static char *
strip_comments(const char *src)
{
	char *s = xstrdup(src), *p = s;

	while (*p) {
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				*p++ = ' ';
		} else if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			char *stop = e ? e + 2 : p + strlen(p);
			for (; p < stop; p++)
				if (*p != '\n')
					*p = ' ';
		} else if (*p == '"') {
			for (p++; *p && *p != '"' && *p != '\n'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p == '"')
				p++;
		} else {
			p++;
		}
	}
	return s;
}

static int
is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The names of the __global__ functions of src (comments stripped), as a
 * new JSON array: after each __global__, the first identifier followed by
 * '(' that is not an attribute such as __launch_bounds__(...). */
static json_t *
kernel_names(const char *src)
{
	static const char *const attrs[] = { "__launch_bounds__",
		"__attribute__", "__cluster_dims__", "__maxnreg__", "__declspec",
		NULL };
	json_t *names = json_array();
	const char *p = src;

	while ((p = strstr(p, "__global__")) != NULL) {
		int word = (p == src || !is_ident_char(p[-1])) &&
			!is_ident_char(p[10]);
		p += 10;
		if (!word)
			continue;
		while (*p && *p != ';' && *p != '{') {
			const char *a = p, *const *at;
			size_t n;
			if (!is_ident_char(*p)) {
				p++;
				continue;
			}
			while (is_ident_char(*p))
				p++;
			n = (size_t)(p - a);
			while (isspace((unsigned char)*p))
				p++;
			if (*p != '(')
				continue;
			for (at = attrs; *at; at++)
				if (strlen(*at) == n && strncmp(*at, a, n) == 0)
					break;
			if (*at == NULL) {
				json_array_append_new(names, json_stringn(a, n));
				break;
			}
			for (int depth = 0; *p; p++) {
				depth += (*p == '(') - (*p == ')');
				if (depth == 0) {
					p++;
					break;
				}
			}
		}
	}
	return names;
}

static int
has_name(const json_t *names, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(names, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

/* Checks the defines: names are C identifiers, values integers or strings
 * that fit on a -D option. Returns 0 or -1 with reason set. */
static int
check_defines(const json_t *defines, char *reason, size_t len)
{
	const char *name;
	json_t *v;

	if (!json_is_object(defines)) {
		snprintf(reason, len, "defines: expected an object of NAME: value");
		return -1;
	}
	json_object_foreach((json_t *)defines, name, v) {
		if (!is_c_identifier(name)) {
			snprintf(reason, len, "defines: '%s' is not a C identifier", name);
			return -1;
		}
		if (json_is_string(v) && !strpbrk(json_string_value(v), "\n\r") &&
		    *json_string_value(v))
			continue;
		if (!json_is_integer(v)) {
			snprintf(reason, len, "defines.%s: expected an integer or "
				"a one-line string", name);
			return -1;
		}
	}
	return 0;
}

/* Splits the json block's value into defines and launch (new
 * references). Returns 0 or -1 with reason set. */
static int
split_plan(json_t *v, json_t **defines, json_t **launch, char *reason,
	size_t len)
{
	if (!json_is_object(v)) {
		snprintf(reason, len, "the json block is not an object");
		return -1;
	}
	if (json_object_get(v, "launch")) {
		*launch = json_incref(json_object_get(v, "launch"));
		*defines = json_object_get(v, "defines") ?
			json_incref(json_object_get(v, "defines")) : json_object();
		return 0;
	}
	if (json_object_get(v, "launches")) {
		/* A plan with the defines beside its launches: split them. */
		*launch = json_copy(v);
		*defines = json_object_get(v, "defines") ?
			json_incref(json_object_get(v, "defines")) : json_object();
		json_object_del(*launch, "defines");
		return 0;
	}
	snprintf(reason, len, "the json block is neither a launch plan "
		"({\"launches\": [...]}) nor {\"defines\": {...}, \"launch\": {...}}");
	return -1;
}

/* Checks source, defines and launch against the task. Returns 0 or -1
 * with reason set. */
static int
check_kernel(const char *source, const json_t *defines, const json_t *launch,
	const json_t *task, char *reason, size_t len)
{
	char err[768], *code;
	json_t *defined, *launched, *k;
	size_t i;
	int rc = 0;

	if (check_defines(defines, reason, len) < 0)
		return -1;
	if (task_plan_check(launch, task, defines, err, sizeof err) < 0) {
		snprintf(reason, len, "launch plan: %s", err);
		return -1;
	}
	code = strip_comments(source);
	defined = kernel_names(code);
	launched = plan_kernels(launch);
	if (json_array_size(defined) == 0) {
		snprintf(reason, len, "the cuda block defines no __global__ kernel");
		rc = -1;
	} else if (!strstr(code, "extern \"C\"")) {
		snprintf(reason, len, "the kernels are not declared extern \"C\" "
			"(their names would be mangled)");
		rc = -1;
	}
	json_array_foreach(launched, i, k)
		if (rc == 0 && !has_name(defined, json_string_value(k))) {
			char *names = json_dumps(defined, JSON_COMPACT);
			snprintf(reason, len, "the launch plan launches '%s', but "
				"the cuda block defines no __global__ %s (it "
				"defines %s)", json_string_value(k),
				json_string_value(k), names);
			free(names);
			rc = -1;
		}
	json_decref(defined);
	json_decref(launched);
	free(code);
	return rc;
}

/* The blocks' note: "the answer has 2 cuda blocks; the last was taken". */
static void
note_many(json_t *notes, int n, const char *what)
{
	if (n > 1)
		json_array_append_new(notes, json_sprintf("the answer has %d %s "
			"blocks; the last was taken", n, what));
}

json_t *
answer_candidate(const char *answer, const char *finish_reason,
	const json_t *task)
{
	struct block blocks[64];
	const struct block *code = NULL, *plan = NULL;
	const char *text = answer, *think;
	char reason[KGEN_REASON_MAX] = "", *source = NULL;
	const char *cut = finish_reason && strcmp(finish_reason, "length") == 0 ?
		" (the answer was cut off at --max-tokens)" : "";
	json_t *value = NULL, *defines = NULL, *launch = NULL, *notes, *c;
	json_error_t jerr;
	int n, i, ncode = 0, nplan = 0, unclosed = 0;

	while ((think = strstr(text, "</think>")) != NULL)
		text = think + strlen("</think>");
	while (isspace((unsigned char)*text))
		text++;
	if (*text == '\0')
		return gen_error("the answer is empty%s", cut);
	n = find_blocks(text, blocks, (int)LEN(blocks), &unclosed);
	for (i = 0; i < n; i++) {
		if (is_cuda(&blocks[i])) {
			code = &blocks[i];
			ncode++;
		} else if (is_json(&blocks[i])) {
			plan = &blocks[i];
			nplan++;
		}
	}
	if ((code == NULL || plan == NULL) && unclosed)
		return gen_error("a ``` block is not closed%s", cut);
	if (code == NULL)
		return gen_error("the answer has no ```cuda block%s", cut);
	if (plan == NULL)
		return gen_error("the answer has no ```json block with the "
			"launch plan%s", cut);
	if (code->len > SOURCE_MAX)
		return gen_error("the cuda block is %zu bytes, more than %d",
			code->len, SOURCE_MAX);

	value = json_loadb(plan->body, plan->len, JSON_REJECT_DUPLICATES, &jerr);
	if (value == NULL)
		return gen_error("the json block is not valid JSON: line %d, "
			"column %d: %s", jerr.line, jerr.column, jerr.text);
	source = xmalloc(code->len + 2);
	memcpy(source, code->body, code->len);
	source[code->len] = '\0';
	if (code->len > 0 && source[code->len - 1] != '\n')
		strcat(source, "\n");
	if (split_plan(value, &defines, &launch, reason, sizeof reason) == 0)
		check_kernel(source, defines, launch, task, reason, sizeof reason);
	json_decref(value);
	if (*reason) {
		c = gen_error("%s", reason);
	} else {
		c = json_pack("{s:s, s:O, s:O}", "source", source, "defines",
			defines, "launch", launch);
		if (c == NULL)
			c = gen_error("the cuda block is not valid UTF-8");
		notes = json_array();
		note_many(notes, ncode, "cuda");
		note_many(notes, nplan, "json");
		if (json_array_size(notes) > 0 && !json_object_get(c, "status"))
			json_object_set(c, "notes", notes);
		json_decref(notes);
	}
	json_decref(defines);
	json_decref(launch);
	free(source);
	return c;
}
