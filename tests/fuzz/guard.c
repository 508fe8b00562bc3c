/* guard.c: kcompile's source guard (tools/kcompile/guard.c) on any source,
 * and its check of defines on the input as JSON. */
#include <jansson.h>

#include "fuzz.h"
#include "kcompile.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[512], *src = fuzz_string(data, size);
	json_t *defines;

	why[0] = '\0';
	if (guard_source(src, why, sizeof why) < 0)
		FUZZ_ASSERT(why[0] != '\0');
	if ((defines = json_loadb((const char *)data, size, 0, NULL))) {
		if (json_is_object(defines))
			guard_defines(defines, why, sizeof why);
		json_decref(defines);
	}
	free(src);
	return 0;
}
