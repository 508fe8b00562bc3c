#!/usr/bin/env bats
# The gemm and gemv template families (tools/kgen/templates/gemm.json,
# gemv.json): through kgen's rules backend, every knob value of every
# variant renders for every task the family serves (the pack's, and the
# batched F.linear and transposed-A tasks in tests/data/kgen-gemm), the moves the constraints forbid are refused
# with their reason, and every configuration compiles with NVRTC
# (kcompile), the defaults without spills. The kernels' numbers on the
# H200 are in the report of issue 6; here nothing needs a GPU.

setup_file() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export ROOT
	export HTAM_TEMPLATES=$ROOT/tools/kgen/templates
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	export OUT=$BATS_FILE_TMPDIR
	# One sweep of each family over each task it serves, shared by the
	# tests below: kgen's candidates, its notes, and kcompile's records.
	for t in $(gemm_tasks); do
		sweep "$t" >"$OUT/${t##*/}.cand" 2>"$OUT/${t##*/}.notes"
	done
	n=$(cat "$OUT"/*.cand | wc -l)
	echo "# compiling the $n configurations of the gemm and gemv sweeps (minutes under the sanitizers)" >&3
	cat "$OUT"/*.cand | kcompile -j 2 | tee "$OUT/compiled.jsonl" |
		awk -v n="$n" 'NR % 25 == 0 { printf "# %d of %d compiled\n", NR, n; fflush() }' >&3
}

# The folders of the tasks of families gemm and gemv: the pack's, then the
# test task.
gemm_tasks() {
	for t in "$ROOT"/tasks/*/ "$ROOT"/tests/data/kgen-gemm/*/; do
		case $(jq -r .family "$t/task.json") in
		gemm | gemv) echo "${t%/}" ;;
		esac
	done
}

# state TASKDIR: a step-0 state of the task whose memory holds one strategy
# per knob value other than the default, each a move to the variant with
# that value ("sweep VARIANT KNOB=VALUE"), plus strategy "too much" (two
# knobs together past a constraint), and for gemm "one wide warpgroup"
# (wg's TILE_N 192, which its default two warpgroups cannot take) and
# "one converter" (wgf's CONVS 1 at AHEAD 3, as the default two converters'
# slots fit shared memory only at AHEAD 2). The spec gains the
# family's dimensions where the task leaves them out (named as the task's
# sizes; batch 1 where the task has none), as docs/templates.md asks.
state() {
	local fam
	fam=$HTAM_TEMPLATES/$(jq -r .family "$1/task.json").json
	ktask --state "$1" | jq -c --slurpfile fam "$fam" '
		$fam[0] as $f | .task.params as $p
		| .task.spec = (($f.spec | to_entries | map(select(.value == "dim"))
			| map({key, value: (if $p[.key] then .key else 1 end)})
			| from_entries) + .task.spec)
		| .memory.strategies = [$f.variants | to_entries[] | .key as $v
			| .value.knobs | to_entries[]
			| .key as $k | .value.default as $d | .value.values[]
			| select(. != $d)
			| {id: "sweep \($v) \($k)=\(.)", moves: [{family: $f.family, variant: $v, set: {($k): .}}]}]
			+ (if $f.family == "gemv" then [{id: "too much", moves: [{family: "gemv",
				set: {UNROLL: 8, ROWS_PER_BLOCK: 4}}]}]
			   else [{id: "too much", moves: [{family: "gemm", variant: "h3",
				set: {WARP_M: 64, WARP_N: 64}}]},
				{id: "one wide warpgroup", moves: [{family: "gemm", variant: "wg",
				set: {WGS: 1, TILE_N: 192}}]},
				{id: "one converter", moves: [{family: "gemm", variant: "wgf",
				set: {CONVS: 1, AHEAD: 3}}]}] end)'
}

# sweep TASKDIR: the task's candidates for its sweep state (the family
# default, then one per move kgen accepts), with kgen's notes on stderr;
# the moves 48 at a time, as kgen writes at most 64 candidates a state.
sweep() {
	local s n i
	s=$(state "$1")
	n=$(jq '.memory.strategies | length' <<<"$s")
	for ((i = 0; i < n; i += 48)); do
		jq -c --argjson i "$i" '.memory.strategies |= .[$i:$i + 48]' <<<"$s" |
			kgen -v -k "$((n - i < 48 ? n - i + 1 : 49))" |
			jq -c -n --argjson i "$i" '[inputs] | (if $i == 0 then .[0] else empty end),
				(.[1:][] | select(.candidate.strategy != null))'
	done
}

# The compiled records of task id $1.
compiled() {
	jq -c --arg id "$1" 'select(.task.id == $id)' "$OUT/compiled.jsonl"
}

@test "the families serve the pack's matrix products and the test task" {
	run gemm_tasks
	[ "$status" -eq 0 ]
	names=$(for t in "${lines[@]}"; do echo "${t##*/}"; done | sort | tr '\n' ' ')
	[ "$names" = "batched_linear_tanh bmm gemm_div_gelu gemm_scale_residual gemm_sub_mul_relu matmul_square matmul_standard matvec t_linear_relu t_tril t_triu " ]
}

@test "every knob value of every gemm variant renders, less those the constraints refuse" {
	variants=$(jq -r '.variants | keys | join(" ")' "$HTAM_TEMPLATES/gemm.json")
	for t in $(gemm_tasks); do
		id=${t##*/}
		[ "$(jq -r .task.family "$OUT/$id.cand" | head -1)" = gemm ] || continue
		n=$(wc -l <"$OUT/$id.cand")
		moves=$(state "$t" | jq '.memory.strategies | length')
		refused=$(grep -c refused "$OUT/$id.notes")
		# the family's default (wg's defaults) first, then every move
		# kgen did not refuse (next test), some of each variant
		[ "$n" -eq $((moves + 1 - refused)) ] ||
			{ echo "$id: $n candidates of $moves moves, $refused refused"; false; }
		[ "$(head -1 "$OUT/$id.cand" | jq -c '.candidate | [.variant, .defines]')" = \
			'["wg",{"WGS":2,"TILE_N":128,"STAGES":3,"PROMOTE":1,"TILES":1}]' ]
		# A stored K x M, a triangular C: only wg, wgb, wgf and wgk take them (h3's and tiled's when)
		want=$variants
		[ "$(jq '.spec.a_transposed or .spec.tril or .spec.triu' "$t/task.json")" = true ] && want="wg wgb wgf wgk"
		[ "$(jq -r .candidate.variant "$OUT/$id.cand" | sort -u | tr '\n' ' ')" = "$want " ]
		# distinct configurations, each a distinct candidate
		[ "$(jq -r .candidate.id "$OUT/$id.cand" | sort -u | wc -l)" -eq "$n" ]
	done
}

@test "gemm moves past a constraint are refused with the constraint's reason" {
	notes=$OUT/matmul_square.notes
	grep -q 'sweep tiled TILE_M=256 .*refused: .* = 98304 is above 65536: the block.s threads' "$notes"
	grep -q 'sweep tiled STAGES=5 .*refused: .* = 261120 is above 232448: STAGES padded tiles of A and B must fit' "$notes"
	grep -q 'sweep h3 STAGES=5 .*refused: .* = 368640 is above 232448: STAGES padded tiles of A and B, each a hi and a lo plane' "$notes"
	grep -q 'sweep wg STAGES=4 .*refused: .* = 263168 is above 231424: STAGES k-tiles of A (64 WGS rows) and B' "$notes"
	# split-K's partials are bounded by the task's size: 32 slices of 4096 x 4096
	grep -q 'sweep wgk SPLITK=32 .*refused: .* = 536870912 is above 268435456: SPLITK slices of partials of C, at most 1 GiB' "$notes"
	grep -q 'too much .*refused: WARP_M \* WARP_N = 4096 is above 2048: a warp keeps two accumulators' "$notes"
	# 192 wide needs one warpgroup: the default two hold too many accumulators
	grep -q 'sweep wg TILE_N=192 .*refused: .* = 66816 is above 65536: a consumer thread keeps TILE_N accumulators' "$notes"
	# wgf at its default SPLITK 32 has too many partials for 4096 x 4096: only SPLITK 16 and less pass
	grep -q 'sweep wgf CONVS=1 .*refused: .* = 536870912 is above 268435456: SPLITK slices of partials' "$notes"
	! grep -q 'sweep wgf SPLITK=16 .*refused' "$notes"
	# wgb's converters split only B's pieces: at TILE_N 64 there is one, for one converter
	grep -q 'sweep wgb TILE_N=64 .*refused: CONVS \* 64 = 128 is above 64: every converter warpgroup splits a piece' "$notes"
	[ "$(grep -c refused "$notes")" -eq 33 ]
	# the default two converters' slots at AHEAD 3, or a third stage, overflow shared memory
	notes=$OUT/gemm_sub_mul_relu.notes
	grep -q 'sweep wgf AHEAD=3 .*refused: .* = 331776 is above 232448: STAGES k-tiles of A (64 WGS rows) and B (TILE_N rows), each 64 fp16 values of k in a hi and a lo plane, and each converter warpgroup' "$notes"
	grep -q 'sweep wgf STAGES=3 .*refused: .* = 299008 is above 232448' "$notes"
	! grep -q 'one converter .*refused' "$notes"
}

@test "every gemv knob value renders; two knobs together past the constraint are refused" {
	id=matvec
	# 16 moves, all accepted, and the default
	[ "$(wc -l <"$OUT/$id.cand")" -eq 17 ]
	[ "$(jq -r .candidate.id "$OUT/$id.cand" | sort -u | wc -l)" -eq 17 ]
	grep -q 'too much .*refused: UNROLL \* ROWS_PER_BLOCK \* VEC = 128 is above 64' "$OUT/$id.notes"
	[ "$(grep -c refused "$OUT/$id.notes")" -eq 1 ]
}

@test "every candidate compiles, and reports its registers" {
	n=$(cat "$OUT"/*.cand | wc -l)
	[ "$(wc -l <"$OUT/compiled.jsonl")" -eq "$n" ]
	run jq -r 'select(.compile.ok != true or .compile.status != "ok") |
		"\(.task.id) \(.candidate.strategy): \(.compile.reason)"' "$OUT/compiled.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "$output"; false; }
	# every kernel the launch plan names was built, with its registers
	run jq -r '.compile.kernels as $k | .candidate.launch.launches[].kernel |
		select(($k[.].registers // 0) <= 0)' "$OUT/compiled.jsonl"
	[ -z "$output" ]
}

@test "the default configurations compile without spills or stack" {
	for t in $(gemm_tasks); do
		id=${t##*/}
		d=$(compiled "$id" | head -1)
		[ "$(jq -r .candidate.strategy <<<"$d")" = null ]
		jq -e '[.compile.kernels[] | .spill_stores == 0 and .spill_loads == 0 and
			.stack == 0] | all' <<<"$d" >/dev/null ||
			{ jq -c '[.task.id, .compile.kernels]' <<<"$d"; false; }
	done
}

@test "the gemm launch plans pass the task's inputs last, bias and all" {
	# wg: the scales guessed from a sample, A and B split by them into tiled
	# planes, the guesses checked (an operand split again where one does not
	# hold), then the product
	run jq -c '.candidate.launch.launches | map(.kernel)' <(head -1 "$OUT/gemm_sub_mul_relu.cand")
	[ "$output" = '["gemm_wg_guess","gemm_wg_split","gemm_wg_split","gemm_wg_resplit","gemm_wg"]' ]
	run jq -c '.candidate.launch.launches[4].args' <(head -1 "$OUT/gemm_sub_mul_relu.cand")
	[ "$output" = '["y","i64:(m)","i64:(n)","i64:(k)","wg_a","wg_b","h3_scale","x","W","b"]' ]
	# the planes: hi and lo of A and B, padded to whole tiles of rows and of 64 values of k, as floats
	run jq -c '.candidate.launch.workspace | map(.count)' <(head -1 "$OUT/gemm_sub_mul_relu.cand")
	[ "$output" = '["1 * cdiv((m), 64 * WGS) * 64 * WGS * cdiv((k), 64) * 64","(0 * (1 - 1) + 1) * cdiv((n), TILE_N) * TILE_N * cdiv((k), 64) * 64","4 + 2 * 16"]' ]
	# h3: the planes rows padded to 8 halves, read by mma.sync
	run jq -c 'select(.candidate.variant == "h3") | .candidate.launch | [(.launches | map(.kernel)), (.workspace | map(.count))]' "$OUT/gemm_sub_mul_relu.cand"
	[ "${lines[0]}" = '[["gemm_h3_absmax","gemm_h3_split","gemm_h3_split","gemm_h3"],["1 * (m) * cdiv((k), 8) * 8","(0 * (1 - 1) + 1) * max((n) * cdiv((k), 8), (k) * cdiv((n), 8)) * 8","2 + 2 * 1024"]]' ]
	# batched: A and B of every batch scaled and split, one product per batch
	run jq -c '.candidate.launch.launches | map(.args[1]), .[4].grid' <(head -1 "$OUT/bmm.cand")
	[ "${lines[0]}" = '["i64:(batch) * (m) * (k)","i64:(batch)","i64:1 * ((batch) - 1) + 1","i64:(batch)","i64:(m)"]' ]
	[ "${lines[1]}" = '["cdiv(cdiv((m), 64 * WGS) * cdiv((n), TILE_N), TILES)","(batch)"]' ]
	# wgk: the product into SPLITK slices of partials, then their sum through the epilogue
	run jq -c 'select(.candidate.variant == "wgk") | .candidate.launch | [.launches[4].grid, .launches[4].args[0], .launches[5].kernel, .launches[5].args, .workspace[3].count]' "$OUT/gemm_sub_mul_relu.cand"
	[ "${lines[0]}" = '[["cdiv((m), 64 * WGS) * cdiv((n), TILE_N)","1","SPLITK"],"wg_part","gemm_wg_reduce",["y","wg_part","i64:1 * (m) * (n)","i64:(m)","i64:(n)","x","W","b"],"SPLITK * 1 * (m) * (n)"]' ]
	# wgf: no split before the product, which writes the partials from A and B as they are;
	# a block is the consumers and the converters, its shared memory the stages and the slots
	run jq -c 'select(.candidate.variant == "wgf") | .candidate.launch | [(.launches | map(.kernel)), .launches[0].block, .launches[0].smem, .launches[0].args, (.workspace | map(.name))]' "$OUT/gemm_sub_mul_relu.cand"
	[ "${lines[0]}" = '[["gemm_wgf","gemm_wg_reduce"],["128 * (WGS + CONVS)"],"min(STAGES, cdiv(cdiv((k), 64), SPLITK)) * 256 * (64 * WGS + TILE_N) + CONVS * (AHEAD + 1) * 16384",["wg_part","i64:(m)","i64:(n)","i64:(k)","x","W","b"],["wg_part"]]' ]
	# tiled reads A and B themselves
	run jq -c 'select(.candidate.variant == "tiled") | .candidate.launch.launches[0] | [.grid, .args]' "$OUT/bmm.cand"
	[ "${lines[0]}" = '[["cdiv((m), TILE_M) * cdiv((n), TILE_N)","(batch)"],["C","i64:(m)","i64:(n)","i64:(k)","A","B"]]' ]
}

@test "a product of A stored K x M, or a triangular C (lower or upper), is served by wg, wgk, wgf and wgb alone, h3 and tiled saying why not" {
	for t in t_linear_relu t_tril t_triu; do
		grep -q 'sweep h3 TILE_M=64 .*refused: variant h3 does not apply: (1 - {{a_transposed}}) \* (1 - {{tril}}) \* (1 - {{triu}}) is 0 at params' "$OUT/$t.notes"
		grep -q 'sweep tiled TC=0 .*refused: variant tiled does not apply' "$OUT/$t.notes"
		[ "$(jq -r .candidate.variant "$OUT/$t.cand" | sort -u | tr '\n' ' ')" = "wg wgb wgf wgk " ]
	done
	src=$(head -1 "$OUT/t_linear_relu.cand" | jq -r .candidate.source)
	[[ $src == *"#define A_T (1)"* && $src == *"#define B_LAYOUT_nk 1"* && $src == *"#define TRIL (0)"* ]]
	src=$(head -1 "$OUT/t_tril.cand" | jq -r .candidate.source)
	[[ $src == *"#define TRIL (1)"* && $src == *"#define TRIU (0)"* && $src == *"#define BATCHED (1)"* ]]
	src=$(head -1 "$OUT/t_triu.cand" | jq -r .candidate.source)
	[[ $src == *"#define TRIL (0)"* && $src == *"#define TRIU (1)"* ]]
}

@test "the gemm source carries the task's spec: layout, bias, batching, epilogue" {
	src=$(head -1 "$OUT/gemm_div_gelu.cand" | jq -r .candidate.source)
	[[ $src == *"#define B_LAYOUT_nk 1"* ]]
	[[ $src == *"#define HAS_BIAS (1)"* ]]
	[[ $src == *"#define BATCHED (0)"* ]]
	[[ $src == *"return (0.5f * (v / 10.0f) * (1.0f + erff((v / 10.0f) * 0.70710678118654752f)));"* ]]
	[[ $src != *"{{"* ]]
	src=$(head -1 "$OUT/bmm.cand" | jq -r .candidate.source)
	[[ $src == *"#define B_LAYOUT_kn 1"* && $src == *"#define BATCHED (1)"* && $src == *"#define HAS_BIAS (0)"* ]]
}

@test "the gemv plan sums SPLIT partials per row in a workspace, in a second launch" {
	run jq -c '.candidate.launch' <(head -1 "$OUT/matvec.cand")
	[ "$output" = '{"launches":[{"kernel":"gemv_split","grid":["cdiv((m), ROWS_PER_BLOCK)","SPLIT"],"block":["BLOCK"],"args":["A","B","partial","i64:(m)","i64:(k)"]},{"kernel":"gemv_sum","grid":["cdiv((m), 256)"],"block":[256],"args":["partial","C","i64:(m)"]}],"workspace":[{"name":"partial","dtype":"f32","count":"(m) * SPLIT"}]}' ]
}
