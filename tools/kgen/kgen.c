/* kgen: the generator stage. Reads state records (after htg-select and
 * htg-retrieve) and writes K candidate records per state, each the state
 * plus a candidate kernel, made by one of the backends: rules (templates),
 * llm (a chat-completions endpoint) or replay (recorded llm answers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "die.h"
#include "jsonl.h"
#include "opt.h"
#include "record.h"
#include "task.h"
#include "util.h"
#include "kgen.h"

enum { O_TEMP = 256, O_MAXTOK, O_CONNECT, O_TIMEOUT, O_RETRIES, O_BACKOFF, O_MAXWAIT,
	O_SEED, O_TRANSCRIPTS, O_PROMPTS };

static const struct opt options[] = {
	{ 'b', 'b', "backend", "NAME", "rules (the default: templates), llm (a chat-completions\n"
		"endpoint) or replay (the answers an llm run recorded)" },
	{ 'k', 'k', "candidates", "K", "candidates per state (default 4)" },
	{ O_TEMP, 0, "temperature", "T", "sampling temperature, 0 to 2 (default 0.7)" },
	{ O_MAXTOK, 0, "max-tokens", "N", "longest answer, in tokens; 0 sends no limit (default 8192)" },
	{ O_CONNECT, 0, "connect-timeout", "S", "seconds to connect (default 10)" },
	{ O_TIMEOUT, 0, "timeout", "S", "seconds for one request, in all (default 600)" },
	{ O_RETRIES, 0, "retries", "N", "attempts after the first on 408, 429, 5xx, timeouts and\n"
		"dropped connections (default 4)" },
	{ O_BACKOFF, 0, "backoff", "S", "the first retry's delay, doubled for each next (default 1)" },
	{ O_MAXWAIT, 0, "max-wait", "S", "the longest delay before a retry, Retry-After included\n"
		"(default 60)" },
	{ O_SEED, 0, "seed", "N", "sent as the request's seed, N + i for candidate i" },
	{ O_TRANSCRIPTS, 0, "transcripts", "DIR", "keep each prompt and answer in DIR (replay reads them)" },
	{ O_PROMPTS, 0, "prompts", "DIR", "the prompt templates (default: $HTAM_PROMPTS, else\n"
		"the prompts beside kgen, else built in)" },
	{ 'v', 'v', "verbose", NULL, "progress and retries on stderr" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [options] < states > candidates\n", NULL, options,
	"environment: HTAM_LLM_URL (the base URL, with /v1 where the server has it),\n"
	"HTAM_LLM_MODEL, HTAM_LLM_KEY (else OPENAI_API_KEY)\n"
};

/* Fills o from the command line; prints the help and exits 0 for --help,
 * exits 2 on bad usage. */
static void
parse_options(int argc, char **argv, struct kgen_opts *o)
{
	const char *arg;
	int c, next;

	*o = (struct kgen_opts){
		.backend = "rules", .k = 4, .temperature = 0.7,
		.max_tokens = 8192, .connect_timeout_ms = 10000,
		.timeout_ms = 600000, .retries = 4, .backoff_ms = 1000,
		.max_wait_ms = 60000,
	};
	while ((c = opt_next(argc, argv, &cmdline, &arg, &next)) != -1) {
		switch (c) {
		case 'b': o->backend = arg; break;
		case 'k': o->k = (int)opt_int("--candidates", arg, 1, KGEN_MAX_K); break;
		case O_TEMP: o->temperature = opt_num("--temperature", arg, 0, 2); break;
		case O_MAXTOK: o->max_tokens = (int)opt_int("--max-tokens", arg, 0, 1 << 24); break;
		case O_CONNECT: o->connect_timeout_ms = opt_ms("--connect-timeout", arg, 0.001, 3600); break;
		case O_TIMEOUT: o->timeout_ms = opt_ms("--timeout", arg, 0.001, 86400); break;
		case O_RETRIES: o->retries = (int)opt_int("--retries", arg, 0, 100); break;
		case O_BACKOFF: o->backoff_ms = opt_ms("--backoff", arg, 0, 3600); break;
		case O_MAXWAIT: o->max_wait_ms = opt_ms("--max-wait", arg, 0, 86400); break;
		case O_SEED:
			o->seed = opt_int("--seed", arg, 0, INT32_MAX);
			o->has_seed = true;
			break;
		case O_TRANSCRIPTS: o->transcripts = arg; break;
		case O_PROMPTS: o->prompts = arg; break;
		case 'v': o->verbose = true; break;
		}
	}
	if (next != argc) {
		warnf("unexpected argument '%s' (states come on stdin)", argv[next]);
		opt_usage(&cmdline);
	}
}

/* The backend named name; dies (exit 2) for a name it does not know. */
static const struct backend *
backend_find(const char *name)
{
	static const struct backend *const backends[] = { &rules_backend,
		&llm_backend, &replay_backend };
	size_t i;

	for (i = 0; i < LEN(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	die(EXIT_USAGE, "--backend: unknown backend '%s' (rules, llm or "
		"replay)", name);
}

/* Checks that a state carries what every backend needs: a valid task, a
 * run and a step, and, where it has one, a seen list of candidate ids.
 * Dies (exit 65) naming the line otherwise. */
static void
state_check(const json_t *state, long line)
{
	char err[512];
	const json_t *task = json_object_get(state, "task");
	const json_t *step = json_object_get(state, "step");
	const json_t *seen = json_object_get(state, "seen"), *v;
	size_t i;

	if (!json_is_object(task))
		die_line(EXIT_DATAERR, line, "no task object (is this a state "
			"record from ktask or htg-update?)");
	if (task_validate(task, err, sizeof err) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	if (record_check(state, record_state, err, sizeof err) < 0 ||
	    record_check(state, record_memory, err, sizeof err) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	if (!json_is_string(json_object_get(state, "run")))
		die_line(EXIT_DATAERR, line, "run: not a string");
	if (!json_is_integer(step) || json_integer_value(step) < 0)
		die_line(EXIT_DATAERR, line, "step: not a whole number >= 0");
	if (seen && !json_is_array(seen))
		die_line(EXIT_DATAERR, line, "seen: not an array of candidate ids");
	json_array_foreach(seen, i, v)
		if (!json_is_string(v))
			die_line(EXIT_DATAERR, line, "seen[%zu]: not a candidate id (a string)", i);
}

/* Gives candidate index of state its id and parent and puts its members
 * in reading order. Steals c; returns the finished candidate.
 *
 * A kernel's id is the SHA-256 of {source, defines, launch}, so the same
 * kernel has the same id whoever made it. A gen_error has no kernel: its
 * id hashes where it failed (run, task, step, index) and why. */
static json_t *
candidate_finish(json_t *c, const json_t *state, int index)
{
	static const char *const order[] = { "status", "reason", "source",
		"defines", "launch", "generator", "strategy", "parent" };
	const json_t *best = json_object_get(state, "best");
	const json_t *parent = json_object_get(json_object_get(best, "candidate"), "id");
	json_t *key, *out;
	char id[65];
	size_t i;

	if (json_object_get(c, "status"))
		key = json_pack("{s:O, s:s, s:s, s:I, s:i}", "gen_error",
			json_object_get(c, "reason"), "run", record_run(state),
			"task", record_task_id(state), "step",
			(json_int_t)record_step(state), "index", index);
	else
		key = json_pack("{s:O, s:O, s:O}", "source",
			json_object_get(c, "source"), "defines",
			json_object_get(c, "defines"), "launch",
			json_object_get(c, "launch"));
	if (key == NULL)
		die(EXIT_FAIL, "candidate %d: missing members (a backend bug)", index);
	json_sha256_hex(key, id);
	json_decref(key);

	if (!json_object_get(c, "parent"))
		json_object_set_new(c, "parent", json_is_string(parent) ?
			json_copy((json_t *)parent) : json_null());
	out = json_pack("{s:s}", "id", id);
	for (i = 0; i < LEN(order); i++)
		if (json_object_get(c, order[i]))
			json_object_set(out, order[i], json_object_get(c, order[i]));
	json_object_update_missing(out, c);
	json_decref(c);
	return out;
}

/* Says once, on stderr, when no candidate of a state is usable: the
 * model (or the recording) gave nothing but errors k times in a row. */
static void
report_unusable(const json_t *state, long line, json_t **cands, int k)
{
	const char *reason, *gen;
	int i;

	if (k == 0)
		return;
	for (i = 0; i < k; i++)
		if (!json_object_get(cands[i], "status"))
			return;
	gen = json_string_value(json_object_get(cands[k - 1], "generator"));
	reason = json_string_value(json_object_get(cands[k - 1], "reason"));
	warn_line(line, "task \"%s\" step %lld: %s gave nothing usable for "
		"any of the %d candidates; the last: %s", record_task_id(state),
		(long long)record_step(state), gen ? gen : "the generator", k,
		reason ? reason : "(no reason)");
}

/* With -v: one line per state saying what came of it. */
static void
report_progress(const json_t *state, long line, json_t **cands, int k,
	double start_ms)
{
	json_int_t prompt = 0, completion = 0;
	int i, usable = 0;

	for (i = 0; i < k; i++) {
		const json_t *u = json_object_get(cands[i], "usage");
		usable += !json_object_get(cands[i], "status");
		prompt += json_integer_value(json_object_get(u, "prompt_tokens"));
		completion += json_integer_value(json_object_get(u, "completion_tokens"));
	}
	warn_line(line, "task \"%s\" step %lld: %d of %d candidates usable, "
		"%lld + %lld tokens, %.1f s", record_task_id(state),
		(long long)record_step(state), usable, k, (long long)prompt,
		(long long)completion, (now_ms() - start_ms) / 1000);
}

int
main(int argc, char **argv)
{
	struct kgen_opts opts;
	const struct backend *b;
	struct jsonl *in;
	json_t *state, *rec, *cands[KGEN_MAX_K];
	void *ctx;
	double start;
	long line;
	int i, n;

	setprogname(argv[0]);
	parse_options(argc, argv, &opts);
	b = backend_find(opts.backend);
	ctx = b->open(&opts);
	in = jsonl_open(stdin);
	while ((state = jsonl_next(in)) != NULL) {
		line = jsonl_line(in);
		state_check(state, line);
		start = now_ms();
		n = b->generate(ctx, state, line, cands);
		for (i = 0; i < n; i++)
			cands[i] = candidate_finish(cands[i], state, i);
		report_unusable(state, line, cands, n);
		if (opts.verbose)
			report_progress(state, line, cands, n, start);
		for (i = 0; i < n; i++) {
			rec = json_copy(state);
			json_object_set_new(rec, "candidate", cands[i]);
			jsonl_put(stdout, rec);
			json_decref(rec);
		}
		json_decref(state);
	}
	jsonl_close(in);
	b->close(ctx);
	return EXIT_OK;
}
