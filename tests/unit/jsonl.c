/* Unit tests of JSON-lines reading and writing (lib/jsonl.c) and of
 * base64 and SHA-256 (lib/codec.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "codec.h"
#include "jsonl.h"

/* A stream holding text, read back from the start. */
static FILE *
stream(const char *text, size_t len)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	rewind(f);
	return f;
}

/* Reads text to its end or first error; returns the records read and
 * leaves the error, if any, in err. */
static int
read_all(const char *text, char *err, size_t errlen, int *failed)
{
	FILE *f = stream(text, strlen(text));
	struct jsonl *r = jsonl_open(f);
	json_t *rec;
	int n = 0, rc;

	*failed = 0;
	err[0] = '\0';
	while ((rc = jsonl_read(r, &rec, err, errlen)) == 1) {
		n++;
		json_decref(rec);
	}
	*failed = rc < 0;
	jsonl_close(r);
	fclose(f);
	return n;
}

static void
reads_lines_and_counts_them(void **state)
{
	FILE *f = stream("{\"a\":1}\n{\"a\":2}\n", 16);
	struct jsonl *r = jsonl_open(f);
	json_t *rec;
	char err[256];

	(void)state;
	assert_int_equal(jsonl_read(r, &rec, err, sizeof(err)), 1);
	assert_int_equal(json_integer_value(json_object_get(rec, "a")), 1);
	assert_int_equal(jsonl_line(r), 1);
	json_decref(rec);
	assert_int_equal(jsonl_read(r, &rec, err, sizeof(err)), 1);
	assert_int_equal(jsonl_line(r), 2);
	json_decref(rec);
	assert_int_equal(jsonl_read(r, &rec, err, sizeof(err)), 0);
	jsonl_close(r);
	fclose(f);
}

static void
crlf_and_missing_final_newline(void **state)
{
	char err[256];
	int failed;

	(void)state;
	assert_int_equal(read_all("{\"a\":1}\r\n{\"b\":2}\r\n", err, sizeof(err), &failed), 2);
	assert_false(failed);
	assert_int_equal(read_all("{\"a\":1}\n{\"b\":2}", err, sizeof(err), &failed), 2);
	assert_false(failed);
}

static void
broken_lines_name_line_and_column(void **state)
{
	char err[256];
	int failed;

	(void)state;
	assert_int_equal(read_all("{\"a\":1}\n{\"a\": tru}\n", err, sizeof(err), &failed), 1);
	assert_true(failed);
	assert_non_null(strstr(err, "line 2, column"));
	assert_int_equal(read_all("{\"a\":1}\n\n{\"a\":2}\n", err, sizeof(err), &failed), 1);
	assert_true(failed);
	assert_string_equal(err, "line 2: blank line (one JSON object per line expected)");
	assert_int_equal(read_all("[1,2]\n", err, sizeof(err), &failed), 0);
	assert_string_equal(err, "line 1: expected a JSON object, got an array");
	assert_int_equal(read_all("{\"a\":1} {\"b\":2}\n", err, sizeof(err), &failed), 0);
	assert_true(failed);
	assert_non_null(strstr(err, "line 1, column"));
	assert_int_equal(read_all("{\"a\":1,\"a\":2}\n", err, sizeof(err), &failed), 0);
	assert_non_null(strstr(err, "duplicate"));
	assert_int_equal(read_all("{\"a\":\n", err, sizeof(err), &failed), 0);
	assert_true(failed);
}

static void
ten_megabyte_line(void **state)
{
	size_t n = 10u << 20;
	char *text = malloc(n + 32), err[256];
	json_t *rec;
	FILE *f;
	struct jsonl *r;

	(void)state;
	strcpy(text, "{\"cubin\":\"");
	memset(text + 10, 'A', n);
	strcpy(text + 10 + n, "\"}\n");
	f = stream(text, strlen(text));
	r = jsonl_open(f);
	assert_int_equal(jsonl_read(r, &rec, err, sizeof(err)), 1);
	assert_int_equal(json_string_length(json_object_get(rec, "cubin")), n);
	json_decref(rec);
	jsonl_close(r);
	fclose(f);
	free(text);
}

static void
writes_one_compact_line(void **state)
{
	json_t *rec = json_pack("{s:s, s:i}", "name", "relu\n", "n", 3);
	char buf[128] = "";
	FILE *f = tmpfile();

	(void)state;
	assert_int_equal(jsonl_write(f, rec), 0);
	rewind(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_string_equal(buf, "{\"name\":\"relu\\n\",\"n\":3}\n");
	json_decref(rec);
	fclose(f);
}

static void
unknown_members(void **state)
{
	static const char *const known[] = { "a", "b", NULL };
	json_t *ok = json_pack("{s:i, s:i}", "a", 1, "b", 2);
	json_t *bad = json_pack("{s:i, s:i}", "a", 1, "c", 2);

	(void)state;
	assert_null(json_unknown_member(ok, known));
	assert_string_equal(json_unknown_member(bad, known), "c");
	json_decref(ok);
	json_decref(bad);
}

static void
base64_round_trip(void **state)
{
	unsigned char data[256];
	size_t len;
	char *s;
	unsigned char *back;

	(void)state;
	for (int i = 0; i < 256; i++)
		data[i] = (unsigned char)i;
	for (size_t n = 0; n <= 5; n++) {
		s = b64_encode(data, n);
		back = b64_decode(s, &len);
		assert_non_null(back);
		assert_int_equal(len, n);
		assert_memory_equal(back, data, n);
		free(s);
		free(back);
	}
	s = b64_encode("foobar", 6);
	assert_string_equal(s, "Zm9vYmFy");
	free(s);
	s = b64_encode("fo", 2);
	assert_string_equal(s, "Zm8=");
	free(s);
	assert_null(b64_decode("Zm8", &len));
	assert_null(b64_decode("Zm 8", &len));
	assert_null(b64_decode("Z=m8", &len));
	assert_null(b64_decode("Zm*8", &len));
}

static void
sha256_known_values(void **state)
{
	char hex[65];
	json_t *a = json_pack("{s:i, s:i}", "x", 1, "y", 2);
	json_t *b = json_pack("{s:i, s:i}", "y", 2, "x", 1);
	char ha[65], hb[65];

	(void)state;
	sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* Canonical form: the order of members does not change the hash. */
	json_sha256_hex(a, ha);
	json_sha256_hex(b, hb);
	assert_string_equal(ha, hb);
	json_decref(a);
	json_decref(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_lines_and_counts_them),
		cmocka_unit_test(crlf_and_missing_final_newline),
		cmocka_unit_test(broken_lines_name_line_and_column),
		cmocka_unit_test(ten_megabyte_line),
		cmocka_unit_test(writes_one_compact_line),
		cmocka_unit_test(unknown_members),
		cmocka_unit_test(base64_round_trip),
		cmocka_unit_test(sha256_known_values),
	};
	return cmocka_run_group_tests_name("jsonl", tests, NULL, NULL);
}
