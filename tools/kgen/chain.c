/* chain.c: a chain's stages (lib/task.h, docs/templates.md "Chains")
 * rendered into one candidate: the first stage at the configuration kgen
 * chose, each later one at its family's start, their sources composed
 * (namespaces, renamed kernels, macros undefined between stages, headers
 * hoisted) and their launch plans joined over the buffers between them. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "die.h"
#include "plan.h"
#include "task.h"
#include "util.h"
#include "rules.h"

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
	char *out = xmalloc(strlen(src) + 1);
	size_t n = 0;

	for (; *p; p = end) {
		end = strchr(p, '\n');
		end = end ? end + 1 : p + strlen(p);
		if (directive(p, "include")) {
			cat(includes, "%.*s%s", (int)(end - p), p, end[-1] == '\n' ? "" : "\n");
			continue;
		}
		memcpy(out + n, p, (size_t)(end - p));
		n += (size_t)(end - p);
	}
	out[n] = '\0';
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
	    !(c = rules_render_one(fam, view, var = json_string_value(json_object_get(cfg, "variant")),
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
rules_chain_render(const json_t *family, const json_t *task, const char *variant,
	const json_t *knobs, char *err, size_t errlen)
{
	json_t *view, *c, *launches, *workspace, *launch, *key;
	char *src, *includes, *whole, id[65], e[RULES_ERR];
	size_t s;

	view = task_stage(task, 0);
	c = rules_render_one(family, view, variant, knobs, err, errlen);
	json_decref(view);
	if (!c)
		return NULL;
	/* the first stage in a namespace of its own too, its headers hoisted:
	 * in the global one, its helpers would meet a later stage's copies of
	 * them by argument-dependent lookup wherever they take a type of the
	 * global namespace (gemm's wgf_take, a float4 array: two stages of
	 * wgb were ambiguous); its macros, its knobs (the candidate's defines)
	 * among them, undefined after it */
	includes = xstrdup("");
	whole = hoist_includes(json_string_value(json_object_get(c, "source")), &includes);
	src = xasprintf("namespace htam_then0 {\n%s\n} /* namespace htam_then0 */\n", whole);
	free(whole);
	whole = undefine_all(src, json_object_get(c, "defines"));
	cat(&src, "%s", whole);
	free(whole);
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
