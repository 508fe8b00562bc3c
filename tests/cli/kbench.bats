#!/usr/bin/env bats
# kbench without a GPU: what it checks in a record before any device work,
# the statuses it passes through, and the one-line no-driver error (69).

bats_require_minimum_version 1.5.0

# A compiled record of the relu task whose candidate is the task's own
# reference, through the real kcompile (NVRTC, no GPU): on this machine no
# record ever reaches the device, so what kbench checks offline decides.
setup_file() {
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	REC=$(ktask relu | jq -c '. + {candidate: {id: "c1", source: .task.reference.source,
		defines: {}, launch: .task.reference.launch, generator: "test"}}' | kcompile)
	export REC
}

setup() {
	rec=$REC
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

# bench_of JQ: the bench object kbench writes for $rec edited by JQ.
bench_of() {
	jq -c "$1" <<<"$rec" | kbench -q | jq -c .bench
}

@test "a plan whose args do not match the kernel's parameters is rejected before launch" {
	# relu_ref(const float *x, float *y, long long n): three parameters, 8 bytes each
	[ "$(bench_of '.candidate.launch.launches[0].args |= .[:2]')" = \
		'{"status":"rejected","reason":"launch plan: launches[0] (relu_ref): the kernel takes 3 parameters but the plan passes 2 args"}' ]
	[ "$(bench_of '.candidate.launch.launches[0].args += ["i32:1"]')" = \
		'{"status":"rejected","reason":"launch plan: launches[0] (relu_ref): the kernel takes 3 parameters but the plan passes 4 args"}' ]
	# a 4-byte scalar where the kernel reads 8 bytes (n is a long long)
	[ "$(bench_of '.candidate.launch.launches[0].args[2] = "i32:rows*cols"')" = \
		'{"status":"rejected","reason":"launch plan: launches[0] (relu_ref): args[2] is i32 (4 bytes) but parameter 2 of the kernel is 8 bytes"}' ]
	[ "$(bench_of '.candidate.launch.launches[0].args[2] = "f32:1"')" = \
		'{"status":"rejected","reason":"launch plan: launches[0] (relu_ref): args[2] is f32 (4 bytes) but parameter 2 of the kernel is 8 bytes"}' ]
	# widths match: a buffer for an 8-byte scalar, or i64 for a pointer, is no
	# uninitialised read, and goes on to the device (which this machine lacks)
	if ! ldconfig -p | grep -q 'libcuda.so.1 '; then
		run kbench -q <<<"$(jq -c '.candidate.launch.launches[0].args[2] = "y"' <<<"$rec")"
		[ "$status" -eq 69 ]
	fi
}

@test "a parameter no plan arg can fill (a struct by value) is rejected, naming it" {
	src='struct rgb { float r, g, b; }; extern "C" __global__ void relu_ref(const float *x, float *y, long long n, rgb c) {}'
	out=$(jq -c --arg s "$src" '.candidate.source = $s | .candidate.launch.launches[0].args += ["i64:1"] | del(.compile)' <<<"$rec" |
		kcompile | kbench -q | jq -c .bench)
	[ "$out" = '{"status":"rejected","reason":"launch plan: launches[0] (relu_ref): parameter 3 of the kernel is 12 bytes, which no plan arg can fill (args are 4 or 8 bytes)"}' ]
}

@test "a cubin that is not one is rejected (candidate) or malformed (reference)" {
	[ "$(bench_of '.compile.cubin = "AAAA"')" = '{"status":"rejected","reason":"the cubin is 3 bytes, too short for an ELF header"}' ]
	[ "$(bench_of '.compile.cubin = "not base64"')" = '{"status":"rejected","reason":"the cubin is not base64"}' ]
	run --separate-stderr kbench -q <<<"$(jq -c '.compile.reference.cubin = "AAAA"' <<<"$rec")"
	[ "$status" -eq 65 ]
	[ "$stderr" = 'kbench: line 1: task "relu": compile.reference.cubin: the cubin is 3 bytes, too short for an ELF header' ]
	# the task's own reference plan must fit its kernel too
	run --separate-stderr kbench -q <<<"$(jq -c '.task.reference.launch.launches[0].args |= .[:2]' <<<"$rec")"
	[ "$status" -eq 65 ]
	[ "$stderr" = 'kbench: line 1: task "relu": reference.launch: launches[0] (relu_ref): the kernel takes 3 parameters but the plan passes 2 args' ]
}

@test "--without switches named protections off, and refuses any other name" {
	run --separate-stderr kbench --without restore,bogus </dev/null
	[ "$status" -eq 2 ]
	[[ $stderr == "kbench: --without restore,bogus: 'bogus' is not a protection (restore, fresh, checks)"* ]]
	run --separate-stderr kbench --without restore,fresh,checks </dev/null
	[ "$status" -eq 0 ]
	[ "$stderr" = "kbench: protections off (--without): verdicts are weaker, and each record's bench.protocol says so" ]
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
	run --separate-stderr kbench -q <<<"$(jq -c '.task.inputs[0].dtype = "f8"' <<<"$rec")"
	[ "$status" -eq 65 ]
	[[ $stderr == 'kbench: line 1: '*'dtype'* ]]
}

@test "broken JSON is malformed (65) with line and column" {
	run --separate-stderr kbench -q <<<'{"task": '
	[ "$status" -eq 65 ]
	[[ $stderr == 'kbench: line 1'* ]]
}
