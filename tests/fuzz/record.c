/* record.c: the record reader every stage uses (lib/jsonl.h) and what the
 * stages check of a record before they read it: the task (lib/task.h), the
 * state, direction, memory and candidate schemas (lib/record.h) and the
 * state features of the memory (lib/htg.h). Input: one JSON line. */
#include <jansson.h>

#include "fuzz.h"
#include "htg.h"
#include "jsonl.h"
#include "record.h"
#include "task.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	FILE *f = fmemopen((void *)data, size, "r");
	struct jsonl *in;
	json_t *rec;

	if (!f)
		return 0;
	in = jsonl_open(f);
	while (jsonl_read(in, &rec, err, sizeof err) == 1) {
		struct htg_state st;
		const json_t *task = json_object_get(rec, "task");
		FUZZ_ASSERT(json_is_object(rec));
		if (task && task_validate(task, err, sizeof err) == 0) {
			json_t *sizes = task_sizes(task);
			json_decref(sizes);
			(void)task_bound(task);
		}
		record_check(rec, record_state, err, sizeof err);
		record_check(rec, record_direction, err, sizeof err);
		record_check(rec, record_memory, err, sizeof err);
		record_check(rec, record_candidate, err, sizeof err);
		htg_state_read(rec, &st, err, sizeof err);
		json_decref(rec);
	}
	jsonl_close(in);
	fclose(f);
	return 0;
}
