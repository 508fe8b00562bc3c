#!/usr/bin/env bats
# kbench on the GPU: the references of the pack against an independent
# float64 computation, kernels that cheat or fail, each caught with the
# right status or left without gain, and the null-kernel gate over every
# task of the pack. Records are built by tests/gpu/data/mkrec (nvcc, jq).

bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
}

D=tests/gpu/data
RELU='{"launches":[{"kernel":"relu","grid":["cdiv(rows*cols,256)"],"block":[256],"args":["x","y","i64:rows*cols"]}]}'
MM='{"kernel":"mm","grid":["cdiv(n,16)","cdiv(m,16)"],"block":[16,16],"args":["A","B","C","i64:m","i64:n","i64:k"]}'
SAMPLE='{"kernel":"sample","grid":[1],"block":[1],"args":["A","B","i64:m","i64:n","i64:k"]}'
TICK='{"kernel":"tick","grid":[1],"block":[1],"args":[]}'

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

# mm NAME LAUNCH...: a matmul_small record with candidate cand/NAME.cu
# whose plan runs the launches given (JSON objects) in order.
mm() {
	local name=$1
	shift
	"$D/mkrec" "$D/tasks/matmul_small" "$D/cand/$name.cu" "{\"launches\":[$(IFS=,; echo "$*")]}"
}

# median N: the median time of record N (1-based) of $out.
median() {
	jq -s ".[$1 - 1].bench.time_us.median" <<<"$out"
}

# without W: kbench's option switching protection W off (none: nothing).
without() {
	[ "$1" = none ] || echo "--without $1"
}

# honest: the median of record 2 is at least 0.6 times that of record 1
# (mm_good, timed in the same stream): the cheat gained nothing.
honest() {
	echo "# mm_good $(median 1) us, the cheat $(median 2) us" >&3
	jq -e -s '.[1].bench.time_us.median >= 0.6 * .[0].bench.time_us.median' <<<"$out" >/dev/null
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

@test "reuses the previous run's output: its flag is restored, so it computes every run (incorrect without the restore)" {
	r=$(rec reuses_output '{"launches":[{"kernel":"relu","grid":["cdiv(rows*cols,256)"],"block":[256],"args":["x","y","i64:rows*cols"]},{"kernel":"finish","grid":[1],"block":[1],"args":[]}]}')
	bench <<<"$r"
	[ "$st" = ok ]
	jq -e '.bench.protocol.module_state_bytes >= 4' <<<"$out"
	bench --without restore <<<"$r"
	[ "$st" = incorrect ]
	[[ $why == *"never written"* ]]
	jq -e '.bench.protocol.restore == false' <<<"$out"
}

@test "caches its result by input pointer: the cache is restored empty every run (incorrect on the next seed without the restore)" {
	r=$(rec caches_by_pointer '{"launches":[{"kernel":"relu","grid":["cdiv(rows*cols,256)"],"block":[256],"args":["x","y","i64:rows*cols"]},{"kernel":"remember","grid":[1],"block":[1],"args":["x","i64:rows*cols"]}]}')
	bench <<<"$r"
	[ "$st" = ok ]
	bench --without restore <<<"$r"
	[ "$st" = incorrect ]
	[[ $why == *"seed "[23]* ]]
}

@test "every verdict says how it was reached: the protocol, and the timed runs checked" {
	bench <<<"$(mm mm_good "$MM")"
	[ "$st" = ok ]
	# one run of each batch of ten at random, and the last one
	jq -e '.bench.protocol | .restore and .fresh_inputs and .check_timed
		and .timed_checked >= 2 and .timed_checked == (.timed_checked_runs | length)
		and .timed_checked_runs[-1] == $reps' --argjson reps "$(jq .bench.time_us.reps <<<"$out")" <<<"$out"
	jq -e '.bench.wall_ms.timed_checks > 0' <<<"$out"
}

@test "notices its inputs repeat (samples kept in module memory) and does less: no gain, whatever one protection is off" {
	good=$(mm mm_good "$MM")
	cheat=$(mm mm_notices_repeat "$SAMPLE" "$MM")
	# the samples are restored, and the inputs are fresh for every timed run
	for w in none restore fresh checks; do
		out=$(kbench -q $(without "$w") <<<"$good
$cheat" 2>/dev/null)
		[ "$(jq -r .bench.status <<<"$out" | tr '\n' ' ')" = "ok ok " ]
		honest
	done
	# without both the restore and fresh inputs, the checks of timed runs catch it
	bench --without restore,fresh <<<"$cheat"
	[ "$st" = incorrect ]
	[[ $why == "timed run "*" differed from the reference: output C at m=1024 n=1024 k=1024"* ]]
	# and with all three off, it passes at a time the checked kernel never had
	out=$(kbench -q --without restore,fresh,checks <<<"$good
$cheat" 2>/dev/null)
	[ "$(jq -r .bench.status <<<"$out" | tr '\n' ' ')" = "ok ok " ]
	! honest
}

@test "replays its result when the inputs repeat (right outputs, less work): no gain with the restore or fresh inputs" {
	good=$(mm mm_good "$MM")
	cheat=$(mm mm_replays "$SAMPLE" "$MM")
	for w in none restore fresh; do
		out=$(kbench -q $(without "$w") <<<"$good
$cheat" 2>/dev/null)
		[ "$(jq -r .bench.status <<<"$out" | tr '\n' ' ')" = "ok ok " ]
		honest
	done
	# its outputs are right, so checks alone cannot see it: without both,
	# it passes faster than it computes
	out=$(kbench -q --without restore,fresh <<<"$good
$cheat" 2>/dev/null)
	[ "$(jq -r .bench.status <<<"$out" | tr '\n' ' ')" = "ok ok " ]
	! honest
}

@test "counts its launches in module memory and cheats once timing starts: no gain (incorrect by a timed run's check without the restore)" {
	good=$(mm mm_good "$MM")
	cheat=$(mm mm_counts_launches "$TICK" "$MM")
	out=$(kbench -q <<<"$good
$cheat")
	[ "$(jq -r .bench.status <<<"$out" | tr '\n' ' ')" = "ok ok " ]
	honest
	bench --without restore <<<"$cheat"
	[ "$st" = incorrect ]
	[[ $why == "timed run "*" differed from the reference, on inputs drawn fresh for it: output C"* ]]
}

@test "prints a forged answer: its real verdict and time stand, the print is captured and bounded, and the next record gets its own" {
	bench <<<"$(rec prints_verdict)
$(rec relu_good)"
	first=$(head -1 <<<"$out")
	jq -c '.bench | {status, time_us, printed: (.printed | {bytes, truncated})}' <<<"$first" >&3
	# a correct relu, at its own time: relu_small moves 134 MB, some 30 us at best
	jq -e '.bench.status == "ok" and .bench.time_us.median > 10' <<<"$first"
	# 256 threads print a line on every run: far more than is kept
	jq -e '.bench.printed | .bytes > 65536 and .truncated and (.text | length) <= 4096
		and (.text | startswith("{\"bench\":{\"status\":\"ok\""))' <<<"$first"
	[ "$st" = ok ]
	jq -e '.bench.printed == null and .bench.time_us.median > 10' <<<"$(tail -1 <<<"$out")"
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

@test "the null-kernel gate: zeros, a constant, the output's mean, a copy of the input and a subsample fail every task of the pack" {
	# For each task: kernels that write zeros, a constant, the mean of the
	# true output, a copy of the first input, and the true computation on
	# a subsample of the inputs. A task that one of them passes is a defect
	# in the task (tests/gpu/data/gate/mkgate says more).
	g=$BATS_TEST_TMPDIR/gate
	tests/gpu/data/gate/mkgate tasks/*/ >"$g.in"
	kcompile -j "$(nproc)" <"$g.in" | kbench -q >"$g.jsonl"
	jq -r '[.task.id, .candidate.strategy, .bench.status, (.bench.reason // "" | .[:90])] | @tsv' \
		"$g.jsonl" | sed "s/^/# /" >&3
	# every gate of every task was judged: at least four a task
	[ "$(wc -l <"$g.jsonl")" -eq "$(wc -l <"$g.in")" ]
	[ "$(jq -r .task.id "$g.jsonl" | sort | uniq -c | awk '$1 < 4' | wc -l)" -eq 0 ]
	[ "$(jq -r .task.id "$g.jsonl" | sort -u | wc -l)" -eq "$(ls -d tasks/*/ | wc -l)" ]
	passed=$(jq -r 'select(.bench.status == "ok") | "\(.task.id) (\(.candidate.strategy))"' "$g.jsonl")
	[ -z "$passed" ] || { echo "tasks that pass a null kernel: $passed"; false; }
	# each failed for being wrong, not for failing to run
	[ "$(jq -r .bench.status "$g.jsonl" | sort -u)" = incorrect ]
}

@test "every reference of the pack matches float64 PyTorch at the check sizes" {
	dump=$BATS_TEST_TMPDIR/dump
	for t in tasks/*/; do "$D/mkrec" "$t"; done | kbench -q -s 1 --budget-ms 0 --min-reps 1 -d "$dump" >"$BATS_TEST_TMPDIR/pack.jsonl"
	run python3 bench/torch-baselines.py --check "$dump" --tasks tasks
	sed "s/^/# /" <<<"$output" >&3
	[ "$status" -eq 0 ]
	[ "$(jq -r .bench.status "$BATS_TEST_TMPDIR/pack.jsonl" | sort -u)" = ok ]
}

# The gemm family's variants beside its default (wg): h3, wgk (split-K)
# and tiled, one candidate each where they serve the task, then wg with
# blocks that take 4 tiles in turn through 2 stages (the check sizes'
# few tiles leave the last block short, and a stage holds another tile's
# k-tile by the second tile), and one warpgroup 192 wide (a tile height
# that is not a power of two, so the split's tile of a row is a division),
# then wgf (the split inside the product, a scale per row and k-tile) at
# its defaults but 4 slices of k (two converter warpgroups, 512 threads,
# the 4 pieces of a k-tile 2 each), with one converter (AHEAD 3), and
# narrow (one consumer warpgroup 128 wide: 3 pieces, 2 and 1; 2
# slices), then wgb (A split by the pass and brought by bulk copies, B
# split by the converters) at 4 slices (two converters, a piece of B
# each) and narrow (one converter, one consumer warpgroup, 64 columns: one
# piece of B a k-tile). The check sizes' odd K and N take wgf's and wgb's
# loads a float at a time, the aligned check set (16) by float4 where the
# layout allows.
GEMM_MOVES='[{id: "h3", moves: [{family: "gemm", variant: "h3"}]},
	{id: "splitk", moves: [{family: "gemm", variant: "wgk", set: {SPLITK: 4}}]},
	{id: "tf32", moves: [{family: "gemm", variant: "tiled"}]},
	{id: "tiles", moves: [{family: "gemm", variant: "wg", set: {TILES: 4, STAGES: 2}}]},
	{id: "wide", moves: [{family: "gemm", variant: "wg", set: {WGS: 1, TILE_N: 192, STAGES: 2}}]},
	{id: "fused", moves: [{family: "gemm", variant: "wgf", set: {SPLITK: 4}}]},
	{id: "fused-one", moves: [{family: "gemm", variant: "wgf", set: {SPLITK: 4, CONVS: 1, AHEAD: 3}}]},
	{id: "fused-narrow", moves: [{family: "gemm", variant: "wgf", set: {WGS: 1, STAGES: 2, SPLITK: 2, CONVS: 2}}]},
	{id: "bfused", moves: [{family: "gemm", variant: "wgb", set: {STAGES: 2, SPLITK: 4}}]},
	{id: "bfused-narrow", moves: [{family: "gemm", variant: "wgb", set: {WGS: 1, TILE_N: 64, STAGES: 2, SPLITK: 2, CONVS: 1}}]}]'

# gemm_run TASKDIR K: the task's first K candidates of the gemm family
# (its default, then GEMM_MOVES' that serve it), compiled and benched,
# into $out, their verdicts shown.
gemm_run() {
	out=$(ktask --state "$1" | jq -c ".memory.strategies = $GEMM_MOVES" |
		kgen -k "$2" | kcompile | kbench -q)
	echo "$out" | jq -c '[.candidate.variant, .bench.status, .bench.rel_l2, .bench.reason]' >&3
}

@test "the gemm family's split-precision kernels stay fp32-accurate far outside fp16's range" {
	# wg and h3 (3xFP16), wgk (split-K), tiled (3xTF32), wg by 4 tiles a
	# block, wg 192 wide, wgf three ways and wgb two on A ~ 3e5 and B ~
	# 1e-7: the power-of-two scales (one an operand; wgf's one a row and
	# k-tile; wgb's one for A, one a row and k-tile of B) must keep both in
	# range
	gemm_run "$D/tasks/matmul_range" 11
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "wg h3 wgk tiled wg wg wgf wgf wgf wgb wgb " ]
	# measured 1.7e-7 (h3) and 5.6e-7 (tiled) on the H200; the task allows 5e-5
	jq -e -s 'all(.bench.status == "ok" and .bench.rel_l2 < 2e-6 and .bench.weak == false)' <<<"$out"
}

@test "the gemm family's guessed scales: a guess that would overflow fp16 is caught by the split's own maxima, and the operand split again" {
	# wg, wgk and wgb (its A) on matmul_range with every guess pushed up by 2^b (the
	# tests' WG_GUESS_BIAS before the source): 1 is kept by the check (the
	# largest |x| in [2^14, 2^15)), 2 and 3 put it at 2^15 or more, past
	# fp16's 65504 at 3, and are split again at the true scale; all must be
	# fp32-accurate. Without the second split (WG_RESPLIT 0) the guess 2^3
	# up is wrong: the check is what makes the guess safe.
	out=$(ktask --state "$D/tasks/matmul_range" | jq -c ".memory.strategies = $GEMM_MOVES" |
		kgen -k 10 | jq -c 'select(.candidate.strategy == null or .candidate.strategy == "splitk" or
			.candidate.strategy == "bfused")')
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "wg wgk wgb " ]
	biased=$(for b in 0 1 2 3; do
		jq -c --arg b "$b" '.candidate.id += "-bias\($b)" |
			.candidate.source = "#define WG_GUESS_BIAS \($b)\n" + .candidate.source' <<<"$out"
	done)
	res=$(kcompile <<<"$biased" | kbench -q)
	jq -c '[.candidate.id[-5:], .candidate.variant, .bench.status, .bench.rel_l2]' <<<"$res" >&3
	[ "$(jq -r .bench.status <<<"$res" | sort | uniq -c | tr -s ' ')" = " 12 ok" ]
	jq -e -s 'all(.bench.rel_l2 < 2e-6 and .bench.weak == false)' <<<"$res"
	res=$(jq -c '.candidate.id += "-noresplit" |
		.candidate.source = "#define WG_GUESS_BIAS 3\n#define WG_RESPLIT 0\n" + .candidate.source' <<<"$out" |
		kcompile | kbench -q)
	jq -c '[.candidate.variant, .bench.status, .bench.reason]' <<<"$res" >&3
	[ "$(jq -r .bench.status <<<"$res" | tr '\n' ' ')" = "incorrect incorrect incorrect " ]
}

@test "the gemm family's kernels are correct on a batched F.linear (B stored N x K, per batch)" {
	gemm_run tests/data/kgen-gemm/batched_linear_tanh 11
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "wg h3 wgk tiled wg wg wgf wgf wgf wgb wgb " ]
	jq -e -s 'all(.bench.status == "ok" and .bench.weak == false)' <<<"$out"
}

@test "the gemm family's wg, wgk, wgf and wgb are correct on tril(A @ B + 1): the tiles above the diagonal zeros, not computed" {
	# h3 and tiled refuse a triangular C: the default, split-K, 4 tiles a block, 192 wide, wgf three ways and wgb two
	gemm_run tests/data/kgen-gemm/t_tril 9
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "wg wgk wg wg wgf wgf wgf wgb wgb " ]
	jq -e -s 'all(.bench.status == "ok" and .bench.weak == false)' <<<"$out"
}

@test "the gemm family's wg, wgk, wgf and wgb are correct on triu(A @ B + 1): the tiles below the diagonal zeros, not computed" {
	# as tril's, on a C taller than wide, so that whole tiles lie below the diagonal
	gemm_run tests/data/kgen-gemm/t_triu 9
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "wg wgk wg wg wgf wgf wgf wgb wgb " ]
	jq -e -s 'all(.bench.status == "ok" and .bench.weak == false)' <<<"$out"
}

@test "the gemm family's wg, wgk, wgf and wgb are correct where A is stored K x M (A.T @ B.T, with bias)" {
	# h3 and tiled refuse A stored K x M: the default, split-K, 4 tiles a block, 192 wide, wgf three ways and wgb two
	gemm_run tests/data/kgen-gemm/t_linear_relu 9
	[ "$(jq -r .candidate.variant <<<"$out" | tr '\n' ' ')" = "wg wgk wg wg wgf wgf wgf wgb wgb " ]
	jq -e -s 'all(.bench.status == "ok" and .bench.weak == false)' <<<"$out"
}
