/* expr.c: the size-expression evaluator (lib/expr.h) on any text, with a
 * few sizes defined: every answer is a value or an error with a message. */
#include <jansson.h>

#include "expr.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], *src = fuzz_string(data, size);
	json_t *vars = json_pack("{s:I, s:I, s:I, s:s}", "rows", (json_int_t)4096,
		"cols", (json_int_t)-7, "k", (json_int_t)INT64_MAX, "e", "rows * 2");
	int64_t v;

	err[0] = '\0';
	if (expr_eval(src, vars, &v, err, sizeof err) < 0)
		FUZZ_ASSERT(err[0] != '\0');
	expr_check(src, vars, err, sizeof err);
	json_decref(vars);
	free(src);
	return 0;
}
