#!/usr/bin/env bats
# htam: the front command. The evolution on a GPU is in tests/gpu; here:
# its usage and checks, the task list, the best-kernel files, and runs
# through the tests' own kbench (tests/standin/kbench, as BENCH): what a
# run records, resuming, locking, task folders, reports and memories.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
htam=$ROOT/bin/htam
standin=$ROOT/tests/standin/kbench

setup() {
	export HTAM_CACHE=$BATS_TEST_TMPDIR/cache
	unset BENCH
}

@test "htam tasks lists every task of the pack with their floors" {
	run "$htam" tasks
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq $(( $(ls -d "$ROOT"/tasks/*/ | wc -l) + 1 )) ]
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
	run --separate-stderr "$htam" report nothing
	[ "$status" -eq 65 ]
	[ "$stderr" = "htam: report: no run 'nothing' (looked in runs/nothing)" ]
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
	grep -q 'memory_access / vec4 (ok, gain 1.5x)' "$BATS_TEST_TMPDIR/best/summary.md"
	[ -z "$(find "$BATS_TEST_TMPDIR/best" -name '*.tmp')" ]
}

@test "without a GPU, evolve says so before it runs anything, exits 69 and leaves nothing behind" {
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr env BENCH="env KBENCH_STANDIN_EXIT=69 $standin" "$htam" evolve relu
	[ "$status" -eq 69 ]
	[ "${stderr##*$'\n'}" = "htam: evolve: no GPU to benchmark on (kbench --probe exited 69); nothing was run" ]
	[ ! -e runs ]
	[ ! -e htam.db ]
	# a task that is not there is refused first, by name
	run --separate-stderr "$htam" evolve no_such_task
	[ "$status" -eq 65 ]
	[ "${stderr##*$'\n'}" = "htam: evolve: no_such_task: no such task (htam tasks lists them)" ]
}

@test "a run records its settings, resumes only with the same ones, and says what differs" {
	cd "$BATS_TEST_TMPDIR"
	export BENCH=$standin
	"$htam" evolve relu --steps 1 -k 2 >/dev/null 2>&1
	jq -e '.settings.k == 2 and .settings.backend == "rules" and .steps == 1 and .tasks == ["relu"]' runs/run/run.json
	run --separate-stderr "$htam" evolve relu --steps 1 -k 3
	[ "$status" -eq 2 ]
	[[ $stderr == *'htam: evolve: run run was made with other settings (k 2 now 3);'* ]]
	# a larger --steps extends it; --force goes on with other settings, noted
	"$htam" evolve relu --steps 2 -k 2 >/dev/null 2>&1
	[ -s runs/run/relu/state-2.jsonl ]
	"$htam" evolve relu --steps 2 -k 3 --force >/dev/null 2>&1
	jq -e '.settings.k == 3 and .changes[0].from.k == 2 and .steps == 2' runs/run/run.json
}

@test "one htam at a time on a run" {
	cd "$BATS_TEST_TMPDIR"
	mkdir -p runs/run
	flock runs/run/.lock sleep 30 &
	holder=$!
	sleep 0.5
	run --separate-stderr env BENCH="$standin" "$htam" evolve relu --steps 1 -k 1
	kill "$holder"
	[ "$status" -eq 1 ]
	[ "$stderr" = "htam: evolve: run run is in use by another htam (it holds runs/run/.lock)" ]
}

@test "a stage's exit status is htam's: kbench refusing its input (65) makes evolve exit 65" {
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr env BENCH="env KBENCH_STANDIN_FAIL=65 $standin" "$htam" evolve relu --steps 1 -k 1
	[ "$status" -eq 65 ]
	[ "${stderr##*$'\n'}" = "htam: evolve failed (the run so far is kept in runs/run; run again to resume)" ]
}

@test "a task folder anywhere is evolved under its own name" {
	cd "$BATS_TEST_TMPDIR"
	cp -r "$ROOT/tasks/relu" my_relu
	jq '.id = "my_relu"' my_relu/task.json >t && mv t my_relu/task.json
	BENCH=$standin "$htam" evolve "$BATS_TEST_TMPDIR/my_relu" --steps 1 -k 1 >/dev/null
	[ -s runs/run/my_relu/state-1.jsonl ]
	jq -e '.task.id == "my_relu"' runs/run/my_relu/state-1.jsonl
	[ "$(ls runs/run)" = "$(printf 'best-time.dat\nbest-time.png\nhtam.db\nmemory.png\nmy_relu\nreport.md\nrun.json\ntasks')" ]
}

@test "report refuses a folder that holds no run, and writes nothing there" {
	cd "$BATS_TEST_TMPDIR"
	mkdir results
	echo '# mine' >results/notes.md
	run --separate-stderr "$htam" report results
	[ "$status" -eq 65 ]
	[ "$stderr" = "htam: report: results holds no run (no run.json, no task with a state-0.jsonl)" ]
	[ "$(ls results)" = notes.md ]
}

@test "htam memory reads the run's memory, not ./htam.db" {
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$htam" memory export
	[ "$status" -eq 65 ]
	[ "$stderr" = "htam: memory: run run has no memory (runs/run/htam.db); --run NAME or --db FILE names another" ]
	BENCH=$standin "$htam" evolve relu --steps 1 -k 2 --run r2 >/dev/null 2>&1
	[ "$("$htam" memory export --run r2 | jq -s 'map(select(.kind == "transition")) | length')" -eq 2 ]
	[ ! -e htam.db ]
}

@test "on a host of several GPUs, -j spreads the tasks over them in turn, the memory whole" {
	cd "$BATS_TEST_TMPDIR"
	export BENCH=$standin KBENCH_STANDIN_GPUS=2
	"$htam" evolve relu gelu swish --steps 1 -k 2 -j 3 --run g2 >/dev/null 2>&1
	# each task's kbench timed on its own device: relu 0, gelu 1, swish 0
	for t in relu:0 gelu:1 swish:0; do
		[ "$(jq -s -c '[.[].bench.device.index] | unique' "runs/g2/${t%:*}/step-1.jsonl")" = "[${t#*:}]" ]
	done
	[ "$(sqlite3 runs/g2/htam.db 'SELECT count(DISTINCT candidate) FROM transitions')" = 6 ]
	"$htam" evolve relu gelu --steps 1 -k 2 -j 2 --gpus 1 --run g1 >/dev/null 2>&1
	[ "$(jq -s -c '[.[].bench.device.index] | unique' runs/g1/gelu/step-1.jsonl)" = "[0]" ]
	run "$htam" evolve relu --gpus 3 --run g3
	[ "$status" -eq 2 ]
	[[ $output == *"--gpus 3, but kbench sees 2 GPU(s)"* ]]
}
