/* worker.c: kbench's GPU worker. It answers one request per candidate:
 * generate inputs on the device from a seed, run the reference (once per
 * task, size and seed, then reused) and the candidate on them, compare on
 * the device, time both (every timed run on fresh inputs, some of them
 * checked), and answer with the bench object on its answer channel, a
 * descriptor of its own that no kernel can write to. It exits after a
 * sticky CUDA error, so that its parent starts a clean one. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <signal.h>

#include "codec.h"
#include "die.h"
#include "expr.h"
#include "jsonl.h"
#include "record.h"
#include "task.h"
#include "util.h"
#include "gpu.h"
#include "kbench.h"
#include "oracle.h"
#include "rng.h"

#define MAXT 16            /* inputs and outputs of a task */
#define MAXDIM 8
#define MAXREPS 100000
#define BATCH 10           /* timed runs between two reads of the clock */
#define FLOOR_SLACK 0.9    /* below 0.9 x the physical bound is impossible */
/* The floor (floor_us) counts flops at the plain fp32 rate, as the pack's
 * floors do. Tensor cores can beat that at fp32 accuracy (3xTF32), so what
 * is impossible is judged against the dense TF32 tensor rate, 8 times the
 * fp32 rate on sm_80 and sm_90: no fp32-accurate product runs faster. */
#define TENSOR_OVER_FP32 8.0
#define DUMP_MAX ((int64_t)256 << 20) /* bytes of one size set dumped, at most */
#define CHECKS_LISTED 64   /* timed runs checked, listed in the record at most */
/* Timed runs checked: one chosen at random in each of the first
 * CHECKED_BATCHES batches, and the last. Each check runs the reference on
 * that run's inputs (35 to 140 ms for the pack's products), so they are
 * few; a kernel that does less on over half its runs (as it must, to move
 * the median) is still seen with a probability of 15 in 16 or more. */
#define CHECKED_BATCHES 3

enum { NORMAL, UNIFORM, RANDINT, TRIL }; /* as devcode.cu */

struct tensor {
	const char *name;
	enum dtype dt;
	int input;
	int ndim;
	int64_t count, shape[MAXDIM];
	const json_t *spec;
	struct dbuf buf;
};

/* The reference's outputs at one seed, kept for the worker's life,
 * masked with key (0: plain) while any candidate runs. */
struct refout {
	int64_t seed;
	unsigned long long key;
	struct dbuf out[MAXT];
	double rms[MAXT];      /* of each output: atol_rms is in its units */
	struct refout *next;
};

struct sizeset {
	json_t *sizes;
	int nt;
	struct tensor t[MAXT];
	struct kplan ref;
	int64_t bytes, flops;
	struct refout *cache;
	struct refout timed;   /* the reference on a timed run's inputs */
	int ref_timed;
	double ref_us;
	double compile_us;     /* torch.compile's time (imported tasks, when asked) */
};

/* The task now loaded; a request for another task replaces it. */
static struct {
	char key[130];
	json_t *task;
	CUmodule refmod;
	int n;
	struct sizeset *s;
	double atol, rtol, rel_l2, atol_rms;
	int oracle;            /* the reference is the PyTorch oracle */
} T;

/* The candidate under test. */
struct cand {
	CUmodule mod;
	const json_t *launch, *defines;
	struct kplan kp[32];
	int ready[32];
	struct modstate ms;    /* its module-scope memory at load */
	int nchecked, checked[CHECKS_LISTED];
	unsigned long long secret; /* seeds the fresh inputs of its timed runs */
};

/* What the protocol does (all of it, unless --without switched a part off
 * to measure its cost or test the others alone). */
static struct {
	int restore, fresh, checks;
} P;

/* The key that masks the reference's cached outputs: the worker's own,
 * drawn at its start and never written to device memory. */
static unsigned long long mask_key;

struct verdict {
	int set;             /* a verdict was given: status holds it */
	enum outcome status;
	char reason[1024];
	int fatal;
	json_t *mismatch;
};

/* What the checks found, over all trials. */
struct acc {
	double max_abs, max_rel, rel_l2;
	int zero_fails, trials;
	double ms_setup, ms_inputs, ms_ref, ms_checks, ms_timing, ms_dump;
	double ms_timed_checks, ms_lock_wait;
};

static int cur_k = -1;
static int64_t cur_seed = -1;

static int
verdict(struct verdict *v, enum outcome status, int fatal, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof v->reason, fmt, ap);
	va_end(ap);
	v->set = 1;
	v->status = status;
	v->fatal = fatal;
	return -1;
}

/* A device-layer failure: out of memory rejects the candidate, anything
 * else is a crash that ends the worker (its context may be poisoned). */
static int
gpu_failed(int r, struct verdict *v)
{
	if (r == -2)
		return verdict(v, OUT_REJECTED, 0, "%s", gpu_err);
	return verdict(v, OUT_CRASH, 1, "%s", gpu_err);
}

#define GPU(call) do { int r_ = (call); if (r_ < 0) return gpu_failed(r_, v); } while (0)

static void
refout_free(struct refout *r)
{
	for (int i = 0; i < MAXT; i++)
		dbuf_free(&r->out[i]);
	free(r);
}

/* Frees cached reference outputs and tensors not in use now (gpu_evict). */
static int
evict(void)
{
	int freed = 0;
	for (int k = 0; k < T.n; k++) {
		struct sizeset *s = &T.s[k];
		for (struct refout **p = &s->cache; *p;) {
			if (k == cur_k && (*p)->seed == cur_seed) {
				p = &(*p)->next;
				continue;
			}
			struct refout *r = *p;
			*p = r->next;
			refout_free(r);
			freed = 1;
		}
		if (k != cur_k)
			for (int i = 0; i < s->nt; i++)
				if (s->t[i].buf.base) {
					dbuf_free(&s->t[i].buf);
					freed = 1;
				}
	}
	return freed;
}

static void
task_leave(void)
{
	for (int k = 0; k < T.n; k++) {
		struct sizeset *s = &T.s[k];
		while (s->cache) {
			struct refout *r = s->cache;
			s->cache = r->next;
			refout_free(r);
		}
		for (int i = 0; i < s->nt; i++) {
			dbuf_free(&s->t[i].buf);
			dbuf_free(&s->timed.out[i]);
		}
		kplan_free(&s->ref);
		json_decref(s->sizes);
	}
	free(T.s);
	if (T.refmod)
		cu.cuModuleUnload(T.refmod);
	json_decref(T.task);
	memset(&T, 0, sizeof T);
}

/* Loads a cubin (base64); *bin gets its bytes (the caller frees them)
 * when bin is not NULL. Returns 0, or -1 with why set. */
static int
load_cubin(const char *b64, CUmodule *mod, void **bin, size_t *len, char *why,
	size_t whylen)
{
	size_t n;
	void *b = b64 ? b64_decode(b64, &n) : NULL;
	if (!b) {
		snprintf(why, whylen, "the cubin is not base64");
		return -1;
	}
	CUresult r = cu.cuModuleLoadData(mod, b);
	if (r != CUDA_SUCCESS) {
		free(b);
		snprintf(why, whylen, "the cubin does not load: %s", cudrv_strerror(r));
		return -1;
	}
	if (bin) {
		*bin = b;
		*len = n;
	} else {
		free(b);
	}
	return 0;
}

/* Evaluates a plan at size set k with the given knobs and readies it. */
static int
plan_ready(struct kplan *kp, const json_t *plan, const json_t *defines, int k,
	CUmodule mod, const char *who, struct verdict *v)
{
	char err[512];
	json_t *vars = plan_vars(T.s[k].sizes, defines, err, sizeof err);
	if (!vars)
		return verdict(v, OUT_REJECTED, 0, "%s launch plan: %s", who, err);
	int r = plan_eval(plan, T.task, vars, &kp->p, err, sizeof err);
	json_decref(vars);
	if (r < 0)
		return verdict(v, OUT_REJECTED, 0, "%s launch plan: %s", who, err);
	r = kplan_ready(kp, mod, err, sizeof err);
	if (r != 0)
		kplan_free(kp);
	if (r == 1)
		return verdict(v, OUT_REJECTED, 0, "%s: %s", who, err);
	GPU(r);
	return 0;
}

/* Makes the request's task the current one, keeping all its state (the
 * reference's outputs and time) when it already is. On failure no task is
 * current. */
static int task_setup(const json_t *task, const char *ref_cubin, struct verdict *v);

static int
task_enter(const json_t *task, const char *ref_cubin, struct verdict *v)
{
	char key[130];
	json_sha256_hex(task, key);
	sha256_hex(ref_cubin ? ref_cubin : "", ref_cubin ? strlen(ref_cubin) : 0, key + 64);
	if (T.task && !strcmp(key, T.key))
		return 0;
	task_leave();
	if (task_setup(task, ref_cubin, v) < 0) {
		task_leave();
		return -1;
	}
	memcpy(T.key, key, sizeof key);
	return 0;
}

/* Loads a task: its size sets, tensors, reference module and plans. */
static int
task_setup(const json_t *task, const char *ref_cubin, struct verdict *v)
{
	char err[512];
	T.task = json_deep_copy(task);
	const json_t *tol = json_object_get(task, "tolerance");
	T.atol = json_number_value(json_object_get(tol, "atol"));
	T.rtol = json_number_value(json_object_get(tol, "rtol"));
	T.rel_l2 = json_is_number(json_object_get(tol, "rel_l2"))
		? json_number_value(json_object_get(tol, "rel_l2")) : INFINITY;
	T.atol_rms = json_number_value(json_object_get(tol, "atol_rms"));
	T.oracle = task_oracle(task);
	json_t *sizes = task_sizes(T.task);
	T.n = (int)json_array_size(sizes);
	T.s = xcalloc((size_t)T.n, sizeof *T.s);
	for (int k = 0; k < T.n; k++) {
		struct sizeset *s = &T.s[k];
		s->sizes = json_incref(json_array_get(sizes, k));
		task_cost(T.task, s->sizes, &s->bytes, &s->flops, err, sizeof err);
		const char *lists[] = {"inputs", "outputs"};
		for (int l = 0; l < 2; l++) {
			const json_t *arr = json_object_get(T.task, lists[l]), *t;
			size_t i;
			json_array_foreach(arr, i, t) {
				struct tensor *x = &s->t[s->nt];
				if (s->nt == MAXT) {
					json_decref(sizes);
					return verdict(v, OUT_REJECTED, 0, "more than %d tensors", MAXT);
				}
				x->spec = t;
				x->name = json_string_value(json_object_get(t, "name"));
				x->input = l == 0;
				dtype_parse(json_string_value(json_object_get(t, "dtype")), &x->dt);
				const json_t *shape = json_object_get(t, "shape"), *d;
				size_t j;
				x->count = 1;
				json_array_foreach(shape, j, d) {
					if (x->ndim < MAXDIM &&
						expr_eval_json(d, s->sizes, &x->shape[x->ndim], err, sizeof err) == 0)
						x->count *= x->shape[x->ndim];
					x->ndim++;
				}
				s->nt++;
			}
		}
	}
	json_decref(sizes);
	if (T.oracle) {
		if (oracle_start(T.task, err, sizeof err) < 0)
			return verdict(v, OUT_CRASH, 0, "%s", err);
		return 0;
	}
	oracle_stop();
	if (load_cubin(ref_cubin, &T.refmod, NULL, NULL, err, sizeof err) < 0) {
		T.refmod = NULL;
		return verdict(v, OUT_REJECTED, 0, "reference: %s", err);
	}
	const json_t *plan = json_object_get(json_object_get(T.task, "reference"), "launch");
	for (int k = 0; k < T.n; k++)
		if (plan_ready(&T.s[k].ref, plan, NULL, k, T.refmod, "reference", v) < 0)
			return -1;
	return 0;
}

/* The buffers a plan sees: inputs, and outputs (the size set's own, or
 * the reference cache's). */
static int
buffers(struct sizeset *s, struct dbuf *outs, struct bufname *b)
{
	for (int i = 0; i < s->nt; i++) {
		b[i].name = s->t[i].name;
		b[i].ptr = s->t[i].input || !outs ? s->t[i].buf.ptr : outs[i].ptr;
	}
	return s->nt;
}

static void sizes_text(const json_t *sizes, char *buf, size_t n);

/* Fills the outputs (outs, else size set s's own) with poison (POISON_B
 * as an f16 output has it) and the plan's workspace with POISON_A, on the
 * stream. */
static int
poison_plan(struct kplan *kp, struct sizeset *s, struct dbuf *outs, unsigned poison)
{
	for (int i = 0; i < s->nt; i++) {
		unsigned pat = poison == POISON_B && s->t[i].dt == DT_F16 ? POISON_B_F16 : poison;
		int r = s->t[i].input ? 0 : dbuf_poison(outs ? &outs[i] : &s->t[i].buf, pat);
		if (r < 0)
			return r;
	}
	return kplan_poison(kp);
}

/* Poisons the outputs and the workspace, restores the module's state
 * (ms, the candidate's; NULL for the reference), runs the plan and waits
 * for it. */
static int
run_plan(struct kplan *kp, struct sizeset *s, struct dbuf *outs, unsigned poison,
	const struct modstate *ms, struct verdict *v)
{
	struct bufname b[MAXT];
	int nb = buffers(s, outs, b);
	GPU(poison_plan(kp, s, outs, poison));
	if (ms)
		GPU(modstate_restore(ms));
	GPU(kplan_launch(kp, b, nb));
	CUresult e = cu.cuStreamSynchronize(G.stream);
	if (e != CUDA_SUCCESS) {
		char sz[256];
		sizes_text(s->sizes, sz, sizeof sz);
		return verdict(v, OUT_CRASH, 1, "%s's kernels failed at%s: %s",
			kp == &s->ref ? "the reference" : "the candidate", sz, cudrv_strerror(e));
	}
	return 0;
}

/* The reference's outputs on the inputs in place, into outs: its kernel's
 * plan, or the PyTorch oracle for an imported task. Then each output's
 * rms, which atol_rms is a multiple of. */
static int
ref_run(struct sizeset *s, struct refout *r, struct verdict *v)
{
	if (!T.oracle) {
		if (run_plan(&s->ref, s, r->out, POISON_A, NULL, v) < 0)
			return -1;
	} else {
		struct oracle_tensor ot[MAXT];
		char err[1024];
		for (int i = 0; i < s->nt; i++) {
			if (!s->t[i].input)
				GPU(dbuf_poison(&r->out[i], POISON_A));
			ot[i] = (struct oracle_tensor){ s->t[i].name,
				s->t[i].input ? &s->t[i].buf : &r->out[i], s->t[i].input,
				s->t[i].dt, s->t[i].ndim, s->t[i].shape };
		}
		if (oracle_run((int)(s - T.s), s->sizes, s->nt, ot, err, sizeof err) < 0)
			return verdict(v, OUT_CRASH, 0, "%s", err);
	}
	for (int i = 0; i < s->nt; i++) {
		struct kb_stats st;
		r->rms[i] = 0;
		if (s->t[i].input || T.atol_rms <= 0)
			continue;
		GPU(gpu_compare(r->out[i].ptr, r->out[i].ptr, s->t[i].count, s->t[i].dt, 0, 0, 0,
			&st));
		r->rms[i] = sqrt(st.sq_ref / (double)(s->t[i].count ? s->t[i].count : 1));
	}
	return 0;
}

/* Draws a number of a distribution spec for a per-seed scale. */
static double
draw(const json_t *d, unsigned long long bits)
{
	const char *dist = json_string_value(json_object_get(d, "dist"));
	double u = kb_unit(bits);
	if (dist && !strcmp(dist, "normal")) {
		double u1 = 1.0 - u, u2 = kb_unit(kb_mix(bits));
		return json_number_value(json_object_get(d, "mean"))
			+ json_number_value(json_object_get(d, "std"))
			* sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
	}
	double lo = json_number_value(json_object_get(d, "low"));
	return lo + (json_number_value(json_object_get(d, "high")) - lo) * u;
}

/* Fills input i of size set s for a seed, from its init spec. */
static int
fill_input(struct sizeset *s, int i, int64_t seed, struct verdict *v)
{
	struct tensor *x = &s->t[i];
	const json_t *init = json_object_get(x->spec, "init");
	const char *dist = json_string_value(json_object_get(init, "dist"));
	int kind = !dist || !strcmp(dist, "normal") ? NORMAL
		: !strcmp(dist, "uniform") ? UNIFORM : !strcmp(dist, "tril") ? TRIL : RANDINT;
	double a, b, scale = 1;
	int64_t lo, hi;
	char err[256];
	if (kind == NORMAL) {
		a = json_number_value(json_object_get(init, "mean"));
		b = json_is_number(json_object_get(init, "std"))
			? json_number_value(json_object_get(init, "std")) : 1;
	} else if (kind == UNIFORM) {
		a = json_number_value(json_object_get(init, "low"));
		b = json_number_value(json_object_get(init, "high"));
	} else if (kind == TRIL) {
		/* the last two axes (task.c holds that there are two) */
		a = (double)x->shape[x->ndim - 2];
		b = (double)x->shape[x->ndim - 1];
	} else {
		if (expr_eval_json(json_object_get(init, "low"), s->sizes, &lo, err, sizeof err) < 0
			|| expr_eval_json(json_object_get(init, "high"), s->sizes, &hi, err, sizeof err) < 0)
			return verdict(v, OUT_REJECTED, 0, "input %s: init: %s", x->name, err);
		a = (double)lo;
		b = (double)hi;
	}
	const json_t *sc = json_object_get(init, "scale");
	if (json_is_object(sc))
		scale = draw(sc, kb_bits(kb_key((unsigned long long)seed, 100000 + i), 0));
	GPU(gpu_fill(x->buf.ptr, x->count, x->dt, kind, a, b, scale,
		kb_key((unsigned long long)seed, i)));
	return 0;
}

/* Allocates the tensors of size set s if they are not. */
static int
tensors_ready(struct sizeset *s, struct verdict *v)
{
	for (int i = 0; i < s->nt; i++)
		if (!s->t[i].buf.base)
			GPU(dbuf_alloc(&s->t[i].buf, (size_t)s->t[i].count * dtype_size(s->t[i].dt)));
	return 0;
}

static int
checksums(struct sizeset *s, unsigned long long *sum, struct verdict *v)
{
	for (int i = 0; i < s->nt; i++)
		if (s->t[i].input)
			GPU(gpu_checksum(s->t[i].buf.ptr, s->t[i].buf.bytes, &sum[i]));
	return 0;
}

/* The first input whose checksum changed, or -1. */
static int
changed_input(struct sizeset *s, const unsigned long long *a, const unsigned long long *b)
{
	for (int i = 0; i < s->nt; i++)
		if (s->t[i].input && a[i] != b[i])
			return i;
	return -1;
}

/* The reference's outputs for (s, seed), computed now if not cached;
 * the inputs must hold that seed's values. */
static struct refout *
ref_outputs(struct sizeset *s, int64_t seed, const unsigned long long *sum0,
	struct acc *acc, struct verdict *v)
{
	for (struct refout *r = s->cache; r; r = r->next)
		if (r->seed == seed)
			return r;
	double t0 = now_ms();
	struct refout *r = xcalloc(1, sizeof *r);
	r->seed = seed;
	unsigned long long sum1[MAXT];
	for (int i = 0; i < s->nt; i++) {
		int e;
		if (!s->t[i].input && (e = dbuf_alloc(&r->out[i],
			(size_t)s->t[i].count * dtype_size(s->t[i].dt))) < 0) {
			refout_free(r);
			gpu_failed(e, v);
			return NULL;
		}
	}
	int bad;
	if (ref_run(s, r, v) < 0 || checksums(s, sum1, v) < 0) {
		refout_free(r);
		return NULL;
	}
	if ((bad = changed_input(s, sum0, sum1)) >= 0) {
		refout_free(r);
		verdict(v, OUT_REJECTED, 0, "the task's reference changed its input %s",
			s->t[bad].name);
		return NULL;
	}
	/* Masked before any candidate runs: a kernel that reads past its own
	 * buffers into this cache finds no answer in it. */
	for (int i = 0; i < s->nt; i++)
		if (!s->t[i].input && gpu_mask(&r->out[i], mask_key) < 0) {
			refout_free(r);
			gpu_failed(-1, v);
			return NULL;
		}
	r->key = mask_key;
	r->next = s->cache;
	s->cache = r;
	acc->ms_ref += now_ms() - t0;
	return r;
}

/* Unmasks n bytes at h, copied from byte offset off of a buffer masked
 * with key (devcode.cu's kb_mask: 32-bit words; off is a multiple of 4). */
static void
unmask(void *h, size_t off, size_t n, unsigned long long key)
{
	if (!key)
		return;
	for (size_t w = 0; w < n / 4; w++) {
		uint32_t u;
		memcpy(&u, (char *)h + 4 * w, 4);
		u ^= (uint32_t)kb_bits(key, off / 4 + w);
		memcpy((char *)h + 4 * w, &u, 4);
	}
}

/* An IEEE binary16 value's bits as a double. */
static double
f16_value(uint16_t h)
{
	int e = h >> 10 & 0x1F;
	double m = h & 0x3FF, v;
	if (e == 0x1F)
		v = m ? NAN : INFINITY;
	else if (e)
		v = ldexp(1024 + m, e - 25);
	else
		v = ldexp(m, -24);
	return h & 0x8000 ? -v : v;
}

/* Element i of a device tensor (masked with key, 0: plain) as JSON: a
 * number, or "nan", "inf", "-inf". The copy is of whole 32-bit words, as
 * the mask is. */
static json_t *
element(CUdeviceptr p, enum dtype dt, int64_t i, unsigned long long key)
{
	unsigned char w[8];
	size_t at = (size_t)i * dtype_size(dt), off = at & ~(size_t)3;
	size_t len = dtype_size(dt) < 4 ? 4 : dtype_size(dt);
	if (cu.cuMemcpyDtoHAsync(w, p + off, len, G.stream) || cu.cuStreamSynchronize(G.stream))
		return json_null();
	unmask(w, off, len, key);
	unsigned char *b = w + (at - off);
	double d;
	if (DTYPE_INTEGRAL(dt)) {
		int64_t n = 0;
		if (dt == DT_BOOL) {
			n = b[0];
		} else if (dt == DT_I32) {
			int32_t k;
			memcpy(&k, b, 4);
			n = k;
		} else {
			memcpy(&n, b, 8);
		}
		return json_integer(n);
	}
	if (dt == DT_F32) {
		float f;
		memcpy(&f, b, 4);
		d = f;
	} else if (dt == DT_F16 || dt == DT_BF16) {
		uint16_t h;
		memcpy(&h, b, 2);
		if (dt == DT_F16) {
			d = f16_value(h);
		} else {
			uint32_t u = (uint32_t)h << 16;
			float f;
			memcpy(&f, &u, 4);
			d = f;
		}
	} else {
		memcpy(&d, b, 8);
	}
	if (isnan(d))
		return json_string("nan");
	if (isinf(d))
		return json_string(d > 0 ? "inf" : "-inf");
	return json_real(d);
}

/* " rows=37 cols=4099" */
static void
sizes_text(const json_t *sizes, char *buf, size_t n)
{
	const char *k;
	json_t *val;
	size_t used = 0;
	buf[0] = '\0';
	json_object_foreach((json_t *)sizes, k, val)
		if (used < n)
			used += snprintf(buf + used, n - used, " %s=%lld", k,
				(long long)json_integer_value(val));
}

/* Compares every output with the reference's. Returns 0 when all match,
 * 1 when all match but a reference value equals the poison (so an
 * unwritten element could hide there), -1 with the verdict otherwise. */
static int
compare(struct sizeset *s, struct refout *r, int64_t seed, unsigned poison,
	struct acc *acc, struct verdict *v)
{
	int collide = 0;
	for (int i = 0; i < s->nt; i++) {
		struct tensor *x = &s->t[i];
		struct kb_stats st;
		if (x->input)
			continue;
		GPU(gpu_compare(x->buf.ptr, r->out[i].ptr, x->count, x->dt,
			T.atol + T.atol_rms * r->rms[i], T.rtol, r->key, &st));
		double l2 = st.sq_ref > 0 ? sqrt(st.sq_diff / st.sq_ref)
			: st.sq_diff > 0 ? INFINITY : 0;
		acc->max_abs = fmax(acc->max_abs, st.max_abs);
		acc->max_rel = fmax(acc->max_rel, st.max_rel);
		acc->rel_l2 = fmax(acc->rel_l2, l2);
		acc->zero_fails |= st.zero_bad > 0;
		collide |= st.collide > 0;
		char sz[256];
		sizes_text(s->sizes, sz, sizeof sz);
		if (st.bad) {
			json_t *got = element(x->buf.ptr, x->dt, (int64_t)st.first_bad, 0);
			json_t *want = element(r->out[i].ptr, x->dt, (int64_t)st.first_bad, r->key);
			char *g = json_dumps(got, JSON_ENCODE_ANY), *w = json_dumps(want, JSON_ENCODE_ANY);
			verdict(v, OUT_INCORRECT, 0, "output %s at%s, seed %lld: %llu of %lld "
				"elements wrong; first at index %llu: got %s, want %s%s", x->name,
				sz, (long long)seed, st.bad, (long long)x->count, st.first_bad,
				g, w, poison == POISON_A && json_is_string(got) && !strcmp(
				json_string_value(got), "nan") ? " (NaN is the poison: an element never "
				"written, or computed from a read out of bounds)" : "");
			free(g);
			free(w);
			v->mismatch = json_pack("{ss sI so so sO sI}", "output", x->name,
				"index", (json_int_t)st.first_bad, "got", got, "want", want,
				"sizes", s->sizes, "seed", (json_int_t)seed);
			return -1;
		}
		if (l2 > T.rel_l2)
			return verdict(v, OUT_INCORRECT, 0, "output %s at%s, seed %lld: relative "
				"L2 error %.3g exceeds the tolerance %.3g", x->name, sz,
				(long long)seed, l2, T.rel_l2);
	}
	return collide;
}

/* Writes the inputs, the reference's outputs and the candidate's as .npy
 * files under DIR/line<N>/size<k>/, with meta.json naming sizes and seed. */
static void
dump(const char *dir, long line, int k, struct sizeset *s, struct refout *r, int64_t seed)
{
	int64_t total = 0;
	for (int i = 0; i < s->nt; i++)
		total += (int64_t)s->t[i].buf.bytes * (s->t[i].input ? 1 : 2);
	char *d = xasprintf("%s/line%ld/size%d", dir, line, k);
	if (total > DUMP_MAX) {
		warnf("%s: not dumped: %lld bytes (more than %lld)", d, (long long)total,
			(long long)DUMP_MAX);
		free(d);
		return;
	}
	if (mkdir_p(d, 0777) < 0) {
		warnf("%s:", d);
		free(d);
		return;
	}
	for (int i = 0; i < s->nt; i++) {
		struct tensor *x = &s->t[i];
		for (int which = 0; which < (x->input ? 1 : 2); which++) {
			void *h = xmalloc(x->buf.bytes ? x->buf.bytes : 1);
			CUdeviceptr src = x->input || which == 1 ? x->buf.ptr : r->out[i].ptr;
			char *path = xasprintf("%s/%s%s.npy", d, x->input ? "" : which ? "out_"
				: "ref_", x->name);
			int ok = cu.cuMemcpyDtoHAsync(h, src, x->buf.bytes, G.stream) == CUDA_SUCCESS
				&& cu.cuStreamSynchronize(G.stream) == CUDA_SUCCESS;
			if (ok && !x->input && which == 0)
				unmask(h, 0, x->buf.bytes, r->key);
			if (ok && npy_write(path, dtype_name(x->dt), x->shape, x->ndim, h,
				(size_t)x->count * dtype_size(x->dt)) < 0)
				warnf("%s:", path);
			free(path);
			free(h);
		}
	}
	json_t *meta = json_pack("{sO sO sI}", "task", json_object_get(T.task, "id"),
		"sizes", s->sizes, "seed", (json_int_t)seed);
	char *path = xasprintf("%s/meta.json", d), *text = json_dumps(meta, JSON_INDENT(1));
	if (!text || write_file_atomic(path, text, strlen(text)) < 0)
		warnf("%s:", path);
	free(text);
	json_decref(meta);
	free(path);
	free(d);
}

/* One trial: fresh inputs of size set k from seed, the reference's
 * outputs for them, the candidate on poisoned outputs; then the inputs
 * must be unchanged, the guards intact and the outputs must match. */
static int
trial(struct cand *c, int k, int64_t seed, const json_t *req, struct acc *acc,
	struct verdict *v)
{
	struct sizeset *s = &T.s[k];
	unsigned long long sum0[MAXT], sum1[MAXT];
	char sz[256];
	cur_k = k;
	cur_seed = seed;
	if (!c->ready[k]) {
		double t0 = now_ms();
		if (plan_ready(&c->kp[k], c->launch, c->defines, k, c->mod, "candidate", v) < 0)
			return -1;
		c->ready[k] = 1;
		acc->ms_setup += now_ms() - t0;
	}
	double t0 = now_ms();
	if (tensors_ready(s, v) < 0)
		return -1;
	for (int i = 0; i < s->nt; i++)
		if (s->t[i].input && fill_input(s, i, seed, v) < 0)
			return -1;
	if (checksums(s, sum0, v) < 0)
		return -1;
	acc->ms_inputs += now_ms() - t0;
	struct refout *r = ref_outputs(s, seed, sum0, acc, v);
	if (!r)
		return -1;
	sizes_text(s->sizes, sz, sizeof sz);
	t0 = now_ms();
	unsigned poison[] = {POISON_A, POISON_B};
	for (int p = 0; p < 2; p++) {
		int bad;
		unsigned long long guard;
		if (run_plan(&c->kp[k], s, NULL, poison[p], P.restore ? &c->ms : NULL, v) < 0
			|| checksums(s, sum1, v) < 0)
			return -1;
		if ((bad = changed_input(s, sum0, sum1)) >= 0)
			return verdict(v, OUT_INCORRECT, 0, "changed its input %s (at%s, seed %lld)",
				s->t[bad].name, sz, (long long)seed);
		for (int i = 0; i < s->nt; i++) {
			GPU(dbuf_guards(&s->t[i].buf, &guard));
			if (guard)
				return verdict(v, OUT_INCORRECT, 0, "wrote out of bounds: %llu words "
					"of the guard zones around %s changed (at%s, seed %lld)", guard,
					s->t[i].name, sz, (long long)seed);
		}
		const char *dir = json_string_value(json_object_get(json_object_get(req,
			"opts"), "dump"));
		if (dir && p == 0 && seed == json_integer_value(json_object_get(json_object_get(
			req, "opts"), "seed"))) {
			double t1 = now_ms();
			dump(dir, (long)json_integer_value(json_object_get(req, "line")), k, s, r, seed);
			acc->ms_dump += now_ms() - t1;
			t0 += now_ms() - t1;
		}
		int rc = compare(s, r, seed, poison[p], acc, v);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
		/* A reference value equals the first poison: run again with the
		 * second, so an element never written cannot pass. */
	}
	acc->trials++;
	acc->ms_checks += now_ms() - t0;
	return 0;
}

struct timing {
	double median, min, max;
	int reps;
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median_of(const double *t, int n, double *scratch)
{
	memcpy(scratch, t, (size_t)n * sizeof *t);
	qsort(scratch, (size_t)n, sizeof *t, cmp_double);
	return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

/* 64 random bits from the kernel's generator (a kernel cannot predict them). */
static unsigned long long
random64(void)
{
	unsigned long long r = 0;
	while (getrandom(&r, sizeof r, 0) != sizeof r)
		;
	return r;
}

/* The seed of the fresh inputs of timed run rep: positive, and far from
 * the small seeds of the trials. */
static int64_t
rep_seed(unsigned long long secret, int rep)
{
	return (int64_t)((kb_mix(secret ^ (unsigned long long)rep) >> 3) | (1ULL << 60));
}

/* Fills every input of size set s for a seed. */
static int
fill_inputs(struct sizeset *s, int64_t seed, struct verdict *v)
{
	for (int i = 0; i < s->nt; i++)
		if (s->t[i].input && fill_input(s, i, seed, v) < 0)
			return -1;
	return 0;
}

/* Checks timed run rep of the candidate, whose outputs are still in
 * place: it ran on inputs drawn from seed, whose checksums before the run
 * are in before. The guards must be intact and the inputs unchanged, and
 * the outputs must match the reference's on those inputs, at the task's
 * tolerance. Outside the timed events. */
static int
timed_check(struct cand *c, int rep, int64_t seed, const unsigned long long *before,
	struct acc *acc, struct verdict *v)
{
	struct sizeset *s = &T.s[0];
	struct refout *r = &s->timed;
	unsigned long long after[MAXT], guard;
	char sz[256];
	double t0 = now_ms();
	int bad;

	sizes_text(s->sizes, sz, sizeof sz);
	CUresult e = cu.cuStreamSynchronize(G.stream);
	if (e != CUDA_SUCCESS)
		return verdict(v, OUT_CRASH, 1, "the candidate's kernels failed in timed run "
			"%d at%s: %s", rep + 1, sz, cudrv_strerror(e));
	for (int i = 0; i < s->nt; i++) {
		GPU(dbuf_guards(&s->t[i].buf, &guard));
		if (guard)
			return verdict(v, OUT_INCORRECT, 0, "wrote out of bounds in timed run %d: "
				"%llu words of the guard zones around %s changed (at%s)", rep + 1,
				guard, s->t[i].name, sz);
	}
	if (checksums(s, after, v) < 0)
		return -1;
	if ((bad = changed_input(s, before, after)) >= 0)
		return verdict(v, OUT_INCORRECT, 0, "changed its input %s in timed run %d (at%s)",
			s->t[bad].name, rep + 1, sz);
	for (int i = 0; i < s->nt; i++)
		if (!s->t[i].input && !r->out[i].base)
			GPU(dbuf_alloc(&r->out[i], (size_t)s->t[i].count * dtype_size(s->t[i].dt)));
	r->seed = seed;
	r->key = 0;
	if (ref_run(s, r, v) < 0)
		return -1;
	int rc = compare(s, r, seed, POISON_A, acc, v);
	/* The reference's answer does not stay in memory for a later run. */
	for (int i = 0; i < s->nt; i++)
		if (!s->t[i].input)
			GPU(dbuf_poison(&r->out[i], POISON_A));
	if (rc < 0) {
		char *why = xasprintf("timed run %d differed from the reference%s: %s",
			rep + 1, P.fresh ? ", on inputs drawn fresh for it" : "", v->reason);
		size_t n = strlen(why) < sizeof v->reason ? strlen(why) : sizeof v->reason - 1;
		memcpy(v->reason, why, n);
		v->reason[n] = '\0';
		free(why);
		return -1;
	}
	if (c->nchecked < CHECKS_LISTED)
		c->checked[c->nchecked] = rep + 1;
	c->nchecked++;
	acc->ms_timed_checks += now_ms() - t0;
	return 0;
}

/* One timed run (rep) of a plan: fresh inputs (unless P.fresh is off),
 * poisoned outputs and workspace, restored module state, a flushed L2,
 * then the plan's launches alone between events ev[0] and ev[1]. When
 * check, the inputs' checksums are taken before the run and the run is
 * checked after it (timed_check). Returns 0, or -1 with the verdict. */
static int
timed_run(struct kplan *kp, struct cand *c, int rep, int64_t seed, int check,
	const struct bufname *b, int nb, CUevent *ev, struct acc *acc, struct verdict *v)
{
	struct sizeset *s = &T.s[0];
	const struct modstate *ms = c && P.restore ? &c->ms : NULL;
	unsigned long long before[MAXT];
	if (P.fresh && fill_inputs(s, seed, v) < 0)
		return -1;
	if (check && checksums(s, before, v) < 0)
		return -1;
	GPU(poison_plan(kp, s, NULL, POISON_A));
	if (ms)
		GPU(modstate_restore(ms));
	GPU(gpu_flush_l2());
	if (cu.cuEventRecord(ev[0], G.stream) != CUDA_SUCCESS || kplan_launch(kp, b, nb) < 0
		|| cu.cuEventRecord(ev[1], G.stream) != CUDA_SUCCESS)
		return verdict(v, OUT_CRASH, 1, "while timing: %s", gpu_err[0] ? gpu_err
			: "a CUDA call failed");
	return check ? timed_check(c, rep, seed, before, acc, v) : 0;
}

/* Times a plan at size set 0: a warm-up, then batches of timed runs
 * (timed_run), each on fresh inputs drawn from seeds the kernel cannot
 * predict, until there are min_reps runs and the median moved by less
 * than 0.5% over the last batch, or the time budget is spent (checks do
 * not count against it); then one more run, the last. For a candidate,
 * one run chosen at random in each of the first batches
 * (CHECKED_BATCHES), and the last run, are checked against the
 * reference. c is NULL for the reference. */
static int
time_plan(struct kplan *kp, struct cand *c, const json_t *opts, struct timing *tm,
	struct acc *acc, struct verdict *v)
{
	struct sizeset *s = &T.s[0];
	struct bufname b[MAXT];
	int nb = buffers(s, NULL, b);
	int64_t min_reps = json_integer_value(json_object_get(opts, "min_reps"));
	int64_t seed0 = json_integer_value(json_object_get(opts, "seed"));
	double budget = (double)json_integer_value(json_object_get(opts, "budget_ms"));
	int check = c && P.checks;
	unsigned long long secret = c ? c->secret : random64(), pick = random64();
	CUevent ev[2 * BATCH] = {0};
	double *t = xmalloc(MAXREPS * sizeof *t), *scratch = xmalloc(MAXREPS * sizeof *t);
	int n = 0, ok = 0;
	double prev = 0, t0 = now_ms(), t_checks = acc->ms_timed_checks;
	for (int i = 0; i < 2 * BATCH; i++)
		if (cu.cuEventCreate(&ev[i], CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
			verdict(v, OUT_CRASH, 1, "while timing: cannot create events");
			goto out;
		}
	if (run_plan(kp, s, NULL, POISON_A, c && P.restore ? &c->ms : NULL, v) < 0)
		goto out;
	/* The batches, then the last run alone (batch of one), checked. */
	for (int last = 0;; ) {
		int batch = last ? 1 : BATCH;
		int chosen = last ? (check ? 0 : -1) : check && n / BATCH < CHECKED_BATCHES
			? (int)((pick = kb_mix(pick)) % BATCH) : -1;
		for (int r = 0; r < batch; r++) {
			int64_t seed = P.fresh ? rep_seed(secret, n + r) : seed0;
			if (timed_run(kp, c, n + r, seed, r == chosen, b, nb, &ev[2 * r], acc, v) < 0)
				goto out;
		}
		CUresult e = cu.cuEventSynchronize(ev[2 * batch - 1]);
		if (e != CUDA_SUCCESS) {
			verdict(v, OUT_CRASH, 1, "while timing: %s", cudrv_strerror(e));
			goto out;
		}
		for (int r = 0; r < batch; r++) {
			float ms;
			if (cu.cuEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]) != CUDA_SUCCESS) {
				verdict(v, OUT_CRASH, 1, "while timing: cannot read the events");
				goto out;
			}
			t[n++] = ms * 1e3;
		}
		if (last)
			break;
		double m = median_of(t, n, scratch);
		int stable = n > BATCH && fabs(m - prev) <= 0.005 * m;
		double spent = now_ms() - t0 - (acc->ms_timed_checks - t_checks);
		prev = m;
		last = (n >= min_reps && (stable || spent >= budget)) || n + BATCH + 1 > MAXREPS;
	}
	tm->median = median_of(t, n, scratch);
	tm->min = scratch[0];
	tm->max = scratch[n - 1];
	tm->reps = n;
	ok = 1;
out:
	for (int i = 0; i < 2 * BATCH; i++)
		if (ev[i])
			cu.cuEventDestroy(ev[i]);
	free(t);
	free(scratch);
	return ok ? 0 : -1;
}

/* PyTorch's own times at the benchmark size, on inputs drawn as for a
 * trial, into the size set's ref_us (eager) and compile_us. */
static int
oracle_timing(const json_t *opts, struct verdict *v)
{
	struct sizeset *s = &T.s[0];
	struct oracle_tensor ot[MAXT];
	char err[1024];
	if (tensors_ready(s, v) < 0 || fill_inputs(s, json_integer_value(json_object_get(opts,
		"seed")), v) < 0)
		return -1;
	for (int i = 0; i < s->nt; i++)
		ot[i] = (struct oracle_tensor){ s->t[i].name, &s->t[i].buf, s->t[i].input,
			s->t[i].dt, s->t[i].ndim, s->t[i].shape };
	if (oracle_time(s->sizes, s->nt, ot, opts, &s->ref_us, &s->compile_us, err,
		sizeof err) < 0)
		return verdict(v, OUT_CRASH, 0, "%s", err);
	return 0;
}

/* A record without a candidate, of an imported task: there is no kernel
 * to check, only PyTorch to time; its eager time is the record's. */
static int
oracle_alone(const json_t *opts, struct timing *tm, struct acc *acc, struct verdict *v)
{
	acc->ms_lock_wait += gpu_lock();
	double t0 = now_ms();
	int r = oracle_timing(opts, v);
	acc->ms_ref += now_ms() - t0;
	gpu_unlock();
	if (r < 0)
		return -1;
	T.s[0].ref_timed = 1;
	*tm = (struct timing){ T.s[0].ref_us, T.s[0].ref_us, T.s[0].ref_us, 1 };
	return 0;
}

/* The checks and timings of one request, filling acc, tm and ref time. */
static int
bench(const json_t *req, struct cand *c, struct acc *acc, struct timing *tm,
	struct verdict *v)
{
	const json_t *opts = json_object_get(req, "opts");
	int64_t seeds = json_integer_value(json_object_get(opts, "seeds"));
	int64_t seed = json_integer_value(json_object_get(opts, "seed"));
	char why[512];
	void *bin = NULL;
	size_t len = 0;
	double t0 = now_ms();
	if (task_enter(json_object_get(req, "task"), json_string_value(json_object_get(
		req, "ref_cubin")), v) < 0)
		return -1;
	if (T.n > 32)
		return verdict(v, OUT_REJECTED, 0, "more than 32 size sets");
	if (T.oracle && !json_is_string(json_object_get(req, "cubin")))
		return oracle_alone(opts, tm, acc, v);
	if (load_cubin(json_string_value(json_object_get(req, "cubin")), &c->mod, &bin,
		&len, why, sizeof why) < 0) {
		c->mod = NULL;
		return verdict(v, OUT_REJECTED, 0, "%s", why);
	}
	int r = P.restore ? modstate_take(&c->ms, c->mod, bin, len, why, sizeof why) : 0;
	free(bin);
	if (r == 1)
		return verdict(v, OUT_REJECTED, 0, "%s", why);
	GPU(r);
	c->secret = random64();
	acc->ms_setup += now_ms() - t0;
	/* The small, odd sizes first: cheap, and where most bugs show. */
	for (int k = 1; k < T.n; k++)
		for (int64_t j = 0; j < seeds; j++)
			if (trial(c, k, seed + j, req, acc, v) < 0)
				return -1;
	if (trial(c, 0, seed, req, acc, v) < 0)
		return -1;
	/* One timing on the GPU at a time, whatever else runs on it. */
	acc->ms_lock_wait += gpu_lock();
	t0 = now_ms();
	double checks0 = acc->ms_timed_checks;
	int timed = time_plan(&c->kp[0], c, opts, tm, acc, v);
	acc->ms_timing += now_ms() - t0 - (acc->ms_timed_checks - checks0);
	if (timed == 0 && !T.s[0].ref_timed) {
		struct timing rt;
		t0 = now_ms();
		timed = T.oracle ? oracle_timing(opts, v)
			: time_plan(&T.s[0].ref, NULL, opts, &rt, acc, v);
		if (!T.oracle)
			T.s[0].ref_us = rt.median;
		T.s[0].ref_timed = timed == 0;
		acc->ms_ref += now_ms() - t0;
	}
	gpu_unlock();
	if (timed < 0)
		return -1;
	/* Fresh inputs in the same buffers: a kernel that caches its result
	 * by pointer, or stops working after a few runs, fails here. */
	return trial(c, 0, seed + seeds, req, acc, v);
}

/* Serves one request: the bench object, and whether the worker must go. */
static json_t *
serve(const json_t *req, int *fatal)
{
	struct cand c = {0};
	struct acc acc = {0};
	struct timing tm = {0};
	struct verdict v = {0};
	const json_t *opts = json_object_get(req, "opts");
	c.launch = json_object_get(req, "launch");
	c.defines = json_is_object(json_object_get(req, "defines"))
		? json_object_get(req, "defines") : NULL;
	P.restore = json_is_true(json_object_get(opts, "restore"));
	P.fresh = json_is_true(json_object_get(opts, "fresh_inputs"));
	P.checks = json_is_true(json_object_get(opts, "check_timed"));
	gpu_err[0] = '\0';
	int r = bench(req, &c, &acc, &tm, &v);
	cur_k = -1;
	cur_seed = -1;
	for (int k = 0; k < 32; k++)
		if (c.ready[k])
			kplan_free(&c.kp[k]);
	size_t state_bytes = c.ms.bytes;
	modstate_free(&c.ms);
	if (c.mod)
		cu.cuModuleUnload(c.mod);
	json_t *b = json_object();
	if (r == 0) {
		struct sizeset *s = &T.s[0];
		double floor = task_floor_us(s->bytes, s->flops, G.copy_bps, G.peak_flops);
		double bound = task_floor_us(s->bytes, s->flops, G.copy_bps,
			TENSOR_OVER_FP32 * G.peak_flops);
		json_object_set_new(b, "status", json_string("ok"));
		json_object_set_new(b, "time_us", json_pack("{sf sf sf si}", "median",
			tm.median, "min", tm.min, "max", tm.max, "reps", tm.reps));
		json_object_set_new(b, "ref_time_us", json_real(s->ref_us));
		if (T.oracle)
			json_object_set_new(b, "oracle", json_pack("{ss sf so}", "reference",
				"pytorch", "eager_us", s->ref_us, "compile_us", s->compile_us > 0
				? json_real(s->compile_us) : json_null()));
		json_object_set_new(b, "speedup", json_real(s->ref_us / tm.median));
		json_object_set_new(b, "gbps", json_real((double)s->bytes / tm.median / 1e3));
		json_object_set_new(b, "tflops", json_real((double)s->flops / tm.median / 1e6));
		json_object_set_new(b, "floor_us", json_real(floor));
		json_object_set_new(b, "floor_fraction", json_real(floor / tm.median));
		if (tm.median < FLOOR_SLACK * bound)
			verdict(&v, OUT_REJECTED, 0, "time below the physical bound: impossible "
				"(median %.2f us, bound %.2f us from %lld bytes at the copy bandwidth "
				"and %lld flops at the tensor-core rate)",
				tm.median, bound, (long long)s->bytes, (long long)s->flops);
	}
	if (v.set) {
		json_object_set_new(b, "status", json_string(outcome_names[v.status]));
		/* A reason cut at its buffer's end may end inside a character. */
		char *why = utf8_clean(v.reason, strlen(v.reason));
		json_object_set_new(b, "reason", json_string(why));
		free(why);
	}
	if (v.mismatch)
		json_object_set_new(b, "first_mismatch", v.mismatch);
	if (acc.trials || v.mismatch) {
		json_object_set_new(b, "max_abs_err", json_real(acc.max_abs));
		json_object_set_new(b, "max_rel_err", json_real(acc.max_rel));
		json_object_set_new(b, "rel_l2", isfinite(acc.rel_l2) ? json_real(acc.rel_l2)
			: json_string("inf"));
		json_object_set_new(b, "weak", json_boolean(!acc.zero_fails));
		json_object_set_new(b, "trials", json_integer(acc.trials));
	}
	json_object_set_new(b, "subject", json_string(json_string_value(
		json_object_get(req, "subject"))));
	json_t *listed = json_array();
	for (int i = 0; i < c.nchecked && i < CHECKS_LISTED; i++)
		json_array_append_new(listed, json_integer(c.checked[i]));
	json_object_set_new(b, "protocol", json_pack("{sb sb sb sI si so}",
		"restore", P.restore, "fresh_inputs", P.fresh, "check_timed", P.checks,
		"module_state_bytes", (json_int_t)state_bytes, "timed_checked", c.nchecked,
		"timed_checked_runs", listed));
	json_object_set_new(b, "device", gpu_device_json());
	json_object_set_new(b, "wall_ms", json_pack("{sf sf sf sf sf sf sf sf}", "setup",
		acc.ms_setup, "inputs", acc.ms_inputs, "reference", acc.ms_ref, "checks",
		acc.ms_checks, "timing", acc.ms_timing, "timed_checks", acc.ms_timed_checks,
		"lock_wait", acc.ms_lock_wait, "dump", acc.ms_dump));
	*fatal = v.fatal;
	return b;
}

/* Writes one answer on the answer channel. Whatever the candidate's
 * kernels printed is flushed first, to the console its parent reads, so
 * it is counted with this request and no other. */
static void
answer(FILE *ch, json_t *msg)
{
	fflush(stdout);
	jsonl_put(ch, msg);
	json_decref(msg);
}

int
worker_main(int device)
{
	char err[512];
	/* Die with the parent: a worker must never outlive kbench. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Answers go to descriptor 3, which the parent opened for them;
	 * standard output is the console, where device printf writes. */
	FILE *ch = fcntl(WORKER_ANSWER_FD, F_GETFD) < 0 ? NULL : fdopen(WORKER_ANSWER_FD, "w");
	if (!ch)
		die(EXIT_USAGE, "--worker runs only as kbench's own worker (no answer channel)");
	while (!mask_key)
		mask_key = random64();
	int r = gpu_init(device, err, sizeof err);
	if (r != 0) {
		if (r == 69)
			answer(ch, json_pack("{ss}", "unavailable", err));
		else
			warnf("%s", err);
		return r == 69 ? EXIT_UNAVAILABLE : EXIT_FAIL;
	}
	gpu_evict = evict;
	answer(ch, json_pack("{so}", "ready", gpu_device_json()));
	struct jsonl *in = jsonl_open(stdin);
	json_t *req;
	while ((req = jsonl_next(in))) {
		int fatal = 0;
		json_t *b = serve(req, &fatal);
		answer(ch, json_pack("{so sb}", "bench", b, "fatal", fatal));
		json_decref(req);
		if (fatal)
			_exit(EXIT_FAIL);
	}
	jsonl_close(in);
	task_leave();
	oracle_stop();
	return EXIT_OK;
}
