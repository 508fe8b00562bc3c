/* fuzz.h: what every fuzz target shares. A target is one file defining
 * LLVMFuzzerTestOneInput, the entry point of libFuzzer (make fuzz builds
 * it with clang -fsanitize=fuzzer); driver.c calls the same function on
 * each file of a corpus, so make test runs every target over the committed
 * corpus under the sanitizers without libFuzzer. A target never exits on
 * bad input: a tool's refusal is an error code here, and anything else
 * (a crash, a sanitizer report, a failed assertion) is a finding. */
#ifndef HTAM_FUZZ_H
#define HTAM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (the caller frees it). */
static inline char *
fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A finding: says what held not, and aborts (the sanitizers' report). */
#define FUZZ_ASSERT(c) do { if (!(c)) { fprintf(stderr, "fuzz: %s:%d: %s\n", \
	__FILE__, __LINE__, #c); abort(); } } while (0)

#endif
