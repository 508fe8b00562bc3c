/* rules_backend.c: kgen's rules backend (kgen.h's interface) over
 * rules_generate: templates from rules_templates_dir(NULL), the state's
 * optional "seen" member as seen, the notes on stderr with -v, and one
 * gen_error candidate, with the reason, for a state it cannot serve or
 * when nothing new is left. */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "die.h"
#include "expr.h"
#include "jsonl.h"
#include "plan.h"
#include "task.h"
#include "util.h"
#include "rules.h"
#include "kgen.h"

/* ---- kgen's backend interface (kgen.h), over rules_generate ---- */

struct rules_ctx {
	int k;
	int verbose;
	char *dir;
};

static void *
rules_open(const struct kgen_opts *opts)
{
	struct rules_ctx *r = xcalloc(1, sizeof(*r));

	r->k = opts->k;
	r->verbose = opts->verbose;
	r->dir = rules_templates_dir(NULL);
	if (access(r->dir, R_OK) != 0)
		die(EXIT_FAIL, "no template families in %s (set HTAM_TEMPLATES)", r->dir);
	return r;
}

/* Writes at most r->k candidates for state: what rules_generate gives,
 * or one gen_error saying why there is nothing new. The state's optional
 * "seen" member lists candidate ids already measured for its task. */
static int
rules_generate_k(void *ctx, const json_t *state, long line, json_t **cands)
{
	struct rules_ctx *r = ctx;
	json_t *got, *notes = NULL, *n;
	char err[RULES_ERR];
	size_t i;
	int count = 0;

	/* A spec member of the wrong type is a malformed task, not a kernel
	 * the family cannot make. */
	const char *fname = json_string_value(json_object_get(json_object_get(state,
		"task"), "family"));
	json_t *family = fname ? rules_family_load(r->dir, fname, err, sizeof(err)) : NULL;
	if (family && rules_spec_types(family, json_object_get(state, "task"), err,
	    sizeof(err)) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	json_decref(family);
	got = rules_generate(state, r->k, json_object_get(state, "seen"), r->dir,
		&notes, err, sizeof(err));
	if (r->verbose)
		json_array_foreach(notes, i, n)
			warn_line(line, "%s", json_string_value(n));
	json_array_foreach(got, i, n)
		cands[count++] = json_incref(n);
	if (count == 0) {
		if (got)
			snprintf(err, sizeof(err), "no configuration left that is new "
				"and valid (%zu moves refused)", json_array_size(notes));
		cands[count++] = json_pack("{s:s, s:o, s:s, s:n}", "status",
			"gen_error", "reason", json_text(err), "generator", "rules", "strategy");
	}
	json_decref(got);
	json_decref(notes);
	return count;
}

static void
rules_close(void *ctx)
{
	struct rules_ctx *r = ctx;

	free(r->dir);
	free(r);
}

const struct backend rules_backend = {
	"rules", rules_open, rules_generate_k, rules_close,
};
