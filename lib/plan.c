/* plan.c: launch plans evaluated into numbers for one set of sizes (plan.h). */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "jsonl.h"
#include "plan.h"
#include "util.h"

static const struct { const char *name; size_t size; } dtypes[] = {
	[DT_F32] = { "f32", 4 },
	[DT_F64] = { "f64", 8 },
	[DT_I32] = { "i32", 4 },
	[DT_I64] = { "i64", 8 },
	[DT_F16] = { "f16", 2 },
	[DT_BF16] = { "bf16", 2 },
	[DT_BOOL] = { "bool", 1 },
};

int
dtype_parse(const char *s, enum dtype *dt)
{
	for (size_t i = 0; i < LEN(dtypes); i++)
		if (s && strcmp(s, dtypes[i].name) == 0) {
			*dt = (enum dtype)i;
			return 0;
		}
	return -1;
}

const char *
dtype_name(enum dtype dt)
{
	return dtypes[dt].name;
}

size_t
dtype_size(enum dtype dt)
{
	return dtypes[dt].size;
}

/* A C identifier of at most max-1 characters. */
static int
is_ident(const char *s, size_t max)
{
	return is_c_identifier(s) && strlen(s) < max;
}

/* Evaluates an expression member, prefixing errors with where it is. */
static int
eval_at(const json_t *v, const json_t *vars, int64_t *out, const char *where,
	char *err, size_t errlen)
{
	char e[256];

	if (expr_eval_json(v, vars, out, e, sizeof(e)) < 0)
		return errf(err, errlen, "%s: %s", where, e);
	return 0;
}

/* grid, block or cluster: one value, or an array of one to three. */
static int
eval_dims(const json_t *v, const json_t *vars, int64_t dims[3],
	const char *where, char *err, size_t errlen)
{
	char at[96];

	dims[0] = dims[1] = dims[2] = 1;
	if (!json_is_array(v)) {
		snprintf(at, sizeof(at), "%s", where);
		return eval_at(v, vars, &dims[0], at, err, errlen);
	}
	if (json_array_size(v) < 1 || json_array_size(v) > 3)
		return errf(err, errlen, "%s: expected one to three dimensions", where);
	for (size_t i = 0; i < json_array_size(v); i++) {
		snprintf(at, sizeof(at), "%s[%zu]", where, i);
		if (eval_at(json_array_get(v, i), vars, &dims[i], at, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Is name an input or output of the task, or a workspace buffer so far? */
static int
is_buffer(const json_t *task, const struct plan *p, const char *name)
{
	const char *lists[] = { "inputs", "outputs" };
	size_t i;
	const json_t *t;

	for (size_t l = 0; l < LEN(lists); l++)
		json_array_foreach(json_object_get(task, lists[l]), i, t)
			if (strcmp(json_string_value(json_object_get(t, "name")) ?
				json_string_value(json_object_get(t, "name")) : "", name) == 0)
				return 1;
	for (int w = 0; w < p->nworkspace; w++)
		if (strcmp(p->workspace[w].name, name) == 0)
			return 1;
	return 0;
}

static int
eval_workspace(const json_t *ws, const json_t *task, const json_t *vars,
	struct plan *p, char *err, size_t errlen)
{
	size_t i;
	const json_t *b;
	char at[64];

	if (!ws)
		return 0;
	if (!json_is_array(ws))
		return errf(err, errlen, "workspace: expected an array");
	if (json_array_size(ws) > PLAN_MAX_WORKSPACE)
		return errf(err, errlen, "workspace: more than %d buffers",
			PLAN_MAX_WORKSPACE);
	json_array_foreach(ws, i, b) {
		struct plan_buffer *pb = &p->workspace[p->nworkspace];
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *dt = json_string_value(json_object_get(b, "dtype"));

		if (!json_is_object(b))
			return errf(err, errlen, "workspace[%zu]: expected an object", i);
		if (!is_ident(name, PLAN_NAME_MAX))
			return errf(err, errlen, "workspace[%zu].name: expected a C identifier", i);
		if (is_buffer(task, p, name))
			return errf(err, errlen, "workspace[%zu].name: '%s' is already a buffer", i, name);
		if (dtype_parse(dt, &pb->dtype) < 0)
			return errf(err, errlen, "workspace[%zu].dtype: expected " DTYPE_NAMES, i);
		snprintf(at, sizeof(at), "workspace[%zu].count", i);
		if (!json_object_get(b, "count"))
			return errf(err, errlen, "%s: missing", at);
		if (eval_at(json_object_get(b, "count"), vars, &pb->count, at, err, errlen) < 0)
			return -1;
		if (pb->count < 1 || pb->count > (INT64_MAX / 8))
			return errf(err, errlen, "%s: %lld elements is out of range",
				at, (long long)pb->count);
		snprintf(pb->name, sizeof(pb->name), "%s", name);
		p->nworkspace++;
	}
	return 0;
}

/* One arg: a buffer name or a typed scalar (i32:, i64:, f32:, f64:). */
static int
eval_arg(const char *s, const json_t *task, const json_t *vars,
	struct plan *p, struct plan_arg *a, const char *at, char *err,
	size_t errlen)
{
	static const struct { const char *prefix; enum arg_kind kind; } kinds[] = {
		{ "i32:", ARG_I32 }, { "i64:", ARG_I64 },
		{ "f32:", ARG_F32 }, { "f64:", ARG_F64 },
	};
	char e[256];

	for (size_t k = 0; k < LEN(kinds); k++) {
		if (strncmp(s, kinds[k].prefix, 4) != 0)
			continue;
		a->kind = kinds[k].kind;
		if (a->kind == ARG_I32 || a->kind == ARG_I64) {
			if (expr_eval(s + 4, vars, &a->i, e, sizeof(e)) < 0)
				return errf(err, errlen, "%s: %s", at, e);
			if (a->kind == ARG_I32 && (a->i < INT32_MIN || a->i > INT32_MAX))
				return errf(err, errlen, "%s: %lld does not fit i32",
					at, (long long)a->i);
			return 0;
		}
		if (parse_double(s + 4, &a->f) < 0)
			return errf(err, errlen, "%s: '%s' is not a finite number", at, s + 4);
		if (a->kind == ARG_F32 && fabs(a->f) > FLT_MAX)
			return errf(err, errlen, "%s: %s does not fit f32", at, s + 4);
		return 0;
	}
	if (!is_buffer(task, p, s))
		return errf(err, errlen, "%s: '%s' is neither a buffer of the task or "
			"workspace nor a typed scalar (i32:, i64:, f32:, f64:)", at, s);
	a->kind = ARG_BUFFER;
	snprintf(a->buffer, sizeof(a->buffer), "%s", s);
	return 0;
}

static int
eval_launch(const json_t *l, size_t i, const json_t *task, const json_t *vars,
	struct plan *p, char *err, size_t errlen)
{
	struct plan_launch *pl = &p->launch[i];
	const char *kernel = json_string_value(json_object_get(l, "kernel"));
	const json_t *args = json_object_get(l, "args"), *arg;
	char at[96];
	size_t j;

	if (!json_is_object(l))
		return errf(err, errlen, "launches[%zu]: expected an object", i);
	if (!is_ident(kernel, sizeof(pl->kernel)))
		return errf(err, errlen, "launches[%zu].kernel: expected a C identifier", i);
	snprintf(pl->kernel, sizeof(pl->kernel), "%s", kernel);
	if (!json_object_get(l, "grid") || !json_object_get(l, "block"))
		return errf(err, errlen, "launches[%zu]: grid and block are required", i);
	snprintf(at, sizeof(at), "launches[%zu].grid", i);
	if (eval_dims(json_object_get(l, "grid"), vars, pl->grid, at, err, errlen) < 0)
		return -1;
	snprintf(at, sizeof(at), "launches[%zu].block", i);
	if (eval_dims(json_object_get(l, "block"), vars, pl->block, at, err, errlen) < 0)
		return -1;
	pl->cluster[0] = pl->cluster[1] = pl->cluster[2] = 1;
	snprintf(at, sizeof(at), "launches[%zu].cluster", i);
	if (json_object_get(l, "cluster") &&
	    eval_dims(json_object_get(l, "cluster"), vars, pl->cluster, at, err, errlen) < 0)
		return -1;
	pl->smem = 0;
	snprintf(at, sizeof(at), "launches[%zu].smem", i);
	if (json_object_get(l, "smem") &&
	    eval_at(json_object_get(l, "smem"), vars, &pl->smem, at, err, errlen) < 0)
		return -1;
	for (int d = 0; d < 3; d++) {
		static const int64_t gmax[3] = { INT32_MAX, 65535, 65535 };
		static const int64_t bmax[3] = { 1024, 1024, 64 };
		const char *axis = "xyz" + d;
		if (pl->grid[d] < 1 || pl->grid[d] > gmax[d])
			return errf(err, errlen, "launches[%zu].grid: %c = %lld is outside 1..%lld",
				i, *axis, (long long)pl->grid[d], (long long)gmax[d]);
		if (pl->block[d] < 1 || pl->block[d] > bmax[d])
			return errf(err, errlen, "launches[%zu].block: %c = %lld is outside 1..%lld",
				i, *axis, (long long)pl->block[d], (long long)bmax[d]);
		if (pl->cluster[d] < 1 || pl->cluster[d] > 16)
			return errf(err, errlen, "launches[%zu].cluster: %c = %lld is outside 1..16",
				i, *axis, (long long)pl->cluster[d]);
		if (pl->grid[d] % pl->cluster[d] != 0)
			return errf(err, errlen, "launches[%zu]: grid %c = %lld is not a multiple "
				"of the cluster's %lld", i, *axis, (long long)pl->grid[d],
				(long long)pl->cluster[d]);
	}
	if (pl->block[0] * pl->block[1] * pl->block[2] > 1024)
		return errf(err, errlen, "launches[%zu].block: %lld threads is more than 1024",
			i, (long long)(pl->block[0] * pl->block[1] * pl->block[2]));
	if (pl->cluster[0] * pl->cluster[1] * pl->cluster[2] > 16)
		return errf(err, errlen, "launches[%zu].cluster: more than 16 blocks", i);
	if (pl->smem < 0 || pl->smem > INT32_MAX)
		return errf(err, errlen, "launches[%zu].smem: %lld bytes is out of range",
			i, (long long)pl->smem);
	if (!json_is_array(args))
		return errf(err, errlen, "launches[%zu].args: expected an array", i);
	if (json_array_size(args) > PLAN_MAX_ARGS)
		return errf(err, errlen, "launches[%zu].args: more than %d", i, PLAN_MAX_ARGS);
	pl->nargs = 0;
	json_array_foreach(args, j, arg) {
		snprintf(at, sizeof(at), "launches[%zu].args[%zu]", i, j);
		if (!json_is_string(arg))
			return errf(err, errlen, "%s: expected a string", at);
		if (eval_arg(json_string_value(arg), task, vars, p, &pl->args[j], at,
		    err, errlen) < 0)
			return -1;
		pl->nargs++;
	}
	return 0;
}

int
plan_eval(const json_t *plan, const json_t *task, const json_t *vars,
	struct plan *out, char *err, size_t errlen)
{
	static const char *const known[] = { "launches", "workspace", NULL };
	const json_t *launches = json_object_get(plan, "launches"), *l;
	const char *unknown;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(plan))
		return errf(err, errlen, "expected a launch plan object");
	if (!json_is_array(launches) || json_array_size(launches) == 0)
		return errf(err, errlen, "launches: expected a non-empty array");
	if (json_array_size(launches) > PLAN_MAX_LAUNCHES)
		return errf(err, errlen, "launches: more than %d", PLAN_MAX_LAUNCHES);
	if ((unknown = json_unknown_member(plan, known)))
		return errf(err, errlen, "unknown member '%s' (launches, workspace)",
			unknown);
	if (eval_workspace(json_object_get(plan, "workspace"), task, vars, out,
	    err, errlen) < 0)
		return -1;
	json_array_foreach(launches, i, l) {
		if (eval_launch(l, i, task, vars, out, err, errlen) < 0)
			return -1;
		out->nlaunch++;
	}
	return 0;
}

json_t *
plan_vars(const json_t *sizes, const json_t *defines, char *err, size_t errlen)
{
	json_t *vars = json_object();
	const char *k;
	json_t *v;

	if (sizes)
		json_object_foreach((json_t *)sizes, k, v)
			json_object_set(vars, k, v);
	if (defines)
		json_object_foreach((json_t *)defines, k, v) {
			if (json_object_get(vars, k)) {
				errf(err, errlen, "knob '%s' has the name of a size", k);
				json_decref(vars);
				return NULL;
			}
			json_object_set(vars, k, v);
		}
	return vars;
}

int
plan_match_params(const struct plan *p, plan_params_fn fn, void *ctx, char *err,
	size_t errlen)
{
	static const char *const kind[] = { [ARG_BUFFER] = "the buffer",
		[ARG_I32] = "i32", [ARG_I64] = "i64", [ARG_F32] = "f32", [ARG_F64] = "f64" };
	static const size_t width[] = { [ARG_BUFFER] = 8, [ARG_I32] = 4,
		[ARG_I64] = 8, [ARG_F32] = 4, [ARG_F64] = 8 };
	size_t sizes[PLAN_MAX_ARGS + 1];

	for (int i = 0; i < p->nlaunch; i++) {
		const struct plan_launch *l = &p->launch[i];
		int n = fn(ctx, l->kernel, sizes, PLAN_MAX_ARGS + 1);
		if (n < 0)
			continue;
		if (n != l->nargs)
			return errf(err, errlen, "launches[%d] (%s): the kernel takes %d "
				"parameter%s but the plan passes %d arg%s", i, l->kernel, n,
				n == 1 ? "" : "s", l->nargs, l->nargs == 1 ? "" : "s");
		for (int a = 0; a < n; a++) {
			const struct plan_arg *pa = &l->args[a];
			if (sizes[a] != 4 && sizes[a] != 8)
				return errf(err, errlen, "launches[%d] (%s): parameter %d of "
					"the kernel is %zu bytes, which no plan arg can fill "
					"(args are 4 or 8 bytes)", i, l->kernel, a, sizes[a]);
			if (sizes[a] != width[pa->kind])
				return errf(err, errlen, "launches[%d] (%s): args[%d] is %s%s%s "
					"(%zu bytes) but parameter %d of the kernel is %zu bytes",
					i, l->kernel, a, kind[pa->kind],
					pa->kind == ARG_BUFFER ? " " : "",
					pa->kind == ARG_BUFFER ? pa->buffer : "",
					width[pa->kind], a, sizes[a]);
		}
	}
	return 0;
}

json_t *
plan_kernels(const json_t *plan)
{
	const json_t *launches = json_object_get(plan, "launches"), *l, *k;
	json_t *names;
	size_t i, j;

	if (!json_is_array(launches))
		return NULL;
	names = json_array();
	json_array_foreach(launches, i, l) {
		const json_t *name = json_object_get(l, "kernel");
		int seen = 0;
		if (!json_is_string(name))
			continue;
		json_array_foreach(names, j, k)
			seen |= json_equal((json_t *)k, (json_t *)name);
		if (!seen)
			json_array_append(names, (json_t *)name);
	}
	return names;
}

json_t *
plan_json(const struct plan *p)
{
	static const char *const kinds[] = { "buffer", "i32", "i64", "f32", "f64" };
	json_t *launches = json_array(), *ws = json_array();

	for (int i = 0; i < p->nlaunch; i++) {
		const struct plan_launch *l = &p->launch[i];
		json_t *args = json_array();
		for (int a = 0; a < l->nargs; a++) {
			const struct plan_arg *pa = &l->args[a];
			json_array_append_new(args, pa->kind == ARG_BUFFER
				? json_pack("{ss ss}", "kind", kinds[pa->kind], "buffer", pa->buffer)
				: pa->kind == ARG_I32 || pa->kind == ARG_I64
				? json_pack("{ss sI}", "kind", kinds[pa->kind], "value", (json_int_t)pa->i)
				: json_pack("{ss sf}", "kind", kinds[pa->kind], "value", pa->f));
		}
		json_array_append_new(launches, json_pack("{ss s[III] s[III] s[III] sI so}",
			"kernel", l->kernel, "grid", (json_int_t)l->grid[0], (json_int_t)l->grid[1],
			(json_int_t)l->grid[2], "block", (json_int_t)l->block[0],
			(json_int_t)l->block[1], (json_int_t)l->block[2], "cluster",
			(json_int_t)l->cluster[0], (json_int_t)l->cluster[1], (json_int_t)l->cluster[2],
			"smem", (json_int_t)l->smem, "args", args));
	}
	for (int w = 0; w < p->nworkspace; w++)
		json_array_append_new(ws, json_pack("{ss ss sI}", "name", p->workspace[w].name,
			"dtype", dtype_name(p->workspace[w].dtype), "count",
			(json_int_t)p->workspace[w].count));
	return json_pack("{so so}", "launches", launches, "workspace", ws);
}
