/* Unit tests of launch plans (lib/plan.c): evaluation for one set of sizes
 * and every check the harness relies on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plan.h"
#include "task.h"

static json_t *task, *vars;
static struct plan plan;

/* Evaluates the plan written in JSON; returns 0 or -1 with err. */
static int
eval(const char *text, char *err, size_t errlen)
{
	json_error_t je;
	json_t *p = json_loads(text, 0, &je);
	int rc;

	if (!p)
		fail_msg("bad test JSON: %s", je.text);
	rc = plan_eval(p, task, vars, &plan, err, errlen);
	json_decref(p);
	return rc;
}

static void
assert_refused(const char *text, const char *want)
{
	char err[512] = "";

	if (eval(text, err, sizeof(err)) == 0)
		fail_msg("%s: accepted, want \"%s\"", text, want);
	if (!strstr(err, want))
		fail_msg("%s: error \"%s\" does not contain \"%s\"", text, err, want);
}

static int
setup(void **state)
{
	(void)state;
	task = json_pack("{s:[{s:s}], s:[{s:s}], s:{s:i}, s:[{s:i}, {s:i}]}",
		"inputs", "name", "x", "outputs", "name", "y",
		"params", "n", 1000, "check_params", "n", 1, "n", 7);
	vars = json_pack("{s:i, s:s}", "n", 1000, "BLOCK", "128");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	json_decref(task);
	json_decref(vars);
	return 0;
}

static void
evaluates_a_plan(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(eval("{\"launches\": [{\"kernel\": \"k\", \"grid\": \"cdiv(n, BLOCK)\","
		" \"block\": [\"BLOCK\", 2], \"smem\": \"BLOCK*8\","
		" \"args\": [\"x\", \"y\", \"i32:n\", \"i64:n*n\", \"f32:1e-5\", \"f64:-2.5\", \"tmp\"]}],"
		" \"workspace\": [{\"name\": \"tmp\", \"dtype\": \"f64\", \"count\": \"n\"}]}",
		err, sizeof(err)), 0);
	assert_int_equal(plan.nlaunch, 1);
	assert_int_equal(plan.launch[0].grid[0], 8);
	assert_int_equal(plan.launch[0].grid[1], 1);
	assert_int_equal(plan.launch[0].block[1], 2);
	assert_int_equal(plan.launch[0].smem, 1024);
	assert_int_equal(plan.launch[0].nargs, 7);
	assert_int_equal(plan.launch[0].args[0].kind, ARG_BUFFER);
	assert_string_equal(plan.launch[0].args[1].buffer, "y");
	assert_int_equal(plan.launch[0].args[2].kind, ARG_I32);
	assert_int_equal(plan.launch[0].args[3].i, 1000000);
	assert_int_equal(plan.launch[0].args[4].kind, ARG_F32);
	assert_true(plan.launch[0].args[5].f == -2.5);
	assert_int_equal(plan.nworkspace, 1);
	assert_int_equal(plan.workspace[0].dtype, DT_F64);
	assert_int_equal(plan.workspace[0].count, 1000);
}

static void
refuses_what_cannot_launch(void **state)
{
	(void)state;
	assert_refused("{}", "launches: expected a non-empty array");
	assert_refused("{\"launches\": [], \"x\": 1}", "launches: expected a non-empty array");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": []}], \"extra\": 1}",
		"unknown member 'extra'");
	assert_refused("{\"launches\": [{\"kernel\": \"k k\", \"grid\": 1, \"block\": 1, \"args\": []}]}",
		"launches[0].kernel: expected a C identifier");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"block\": 1, \"args\": []}]}",
		"grid and block are required");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": \"n - 1000\", \"block\": 1, \"args\": []}]}",
		"launches[0].grid: x = 0 is outside 1..2147483647");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": [1, 70000], \"block\": 1, \"args\": []}]}",
		"grid: y = 70000 is outside 1..65535");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": [64, 32], \"args\": []}]}",
		"2048 threads is more than 1024");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 6, \"block\": 1, \"cluster\": 4, \"args\": []}]}",
		"grid x = 6 is not a multiple of the cluster's 4");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"smem\": -4, \"args\": []}]}",
		"smem: -4 bytes is out of range");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": [1, 1, 1, 1], \"block\": 1, \"args\": []}]}",
		"expected one to three dimensions");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": [\"w\"]}]}",
		"args[0]: 'w' is neither a buffer");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": [\"i32:n*n*n*n\"]}]}",
		"does not fit i32");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": [\"f32:1e39\"]}]}",
		"does not fit f32");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": [\"f32:nan\"]}]}",
		"is not a finite number");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": [3]}]}",
		"args[0]: expected a string");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": \"cdiv(n, WARPS)\", \"block\": 1, \"args\": []}]}",
		"launches[0].grid: column 9: unknown name 'WARPS'");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": []}],"
		" \"workspace\": [{\"name\": \"x\", \"dtype\": \"f32\", \"count\": 1}]}",
		"workspace[0].name: 'x' is already a buffer");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": []}],"
		" \"workspace\": [{\"name\": \"t\", \"dtype\": \"f8\", \"count\": 1}]}",
		"workspace[0].dtype");
	assert_refused("{\"launches\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 1, \"args\": []}],"
		" \"workspace\": [{\"name\": \"t\", \"dtype\": \"f32\", \"count\": \"0\"}]}",
		"workspace[0].count: 0 elements is out of range");
}

static void
checks_every_size_and_knob_clashes(void **state)
{
	char err[512];
	json_t *p = json_loads("{\"launches\": [{\"kernel\": \"k\", \"grid\": \"n / 4\","
		" \"block\": 1, \"args\": []}]}", 0, NULL);
	json_t *knobs = json_pack("{s:i}", "n", 3);

	(void)state;
	/* n / 4 is 0 at the check size n = 1. */
	assert_int_equal(task_plan_check(p, task, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at sizes {\"n\":1}: launches[0].grid: x = 0"));
	assert_int_equal(task_plan_check(p, task, knobs, err, sizeof(err)), -1);
	assert_string_equal(err, "knob 'n' has the name of a size");
	json_decref(p);
	json_decref(knobs);
}

static void
lists_kernels_once(void **state)
{
	json_t *p = json_loads("{\"launches\": [{\"kernel\": \"a\"}, {\"kernel\": \"b\"}, {\"kernel\": \"a\"}]}",
		0, NULL);
	json_t *names = plan_kernels(p);

	(void)state;
	assert_int_equal(json_array_size(names), 2);
	assert_string_equal(json_string_value(json_array_get(names, 1)), "b");
	json_decref(names);
	json_decref(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(evaluates_a_plan),
		cmocka_unit_test(refuses_what_cannot_launch),
		cmocka_unit_test(checks_every_size_and_knob_clashes),
		cmocka_unit_test(lists_kernels_once),
	};
	return cmocka_run_group_tests_name("plan", tests, setup, teardown);
}
