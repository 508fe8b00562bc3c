/* jsonl.h: JSON lines in and out, over jansson.
 *
 * Ownership (the one rule for JSON values in htam, as in jansson): a
 * function that returns json_t * hands the caller a new reference, which
 * the caller must json_decref; a function that takes json_t * borrows it,
 * unless its comment says it steals the reference.
 *
 * One record is one line: a JSON object, of at most JSONL_LINE_MAX bytes
 * (records carry sources and cubins); a trailing CR is dropped; the last
 * line may lack its newline. A blank line, broken JSON or a value that is
 * not an object is an error that names the line and column. */
#ifndef HTAM_JSONL_H
#define HTAM_JSONL_H

#include <stdio.h>
#include <jansson.h>

/* The longest line a reader takes: records carry sources and cubins,
 * well under this; a longer line is refused before it fills the memory
 * (a stage copies a record once per candidate it writes). */
#define JSONL_LINE_MAX (16 << 20)

struct jsonl;

/* Starts reading f (borrowed; not closed by jsonl_close). */
struct jsonl *jsonl_open(FILE *f);
void jsonl_close(struct jsonl *r);

/* Reads the next record. Returns 1 with *rec set (new reference), 0 at the
 * end of input, or -1 with err holding "line N, column C: what" (or
 * "line N: what") when the line is not a JSON object. */
int jsonl_read(struct jsonl *r, json_t **rec, char *err, size_t errlen);

/* As jsonl_read, but a bad line is fatal: the tool prints its name and the
 * error and exits 65. Returns NULL at the end of input. */
json_t *jsonl_next(struct jsonl *r);

/* The line number of the record read last (1-based). */
long jsonl_line(const struct jsonl *r);

/* Writes rec (borrowed) as one line to f and flushes it, so a consumer
 * sees each record as soon as it is done. Returns 0, or -1 with errno set
 * (a closed pipe, a full disk). */
int jsonl_write(FILE *f, const json_t *rec);
/* As jsonl_write, but a write error is fatal (exit 1). */
void jsonl_put(FILE *f, const json_t *rec);

/* A JSON string of s (borrowed) that is always valid: text from outside
 * (a compiler's log, a kernel's print, a server's answer, a message that
 * quotes input and was cut at a buffer's end) is made valid UTF-8 first
 * (utf8_clean). NULL gives JSON null. Never returns NULL. */
json_t *json_text(const char *s);

/* The first member of obj not named in known (NULL-terminated), or NULL
 * when there is none: for catching misspelt fields. */
const char *json_unknown_member(const json_t *obj, const char *const known[]);
/* The index of the first string equal to s in array arr; SIZE_MAX where
 * none is. */
size_t json_array_find_string(const json_t *arr, const char *s);

#endif
