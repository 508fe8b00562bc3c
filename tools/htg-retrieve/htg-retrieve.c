/* htg-retrieve: for each record with a chosen direction, adds `memory`:
 * the direction's local strategies ranked by how they did in similar
 * states, the most relevant recorded experiences (gains, and why failures
 * failed), and the known risks; all bounded, so it fits a prompt. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "htg.h"
#include "jsonl.h"
#include "opt.h"
#include "util.h"

#define SCAN_SAME_FAMILY 400    /* recent transitions read per direction */
#define SCAN_OTHER_FAMILIES 100
#define PER_KIND 2              /* experiences per (strategy, outcome) */
#define MAX_RISKS 8

static struct {
	const char *db;
	int max_strategies, max_experiences, max_text;
} opt = { NULL, 8, 8, 400 };

/* A strategy of the direction, as ranked. */
struct ranked {
	int s;
	int pinned, tried;
	double score, attention, evidence;
};

/* A recorded transition considered as an experience. */
struct exp {
	json_t *obj;
	double relevance;
	long order;         /* newer first among equals */
	char key[2 * HTG_ID_MAX + 2];
};

enum { O_DB = 256, O_MAXS, O_MAXE, O_MAXT };

static const struct opt options[] = {
	{ O_DB, 0, "db", "FILE", "the memory (default $HTAM_DB, else ./htam.db)" },
	{ O_MAXS, 0, "max-strategies", "N", "at most N strategies (8)" },
	{ O_MAXE, 0, "max-experiences", "N", "at most N experiences (8)" },
	{ O_MAXT, 0, "max-text", "BYTES", "cut each text at BYTES (400)" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [--db FILE] [--max-strategies N] [--max-experiences N] [--max-text BYTES] < records\n",
	NULL, options, NULL
};

/* The model's parameters as the selection used them: its ablations are
 * recorded in direction.ablations. */
static void
params_of(const json_t *dir, struct htg_params *p)
{
	const json_t *a;
	size_t i;

	htg_params_default(p);
	json_array_foreach(json_object_get(dir, "ablations"), i, a) {
		const char *s = json_string_value(a);
		if (s && strcmp(s, "no_prefix") == 0)
			p->use_prefix = 0;
		if (s && strcmp(s, "no_position_weights") == 0)
			p->pos_w[0] = p->pos_w[1] = p->pos_w[2] = 1;
	}
}

/* Pinned first, untried before tried, then by score. */
static int
by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->pinned != y->pinned)
		return y->pinned - x->pinned;
	if (x->tried != y->tried)
		return x->tried - y->tried;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->s - y->s;
}

/* Ranks the strategies of direction d that apply to the family: a pinned
 * one first, then those not tried in this run, each by its score. Returns
 * how many were written to out. */
static int
rank_strategies(sqlite3 *db, const struct htg_graph *g, const struct htg_state *st,
	const struct htg_params *p, const json_t *rec, int d, const char *pin,
	struct ranked *out)
{
	struct htg_cell *cells = xcalloc((size_t)htg_ncells(g), sizeof(*cells));
	unsigned char *applied = xcalloc((size_t)g->nstrats + 1, 1);
	double total = 0;
	int s, n = 0;

	htg_attend(db, g, st, p, cells);
	htg_applied(db, g, st, json_object_get(rec, "history"), applied);
	for (s = 0; s < g->nstrats; s++)
		if (g->strats[s].dir == d)
			total += cells[s].mass;
	for (s = 0; s < g->nstrats; s++) {
		int pinned = pin && strcmp(pin, g->strats[s].id) == 0;
		struct ranked *r = &out[n];
		if (g->strats[s].dir != d || (g->strats[s].fit < 0 && !pinned))
			continue;
		r->s = s;
		r->pinned = pinned;
		r->tried = applied[s];
		r->evidence = cells[s].mass;
		r->attention = htg_attention(p, &cells[s]);
		r->score = p->w_attention * r->attention +
			p->w_prior * (g->strats[s].fit > 0 ? g->strats[s].fit : 0) +
			p->w_explore * htg_explore(cells[s].mass, total);
		n++;
	}
	qsort(out, (size_t)n, sizeof(*out), by_rank);
	free(applied);
	free(cells);
	return n;
}

/* The moves of a strategy that apply to the family (its own or "*"). */
static json_t *
moves_for(const char *moves, const char *family)
{
	json_t *all = json_loads(moves, 0, NULL), *out = json_array(), *m;
	size_t i;

	json_array_foreach(all, i, m) {
		const char *f = json_string_value(json_object_get(m, "family"));
		if (f && (strcmp(f, "*") == 0 || strcmp(f, family) == 0))
			json_array_append(out, m);
	}
	json_decref(all);
	return out;
}

/* s cut at --max-text bytes, as a JSON string. */
static json_t *
clipped(const char *s)
{
	char *c = htg_clip(s ? s : "", (size_t)opt.max_text);
	json_t *v = json_string(c);

	free(c);
	return v ? v : json_string("");
}

/* The measured statistics of strategy id, over every recorded state. */
static json_t *
strategy_stats(sqlite3 *db, const char *id)
{
	sqlite3_stmt *q = htg_prepare(db, "SELECT n, n_ok, wins, fails, "
		"CASE WHEN n_ok > 0 THEN exp(sum_log_gain / n_ok) END "
		"FROM strategies WHERE id = ?1");
	json_t *o = json_object();

	sqlite3_bind_text(q, 1, id, -1, SQLITE_STATIC);
	if (htg_step(db, q) == SQLITE_ROW) {
		json_object_set_new(o, "n", json_integer(sqlite3_column_int64(q, 0)));
		json_object_set_new(o, "ok", json_integer(sqlite3_column_int64(q, 1)));
		json_object_set_new(o, "wins", json_integer(sqlite3_column_int64(q, 2)));
		json_object_set_new(o, "fails", json_integer(sqlite3_column_int64(q, 3)));
		json_object_set_new(o, "mean_gain", sqlite3_column_type(q, 4) == SQLITE_NULL ?
			json_null() : json_real(sqlite3_column_double(q, 4)));
	}
	sqlite3_finalize(q);
	return o;
}

/* The ranked strategies as `memory.strategies`. */
static json_t *
strategies_json(sqlite3 *db, const struct htg_graph *g, const struct ranked *r, int n)
{
	json_t *arr = json_array();
	int i;

	for (i = 0; i < n && i < opt.max_strategies; i++) {
		const struct htg_strategy *s = &g->strats[r[i].s];
		json_t *stats = strategy_stats(db, s->id);
		json_object_set_new(stats, "similar", json_pack("{s:f, s:f}",
			"evidence", r[i].evidence, "attention", r[i].attention));
		json_array_append_new(arr, json_pack("{s:s, s:i, s:o, s:o, s:o, s:f, s:b, s:o}",
			"id", s->id, "rank", i + 1, "text", clipped(s->text),
			"moves", moves_for(s->moves, g->family), "risk", clipped(s->risk),
			"score", r[i].score, "tried", r[i].tried, "stats", stats));
		if (r[i].pinned)
			json_object_set_new(json_array_get(arr, (size_t)i), "pinned", json_true());
		if (s->imported)
			json_object_set_new(json_array_get(arr, (size_t)i), "imported", json_true());
	}
	return arr;
}

/* Most relevant first, newer first among equals. */
static int
by_relevance(const void *a, const void *b)
{
	const struct exp *x = a, *y = b;

	if (x->relevance != y->relevance)
		return x->relevance > y->relevance ? -1 : 1;
	return x->order < y->order ? 1 : x->order > y->order ? -1 : 0;
}

/* Reads the recent transitions of direction d into *list, with their
 * relevance to the state: similarity times prefix match, doubled for the
 * same task. */
static void
scan_experiences(sqlite3 *db, const struct htg_state *st, const struct htg_params *p,
	const char *dir, int same_family, struct exp **list, size_t *n, size_t *cap)
{
	sqlite3_stmt *q = htg_prepare(db, same_family ?
		"SELECT id, task, step, strategy, outcome, gain, reason, family, bound, "
		"ffb, last_outcome, p1, p2, p3 FROM transitions "
		"WHERE direction = ?1 AND family = ?2 ORDER BY id DESC LIMIT ?3" :
		"SELECT id, task, step, strategy, outcome, gain, reason, family, bound, "
		"ffb, last_outcome, p1, p2, p3 FROM transitions "
		"WHERE direction = ?1 AND family != ?2 ORDER BY id DESC LIMIT ?3");

	sqlite3_bind_text(q, 1, dir, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, st->family, -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 3, same_family ? SCAN_SAME_FAMILY : SCAN_OTHER_FAMILIES);
	while (htg_step(db, q) == SQLITE_ROW) {
		const char *task = (const char *)sqlite3_column_text(q, 1);
		const char *strat = (const char *)sqlite3_column_text(q, 3);
		const char *outcome = (const char *)sqlite3_column_text(q, 4);
		const char *prefix[HTG_PREFIX];
		struct exp *e;
		int i;

		for (i = 0; i < HTG_PREFIX; i++)
			prefix[i] = (const char *)sqlite3_column_text(q, 11 + i);
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*list = xrealloc(*list, *cap * sizeof(**list));
		}
		e = &(*list)[(*n)++];
		e->order = (long)sqlite3_column_int64(q, 0);
		e->relevance = htg_similarity(p, st, (const char *)sqlite3_column_text(q, 7),
			(const char *)sqlite3_column_text(q, 8), sqlite3_column_int(q, 9),
			(const char *)sqlite3_column_text(q, 10)) *
			htg_prefix_weight(p, st, prefix) * (strcmp(task, st->task) == 0 ? 2 : 1);
		snprintf(e->key, sizeof(e->key), "%s/%s", strat ? strat : "", outcome);
		e->obj = json_pack("{s:s, s:I, s:s?, s:s, s:o, s:f}", "task", task,
			"step", (json_int_t)sqlite3_column_int64(q, 2), "strategy", strat,
			"outcome", outcome, "gain", sqlite3_column_type(q, 5) == SQLITE_NULL ?
			json_null() : json_real(sqlite3_column_double(q, 5)),
			"relevance", e->relevance);
		if (sqlite3_column_type(q, 6) != SQLITE_NULL)
			json_object_set_new(e->obj, "reason",
				clipped((const char *)sqlite3_column_text(q, 6)));
	}
	sqlite3_finalize(q);
}

/* The most relevant experiences of direction dir, at most PER_KIND of one
 * strategy and outcome, so one repeated failure does not crowd out the
 * rest. */
static json_t *
experiences_json(sqlite3 *db, const struct htg_state *st, const struct htg_params *p,
	const char *dir)
{
	struct exp *list = NULL;
	size_t n = 0, cap = 0, i, j;
	json_t *arr = json_array();

	scan_experiences(db, st, p, dir, 1, &list, &n, &cap);
	if (n < (size_t)opt.max_experiences)
		scan_experiences(db, st, p, dir, 0, &list, &n, &cap);
	if (n > 1)
		qsort(list, n, sizeof(*list), by_relevance);
	for (i = 0; i < n; i++) {
		size_t same = 0;
		for (j = 0; j < i; j++)
			same += list[j].obj == NULL && strcmp(list[j].key, list[i].key) == 0;
		if (json_array_size(arr) < (size_t)opt.max_experiences && same < PER_KIND) {
			json_array_append_new(arr, list[i].obj);
			list[i].obj = NULL;     /* taken */
		}
	}
	for (i = 0; i < n; i++)
		json_decref(list[i].obj);
	free(list);
	return arr;
}

/* Adds s to the risks unless it is there already or the list is full. */
static void
add_risk(json_t *risks, char *s)
{
	const json_t *v;
	size_t i;

	json_array_foreach(risks, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			goto out;
	if (json_array_size(risks) < MAX_RISKS)
		json_array_append_new(risks, clipped(s));
out:
	free(s);
}

/* What can go wrong: failures measured in this family under the direction
 * (most frequent first), the edge's risk from the last direction, and the
 * risks of the top strategies. */
static json_t *
risks_json(sqlite3 *db, const struct htg_graph *g, const struct htg_state *st,
	int d, const struct ranked *r, int n)
{
	json_t *risks = json_array();
	sqlite3_stmt *q;
	int i;

	q = htg_prepare(db, "SELECT strategy, outcome, count(*) AS k, "
		"(SELECT reason FROM transitions AS u WHERE u.direction = t.direction "
		"AND u.family = t.family AND u.outcome = t.outcome "
		"AND u.strategy IS t.strategy AND u.reason IS NOT NULL "
		"ORDER BY u.id DESC LIMIT 1) FROM (SELECT * FROM transitions "
		"WHERE direction = ?1 AND family = ?2 ORDER BY id DESC LIMIT 400) AS t "
		"WHERE outcome != 'ok' GROUP BY strategy, outcome ORDER BY k DESC LIMIT 3");
	sqlite3_bind_text(q, 1, g->dirs[d].id, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, st->family, -1, SQLITE_STATIC);
	while (htg_step(db, q) == SQLITE_ROW) {
		const char *strat = (const char *)sqlite3_column_text(q, 0);
		const char *reason = (const char *)sqlite3_column_text(q, 3);
		add_risk(risks, xasprintf("%s: %lld x %s in %s tasks%s%s",
			strat ? strat : "(no strategy)", (long long)sqlite3_column_int64(q, 2),
			(const char *)sqlite3_column_text(q, 1), st->family,
			reason ? "; last: " : "", reason ? reason : ""));
	}
	sqlite3_finalize(q);

	q = htg_prepare(db, "SELECT risk FROM edges WHERE src = ?1 AND dst = ?2 "
		"AND risk != 'unknown'");
	sqlite3_bind_text(q, 1, st->prefix[0], -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, g->dirs[d].id, -1, SQLITE_STATIC);
	if (htg_step(db, q) == SQLITE_ROW)
		add_risk(risks, xasprintf("after %s: %s", st->prefix[0],
			(const char *)sqlite3_column_text(q, 0)));
	sqlite3_finalize(q);

	for (i = 0; i < n && i < 3; i++)
		add_risk(risks, xasprintf("%s: %s", g->strats[r[i].s].id,
			g->strats[r[i].s].risk));
	return risks;
}

/* Adds `memory` to one record. */
static void
retrieve(sqlite3 *db, json_t *rec, long line)
{
	const json_t *dir = json_object_get(rec, "direction");
	const char *id = json_string_value(json_object_get(dir, "id"));
	const char *pin = json_string_value(json_object_get(dir, "strategy"));
	struct htg_params p;
	struct htg_state st;
	struct htg_graph *g;
	struct ranked *r;
	char err[256];
	int d, n;

	if (htg_state_read(rec, &st, err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	if (!id)
		die_line(EXIT_DATAERR, line, "no direction.id: run htg-select first");
	g = htg_graph_for(db, st.family);
	if (htg_check_history(g, json_object_get(rec, "history"), err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	if ((d = htg_dir_find(g, id)) < 0)
		die_line(EXIT_DATAERR, line, "unknown direction \"%s\"", id);
	if (pin && htg_strat_find(g, pin) < 0)
		die_line(EXIT_DATAERR, line, "direction.strategy: unknown strategy \"%s\"", pin);
	params_of(dir, &p);
	r = xcalloc((size_t)g->nstrats + 1, sizeof(*r));
	n = rank_strategies(db, g, &st, &p, rec, d, pin, r);
	json_object_set_new(rec, "memory", json_pack("{s:s, s:o, s:o, s:o}",
		"direction", id,
		"strategies", strategies_json(db, g, r, n),
		"experiences", experiences_json(db, &st, &p, id),
		"risks", risks_json(db, g, &st, d, r, n)));
	free(r);
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
		case O_MAXS: opt.max_strategies = (int)opt_int("--max-strategies", arg, 1, 64); break;
		case O_MAXE: opt.max_experiences = (int)opt_int("--max-experiences", arg, 0, 64); break;
		case O_MAXT: opt.max_text = (int)opt_int("--max-text", arg, 40, 100000); break;
		}
	}
	if (next != argc)
		opt_usage(&cmdline);
}

int
main(int argc, char **argv)
{
	struct jsonl *in;
	sqlite3 *db = NULL;
	json_t *rec;

	setprogname(argv[0]);
	parse_args(argc, argv);
	in = jsonl_open(stdin);
	/* The memory is opened with the first record: no input, no file. */
	while ((rec = jsonl_next(in))) {
		if (!db)
			db = htg_open(htg_db_path(opt.db));
		retrieve(db, rec, jsonl_line(in));
		jsonl_put(stdout, rec);
		json_decref(rec);
	}
	jsonl_close(in);
	htg_graphs_free();
	if (db)
		htg_close(db);
	return EXIT_OK;
}
