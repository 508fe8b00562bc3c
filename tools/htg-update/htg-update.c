/* htg-update: the fan-in of a step. Reads every candidate record of a step
 * (after kbench), records one transition per candidate in the HTG memory
 * (failures too), folds them into the strategy and edge statistics, and
 * writes one next state per (run, task, step): the best kernel so far, the
 * history one step longer, the features recomputed. Replaying the same
 * records changes nothing: transitions are unique by (run, task, candidate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "htg.h"
#include "jsonl.h"
#include "opt.h"
#include "record.h"
#include "task.h"
#include "util.h"

#define CANDIDATE_ID_MAX 200
#define REASON_MAX 1000

static struct {
	const char *db;
	int frozen;
} opt;

/* One input record, checked, with what its transition needs. */
struct cand {
	json_t *rec;
	long line;
	struct htg_state st;
	const char *candidate, *direction, *strategy, *generator;
	const char *outcome;
	char *reason;
	double time_us, baseline_us, gain;
};

/* The records of one (run, task, step), in input order. */
struct group {
	size_t *members;
	size_t n, cap;
};

enum { O_DB = 256, O_FROZEN };

static const struct opt options[] = {
	{ O_DB, 0, "db", "FILE", "the memory (default $HTAM_DB, else ./htam.db)" },
	{ O_FROZEN, 0, "frozen", NULL, "ablation: write nothing to the memory, only the next states" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [--db FILE] [--frozen] < candidates\n", NULL, options, NULL
};

/* bench.time_us.median, or NAN. */
static double
median_us(const json_t *bench)
{
	const json_t *m = json_object_get(json_object_get(bench, "time_us"), "median");

	return json_is_number(m) ? json_number_value(m) : NAN;
}

/* The outcome of a candidate: bench.status when it was benchmarked, else
 * what stopped it earlier (docs/memory.md). NULL when the record carries
 * no result at all. */
static const char *
outcome_of(const json_t *rec, const char **why)
{
	const json_t *cand = json_object_get(rec, "candidate");
	const json_t *comp = json_object_get(rec, "compile");
	const json_t *bench = json_object_get(rec, "bench");
	const char *s;
	enum outcome o;

	*why = NULL;
	if ((s = json_string_value(json_object_get(bench, "status")))) {
		*why = json_string_value(json_object_get(bench, "reason"));
		return outcome_parse(s, &o) == 0 ? outcome_names[o] : NULL;
	}
	if ((s = json_string_value(json_object_get(cand, "status"))) &&
	    strcmp(s, outcome_names[OUT_GEN_ERROR]) == 0) {
		*why = json_string_value(json_object_get(cand, "reason"));
		return outcome_names[OUT_GEN_ERROR];
	}
	/* kcompile's statuses, as the outcomes they are */
	if ((s = json_string_value(json_object_get(comp, "status")))) {
		*why = json_string_value(json_object_get(comp, "reason"));
		if (strcmp(s, "error") == 0)
			return outcome_names[OUT_COMPILE_ERROR];
		if (strcmp(s, "timeout") == 0)
			return outcome_names[OUT_TIMEOUT];
		if (strcmp(s, "refused") == 0)
			return outcome_names[OUT_REJECTED];
	}
	return NULL;
}

/* Checks one record and fills c from it; a problem exits 65 naming the
 * line. g is any family's graph: directions and strategies do not depend
 * on the family. */
static void
read_candidate(const struct htg_graph *g, json_t *rec, long line, struct cand *c)
{
	const json_t *dir = json_object_get(rec, "direction");
	const json_t *cand = json_object_get(rec, "candidate");
	const json_t *strat;
	const json_t *best = json_object_get(rec, "best");
	const char *why;
	char err[256];

	memset(c, 0, sizeof(*c));
	c->rec = rec;
	c->line = line;
	if (htg_state_read(rec, &c->st, err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	if (task_validate(json_object_get(rec, "task"), err, sizeof(err)) < 0 ||
	    record_check(rec, record_candidate, err, sizeof(err)) < 0 ||
	    record_check(rec, record_direction, err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	if (htg_check_history(g, json_object_get(rec, "history"), err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	c->direction = json_string_value(json_object_get(dir, "id"));
	if (!c->direction)
		die_line(EXIT_DATAERR, line, "no direction.id (records come from "
			"htg-select through kgen and kbench)");
	if (htg_dir_find(g, c->direction) < 0)
		die_line(EXIT_DATAERR, line, "unknown direction \"%s\"", c->direction);
	c->candidate = json_string_value(json_object_get(cand, "id"));
	if (!c->candidate || !*c->candidate || strlen(c->candidate) > CANDIDATE_ID_MAX)
		die_line(EXIT_DATAERR, line, "candidate.id: expected the candidate's id");
	strat = json_object_get(cand, "strategy");
	if (strat && !json_is_null(strat)) {
		c->strategy = json_string_value(strat);
		if (htg_strat_find(g, c->strategy) < 0)
			die_line(EXIT_DATAERR, line, "candidate.strategy: unknown strategy "
				"\"%s\"", c->strategy ? c->strategy : "(not a string)");
	}
	c->generator = json_string_value(json_object_get(cand, "generator"));
	if (!(c->outcome = outcome_of(rec, &why))) {
		const char *bs = json_string_value(json_object_get(
			json_object_get(rec, "bench"), "status"));
		if (bs)
			die_line(EXIT_DATAERR, line, "candidate %.12s: bench.status \"%.40s\" is "
				"not one of ok, incorrect, compile_error, gen_error, timeout, "
				"crash, rejected", c->candidate, bs);
		die_line(EXIT_DATAERR, line, "candidate %.12s: no bench.status, "
			"compile failure or gen_error: run kbench first", c->candidate);
	}
	c->reason = why ? htg_clip(why, REASON_MAX) : NULL;
	c->time_us = c->baseline_us = c->gain = NAN;
	c->baseline_us = median_us(json_object_get(best, "bench"));
	if (!(c->baseline_us > 0)) {
		const json_t *ref = json_object_get(json_object_get(rec, "bench"), "ref_time_us");
		c->baseline_us = json_is_number(ref) ? json_number_value(ref) : NAN;
	}
	if (strcmp(c->outcome, "ok") == 0) {
		c->time_us = median_us(json_object_get(rec, "bench"));
		if (!(c->time_us > 0))
			die_line(EXIT_DATAERR, line, "candidate %.12s: bench.status is ok "
				"but bench.time_us.median is not a positive number", c->candidate);
		if (c->baseline_us > 0)
			c->gain = c->baseline_us / c->time_us;
	}
}

/* Puts record i in its group, refusing a record whose run and task were
 * seen at another step. */
static void
group_add(json_t *steps, json_t *index, struct group **groups, size_t *ngroups,
	const struct cand *c, size_t i)
{
	char *rt = xasprintf("%s\x1f%s", c->st.run, c->st.task);
	char *key = xasprintf("%s\x1f%ld", rt, c->st.step);
	const json_t *seen = json_object_get(steps, rt);
	struct group *g;
	json_int_t gi;

	if (seen && json_integer_value(seen) != c->st.step) {
		long long earlier = (long long)json_integer_value(seen);
		free(key);
		free(rt);
		die_line(EXIT_DATAERR, c->line, "run \"%s\", task \"%s\": step %ld, but "
			"earlier records of this run and task are at step %lld: give "
			"htg-update one step at a time", c->st.run, c->st.task, c->st.step,
			earlier);
	}
	if (!seen)
		json_object_set_new(steps, rt, json_integer(c->st.step));
	if (!json_object_get(index, key)) {
		*groups = xrealloc(*groups, (*ngroups + 1) * sizeof(**groups));
		memset(&(*groups)[*ngroups], 0, sizeof(**groups));
		json_object_set_new(index, key, json_integer((json_int_t)(*ngroups)++));
	}
	gi = json_integer_value(json_object_get(index, key));
	g = &(*groups)[gi];
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->members = xrealloc(g->members, g->cap * sizeof(*g->members));
	}
	g->members[g->n++] = i;
	free(key);
	free(rt);
}

/* Writes the transitions of one group in one transaction. */
static void
record_group(sqlite3 *db, struct htg_recorder *r, const struct cand *cands,
	const struct group *g)
{
	size_t i;
	int j, added = 0;

	htg_begin(db);
	for (i = 0; i < g->n; i++) {
		const struct cand *c = &cands[g->members[i]];
		struct htg_transition t = {
			.candidate = c->candidate, .run = c->st.run, .task = c->st.task,
			.family = c->st.family, .bound = c->st.bound, .step = c->st.step,
			.floor_fraction = c->st.floor_fraction,
			.last_outcome = c->st.last_outcome, .direction = c->direction,
			.strategy = c->strategy, .generator = c->generator,
			.outcome = c->outcome, .reason = c->reason,
			.baseline_us = c->baseline_us, .time_us = c->time_us,
			.gain = c->gain,
		};
		for (j = 0; j < HTG_PREFIX; j++) {
			t.prefix[j] = c->st.prefix[j];
			t.sprefix[j] = c->st.sprefix[j];
		}
		added += htg_record(r, &t);
	}
	htg_commit(db);
	if ((size_t)added < g->n)
		warnf("run \"%s\", task \"%s\", step %ld: %zu of %zu candidates were "
			"recorded already (a replay, or one kernel written twice)",
			cands[g->members[0]].st.run,
			cands[g->members[0]].st.task, cands[g->members[0]].st.step,
			g->n - (size_t)added, g->n);
}

/* The kernel as `best` keeps it: candidate, compile without the cubins,
 * bench. A new reference. */
static json_t *
best_of(const json_t *rec)
{
	json_t *comp = json_deep_copy(json_object_get(rec, "compile"));

	if (json_is_object(comp)) {
		json_object_del(comp, "cubin");
		json_object_del(json_object_get(comp, "reference"), "cubin");
	}
	return json_pack("{s:O, s:o?, s:O}", "candidate", json_object_get(rec, "candidate"),
		"compile", comp, "bench", json_object_get(rec, "bench"));
}

/* The candidate that stands for the step in the history: the fastest ok
 * one, else the first with the step's most frequent failure. */
static const struct cand *
representative(const struct cand *cands, const struct group *g)
{
	const struct cand *best = NULL, *c;
	size_t i, j, most = 0;

	for (i = 0; i < g->n; i++) {
		c = &cands[g->members[i]];
		if (strcmp(c->outcome, "ok") == 0 && (!best || c->time_us < best->time_us))
			best = c;
	}
	if (best)
		return best;
	for (i = 0; i < g->n; i++) {
		size_t count = 0;
		c = &cands[g->members[i]];
		for (j = 0; j < g->n; j++)
			count += strcmp(cands[g->members[j]].outcome, c->outcome) == 0;
		if (count > most) {
			most = count;
			best = c;
		}
	}
	return best;
}

/* Adds id to seen unless the set ids (of seen's members) has it. */
static void
seen_add(json_t *seen, json_t *ids, const char *id)
{
	if (!id || json_object_get(ids, id))
		return;
	json_object_set_new(ids, id, json_true());
	json_array_append_new(seen, json_string(id));
}

/* The candidate ids measured for the task so far, each once: the state's
 * `seen` and this step's candidates (kgen skips them). A new reference. */
static json_t *
seen_after(const json_t *prev, const struct cand *cands, const struct group *g)
{
	json_t *seen = json_array(), *ids = json_object();
	const json_t *v;
	size_t i;

	json_array_foreach(prev, i, v)
		seen_add(seen, ids, json_string_value(v));
	for (i = 0; i < g->n; i++)
		seen_add(seen, ids, cands[g->members[i]].candidate);
	json_decref(ids);
	return seen;
}

#define FAILURES_MAX 4    /* failed candidates kept per step in the history */
#define FAILURE_LOG_MAX 2048

/* What a generator should learn from the step's failed candidates: the
 * strategy, the status and reason, the first mismatch and, for a compile
 * error, the end of the compile log (the first error is in the reason).
 * A new array, or NULL when nothing failed. */
static json_t *
failures_of(const struct cand *cands, const struct group *g)
{
	json_t *out = json_array();

	for (size_t i = 0; i < g->n && json_array_size(out) < FAILURES_MAX; i++) {
		const struct cand *c = &cands[g->members[i]];
		const json_t *bench = json_object_get(c->rec, "bench");
		const char *log = json_string_value(json_object_get(
			json_object_get(c->rec, "compile"), "log"));
		json_t *f;

		if (strcmp(c->outcome, "ok") == 0)
			continue;
		f = json_pack("{s:s?, s:s, s:o}", "strategy", c->strategy,
			"status", c->outcome, "reason", json_text(c->reason));
		if (json_object_get(bench, "first_mismatch"))
			json_object_set(f, "first_mismatch",
				json_object_get(bench, "first_mismatch"));
		if (log && *log && strcmp(c->outcome, outcome_names[OUT_COMPILE_ERROR]) == 0) {
			size_t n = strlen(log);
			json_object_set_new(f, "log", json_string(n > FAILURE_LOG_MAX ?
				log + n - FAILURE_LOG_MAX : log));
		}
		json_array_append_new(out, f);
	}
	if (json_array_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The state after the step. A new reference. */
static json_t *
next_state(const struct cand *cands, const struct group *g)
{
	const struct cand *first = &cands[g->members[0]];
	const struct cand *rep = representative(cands, g);
	const json_t *prev = json_object_get(first->rec, "best");
	double before = median_us(json_object_get(prev, "bench")), after = before;
	json_t *out = json_copy(first->rec), *best = NULL, *hist, *entry, *fails;
	const json_t *task = json_object_get(first->rec, "task");

	if (!(before > 0))
		before = rep->baseline_us;
	if (strcmp(rep->outcome, "ok") == 0 && (!(after > 0) || rep->time_us < after)) {
		best = best_of(rep->rec);
		after = rep->time_us;
	}
	json_object_del(out, "direction");
	json_object_del(out, "memory");
	json_object_del(out, "candidate");
	json_object_del(out, "compile");
	json_object_del(out, "bench");
	json_object_set_new(out, "step", json_integer(first->st.step + 1));
	if (best)
		json_object_set_new(out, "best", best);
	else if (!json_is_object(prev))
		json_object_set_new(out, "best", json_null());
	entry = json_pack("{s:i, s:s, s:s?, s:s}", "step", (json_int_t)first->st.step,
		"direction", rep->direction, "strategy", rep->strategy,
		"outcome", rep->outcome);
	json_object_set_new(entry, "gain", before > 0 && after > 0 ?
		json_real(before / after) : json_null());
	if ((fails = failures_of(cands, g)))
		json_object_set_new(entry, "failures", fails);
	hist = json_array();
	if (json_is_array(json_object_get(first->rec, "history")))
		json_array_extend(hist, json_object_get(first->rec, "history"));
	json_array_append_new(hist, entry);
	json_object_set_new(out, "history", hist);
	json_object_set_new(out, "seen", seen_after(json_object_get(first->rec, "seen"),
		cands, g));
	json_object_set_new(out, "features", htg_features(task,
		json_object_get(out, "best"), rep->outcome));
	return out;
}

/* All records of the input, checked, and their groups. */
struct input {
	struct cand *cands;
	size_t n, cap;
	struct group *groups;
	size_t ngroups;
	json_t *steps;      /* "run\x1ftask" -> its step */
	json_t *index;      /* "run\x1ftask\x1fstep" -> group index */
};

/* Reads and checks every record of stdin before anything is written; a
 * bad one exits 65. */
static void
read_input(const struct htg_graph *g, struct input *in)
{
	struct jsonl *r = jsonl_open(stdin);
	json_t *rec;

	memset(in, 0, sizeof(*in));
	in->steps = json_object();
	in->index = json_object();
	while ((rec = jsonl_next(r))) {
		if (in->n == in->cap) {
			in->cap = in->cap ? 2 * in->cap : 64;
			in->cands = xrealloc(in->cands, in->cap * sizeof(*in->cands));
		}
		read_candidate(g, rec, jsonl_line(r), &in->cands[in->n]);
		group_add(in->steps, in->index, &in->groups, &in->ngroups,
			&in->cands[in->n], in->n);
		in->n++;
	}
	jsonl_close(r);
}

/* Frees what read_input allocated. */
static void
input_free(struct input *in)
{
	size_t i;

	for (i = 0; i < in->ngroups; i++)
		free(in->groups[i].members);
	for (i = 0; i < in->n; i++) {
		free(in->cands[i].reason);
		json_decref(in->cands[i].rec);
	}
	free(in->groups);
	free(in->cands);
	json_decref(in->steps);
	json_decref(in->index);
}

/* Parses the command line into opt; bad usage exits 2. */
static void
parse_args(int argc, char **argv)
{
	const char *arg;
	int ch, next;

	while ((ch = opt_next(argc, argv, &cmdline, &arg, &next)) != -1) {
		switch (ch) {
		case O_DB: opt.db = arg; break;
		case O_FROZEN: opt.frozen = 1; break;
		}
	}
	if (next != argc)
		opt_usage(&cmdline);
}

int
main(int argc, char **argv)
{
	struct htg_recorder *rec = NULL;
	struct htg_graph *g;
	struct input in;
	sqlite3 *db;
	size_t i;

	setprogname(argv[0]);
	parse_args(argc, argv);
	/* No input, no memory: nothing is opened or created. */
	int c = getc(stdin);
	if (c == EOF)
		return EXIT_OK;
	ungetc(c, stdin);
	db = htg_open(htg_db_path(opt.db));
	g = htg_graph_load(db, "");
	read_input(g, &in);
	if (!opt.frozen)
		rec = htg_recorder_new(db);
	for (i = 0; i < in.ngroups; i++) {
		json_t *next;
		if (rec)
			record_group(db, rec, in.cands, &in.groups[i]);
		next = next_state(in.cands, &in.groups[i]);
		jsonl_put(stdout, next);
		json_decref(next);
	}
	htg_recorder_free(rec);
	input_free(&in);
	htg_graph_free(g);
	htg_close(db);
	return EXIT_OK;
}
