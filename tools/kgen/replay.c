/* replay.c: kgen's replay backend. It answers from the transcripts an llm
 * run kept (--transcripts DIR), with no network: it builds each prompt as
 * the llm backend would, looks its SHA-256 up among the recorded final
 * attempts, and reads the recorded answer (or error) into a candidate the
 * same way, so the same states give the same candidates, byte for byte.
 *
 * Matching: the recorded attempt of the same run, task, step and candidate
 * index with the same prompt comes first; otherwise the recordings of that
 * prompt are taken in file name order, each at most once per state. A
 * prompt with no recording becomes a gen_error candidate. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "record.h"
#include "util.h"
#include "kgen.h"

struct replay {
	const struct kgen_opts *o;
	struct prompts prompts;
	json_t *index; /* prompt SHA-256 -> array of recorded final attempts */
};

/* Does the file name end in ".json"? */
static int
is_json_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

/* Reads every transcript of dir into r->index. Dies (exit 2) if dir
 * cannot be read, and (exit 65) on a transcript that is not JSON. */
static void
load_transcripts(struct replay *r, const char *dir)
{
	struct dirent **names;
	json_error_t jerr;
	int n, i;

	if ((n = scandir(dir, &names, is_json_file, alphasort)) < 0)
		die(EXIT_USAGE, "--transcripts %s:", dir);
	r->index = json_object();
	for (i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]->d_name);
		json_t *t = json_load_file(path, 0, &jerr), *list;
		const char *sha = json_string_value(json_object_get(t, "prompt_sha256"));

		if (t == NULL)
			die(EXIT_DATAERR, "%s: line %d, column %d: %s", path,
				jerr.line, jerr.column, jerr.text);
		if (sha && json_is_true(json_object_get(t, "final"))) {
			/* The prompt is known by its hash; the request and
			 * raw response need not stay in memory. */
			json_object_del(t, "request");
			json_object_del(t, "response");
			if ((list = json_object_get(r->index, sha)) == NULL)
				json_object_set_new(r->index, sha, list = json_array());
			json_array_append(list, t);
		}
		json_decref(t);
		free(path);
		free(names[i]);
	}
	free(names);
}

static void *
replay_open(const struct kgen_opts *o)
{
	struct replay *r = xcalloc(1, sizeof *r);

	if (o->transcripts == NULL)
		die(EXIT_USAGE, "--backend replay needs --transcripts DIR, the "
			"folder an llm run kept its transcripts in");
	r->o = o;
	load_transcripts(r, o->transcripts);
	prompts_load(&r->prompts, o->prompts);
	return r;
}

/* Is t the recording of candidate index of state? */
static int
same_place(const json_t *t, const json_t *state, int index)
{
	const char *run = json_string_value(json_object_get(t, "run"));
	const char *task = json_string_value(json_object_get(t, "task"));

	return run && task && strcmp(run, record_run(state)) == 0 &&
		strcmp(task, record_task_id(state)) == 0 &&
		json_integer_value(json_object_get(t, "step")) == record_step(state) &&
		json_integer_value(json_object_get(t, "candidate")) == index;
}

/* The recording that answers candidate index's prompt (sha), not yet in
 * used (an array of the recordings this state took), or NULL. */
static const json_t *
pick(const struct replay *r, const char *sha, const json_t *state,
	int index, const json_t *used)
{
	const json_t *list = json_object_get(r->index, sha), *t, *u;
	size_t i, j;

	json_array_foreach(list, i, t)
		if (same_place(t, state, index))
			return t;
	json_array_foreach(list, i, t) {
		int taken = 0;
		json_array_foreach(used, j, u)
			taken |= u == t;
		if (!taken)
			return t;
	}
	return NULL;
}

static int
replay_generate(void *ctx, const json_t *state, long line, json_t **cands)
{
	struct replay *r = ctx;
	json_t *used = json_array(), *msgs, *c;
	const json_t *t;
	const char *answer, *model;
	char sha[65];
	int i;

	(void)line;
	for (i = 0; i < r->o->k; i++) {
		msgs = prompt_messages(&r->prompts, state, i, r->o->k);
		prompt_sha256(msgs, sha);
		json_decref(msgs);
		if ((t = pick(r, sha, state, i, used)) == NULL) {
			c = gen_error("replay: no recorded answer for this prompt "
				"(sha256 %.16s) in %s", sha, r->o->transcripts);
			json_object_set_new(c, "generator", json_string("replay"));
			json_object_set_new(c, "strategy", prompt_strategy(state, i));
			cands[i] = c;
			continue;
		}
		json_array_append(used, (json_t *)t);
		answer = json_string_value(json_object_get(t, "answer"));
		c = answer ? answer_candidate(answer, json_string_value(
				json_object_get(t, "finish_reason")),
				json_object_get(state, "task")) :
			gen_error("%s", json_string_value(json_object_get(t, "error")) ?
				json_string_value(json_object_get(t, "error")) :
				"the recording has neither an answer nor an error");
		model = json_string_value(json_object_get(t, "model"));
		cands[i] = llm_candidate(c, model ? model : "unknown", state, i,
			json_object_get(t, "usage"),
			json_integer_value(json_object_get(t, "latency_ms")),
			(int)json_integer_value(json_object_get(t, "attempt")));
	}
	json_decref(used);
	return r->o->k;
}

static void
replay_close(void *ctx)
{
	struct replay *r = ctx;

	prompts_free(&r->prompts);
	json_decref(r->index);
	free(r);
}

const struct backend replay_backend = {
	.name = "replay",
	.open = replay_open,
	.generate = replay_generate,
	.close = replay_close,
};
