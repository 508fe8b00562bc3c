/* render.c: a configuration of a template family (a variant and its
 * knob values) rendered into a candidate for a task: the {{placeholders}}
 * of its source and launch plan filled in, its constraints and plan
 * checked; and the sweep of configurations the tests render. */
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

/* rules_render for one stage: task is the stage as a task of its own. */
static json_t *
render_one(const json_t *family, const json_t *task, const char *variant,
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

/* ---- chains ---- */

/* text with each identifier that names a knob of knobs replaced by its
 * value in parentheses: a later stage's launch plan, whose knobs are not
 * the candidate's defines. A new string. */
static char *
bind_knobs(const char *text, const json_t *knobs)
{
	size_t len = strlen(text), cap = len + 1, n = 0, i = 0, j;
	char *out = xmalloc(cap), name[64];
	const json_t *v;

	while (i < len) {
		j = i;
		if (isalpha((unsigned char)text[i]) || text[i] == '_') {
			while (j < len && (isalnum((unsigned char)text[j]) || text[j] == '_'))
				j++;
		} else if (isdigit((unsigned char)text[i]) || text[i] == '.') {
			/* a number, exponent and suffix included: 1e-05's e is no name */
			while (j < len && (isalnum((unsigned char)text[j]) || text[j] == '_' ||
			    text[j] == '.' || ((text[j] == '-' || text[j] == '+') &&
			    (text[j - 1] == 'e' || text[j - 1] == 'E'))))
				j++;
		} else
			j = i + 1;
		v = NULL;
		if ((isalpha((unsigned char)text[i]) || text[i] == '_') && j - i < sizeof(name)) {
			memcpy(name, text + i, j - i);
			name[j - i] = '\0';
			v = json_object_get(knobs, name);
		}
		if (v) {
			snprintf(name, sizeof(name), "(%" JSON_INTEGER_FORMAT ")",
				json_integer_value(v));
			cap += strlen(name);
			out = xrealloc(out, cap);
			memcpy(out + n, name, strlen(name));
			n += strlen(name);
		} else {
			memcpy(out + n, text + i, j - i);
			n += j - i;
		}
		i = j;
	}
	out[n] = '\0';
	return out;
}

/* A copy of a later stage's plan value v with its knobs bound and its
 * kernels and workspace buffers renamed through names (old -> new). */
static json_t *
stage_plan(const json_t *v, const json_t *knobs, const json_t *names)
{
	const json_t *e, *r;
	json_t *out;
	const char *k;
	char *s;
	size_t i;

	if (json_is_string(v)) {
		if ((r = json_object_get(names, json_string_value(v))))
			return json_incref((json_t *)r);
		s = bind_knobs(json_string_value(v), knobs);
		out = json_string(s);
		free(s);
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, e)
			json_array_append_new(out, stage_plan(e, knobs, names));
		return out;
	}
	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)v, k, e)
			json_object_set_new(out, k, stage_plan(e, knobs, names));
		return out;
	}
	return json_deep_copy(v);
}

/* Appends the formatted text to *s (a string the caller frees). */
static void
cat(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
cat(char **s, const char *fmt, ...)
{
	va_list ap;
	char *more, *both;

	va_start(ap, fmt);
	if (vasprintf(&more, fmt, ap) < 0)
		die(EXIT_FAIL, "out of memory");
	va_end(ap);
	both = xasprintf("%s%s", *s, more);
	free(more);
	free(*s);
	*s = both;
}

/* The start of the name a directive line of src at p defines with
 * directive ("define", "include"), or NULL: p at a line's start, then
 * blanks, '#', blanks and the directive. */
static const char *
directive(const char *p, const char *what)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != '#')
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, what, strlen(what)) != 0)
		return NULL;
	p += strlen(what);
	if (*p != ' ' && *p != '\t' && *p != '<' && *p != '"')
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "#undef NAME" for every macro src #defines, and for each knob (a
 * stage's, defined on the command line or before its text): a stage's
 * macros are undefined after it, so that the next stage's `#if
 * defined(...)` and `#ifndef` see its own (gemm's B_LAYOUT_nk, pool's
 * PL_COUNT_padded, a VARIANT_ flag). A new string. */
static char *
undefine_all(const char *src, const json_t *knobs)
{
	const char *p = src, *q;
	char *out = xstrdup("");
	const char *k;
	const json_t *v;

	for (; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!(q = directive(p, "define")))
			continue;
		for (p = q; isalnum((unsigned char)*q) || *q == '_'; q++)
			;
		if (q > p)
			cat(&out, "#undef %.*s\n", (int)(q - p), p);
	}
	json_object_foreach((json_t *)knobs, k, v)
		cat(&out, "#undef %s\n", k);
	return out;
}

/* src without its #include lines, which are appended to *includes: a later
 * stage's headers come first in the whole source, outside its namespace
 * (row_norm's cooperative_groups.h would be read inside it). A new
 * string. */
static char *
hoist_includes(const char *src, char **includes)
{
	const char *p = src, *end;
	char *out = xstrdup("");
	int len;

	for (; *p; p = end) {
		end = strchr(p, '\n');
		end = end ? end + 1 : p + strlen(p);
		len = (int)(end - p);
		if (directive(p, "include"))
			cat(includes, "%.*s%s", len, p, end[-1] == '\n' ? "" : "\n");
		else
			cat(&out, "%.*s", len, p);
	}
	return out;
}

/* The names of the kernels src defines (extern "C", then the name before
 * the first parenthesis that is not __launch_bounds__'s), into names as
 * name -> t<s>_name: every one is renamed, launched or not (gemm's source
 * defines h3's kernels beside wg's). */
static void
source_kernels(const char *src, size_t s, json_t *names)
{
	const char *p = src, *q, *id = NULL;
	char name[PLAN_NAME_MAX], ren[PLAN_NAME_MAX + 32];
	size_t idlen = 0;
	int depth;

	while ((p = strstr(p, "extern \"C\""))) {
		p += strlen("extern \"C\"");
		id = NULL;
		while (*p && *p != '(' && *p != ';' && *p != '{') {
			if (isalpha((unsigned char)*p) || *p == '_') {
				for (q = p; isalnum((unsigned char)*q) || *q == '_'; q++)
					;
				id = p;
				idlen = (size_t)(q - p);
				p = q;
				if (idlen == strlen("__launch_bounds__") &&
				    strncmp(id, "__launch_bounds__", idlen) == 0) {
					while (*p && *p != '(')
						p++;
					for (depth = 0; *p; p++) {
						depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
						if (depth == 0)
							break;
					}
					if (*p)
						p++;
					id = NULL;
				}
				continue;
			}
			p++;
		}
		if (*p == '(' && id && idlen < sizeof(name)) {
			memcpy(name, id, idlen);
			name[idlen] = '\0';
			snprintf(ren, sizeof(ren), "t%zu_%s", s, name);
			json_object_set_new(names, name, json_string(ren));
		}
	}
}

/* The element count of stage s's buffer as a size expression. */
static char *
buffer_count(const json_t *task, size_t s)
{
	const json_t *shape = json_object_get(json_object_get(json_array_get(
		json_object_get(task, "then"), s), "from"), "shape"), *d;
	char *c = xstrdup("1"), *next;
	size_t i;

	json_array_foreach(shape, i, d) {
		if (json_is_integer(d))
			next = xasprintf("%s * %" JSON_INTEGER_FORMAT, c, json_integer_value(d));
		else
			next = xasprintf("%s * (%s)", c, json_string_value(d));
		free(c);
		c = next;
	}
	return c;
}

/* Stage s (> 0) of a chain appended to the candidate so far: its family's
 * starting configuration for the stage (rules_start: a later stage is not
 * searched, kgen moves the first stage's knobs), its source in a namespace
 * of its own after its knobs as #defines and every kernel it defines
 * renamed by macro to t<s>_<name> (two stages of one family would define a
 * kernel twice), its #include lines moved to *includes, every macro it
 * defines undefined after it; its launches after the ones before, its
 * workspace renamed so, and the buffer it reads added. Returns 0, or -1
 * with err. */
static int
chain_stage(const json_t *family, const json_t *task, size_t s, char **includes,
	char **src, json_t *launches, json_t *workspace, char *err, size_t errlen)
{
	const char *fname = json_string_value(json_object_get(json_array_get(
		json_object_get(task, "then"), s - 1), "family"));
	const json_t *plan, *l, *w, *v;
	json_t *fam = NULL, *view = task_stage(task, s), *cfg = NULL, *c = NULL, *names;
	json_t *kernels = NULL;
	const char *var, *k;
	char e[RULES_ERR], buf[PLAN_NAME_MAX + 16], *count, *own, *undef;
	size_t i;
	int rc = -1;

	names = json_object();
	if (!(fam = rules_family_load(json_string_value(json_object_get(family, "_dir")),
	    fname, e, sizeof(e))) || rules_spec_check(fam, view, e, sizeof(e)) < 0 ||
	    !(cfg = rules_start(fam, view, NULL, e, sizeof(e))) ||
	    !(c = render_one(fam, view, var = json_string_value(json_object_get(cfg, "variant")),
	    json_object_get(cfg, "knobs"), e, sizeof(e)))) {
		errf(err, errlen, "then[%zu] (%s): %s", s - 1, fname, e);
		goto out;
	}
	plan = json_object_get(c, "launch");
	kernels = json_object();
	source_kernels(json_string_value(json_object_get(c, "source")), s, kernels);
	json_object_update(names, kernels);
	/* the stage's tensors keep their names (no knob binding in them) */
	json_array_foreach(json_object_get(view, "inputs"), i, w)
		json_object_set(names, json_string_value(json_object_get(w, "name")),
			json_object_get(w, "name"));
	json_array_foreach(json_object_get(view, "outputs"), i, w)
		json_object_set(names, json_string_value(json_object_get(w, "name")),
			json_object_get(w, "name"));
	json_array_foreach(json_object_get(plan, "workspace"), i, w) {
		k = json_string_value(json_object_get(w, "name"));
		snprintf(buf, sizeof(buf), "t%zu_%s", s, k);
		json_object_set_new(names, k, json_string(buf));
	}
	/* the buffer this stage reads, written by the stage before */
	task_stage_buffer(s - 1, buf, sizeof(buf));
	count = buffer_count(task, s - 1);
	json_array_append_new(workspace, json_pack("{s:s, s:O, s:s}", "name", buf, "dtype",
		json_object_get(json_object_get(json_array_get(json_object_get(task, "then"),
		s - 1), "from"), "dtype"), "count", count));
	free(count);
	json_array_foreach(json_object_get(plan, "launches"), i, l)
		json_array_append_new(launches, stage_plan(l, json_object_get(c, "defines"), names));
	json_array_foreach(json_object_get(plan, "workspace"), i, w)
		json_array_append_new(workspace, stage_plan(w, json_object_get(c, "defines"), names));
	/* its source: its knobs and kernel names defined, its headers hoisted,
	 * the rest inside its own namespace (its helpers may share names with
	 * the stages' before it), and every macro it defined undefined after
	 * it */
	cat(src, "\n\n/* ---- then[%zu]: family %s, variant %s, its starting "
		"configuration ---- */\n", s - 1, fname, var);
	json_object_foreach(json_object_get(c, "defines"), k, v)
		cat(src, "#define %s %" JSON_INTEGER_FORMAT "\n", k, json_integer_value(v));
	json_object_foreach(kernels, k, v)
		cat(src, "#define %s %s\n", k, json_string_value(v));
	own = hoist_includes(json_string_value(json_object_get(c, "source")), includes);
	undef = undefine_all(own, json_object_get(c, "defines"));
	cat(src, "namespace htam_then%zu {\n%s\n} /* namespace htam_then%zu */\n%s", s, own, s,
		undef);
	json_object_foreach(kernels, k, v)
		cat(src, "#undef %s\n", k);
	free(own);
	free(undef);
	rc = 0;
out:
	json_decref(kernels);
	json_decref(names);
	json_decref(c);
	json_decref(cfg);
	json_decref(view);
	json_decref(fam);
	return rc;
}

int
rules_chain_check(const json_t *family, const json_t *task, char *err, size_t errlen)
{
	const char *fname;
	json_t *fam, *view;
	char e[RULES_ERR];
	size_t s;
	int rc;

	for (s = 1; s < task_stages(task); s++) {
		fname = json_string_value(json_object_get(json_array_get(
			json_object_get(task, "then"), s - 1), "family"));
		view = task_stage(task, s);
		fam = rules_family_load(json_string_value(json_object_get(family, "_dir")),
			fname, e, sizeof(e));
		rc = fam ? rules_spec_check(fam, view, e, sizeof(e)) : -1;
		json_decref(fam);
		json_decref(view);
		if (rc < 0)
			return errf(err, errlen, "then[%zu] (%s): %s", s - 1, fname, e);
	}
	return 0;
}

json_t *
rules_render(const json_t *family, const json_t *task, const char *variant,
	const json_t *knobs, char *err, size_t errlen)
{
	json_t *view, *c, *launches, *workspace, *launch, *key;
	char *src, *includes, *whole, id[65], e[RULES_ERR];
	size_t s;

	if (!json_object_get(task, "then"))
		return render_one(family, task, variant, knobs, err, errlen);
	view = task_stage(task, 0);
	c = render_one(family, view, variant, knobs, err, errlen);
	json_decref(view);
	if (!c)
		return NULL;
	/* the first stage's macros, its knobs (the candidate's defines) among
	 * them, undefined after it */
	src = xstrdup(json_string_value(json_object_get(c, "source")));
	whole = undefine_all(src, json_object_get(c, "defines"));
	cat(&src, "\n%s", whole);
	free(whole);
	includes = xstrdup("");
	launches = json_deep_copy(json_object_get(json_object_get(c, "launch"), "launches"));
	workspace = json_object_get(json_object_get(c, "launch"), "workspace") ?
		json_deep_copy(json_object_get(json_object_get(c, "launch"), "workspace")) :
		json_array();
	for (s = 1; s < task_stages(task); s++)
		if (chain_stage(family, task, s, &includes, &src, launches, workspace, err,
		    errlen) < 0)
			goto fail;
	whole = xasprintf("%s%s", includes, src);
	free(src);
	src = whole;
	launch = json_pack("{s:o, s:o}", "launches", launches, "workspace", workspace);
	launches = workspace = NULL;
	if (task_plan_check(launch, task, json_object_get(c, "defines"), e, sizeof(e)) < 0) {
		errf(err, errlen, "launch plan: %s", e);
		json_decref(launch);
		goto fail;
	}
	key = json_pack("{s:s, s:O, s:O}", "source", src, "defines",
		json_object_get(c, "defines"), "launch", launch);
	json_sha256_hex(key, id);
	json_decref(key);
	json_object_set_new(c, "id", json_string(id));
	json_object_set_new(c, "source", json_string(src));
	json_object_set_new(c, "launch", launch);
	free(src);
	free(includes);
	return c;
fail:
	free(src);
	free(includes);
	json_decref(launches);
	json_decref(workspace);
	json_decref(c);
	return NULL;
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

