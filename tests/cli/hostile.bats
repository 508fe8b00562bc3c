#!/usr/bin/env bats
# Wrong types, member by member: every stage is fed records in which one
# member at a time has another type (a string for a number, an object for
# an array, a negative count...), and must either refuse the record (exit
# 65, "tool: line 1: member: ...") or show that it does not read the member
# (the same output, the member carried along); a candidate's own faults
# may flow on as its status. tests/hostile/wrongtypes.py says more. The
# records come from a real run of the CPU stages (with the tests' own
# kbench) on relu, one step in.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
W=$ROOT/tests/hostile/wrongtypes.py

setup_file() {
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache HTAM_TASKS=$ROOT/tasks
	cd "$BATS_FILE_TMPDIR"
	export HTAM_DB=$BATS_FILE_TMPDIR/m.db
	kb=$ROOT/tests/standin/kbench
	ktask --state --run r relu >s0.jsonl
	htg-select <s0.jsonl | htg-retrieve | kgen -k 2 | kcompile | "$kb" >step1.jsonl
	htg-update <step1.jsonl >s1.jsonl
	htg-select <s1.jsonl >selected.jsonl
	htg-retrieve <selected.jsonl >retrieved.jsonl
	kgen -k 2 <retrieved.jsonl >generated.jsonl
	kcompile <generated.jsonl >compiled.jsonl
	"$kb" <compiled.jsonl >benched.jsonl
	cp m.db m0.db
}

# hostile INPUT TOOL...: the cases over INPUT, reported on fd 3.
hostile() {
	cd "$BATS_FILE_TMPDIR"
	run python3 "$W" --db m0.db --ignore ms --ignore cached "$@"
	echo "# ${lines[-1]}" >&3
	[ "$status" -eq 0 ] || { printf '%s\n' "${lines[@]}" | head -20; false; }
}

@test "htg-select: a first state, and one with a best kernel and a history" {
	hostile s0.jsonl -- htg-select
	hostile s1.jsonl -- htg-select
}

@test "htg-retrieve" {
	hostile selected.jsonl -- htg-retrieve
}

@test "kgen (rules)" {
	hostile retrieved.jsonl -- kgen -k 2
}

@test "kcompile" {
	hostile generated.jsonl -- kcompile
}

@test "htg-update" {
	hostile benched.jsonl -- htg-update
}

@test "ktask: the task.json of every family of the pack" {
	for t in $(jq -rs 'group_by(.family) | map(.[0].id) | .[]' "$ROOT"/tasks/*/task.json); do
		hostile --file task "$ROOT/tasks/$t/task.json" -- ktask --state {}
	done
}
