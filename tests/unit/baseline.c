/* Unit tests of kbench's speedups over PyTorch (tools/kbench/baseline.c):
 * vs_eager and vs_compile from a bench's median and the task's
 * baseline_us. The Makefile links it with kbench's baseline.o. */
#include <jansson.h>

#include "kbench.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* bench_vs_baselines on a bench and a task given as JSON text; returns the
 * bench (a new reference). */
static json_t *
vs(const char *bench_text, const char *task_text)
{
	json_error_t je;
	json_t *bench = json_loads(bench_text, 0, &je);
	json_t *task = json_loads(task_text, 0, &je);

	assert_non_null(bench);
	assert_non_null(task);
	bench_vs_baselines(bench, task);
	json_decref(task);
	return bench;
}

static double
num(const json_t *bench, const char *key)
{
	const json_t *v = json_object_get(bench, key);

	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void
both_baselines(void **state)
{
	json_t *b = vs("{\"status\": \"ok\", \"time_us\": {\"median\": 40}}",
		"{\"id\": \"t\", \"baseline_us\": {\"eager\": 100, \"compile\": 50}}");

	(void)state;
	assert_float_equal(num(b, "vs_eager"), 2.5, 1e-12);
	assert_float_equal(num(b, "vs_compile"), 1.25, 1e-12);
	json_decref(b);
}

static void
eager_only(void **state)
{
	/* swish-like: the pack has no compile time for the task yet. */
	json_t *b = vs("{\"status\": \"ok\", \"time_us\": {\"median\": 3172.3}}",
		"{\"id\": \"t\", \"baseline_us\": {\"eager\": 7498.7}}");

	(void)state;
	assert_float_equal(num(b, "vs_eager"), 7498.7 / 3172.3, 1e-12);
	assert_null(json_object_get(b, "vs_compile"));
	json_decref(b);
}

static void
nothing_without_a_time_or_a_baseline(void **state)
{
	json_t *b;

	(void)state;
	b = vs("{\"status\": \"compile_error\", \"reason\": \"x\"}",
		"{\"id\": \"t\", \"baseline_us\": {\"eager\": 100}}");
	assert_int_equal(json_object_size(b), 2);
	json_decref(b);
	b = vs("{\"status\": \"ok\", \"time_us\": {\"median\": 0}}",
		"{\"id\": \"t\", \"baseline_us\": {\"eager\": 100}}");
	assert_null(json_object_get(b, "vs_eager"));
	json_decref(b);
	b = vs("{\"status\": \"ok\", \"time_us\": {\"median\": 10}}", "{\"id\": \"t\"}");
	assert_null(json_object_get(b, "vs_eager"));
	assert_null(json_object_get(b, "vs_compile"));
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_baselines),
		cmocka_unit_test(eager_only),
		cmocka_unit_test(nothing_without_a_time_or_a_baseline),
	};
	return cmocka_run_group_tests_name("baseline", tests, NULL, NULL);
}
