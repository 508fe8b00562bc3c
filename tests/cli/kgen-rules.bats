#!/usr/bin/env bats
# kgen's rules backend: template families (tools/kgen/templates) turned into
# candidates. The sweep (every knob value of every family for every task it
# serves) comes from the unit program tests/unit/rules run as `rules --sweep`
# (built with the unit tests under $O); the compiles are real NVRTC through
# kcompile (no GPU needed), or nvcc when kcompile is missing.

bats_require_minimum_version 1.5.0

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	case ${O:-build/obj} in
	/*) OBJ=${O} ;;
	*) OBJ=$ROOT/${O:-build/obj} ;;
	esac
	RULES=$OBJ/tests/unit/rules
	export HTAM_TEMPLATES=$ROOT/tools/kgen/templates
	cd "$ROOT"
}

# state TASK [JQ]: a step-0 state of tasks/TASK, changed by the jq filter.
state() {
	ktask --state --run t1 "tasks/$1" | jq -c "${2:-.}"
}

# The candidates of kgen's output, one compact object a line, without the
# bulky source.
candidates() {
	jq -c '.candidate | del(.source)' <<<"$output"
}

@test "every family renders and compiles for every task it serves, at every knob value" {
	[ -x "$RULES" ] || skip "the unit program $RULES is not built (make units)"
	"$RULES" --sweep "$HTAM_TEMPLATES" tasks/* >"$BATS_TEST_TMPDIR/cands.jsonl" \
		2>"$BATS_TEST_TMPDIR/refused.txt"
	n=$(wc -l <"$BATS_TEST_TMPDIR/cands.jsonl")
	echo "# $n configurations, $(wc -l <"$BATS_TEST_TMPDIR/refused.txt") refused by a constraint" >&3
	[ "$n" -ge 250 ]
	# each refusal says which constraint and why
	! grep -v '^refused: [a-z0-9_]* {.*}: .* is .*: ' "$BATS_TEST_TMPDIR/refused.txt"
	# every task whose family has a file is served
	jq -r '.task.id' "$BATS_TEST_TMPDIR/cands.jsonl" | sort -u >"$BATS_TEST_TMPDIR/served.txt"
	for f in "$HTAM_TEMPLATES"/*.json; do
		fam=$(basename "$f" .json)
		for t in $(grep -l "\"family\": \"$fam\"" tasks/*/task.json); do
			id=$(basename "$(dirname "$t")")
			grep -qx "$id" "$BATS_TEST_TMPDIR/served.txt" ||
				{ echo "task $id ($fam) got no candidate"; false; }
		done
	done
	if command -v kcompile >/dev/null; then
		# minutes under the sanitizers: say so, and each 50 compiled
		echo "# compiling the $n configurations with kcompile (NVRTC; cached after the first run)" >&3
		HTAM_CACHE=$OBJ/kgen-rules-cache kcompile <"$BATS_TEST_TMPDIR/cands.jsonl" |
			tee "$BATS_TEST_TMPDIR/compiled.jsonl" |
			awk -v n="$n" 'NR % 50 == 0 { printf "# %d of %d compiled\n", NR, n; fflush() }' >&3
		jq -r 'select(.compile.ok != true) | "\(.task.id) \(.candidate.variant) \(.candidate.defines): \(.compile.log)"' \
			"$BATS_TEST_TMPDIR/compiled.jsonl" >"$BATS_TEST_TMPDIR/failed.txt"
		[ "$(wc -l <"$BATS_TEST_TMPDIR/compiled.jsonl")" -eq "$n" ]
		[ ! -s "$BATS_TEST_TMPDIR/failed.txt" ] || { head -c 3000 "$BATS_TEST_TMPDIR/failed.txt"; false; }
		# the memory-bound families never spill
		jq -r 'select(.task.family != "gemm" and .task.family != "gemv") |
			select([.compile.kernels[] | .spill_stores] | add > 0) |
			"\(.task.id) \(.candidate.variant) \(.candidate.defines) spills"' \
			"$BATS_TEST_TMPDIR/compiled.jsonl" >"$BATS_TEST_TMPDIR/spills.txt"
		[ ! -s "$BATS_TEST_TMPDIR/spills.txt" ] || { cat "$BATS_TEST_TMPDIR/spills.txt"; false; }
	else
		echo "# kcompile is missing: compiling with nvcc -cubin for sm_90a instead" >&3
		nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
		i=0
		while read -r rec; do
			i=$((i + 1))
			jq -r '.candidate.source' <<<"$rec" >"$BATS_TEST_TMPDIR/k.cu"
			defs=$(jq -r '.candidate.defines | to_entries | map("-D\(.key)=\(.value)") | join(" ")' <<<"$rec")
			# shellcheck disable=SC2086
			"$nvcc" -std=c++17 -cubin -gencode=arch=compute_90a,code=sm_90a $defs -o "$BATS_TEST_TMPDIR/k.cubin" \
				"$BATS_TEST_TMPDIR/k.cu" || { echo "record $i: $(jq -c '[.task.id, .candidate.variant, .candidate.defines]' <<<"$rec")"; false; }
		done <"$BATS_TEST_TMPDIR/cands.jsonl"
	fi
}

@test "kgen -b rules writes K distinct candidates, the family default first" {
	run bash -c "ktask --state --run t1 tasks/softmax | kgen -b rules -k 4"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	run candidates
	[ "$(jq -r '.id' <<<"$output" | sort -u | wc -l)" -eq 4 ]
	[ "$(head -1 <<<"$output" | jq -c '[.generator, .family, .variant, .defines, .strategy, .parent]')" = \
		'["rules","row_norm","cluster",{"CLUSTER":8,"BLOCK":256,"VEC":4,"UNROLL":8,"TMA":1},null,null]' ]
	# the launch plan names the task's buffers and its sizes
	[ "$(head -1 <<<"$output" | jq -c '.launch.launches[0] | [.grid, .cluster, .args]')" = \
		'[["(rows) * CLUSTER"],["CLUSTER",1,1],["x","y","i64:(rows)","i64:(cols)"]]' ]
}

@test "a family's starts choose the first configuration by the task's shape: gemm splits a long k over few tiles, gives a block 16 tiles of a one-k-tile product and splits B in the product for one block row of A; mid_reduce gives a row a warp" {
	first() {
		state matmul_square ".task.params = $1" | kgen -b rules -k 1 |
			jq -c '.candidate | [.variant, .defines.SPLITK // .defines.TILES]'
	}
	# 256 x 256 x 524288 (4 tiles, 8192 k-tiles): wgk at SPLITK 32
	[ "$(first '{"m": 256, "n": 256, "k": 524288}')" = '["wgk",32]' ]
	# 32768 x 32768 x 64 (65536 tiles, one k-tile): wg at TILES 16
	[ "$(first '{"m": 32768, "n": 32768, "k": 64}')" = '["wg",16]' ]
	# the pack's own size, and each start's shape just outside it: the default, wg at TILES 1
	[ "$(first '{"m": 4096, "n": 4096, "k": 4096}')" = '["wg",1]' ]
	[ "$(first '{"m": 384, "n": 384, "k": 524288}')" = '["wg",1]' ]
	[ "$(first '{"m": 256, "n": 256, "k": 32704}')" = '["wg",1]' ]
	[ "$(first '{"m": 32768, "n": 32768, "k": 192}')" = '["wg",1]' ]
	[ "$(first '{"m": 4096, "n": 4096, "k": 64}')" = '["wg",1]' ]
	# a batch of 128 through a layer's 32768 x 32768 weights (one block row
	# of A): wgb, B split by the product's converters, at 2 slices of k;
	# 129 rows, or a batch of two such products: the default
	[ "$(first '{"m": 128, "n": 32768, "k": 32768}')" = '["wgb",2]' ]
	[ "$(first '{"m": 129, "n": 32768, "k": 32768}')" = '["wg",1]' ]
	# a start is where the moves begin: a strategy's move applies to it
	state matmul_square '.task.params = {m: 256, n: 256, k: 524288}
		| .memory = {strategies: [{id: "deeper", moves: [{family: "gemm", set: {PROMOTE: 2}}]}]}' |
		kgen -b rules -k 2 >"$BATS_TEST_TMPDIR/c"
	[ "$(jq -c '.candidate | [.strategy, .variant, .defines]' "$BATS_TEST_TMPDIR/c")" = \
'[null,"wgk",{"WGS":2,"TILE_N":128,"STAGES":3,"PROMOTE":1,"SPLITK":32}]
["deeper","wgk",{"WGS":2,"TILE_N":128,"STAGES":3,"PROMOTE":2,"SPLITK":32}]' ]
	# sum_dim1 as a reduction of rows (inner 1, 4096 values a row): row, a warp a
	# row; its own middle axis, and rows of 63 values: tile, the default
	[ "$(state sum_dim1 '.task.spec.inner = "1"' | kgen -b rules -k 1 | jq -r .candidate.variant)" = row ]
	[ "$(state sum_dim1 | kgen -b rules -k 1 | jq -r .candidate.variant)" = tile ]
	[ "$(state sum_dim1 '.task.spec.inner = "1" | .task.params.rows = 63' | kgen -b rules -k 1 |
		jq -r .candidate.variant)" = tile ]
}

@test "a strategy's moves are applied to the best kernel's knobs" {
	best='{"candidate": {"id": "b1", "family": "row_norm", "variant": "cluster",
		"defines": {"CLUSTER": 8, "BLOCK": 1024, "VEC": 4, "UNROLL": 4}}}'
	strategies='[{"id": "fewer_threads", "moves": [{"family": "row_norm", "mul": {"BLOCK": 0.5}}]},
		{"id": "deeper", "moves": [{"family": "*", "add": {"UNROLL": 1}}]},
		{"id": "no_cluster", "moves": [{"family": "row_norm", "variant": "block"}]}]'
	run bash -c "ktask --state --run t1 tasks/softmax |
		jq -c --argjson b '$best' --argjson s '$strategies' '.best = \$b | .memory = {strategies: \$s}' |
		kgen -b rules -k 3"
	[ "$status" -eq 0 ]
	run candidates
	[ "$(jq -c '[.strategy, .variant, .defines, .parent]' <<<"$output")" = \
'["fewer_threads","cluster",{"CLUSTER":8,"BLOCK":512,"VEC":4,"UNROLL":4,"TMA":1},"b1"]
["deeper","cluster",{"CLUSTER":8,"BLOCK":1024,"VEC":4,"UNROLL":8,"TMA":1},"b1"]
["no_cluster","block",{"BLOCK":1024,"VEC":4,"UNROLL":4,"CACHE_HINT":1},"b1"]' ]
}

@test "a move naming another variant's knob switches to that variant" {
	strategies='[{"id": "split_rows", "moves": [{"family": "*", "set": {"SPLIT": 16}}]}]'
	run bash -c "ktask --state --run t1 tasks/softmax |
		jq -c --argjson s '$strategies' '.memory = {strategies: \$s}' | kgen -b rules -k 2"
	[ "$status" -eq 0 ]
	run candidates
	[ "$(jq -c 'select(.strategy == "split_rows") | [.variant, .defines]' <<<"$output")" = \
		'["split",{"SPLIT":16,"BLOCK":256,"VEC":4,"UNROLL":8,"CACHE_HINT":1}]' ]
}

@test "an invalid combination is refused with the reason, and the slot goes to a valid one" {
	strategies='[{"id": "small_clusters", "moves": [{"family": "row_norm", "set": {"CLUSTER": 2}}]}]'
	run bash -c "ktask --state --run t1 tasks/softmax |
		jq -c --argjson s '$strategies' '.memory = {strategies: \$s}' | kgen -v -b rules -k 2 2>&1 >/dev/null"
	[ "$status" -eq 0 ]
	[[ $output == *'strategy small_clusters move 0 {"family":"row_norm","set":{"CLUSTER":2}}: refused: cdiv({{cols}}, CLUSTER * VEC) * VEC * {{real_bytes}} = 786432 is above 230400: a block'"'"'s share of the row must fit its shared memory'* ]]
	run bash -c "ktask --state --run t1 tasks/softmax |
		jq -c --argjson s '$strategies' '.memory = {strategies: \$s}' | kgen -b rules -k 2"
	run candidates
	# the default first, then its first neighbour: clusters of 16 (the move to 2 was refused)
	[ "$(jq -c '[.strategy, .defines.CLUSTER]' <<<"$output")" = '[null,8]
[null,16]' ]
}

@test "a mul past a constraint is repaired to the nearest valid value" {
	strategies='[{"id": "more_warps", "moves": [{"family": "row_loss", "mul": {"WARPS_PER_ROW": 8}}]}]'
	run bash -c "ktask --state --run t1 tasks/cross_entropy |
		jq -c --argjson s '$strategies' '.memory = {strategies: \$s}' | kgen -v -b rules -k 2 2>&1 >/dev/null"
	[[ $output == *"repaired: WARPS_PER_ROW = 8 instead of 16 (BLOCK = 256 is not a multiple of 512: a block holds whole rows"* ]]
}

@test "ids in the state's seen list are never written again" {
	first=$(ktask --state --run t1 tasks/rmsnorm | kgen -b rules -k 3 | jq -c '[.candidate.id]' | jq -sc add)
	run bash -c "ktask --state --run t1 tasks/rmsnorm | jq -c --argjson seen '$first' '.seen = \$seen' |
		kgen -b rules -k 3"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	for id in $(jq -r '.candidate.id' <<<"$output"); do
		[[ $first != *"$id"* ]]
	done
}

@test "a seen list that is not an array of ids is an error naming the line" {
	s=$(state rmsnorm)
	run -65 --separate-stderr kgen -b rules <<<"$s"$'\n'"$(jq -c '.seen = [1]' <<<"$s")"
	[ "$stderr" = "kgen: line 2: seen[0]: expected a string, got an integer" ]
	# the first state's candidates were written before the bad line was read
	[ "$(grep -c . <<<"$output")" -eq 4 ]
	run -65 --separate-stderr kgen -b rules <<<"$(jq -c '.seen = "abc"' <<<"$s")"
	[ "$stderr" = "kgen: line 1: seen: expected an array, got a string" ]
	[ -z "$output" ]
}

@test "a chain renders as one candidate: the first stage searched, each later one at its family's start, its kernels renamed, its headers hoisted, the buffers between them workspace; NVRTC compiles it" {
	# axpy as a chain (docs/tasks.md): 2x first, then the sum with z
	chain='.task.spec = {"expr": "2.0f * x", "numel": "n"} | .task.then = [{"family": "elementwise",
		"spec": {"expr": "then_1 + z", "numel": "n"}, "from": {"shape": ["n"], "dtype": "f32"}, "inputs": ["z"]}]'
	run bash -c "ktask --state tests/data/tasks/axpy | jq -c '$chain' | kgen -b rules -k 2"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	run candidates
	# the first stage's knobs move (BLOCK), the later stage's stay at the family's start
	[ "$(jq -sc 'map(.defines.BLOCK) | unique | length' <<<"$output")" -eq 2 ]
	[ "$(jq -sc 'map(.launch.launches[1].block) | unique' <<<"$output")" = '[["(1024)"]]' ]
	[ "$(head -1 <<<"$output" | jq -c '[.family, .variant, [.launch.launches[] | [.kernel, .args]], .launch.workspace]')" = \
		'["elementwise","vector",[["elementwise",["x","then_1","i64:(n)"]],["t1_elementwise",["then_1","z","y","i64:(n)"]]],[{"name":"then_1","dtype":"f32","count":"1 * (n)"}]]' ]
	ktask --state tests/data/tasks/axpy | jq -c "$chain" | kgen -b rules -k 1 >"$BATS_TEST_TMPDIR/c.jsonl"
	jq -r .candidate.source "$BATS_TEST_TMPDIR/c.jsonl" >"$BATS_TEST_TMPDIR/c.cu"
	grep -q 'namespace htam_then0 {' "$BATS_TEST_TMPDIR/c.cu"
	grep -q 'namespace htam_then1 {' "$BATS_TEST_TMPDIR/c.cu"
	grep -q '^#define elementwise t1_elementwise$' "$BATS_TEST_TMPDIR/c.cu"
	command -v kcompile >/dev/null || skip "no kcompile on PATH"
	[ "$(kcompile <"$BATS_TEST_TMPDIR/c.jsonl" | jq -c '[.compile.ok, (.compile.kernels | keys)]')" = \
		'[true,["elementwise","t1_elementwise"]]' ]
	# two products in turn, each of one block row of A (m 128): gemm's wgb
	# both (its start there), each stage with its own copy of wgf.cuh's
	# helpers; in the global namespace the first stage's met the second's
	# by argument-dependent lookup (a float4 array) and NVRTC found the
	# call ambiguous
	mlp='.task.params = {"m": 128, "n": 256, "k": 512} | .task.check_params = [{"m": 1, "n": 1, "k": 1}, {"m": 37, "n": 41, "k": 53}]
		| .task.inputs += [{"name": "B2", "dtype": "f32", "shape": ["n", "n"], "init": {"dist": "normal", "mean": 0, "std": 1}}]
		| .task.then = [{"family": "gemm", "spec": (.task.spec | .k = "n"), "from": {"shape": ["m", "n"], "dtype": "f32"}, "inputs": ["B2"]}]'
	ktask --state tasks/matmul_square | jq -c "$mlp" | kgen -b rules -k 1 >"$BATS_TEST_TMPDIR/g.jsonl"
	[ "$(jq -c '[.candidate.launch.launches[].kernel | select(endswith("wgf"))]' "$BATS_TEST_TMPDIR/g.jsonl")" = '["gemm_wgf","t1_gemm_wgf"]' ]
	[ "$(kcompile <"$BATS_TEST_TMPDIR/g.jsonl" | jq -c '[.compile.ok, .compile.kernels.t1_gemm_wgf.registers > 0]')" = '[true,true]' ]
	# a later stage that includes a header (row_norm's cluster variant, for rows wider than
	# shared memory, includes cooperative_groups.h): the include is hoisted out of its namespace
	wide='.task.spec = {"expr": "2.0f * x + z", "numel": "n"} | .task.then = [{"family": "row_norm",
		"spec": {"op": "softmax", "rows": "n / 131072", "cols": "131072"}, "from": {"shape": ["n"], "dtype": "f32"},
		"inputs": []}] | .task.check_params = [{"n": 131072}, {"n": 262144}]'
	ktask --state tests/data/tasks/axpy | jq -c "$wide" | kgen -b rules -k 1 >"$BATS_TEST_TMPDIR/w.jsonl"
	jq -r .candidate.source "$BATS_TEST_TMPDIR/w.jsonl" >"$BATS_TEST_TMPDIR/w.cu"
	[ "$(grep -n '#include <cooperative_groups.h>' "$BATS_TEST_TMPDIR/w.cu" | cut -d: -f1)" -lt \
		"$(grep -n 'namespace htam_then1 {' "$BATS_TEST_TMPDIR/w.cu" | cut -d: -f1)" ]
	[ "$(kcompile <"$BATS_TEST_TMPDIR/w.jsonl" | jq -c '[.compile.ok, (.compile.kernels | keys)]')" = \
		'[true,["elementwise","t1_row_norm_cluster"]]' ]
	# a later stage's spec is checked as the first's, and named
	run bash -c "ktask --state tests/data/tasks/axpy | jq -c '$chain | del(.task.then[0].spec.numel)' | kgen -b rules -k 1 2>/dev/null"
	[ "$(jq -c '.candidate | [.status, .reason]' <<<"$output")" = \
		'["gen_error","then[0] (elementwise): task \"axpy\": spec.numel is missing (family elementwise needs it: docs/templates.md)"]' ]
}

@test "a task whose spec lacks a dimension gets a gen_error with the reason" {
	run bash -c "ktask --state --run t1 tasks/l1norm | jq -c 'del(.task.spec.cols)' | kgen -b rules -k 2 2>/dev/null"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.candidate | [.status, .reason, .generator]' <<<"${lines[0]}")" = \
		'["gen_error","task \"l1norm\": spec.cols is missing (family row_norm needs it: docs/templates.md)","rules"]' ]
}

@test "mid_reduce serves an op by expression: each op of its family file, and one a task writes, compile in every variant" {
	ops=$(jq -r '.ops | keys[]' "$HTAM_TEMPLATES/mid_reduce.json")
	variants=$(jq '.variants | length' "$HTAM_TEMPLATES/mid_reduce.json")
	own='{"map": "x * x", "combine": "a + b", "identity": "0.0f", "finalize": "sqrtf(v) / (float)n"}'
	for op in $ops "$own"; do
		# the first candidate of each variant among 16, at the task's
		# size and at one whose values of an output lie side by side
		# (inner 1, the row variant's)
		for inner in cols 1; do
			jq -c --arg op "$op" --arg inner "$inner" '.task.spec.op = (try ($op | fromjson) catch $op)
				| .task.spec.inner = $inner' <<<"$(state sum_dim1)" | kgen -b rules -k 16
		done | jq -c -s 'group_by(.candidate.variant) | map(.[0]) | .[]' >>"$BATS_TEST_TMPDIR/ops.jsonl"
	done
	[ "$(jq -s 'map(select(.candidate.status == null)) | length' "$BATS_TEST_TMPDIR/ops.jsonl")" -eq $(( ($(wc -w <<<"$ops") + 1) * variants )) ]
	HTAM_CACHE=$BATS_TEST_TMPDIR/cache kcompile <"$BATS_TEST_TMPDIR/ops.jsonl" >"$BATS_TEST_TMPDIR/c.jsonl"
	jq -se 'all(.[]; .compile.ok)' "$BATS_TEST_TMPDIR/c.jsonl"
	# the op is in the source as the family's macros
	jq -r 'select(.task.spec.op == "argmin") | .candidate.source' "$BATS_TEST_TMPDIR/ops.jsonl" | head -400 |
		grep -qx '#define MR_KEEP (-1)'
	jq -r 'select(.task.spec.op | type == "object") | .candidate.source' "$BATS_TEST_TMPDIR/ops.jsonl" | head -400 |
		grep -qx '#define MR_FINALIZE(v, n) (sqrtf(v) / (float)n)'
	# logsumexp is a softmax statistic finalized: the maximum and the sum of exponentials
	jq -r 'select(.task.spec.op == "logsumexp") | .candidate.source' "$BATS_TEST_TMPDIR/ops.jsonl" | head -400 >"$BATS_TEST_TMPDIR/lse.cu"
	grep -qx '#define MR_STAT 1' "$BATS_TEST_TMPDIR/lse.cu"
	grep -qx '#define MR_STAT_FINAL(m, s) (m + logf(s))' "$BATS_TEST_TMPDIR/lse.cu"
}

@test "an op the family does not know, or one that is not a lone expression, is a gen_error naming it" {
	run bash -c "ktask --state --run t1 tasks/sum_dim1 | jq -c '.task.spec.op = \"median\"' | kgen -b rules -k 1 2>/dev/null"
	[ "$(jq -r .candidate.reason <<<"$output")" = \
		'task "sum_dim1": spec.op: family mid_reduce knows no op "median" (its ops, or an op of your own: docs/templates.md)' ]
	for bad in '{"combine": "a; } __global__ void evil() { ", "identity": "0.0f"}' \
		'{"combine": "a + b", "identity": "0.0f", "finalize": "v /* */"}' \
		'{"combine": "a) + (b", "identity": "0.0f"}' \
		'{"combine": "a + b"}' '{"keep": "max", "result": "value", "combine": "a + b"}' \
		'{"keep": "median", "result": "value"}'; do
		run bash -c "ktask --state --run t1 tasks/sum_dim1 | jq -c --argjson op '$bad' '.task.spec.op = \$op' | kgen -b rules -k 1 2>/dev/null"
		[ "$(jq -r .candidate.status <<<"$output")" = gen_error ]
		[[ $(jq -r .candidate.reason <<<"$output") == 'task "sum_dim1": spec.op'* ]]
	done
}

@test "ops of every kind: row_norm's statistics and folds with apply, global_reduce's folds over several inputs, row_reduce's terms, channel_norm's and row_loss's own: each compiles" {
	for op in softmax log_softmax l1 l2 '{"map": "x * x * x * x", "combine": "a + b", "identity": "0.0f", "finalize": "rsqrtf(sqrtf(v))", "apply": "x * v"}'; do
		jq -c --arg op "$op" '.task.spec.op = (try ($op | fromjson) catch $op)' <<<"$(state l1norm)" |
			kgen -b rules -k 2 >>"$BATS_TEST_TMPDIR/c.jsonl"
	done
	# a loss of our own over the two inputs, by their names and by IN(k)
	jq -c '.task.spec.op = {"map": "fabsf(a - IN(1)) * b", "combine": "a + b", "identity": "0.0f", "finalize": "sqrt(v / n)"}' \
		<<<"$(state mse_loss)" | kgen -b rules -k 2 >>"$BATS_TEST_TMPDIR/c.jsonl"
	# the mse task's two (rows, cols) inputs as row_reduce's: a cosine distance per row, the mean
	jq -c '.task.family = "row_reduce" | .task.spec = {"terms": [{"map": "a * b", "combine": "a + b", "identity": "0.0f"},
		{"map": "a * a", "combine": "a + b", "identity": "0.0f"}, {"map": "b * b", "combine": "a + b", "identity": "0.0f"}],
		"row": "1.0 - t0 / sqrt(t1 * t2)", "op": "mean", "rows": "rows", "cols": "cols"}' \
		<<<"$(state mse_loss)" | kgen -b rules -k 2 >>"$BATS_TEST_TMPDIR/c.jsonl"
	# an L1 norm over channels (finalize sees eps), a cross entropy written as -log(softmax)
	jq -c '.task.spec.op = {"map": "fabsf(x)", "combine": "a + b", "identity": "0.0f", "finalize": "n / (v + eps)", "apply": "x * v"}' \
		<<<"$(state rmsnorm)" | kgen -b rules -k 2 >>"$BATS_TEST_TMPDIR/c.jsonl"
	jq -c '.task.spec.op = {"stat": "softmax", "apply": "-log(e * rs)"}' \
		<<<"$(state cross_entropy)" | kgen -b rules -k 2 >>"$BATS_TEST_TMPDIR/c.jsonl"
	[ "$(jq -s 'map(select(.candidate.status == null)) | length' "$BATS_TEST_TMPDIR/c.jsonl")" -eq 18 ]
	HTAM_CACHE=$BATS_TEST_TMPDIR/cache kcompile <"$BATS_TEST_TMPDIR/c.jsonl" >"$BATS_TEST_TMPDIR/k.jsonl"
	jq -se 'all(.[]; .compile.ok)' "$BATS_TEST_TMPDIR/k.jsonl"
	jq -r 'select(.task.family == "row_reduce") | .candidate.source' "$BATS_TEST_TMPDIR/c.jsonl" | head -400 |
		grep -q 'return (1.0 - t0 / sqrt(t1 \* t2));'
}

@test "the op vocabulary refuses what it cannot paste: a statistic, a term, a row expression, each named; an op no variant takes says so" {
	gen() { jq -c "$2" <<<"$(state "$1")" | kgen -b rules -k 1 2>/dev/null | jq -r .candidate.reason; }
	[ "$(gen l1norm '.task.spec.op = {"stat": "median", "apply": "x"}')" = \
		'task "l1norm": spec.op.stat: expected "softmax" (the row'"'"'s max and sum of exponentials; a fold states map, combine, identity and finalize instead)' ]
	[ "$(gen l1norm '.task.spec.op = {"stat": "softmax", "apply": "e * rs", "map": "x"}')" = \
		'task "l1norm": spec.op: a softmax statistic takes no map' ]
	[[ $(gen l1norm '.task.spec.op = {"stat": "softmax", "apply": "e; } void f() { "}') == 'task "l1norm": spec.op.apply: expected one C expression'* ]]
	# a statistic is applied to each value (row_norm) or finalized to one result (mid_reduce), not both
	[ "$(gen l1norm '.task.spec.op = {"stat": "softmax", "apply": "e * rs", "finalize": "m"}')" = \
		'task "l1norm": spec.op: a softmax statistic takes apply (of x, m, s, e, rs, ls: each value of the row) or finalize (of m and s: the row'"'"'s one result), and no keep' ]
	# none TASK FAMILY KIND VARIANT...: kgen's reason when no variant of FAMILY takes an op of KIND
	none() {
		local t=$1 f=$2 k=$3 v why=
		shift 3
		for v; do why+="; variant $v takes no $k op"; done
		echo "task \"$t\": no variant of family $f serves it: ${why#; }"
	}
	[ "$(gen l1norm '.task.spec.op = "softmax" | .task.spec.op = {"stat": "softmax", "finalize": "m + logf(s)"}')" = \
		"$(none l1norm row_norm stat cluster block split)" ]
	[ "$(gen sum_dim1 '.task.spec.op = {"stat": "softmax", "apply": "e * rs"}')" = \
		"$(none sum_dim1 mid_reduce softmax tile split thread row)" ]
	# a fold without apply: no row_norm variant takes one, and each says so
	[ "$(gen l1norm '.task.spec.op = {"combine": "a + b", "identity": "0.0f"}')" = \
		"$(none l1norm row_norm fold cluster block split)" ]
	[ "$(gen sum_dim1 '.task.spec.op = {"combine": "a + b", "identity": "0.0f", "apply": "x"}')" = \
		"$(none sum_dim1 mid_reduce apply tile split thread row)" ]
	rr='.task.family = "row_reduce" | .task.spec = {"terms": [{"map": "a * b", "combine": "a + b", "identity": "0.0f"}], "row": "t0", "op": "mean", "rows": "rows", "cols": "cols"}'
	[ "$(gen mse_loss "$rr | .task.spec.terms = []")" = 'task "mse_loss": spec.terms: expected an array of 1 to 4 folds' ]
	[ "$(gen mse_loss "$rr | .task.spec.terms[0] = {\"keep\": \"max\", \"result\": \"value\"}")" = \
		'task "mse_loss": spec.terms[0]: expected a fold (map, combine, identity, finalize)' ]
	[[ $(gen mse_loss "$rr | .task.spec.terms[0].map = \"a /* */\"") == 'task "mse_loss": spec.terms[0].map: expected one C expression'* ]]
	[[ $(gen mse_loss "$rr | .task.spec.row = \"t0; }\"") == 'task "mse_loss": spec.row: expected one C expression'* ]]
}

@test "every family that stores f16 and bf16 (its reals) renders and compiles for each task of the pack it serves, its float tensors made 2-byte; the others refuse them" {
	[ -x "$RULES" ] || skip "the unit program $RULES is not built (make units)"
	command -v kcompile >/dev/null || skip "no kcompile on PATH"
	half=$BATS_TEST_TMPDIR/half
	fams=$(jq -r 'select(.reals | index("f16") and index("bf16")) | .family' "$HTAM_TEMPLATES"/*.json)
	for fam in $fams; do
		for t in $(grep -l "\"family\": \"$fam\"" tasks/*/task.json); do
			for dt in f16 bf16; do
				d=$half/$(basename "$(dirname "$t")")_$dt
				mkdir -p "$d"
				cp -r "$(dirname "$t")"/. "$d"/
				jq --arg dt "$dt" '.id += "_" + $dt | (.inputs[], .outputs[]) |= (if .dtype == "f32" then .dtype = $dt else . end)' \
					"$t" >"$d/task.json"
			done
		done
	done
	echo "# $(ls "$half" | wc -l) tasks of $(wc -w <<<"$fams") families in f16 and bf16: sweeping and compiling" >&3
	"$RULES" --sweep "$HTAM_TEMPLATES" "$half"/* >"$BATS_TEST_TMPDIR/cands.jsonl" 2>/dev/null
	# every task got candidates, each compiled for its storage type
	[ "$(jq -r .task.id "$BATS_TEST_TMPDIR/cands.jsonl" | sort -u)" = "$(ls "$half" | sort)" ]
	jq -e -s 'all(.[]; (.candidate.source | test("#define REAL_KIND [12]\n")))' "$BATS_TEST_TMPDIR/cands.jsonl" >/dev/null
	HTAM_CACHE=$OBJ/kgen-rules-cache kcompile <"$BATS_TEST_TMPDIR/cands.jsonl" >"$BATS_TEST_TMPDIR/compiled.jsonl"
	jq -r 'select(.compile.ok != true) | "\(.task.id) \(.candidate.variant) \(.candidate.defines): \(.compile.reason // .compile.log)"' \
		"$BATS_TEST_TMPDIR/compiled.jsonl" | head -c 3000 >"$BATS_TEST_TMPDIR/failed.txt"
	[ ! -s "$BATS_TEST_TMPDIR/failed.txt" ] || { cat "$BATS_TEST_TMPDIR/failed.txt"; false; }
	# (at most the 16 bytes of a division's call: see the problems' sweep below)
	jq -r 'select([.compile.kernels[] | .spill_stores] | max > 16) | "\(.task.id) \(.candidate.variant) \(.candidate.defines) spills"' \
		"$BATS_TEST_TMPDIR/compiled.jsonl" >"$BATS_TEST_TMPDIR/spills.txt"
	[ ! -s "$BATS_TEST_TMPDIR/spills.txt" ] || { cat "$BATS_TEST_TMPDIR/spills.txt"; false; }
	# a family without reals stores f32 alone, and says so
	gen() { jq -c "$2" <<<"$(state "$1")" | kgen -b rules -k 1 2>/dev/null | jq -r .candidate.reason; }
	[[ $(gen matmul_square '(.task.inputs[], .task.outputs[]) |= (.dtype = "f16")') == \
		'task "matmul_square": no variant of family gemm serves it: variant '*' stores f32 only, not f16'* ]]
	# and a task's float tensors share one type
	[[ $(gen relu '.task.outputs[0].dtype = "bf16"') == *'its float tensors are of two types (x is f32, y is bf16): a family stores one'* ]]
}

@test "every problem of ours that a family serves renders and compiles at every knob value of every variant, without spills" {
	PY=${HTAM_PYTHON:-python3}
	"$PY" -c 'import torch' 2>/dev/null || skip "no PyTorch for $PY (scripts/setup installs it)"
	[ -x "$RULES" ] || skip "the unit program $RULES is not built (make units)"
	command -v kcompile >/dev/null || skip "no kcompile on PATH"
	imp=$BATS_TEST_TMPDIR/imp
	# (import exits 1 when it refuses a problem: tests/data/problems holds some that no family serves)
	"$ROOT/bin/htam" import -q --into "$imp" tests/data/problems >"$BATS_TEST_TMPDIR/imp.jsonl" || true
	# (chains are left to import.bats: their first stage sweeps as the single family's does)
	jq -r 'select(.status == "imported" and .family != "none") | .task' "$BATS_TEST_TMPDIR/imp.jsonl" |
		while read -r t; do jq -e 'has("then") | not' "$imp/$t/task.json" >/dev/null && echo "$t"; done \
		>"$BATS_TEST_TMPDIR/served"
	fams=$(jq -r 'select(.status == "imported" and .family != "none") | .family' "$BATS_TEST_TMPDIR/imp.jsonl" | sort -u | wc -l)
	echo "# $(wc -l <"$BATS_TEST_TMPDIR/served") problems of $fams families: sweeping and compiling" >&3
	[ -s "$BATS_TEST_TMPDIR/served" ]
	# shellcheck disable=SC2046
	"$RULES" --sweep "$HTAM_TEMPLATES" $(sed "s|^|$imp/|" "$BATS_TEST_TMPDIR/served") \
		>"$BATS_TEST_TMPDIR/cands.jsonl" 2>/dev/null
	# every served problem got candidates
	[ "$(jq -r .task.id "$BATS_TEST_TMPDIR/cands.jsonl" | sort -u)" = "$(sort "$BATS_TEST_TMPDIR/served")" ]
	HTAM_CACHE=$OBJ/kgen-rules-cache kcompile <"$BATS_TEST_TMPDIR/cands.jsonl" >"$BATS_TEST_TMPDIR/compiled.jsonl"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/compiled.jsonl")" -eq "$(wc -l <"$BATS_TEST_TMPDIR/cands.jsonl")" ]
	jq -r 'select(.compile.ok != true) | "\(.task.id) \(.candidate.variant) \(.candidate.defines): \(.compile.reason // .compile.log)"' \
		"$BATS_TEST_TMPDIR/compiled.jsonl" | head -c 3000 >"$BATS_TEST_TMPDIR/failed.txt"
	[ ! -s "$BATS_TEST_TMPDIR/failed.txt" ] || { cat "$BATS_TEST_TMPDIR/failed.txt"; false; }
	# No spills; but a kernel of 2-byte floats may spill up to 16 bytes:
	# ptxas saves a value or two around the call of an IEEE division's slow
	# path there (sigmoid's 1 / (1 + e) at VEC 8 does; with no division it
	# does not), outside the loop's loads.
	jq -r 'select(.task.family != "gemm" and .task.family != "gemv") |
		([.task.inputs[], .task.outputs[] | .dtype] | any(. == "f16" or . == "bf16")) as $half |
		select([.compile.kernels[] | .spill_stores] | max > (if $half then 16 else 0 end)) |
		"\(.task.id) \(.candidate.variant) \(.candidate.defines) spills"' \
		"$BATS_TEST_TMPDIR/compiled.jsonl" >"$BATS_TEST_TMPDIR/spills.txt"
	[ ! -s "$BATS_TEST_TMPDIR/spills.txt" ] || { cat "$BATS_TEST_TMPDIR/spills.txt"; false; }
}
