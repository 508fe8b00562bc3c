/* render.c: a configuration of a template family (a variant and its
 * knob values) rendered into a candidate for a task: the {{placeholders}}
 * of its source and launch plan filled in, its constraints and plan
 * checked (a chain's stages: chain.c); and the sweep of configurations
 * the tests render. */
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
#include "template.h"
#include "util.h"
#include "rules.h"

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

/* The first integer (or bool) input of the task, or NULL; its type in
 * *dt. */
static const char *
integer_input(const json_t *task, enum dtype *dt)
{
	const json_t *t;
	size_t i;

	json_array_foreach(json_object_get(task, "inputs"), i, t)
		if (dtype_parse(json_string_value(json_object_get(t, "dtype")), dt) == 0 &&
		    DTYPE_INTEGRAL(*dt))
			return json_string_value(json_object_get(t, "name"));
	return NULL;
}

/* The value of placeholder name for task, or NULL with err set. Names:
 * in, in2, ... / out, out2, ... (tensor names), variant, ninputs, noutputs,
 * in_params, in_ptrs, bind (for templates over any number of float inputs,
 * which refuse an integer one), real_kind and real_bytes (the float
 * storage type: RULES_PRELUDE) and the members of the task's spec. */
static char *
placeholder(const json_t *task, const char *variant, const char *name,
	int in_plan, char *err, size_t errlen)
{
	const json_t *spec = json_object_get(task, "spec");
	enum dtype idt;
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
	if (strcmp(name, "real_kind") == 0 || strcmp(name, "real_bytes") == 0) {
		enum dtype dt;
		if (rules_task_real(task, &dt, err, errlen) < 0)
			return NULL;
		if (dt == DT_F64) {
			errf(err, errlen, "{{%s}}: f64 is not a storage type of the "
				"families (f32, f16, bf16)", name);
			return NULL;
		}
		if (strcmp(name, "real_bytes") == 0)
			return xasprintf("%zu", dtype_size(dt));
		return xstrdup(dt == DT_F16 ? "1" : dt == DT_BF16 ? "2" : "0");
	}
	if ((strcmp(name, "in_params") == 0 || strcmp(name, "bind") == 0) &&
	    (s = integer_input(task, &idt))) {
		errf(err, errlen, "{{%s}}: input %s is %s; this template reads "
			"every input as a float", name, s, idt == DT_BOOL ? "a bool" : "an integer");
		return NULL;
	}
	if (strcmp(name, "in_params") == 0)
		return inputs_join(task, "const real *__restrict__ in%d", ", ");
	if (strcmp(name, "in_ptrs") == 0)
		return inputs_join(task, "in%d", ", ");
	if (strcmp(name, "bind") == 0)
		return inputs_join(task, "[[maybe_unused]] const float %2$s = IN(%1$d);", " ");
	if ((v = spec_text(spec, name, in_plan)))
		return v;
	errf(err, errlen, "{{%s}}: not in the task's spec", name);
	return NULL;
}

struct placeholder_ctx {
	const json_t *task;
	const char *variant;
	int in_plan;
};

static char *
placeholder_value(void *ctx, const char *name, char *err, size_t errlen)
{
	const struct placeholder_ctx *c = ctx;

	return placeholder(c->task, c->variant, name, c->in_plan, err, errlen);
}

char *
rules_substitute(const char *text, const json_t *task, const char *variant,
	int in_plan, char *err, size_t errlen)
{
	struct placeholder_ctx c = { task, variant, in_plan };

	return template_expand(text, placeholder_value, &c, 0, err, errlen, NULL);
}

/* A copy of the launch plan template with every string substituted; an
 * args element that is exactly "{{inputs}}" or "{{outputs}}" becomes the
 * names of all the task's inputs or outputs, and a launch's kernel takes
 * spec members as they are, not as size expressions ("mha_{{act}}").
 * Returns NULL with err set. */
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
		if (!(s = rules_substitute(json_string_value(v), task, variant, 1, err, errlen)))
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
			if (!strcmp(k, "kernel") && json_is_string(e)) {
				if (!(s = rules_substitute(json_string_value(e), task, variant, 0,
				    err, errlen))) {
					json_decref(out);
					return NULL;
				}
				json_object_set_new(out, k, json_string(s));
				free(s);
				continue;
			}
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

/* ---- configurations ---- */

json_t *
rules_render_one(const json_t *family, const json_t *task, const char *variant,
	const json_t *knobs, char *err, size_t errlen)
{
	const json_t *var = rules_variant(family, variant), *decl, *k, *v;
	json_t *defines, *launch = NULL, *key, *c = NULL, *optask = NULL;
	const char *name;
	char *src = NULL, *dom, id[65], e[RULES_ERR];

	if (!var) {
		errf(err, errlen, "no variant '%s' in family %s", variant,
			json_string_value(json_object_get(family, "family")));
		return NULL;
	}
	defines = rules_knobs_complete(var, knobs);
	decl = json_object_get(var, "knobs");
	json_object_foreach((json_t *)decl, name, k) {
		v = json_object_get(defines, name);
		if (!rules_in_domain(k, json_integer_value(v))) {
			dom = rules_domain_text(k);
			errf(err, errlen, "%s = %" JSON_INTEGER_FORMAT " is not in "
				"its domain %s", name, json_integer_value(v), dom);
			free(dom);
			goto out;
		}
	}
	if (rules_constraints_check(var, task, defines, err, errlen) < 0)
		goto out;
	/* the spec's ops spelled out for the source ({{op_map}}, ...) */
	optask = rules_op_expand(family, task);
	if (!(src = rules_substitute(json_string_value(json_object_get(var,
	    "source_text")), optask, variant, 0, err, errlen)))
		goto out;
	if (!(launch = plan_render(json_object_get(var, "launch"), optask, variant, err,
	    errlen)))
		goto out;
	if (task_plan_check(launch, task, defines, e, sizeof(e)) < 0) {
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
	json_decref(optask);
	return c;
}

json_t *
rules_render(const json_t *family, const json_t *task, const char *variant,
	const json_t *knobs, char *err, size_t errlen)
{
	if (json_object_get(task, "then"))
		return rules_chain_render(family, task, variant, knobs, err, errlen);
	return rules_render_one(family, task, variant, knobs, err, errlen);
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
		json_array_append_new(out, rules_config_new(vname, json_object()));
		json_object_foreach((json_t *)json_object_get(var, "knobs"), kname, k)
			json_array_foreach(json_object_get(k, "values"), i, v) {
				if (json_equal((json_t *)v, json_object_get(k, "default")))
					continue;
				knobs = json_object();
				json_object_set(knobs, kname, (json_t *)v);
				json_array_append_new(out, rules_config_new(vname, knobs));
			}
	}
	return out;
}

