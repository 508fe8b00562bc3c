#!/usr/bin/env bats
# kbench on the GPU: the references of the pack against an independent
# float64 computation, and kernels that cheat or fail, each caught with
# the right status. Records are built by tests/gpu/data/mkrec (nvcc, jq).

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
}

D=tests/gpu/data
RELU='{"launches":[{"kernel":"relu","grid":["cdiv(rows*cols,256)"],"block":[256],"args":["x","y","i64:rows*cols"]}]}'

# rec NAME [LAUNCH]: a relu_small record with candidate cand/NAME.cu.
rec() {
	"$D/mkrec" "$D/tasks/${TASK:-relu_small}" "$D/cand/$1.cu" "${2:-$RELU}"
}

# bench: kbench on stdin; sets $st and $why from the last record.
bench() {
	out=$(kbench -q "$@")
	st=$(jq -r .bench.status <<<"$out" | tail -1)
	why=$(jq -r .bench.reason <<<"$out" | tail -1)
	echo "# status $st: $why" >&3
}

@test "the reference of relu_small checks against itself and is timed" {
	bench <<<"$("$D/mkrec" "$D/tasks/relu_small")"
	[ "$st" = ok ]
	jq -e '.bench.subject == "reference" and .bench.time_us.reps >= 10
		and .bench.speedup > 0.9 and .bench.floor_fraction > 0 and .bench.trials == 11
		and .bench.rel_l2 == 0 and .bench.weak == false' <<<"$out"
}

@test "a task through the real kcompile (reference only) is checked and timed" {
	out=$(ktask tests/data/tasks/axpy | kcompile | kbench -q)
	jq -e '.bench.status == "ok" and .bench.subject == "reference" and .bench.time_us.reps >= 10' <<<"$out"
}

@test "PyTorch's times from a baselines file give bench.vs_eager and vs_compile" {
	echo '{"tasks": {"axpy": {"eager": 100, "compile": 50}}}' >"$BATS_TEST_TMPDIR/bl.json"
	out=$(ktask --baselines "$BATS_TEST_TMPDIR/bl.json" tests/data/tasks/axpy | kcompile | kbench -q)
	jq -e '.bench.status == "ok" and (.bench.vs_eager * .bench.time_us.median - 100 | . * . < 1e-12)
		and (.bench.vs_compile * .bench.time_us.median - 50 | . * . < 1e-12)' <<<"$out"
}

@test "a correct float4 kernel is ok, with times, GB/s and the floor" {
	bench <<<"$(rec relu_good '{"launches":[{"kernel":"relu","grid":[528],"block":[256],"args":["x","y","i64:rows*cols"]}]}')"
	[ "$st" = ok ]
	jq -e '.bench.gbps > 100 and .bench.floor_fraction <= 1.2 and .bench.time_us.min <= .bench.time_us.median' <<<"$out"
}

@test "writes nothing: incorrect, the poison is found" {
	bench <<<"$(rec writes_nothing)"
	[ "$st" = incorrect ]
	[[ $why == *"got \"nan\""*"never written"* ]]
	jq -e '.bench.first_mismatch.index == 0 and .bench.first_mismatch.got == "nan"' <<<"$out"
}

@test "writes zeros: incorrect" {
	bench <<<"$(rec writes_zeros)"
	[ "$st" = incorrect ]
	jq -e '.bench.first_mismatch.got == 0 and .bench.first_mismatch.want > 0' <<<"$out"
}

@test "handles only the benchmark size: incorrect at a check size" {
	bench <<<"$(rec bench_size_only)"
	[ "$st" = incorrect ]
	[[ $why == *"rows=37 cols=4099"* || $why == *"rows=3 cols=100003"* || $why == *"rows=1 cols=1"* ]]
}

@test "overwrites its input: incorrect, the input is named" {
	bench <<<"$(rec overwrites_input)"
	[ "$st" = incorrect ]
	[[ $why == "changed its input x"* ]]
}

@test "reuses the previous run's output: incorrect on the next trial" {
	bench <<<"$(rec reuses_output '{"launches":[{"kernel":"relu","grid":["cdiv(rows*cols,256)"],"block":[256],"args":["x","y","i64:rows*cols"]},{"kernel":"finish","grid":[1],"block":[1],"args":[]}]}')"
	[ "$st" = incorrect ]
	[[ $why == *"never written"* ]]
}

@test "caches its result by input pointer: incorrect on the next seed" {
	bench <<<"$(rec caches_by_pointer '{"launches":[{"kernel":"relu","grid":["cdiv(rows*cols,256)"],"block":[256],"args":["x","y","i64:rows*cols"]},{"kernel":"remember","grid":[1],"block":[1],"args":["x","i64:rows*cols"]}]}')"
	[ "$st" = incorrect ]
	[[ $why == *"seed "[23]* ]]
}

@test "reads past the end of its input: incorrect (the guard zone is NaN)" {
	bench <<<"$(rec reads_past_end)"
	[ "$st" = incorrect ]
}

@test "writes past the end of its output: incorrect, the guard zone changed" {
	bench <<<"$(rec writes_past_end)"
	[ "$st" = incorrect ]
	[[ $why == "wrote out of bounds"*"around y"* ]]
}

@test "reads far out of bounds: crash, and the next record runs in a new worker" {
	bench <<<"$(rec reads_far)
$(rec relu_good)"
	[ "$(jq -r .bench.status <<<"$out" | head -1)" = crash ]
	[[ $(jq -r .bench.reason <<<"$out" | head -1) == *ILLEGAL_ADDRESS* ]]
	[ "$st" = ok ]
}

@test "never terminates: timeout, and the stream goes on" {
	bench -t 10 <<<"$(rec never_ends)
$(rec relu_good)"
	[ "$(jq -r .bench.status <<<"$out" | head -1)" = timeout ]
	[[ $(jq -r .bench.reason <<<"$out" | head -1) == "no answer within 10 s"* ]]
	[ "$st" = ok ]
}

@test "races on a row sum: incorrect" {
	TASK=rowsum bench <<<"$(TASK=rowsum rec rowsum_race '{"launches":[{"kernel":"rowsum","grid":[8,"rows"],"block":[256],"args":["x","y","i64:rows","i64:cols"]}]}')"
	[ "$st" = incorrect ]
}

@test "a time under the roofline floor is rejected as impossible" {
	# relu_floor claims 1000 times the bytes relu moves: an honest kernel
	# then runs "faster than physics", which kbench must refuse.
	bench <<<"$("$D/mkrec" "$D/tasks/relu_floor")"
	[ "$st" = rejected ]
	[[ $why == "time below the physical bound: impossible"* ]]
}

@test "a plan asking for more shared memory than the device has is rejected before launch" {
	bench <<<"$(rec relu_good '{"launches":[{"kernel":"relu","grid":[528],"block":[256],"smem":"300000","args":["x","y","i64:rows*cols"]}]}')"
	[ "$st" = rejected ]
	[[ $why == *"shared memory"* ]]
}

@test "every reference of the pack matches float64 PyTorch at the check sizes" {
	dump=$BATS_TEST_TMPDIR/dump
	for t in tasks/*/; do "$D/mkrec" "$t"; done | kbench -q -s 1 --budget-ms 0 --min-reps 1 -d "$dump" >"$BATS_TEST_TMPDIR/pack.jsonl"
	run python3 bench/torch-baselines.py --check "$dump" --tasks tasks
	sed "s/^/# /" <<<"$output" >&3
	[ "$status" -eq 0 ]
	[ "$(jq -r .bench.status "$BATS_TEST_TMPDIR/pack.jsonl" | sort -u)" = ok ]
}

@test "the gemm family's split-precision kernels stay fp32-accurate far outside fp16's range" {
	# h3 (3xFP16, the default here) and tiled (3xTF32) on A ~ 3e5 and
	# B ~ 1e-7: h3's power-of-two scales must keep both in range
	out=$(ktask --state "$D/tasks/matmul_range" |
		jq -c '.memory.strategies = [{id: "tf32", moves: [{family: "gemm", variant: "tiled"}]}]' |
		kgen -k 2 | kcompile | kbench -q)
	echo "$out" | jq -c '[.candidate.variant, .bench.status, .bench.rel_l2, .bench.reason]' >&3
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "h3 tiled " ]
	# measured 1.7e-7 (h3) and 5.6e-7 (tiled) on the H200; the task allows 5e-5
	jq -e -s 'all(.bench.status == "ok" and .bench.rel_l2 < 2e-6 and .bench.weak == false)' <<<"$out"
}

@test "the gemm family's kernels are correct on a batched F.linear (B stored N x K, per batch)" {
	out=$(ktask --state tests/data/kgen-gemm/batched_linear_tanh |
		jq -c '.memory.strategies = [{id: "tf32", moves: [{family: "gemm", variant: "tiled"}]}]' |
		kgen -k 2 | kcompile | kbench -q)
	echo "$out" | jq -c '[.candidate.variant, .bench.status, .bench.rel_l2, .bench.reason]' >&3
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "h3 tiled " ]
	jq -e -s 'all(.bench.status == "ok" and .bench.weak == false)' <<<"$out"
}
