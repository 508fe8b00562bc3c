/* prompt.c: the llm backend's prompt. Its wording lives in two template
 * files a user can read and edit (tools/kgen/prompts/system.txt and
 * user.txt); this file finds them and fills their {{placeholders}} with
 * what a state record says: the task, the current best kernel and its
 * measurements, the direction, the strategies, experiences and risks the
 * memory returned, and the recent failures. */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "die.h"
#include "template.h"
#include "util.h"
#include "kgen.h"

/* The default templates, built in by prompts.S. */
extern const char kgen_prompt_system[], kgen_prompt_user[];

/* How much of a log or an unfamiliar JSON value a prompt quotes. */
#define LOG_MAX 1500
#define ITEM_MAX 400
#define FAILURES_MAX 6

/* A growing string. */
struct buf {
	char *s;
	size_t len, cap;
};

static void
buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die(EXIT_FAIL, "out of memory");
	va_end(ap);
	buf_puts(b, s);
	free(s);
}

/* Appends at most max bytes of s, saying how much was left out. */
static void
buf_put_bounded(struct buf *b, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max) {
		buf_puts(b, s);
		return;
	}
	buf_add(b, s, max);
	buf_printf(b, "\n[... %zu more bytes]", n - max);
}

/* Appends v as one line of JSON (a string as it is), at most max bytes. */
static void
buf_put_json(struct buf *b, const json_t *v, size_t max)
{
	char *s;

	if (json_is_string(v)) {
		buf_put_bounded(b, json_string_value(v), max);
		return;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
	buf_put_bounded(b, s ? s : "null", max);
	free(s);
}

/* Appends a number as a person writes it: an integer plainly, a real with
 * up to six significant digits. */
static void
buf_put_number(struct buf *b, const json_t *v)
{
	if (json_is_integer(v))
		buf_printf(b, "%lld", (long long)json_integer_value(v));
	else
		buf_printf(b, "%.6g", json_number_value(v));
}

/* What a placeholder is filled from. */
struct ctx {
	const json_t *state, *task;
	int index, k;
};

#define GET(o, name) json_object_get((o), (name))

static void
put_text(struct buf *b, const json_t *v, const char *none)
{
	buf_puts(b, json_is_string(v) && *json_string_value(v) ?
		json_string_value(v) : none);
}

/* "rows = 4096, cols = 393216" */
static void
put_sizes(struct buf *b, const json_t *sizes)
{
	const char *name;
	json_t *v;
	int first = 1;

	json_object_foreach((json_t *)sizes, name, v) {
		buf_printf(b, "%s%s = ", first ? "" : ", ", name);
		buf_put_number(b, v);
		first = 0;
	}
}

static void
fill_task_id(struct buf *b, const struct ctx *c)
{
	put_text(b, GET(c->task, "id"), "?");
}

static void
fill_task_description(struct buf *b, const struct ctx *c)
{
	put_text(b, GET(c->task, "description"), "(no description)");
}

static void
fill_task_torch(struct buf *b, const struct ctx *c)
{
	put_text(b, GET(c->task, "torch"), "(not given)");
}

static void
fill_task_family(struct buf *b, const struct ctx *c)
{
	put_text(b, GET(c->task, "family"), "(not given)");
}

static void
fill_task_params(struct buf *b, const struct ctx *c)
{
	put_sizes(b, GET(c->task, "params"));
}

static void
fill_task_check_params(struct buf *b, const struct ctx *c)
{
	const json_t *sizes;
	size_t i;

	json_array_foreach(GET(c->task, "check_params"), i, sizes) {
		buf_puts(b, i ? "; " : "");
		put_sizes(b, sizes);
	}
}

/* One line per tensor: "- input x: f32 [rows, cols], init {...}". */
static void
fill_task_tensors(struct buf *b, const struct ctx *c)
{
	static const char *const lists[] = { "inputs", "outputs" };
	const json_t *t, *dim;
	size_t l, i, j;

	for (l = 0; l < LEN(lists); l++)
		json_array_foreach(GET(c->task, lists[l]), i, t) {
			buf_printf(b, "- %s %s: %s [", l ? "output" : "input",
				json_string_value(GET(t, "name")),
				json_string_value(GET(t, "dtype")));
			json_array_foreach(GET(t, "shape"), j, dim) {
				buf_puts(b, j ? ", " : "");
				buf_put_json(b, dim, ITEM_MAX);
			}
			buf_puts(b, "]");
			if (GET(t, "init")) {
				buf_puts(b, ", drawn from ");
				buf_put_json(b, GET(t, "init"), ITEM_MAX);
			}
			buf_puts(b, "\n");
		}
	if (b->len && b->s[b->len - 1] == '\n')
		b->s[--b->len] = '\0';
}

static void
fill_task_tolerance(struct buf *b, const struct ctx *c)
{
	static const struct { const char *key, *words; } parts[] = {
		{ "atol", "atol" }, { "rtol", "rtol" },
		{ "rel_l2", "relative L2 error" },
	};
	const json_t *tol = GET(c->task, "tolerance");
	size_t i;
	int n = 0;

	for (i = 0; i < LEN(parts); i++)
		if (json_is_number(GET(tol, parts[i].key))) {
			buf_printf(b, "%s%s ", n++ ? ", " : "", parts[i].words);
			buf_put_number(b, GET(tol, parts[i].key));
		}
	if (n == 0)
		buf_puts(b, "exact");
	if (json_is_string(GET(tol, "why")))
		buf_printf(b, " (%s)", json_string_value(GET(tol, "why")));
}

static void
fill_reference_source(struct buf *b, const struct ctx *c)
{
	const char *s = json_string_value(GET(GET(c->task, "reference"), "source"));
	size_t n;

	buf_puts(b, s ? s : "");
	n = b->len;
	while (n > 0 && b->s[n - 1] == '\n')
		n--;
	b->s[b->len = n] = '\0';
}

static void
fill_reference_launch(struct buf *b, const struct ctx *c)
{
	buf_put_json(b, GET(GET(c->task, "reference"), "launch"), 1 << 20);
}

/* The measurements of best: time, floor, bound, and per kernel the
 * registers and spills. */
static void
put_measurements(struct buf *b, const json_t *best, const json_t *features)
{
	const json_t *bench = GET(best, "bench");
	const json_t *median = GET(GET(bench, "time_us"), "median");
	const json_t *kernels = GET(GET(best, "compile"), "kernels"), *k;
	const char *name;

	if (json_is_number(median)) {
		buf_puts(b, "Measured: median ");
		buf_put_number(b, median);
		buf_puts(b, " us");
		if (json_is_number(GET(bench, "ref_time_us"))) {
			buf_puts(b, " (the reference: ");
			buf_put_number(b, GET(bench, "ref_time_us"));
			buf_puts(b, " us");
			if (json_is_number(GET(bench, "speedup"))) {
				buf_puts(b, ", speedup ");
				buf_put_number(b, GET(bench, "speedup"));
				buf_puts(b, "x");
			}
			buf_puts(b, ")");
		}
		if (json_is_number(GET(bench, "gbps"))) {
			buf_puts(b, ", ");
			buf_put_number(b, GET(bench, "gbps"));
			buf_puts(b, " GB/s");
		}
		if (json_is_number(GET(bench, "floor_us"))) {
			buf_puts(b, "; the roofline floor is ");
			buf_put_number(b, GET(bench, "floor_us"));
			buf_puts(b, " us");
		}
		buf_puts(b, ".\n");
	} else {
		buf_puts(b, "Not measured yet.\n");
	}
	if (json_is_number(GET(features, "floor_fraction")) &&
	    json_number_value(GET(features, "floor_fraction")) > 0)
		buf_printf(b, "It reaches %.1f%% of the roofline floor's speed.\n",
			100 * json_number_value(GET(features, "floor_fraction")));
	if (json_is_string(GET(features, "bound")))
		buf_printf(b, "It is %s-bound.\n",
			json_string_value(GET(features, "bound")));
	json_object_foreach((json_t *)kernels, name, k) {
		buf_printf(b, "Kernel %s: ", name);
		if (json_is_integer(GET(k, "registers")))
			buf_printf(b, "%lld registers, ",
				(long long)json_integer_value(GET(k, "registers")));
		buf_printf(b, "%lld spill stores, %lld spill loads",
			(long long)json_integer_value(GET(k, "spill_stores")),
			(long long)json_integer_value(GET(k, "spill_loads")));
		if (json_integer_value(GET(k, "smem_static")) > 0)
			buf_printf(b, ", %lld bytes of static shared memory",
				(long long)json_integer_value(GET(k, "smem_static")));
		buf_puts(b, ".\n");
	}
}

/* The kernel to beat: state.best's candidate with its plan and
 * measurements, or the reference while there is no best. */
static void
fill_best(struct buf *b, const struct ctx *c)
{
	const json_t *best = GET(c->state, "best");
	const json_t *cand = GET(best, "candidate");
	const json_t *defines = GET(cand, "defines");
	const char *src = json_string_value(GET(cand, "source"));
	const char *name;
	json_t *v;
	size_t n;

	if (src == NULL) {
		buf_puts(b, "None yet: the kernel to beat is the reference above.\n");
		put_measurements(b, best, GET(c->state, "features"));
		goto trim;
	}
	buf_printf(b, "Candidate %.12s", json_string_value(GET(cand, "id")) ?
		json_string_value(GET(cand, "id")) : "?");
	if (json_is_string(GET(cand, "strategy")))
		buf_printf(b, " (strategy %s)", json_string_value(GET(cand, "strategy")));
	buf_puts(b, ":\n\n```cuda\n");
	buf_puts(b, src);
	while (b->len > 0 && b->s[b->len - 1] == '\n')
		b->s[--b->len] = '\0';
	buf_puts(b, "\n```\n\n");
	if (json_object_size(defines) > 0) {
		buf_puts(b, "Defines (passed as -D):");
		json_object_foreach((json_t *)defines, name, v) {
			buf_printf(b, " %s=", name);
			buf_put_json(b, v, ITEM_MAX);
		}
		buf_puts(b, "\n\n");
	}
	buf_puts(b, "Launch plan:\n\n```json\n");
	buf_put_json(b, GET(cand, "launch"), 1 << 20);
	buf_puts(b, "\n```\n\n");
	put_measurements(b, best, GET(c->state, "features"));
trim:
	for (n = b->len; n > 0 && b->s[n - 1] == '\n'; n--)
		;
	b->s[b->len = n] = '\0';
}

static void
fill_history(struct buf *b, const struct ctx *c)
{
	const json_t *h;
	size_t i;

	json_array_foreach(GET(c->state, "history"), i, h) {
		buf_puts(b, i ? "\n" : "");
		buf_printf(b, "- step %lld: ", (long long)json_integer_value(GET(h, "step")));
		buf_put_json(b, GET(h, "direction"), ITEM_MAX);
		buf_puts(b, " / ");
		buf_put_json(b, GET(h, "strategy"), ITEM_MAX);
		buf_puts(b, ": ");
		buf_put_json(b, GET(h, "outcome"), ITEM_MAX);
		if (json_is_number(GET(h, "gain"))) {
			buf_puts(b, ", gain ");
			buf_put_number(b, GET(h, "gain"));
			buf_puts(b, "x");
		}
	}
	if (b->len == 0)
		buf_puts(b, "This is the first step.");
}

/* The first string among the members path names, where "a.b" looks in
 * member a's member b. */
static const json_t *
find_member(const json_t *o, const char *const *paths)
{
	for (; *paths; paths++) {
		const char *dot = strchr(*paths, '.');
		const json_t *v;
		if (dot) {
			char head[32];
			snprintf(head, sizeof head, "%.*s", (int)(dot - *paths), *paths);
			v = GET(GET(o, head), dot + 1);
		} else {
			v = GET(o, *paths);
		}
		if (v && !json_is_null(v))
			return v;
	}
	return NULL;
}

/* One failure: what failed, why, the first mismatch and the compile log.
 * It reads the members a bench or compile record has, whether flat or
 * nested, so a failure as htg-update keeps it or as a whole record both
 * read well. */
static void
put_failure(struct buf *b, const json_t *f, const json_t *step)
{
	static const char *const status_at[] = { "status", "outcome",
		"bench.status", "compile.status", NULL };
	static const char *const reason_at[] = { "reason", "bench.reason",
		"compile.reason", "candidate.reason", NULL };
	static const char *const mismatch_at[] = { "first_mismatch",
		"bench.first_mismatch", NULL };
	static const char *const log_at[] = { "log", "compile_log",
		"compile.log", NULL };
	static const char *const strategy_at[] = { "strategy",
		"candidate.strategy", NULL };
	const json_t *v;

	buf_puts(b, "- ");
	if (step)
		buf_printf(b, "step %lld, ", (long long)json_integer_value(step));
	if ((v = find_member(f, strategy_at))) {
		buf_puts(b, "strategy ");
		buf_put_json(b, v, ITEM_MAX);
		buf_puts(b, ", ");
	}
	if ((v = find_member(f, status_at)))
		buf_put_json(b, v, ITEM_MAX);
	else
		buf_puts(b, "failed");
	if ((v = find_member(f, reason_at))) {
		buf_puts(b, ": ");
		buf_put_json(b, v, ITEM_MAX);
	}
	if ((v = find_member(f, mismatch_at))) {
		buf_puts(b, "\n  first mismatch: ");
		buf_put_json(b, v, ITEM_MAX);
	}
	if ((v = find_member(f, log_at)) && json_is_string(v) &&
	    *json_string_value(v)) {
		buf_puts(b, "\n  compile log:\n```\n");
		buf_put_bounded(b, json_string_value(v), LOG_MAX);
		while (b->len > 0 && b->s[b->len - 1] == '\n')
			b->s[--b->len] = '\0';
		buf_puts(b, "\n```");
	}
	buf_puts(b, "\n");
}

/* The recent failures: state.failures if a stage put them there, then
 * those the last three history steps keep (history[].failures), then the
 * bare outcome of a recent step that failed without details. */
static void
fill_failures(struct buf *b, const struct ctx *c)
{
	const json_t *history = GET(c->state, "history"), *h, *f;
	size_t i, j, n = json_array_size(history);
	int count = 0;

	json_array_foreach(GET(c->state, "failures"), i, f)
		if (count < FAILURES_MAX) {
			put_failure(b, f, NULL);
			count++;
		}
	for (i = n > 3 ? n - 3 : 0; i < n; i++) {
		h = json_array_get(history, i);
		json_array_foreach(GET(h, "failures"), j, f)
			if (count < FAILURES_MAX) {
				put_failure(b, f, GET(h, "step"));
				count++;
			}
		if (!GET(h, "failures") && json_is_string(GET(h, "outcome")) &&
		    strcmp(json_string_value(GET(h, "outcome")), "ok") != 0 &&
		    count < FAILURES_MAX) {
			put_failure(b, h, GET(h, "step"));
			count++;
		}
	}
	if (count == 0)
		buf_puts(b, "None.");
	else
		b->s[--b->len] = '\0';
}

static void
fill_direction(struct buf *b, const struct ctx *c)
{
	const json_t *d = GET(c->state, "direction");
	const char *name;
	json_t *v;
	int n = 0;

	if (!json_is_object(d)) {
		buf_puts(b, "None was selected: change whatever limits the "
			"current kernel most.");
		return;
	}
	if (json_is_true(GET(d, "imported")))
		buf_puts(b, "[imported from another memory, unverified] ");
	put_text(b, GET(d, "name"), json_string_value(GET(d, "id")) ?
		json_string_value(GET(d, "id")) : "?");
	if (json_is_string(GET(d, "id")))
		buf_printf(b, " (%s)", json_string_value(GET(d, "id")));
	if (json_is_number(GET(d, "score"))) {
		buf_puts(b, ", chosen with score ");
		buf_put_number(b, GET(d, "score"));
	}
	json_object_foreach((json_t *)GET(d, "parts"), name, v) {
		buf_printf(b, "%s%s ", n++ ? ", " : ": ", name);
		buf_put_json(b, v, ITEM_MAX);
	}
	buf_puts(b, ".");
}

/* A strategy: "id: text", its knob moves, and its record so far. */
static void
put_strategy(struct buf *b, const json_t *s)
{
	if (!json_is_object(s)) {
		buf_put_json(b, s, ITEM_MAX);
		return;
	}
	buf_put_json(b, GET(s, "id"), ITEM_MAX);
	buf_puts(b, ": ");
	/* text that came from another memory is data, not an instruction */
	if (json_is_true(GET(s, "imported")))
		buf_puts(b, "[imported from another memory, unverified] ");
	put_text(b, GET(s, "text"), "(no text)");
	if (GET(s, "stats") && !json_is_null(GET(s, "stats"))) {
		buf_puts(b, " (record: ");
		buf_put_json(b, GET(s, "stats"), ITEM_MAX);
		buf_puts(b, ")");
	}
}

json_t *
prompt_strategy(const json_t *state, int index)
{
	const json_t *list = GET(GET(state, "memory"), "strategies");
	const json_t *id;
	size_t n = json_array_size(list);

	if (n == 0)
		return json_null();
	id = GET(json_array_get(list, (size_t)index % n), "id");
	return json_is_string(id) ? json_copy((json_t *)id) : json_null();
}

static void
fill_strategy(struct buf *b, const struct ctx *c)
{
	const json_t *list = GET(GET(c->state, "memory"), "strategies");
	size_t n = json_array_size(list);

	if (n == 0)
		buf_puts(b, "None was retrieved: make the change you expect to help most.");
	else
		put_strategy(b, json_array_get(list, (size_t)c->index % n));
}

static void
fill_strategies(struct buf *b, const struct ctx *c)
{
	const json_t *list = GET(GET(c->state, "memory"), "strategies"), *s;
	size_t i, n = json_array_size(list);

	json_array_foreach(list, i, s)
		if (i != (size_t)c->index % n) {
			buf_puts(b, b->len ? "\n- " : "- ");
			put_strategy(b, s);
		}
	if (b->len == 0)
		buf_puts(b, "None.");
}

/* An item of the memory (an experience or a risk): its text if it has
 * one, else its JSON, bounded. */
static void
put_items(struct buf *b, const json_t *list)
{
	const json_t *it;
	size_t i;

	json_array_foreach(list, i, it) {
		buf_puts(b, i ? "\n- " : "- ");
		if (json_is_string(GET(it, "text")))
			buf_put_bounded(b, json_string_value(GET(it, "text")), ITEM_MAX);
		else
			buf_put_json(b, it, ITEM_MAX);
	}
	if (b->len == 0)
		buf_puts(b, "None recorded yet.");
}

static void
fill_experiences(struct buf *b, const struct ctx *c)
{
	put_items(b, GET(GET(c->state, "memory"), "experiences"));
}

static void
fill_risks(struct buf *b, const struct ctx *c)
{
	put_items(b, GET(GET(c->state, "memory"), "risks"));
}

static void
fill_candidate_number(struct buf *b, const struct ctx *c)
{
	buf_printf(b, "%d", c->index + 1);
}

static void
fill_candidate_count(struct buf *b, const struct ctx *c)
{
	buf_printf(b, "%d", c->k);
}

/* The placeholders a template may use. */
static const struct {
	const char *name;
	void (*fill)(struct buf *, const struct ctx *);
} placeholders[] = {
	{ "task.id", fill_task_id },
	{ "task.description", fill_task_description },
	{ "task.torch", fill_task_torch },
	{ "task.family", fill_task_family },
	{ "task.params", fill_task_params },
	{ "task.check_params", fill_task_check_params },
	{ "task.tensors", fill_task_tensors },
	{ "task.tolerance", fill_task_tolerance },
	{ "reference.source", fill_reference_source },
	{ "reference.launch", fill_reference_launch },
	{ "best", fill_best },
	{ "history", fill_history },
	{ "failures", fill_failures },
	{ "direction", fill_direction },
	{ "strategy", fill_strategy },
	{ "strategies", fill_strategies },
	{ "experiences", fill_experiences },
	{ "risks", fill_risks },
	{ "candidate.number", fill_candidate_number },
	{ "candidate.count", fill_candidate_count },
};

struct fill_ctx {
	const struct ctx *c;   /* NULL: only check the names */
	struct buf part;
};

/* template_value_fn: placeholder name filled from the record. */
static char *
fill_value(void *ctx, const char *name, char *err, size_t errlen)
{
	struct fill_ctx *f = ctx;
	size_t i;

	for (i = 0; i < LEN(placeholders); i++)
		if (strcmp(placeholders[i].name, name) == 0)
			break;
	if (i == LEN(placeholders)) {
		errf(err, errlen, "unknown placeholder {{%s}} (see kgen(1) for the list)", name);
		return NULL;
	}
	if (!f->c)
		return xstrdup("");
	f->part.len = 0;
	buf_puts(&f->part, "");
	placeholders[i].fill(&f->part, f->c);
	return xstrdup(f->part.s);
}

/* Expands template (from file, for messages) into out, filling each
 * {{name}} from c. With c NULL it only checks the placeholders, dying
 * (exit 2) at the first unknown or unclosed one. */
static void
expand(const char *template, const char *file, const struct ctx *c,
	struct buf *out)
{
	struct fill_ctx f = { c, {0} };
	char err[256], *text;
	size_t at = 0;

	if (!(text = template_expand(template, fill_value, &f, TEMPLATE_STRICT, err,
	    sizeof err, &at)))
		die(EXIT_USAGE, "%s: line %ld: %s", file, template_line(template, at), err);
	buf_puts(out, text);
	free(text);
	free(f.part.s);
}

/* Reads dir/name into *text; returns 0, or -1 with errno set. */
static int
read_template(const char *dir, const char *name, char **text)
{
	char *path = xasprintf("%s/%s", dir, name);

	*text = read_file(path, NULL);
	free(path);
	return *text ? 0 : -1;
}

/* The prompts folder beside the running executable (or installed), as a
 * string the caller frees. */
static char *
exe_prompts_dir(void)
{
	return data_dir(NULL, "tools/kgen/prompts", NULL);
}

void
prompts_load(struct prompts *p, const char *dir)
{
	const char *how = "--prompts";
	char *exe_dir = NULL;
	struct buf check = {0};

	*p = (struct prompts){0};
	if (dir == NULL && (dir = getenv("HTAM_PROMPTS")) && *dir)
		how = "HTAM_PROMPTS";
	if (dir && *dir) {
		if (read_template(dir, "system.txt", &p->system) < 0 ||
		    read_template(dir, "user.txt", &p->user) < 0)
			die(EXIT_USAGE, "%s %s: cannot read %s/%s:", how, dir,
				dir, p->system ? "user.txt" : "system.txt");
		p->origin = xstrdup(dir);
	} else if ((exe_dir = exe_prompts_dir()) &&
	    read_template(exe_dir, "system.txt", &p->system) == 0 &&
	    read_template(exe_dir, "user.txt", &p->user) == 0) {
		p->origin = xstrdup(exe_dir);
	} else {
		free(p->system);
		p->system = xstrdup(kgen_prompt_system);
		p->user = xstrdup(kgen_prompt_user);
		p->origin = xstrdup("built-in");
	}
	free(exe_dir);

	/* Check the placeholders now, not at the first record. */
	{
		char *sys = xasprintf("%s/system.txt", p->origin);
		char *user = xasprintf("%s/user.txt", p->origin);
		expand(p->system, sys, NULL, &check);
		expand(p->user, user, NULL, &check);
		free(sys);
		free(user);
		free(check.s);
	}
}

void
prompts_free(struct prompts *p)
{
	free(p->system);
	free(p->user);
	free(p->origin);
}

json_t *
prompt_messages(const struct prompts *p, const json_t *state, int index,
	int k)
{
	struct ctx c = { state, json_object_get(state, "task"), index, k };
	struct buf sys = {0}, user = {0};
	json_t *msgs;

	buf_puts(&sys, "");
	buf_puts(&user, "");
	expand(p->system, "system.txt", &c, &sys);
	expand(p->user, "user.txt", &c, &user);
	msgs = json_pack("[{s:s, s:s}, {s:s, s:s}]",
		"role", "system", "content", sys.s,
		"role", "user", "content", user.s);
	free(sys.s);
	free(user.s);
	if (msgs == NULL)
		die(EXIT_FAIL, "prompt: not valid UTF-8 (a template or the "
			"record holds bad bytes)");
	return msgs;
}
