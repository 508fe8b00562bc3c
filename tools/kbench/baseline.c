/* baseline.c: a measured kernel against PyTorch's times for its task:
 * those the oracle measured in this run (imported tasks), else the task's
 * baseline_us (from task.json or a baselines file merged by ktask). */
#include <stdio.h>

#include "util.h"
#include "kbench.h"

void
bench_vs_baselines(json_t *bench, const json_t *task)
{
	static const char *const kinds[][2] = {
		{ "eager", "vs_eager" }, { "compile", "vs_compile" },
	};
	const json_t *base = json_object_get(task, "baseline_us");
	const json_t *oracle = json_object_get(bench, "oracle");
	const json_t *m = json_object_get(json_object_get(bench, "time_us"), "median");
	double median = json_number_value(m);

	if (!json_is_number(m) || !(median > 0))
		return;
	for (size_t i = 0; i < LEN(kinds); i++) {
		char key[32];
		snprintf(key, sizeof key, "%s_us", kinds[i][0]);
		const json_t *b = json_is_number(json_object_get(oracle, key))
			? json_object_get(oracle, key) : json_object_get(base, kinds[i][0]);
		if (json_is_number(b) && json_number_value(b) > 0)
			json_object_set_new(bench, kinds[i][1],
				json_real(json_number_value(b) / median));
	}
}
