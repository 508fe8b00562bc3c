/* record.h: the members of records (docs/records.md) as schemas, checked
 * in one pass, and the outcomes of a candidate as an enum.
 *
 * A stage checks the parts of a record it reads before it reads them, so
 * that a member of the wrong type is an error that names it ("tool: line
 * 3: best.bench.time_us.median: expected a number > 0, got a string"),
 * never a default silently taken. Members a schema does not name are not
 * checked: a record carries whatever earlier stages wrote. */
#ifndef HTAM_RECORD_H
#define HTAM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* What a candidate came to, from generation to the bench (docs/memory.md). */
enum outcome {
	OUT_OK, OUT_INCORRECT, OUT_COMPILE_ERROR, OUT_GEN_ERROR, OUT_TIMEOUT,
	OUT_CRASH, OUT_REJECTED, OUT_COUNT
};

/* "ok", "incorrect", ... ; NULL-terminated, indexed by enum outcome. */
extern const char *const outcome_names[OUT_COUNT + 1];
/* The outcome named s. Returns 0, or -1 for NULL or any other string. */
int outcome_parse(const char *s, enum outcome *o);

/* A record's run, its task's id ("" when missing: a stage that checked
 * the record with record_state knows they are there) and its step. */
const char *record_run(const json_t *rec);
const char *record_task_id(const json_t *rec);
int64_t record_step(const json_t *rec);

/* A member's type. K_EXPR is a size expression (an integer, or a string
 * lib/expr.h evaluates); K_MAP is an object whose members all match sub. */
enum kind { K_ANY, K_STR, K_INT, K_NUM, K_BOOL, K_EXPR, K_OBJ, K_ARR, K_MAP };

/* Flags of a field. */
enum {
	F_REQ = 1,     /* must be there */
	F_NULL = 2,    /* may be null */
	F_OUTCOME = 4, /* a string: one of outcome_names */
	F_POS = 8      /* a number > min (min itself excluded) */
};

struct field {
	const char *name;          /* NULL ends a list */
	enum kind kind;
	unsigned flags;
	const struct field *sub;   /* K_OBJ: its fields; K_ARR, K_MAP: one, the element's */
	double min, max;           /* K_INT, K_NUM: bounds (both 0: none); K_STR: max bytes */
	const char *const *oneof;  /* K_STR: the allowed values, NULL-terminated */
};

/* The schemas of the parts of a state and of a candidate record. */
extern const struct field record_state[];     /* run, step, best, history, features, seen */
extern const struct field record_direction[]; /* direction */
extern const struct field record_memory[];    /* memory */
extern const struct field record_candidate[]; /* candidate, compile, bench */

/* Checks the members of obj that fields name (recursively). Returns 0, or
 * -1 with err holding "PATH: expected ..., got ...". */
int record_check(const json_t *obj, const struct field *fields, char *err,
	size_t errlen);
/* The same, with every path under prefix ("task", "best.bench"). */
int record_check_at(const json_t *obj, const struct field *fields,
	const char *prefix, char *err, size_t errlen);

#endif
