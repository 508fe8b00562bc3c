/* Unit tests of kgen's rules backend (tools/kgen/rules.c): family files,
 * rendering, knob moves, repairs and refusals, seen ids, and the fill-up
 * order, on a toy family (tests/data/kgen-rules/templates) and on the real
 * ones (tools/kgen/templates) with the pack's tasks.
 *
 * Run with arguments it is also the bats tests' driver (kgen-rules.bats):
 *   rules --sweep TEMPLATES TASKDIR...     every sweep configuration of each
 *                                          task, rendered, as records
 *                                          {task, candidate} (refused ones
 *                                          on stderr, "refused: ...")
 *   rules --render TEMPLATES < configs     the same for configurations given
 *                                          one a line: {"task": TASKDIR,
 *                                          "variant": V, "knobs": {...}}
 *
 * The Makefile links it with the rules generator's objects (family.o,
 * render.o, chain.o, rules.o) and the library; it uses their interface,
 * rules.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "die.h"
#include "jsonl.h"
#include "task.h"
#include "util.h"
#include "rules.h"

#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#define TOY "tests/data/kgen-rules/templates"
#define BAD "tests/data/kgen-rules/bad"
#define REAL "tools/kgen/templates"

/* The toy task: a softmax over 64 rows of 4000, checked at odd sizes. */
static const char toy_task[] =
	"{\"id\": \"toy\", \"description\": \"a toy\", \"torch\": \"x\","
	" \"family\": \"row_norm\","
	" \"spec\": {\"op\": \"softmax\", \"rows\": \"r\", \"cols\": \"c\"},"
	" \"params\": {\"r\": 64, \"c\": 4000},"
	" \"check_params\": [{\"r\": 1, \"c\": 1}, {\"r\": 3, \"c\": 1001}],"
	" \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"r\", \"c\"]}],"
	" \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"r\", \"c\"]}]}";

static json_t *
parse(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	if (!v)
		fail_msg("bad test JSON: %s: %s", je.text, text);
	return v;
}

/* A state for the toy task (or task_text), with best (JSON or NULL) and
 * the strategies (a JSON array of strategy objects, or NULL). */
static json_t *
state_new(const char *task_text, const char *best, const char *strategies)
{
	json_t *s = json_pack("{s:o, s:s, s:i}", "task", parse(task_text ? task_text : toy_task),
		"run", "r1", "step", 1);

	json_object_set_new(s, "best", best ? parse(best) : json_null());
	if (strategies)
		json_object_set_new(s, "memory", json_pack("{s:o}", "strategies",
			parse(strategies)));
	return s;
}

/* rules_generate on the toy templates; fails the test on NULL. */
static json_t *
generate(const json_t *state, int k, const json_t *seen, json_t **notes)
{
	char err[RULES_ERR];
	json_t *c = rules_generate(state, k, seen, TOY, notes, err, sizeof(err));

	if (!c)
		fail_msg("rules_generate: %s", err);
	return c;
}

/* Candidate i's variant and defines, compact: "wide {...}". */
static char *
config_of(const json_t *cands, size_t i)
{
	const json_t *c = json_array_get(cands, i);
	char *d = json_dumps(json_object_get(c, "defines"), JSON_COMPACT), *s;

	s = xasprintf("%s %s", json_string_value(json_object_get(c, "variant")), d);
	free(d);
	return s;
}

/* v in compact JSON equals want. */
static void
assert_json(const json_t *v, const char *want)
{
	char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!got || strcmp(got, want) != 0)
		fail_msg("got %s, want %s", got ? got : "(null)", want);
	free(got);
}

static void
assert_config(const json_t *cands, size_t i, const char *want)
{
	char *got = config_of(cands, i);

	if (strcmp(got, want) != 0)
		fail_msg("candidate %zu: got %s, want %s", i, got, want);
	free(got);
}

/* Some note contains want. */
static void
assert_note(const json_t *notes, const char *want)
{
	const json_t *n;
	size_t i;

	json_array_foreach(notes, i, n)
		if (strstr(json_string_value(n), want))
			return;
	fail_msg("no note contains \"%s\" (%zu notes)", want, json_array_size(notes));
}

static void
test_family_errors(void **unused)
{
	char err[RULES_ERR];
	json_t *f;

	(void)unused;
	assert_null(rules_family_load(TOY, "gemv", err, sizeof(err)));
	assert_non_null(strstr(err, "unknown family 'gemv'"));
	assert_null(rules_family_load(TOY, "../x", err, sizeof(err)));
	assert_non_null(strstr(err, "not a family name"));
	assert_null(f = rules_family_load(BAD, "row_norm", err, sizeof(err)));
	assert_non_null(strstr(err, "variants.fast.knobs.BLOCK.default: not one of its values"));
	assert_null(rules_family_load(BAD, "layer_norm", err, sizeof(err)));
	assert_non_null(strstr(err, "default: expected the name of a variant"));
	assert_null(rules_family_load(BAD, "mid_reduce", err, sizeof(err)));
	assert_non_null(strstr(err, "variants.thread.source: cannot read"));
	assert_null(rules_family_load(BAD, "scan", err, sizeof(err)));
	assert_non_null(strstr(err, "variants.block.includes[0]: expected a file name beside the family file"));
	assert_null(rules_family_load(BAD, "pool", err, sizeof(err)));
	assert_non_null(strstr(err, "variants.direct: cannot read " BAD "/absent.cuh"));
	assert_null(rules_family_load(BAD, "gemv", err, sizeof(err)));
	assert_non_null(strstr(err, "gemv.json: starts[0].set.TILES: variant block has no such knob"));
	assert_null(rules_family_load(BAD, "global_reduce", err, sizeof(err)));
	assert_non_null(strstr(err, "global_reduce.json: starts[0].variant: expected the name of a variant"));
}

/* A variant's source is the storage type's prelude, the headers it
 * includes in their order, then its own file: gemm's wg (tiles.cuh,
 * gemm_spec.cuh, gemm.cuh, gemm_h3.cuh, wg.cuh). */
static void
test_includes(void **unused)
{
	char err[RULES_ERR];
	const char *src, *prelude, *tiles, *spec, *common, *h3, *wg, *own;
	json_t *f = rules_family_load(REAL, "gemm", err, sizeof(err));

	(void)unused;
	if (!f)
		fail_msg("%s", err);
	src = json_string_value(json_object_get(json_object_get(json_object_get(
		f, "variants"), "wg"), "source_text"));
	assert_non_null(src);
	prelude = strstr(src, "#define REAL_KIND {{real_kind}}");
	tiles = strstr(src, "tiles.cuh: what the kernels that tile a product share");
	spec = strstr(src, "gemm_spec.cuh: the gemm family's task spec as the macros");
	common = strstr(src, "gemm.cuh: what the gemm family's kernels share");
	h3 = strstr(src, "gemm_h3.cuh: 3xFP16 split precision");
	wg = strstr(src, "wg.cuh: 3xFP16 split precision on warpgroup MMA");
	own = strstr(src, "gemm_wg.cu: the gemm family's warpgroup kernels");
	assert_non_null(prelude);
	assert_true(prelude < tiles && tiles && tiles < spec && spec && spec < common &&
		common && common < h3 && h3 &&
		h3 < wg && wg && wg < own && own);
	/* tiled includes the tile order and the common header alone */
	src = json_string_value(json_object_get(json_object_get(json_object_get(
		f, "variants"), "tiled"), "source_text"));
	assert_non_null(strstr(src, "gemm.cuh: what the gemm family's kernels share"));
	assert_null(strstr(src, "gemm_h3.cuh: 3xFP16 split precision"));
	json_decref(f);
}

/* Placeholders: dimensions parenthesised in plans, tensor names, the
 * variant, braces that are no placeholder left alone, spec numbers in
 * their shortest form, all inputs for {{inputs}}. */
static void
test_render(void **unused)
{
	json_t *task = parse(toy_task), *fam, *c, *knobs = json_pack("{s:i}", "CLUSTER", 8);
	char err[RULES_ERR];
	const char *src;
	char *launch;

	(void)unused;
	assert_non_null(fam = rules_family_load(TOY, "row_norm", err, sizeof(err)));
	c = rules_render(fam, task, "cluster", knobs, err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	src = json_string_value(json_object_get(c, "source"));
	assert_non_null(strstr(src, "#define VARIANT_cluster 1\n#define OP_softmax 1\n"));
	assert_non_null(strstr(src, "void toy_cluster(const float *x"));
	assert_non_null(strstr(src, "{{1, 2}, {3, 4}}"));
	launch = json_dumps(json_object_get(c, "launch"), JSON_COMPACT);
	assert_string_equal(launch, "{\"launches\":[{\"kernel\":\"toy_cluster\","
		"\"grid\":[\"(r) * CLUSTER\"],\"block\":[\"BLOCK\"],\"cluster\":"
		"[\"CLUSTER\",1,1],\"smem\":\"cdiv((c), CLUSTER) * 4\",\"args\":"
		"[\"x\",\"y\",\"i64:(r)\",\"i64:(c)\"]}]}");
	free(launch);
	assert_json(json_object_get(c, "defines"), "{\"CLUSTER\":8,\"BLOCK\":256}");
	assert_string_equal(json_string_value(json_object_get(c, "generator")), "rules");
	assert_int_equal(strlen(json_string_value(json_object_get(c, "id"))), 64);
	json_decref(c);

	/* a knob out of its domain, a broken constraint: refused with why */
	json_object_set_new(knobs, "CLUSTER", json_integer(3));
	assert_null(rules_render(fam, task, "cluster", knobs, err, sizeof(err)));
	assert_non_null(strstr(err, "CLUSTER = 3 is not in its domain [2,4,8]"));
	json_object_set_new(knobs, "CLUSTER", json_integer(2));
	assert_null(rules_render(fam, task, "cluster", knobs, err, sizeof(err)));
	assert_string_equal(err, "cdiv({{cols}}, CLUSTER) * 4 = 8000 is above 4096: "
		"a block's share of the row must fit its shared memory");
	json_decref(knobs);
	json_decref(fam);
	json_decref(task);
}

static void
test_render_inputs(void **unused)
{
	json_t *task = parse("{\"id\": \"axpy\", \"family\": \"elementwise\","
		" \"spec\": {\"expr\": \"2.0f * x + z\", \"numel\": \"n\"},"
		" \"params\": {\"n\": 1000}, \"check_params\": [{\"n\": 1}],"
		" \"inputs\": [{\"name\": \"x\"}, {\"name\": \"z\"}],"
		" \"outputs\": [{\"name\": \"y\"}]}");
	json_t *fam, *c;
	char err[RULES_ERR];
	const char *src;

	(void)unused;
	assert_non_null(fam = rules_family_load(TOY, "elementwise", err, sizeof(err)));
	assert_non_null(c = rules_render(fam, task, "plain", NULL, err, sizeof(err)));
	src = json_string_value(json_object_get(c, "source"));
	/* the float inputs are of the task's storage type (real.cuh: f32 here) */
	assert_non_null(strstr(src, "#define REAL_KIND 0\n"));
	assert_non_null(strstr(src, "ew(const real *__restrict__ in0, "
		"const real *__restrict__ in1, float *out"));
	assert_non_null(strstr(src, "in[2] = { in0, in1 }"));
	assert_non_null(strstr(src, "[[maybe_unused]] const float x = IN(0); "
		"[[maybe_unused]] const float z = IN(1);"));
	assert_non_null(strstr(src, "out[0] = (2.0f * x + z);"));
	assert_json(json_object_get(json_array_get(json_object_get(json_object_get(c,
		"launch"), "launches"), 0), "args"), "[\"x\",\"z\",\"y\",\"i64:(n)\"]");
	json_decref(c);
	/* bf16 tensors: REAL_KIND 2, two bytes */
	json_object_set_new(json_array_get(json_object_get(task, "inputs"), 0), "dtype",
		json_string("bf16"));
	json_object_set_new(json_array_get(json_object_get(task, "inputs"), 1), "dtype",
		json_string("bf16"));
	json_object_set_new(json_array_get(json_object_get(task, "outputs"), 0), "dtype",
		json_string("bf16"));
	assert_non_null(c = rules_render(fam, task, "plain", NULL, err, sizeof(err)));
	src = json_string_value(json_object_get(c, "source"));
	assert_non_null(strstr(src, "#define REAL_KIND 2\n#define REAL_BYTES 2\n"));
	json_decref(c);
	/* an integer input cannot be read as a float */
	json_object_set_new(json_array_get(json_object_get(task, "inputs"), 1), "dtype",
		json_string("i64"));
	assert_null(rules_render(fam, task, "plain", NULL, err, sizeof(err)));
	assert_string_equal(err, "{{in_params}}: input z is an integer; this template reads "
		"every input as a float");
	/* nor a bool one */
	json_object_set_new(json_array_get(json_object_get(task, "inputs"), 1), "dtype",
		json_string("bool"));
	assert_null(rules_render(fam, task, "plain", NULL, err, sizeof(err)));
	assert_string_equal(err, "{{in_params}}: input z is a bool; this template reads "
		"every input as a float");
	json_decref(fam);
	json_decref(task);
}

/* No best, no strategies: the default, then one-knob steps in the file's
 * order (up, then down), then the other variant; all distinct. */
static void
test_fill_order(void **unused)
{
	json_t *s = state_new(NULL, NULL, NULL), *notes, *c;
	const json_t *x;
	size_t i;

	(void)unused;
	c = generate(s, 8, NULL, &notes);
	assert_int_equal(json_array_size(c), 8);
	assert_config(c, 0, "wide {\"BLOCK\":128,\"VEC\":2,\"UNROLL\":2}");
	assert_config(c, 1, "wide {\"BLOCK\":256,\"VEC\":2,\"UNROLL\":2}");
	assert_config(c, 2, "wide {\"BLOCK\":64,\"VEC\":2,\"UNROLL\":2}");
	assert_config(c, 3, "wide {\"BLOCK\":128,\"VEC\":4,\"UNROLL\":2}");
	assert_config(c, 4, "wide {\"BLOCK\":128,\"VEC\":1,\"UNROLL\":2}");
	assert_config(c, 5, "wide {\"BLOCK\":128,\"VEC\":2,\"UNROLL\":4}");
	assert_config(c, 6, "wide {\"BLOCK\":128,\"VEC\":2,\"UNROLL\":1}");
	assert_config(c, 7, "cluster {\"CLUSTER\":4,\"BLOCK\":128}");
	json_array_foreach(c, i, x) {
		assert_true(json_is_null(json_object_get(x, "strategy")));
		assert_true(json_is_null(json_object_get(x, "parent")));
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(json_string_value(json_object_get(x, "id")),
				json_string_value(json_object_get(json_array_get(c, j), "id")));
	}
	assert_int_equal(json_array_size(notes), 0);
	json_decref(c);
	json_decref(notes);
	json_decref(s);
}

/* The same state twice gives the same candidates. */
static void
test_deterministic(void **unused)
{
	json_t *s = state_new(NULL, NULL, "[{\"id\": \"s1\", \"moves\": [{\"mul\": {\"BLOCK\": 2}}]}]");
	json_t *n1, *n2, *a = generate(s, 5, NULL, &n1), *b = generate(s, 5, NULL, &n2);

	(void)unused;
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	json_decref(n1);
	json_decref(n2);
	json_decref(s);
}

/* The best kernel is the base: moves apply to its knobs, its id is
 * skipped, it is every candidate's parent. */
static const char best_wide[] = "{\"candidate\": {\"id\": \"b0\", \"family\": \"row_norm\","
	" \"variant\": \"wide\", \"defines\": {\"BLOCK\": 512, \"VEC\": 1, \"UNROLL\": \"2\"}}}";

static void
test_moves(void **unused)
{
	json_t *s = state_new(NULL, best_wide, "["
		"{\"id\": \"bigger\", \"moves\": [{\"family\": \"row_norm\", \"mul\": {\"BLOCK\": 2}},"
		"                                 {\"family\": \"*\", \"add\": {\"UNROLL\": 1}}]},"
		"{\"id\": \"vec4\", \"moves\": [{\"set\": {\"VEC\": 4}}, {\"set\": {\"VEC\": 4, \"BLOCK\": 128}}]},"
		"{\"id\": \"gemm\", \"moves\": [{\"family\": \"gemm\", \"set\": {\"TILE_M\": 128}}]},"
		"{\"id\": \"cl\", \"moves\": [{\"variant\": \"cluster\", \"mul\": {\"CLUSTER\": 2}}]},"
		"{\"id\": \"odd\", \"moves\": [{\"bogus\": 1}]}]");
	json_t *notes, *c = generate(s, 4, NULL, &notes);

	(void)unused;
	/* round 1: each strategy's first new configuration, best first */
	assert_int_equal(json_array_size(c), 4);
	assert_config(c, 0, "wide {\"BLOCK\":512,\"VEC\":1,\"UNROLL\":4}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 0), "strategy")), "bigger");
	assert_config(c, 1, "wide {\"BLOCK\":128,\"VEC\":4,\"UNROLL\":2}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "strategy")), "vec4");
	assert_config(c, 2, "cluster {\"CLUSTER\":8,\"BLOCK\":256}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 2), "parent")), "b0");
	/* then the fill-up: one-knob steps from the best */
	assert_config(c, 3, "wide {\"BLOCK\":256,\"VEC\":1,\"UNROLL\":2}");
	assert_true(json_is_null(json_object_get(json_array_get(c, 3), "strategy")));
	assert_note(notes, "strategy bigger move 0 {\"family\":\"row_norm\",\"mul\":{\"BLOCK\":2}}: "
		"refused: BLOCK is already at its largest value 512");
	assert_note(notes, "strategy vec4 move 0 {\"set\":{\"VEC\":4}}: refused: BLOCK * VEC = 2048 "
		"is above 512: a block covers at most 512 values");
	assert_note(notes, "strategy odd move 0 {\"bogus\":1}: refused: unknown member 'bogus'");
	/* another family's move is no refusal: no note names it */
	for (size_t i = 0; i < json_array_size(notes); i++)
		assert_null(strstr(json_string_value(json_array_get(notes, i)), "gemm"));
	json_decref(c);
	json_decref(notes);
	json_decref(s);
}

/* mul past a constraint is repaired to the nearest valid value on the
 * move's side; add lands on the next value of the domain. */
static void
test_repair(void **unused)
{
	json_t *s = state_new(NULL, NULL, "["
		"{\"id\": \"x4\", \"moves\": [{\"mul\": {\"BLOCK\": 4}}]},"
		"{\"id\": \"u\", \"moves\": [{\"add\": {\"UNROLL\": 1}}]},"
		"{\"id\": \"half\", \"moves\": [{\"mul\": {\"BLOCK\": 0.5}, \"add\": {\"VEC\": -1}}]}]");
	json_t *notes, *c = generate(s, 4, NULL, &notes);

	(void)unused;
	assert_config(c, 0, "wide {\"BLOCK\":128,\"VEC\":2,\"UNROLL\":2}"); /* the default */
	assert_config(c, 1, "wide {\"BLOCK\":256,\"VEC\":2,\"UNROLL\":2}");
	assert_note(notes, "strategy x4 move 0 {\"mul\":{\"BLOCK\":4}}: repaired: BLOCK = 256 "
		"instead of 512 (BLOCK * VEC = 1024 is above 512: a block covers at most 512 values)");
	assert_config(c, 2, "wide {\"BLOCK\":128,\"VEC\":2,\"UNROLL\":4}");
	assert_config(c, 3, "wide {\"BLOCK\":64,\"VEC\":1,\"UNROLL\":2}");
	json_decref(c);
	json_decref(notes);
	json_decref(s);
}

/* A move naming knobs the current variant lacks switches to the variant
 * that has them, carrying the knobs they share. */
static void
test_implied_variant(void **unused)
{
	json_t *s = state_new(NULL, NULL, "[{\"id\": \"cl\", \"moves\": [{\"set\": {\"CLUSTER\": 8}}]},"
		"{\"id\": \"none\", \"moves\": [{\"set\": {\"TILE_M\": 64}}]}]");
	json_t *notes, *c = generate(s, 2, NULL, &notes);

	(void)unused;
	assert_config(c, 1, "cluster {\"CLUSTER\":8,\"BLOCK\":128}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "strategy")), "cl");
	assert_int_equal(json_array_size(notes), 0);
	json_decref(c);
	json_decref(notes);
	json_decref(s);
}

/* A variant switch that the task does not allow is refused with the
 * reason; a move that breaks a constraint at a check size too. */
static void
test_refusals(void **unused)
{
	static const char l1[] =
		"{\"id\": \"toy_l1\", \"family\": \"row_norm\","
		" \"spec\": {\"op\": \"l1\", \"rows\": \"r\", \"cols\": \"c\"},"
		" \"params\": {\"r\": 64, \"c\": 4000}, \"check_params\": [{\"r\": 1, \"c\": 1}],"
		" \"inputs\": [{\"name\": \"x\"}], \"outputs\": [{\"name\": \"y\"}]}";
	static const char shortrows[] =
		"{\"id\": \"toy_short\", \"family\": \"row_norm\","
		" \"spec\": {\"op\": \"softmax\", \"rows\": \"r\", \"cols\": \"c\"},"
		" \"params\": {\"r\": 64, \"c\": 50}, \"check_params\": [{\"r\": 1, \"c\": 1}],"
		" \"inputs\": [{\"name\": \"x\"}], \"outputs\": [{\"name\": \"y\"}]}";
	static const char moves[] = "[{\"id\": \"cl\", \"moves\": [{\"variant\": \"cluster\"}]},"
		"{\"id\": \"small\", \"moves\": [{\"variant\": \"cluster\", \"set\": {\"CLUSTER\": 2}}]}]";
	json_t *s = state_new(l1, NULL, moves), *notes, *c = generate(s, 2, NULL, &notes);

	(void)unused;
	assert_note(notes, "strategy cl move 0 {\"variant\":\"cluster\"}: refused: variant "
		"cluster does not do op l1");
	json_decref(c);
	json_decref(notes);
	json_decref(s);

	s = state_new(shortrows, NULL, moves);
	c = generate(s, 2, NULL, &notes);
	assert_note(notes, "refused: variant cluster does not apply: {{cols}} - 100 is -50 at params");
	json_decref(c);
	json_decref(notes);
	json_decref(s);

	s = state_new(NULL, NULL, moves);
	c = generate(s, 3, NULL, &notes);
	assert_note(notes, "strategy small move 0 {\"variant\":\"cluster\",\"set\":{\"CLUSTER\":2}}: "
		"refused: cdiv({{cols}}, CLUSTER) * 4 = 8000 is above 4096: a block's share");
	json_decref(c);
	json_decref(notes);
	json_decref(s);
}

/* Ids in seen are never written again; the fill-up goes further. */
static void
test_seen(void **unused)
{
	json_t *s = state_new(NULL, NULL, NULL), *n1, *n2, *seen = json_array();
	json_t *first = generate(s, 3, NULL, &n1), *second;
	const json_t *c;
	size_t i;

	(void)unused;
	json_array_foreach(first, i, c)
		json_array_append(seen, json_object_get(c, "id"));
	second = generate(s, 3, seen, &n2);
	assert_int_equal(json_array_size(second), 3);
	assert_config(second, 0, "wide {\"BLOCK\":128,\"VEC\":4,\"UNROLL\":2}");
	json_array_foreach(second, i, c)
		for (size_t j = 0; j < json_array_size(seen); j++)
			assert_string_not_equal(json_string_value(json_object_get(c, "id")),
				json_string_value(json_array_get(seen, j)));
	json_decref(first);
	json_decref(second);
	json_decref(seen);
	json_decref(n1);
	json_decref(n2);
	json_decref(s);
}

/* A state the backend cannot serve: NULL and the reason. */
static void
test_bad_states(void **unused)
{
	json_t *s = state_new("{\"id\": \"t\", \"family\": \"row_norm\", \"spec\": {\"op\": \"softmax\","
		" \"rows\": \"r\"}, \"params\": {\"r\": 4}, \"inputs\": [], \"outputs\": []}", NULL, NULL);
	json_t *notes = json_null();
	char err[RULES_ERR];

	(void)unused;
	assert_null(rules_generate(s, 4, NULL, TOY, &notes, err, sizeof(err)));
	assert_null(notes);
	assert_string_equal(err, "task \"t\": spec.cols is missing (family row_norm needs it: "
		"docs/templates.md)");
	json_decref(s);
	s = state_new("{\"id\": \"t\", \"family\": \"gemv\", \"spec\": {}, \"params\": {\"m\": 4}}",
		NULL, NULL);
	assert_null(rules_generate(s, 4, NULL, TOY, &notes, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown family 'gemv'"));
	json_decref(s);
	s = state_new("{\"id\": \"t\", \"family\": \"row_norm\", \"spec\": {\"op\": \"softmax\","
		" \"rows\": \"r\", \"cols\": \"q * 2\"}, \"params\": {\"r\": 4}}", NULL, NULL);
	assert_null(rules_generate(s, 4, NULL, TOY, &notes, err, sizeof(err)));
	assert_string_equal(err, "task \"t\": spec.cols: column 1: unknown name 'q'");
	json_decref(s);
}

/* Every real family file loads, and every task of the pack whose family
 * has one gets k distinct valid candidates from the family default. */
static void
test_real_families(void **unused)
{
	json_t *fams = rules_families(REAL), *f, *sets, *task, *notes, *c;
	const json_t *fname;
	const json_t *name;
	char err[RULES_ERR], *dir;
	DIR *d;
	struct dirent *e;
	size_t i;
	int served = 0;

	(void)unused;
	assert_true(json_array_size(fams) >= 7);
	json_array_foreach(fams, i, name) {
		f = rules_family_load(REAL, json_string_value(name), err, sizeof(err));
		if (!f)
			fail_msg("%s", err);
		json_decref(f);
	}
	assert_non_null(d = opendir("tasks"));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		dir = xasprintf("tasks/%s", e->d_name);
		task = task_load(dir, err, sizeof(err));
		free(dir);
		if (!task)
			fail_msg("%s", err);
		fname = json_object_get(task, "family");
		dir = xasprintf("%s/%s.json", REAL, json_string_value(fname));
		if (access(dir, R_OK) != 0) { /* a family not written yet */
			free(dir);
			json_decref(task);
			continue;
		}
		free(dir);
		sets = json_pack("{s:O, s:s, s:i, s:n}", "task", task, "run", "r", "step", 0, "best");
		c = rules_generate(sets, 4, NULL, REAL, &notes, err, sizeof(err));
		if (!c)
			fail_msg("task %s: %s", e->d_name, err);
		if (json_array_size(c) != 4)
			fail_msg("task %s: %zu candidates", e->d_name, json_array_size(c));
		served++;
		json_decref(c);
		json_decref(notes);
		json_decref(sets);
		json_decref(task);
	}
	closedir(d);
	assert_true(served >= 15);
	json_decref(fams);
}

/* Renders configuration cfg ({variant, knobs}) of task with family fam
 * and writes the record {task, candidate}, or says on stderr why it is
 * refused. Returns 0, or 1 when refused. */
static int
render_put(const json_t *fam, const json_t *task, const json_t *cfg)
{
	char err[RULES_ERR], *s;
	json_t *c, *rec;

	c = rules_render(fam, task, json_string_value(json_object_get(cfg, "variant")),
		json_object_get(cfg, "knobs"), err, sizeof(err));
	if (!c) {
		s = json_dumps(cfg, JSON_COMPACT);
		fprintf(stderr, "refused: %s %s: %s\n", json_string_value(
			json_object_get(task, "id")), s, err);
		free(s);
		return 1;
	}
	rec = json_pack("{s:O, s:o}", "task", task, "candidate", c);
	jsonl_put(stdout, rec);
	json_decref(rec);
	return 0;
}

/* Loads the task in dir and its family from templates (dies on errors). */
static json_t *
load_pair(const char *templates, const char *dir, json_t **fam)
{
	char err[RULES_ERR];
	json_t *task = task_load(dir, err, sizeof(err));

	if (!task)
		die(EXIT_DATAERR, "%s", err);
	*fam = rules_family_load(templates, json_string_value(json_object_get(task,
		"family")), err, sizeof(err));
	if (*fam && rules_spec_check(*fam, task, err, sizeof(err)) < 0)
		die(EXIT_DATAERR, "%s", err);
	if (!*fam)
		warnf("%s: %s", dir, err);
	return task;
}

/* --render: the configurations on stdin, as records. */
static int
render_main(const char *templates)
{
	struct jsonl *in = jsonl_open(stdin);
	json_t *cfg, *task, *fam;

	setprogname("rules");
	while ((cfg = jsonl_next(in)) != NULL) {
		task = load_pair(templates, json_string_value(json_object_get(cfg, "task")), &fam);
		if (fam)
			render_put(fam, task, cfg);
		json_decref(fam);
		json_decref(task);
		json_decref(cfg);
	}
	jsonl_close(in);
	return EXIT_OK;
}

/* --sweep: every sweep configuration of each task, as records. */
static int
sweep_main(int argc, char **argv)
{
	json_t *task, *fam, *cfgs, *cfg;
	size_t j;
	int i;

	setprogname("rules");
	for (i = 3; i < argc; i++) {
		task = load_pair(argv[2], argv[i], &fam);
		if (fam) {
			cfgs = rules_sweep(fam, task);
			json_array_foreach(cfgs, j, cfg)
				render_put(fam, task, cfg);
			json_decref(cfgs);
		}
		json_decref(fam);
		json_decref(task);
	}
	return EXIT_OK;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_errors),
		cmocka_unit_test(test_includes),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_render_inputs),
		cmocka_unit_test(test_fill_order),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_implied_variant),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_seen),
		cmocka_unit_test(test_bad_states),
		cmocka_unit_test(test_real_families),
	};

	if (argc >= 3 && strcmp(argv[1], "--sweep") == 0)
		return sweep_main(argc, argv);
	if (argc == 3 && strcmp(argv[1], "--render") == 0)
		return render_main(argv[2]);
	if (argc > 1) {
		fprintf(stderr, "usage: rules [--sweep TEMPLATES TASKDIR... | "
			"--render TEMPLATES < configs]\n");
		return EXIT_USAGE;
	}
	/* tests/run starts the tests in the repository's root, where the
	 * paths above lead */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
