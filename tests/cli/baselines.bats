#!/usr/bin/env bats
# PyTorch's times through the pipeline, without a GPU: a baselines file
# (bench/torch-baselines.py writes it) merged by ktask into the tasks'
# baseline_us, the report's and best.sh's speedups over eager and compile,
# and the KernelBench table of bench/fastp.py on made-up state files with
# known answers.

bats_require_minimum_version 1.5.0

root=$BATS_TEST_DIRNAME/../..
axpy=$BATS_TEST_DIRNAME/../data/tasks/axpy

setup() {
	cd "$root"
	bl=$BATS_TEST_TMPDIR/baselines.json
	jq -n '{machine: "NVIDIA H200", torch: "2.11.0+cu130", date: "2026-12-01", method: "m",
		tasks: {relu: {eager: 3001.5, compile: 2999.0, compile_s: 4.2},
			swish: {eager: 7400.0, compile: null, compile_error: "BackendCompilerFailed: x"},
			axpy: {eager: 12.5}}}' >"$bl"
}

# state RUN ID EAGER COMPILE BEST [N]: a state-N.jsonl (default N 6) of task
# ID with these baselines (null: none) and best time (null: no correct kernel).
# Its floor is 1 us: n bytes at 4.239 TB/s.
state() {
	mkdir -p "$1/$2"
	jq -nc --arg id "$2" --argjson e "$3" --argjson c "$4" --argjson best "$5" '{
		task: {id: $id, params: {n: 4239000}, bytes: "n", flops: "n",
			baseline_us: ({eager: $e, compile: $c} | with_entries(select(.value != null)))},
		run: "r", step: 6, history: [],
		best: (if $best == null then null else {bench: {status: "ok", time_us: {median: $best}}} end)}' \
		>"$1/$2/state-${6:-6}.jsonl"
}

# The run of the table tests: a is fast over both, b has no compile time,
# c has no correct kernel, d is exactly 1.5x eager (not fast_1.5: KernelBench
# counts speedups strictly above p) and 5x compile.
make_run() {
	run_dir=$BATS_TEST_TMPDIR/run
	state "$run_dir" a 100 50 40
	state "$run_dir" a 100 50 1 9   # an older state: state-10 is the last, not state-9
	mv "$run_dir/a/state-6.jsonl" "$run_dir/a/state-10.jsonl"
	state "$run_dir" b 100 null 80
	state "$run_dir" c 90 60 null
	state "$run_dir" d 30 100 20
}

@test "ktask --baselines puts a file's eager and compile times into baseline_us" {
	run ktask --baselines "$bl" relu swish "$axpy"
	[ "$status" -eq 0 ]
	jq -e '.task.baseline_us == {eager: 3001.5, compile: 2999}' <<<"${lines[0]}"
	# null was not measured: swish keeps task.json's compile time
	jq -e '.task.baseline_us == {eager: 7400, compile: 3172.3}' <<<"${lines[1]}"
	# a task without baseline_us gets one
	jq -e '.task.baseline_us == {eager: 12.5}' <<<"${lines[2]}"
	# a task the file does not name is left as it is
	ktask --baselines "$bl" gelu | jq -e '.task.baseline_us == {eager: 3058.1}'
}

@test "HTAM_BASELINES does the same for every ktask: step-0 states and --list" {
	HTAM_BASELINES=$bl ktask --state relu | jq -e '.task.baseline_us == {eager: 3001.5, compile: 2999}'
	run env HTAM_BASELINES="$bl" ktask --list relu sigmoid
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^id\ +family\ +bound\ +floor_us\ +eager_us\ +compile_us$ ]]
	[[ ${lines[1]} =~ ^relu\ +elementwise\ +memory\ +3039\.6\ +3001\.5\ +2999\.0$ ]]
	[[ ${lines[2]} =~ ^sigmoid\ +elementwise\ +memory\ +3039\.6\ +3055\.0\ +-$ ]]
	# --baselines "" reads none, whatever the environment says
	HTAM_BASELINES=$bl ktask --baselines "" relu | jq -e '.task.baseline_us == {eager: 3086.5}'
}

@test "a baselines file that cannot be read is a usage error (2) naming it" {
	run --separate-stderr ktask --baselines "$BATS_TEST_TMPDIR/none.json" relu
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "ktask: --baselines $BATS_TEST_TMPDIR/none.json: No such file or directory" ]
	# from the environment, the message says so
	run --separate-stderr env HTAM_BASELINES="$BATS_TEST_TMPDIR/none.json" ktask relu
	[ "$status" -eq 2 ]
	[ "$stderr" = "ktask: HTAM_BASELINES=$BATS_TEST_TMPDIR/none.json: No such file or directory" ]
}

@test "a malformed baselines file is bad data (65): the tool, the file and what is wrong" {
	printf '{"tasks": {\n"relu": }\n' >"$BATS_TEST_TMPDIR/b.json"
	run --separate-stderr ktask --baselines "$BATS_TEST_TMPDIR/b.json" relu
	[ "$status" -eq 65 ]
	[ -z "$output" ]
	[[ $stderr == "ktask: --baselines $BATS_TEST_TMPDIR/b.json: line 2, column "* ]]
	for bad in '[]' '{"relu": {"eager": 1}}' '{"tasks": []}'; do
		echo "$bad" >"$BATS_TEST_TMPDIR/b.json"
		run --separate-stderr env HTAM_BASELINES="$BATS_TEST_TMPDIR/b.json" ktask relu
		[ "$status" -eq 65 ]
		[ "$stderr" = "ktask: HTAM_BASELINES=$BATS_TEST_TMPDIR/b.json: expected an object with a \"tasks\" object, as bench/torch-baselines.py writes" ]
	done
	echo '{"tasks": {"relu": 3}}' >"$BATS_TEST_TMPDIR/b.json"
	run --separate-stderr ktask --baselines "$BATS_TEST_TMPDIR/b.json" relu
	[ "$stderr" = "ktask: --baselines $BATS_TEST_TMPDIR/b.json: tasks.relu: expected an object" ]
	for v in -1 0 '"3000"' true; do
		echo "{\"tasks\": {\"relu\": {\"eager\": 1, \"compile\": $v}}}" >"$BATS_TEST_TMPDIR/b.json"
		run --separate-stderr ktask --baselines "$BATS_TEST_TMPDIR/b.json" relu
		[ "$status" -eq 65 ] || { echo "compile $v: status $status"; return 1; }
		[ "$stderr" = "ktask: --baselines $BATS_TEST_TMPDIR/b.json: tasks.relu.compile: expected a positive number of microseconds, or null" ]
	done
}

@test "the report shows torch.compile and the speedup over it beside eager" {
	make_run
	pipelines/report.sh "$run_dir"
	grep -q '^| task | steps | best us | reference us | speedup | eager us | vs eager | compile us | vs compile | floor us |' "$run_dir/report.md"
	grep -q '^| a | 6 | 40 | - | - | 100 | 2.5x | 50 | 1.25x | - |' "$run_dir/report.md"
	grep -q '^| b | 6 | 80 | - | - | 100 | 1.25x | - | - | - |' "$run_dir/report.md"
	grep -q '^| c | 6 | - | - | - | 90 | - | 60 | - | - |' "$run_dir/report.md"
}

@test "best.sh gives the speedups over eager and over torch.compile" {
	make_run
	jq -c '.task.description = "d" | .best.candidate = {source: "k", generator: "rules"}' \
		"$run_dir/d/state-6.jsonl" >"$BATS_TEST_TMPDIR/s.jsonl"
	pipelines/best.sh "$BATS_TEST_TMPDIR/s.jsonl" "$BATS_TEST_TMPDIR/best"
	grep -qx '| speedup over eager | 1.5x |' "$BATS_TEST_TMPDIR/best/summary.md"
	grep -qx '| torch.compile | 100 us |' "$BATS_TEST_TMPDIR/best/summary.md"
	grep -qx '| speedup over torch.compile | 5x |' "$BATS_TEST_TMPDIR/best/summary.md"
}

@test "fastp: the per-task table and fast_p and geomean over eager and compile, KernelBench's way" {
	make_run
	run --separate-stderr python3 bench/fastp.py "$run_dir"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "# Kernels against PyTorch" ]
	[ "${lines[1]}" = "Baselines: the tasks' baseline_us as the run's states carry them." ]
	[ "${lines[2]}" = "| task | floor us | eager us | compile us | ours us | vs eager | vs compile |" ]
	[ "${lines[4]}" = "| a | 1.0 | 100.0 | 50.0 | 40.0 | 2.50x | 1.25x |" ]
	[ "${lines[5]}" = "| b | 1.0 | 100.0 | - | 80.0 | 1.25x | - |" ]
	[ "${lines[6]}" = "| c | 1.0 | 90.0 | 60.0 | - | - | - |" ]
	[ "${lines[7]}" = "| d | 1.0 | 30.0 | 100.0 | 20.0 | 1.50x | 5.00x |" ]
	[ "${lines[8]}" = "| over | tasks | correct | fast_1 | fast_1.5 | fast_2 | geomean speedup |" ]
	# eager, all 4 tasks: fast_1 a b d, fast_1.5 and fast_2 a alone;
	# geomean (2.5 * 1.25 * 1 * 1.5)^(1/4), c counting 1.
	[ "${lines[10]}" = "| PyTorch eager | 4 | 3 | 0.75 (3/4) | 0.25 (1/4) | 0.25 (1/4) | 1.471x |" ]
	# compile, b left out: fast_1 a d, fast_1.5 and fast_2 d; (1.25 * 1 * 5)^(1/3)
	[ "${lines[11]}" = "| torch.compile | 3 | 2 | 0.67 (2/3) | 0.33 (1/3) | 0.33 (1/3) | 1.842x |" ]
	[[ $output == *'- 1 task without a torch.compile time (b): shown "-" and left out of the torch.compile row, fast_p and geomean alike'* ]]
	[[ $output == *"a task without a correct kernel is not fast"* ]]
	[[ $output == *"a task without a correct kernel counts 1.0"* ]]
}

@test "fastp: a baselines file over the states', and --tasks counts tasks the run lacks" {
	make_run
	jq -n '{machine: "M", torch: "T", date: "D", tasks: {b: {eager: 160, compile: 40}, c: {compile: null}}}' >"$bl"
	run --separate-stderr python3 bench/fastp.py --baselines "$bl" "$run_dir"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == "Baselines: $bl (M, torch T, D) over the states' baseline_us." ]]
	[ "${lines[5]}" = "| b | 1.0 | 160.0 | 40.0 | 80.0 | 2.00x | 0.50x |" ]
	[ "${lines[6]}" = "| c | 1.0 | 90.0 | 60.0 | - | - | - |" ]
	# compile now over 4: fast_1 a d; geomean (1.25 * 0.5 * 1 * 5)^(1/4)
	[[ $output == *"| torch.compile | 4 | 3 | 0.50 (2/4) | 0.25 (1/4) | 0.25 (1/4) | 1.330x |"* ]]
	[[ $output != *"without a torch.compile time"* ]]
	# HTAM_BASELINES is the default, as for ktask
	HTAM_BASELINES=$bl python3 bench/fastp.py "$run_dir" | grep -qx '| b | 1.0 | 160.0 | 40.0 | 80.0 | 2.00x | 0.50x |'
	# a pack of one more task (axpy, no kernel in this run): 5 in the eager row
	mkdir -p "$BATS_TEST_TMPDIR/pack"
	cp -r "$axpy" "$BATS_TEST_TMPDIR/pack/"
	run --separate-stderr python3 bench/fastp.py --tasks "$BATS_TEST_TMPDIR/pack" "$run_dir"
	[ "$status" -eq 0 ]
	[ "${lines[4]}" = "| a | 1.0 | 100.0 | 50.0 | 40.0 | 2.50x | 1.25x |" ]
	[ "${lines[5]}" = "| axpy | 3.0 | - | - | - | - | - |" ]
	[[ $output == *"| PyTorch eager | 4 | 3 | 0.75 (3/4) |"* ]]
	[[ $output == *"- 1 task without a PyTorch eager time (axpy)"* ]]
}

@test "fastp: errors name the tool and what is wrong" {
	run --separate-stderr python3 bench/fastp.py "$BATS_TEST_TMPDIR/nothing"
	[ "$status" -eq 2 ]
	[ "$stderr" = "fastp: $BATS_TEST_TMPDIR/nothing: no such folder" ]
	mkdir -p "$BATS_TEST_TMPDIR/empty/relu"
	run --separate-stderr python3 bench/fastp.py "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 65 ]
	[ "$stderr" = "fastp: $BATS_TEST_TMPDIR/empty: no task folder with a state-N.jsonl" ]
	echo '{"task": ' >"$BATS_TEST_TMPDIR/empty/relu/state-1.jsonl"
	run --separate-stderr python3 bench/fastp.py "$BATS_TEST_TMPDIR/empty"
	[ "$status" -eq 65 ]
	[[ $stderr == "fastp: $BATS_TEST_TMPDIR/empty/relu/state-1.jsonl: "* ]]
	make_run
	echo '{"tasks": {"a": {"eager": -3}}}' >"$bl"
	run --separate-stderr python3 bench/fastp.py --baselines "$bl" "$run_dir"
	[ "$status" -eq 65 ]
	[ "$stderr" = "fastp: baselines $bl: tasks.a.eager: expected a positive number of microseconds, or null" ]
	# a file that is not there is a bad command line, as for ktask --baselines
	run --separate-stderr python3 bench/fastp.py --baselines "$BATS_TEST_TMPDIR/none.json" "$run_dir"
	[ "$status" -eq 2 ]
	[ "$stderr" = "fastp: --baselines $BATS_TEST_TMPDIR/none.json: no such file, or not readable" ]
}

@test "the Python of bench/ takes the pack's floors from ktask, the one evaluator of sizes" {
	want=$(ktask --list | awk 'NR > 1 {print $1, $4}')
	got=$(python3 -c '
import sys; sys.dont_write_bytecode = True; sys.path.insert(0, "bench")
import taskpack as t
for i in t.pack_ids("tasks"):
    print(i, "%.1f" % t.floor_us(t.load_task("tasks", i)))')
	[ "$got" = "$want" ]
}

@test "ktask --sizes: shapes, randint bounds, bytes, flops and the floor at the params" {
	run ktask --sizes cross_entropy
	[ "$status" -eq 0 ]
	jq -e '.shapes.x == [32768, 4096] and .shapes.targets == [32768] and .shapes.loss == []
		and .bounds.targets == [0, 4096] and .bytes > 0 and .floor_us > 0' <<<"$output"
	# a record's task, which needs only what it evaluates
	run ktask --sizes - <<<'{"task": {"params": {"rows": 7, "cols": 4096}, "bytes": "cdiv(-rows, 2) * cols", "flops": 1}}'
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.bytes, .flops]' <<<"$output")" = '[-12288,1]' ]
	run --separate-stderr ktask --sizes - <<<'{"task": {"params": {"rows": 7}, "bytes": "rows / (rows - 7)"}}'
	[ "$status" -eq 65 ]
	[ "$stderr" = "ktask: line 1: task.bytes: column 6: division by zero" ]
}

@test "bench's Python scripts compile (their PyTorch part runs on the GPU machine)" {
	for f in bench/torch-baselines.py bench/fastp.py bench/taskpack.py; do
		python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$f"
	done
	# with numpy and PyTorch (scripts/setup installs them) it shows its
	# usage; without either it exits 69 naming the module it lacks
	if python3 -c 'import numpy, torch' 2>/dev/null; then
		run python3 bench/torch-baselines.py --help
		[ "$status" -eq 0 ]
		[[ ${lines[0]} == "usage: torch-baselines.py"* ]]
	else
		run python3 bench/torch-baselines.py --help
		[ "$status" -eq 69 ]
		[[ $output == "torch-baselines: needs numpy and PyTorch (No module named '"*"'); run scripts/setup"* ]]
	fi
	# a python3 that lacks one of them (an empty path for its modules)
	# gives the same clear error, whichever it is
	mkdir -p "$BATS_TEST_TMPDIR/nomods/numpy"
	echo 'raise ImportError("No module named '"'"'numpy'"'"'")' >"$BATS_TEST_TMPDIR/nomods/numpy/__init__.py"
	run env PYTHONPATH="$BATS_TEST_TMPDIR/nomods" python3 bench/torch-baselines.py --help
	[ "$status" -eq 69 ]
	[ "$output" = "torch-baselines: needs numpy and PyTorch (No module named 'numpy'); run scripts/setup, or use a python3 that has them" ]
}
