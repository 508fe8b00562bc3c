#!/usr/bin/env bats
# ktask: loads task folders into records. Each bad task gets a message
# naming the task and the field, and exit 65.

fixture=$BATS_TEST_DIRNAME/../data/tasks/axpy

# Copies the fixture task with task.json changed by a jq filter, then
# runs ktask on the copy.
ktask_with() {
	mkdir -p "$BATS_TEST_TMPDIR/axpy"
	cp "$fixture/reference.cu" "$BATS_TEST_TMPDIR/axpy/"
	jq "$1" "$fixture/task.json" >"$BATS_TEST_TMPDIR/axpy/task.json"
	run ktask "$BATS_TEST_TMPDIR/axpy"
}

# The run failed with exit 65 and a message containing $1.
refused_with() {
	[ "$status" -eq 65 ] || { echo "status $status: $output"; return 1; }
	[[ $output == *"$1"* ]] || { echo "message: $output"; return 1; }
}

@test "a task loads into one record with the reference inlined" {
	run ktask "$fixture"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.task.id' <<<"$output")" = axpy ]
	[[ $(jq -r '.task.reference.source' <<<"$output") == *"axpy_ref("* ]]
}

@test "--state writes a step-0 state" {
	run ktask --state --run r7 "$fixture"
	[ "$status" -eq 0 ]
	[ "$(jq -c '[.run, .step, .best, .history, .features.family]' <<<"$output")" = '["r7",0,null,[],"elementwise"]' ]
}

@test "every task of the pack loads" {
	cd "$BATS_TEST_DIRNAME/../.."
	n=$(ls -d tasks/*/ | wc -l)
	[ "$n" -gt 0 ]
	run ktask
	[ "$status" -eq 0 ]
	[ "$(grep -c '^{' <<<"$output")" -eq "$n" ]
}

@test "ktask finds the pack beside itself, from any folder, and in each folder of HTAM_TASKS" {
	root=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	cd "$BATS_TEST_TMPDIR"
	unset HTAM_TASKS
	ktask relu | jq -e '.task.id == "relu"'
	[ "$(ktask --list | wc -l)" -eq $(( $(ls -d "$root"/tasks/*/ | wc -l) + 1 )) ]
	# a folder of one's own ahead of the pack: its task, then the pack's
	mkdir -p mine/axpy
	cp "$BATS_TEST_DIRNAME/../data/tasks/axpy/"* mine/axpy/
	HTAM_TASKS=$PWD/mine:$root/tasks ktask axpy relu | jq -r .task.id | paste -sd' ' | grep -qx 'axpy relu'
	# a path that is not a task folder is not looked up in the pack
	run ktask ./relu
	[ "$status" -eq 65 ]
}

@test "--list shows id, family, bound and floor" {
	run ktask --list "$fixture"
	[ "$status" -eq 0 ]
	[[ ${lines[1]} =~ ^axpy\ +elementwise\ +latency\ +3\.0 ]]
}

@test "an unknown task is named" {
	run ktask no_such_task
	[ "$status" -eq 65 ]
	[[ $output == *"no_such_task: no such task"* ]]
}

@test "broken JSON names the file, line and column" {
	mkdir -p "$BATS_TEST_TMPDIR/axpy"
	printf '{"id": "axpy",\n "family": }\n' >"$BATS_TEST_TMPDIR/axpy/task.json"
	run ktask "$BATS_TEST_TMPDIR/axpy"
	refused_with "axpy/task.json: line 2, column"
}

@test "each required field, when missing, is named" {
	for f in description torch family spec params check_params inputs outputs \
	    tolerance bytes flops reference; do
		ktask_with "del(.$f)"
		refused_with "$f" || { echo "field $f"; return 1; }
		[[ $output == *'task "axpy"'* || $f == reference ]] || { echo "$f: $output"; return 1; }
	done
}

@test "each field of the wrong type is named" {
	ktask_with '.description = 3';          refused_with 'task "axpy": description: expected a string'
	ktask_with '.params = [1]';             refused_with 'params: expected an object of sizes'
	ktask_with '.params.n = "big"';         refused_with 'params.n: expected a positive integer'
	ktask_with '.params.n = 0';             refused_with 'params.n: expected a positive integer'
	ktask_with '.check_params = {}';        refused_with 'check_params: expected an array of at least two'
	ktask_with '.check_params = [{"n":1}]'; refused_with 'check_params: expected an array of at least two'
	ktask_with '.check_params[1] = {"m":3}'; refused_with 'check_params[1].m: not a size of params'
	ktask_with '.inputs = "x"';             refused_with 'inputs: expected a non-empty array'
	ktask_with '.inputs[1].dtype = "f8"';  refused_with 'inputs[1].dtype: expected f32, f64, f16, bf16, i32, i64 or bool'
	# a bool is a mask: an input drawn 0 or 1, never an output
	ktask_with '.inputs[1].dtype = "bool" | .inputs[1].init = {"dist":"randint","low":0,"high":3}'
	refused_with 'inputs[1].init: a bool draws randint with 0 <= low < high <= 2'
	ktask_with '.outputs[0].dtype = "bool"'; refused_with 'outputs[0].dtype: bool is an input'"'"'s type'
	ktask_with '.inputs[0].name = "1x"';    refused_with 'inputs[0].name: expected a C identifier'
	ktask_with '.outputs[0].name = "x"';    refused_with "outputs[0].name: 'x' is used twice"
	ktask_with '.inputs[0].init.dist = "cauchy"'; refused_with "inputs[0].init.dist: 'cauchy' is not"
	ktask_with '.inputs[0].init.std = -1';  refused_with 'inputs[0].init.std: must be at least 0'
	ktask_with '.inputs[1].init.low = 2';   refused_with 'uniform needs numbers low < high'
	ktask_with '.inputs[0].init = {"dist":"randint","low":"0","high":"n"}'; refused_with "'randint' does not suit dtype f32"
	# tril is no draw: a causal mask's fixed values, over two axes at least
	ktask_with '.inputs[0].init = {"dist":"tril"}'; refused_with 'inputs[0].init: tril needs at least two axes (it has 1)'
	ktask_with '.inputs[0].init = {"dist":"tril","low":0}'; refused_with 'inputs[0].init: tril takes no other member'
	ktask_with '.inputs[0].init = {"dist":"tril"} | .inputs[0].shape = ["n", "n"] | .inputs[1].shape = ["n", "n"]'
	[ "$status" -eq 0 ]
	ktask_with '.tolerance.atol = "small"'; refused_with 'tolerance.atol: expected a number'
	ktask_with 'del(.tolerance.why)';       refused_with 'tolerance.why'
	ktask_with '.bytes = 12.5';             refused_with 'bytes: expected a size expression'
	ktask_with '.flops = "2*n/0"';          refused_with 'flops: column 4: division by zero'
	ktask_with '.parms = {}';               refused_with "unknown field 'parms'"
	ktask_with '.id = "other"';             refused_with 'id "other" is not the folder'"'"'s name "axpy"'
}

@test "an unknown family is refused" {
	ktask_with '.family = "convolution"'
	refused_with "family: 'convolution' is not a known family"
}

@test "a chain's stages (then) are checked: each a known family, its spec, the buffer it reads and the inputs it reads besides; the first stage's inputs (first_inputs) where stages share one" {
	# axpy as a chain: 2x first (reading x), then the sum with z
	chain='.spec = {"expr": "2.0f * x", "numel": "n"} | .then = [{"family": "elementwise",
		"spec": {"expr": "then_1 + z", "numel": "n"}, "from": {"shape": ["n"], "dtype": "f32"}, "inputs": ["z"]}]'
	ktask_with "$chain"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.task.then[0].inputs' <<<"$output")" = '["z"]' ]
	ktask_with "$chain"' | .then = []';        refused_with 'then: expected an array of 1 to 4 stages'
	ktask_with "$chain"' | .then[0].family = "convolution"'
	refused_with "then[0].family: 'convolution' is not a known family"
	ktask_with "$chain"' | .then[0].spec = 1'; refused_with 'then[0].spec: expected an object'
	ktask_with "$chain"' | .then[0].from.dtype = "i64"'; refused_with 'then[0].from.dtype: expected a float type'
	ktask_with "$chain"' | .then[0].from.shape = ["m"]'; refused_with "then[0].from.shape[0]: column 1: unknown name 'm'"
	ktask_with "$chain"' | .then[0].inputs = ["w"]'
	refused_with "then[0].inputs[0]: expected the name of one of the task's inputs"
	ktask_with "$chain"' | .then[0].inputs = ["z", "z"]'; refused_with "then[0].inputs[1]: 'z' is named twice"
	# first_inputs: the first stage's inputs, where one is a later stage's too (x added again at the end)
	ktask_with "$chain"' | .first_inputs = ["x"] | .then[0].inputs = ["z", "x"] | .then[0].spec.expr = "then_1 + z - x"'
	[ "$status" -eq 0 ]
	ktask_with "$chain"' | .first_inputs = ["x", "w"]'
	refused_with "first_inputs[1]: expected the name of one of the task's inputs"
	ktask_with "$chain"' | .first_inputs = ["x", "x"]'; refused_with "first_inputs[1]: 'x' is named twice"
	ktask_with "$chain"' | .first_inputs = ["x"] | .then[0].inputs = []'
	refused_with "inputs[1]: 'z' is read by no stage (first_inputs names the first stage's)"
	ktask_with "$chain"' | del(.then) | .first_inputs = ["x"]'
	refused_with 'first_inputs: only a chain (then) has stages to name inputs for'
	ktask_with "$chain"' | .then[0].via = 1';  refused_with "then[0]: unknown member 'via'"
	# the buffers between stages are named then_1, then_2, ...: no tensor of the task may be
	ktask_with "$chain"' | .inputs[1].name = "then_1" | .then[0].inputs = ["then_1"]'
	refused_with "inputs[1].name: 'then_1' is the name of a buffer between a chain's stages"
	ktask_with "$chain"' | .family = "none" | .spec = {}'
	refused_with 'then: a task of no family ("none") has no stages after it'
}

@test "a shape naming an undefined size is refused" {
	ktask_with '.outputs[0].shape = ["n", "m"]'
	refused_with "outputs[0].shape[1]: column 1: unknown name 'm'"
}

@test "a shape that is zero at a check size is refused" {
	ktask_with '.outputs[0].shape = ["n - 1"]'
	refused_with "outputs[0].shape[0]: 0 is less than 1"
}

@test "the reference's launch plan is checked at every size" {
	ktask_with '.reference.launch.launches[0].grid = ["n / 2"]'
	refused_with 'reference.launch: at sizes {"n":1}: launches[0].grid: x = 0 is outside'
	ktask_with '.reference.launch.launches[0].args[1] = "w"'
	refused_with "launches[0].args[1]: 'w' is neither a buffer"
	ktask_with '.reference.launch.launches[0].block = [2048]'
	refused_with 'launches[0].block: x = 2048 is outside 1..1024'
	ktask_with '.reference.file = "../etc/passwd"'
	refused_with 'reference.file: expected the name of a file beside task.json'
	ktask_with '.reference.file = "missing.cu"'
	refused_with 'missing.cu: No such file or directory'
}

@test "--help prints the usage and exits 0; a bad option exits 2" {
	run ktask --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: ktask"* ]]
	run ktask --bogus
	[ "$status" -eq 2 ]
}
