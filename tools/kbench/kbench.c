/* kbench: benchmarks compiled candidate kernels on the GPU. Reads records
 * (after kcompile), checks each candidate against the task's reference on
 * fresh device inputs, times it, and adds "bench" (docs/records.md). The
 * GPU work runs in a worker process; this one only reads and writes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "cubin.h"
#include "die.h"
#include "jsonl.h"
#include "opt.h"
#include "plan.h"
#include "task.h"
#include "util.h"
#include "kbench.h"

enum { O_SEED = 256, O_MIN_REPS, O_BUDGET, O_WITHOUT, O_DEVICE, O_PROBE, O_WORKER,
	O_TORCH_COMPILE };

static const struct opt options[] = {
	{ 't', 't', "timeout", "SECS", "deadline per candidate (default 60)" },
	{ 's', 's', "seeds", "N", "seeds per check size (default 3)" },
	{ O_SEED, 0, "seed", "N", "first seed (default 1)" },
	{ O_MIN_REPS, 0, "min-reps", "N", "timed repetitions at least (default 10)" },
	{ O_BUDGET, 0, "budget-ms", "MS", "time spent timing one kernel (default 500)" },
	{ 'd', 'd', "dump", "DIR", "write inputs and outputs as .npy files" },
	{ O_WITHOUT, 0, "without", "LIST", "switch protections off, to measure or test them:\n"
		"restore, fresh, checks (comma-separated)" },
	{ O_DEVICE, 0, "device", "N", "the GPU, numbered as CUDA_VISIBLE_DEVICES orders\n"
		"them (default 0)" },
	{ O_TORCH_COMPILE, 0, "torch-compile", NULL, "imported tasks: time torch.compile too,\n"
		"beside PyTorch eager" },
	{ O_PROBE, 0, "probe", NULL, "say which GPU there is (a JSON line) and exit" },
	{ 'q', 'q', "quiet", NULL, "no progress on stderr" },
	{ O_WORKER, 0, "worker", NULL, NULL },   /* kbench's own GPU worker */
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [options] < compiled.jsonl > benched.jsonl\n"
	"       %s --probe [--device N]\n",
	"Checks and times each compiled candidate on the GPU against the\n"
	"task's reference and adds \"bench\". A record without candidate\n"
	"benchmarks the task's reference against itself. An imported task's\n"
	"reference is its PyTorch module, run by an oracle process on the same\n"
	"GPU (HTAM_PYTHON, else python3, with torch).\n",
	options,
	"Exit: 0 ok, 2 usage, 65 malformed record, 69 no CUDA driver or GPU.\n"
};

/* plan_params_fn from the cubin itself. */
static int
cubin_params_of(void *ctx, const char *kernel, size_t *sizes, int max)
{
	return cubin_params(ctx, kernel, sizes, max);
}

/* Checks a launch plan's args against the parameters of the kernels in
 * the cubin (base64), at the task's params. Returns 0; -1 with err when
 * the plan does not fit; -2 with err when the cubin is not one. */
static int
plan_fits_cubin(const json_t *plan, const json_t *task, const json_t *defines,
	const char *b64, char *err, size_t errlen)
{
	size_t len;
	void *bin = b64_decode(b64, &len);
	struct cubin cb;
	struct plan *p = xmalloc(sizeof *p);
	json_t *sizes = task_sizes(task);
	json_t *vars = plan_vars(json_array_get(sizes, 0), defines, err, errlen);
	int r = -1;

	if (!bin) {
		errf(err, errlen, "the cubin is not base64");
		r = -2;
	} else if (cubin_open(&cb, bin, len, err, errlen) < 0)
		r = -2;
	else if (vars && plan_eval(plan, task, vars, p, err, errlen) == 0)
		r = plan_match_params(p, cubin_params_of, &cb, err, errlen);
	json_decref(vars);
	json_decref(sizes);
	free(p);
	free(bin);
	return r;
}

/* Checks what kbench needs of a record (exit 65 if malformed) and, when
 * the candidate needs no GPU to judge (a generator or compiler failure, a
 * launch plan that does not evaluate), returns its bench object. Returns
 * NULL when the record must go to the GPU. */
static json_t *
judge_offline(const json_t *rec, long line)
{
	char err[512];
	const json_t *task = json_object_get(rec, "task");
	if (!json_is_object(task))
		die_line(EXIT_DATAERR, line, "no \"task\" object");
	if (task_validate(task, err, sizeof err) < 0)
		die_line(EXIT_DATAERR, line, "%s", err);
	const char *tid = json_string_value(json_object_get(task, "id"));
	const json_t *cand = json_object_get(rec, "candidate");
	if (cand && !json_is_object(cand) && !json_is_null(cand))
		die_line(EXIT_DATAERR, line, "task \"%s\": \"candidate\" is not an object", tid);
	if (json_is_object(cand)) {
		const char *st = json_string_value(json_object_get(cand, "status"));
		if (st && !strcmp(st, "gen_error"))
			return bench_verdict(OUT_GEN_ERROR,
				json_string_value(json_object_get(cand, "reason")));
	}
	const json_t *comp = json_object_get(rec, "compile");
	if (!json_is_object(comp))
		die_line(EXIT_DATAERR, line, "task \"%s\": no \"compile\" object "
			"(pipe the record through kcompile first)", tid);
	/* A record without a candidate (ktask | kcompile) carries only the
	 * reference's compile: the reference is judged against itself. */
	if (json_is_object(cand) &&
	    !json_is_boolean(json_object_get(comp, "ok")))
		die_line(EXIT_DATAERR, line, "task \"%s\": compile.ok is not a boolean", tid);
	if (json_is_object(cand) && !json_is_true(json_object_get(comp, "ok"))) {
		const char *why = json_string_value(json_object_get(comp, "reason"));
		if (!why)
			why = json_string_value(json_object_get(comp, "status"));
		return bench_verdict(OUT_COMPILE_ERROR, why ? why : "did not compile");
	}
	const json_t *rcomp = json_object_get(comp, "reference");
	const char *rcubin = json_string_value(json_object_get(rcomp, "cubin"));
	/* A reference that did not compile (a timeout on a loaded machine, say)
	 * leaves nothing to check against: that record fails, the stream goes on. */
	if (json_is_object(rcomp) && json_is_false(json_object_get(rcomp, "ok"))) {
		const char *why = json_string_value(json_object_get(rcomp, "reason"));
		const char *st = json_string_value(json_object_get(rcomp, "status"));
		char msg[600];
		snprintf(msg, sizeof(msg), "the task's reference did not compile (%s%s%s)",
			st ? st : "error", why ? ": " : "", why ? why : "");
		return bench_verdict(OUT_COMPILE_ERROR, msg);
	}
	int oracle = task_oracle(task);
	if (!rcubin && !oracle)
		die_line(EXIT_DATAERR, line, "task \"%s\": no compile.reference.cubin", tid);
	if (json_is_object(cand) && !json_is_string(json_object_get(comp, "cubin")))
		die_line(EXIT_DATAERR, line, "task \"%s\": compile.ok is true but "
			"compile.cubin is not a string", tid);
	const json_t *rplan = json_object_get(json_object_get(task, "reference"), "launch");
	if (!oracle && task_plan_check(rplan, task, NULL, err, sizeof err) < 0)
		die_line(EXIT_DATAERR, line, "task \"%s\": reference.launch: %s", tid, err);
	int fit = oracle ? 0 : plan_fits_cubin(rplan, task, NULL, rcubin, err, sizeof err);
	if (fit < 0)
		die_line(EXIT_DATAERR, line, "task \"%s\": %s: %s", tid, fit == -2
			? "compile.reference.cubin" : "reference.launch", err);
	if (json_is_object(cand)) {
		const json_t *defs = json_object_get(cand, "defines");
		defs = json_is_object(defs) ? defs : NULL;
		const json_t *plan = json_object_get(cand, "launch");
		int bad = task_plan_check(plan, task, defs, err, sizeof err) < 0 ? -1
			: plan_fits_cubin(plan, task, defs, json_string_value(json_object_get(comp,
			"cubin")), err, sizeof err);
		if (bad < 0) {
			char *r = xasprintf("%s%s", bad == -1 ? "launch plan: " : "", err);
			json_t *b = bench_verdict(OUT_REJECTED, r);
			free(r);
			return b;
		}
	}
	return NULL;
}

/* The worker's request for rec: the task, the kernel to judge (the
 * candidate, or the reference itself), the reference, the settings. */
static json_t *
make_request(const json_t *rec, long line, const struct options *o)
{
	const json_t *task = json_object_get(rec, "task");
	const json_t *comp = json_object_get(rec, "compile");
	const json_t *cand = json_object_get(rec, "candidate");
	const json_t *rplan = json_object_get(json_object_get(task, "reference"), "launch");
	json_t *ref_cubin = json_object_get(json_object_get(comp, "reference"), "cubin");
	int self = !json_is_object(cand);
	json_t *defs = self ? NULL : json_object_get(cand, "defines");
	json_t *opts = json_pack("{sI sI sI sI ss? sb sb sb sb}", "seeds", (json_int_t)o->seeds,
		"seed", (json_int_t)o->seed, "min_reps", (json_int_t)o->min_reps,
		"budget_ms", (json_int_t)o->budget_ms, "dump", o->dump,
		"restore", o->restore, "fresh_inputs", o->fresh_inputs,
		"check_timed", o->check_timed, "torch_compile", o->torch_compile);
	return json_pack("{sI ss sO sO sO sO sO so}", "line", (json_int_t)line,
		"subject", self ? "reference" : "candidate", "task", task,
		"cubin", self ? (ref_cubin ? ref_cubin : json_null()) : json_object_get(comp, "cubin"),
		"launch", self ? (rplan ? rplan : json_null()) : json_object_get(cand, "launch"),
		"defines", json_is_object(defs) ? defs : json_null(),
		"ref_cubin", ref_cubin ? ref_cubin : json_null(), "opts", opts);
}

/* One line on stderr saying how the record fared. */
static void
progress(const json_t *rec, const json_t *bench, long line)
{
	const char *id = json_string_value(json_object_get(json_object_get(rec,
		"candidate"), "id"));
	const char *st = json_string_value(json_object_get(bench, "status"));
	const char *why = json_string_value(json_object_get(bench, "reason"));
	json_t *t = json_object_get(json_object_get(bench, "time_us"), "median");
	json_t *eager = json_object_get(bench, "vs_eager");
	char vs[96] = "";
	size_t used = 0;
	if (eager)
		used = (size_t)snprintf(vs, sizeof(vs), ", %.3gx PyTorch eager",
			json_number_value(eager));
	json_t *pr = json_object_get(bench, "printed");
	if (pr && used < sizeof vs)
		snprintf(vs + used, sizeof vs - used, " (printed %lld bytes)",
			(long long)json_integer_value(json_object_get(pr, "bytes")));
	if (t)
		warn_line(line, "%s %.12s: %s, %.1f us, %.3gx the reference%s", json_string_value(
			json_object_get(json_object_get(rec, "task"), "id")),
			id ? id : "reference", st, json_number_value(t),
			json_number_value(json_object_get(bench, "speedup")), vs);
	else
		warn_line(line, "%s %.12s: %s%s%s", json_string_value(json_object_get(
			json_object_get(rec, "task"), "id")), id ? id : "reference", st,
			why ? ": " : "", why ? why : "");
}

/* --without LIST: the protections to switch off. */
static void
without(struct options *o, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (!strcmp(w, "restore"))
			o->restore = 0;
		else if (!strcmp(w, "fresh"))
			o->fresh_inputs = 0;
		else if (!strcmp(w, "checks"))
			o->check_timed = 0;
		else {
			die(EXIT_USAGE, "--without %s: '%s' is not a protection (restore, "
				"fresh, checks)", list, w);
		}
	}
	free(copy);
}

int
main(int argc, char **argv)
{
	struct options o = {.timeout_s = 60, .seeds = 3, .seed = 1, .min_reps = 10,
		.budget_ms = 500, .restore = 1, .fresh_inputs = 1, .check_timed = 1};
	int c, next, worker = 0, probe = 0;
	const char *arg;

	setprogname(argv[0]);
	while ((c = opt_next(argc, argv, &cmdline, &arg, &next)) != -1) {
		switch (c) {
		case 't': o.timeout_s = opt_int("--timeout", arg, 1, 86400); break;
		case 's': o.seeds = opt_int("--seeds", arg, 1, 1000); break;
		case O_SEED: o.seed = opt_int("--seed", arg, 0, INT64_MAX / 2); break;
		case O_MIN_REPS: o.min_reps = opt_int("--min-reps", arg, 1, 100000); break;
		case O_BUDGET: o.budget_ms = opt_int("--budget-ms", arg, 0, 3600000); break;
		case 'd': o.dump = arg; break;
		case O_WITHOUT: without(&o, arg); break;
		case O_DEVICE: o.device = (int)opt_int("--device", arg, 0, 1023); break;
		case O_TORCH_COMPILE: o.torch_compile = 1; break;
		case O_PROBE: probe = 1; break;
		case 'q': o.quiet = 1; break;
		case O_WORKER: worker = 1; break;
		}
	}
	if (next != argc)
		opt_usage(&cmdline);
	if (worker)
		return worker_main(o.device);
	if (o.dump && !*o.dump)
		die(EXIT_USAGE, "--dump needs a folder");
	if (o.dump && mkdir_p(o.dump, 0777) < 0)
		die(EXIT_FAIL, "%s:", o.dump);
	if (!o.restore || !o.fresh_inputs || !o.check_timed)
		warnf("protections off (--without): verdicts are weaker, and each record's "
			"bench.protocol says so");
	signal(SIGPIPE, SIG_IGN);

	struct pool pool;
	pool_init(&pool, o.device);
	if (probe) {
		jsonl_put(stdout, pool_probe(&pool));
		pool_close(&pool);
		return EXIT_OK;
	}
	struct jsonl *in = jsonl_open(stdin);
	json_t *rec;
	while ((rec = jsonl_next(in))) {
		long line = jsonl_line(in);
		json_t *bench = judge_offline(rec, line);
		if (!bench) {
			json_t *req = make_request(rec, line, &o);
			double t0 = now_ms();
			bench = pool_bench(&pool, req, o.timeout_s);
			json_decref(req);
			json_t *wall = json_object_get(bench, "wall_ms");
			if (json_is_object(wall))
				json_object_set_new(wall, "total", json_real(now_ms() - t0));
			bench_vs_baselines(bench, json_object_get(rec, "task"));
		}
		if (!o.quiet)
			progress(rec, bench, line);
		json_object_set_new(rec, "bench", bench);
		jsonl_put(stdout, rec);
		json_decref(rec);
	}
	jsonl_close(in);
	pool_close(&pool);
	return EXIT_OK;
}
