/* compile.c: NVRTC for kcompile: the toolchain, the options and the key of
 * a compile, the compile itself (run in a child process, see pool.c), and
 * its reply turned into a compile object. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nvrtc.h>

#include "codec.h"
#include "cubin.h"
#include "proc.h"
#include "die.h"
#include "jsonl.h"
#include "kcompile.h"
#include "util.h"

/* What a compile process writes back: this head, then the log and the
 * cubin bytes. */
struct reply_head {
	uint32_t magic;
	int32_t result;     /* nvrtcResult */
	double ms;
	uint64_t log_len;
	uint64_t cubin_len;
};
#define REPLY_MAGIC 0x6b636d70u

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The CUDA headers that go with the NVRTC we run: $CUDA_HOME/include, else
 * the include/ beside the folder libnvrtc was loaded from. */
static char *
find_include(const char *libpath)
{
	const char *home = getenv("CUDA_HOME");
	char *dir, *probe;

	if (home && *home) {
		dir = xasprintf("%s/include", home);
		probe = xasprintf("%s/cuda_fp16.h", dir);
		if (access(probe, R_OK) == 0) {
			free(probe);
			return dir;
		}
		free(probe);
		free(dir);
	}
	if (libpath && strrchr(libpath, '/')) {
		int n = (int)(strrchr(libpath, '/') - libpath);
		dir = xasprintf("%.*s/../include", n, libpath);
		probe = xasprintf("%s/cuda_fp16.h", dir);
		if (access(probe, R_OK) == 0) {
			char *real = realpath(dir, NULL);
			free(probe);
			free(dir);
			return real ? real : xstrdup("/usr/local/cuda/include");
		}
		free(probe);
		free(dir);
	}
	return xstrdup("/usr/local/cuda/include");
}

/* The architectures NVRTC can build a cubin for: "sm_" and a number it
 * lists, with an optional "a" or "f" suffix (sm_90a). */
static int
arch_supported(const char *arch)
{
	int n = 0, i, *list, ok = 0;
	long v;
	char *end;

	if (strncmp(arch, "sm_", 3) != 0 || !isdigit((unsigned char)arch[3]))
		return 0;
	v = strtol(arch + 3, &end, 10);
	if (*end && (end[1] || (*end != 'a' && *end != 'f')))
		return 0;
	if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0)
		return 0;
	list = xcalloc((size_t)n, sizeof(*list));
	if (nvrtcGetSupportedArchs(list) == NVRTC_SUCCESS)
		for (i = 0; i < n; i++)
			ok |= list[i] == v;
	free(list);
	return ok;
}

int
toolchain_init(struct toolchain *tc, const char *arch, int timeout_s,
	char *err, size_t errlen)
{
	int major = 0, minor = 0;
	Dl_info info;
	struct stat st;
	char *cccl;

	memset(tc, 0, sizeof(*tc));
	tc->timeout_s = timeout_s;
	if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
		snprintf(err, errlen, "NVRTC does not answer nvrtcVersion");
		return -1;
	}
	snprintf(tc->nvrtc, sizeof(tc->nvrtc), "%d.%d", major, minor);
	if (strlen(arch) >= sizeof(tc->arch) || !arch_supported(arch)) {
		snprintf(err, errlen, "architecture '%s': NVRTC %s cannot build "
			"a cubin for it (expected e.g. sm_90)", arch, tc->nvrtc);
		return -1;
	}
	snprintf(tc->arch, sizeof(tc->arch), "%s", arch);
	/* The version alone misses patch releases: the library's size and
	 * time tell one build from another. */
	if (dladdr((void *)nvrtcVersion, &info) && info.dli_fname &&
	    stat(info.dli_fname, &st) == 0)
		snprintf(tc->build, sizeof(tc->build), "%lld-%lld",
			(long long)st.st_size, (long long)st.st_mtime);
	tc->include = find_include(info.dli_fname);
	cccl = xasprintf("%s/cccl", tc->include);
	if (is_dir(cccl))
		tc->cccl = cccl;
	else
		free(cccl);
	return 0;
}

void
toolchain_free(struct toolchain *tc)
{
	free(tc->include);
	free(tc->cccl);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
compile_options(const struct toolchain *tc, const json_t *defines)
{
	json_t *opts = json_array(), *v;
	const char **names;
	const char *k;
	size_t n = 0, i;

	json_array_append_new(opts, json_sprintf("--gpu-architecture=%s", tc->arch));
	json_array_append_new(opts, json_string("--std=c++17"));
	json_array_append_new(opts, json_string("--ptxas-options=-v"));
	json_array_append_new(opts, json_string("-lineinfo"));
	json_array_append_new(opts, json_sprintf("-I%s", tc->include));
	if (tc->cccl)
		json_array_append_new(opts, json_sprintf("-I%s", tc->cccl));
	if (!json_is_object(defines))
		return opts;
	names = xcalloc(json_object_size(defines), sizeof(*names));
	json_object_foreach((json_t *)defines, k, v)
		names[n++] = k;
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		v = json_object_get(defines, names[i]);
		if (json_is_integer(v))
			json_array_append_new(opts, json_sprintf("-D%s=%" JSON_INTEGER_FORMAT,
				names[i], json_integer_value(v)));
		else
			json_array_append_new(opts, json_sprintf("-D%s=%s", names[i],
				json_string_value(v)));
	}
	free(names);
	return opts;
}

void
compile_key(const struct toolchain *tc, const char *source,
	const json_t *options, char key[65])
{
	json_t *what = json_pack("{s:i, s:s, s:O, s:s, s:s}", "format", 1,
		"source", source, "options", options, "nvrtc", tc->nvrtc,
		"build", tc->build);

	json_sha256_hex(what, key);
	json_decref(what);
}

json_t *
compile_object(const struct toolchain *tc, const json_t *options,
	const char *status, const char *reason)
{
	json_t *opts = options ? json_incref((json_t *)options) : json_array();

	return json_pack("{s:b, s:s, s:o, s:s, s:s, s:o, s:i, s:b, s:s, s:n, s:n, s:{}}",
		"ok", 0, "status", status, "reason", json_text(reason), "arch", tc->arch,
		"nvrtc", tc->nvrtc, "options", opts, "ms", 0, "cached", 0,
		"log", "", "cubin", "cubin_sha256", "kernels");
}

/* Writes all of buf to fd; a short write means the parent is gone. */
static void
write_all(int fd, const void *buf, size_t len)
{
	if (proc_write_all(fd, buf, len) < 0)
		_exit(1);
}

_Noreturn void
compile_child(const struct toolchain *tc, int fd, const char *source,
	const json_t *options)
{
	struct reply_head head = { .magic = REPLY_MAGIC };
	size_t nopt = json_array_size(options), i, log_len = 0, cubin_len = 0;
	const char **opts = xcalloc(nopt, sizeof(*opts));
	char *log = NULL, *cubin = NULL;
	nvrtcProgram prog;
	nvrtcResult rc;
	double t0;

	/* The source's folder is searched for "quoted" includes: make it the
	 * CUDA headers' own, so that no other file can be picked up. */
	if (chdir(tc->include) < 0)
		_exit(3);
	for (i = 0; i < nopt; i++)
		opts[i] = json_string_value(json_array_get(options, i));
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)tc->timeout_s);
	t0 = now_ms();
	rc = nvrtcCreateProgram(&prog, source, "kernel.cu", 0, NULL, NULL);
	if (rc == NVRTC_SUCCESS) {
		rc = nvrtcCompileProgram(prog, (int)nopt, opts);
		if (nvrtcGetProgramLogSize(prog, &log_len) == NVRTC_SUCCESS && log_len) {
			log = xmalloc(log_len);
			if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
				log_len = 0;
			else
				log_len = strnlen(log, log_len);
		}
		if (rc == NVRTC_SUCCESS &&
		    nvrtcGetCUBINSize(prog, &cubin_len) == NVRTC_SUCCESS) {
			cubin = xmalloc(cubin_len);
			if (nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS)
				cubin_len = 0;
		}
		nvrtcDestroyProgram(&prog);
	}
	head.ms = now_ms() - t0;
	alarm(0);
	head.result = rc;
	head.log_len = log_len;
	head.cubin_len = cubin_len;
	write_all(fd, &head, sizeof(head));
	write_all(fd, log, log_len);
	write_all(fd, cubin, cubin_len);
	free(log);
	free(cubin);
	free(opts);
	_exit(0);
}


struct kernels_add {
	const struct cubin *cb;
	json_t *kernels;
};

/* Adds a kernel the report lacks (its resources unknown: null), and to
 * every kernel the byte size of each parameter from the cubin. */
static int
kernel_add(void *ctx, const char *name)
{
	struct kernels_add *k = ctx;
	size_t sizes[CUBIN_MAX_PARAMS];
	json_t *kern = json_object_get(k->kernels, name), *params;
	int n;

	if (!kern) {
		kern = json_pack("{s:n, s:n, s:n, s:n, s:n, s:n}", "registers",
			"spill_stores", "spill_loads", "smem_static", "stack", "barriers");
		json_object_set_new(k->kernels, name, kern);
	}
	n = cubin_params(k->cb, name, sizes, CUBIN_MAX_PARAMS);
	params = n < 0 ? json_null() : json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(params, json_integer((json_int_t)sizes[i]));
	json_object_set_new(kern, "params", params);
	return 0;
}

/* The module-scope memory the cubin's kernels can write, per section:
 * [{"section", "bytes", "objects": [{"name", "offset", "bytes"}]}]. */
static json_t *
module_state(const struct cubin *cb)
{
	struct cubin_state st;
	char err[256];
	json_t *a = json_array();

	if (cubin_state(cb, &st, err, sizeof(err)) < 0)
		return a;
	for (int i = 0; i < st.nsec; i++) {
		json_t *objs = json_array();
		for (int j = 0; j < st.nobj; j++)
			if (st.obj[j].section == i)
				json_array_append_new(objs, json_pack("{s:s, s:I, s:I}",
					"name", st.obj[j].name, "offset", (json_int_t)st.obj[j].offset,
					"bytes", (json_int_t)st.obj[j].size));
		json_array_append_new(a, json_pack("{s:s, s:I, s:o}", "section",
			st.sec[i].name, "bytes", (json_int_t)st.sec[i].size, "objects", objs));
	}
	cubin_state_free(&st);
	return a;
}

/* Completes kernels from the cubin itself: the ptxas report is the usual
 * source of kernel names, but once, on the GPU machine, a successful
 * compile came back with an empty log. Sets compile.state. */
static void
cubin_facts(json_t *c, const char *cubin, size_t len)
{
	struct cubin cb;
	char err[256];
	struct kernels_add k = { &cb, json_object_get(c, "kernels") };

	if (cubin_open(&cb, cubin, len, err, sizeof(err)) < 0)
		return;
	cubin_kernels(&cb, kernel_add, &k);
	json_object_set_new(c, "state", module_state(&cb));
}

/* Fills a compile object from a reply that NVRTC finished. */
static void
reply_result(json_t *c, const struct reply_head *head, const char *log,
	const char *cubin, int *cacheable)
{
	char *bounded = log_bound(log, LOG_MAX);
	char *err;

	json_object_set_new(c, "ms", json_integer(llround(head->ms)));
	json_object_set_new(c, "log", json_text(bounded));
	free(bounded);
	json_object_set_new(c, "kernels", ptxas_kernels(log));
	if (head->result == NVRTC_SUCCESS && head->cubin_len > 0) {
		char hex[65], *b64 = b64_encode(cubin, head->cubin_len);
		sha256_hex(cubin, head->cubin_len, hex);
		cubin_facts(c, cubin, head->cubin_len);
		json_object_set_new(c, "ok", json_true());
		json_object_set_new(c, "status", json_string("ok"));
		json_object_set_new(c, "cubin", json_string(b64));
		json_object_set_new(c, "cubin_sha256", json_string(hex));
		free(b64);
		*cacheable = 1;
		return;
	}
	if (head->result == NVRTC_ERROR_COMPILATION) {
		err = log_first_error(log);
		json_object_set_new(c, "reason", json_text(err ? err :
			"NVRTC: compilation failed (see the log)"));
		free(err);
		*cacheable = 1;
		return;
	}
	err = xasprintf("NVRTC: %s", nvrtcGetErrorString((nvrtcResult)head->result));
	json_object_set_new(c, "reason", json_text(err));
	free(err);
}

json_t *
compile_reply(const struct toolchain *tc, const json_t *options,
	const char *reply, size_t len, int wstatus, int killed, double ms,
	int *cacheable)
{
	json_t *c = compile_object(tc, options, "error", NULL);
	struct reply_head head;
	char *why = NULL, *log;

	*cacheable = 0;
	json_object_set_new(c, "ms", json_integer(llround(ms)));
	if (killed || (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM)) {
		json_object_set_new(c, "status", json_string("timeout"));
		why = xasprintf("the compile ran past its deadline of %d s and was "
			"stopped", tc->timeout_s);
	} else if (WIFSIGNALED(wstatus)) {
		why = xasprintf("the compile process died of signal %d (%s)",
			WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
	} else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		why = xasprintf("the compile process failed (exit %d)",
			WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
	} else if (len < sizeof(head)) {
		why = xstrdup("the compile process wrote no reply");
	} else {
		memcpy(&head, reply, sizeof(head));
		if (head.magic != REPLY_MAGIC ||
		    head.log_len > len - sizeof(head) ||
		    head.cubin_len != len - sizeof(head) - head.log_len)
			why = xstrdup("the compile process wrote a broken reply");
	}
	if (why) {
		json_object_set_new(c, "reason", json_text(why));
		free(why);
		return c;
	}
	log = xmalloc(head.log_len + 1);
	memcpy(log, reply + sizeof(head), head.log_len);
	log[head.log_len] = '\0';
	reply_result(c, &head, log, reply + sizeof(head) + head.log_len, cacheable);
	free(log);
	return c;
}
