/* codec.h: base64 and SHA-256 (from OpenSSL's libcrypto), for cubins in
 * records and for content-addressed ids and caches. */
#ifndef HTAM_CODEC_H
#define HTAM_CODEC_H

#include <stddef.h>
#include <jansson.h>

/* Standard base64 with padding; returns a string the caller frees. */
char *b64_encode(const void *data, size_t len);
/* Decodes standard base64 (padding required, no whitespace). Returns a
 * buffer the caller frees with *len set, or NULL if s is not base64. */
void *b64_decode(const char *s, size_t *len);

/* SHA-256 of data as 64 lowercase hex digits into hex[65]. */
void sha256_hex(const void *data, size_t len, char hex[65]);
/* SHA-256 of a JSON value in canonical form (sorted keys, compact). */
void json_sha256_hex(const json_t *v, char hex[65]);

#endif
