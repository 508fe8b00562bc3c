/* plan.h: launch plans (how a kernel candidate is launched: its kernels in
 * order, their geometry and args, and workspace buffers), evaluated for one set of
 * sizes into plain numbers a harness can launch.
 *
 *   {"launches": [{"kernel": "softmax_rows", "grid": ["rows"], "block": [256],
 *                  "smem": "2*256*4", "cluster": [1, 1, 1],
 *                  "args": ["x", "y", "i64:rows", "i64:cols", "f32:1e-5"]}],
 *    "workspace": [{"name": "partial", "dtype": "f64", "count": "rows"}]}
 *
 * grid, block and cluster are one to three size expressions (an array, or
 * one value for x alone); smem (bytes of dynamic shared memory) and
 * cluster are optional. An arg is the name of an input, output or
 * workspace buffer (passed as a device pointer), or a typed scalar:
 * i32:EXPR, i64:EXPR, f32:NUMBER, f64:NUMBER. */
#ifndef HTAM_PLAN_H
#define HTAM_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define PLAN_MAX_LAUNCHES 16
#define PLAN_MAX_ARGS 32
#define PLAN_MAX_WORKSPACE 16
#define PLAN_NAME_MAX 64

/* Element types of tensors and workspace. f16 is IEEE binary16 and bf16
 * bfloat16; both are stored in 2 bytes and computed in f32 by the
 * families. bool is a byte holding 0 or 1 (torch.bool): an input's type
 * (a mask), never an output's. */
enum dtype { DT_F32, DT_F64, DT_I32, DT_I64, DT_F16, DT_BF16, DT_BOOL };
#define DTYPE_NAMES "f32, f64, f16, bf16, i32, i64 or bool"

/* Whether dt holds integers (compared exactly, drawn by randint). */
#define DTYPE_INTEGRAL(dt) ((dt) == DT_I32 || (dt) == DT_I64 || (dt) == DT_BOOL)

/* "f32", "f64", "i32", "i64", "f16", "bf16", "bool". Returns 0, or -1 for
 * anything else. */
int dtype_parse(const char *s, enum dtype *dt);
const char *dtype_name(enum dtype dt);
size_t dtype_size(enum dtype dt);

enum arg_kind { ARG_BUFFER, ARG_I32, ARG_I64, ARG_F32, ARG_F64 };

struct plan_arg {
	enum arg_kind kind;
	char buffer[PLAN_NAME_MAX]; /* ARG_BUFFER */
	int64_t i;                  /* ARG_I32, ARG_I64 */
	double f;                   /* ARG_F32, ARG_F64 */
};

struct plan_launch {
	char kernel[PLAN_NAME_MAX * 2];
	int64_t grid[3], block[3], cluster[3];
	int64_t smem;
	int nargs;
	struct plan_arg args[PLAN_MAX_ARGS];
};

struct plan_buffer {
	char name[PLAN_NAME_MAX];
	enum dtype dtype;
	int64_t count;
};

struct plan {
	int nlaunch;
	struct plan_launch launch[PLAN_MAX_LAUNCHES];
	int nworkspace;
	struct plan_buffer workspace[PLAN_MAX_WORKSPACE];
};

/* Evaluates plan (borrowed) for the task's buffers and the sizes in vars
 * (sizes and knobs, see expr_eval). Checks what needs no device: kernel
 * names are C identifiers, every dimension is at least 1, grid y and z
 * and the block fit CUDA's fixed limits (65535; 1024 threads), args name
 * an input, output or workspace buffer or are typed scalars in range,
 * workspace names do not shadow the task's buffers. Device limits (shared
 * memory, cluster size) are kbench's to check. Returns 0, or -1 with err
 * naming the launch and field: "launches[1].grid[0]: column 3: ...". */
int plan_eval(const json_t *plan, const json_t *task, const json_t *vars,
	struct plan *out, char *err, size_t errlen);



/* The byte size of each parameter of a kernel, in order, into sizes[max]:
 * returns the count, or -1 when it is not known. cubin_params (cubin.h)
 * reads them from the cubin, kbench's worker from the driver. */
typedef int (*plan_params_fn)(void *ctx, const char *kernel, size_t *sizes, int max);

/* Checks every launch of p against its kernel's parameters: as many args
 * as parameters, and each arg as wide as its parameter (a buffer 8 bytes,
 * i32 and f32 4, i64 and f64 8), so that no launch passes a kernel fewer
 * bytes than it reads. A kernel whose parameters are unknown passes
 * unchecked. Returns 0, or -1 with err naming the launch, the kernel and
 * the arg: "launches[0] (relu): args[2] is i32 (4 bytes) but parameter 2
 * of the kernel is 8 bytes". */
int plan_match_params(const struct plan *p, plan_params_fn fn, void *ctx,
	char *err, size_t errlen);

/* The distinct kernel names the plan launches, as a new JSON array of
 * strings, or NULL if the plan has no launches array. */
json_t *plan_kernels(const json_t *plan);

/* A new object holding the members of sizes and then of defines (either
 * may be NULL), the variables a plan's expressions see. Returns NULL with
 * err set when a knob has the name of a size. */
json_t *plan_vars(const json_t *sizes, const json_t *defines, char *err,
	size_t errlen);

/* An evaluated plan as JSON, every number resolved: {"launches": [{"kernel",
 * "grid", "block", "cluster" (each [x, y, z]), "smem", "args": [{"kind":
 * "buffer", "buffer"} or {"kind": "i32"|"i64"|"f32"|"f64", "value"}]}],
 * "workspace": [{"name", "dtype", "count"}]} (a new reference), for whoever
 * launches it without this library (an exported module). */
json_t *plan_json(const struct plan *p);

#endif
