/* htg.h: the Hierarchical Transition Graph, HTAM's memory in one SQLite
 * file, as the four memory tools share it (htg-select, htg-retrieve,
 * htg-update, htg-memory): opening a memory safely, the state features
 * selection compares, the graph's static content, attention over the
 * recorded transitions, and recording a transition with the statistics
 * that fold over it. docs/memory.md describes the model and the formula;
 * memory/schema.sql the tables.
 *
 * Errors about the memory file itself (not a database, another schema
 * version, not an htam memory) exit 65 and leave the file untouched;
 * failures of SQLite at run time exit 1. Both name the file. */
#ifndef HTAM_HTG_H
#define HTAM_HTG_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <sqlite3.h>

#define HTG_SCHEMA_VERSION 1
#define HTG_PREFIX 3        /* history positions attended to */
#define HTG_FF_BUCKETS 6    /* floor_fraction buckets, 0 = unmeasured */
#define HTG_ID_MAX 64       /* ids of tasks, runs, directions, strategies */
#define HTG_WIN_GAIN 1.01   /* a gain above this counts as a win */
#define HTG_START "start"   /* the direction "before the first step" */
#define HTG_DEFAULT_DB "htam.db"

/* The embedded SQL (lib/htg_sql.S), NUL-terminated. */
extern const char htg_schema_sql[];
extern const char htg_seed_sql[];

/* The memory's path: opt when not NULL, else $HTAM_DB when set and not
 * empty, else ./htam.db. */
const char *htg_db_path(const char *opt);

/* Opens the memory at path, creating it from the schema and seed when the
 * file is missing or empty, in WAL mode with a busy timeout. A file that is
 * not an SQLite database, or is one without the htam schema, or of another
 * schema version, is reported (exit 65) and not written to. */
sqlite3 *htg_open(const char *path);
void htg_close(sqlite3 *db);

/* Prepares sql on db; an error is fatal (exit 1, naming the statement). */
sqlite3_stmt *htg_prepare(sqlite3 *db, const char *sql);
/* Reports SQLite's last error on db with what was being done; exits 1. */
_Noreturn void htg_die_db(sqlite3 *db, const char *what);
/* Steps st once: returns SQLITE_ROW or SQLITE_DONE, dies otherwise. */
int htg_step(sqlite3 *db, sqlite3_stmt *st);

/* BEGIN IMMEDIATE (the write lock up front, so two writers queue instead
 * of deadlocking), retried while another writer holds the lock; COMMIT,
 * likewise; ROLLBACK. Errors are fatal. */
void htg_begin(sqlite3 *db);
void htg_commit(sqlite3 *db);
void htg_rollback(sqlite3 *db);

/* ---- State features ---- */

/* What selection compares between the current state and a recorded
 * transition's state. Strings are NUL-terminated ids; prefix[0] is the
 * direction applied last, "start" where the history is shorter. */
struct htg_state {
	char run[HTG_ID_MAX];
	char task[HTG_ID_MAX];
	long step;
	char family[HTG_ID_MAX];
	char bound[16];
	double floor_fraction;
	int ffb;
	char last_outcome[32];
	char prefix[HTG_PREFIX][HTG_ID_MAX];
	char sprefix[HTG_PREFIX][HTG_ID_MAX];
};

/* Reads a state record: task (id, family), run, step, history and
 * features; features the record lacks are computed from the task and the
 * history. Returns 0, or -1 with err saying what is wrong. */
int htg_state_read(const json_t *rec, struct htg_state *st, char *err,
	size_t errlen);

/* The bucket of a floor fraction: 0 unmeasured (<= 0), 1 under 0.25,
 * 2 under 0.5, 3 under 0.75, 4 under 0.9, 5 from 0.9. */
int htg_ff_bucket(double floor_fraction);

/* The features object of a state: family and bound of the task, the floor
 * fraction of best (null: 0), last_outcome. A new reference. */
json_t *htg_features(const json_t *task, const json_t *best,
	const char *last_outcome);

/* The signed value of one outcome that selection attends to: log2 of the
 * gain clipped to [-1, 1] when ok (0 when the gain is unknown, gain <= 0),
 * -0.5 for gen_error, -0.75 for compile_error, -1 for any other failure. */
double htg_utility(const char *outcome, double gain);

/* ---- The graph's static content, loaded once per process ---- */

struct htg_direction {
	char id[HTG_ID_MAX];
	char name[HTG_ID_MAX];
	char *text;
	int imported;       /* added by htg-memory import --allow-new */
};

struct htg_strategy {
	char id[HTG_ID_MAX];
	int dir;            /* index into htg_graph.dirs */
	char *text;
	char *moves;        /* JSON array, as stored */
	char *risk;
	double fit;         /* prior for the family loaded, -1: does not apply */
	int imported;       /* added by htg-memory import --allow-new */
};

struct htg_graph {
	char family[HTG_ID_MAX];
	int ndirs;
	struct htg_direction *dirs;
	int nstrats;
	struct htg_strategy *strats;
	double *prior;      /* (ndirs + 1) x ndirs: row 0 is "start" */
	int *hash;          /* strategy ids, open addressing: index + 1 */
	unsigned hmask;     /* hash size - 1 (a power of two) */
};

/* Loads directions, strategies (with their fit for family) and edge
 * priors. Returns a graph to free with htg_graph_free. */
struct htg_graph *htg_graph_load(sqlite3 *db, const char *family);
void htg_graph_free(struct htg_graph *g);
/* The graph of a family, loaded on first use and kept (borrowed: freed by
 * htg_graphs_free). */
struct htg_graph *htg_graph_for(sqlite3 *db, const char *family);
void htg_graphs_free(void);
/* Index of a direction (or -1); htg_src_row gives the prior row of a
 * previous direction (0 for "start", -1 if unknown). */
int htg_dir_find(const struct htg_graph *g, const char *id);
int htg_src_row(const struct htg_graph *g, const char *id);
/* Index of a strategy, or -1. */
int htg_strat_find(const struct htg_graph *g, const char *id);
/* Checks that every history[].direction is a direction of g. Returns 0,
 * or -1 with err naming the entry. */
int htg_check_history(const struct htg_graph *g, const json_t *history,
	char *err, size_t errlen);
/* Static prior of the edge from src (a direction or "start") to dst. */
double htg_edge_prior(const struct htg_graph *g, const char *src, int dst);

/* ---- Attention over the recorded transitions ---- */

/* The knobs of the model (docs/memory.md gives their meaning and
 * defaults, htg_params_default sets them). */
struct htg_params {
	double pos_w[HTG_PREFIX];   /* weight of each prefix position */
	double prefix_floor;        /* beta: weight of a transition matching no position */
	int use_prefix;             /* 0: --no-prefix */
	int strategy_prefix;        /* attend to strategies, not directions (--flat) */
	double bound_miss;          /* similarity factor when bound differs */
	double ff_step;             /* factor per floor-fraction bucket apart */
	double outcome_miss;        /* factor when last outcomes differ */
	double transfer;            /* lambda: weight of other families' evidence */
	double kappa;               /* pseudo-count shrinking toward no evidence */
	double w_attention, w_prior, w_explore;
};

void htg_params_default(struct htg_params *p);
/* Parses "W1,W2,W3" (non-negative, not all zero) into p->pos_w. */
int htg_params_positions(struct htg_params *p, const char *s);

/* Attention mass and weighted utility, split into the state's own family
 * and the others. */
struct htg_cell {
	double mass, sum;           /* same family */
	double omass, osum;         /* other families */
};

/* Attends over the evidence for state st: fills cells[0 .. nstrats-1]
 * (one per strategy) and cells[nstrats .. nstrats+ndirs-1] (transitions of
 * each direction with no known strategy). cells must hold
 * htg_ncells(g) entries. */
int htg_ncells(const struct htg_graph *g);
void htg_attend(sqlite3 *db, const struct htg_graph *g,
	const struct htg_state *st, const struct htg_params *p,
	struct htg_cell *cells);
/* Sums the cells of direction d. */
struct htg_cell htg_dir_cell(const struct htg_graph *g,
	const struct htg_cell *cells, int d);
/* The attention value of a cell: the shrunk, similarity-weighted mean
 * utility (docs/memory.md). */
double htg_attention(const struct htg_params *p, const struct htg_cell *c);
/* The exploration value: sqrt(ln(1 + total) / (1 + mass)). */
double htg_explore(double mass, double total);
/* Similarity of a recorded state to st (family, bound, bucket, outcome),
 * and the prefix weight of a recorded prefix (p1, p2, p3). */
double htg_similarity(const struct htg_params *p, const struct htg_state *st,
	const char *family, const char *bound, int ffb, const char *outcome);
double htg_prefix_weight(const struct htg_params *p,
	const struct htg_state *st, const char *const prefix[HTG_PREFIX]);

/* Marks in applied[] (nstrats entries) the strategies this run already
 * applied to this task: those of the state's history and of its recorded
 * transitions. */
void htg_applied(sqlite3 *db, const struct htg_graph *g,
	const struct htg_state *st, const json_t *history,
	unsigned char *applied);

/* ---- Recording ---- */

/* One transition as the transitions table holds it. Strings are borrowed;
 * strategy, generator and reason may be NULL; gain, baseline_us and
 * time_us are NAN where unknown. */
struct htg_transition {
	const char *candidate, *run, *task, *family, *bound;
	long step;
	double floor_fraction;
	const char *last_outcome;
	const char *prefix[HTG_PREFIX], *sprefix[HTG_PREFIX];
	const char *direction, *strategy, *generator, *outcome, *reason;
	double baseline_us, time_us, gain;
	const char *created;        /* NULL: now */
};

struct htg_recorder;
/* Prepares the statements that record transitions into db. */
struct htg_recorder *htg_recorder_new(sqlite3 *db);
void htg_recorder_free(struct htg_recorder *r);
/* Inserts t unless (run, task, candidate) is there already, and then only
 * folds it into the strategy, edge and evidence statistics. Call inside a
 * transaction. Returns 1 if inserted, 0 if it was there. */
int htg_record(struct htg_recorder *r, const struct htg_transition *t);

/* Copies at most max bytes of s into a new string, cut at a UTF-8
 * character boundary and ending in "..." when cut. */
char *htg_clip(const char *s, size_t max);

#endif
