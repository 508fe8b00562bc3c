/* rules.c: kgen's rules backend (issue 6). A template family is a JSON file
 * of variants, each a CUDA source with {{placeholders}}, knobs with domains,
 * constraints and a launch plan (docs/templates.md). This file renders
 * configurations (a variant and its knob values) into candidates, moves
 * them as the memory's strategies say, repairs or refuses what breaks a
 * constraint, and fills up with one-knob steps.
 *
 * A configuration is a JSON object {"variant": V, "knobs": {NAME: int}};
 * its knobs come in the order the family file lists them, which fixes the
 * order of everything generated. */
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
#include "kgen.h"

/* Renders tried per state while filling up to k with neighbours. */
#define RULES_MAX_TRIES 512
#define RULES_ERR 1024

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

/* Checks one variant of a family and reads its source into source_text. */
static int
load_variant(const char *dir, const char *file, const char *name, json_t *v,
	char *err, size_t errlen)
{
	static const char *const known[] = { "source", "kernels", "knobs",
		"constraints", "launch", "when", "ops", "doc", NULL };
	static const char *const cknown[] = { "expr", "min", "max",
		"multiple_of", "why", NULL };
	const json_t *knobs = json_object_get(v, "knobs"), *c, *k;
	const char *src = json_string_value(json_object_get(v, "source")), *u, *kn;
	char where[256], *path, *text;
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
	if (!json_is_array(json_object_get(json_object_get(v, "launch"), "launches")))
		return errf(err, errlen, "%s.launch: expected a launch plan", where);
	path = xasprintf("%s/%s", dir, src);
	text = read_file(path, NULL);
	if (!text) {
		errf(err, errlen, "%s.source: cannot read %s", where, path);
		free(path);
		return -1;
	}
	free(path);
	json_object_set_new(v, "source_text", json_string(text));
	free(text);
	if (!json_is_string(json_object_get(v, "source_text")))
		return errf(err, errlen, "%s.source: %s is not UTF-8 text", where, src);
	return 0;
}

json_t *
rules_family_load(const char *dir, const char *family, char *err, size_t errlen)
{
	static const char *const known[] = { "family", "default", "spec",
		"variants", "doc", NULL };
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
	else {
		json_object_foreach(vars, name, v)
			if (load_variant(dir, file, name, v, err, errlen) < 0)
				goto fail;
		free(file);
		return f;
	}
fail:
	free(file);
	json_decref(f);
	return NULL;
}

/* ---- placeholders ---- */

/* The shortest decimal text that reads back as d. */
static void
number_text(double d, char *buf, size_t len)
{
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

/* The text of spec member name, or NULL when the task's spec lacks it. In
 * a launch plan (in_plan) a string, a size expression, is parenthesised so
 * that it binds as one term. Returns a string the caller frees. */
static char *
spec_text(const json_t *spec, const char *name, int in_plan)
{
	const json_t *v = json_object_get(spec, name);
	char buf[64];

	if (json_is_string(v))
		return in_plan ? xasprintf("(%s)", json_string_value(v)) :
			xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_real(v)) {
		number_text(json_real_value(v), buf, sizeof(buf));
		return xstrdup(buf);
	}
	if (json_is_boolean(v))
		return xstrdup(json_is_true(v) ? "1" : "0");
	return NULL;
}

/* The name of the task's n-th (1-based) tensor of list ("inputs" or
 * "outputs"), or NULL. */
static const char *
tensor_name(const json_t *task, const char *list, size_t n)
{
	const json_t *t = json_array_get(json_object_get(task, list), n - 1);

	return n ? json_string_value(json_object_get(t, "name")) : NULL;
}

/* Text joined over the task's inputs: fmt gets the index and the name. */
static char *
inputs_join(const json_t *task, const char *fmt, const char *sep)
{
	const json_t *ins = json_object_get(task, "inputs"), *t;
	char *s = xstrdup(""), *p;
	size_t i;

	json_array_foreach(ins, i, t) {
		p = xasprintf(fmt, (int)i, json_string_value(json_object_get(t, "name")));
		s = xrealloc(s, strlen(s) + strlen(sep) + strlen(p) + 1);
		if (i)
			strcat(s, sep);
		strcat(s, p);
		free(p);
	}
	return s;
}

/* The value of placeholder name for task, or NULL with err set. Names:
 * in, in2, ... / out, out2, ... (tensor names), variant, ninputs, noutputs,
 * in_params, in_ptrs, bind (for templates over any number of float inputs)
 * and the members of the task's spec. */
static char *
placeholder(const json_t *task, const char *variant, const char *name,
	int in_plan, char *err, size_t errlen)
{
	const json_t *spec = json_object_get(task, "spec");
	const char *s;
	char *end, *v;
	long n = 1;

	if (strncmp(name, "in", 2) == 0 && (name[2] == '\0' || isdigit((unsigned char)name[2]))) {
		if (name[2])
			n = strtol(name + 2, &end, 10);
		if ((s = tensor_name(task, "inputs", (size_t)n)))
			return xstrdup(s);
		errf(err, errlen, "{{%s}}: the task has no input %ld", name, n);
		return NULL;
	}
	if (strncmp(name, "out", 3) == 0 && (name[3] == '\0' || isdigit((unsigned char)name[3]))) {
		if (name[3])
			n = strtol(name + 3, &end, 10);
		if ((s = tensor_name(task, "outputs", (size_t)n)))
			return xstrdup(s);
		errf(err, errlen, "{{%s}}: the task has no output %ld", name, n);
		return NULL;
	}
	if (strcmp(name, "variant") == 0 && variant)
		return xstrdup(variant);
	if (strcmp(name, "ninputs") == 0)
		return xasprintf("%zu", json_array_size(json_object_get(task, "inputs")));
	if (strcmp(name, "noutputs") == 0)
		return xasprintf("%zu", json_array_size(json_object_get(task, "outputs")));
	if (strcmp(name, "in_params") == 0)
		return inputs_join(task, "const float *__restrict__ in%d", ", ");
	if (strcmp(name, "in_ptrs") == 0)
		return inputs_join(task, "in%d", ", ");
	if (strcmp(name, "bind") == 0)
		return inputs_join(task, "const float %2$s = IN(%1$d);", " ");
	if ((v = spec_text(spec, name, in_plan)))
		return v;
	errf(err, errlen, "{{%s}}: not in the task's spec", name);
	return NULL;
}

/* text with every {{name}} (name: letters, digits, _) replaced. Other
 * braces are left alone ({{1, 2}} is an initializer). Returns a string
 * the caller frees, or NULL with err set. */
static char *
substitute(const char *text, const json_t *task, const char *variant,
	int in_plan, char *err, size_t errlen)
{
	size_t cap = strlen(text) + 64, len = 0, n, vlen;
	char *out = xmalloc(cap), name[64], *v;
	const char *p = text, *q;

	while (*p) {
		q = p + 2;
		if (p[0] == '{' && p[1] == '{') {
			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
		}
		if (p[0] == '{' && p[1] == '{' && q > p + 2 && q[0] == '}' &&
		    q[1] == '}' && (n = (size_t)(q - p - 2)) < sizeof(name)) {
			memcpy(name, p + 2, n);
			name[n] = '\0';
			if (!(v = placeholder(task, variant, name, in_plan, err, errlen))) {
				free(out);
				return NULL;
			}
			vlen = strlen(v);
			p = q + 2;
		} else {
			v = NULL;
			vlen = 1;
		}
		if (len + vlen + 1 > cap) {
			cap = 2 * (len + vlen + 1);
			out = xrealloc(out, cap);
		}
		if (v) {
			memcpy(out + len, v, vlen);
			free(v);
		} else
			out[len] = *p++;
		len += vlen;
	}
	out[len] = '\0';
	return out;
}

/* A copy of the launch plan template with every string substituted; an
 * args element that is exactly "{{inputs}}" or "{{outputs}}" becomes the
 * names of all the task's inputs or outputs. Returns NULL with err set. */
static json_t *
plan_render(const json_t *v, const json_t *task, const char *variant,
	char *err, size_t errlen)
{
	const json_t *e;
	json_t *out, *r;
	const char *k;
	char *s;
	size_t i, j;

	if (json_is_string(v)) {
		if (!(s = substitute(json_string_value(v), task, variant, 1, err, errlen)))
			return NULL;
		out = json_string(s);
		free(s);
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, e) {
			const char *es = json_string_value(e);
			const char *list = NULL;

			if (es && strcmp(es, "{{inputs}}") == 0)
				list = "inputs";
			else if (es && strcmp(es, "{{outputs}}") == 0)
				list = "outputs";
			if (list) {
				for (j = 1; tensor_name(task, list, j); j++)
					json_array_append_new(out,
						json_string(tensor_name(task, list, j)));
				continue;
			}
			if (!(r = plan_render(e, task, variant, err, errlen))) {
				json_decref(out);
				return NULL;
			}
			json_array_append_new(out, r);
		}
		return out;
	}
	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)v, k, e) {
			if (!(r = plan_render(e, task, variant, err, errlen))) {
				json_decref(out);
				return NULL;
			}
			json_object_set_new(out, k, r);
		}
		return out;
	}
	return json_deep_copy(v);
}

/* ---- checks ---- */

/* The type a spec member of declared kind must have: "dim" an integer or
 * a string, "string", "number" and "boolean" theirs, an array of allowed
 * values any of its members' types. Returns 1 when v has it. */
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
 * task's params, "string", "number", "boolean", or an array of allowed
 * strings). */
static int
spec_check(const json_t *family, const json_t *task, char *err, size_t errlen)
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
		} else if (ks && strcmp(ks, "dim") == 0) {
			if (!json_is_string(v) && !json_is_integer(v))
				return errf(err, errlen, "task \"%s\": spec.%s: expected a "
					"size expression", id, name);
			if (json_is_string(v) && expr_check(json_string_value(v),
			    json_object_get(task, "params"), e, sizeof(e)) < 0)
				return errf(err, errlen, "task \"%s\": spec.%s: %s", id,
					name, e);
		} else if (ks && ((strcmp(ks, "string") == 0 && !json_is_string(v)) ||
		    (strcmp(ks, "number") == 0 && !json_is_number(v)) ||
		    (strcmp(ks, "boolean") == 0 && !json_is_boolean(v))))
			return errf(err, errlen, "task \"%s\": spec.%s: expected a %s",
				id, name, ks);
	}
	return 0;
}

int
rules_variant_applies(const json_t *family, const char *variant,
	const json_t *task, char *err, size_t errlen)
{
	const json_t *v = json_object_get(json_object_get(family, "variants"), variant);
	const json_t *ops = json_object_get(v, "ops"), *o;
	const json_t *op = json_object_get(json_object_get(task, "spec"), "op");
	const char *when = json_string_value(json_object_get(v, "when"));
	char *w, e[RULES_ERR];
	int64_t val;
	size_t i;
	int ok;

	if (!v)
		return errf(err, errlen, "no variant '%s' in family %s", variant,
			json_string_value(json_object_get(family, "family"))), 0;
	if (ops) {
		ok = 0;
		json_array_foreach(ops, i, o)
			ok |= json_equal((json_t *)o, (json_t *)op);
		if (!ok)
			return errf(err, errlen, "variant %s does not do op %s", variant,
				json_is_string(op) ? json_string_value(op) : "(none)"), 0;
	}
	if (!when)
		return 1;
	if (!(w = substitute(when, task, variant, 1, e, sizeof(e))))
		return errf(err, errlen, "variant %s: when: %s", variant, e), 0;
	if (expr_eval(w, json_object_get(task, "params"), &val, e, sizeof(e)) < 0) {
		errf(err, errlen, "variant %s: when: %s: %s", variant, w, e);
		free(w);
		return 0;
	}
	if (val <= 0)
		errf(err, errlen, "variant %s does not apply: %s is %lld at params",
			variant, when, (long long)val);
	free(w);
	return val > 0;
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
	if (!(s = substitute(json_string_value(b), task, NULL, 1, err, errlen)))
		return -1;
	rc = expr_eval(s, vars, out, err, errlen);
	free(s);
	return rc;
}

/* Checks the variant's constraints with knobs at every size set of the
 * task. Returns 0, or -1 with err saying which constraint broke, where,
 * and why it exists. */
static int
constraints_check(const json_t *var, const json_t *task, const json_t *knobs,
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

			if (!(expr = substitute(json_string_value(json_object_get(c,
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

static const json_t *
variant_of(const json_t *family, const char *name)
{
	return json_object_get(json_object_get(family, "variants"), name);
}

/* Whether value is in the domain of knob. */
static int
in_domain(const json_t *knob, json_int_t value)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(knob, "values"), i, v)
		if (json_integer_value(v) == value)
			return 1;
	return 0;
}

/* A knob's domain as text: "[1, 2, 4]". */
static char *
domain_text(const json_t *knob)
{
	return json_dumps(json_object_get(knob, "values"), JSON_COMPACT);
}

/* The full knob object of variant: knobs' values where they name a knob
 * of the variant (integers, or strings of integers), defaults elsewhere,
 * in the family file's order. */
static json_t *
knobs_complete(const json_t *var, const json_t *knobs)
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

static json_t *
config_new(const char *variant, json_t *knobs)
{
	return json_pack("{s:s, s:o}", "variant", variant, "knobs", knobs);
}

json_t *
rules_render(const json_t *family, const json_t *task, const char *variant,
	const json_t *knobs, char *err, size_t errlen)
{
	const json_t *var = variant_of(family, variant), *decl, *k, *v;
	json_t *defines, *launch = NULL, *key, *c = NULL;
	const char *name;
	char *src = NULL, *dom, id[65], e[RULES_ERR];

	if (!var) {
		errf(err, errlen, "no variant '%s' in family %s", variant,
			json_string_value(json_object_get(family, "family")));
		return NULL;
	}
	defines = knobs_complete(var, knobs);
	decl = json_object_get(var, "knobs");
	json_object_foreach((json_t *)decl, name, k) {
		v = json_object_get(defines, name);
		if (!in_domain(k, json_integer_value(v))) {
			dom = domain_text(k);
			errf(err, errlen, "%s = %" JSON_INTEGER_FORMAT " is not in "
				"its domain %s", name, json_integer_value(v), dom);
			free(dom);
			goto out;
		}
	}
	if (constraints_check(var, task, defines, err, errlen) < 0)
		goto out;
	if (!(src = substitute(json_string_value(json_object_get(var,
	    "source_text")), task, variant, 0, err, errlen)))
		goto out;
	if (!(launch = plan_render(json_object_get(var, "launch"), task, variant, err,
	    errlen)))
		goto out;
	if (plan_check(launch, task, defines, e, sizeof(e)) < 0) {
		errf(err, errlen, "launch plan: %s", e);
		goto out;
	}
	key = json_pack("{s:s, s:O, s:O}", "source", src, "defines", defines,
		"launch", launch);
	json_sha256_hex(key, id);
	json_decref(key);
	c = json_pack("{s:s, s:s, s:O, s:O, s:s, s:s, s:s}", "id", id, "source",
		src, "defines", defines, "launch", launch, "generator", "rules",
		"family", json_string_value(json_object_get(family, "family")),
		"variant", variant);
out:
	free(src);
	json_decref(launch);
	json_decref(defines);
	return c;
}

json_t *
rules_sweep(const json_t *family, const json_t *task)
{
	const json_t *vars = json_object_get(family, "variants"), *var, *k, *v;
	json_t *out = json_array(), *knobs;
	const char *vname, *kname;
	char e[RULES_ERR];
	size_t i;

	json_object_foreach((json_t *)vars, vname, var) {
		if (!rules_variant_applies(family, vname, task, e, sizeof(e)))
			continue;
		json_array_append_new(out, config_new(vname, json_object()));
		json_object_foreach((json_t *)json_object_get(var, "knobs"), kname, k)
			json_array_foreach(json_object_get(k, "values"), i, v) {
				if (json_equal((json_t *)v, json_object_get(k, "default")))
					continue;
				knobs = json_object();
				json_object_set(knobs, kname, (json_t *)v);
				json_array_append_new(out, config_new(vname, knobs));
			}
	}
	return out;
}

/* ---- generation ---- */

struct gen {
	const json_t *family, *task;
	const char *fname;       /* the family's name */
	int k;
	json_t *out;             /* candidates so far */
	json_t *skip;            /* ids measured or written: id -> true */
	json_t *notes;
	json_t *parent;          /* the best kernel's id, or null */
	int tries;
};

static void
note(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
note(struct gen *g, const char *fmt, ...)
{
	char buf[RULES_ERR + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(g->notes, json_string(buf));
}

/* Adds candidate c (stolen) unless its id was measured or written
 * already. Returns 1 when added. */
static int
add(struct gen *g, json_t *c, const char *strategy)
{
	const char *id = json_string_value(json_object_get(c, "id"));
	json_t *ordered;

	if (json_object_get(g->skip, id)) {
		json_decref(c);
		return 0;
	}
	json_object_set_new(g->skip, id, json_true());
	ordered = json_pack("{s:O, s:O, s:O, s:O, s:s, s:o, s:O, s:O, s:O}",
		"id", json_object_get(c, "id"), "source", json_object_get(c, "source"),
		"defines", json_object_get(c, "defines"), "launch",
		json_object_get(c, "launch"), "generator", "rules", "strategy",
		strategy ? json_string(strategy) : json_null(), "parent", g->parent,
		"family", json_object_get(c, "family"), "variant",
		json_object_get(c, "variant"));
	json_decref(c);
	json_array_append_new(g->out, ordered);
	return 1;
}

/* Renders cfg; NULL with err when refused. */
static json_t *
render_config(struct gen *g, const json_t *cfg, char *err, size_t errlen)
{
	g->tries++;
	return rules_render(g->family, g->task,
		json_string_value(json_object_get(cfg, "variant")),
		json_object_get(cfg, "knobs"), err, errlen);
}

/* The configuration the moves start from: the best kernel's when it is an
 * instance of this family (*measured set), else the first variant, the
 * default first, that serves the task and renders with its defaults. NULL
 * with err when no variant serves the task. */
static json_t *
base_config(struct gen *g, const json_t *state, int *measured, char *err,
	size_t errlen)
{
	const json_t *best = json_object_get(json_object_get(state, "best"), "candidate");
	const char *fam = json_string_value(json_object_get(best, "family"));
	const char *var = json_string_value(json_object_get(best, "variant"));
	const char *def = json_string_value(json_object_get(g->family, "default"));
	const json_t *vars = json_object_get(g->family, "variants"), *v;
	char e[RULES_ERR], why[RULES_ERR * 2] = "";
	const char *name;
	json_t *c;

	*measured = 0;
	if (fam && var && strcmp(fam, g->fname) == 0 && variant_of(g->family, var) &&
	    rules_variant_applies(g->family, var, g->task, e, sizeof(e))) {
		*measured = 1;
		return config_new(var, knobs_complete(variant_of(g->family, var),
			json_object_get(best, "defines")));
	}
	for (int pass = 0; pass < 2; pass++)
		json_object_foreach((json_t *)vars, name, v) {
			if ((pass == 0) != (strcmp(name, def) == 0))
				continue;
			if (!rules_variant_applies(g->family, name, g->task, e, sizeof(e)))
				continue;
			if (!(c = rules_render(g->family, g->task, name, NULL, e, sizeof(e)))) {
				snprintf(why + strlen(why), sizeof(why) - strlen(why),
					"%s%s: %s", *why ? "; " : "", name, e);
				continue;
			}
			json_decref(c);
			return config_new(name, knobs_complete(v, NULL));
		}
	errf(err, errlen, "task \"%s\": no variant of family %s serves it%s%s",
		json_string_value(json_object_get(g->task, "id")), g->fname,
		*why ? ": " : "", why);
	return NULL;
}

/* A knob value moved relatively from cur toward target: the candidates on
 * the move's side of cur, nearest to target first. Returns the count
 * written to alt (at most max). */
static size_t
relative_values(const json_t *knob, json_int_t cur, double target,
	json_int_t *alt, size_t max)
{
	const json_t *vals = json_object_get(knob, "values"), *v;
	size_t n = 0, i, j;
	json_int_t x, t;

	json_array_foreach(vals, i, v) {
		x = json_integer_value(v);
		if ((target > cur && x > cur) || (target < cur && x < cur))
			if (n < max)
				alt[n++] = x;
	}
	/* insertion sort by distance to target, ties toward cur */
	for (i = 1; i < n; i++)
		for (j = i; j > 0; j--) {
			double a = fabs((double)alt[j] - target);
			double b = fabs((double)alt[j - 1] - target);
			if (a < b || (a == b && llabs(alt[j] - cur) < llabs(alt[j - 1] - cur))) {
				t = alt[j];
				alt[j] = alt[j - 1];
				alt[j - 1] = t;
			} else
				break;
		}
	return n;
}

#define MAX_REL 8
#define MAX_ALT 32

/* A knob moved relatively: its name and the values to try, best first. */
struct rel {
	const char *name;
	json_int_t alt[MAX_ALT];
	size_t n;
};

/* The label of move number m of strategy sid, for notes. */
static char *
move_label(const char *sid, size_t m, const json_t *move)
{
	char *s = json_dumps(move, JSON_COMPACT), *l;

	l = xasprintf("strategy %s move %zu %s", sid ? sid : "(none)", m, s ? s : "");
	free(s);
	return l;
}

/* How many of the knobs that move sets, multiplies or adds are knobs of
 * variant var. *total gets how many it names. */
static int
move_knobs_in(const json_t *move, const json_t *var, int *total)
{
	static const char *const ops[] = { "set", "mul", "add" };
	const json_t *decl = json_object_get(var, "knobs"), *v;
	const char *name;
	size_t j;
	int n = 0;

	*total = 0;
	for (j = 0; j < LEN(ops); j++)
		json_object_foreach((json_t *)json_object_get(move, ops[j]), name, v) {
			(*total)++;
			n += json_object_get(decl, name) != NULL;
		}
	return n;
}

/* The variant a move without "variant" means: the current one, unless it
 * lacks some knob the move names and another variant that serves the task
 * has more of them ({"set": {"CLUSTER": 8}} means a cluster variant). */
static const char *
move_variant(struct gen *g, const char *bvar, const json_t *move)
{
	const json_t *vars = json_object_get(g->family, "variants"), *v;
	const char *best = bvar, *name;
	char e[RULES_ERR];
	int total, n, most = move_knobs_in(move, variant_of(g->family, bvar), &total);

	if (most == total)
		return bvar;
	json_object_foreach((json_t *)vars, name, v)
		if (strcmp(name, bvar) != 0 && (n = move_knobs_in(move, v, &total)) > most &&
		    rules_variant_applies(g->family, name, g->task, e, sizeof(e))) {
			most = n;
			best = name;
		}
	return best;
}

/* Applies move (number m of strategy sid) to base. Returns the rendered
 * candidate, or NULL when the move does not apply to this family or
 * variant (silently) or is refused (with a note saying why). */
static json_t *
move_apply(struct gen *g, const json_t *base, const json_t *move,
	const char *sid, size_t m)
{
	static const char *const known[] = { "family", "set", "mul", "add",
		"variant", "why", NULL };
	const char *mfam = json_string_value(json_object_get(move, "family"));
	const char *bvar = json_string_value(json_object_get(base, "variant"));
	const char *mvar = json_string_value(json_object_get(move, "variant"));
	const json_t *bknobs = json_object_get(base, "knobs"), *var, *decl, *k, *v;
	json_t *knobs = NULL, *cfg = NULL, *c = NULL;
	struct rel rel[MAX_REL];
	size_t nrel = 0, i, j;
	const char *name, *u, *ops[] = { "set", "mul", "add" };
	char e[RULES_ERR], e2[RULES_ERR], *label = move_label(sid, m, move), *dom;
	int touched = 0, carried = 0;

	if (!json_is_object(move)) {
		note(g, "%s: refused: a move is an object", label);
		goto out;
	}
	if (mfam && strcmp(mfam, "*") != 0 && strcmp(mfam, g->fname) != 0)
		goto out;
	if ((u = json_unknown_member(move, known))) {
		note(g, "%s: refused: unknown member '%s'", label, u);
		goto out;
	}
	if (!mvar)
		mvar = move_variant(g, bvar, move);
	if (strcmp(mvar, bvar) != 0) {
		if (!rules_variant_applies(g->family, mvar, g->task, e, sizeof(e))) {
			note(g, "%s: refused: %s", label, e);
			goto out;
		}
		/* carry the knobs the two variants share, where they fit */
		var = variant_of(g->family, mvar);
		knobs = knobs_complete(var, NULL);
		json_object_foreach((json_t *)json_object_get(var, "knobs"), name, k) {
			v = json_object_get(bknobs, name);
			if (v && in_domain(k, json_integer_value(v)) &&
			    !json_equal((json_t *)v, json_object_get(knobs, name))) {
				json_object_set(knobs, name, (json_t *)v);
				carried = 1;
			}
		}
		touched = 1;
	} else
		knobs = json_deep_copy(bknobs);
	var = variant_of(g->family, mvar);
	decl = json_object_get(var, "knobs");
	for (j = 0; j < LEN(ops); j++) {
		const json_t *o = json_object_get(move, ops[j]);

		if (o && !json_is_object(o)) {
			note(g, "%s: refused: %s: expected an object", label, ops[j]);
			goto out;
		}
		json_object_foreach((json_t *)o, name, v) {
			json_int_t cur;
			double t;

			if (!(k = json_object_get(decl, name)))
				continue; /* not a knob of this variant */
			cur = json_integer_value(json_object_get(knobs, name));
			if (j == 0) {
				if (!json_is_integer(v) || !in_domain(k, json_integer_value(v))) {
					dom = domain_text(k);
					note(g, "%s: refused: %s: set to a value not in its "
						"domain %s", label, name, dom);
					free(dom);
					goto out;
				}
				json_object_set(knobs, name, (json_t *)v);
				touched = 1;
				continue;
			}
			if (!json_is_number(v) || (j == 1 && json_number_value(v) <= 0)) {
				note(g, "%s: refused: %s.%s: expected a %s number", label,
					ops[j], name, j == 1 ? "positive" : "whole");
				goto out;
			}
			t = j == 1 ? (double)cur * json_number_value(v) :
				(double)cur + json_number_value(v);
			touched = 1;
			if (t == (double)cur)
				continue;
			if (nrel == MAX_REL)
				continue;
			rel[nrel].name = name;
			rel[nrel].n = relative_values(k, cur, t, rel[nrel].alt, MAX_ALT);
			if (rel[nrel].n == 0) {
				note(g, "%s: refused: %s is already at its %s value %"
					JSON_INTEGER_FORMAT, label, name, t > cur ?
					"largest" : "smallest", cur);
				goto out;
			}
			json_object_set_new(knobs, name, json_integer(rel[nrel].alt[0]));
			nrel++;
		}
	}
	if (!touched)
		goto out; /* nothing in the move concerns this variant */
	if (strcmp(mvar, bvar) == 0 && json_equal(knobs, (json_t *)bknobs)) {
		note(g, "%s: changes nothing here", label);
		goto out;
	}
	cfg = config_new(mvar, json_incref(knobs));
	if ((c = render_config(g, cfg, e, sizeof(e))))
		goto out;
	/* repair: move one relative knob less far (or past), the others fixed */
	for (i = 0; i < nrel && !c; i++) {
		for (j = 1; j < rel[i].n && !c; j++) {
			json_object_set_new(knobs, rel[i].name, json_integer(rel[i].alt[j]));
			if ((c = render_config(g, cfg, e2, sizeof(e2))))
				note(g, "%s: repaired: %s = %" JSON_INTEGER_FORMAT
					" instead of %" JSON_INTEGER_FORMAT " (%s)", label,
					rel[i].name, rel[i].alt[j], rel[i].alt[0], e);
		}
		if (!c)
			json_object_set_new(knobs, rel[i].name, json_integer(rel[i].alt[0]));
	}
	/* a variant switch: the new variant's own defaults, then the move */
	if (!c && carried) {
		json_t *retry = json_object_get(var, "knobs");

		json_object_foreach((json_t *)retry, name, k) {
			const json_t *s = json_object_get(json_object_get(move, "set"), name);
			int moved = s != NULL;

			for (i = 0; i < nrel; i++)
				moved |= strcmp(rel[i].name, name) == 0;
			if (!moved)
				json_object_set(knobs, name, json_object_get(k, "default"));
		}
		c = render_config(g, cfg, e2, sizeof(e2));
	}
	if (!c)
		note(g, "%s: refused: %s", label, e);
out:
	json_decref(cfg);
	json_decref(knobs);
	free(label);
	return c;
}

/* The configurations one step from cfg: each knob to its next larger and
 * next smaller value, in the family file's order, then each other
 * variant that serves the task (carrying the shared knobs). A new array. */
static json_t *
neighbours(struct gen *g, const json_t *cfg)
{
	const char *vname = json_string_value(json_object_get(cfg, "variant"));
	const json_t *knobs = json_object_get(cfg, "knobs"), *var, *k, *vals;
	json_t *out = json_array(), *kn;
	const char *name, *oname;
	char e[RULES_ERR];
	size_t i, n;
	int d;

	var = variant_of(g->family, vname);
	json_object_foreach((json_t *)json_object_get(var, "knobs"), name, k) {
		vals = json_object_get(k, "values");
		n = json_array_size(vals);
		for (i = 0; i < n; i++)
			if (json_equal(json_array_get(vals, i), json_object_get(knobs, name)))
				break;
		for (d = 1; d >= -1; d -= 2) {
			if (i == n || (d < 0 && i == 0) || (d > 0 && i + 1 >= n))
				continue;
			kn = json_deep_copy(knobs);
			json_object_set(kn, name, json_array_get(vals, i + d));
			json_array_append_new(out, config_new(vname, kn));
		}
	}
	json_object_foreach((json_t *)json_object_get(g->family, "variants"), oname, var) {
		if (strcmp(oname, vname) == 0 ||
		    !rules_variant_applies(g->family, oname, g->task, e, sizeof(e)))
			continue;
		kn = knobs_complete(var, NULL);
		json_object_foreach((json_t *)json_object_get(var, "knobs"), name, k) {
			const json_t *v = json_object_get(knobs, name);

			if (v && in_domain(k, json_integer_value(v)))
				json_object_set(kn, name, (json_t *)v);
		}
		json_array_append_new(out, config_new(oname, kn));
	}
	return out;
}

/* Fills g up to k with configurations found breadth-first from base in
 * one-knob steps (and variant switches), in a fixed order. */
static void
fill_neighbours(struct gen *g, const json_t *base)
{
	json_t *queue = json_array(), *visited = json_object(), *next, *c, *cfg;
	char *key, e[RULES_ERR];
	size_t head = 0, i;

	json_array_append(queue, (json_t *)base);
	key = json_dumps(base, JSON_COMPACT | JSON_SORT_KEYS);
	json_object_set_new(visited, key, json_true());
	free(key);
	while (head < json_array_size(queue) && (int)json_array_size(g->out) < g->k &&
	    g->tries < RULES_MAX_TRIES) {
		next = neighbours(g, json_array_get(queue, head++));
		json_array_foreach(next, i, cfg) {
			if ((int)json_array_size(g->out) >= g->k || g->tries >= RULES_MAX_TRIES)
				break;
			key = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
			if (json_object_get(visited, key)) {
				free(key);
				continue;
			}
			json_object_set_new(visited, key, json_true());
			free(key);
			/* refused steps are not explored further: they lead out of
			 * the valid region */
			if ((c = render_config(g, cfg, e, sizeof(e)))) {
				add(g, c, NULL);
				json_array_append(queue, cfg);
			}
		}
		json_decref(next);
	}
	json_decref(queue);
	json_decref(visited);
}

json_t *
rules_generate(const json_t *state, int k, const json_t *seen,
	const char *templates_dir, json_t **notes, char *err, size_t errlen)
{
	const json_t *task = json_object_get(state, "task");
	const json_t *strategies = json_object_get(json_object_get(state, "memory"),
		"strategies");
	const json_t *best = json_object_get(json_object_get(state, "best"), "candidate");
	const json_t *s, *id, *moves;
	const char *fname = json_string_value(json_object_get(task, "family"));
	json_t *family, *base, *c, *out = NULL;
	char *dir, e[RULES_ERR];
	size_t i, ns, *cursor, round;
	int measured, progress;
	struct gen g;

	*notes = NULL;
	if (!json_is_object(task) || !fname)
		return errf(err, errlen, "the state has no task with a family"), NULL;
	dir = rules_templates_dir(templates_dir);
	family = rules_family_load(dir, fname, err, errlen);
	free(dir);
	if (!family)
		return NULL;
	if (spec_check(family, task, err, errlen) < 0) {
		json_decref(family);
		return NULL;
	}
	id = json_object_get(best, "id");
	g = (struct gen){ .family = family, .task = task, .fname = fname, .k = k,
		.out = json_array(), .skip = json_object(), .notes = json_array(),
		.parent = json_is_string(id) ? json_incref((json_t *)id) : json_null() };
	json_array_foreach(seen, i, s)
		if (json_is_string(s))
			json_object_set_new(g.skip, json_string_value(s), json_true());
	if (!(base = base_config(&g, state, &measured, err, errlen)))
		goto done;
	if (measured && json_is_string(id))
		json_object_set_new(g.skip, json_string_value(id), json_true());
	/* the family default is worth measuring when the current kernel is not
	 * one of this family's: it is where the moves start from */
	if (!measured && k > 0 && (c = render_config(&g, base, e, sizeof(e))))
		add(&g, c, NULL);

	/* the strategies, best first, each giving its next new configuration
	 * in turn, so that one strategy with many moves does not crowd out
	 * the others */
	ns = json_array_size(strategies);
	cursor = xcalloc(ns + 1, sizeof(*cursor));
	for (round = 0, progress = 1; progress && (int)json_array_size(g.out) < k; round++) {
		progress = 0;
		json_array_foreach(strategies, i, s) {
			const char *sid = json_string_value(json_object_get(s, "id"));

			moves = json_object_get(s, "moves");
			while (cursor[i] < json_array_size(moves) &&
			    (int)json_array_size(g.out) < k) {
				size_t m = cursor[i]++;

				c = move_apply(&g, base, json_array_get(moves, m), sid, m);
				progress = 1;
				if (c && add(&g, c, sid))
					break;
			}
		}
	}
	free(cursor);
	if ((int)json_array_size(g.out) < k)
		fill_neighbours(&g, base);
	json_decref(base);
	out = json_incref(g.out);
	*notes = json_incref(g.notes);
done:
	json_decref(g.out);
	json_decref(g.skip);
	json_decref(g.notes);
	json_decref(g.parent);
	json_decref(family);
	return out;
}

/* ---- kgen's backend interface (kgen.h), over rules_generate ---- */

struct rules_ctx {
	int k;
	int verbose;
	char *dir;
};

static void *
rules_open(const struct kgen_opts *opts)
{
	struct rules_ctx *r = xcalloc(1, sizeof(*r));

	r->k = opts->k;
	r->verbose = opts->verbose;
	r->dir = rules_templates_dir(NULL);
	if (access(r->dir, R_OK) != 0)
		die(EXIT_FAIL, "no template families in %s (set HTAM_TEMPLATES)", r->dir);
	return r;
}

/* Writes at most r->k candidates for state: what rules_generate gives,
 * or one gen_error saying why there is nothing new. The state's optional
 * "seen" member lists candidate ids already measured for its task. */
static int
rules_generate_k(void *ctx, const json_t *state, long line, json_t **cands)
{
	struct rules_ctx *r = ctx;
	json_t *got, *notes = NULL, *n;
	char err[RULES_ERR];
	size_t i;
	int count = 0;

	/* A spec member of the wrong type is a malformed task, not a kernel
	 * the family cannot make. */
	const char *fname = json_string_value(json_object_get(json_object_get(state,
		"task"), "family"));
	json_t *family = fname ? rules_family_load(r->dir, fname, err, sizeof(err)) : NULL;
	if (family && rules_spec_types(family, json_object_get(state, "task"), err,
	    sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	json_decref(family);
	got = rules_generate(state, r->k, json_object_get(state, "seen"), r->dir,
		&notes, err, sizeof(err));
	if (r->verbose)
		json_array_foreach(notes, i, n)
			warn_line(line, "%s", json_string_value(n));
	json_array_foreach(got, i, n)
		cands[count++] = json_incref(n);
	if (count == 0) {
		if (got)
			snprintf(err, sizeof(err), "no configuration left that is new "
				"and valid (%zu moves refused)", json_array_size(notes));
		cands[count++] = json_pack("{s:s, s:o, s:s, s:n}", "status",
			"gen_error", "reason", json_text(err), "generator", "rules", "strategy");
	}
	json_decref(got);
	json_decref(notes);
	return count;
}

static void
rules_close(void *ctx)
{
	struct rules_ctx *r = ctx;

	free(r->dir);
	free(r);
}

const struct backend rules_backend = {
	"rules", rules_open, rules_generate_k, rules_close,
};
