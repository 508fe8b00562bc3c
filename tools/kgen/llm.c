/* llm.c: kgen's llm backend. For each state it asks an OpenAI-compatible
 * chat-completions endpoint for K kernels at once (libcurl multi, K
 * requests in flight), retries what is worth retrying (408, 429, 5xx,
 * timeouts, dropped connections) with exponential backoff and jitter or
 * the server's Retry-After, and turns each answer into a candidate.
 *
 * The key (HTAM_LLM_KEY, else OPENAI_API_KEY) goes into one place only,
 * the Authorization header; every text that comes back from the server or
 * from libcurl is scrubbed of it before anything reads it, so it cannot
 * reach a record, a transcript or a message. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>

#include "die.h"
#include "jsonl.h"
#include "record.h"
#include "util.h"
#include "kgen.h"

#define RESPONSE_MAX (8 << 20)

struct llm {
	const struct kgen_opts *o;
	struct prompts prompts;
	char *url;   /* {HTAM_LLM_URL}/chat/completions */
	char *where; /* the URL as messages show it: no user info, no query */
	char *model;
	char *key;   /* NULL: no Authorization header */
	struct curl_slist *headers;
	CURLM *multi;
	uint64_t rng;
};

/* One candidate's request, over its attempts. */
struct request {
	struct llm *l;
	const json_t *state;
	long line;
	int index;
	CURL *easy;
	json_t *payload;   /* the request body, as JSON */
	char *body;        /* ... and as sent */
	char sha[65];      /* of the prompt's messages */
	char *resp;        /* the response body of this attempt */
	size_t resp_len;
	int64_t retry_after_ms; /* -1: no Retry-After */
	int attempt;       /* attempts started */
	double start_ms, due_ms;
	enum { WAITING, RUNNING, DONE } phase;
	int connect_failed;
	json_t *cand;      /* when DONE */
	char errbuf[CURL_ERROR_SIZE];
};

/* A new string: s with every occurrence of the key replaced by "[key]".
 * Keys shorter than 8 characters are not real keys and are left alone, so
 * a stray one-letter key cannot mangle every text. */
static char *
redact(const struct llm *l, const char *s)
{
	size_t n, klen = l->key ? strlen(l->key) : 0;
	const char *p, *hit;
	char *out, *o;

	if (klen < 8)
		return xstrdup(s);
	for (n = 0, p = s; (hit = strstr(p, l->key)); p = hit + klen)
		n++;
	out = o = xmalloc(strlen(s) + n * 5 + 1);
	for (p = s; (hit = strstr(p, l->key)); p = hit + klen) {
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, "[key]", 5);
		o += 5;
	}
	strcpy(o, p);
	return out;
}

/* s with the JSON escapes of letters, digits and "-_." written as the
 * characters themselves ("\u0073k" becomes "sk"), in place: the same
 * text to a JSON reader, so that a key a server echoes escaped is found
 * by redact even in a body that does not parse. */
static void
unescape_key_chars(char *s)
{
	char *o = s;

	for (const char *p = s; *p;) {
		unsigned v;
		if (p[0] == '\\' && p[1] == 'u' && sscanf(p + 2, "%4x", &v) == 1 &&
		    isxdigit((unsigned char)p[2]) && isxdigit((unsigned char)p[3]) &&
		    isxdigit((unsigned char)p[4]) && isxdigit((unsigned char)p[5]) &&
		    v < 0x80 && (isalnum((int)v) || v == '-' || v == '_' || v == '.')) {
			*o++ = (char)v;
			p += 6;
		} else if (p[0] == '\\' && p[1]) {
			*o++ = *p++;   /* an escape kept whole: "\\u0073" is not "s" */
			*o++ = *p++;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
}

/* A copy of v (new reference) with the key redacted from every string
 * and every member name, as decoded. */
static json_t *
redact_json(const struct llm *l, json_t *v)
{
	const char *k;
	json_t *x, *out;
	size_t i;

	if (json_is_string(v)) {
		char *r = redact(l, json_string_value(v));
		out = strcmp(r, json_string_value(v)) ? json_text(r) : json_incref(v);
		free(r);
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, x)
			json_array_append_new(out, redact_json(l, x));
		return out;
	}
	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach(v, k, x) {
			char *rk = redact(l, k);
			json_object_set_new(out, rk, redact_json(l, x));
			free(rk);
		}
		return out;
	}
	return json_incref(v);
}

/* The URL as messages show it: without "user:password@" and without the
 * query, where credentials sometimes hide. */
static char *
url_for_messages(const struct llm *l, const char *url)
{
	const char *host = strstr(url, "://"), *at, *slash;
	char *s, *q, *r;

	host = host ? host + 3 : url;
	at = strchr(host, '@');
	slash = strchr(host, '/');
	if (at && (!slash || at < slash))
		s = xasprintf("%.*s%s", (int)(host - url), url, at + 1);
	else
		s = xstrdup(url);
	if ((q = strchr(s, '?')))
		*q = '\0';
	r = redact(l, s);
	free(s);
	return r;
}

/* A uniform random number in [0, 1), for the backoff's jitter. */
static double
uniform(struct llm *l)
{
	uint64_t z = (l->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

/* libcurl's write callback: collects the body, refusing more than
 * RESPONSE_MAX bytes (which fails the transfer with a write error). */
static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct request *r = arg;
	size_t len = size * n;

	if (r->resp_len + len > RESPONSE_MAX)
		return 0;
	r->resp = xrealloc(r->resp, r->resp_len + len + 1);
	memcpy(r->resp + r->resp_len, data, len);
	r->resp_len += len;
	r->resp[r->resp_len] = '\0';
	return len;
}

/* libcurl's header callback: notes Retry-After, in seconds or as a date. */
static size_t
on_header(char *data, size_t size, size_t n, void *arg)
{
	struct request *r = arg;
	size_t len = size * n;
	char value[128];
	const char *errstr;
	int64_t secs;
	time_t when;

	if (len < 12 || len > 100 || strncasecmp(data, "retry-after:", 12) != 0)
		return len;
	snprintf(value, sizeof value, "%.*s", (int)(len - 12), data + 12);
	value[strcspn(value, "\r\n")] = '\0';
	char *v = value + strspn(value, " \t");
	/* Any number of seconds, however large, is capped by --max-wait
	 * (retry_delay); one too large to parse is the longest wait. */
	if (parse_i64(v, 0, INT64_MAX / 1000, &secs, &errstr) == 0)
		r->retry_after_ms = secs * 1000;
	else if (strspn(v, "0123456789") == strlen(v) && *v)
		r->retry_after_ms = INT64_MAX;
	else if ((when = curl_getdate(v, NULL)) != -1)
		r->retry_after_ms = when > time(NULL) ?
			(int64_t)(when - time(NULL)) * 1000 : 0;
	return len;
}

/* Starts the next attempt of r. */
static void
request_start(struct request *r)
{
	const struct kgen_opts *o = r->l->o;
	CURLMcode mc;

	if (r->easy == NULL) {
		if ((r->easy = curl_easy_init()) == NULL)
			die(EXIT_FAIL, "libcurl: cannot make a request");
		curl_easy_setopt(r->easy, CURLOPT_URL, r->l->url);
		curl_easy_setopt(r->easy, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->l->headers);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE,
			(curl_off_t)strlen(r->body));
		curl_easy_setopt(r->easy, CURLOPT_USERAGENT, "htam-kgen");
		curl_easy_setopt(r->easy, CURLOPT_ACCEPT_ENCODING, "");
		curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT_MS,
			(long)o->connect_timeout_ms);
		curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
		curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
		curl_easy_setopt(r->easy, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(r->easy, CURLOPT_HEADERDATA, r);
		curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->errbuf);
		curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	}
	free(r->resp);
	r->resp = NULL;
	r->resp_len = 0;
	r->retry_after_ms = -1;
	r->errbuf[0] = '\0';
	r->attempt++;
	r->phase = RUNNING;
	r->start_ms = now_ms();
	if ((mc = curl_multi_add_handle(r->l->multi, r->easy)) != CURLM_OK)
		die(EXIT_FAIL, "libcurl: %s", curl_multi_strerror(mc));
}

/* The server's own words about an error: error.message of a JSON body,
 * else the body's start. A new string. */
static char *
error_words(const char *body)
{
	json_t *v = json_loads(body ? body : "", 0, NULL);
	const char *msg = json_string_value(json_object_get(
		json_object_get(v, "error"), "message"));
	char *s;

	if (!msg && json_is_string(json_object_get(v, "error")))
		msg = json_string_value(json_object_get(v, "error"));
	s = msg ? xasprintf("%.300s", msg) : xasprintf("%.200s", body ? body : "");
	json_decref(v);
	s[strcspn(s, "\r\n")] = '\0';
	return s;
}

/* What one attempt came to. */
struct attempt {
	long http;
	int retry;          /* worth another attempt */
	char error[KGEN_REASON_MAX]; /* empty: an answer came */
	json_t *response;   /* the body, parsed, or NULL */
	const char *answer, *finish_reason; /* inside response */
	json_t *usage;      /* new reference, or NULL */
};

/* Reads the finished transfer of r into out. */
static void
read_outcome(struct request *r, CURLcode rc, struct attempt *out)
{
	const json_t *choice, *msg, *u;
	json_error_t jerr;
	char *words;

	memset(out, 0, sizeof *out);
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &out->http);
	if (rc != CURLE_OK) {
		char *e = redact(r->l, r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
		r->connect_failed = rc == CURLE_COULDNT_CONNECT ||
			rc == CURLE_COULDNT_RESOLVE_HOST ||
			rc == CURLE_COULDNT_RESOLVE_PROXY;
		if (rc == CURLE_OPERATION_TIMEDOUT)
			snprintf(out->error, sizeof out->error, "no answer within "
				"the timeout (%s)", e);
		else if (rc == CURLE_WRITE_ERROR)
			snprintf(out->error, sizeof out->error, "the response is "
				"larger than %d bytes", RESPONSE_MAX);
		else
			snprintf(out->error, sizeof out->error, "request failed: %s", e);
		free(e);
		out->retry = rc != CURLE_WRITE_ERROR && rc != CURLE_URL_MALFORMAT &&
			rc != CURLE_UNSUPPORTED_PROTOCOL;
		return;
	}
	r->connect_failed = 0;
	if (out->http < 200 || out->http > 299) {
		words = error_words(r->resp);
		snprintf(out->error, sizeof out->error, "HTTP %ld: %s%s",
			out->http, words, out->http >= 300 && out->http < 400 ?
			" (redirects are not followed: set HTAM_LLM_URL to the "
			"final address)" : "");
		free(words);
		out->retry = out->http == 408 || out->http == 429 || out->http >= 500;
		return;
	}
	out->response = json_loads(r->resp ? r->resp : "", 0, &jerr);
	if (out->response == NULL) {
		snprintf(out->error, sizeof out->error, "the response is not "
			"JSON: line %d, column %d: %s", jerr.line, jerr.column,
			jerr.text);
		return;
	}
	choice = json_array_get(json_object_get(out->response, "choices"), 0);
	msg = json_object_get(choice, "message");
	if (choice == NULL) {
		/* Some servers send a 200 with an error object instead. */
		words = json_object_get(out->response, "error") ?
			error_words(r->resp) : NULL;
		snprintf(out->error, sizeof out->error, "the response has no "
			"choices%s%s", words ? ": " : "", words ? words : "");
		free(words);
		return;
	}
	out->answer = json_string_value(json_object_get(msg, "content"));
	out->finish_reason = json_string_value(json_object_get(choice, "finish_reason"));
	if (out->answer == NULL) {
		snprintf(out->error, sizeof out->error, "the response's choice "
			"has no message content (finish_reason %s)",
			out->finish_reason ? out->finish_reason : "null");
		return;
	}
	u = json_object_get(out->response, "usage");
	if (json_is_object(u))
		out->usage = json_pack("{s:O?, s:O?}", "prompt_tokens",
			json_object_get(u, "prompt_tokens"), "completion_tokens",
			json_object_get(u, "completion_tokens"));
}

/* Makes s valid UTF-8 (a message cut inside a character, or quoting a
 * body that is not text) by writing its non-ASCII bytes as '?', so that
 * it can go into JSON. */
static void
keep_utf8(char *s)
{
	json_t *v = json_string(s);

	if (v == NULL)
		for (; *s; s++)
			if ((unsigned char)*s >= 0x80)
				*s = '?';
	json_decref(v);
}

/* How long to wait before attempt number r->attempt + 1: the server's
 * Retry-After if it sent one, else backoff * 2^(attempt-1) with jitter
 * (half to all of it), both capped at --max-wait. */
static int64_t
retry_delay(struct request *r)
{
	const struct kgen_opts *o = r->l->o;
	double d;

	if (r->retry_after_ms >= 0)
		return r->retry_after_ms < o->max_wait_ms ?
			r->retry_after_ms : o->max_wait_ms;
	d = (double)o->backoff_ms;
	for (int i = 1; i < r->attempt && d < o->max_wait_ms; i++)
		d *= 2;
	if (d > o->max_wait_ms)
		d = (double)o->max_wait_ms;
	return (int64_t)(d * (0.5 + 0.5 * uniform(r->l)));
}

/* Keeps the attempt in the transcripts folder, if there is one. */
static void
keep_transcript(struct request *r, const struct attempt *out, int final,
	int64_t latency, int64_t delay)
{
	json_t *rec;
	char *name;

	if (r->l->o->transcripts == NULL)
		return;
	rec = json_pack("{s:s, s:s, s:I, s:i, s:i, s:b, s:s, s:s, s:O}",
		"run", record_run(r->state), "task", record_task_id(r->state),
		"step", (json_int_t)record_step(r->state), "candidate", r->index,
		"attempt", r->attempt, "final", final, "model", r->l->model,
		"prompt_sha256", r->sha, "request", r->payload);
	json_object_set_new(rec, "http_status", out->http ?
		json_integer(out->http) : json_null());
	json_object_set_new(rec, "latency_ms", json_integer(latency));
	if (out->response)
		json_object_set(rec, "response", out->response);
	else if (r->resp) {
		/* A body that is not JSON, as text (its start, if long). */
		json_t *text = json_stringn(r->resp, r->resp_len < 65536 ?
			r->resp_len : 65536);
		json_object_set_new(rec, "response", text ? text :
			json_string("(the body is not UTF-8 text)"));
	}
	json_object_set_new(rec, "answer", out->error[0] || !out->answer ?
		json_null() : json_string(out->answer));
	json_object_set_new(rec, "finish_reason", out->finish_reason ?
		json_string(out->finish_reason) : json_null());
	json_object_set(rec, "usage", out->usage ? out->usage : json_null());
	json_object_set_new(rec, "error", out->error[0] ?
		json_string(out->error) : json_null());
	if (!final)
		json_object_set_new(rec, "retry_in_ms", json_integer(delay));
	name = transcript_name(r->state, r->index, r->attempt);
	transcript_write(r->l->o->transcripts, name, rec);
	free(name);
	json_decref(rec);
}

json_t *
llm_candidate(json_t *c, const char *model, const json_t *state, int index,
	const json_t *usage, int64_t latency_ms, int attempts)
{
	json_object_set_new(c, "generator", json_sprintf("llm:%s", model));
	json_object_set_new(c, "strategy", prompt_strategy(state, index));
	json_object_set(c, "usage", usage && json_is_object(usage) ?
		(json_t *)usage : json_null());
	json_object_set_new(c, "latency_ms", json_integer(latency_ms));
	json_object_set_new(c, "attempts", json_integer(attempts));
	return c;
}

/* Handles the end of one attempt of r: retries it later, or makes its
 * candidate. */
static void
request_done(struct request *r, CURLcode rc)
{
	struct attempt out;
	int64_t latency = (int64_t)(now_ms() - r->start_ms + 0.5), delay = 0;
	int final;
	char *scrubbed;

	curl_multi_remove_handle(r->l->multi, r->easy);
	if (r->resp) {
		/* The server could echo the key (some do in a 401), plain or
		 * JSON-escaped: scrub it before anything reads the body, from
		 * the text and, when it is JSON, from every string as decoded
		 * (the body is then kept re-encoded). */
		json_t *doc, *clean;
		unescape_key_chars(r->resp);
		scrubbed = redact(r->l, r->resp);
		free(r->resp);
		r->resp = scrubbed;
		if (r->l->key && strlen(r->l->key) >= 8 &&
		    (doc = json_loads(r->resp, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL))) {
			clean = redact_json(r->l, doc);
			char *text = json_equal(doc, clean) ? NULL
				: json_dumps(clean, JSON_COMPACT | JSON_ENCODE_ANY);
			if (text) {
				free(r->resp);
				r->resp = text;
			}
			json_decref(clean);
			json_decref(doc);
		}
		r->resp_len = strlen(r->resp);
	}
	read_outcome(r, rc, &out);
	keep_utf8(out.error);
	final = !out.retry || r->attempt > r->l->o->retries;
	if (final && out.retry && r->attempt > 1) {
		size_t n = strlen(out.error);
		snprintf(out.error + n, sizeof out.error - n, " (after %d "
			"attempts)", r->attempt);
	}
	if (!final) {
		delay = retry_delay(r);
		r->phase = WAITING;
		r->due_ms = now_ms() + (double)delay;
		if (r->l->o->verbose)
			warn_line(r->line, "candidate %d: %s; attempt %d in %.1f s",
				r->index, out.error, r->attempt + 1, (double)delay / 1000);
	}
	keep_transcript(r, &out, final, latency, delay);
	if (final) {
		r->cand = out.error[0] ? gen_error("%s", out.error) :
			answer_candidate(out.answer, out.finish_reason,
				json_object_get(r->state, "task"));
		llm_candidate(r->cand, r->l->model, r->state, r->index,
			out.usage, latency, r->attempt);
		r->phase = DONE;
	}
	json_decref(out.response);
	json_decref(out.usage);
}

/* Runs the requests until every one is done: starts those whose time has
 * come, lets libcurl move the transfers, handles those that finished, and
 * sleeps until the next event or the next retry is due. */
static void
run_requests(struct llm *l, struct request *reqs, int k)
{
	CURLMsg *m;
	CURLMcode mc;
	int running, left, pending, finished;

	for (;;) {
		double now = now_ms(), next = now + 1000;
		pending = finished = 0;
		for (int i = 0; i < k; i++) {
			if (reqs[i].phase == WAITING && reqs[i].due_ms <= now)
				request_start(&reqs[i]);
			if (reqs[i].phase == WAITING && reqs[i].due_ms < next)
				next = reqs[i].due_ms;
			pending += reqs[i].phase != DONE;
		}
		if (pending == 0)
			return;
		if ((mc = curl_multi_perform(l->multi, &running)) != CURLM_OK)
			die(EXIT_FAIL, "libcurl: %s", curl_multi_strerror(mc));
		while ((m = curl_multi_info_read(l->multi, &left)) != NULL) {
			struct request *r;
			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			request_done(r, m->data.result);
			finished = 1;
		}
		if (finished)
			continue; /* all may be done, or a retry due at once */
		int wait = (int)(next - now_ms());
		if (wait > 0 && (mc = curl_multi_poll(l->multi, NULL, 0,
		    wait > 1000 ? 1000 : wait, NULL)) != CURLM_OK)
			die(EXIT_FAIL, "libcurl: %s", curl_multi_strerror(mc));
	}
}

static int
llm_generate(void *ctx, const json_t *state, long line, json_t **cands)
{
	struct llm *l = ctx;
	const struct kgen_opts *o = l->o;
	struct request *reqs = xcalloc((size_t)o->k, sizeof *reqs);
	int i, unreachable = 0;

	for (i = 0; i < o->k; i++) {
		struct request *r = &reqs[i];
		json_t *msgs = prompt_messages(&l->prompts, state, i, o->k);
		*r = (struct request){ .l = l, .state = state, .line = line,
			.index = i, .phase = WAITING, .due_ms = 0 };
		prompt_sha256(msgs, r->sha);
		r->payload = json_pack("{s:s, s:o, s:f, s:b}", "model", l->model,
			"messages", msgs, "temperature", o->temperature,
			"stream", 0);
		if (o->max_tokens > 0)
			json_object_set_new(r->payload, "max_tokens",
				json_integer(o->max_tokens));
		if (o->has_seed)
			json_object_set_new(r->payload, "seed",
				json_integer(o->seed + i));
		r->body = json_dumps(r->payload, JSON_COMPACT | JSON_REAL_PRECISION(15));
	}
	run_requests(l, reqs, o->k);
	for (i = 0; i < o->k; i++)
		unreachable += reqs[i].connect_failed;
	if (unreachable == o->k)
		die(EXIT_UNAVAILABLE, "line %ld: cannot reach %s: %s", line,
			l->where, json_string_value(json_object_get(reqs[0].cand,
			"reason")));
	for (i = 0; i < o->k; i++) {
		cands[i] = reqs[i].cand;
		curl_easy_cleanup(reqs[i].easy);
		json_decref(reqs[i].payload);
		free(reqs[i].body);
		free(reqs[i].resp);
	}
	free(reqs);
	return o->k;
}

/* The environment variable name, or NULL if unset or empty. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static void *
llm_open(const struct kgen_opts *o)
{
	struct llm *l = xcalloc(1, sizeof *l);
	const char *base = env("HTAM_LLM_URL"), *model = env("HTAM_LLM_MODEL");
	const char *key = env("HTAM_LLM_KEY");
	char *h;
	size_t n;

	if (base == NULL)
		die(EXIT_USAGE, "HTAM_LLM_URL is not set: give the endpoint's "
			"base URL, with /v1 where the server has it (e.g. "
			"https://api.openai.com/v1 or http://127.0.0.1:8000/v1)");
	if (model == NULL)
		die(EXIT_USAGE, "HTAM_LLM_MODEL is not set: give the model's "
			"name as the endpoint knows it");
	if (key == NULL)
		key = env("OPENAI_API_KEY");
	l->o = o;
	l->key = key ? xstrdup(key) : NULL;
	l->model = xstrdup(model);
	n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		n--;
	/* The base URL, as OpenAI clients take it; the whole endpoint's
	 * address works too. */
	if (n >= 17 && strncmp(base + n - 17, "/chat/completions", 17) == 0)
		l->url = xasprintf("%.*s", (int)n, base);
	else
		l->url = xasprintf("%.*s/chat/completions", (int)n, base);
	l->where = url_for_messages(l, l->url);
	l->rng = o->has_seed ? (uint64_t)o->seed : (uint64_t)now_ms() ^ (uint64_t)getpid();
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (l->multi = curl_multi_init()) == NULL)
		die(EXIT_FAIL, "libcurl: cannot start");
	l->headers = curl_slist_append(NULL, "Content-Type: application/json");
	l->headers = curl_slist_append(l->headers, "Accept: application/json");
	if (l->key) {
		h = xasprintf("Authorization: Bearer %s", l->key);
		l->headers = curl_slist_append(l->headers, h);
		memset(h, 0, strlen(h));
		free(h);
	}
	/* An Expect: 100-continue round trip only slows a large prompt. */
	l->headers = curl_slist_append(l->headers, "Expect:");
	if (l->headers == NULL)
		die(EXIT_FAIL, "libcurl: out of memory");
	prompts_load(&l->prompts, o->prompts);
	return l;
}

static void
llm_close(void *ctx)
{
	struct llm *l = ctx;

	curl_slist_free_all(l->headers);
	curl_multi_cleanup(l->multi);
	curl_global_cleanup();
	prompts_free(&l->prompts);
	free(l->url);
	free(l->where);
	free(l->model);
	free(l->key);
	free(l);
}

const struct backend llm_backend = {
	.name = "llm",
	.open = llm_open,
	.generate = llm_generate,
	.close = llm_close,
};
