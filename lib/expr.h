/* expr.h: the size-expression language of tasks and launch plans.
 *
 *   expr := term (('+' | '-') term)*
 *   term := unary (('*' | '/' | '%') unary)*
 *   unary := '-' unary | '+' unary | atom
 *   atom := INTEGER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
 *
 * Functions: cdiv(a, b) (ceiling division), min(a, b, ...), max(a, b, ...).
 * Arithmetic is on signed 64-bit integers; / and % truncate toward zero
 * as in C. Overflow, division by zero, unknown names, wrong argument
 * counts and nesting deeper than EXPR_MAX_DEPTH are errors, reported with
 * the column (1-based) where they were found. */
#ifndef HTAM_EXPR_H
#define HTAM_EXPR_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_LEN 4096

/* Evaluates src with names looked up in vars (borrowed), a JSON object
 * whose members are integers, or strings holding integers (knob values).
 * Returns 0 with *out set, or -1 with err holding e.g.
 * "column 7: unknown name 'rowz'". */
int expr_eval(const char *src, const json_t *vars, int64_t *out, char *err,
	size_t errlen);

/* As expr_eval for a JSON value that is an integer or an expression
 * string; anything else is an error. */
int expr_eval_json(const json_t *v, const json_t *vars, int64_t *out,
	char *err, size_t errlen);

/* Checks an expression's syntax and that every name it uses is a member
 * of vars, without evaluating (values may be unknown). */
int expr_check(const char *src, const json_t *vars, char *err,
	size_t errlen);

#endif
