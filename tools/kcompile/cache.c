/* cache.c: kcompile's content-addressed cache of compile objects. An entry
 * is one file, DIR/kcompile/ab/abcd...(the key), holding a head line
 *   htam-kcompile-cache 1 <SHA-256 of the body> <body length>
 * and the body, {"key": KEY, "result": COMPILE}. An entry whose head does
 * not match its body (a torn write, a flipped byte, a truncation) is never
 * used: it is reported and compiled again, and the new entry replaces it.
 * Entries are written atomically (write_file_atomic), so two kcompiles
 * sharing a cache see a whole entry or none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "die.h"
#include "kcompile.h"
#include "util.h"

#define CACHE_MAGIC "htam-kcompile-cache 1 "

void
cache_open(struct cache *c, int enabled)
{
	const char *root = getenv("HTAM_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	memset(c, 0, sizeof(*c));
	if (!enabled)
		return;
	if (root && *root)
		c->dir = xasprintf("%s/kcompile", root);
	else if (xdg && *xdg)
		c->dir = xasprintf("%s/htam/kcompile", xdg);
	else if (home && *home)
		c->dir = xasprintf("%s/.cache/htam/kcompile", home);
}

void
cache_close(struct cache *c)
{
	free(c->dir);
	c->dir = NULL;
}

/* Stops using the cache after a failure that is not one entry's fault. */
static void
cache_fail(struct cache *c, const char *path)
{
	if (!c->warned++)
		warnf("cache %s: %s; going on without the cache", path,
			strerror(errno));
	free(c->dir);
	c->dir = NULL;
}

static char *
entry_path(const struct cache *c, const char *key)
{
	return xasprintf("%s/%.2s/%s", c->dir, key, key);
}

/* The body of an entry if its head vouches for it, else NULL with why set. */
static json_t *
entry_body(const char *data, size_t len, const char **why)
{
	size_t m = strlen(CACHE_MAGIC), body_len;
	char want[65], got[65];
	const char *nl, *body;
	unsigned long long n;
	json_t *v;
	int used = 0;

	*why = "its head is not a kcompile cache head";
	if (len < m || strncmp(data, CACHE_MAGIC, m) != 0 ||
	    !(nl = memchr(data, '\n', len)))
		return NULL;
	if (sscanf(data + m, "%64[0-9a-f] %llu%n", want, &n, &used) != 2 ||
	    data + m + used != nl || strlen(want) != 64)
		return NULL;
	body = nl + 1;
	body_len = len - (size_t)(body - data);
	*why = "it is truncated or too long";
	if (body_len != n)
		return NULL;
	*why = "its checksum does not match";
	sha256_hex(body, body_len, got);
	if (strcmp(got, want) != 0)
		return NULL;
	*why = "its body is not JSON";
	if (!(v = json_loadb(body, body_len, 0, NULL)))
		return NULL;
	return v;
}

json_t *
cache_get(struct cache *c, const char *key)
{
	json_t *body, *result = NULL;
	const char *why;
	char *path, *data;
	size_t len;

	if (!c->dir)
		return NULL;
	path = entry_path(c, key);
	if (!(data = read_file(path, &len))) {
		if (errno != ENOENT && errno != ENOTDIR)
			cache_fail(c, path);
		free(path);
		return NULL;
	}
	if ((body = entry_body(data, len, &why))) {
		result = json_object_get(body, "result");
		if (!json_is_string(json_object_get(body, "key")) ||
		    strcmp(json_string_value(json_object_get(body, "key")), key) != 0 ||
		    !json_is_object(result)) {
			why = "it holds another key's compile";
			result = NULL;
		}
	}
	if (result) {
		result = json_deep_copy(result);
		json_object_set_new(result, "cached", json_true());
	} else {
		warnf("cache entry %s is corrupt (%s): not used, compiling again",
			path, why);
	}
	json_decref(body);
	free(data);
	free(path);
	return result;
}

void
cache_put(struct cache *c, const char *key, const json_t *result)
{
	json_t *body;
	char *dir, *path, *text, *data, hex[65];
	size_t n;

	if (!c->dir)
		return;
	dir = xasprintf("%s/%.2s", c->dir, key);
	path = entry_path(c, key);
	body = json_pack("{s:s, s:O}", "key", key, "result", result);
	text = json_dumps(body, JSON_COMPACT);
	n = strlen(text);
	sha256_hex(text, n, hex);
	data = xasprintf(CACHE_MAGIC "%s %zu\n%s", hex, n, text);
	if (mkdir_p(dir, 0777) < 0)
		cache_fail(c, dir);
	else if (write_file_atomic(path, data, strlen(data)) < 0)
		cache_fail(c, path);
	free(data);
	free(text);
	json_decref(body);
	free(path);
	free(dir);
}
