/* htg-memory: moves a learned HTG memory between databases and draws it.
 *   export  writes the memory as JSON lines (directions, strategies,
 *           edges with their statistics, transitions);
 *   import  merges such lines into the memory (idempotent: statistics are
 *           refolded from the transitions that are new here);
 *   dot     writes the graph in Graphviz DOT: directions as clusters of
 *           their strategies, edges labelled with measured mean gain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "htg.h"
#include "family.h"
#include "jsonl.h"
#include "opt.h"
#include "record.h"
#include "task.h"
#include "util.h"

static struct {
	const char *db;
	int all;            /* dot: every static edge too */
	int allow_new;      /* import: directions and strategies this memory lacks */
} opt;

enum { O_DB = 256, O_ALL, O_ALLOW_NEW };

static const struct opt options[] = {
	{ O_DB, 0, "db", "FILE", "the memory (default $HTAM_DB, else ./htam.db)" },
	{ O_ALL, 0, "all", NULL, "dot: every static edge too" },
	{ O_ALLOW_NEW, 0, "allow-new", NULL, "import: take directions and strategies this memory\n"
		"lacks (kept marked as imported, and shown so in prompts)" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [--db FILE] export\n"
	"       %s [--db FILE] import [--allow-new] < lines\n"
	"       %s [--db FILE] dot [--all]\n",
	"  export   write the memory as JSON lines\n"
	"  import   merge such lines into the memory, each checked\n"
	"  dot      write the graph in Graphviz DOT\n",
	options, NULL
};

/* ---- export ---- */

/* A column as a JSON value: integer, real, text or null. */
static json_t *
column_json(sqlite3_stmt *q, int i)
{
	switch (sqlite3_column_type(q, i)) {
	case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(q, i));
	case SQLITE_FLOAT: return json_real(sqlite3_column_double(q, i));
	case SQLITE_TEXT: return json_string((const char *)sqlite3_column_text(q, i));
	default: return json_null();
	}
}

/* Writes one line per row of sql: {"kind": kind, column: value, ...};
 * the columns "moves" and "fits" hold JSON text and are written parsed. */
static void
export_rows(sqlite3 *db, const char *kind, const char *sql)
{
	sqlite3_stmt *q = htg_prepare(db, sql);
	int i;

	while (htg_step(db, q) == SQLITE_ROW) {
		json_t *o = json_pack("{s:s}", "kind", kind);
		for (i = 0; i < sqlite3_column_count(q); i++) {
			const char *name = sqlite3_column_name(q, i);
			json_t *v = column_json(q, i);
			int is_json = !strcmp(name, "moves") || !strcmp(name, "fits");
			if (is_json && json_is_string(v)) {
				json_t *parsed = json_loads(json_string_value(v),
					JSON_DECODE_ANY, NULL);
				json_decref(v);
				v = parsed ? parsed : json_null();
			}
			json_object_set_new(o, name, v);
		}
		jsonl_put(stdout, o);
		json_decref(o);
	}
	sqlite3_finalize(q);
}

/* Writes the whole memory as JSON lines, meta first. */
static void
export(sqlite3 *db)
{
	json_t *meta = json_pack("{s:s, s:i}", "kind", "meta", "schema_version",
		HTG_SCHEMA_VERSION);

	jsonl_put(stdout, meta);
	json_decref(meta);
	export_rows(db, "family", "SELECT id FROM families ORDER BY rowid");
	export_rows(db, "direction", "SELECT id, name, ord, text FROM directions "
		"ORDER BY ord");
	export_rows(db, "strategy", "SELECT s.id, s.direction, s.text, s.moves, s.risk, "
		"(SELECT json_group_object(family, prior) FROM fits WHERE strategy = s.id) "
		"AS fits, s.n, s.n_ok, s.wins, s.fails, s.sum_log_gain, s.updated "
		"FROM strategies AS s ORDER BY s.rowid");
	export_rows(db, "edge", "SELECT src, dst, prior, helps, why, risk, n, n_ok, "
		"wins, fails, sum_log_gain, updated FROM edges ORDER BY src, dst");
	export_rows(db, "transition", "SELECT candidate, run, task, family, step, "
		"bound, floor_fraction, last_outcome, p1, p2, p3, s1, s2, s3, direction, "
		"strategy, generator, outcome, baseline_us, time_us, gain, reason, created "
		"FROM transitions ORDER BY id");
}

/* ---- import ---- */

/* An imported memory is untrusted input: every line is checked member by
 * member against these before anything is written. Ids are short, text
 * is bounded, numbers are finite and in range, outcomes and bounds from
 * their known sets. Statistics columns of exported lines are ignored:
 * they are folds over the transitions, recomputed here. */
#define ID 64
#define NAME 200
#define TEXT 2000
static const char *const bounds[] = { "memory", "compute", "latency", NULL };
static const char *const last_outcomes[] = { "none", "ok", "incorrect",
	"compile_error", "gen_error", "timeout", "crash", "rejected", NULL };

static const struct field meta_line[] = {
	{ "schema_version", K_INT, F_REQ, NULL, 0, 0, NULL },
	{ NULL }
};
static const struct field family_line[] = {
	{ "id", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ NULL }
};
static const struct field direction_line[] = {
	{ "id", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "name", K_STR, F_REQ, NULL, 0, NAME, NULL },
	{ "text", K_STR, F_REQ, NULL, 0, TEXT, NULL },
	{ "ord", K_INT, 0, NULL, 0, 1e6, NULL },
	{ NULL }
};
static const struct field knob_value[] = { { "", K_EXPR, 0, NULL, 0, 0, NULL }, { NULL } };
static const struct field factor[] = { { "", K_NUM, 0, NULL, -1e6, 1e6, NULL }, { NULL } };
static const struct field move[] = {
	{ "family", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "variant", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "set", K_MAP, 0, knob_value, 0, 0, NULL },
	{ "mul", K_MAP, 0, factor, 0, 0, NULL },
	{ "add", K_MAP, 0, factor, 0, 0, NULL },
	{ NULL }
};
static const struct field moves[] = { { "", K_OBJ, 0, move, 0, 0, NULL }, { NULL } };
static const struct field prior[] = { { "", K_NUM, 0, NULL, 0, 1, NULL }, { NULL } };
static const struct field strategy_line[] = {
	{ "id", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "direction", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "text", K_STR, F_REQ, NULL, 0, TEXT, NULL },
	{ "risk", K_STR, F_REQ, NULL, 0, TEXT, NULL },
	{ "moves", K_ARR, F_REQ, moves, 0, 0, NULL },
	{ "fits", K_MAP, 0, prior, 0, 0, NULL },
	{ NULL }
};
static const struct field edge_line[] = {
	{ "src", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "dst", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "prior", K_NUM, F_REQ, NULL, 0, 1, NULL },
	{ "helps", K_STR, F_REQ, NULL, 0, TEXT, NULL },
	{ "why", K_STR, F_REQ, NULL, 0, TEXT, NULL },
	{ "risk", K_STR, F_REQ, NULL, 0, TEXT, NULL },
	{ NULL }
};
static const struct field transition_line[] = {
	{ "candidate", K_STR, F_REQ, NULL, 0, NAME, NULL },
	{ "run", K_STR, F_REQ, NULL, 0, NAME, NULL },
	{ "task", K_STR, F_REQ, NULL, 0, NAME, NULL },
	{ "family", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "step", K_INT, F_REQ, NULL, 0, 1e6, NULL },
	{ "bound", K_STR, F_REQ, NULL, 0, 0, bounds },
	{ "floor_fraction", K_NUM, F_NULL, NULL, 0, 100, NULL },
	{ "last_outcome", K_STR, F_REQ, NULL, 0, 0, last_outcomes },
	{ "p1", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "p2", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "p3", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "s1", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "s2", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "s3", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "direction", K_STR, F_REQ, NULL, 0, ID, NULL },
	{ "strategy", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ "generator", K_STR, F_NULL, NULL, 0, NAME, NULL },
	{ "outcome", K_STR, F_REQ | F_OUTCOME, NULL, 0, 0, NULL },
	{ "reason", K_STR, F_NULL, NULL, 0, TEXT, NULL },
	/* times up to a day; a gain is a ratio of two of them, bounded so
	 * that a few lines cannot outweigh a memory's own experience */
	{ "baseline_us", K_NUM, F_NULL | F_POS, NULL, 0, 8.64e10, NULL },
	{ "time_us", K_NUM, F_NULL | F_POS, NULL, 0, 8.64e10, NULL },
	{ "gain", K_NUM, F_NULL | F_POS, NULL, 0, 1e4, NULL },
	{ "created", K_STR, F_NULL, NULL, 0, ID, NULL },
	{ NULL }
};

/* Is id one of the template families this htam knows? */
static int
known_family(const char *id)
{
	return family_known(id);
}

/* Statements of the import, prepared once. */
struct importer {
	sqlite3 *db;
	sqlite3_stmt *family, *direction, *strategy, *fit, *edge;
	sqlite3_stmt *has_family, *has_dir, *has_strat, *mark;
	struct htg_recorder *rec;
	long added, known;
};

/* A string member, or NULL. */
static const char *
text(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A number member, or NAN when missing. */
static double
real_or_nan(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Whether id is a row of the table the statement q looks in. */
static int
exists(sqlite3 *db, sqlite3_stmt *q, const char *id)
{
	int found;

	sqlite3_bind_text(q, 1, id, -1, SQLITE_STATIC);
	found = htg_step(db, q) == SQLITE_ROW;
	sqlite3_reset(q);
	return found;
}

/* Runs q with its text parameters bound from the members named, in order;
 * returns 0, or -1 when a member is missing. */
static int
insert_texts(sqlite3 *db, sqlite3_stmt *q, const json_t *o,
	const char *const keys[])
{
	int i;

	for (i = 0; keys[i]; i++) {
		const char *s = text(o, keys[i]);
		if (!s) {
			sqlite3_reset(q);
			return -1;
		}
		sqlite3_bind_text(q, i + 1, s, -1, SQLITE_STATIC);
	}
	htg_step(db, q);
	sqlite3_reset(q);
	return 0;
}

/* Records that an imported line added id (a direction or a strategy) to
 * the memory, so that htg-retrieve and kgen show it as imported. */
static void
mark_imported(struct importer *im, const char *kind, const char *id)
{
	char *key = xasprintf("imported.%s.%s", kind, id);
	sqlite3_bind_text(im->mark, 1, key, -1, SQLITE_TRANSIENT);
	htg_step(im->db, im->mark);
	sqlite3_reset(im->mark);
	free(key);
}

/* A strategy line: the strategy and its fits, unless already here. */
static const char *
import_strategy(struct importer *im, const json_t *o)
{
	static const char *const keys[] = { "id", "direction", "text", "risk", NULL };
	const json_t *moves = json_object_get(o, "moves"), *v;
	const char *dir = text(o, "direction"), *f;
	char *m;

	if (!json_is_array(moves) || !dir || !exists(im->db, im->has_dir, dir))
		return "strategy: needs moves (an array) and a known direction";
	if (!exists(im->db, im->has_strat, text(o, "id"))) {
		if (!opt.allow_new)
			return "strategy: not in this memory (a memory's strategies come from "
				"its seed; --allow-new takes new ones, marked as imported)";
		mark_imported(im, "strategy", text(o, "id"));
	}
	m = json_dumps(moves, JSON_COMPACT);
	sqlite3_bind_text(im->strategy, 5, m, -1, SQLITE_TRANSIENT);
	free(m);
	if (insert_texts(im->db, im->strategy, o, keys) < 0)
		return "strategy: needs id, direction, text and risk";
	json_object_foreach(json_object_get(o, "fits"), f, v) {
		if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1)
			return "strategy: fits: priors are numbers from 0 to 1";
		if (!exists(im->db, im->has_family, f) || !known_family(f))
			return "strategy: fits: unknown family";
		sqlite3_bind_text(im->fit, 1, text(o, "id"), -1, SQLITE_STATIC);
		sqlite3_bind_text(im->fit, 2, f, -1, SQLITE_STATIC);
		sqlite3_bind_double(im->fit, 3, json_number_value(v));
		htg_step(im->db, im->fit);
		sqlite3_reset(im->fit);
	}
	return NULL;
}

/* An edge line: its static part, unless the edge is here already. */
static const char *
import_edge(struct importer *im, const json_t *o)
{
	static const char *const keys[] = { "src", "dst", "helps", "why", "risk", NULL };
	double prior = real_or_nan(o, "prior");
	const char *dst = text(o, "dst");

	if (!(prior >= 0 && prior <= 1) || !dst || !exists(im->db, im->has_dir, dst))
		return "edge: needs a prior from 0 to 1 and a known dst direction";
	sqlite3_bind_double(im->edge, 6, prior);
	if (insert_texts(im->db, im->edge, o, keys) < 0)
		return "edge: needs src, dst, helps, why and risk";
	return NULL;
}

/* A transition line: recorded and folded into the statistics if new. */
static const char *
import_transition(struct importer *im, const json_t *o)
{
	struct htg_transition t = {
		.candidate = text(o, "candidate"), .run = text(o, "run"),
		.task = text(o, "task"), .family = text(o, "family"),
		.bound = text(o, "bound"),
		.step = (long)json_integer_value(json_object_get(o, "step")),
		.floor_fraction = real_or_nan(o, "floor_fraction"),
		.last_outcome = text(o, "last_outcome"),
		.prefix = { text(o, "p1"), text(o, "p2"), text(o, "p3") },
		.sprefix = { text(o, "s1"), text(o, "s2"), text(o, "s3") },
		.direction = text(o, "direction"), .strategy = text(o, "strategy"),
		.generator = text(o, "generator"), .outcome = text(o, "outcome"),
		.reason = text(o, "reason"), .baseline_us = real_or_nan(o, "baseline_us"),
		.time_us = real_or_nan(o, "time_us"), .gain = real_or_nan(o, "gain"),
		.created = text(o, "created"),
	};
	int i;

	if (!t.candidate || !t.run || !t.task || !t.family || !t.bound ||
	    !t.last_outcome || !t.direction || !t.outcome ||
	    !json_is_integer(json_object_get(o, "step")))
		return "transition: needs candidate, run, task, family, step, bound, "
			"last_outcome, direction and outcome";
	if (!known_family(t.family))
		return "transition: family: not a template family of this htam";
	if (!exists(im->db, im->has_dir, t.direction))
		return "transition: unknown direction";
	for (i = 0; i < HTG_PREFIX; i++)
		if (t.prefix[i] && strcmp(t.prefix[i], HTG_START) != 0 &&
		    !exists(im->db, im->has_dir, t.prefix[i]))
			return "transition: p1, p2, p3: unknown direction";
	if (t.strategy && !exists(im->db, im->has_strat, t.strategy))
		return "transition: unknown strategy";
	if (htg_record(im->rec, &t))
		im->added++;
	else
		im->known++;
	return NULL;
}

/* Merges one line; returns NULL or what is wrong with it (in err).
 * Static content already here stays as it is; statistics are never
 * copied, they follow from the transitions. The first line is the meta
 * line of the export. */
static const char *
import_line(struct importer *im, const json_t *o, long line, char *err, size_t errlen)
{
	static const char *const fam[] = { "id", NULL };
	static const char *const dir[] = { "id", "name", "text", NULL };
	static const struct { const char *kind; const struct field *schema; } kinds[] = {
		{ "meta", meta_line }, { "family", family_line },
		{ "direction", direction_line }, { "strategy", strategy_line },
		{ "edge", edge_line }, { "transition", transition_line },
	};
	const char *kind = text(o, "kind");
	json_int_t version = json_integer_value(json_object_get(o, "schema_version"));
	char e[400];
	size_t k;

	if (!kind)
		return "kind: missing, or not a string";
	for (k = 0; k < LEN(kinds) && strcmp(kind, kinds[k].kind); k++)
		;
	if (k == LEN(kinds))
		return "kind: unknown (meta, family, direction, strategy, edge or transition)";
	if ((line == 1) != (k == 0))
		return line == 1 ? "the first line must be the export's meta line "
			"({\"kind\": \"meta\", \"schema_version\": N})" : "a second meta line";
	if (record_check(o, kinds[k].schema, e, sizeof e) < 0) {
		snprintf(err, errlen, "%s: %s", kind, e);
		return err;
	}
	if (strcmp(kind, "meta") == 0)
		return version == HTG_SCHEMA_VERSION ? NULL :
			"exported from a memory of another schema version";
	if (strcmp(kind, "family") == 0) {
		if (!known_family(text(o, "id")))
			return "family: id: not a template family of this htam";
		return insert_texts(im->db, im->family, o, fam) < 0 ? "family: no id" : NULL;
	}
	if (strcmp(kind, "direction") == 0) {
		if (!exists(im->db, im->has_dir, text(o, "id"))) {
			if (!opt.allow_new)
				return "direction: not in this memory (a memory's directions "
					"come from its seed; --allow-new takes new ones, marked as "
					"imported)";
			mark_imported(im, "direction", text(o, "id"));
		}
		sqlite3_bind_int64(im->direction, 4, json_integer_value(json_object_get(o, "ord")));
		return insert_texts(im->db, im->direction, o, dir) < 0 ?
			"direction: needs id, name and text" : NULL;
	}
	if (strcmp(kind, "strategy") == 0)
		return import_strategy(im, o);
	if (strcmp(kind, "edge") == 0)
		return import_edge(im, o);
	if (strcmp(kind, "transition") == 0)
		return import_transition(im, o);
	return "unknown kind (meta, family, direction, strategy, edge or transition)";
}

/* Dies (65), rolling the import back, unless SQLite finds every page of
 * the memory sound: a damaged page is otherwise seen only by whatever
 * query happens to read it, long after the import said it was done. */
static void
intact(sqlite3 *db, const char *when)
{
	sqlite3_stmt *q = htg_prepare(db, "PRAGMA quick_check(1)");
	char *r = htg_step(db, q) == SQLITE_ROW && sqlite3_column_text(q, 0)
		? xstrdup((const char *)sqlite3_column_text(q, 0)) : xstrdup("no answer");
	sqlite3_finalize(q);
	for (char *p = r; *p; p++)
		if (*p == '\n')
			*p = ' ';
	if (strcmp(r, "ok") != 0) {
		htg_rollback(db);
		die(EXIT_DATAERR, "%s: the memory is damaged (%s: %.200s); nothing imported",
			htg_db_path(opt.db), when, r);
	}
	free(r);
}

/* Merges stdin into the memory in one transaction: all of it, or nothing
 * when a line is bad. */
static void
import(sqlite3 *db)
{
	struct importer im = { .db = db };
	struct jsonl *in = jsonl_open(stdin);
	const char *bad;
	char err[512];
	long lines = 0;
	json_t *o;

	im.family = htg_prepare(db, "INSERT OR IGNORE INTO families (id) VALUES (?1)");
	im.direction = htg_prepare(db, "INSERT OR IGNORE INTO directions (id, name, text, ord) "
		"VALUES (?1, ?2, ?3, (SELECT max(?4, coalesce(max(ord), 0) + 1) FROM directions))");
	im.strategy = htg_prepare(db, "INSERT OR IGNORE INTO strategies (id, direction, "
		"text, risk, moves) VALUES (?1, ?2, ?3, ?4, ?5)");
	im.fit = htg_prepare(db, "INSERT OR IGNORE INTO fits (strategy, family, prior) "
		"VALUES (?1, ?2, ?3)");
	im.edge = htg_prepare(db, "INSERT OR IGNORE INTO edges (src, dst, helps, why, "
		"risk, prior) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	im.has_family = htg_prepare(db, "SELECT 1 FROM families WHERE id = ?1");
	im.has_dir = htg_prepare(db, "SELECT 1 FROM directions WHERE id = ?1");
	im.has_strat = htg_prepare(db, "SELECT 1 FROM strategies WHERE id = ?1");
	im.mark = htg_prepare(db, "INSERT OR IGNORE INTO meta (key, value) VALUES (?1, 'imported')");
	im.rec = htg_recorder_new(db);
	htg_begin(db);
	intact(db, "before the import");
	while ((o = jsonl_next(in))) {
		lines++;
		if ((bad = import_line(&im, o, jsonl_line(in), err, sizeof err))) {
			json_decref(o);
			htg_rollback(db);
			die_line(EXIT_DATAERR, jsonl_line(in), "%s; nothing imported", bad);
		}
		json_decref(o);
	}
	if (lines == 0) {
		htg_rollback(db);
		die(EXIT_DATAERR, "no lines: an export starts with its meta line; nothing imported");
	}
	intact(db, "after the import");
	htg_commit(db);
	warnf("%ld transitions added, %ld there already", im.added, im.known);
	jsonl_close(in);
	htg_recorder_free(im.rec);
	sqlite3_finalize(im.family);
	sqlite3_finalize(im.direction);
	sqlite3_finalize(im.strategy);
	sqlite3_finalize(im.fit);
	sqlite3_finalize(im.edge);
	sqlite3_finalize(im.has_family);
	sqlite3_finalize(im.has_dir);
	sqlite3_finalize(im.has_strat);
	sqlite3_finalize(im.mark);
}

/* ---- dot ---- */

/* s as a DOT string literal (quotes and backslashes escaped). */
static void
put_quoted(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
	putchar('"');
}

/* "n=12 x1.23" for measured statistics, "" when nothing was measured. */
static void
stats_label(char *buf, size_t len, long n, long n_ok, double sum_log_gain)
{
	if (n == 0)
		buf[0] = '\0';
	else if (n_ok == 0)
		snprintf(buf, len, "n=%ld, none ok", n);
	else
		snprintf(buf, len, "n=%ld x%.2f", n, exp(sum_log_gain / (double)n_ok));
}

/* One cluster per direction: its node and its strategies. */
static void
dot_clusters(sqlite3 *db)
{
	sqlite3_stmt *d = htg_prepare(db, "SELECT d.id, d.name, sum(e.n), sum(e.n_ok), "
		"sum(e.sum_log_gain) FROM directions AS d LEFT JOIN edges AS e "
		"ON e.dst = d.id GROUP BY d.id ORDER BY d.ord");
	sqlite3_stmt *s = htg_prepare(db, "SELECT id, n, n_ok, sum_log_gain FROM "
		"strategies WHERE direction = ?1 ORDER BY rowid");
	char label[128], stats[64];

	while (htg_step(db, d) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(d, 0);
		snprintf(label, sizeof(label), "cluster_%s", id);
		printf("\tsubgraph ");
		put_quoted(label);
		printf(" {\n\t\tlabel = ");
		put_quoted((const char *)sqlite3_column_text(d, 1));
		printf(";\n\t\tstyle = rounded;\n\t\t");
		stats_label(stats, sizeof(stats), (long)sqlite3_column_int64(d, 2),
			(long)sqlite3_column_int64(d, 3), sqlite3_column_double(d, 4));
		snprintf(label, sizeof(label), "%s%s%s", sqlite3_column_text(d, 1),
			*stats ? "\n" : "", stats);
		put_quoted(id);
		printf(" [shape = ellipse, style = bold, label = ");
		put_quoted(label);
		printf("];\n");
		sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
		while (htg_step(db, s) == SQLITE_ROW) {
			const char *sid = (const char *)sqlite3_column_text(s, 0);
			stats_label(stats, sizeof(stats), (long)sqlite3_column_int64(s, 1),
				(long)sqlite3_column_int64(s, 2), sqlite3_column_double(s, 3));
			snprintf(label, sizeof(label), "%s%s%s", sid, *stats ? "\n" : "", stats);
			printf("\t\t");
			put_quoted(sid);
			printf(" [label = ");
			put_quoted(label);
			printf("];\n\t\t");
			put_quoted(id);
			printf(" -> ");
			put_quoted(sid);
			printf(" [style = dotted, arrowhead = none];\n");
		}
		sqlite3_reset(s);
		printf("\t}\n");
	}
	sqlite3_finalize(s);
	sqlite3_finalize(d);
}

/* Measured edges solid, coloured and as thick as their mean gain is far
 * from 1; static-only edges dashed, those with a prior of at least 0.6
 * (every one with --all). */
static void
dot_edges(sqlite3 *db)
{
	sqlite3_stmt *e = htg_prepare(db, "SELECT src, dst, prior, n, n_ok, "
		"sum_log_gain FROM edges WHERE n > 0 OR prior >= ?1 ORDER BY src, dst");
	char label[96];

	sqlite3_bind_double(e, 1, opt.all ? 0 : 0.6);
	while (htg_step(db, e) == SQLITE_ROW) {
		long n = (long)sqlite3_column_int64(e, 3), n_ok = (long)sqlite3_column_int64(e, 4);
		double gain = n_ok > 0 ? exp(sqlite3_column_double(e, 5) / (double)n_ok) : 0;
		printf("\t");
		put_quoted((const char *)sqlite3_column_text(e, 0));
		printf(" -> ");
		put_quoted((const char *)sqlite3_column_text(e, 1));
		if (n > 0) {
			double w = n_ok > 0 ? 1 + 4 * fmin(1, fabs(log2(gain))) : 1;
			stats_label(label, sizeof(label), n, n_ok, sqlite3_column_double(e, 5));
			printf(" [label = ");
			put_quoted(label);
			printf(", penwidth = %.2f, color = \"%s\"];\n", w,
				n_ok == 0 || gain < 1 ? "firebrick" : "forestgreen");
		} else {
			snprintf(label, sizeof(label), "prior %.2f", sqlite3_column_double(e, 2));
			printf(" [label = ");
			put_quoted(label);
			printf(", style = dashed, color = gray50, fontcolor = gray50];\n");
		}
	}
	sqlite3_finalize(e);
}

/* Writes the graph in DOT. */
static void
dot(sqlite3 *db)
{
	printf("digraph htg {\n"
		"\tgraph [rankdir = LR, fontname = \"Helvetica\", compound = true, "
		"label = \"HTAM memory: edges labelled n (transitions) x mean gain\"];\n"
		"\tnode [shape = box, fontname = \"Helvetica\", fontsize = 10];\n"
		"\tedge [fontname = \"Helvetica\", fontsize = 9];\n"
		"\t\"start\" [shape = circle];\n");
	dot_clusters(db);
	dot_edges(db);
	printf("}\n");
	if (fflush(stdout) != 0)
		die(EXIT_FAIL, "writing:");
}

int
main(int argc, char **argv)
{
	const char *verb, *arg;
	sqlite3 *db;
	int ch, next;

	setprogname(argv[0]);
	while ((ch = opt_next(argc, argv, &cmdline, &arg, &next)) != -1) {
		switch (ch) {
		case O_DB: opt.db = arg; break;
		case O_ALL: opt.all = 1; break;
		case O_ALLOW_NEW: opt.allow_new = 1; break;
		}
	}
	if (next != argc - 1)
		opt_usage(&cmdline);
	verb = argv[next];
	if (strcmp(verb, "export") && strcmp(verb, "import") && strcmp(verb, "dot"))
		opt_usage(&cmdline);
	db = htg_open(htg_db_path(opt.db));
	if (strcmp(verb, "export") == 0)
		export(db);
	else if (strcmp(verb, "import") == 0)
		import(db);
	else
		dot(db);
	htg_close(db);
	return EXIT_OK;
}
