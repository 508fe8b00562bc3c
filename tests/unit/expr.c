/* Unit tests of the size-expression language (lib/expr.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "expr.h"

static json_t *vars;

/* src evaluates to want. */
static void
assert_value(const char *src, int64_t want)
{
	char err[256] = "";
	int64_t got = -12345;

	if (expr_eval(src, vars, &got, err, sizeof(err)) != 0)
		fail_msg("%s: unexpected error: %s", src, err);
	if (got != want)
		fail_msg("%s: got %lld, want %lld", src, (long long)got, (long long)want);
}

/* src fails with an error containing want. */
static void
assert_error(const char *src, const char *want)
{
	char err[256] = "";
	int64_t got;

	if (expr_eval(src, vars, &got, err, sizeof(err)) == 0)
		fail_msg("%s: evaluated to %lld, want error \"%s\"", src, (long long)got, want);
	if (!strstr(err, want))
		fail_msg("%s: error \"%s\" does not contain \"%s\"", src, err, want);
}

static int
setup(void **state)
{
	(void)state;
	vars = json_pack("{s:i, s:i, s:s, s:s, s:I}", "rows", 4096, "cols", 393216,
		"BLOCK", "256", "NAME", "abc", "big", (json_int_t)INT64_MAX);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	json_decref(vars);
	return 0;
}

static void
precedence(void **state)
{
	(void)state;
	assert_value("1 + 2 * 3", 7);
	assert_value("(1 + 2) * 3", 9);
	assert_value("10 - 4 - 3", 3);
	assert_value("100 / 10 / 5", 2);
	assert_value("7 % 4 * 2", 6);
	assert_value("-3 * -2", 6);
	assert_value("- -5", 5);
	assert_value("+5", 5);
	assert_value("2*rows*cols*4", 2LL * 4096 * 393216 * 4);
}

static void
division_truncates_like_c(void **state)
{
	(void)state;
	assert_value("-7 / 2", -3);
	assert_value("-7 % 2", -1);
	assert_value("7 / -2", -3);
}

static void
functions(void **state)
{
	(void)state;
	assert_value("cdiv(rows, BLOCK)", 16);
	assert_value("cdiv(4097, 256)", 17);
	assert_value("cdiv(0, 256)", 0);
	assert_value("cdiv(-7, 2)", -3);
	assert_value("cdiv(7, -2)", -3);
	assert_value("min(3, 1, 2)", 1);
	assert_value("max(3, 1, 2)", 3);
	assert_value("min(cols, max(1, rows / 2))", 2048);
	assert_value(" cdiv ( rows , 3 ) ", 1366);
}

static void
knob_strings_are_integers(void **state)
{
	(void)state;
	assert_value("BLOCK * 2", 512);
	assert_error("NAME + 1", "'NAME' is not an integer");
}

static void
errors_name_the_column(void **state)
{
	(void)state;
	assert_error("rows + rowz", "column 8: unknown name 'rowz'");
	assert_error("1 +", "column 4: unexpected end of expression");
	assert_error("(1 + 2", "column 7: expected ')'");
	assert_error("1 + 2)", "column 6: unexpected ')'");
	assert_error("", "unexpected end of expression");
	assert_error("3 $ 4", "column 3: unexpected '$'");
	assert_error("2.5 * rows", "column 2: unexpected '.' after a number");
	assert_error("foo(1, 2)", "unknown function 'foo'");
	assert_error("cdiv(1)", "cdiv takes 2 arguments, not 1");
	assert_error("min(1)", "min takes 2 or more arguments");
	assert_error("min(1 2)", "expected ',' or ')'");
}

static void
overflow_and_division_by_zero(void **state)
{
	(void)state;
	assert_error("9223372036854775807*2", "overflow in '*'");
	assert_error("9223372036854775807 + 1", "overflow in '+'");
	assert_error("-9223372036854775807 - 2", "overflow in '-'");
	assert_error("big * big", "overflow in '*'");
	assert_error("99999999999999999999", "integer too large");
	assert_error("rows / 0", "division by zero");
	assert_error("rows % (cols - cols)", "division by zero");
	assert_error("cdiv(rows, 0)", "division by zero in cdiv");
	assert_error("(-9223372036854775807 - 1) / -1", "overflow in '/'");
	assert_value("(-9223372036854775807 - 1) % -1", 0);
}

static void
hostile_nesting_is_bounded(void **state)
{
	size_t n = 10000;
	char *s = malloc(2 * n + 2);

	(void)state;
	memset(s, '(', n);
	s[n] = '1';
	memset(s + n + 1, ')', n);
	s[2 * n + 1] = '\0';
	assert_error(s, "expression longer than");
	/* Deep but short enough to parse: the depth bound must stop it. */
	memset(s, '(', 1000);
	s[1000] = '1';
	memset(s + 1001, ')', 1000);
	s[2001] = '\0';
	assert_error(s, "nested deeper than 64");
	memset(s, '-', 1000);
	s[1000] = '1';
	s[1001] = '\0';
	assert_error(s, "nested deeper than 64");
	memset(s, 0, 2001);
	for (int i = 0; i < 300; i++)
		strcat(s, "min(1,");
	assert_error(s, "nested deeper than 64");
	free(s);
	assert_value("((((((((((1))))))))))", 1);
}

static void
check_only_needs_names(void **state)
{
	char err[256];

	(void)state;
	/* Values are unknown while checking: no division-by-zero report. */
	assert_int_equal(expr_check("rows / (cols - cols)", vars, err, sizeof(err)), 0);
	assert_int_equal(expr_check("rows / colz", vars, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown name 'colz'"));
}

static void
json_values(void **state)
{
	char err[256];
	int64_t v;
	json_t *n = json_integer(42), *s = json_string("cdiv(rows, 1024)"), *r = json_real(1.5);

	(void)state;
	assert_int_equal(expr_eval_json(n, vars, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 42);
	assert_int_equal(expr_eval_json(s, vars, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 4);
	assert_int_equal(expr_eval_json(r, vars, &v, err, sizeof(err)), -1);
	json_decref(n);
	json_decref(s);
	json_decref(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(precedence),
		cmocka_unit_test(division_truncates_like_c),
		cmocka_unit_test(functions),
		cmocka_unit_test(knob_strings_are_integers),
		cmocka_unit_test(errors_name_the_column),
		cmocka_unit_test(overflow_and_division_by_zero),
		cmocka_unit_test(hostile_nesting_is_bounded),
		cmocka_unit_test(check_only_needs_names),
		cmocka_unit_test(json_values),
	};
	return cmocka_run_group_tests_name("expr", tests, setup, teardown);
}
