/* template.h: the one expander of {{placeholders}}, for the template
 * families' CUDA sources and launch plans (kgen's render.c) and for the
 * LLM prompts (kgen's prompt.c). A placeholder is {{name}}, its name of
 * letters, digits and '_'; in strict mode (prompts) also '.', with blanks
 * around it allowed. */
#ifndef HTAM_TEMPLATE_H
#define HTAM_TEMPLATE_H

#include <stddef.h>

/* The value of placeholder name, as a string the expander frees, or NULL
 * with err saying why (an unknown name, a value that cannot be made). */
typedef char *(*template_value_fn)(void *ctx, const char *name, char *err,
	size_t errlen);

enum {
	/* A "{{" that does not open a placeholder is an error, not text
	 * (prompts); without it, it is text, as C's {{1, 2}} is. */
	TEMPLATE_STRICT = 1
};

/* Expands text: each placeholder replaced by value's answer, the rest
 * copied. Returns a string the caller frees, or NULL with err set and
 * *at (when not NULL) the byte offset in text where it went wrong. */
char *template_expand(const char *text, template_value_fn value, void *ctx,
	int flags, char *err, size_t errlen, size_t *at);

/* The line (from 1) of byte offset at in text, for messages. */
long template_line(const char *text, size_t at);

#endif
