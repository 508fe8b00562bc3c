#!/usr/bin/env bats
# htam: the front command. The evolution itself needs a GPU (tests/gpu);
# here: its usage, its checks, the task list and the best-kernel files.

htam=$BATS_TEST_DIRNAME/../../bin/htam

@test "htam tasks lists the 22 tasks of the pack with their floors" {
	run "$htam" tasks
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 23 ]
	[[ $output =~ softmax\ +row_norm\ +memory\ +3039\.6\ +6349\.1 ]]
	[[ $output =~ matmul_square\ +gemm\ +compute\ +2051\.3 ]]
}

@test "htam with no command prints the usage and exits 2" {
	run "$htam"
	[ "$status" -eq 2 ]
	[[ ${lines[0]} == "usage: htam evolve"* ]]
	run "$htam" --help
	[ "$status" -eq 0 ]
}

@test "evolve checks its options before running anything" {
	cd "$BATS_TEST_TMPDIR"
	run "$htam" evolve
	[ "$status" -eq 2 ]
	[[ $output == *"name at least one task"* ]]
	run "$htam" evolve relu --steps 0
	[[ $output == *"--steps expects a number from 1 to 1000, not '0'"* ]]
	run "$htam" evolve relu -k many
	[[ $output == *"-k expects a number from 1 to 64, not 'many'"* ]]
	run "$htam" evolve relu --backend magic
	[[ $output == *"--backend is rules or llm"* ]]
	run "$htam" evolve relu --run ../x
	[[ $output == *"--run: letters, digits"* ]]
	[ ! -e runs ]
}

@test "report names a missing run" {
	cd "$BATS_TEST_TMPDIR"
	run "$htam" report nothing
	[ "$status" -eq 65 ]
	[[ $output == *"no run 'nothing'"* ]]
}

@test "best.sh writes the best kernel as files to take away" {
	state=$BATS_TEST_TMPDIR/state.jsonl
	jq -nc '{task: {id: "axpy", description: "y = 2x + z", baseline_us: {eager: 10}},
		step: 2, history: [{step: 1, direction: "memory_access", strategy: "vec4", outcome: "ok", gain: 1.5}],
		best: {candidate: {source: "extern \"C\" __global__ void k() {}", defines: {VEC: 4},
			launch: {launches: []}, generator: "rules", strategy: "vec4"},
			bench: {time_us: {median: 5}, ref_time_us: 7.5, speedup: 1.5, floor_us: 4, floor_fraction: 0.8}}}' >"$state"
	run "$BATS_TEST_DIRNAME/../../pipelines/best.sh" "$state" "$BATS_TEST_TMPDIR/best"
	[ "$status" -eq 0 ]
	grep -q 'extern "C" __global__ void k' "$BATS_TEST_TMPDIR/best/kernel.cu"
	[ "$(jq -c .defines "$BATS_TEST_TMPDIR/best/launch.json")" = '{"VEC":4}' ]
	grep -q '| speedup over eager | 2x |' "$BATS_TEST_TMPDIR/best/summary.md"
	grep -q '| fraction of the floor | 80% |' "$BATS_TEST_TMPDIR/best/summary.md"
	grep -q 'memory_access / vec4 (ok, gain 1.5)' "$BATS_TEST_TMPDIR/best/summary.md"
}
