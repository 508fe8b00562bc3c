#!/usr/bin/env bats
# The evolution loop end to end on the GPU: two steps of two candidates on
# a small task (new_gelu, 8192 x 8192), with a fresh memory.

setup() {
	htam=$BATS_TEST_DIRNAME/../../bin/htam
	cd "$BATS_TEST_TMPDIR"
}

@test "htam evolve runs two steps, keeps each step, and writes the best kernel and a report" {
	run "$htam" evolve new_gelu --steps 2 -k 2 --run e2e
	echo "$output" >&3
	[ "$status" -eq 0 ]
	d=runs/e2e/new_gelu
	for f in state-0 step-1 state-1 step-2 state-2; do [ -e "$d/$f.jsonl" ]; done
	# every candidate of a step was benched, and the state moved on
	[ "$(wc -l < "$d/step-1.jsonl")" -le 2 ]
	jq -e '.bench.status' "$d/step-1.jsonl" >/dev/null
	jq -e '.step == 2 and (.history | length) >= 1' "$d/state-2.jsonl"
	# the best kernel is a verified one, and it is written out
	jq -e '.best.bench.status == "ok" and .best.bench.time_us.median > 0' "$d/state-2.jsonl"
	[ -s "$d/best/kernel.cu" ]
	jq -e '.launch.launches | length >= 1' "$d/best/launch.json"
	grep -q 'speedup over eager' "$d/best/summary.md"
	grep -q '| new_gelu |' runs/e2e/report.md
	[[ $output == *"htam: report: runs/e2e/report.md"* ]]
}

@test "a run resumes: running it again redoes nothing, a larger --steps extends it" {
	run "$htam" evolve new_gelu --steps 1 -k 2 --run resume
	[ "$status" -eq 0 ]
	before=$(stat -c %Y runs/resume/new_gelu/step-1.jsonl)
	sleep 1
	run "$htam" evolve new_gelu --steps 2 -k 2 --run resume
	[ "$status" -eq 0 ]
	[ "$(stat -c %Y runs/resume/new_gelu/step-1.jsonl)" = "$before" ]
	[ -e runs/resume/new_gelu/state-2.jsonl ]
}
