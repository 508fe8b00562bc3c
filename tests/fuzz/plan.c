/* plan.c: the launch-plan checker (lib/plan.h) on any JSON, as a plan of
 * a task with two inputs and an output, at every size set of the task. */
#include <jansson.h>

#include "fuzz.h"
#include "plan.h"
#include "task.h"

static const char task_json[] =
	"{\"id\": \"t\", \"params\": {\"rows\": 37, \"cols\": 4099},"
	" \"check_params\": [{\"rows\": 1, \"cols\": 1}],"
	" \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"rows\", \"cols\"]},"
	"  {\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [\"cols\"]}],"
	" \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *task;
	char err[512];
	json_t *plan = json_loadb((const char *)data, size, 0, NULL), *defs;

	if (!task)
		task = json_loads(task_json, 0, NULL);
	if (!plan)
		return 0;
	defs = json_pack("{s:i, s:s}", "BLOCK", 256, "MODE", "fast");
	err[0] = '\0';
	if (task_plan_check(plan, task, defs, err, sizeof err) < 0)
		FUZZ_ASSERT(err[0] != '\0');
	json_decref(plan_kernels(plan));
	json_decref(defs);
	json_decref(plan);
	return 0;
}
