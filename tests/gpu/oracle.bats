#!/usr/bin/env bats
# Imported tasks on the GPU: the PyTorch oracle computes their references
# on kbench's own buffers (CUDA IPC) and times PyTorch eager beside the
# candidate; it agrees with float64 PyTorch within each task's tolerance;
# a wrong kernel is caught as on a task with a reference.cu; an exported
# ModelNew launches its kernel and matches Model. Chains (a product, then
# a group norm and a map, a row sum, a logsumexp, or a mean with the input
# added back: docs/tasks.md) are among the served. Problems: ours
# (tests/data/problems) and a sample of KernelBench's levels 1 and 2 when
# this machine has them ($HTAM_KERNELBENCH, else ../shared/kernelbench).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
KB=${HTAM_KERNELBENCH:-$ROOT/../shared/kernelbench}
PY=${HTAM_PYTHON:-python3}
SAMPLE=(level1/19_ReLU.py level1/23_Softmax.py level1/40_LayerNorm.py
	level1/51_Argmax_over_a_dimension.py level1/95_CrossEntropyLoss.py
	level1/4_Matrix_vector_multiplication_.py level1/87_conv_pointwise_2D.py
	level2/86_Matmul_Divide_GELU.py level2/17_Conv2d_InstanceNorm_Divide.py
	level2/30_Gemm_GroupNorm_Hardtanh.py level2/56_Matmul_Sigmoid_Sum.py)

setup_file() {
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	local files=("$ROOT"/tests/data/problems/*.py) f
	# the bf16 cumsum as f16 too
	sed 's/bfloat16/float16/g' "$ROOT/tests/data/problems/cumsum_bf16.py" >"$BATS_FILE_TMPDIR/cumsum_as_f16.py"
	files+=("$BATS_FILE_TMPDIR/cumsum_as_f16.py")
	for f in "${SAMPLE[@]}"; do
		[[ -f $KB/$f ]] && files+=("$KB/$f")
	done
	"$ROOT/bin/htam" import -q --into "$BATS_FILE_TMPDIR/imp" "${files[@]}" >"$BATS_FILE_TMPDIR/imp.jsonl"
}

setup() {
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	I=$BATS_FILE_TMPDIR/imp
	cd "$BATS_TEST_TMPDIR"
}

served() { for d in "$I"/*/; do [[ $(jq -r .family "$d/task.json") != none ]] && echo "$d"; done; }

# twin ID PATTERN REPLACEMENT: the candidate on stdin with its source's
# first match of PATTERN (a jq regex) replaced and -ID on its id; an error
# where the source has no match, so that every twin differs from its
# original
twin() {
	jq -c --arg id "-$1" --arg p "$2" --arg r "$3" 'if .candidate.source | test($p)
		then .candidate.source |= sub($p; $r) | .candidate.id += $id
		else error("twin \($id): no match in the source") end'
}

# verdicts N BOUND M TWINS: of out.jsonl's candidates, the N whose ids do
# not match TWINS (a regex) are ok with rel_l2 under BOUND and the M that
# do are incorrect
verdicts() {
	jq -se --argjson n "$1" --argjson b "$2" --argjson m "$3" --arg t "$4" '
		(map(select(.candidate.id | test($t) | not)) |
			length == $n and all(.[]; .bench.status == "ok" and .bench.rel_l2 < $b)) and
		(map(select(.candidate.id | test($t))) | length == $m and all(.[]; .bench.status == "incorrect"))' out.jsonl
}

@test "the oracle computes each imported task's reference on kbench's buffers and times PyTorch eager there" {
	for d in "$I"/*/; do ktask "$d"; done | kcompile >refs.jsonl
	echo "# $(wc -l <refs.jsonl) imported tasks" >&3
	kbench <refs.jsonl >out.jsonl
	jq -c '{t: .task.id, st: .bench.status, eager: .bench.oracle.eager_us, why: .bench.reason}' out.jsonl >&3
	jq -se 'all(.[]; .bench.status == "ok" and .bench.oracle.reference == "pytorch"
		and .bench.oracle.eager_us > 0 and .bench.subject == "reference")' out.jsonl
}

@test "the rules' kernels for the served families are checked against the oracle and timed beside eager" {
	for d in $(served); do ktask --state "$d"; done | htg-select --db m.db | htg-retrieve --db m.db |
		kgen -k 2 | kcompile >c.jsonl
	kbench <c.jsonl >out.jsonl
	jq -c '{t: .task.id, v: .candidate.variant, st: .bench.status, us: .bench.time_us.median,
		eager: .bench.oracle.eager_us, vs: .bench.vs_eager, why: .bench.reason}' out.jsonl >&3
	jq -se 'all(.[]; .bench.status == "ok" and .bench.trials > 0 and .bench.protocol.timed_checked > 0
		and (.bench.vs_eager - .bench.oracle.eager_us / .bench.time_us.median | fabs) < 1e-6)' out.jsonl
	cp out.jsonl "$BATS_FILE_TMPDIR/benched.jsonl"
}

@test "mid_reduce's vector paths (thread and split, 2 to 8 values a load) are correct where a block's threads run past the last output" {
	# the check set whose inner axis is 16 takes the vector path at a size
	# where most of the last block's threads have no output: a thread
	# there once read x - 1 as a vector (misaligned)
	moves='[{id: "t4", moves: [{family: "mid_reduce", variant: "thread", set: {VEC: 4, BLOCK: 256}}]},
		{id: "t8", moves: [{family: "mid_reduce", variant: "thread", set: {VEC: 8, BLOCK: 128, UNROLL: 4}}]},
		{id: "s4", moves: [{family: "mid_reduce", variant: "split", set: {VEC: 4, BLOCK: 256, SPLIT: 8}}]},
		{id: "s2", moves: [{family: "mid_reduce", variant: "split", set: {VEC: 2, BLOCK: 128, SPLIT: 4}}]}]'
	for d in $(served); do
		[[ $(jq -r .family "$d/task.json") == mid_reduce ]] || continue
		jq -e '.check_params | any(.[]; .cols % 16 == 0)' "$d/task.json" >/dev/null
		ktask --state "$d" | jq -c ".memory.strategies = $moves" | kgen -k 5
	done | kcompile >c.jsonl
	kbench <c.jsonl >out.jsonl
	jq -c '{t: .task.id, v: .candidate.variant, d: .candidate.defines, st: .bench.status, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -s '[.[] | select(.candidate.variant == "split" and .candidate.defines.VEC == 4)] | length' out.jsonl)" -gt 0 ]
	jq -se 'all(.[]; .bench.status == "ok")' out.jsonl
}

@test "pool's roll: eight configurations each on 2D max and average pools (strides, dilation, padding, ceil mode, f16) correct against the oracle, rows whole vectors (cp.async) or not" {
	# the check sets of odd widths take the loads-and-stores path, the one
	# 16 wide cp.async; TH 8 with AHEAD 6 runs the ring past bands of
	# fewer rows than it holds
	moves='[{id: "a", moves: [{family: "pool", variant: "roll", set: {BLOCK: 64, OUTS: 1, TH: 8, AHEAD: 2, STAGE: 0}}]},
		{id: "b", moves: [{family: "pool", variant: "roll", set: {BLOCK: 128, OUTS: 4, TH: 16, AHEAD: 4, STAGE: 1}}]},
		{id: "c", moves: [{family: "pool", variant: "roll", set: {BLOCK: 256, OUTS: 2, TH: 32, AHEAD: 6, STAGE: 1}}]},
		{id: "d", moves: [{family: "pool", variant: "roll", set: {BLOCK: 128, OUTS: 8, TH: 8, AHEAD: 6, STAGE: 1}}]},
		{id: "e", moves: [{family: "pool", variant: "roll", set: {BLOCK: 64, OUTS: 4, TH: 128, AHEAD: 2, STAGE: 0}}]},
		{id: "f", moves: [{family: "pool", variant: "roll", set: {BLOCK: 512, OUTS: 1, TH: 16, AHEAD: 4, STAGE: 0}}]},
		{id: "g", moves: [{family: "pool", variant: "roll", set: {BLOCK: 128, OUTS: 2, TH: 64, AHEAD: 6, STAGE: 0}}]},
		{id: "h", moves: [{family: "pool", variant: "roll", set: {BLOCK: 256, OUTS: 4, TH: 8, AHEAD: 2, STAGE: 1}}]}]'
	for t in max_pool2d max_pool2d_f16 avg_pool2d; do
		jq -e '.check_params | any(.[]; .width % 16 == 0) and any(.[]; .width % 2 == 1)' "$I/$t/task.json" >/dev/null
		ktask --state "$I/$t" | jq -c ".memory.strategies = $moves" | kgen -k 9
	done | kcompile >c.jsonl
	kbench -q <c.jsonl >out.jsonl
	jq -c '{t: .task.id, d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -s '[.[] | select(.candidate.variant == "roll")] | length' out.jsonl)" -eq 24 ]
	jq -se 'all(.[]; .bench.status == "ok")' out.jsonl
}

@test "the attention family: eight configurations each, causal and written out, correct against the oracle at sizes no tile divides" {
	for t in attention_causal attention_scaled; do
		ktask --state "$I/$t" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 8
	done | kcompile | kbench -q >out.jsonl
	jq -c '{t: .task.id, d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -s 'map(.candidate.id) | unique | length' out.jsonl)" -eq 16 ]
	jq -se 'all(.[]; .bench.status == "ok" and .bench.rel_l2 < 1e-6)' out.jsonl
}

@test "flash attention (attention's flash: the scores kept on chip, one pass over the keys against a running maximum) is correct against the oracle, causal at sizes no tile divides and long (47 steps of 64 keys, a head dimension of two k-tiles); O not rescaled as the maximum grows, or the last step of keys left out, is incorrect, at the benchmark size where the check sizes take one step" {
	moves='[{id: "a", moves: [{family: "attention", variant: "flash", set: {WGS: 2, TILE_N: 128, STAGES: 2}}]},
		{id: "b", moves: [{family: "attention", variant: "flash", set: {WGS: 1, TILE_N: 128, STAGES: 3}}]},
		{id: "c", moves: [{family: "attention", variant: "flash", set: {WGS: 2, TILE_N: 128, STAGES: 3}}]},
		{id: "d", moves: [{family: "attention", variant: "flash", set: {WGS: 1, TILE_N: 128, STAGES: 2}}]}]'
	for t in attention_causal attention_long; do
		ktask --state "$I/$t" | jq -c ".memory.strategies = $moves" | kgen -k 5 |
			jq -c 'select(.candidate.variant == "flash")'
	done >good.jsonl
	# the moves' flash (a's at flash's defaults, the long problem's start;
	# the causal one starts at small): all four on the causal problem; on
	# the long one, c's three stages of two k-tiles do not fit shared memory
	n=$(jq -s 'map(.candidate.id) | unique | length' good.jsonl)
	[ "$n" -ge 7 ] && [ "$n" -eq "$(wc -l <good.jsonl)" ]
	jq -e '.params.kv_len > 64 * 40 and .params.head_dim > 64 and all(.check_params[]; .kv_len <= 64)' \
		"$I/attention_long/task.json"
	long=$(jq -c 'select(.task.id == "attention_long")' good.jsonl | head -1)
	{
		cat good.jsonl
		twin norescale 'fmaf\(o\[32 \* h \+ i\], corr\[\(i >> 1\) & 1\], part\[i\]\)' 'o[32 * h + i] + part[i]' <<<"$long"
		twin laststep 'CDIV\(m0 \+ TILE_M, FA_KV\)\) : kvt;' 'CDIV(m0 + TILE_M, FA_KV)) : kvt - (kvt > 1);' <<<"$long"
	} | kcompile >c.jsonl
	jq -se --argjson n "$n" 'length == $n + 2 and (map(.candidate.source) | unique | length) == 4' c.jsonl
	kbench -q <c.jsonl >out.jsonl
	jq -c '{t: .task.id, id: .candidate.id[-10:], d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2,
		us: .bench.time_us.median, eager: .bench.oracle.eager_us, why: .bench.reason}' out.jsonl >&3
	verdicts "$n" 1e-6 2 '-norescale|-laststep'
}

@test "attention's small (one launch in fp32 on the CUDA cores) is correct against the oracle in each of its nine configurations, causal and not, O's columns past 128 and keys over many steps; O not rescaled as the maximum grows, the causal diagonal a key late, or the last step of keys left out, is incorrect" {
	moves=$(jq -nc '[[2, 4, 8][] as $w | [1, 2, 4][] as $r |
		{id: "s\($w)x\($r)", moves: [{family: "attention", variant: "small", set: {WARPS: $w, RW: $r}}]}]')
	for t in attention_causal attention_scaled attention_long; do
		ktask --state "$I/$t" | jq -c --argjson m "$moves" '.memory.strategies = $m' | kgen -k 10 |
			jq -c 'select(.candidate.variant == "small")'
	done >good.jsonl
	[ "$(jq -s 'map(.candidate.id) | unique | length' good.jsonl)" -eq 27 ]
	# the long problem's keys take 94 steps of 32 at its size, one at its
	# check sizes: the last step left out is caught at the benchmark size
	jq -e '.params.kv_len > 32 * 90 and all(.check_params[]; .kv_len <= 32)' "$I/attention_long/task.json"
	causal=$(jq -c 'select(.task.id == "attention_causal" and .candidate.defines == {WARPS: 4, RW: 2})' good.jsonl)
	long=$(jq -c 'select(.task.id == "attention_long" and .candidate.defines == {WARPS: 4, RW: 2})' good.jsonl)
	{
		cat good.jsonl
		twin norescale 'fmaf\(acc\[r\]\[cc\], alpha\[r\], part\[r\]\[cc\]\)' 'acc[r][cc] + part[r][cc]' <<<"$causal"
		twin diagonal 'key > row\)' 'key > row + 1)' <<<"$causal"
		twin laststep 'k0 < kend; k0 \+= 32' 'k0 < kend - (kend > 32 ? (kend - 1) % 32 + 1 : 0); k0 += 32' <<<"$long"
	} | kcompile >c.jsonl
	# two sources (causal or not) and the three twins'
	jq -se 'length == 30 and (map(.candidate.source) | unique | length) == 5' c.jsonl
	kbench -q <c.jsonl >out.jsonl
	jq -c '{t: .task.id, id: .candidate.id[-10:], d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2,
		us: .bench.time_us.median, eager: .bench.oracle.eager_us, why: .bench.reason}' out.jsonl >&3
	verdicts 27 1e-6 3 '-norescale|-diagonal|-laststep'
}

@test "the mha family: six configurations each, a causal block (a tril buffer mask; the scores' product asks more shared memory than the output's, which kbench must allow both), an unmasked one of odd heads and a ReLU one without projection, correct against the oracle" {
	for t in mha_causal mha_heads mha_relu; do
		ktask --state "$I/$t" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 6
	done | kcompile | kbench -q >out.jsonl
	jq -c '{t: .task.id, d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -s 'map(.candidate.id) | unique | length' out.jsonl)" -eq 18 ]
	jq -se 'all(.[]; .bench.status == "ok" and .bench.rel_l2 < 1e-5)' out.jsonl
}

@test "mha's flash variants (the linears around attn_flash; relu's unnormalised, under mha_relu's bound) are correct against the oracle on a causal block, an unmasked one of odd heads, a ReLU one and a long one; the ReLU block with its mask dropped is incorrect" {
	moves='[{id: "a", moves: [{family: "mha", variant: "flash", set: {}}]},
		{id: "b", moves: [{family: "mha", variant: "flash", set: {WGS: 1, FSTAGES: 3}}]},
		{id: "c", moves: [{family: "mha", variant: "heads_flash", set: {}}]},
		{id: "d", moves: [{family: "mha", variant: "heads_flash", set: {WGS: 1, FSTAGES: 3}}]}]'
	for t in mha_causal mha_heads mha_relu mha_long; do
		ktask --state "$I/$t" | jq -c ".memory.strategies = $moves" | kgen -k 3 |
			jq -c 'select(.candidate.variant | endswith("flash"))'
	done >good.jsonl
	# the start (flash or heads_flash at the defaults, a's or c's), b or d
	# and a neighbour: flash where the block has its projection,
	# heads_flash where not; mha_long takes six steps of keys through
	# attn_flash's ring of FSTAGES, apart from the products' STAGES
	n=$(jq -s 'map(.candidate.id) | unique | length' good.jsonl)
	[ "$n" -eq "$(wc -l <good.jsonl)" ]
	jq -se 'group_by(.task.id) | length == 4 and all(.[]; length >= 2)' good.jsonl
	jq -se 'map(select(.task.id == "mha_long")) | any(.[]; .candidate.defines | .STAGES != .FSTAGES)' good.jsonl
	{
		cat good.jsonl
		jq -c 'select(.task.id == "mha_relu")' good.jsonl | head -1 | twin unmasked '#define CAUSAL \(1\)' '#define CAUSAL (0)'
	} | kcompile >c.jsonl
	# the twin's source is its own (the sub matched)
	jq -se 'map(select(.task.id == "mha_relu") | .candidate.source) | unique | length == 2' c.jsonl
	kbench -q <c.jsonl >out.jsonl
	jq -c '{t: .task.id, v: .candidate.variant, d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2,
		why: .bench.reason}' out.jsonl >&3
	verdicts "$n" 1e-5 1 '-unmasked$'
}

@test "mha's norm_flash (nn.MultiheadAttention and a residual LayerNorm: x gathered from a feature map's channels-first layout, or seq-first, the output stored back so) is correct against the oracle; the residual left out, or the norm's weight, is incorrect" {
	for t in mha_vision mha_seq_norm; do
		jq -e '.family == "mha" and .spec.norm' "$I/$t/task.json" >/dev/null
		ktask --state "$I/$t" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 3
	done >good.jsonl
	jq -se 'length == 6 and all(.[]; .candidate.variant == "norm_flash")' good.jsonl
	{
		cat good.jsonl
		jq -c 'select(.task.id == "mha_vision")' good.jsonl | head -1 | twin nores 'v\[r \* ld \+ c\] \+= x\[' 'v[r * ld + c] += 0.0f * x['
		jq -c 'select(.task.id == "mha_seq_norm")' good.jsonl | head -1 |
			twin noweight 'fmaf\(\(row\[c\] - mean\) \* rstd, w\[c\], bias\[c\]\)' '(row[c] - mean) * rstd + bias[c]'
	} | kcompile >c.jsonl
	# each twin's source is its own (the sub matched)
	jq -se 'group_by(.task.id) | all(.[]; (map(.candidate.source) | unique | length) == 2)' c.jsonl
	kbench -q <c.jsonl >out.jsonl
	jq -c '{t: .task.id, id: .candidate.id[-9:], d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2,
		us: .bench.time_us.median, eager: .bench.oracle.eager_us, why: .bench.reason}' out.jsonl >&3
	verdicts 6 1e-5 2 '-nores|-noweight'
}

@test "bool masks and broadcast inputs: masked scans (row and column walks, f32 and f16) and global_reduce's row weights and column labels, eight configurations each, correct against the oracle; a scan that ignores its mask is incorrect" {
	for t in masked_cumsum masked_cumsum_mid masked_cumsum_f16 weighted_mse hinge_loss; do
		ktask --state "$I/$t" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 8
	done | kcompile >c.jsonl
	kbench -q <c.jsonl >out.jsonl
	jq -c '{t: .task.id, d: .candidate.defines, st: .bench.status, rel: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -s 'map(.task.id) | unique | length' out.jsonl)" -eq 5 ]
	jq -se 'all(.[]; .bench.status == "ok")' out.jsonl
	# the mask read but not applied: every x counted
	jq -c 'select(.task.id == "masked_cumsum") | .candidate.source |= (gsub("sc_lane\\(m, SC_REVERSE \\? 3 - l : l\\)"; "1.0f")
		| gsub("#define SC_M\\(i\\) \\(\\(float\\)sc_mask1\\(mask \\+ \\(i\\)\\)\\)"; "#define SC_M(i) 1.0f")) |
		.candidate.id += "-unmasked"' c.jsonl | head -1 | kcompile | kbench -q >bad.jsonl
	jq -e '(.candidate.source | contains("sc_mask1(mask")) | not' bad.jsonl
	jq -e '.bench.status == "incorrect"' bad.jsonl
}

@test "a chain is checked whole: its stages' kernels in one candidate are correct against the problem's module; the same chain with its last stage's clamp at 2.5 for 2, or its group norm's eps 100 times larger, is incorrect" {
	d=$I/linear_groupnorm_hardtanh
	jq -e '(.then | map(.family)) == ["stat_norm", "elementwise"]' "$d/task.json"
	{
		ktask --state "$d" | kgen -k 1
		ktask --state "$d" | jq -c '.task.then[1].spec.expr = "fminf(fmaxf(then_2, -2.0f), 2.5f)"' | kgen -k 1
		ktask --state "$d" | jq -c '.task.then[0].spec.eps *= 100' | kgen -k 1
	} | kcompile >c.jsonl
	jq -se 'length == 3 and (.[1].candidate.source | contains("2.5f"))' c.jsonl
	kbench <c.jsonl >out.jsonl
	jq -c '{t: .task.id, st: .bench.status, l2: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -sc 'map(.bench.status)' out.jsonl)" = '["ok","incorrect","incorrect"]' ]
}

@test "a batch norm of a product's features (stat_norm's cols: a thread a column, shares of the rows) is correct against the problem's module, at check sizes of odd features and fewer rows than shares; its last share's rows left out, or its apply reading the next column's statistics, is incorrect" {
	d=$I/linear_batchnorm_relu
	ktask --state "$d" | kgen -k 1 >good.jsonl
	jq -e '[.candidate.launch.launches[].kernel] | index("t1_sn_cols_apply")' good.jsonl
	{
		cat good.jsonl
		jq -c '.candidate.source |= sub("const long long a1 = outer \\* \\(k \\+ 1\\) / SPLIT;";
			"const long long a1 = k + 1 == SPLIT ? outer * k / SPLIT : outer * (k + 1) / SPLIT;")
			| .candidate.id += "-lastshare"' good.jsonl
		jq -c '.candidate.source |= sub("const long long b = j % groups;"; "const long long b = (j + 1) % groups;")
			| .candidate.id += "-shifted"' good.jsonl
	} | kcompile >c.jsonl
	jq -se 'length == 3 and (map(.candidate.source) | unique | length) == 3' c.jsonl
	kbench <c.jsonl >out.jsonl
	jq -c '{t: .task.id, st: .bench.status, us: .bench.time_us.median, eager: .bench.oracle.eager_us,
		l2: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -sc 'map(.bench.status)' out.jsonl)" = '["ok","incorrect","incorrect"]' ]
}

@test "chains with a logsumexp and with a residual: correct against the problem's module; the logsumexp taken as a max, or the input subtracted where it is added back, is incorrect" {
	lse=$I/linear_logsumexp_gelu res=$I/linear_mean_residual
	jq -e '.then[0].spec.op == "logsumexp"' "$lse/task.json"
	jq -e '.first_inputs == ["x", "fc_weight", "fc_bias"] and .then[1].spec.expr == "(then_2 + x)"' "$res/task.json"
	{
		ktask --state "$lse" | kgen -k 1
		ktask --state "$res" | kgen -k 1
		ktask --state "$lse" | jq -c '.task.then[0].spec.op = "max"' | kgen -k 1
		ktask --state "$res" | jq -c '.task.then[1].spec.expr = "(then_2 - x)"' | kgen -k 1
	} | kcompile >c.jsonl
	kbench <c.jsonl >out.jsonl
	jq -c '{t: .task.id, st: .bench.status, l2: .bench.rel_l2, why: .bench.reason}' out.jsonl >&3
	[ "$(jq -sc 'map(.bench.status)' out.jsonl)" = '["ok","ok","incorrect","incorrect"]' ]
}

@test "the null-kernel gate (zeros, a constant, a copy of the input) fails every imported task" {
	"$ROOT/tests/gpu/data/gate/mkgate" "$I"/*/ | kcompile | kbench -q >out.jsonl
	jq -c 'select(.bench.status == "ok") | {t: .task.id, g: .candidate.id}' out.jsonl >&3
	jq -se 'length >= 3 and all(.[]; .bench.status == "incorrect")' out.jsonl
}

@test "2-byte floats: a cumsum that keeps its running sum in bf16 or f16 (as PyTorch's CUDA kernel does) is incorrect, as is one two ulps off or one writing an element past the end; the same loop in fp32 is ok" {
	for t in cumsum_bf16 cumsum_as_f16; do
		[[ -d $I/$t ]] || continue
		f16=$([[ $t == *_as_f16 ]] && echo 1 || echo 0)
		# name kernel extra-args
		for k in "right scan_fp32 i32:0" "in_half scan_in_half" "two_ulps scan_fp32 i32:2" \
			"past_end scan_past_end"; do
			read -r name kernel extra <<<"$k"
			ktask "$I/$t" | jq -c --rawfile src "$ROOT/tests/gpu/data/half/half.cu" --arg n "$name" \
				--arg k "$kernel" --arg extra "$extra" --argjson f16 "$f16" \
				'.candidate = {id: ($n + "-" + .task.id), source: $src, defines: {F16: $f16}, generator: "test",
				 launch: {launches: [{kernel: $k, grid: ["cdiv(batch, 128)"], block: [128],
				 args: (["x", "y", "i64:batch", "i64:dim"] + ($extra | split(" ") | map(select(. != ""))))}]}}'
		done
	done | kcompile | kbench -q >out.jsonl
	jq -c '{t: .task.id, k: .candidate.id, st: .bench.status, why: .bench.reason}' out.jsonl >&3
	[ "$(wc -l <out.jsonl)" -ge 4 ]
	jq -se 'all(.[]; (.candidate.id | startswith("right-")) == (.bench.status == "ok"))' out.jsonl
	jq -se 'all(.[]; .bench.status == "ok" or .bench.status == "incorrect")' out.jsonl
	# the check sizes' outputs hold an odd number of elements: the write past the end
	# lands in the last word's spare half, which is guard too
	jq -se 'map(select(.candidate.id | startswith("past_end-"))) | length > 0 and
		all(.[]; .bench.reason | startswith("wrote out of bounds"))' out.jsonl
}

@test "the oracle (fp32 on the GPU; float64, rounded once, where a task's sums are long) agrees with float64 PyTorch within each task's tolerance" {
	run "$PY" "$ROOT/pytorch/oracle.py" --check --device cuda --f64 --bench "$I"/*/
	echo "$output" | jq -c '{task, k, ok, of_tolerance, why}' >&3
	[ "$status" -eq 0 ]
}

@test "an exported ModelNew launches its kernel and matches Model" {
	for t in linear_relu kb2_86_matmul_divide_gelu scaled_tanh; do
		jq -c --arg t "$t" 'select(.task.id == $t)' "$BATS_FILE_TMPDIR/benched.jsonl" | head -1 >r.jsonl
		[ -s r.jsonl ] || continue
		"$PY" "$ROOT/pytorch/export.py" r.jsonl -o "new_$t.py"
		"$PY" - "new_$t.py" "$(jq -c .task.tolerance r.jsonl)" <<-'PY'
		import importlib.util, json, sys, torch, warnings
		spec = importlib.util.spec_from_file_location("new", sys.argv[1])
		m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
		tol = json.loads(sys.argv[2])
		torch.manual_seed(5); a = m.Model(*m.get_init_inputs()).cuda()
		torch.manual_seed(5); b = m.ModelNew(*m.get_init_inputs()).cuda()
		x = [t.cuda() if isinstance(t, torch.Tensor) else t for t in m.get_inputs()]
		with warnings.catch_warnings():
		    warnings.simplefilter("error")      # the kernel, not the fallback
		    y = b(*x)
		torch.cuda.synchronize()
		with torch.no_grad():
		    r = a(*x)
		d = (y.double() - r.double()).norm() / r.double().norm()
		print("# %s: relative L2 %.3g (tolerance %.3g)" % (sys.argv[1], d, tol["rel_l2"]))
		assert d <= tol["rel_l2"], d
		PY
	done
}
