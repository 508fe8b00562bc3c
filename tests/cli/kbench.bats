#!/usr/bin/env bats
# kbench without a GPU: what it checks in a record before any device work,
# the statuses it passes through, and the one-line no-driver error (69).

bats_require_minimum_version 1.5.0

setup() {
	# A compiled record of the relu task, its cubins stand-ins: on this
	# machine no record ever reaches the device.
	task=$(jq -c '.reference.source = "extern \"C\" __global__ void relu_ref() {}"' \
		tasks/relu/task.json)
	rec=$(jq -nc --argjson t "$task" '{task: $t, candidate: {id: "c1",
		source: "", defines: {}, launch: $t.reference.launch},
		compile: {ok: true, cubin: "AAAA", reference: {ok: true, cubin: "AAAA"}}}')
}

@test "--help prints usage and exits 0" {
	run kbench --help
	[ "$status" -eq 0 ]
	[[ $output == *"usage: kbench"* ]]
	[[ $output == *"--timeout"* ]]
}

@test "a bad option is a usage error (2)" {
	run kbench --bogus
	[ "$status" -eq 2 ]
	run kbench --seeds 0
	[ "$status" -eq 2 ]
	[[ $output == *"--seeds 0: too small"* ]]
}

@test "no GPU: one line naming libcuda, exit 69, nothing on stdout" {
	if ldconfig -p | grep -q 'libcuda.so.1 '; then skip "this machine has a CUDA driver"; fi
	run --separate-stderr kbench <<<"$rec"
	[ "$status" -eq 69 ]
	[ -z "$output" ]
	[ "$stderr" = "kbench: no CUDA driver (libcuda.so.1): libcuda.so.1: cannot open shared object file: No such file or directory; kbench needs an NVIDIA GPU" ]
}

@test "compile errors pass through as bench.status compile_error, without a GPU" {
	out=$(jq -c '.compile = {ok: false, status: "error", reason: "line 3: expected a \";\""}' <<<"$rec" | kbench -q)
	[ "$(jq -c .bench <<<"$out")" = '{"status":"compile_error","reason":"line 3: expected a \";\""}' ]
	[ "$(jq -r .candidate.id <<<"$out")" = c1 ]
}

@test "a reference that did not compile fails its record, without a GPU" {
	out=$(jq -c '.compile.reference = {ok: false, status: "timeout", reason: "NVRTC ran past 60 s"}' <<<"$rec" | kbench -q)
	[ "$(jq -c .bench <<<"$out")" = '{"status":"compile_error","reason":"the task'"'"'s reference did not compile (timeout: NVRTC ran past 60 s)"}' ]
}

@test "a task alone, through the real kcompile, is accepted: the reference is judged against itself" {
	# ktask | kcompile writes only compile.reference; kbench then needs the
	# device, which this machine lacks (69), and never calls the record bad (65).
	if ldconfig -p | grep -q 'libcuda.so.1 '; then skip "this machine has a CUDA driver"; fi
	run --separate-stderr bash -c "ktask '$BATS_TEST_DIRNAME/../data/tasks/axpy' | kcompile | kbench"
	[ "$status" -eq 69 ]
	[[ $stderr == "kbench: no CUDA driver"* ]]
}

@test "--dump with an empty folder name is a usage error" {
	run kbench -d "" </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"--dump needs a folder"* ]]
}

@test "generator failures pass through as gen_error" {
	out=$(jq -c '.candidate.status = "gen_error" | .candidate.reason = "no CUDA block in the answer" | del(.compile)' <<<"$rec" | kbench -q)
	[ "$(jq -c .bench <<<"$out")" = '{"status":"gen_error","reason":"no CUDA block in the answer"}' ]
}

@test "a launch plan that does not evaluate is rejected with the reason" {
	out=$(jq -c '.candidate.launch.launches[0].grid = ["rowz"]' <<<"$rec" | kbench -q)
	[ "$(jq -r .bench.status <<<"$out")" = rejected ]
	[[ $(jq -r .bench.reason <<<"$out") == "launch plan: "*"rowz"* ]]
}

@test "every record is judged in order; an offline verdict is flushed before a later failure" {
	bad=$(jq -c '.compile = {ok: false, reason: "x"}' <<<"$rec")
	run --separate-stderr kbench -q <<<"$bad
$bad
{\"task\": 3}"
	[ "$status" -eq 65 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$stderr" = 'kbench: line 3: no "task" object' ]
}

@test "a record without compile is malformed (65)" {
	run --separate-stderr kbench -q <<<"$(jq -c 'del(.compile)' <<<"$rec")"
	[ "$status" -eq 65 ]
	[ -z "$output" ]
	[[ $stderr == 'kbench: line 1: task "relu": no "compile" object (pipe the record through kcompile first)' ]]
}

@test "compile.ok true without a cubin is malformed (65)" {
	run --separate-stderr kbench -q <<<"$(jq -c 'del(.compile.cubin)' <<<"$rec")"
	[ "$status" -eq 65 ]
	[[ $stderr == *'compile.cubin is not a string'* ]]
	run --separate-stderr kbench -q <<<"$(jq -c 'del(.compile.reference)' <<<"$rec")"
	[ "$status" -eq 65 ]
	[[ $stderr == *'no compile.reference.cubin'* ]]
}

@test "an invalid task is malformed (65) and names the field" {
	run --separate-stderr kbench -q <<<"$(jq -c '.task.inputs[0].dtype = "f16"' <<<"$rec")"
	[ "$status" -eq 65 ]
	[[ $stderr == 'kbench: line 1: '*'dtype'* ]]
}

@test "broken JSON is malformed (65) with line and column" {
	run --separate-stderr kbench -q <<<'{"task": '
	[ "$status" -eq 65 ]
	[[ $stderr == 'kbench: line 1'* ]]
}
