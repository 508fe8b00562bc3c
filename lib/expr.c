/* expr.c: the size-expression language (expr.h), a recursive-descent
 * evaluator over 64-bit integers that reports every error with its column. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "util.h"

struct parser {
	const char *src;
	const char *p;
	const json_t *vars;
	int depth;
	int checking;	/* names must exist; values and arithmetic don't matter */
	int failed;
	char *err;
	size_t errlen;
};

static int64_t parse_sum(struct parser *ps);

/* Records the first error, at the column of at. */
static void
fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->failed)
		return;
	ps->failed = 1;
	n = snprintf(ps->err, ps->errlen, "column %d: ", (int)(at - ps->src) + 1);
	if (n < 0 || (size_t)n >= ps->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Arithmetic errors are not errors while only checking names. */
static void
fail_arith(struct parser *ps, const char *at, const char *what)
{
	if (!ps->checking)
		fail(ps, at, "%s", what);
}

static void
skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static int64_t
arith(struct parser *ps, const char *at, char op, int64_t a, int64_t b)
{
	int64_t r = 0;

	switch (op) {
	case '+':
		if (__builtin_add_overflow(a, b, &r))
			fail_arith(ps, at, "overflow in '+'");
		return r;
	case '-':
		if (__builtin_sub_overflow(a, b, &r))
			fail_arith(ps, at, "overflow in '-'");
		return r;
	case '*':
		if (__builtin_mul_overflow(a, b, &r))
			fail_arith(ps, at, "overflow in '*'");
		return r;
	case '/':
	case '%':
		if (b == 0) {
			fail_arith(ps, at, "division by zero");
			return 0;
		}
		if (a == INT64_MIN && b == -1) {
			if (op == '/')
				fail_arith(ps, at, "overflow in '/'");
			return 0;
		}
		return op == '/' ? a / b : a % b;
	}
	return 0;
}

/* Ceiling division, exact for every sign, without overflow in between. */
static int64_t
cdiv(struct parser *ps, const char *at, int64_t a, int64_t b)
{
	int64_t q, r;

	if (b == 0) {
		fail_arith(ps, at, "division by zero in cdiv");
		return 0;
	}
	if (a == INT64_MIN && b == -1) {
		fail_arith(ps, at, "overflow in cdiv");
		return 0;
	}
	q = a / b;
	r = a % b;
	if (r != 0 && ((r > 0) == (b > 0)))
		q++;
	return q;
}

/* Looks a name up in vars: an integer, or a string holding one. */
static int64_t
lookup(struct parser *ps, const char *at, const char *name, size_t len)
{
	char key[128];
	const json_t *v;
	const char *errstr;
	int64_t x;

	if (len >= sizeof(key)) {
		fail(ps, at, "name too long");
		return 0;
	}
	memcpy(key, name, len);
	key[len] = '\0';
	v = ps->vars ? json_object_get(ps->vars, key) : NULL;
	if (!v) {
		fail(ps, at, "unknown name '%s'", key);
		return 0;
	}
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_string(v) &&
	    parse_i64(json_string_value(v), INT64_MIN, INT64_MAX, &x, &errstr) == 0)
		return x;
	fail(ps, at, "'%s' is not an integer", key);
	return 0;
}

/* name '(' expr (',' expr)* ')': cdiv, min and max. */
static int64_t
parse_call(struct parser *ps, const char *at, const char *name, size_t len)
{
	int64_t args[64], r;
	int n = 0;
	const char *argat = ps->p;

	ps->p++;	/* '(' */
	for (;;) {
		skip_space(ps);
		argat = ps->p;
		r = parse_sum(ps);
		if (ps->failed)
			return 0;
		if (n == (int)LEN(args)) {
			fail(ps, argat, "too many arguments");
			return 0;
		}
		args[n++] = r;
		skip_space(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == ')') {
			ps->p++;
			break;
		}
		fail(ps, ps->p, "expected ',' or ')' in call of '%.*s'", (int)len, name);
		return 0;
	}
	if (len == 4 && memcmp(name, "cdiv", 4) == 0) {
		if (n != 2) {
			fail(ps, at, "cdiv takes 2 arguments, not %d", n);
			return 0;
		}
		return cdiv(ps, at, args[0], args[1]);
	}
	if (len == 3 && (memcmp(name, "min", 3) == 0 || memcmp(name, "max", 3) == 0)) {
		int ismin = name[1] == 'i';
		if (n < 2) {
			fail(ps, at, "%s takes 2 or more arguments, not %d",
				ismin ? "min" : "max", n);
			return 0;
		}
		r = args[0];
		for (int i = 1; i < n; i++)
			if (ismin ? args[i] < r : args[i] > r)
				r = args[i];
		return r;
	}
	fail(ps, at, "unknown function '%.*s' (cdiv, min, max)", (int)len, name);
	return 0;
}

static int64_t
parse_atom(struct parser *ps)
{
	const char *at;
	int64_t v = 0;

	skip_space(ps);
	at = ps->p;
	if (isdigit((unsigned char)*ps->p)) {
		while (isdigit((unsigned char)*ps->p)) {
			int d = *ps->p++ - '0';
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, d, &v)) {
				fail(ps, at, "integer too large");
				return 0;
			}
		}
		if (isalpha((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.') {
			fail(ps, ps->p, "unexpected '%c' after a number", *ps->p);
			return 0;
		}
		return v;
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
		const char *name = ps->p;
		size_t len;
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		len = (size_t)(ps->p - name);
		skip_space(ps);
		if (*ps->p == '(') {
			if (++ps->depth > EXPR_MAX_DEPTH) {
				fail(ps, ps->p, "nested deeper than %d", EXPR_MAX_DEPTH);
				return 0;
			}
			v = parse_call(ps, at, name, len);
			ps->depth--;
			return v;
		}
		return lookup(ps, at, name, len);
	}
	if (*ps->p == '(') {
		if (++ps->depth > EXPR_MAX_DEPTH) {
			fail(ps, ps->p, "nested deeper than %d", EXPR_MAX_DEPTH);
			return 0;
		}
		ps->p++;
		v = parse_sum(ps);
		if (ps->failed)
			return 0;
		skip_space(ps);
		if (*ps->p != ')') {
			fail(ps, ps->p, "expected ')'");
			return 0;
		}
		ps->p++;
		ps->depth--;
		return v;
	}
	if (*ps->p == '\0')
		fail(ps, at, "unexpected end of expression");
	else
		fail(ps, at, "unexpected '%c'", *ps->p);
	return 0;
}

static int64_t
parse_unary(struct parser *ps)
{
	const char *at;
	int64_t v;

	skip_space(ps);
	at = ps->p;
	if (*ps->p == '-' || *ps->p == '+') {
		char op = *ps->p++;
		if (++ps->depth > EXPR_MAX_DEPTH) {
			fail(ps, at, "nested deeper than %d", EXPR_MAX_DEPTH);
			return 0;
		}
		v = parse_unary(ps);
		ps->depth--;
		if (ps->failed || op == '+')
			return v;
		return arith(ps, at, '-', 0, v);
	}
	return parse_atom(ps);
}

static int64_t
parse_product(struct parser *ps)
{
	int64_t v = parse_unary(ps);

	while (!ps->failed) {
		skip_space(ps);
		const char *at = ps->p;
		char op = *ps->p;
		if (op != '*' && op != '/' && op != '%')
			break;
		ps->p++;
		int64_t r = parse_unary(ps);
		if (ps->failed)
			break;
		v = arith(ps, at, op, v, r);
	}
	return v;
}

static int64_t
parse_sum(struct parser *ps)
{
	int64_t v = parse_product(ps);

	while (!ps->failed) {
		skip_space(ps);
		const char *at = ps->p;
		char op = *ps->p;
		if (op != '+' && op != '-')
			break;
		ps->p++;
		int64_t r = parse_product(ps);
		if (ps->failed)
			break;
		v = arith(ps, at, op, v, r);
	}
	return v;
}

static int
run(const char *src, const json_t *vars, int checking, int64_t *out,
	char *err, size_t errlen)
{
	struct parser ps = { src, src, vars, 0, checking, 0, err, errlen };
	int64_t v;

	if (strlen(src) > EXPR_MAX_LEN) {
		snprintf(err, errlen, "expression longer than %d characters",
			EXPR_MAX_LEN);
		return -1;
	}
	v = parse_sum(&ps);
	if (!ps.failed) {
		skip_space(&ps);
		if (*ps.p != '\0')
			fail(&ps, ps.p, "unexpected '%c'", *ps.p);
	}
	if (ps.failed)
		return -1;
	if (out)
		*out = v;
	return 0;
}

int
expr_eval(const char *src, const json_t *vars, int64_t *out, char *err,
	size_t errlen)
{
	return run(src, vars, 0, out, err, errlen);
}

int
expr_check(const char *src, const json_t *vars, char *err, size_t errlen)
{
	return run(src, vars, 1, NULL, err, errlen);
}

int
expr_eval_json(const json_t *v, const json_t *vars, int64_t *out, char *err,
	size_t errlen)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v))
		return expr_eval(json_string_value(v), vars, out, err, errlen);
	snprintf(err, errlen, "expected an integer or a size expression");
	return -1;
}
