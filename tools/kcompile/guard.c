/* guard.c: what kcompile checks before NVRTC sees a source that a model
 * wrote: only allow-listed CUDA headers are included (NVRTC would read any
 * file it can reach: "../../etc/passwd" ends up in the log), and defines
 * are plain names and values.
 *
 * The scanner follows the C++ preprocessor's first phases: lines joined at
 * backslash-newline, then comments, string, character and raw string
 * literals and pp-numbers (1'000) told apart, so that a directive is found
 * wherever the compiler finds one: "#  include", a comment between the
 * '#' and the name, "%:include", a name spread over continued lines. Where it could be out
 * of step with the compiler (inside a block comment or a raw string, which
 * span lines), a line that starts like an include is checked all the same:
 * a commented-out #include of another header is refused, never a hidden one
 * let through. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcompile.h"
#include "util.h"

const char *const guard_headers[] = {
	"cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "mma.h",
	"cooperative_groups.h", "cooperative_groups/reduce.h",
	"cooperative_groups/memcpy_async.h", "cooperative_groups/scan.h",
	"cuda_pipeline.h", "cuda_awbarrier.h", "math_constants.h",
	"cuda/pipeline", "cuda/barrier", "cuda/atomic",
	"cuda/std/cstdint", "cuda/std/cstddef", "cuda/std/climits",
	"cuda/std/limits", "cuda/std/type_traits", "cuda/std/utility",
	"cuda/std/cmath", "cuda/std/array",
	NULL
};

/* The source after line splicing, with each byte's line in the original
 * and, for each byte, where the next comment closer after it starts (n if
 * none), so that every lookup of a closer is one step and the scan stays
 * linear in the source, whatever it holds. */
struct text {
	char *s;
	int *line;
	size_t *close;
	size_t n;
};

struct scan {
	struct text t;
	char *why;
	size_t whylen;
	int refused;
};

/* Joins lines ending in a backslash (translation phase 2), as NVRTC does:
 * only a backslash right before the newline (or CR LF) counts. */
static void
splice(const char *src, struct text *t)
{
	size_t len = strlen(src), i;
	int line = 1;

	t->s = xmalloc(len + 1);
	t->line = xmalloc((len + 1) * sizeof(*t->line));
	t->n = 0;
	for (i = 0; i < len; i++) {
		if (src[i] == '\\' && src[i + 1] == '\n') {
			i++;
			line++;
			continue;
		}
		if (src[i] == '\\' && src[i + 1] == '\r' && src[i + 2] == '\n') {
			i += 2;
			line++;
			continue;
		}
		t->s[t->n] = src[i];
		t->line[t->n++] = line;
		if (src[i] == '\n')
			line++;
	}
	t->s[t->n] = '\0';
	t->line[t->n] = line;
	t->close = xmalloc((t->n + 2) * sizeof(*t->close));
	t->close[t->n + 1] = t->close[t->n] = t->n;
	for (i = t->n; i-- > 0;)
		t->close[i] = t->s[i] == '*' && t->s[i + 1] == '/' ? i : t->close[i + 1];
}

static int
is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int
is_ident_char(int c)
{
	return isalnum(c) || c == '_';
}

static int
is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* Records the first refusal, at the line of byte at; later ones are
 * dropped. */
static void __attribute__((format(printf, 3, 4)))
refuse(struct scan *sc, size_t at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (sc->refused++)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(sc->why, sc->whylen, "line %d: %s", sc->t.line[at], msg);
}

/* Skips blanks and block comments inside a directive; a comment is one
 * space to the preprocessor, even one that spans lines. */
static size_t
skip_blanks(const struct text *t, size_t i)
{
	for (;;) {
		while (i < t->n && is_blank(t->s[i]))
			i++;
		if (t->s[i] == '/' && t->s[i + 1] == '*') {
			size_t end = t->close[i + 2];
			i = end < t->n ? end + 2 : t->n;
			continue;
		}
		return i;
	}
}

static int
is_allowed(const char *name)
{
	size_t i;

	for (i = 0; guard_headers[i]; i++)
		if (strcmp(name, guard_headers[i]) == 0)
			return 1;
	return 0;
}

/* Checks the header name of an #include whose name starts at i (at '<' or
 * '"'); at is where the directive starts. Returns where scanning goes on. */
static size_t
check_header(struct scan *sc, size_t at, size_t i)
{
	const struct text *t = &sc->t;
	char close = t->s[i] == '<' ? '>' : '"', shown[160], *name;
	size_t start = i + 1, end = start;

	while (end < t->n && t->s[end] != close && t->s[end] != '\n')
		end++;
	if (end >= t->n || t->s[end] != close) {
		refuse(sc, at, "#include %s: the header name is not closed",
			close == '>' ? "<..." : "\"...");
		return end;
	}
	name = xmalloc(end - start + 1);
	memcpy(name, t->s + start, end - start);
	name[end - start] = '\0';
	snprintf(shown, sizeof(shown), "%c%.120s%s%c", t->s[i], name,
		strlen(name) > 120 ? "..." : "", close);
	if (is_allowed(name))
		;
	else if (name[0] == '/' || strstr(name, "..") || strchr(name, '\\'))
		refuse(sc, at, "#include %s: a path is not allowed, only the "
			"CUDA headers of the allow-list (see kcompile(1))", shown);
	else
		refuse(sc, at, "#include %s: %s is not an allowed header (allowed: "
			"cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, mma.h, cooperative_groups, "
			"cuda/pipeline, cuda/barrier, cuda/std/... ; see kcompile(1))",
			shown, name);
	free(name);
	return end + 1;
}

/* Reads the directive whose '#' (or "%:") is at i, after which the name
 * starts at j. Returns where scanning goes on: right after the directive's
 * name, or its header, so that comments and literals after it are lexed. */
static size_t
directive(struct scan *sc, size_t i, size_t j, const char *where)
{
	const struct text *t = &sc->t;
	char name[32];
	size_t k, n = 0;

	j = skip_blanks(t, j);
	for (k = j; k < t->n && is_ident_char(t->s[k]); k++)
		if (n < sizeof(name) - 1)
			name[n++] = t->s[k];
	name[n] = '\0';
	if (strcmp(name, "include_next") == 0 || strcmp(name, "import") == 0 ||
	    strcmp(name, "embed") == 0) {
		refuse(sc, i, "#%s is not allowed%s", name, where);
		return k;
	}
	if (strcmp(name, "include") != 0)
		return k;
	k = skip_blanks(t, k);
	if (t->s[k] == '<' || t->s[k] == '"')
		return check_header(sc, i, k);
	refuse(sc, i, "#include must name a header in <> or \"\", not a macro "
		"or anything else%s", where);
	return k;
}

/* A line inside a block comment or raw string, starting at i: checked as
 * if it were code when it starts like a directive. */
static void
check_inner_line(struct scan *sc, size_t i)
{
	const struct text *t = &sc->t;

	while (i < t->n && is_blank(t->s[i]))
		i++;
	if (t->s[i] == '#')
		directive(sc, i, i + 1, " (even inside a comment or string)");
	else if (t->s[i] == '%' && t->s[i + 1] == ':')
		directive(sc, i, i + 2, " (even inside a comment or string)");
}

/* Skips a block comment whose "/" is at i; returns the index after it. */
static size_t
block_comment(struct scan *sc, size_t i)
{
	const struct text *t = &sc->t;

	for (i += 2; i < t->n; i++) {
		if (t->s[i] == '*' && t->s[i + 1] == '/')
			return i + 2;
		if (t->s[i] == '\n')
			check_inner_line(sc, i + 1);
	}
	return t->n;
}

/* Skips a string or character literal whose quote is at i; an unclosed
 * one ends at the end of its line, as the compiler's does. */
static size_t
quoted(const struct text *t, size_t i)
{
	char q = t->s[i];

	for (i++; i < t->n && t->s[i] != '\n'; i++) {
		if (t->s[i] == '\\' && i + 1 < t->n && t->s[i + 1] != '\n')
			i++;
		else if (t->s[i] == q)
			return i + 1;
	}
	return i;
}

/* Skips a raw string literal R"d(...)d" whose quote is at i. Returns 0 if
 * what follows is not a raw string's opening (then it is an ordinary one). */
static size_t
raw_string(struct scan *sc, size_t i)
{
	const struct text *t = &sc->t;
	char end[20];
	size_t d = i + 1, n = 0, k;

	while (d < t->n && n < 16 && t->s[d] != '(' && !isspace((unsigned char)t->s[d]) &&
	    t->s[d] != ')' && t->s[d] != '\\' && t->s[d] != '"')
		d++, n++;
	if (t->s[d] != '(')
		return 0;
	end[0] = ')';
	memcpy(end + 1, t->s + i + 1, n);
	end[n + 1] = '"';
	end[n + 2] = '\0';
	for (k = d + 1; k < t->n; k++) {
		if (strncmp(t->s + k, end, n + 2) == 0)
			return k + n + 2;
		if (t->s[k] == '\n')
			check_inner_line(sc, k + 1);
	}
	return t->n;
}

/* Skips a pp-number at i: digits, letters, '.', digit separators (1'000)
 * and signed exponents (1e+5), so that a separator never opens a literal. */
static size_t
pp_number(const struct text *t, size_t i)
{
	for (i++; i < t->n; i++) {
		char c = t->s[i];
		if ((c == '+' || c == '-') && strchr("eEpP", t->s[i - 1]))
			continue;
		if (c == '\'' && is_ident_char(t->s[i + 1]))
			continue;
		if (!is_ident_char(c) && c != '.')
			break;
	}
	return i;
}

/* An identifier at i, with what it may prefix: a raw string (R"(...)"),
 * a string or character literal with an encoding prefix (u8"", L''). */
static size_t
identifier(struct scan *sc, size_t i)
{
	static const char *const raw[] = { "R", "u8R", "uR", "UR", "LR", NULL };
	static const char *const enc[] = { "u8", "u", "U", "L", NULL };
	const struct text *t = &sc->t;
	size_t start = i, n, k, r;

	while (i < t->n && is_ident_char(t->s[i]))
		i++;
	n = i - start;
	if ((n == 13 || n == 18) && strncmp(t->s + start, "__has_include", 13) == 0 &&
	    (n == 13 || strncmp(t->s + start + 13, "_next", 5) == 0)) {
		refuse(sc, start, "%.*s is not allowed: it probes for files",
			(int)n, t->s + start);
		return i;
	}
	for (k = 0; t->s[i] == '"' && raw[k]; k++)
		if (strlen(raw[k]) == n && strncmp(t->s + start, raw[k], n) == 0 &&
		    (r = raw_string(sc, i)))
			return r;
	for (k = 0; (t->s[i] == '"' || t->s[i] == '\'') && enc[k]; k++)
		if (strlen(enc[k]) == n && strncmp(t->s + start, enc[k], n) == 0)
			return quoted(t, i);
	return i;
}

int
guard_source(const char *src, char *why, size_t whylen)
{
	struct scan sc = { .why = why, .whylen = whylen };
	const struct text *t = &sc.t;
	size_t i = 0;
	int bol = 1;    /* only blanks and comments since the line began */

	if (strlen(src) > SOURCE_MAX) {
		snprintf(why, whylen, "the source is %zu bytes, more than %d",
			strlen(src), SOURCE_MAX);
		return -1;
	}
	splice(src, &sc.t);
	while (i < t->n && !sc.refused) {
		char c = t->s[i];
		if (c == '\n') {
			bol = 1;
			i++;
		} else if (is_blank(c)) {
			i++;
		} else if (c == '/' && t->s[i + 1] == '/') {
			while (i < t->n && t->s[i] != '\n')
				i++;
		} else if (c == '/' && t->s[i + 1] == '*') {
			size_t end = block_comment(&sc, i);
			if (memchr(t->s + i, '\n', end - i))
				bol = 1;    /* where the compiler would not: safer */
			i = end;
		} else if (bol && c == '#') {
			i = directive(&sc, i, i + 1, "");
			bol = 0;
		} else if (bol && c == '%' && t->s[i + 1] == ':') {
			i = directive(&sc, i, i + 2, "");
			bol = 0;
		} else if (is_ident_start(c)) {
			i = identifier(&sc, i);
			bol = 0;
		} else if (isdigit((unsigned char)c) ||
		    (c == '.' && isdigit((unsigned char)t->s[i + 1]))) {
			i = pp_number(t, i);
			bol = 0;
		} else if (c == '"' || c == '\'') {
			i = quoted(t, i);
			bol = 0;
		} else if ((c == '#' && t->s[i + 1] == '#') ||
		    (c == '%' && t->s[i + 1] == ':' && t->s[i + 2] == '%' && t->s[i + 3] == ':')) {
			/* Pasting can spell __has_include where no scanner sees it. */
			refuse(&sc, i, "token pasting (##) is not allowed: it can build "
				"__has_include, which probes for files");
		} else {
			i++;
			bol = 0;
		}
	}
	free(sc.t.s);
	free(sc.t.line);
	free(sc.t.close);
	return sc.refused ? -1 : 0;
}

/* A define's value: an integer, or a short string of [A-Za-z0-9_.+-]. */
static int
define_value_ok(const json_t *v)
{
	const char *s;

	if (json_is_integer(v))
		return 1;
	if (!json_is_string(v))
		return 0;
	s = json_string_value(v);
	return strlen(s) <= 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"abcdefghijklmnopqrstuvwxyz0123456789_.+-") == strlen(s);
}

int
guard_defines(const json_t *defines, char *why, size_t whylen)
{
	const char *k;
	json_t *v;

	if (!defines || json_is_null(defines))
		return 0;
	json_object_foreach((json_t *)defines, k, v) {
		size_t n = strlen(k), i;
		int ok = n > 0 && n <= 64 && is_ident_start(k[0]);
		for (i = 1; ok && i < n; i++)
			ok = is_ident_char(k[i]);
		if (!ok) {
			snprintf(why, whylen, "define '%.64s': the name must be a C "
				"identifier", k);
			return -1;
		}
		/* Names that begin with _ and a capital or a second _ belong to
		 * the implementation (__CUDACC_RTC__, __CUDA_ARCH__, _GLIBCXX_...):
		 * redefining one changes what the headers compile to. */
		if (k[0] == '_' && (k[1] == '_' || isupper((unsigned char)k[1]))) {
			snprintf(why, whylen, "define %s: a reserved name (it begins with "
				"_ and a capital letter or another _)", k);
			return -1;
		}
		if (!define_value_ok(v)) {
			snprintf(why, whylen, "define %s: the value must be an integer "
				"or a string of letters, digits and _ . + - (at most 64)",
				k);
			return -1;
		}
	}
	return 0;
}
