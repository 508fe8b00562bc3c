/* htg-select: chooses the next global direction for each state record by
 * attending over the transitions recorded in the HTG memory, plus the
 * static priors and an exploration term (docs/memory.md), and adds it to
 * the record as `direction`. -k N fans out N records, one per direction. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "htg.h"
#include "jsonl.h"
#include "opt.h"
#include "util.h"


enum mode { MODE_HTG, MODE_FLAT, MODE_RANDOM };

static struct {
	const char *db;
	int k;
	uint64_t seed;
	enum mode mode;
	int no_prefix, no_position_weights;
	struct htg_params p;
} opt;

/* One scored choice: a direction, or a strategy in flat mode. */
struct choice {
	int idx;            /* direction (htg, random) or strategy (flat) */
	double score;
	double attention, prior, explore, random;
	double evidence;    /* attention mass in the state's family */
	int left;           /* strategies left to try */
	uint64_t tie;       /* seeded random tie-break */
};

enum { O_DB = 256, O_SEED, O_NO_PREFIX, O_NO_POSW, O_POSW, O_EXPLORE, O_FLAT, O_RANDOM };

static const struct opt options[] = {
	{ O_DB, 0, "db", "FILE", "the memory (default $HTAM_DB, else ./htam.db)" },
	{ 'k', 'k', NULL, "N", "N records per state, one per direction (1..64)" },
	{ O_SEED, 0, "seed", "N", "seed of tie-breaks and --random (default 0)" },
	{ O_NO_PREFIX, 0, "no-prefix", NULL, "ablation: ignore the history prefix" },
	{ O_NO_POSW, 0, "no-position-weights", NULL, "ablation: every prefix position weighs the same" },
	{ O_POSW, 0, "position-weights", "W1,W2,W3", "weights of the last three directions\n"
		"(0.6,0.25,0.15)" },
	{ O_EXPLORE, 0, "explore", "C", "weight of the exploration term (0.1)" },
	{ O_FLAT, 0, "flat", NULL, "ablation: score strategies directly, one level" },
	{ O_RANDOM, 0, "random", NULL, "ablation: a random direction" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [--db FILE] [-k N] [--seed N] [--no-prefix] [--no-position-weights]\n"
	"         [--position-weights W1,W2,W3] [--explore C] [--flat | --random] < states\n",
	NULL, options, NULL
};

/* splitmix64: the seeded random numbers of tie-breaks and --random. */
static uint64_t
next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t
hash64(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The random stream of one state: the seed mixed with run, task and step,
 * so each state draws differently yet reproducibly. */
static uint64_t
state_seed(const struct htg_state *st)
{
	uint64_t h = hash64(st->run, 0xcbf29ce484222325ull ^ opt.seed);

	h = hash64("/", h);
	h = hash64(st->task, h);
	return h ^ ((uint64_t)st->step * 0x9e3779b97f4a7c15ull);
}

/* Direction d's prior fit for the family: the best prior of its
 * applicable strategies not yet applied (of all applicable ones when every
 * one was); -1 when none applies. *left counts those not applied. */
static double
direction_fit(const struct htg_graph *g, int d, const unsigned char *applied,
	int *left)
{
	double fit = -1, fit_left = -1;
	int s;

	*left = 0;
	for (s = 0; s < g->nstrats; s++) {
		if (g->strats[s].dir != d || g->strats[s].fit < 0)
			continue;
		fit = fmax(fit, g->strats[s].fit);
		if (!applied[s]) {
			fit_left = fmax(fit_left, g->strats[s].fit);
			(*left)++;
		}
	}
	return *left > 0 ? fit_left : fit;
}

/* Scores every direction with a strategy left to try; with none left at
 * all, every applicable direction (the search starts over). Returns the
 * number of choices written to c. */
static int
score_directions(const struct htg_graph *g, const struct htg_state *st,
	const struct htg_cell *cells, const unsigned char *applied,
	struct choice *c, uint64_t *rng)
{
	struct htg_cell *dc = xcalloc((size_t)g->ndirs, sizeof(*dc));
	double *fit = xcalloc((size_t)g->ndirs, sizeof(*fit)), total = 0;
	int *left = xcalloc((size_t)g->ndirs, sizeof(*left)), n = 0, d, retry;

	for (d = 0; d < g->ndirs; d++) {
		dc[d] = htg_dir_cell(g, cells, d);
		fit[d] = direction_fit(g, d, applied, &left[d]);
		total += dc[d].mass;
	}
	for (retry = 0; retry < 2 && n == 0; retry++) {
		for (d = 0; d < g->ndirs; d++) {
			struct choice *x = &c[n];
			if (fit[d] < 0 || (!retry && left[d] == 0))
				continue;
			memset(x, 0, sizeof(*x));
			x->idx = d;
			x->left = left[d];
			x->evidence = dc[d].mass;
			x->attention = opt.p.w_attention * htg_attention(&opt.p, &dc[d]);
			x->prior = opt.p.w_prior *
				sqrt(htg_edge_prior(g, st->prefix[0], d) * fit[d]);
			x->explore = opt.p.w_explore * htg_explore(dc[d].mass, total);
			x->score = x->attention + x->prior + x->explore;
			x->tie = next_random(rng);
			n++;
		}
		if (n == 0 && !retry)
			warnf("task \"%s\", run \"%s\": every strategy was tried; choosing "
				"among all directions again", st->task, st->run);
	}
	free(dc);
	free(fit);
	free(left);
	return n;
}

/* Flat memory: scores the strategies themselves, one level, no edges. */
static int
score_strategies(const struct htg_graph *g, const struct htg_cell *cells,
	const unsigned char *applied, struct choice *c, uint64_t *rng)
{
	double total = 0;
	int n = 0, s, retry;

	for (s = 0; s < htg_ncells(g); s++)
		total += cells[s].mass;
	for (retry = 0; retry < 2 && n == 0; retry++) {
		for (s = 0; s < g->nstrats; s++) {
			struct choice *x = &c[n];
			if (g->strats[s].fit < 0 || (!retry && applied[s]))
				continue;
			memset(x, 0, sizeof(*x));
			x->idx = s;
			x->left = !applied[s];
			x->evidence = cells[s].mass;
			x->attention = opt.p.w_attention * htg_attention(&opt.p, &cells[s]);
			x->prior = opt.p.w_prior * g->strats[s].fit;
			x->explore = opt.p.w_explore * htg_explore(cells[s].mass, total);
			x->score = x->attention + x->prior + x->explore;
			x->tie = next_random(rng);
			n++;
		}
	}
	return n;
}

/* --random: a uniformly random order of the directions with something
 * left to try. */
static int
draw_directions(const struct htg_graph *g, const unsigned char *applied,
	struct choice *c, uint64_t *rng)
{
	int n = 0, d, left, retry;

	for (retry = 0; retry < 2 && n == 0; retry++) {
		for (d = 0; d < g->ndirs; d++) {
			if (direction_fit(g, d, applied, &left) < 0 || (!retry && left == 0))
				continue;
			memset(&c[n], 0, sizeof(c[n]));
			c[n].idx = d;
			c[n].left = left;
			c[n].random = (double)(next_random(rng) >> 11) / 9007199254740992.0;
			c[n].score = c[n].random;
			c[n].tie = next_random(rng);
			n++;
		}
	}
	return n;
}

/* Highest score first; ties by the seeded random key. */
static int
by_score(const void *a, const void *b)
{
	const struct choice *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* The direction member for choice c, ranked rank. A new reference. */
static json_t *
direction_json(const struct htg_graph *g, const struct choice *c, int rank)
{
	int d = opt.mode == MODE_FLAT ? g->strats[c->idx].dir : c->idx;
	json_t *dir, *abl = json_array();

	dir = json_pack("{s:s, s:s, s:i, s:f}", "id", g->dirs[d].id,
		"name", g->dirs[d].name, "rank", rank, "score", c->score);
	if (opt.mode == MODE_RANDOM) {
		json_object_set_new(dir, "parts", json_pack("{s:f}", "random", c->random));
	} else {
		json_object_set_new(dir, "parts", json_pack("{s:f, s:f, s:f}",
			"attention", c->attention, "prior", c->prior, "explore", c->explore));
		json_object_set_new(dir, "evidence", json_real(c->evidence));
	}
	if (opt.mode == MODE_FLAT)
		json_object_set_new(dir, "strategy", json_string(g->strats[c->idx].id));
	if (g->dirs[d].imported)
		json_object_set_new(dir, "imported", json_true());
	json_object_set_new(dir, "left", json_integer(c->left));
	json_object_set_new(dir, "mode", json_string(opt.mode == MODE_FLAT ? "flat" :
		opt.mode == MODE_RANDOM ? "random" : "htg"));
	if (opt.no_prefix)
		json_array_append_new(abl, json_string("no_prefix"));
	if (opt.no_position_weights)
		json_array_append_new(abl, json_string("no_position_weights"));
	if (json_array_size(abl) > 0)
		json_object_set(dir, "ablations", abl);
	json_decref(abl);
	return dir;
}

/* Chooses for one state and writes one record per chosen direction. */
static void
select_state(sqlite3 *db, json_t *rec, long line)
{
	struct htg_state st;
	struct htg_graph *g;
	struct htg_cell *cells;
	struct choice *c;
	unsigned char *applied;
	uint64_t rng;
	char err[256];
	int n, i;

	if (htg_state_read(rec, &st, err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	g = htg_graph_for(db, st.family);
	if (htg_check_history(g, json_object_get(rec, "history"), err, sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	cells = xcalloc((size_t)htg_ncells(g), sizeof(*cells));
	c = xcalloc((size_t)htg_ncells(g), sizeof(*c));
	applied = xcalloc((size_t)g->nstrats + 1, 1);
	rng = state_seed(&st);
	htg_applied(db, g, &st, json_object_get(rec, "history"), applied);
	if (opt.mode == MODE_RANDOM) {
		n = draw_directions(g, applied, c, &rng);
	} else {
		htg_attend(db, g, &st, &opt.p, cells);
		n = opt.mode == MODE_FLAT ? score_strategies(g, cells, applied, c, &rng) :
			score_directions(g, &st, cells, applied, c, &rng);
	}
	if (n == 0) {
		free(applied);
		free(c);
		free(cells);
		die_line(EXIT_DATAERR, line, "task \"%s\": no strategy in the memory "
			"applies to family \"%s\"", st.task, st.family);
	}
	qsort(c, (size_t)n, sizeof(*c), by_score);
	if (n < opt.k)
		warn_line(line, "task \"%s\": only %d of %d directions can be chosen",
			st.task, n, opt.k);
	for (i = 0; i < n && i < opt.k; i++) {
		json_t *out = json_copy(rec);
		json_object_set_new(out, "direction", direction_json(g, &c[i], i + 1));
		jsonl_put(stdout, out);
		json_decref(out);
	}
	free(applied);
	free(c);
	free(cells);
}

/* Parses the command line into opt; bad usage exits 2. */
static void
parse_args(int argc, char **argv)
{
	const char *arg;
	int ch, next;

	opt.k = 1;
	htg_params_default(&opt.p);
	while ((ch = opt_next(argc, argv, &cmdline, &arg, &next)) != -1) {
		switch (ch) {
		case O_DB: opt.db = arg; break;
		case 'k': opt.k = (int)opt_int("-k", arg, 1, 64); break;
		case O_SEED: opt.seed = (uint64_t)opt_int("--seed", arg, 0, INT64_MAX); break;
		case O_NO_PREFIX: opt.no_prefix = 1; break;
		case O_NO_POSW: opt.no_position_weights = 1; break;
		case O_POSW:
			if (htg_params_positions(&opt.p, arg) < 0)
				die(EXIT_USAGE, "--position-weights %s: expected three "
					"non-negative numbers, not all 0", arg);
			break;
		case O_EXPLORE: opt.p.w_explore = opt_num("--explore", arg, 0, 100); break;
		case O_FLAT: opt.mode = MODE_FLAT; break;
		case O_RANDOM: opt.mode = MODE_RANDOM; break;
		}
	}
	if (next != argc)
		opt_usage(&cmdline);
	if (opt.no_prefix)
		opt.p.use_prefix = 0;
	if (opt.no_position_weights)
		opt.p.pos_w[0] = opt.p.pos_w[1] = opt.p.pos_w[2] = 1;
	opt.p.strategy_prefix = opt.mode == MODE_FLAT;
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
		select_state(db, rec, jsonl_line(in));
		json_decref(rec);
	}
	jsonl_close(in);
	htg_graphs_free();
	if (db)
		htg_close(db);
	return EXIT_OK;
}
