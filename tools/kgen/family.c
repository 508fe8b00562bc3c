/* family.c: the template families of kgen's rules backend: a family file
 * (tools/kgen/templates/<family>.json, docs/templates.md) loaded and
 * checked, what a task's spec and sizes ask of a family and its variants,
 * and the knobs' domains. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "die.h"
#include "expr.h"
#include "jsonl.h"
#include "plan.h"
#include "task.h"
#include "util.h"
#include "rules.h"

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- the family files ---- */

char *
rules_templates_dir(const char *dir)
{
	return dir ? xstrdup(dir) : data_dir("HTAM_TEMPLATES", "tools/kgen/templates", NULL);
}

json_t *
rules_families(const char *dir)
{
	json_t *names = json_array();
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, i, len;
	DIR *d = opendir(dir);

	if (!d)
		return names;
	while ((e = readdir(d)) != NULL) {
		len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = xasprintf("%.*s", (int)(len - 5), e->d_name);
		}
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++) {
		json_array_append_new(names, json_string(v[i]));
		free(v[i]);
	}
	free(v);
	return names;
}

/* A size bound of a constraint: an integer or an expression string. */
static int
is_bound(const json_t *v)
{
	return json_is_integer(v) || json_is_string(v);
}

/* Checks one knob: {"values": [ascending distinct integers], "default": one
 * of them}. */
static int
check_knob(const char *where, const char *name, const json_t *knob,
	char *err, size_t errlen)
{
	static const char *const known[] = { "values", "default", "why", NULL };
	const json_t *vals = json_object_get(knob, "values"), *def, *v;
	const char *u;
	json_int_t prev = 0;
	size_t i;
	int found = 0;

	if (!json_is_object(knob))
		return errf(err, errlen, "%s.knobs.%s: expected an object", where, name);
	if ((u = json_unknown_member(knob, known)))
		return errf(err, errlen, "%s.knobs.%s: unknown member '%s'", where, name, u);
	if (!json_is_array(vals) || json_array_size(vals) == 0)
		return errf(err, errlen, "%s.knobs.%s.values: expected a non-empty "
			"array of integers", where, name);
	json_array_foreach(vals, i, v) {
		if (!json_is_integer(v) || (i && json_integer_value(v) <= prev))
			return errf(err, errlen, "%s.knobs.%s.values: expected "
				"ascending distinct integers", where, name);
		prev = json_integer_value(v);
	}
	def = json_object_get(knob, "default");
	json_array_foreach(vals, i, v)
		found |= json_equal((json_t *)v, (json_t *)def);
	if (!found)
		return errf(err, errlen, "%s.knobs.%s.default: not one of its values",
			where, name);
	return 0;
}

/* reals (of a family or a variant): the float storage types it serves, a
 * non-empty array of f32, f16 and bf16; absent means f32 alone. */
static int
check_reals(const char *where, const json_t *reals, char *err, size_t errlen)
{
	const json_t *r;
	const char *s;
	size_t i;

	if (!reals)
		return 0;
	if (!json_is_array(reals) || json_array_size(reals) == 0)
		return errf(err, errlen, "%s.reals: expected an array of f32, f16, bf16", where);
	json_array_foreach(reals, i, r) {
		s = json_string_value(r);
		if (!s || (strcmp(s, "f32") && strcmp(s, "f16") && strcmp(s, "bf16")))
			return errf(err, errlen, "%s.reals[%zu]: expected f32, f16 or bf16",
				where, i);
	}
	return 0;
}

/* starts (optional): the configurations a task begins from by its shape,
 * an array of {"when": size expression, "variant": a variant of vars,
 * "set": {knob: a value of its domain}, "why": text}, tried in order before
 * the default. */
static int
check_starts(const char *file, const json_t *starts, const json_t *vars,
	char *err, size_t errlen)
{
	static const char *const known[] = { "when", "variant", "set", "why", NULL };
	const json_t *st, *set, *v, *knob, *knobs;
	const char *u, *var, *kn;
	size_t i;

	if (!starts)
		return 0;
	if (!json_is_array(starts))
		return errf(err, errlen, "%s: starts: expected an array", file);
	json_array_foreach(starts, i, st) {
		if (!json_is_object(st))
			return errf(err, errlen, "%s: starts[%zu]: expected an object", file, i);
		if ((u = json_unknown_member(st, known)))
			return errf(err, errlen, "%s: starts[%zu]: unknown member '%s'",
				file, i, u);
		if (!json_is_string(json_object_get(st, "when")) ||
		    !json_is_string(json_object_get(st, "why")))
			return errf(err, errlen, "%s: starts[%zu]: expected when (a size "
				"expression) and why strings", file, i);
		var = json_string_value(json_object_get(st, "variant"));
		if (!var || !json_object_get(vars, var))
			return errf(err, errlen, "%s: starts[%zu].variant: expected the "
				"name of a variant", file, i);
		knobs = json_object_get(json_object_get(vars, var), "knobs");
		set = json_object_get(st, "set");
		if (set && !json_is_object(set))
			return errf(err, errlen, "%s: starts[%zu].set: expected an object "
				"of knob values", file, i);
		json_object_foreach((json_t *)set, kn, v) {
			if (!(knob = json_object_get(knobs, kn)))
				return errf(err, errlen, "%s: starts[%zu].set.%s: variant %s "
					"has no such knob", file, i, kn, var);
			if (!json_is_integer(v) || !rules_in_domain(knob, json_integer_value(v)))
				return errf(err, errlen, "%s: starts[%zu].set.%s: expected "
					"a value of its domain", file, i, kn);
		}
	}
	return 0;
}

/* Appends the text of file (a name beside the family file) to *all. */
static int
append_file(const char *dir, const char *file, const char *where, char **all,
	char *err, size_t errlen)
{
	char *path = xasprintf("%s/%s", dir, file), *text = read_file(path, NULL), *both;

	if (!text) {
		errf(err, errlen, "%s: cannot read %s", where, path);
		free(path);
		return -1;
	}
	free(path);
	both = xasprintf("%s%s%s", *all, **all ? "\n" : "", text);
	free(*all);
	free(text);
	*all = both;
	return 0;
}

/* Checks one variant of a family and reads its source into source_text:
 * the storage type's prelude (RULES_PRELUDE), the headers it includes (in
 * their order), then its source. */
static int
load_variant(const char *dir, const char *file, const char *name, json_t *v,
	char *err, size_t errlen)
{
	static const char *const known[] = { "source", "kernels", "knobs",
		"constraints", "launch", "when", "ops", "takes", "reals", "doc",
		"includes", NULL };
	static const char *const cknown[] = { "expr", "min", "max",
		"multiple_of", "why", NULL };
	const json_t *knobs = json_object_get(v, "knobs"), *c, *k;
	const char *src = json_string_value(json_object_get(v, "source")), *u, *kn;
	char where[256], at[300], *all, *own = NULL, *both;
	size_t i;

	snprintf(where, sizeof(where), "%s: variants.%s", file, name);
	if (!json_is_object(v))
		return errf(err, errlen, "%s: expected an object", where);
	if ((u = json_unknown_member(v, known)))
		return errf(err, errlen, "%s: unknown member '%s'", where, u);
	if (!src || strchr(src, '/'))
		return errf(err, errlen, "%s.source: expected a file name beside "
			"the family file", where);
	if (!json_is_object(knobs))
		return errf(err, errlen, "%s.knobs: expected an object", where);
	json_object_foreach((json_t *)knobs, kn, k)
		if (check_knob(where, kn, k, err, errlen) < 0)
			return -1;
	c = json_object_get(v, "constraints");
	if (c && !json_is_array(c))
		return errf(err, errlen, "%s.constraints: expected an array", where);
	json_array_foreach(c, i, k) {
		if ((u = json_unknown_member(k, cknown)))
			return errf(err, errlen, "%s.constraints[%zu]: unknown member "
				"'%s'", where, i, u);
		if (!json_is_string(json_object_get(k, "expr")) ||
		    !json_is_string(json_object_get(k, "why")))
			return errf(err, errlen, "%s.constraints[%zu]: expected expr "
				"and why strings", where, i);
		if (!is_bound(json_object_get(k, "min")) &&
		    !is_bound(json_object_get(k, "max")) &&
		    !is_bound(json_object_get(k, "multiple_of")))
			return errf(err, errlen, "%s.constraints[%zu]: expected min, "
				"max or multiple_of", where, i);
	}
	if (json_object_get(v, "when") && !json_is_string(json_object_get(v, "when")))
		return errf(err, errlen, "%s.when: expected a size expression", where);
	if (json_object_get(v, "ops") && !json_is_array(json_object_get(v, "ops")))
		return errf(err, errlen, "%s.ops: expected an array of strings", where);
	c = json_object_get(v, "takes");
	if (c && (!json_is_array(c) || json_array_size(c) == 0))
		return errf(err, errlen, "%s.takes: expected an array of op kinds (fold, "
			"apply, keep, softmax, stat)", where);
	json_array_foreach(c, i, k) {
		kn = json_string_value(k);
		if (!kn || (strcmp(kn, "fold") && strcmp(kn, "apply") && strcmp(kn, "keep") &&
		    strcmp(kn, "softmax") && strcmp(kn, "stat")))
			return errf(err, errlen, "%s.takes[%zu]: expected fold, apply, keep, "
				"softmax or stat", where, i);
	}
	if (check_reals(where, json_object_get(v, "reals"), err, errlen) < 0)
		return -1;
	if (!json_is_array(json_object_get(json_object_get(v, "launch"), "launches")))
		return errf(err, errlen, "%s.launch: expected a launch plan", where);
	c = json_object_get(v, "includes");
	if (c && !json_is_array(c))
		return errf(err, errlen, "%s.includes: expected an array of file names", where);
	json_array_foreach(c, i, k)
		if (!json_is_string(k) || strchr(json_string_value(k), '/'))
			return errf(err, errlen, "%s.includes[%zu]: expected a file name "
				"beside the family file", where, i);
	/* the source first, so that a missing one is named as such */
	all = xstrdup("");
	snprintf(at, sizeof(at), "%s.source", where);
	if (append_file(dir, src, at, &all, err, errlen) < 0)
		goto fail;
	own = all;
	all = xstrdup("");
	if (append_file(dir, RULES_PRELUDE, where, &all, err, errlen) < 0)
		goto fail;
	json_array_foreach(c, i, k)
		if (append_file(dir, json_string_value(k), where, &all, err, errlen) < 0)
			goto fail;
	both = xasprintf("%s\n%s", all, own);
	free(all);
	free(own);
	all = both;
	json_object_set_new(v, "source_text", json_string(all));
	free(all);
	if (!json_is_string(json_object_get(v, "source_text")))
		return errf(err, errlen, "%s.source: %s or what it includes is not "
			"UTF-8 text", where, src);
	return 0;
fail:
	free(all);
	free(own);
	return -1;
}

/* ---- reductions as expressions ---- */

/* The most folds a spec member of kind "ops" holds (row_reduce's terms). */
#define OPS_MAX 4

/* An expression of an op is pasted into the family's source as a macro
 * body: one C expression over its variables (x, a, b, v, n; a family may
 * bind more, as global_reduce the inputs' names), with no room
 * for a statement, a directive, a string or a comment, its parentheses
 * balanced so that it stays inside the macro's own. OP_EXPR_RULE says so
 * in messages. */
#define OP_EXPR_MAX 1000
#define OP_EXPR_RULE "one C expression of at most 1000 characters (letters, " \
	"digits, spaces, _ . + - * / %% ( ) < > = ! & | ^ ~ ? : ,; parentheses balanced)"

static int
op_expr_ok(const char *s)
{
	size_t n = strlen(s), i;
	int depth = 0;

	if (n == 0 || n > OP_EXPR_MAX || strstr(s, "/*") || strstr(s, "//"))
		return 0;
	for (i = 0; i < n; i++) {
		if (!(isalnum((unsigned char)s[i]) || strchr("_ .+-*/%()<>=!&|^~?:,", s[i])))
			return 0;
		depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
		if (depth < 0)
			return 0;
	}
	return depth == 0;
}

/* Checks one op, {"map", "combine", "identity", "finalize"} (a fold), a
 * fold with "apply" (each value x of the input then becomes apply(x, v), v
 * the fold's result), {"keep": "max"|"min", "result": "value"|"index",
 * "map"} (index-keeping), or {"stat": "softmax", "apply"} (a row's max m
 * and sum of exponentials s, applied to each value) or {"stat": "softmax",
 * "finalize"} (the reduction's result, of m and s: logsumexp); where names
 * the op in messages. */
static int
check_op(const char *where, const json_t *op, char *err, size_t errlen)
{
	static const char *const known[] = { "map", "combine", "identity",
		"finalize", "apply", "keep", "result", "stat", "doc", NULL };
	static const char *const exprs[] = { "map", "combine", "identity",
		"finalize", "apply", NULL };
	const json_t *keep = json_object_get(op, "keep");
	const json_t *stat = json_object_get(op, "stat");
	const char *u, *ks, *rs;
	int i;

	if (!json_is_object(op))
		return errf(err, errlen, "%s: expected an object", where);
	if ((u = json_unknown_member(op, known)))
		return errf(err, errlen, "%s: unknown member '%s'", where, u);
	for (i = 0; exprs[i]; i++) {
		const json_t *e = json_object_get(op, exprs[i]);
		if (e && !(json_is_string(e) && op_expr_ok(json_string_value(e))))
			return errf(err, errlen, "%s.%s: expected " OP_EXPR_RULE, where,
				exprs[i]);
	}
	if (stat) {
		if (!json_is_string(stat) || strcmp(json_string_value(stat), "softmax"))
			return errf(err, errlen, "%s.stat: expected \"softmax\" (the row's "
				"max and sum of exponentials; a fold states map, combine, "
				"identity and finalize instead)", where);
		for (i = 0; exprs[i]; i++)
			if (strcmp(exprs[i], "apply") && strcmp(exprs[i], "finalize") &&
			    json_object_get(op, exprs[i]))
				return errf(err, errlen, "%s: a softmax statistic takes no %s",
					where, exprs[i]);
		if (keep || !json_object_get(op, "apply") == !json_object_get(op, "finalize"))
			return errf(err, errlen, "%s: a softmax statistic takes apply "
				"(of x, m, s, e, rs, ls: each value of the row) or finalize "
				"(of m and s: the row's one result), and no keep", where);
		return 0;
	}
	if (keep) {
		ks = json_string_value(keep);
		rs = json_string_value(json_object_get(op, "result"));
		if (!ks || (strcmp(ks, "max") && strcmp(ks, "min")))
			return errf(err, errlen, "%s.keep: expected \"max\" or \"min\"", where);
		if (!rs || (strcmp(rs, "value") && strcmp(rs, "index")))
			return errf(err, errlen, "%s.result: expected \"value\" or \"index\"", where);
		if (json_object_get(op, "combine") || json_object_get(op, "identity") ||
		    json_object_get(op, "finalize") || json_object_get(op, "apply"))
			return errf(err, errlen, "%s: an op that keeps the %s takes no combine, "
				"identity, finalize or apply", where, ks);
		return 0;
	}
	if (json_object_get(op, "result"))
		return errf(err, errlen, "%s.result: only an op that keeps a maximum or a "
			"minimum has one", where);
	if (!json_object_get(op, "combine") || !json_object_get(op, "identity"))
		return errf(err, errlen, "%s: a fold needs combine (of a and b) and its "
			"identity (or keep, for a maximum or a minimum)", where);
	return 0;
}

/* A family file's ops: names to ops. */
static int
check_ops(const char *file, const json_t *ops, char *err, size_t errlen)
{
	const char *name;
	const json_t *op;
	char where[256];

	if (!ops)
		return 0;
	if (!json_is_object(ops))
		return errf(err, errlen, "%s: ops: expected an object", file);
	json_object_foreach((json_t *)ops, name, op) {
		snprintf(where, sizeof(where), "%s: ops.%s", file, name);
		if (check_op(where, op, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* The op a task's spec member v names or states, or NULL. */
static const json_t *
op_of(const json_t *family, const json_t *v)
{
	if (json_is_string(v))
		return json_object_get(json_object_get(family, "ops"), json_string_value(v));
	return json_is_object(v) ? v : NULL;
}

/* The kind of an op: "softmax" (a statistic applied to each value),
 * "stat" (a statistic finalized to one result), "keep", "apply" or
 * "fold". */
static const char *
op_kind(const json_t *op)
{
	if (json_object_get(op, "stat"))
		return json_object_get(op, "apply") ? "softmax" : "stat";
	return json_object_get(op, "keep") ? "keep" : json_object_get(op, "apply") ?
		"apply" : "fold";
}

static const char *
op_member(const json_t *op, const char *name, const char *dflt)
{
	const char *s = json_string_value(json_object_get(op, name));
	return s ? s : dflt;
}

/* The members NAME_count and NAME<k>_map, _combine, _identity and
 * _finalize (k < OPS_MAX) of a spec member NAME of kind "ops": the folds
 * given, then ones that are never used (map 0, combine a). */
static void
ops_expand(const json_t *family, json_t *spec, const char *name, const json_t *ops)
{
	static const char *const parts[][2] = { { "map", "0.0f" }, { "combine", "a" },
		{ "identity", "0.0f" }, { "finalize", "v" } };
	char key[160];
	size_t k, j;

	snprintf(key, sizeof(key), "%s_count", name);
	json_object_set_new(spec, key, json_integer((json_int_t)json_array_size(ops)));
	for (k = 0; k < OPS_MAX; k++)
		for (j = 0; j < sizeof(parts) / sizeof(parts[0]); j++) {
			const json_t *op = op_of(family, json_array_get(ops, k));
			const char *dflt = op && j == 0 ? "x" : parts[j][1];
			snprintf(key, sizeof(key), "%s%zu_%s", name, k, parts[j][0]);
			json_object_set_new(spec, key, json_string(op ? op_member(op,
				parts[j][0], dflt) : dflt));
		}
}

json_t *
rules_op_expand(const json_t *family, const json_t *task)
{
	const json_t *decl = json_object_get(family, "spec"), *kind, *op;
	const char *name;
	json_t *t = NULL, *spec;

	json_object_foreach((json_t *)decl, name, kind) {
		if (json_is_string(kind) && strcmp(json_string_value(kind), "ops") == 0) {
			const json_t *ops = json_object_get(json_object_get(task, "spec"), name);
			if (!json_is_array(ops))
				continue;
			if (!t)
				t = json_deep_copy(task);
			ops_expand(family, json_object_get(t, "spec"), name, ops);
			continue;
		}
		if (!json_is_string(kind) || strcmp(json_string_value(kind), "op"))
			continue;
		if (!(op = op_of(family, json_object_get(json_object_get(task, "spec"), name))))
			continue;
		if (!t)
			t = json_deep_copy(task);
		spec = json_object_get(t, "spec");
		const char *keep = json_string_value(json_object_get(op, "keep"));
		json_object_set_new(spec, "op_keep", json_integer(!keep ? 0 :
			strcmp(keep, "max") == 0 ? 1 : -1));
		json_object_set_new(spec, "op_softmax", json_integer(json_object_get(op,
			"stat") != NULL));
		json_object_set_new(spec, "op_index", json_integer(keep &&
			strcmp(op_member(op, "result", ""), "index") == 0));
		json_object_set_new(spec, "op_map", json_string(op_member(op, "map", "x")));
		json_object_set_new(spec, "op_combine", json_string(op_member(op, "combine", "a")));
		json_object_set_new(spec, "op_identity", json_string(op_member(op, "identity", "0.0f")));
		json_object_set_new(spec, "op_finalize", json_string(op_member(op, "finalize", "v")));
		json_object_set_new(spec, "op_apply", json_string(op_member(op, "apply", "x")));
	}
	return t ? t : json_incref((json_t *)task);
}

json_t *
rules_family_load(const char *dir, const char *family, char *err, size_t errlen)
{
	static const char *const known[] = { "family", "default", "starts",
		"spec", "variants", "ops", "reals", "doc", NULL };
	json_t *f, *vars, *v;
	json_error_t je;
	const char *u, *name, *def;
	char *file;

	for (u = family; *u; u++)
		if (!(isalnum((unsigned char)*u) || *u == '_')) {
			errf(err, errlen, "family '%s': not a family name", family);
			return NULL;
		}
	file = xasprintf("%s/%s.json", dir, family);
	f = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
	if (!f) {
		if (access(file, F_OK) != 0)
			errf(err, errlen, "unknown family '%s': no %s", family, file);
		else
			errf(err, errlen, "%s: line %d, column %d: %s", file, je.line,
				je.column, je.text);
		free(file);
		return NULL;
	}
	vars = json_object_get(f, "variants");
	def = json_string_value(json_object_get(f, "default"));
	if (!json_is_object(f))
		errf(err, errlen, "%s: expected an object", file);
	else if ((u = json_unknown_member(f, known)))
		errf(err, errlen, "%s: unknown member '%s'", file, u);
	else if (!json_is_string(json_object_get(f, "family")) ||
	    strcmp(json_string_value(json_object_get(f, "family")), family) != 0)
		errf(err, errlen, "%s: family: expected \"%s\"", file, family);
	else if (!json_is_object(vars) || json_object_size(vars) == 0)
		errf(err, errlen, "%s: variants: expected a non-empty object", file);
	else if (!def || !json_object_get(vars, def))
		errf(err, errlen, "%s: default: expected the name of a variant", file);
	else if (json_object_get(f, "spec") && !json_is_object(json_object_get(f, "spec")))
		errf(err, errlen, "%s: spec: expected an object", file);
	else if (check_ops(file, json_object_get(f, "ops"), err, errlen) < 0)
		goto fail;
	else if (check_reals(file, json_object_get(f, "reals"), err, errlen) < 0)
		goto fail;
	else {
		json_object_foreach(vars, name, v)
			if (load_variant(dir, file, name, v, err, errlen) < 0)
				goto fail;
		if (check_starts(file, json_object_get(f, "starts"), vars, err, errlen) < 0)
			goto fail;
		json_object_set_new(f, "_dir", json_string(dir));
		free(file);
		return f;
	}
fail:
	free(file);
	json_decref(f);
	return NULL;
}

/* ---- checks ---- */

/* The type a spec member of declared kind must have: "dim" an integer or
 * a string, "integer" (a constant the source is compiled with), "string",
 * "number" and "boolean" theirs, "op" a name or an object, "ops" an array,
 * "expr" a string, an array of allowed values any of its members' types.
 * Returns 1 when v has it. */
static int
spec_type_ok(const json_t *kind, const json_t *v)
{
	const char *ks = json_string_value(kind);
	const json_t *a;
	size_t i;

	if (json_is_array(kind)) {
		json_array_foreach(kind, i, a)
			if (json_typeof(a) == json_typeof(v))
				return 1;
		return 0;
	}
	if (!ks)
		return 1;
	if (strcmp(ks, "dim") == 0)
		return json_is_string(v) || json_is_integer(v);
	if (strcmp(ks, "string") == 0)
		return json_is_string(v);
	if (strcmp(ks, "number") == 0)
		return json_is_number(v);
	if (strcmp(ks, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(ks, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(ks, "op") == 0)
		return json_is_string(v) || json_is_object(v);
	if (strcmp(ks, "ops") == 0)
		return json_is_array(v);
	if (strcmp(ks, "expr") == 0)
		return json_is_string(v);
	return 1;
}

int
rules_spec_types(const json_t *family, const json_t *task, char *err, size_t errlen)
{
	const json_t *spec = json_object_get(task, "spec"), *kind, *v;
	const char *name;

	json_object_foreach((json_t *)json_object_get(family, "spec"), name, kind)
		if ((v = json_object_get(spec, name)) && !spec_type_ok(kind, v))
			return errf(err, errlen, "task.spec.%s: expected %s, as family %s "
				"declares it", name, json_is_array(kind) ? "one of its values"
				: json_string_value(kind), json_string_value(json_object_get(
				family, "family")));
	return 0;
}

/* Checks the task's spec against the family's spec declaration: each
 * member present with the declared kind ("dim": a size expression over the
 * task's params, "integer" (the same at every size), "string", "number",
 * "boolean", "op", "ops" (1 to OPS_MAX folds), "expr" (one expression), or
 * an array of allowed strings). */
int
rules_spec_check(const json_t *family, const json_t *task, char *err, size_t errlen)
{
	const json_t *decl = json_object_get(family, "spec");
	const json_t *spec = json_object_get(task, "spec"), *kind, *v, *a;
	const char *fam = json_string_value(json_object_get(family, "family"));
	const char *id = json_string_value(json_object_get(task, "id"));
	const char *name, *ks;
	char e[RULES_ERR];
	size_t i;
	int ok;

	json_object_foreach((json_t *)decl, name, kind) {
		v = json_object_get(spec, name);
		ks = json_string_value(kind);
		if (!v)
			return errf(err, errlen, "task \"%s\": spec.%s is missing (family "
				"%s needs it: docs/templates.md)", id, name, fam);
		if (json_is_array(kind)) {
			ok = 0;
			json_array_foreach(kind, i, a)
				ok |= json_equal(a, (json_t *)v);
			if (!ok)
				return errf(err, errlen, "task \"%s\": spec.%s: family %s "
					"knows no such value", id, name, fam);
		} else if (ks && strcmp(ks, "op") == 0) {
			char where[128];
			if (json_is_string(v) && !op_of(family, v))
				return errf(err, errlen, "task \"%s\": spec.%s: family %s "
					"knows no op \"%s\" (its ops, or an op of your own: "
					"docs/templates.md)", id, name, fam, json_string_value(v));
			snprintf(where, sizeof(where), "task \"%s\": spec.%s", id, name);
			if (!json_is_string(v) && check_op(where, v, err, errlen) < 0)
				return -1;
		} else if (ks && strcmp(ks, "ops") == 0) {
			char where[160];
			const json_t *o;
			if (!json_is_array(v) || json_array_size(v) < 1 ||
			    json_array_size(v) > OPS_MAX)
				return errf(err, errlen, "task \"%s\": spec.%s: expected an array "
					"of 1 to %d folds", id, name, OPS_MAX);
			json_array_foreach(v, i, o) {
				snprintf(where, sizeof(where), "task \"%s\": spec.%s[%zu]", id,
					name, i);
				if (json_is_string(o) && !op_of(family, o))
					return errf(err, errlen, "%s: family %s knows no op \"%s\"",
						where, fam, json_string_value(o));
				if (!json_is_string(o) && check_op(where, o, err, errlen) < 0)
					return -1;
				if (strcmp(op_kind(op_of(family, o)), "fold"))
					return errf(err, errlen, "%s: expected a fold (map, combine, "
						"identity, finalize)", where);
			}
		} else if (ks && strcmp(ks, "expr") == 0) {
			if (!json_is_string(v) || !op_expr_ok(json_string_value(v)))
				return errf(err, errlen, "task \"%s\": spec.%s: expected "
					OP_EXPR_RULE, id, name);
		} else if (ks && strcmp(ks, "dim") == 0) {
			if (!json_is_string(v) && !json_is_integer(v))
				return errf(err, errlen, "task \"%s\": spec.%s: expected a "
					"size expression", id, name);
			if (json_is_string(v) && expr_check(json_string_value(v),
			    json_object_get(task, "params"), e, sizeof(e)) < 0)
				return errf(err, errlen, "task \"%s\": spec.%s: %s", id,
					name, e);
		} else if (ks && ((strcmp(ks, "string") == 0 && !json_is_string(v)) ||
		    (strcmp(ks, "integer") == 0 && !json_is_integer(v)) ||
		    (strcmp(ks, "number") == 0 && !json_is_number(v)) ||
		    (strcmp(ks, "boolean") == 0 && !json_is_boolean(v))))
			return errf(err, errlen, "task \"%s\": spec.%s: expected %s %s",
				id, name, strcmp(ks, "integer") ? "a" : "an", ks);
	}
	return 0;
}

int
rules_task_real(const json_t *task, enum dtype *dt, char *err, size_t errlen)
{
	const char *lists[] = { "inputs", "outputs" }, *first = NULL;
	const json_t *t;
	enum dtype d;
	size_t i;

	*dt = DT_F32;
	for (int l = 0; l < 2; l++)
		json_array_foreach(json_object_get(task, lists[l]), i, t) {
			if (dtype_parse(json_string_value(json_object_get(t, "dtype")), &d) < 0 ||
			    DTYPE_INTEGRAL(d))
				continue;
			if (first && d != *dt)
				return errf(err, errlen, "its float tensors are of two types (%s "
					"is %s, %s is %s): a family stores one", first,
					dtype_name(*dt), json_string_value(json_object_get(t,
					"name")), dtype_name(d));
			first = json_string_value(json_object_get(t, "name"));
			*dt = d;
		}
	return 0;
}

/* Whether variant v of family serves the task's float storage type: its
 * own reals, else the family's, else f32 alone. */
static int
reals_serve(const json_t *family, const json_t *v, const char *variant,
	const json_t *task, char *err, size_t errlen)
{
	const json_t *reals = json_object_get(v, "reals"), *r;
	char e[RULES_ERR];
	enum dtype dt;
	size_t i;

	if (rules_task_real(task, &dt, e, sizeof(e)) < 0)
		return errf(err, errlen, "variant %s: %s", variant, e), 0;
	if (!reals)
		reals = json_object_get(family, "reals");
	if (!reals && dt != DT_F32)
		return errf(err, errlen, "variant %s stores f32 only, not %s", variant,
			dtype_name(dt)), 0;
	if (!reals)
		return 1;
	json_array_foreach(reals, i, r)
		if (strcmp(json_string_value(r), dtype_name(dt)) == 0)
			return 1;
	return errf(err, errlen, "variant %s does not store %s", variant, dtype_name(dt)), 0;
}

int
rules_variant_applies(const json_t *family, const char *variant,
	const json_t *task, char *err, size_t errlen)
{
	const json_t *v = json_object_get(json_object_get(family, "variants"), variant);
	const json_t *ops = json_object_get(v, "ops"), *o;
	const json_t *takes = json_object_get(v, "takes");
	const json_t *op = json_object_get(json_object_get(task, "spec"), "op"), *opv;
	const char *when = json_string_value(json_object_get(v, "when"));
	char e[RULES_ERR];
	int64_t val;
	size_t i;
	int ok;

	if (!v)
		return errf(err, errlen, "no variant '%s' in family %s", variant,
			json_string_value(json_object_get(family, "family"))), 0;
	if (!reals_serve(family, v, variant, task, err, errlen))
		return 0;
	if (ops) {
		ok = 0;
		json_array_foreach(ops, i, o)
			ok |= json_equal((json_t *)o, (json_t *)op);
		if (!ok)
			return errf(err, errlen, "variant %s does not do op %s", variant,
				json_is_string(op) ? json_string_value(op) : "(none)"), 0;
	}
	if (takes && (opv = op_of(family, op))) {
		ok = 0;
		json_array_foreach(takes, i, o)
			ok |= strcmp(json_string_value(o), op_kind(opv)) == 0;
		if (!ok)
			return errf(err, errlen, "variant %s takes no %s op", variant,
				op_kind(opv)), 0;
	}
	if (!when)
		return 1;
	if (rules_when(when, task, variant, &val, e, sizeof(e)) < 0)
		return errf(err, errlen, "variant %s: when: %s", variant, e), 0;
	if (val <= 0)
		errf(err, errlen, "variant %s does not apply: %s is %lld at params",
			variant, when, (long long)val);
	return val > 0;
}

int
rules_when(const char *when, const json_t *task, const char *variant,
	int64_t *val, char *err, size_t errlen)
{
	char *w, e[RULES_ERR];

	if (!(w = rules_substitute(when, task, variant, 1, e, sizeof(e))))
		return errf(err, errlen, "%s", e);
	if (expr_eval(w, json_object_get(task, "params"), val, e, sizeof(e)) < 0) {
		errf(err, errlen, "%s: %s", w, e);
		free(w);
		return -1;
	}
	free(w);
	return 0;
}

/* Evaluates bound b (integer or expression) in vars. */
static int
bound_eval(const json_t *b, const json_t *task, const json_t *vars,
	int64_t *out, char *err, size_t errlen)
{
	char *s;
	int rc;

	if (json_is_integer(b)) {
		*out = json_integer_value(b);
		return 0;
	}
	if (!(s = rules_substitute(json_string_value(b), task, NULL, 1, err, errlen)))
		return -1;
	rc = expr_eval(s, vars, out, err, errlen);
	free(s);
	return rc;
}

/* Checks the variant's constraints with knobs at every size set of the
 * task. Returns 0, or -1 with err saying which constraint broke, where,
 * and why it exists. */
int
rules_constraints_check(const json_t *var, const json_t *task, const json_t *knobs,
	char *err, size_t errlen)
{
	const json_t *cons = json_object_get(var, "constraints"), *c, *sizes;
	json_t *sets = task_sizes(task), *vars;
	int64_t x, lo, hi, m;
	char e[RULES_ERR], *expr, *at;
	size_t i, j;
	int rc = 0;

	json_array_foreach(sets, j, sizes) {
		if (!(vars = plan_vars(sizes, knobs, err, errlen))) {
			rc = -1;
			break;
		}
		json_array_foreach(cons, i, c) {
			const json_t *bmin = json_object_get(c, "min");
			const json_t *bmax = json_object_get(c, "max");
			const json_t *bmul = json_object_get(c, "multiple_of");
			const char *why = json_string_value(json_object_get(c, "why"));
			const char *broke = NULL;

			if (!(expr = rules_substitute(json_string_value(json_object_get(c,
			    "expr")), task, NULL, 1, e, sizeof(e))) ||
			    expr_eval(expr, vars, &x, e, sizeof(e)) < 0 ||
			    (bmin && bound_eval(bmin, task, vars, &lo, e, sizeof(e)) < 0) ||
			    (bmax && bound_eval(bmax, task, vars, &hi, e, sizeof(e)) < 0) ||
			    (bmul && bound_eval(bmul, task, vars, &m, e, sizeof(e)) < 0)) {
				rc = errf(err, errlen, "constraints[%zu]: %s", i, e);
				free(expr);
				break;
			}
			at = j ? json_dumps(sizes, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
			if (bmin && x < lo)
				broke = "below", m = lo;
			else if (bmax && x > hi)
				broke = "above", m = hi;
			else if (bmul && (m <= 0 || x % m != 0))
				broke = "not a multiple of";
			if (broke)
				rc = errf(err, errlen, "%s = %lld is %s %lld%s%s: %s",
					json_string_value(json_object_get(c, "expr")),
					(long long)x, broke, (long long)m, at ? " at " : "",
					at ? at : "", why);
			free(at);
			free(expr);
			if (rc < 0)
				break;
		}
		json_decref(vars);
		if (rc < 0)
			break;
	}
	json_decref(sets);
	return rc;
}

/* ---- configurations ---- */

const json_t *
rules_variant(const json_t *family, const char *name)
{
	return json_object_get(json_object_get(family, "variants"), name);
}

/* Whether value is in the domain of knob. */
int
rules_in_domain(const json_t *knob, json_int_t value)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(knob, "values"), i, v)
		if (json_integer_value(v) == value)
			return 1;
	return 0;
}

/* A knob's domain as text: "[1, 2, 4]". */
char *
rules_domain_text(const json_t *knob)
{
	return json_dumps(json_object_get(knob, "values"), JSON_COMPACT);
}

/* The full knob object of variant: knobs' values where they name a knob
 * of the variant (integers, or strings of integers), defaults elsewhere,
 * in the family file's order. */
json_t *
rules_knobs_complete(const json_t *var, const json_t *knobs)
{
	const json_t *decl = json_object_get(var, "knobs"), *k, *v;
	json_t *out = json_object();
	const char *name;
	int64_t x;

	json_object_foreach((json_t *)decl, name, k) {
		v = json_object_get(knobs, name);
		if (json_is_string(v) && parse_i64(json_string_value(v), INT64_MIN,
		    INT64_MAX, &x, &(const char *){ NULL }) == 0)
			json_object_set_new(out, name, json_integer(x));
		else if (json_is_integer(v))
			json_object_set(out, name, (json_t *)v);
		else
			json_object_set(out, name, json_object_get(k, "default"));
	}
	return out;
}

json_t *
rules_config_new(const char *variant, json_t *knobs)
{
	return json_pack("{s:s, s:o}", "variant", variant, "knobs", knobs);
}

