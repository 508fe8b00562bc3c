/* codec.c: base64 and SHA-256 over OpenSSL's libcrypto (codec.h). */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "codec.h"
#include "die.h"
#include "util.h"

char *
b64_encode(const void *data, size_t len)
{
	char *out;

	if (len > (size_t)INT32_MAX / 4 * 3)
		die(EXIT_FAIL, "base64: %zu bytes is too large", len);
	out = xmalloc(4 * ((len + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	return out;
}

void *
b64_decode(const char *s, size_t *len)
{
	size_t n = strlen(s), pad = 0;
	unsigned char *out;
	int got;

	if (n % 4 != 0 || n > (size_t)INT32_MAX)
		return NULL;
	/* EVP_DecodeBlock accepts whitespace and counts padding as zero
	 * bytes: check the alphabet here and trim the padding ourselves. */
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || c == '+' || c == '/';
		if (c == '=' && i >= n - 2 && (i == n - 1 || s[n - 1] == '='))
			ok = 1;
		if (!ok)
			return NULL;
	}
	if (n >= 1 && s[n - 1] == '=')
		pad++;
	if (n >= 2 && s[n - 2] == '=')
		pad++;
	out = xmalloc(n / 4 * 3 + 1);
	got = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
	if (got < 0 || (size_t)got < pad) {
		free(out);
		return NULL;
	}
	*len = (size_t)got - pad;
	return out;
}

void
sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	static const char digits[] = "0123456789abcdef";

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL))
		die(EXIT_FAIL, "SHA-256 failed");
	for (unsigned int i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

void
json_sha256_hex(const json_t *v, char hex[65])
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
		JSON_ENCODE_ANY | JSON_ENSURE_ASCII);

	if (!s)
		die(EXIT_FAIL, "out of memory");
	sha256_hex(s, strlen(s), hex);
	free(s);
}
