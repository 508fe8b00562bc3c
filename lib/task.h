/* task.h: operator tasks (docs/tasks.md): a folder tasks/<id>/ holding
 * task.json and reference.cu, loaded into one self-contained task object
 * that records carry from stage to stage. */
#ifndef HTAM_TASK_H
#define HTAM_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Finds a task folder: name itself if it is a folder holding task.json,
 * else name in the first folder of task_roots() that has it. Returns a
 * string the caller frees, or NULL. */
char *task_find(const char *name);

/* Loads the task in folder dir: task.json, with reference.cu inlined as
 * reference.source, validated. Returns a new reference, or NULL with err
 * naming the file and field ("tasks/relu/task.json: inputs[0].dtype: ..."). */
json_t *task_load(const char *dir, char *err, size_t errlen);
/* The folders tasks are found in, ':'-separated: $HTAM_TASKS (a list),
 * else the pack beside the tools (data_dir: tasks/ of the checkout, or an
 * installed tree's). The caller frees it. */
char *task_roots(void);

/* Validates a task object (as loaded, or as found in a record). Returns 0
 * or -1 with err naming the task and the field that is wrong. */
int task_validate(const json_t *task, char *err, size_t errlen);

/* The family of a task that no template family serves (an imported
 * problem's, say): kgen's rules backend has nothing for it, the llm
 * backend does. */
#define TASK_NO_FAMILY "none"

/* A chain (docs/tasks.md, "Chains"): the task's family computes its first
 * stage into an intermediate buffer, and each entry of the task's "then"
 * ({family, spec, from: {shape, dtype}, inputs: [names]}) computes the next
 * stage from the one before, the last writing the task's outputs. At most
 * TASK_THEN_MAX entries. The first stage reads the task's "first_inputs"
 * where it has them, else the inputs no later stage names. */
#define TASK_THEN_MAX 4
/* The number of stages: 1 + the entries of "then". */
size_t task_stages(const json_t *task);
/* The name of the buffer stage s (0-based, below the last) writes and
 * stage s + 1 reads: "then_<s+1>". */
void task_stage_buffer(size_t s, char *buf, size_t len);
/* Stage s of a valid task as a task of its own: its family and spec, its
 * inputs (stage 0: the task's first_inputs, or without them the task's
 * inputs no later stage names, in the task's order; stage s > 0:
 * the buffer before it, then the inputs it names), its outputs (the next
 * stage's buffer, or the task's outputs at the last stage), and no
 * "then". A new reference; the task itself (a new reference) when it is no
 * chain. */
json_t *task_stage(const json_t *task, size_t s);

/* Is the task's reference an oracle (the problem's PyTorch module, run by
 * kbench's oracle process) rather than a CUDA kernel with a launch plan? */
int task_oracle(const json_t *task);

/* The input or output (list "inputs" or "outputs") of that name, or NULL. */
const json_t *task_tensor(const json_t *task, const char *list, const char *name);

/* Every set of sizes to check, params first, then check_params: a new
 * array of objects. The task must be valid. */
json_t *task_sizes(const json_t *task);

/* Element count of a tensor spec (an input or output) at the given sizes.
 * Returns 0 or -1 with err set. */
int task_tensor_count(const json_t *tensor, const json_t *sizes,
	int64_t *count, char *err, size_t errlen);

/* The task's bytes and flops at the given sizes. Returns 0 or -1. */
int task_cost(const json_t *task, const json_t *sizes, int64_t *bytes,
	int64_t *flops, char *err, size_t errlen);

/* The ceilings of an H200 that the pack's floors use: device copy
 * bandwidth counting bytes read and written, and the fp32 vendor rate.
 * kbench measures its own device; these serve where no device is. */
#define H200_COPY_BYTES_PER_S 4.239e12
#define H200_FP32_FLOPS_PER_S 67e12

/* What bounds the task at its params: "compute" when its arithmetic
 * intensity is above the H200's balance (flops over bytes per second),
 * "latency" when its floor is under 10 us, else "memory". */
const char *task_bound(const json_t *task);

/* Roofline floor in microseconds: the larger of bytes over the copy
 * bandwidth and flops over the arithmetic rate (both per second). */
double task_floor_us(int64_t bytes, int64_t flops, double bytes_per_s,
	double flops_per_s);

/* Evaluates plan at the task's params and at every check_params entry,
 * with the knobs in defines (a JSON object, may be NULL). Returns 0, or -1
 * with err naming the size set and what is wrong. */
int task_plan_check(const json_t *plan, const json_t *task, const json_t *defines,
	char *err, size_t errlen);

#endif
