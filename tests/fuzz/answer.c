/* answer.c: kgen's reading of a model's answer (tools/kgen/answer.c):
 * whatever the text, a candidate comes out, a kernel or a gen_error with
 * its reason, and it is valid JSON. Also utf8_clean on the same bytes. */
#include <jansson.h>

#include "fuzz.h"
#include "jsonl.h"
#include "kgen.h"
#include "util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *task;
	char *text = fuzz_string(data, size), *clean, *dump;
	json_t *c, *s;

	if (!task)
		task = json_pack("{s:s, s:{s:I, s:I}, s:[], s:[{s:s, s:s, s:[s, s]}],"
			" s:[{s:s, s:s, s:[s]}]}", "id", "t", "params", "rows", (json_int_t)37,
			"cols", (json_int_t)4099, "check_params", "inputs", "name", "x", "dtype",
			"f32", "shape", "rows", "cols", "outputs", "name", "y", "dtype", "f32",
			"shape", "rows");
	c = answer_candidate(text, size % 2 ? "stop" : "length", task);
	FUZZ_ASSERT(json_is_object(c));
	dump = json_dumps(c, 0);
	FUZZ_ASSERT(dump != NULL);
	free(dump);
	json_decref(c);
	clean = utf8_clean(text, size);
	s = json_string(clean);
	FUZZ_ASSERT(s != NULL);
	json_decref(s);
	free(clean);
	free(text);
	return 0;
}
