/* htg.c: the HTG memory shared by the memory tools (htg.h): opening a
 * memory file safely, state features, the static graph, attention over the
 * evidence table, and recording transitions with their folds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "die.h"
#include "htg.h"
#include "record.h"
#include "task.h"
#include "util.h"

#define BUSY_TIMEOUT_MS 30000
#define BUSY_RETRIES 100

/* The file in use, for messages, and its connection while it is open: a
 * fatal exit then leaves SQLite's memory reachable, not leaked. */
static char db_name[1024] = HTG_DEFAULT_DB;
static sqlite3 *db_open;

const char *
htg_db_path(const char *opt)
{
	const char *env = getenv("HTAM_DB");

	if (opt)
		return opt;
	if (env && *env)
		return env;
	return HTG_DEFAULT_DB;
}

void
htg_die_db(sqlite3 *db, const char *what)
{
	die(EXIT_FAIL, "%s: %s: %s", db_name, what, sqlite3_errmsg(db));
}

sqlite3_stmt *
htg_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(EXIT_FAIL, "%s: preparing \"%.60s\": %s", db_name, sql,
			sqlite3_errmsg(db));
	return st;
}

int
htg_step(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		die(EXIT_FAIL, "%s: \"%.60s\": %s", db_name, sqlite3_sql(st),
			sqlite3_errmsg(db));
	return rc;
}

/* Runs sql; while another connection holds the lock past the busy timeout,
 * waits a little and tries again. Returns SQLite's code. */
static int
exec_retry(sqlite3 *db, const char *sql)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	int rc, i;

	for (i = 0; i < BUSY_RETRIES; i++) {
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
			return rc;
		nanosleep(&pause, NULL);
	}
	return rc;
}

void
htg_begin(sqlite3 *db)
{
	if (exec_retry(db, "BEGIN IMMEDIATE") != SQLITE_OK)
		htg_die_db(db, "starting a write transaction");
}

void
htg_commit(sqlite3 *db)
{
	if (exec_retry(db, "COMMIT") != SQLITE_OK)
		htg_die_db(db, "committing");
}

void
htg_rollback(sqlite3 *db)
{
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* The single integer a query returns; SQLite's error code on failure. */
static int
query_int(sqlite3 *db, const char *sql, long *out)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*out = (long)sqlite3_column_int64(st, 0);
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* The columns of table t in db, "name type, ...", or NULL when it has
 * none (the caller frees the string with sqlite3_free). */
static char *
table_columns(sqlite3 *db, const char *t)
{
	sqlite3_stmt *q = NULL;
	char *cols = NULL;

	if (sqlite3_prepare_v2(db, "SELECT group_concat(name || ' ' || type, ', ') "
	    "FROM pragma_table_info(?1)", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, t, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
			cols = sqlite3_mprintf("%s", sqlite3_column_text(q, 0));
	}
	sqlite3_finalize(q);
	return cols;
}

/* Refuses (exit 65) a memory whose tables are not the ones of this schema,
 * whatever version it claims: the schema, applied to an empty database in
 * memory, is the reference. */
static void
check_tables(sqlite3 *db)
{
	sqlite3 *ref = NULL;
	sqlite3_stmt *q = NULL;

	if (sqlite3_open(":memory:", &ref) != SQLITE_OK ||
	    sqlite3_exec(ref, htg_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(ref, "SELECT name FROM sqlite_schema WHERE type = 'table' "
	    "ORDER BY name", -1, &q, NULL) != SQLITE_OK)
		die(EXIT_FAIL, "the embedded schema does not apply (an htam bug)");
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		char *want = table_columns(ref, t), *got = table_columns(db, t);
		if (!got || strcmp(want, got) != 0)
			die(EXIT_DATAERR, "%s: claims schema version %d, but %s %s%s: not "
				"a memory this htam wrote; use another --db", db_name,
				HTG_SCHEMA_VERSION, got ? "its table" : "it has no table", t,
				got ? " has other columns" : "");
		sqlite3_free(want);
		sqlite3_free(got);
	}
	sqlite3_finalize(q);
	sqlite3_close(ref);
}

/* Refuses (exit 65) a database that is not an htam memory of this version;
 * called before anything is written. */
static void
check_version(sqlite3 *db, long objects)
{
	long version = 0, meta = 0;

	if (query_int(db, "PRAGMA user_version", &version) != SQLITE_OK)
		htg_die_db(db, "reading the schema version");
	if (version == 0 && objects > 0) {
		query_int(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'meta'", &meta);
		die(EXIT_DATAERR, "%s: an SQLite database but not an htam memory "
			"(no schema version%s); use another --db", db_name,
			meta ? "" : ", no meta table");
	}
	if (version != HTG_SCHEMA_VERSION)
		die(EXIT_DATAERR, "%s: memory of schema version %ld, but this htam "
			"reads version %d: use the htam that wrote it (htg-memory export, "
			"then import here), or another --db", db_name, version,
			HTG_SCHEMA_VERSION);
	check_tables(db);
}

/* Creates the tables and the seed in one transaction, unless another
 * process did it first. */
static void
initialize(sqlite3 *db)
{
	long objects = 0;

	htg_begin(db);
	if (query_int(db, "SELECT count(*) FROM sqlite_schema", &objects) != SQLITE_OK)
		htg_die_db(db, "reading the schema");
	if (objects > 0) {
		check_version(db, objects);
	} else {
		if (sqlite3_exec(db, htg_schema_sql, NULL, NULL, NULL) != SQLITE_OK)
			htg_die_db(db, "creating the tables (memory/schema.sql)");
		if (sqlite3_exec(db, htg_seed_sql, NULL, NULL, NULL) != SQLITE_OK)
			htg_die_db(db, "seeding (memory/seed.sql)");
	}
	htg_commit(db);
}

/* Is path a file that exists but cannot be written, or in a folder that
 * takes no new files? */
static int
read_only(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int ro;

	if (access(path, F_OK) != 0) {
		free(dir);
		return 0;
	}
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	ro = access(path, W_OK) != 0 || access(slash ? dir : ".", W_OK) != 0;
	free(dir);
	return ro;
}

sqlite3 *
htg_open(const char *path)
{
	sqlite3 *db = NULL;
	long objects = 0;
	int rc;

	snprintf(db_name, sizeof(db_name), "%s", path);
	/* A memory that cannot be written (a read-only filesystem, a folder
	 * that takes no new files: SQLite's WAL needs its -shm beside it) is
	 * opened for reading as an immutable file, so that it can still be
	 * read and exported; writing it then fails with SQLite's message. */
	if (read_only(path)) {
		char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
		rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			SQLITE_OPEN_NOMUTEX, NULL);
		sqlite3_free(uri);
		db_open = db;
		if (rc != SQLITE_OK)
			die(EXIT_FAIL, "%s: cannot open: %s", path,
				db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		rc = query_int(db, "SELECT count(*) FROM sqlite_schema", &objects);
		if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
			die(EXIT_DATAERR, "%s: not a usable SQLite database (%s)", path,
				sqlite3_errstr(rc));
		if (rc != SQLITE_OK)
			htg_die_db(db, "reading the schema");
		if (objects == 0)
			die(EXIT_DATAERR, "%s: empty, and read-only: it cannot be made a memory", path);
		check_version(db, objects);
		return db;
	}
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
		SQLITE_OPEN_NOMUTEX, NULL);
	db_open = db;
	if (rc != SQLITE_OK)
		die(EXIT_FAIL, "%s: cannot open: %s", path,
			db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	/* Reading the schema touches the file header: random bytes, a
	 * truncated or encrypted file fail here, before anything is written. */
	rc = query_int(db, "SELECT count(*) FROM sqlite_schema", &objects);
	if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
		die(EXIT_DATAERR, "%s: not a usable SQLite database (%s); left as it "
			"is: move it away or use another --db", path, sqlite3_errstr(rc));
	if (rc != SQLITE_OK)
		htg_die_db(db, "reading the schema");
	if (objects > 0)
		check_version(db, objects);
	/* Switching a new file to WAL takes an exclusive lock without calling
	 * the busy handler: retried, for two tools creating one memory. */
	if (exec_retry(db, "PRAGMA journal_mode = WAL") != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK)
		htg_die_db(db, "setting WAL mode");
	if (objects == 0)
		initialize(db);
	return db;
}

void
htg_close(sqlite3 *db)
{
	if (db && sqlite3_close(db) != SQLITE_OK)
		warnf("%s: closing: %s", db_name, sqlite3_errmsg(db));
	if (db == db_open)
		db_open = NULL;
}

/* ---- State features ---- */

int
htg_ff_bucket(double ff)
{
	if (!(ff > 0))
		return 0;
	if (ff < 0.25)
		return 1;
	if (ff < 0.5)
		return 2;
	if (ff < 0.75)
		return 3;
	if (ff < 0.9)
		return 4;
	return 5;
}

double
htg_utility(const char *outcome, double gain)
{
	double u;

	if (strcmp(outcome, "ok") == 0) {
		if (!(gain > 0) || !isfinite(gain))
			return 0;
		u = log2(gain);
		return u > 1 ? 1 : u < -1 ? -1 : u;
	}
	if (strcmp(outcome, "gen_error") == 0)
		return -0.5;
	if (strcmp(outcome, "compile_error") == 0)
		return -0.75;
	return -1;
}

/* The floor fraction a best kernel reached: bench.floor_fraction, else
 * floor_us over the median time, else 0. */
static double
best_floor_fraction(const json_t *best)
{
	const json_t *bench = json_object_get(best, "bench");
	const json_t *ff = json_object_get(bench, "floor_fraction");
	double floor = json_number_value(json_object_get(bench, "floor_us"));
	double t = json_number_value(json_object_get(json_object_get(bench, "time_us"),
		"median"));

	if (json_is_number(ff))
		return json_number_value(ff);
	if (floor > 0 && t > 0)
		return floor / t;
	return 0;
}

json_t *
htg_features(const json_t *task, const json_t *best, const char *last_outcome)
{
	return json_pack("{s:O, s:s, s:f, s:s?}",
		"family", json_object_get(task, "family"),
		"bound", task_bound(task),
		"floor_fraction", json_is_object(best) ? best_floor_fraction(best) : 0.0,
		"last_outcome", last_outcome);
}

/* Copies a string member of obj into buf; returns 0, 1 when missing or
 * not a string, -1 when too long. */
static int
copy_id(char *buf, size_t size, const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	if (!s)
		return 1;
	if (strlen(s) >= size)
		return -1;
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

int
htg_state_read(const json_t *rec, struct htg_state *st, char *err, size_t errlen)
{
	const json_t *task = json_object_get(rec, "task");
	const json_t *hist = json_object_get(rec, "history");
	const json_t *feat = json_object_get(rec, "features");
	const json_t *step = json_object_get(rec, "step"), *h;
	size_t n = json_array_size(hist);
	const char *s;
	int i;

	memset(st, 0, sizeof(*st));
	if (!json_is_object(task)) {
		snprintf(err, errlen, "no task (a state carries its task object)");
		return -1;
	}
	if (record_check(rec, record_state, err, errlen) < 0)
		return -1;
	if (copy_id(st->task, sizeof(st->task), task, "id") != 0) {
		snprintf(err, errlen, "task.id: expected a string of at most %d bytes",
			HTG_ID_MAX - 1);
		return -1;
	}
	if (copy_id(st->family, sizeof(st->family), task, "family") != 0) {
		snprintf(err, errlen, "task \"%s\": no family", st->task);
		return -1;
	}
	if (copy_id(st->run, sizeof(st->run), rec, "run") != 0) {
		snprintf(err, errlen, "run: expected a string of at most %d bytes",
			HTG_ID_MAX - 1);
		return -1;
	}
	if (!json_is_integer(step) || json_integer_value(step) < 0 ||
	    json_integer_value(step) > 1000000) {
		snprintf(err, errlen, "step: expected an integer from 0");
		return -1;
	}
	st->step = (long)json_integer_value(step);
	if (hist && !json_is_array(hist)) {
		snprintf(err, errlen, "history: expected an array");
		return -1;
	}
	for (i = 0; i < HTG_PREFIX; i++) {
		h = (size_t)i < n ? json_array_get(hist, n - 1 - (size_t)i) : NULL;
		strcpy(st->prefix[i], HTG_START);
		strcpy(st->sprefix[i], HTG_START);
		if (!h)
			continue;
		if (copy_id(st->prefix[i], HTG_ID_MAX, h, "direction") != 0) {
			snprintf(err, errlen, "history[%zu].direction: expected a direction id",
				n - 1 - (size_t)i);
			return -1;
		}
		if (copy_id(st->sprefix[i], HTG_ID_MAX, h, "strategy") == 1)
			strcpy(st->sprefix[i], "none");
	}
	s = json_string_value(json_object_get(feat, "bound"));
	if (s && (!strcmp(s, "memory") || !strcmp(s, "compute") || !strcmp(s, "latency")))
		strcpy(st->bound, s);
	else
		strcpy(st->bound, task_bound(task));
	st->floor_fraction = json_number_value(json_object_get(feat, "floor_fraction"));
	if (!json_is_number(json_object_get(feat, "floor_fraction")))
		st->floor_fraction = best_floor_fraction(json_object_get(rec, "best"));
	st->ffb = htg_ff_bucket(st->floor_fraction);
	strcpy(st->last_outcome, "none");
	if (copy_id(st->last_outcome, sizeof(st->last_outcome), feat, "last_outcome") != 0 &&
	    n > 0 && copy_id(st->last_outcome, sizeof(st->last_outcome),
	    json_array_get(hist, n - 1), "outcome") != 0)
		strcpy(st->last_outcome, "none");
	return 0;
}

/* ---- The graph ---- */

/* A text column as a new string ("" for NULL). */
static char *
column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return xstrdup(s ? (const char *)s : "");
}

/* A text column copied into an id buffer of HTG_ID_MAX bytes. */
static void
column_id(sqlite3_stmt *st, int col, char *buf)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	snprintf(buf, HTG_ID_MAX, "%s", s ? (const char *)s : "");
}

/* FNV-1a of an id, for the strategy hash. */
static unsigned
hash_id(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct htg_graph *
htg_graph_load(sqlite3 *db, const char *family)
{
	struct htg_graph *g = xcalloc(1, sizeof(*g));
	sqlite3_stmt *st;
	char dir[HTG_ID_MAX];
	unsigned size = 64, h;
	int cap = 0, i;

	snprintf(g->family, sizeof(g->family), "%s", family);
	st = htg_prepare(db, "SELECT id, name, text, EXISTS (SELECT 1 FROM meta "
		"WHERE key = 'imported.direction.' || id) FROM directions ORDER BY ord");
	while (htg_step(db, st) == SQLITE_ROW) {
		if (g->ndirs == cap) {
			cap = cap ? 2 * cap : 16;
			g->dirs = xrealloc(g->dirs, (size_t)cap * sizeof(*g->dirs));
		}
		column_id(st, 0, g->dirs[g->ndirs].id);
		column_id(st, 1, g->dirs[g->ndirs].name);
		g->dirs[g->ndirs].text = column_dup(st, 2);
		g->dirs[g->ndirs].imported = sqlite3_column_int(st, 3);
		g->ndirs++;
	}
	sqlite3_finalize(st);

	cap = 0;
	st = htg_prepare(db, "SELECT s.id, s.direction, s.text, s.moves, s.risk, "
		"coalesce(f.prior, -1), EXISTS (SELECT 1 FROM meta WHERE key = "
		"'imported.strategy.' || s.id) FROM strategies AS s "
		"JOIN directions AS d ON d.id = s.direction "
		"LEFT JOIN fits AS f ON f.strategy = s.id AND f.family = ?1 "
		"ORDER BY d.ord, s.rowid");
	sqlite3_bind_text(st, 1, family, -1, SQLITE_TRANSIENT);
	while (htg_step(db, st) == SQLITE_ROW) {
		struct htg_strategy *s;
		if (g->nstrats == cap) {
			cap = cap ? 2 * cap : 64;
			g->strats = xrealloc(g->strats, (size_t)cap * sizeof(*g->strats));
		}
		s = &g->strats[g->nstrats];
		column_id(st, 0, s->id);
		column_id(st, 1, dir);
		s->dir = htg_dir_find(g, dir);
		s->text = column_dup(st, 2);
		s->moves = column_dup(st, 3);
		s->risk = column_dup(st, 4);
		s->fit = sqlite3_column_double(st, 5);
		s->imported = sqlite3_column_int(st, 6);
		g->nstrats++;
	}
	sqlite3_finalize(st);

	while (size < 4 * (unsigned)g->nstrats)
		size *= 2;
	g->hmask = size - 1;
	g->hash = xcalloc(size, sizeof(*g->hash));
	for (i = 0; i < g->nstrats; i++) {
		for (h = hash_id(g->strats[i].id) & g->hmask; g->hash[h]; h = (h + 1) & g->hmask)
			;
		g->hash[h] = i + 1;
	}

	/* Edges the table lacks keep the neutral prior of seed.sql. */
	g->prior = xcalloc((size_t)(g->ndirs + 1) * (size_t)g->ndirs, sizeof(*g->prior));
	for (i = 0; i < (g->ndirs + 1) * g->ndirs; i++)
		g->prior[i] = 0.3;
	st = htg_prepare(db, "SELECT src, dst, prior FROM edges");
	while (htg_step(db, st) == SQLITE_ROW) {
		char src[HTG_ID_MAX], dst[HTG_ID_MAX];
		int r, d;
		column_id(st, 0, src);
		column_id(st, 1, dst);
		r = htg_src_row(g, src);
		d = htg_dir_find(g, dst);
		if (r >= 0 && d >= 0)
			g->prior[r * g->ndirs + d] = sqlite3_column_double(st, 2);
	}
	sqlite3_finalize(st);
	return g;
}

void
htg_graph_free(struct htg_graph *g)
{
	int i;

	if (!g)
		return;
	for (i = 0; i < g->ndirs; i++)
		free(g->dirs[i].text);
	for (i = 0; i < g->nstrats; i++) {
		free(g->strats[i].text);
		free(g->strats[i].moves);
		free(g->strats[i].risk);
	}
	free(g->dirs);
	free(g->strats);
	free(g->prior);
	free(g->hash);
	free(g);
}

#define MAX_GRAPHS 16
static struct htg_graph *graphs[MAX_GRAPHS];
static int ngraphs;

struct htg_graph *
htg_graph_for(sqlite3 *db, const char *family)
{
	int i;

	for (i = 0; i < ngraphs; i++)
		if (strcmp(graphs[i]->family, family) == 0)
			return graphs[i];
	if (ngraphs == MAX_GRAPHS)
		htg_graph_free(graphs[--ngraphs]);
	graphs[ngraphs] = htg_graph_load(db, family);
	return graphs[ngraphs++];
}

void
htg_graphs_free(void)
{
	while (ngraphs > 0)
		htg_graph_free(graphs[--ngraphs]);
}

int
htg_dir_find(const struct htg_graph *g, const char *id)
{
	int i;

	for (i = 0; id && i < g->ndirs; i++)
		if (strcmp(g->dirs[i].id, id) == 0)
			return i;
	return -1;
}

int
htg_src_row(const struct htg_graph *g, const char *id)
{
	int d;

	if (id && strcmp(id, HTG_START) == 0)
		return 0;
	d = htg_dir_find(g, id);
	return d < 0 ? -1 : d + 1;
}

int
htg_strat_find(const struct htg_graph *g, const char *id)
{
	unsigned h;

	if (!id || !g->hash)
		return -1;
	for (h = hash_id(id) & g->hmask; g->hash[h]; h = (h + 1) & g->hmask)
		if (strcmp(g->strats[g->hash[h] - 1].id, id) == 0)
			return g->hash[h] - 1;
	return -1;
}

int
htg_check_history(const struct htg_graph *g, const json_t *history, char *err,
	size_t errlen)
{
	const json_t *h;
	size_t i;

	json_array_foreach(history, i, h) {
		const char *d = json_string_value(json_object_get(h, "direction"));
		if (htg_dir_find(g, d) < 0) {
			snprintf(err, errlen, "history[%zu].direction: unknown direction \"%s\"",
				i, d ? d : "(not a string)");
			return -1;
		}
	}
	return 0;
}

double
htg_edge_prior(const struct htg_graph *g, const char *src, int dst)
{
	int r = htg_src_row(g, src);

	if (r < 0 || dst < 0 || dst >= g->ndirs)
		return 0.3;
	return g->prior[r * g->ndirs + dst];
}

/* ---- Attention ---- */

void
htg_params_default(struct htg_params *p)
{
	p->pos_w[0] = 0.6;
	p->pos_w[1] = 0.25;
	p->pos_w[2] = 0.15;
	p->prefix_floor = 0.25;
	p->use_prefix = 1;
	p->strategy_prefix = 0;
	p->bound_miss = 0.25;
	p->ff_step = 0.5;
	p->outcome_miss = 0.4;
	p->transfer = 0.3;
	p->kappa = 2.0;
	p->w_attention = 1.0;
	p->w_prior = 0.5;
	p->w_explore = 0.1;
}

int
htg_params_positions(struct htg_params *p, const char *s)
{
	double w[HTG_PREFIX];
	char *copy = xstrdup(s), *tok, *save = NULL, *q = copy;
	int i = 0, rc = -1;

	while ((tok = strtok_r(q, ",", &save)) && i < HTG_PREFIX) {
		q = NULL;
		if (parse_double(tok, &w[i]) < 0 || w[i] < 0 || w[i] > 1000)
			goto out;
		i++;
	}
	if (i != HTG_PREFIX || tok || w[0] + w[1] + w[2] <= 0)
		goto out;
	memcpy(p->pos_w, w, sizeof(w));
	rc = 0;
out:
	free(copy);
	return rc;
}

int
htg_ncells(const struct htg_graph *g)
{
	return g->nstrats + g->ndirs;
}

/* Similarity of the features other than the family. */
static double
similarity_rest(const struct htg_params *p, const struct htg_state *st,
	const char *bound, int ffb, const char *outcome)
{
	double s = 1;

	if (strcmp(bound, st->bound) != 0)
		s *= p->bound_miss;
	s *= pow(p->ff_step, abs(ffb - st->ffb));
	if (strcmp(outcome, st->last_outcome) != 0)
		s *= p->outcome_miss;
	return s;
}

double
htg_similarity(const struct htg_params *p, const struct htg_state *st,
	const char *family, const char *bound, int ffb, const char *outcome)
{
	double s = similarity_rest(p, st, bound, ffb, outcome);

	return strcmp(family, st->family) == 0 ? s : s * p->transfer;
}

/* The weight of evidence rows at prefix position pos (0: every
 * transition; 1..3: those whose direction at that position matches). */
static double
position_weight(const struct htg_params *p, int pos)
{
	double total = p->pos_w[0] + p->pos_w[1] + p->pos_w[2];

	if (!p->use_prefix)
		return pos == 0 ? 1 : 0;
	if (pos == 0)
		return p->prefix_floor;
	return (1 - p->prefix_floor) * p->pos_w[pos - 1] / total;
}

double
htg_prefix_weight(const struct htg_params *p, const struct htg_state *st,
	const char *const prefix[HTG_PREFIX])
{
	double w;
	int i;

	if (!p->use_prefix)
		return 1;
	w = position_weight(p, 0);
	for (i = 0; i < HTG_PREFIX; i++) {
		const char *mine = p->strategy_prefix ? st->sprefix[i] : st->prefix[i];
		if (prefix[i] && strcmp(prefix[i], mine) == 0)
			w += position_weight(p, i + 1);
	}
	return w;
}

void
htg_attend(sqlite3 *db, const struct htg_graph *g, const struct htg_state *st,
	const struct htg_params *p, struct htg_cell *cells)
{
	sqlite3_stmt *q;
	int pos, npos = p->use_prefix ? HTG_PREFIX : 0;

	memset(cells, 0, (size_t)htg_ncells(g) * sizeof(*cells));
	q = htg_prepare(db, "SELECT family, bound, ffb, last_outcome, direction, "
		"strategy, n, sum_utility FROM evidence WHERE pos = ?1 AND tok = ?2");
	for (pos = 0; pos <= npos; pos++) {
		double w = position_weight(p, pos);
		const char *tok = "";
		int qpos = pos;

		if (pos > 0 && p->strategy_prefix) {
			tok = st->sprefix[pos - 1];
			qpos = pos + HTG_PREFIX;
		} else if (pos > 0) {
			tok = st->prefix[pos - 1];
		}
		sqlite3_reset(q);
		sqlite3_bind_int(q, 1, qpos);
		sqlite3_bind_text(q, 2, tok, -1, SQLITE_STATIC);
		while (htg_step(db, q) == SQLITE_ROW) {
			const char *family = (const char *)sqlite3_column_text(q, 0);
			const char *bound = (const char *)sqlite3_column_text(q, 1);
			const char *outcome = (const char *)sqlite3_column_text(q, 3);
			const char *dir = (const char *)sqlite3_column_text(q, 4);
			const char *strat = (const char *)sqlite3_column_text(q, 5);
			int s = htg_strat_find(g, strat), d;
			double a;
			struct htg_cell *c;

			if (s < 0) {
				if ((d = htg_dir_find(g, dir)) < 0)
					continue;
				s = g->nstrats + d;
			}
			a = w * similarity_rest(p, st, bound ? bound : "",
				sqlite3_column_int(q, 2), outcome ? outcome : "");
			c = &cells[s];
			if (family && strcmp(family, st->family) == 0) {
				c->mass += a * sqlite3_column_double(q, 6);
				c->sum += a * sqlite3_column_double(q, 7);
			} else {
				c->omass += a * sqlite3_column_double(q, 6);
				c->osum += a * sqlite3_column_double(q, 7);
			}
		}
	}
	sqlite3_finalize(q);
}

struct htg_cell
htg_dir_cell(const struct htg_graph *g, const struct htg_cell *cells, int d)
{
	struct htg_cell c = { 0, 0, 0, 0 };
	int i;

	for (i = 0; i < htg_ncells(g); i++) {
		if (i < g->nstrats ? g->strats[i].dir != d : i - g->nstrats != d)
			continue;
		c.mass += cells[i].mass;
		c.sum += cells[i].sum;
		c.omass += cells[i].omass;
		c.osum += cells[i].osum;
	}
	return c;
}

double
htg_attention(const struct htg_params *p, const struct htg_cell *c)
{
	double elsewhere = c->osum / (c->omass + p->kappa);

	return (c->sum + p->kappa * p->transfer * elsewhere) / (c->mass + p->kappa);
}

double
htg_explore(double mass, double total)
{
	return sqrt(log1p(total > 0 ? total : 0) / (1 + mass));
}

void
htg_applied(sqlite3 *db, const struct htg_graph *g, const struct htg_state *st,
	const json_t *history, unsigned char *applied)
{
	sqlite3_stmt *q;
	const json_t *h;
	size_t i;
	int s;

	memset(applied, 0, (size_t)g->nstrats);
	json_array_foreach(history, i, h)
		if ((s = htg_strat_find(g, json_string_value(json_object_get(h, "strategy")))) >= 0)
			applied[s] = 1;
	q = htg_prepare(db, "SELECT DISTINCT strategy FROM transitions "
		"WHERE run = ?1 AND task = ?2 AND strategy IS NOT NULL");
	sqlite3_bind_text(q, 1, st->run, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, st->task, -1, SQLITE_STATIC);
	while (htg_step(db, q) == SQLITE_ROW)
		if ((s = htg_strat_find(g, (const char *)sqlite3_column_text(q, 0))) >= 0)
			applied[s] = 1;
	sqlite3_finalize(q);
}

/* ---- Recording ---- */

struct htg_recorder {
	sqlite3 *db;
	sqlite3_stmt *insert, *strategy, *edge, *evidence;
};

struct htg_recorder *
htg_recorder_new(sqlite3 *db)
{
	struct htg_recorder *r = xcalloc(1, sizeof(*r));

	r->db = db;
	r->insert = htg_prepare(db, "INSERT OR IGNORE INTO transitions (candidate, "
		"run, task, family, step, bound, floor_fraction, ffb, last_outcome, "
		"p1, p2, p3, s1, s2, s3, direction, strategy, generator, outcome, "
		"baseline_us, time_us, gain, utility, reason, created) VALUES (?1, ?2, "
		"?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
		"?18, ?19, ?20, ?21, ?22, ?23, ?24, "
		"coalesce(?25, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))");
	r->strategy = htg_prepare(db, "UPDATE strategies SET n = n + 1, "
		"n_ok = n_ok + ?2, wins = wins + ?3, fails = fails + ?4, "
		"sum_log_gain = sum_log_gain + ?5, "
		"updated = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1");
	r->edge = htg_prepare(db, "INSERT INTO edges (src, dst, prior, helps, why, "
		"risk, n, n_ok, wins, fails, sum_log_gain, updated) VALUES (?1, ?2, 0.3, "
		"'not known in advance', 'no hand-written prior for this pair: the "
		"runtime statistics decide', 'unknown', 1, ?3, ?4, ?5, ?6, "
		"strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ON CONFLICT (src, dst) DO UPDATE "
		"SET n = n + 1, n_ok = n_ok + excluded.n_ok, wins = wins + excluded.wins, "
		"fails = fails + excluded.fails, "
		"sum_log_gain = sum_log_gain + excluded.sum_log_gain, "
		"updated = excluded.updated");
	r->evidence = htg_prepare(db, "INSERT INTO evidence (pos, tok, family, bound, "
		"ffb, last_outcome, direction, strategy, n, sum_utility) VALUES (?1, ?2, "
		"?3, ?4, ?5, ?6, ?7, ?8, 1, ?9) ON CONFLICT DO UPDATE SET n = n + 1, "
		"sum_utility = sum_utility + excluded.sum_utility");
	return r;
}

void
htg_recorder_free(struct htg_recorder *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->insert);
	sqlite3_finalize(r->strategy);
	sqlite3_finalize(r->edge);
	sqlite3_finalize(r->evidence);
	free(r);
}

/* Binds s, or NULL when s is NULL. */
static void
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Binds x, or NULL when x is not finite (unknown). */
static void
bind_real(sqlite3_stmt *st, int i, double x)
{
	if (isfinite(x))
		sqlite3_bind_double(st, i, x);
	else
		sqlite3_bind_null(st, i);
}

/* Runs a prepared write once and resets it. */
static void
run_write(sqlite3 *db, sqlite3_stmt *st)
{
	htg_step(db, st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

int
htg_record(struct htg_recorder *r, const struct htg_transition *t)
{
	sqlite3_stmt *st = r->insert;
	int ok = strcmp(t->outcome, "ok") == 0;
	int win = ok && t->gain > HTG_WIN_GAIN;
	double lg = ok && t->gain > 0 && isfinite(t->gain) ? log(t->gain) : 0;
	double u = htg_utility(t->outcome, t->gain);
	int ffb = htg_ff_bucket(t->floor_fraction), i, pos;

	bind_text(st, 1, t->candidate);
	bind_text(st, 2, t->run);
	bind_text(st, 3, t->task);
	bind_text(st, 4, t->family);
	sqlite3_bind_int64(st, 5, t->step);
	bind_text(st, 6, t->bound);
	sqlite3_bind_double(st, 7, isfinite(t->floor_fraction) ? t->floor_fraction : 0);
	sqlite3_bind_int(st, 8, ffb);
	bind_text(st, 9, t->last_outcome);
	for (i = 0; i < HTG_PREFIX; i++) {
		bind_text(st, 10 + i, t->prefix[i] ? t->prefix[i] : HTG_START);
		bind_text(st, 13 + i, t->sprefix[i] ? t->sprefix[i] : HTG_START);
	}
	bind_text(st, 16, t->direction);
	bind_text(st, 17, t->strategy);
	bind_text(st, 18, t->generator);
	bind_text(st, 19, t->outcome);
	bind_real(st, 20, t->baseline_us);
	bind_real(st, 21, t->time_us);
	bind_real(st, 22, ok ? t->gain : NAN);
	sqlite3_bind_double(st, 23, u);
	bind_text(st, 24, t->reason);
	bind_text(st, 25, t->created);
	run_write(r->db, st);
	if (sqlite3_changes(r->db) == 0)
		return 0;

	if (t->strategy) {
		st = r->strategy;
		bind_text(st, 1, t->strategy);
		sqlite3_bind_int(st, 2, ok);
		sqlite3_bind_int(st, 3, win);
		sqlite3_bind_int(st, 4, !ok);
		sqlite3_bind_double(st, 5, lg);
		run_write(r->db, st);
	}

	st = r->edge;
	bind_text(st, 1, t->prefix[0] ? t->prefix[0] : HTG_START);
	bind_text(st, 2, t->direction);
	sqlite3_bind_int(st, 3, ok);
	sqlite3_bind_int(st, 4, win);
	sqlite3_bind_int(st, 5, !ok);
	sqlite3_bind_double(st, 6, lg);
	run_write(r->db, st);

	/* One evidence row per prefix position: 0 (all), 1..3 the directions,
	 * 4..6 the strategies (docs/memory.md). */
	for (pos = 0; pos <= 2 * HTG_PREFIX; pos++) {
		const char *tok = "";
		st = r->evidence;
		if (pos >= 1 && pos <= HTG_PREFIX)
			tok = t->prefix[pos - 1];
		else if (pos > HTG_PREFIX)
			tok = t->sprefix[pos - 1 - HTG_PREFIX];
		if (!tok)
			tok = HTG_START;
		sqlite3_bind_int(st, 1, pos);
		bind_text(st, 2, tok);
		bind_text(st, 3, t->family);
		bind_text(st, 4, t->bound);
		sqlite3_bind_int(st, 5, ffb);
		bind_text(st, 6, t->last_outcome);
		bind_text(st, 7, t->direction);
		bind_text(st, 8, t->strategy ? t->strategy : "");
		sqlite3_bind_double(st, 9, u);
		run_write(r->db, st);
	}
	return 1;
}

char *
htg_clip(const char *s, size_t max)
{
	size_t n = strlen(s);
	char *out;

	if (n <= max)
		return xstrdup(s);
	if (max < 4)
		max = 4;
	n = max - 3;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	out = xmalloc(n + 4);
	memcpy(out, s, n);
	memcpy(out + n, "...", 4);
	return out;
}
