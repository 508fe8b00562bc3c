/* task.c: loading and validating operator tasks (task.h, docs/tasks.md). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expr.h"
#include "family.h"
#include "jsonl.h"
#include "plan.h"
#include "task.h"
#include "util.h"

static const char *const task_members[] = {
	"id", "description", "kernelbench", "torch", "family", "spec", "params",
	"check_params", "inputs", "outputs", "tolerance", "bytes", "flops",
	"baseline_us", "reference", "then", "first_inputs", NULL
};

/* Formats an error about one field of the task into err; returns -1. */
static int
bad(char *err, size_t errlen, const json_t *task, const char *fmt, ...)
{
	const char *id = json_string_value(json_object_get(task, "id"));
	va_list ap;
	int n;

	n = snprintf(err, errlen, "task \"%s\": ", id ? id : "?");
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int
is_task_id(const char *s)
{
	if (!s || !*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	return 1;
}

static int
is_text(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0;
}

json_t *
task_sizes(const json_t *task)
{
	json_t *sets = json_array();
	const json_t *c = json_object_get(task, "check_params");

	json_array_append(sets, json_object_get(task, "params"));
	if (json_is_array(c))
		json_array_extend(sets, (json_t *)c);
	return sets;
}

/* A size set: an object of positive integers with the names of params. */
static int
check_size_set(const json_t *task, const json_t *set, const json_t *params,
	const char *where, char *err, size_t errlen)
{
	const char *k;
	json_t *v;

	if (!json_is_object(set) || json_object_size(set) == 0)
		return bad(err, errlen, task, "%s: expected an object of sizes", where);
	json_object_foreach((json_t *)set, k, v) {
		if (!is_c_identifier(k))
			return bad(err, errlen, task, "%s: '%s' is not a valid size name", where, k);
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			return bad(err, errlen, task, "%s.%s: expected a positive integer", where, k);
		if (params && !json_object_get(params, k))
			return bad(err, errlen, task, "%s.%s: not a size of params", where, k);
	}
	if (params && json_object_size(set) != json_object_size(params))
		json_object_foreach((json_t *)params, k, v)
			if (!json_object_get(set, k))
				return bad(err, errlen, task, "%s: size '%s' is missing", where, k);
	return 0;
}

/* An expression member evaluated at every size set, with a lower bound. */
static int
check_expr(const json_t *task, const json_t *v, const json_t *sets, int64_t min,
	const char *where, char *err, size_t errlen)
{
	const json_t *sizes;
	char e[256];
	size_t i;
	int64_t x;

	if (!json_is_string(v) && !json_is_integer(v))
		return bad(err, errlen, task, "%s: expected a size expression", where);
	json_array_foreach(sets, i, sizes) {
		if (expr_eval_json(v, sizes, &x, e, sizeof(e)) < 0)
			return bad(err, errlen, task, "%s: %s", where, e);
		if (x < min)
			return bad(err, errlen, task, "%s: %lld is less than %lld", where,
				(long long)x, (long long)min);
	}
	return 0;
}

static int
check_number(const json_t *task, const json_t *v, double min, const char *where,
	char *err, size_t errlen)
{
	if (!json_is_number(v))
		return bad(err, errlen, task, "%s: expected a number", where);
	if (json_number_value(v) < min)
		return bad(err, errlen, task, "%s: must be at least %g", where, min);
	return 0;
}

/* Whether a bool's randint bounds are numbers, 0 <= low < high <= 2. */
static int
bool_bounds(const json_t *init)
{
	const json_t *lo = json_object_get(init, "low"), *hi = json_object_get(init, "high");

	return json_is_integer(lo) && json_is_integer(hi) && json_integer_value(lo) >= 0 &&
	    json_integer_value(lo) < json_integer_value(hi) && json_integer_value(hi) <= 2;
}

static int
check_init(const json_t *task, const json_t *init, enum dtype dt, int ndim,
	const json_t *sets, const char *where, char *err, size_t errlen)
{
	static const char *const members[] = { "dist", "mean", "std", "low",
		"high", "scale", NULL };
	const char *dist = json_string_value(json_object_get(init, "dist"));
	const char *unknown;
	const json_t *scale;
	char at[128];
	int isint = DTYPE_INTEGRAL(dt);

	if (!json_is_object(init))
		return bad(err, errlen, task, "%s: expected an object", where);
	if ((unknown = json_unknown_member(init, members)))
		return bad(err, errlen, task, "%s: unknown member '%s'", where, unknown);
	if (!dist)
		return bad(err, errlen, task, "%s.dist: missing", where);
	if (strcmp(dist, "normal") == 0 && !isint) {
		snprintf(at, sizeof(at), "%s.mean", where);
		if (check_number(task, json_object_get(init, "mean"), -1e30, at, err, errlen) < 0)
			return -1;
		snprintf(at, sizeof(at), "%s.std", where);
		if (check_number(task, json_object_get(init, "std"), 0, at, err, errlen) < 0)
			return -1;
	} else if (strcmp(dist, "uniform") == 0 && !isint) {
		const json_t *lo = json_object_get(init, "low"), *hi = json_object_get(init, "high");
		if (!json_is_number(lo) || !json_is_number(hi) ||
		    json_number_value(lo) >= json_number_value(hi))
			return bad(err, errlen, task, "%s: uniform needs numbers low < high", where);
	} else if (strcmp(dist, "randint") == 0 && isint) {
		snprintf(at, sizeof(at), "%s.low", where);
		if (check_expr(task, json_object_get(init, "low"), sets, INT64_MIN, at, err, errlen) < 0)
			return -1;
		snprintf(at, sizeof(at), "%s.high", where);
		if (check_expr(task, json_object_get(init, "high"), sets, INT64_MIN, at, err, errlen) < 0)
			return -1;
		if (dt == DT_BOOL && !bool_bounds(init))
			return bad(err, errlen, task, "%s: a bool draws randint with 0 <= low < "
				"high <= 2 (numbers)", where);
	} else if (strcmp(dist, "tril") == 0) {
		if (json_object_size(init) != 1)
			return bad(err, errlen, task, "%s: tril takes no other member (its "
				"values are fixed: 1 on and below the diagonal, 0 above)", where);
		if (ndim < 2)
			return bad(err, errlen, task, "%s: tril needs at least two axes (it has "
				"%d)", where, ndim);
	} else if (!strcmp(dist, "normal") || !strcmp(dist, "uniform") ||
	    !strcmp(dist, "randint")) {
		return bad(err, errlen, task, "%s.dist: '%s' does not suit dtype %s",
			where, dist, dtype_name(dt));
	} else {
		return bad(err, errlen, task, "%s.dist: '%s' is not normal, uniform, randint "
			"or tril", where, dist);
	}
	if ((scale = json_object_get(init, "scale"))) {
		const json_t *lo = json_object_get(scale, "low"), *hi = json_object_get(scale, "high");
		const char *sd = json_string_value(json_object_get(scale, "dist"));
		if (isint || !sd || strcmp(sd, "uniform") != 0 || !json_is_number(lo) ||
		    !json_is_number(hi) || json_number_value(lo) >= json_number_value(hi))
			return bad(err, errlen, task, "%s.scale: expected "
				"{\"dist\": \"uniform\", \"low\": L, \"high\": H} with L < H", where);
	}
	return 0;
}

/* inputs or outputs: named tensors with dtype and shape. */
static int
check_tensors(const json_t *task, const char *list, const json_t *sets,
	json_t *names, char *err, size_t errlen)
{
	static const char *const members[] = { "name", "dtype", "shape", "init", NULL };
	const json_t *arr = json_object_get(task, list), *t, *dim;
	int is_input = strcmp(list, "inputs") == 0;
	const char *unknown;
	char at[96];
	size_t i, d;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return bad(err, errlen, task, "%s: expected a non-empty array", list);
	json_array_foreach(arr, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const json_t *shape = json_object_get(t, "shape");
		enum dtype dt;
		int64_t count;

		if (!json_is_object(t))
			return bad(err, errlen, task, "%s[%zu]: expected an object", list, i);
		if ((unknown = json_unknown_member(t, members)))
			return bad(err, errlen, task, "%s[%zu]: unknown member '%s'", list, i, unknown);
		if (!is_c_identifier(name) || strlen(name) >= PLAN_NAME_MAX)
			return bad(err, errlen, task, "%s[%zu].name: expected a C identifier", list, i);
		if (json_object_get(names, name))
			return bad(err, errlen, task, "%s[%zu].name: '%s' is used twice", list, i, name);
		json_object_set_new(names, name, json_true());
		if (dtype_parse(json_string_value(json_object_get(t, "dtype")), &dt) < 0)
			return bad(err, errlen, task, "%s[%zu].dtype: expected " DTYPE_NAMES,
				list, i);
		if (!json_is_array(shape) || json_array_size(shape) > 8)
			return bad(err, errlen, task, "%s[%zu].shape: expected an array of at most 8 "
				"size expressions", list, i);
		json_array_foreach(shape, d, dim) {
			snprintf(at, sizeof(at), "%s[%zu].shape[%zu]", list, i, d);
			if (check_expr(task, dim, sets, 1, at, err, errlen) < 0)
				return -1;
		}
		for (size_t s = 0; s < json_array_size(sets); s++) {
			char e[256];
			if (task_tensor_count(t, json_array_get(sets, s), &count, e, sizeof(e)) < 0)
				return bad(err, errlen, task, "%s[%zu].shape: %s", list, i, e);
		}
		snprintf(at, sizeof(at), "%s[%zu].init", list, i);
		if (is_input && check_init(task, json_object_get(t, "init"), dt,
		    (int)json_array_size(shape), sets, at, err, errlen) < 0)
			return -1;
		if (!is_input && json_object_get(t, "init"))
			return bad(err, errlen, task, "%s: outputs have no init", at);
		if (!is_input && dt == DT_BOOL)
			return bad(err, errlen, task, "%s[%zu].dtype: bool is an input's type "
				"(a mask), not an output's", list, i);
	}
	return 0;
}

/* A chain's first_inputs, where it has them: the inputs its first stage
 * reads, each once, so that an input a later stage reads (in "used") may
 * be the first stage's too (a residual: x read by the product and added
 * at the end); then every input is read by some stage. */
static int
check_first_inputs(const json_t *task, const json_t *used, char *err, size_t errlen)
{
	const json_t *first = json_object_get(task, "first_inputs"), *n, *t;
	const char *name;
	size_t k;

	if (!first)
		return 0;
	if (!json_is_array(first))
		return bad(err, errlen, task, "first_inputs: expected an array of the "
			"task's input names");
	json_array_foreach(first, k, n) {
		name = json_string_value(n);
		if (!name || !task_tensor(task, "inputs", name))
			return bad(err, errlen, task, "first_inputs[%zu]: expected the name of "
				"one of the task's inputs", k);
		if (json_array_find_string(first, name) < k)
			return bad(err, errlen, task, "first_inputs[%zu]: '%s' is named twice",
				k, name);
	}
	json_array_foreach(json_object_get(task, "inputs"), k, t) {
		name = json_string_value(json_object_get(t, "name"));
		if (json_array_find_string(first, name) == SIZE_MAX &&
		    !json_object_get(used, name))
			return bad(err, errlen, task, "inputs[%zu]: '%s' is read by no stage "
				"(first_inputs names the first stage's)", k, name);
	}
	return 0;
}

/* The chain's stages after the first (task_stage): each names a known
 * family, a spec, the shape and float type of the buffer it reads ("from")
 * and the task's inputs it reads besides, each once; with first_inputs
 * (check_first_inputs) stages may share an input. */
static int
check_then(const json_t *task, const json_t *sets, char *err, size_t errlen)
{
	static const char *const members[] = { "family", "spec", "from", "inputs", NULL };
	static const char *const from_members[] = { "shape", "dtype", NULL };
	static const char *const lists[] = { "inputs", "outputs" };
	const json_t *then = json_object_get(task, "then"), *st, *from, *dim, *in;
	json_t *used;
	const char *unknown, *fam, *name;
	enum dtype dt;
	char at[96];
	size_t i, d, k;
	int rc = -1;

	if (!then)
		return json_object_get(task, "first_inputs") ? bad(err, errlen, task,
			"first_inputs: only a chain (then) has stages to name inputs for") : 0;
	if (!json_is_array(then) || json_array_size(then) == 0 ||
	    json_array_size(then) > TASK_THEN_MAX)
		return bad(err, errlen, task, "then: expected an array of 1 to %d stages",
			TASK_THEN_MAX);
	if (strcmp(json_string_value(json_object_get(task, "family")), TASK_NO_FAMILY) == 0)
		return bad(err, errlen, task, "then: a task of no family (\"%s\") has no "
			"stages after it", TASK_NO_FAMILY);
	for (d = 0; d < 2; d++)
		json_array_foreach(json_object_get(task, lists[d]), i, st)
			if (strncmp(json_string_value(json_object_get(st, "name")), "then_", 5) == 0)
				return bad(err, errlen, task, "%s[%zu].name: '%s' is the name of a "
					"buffer between a chain's stages", lists[d], i,
					json_string_value(json_object_get(st, "name")));
	used = json_object();
	json_array_foreach(then, i, st) {
		if (!json_is_object(st)) {
			bad(err, errlen, task, "then[%zu]: expected an object", i);
			goto out;
		}
		if ((unknown = json_unknown_member(st, members))) {
			bad(err, errlen, task, "then[%zu]: unknown member '%s' (family, spec, "
				"from, inputs)", i, unknown);
			goto out;
		}
		fam = json_string_value(json_object_get(st, "family"));
		if (!family_known(fam)) {
			bad(err, errlen, task, "then[%zu].family: %s%s%s is not a known family",
				i, fam ? "'" : "", fam ? fam : "missing", fam ? "'" : "");
			goto out;
		}
		if (!json_is_object(json_object_get(st, "spec"))) {
			bad(err, errlen, task, "then[%zu].spec: expected an object", i);
			goto out;
		}
		from = json_object_get(st, "from");
		if (!json_is_object(from) || (unknown = json_unknown_member(from, from_members))) {
			bad(err, errlen, task, "then[%zu].from: expected {shape, dtype}, the "
				"buffer the stage before writes", i);
			goto out;
		}
		if (dtype_parse(json_string_value(json_object_get(from, "dtype")), &dt) < 0 ||
		    DTYPE_INTEGRAL(dt)) {
			bad(err, errlen, task, "then[%zu].from.dtype: expected a float type", i);
			goto out;
		}
		if (!json_is_array(json_object_get(from, "shape")) ||
		    json_array_size(json_object_get(from, "shape")) > 8) {
			bad(err, errlen, task, "then[%zu].from.shape: expected an array of at "
				"most 8 size expressions", i);
			goto out;
		}
		json_array_foreach(json_object_get(from, "shape"), d, dim) {
			snprintf(at, sizeof(at), "then[%zu].from.shape[%zu]", i, d);
			if (check_expr(task, dim, sets, 1, at, err, errlen) < 0)
				goto out;
		}
		in = json_object_get(st, "inputs");
		if (in && !json_is_array(in)) {
			bad(err, errlen, task, "then[%zu].inputs: expected an array of the "
				"task's input names", i);
			goto out;
		}
		json_array_foreach(in, k, dim) {
			name = json_string_value(dim);
			if (!name || !task_tensor(task, "inputs", name)) {
				bad(err, errlen, task, "then[%zu].inputs[%zu]: expected the name of "
					"one of the task's inputs", i, k);
				goto out;
			}
			if (json_array_find_string(in, name) < k) {
				bad(err, errlen, task, "then[%zu].inputs[%zu]: '%s' is named twice",
					i, k, name);
				goto out;
			}
			json_object_set_new(used, name, json_true());
		}
	}
	if (check_first_inputs(task, used, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	json_decref(used);
	return rc;
}

size_t
task_stages(const json_t *task)
{
	return 1 + json_array_size(json_object_get(task, "then"));
}

void
task_stage_buffer(size_t s, char *buf, size_t len)
{
	snprintf(buf, len, "then_%zu", s + 1);
}

/* The buffer stage s (0-based) writes, as an output {name, dtype, shape}:
 * what the next stage's "from" says. */
static json_t *
stage_buffer(const json_t *task, size_t s)
{
	const json_t *from = json_object_get(json_array_get(json_object_get(task, "then"), s),
		"from");
	char name[32];

	task_stage_buffer(s, name, sizeof(name));
	return json_pack("{s:s, s:O, s:O}", "name", name, "dtype",
		json_object_get(from, "dtype"), "shape", json_object_get(from, "shape"));
}

json_t *
task_stage(const json_t *task, size_t s)
{
	const json_t *then = json_object_get(task, "then"), *st, *t, *n;
	size_t n_stages = task_stages(task), i, j, k;
	json_t *view, *ins, *outs, *in;
	int later;

	if (!then)
		return json_incref((json_t *)task);
	view = json_deep_copy(task);
	json_object_del(view, "then");
	ins = json_array();
	if (s == 0 && json_object_get(task, "first_inputs")) {
		json_array_foreach(json_object_get(task, "first_inputs"), j, n)
			json_array_append(ins, (json_t *)task_tensor(task, "inputs",
				json_string_value(n)));
	} else if (s == 0) {
		/* the task's inputs that no later stage names, in the task's order */
		json_array_foreach(json_object_get(task, "inputs"), i, t) {
			later = 0;
			json_array_foreach(then, j, st)
				json_array_foreach(json_object_get(st, "inputs"), k, n)
					later |= json_equal((json_t *)n, json_object_get(t, "name"));
			if (!later)
				json_array_append(ins, (json_t *)t);
		}
	} else {
		st = json_array_get(then, s - 1);
		json_object_set(view, "family", json_object_get(st, "family"));
		json_object_set(view, "spec", json_object_get(st, "spec"));
		in = stage_buffer(task, s - 1);
		json_array_append_new(ins, in);
		json_array_foreach(json_object_get(st, "inputs"), j, n)
			json_array_append(ins, (json_t *)task_tensor(task, "inputs",
				json_string_value(n)));
	}
	json_object_set_new(view, "inputs", ins);
	if (s + 1 < n_stages) {
		outs = json_array();
		json_array_append_new(outs, stage_buffer(task, s));
		json_object_set_new(view, "outputs", outs);
	}
	return view;
}

static int
check_tolerance(const json_t *task, char *err, size_t errlen)
{
	static const char *const members[] = { "atol", "rtol", "rel_l2", "atol_rms", "why", NULL };
	const json_t *tol = json_object_get(task, "tolerance");
	const char *unknown;

	if (!json_is_object(tol))
		return bad(err, errlen, task, "tolerance: expected an object");
	if ((unknown = json_unknown_member(tol, members)))
		return bad(err, errlen, task, "tolerance: unknown member '%s'", unknown);
	if (check_number(task, json_object_get(tol, "atol"), 0, "tolerance.atol", err, errlen) < 0 ||
	    check_number(task, json_object_get(tol, "rtol"), 0, "tolerance.rtol", err, errlen) < 0 ||
	    check_number(task, json_object_get(tol, "rel_l2"), 0, "tolerance.rel_l2", err, errlen) < 0)
		return -1;
	if (json_object_get(tol, "atol_rms") && check_number(task, json_object_get(tol, "atol_rms"),
	    0, "tolerance.atol_rms", err, errlen) < 0)
		return -1;
	if (!is_text(json_object_get(tol, "why")))
		return bad(err, errlen, task, "tolerance.why: say how the tolerance was chosen");
	return 0;
}

/* An imported task's reference: the problem's own PyTorch module, run by
 * kbench's oracle (docs/tasks.md, "Imported tasks"). */
static int
check_oracle(const json_t *task, const json_t *ref, char *err, size_t errlen)
{
	static const char *const members[] = { "oracle", "file", "source", "sizes",
		"ties", "args", "weights", "work", NULL };
	const json_t *params = json_object_get(task, "params"), *v, *a;
	const char *unknown, *k;
	size_t i;

	if ((unknown = json_unknown_member(ref, members)))
		return bad(err, errlen, task, "reference: unknown member '%s' (an oracle "
			"reference has no launch plan)", unknown);
	if (!json_is_string(json_object_get(ref, "oracle")) ||
	    strcmp(json_string_value(json_object_get(ref, "oracle")), "pytorch") != 0)
		return bad(err, errlen, task, "reference.oracle: expected \"pytorch\"");
	if (!is_text(json_object_get(ref, "source")))
		return bad(err, errlen, task, "reference.source: missing (the problem's Python source)");
	if (!json_is_array(json_object_get(ref, "sizes")))
		return bad(err, errlen, task, "reference.sizes: expected an array of size names");
	if ((v = json_object_get(ref, "work")) &&
	    (!json_is_string(v) || strcmp(json_string_value(v), "f64") != 0))
		return bad(err, errlen, task, "reference.work: expected \"f64\" (the type the "
			"oracle computes the reference in), or no member");
	json_array_foreach(json_object_get(ref, "sizes"), i, v)
		if (!json_is_string(v) || !json_object_get(params, json_string_value(v)))
			return bad(err, errlen, task, "reference.sizes[%zu]: expected a size of params", i);
	if ((v = json_object_get(ref, "ties")) && !json_is_object(v))
		return bad(err, errlen, task, "reference.ties: expected an object (a problem's "
			"integer -> the size it follows)");
	json_object_foreach((json_t *)json_object_get(ref, "ties"), k, a)
		if (!is_c_identifier(k) || !json_is_string(a) ||
		    !json_object_get(params, json_string_value(a)))
			return bad(err, errlen, task, "reference.ties.%s: expected a size of "
				"params", k);
	if (!json_is_array(json_object_get(ref, "args")))
		return bad(err, errlen, task, "reference.args: expected an array");
	json_array_foreach(json_object_get(ref, "args"), i, a) {
		const json_t *in = json_object_get(a, "input");
		if (!json_is_object(a) || json_object_size(a) != 1 ||
		    (in ? !json_is_string(in) || !task_tensor(task, "inputs", json_string_value(in))
		     : !(v = json_object_get(a, "value")) || json_is_object(v) || json_is_array(v)))
			return bad(err, errlen, task, "reference.args[%zu]: expected {\"input\": "
				"an input's name} or {\"value\": a number, boolean or null}", i);
	}
	if (!json_is_object(json_object_get(ref, "weights")))
		return bad(err, errlen, task, "reference.weights: expected an object");
	json_object_foreach(json_object_get(ref, "weights"), k, v)
		if (!task_tensor(task, "inputs", k) || !is_text(v))
			return bad(err, errlen, task, "reference.weights.%s: expected an input's "
				"name mapped to the module's parameter or buffer", k);
	return 0;
}

int
task_oracle(const json_t *task)
{
	return json_object_get(json_object_get(task, "reference"), "oracle") != NULL;
}

const json_t *
task_tensor(const json_t *task, const char *list, const char *name)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(task, list), i, t)
		if (name && json_is_string(json_object_get(t, "name")) &&
		    strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
			return t;
	return NULL;
}

static int
check_reference(const json_t *task, char *err, size_t errlen)
{
	static const char *const members[] = { "file", "source", "launch", NULL };
	const json_t *ref = json_object_get(task, "reference");
	const char *unknown;
	char e[512];

	if (!json_is_object(ref))
		return bad(err, errlen, task, "reference: expected an object");
	if (json_object_get(ref, "oracle"))
		return check_oracle(task, ref, err, errlen);
	if ((unknown = json_unknown_member(ref, members)))
		return bad(err, errlen, task, "reference: unknown member '%s'", unknown);
	if (!is_text(json_object_get(ref, "source")))
		return bad(err, errlen, task, "reference.source: missing (the kernel source)");
	if (!json_is_object(json_object_get(ref, "launch")))
		return bad(err, errlen, task, "reference.launch: expected a launch plan object");
	if (task_plan_check(json_object_get(ref, "launch"), task, NULL, e, sizeof(e)) < 0)
		return bad(err, errlen, task, "reference.launch: %s", e);
	return 0;
}

int
task_validate(const json_t *task, char *err, size_t errlen)
{
	const json_t *params, *checks, *c, *b;
	const char *family, *unknown, *k;
	json_t *sets, *names, *v;
	char at[64];
	size_t i;
	int ok = 0, rc = -1;

	if (!json_is_object(task)) {
		snprintf(err, errlen, "task: expected an object");
		return -1;
	}
	if (!is_task_id(json_string_value(json_object_get(task, "id"))))
		return bad(err, errlen, task, "id: expected letters, digits, '_' or '-'");
	if ((unknown = json_unknown_member(task, task_members)))
		return bad(err, errlen, task, "unknown field '%s'", unknown);
	if (!is_text(json_object_get(task, "description")))
		return bad(err, errlen, task, "description: expected a string");
	if (!is_text(json_object_get(task, "torch")))
		return bad(err, errlen, task, "torch: expected the PyTorch expression");
	if (json_object_get(task, "kernelbench") && !json_is_string(json_object_get(task, "kernelbench")))
		return bad(err, errlen, task, "kernelbench: expected a string");
	family = json_string_value(json_object_get(task, "family"));
	ok = family_known(family) || (family && strcmp(family, TASK_NO_FAMILY) == 0);
	if (!ok)
		return bad(err, errlen, task, "family: %s%s%s is not a known family", family ? "'" : "",
			family ? family : "missing", family ? "'" : "");
	if (!json_is_object(json_object_get(task, "spec")))
		return bad(err, errlen, task, "spec: expected an object (may be empty)");
	if (strcmp(family, TASK_NO_FAMILY) == 0 && json_object_size(json_object_get(task, "spec")))
		return bad(err, errlen, task, "spec: a task of no family (\"%s\") has an empty spec",
			TASK_NO_FAMILY);
	params = json_object_get(task, "params");
	if (check_size_set(task, params, NULL, "params", err, errlen) < 0)
		return -1;
	checks = json_object_get(task, "check_params");
	if (!json_is_array(checks) || json_array_size(checks) < 2)
		return bad(err, errlen, task, "check_params: expected an array of at least two size sets");
	json_array_foreach(checks, i, c) {
		snprintf(at, sizeof(at), "check_params[%zu]", i);
		if (check_size_set(task, c, params, at, err, errlen) < 0)
			return -1;
	}
	if ((b = json_object_get(task, "baseline_us"))) {
		if (!json_is_object(b))
			return bad(err, errlen, task, "baseline_us: expected an object");
		json_object_foreach((json_t *)b, k, v)
			if (!json_is_number(v) || json_number_value(v) <= 0)
				return bad(err, errlen, task, "baseline_us.%s: expected a positive number", k);
	}
	sets = task_sizes(task);
	names = json_object();
	if (check_tensors(task, "inputs", sets, names, err, errlen) < 0 ||
	    check_tensors(task, "outputs", sets, names, err, errlen) < 0 ||
	    check_then(task, sets, err, errlen) < 0 ||
	    check_expr(task, json_object_get(task, "bytes"), sets, 0, "bytes", err, errlen) < 0 ||
	    check_expr(task, json_object_get(task, "flops"), sets, 0, "flops", err, errlen) < 0 ||
	    check_tolerance(task, err, errlen) < 0 ||
	    check_reference(task, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	json_decref(names);
	json_decref(sets);
	return rc;
}

/* Is dir a task folder (it holds a task.json file)? */
static int
is_task_dir(const char *dir)
{
	char *f = xasprintf("%s/task.json", dir);
	struct stat st;
	int yes = stat(f, &st) == 0 && S_ISREG(st.st_mode);

	free(f);
	return yes;
}

char *
task_find(const char *name)
{
	char *roots, *save = NULL, *found = NULL;

	if (is_task_dir(name))
		return xstrdup(name);
	if (strchr(name, '/'))
		return NULL;   /* a path that is not a task folder */
	roots = task_roots();
	for (char *r = strtok_r(roots, ":", &save); r && !found; r = strtok_r(NULL, ":", &save)) {
		char *dir = xasprintf("%s/%s", r, name);
		if (is_task_dir(dir))
			found = dir;
		else
			free(dir);
	}
	free(roots);
	return found;
}

char *
task_roots(void)
{
	const char *env = getenv("HTAM_TASKS");

	return env && *env ? xstrdup(env) : data_dir(NULL, "tasks", NULL);
}

json_t *
task_load(const char *dir, char *err, size_t errlen)
{
	char *path = xasprintf("%s/task.json", dir), *refpath = NULL, *src = NULL;
	const char *file, *base;
	json_error_t je;
	json_t *task, *ref;
	char e[768];

	task = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!task) {
		snprintf(err, errlen, "%s: line %d, column %d: %s", path, je.line,
			je.column, je.text);
		goto fail;
	}
	if (!json_is_object(task)) {
		snprintf(err, errlen, "%s: expected a JSON object", path);
		goto fail;
	}
	base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	if (json_is_string(json_object_get(task, "id")) &&
	    strcspn(base, "/") == strlen(base) &&
	    strcmp(json_string_value(json_object_get(task, "id")), base) != 0) {
		snprintf(err, errlen, "%s: id \"%s\" is not the folder's name \"%s\"", path,
			json_string_value(json_object_get(task, "id")), base);
		goto fail;
	}
	ref = json_object_get(task, "reference");
	file = json_string_value(json_object_get(ref, "file"));
	if (!json_is_object(ref) || !file || !*file || strchr(file, '/')) {
		snprintf(err, errlen, "%s: reference.file: expected the name of a file "
			"beside task.json", path);
		goto fail;
	}
	refpath = xasprintf("%s/%s", dir, file);
	if (!(src = read_file(refpath, NULL))) {
		snprintf(err, errlen, "%s: %s", refpath, strerror(errno));
		goto fail;
	}
	json_object_set_new(ref, "source", json_string(src));
	if (!json_object_get(ref, "source")) {
		snprintf(err, errlen, "%s: not valid UTF-8 text", refpath);
		goto fail;
	}
	if (task_validate(task, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "%s: %s", path, e);
		goto fail;
	}
	free(src);
	free(refpath);
	free(path);
	return task;
fail:
	free(src);
	free(refpath);
	free(path);
	json_decref(task);
	return NULL;
}

int
task_tensor_count(const json_t *tensor, const json_t *sizes, int64_t *count,
	char *err, size_t errlen)
{
	const json_t *shape = json_object_get(tensor, "shape"), *dim;
	int64_t n = 1, x;
	size_t i;

	if (!json_is_array(shape)) {
		snprintf(err, errlen, "shape: expected an array");
		return -1;
	}
	json_array_foreach(shape, i, dim) {
		if (expr_eval_json(dim, sizes, &x, err, errlen) < 0)
			return -1;
		if (x < 1) {
			snprintf(err, errlen, "dimension %zu is %lld", i, (long long)x);
			return -1;
		}
		if (__builtin_mul_overflow(n, x, &n) || n > INT64_MAX / 8) {
			snprintf(err, errlen, "element count overflows");
			return -1;
		}
	}
	*count = n;
	return 0;
}

int
task_cost(const json_t *task, const json_t *sizes, int64_t *bytes,
	int64_t *flops, char *err, size_t errlen)
{
	char e[256];

	if (expr_eval_json(json_object_get(task, "bytes"), sizes, bytes, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "bytes: %s", e);
		return -1;
	}
	if (expr_eval_json(json_object_get(task, "flops"), sizes, flops, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "flops: %s", e);
		return -1;
	}
	return 0;
}

double
task_floor_us(int64_t bytes, int64_t flops, double bytes_per_s,
	double flops_per_s)
{
	double tb = bytes_per_s > 0 ? (double)bytes / bytes_per_s : 0;
	double tf = flops_per_s > 0 ? (double)flops / flops_per_s : 0;

	return 1e6 * (tb > tf ? tb : tf);
}

const char *
task_bound(const json_t *task)
{
	int64_t bytes, flops;
	char e[256];
	double floor;

	if (task_cost(task, json_object_get(task, "params"), &bytes, &flops, e,
	    sizeof(e)) < 0)
		return "memory";
	floor = task_floor_us(bytes, flops, H200_COPY_BYTES_PER_S,
		H200_FP32_FLOPS_PER_S);
	if (floor < 10)
		return "latency";
	if ((double)flops / H200_FP32_FLOPS_PER_S > (double)bytes / H200_COPY_BYTES_PER_S)
		return "compute";
	return "memory";
}

int
task_plan_check(const json_t *plan, const json_t *task, const json_t *defines,
	char *err, size_t errlen)
{
	json_t *sets = task_sizes(task), *sizes, *vars;
	struct plan *p = xmalloc(sizeof(*p));
	char e[512];
	size_t i;
	int rc = 0;

	json_array_foreach(sets, i, sizes) {
		if (!(vars = plan_vars(sizes, defines, err, errlen))) {
			rc = -1;
			break;
		}
		rc = plan_eval(plan, task, vars, p, e, sizeof(e));
		json_decref(vars);
		if (rc < 0) {
			char *s = json_dumps(sizes, JSON_COMPACT | JSON_SORT_KEYS);
			if (i == 0)
				errf(err, errlen, "%s", e);
			else
				errf(err, errlen, "at sizes %s: %s", s ? s : "?", e);
			free(s);
			break;
		}
	}
	free(p);
	json_decref(sets);
	return rc;
}
