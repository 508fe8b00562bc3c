/* kcompile: the compile stage. Reads candidate records, compiles each
 * candidate's source and its task's reference with NVRTC for one
 * architecture, and writes each record back with `compile` added
 * (docs/records.md): the cubin, the per-kernel resources of the ptxas
 * report, the log. Sources are checked before NVRTC sees them (guard.c),
 * compiles run in child processes with a deadline, several at once
 * (pool.c), and results are kept in a content-addressed cache (cache.c).
 * Records come out in the order they came in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "die.h"
#include "jsonl.h"
#include "kcompile.h"
#include "plan.h"
#include "task.h"
#include "opt.h"
#include "record.h"
#include "util.h"

/* One of the two compiles of a record: the candidate's or the reference's. */
struct side {
	json_t *decided;        /* made without NVRTC: refused, skipped, bad plan */
	struct job *job;        /* else the compile it waits for */
	const json_t *launch;   /* its launch plan (borrowed from the record) */
};

/* A record read and not yet written. */
struct pending {
	json_t *rec;
	long line;
	int has_candidate;
	struct side cand, ref;
	struct pending *next;
};

struct run {
	struct toolchain tc;
	struct cache cache;
	struct pool pool;
	struct input in;
	struct jsonl *jl;
	struct pending *head, *tail;
	int npending;
	int window;             /* records read ahead of the one written next */
	int verbose;
	int in_done;
	char err[1024];         /* a bad input line: reported after the records before it */
};

static const struct opt options[] = {
	{ 'a', 'a', "arch", "ARCH", "target architecture (default $HTAM_ARCH, else sm_90a)" },
	{ 'j', 'j', "jobs", "JOBS", "compiles at once (default: the number of CPUs)" },
	{ 't', 't', "timeout", "SECONDS", "deadline of one compile (default 60)" },
	{ 'n', 'n', "no-cache", NULL, "neither read nor write the compile cache" },
	{ 'v', 'v', "verbose", NULL, "one line per record on stderr" },
	{ 0 }
};

static const struct opts cmdline = {
	"usage: %s [-nv] [-a ARCH] [-j JOBS] [-t SECONDS] < records\n",
	NULL, options, NULL
};

/* Whether the generator failed for this candidate (kgen still writes it). */
static int
is_gen_error(const json_t *cand)
{
	const json_t *status = json_object_get(cand, "status");
	enum outcome o;

	return outcome_parse(json_string_value(status), &o) == 0 && o == OUT_GEN_ERROR;
}

/* Checks what kcompile needs of a record, beyond what it compiles: a
 * missing or mistyped member is bad input, not a failed candidate. */
static int
input_check(const json_t *rec, char *err, size_t errlen)
{
	const json_t *task = json_object_get(rec, "task");
	const json_t *cand = json_object_get(rec, "candidate"), *defines;

	if (!task) {
		snprintf(err, errlen, "task: missing (kcompile needs the task and "
			"its reference; see ktask)");
		return -1;
	}
	if (task_validate(task, err, errlen) < 0)
		return -1;
	if (!cand)
		return 0;
	if (!json_is_object(cand)) {
		snprintf(err, errlen, "candidate: expected an object");
		return -1;
	}
	if (is_gen_error(cand))
		return 0;
	defines = json_object_get(cand, "defines");
	if (!json_is_string(json_object_get(cand, "source")))
		snprintf(err, errlen, "candidate.source: expected a string (the kernel source)");
	else if (defines && !json_is_null(defines) && !json_is_object(defines))
		snprintf(err, errlen, "candidate.defines: expected an object (knob name to value)");
	else if (!json_is_object(json_object_get(cand, "launch")))
		snprintf(err, errlen, "candidate.launch: expected a launch plan object");
	else
		return 0;
	return -1;
}

/* Decides what one side needs: a refusal (an include or define the guard
 * rejects), a failure (a launch plan that does not evaluate), or a compile
 * (shared with every side of the same key; keep holds it for the run). */
static void
side_prepare(struct run *r, struct side *s, const char *source,
	const json_t *defines, const json_t *launch, const json_t *task, int keep)
{
	char why[1024], key[65];
	json_t *opts;

	if (!json_is_object(defines))
		defines = NULL;
	s->launch = launch;
	if (guard_defines(defines, why, sizeof(why)) < 0 ||
	    guard_source(source, why, sizeof(why)) < 0) {
		s->decided = compile_object(&r->tc, NULL, "refused", why);
		return;
	}
	if (task_plan_check(launch, task, defines, why, sizeof(why)) < 0) {
		char *msg = xasprintf("launch plan: %s", why);
		s->decided = compile_object(&r->tc, NULL, "error", msg);
		free(msg);
		return;
	}
	opts = compile_options(&r->tc, defines);
	compile_key(&r->tc, source, opts, key);
	s->job = pool_job(&r->pool, key, source, opts, keep);
	json_decref(opts);
}

/* Reads one record and sets its compiles going. At the end of the input,
 * or at a bad line, reading stops; the bad line is reported once the
 * records before it are written. */
static void
read_record(struct run *r)
{
	const json_t *task, *ref, *cand;
	struct pending *p;
	char err[900];
	json_t *rec;
	int rc;

	if ((rc = jsonl_read(r->jl, &rec, err, sizeof(err))) <= 0) {
		if (rc < 0)
			snprintf(r->err, sizeof(r->err), "%s", err);
		r->in_done = 1;
		return;
	}
	if (input_check(rec, err, sizeof(err)) < 0) {
		snprintf(r->err, sizeof(r->err), "line %ld: %s", jsonl_line(r->jl), err);
		json_decref(rec);
		r->in_done = 1;
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->rec = rec;
	p->line = jsonl_line(r->jl);
	task = json_object_get(rec, "task");
	ref = json_object_get(task, "reference");
	cand = json_object_get(rec, "candidate");
	if ((p->has_candidate = cand != NULL)) {
		if (is_gen_error(cand)) {
			const char *why = json_string_value(json_object_get(cand, "reason"));
			char *msg = xasprintf("generation failed: %s", why ? why : "no reason given");
			p->cand.decided = compile_object(&r->tc, NULL, "skipped", msg);
			free(msg);
		} else {
			side_prepare(r, &p->cand, json_string_value(json_object_get(cand, "source")),
				json_object_get(cand, "defines"), json_object_get(cand, "launch"),
				task, 0);
		}
	}
	if (task_oracle(task)) {
		/* Nothing to compile: kbench's oracle runs the problem's module. */
		p->ref.decided = compile_object(&r->tc, NULL, "oracle", "the reference is the "
			"problem's PyTorch module, which kbench's oracle runs");
		json_object_set_new(p->ref.decided, "ok", json_true());
	} else {
		side_prepare(r, &p->ref, json_string_value(json_object_get(ref, "source")),
			NULL, json_object_get(ref, "launch"), task, 1);
	}
	if (r->tail)
		r->tail->next = p;
	else
		r->head = p;
	r->tail = p;
	r->npending++;
}

/* Reads records while the window has room; waits for stdin only when no
 * compile is in flight and nothing is left to write. */
static void
read_records(struct run *r)
{
	while (!r->in_done && r->npending < r->window) {
		if ((r->pool.running > 0 || r->head) && !input_ready(&r->in))
			return;
		read_record(r);
	}
}

static int
side_done(const struct side *s)
{
	return s->decided || s->job->state == JOB_DONE;
}

/* The first kernel the plan launches that the compile did not produce, as
 * the reason of the failure (a new string), or NULL if all are there. */
static char *
missing_kernel(const json_t *launch, const json_t *kernels)
{
	json_t *names = plan_kernels(launch), *name, *k;
	const char *kname, *hint = NULL;
	char *why = NULL;
	size_t i;

	json_array_foreach(names, i, name) {
		const char *want = json_string_value(name);
		if (json_object_get(kernels, want))
			continue;
		json_object_foreach((json_t *)kernels, kname, k)
			if (strncmp(kname, "_Z", 2) == 0 && strstr(kname, want))
				hint = kname;
		why = hint ? xasprintf("launch plan names kernel '%s' which the source "
			"does not define (it has the C++ name '%s': declare it extern \"C\")",
			want, hint) : xasprintf("launch plan names kernel '%s' which the "
			"source does not define", want);
		break;
	}
	json_decref(names);
	return why;
}

/* The compile object of a side that is done: its job's, unless the plan
 * launches a kernel the compile did not produce. A new reference, which
 * may be shared: copy it before changing it. */
static json_t *
side_result(const struct side *s)
{
	json_t *res, *c;
	char *why;

	if (s->decided)
		return json_incref(s->decided);
	res = s->job->result;
	if (!json_is_true(json_object_get(res, "ok")) ||
	    !(why = missing_kernel(s->launch, json_object_get(res, "kernels"))))
		return json_incref(res);
	c = json_copy(res);
	json_object_set_new(c, "ok", json_false());
	json_object_set_new(c, "status", json_string("error"));
	json_object_set_new(c, "reason", json_text(why));
	json_object_set_new(c, "cubin", json_null());
	json_object_set_new(c, "cubin_sha256", json_null());
	free(why);
	return c;
}

/* "ok (52 ms)", "refused: line 1: ...": one side, for --verbose. */
static void
describe(char *out, size_t len, const char *what, const json_t *c)
{
	const char *reason = json_string_value(json_object_get(c, "reason"));

	snprintf(out, len, "%s %s%s%.200s (%lld ms%s)", what,
		json_string_value(json_object_get(c, "status")), reason ? ": " : "",
		reason ? reason : "", (long long)json_integer_value(json_object_get(c, "ms")),
		json_is_true(json_object_get(c, "cached")) ? ", cached" : "");
}

/* Writes the record with its compile object and lets go of it. */
static void
write_record(struct run *r, struct pending *p)
{
	json_t *ref = side_result(&p->ref), *compile;
	char a[300] = "", b[300];

	if (p->has_candidate) {
		json_t *cand = side_result(&p->cand);
		compile = json_copy(cand);
		if (r->verbose)
			describe(a, sizeof(a), "candidate", cand);
		json_decref(cand);
	} else {
		compile = json_object();
	}
	json_object_set_new(compile, "reference", ref);
	json_object_set_new(p->rec, "compile", compile);
	jsonl_put(stdout, p->rec);
	if (r->verbose) {
		describe(b, sizeof(b), "reference", ref);
		warn_line(p->line, "%s%s%s", a, *a ? "; " : "", b);
	}
	json_decref(p->rec);
	json_decref(p->cand.decided);
	json_decref(p->ref.decided);
	if (p->cand.job)
		job_release(&r->pool, p->cand.job);
	if (p->ref.job)
		job_release(&r->pool, p->ref.job);
	free(p);
}

/* Writes the records at the head of the queue whose compiles are done. */
static void
write_ready(struct run *r)
{
	struct pending *p;

	while ((p = r->head) && (!p->has_candidate || side_done(&p->cand)) &&
	    side_done(&p->ref)) {
		if (!(r->head = p->next))
			r->tail = NULL;
		r->npending--;
		write_record(r, p);
	}
}

/* Waits for the compiles, and for stdin when there is room for a record. */
static void
wait_some(struct run *r)
{
	int want = !r->in_done && r->npending < r->window;

	if (pool_wait(&r->pool, want ? r->in.fd : -1))
		input_fill(&r->in);
}

int
main(int argc, char *argv[])
{
	const char *arch = getenv("HTAM_ARCH");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = ncpu > 0 ? (int)ncpu : 1, timeout_s = 60, use_cache = 1, c;
	struct run r = { .verbose = 0 };
	char err[512];
	const char *arg;
	int next;

	setprogname(argv[0]);
	while ((c = opt_next(argc, argv, &cmdline, &arg, &next)) != -1) {
		switch (c) {
		case 'a': arch = arg; break;
		case 'j': jobs = (int)opt_int("--jobs", arg, 1, 1024); break;
		case 't': timeout_s = (int)opt_int("--timeout", arg, 1, 86400); break;
		case 'n': use_cache = 0; break;
		case 'v': r.verbose = 1; break;
		}
	}
	if (next < argc)
		opt_usage(&cmdline);
	if (toolchain_init(&r.tc, arch && *arch ? arch : "sm_90a", timeout_s,
	    err, sizeof(err)) < 0)
		die(EXIT_USAGE, "%s", err);
	cache_open(&r.cache, use_cache);
	r.pool = (struct pool){ .max = jobs, .tc = &r.tc, .cache = &r.cache };
	r.window = 2 * jobs + 2;
	input_open(&r.in, STDIN_FILENO);
	r.jl = jsonl_open(r.in.f);

	while (!r.in_done || r.head) {
		read_records(&r);
		pool_start(&r.pool);
		write_ready(&r);
		if (r.pool.running > 0)
			wait_some(&r);
	}

	jsonl_close(r.jl);
	input_close(&r.in);
	pool_free(&r.pool);
	cache_close(&r.cache);
	toolchain_free(&r.tc);
	if (r.err[0])
		die(EXIT_DATAERR, "%s", r.err);
	return EXIT_OK;
}
