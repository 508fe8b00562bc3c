/* template.c: {{placeholder}} expansion (template.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"
#include "util.h"

/* A name's characters: letters, digits and '_', and '.' in strict mode. */
static int
name_char(char c, int flags)
{
	return isalnum((unsigned char)c) || c == '_' || (c == '.' && flags & TEMPLATE_STRICT);
}

long
template_line(const char *text, size_t at)
{
	long line = 1;

	for (size_t i = 0; i < at && text[i]; i++)
		line += text[i] == '\n';
	return line;
}

char *
template_expand(const char *text, template_value_fn value, void *ctx, int flags,
	char *err, size_t errlen, size_t *at)
{
	size_t cap = strlen(text) + 64, len = 0;
	char *out = xmalloc(cap);
	const char *p = text;

	while (*p) {
		const char *a = p + 2, *z;
		char *v = NULL;
		size_t vlen = 1, n = 0;
		if (p[0] == '{' && p[1] == '{') {
			while (*a == ' ' && flags & TEMPLATE_STRICT)
				a++;
			for (z = a; name_char(*z, flags); z++)
				;
			n = (size_t)(z - a);
			while (*z == ' ' && flags & TEMPLATE_STRICT)
				z++;
			if (n == 0 || z[0] != '}' || z[1] != '}') {
				if (flags & TEMPLATE_STRICT) {
					if (at)
						*at = (size_t)(p - text);
					errf(err, errlen, strstr(p, "}}") ? "'{{' does not open a "
						"placeholder (a name of letters, digits, _ and .)"
						: "'{{' is not closed by '}}'");
					free(out);
					return NULL;
				}
				n = 0;
			}
			if (n) {
				char *name = xasprintf("%.*s", (int)n, a);
				v = value(ctx, name, err, errlen);
				free(name);
				if (!v) {
					if (at)
						*at = (size_t)(p - text);
					free(out);
					return NULL;
				}
				vlen = strlen(v);
				p = z + 2;
			}
		}
		if (len + vlen + 1 > cap) {
			cap = 2 * (len + vlen + 1);
			out = xrealloc(out, cap);
		}
		if (v) {
			memcpy(out + len, v, vlen);
			free(v);
		} else {
			out[len] = *p++;
		}
		len += vlen;
	}
	out[len] = '\0';
	return out;
}
