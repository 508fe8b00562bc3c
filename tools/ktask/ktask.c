/* ktask: loads operator tasks from their folders and writes them as
 * records: the start of every pipeline. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "die.h"
#include "expr.h"
#include "jsonl.h"
#include "plan.h"
#include "task.h"
#include "opt.h"
#include "util.h"

static const struct opt options[] = {
	{ 's', 's', "state", NULL, "write step-0 state records instead of task records" },
	{ 'r', 'r', "run", "RUN", "the run id of the state records (default \"run\")" },
	{ 'l', 'l', "list", NULL, "print a table: id, family, bound, floor us, eager us,\n"
		"compile us" },
	{ 'z', 'z', "sizes", NULL, "write each task's sizes evaluated at its params: tensor\n"
		"shapes, randint bounds, bytes, flops and the floor;\n"
		"TASK - reads records carrying a task on stdin" },
	{ 'b', 'b', "baselines", "FILE", "a baselines file (bench/torch-baselines.py) whose\n"
		"eager and compile times replace the tasks' baseline_us\n"
		"(default $HTAM_BASELINES; \"\" for none)" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [-s] [-r RUN] [-l | -z] [-b FILE] [TASK...]\n",
	"  TASK is a task folder or id (default: every task of the pack).\n",
	options, NULL
};

/* By task id: the folders' last names. */
static int
cmp_ids(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	return strcmp(strrchr(x, '/') + 1, strrchr(y, '/') + 1);
}

/* Every task of the pack, sorted: the task folders in each folder of
 * task_roots() (the first of a name wins). */
static char **
pack_ids(size_t *n)
{
	char *roots = task_roots(), *save = NULL;
	char **ids = NULL;
	struct dirent *de;
	DIR *d;

	*n = 0;
	for (char *root = strtok_r(roots, ":", &save); root; root = strtok_r(NULL, ":", &save)) {
		if (!(d = opendir(root)))
			die(EXIT_USAGE, "%s:", root);
		while ((de = readdir(d))) {
			char *f = xasprintf("%s/%s/task.json", root, de->d_name);
			FILE *probe = de->d_name[0] != '.' ? fopen(f, "r") : NULL;
			int dup = 0;
			for (size_t i = 0; probe && i < *n; i++)
				dup |= !strcmp(strrchr(ids[i], '/') + 1, de->d_name);
			if (probe && !dup) {
				ids = xrealloc(ids, (*n + 1) * sizeof(*ids));
				ids[(*n)++] = xasprintf("%s/%s", root, de->d_name);
			}
			if (probe)
				fclose(probe);
			free(f);
		}
		closedir(d);
	}
	free(roots);
	qsort(ids, *n, sizeof(*ids), cmp_ids);
	return ids;
}

/* The times a baselines file gives per task, in microseconds. */
static const char *const kinds[] = { "eager", "compile" };

/* The baselines file bench/torch-baselines.py writes (docs/tasks.md):
 * {"tasks": {ID: {"eager": US, "compile": US or null, ...}, ...}, ...}.
 * Returns its "tasks" object (a new reference), or exits: 2 when the file
 * cannot be read, 65 when it is not of that shape. from says where the
 * path came from ("--baselines " or "HTAM_BASELINES="), for the errors. */
static json_t *
baselines_load(const char *from, const char *path)
{
	json_error_t je;
	json_t *root, *tasks, *b, *v;
	const char *id;
	char *text;

	if (!(text = read_file(path, NULL)))
		die(EXIT_USAGE, "%s%s:", from, path);
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!root)
		die(EXIT_DATAERR, "%s%s: line %d, column %d: %s", from, path,
			je.line, je.column, je.text);
	tasks = json_object_get(root, "tasks");
	if (!json_is_object(tasks))
		die(EXIT_DATAERR, "%s%s: expected an object with a \"tasks\" "
			"object, as bench/torch-baselines.py writes", from, path);
	json_object_foreach(tasks, id, b) {
		if (!json_is_object(b))
			die(EXIT_DATAERR, "%s%s: tasks.%s: expected an object", from, path, id);
		for (size_t i = 0; i < LEN(kinds); i++) {
			v = json_object_get(b, kinds[i]);
			if (v && !json_is_null(v) &&
			    (!json_is_number(v) || !(json_number_value(v) > 0)))
				die(EXIT_DATAERR, "%s%s: tasks.%s.%s: expected a positive "
					"number of microseconds, or null", from, path, id, kinds[i]);
		}
	}
	json_incref(tasks);
	json_decref(root);
	return tasks;
}

/* Puts the measured times of the task's entry in baselines (the "tasks"
 * object of a baselines file) into task.baseline_us, over what task.json
 * says. null or a missing member was not measured: task.json's stays. */
static void
baselines_merge(json_t *task, const json_t *baselines)
{
	const json_t *b = json_object_get(baselines,
		json_string_value(json_object_get(task, "id")));
	json_t *dst;

	for (size_t i = 0; b && i < LEN(kinds); i++) {
		const json_t *v = json_object_get(b, kinds[i]);
		if (!json_is_number(v))
			continue;
		if (!(dst = json_object_get(task, "baseline_us"))) {
			dst = json_object();
			json_object_set_new(task, "baseline_us", dst);
		}
		json_object_set_new(dst, kinds[i], json_real(json_number_value(v)));
	}
}

/* The step-0 state of a task: no best kernel yet, nothing in the history. */
static json_t *
initial_state(json_t *task, const char *run)
{
	return json_pack("{s:O, s:s, s:i, s:n, s:[], s:{s:O, s:s, s:f, s:n}}",
		"task", task, "run", run, "step", 0, "best", "history",
		"features", "family", json_object_get(task, "family"),
		"bound", task_bound(task), "floor_fraction", 0.0, "last_outcome");
}

/* A baseline time with one decimal into buf, or "-" when the task has none. */
static const char *
baseline_text(const json_t *task, const char *kind, char *buf, size_t len)
{
	const json_t *v = json_object_get(json_object_get(task, "baseline_us"), kind);

	if (!v)
		return "-";
	snprintf(buf, len, "%.1f", json_number_value(v));
	return buf;
}

static void
print_row(const json_t *task)
{
	int64_t bytes, flops;
	char e[256], eager[32], compile[32];

	task_cost(task, json_object_get(task, "params"), &bytes, &flops, e, sizeof(e));
	printf("%-22s %-14s %-8s %10.1f %10s %10s\n",
		json_string_value(json_object_get(task, "id")),
		json_string_value(json_object_get(task, "family")), task_bound(task),
		task_floor_us(bytes, flops, H200_COPY_BYTES_PER_S, H200_FP32_FLOPS_PER_S),
		baseline_text(task, "eager", eager, sizeof(eager)),
		baseline_text(task, "compile", compile, sizeof(compile)));
}

/* Each tensor's shape at the sizes: {name: [dims]} (dimensions that do not
 * evaluate left out). */
static json_t *
tensor_shapes(const json_t *task, const json_t *sizes)
{
	const char *lists[] = { "inputs", "outputs" };
	json_t *shapes = json_object();
	const json_t *t, *d;
	char e[256];
	size_t i, j;
	int64_t v;

	for (size_t l = 0; l < LEN(lists); l++)
		json_array_foreach(json_object_get(task, lists[l]), i, t) {
			json_t *shape = json_array();
			json_array_foreach(json_object_get(t, "shape"), j, d)
				if (expr_eval_json(d, sizes, &v, e, sizeof e) == 0)
					json_array_append_new(shape, json_integer(v));
			json_object_set_new(shapes, json_string_value(json_object_get(t, "name")), shape);
		}
	return shapes;
}

/* The task's sizes evaluated at its params, for the Python of bench/ (one
 * evaluator of size expressions, lib/expr.c): {"id", "sizes", "shapes":
 * {tensor: [dims]}, "bounds": {input: [low, high]} for randint inputs,
 * "bytes", "flops", "floor_us"} (the floor at the H200's ceilings, as
 * --list gives it). */
static json_t *
evaluated(const json_t *task)
{
	const json_t *params = json_object_get(task, "params"), *t;
	json_t *shapes = tensor_shapes(task, params), *bounds = json_object();
	int64_t bytes = 0, flops = 0, lo, hi;
	char e[256];
	size_t i;

	json_array_foreach(json_object_get(task, "inputs"), i, t) {
		const json_t *init = json_object_get(t, "init");
		const char *dist = json_string_value(json_object_get(init, "dist"));
		if (dist && !strcmp(dist, "randint") &&
		    expr_eval_json(json_object_get(init, "low"), params, &lo, e, sizeof e) == 0 &&
		    expr_eval_json(json_object_get(init, "high"), params, &hi, e, sizeof e) == 0)
			json_object_set_new(bounds, json_string_value(json_object_get(t, "name")),
				json_pack("[I, I]", (json_int_t)lo, (json_int_t)hi));
	}
	task_cost(task, params, &bytes, &flops, e, sizeof e);
	return json_pack("{s:O?, s:O, s:o, s:o, s:I, s:I, s:f}", "id", json_object_get(task, "id"),
		"sizes", params, "shapes", shapes, "bounds", bounds, "bytes", (json_int_t)bytes,
		"flops", (json_int_t)flops, "floor_us", task_floor_us(bytes, flops,
		H200_COPY_BYTES_PER_S, H200_FP32_FLOPS_PER_S));
}

/* Every size set of the task (params, then check_params) with each
 * tensor's shape and the candidate's launch plan evaluated there, for an
 * exported module that launches the kernel without htam. A plan that does
 * not evaluate exits 65. */
static json_t *
evaluated_sets(const json_t *task, const json_t *cand, long line)
{
	json_t *sets = task_sizes(task), *out = json_array(), *sizes;
	const json_t *defines = json_object_get(cand, "defines");
	struct plan *p = xmalloc(sizeof *p);
	char e[512];
	size_t i;

	if (!json_is_object(defines))
		defines = NULL;
	json_array_foreach(sets, i, sizes) {
		json_t *shapes = tensor_shapes(task, sizes);
		json_t *vars = plan_vars(sizes, defines, e, sizeof e);
		if (!vars || plan_eval(json_object_get(cand, "launch"), task, vars, p, e, sizeof e) < 0)
			die_line(EXIT_DATAERR, line, "candidate.launch at size set %zu: %s", i, e);
		json_decref(vars);
		json_array_append_new(out, json_pack("{sO so so}", "sizes", sizes, "shapes", shapes,
			"plan", plan_json(p)));
	}
	free(p);
	json_decref(sets);
	return out;
}

/* ktask --sizes -: the sizes of the task of each record on stdin, which
 * need not be a whole task: its params and whichever of bytes, flops and
 * tensors it has. A size that does not evaluate exits 65 naming it. */
static int
sizes_of_records(void)
{
	struct jsonl *in = jsonl_open(stdin);
	json_t *rec;
	char e[256];
	int64_t v;

	while ((rec = jsonl_next(in))) {
		const json_t *task = json_object_get(rec, "task");
		const json_t *params = json_object_get(task, "params");
		const char *const exprs[] = { "bytes", "flops" };
		if (!json_is_object(params))
			die_line(EXIT_DATAERR, jsonl_line(in), "task.params: expected an object");
		for (size_t k = 0; k < LEN(exprs); k++) {
			const json_t *x = json_object_get(task, exprs[k]);
			if (x && expr_eval_json(x, params, &v, e, sizeof e) < 0)
				die_line(EXIT_DATAERR, jsonl_line(in), "task.%s: %s", exprs[k], e);
		}
		json_t *out = evaluated(task);
		const json_t *cand = json_object_get(rec, "candidate");
		if (json_is_object(json_object_get(cand, "launch")))
			json_object_set_new(out, "sets", evaluated_sets(task, cand, jsonl_line(in)));
		jsonl_put(stdout, out);
		json_decref(out);
		json_decref(rec);
	}
	jsonl_close(in);
	return EXIT_OK;
}

int
main(int argc, char *argv[])
{
	const char *run = "run", *bfile = getenv("HTAM_BASELINES"), *arg;
	const char *bfrom = "HTAM_BASELINES=";
	json_t *baselines = NULL;
	int state = 0, list = 0, sizes = 0, c, failed = 0, optind;
	char **names, **pack = NULL, err[1024];
	size_t n;

	setprogname(argv[0]);
	while ((c = opt_next(argc, argv, &cmdline, &arg, &optind)) != -1) {
		switch (c) {
		case 's': state = 1; break;
		case 'r': run = arg; break;
		case 'l': list = 1; break;
		case 'z': sizes = 1; break;
		case 'b': bfile = arg; bfrom = "--baselines "; break;
		}
	}
	if (!*run)
		die(EXIT_USAGE, "the run id is empty");
	if (bfile && *bfile)
		baselines = baselines_load(bfrom, bfile);
	if (optind < argc) {
		names = argv + optind;
		n = (size_t)(argc - optind);
	} else {
		names = pack = pack_ids(&n);
	}
	if (sizes && n == 1 && !strcmp(names[0], "-"))
		return sizes_of_records();
	if (list)
		printf("%-22s %-14s %-8s %10s %10s %10s\n", "id", "family", "bound",
			"floor_us", "eager_us", "compile_us");
	for (size_t i = 0; i < n; i++) {
		char *dir = task_find(names[i]);
		json_t *task, *rec;

		if (!dir) {
			warnf("%s: no such task (no task.json there, nor in any folder of $HTAM_TASKS or the pack beside ktask)",
				names[i]);
			failed = 1;
			continue;
		}
		if (!(task = task_load(dir, err, sizeof(err)))) {
			warnf("%s", err);
			failed = 1;
			free(dir);
			continue;
		}
		baselines_merge(task, baselines);
		if (list)
			print_row(task);
		else if (sizes) {
			rec = evaluated(task);
			jsonl_put(stdout, rec);
			json_decref(rec);
		} else {
			rec = state ? initial_state(task, run) : json_pack("{s:O}", "task", task);
			jsonl_put(stdout, rec);
			json_decref(rec);
		}
		json_decref(task);
		free(dir);
	}
	for (size_t i = 0; pack && i < n; i++)
		free(pack[i]);
	free(pack);
	json_decref(baselines);
	return failed ? EXIT_DATAERR : EXIT_OK;
}
