/* rules.h: kgen's rules generator, the template generator. It turns a
 * state into candidate kernels by moving the knobs of a template family
 * (tools/kgen/templates/<family>.json, docs/templates.md). family.c loads
 * and checks families, render.c renders a configuration, rules.c moves
 * and fills; rules_backend.c is kgen's rules backend (kgen.h) over it.
 *
 * JSON ownership is jansson's, as everywhere in htam (lib/jsonl.h): a
 * function returning json_t * hands over a new reference; arguments are
 * borrowed. */
#ifndef KGEN_RULES_H
#define KGEN_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "plan.h"

/* Bytes of the generator's messages; renders tried per state while
 * filling up to k with neighbours. */
#define RULES_ERR 1024
#define RULES_MAX_TRIES 512

/* Writes up to k distinct candidates for one state record (borrowed): applies
 * the moves of the retrieved strategies (state.memory.strategies[*].moves,
 * best first) to the current kernel's knobs (state.best.candidate.defines and
 * .variant when best is a template instance of the task's family, else the
 * family's default configuration: the first of its starts that holds for the
 * task's shape, else its default variant), repairs or refuses invalid
 * combinations, skips configurations whose candidate id is in seen (an array
 * of ids, may be NULL) and duplicates. When the strategies give fewer than k,
 * fills with one-knob steps from the current configuration, then the other
 * variants, in a fixed order; when the current kernel is not a template
 * instance, the default configuration itself comes first. Returns a new array of candidate objects {id,
 * source, defines, launch, generator: "rules", strategy, parent, family,
 * variant} and sets *notes to a new array of strings (may be empty) saying
 * what was refused and why. Returns NULL with err set on a state it cannot
 * serve (no task, unknown family, a spec without the family's dimensions);
 * *notes is then NULL. templates_dir NULL means rules_templates_dir(NULL). */
json_t *rules_generate(const json_t *state, int k, const json_t *seen,
	const char *templates_dir, json_t **notes, char *err, size_t errlen);

/* Checks that each member of the task's spec that the family declares has
 * the declared type ("dim": an integer or a string). Returns 0, or -1
 * with err naming the member: "task.spec.expr: expected string, ...". */
int rules_spec_types(const json_t *family, const json_t *task, char *err,
	size_t errlen);

/* The folder of the family files: dir if not NULL, else $HTAM_TEMPLATES,
 * else tools/kgen/templates above the running executable's folder (bin/ or
 * build/NAME/bin/), else tools/kgen/templates under the working directory.
 * Returns a string the caller frees. */
char *rules_templates_dir(const char *dir);

/* The storage type's prelude, beside the family files: it comes before
 * every variant's source (real, real_f, real_of, realv; docs/templates.md). */
#define RULES_PRELUDE "real.cuh"

/* Loads and checks the family file dir/<family>.json with each variant's
 * source read in (as variants.V.source_text, after RULES_PRELUDE). Returns a new object, or NULL
 * with err naming the file and member. The folder is kept as _dir: the
 * families of a chain's later stages load from it. */
json_t *rules_family_load(const char *dir, const char *family, char *err,
	size_t errlen);

/* The family names that have a file in dir, sorted: a new array. */
json_t *rules_families(const char *dir);

/* The task's float storage type: the dtype its float tensors share (f32
 * when it has none). Returns 0, or -1 with err naming two tensors whose
 * float types differ. */
int rules_task_real(const json_t *task, enum dtype *dt, char *err, size_t errlen);

/* Whether variant of family (as loaded) serves task: it stores the task's
 * float type (the variant's reals, else the family's, else f32), its ops
 * list holds the task's spec.op, it takes the op's kind, and its when
 * expression is positive at the task's params. Returns 1, or 0 with err
 * saying why not. */
int rules_variant_applies(const json_t *family, const char *variant,
	const json_t *task, char *err, size_t errlen);

/* Evaluates when (a size expression: a variant's or a start's) for task and
 * variant at the task's params into *val. Returns 0, or -1 with err saying
 * why (a placeholder unknown, or the expression as filled in and what is
 * wrong with it). */
int rules_when(const char *when, const json_t *task, const char *variant,
	int64_t *val, char *err, size_t errlen);

/* Renders one configuration: variant with the knob values in knobs (knobs
 * of the variant not named there take their defaults) for task. Checks every
 * knob is in its domain, every constraint at every size set and the launch
 * plan with task_plan_check. Returns a new candidate object {id, source, defines,
 * launch, generator, family, variant}, or NULL with err saying why the
 * configuration is refused (a constraint's why, a plan error). A chain (the
 * task's "then") is rendered whole: rules_chain_render. */
json_t *rules_render(const json_t *family, const json_t *task,
	const char *variant, const json_t *knobs, char *err, size_t errlen);

/* rules_render for a task that is no chain, or for one stage of a chain
 * seen as a task of its own (task_stage). */
json_t *rules_render_one(const json_t *family, const json_t *task,
	const char *variant, const json_t *knobs, char *err, size_t errlen);

/* ---- chains (chain.c) ---- */

/* A chain's later stages (lib/task.h) checked as rules_spec_check checks
 * the first: each family loads (from the first's folder, _dir) and the
 * stage's spec is one it serves. Returns 0, or -1 with err naming the
 * stage. */
int rules_chain_check(const json_t *family, const json_t *task, char *err, size_t errlen);
/* rules_render of a chain: the first stage (family) at variant and knobs,
 * each later one at its family's starting configuration (rules_start);
 * one source and one launch plan (docs/templates.md, "Chains"). */
json_t *rules_chain_render(const json_t *family, const json_t *task,
	const char *variant, const json_t *knobs, char *err, size_t errlen);

/* The configuration a task of family starts from: the first of the
 * family's starts whose when is positive at the task's params and whose
 * configuration serves the task and renders (a start that holds but is
 * refused is noted in notes, an array, when not NULL), else the default
 * variant with its defaults, else the first variant that serves the task
 * and renders. NULL with err when no variant serves it. */
json_t *rules_start(const json_t *family, const json_t *task, json_t *notes,
	char *err, size_t errlen);

/* The configurations a test sweeps for task: for each variant that serves
 * it, its defaults, then each knob's every other value with the rest at
 * their defaults. Returns a new array of {variant, knobs} objects (some may
 * be refused by rules_render: a sweep shows which). */
json_t *rules_sweep(const json_t *family, const json_t *task);

/* ---- shared by family.c, render.c and rules.c ----
 *
 * A configuration is a JSON object {"variant": V, "knobs": {NAME: int}};
 * its knobs come in the order the family file lists them, which fixes the
 * order of everything generated. */

/* The variant named name of family, or NULL. */
const json_t *rules_variant(const json_t *family, const char *name);
/* Is value in knob's domain (its "values", or its bounds)? */
int rules_in_domain(const json_t *knob, json_int_t value);
/* The knob's domain as text, for messages (the caller frees it). */
char *rules_domain_text(const json_t *knob);
/* The knobs of variant var with the values of knobs where it gives one and
 * in the domain, else the defaults, in the family's order (a new object). */
json_t *rules_knobs_complete(const json_t *var, const json_t *knobs);
/* text with every {{name}} (letters, digits, _) filled in for task and
 * variant: the task's inputs and outputs, the variant, the members of its
 * spec (as numbers in a launch plan when in_plan). Other braces are left
 * alone ({{1, 2}} is an initializer). Returns a string the caller frees,
 * or NULL with err set. */
char *rules_substitute(const char *text, const json_t *task, const char *variant,
	int in_plan, char *err, size_t errlen);
/* A configuration {variant, knobs}; steals knobs. */
json_t *rules_config_new(const char *variant, json_t *knobs);
/* Checks the task's spec against the family's declaration (each member
 * there, of its kind, in its values; an "op" a name of the family's ops
 * or an op object). Returns 0, or -1 with err. */
int rules_spec_check(const json_t *family, const json_t *task, char *err, size_t errlen);
/* The task with each "op" member of its spec (checked) spelled out as the
 * family's source uses it: op_keep (0 a fold, 1 the maximum, -1 the
 * minimum), op_index, op_map, op_combine, op_identity, op_finalize. A new
 * reference: a copy when there was an op, else the task itself. */
json_t *rules_op_expand(const json_t *family, const json_t *task);
/* Checks variant var's constraints at every size set of the task, with
 * knobs. Returns 0, or -1 with err giving the constraint's why. */
int rules_constraints_check(const json_t *var, const json_t *task,
	const json_t *knobs, char *err, size_t errlen);

#endif
