#!/usr/bin/env bats
# The evolution loop (pipelines/evolve.mk) without a GPU: the real CPU
# stages with the tests' own kbench (tests/standin/kbench), which can also
# kill the whole run with SIGKILL at a chosen record. A run killed before,
# between or inside the records of a step, or after htg-update wrote the
# memory but before its state file was in place, resumes to exactly the
# transitions and history of a run that was never interrupted.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
TASKS="relu softmax"

setup_file() {
	# One compile cache for every run of this file: the runs compile the
	# same candidates.
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	echo "# the uninterrupted run: 2 tasks, 2 steps of 2 candidates" >&3
	cd "$BATS_FILE_TMPDIR"
	evolve ref
}

# evolve OUT [VAR=VALUE...]: the loop into OUT (its own memory), in a
# process group of its own so that the stand-in's SIGKILL ends it all.
evolve() {
	local out=$1
	shift
	env "$@" setsid make -s -f "$ROOT/pipelines/evolve.mk" TASKS="$TASKS" STEPS=2 K=2 \
		RUN=kill OUT="$out" BENCH="$ROOT/tests/standin/kbench" 2>/dev/null
}

# facts OUT: what a run must agree on: every transition (the memory's own
# columns, times aside) and each task's final history and best kernel.
facts() {
	sqlite3 "$1/htam.db" "SELECT run, task, step, candidate, direction, strategy, outcome,
		gain FROM transitions ORDER BY task, step, candidate"
	for t in $TASKS; do
		jq -c '[.step, [.history[] | [.step, .direction, .strategy, .outcome, .gain]],
			.best.candidate.id]' "$1/$t/state-2.jsonl"
	done
}

# killed_at SPEC: a run killed at the stand-in's KBENCH_STANDIN_KILL=SPEC,
# then run again to its end, agrees with the uninterrupted one.
killed_at() {
	cd "$BATS_FILE_TMPDIR"
	local out=k-${1//:/-}
	run evolve "$out" KBENCH_STANDIN_KILL="$1"
	[ "$status" -eq 137 ]
	# nothing half-written is in place: every step file is whole JSON lines
	for f in $(find "$out" -name 'step-*.jsonl'); do
		jq -e . "$f" >/dev/null || { echo "$f is torn"; false; }
	done
	evolve "$out"
	diff <(facts ref) <(facts "$out")
}

@test "the uninterrupted run: every candidate of every step is a transition" {
	cd "$BATS_FILE_TMPDIR"
	[ "$(sqlite3 ref/htam.db 'SELECT count(*) FROM transitions')" -eq 8 ]
	for t in $TASKS; do
		jq -e '.step == 2 and (.history | length) == 2' "ref/$t/state-2.jsonl"
		[ -s "ref/$t/best/summary.md" ]
	done
	# no temporary file is left behind
	[ -z "$(find ref -name '*.tmp')" ]
}

@test "killed before the first record of a step: the step is redone, not taken for skipped" {
	killed_at relu:0:0:before
}

@test "killed between the records of a step" {
	killed_at relu:1:1:before
}

@test "killed inside a record" {
	killed_at softmax:0:1:inside
}

@test "killed after the last record of a task's last step" {
	killed_at softmax:1:1:after
}

@test "killed after htg-update wrote the memory, before the state was in place: the replay adds nothing" {
	cd "$BATS_FILE_TMPDIR"
	cp -a ref replay
	rm replay/relu/state-2.jsonl replay/relu/best/summary.md
	evolve replay
	diff <(facts ref) <(facts replay)
}
