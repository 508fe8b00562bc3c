/* record.c: the schemas of records and their checker (record.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "util.h"

const char *const outcome_names[OUT_COUNT + 1] = {
	[OUT_OK] = "ok", [OUT_INCORRECT] = "incorrect",
	[OUT_COMPILE_ERROR] = "compile_error", [OUT_GEN_ERROR] = "gen_error",
	[OUT_TIMEOUT] = "timeout", [OUT_CRASH] = "crash",
	[OUT_REJECTED] = "rejected", [OUT_COUNT] = NULL
};

int
outcome_parse(const char *s, enum outcome *o)
{
	for (int i = 0; s && i < OUT_COUNT; i++)
		if (strcmp(s, outcome_names[i]) == 0) {
			*o = (enum outcome)i;
			return 0;
		}
	return -1;
}

const char *
record_run(const json_t *rec)
{
	const char *s = json_string_value(json_object_get(rec, "run"));

	return s ? s : "";
}

const char *
record_task_id(const json_t *rec)
{
	const char *s = json_string_value(json_object_get(json_object_get(rec, "task"), "id"));

	return s ? s : "";
}

int64_t
record_step(const json_t *rec)
{
	return json_integer_value(json_object_get(rec, "step"));
}

static const char *const bounds[] = { "memory", "compute", "latency", NULL };

/* A knob's value: an integer or a short word (kcompile's rule). */
static const struct field knob[] = { { "", K_EXPR, 0, NULL, 0, 0, NULL }, { NULL } };
static const struct field text[] = { { "", K_STR, 0, NULL, 0, 0, NULL }, { NULL } };
static const struct field number[] = { { "", K_NUM, 0, NULL, 0, 0, NULL }, { NULL } };

static const struct field time_us[] = {
	{ "median", K_NUM, F_REQ | F_POS, NULL, 0, 0, NULL },
	{ "min", K_NUM, F_POS, NULL, 0, 0, NULL },
	{ "max", K_NUM, F_POS, NULL, 0, 0, NULL },
	{ "reps", K_INT, 0, NULL, 1, 1e9, NULL },
	{ NULL }
};

static const struct field bench[] = {
	{ "status", K_STR, F_REQ | F_OUTCOME, NULL, 0, 0, NULL },
	{ "reason", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "time_us", K_OBJ, 0, time_us, 0, 0, NULL },
	{ "ref_time_us", K_NUM, F_POS, NULL, 0, 0, NULL },
	{ "speedup", K_NUM, F_POS, NULL, 0, 0, NULL },
	{ "floor_us", K_NUM, 0, NULL, 0, 1e300, NULL },
	{ "floor_fraction", K_NUM, 0, NULL, 0, 1e300, NULL },
	{ "first_mismatch", K_OBJ, F_NULL, NULL, 0, 0, NULL },
	{ NULL }
};

static const struct field compile[] = {
	{ "ok", K_BOOL, 0, NULL, 0, 0, NULL },
	{ "status", K_STR, 0, NULL, 0, 0, NULL },
	{ "reason", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "log", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "cubin", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ NULL }
};

static const struct field candidate[] = {
	{ "id", K_STR, 0, NULL, 0, 0, NULL },
	{ "status", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "reason", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "source", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "defines", K_MAP, F_NULL, knob, 0, 0, NULL },
	{ "launch", K_OBJ, F_NULL, NULL, 0, 0, NULL },
	{ "generator", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "strategy", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "parent", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "family", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "variant", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ NULL }
};

/* The best kernel so far: a candidate that was benchmarked ok. */
static const struct field best_candidate[] = {
	{ "id", K_STR, F_REQ, NULL, 0, 0, NULL },
	{ "source", K_STR, 0, NULL, 0, 0, NULL },
	{ "defines", K_MAP, F_NULL, knob, 0, 0, NULL },
	{ "launch", K_OBJ, 0, NULL, 0, 0, NULL },
	{ "generator", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "strategy", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "parent", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "family", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "variant", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ NULL }
};

static const struct field best[] = {
	{ "candidate", K_OBJ, F_REQ, best_candidate, 0, 0, NULL },
	{ "compile", K_OBJ, F_NULL, NULL, 0, 0, NULL },
	{ "bench", K_OBJ, 0, bench, 0, 0, NULL },
	{ NULL }
};

static const struct field failure[] = {
	{ "strategy", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "status", K_STR, F_OUTCOME, NULL, 0, 0, NULL },
	{ "reason", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "first_mismatch", K_OBJ, F_NULL, NULL, 0, 0, NULL },
	{ "log", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ NULL }
};
static const struct field failures[] = { { "", K_OBJ, 0, failure, 0, 0, NULL }, { NULL } };

static const struct field step[] = {
	{ "step", K_INT, F_REQ, NULL, 0, 1e6, NULL },
	{ "direction", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "strategy", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "outcome", K_STR, F_NULL | F_OUTCOME, NULL, 0, 0, NULL },
	{ "gain", K_NUM, F_NULL | F_POS, NULL, 0, 0, NULL },
	{ "failures", K_ARR, 0, failures, 0, 0, NULL },
	{ NULL }
};
static const struct field steps[] = { { "", K_OBJ, 0, step, 0, 0, NULL }, { NULL } };

static const struct field features[] = {
	{ "family", K_STR, 0, NULL, 0, 0, NULL },
	{ "bound", K_STR, 0, NULL, 0, 0, bounds },
	{ "floor_fraction", K_NUM, 0, NULL, 0, 1e300, NULL },
	{ "last_outcome", K_STR, F_NULL | F_OUTCOME, NULL, 0, 0, NULL },
	{ NULL }
};

const struct field record_state[] = {
	{ "run", K_STR, F_REQ, NULL, 0, 0, NULL },
	{ "step", K_INT, F_REQ, NULL, 0, 1e6, NULL },
	{ "best", K_OBJ, F_NULL, best, 0, 0, NULL },
	{ "history", K_ARR, 0, steps, 0, 0, NULL },
	{ "features", K_OBJ, 0, features, 0, 0, NULL },
	{ "seen", K_ARR, 0, text, 0, 0, NULL },
	{ NULL }
};

static const struct field direction[] = {
	{ "id", K_STR, F_REQ, NULL, 0, 0, NULL },
	{ "name", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "score", K_NUM, 0, NULL, 0, 0, NULL },
	{ NULL }
};

const struct field record_direction[] = {
	{ "direction", K_OBJ, F_REQ, direction, 0, 0, NULL },
	{ NULL }
};

static const struct field move[] = {
	{ "family", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "variant", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "set", K_MAP, 0, knob, 0, 0, NULL },
	{ "mul", K_MAP, 0, number, 0, 0, NULL },
	{ "add", K_MAP, 0, number, 0, 0, NULL },
	{ NULL }
};
static const struct field moves[] = { { "", K_OBJ, 0, move, 0, 0, NULL }, { NULL } };

static const struct field strategy[] = {
	{ "id", K_STR, F_REQ, NULL, 0, 0, NULL },
	{ "text", K_STR, F_NULL, NULL, 0, 0, NULL },
	{ "moves", K_ARR, 0, moves, 0, 0, NULL },
	{ NULL }
};
static const struct field strategies[] = { { "", K_OBJ, 0, strategy, 0, 0, NULL }, { NULL } };
static const struct field anyobj[] = { { "", K_OBJ, 0, NULL, 0, 0, NULL }, { NULL } };

static const struct field memory[] = {
	{ "strategies", K_ARR, 0, strategies, 0, 0, NULL },
	{ "experiences", K_ARR, 0, anyobj, 0, 0, NULL },
	{ "risks", K_ARR, 0, NULL, 0, 0, NULL },
	{ NULL }
};

const struct field record_memory[] = {
	{ "memory", K_OBJ, 0, memory, 0, 0, NULL },
	{ NULL }
};

const struct field record_candidate[] = {
	{ "candidate", K_OBJ, 0, candidate, 0, 0, NULL },
	{ "compile", K_OBJ, 0, compile, 0, 0, NULL },
	{ "bench", K_OBJ, 0, bench, 0, 0, NULL },
	{ NULL }
};

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static int check_value(const json_t *v, const struct field *f, const char *path,
	char *err, size_t errlen);

/* Checks a value against a number field's bounds. */
static int
check_number(double x, const struct field *f, const char *path, char *err, size_t errlen)
{
	int bounded = f->min != 0 || f->max != 0;

	if (!isfinite(x))
		return errf(err, errlen, "%s: expected a finite number", path);
	if (f->flags & F_POS && !(x > f->min))
		return errf(err, errlen, "%s: expected a number > %g, got %g", path, f->min, x);
	if (bounded && (x < f->min || x > f->max))
		return errf(err, errlen, "%s: %g is outside %g to %g", path, x, f->min, f->max);
	return 0;
}

static int
check_value(const json_t *v, const struct field *f, const char *path, char *err,
	size_t errlen)
{
	char sub[512];
	const char *k;
	const json_t *x;
	size_t i;

	if (json_is_null(v)) {
		if (f->flags & F_NULL || f->kind == K_ANY)
			return 0;
		return errf(err, errlen, "%s: must not be null", path);
	}
	switch (f->kind) {
	case K_ANY:
		return 0;
	case K_STR:
		if (!json_is_string(v))
			return errf(err, errlen, "%s: expected a string, got %s", path, type_name(v));
		if (f->max > 0 && json_string_length(v) > (size_t)f->max)
			return errf(err, errlen, "%s: longer than %.0f bytes", path, f->max);
		if (f->flags & F_OUTCOME) {
			enum outcome o;
			if (outcome_parse(json_string_value(v), &o) < 0)
				return errf(err, errlen, "%s: \"%.40s\" is not an outcome (ok, incorrect, "
					"compile_error, gen_error, timeout, crash, rejected)", path,
					json_string_value(v));
		}
		if (f->oneof) {
			for (i = 0; f->oneof[i]; i++)
				if (!strcmp(f->oneof[i], json_string_value(v)))
					return 0;
			return errf(err, errlen, "%s: \"%.40s\" is not one of the allowed values",
				path, json_string_value(v));
		}
		return 0;
	case K_INT:
		if (!json_is_integer(v))
			return errf(err, errlen, "%s: expected an integer, got %s", path, type_name(v));
		return check_number((double)json_integer_value(v), f, path, err, errlen);
	case K_NUM:
		if (!json_is_number(v))
			return errf(err, errlen, "%s: expected a number, got %s", path, type_name(v));
		return check_number(json_number_value(v), f, path, err, errlen);
	case K_BOOL:
		if (!json_is_boolean(v))
			return errf(err, errlen, "%s: expected true or false, got %s", path, type_name(v));
		return 0;
	case K_EXPR:
		if (!json_is_integer(v) && !json_is_string(v))
			return errf(err, errlen, "%s: expected an integer or a string, got %s",
				path, type_name(v));
		return 0;
	case K_OBJ:
		if (!json_is_object(v))
			return errf(err, errlen, "%s: expected an object, got %s", path, type_name(v));
		return f->sub ? record_check_at(v, f->sub, path, err, errlen) : 0;
	case K_ARR:
		if (!json_is_array(v))
			return errf(err, errlen, "%s: expected an array, got %s", path, type_name(v));
		if (!f->sub)
			return 0;
		json_array_foreach(v, i, x) {
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			if (check_value(x, &f->sub[0], sub, err, errlen) < 0)
				return -1;
		}
		return 0;
	case K_MAP:
		if (!json_is_object(v))
			return errf(err, errlen, "%s: expected an object, got %s", path, type_name(v));
		json_object_foreach((json_t *)v, k, x) {
			snprintf(sub, sizeof sub, "%s.%s", path, k);
			if (check_value(x, &f->sub[0], sub, err, errlen) < 0)
				return -1;
		}
		return 0;
	}
	return 0;
}

int
record_check_at(const json_t *obj, const struct field *fields, const char *prefix,
	char *err, size_t errlen)
{
	char path[512];

	for (const struct field *f = fields; f->name; f++) {
		const json_t *v = json_object_get(obj, f->name);
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", f->name);
		if (!v) {
			if (f->flags & F_REQ)
				return errf(err, errlen, "%s: missing", path);
			continue;
		}
		if (check_value(v, f, path, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int
record_check(const json_t *obj, const struct field *fields, char *err, size_t errlen)
{
	return record_check_at(obj, fields, "", err, errlen);
}
