/* kgen.h: what kgen's parts share: the options, the backend interface
 * (one struct of functions per generator: rules, llm, replay), and the
 * helpers that build prompts, read answers and keep transcripts.
 *
 * JSON ownership is jansson's, as everywhere in htam (lib/jsonl.h): a
 * function returning json_t * hands over a new reference; arguments are
 * borrowed unless a comment says the reference is stolen. */
#ifndef KGEN_H
#define KGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define KGEN_MAX_K 64
#define KGEN_REASON_MAX 1024

struct kgen_opts {
	const char *backend;     /* "rules", "llm" or "replay" */
	int k;                   /* candidates per state */
	double temperature;
	int64_t max_tokens;      /* 0: not sent */
	int64_t connect_timeout_ms;
	int64_t timeout_ms;      /* total, per request */
	int retries;             /* further attempts after the first */
	int64_t backoff_ms;      /* first retry's delay; doubles each time */
	int64_t max_wait_ms;     /* cap on one delay, Retry-After included */
	const char *transcripts; /* folder, or NULL */
	const char *prompts;     /* --prompts, or NULL */
	bool has_seed;
	int64_t seed;
	bool verbose;
};

/* A generator. open reads its configuration (dies with a message on a bad
 * one) and returns its context; generate writes at most opts->k candidate
 * objects for one state into cands (new references) and returns how many,
 * each either a kernel (source, defines, launch) or status "gen_error"
 * with a reason, and with generator and strategy set; kgen.c adds id and
 * parent (keeping a parent the backend set) and writes the records. */
struct backend {
	const char *name;
	void *(*open)(const struct kgen_opts *opts);
	int (*generate)(void *ctx, const json_t *state, long line,
		json_t **cands);
	void (*close)(void *ctx);
};

/* rules_backend.c (templates), llm.c, replay.c. */
extern const struct backend rules_backend, llm_backend, replay_backend;

/* llm.c: adds what an llm candidate carries besides its kernel:
 * generator "llm:MODEL", the strategy its prompt emphasised, usage
 * (borrowed; NULL for none), latency and attempts. Returns c. The replay
 * backend uses it too, so a replayed candidate is the recorded one. */
json_t *llm_candidate(json_t *c, const char *model, const json_t *state,
	int index, const json_t *usage, int64_t latency_ms, int attempts);

/* prompt.c: the prompt templates (tools/kgen/prompts/) and their
 * rendering for one state and candidate. */
struct prompts {
	char *system;
	char *user;
	char *origin; /* the folder they came from, or "built-in" */
};

/* Finds and loads the templates: dir (--prompts) if not NULL, else
 * $HTAM_PROMPTS, else ../tools/kgen/prompts beside the executable, else
 * the copy built into kgen. Dies (exit 2) on a missing file or an unknown
 * placeholder. */
void prompts_load(struct prompts *p, const char *dir);
void prompts_free(struct prompts *p);

/* The chat messages for candidate index of k for state: a new array of
 * {"role", "content"} objects. */
json_t *prompt_messages(const struct prompts *p, const json_t *state,
	int index, int k);

/* The strategy candidate index of a state emphasises: a new reference to
 * the id of memory.strategies[index % n], or json_null(). */
json_t *prompt_strategy(const json_t *state, int index);

/* answer.c: a model's answer read into a candidate. */

/* Parses answer (the model's text) against task: finds the ```cuda block
 * and the ```json launch plan, checks the kernels, args and sizes. Returns
 * a new candidate object with source, defines and launch (and notes, when
 * the answer needed a choice), or one with status "gen_error" and reason.
 * finish_reason (may be NULL) explains an answer that was cut off. */
json_t *answer_candidate(const char *answer, const char *finish_reason,
	const json_t *task);

/* A new gen_error candidate with the reason. */
json_t *gen_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* transcript.c: what a request and its answer were, kept on disk. */

/* The file name (no folder) of one attempt of one candidate of a state:
 * RUN-TASK-sSTEP-cINDEX-aATTEMPT.json, with unsafe characters as '_'. */
char *transcript_name(const json_t *state, int index, int attempt);

/* Writes rec (borrowed) as DIR/name atomically, creating DIR. Dies
 * (exit 1) when it cannot. */
void transcript_write(const char *dir, const char *name, const json_t *rec);

/* SHA-256 of the canonical JSON of a messages array: what replay matches. */
void prompt_sha256(const json_t *messages, char hex[65]);

/* The state's run, task id and step: record_run, record_task_id and
 * record_step of lib/record.h. */

#endif
