/* rules.c: kgen's rules generator. From a state it makes candidates of
 * the task's template family (family.c loads it, render.c renders a
 * configuration, chain.c a chain's stages): it starts from the current
 * kernel's configuration, moves it as the memory's strategies say,
 * repairs or refuses what breaks a constraint, and fills up with one-knob
 * steps. The backend interface over it is rules_backend.c.
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

/* Appends a note to notes (an array, or NULL for none); note(g, ...) to
 * the generation's. */
static void
add_note(json_t *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define note(g, ...) add_note((g)->notes, __VA_ARGS__)

static void
add_note(json_t *notes, const char *fmt, ...)
{
	char buf[RULES_ERR + 256];
	va_list ap;

	if (!notes)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(notes, json_string(buf));
}

json_t *
rules_start(const json_t *family, const json_t *task, json_t *notes, char *err,
	size_t errlen)
{
	const json_t *starts = json_object_get(family, "starts"), *st;
	const char *def = json_string_value(json_object_get(family, "default"));
	const json_t *vars = json_object_get(family, "variants"), *v;
	char e[RULES_ERR], why[RULES_ERR * 2] = "";
	const char *var, *name;
	int64_t val;
	json_t *c, *knobs;
	size_t i;

	json_array_foreach(starts, i, st) {
		var = json_string_value(json_object_get(st, "variant"));
		if (rules_when(json_string_value(json_object_get(st, "when")), task, var,
		    &val, e, sizeof(e)) < 0) {
			add_note(notes, "starts[%zu]: when: %s", i, e);
			continue;
		}
		if (val <= 0)
			continue;
		if (!rules_variant_applies(family, var, task, e, sizeof(e))) {
			add_note(notes, "starts[%zu]: %s", i, e);
			continue;
		}
		knobs = rules_knobs_complete(rules_variant(family, var),
			json_object_get(st, "set"));
		if (!(c = rules_render(family, task, var, knobs, e, sizeof(e)))) {
			add_note(notes, "starts[%zu] (%s) refused: %s", i, var, e);
			json_decref(knobs);
			continue;
		}
		json_decref(c);
		return rules_config_new(var, knobs);
	}
	for (int pass = 0; pass < 2; pass++)
		json_object_foreach((json_t *)vars, name, v) {
			if ((pass == 0) != (strcmp(name, def) == 0))
				continue;
			if (!rules_variant_applies(family, name, task, e, sizeof(e))) {
				snprintf(why + strlen(why), sizeof(why) - strlen(why),
					"%s%s", *why ? "; " : "", e);
				continue;
			}
			if (!(c = rules_render(family, task, name, NULL, e, sizeof(e)))) {
				snprintf(why + strlen(why), sizeof(why) - strlen(why),
					"%s%s: %s", *why ? "; " : "", name, e);
				continue;
			}
			json_decref(c);
			return rules_config_new(name, rules_knobs_complete(v, NULL));
		}
	errf(err, errlen, "task \"%s\": no variant of family %s serves it%s%s",
		json_string_value(json_object_get(task, "id")),
		json_string_value(json_object_get(family, "family")), *why ? ": " : "", why);
	return NULL;
}

/* The configuration the moves start from: the best kernel's when it is an
 * instance of this family (*measured set), else rules_start's. NULL with
 * err when no variant serves the task. */
static json_t *
base_config(struct gen *g, const json_t *state, int *measured, char *err,
	size_t errlen)
{
	const json_t *best = json_object_get(json_object_get(state, "best"), "candidate");
	const char *fam = json_string_value(json_object_get(best, "family"));
	const char *var = json_string_value(json_object_get(best, "variant"));
	char e[RULES_ERR];

	*measured = 0;
	if (fam && var && strcmp(fam, g->fname) == 0 && rules_variant(g->family, var) &&
	    rules_variant_applies(g->family, var, g->task, e, sizeof(e))) {
		*measured = 1;
		return rules_config_new(var, rules_knobs_complete(rules_variant(g->family, var),
			json_object_get(best, "defines")));
	}
	return rules_start(g->family, g->task, g->notes, err, errlen);
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
	int total, n, most = move_knobs_in(move, rules_variant(g->family, bvar), &total);

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

/* One knob of a move: "set" puts a value of the knob's domain; "mul" and
 * "add" move it relatively, toward the value they give, to the nearest
 * values of its domain on that side (rel: the alternatives, nearest
 * first, which a repair tries in turn). Each returns 0, or -1 when it
 * refuses the move (with a note). */
typedef int (*move_op)(struct gen *g, const char *label, const char *name,
	const json_t *knob, const json_t *v, json_t *knobs, struct rel *rel, size_t *nrel);

static int
op_set(struct gen *g, const char *label, const char *name, const json_t *knob,
	const json_t *v, json_t *knobs, struct rel *rel, size_t *nrel)
{
	(void)rel;
	(void)nrel;
	if (!json_is_integer(v) || !rules_in_domain(knob, json_integer_value(v))) {
		char *dom = rules_domain_text(knob);
		note(g, "%s: refused: %s: set to a value not in its domain %s", label, name, dom);
		free(dom);
		return -1;
	}
	json_object_set(knobs, name, (json_t *)v);
	return 0;
}

/* The relative moves: the knob toward target. */
static int
move_toward(struct gen *g, const char *label, const char *name, const json_t *knob,
	double target, json_t *knobs, struct rel *rel, size_t *nrel)
{
	json_int_t cur = json_integer_value(json_object_get(knobs, name));

	if (target == (double)cur || *nrel == MAX_REL)
		return 0;
	rel[*nrel].name = name;
	rel[*nrel].n = relative_values(knob, cur, target, rel[*nrel].alt, MAX_ALT);
	if (rel[*nrel].n == 0) {
		note(g, "%s: refused: %s is already at its %s value %" JSON_INTEGER_FORMAT,
			label, name, target > cur ? "largest" : "smallest", cur);
		return -1;
	}
	json_object_set_new(knobs, name, json_integer(rel[*nrel].alt[0]));
	(*nrel)++;
	return 0;
}

static int
op_mul(struct gen *g, const char *label, const char *name, const json_t *knob,
	const json_t *v, json_t *knobs, struct rel *rel, size_t *nrel)
{
	if (!json_is_number(v) || json_number_value(v) <= 0) {
		note(g, "%s: refused: mul.%s: expected a positive number", label, name);
		return -1;
	}
	return move_toward(g, label, name, knob, (double)json_integer_value(
		json_object_get(knobs, name)) * json_number_value(v), knobs, rel, nrel);
}

static int
op_add(struct gen *g, const char *label, const char *name, const json_t *knob,
	const json_t *v, json_t *knobs, struct rel *rel, size_t *nrel)
{
	if (!json_is_number(v)) {
		note(g, "%s: refused: add.%s: expected a whole number", label, name);
		return -1;
	}
	return move_toward(g, label, name, knob, (double)json_integer_value(
		json_object_get(knobs, name)) + json_number_value(v), knobs, rel, nrel);
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
	const char *name, *u;
	static const struct { const char *name; move_op fn; } ops_[] = {
		{ "set", op_set }, { "mul", op_mul }, { "add", op_add } };
	char e[RULES_ERR], e2[RULES_ERR], *label = move_label(sid, m, move);
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
		var = rules_variant(g->family, mvar);
		knobs = rules_knobs_complete(var, NULL);
		json_object_foreach((json_t *)json_object_get(var, "knobs"), name, k) {
			v = json_object_get(bknobs, name);
			if (v && rules_in_domain(k, json_integer_value(v)) &&
			    !json_equal((json_t *)v, json_object_get(knobs, name))) {
				json_object_set(knobs, name, (json_t *)v);
				carried = 1;
			}
		}
		touched = 1;
	} else
		knobs = json_deep_copy(bknobs);
	var = rules_variant(g->family, mvar);
	decl = json_object_get(var, "knobs");
	for (j = 0; j < LEN(ops_); j++) {
		const json_t *o = json_object_get(move, ops_[j].name);

		if (o && !json_is_object(o)) {
			note(g, "%s: refused: %s: expected an object", label, ops_[j].name);
			goto out;
		}
		json_object_foreach((json_t *)o, name, v) {
			if (!(k = json_object_get(decl, name)))
				continue; /* not a knob of this variant */
			touched = 1;
			if (ops_[j].fn(g, label, name, k, v, knobs, rel, &nrel) < 0)
				goto out;
		}
	}
	if (!touched)
		goto out; /* nothing in the move concerns this variant */
	if (strcmp(mvar, bvar) == 0 && json_equal(knobs, (json_t *)bknobs)) {
		note(g, "%s: changes nothing here", label);
		goto out;
	}
	cfg = rules_config_new(mvar, json_incref(knobs));
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

	var = rules_variant(g->family, vname);
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
			json_array_append_new(out, rules_config_new(vname, kn));
		}
	}
	json_object_foreach((json_t *)json_object_get(g->family, "variants"), oname, var) {
		if (strcmp(oname, vname) == 0 ||
		    !rules_variant_applies(g->family, oname, g->task, e, sizeof(e)))
			continue;
		kn = rules_knobs_complete(var, NULL);
		json_object_foreach((json_t *)json_object_get(var, "knobs"), name, k) {
			const json_t *v = json_object_get(knobs, name);

			if (v && rules_in_domain(k, json_integer_value(v)))
				json_object_set(kn, name, (json_t *)v);
		}
		json_array_append_new(out, rules_config_new(oname, kn));
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
	if (strcmp(fname, TASK_NO_FAMILY) == 0)
		return errf(err, errlen, "no template family serves this task (its family is "
			"\"%s\"): the llm backend writes kernels for any task", TASK_NO_FAMILY), NULL;
	dir = rules_templates_dir(templates_dir);
	family = rules_family_load(dir, fname, err, errlen);
	free(dir);
	if (!family)
		return NULL;
	if (rules_spec_check(family, task, err, errlen) < 0 ||
	    rules_chain_check(family, task, err, errlen) < 0) {
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

