#!/usr/bin/env bats
# htam import: PyTorch problem files (KernelBench's form) into task folders
# whose reference is the problem's own module, and htam export: a kernel
# back into PyTorch as a ModelNew. The GPU half (the oracle on kbench's
# buffers, exported modules launching kernels) is tests/gpu/oracle.bats;
# here PyTorch runs on the CPU. The problems of tests/data/problems are
# ours; KernelBench's own (levels 1 and 2, ../shared/kernelbench, or
# $HTAM_KERNELBENCH) are used where this machine has them.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
htam=$ROOT/bin/htam
P=$ROOT/tests/data/problems
KB=${HTAM_KERNELBENCH:-$ROOT/../shared/kernelbench}
PY=${HTAM_PYTHON:-python3}

setup_file() {
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	"$PY" -c 'import torch' 2>/dev/null || return 0
	"$htam" import --into "$BATS_FILE_TMPDIR/ours" "$P" >"$BATS_FILE_TMPDIR/ours.jsonl" \
		2>"$BATS_FILE_TMPDIR/ours.err"
}

setup() {
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache
	"$PY" -c 'import torch' 2>/dev/null || skip "no PyTorch for $PY (scripts/setup installs it)"
	O=$BATS_FILE_TMPDIR/ours
}

status_of() { jq -r --arg f "$P/$1" 'select(.file == $f) | .status' "$BATS_FILE_TMPDIR/ours.jsonl"; }
why_of() { jq -r --arg f "$P/$1" 'select(.file == $f) | .why' "$BATS_FILE_TMPDIR/ours.jsonl"; }

@test "each problem file gets one line: imported (with its family) or refused, and why" {
	[ "$(wc -l <"$BATS_FILE_TMPDIR/ours.jsonl")" -eq "$(ls "$P"/*.py | wc -l)" ]
	[ "$(status_of scaled_tanh.py)" = imported ]
	[ "$(status_of linear_relu.py)" = imported ]
	[ "$(status_of group_norm.py)" = imported ]
	[ "$(status_of sort_rows.py)" = imported ]
	[ "$(status_of dropout.py)" = refused ]
	[[ $(why_of dropout.py) == "the forward is random (bernoulli_.float)"* ]]
	# a bool input imports; x * mask is not a family's (a float template reads floats)
	[ "$(status_of bool_mask.py)" = imported ]
	jq -e '.family == "none" and .inputs[1].dtype == "bool"' "$O/bool_mask/task.json"
	[[ $(why_of no_model.py) == "the file defines no Model" ]]
	[[ $(why_of not_python.py) == "not Python: "* ]]
	# and a person reads the same on stderr
	grep -q "htam import: $P/dropout.py: refused: the forward is random" "$BATS_FILE_TMPDIR/ours.err"
}

@test "one more check set makes the first input's rows whole 16-byte vectors, the other sizes odd as the first set's" {
	# linear_relu's x is (batch, in_features): its last set rounds in_features up
	t=$O/linear_relu/task.json
	jq -e '.check_params | length >= 3 and (.[-1].in_features % 16 == 0) and .[-1].batch == .[0].batch and
		.[-1].out_features == .[0].out_features and all(.[:-1][]; .in_features % 2 == 1)' "$t"
	# a last axis that no size names (max_pool3d's width is a literal) keeps its own: no such set
	jq -e '(.inputs[0].shape[-1] == 40) and (.check_params | length == 3)' "$O/max_pool3d/task.json"
}

@test "a width that must stay a multiple of the heads, too wide to check at its own size, is shrunk by halving; the float64 check builds its own module, lambdas and all" {
	# width + 1 breaks the problem (width % heads); at 1024 its weights alone exceed a CPU check, so
	# with width fixed no check set is cheap enough: width becomes a size, its check values halved
	# from 1024 (multiples of the 8 heads). Its MLP is a lambda over submodules, which a copy of the
	# module would still run in fp32 against float64 inputs.
	t=$O/heads_closure/task.json
	[ "$(status_of heads_closure.py)" = imported ]
	jq -e '.params.width == 1024 and .params.batch == 8 and (.check_params | length >= 2) and
		all(.check_params[]; .width % 8 == 0 and .width < 1024)' "$t"
	jq -e '.tolerance.rel_l2 <= 1e-4' "$t"
}

@test "an imported task: the problem's sizes, small odd check sizes, inputs with their draws, the module's weights as inputs" {
	t=$O/linear_relu/task.json
	jq -e '.params == {"batch": 256, "in_features": 1024, "out_features": 512}' "$t"
	jq -e '.check_params | length >= 2 and all(.[]; .batch < 64 and .in_features < 64)' "$t"
	jq -e '[.inputs[].name] == ["x", "fc_weight", "fc_bias"]' "$t"
	# rand * 2 - 1 is uniform on [-1, 1]; nn.Linear's weights uniform on 1/sqrt(fan_in)
	jq -e '.inputs[0].init == {"dist": "uniform", "low": -1, "high": 1}' "$t"
	jq -e '(.inputs[1].init.high - 0.03125 | fabs) < 1e-12 and .inputs[1].shape == ["out_features", "in_features"]' "$t"
	jq -e '.reference.ties == null' "$t"
	jq -e '.reference | .oracle == "pytorch" and .file == "problem.py" and
		.weights == {"fc_weight": "fc.weight", "fc_bias": "fc.bias"} and .args == [{"input": "x"}]' "$t"
	jq -e '.flops == "2*batch*in_features*out_features + 2*batch*out_features"' "$t"
	cmp "$P/linear_relu.py" "$O/linear_relu/problem.py"
	# ktask loads it as any task, with the problem's source inlined
	ktask "$O/linear_relu" | jq -e '.task.reference.source | startswith("# F.linear")'
}

@test "the family and spec come from the traced graph: a map's expression, a product's epilogue" {
	jq -e '.family == "elementwise" and .spec == {"expr": "tanhf((x * 0.5f))", "numel": "cols*rows"}' \
		"$O/scaled_tanh/task.json"
	jq -e '.family == "gemm" and .spec.b_layout == "nk" and .spec.bias and
		.spec.epilogue == "fmaxf(v, 0.0f)" and .spec.m == "batch" and .spec.k == "in_features"' \
		"$O/linear_relu/task.json"
	# broadcast: a value per row (s[:, None]) and per column (b[None, :]) over a square x, told
	# apart by their views
	jq -e '.family == "broadcast" and .spec == {"expr": "tanhf(((s * x) + b))", "rows": "n", "cols": "n",
		"per_row": 1, "per_col": 4}' "$O/row_scale_bias/task.json"
	# parameters of one value, shaped (1,) and (): in both masks
	jq -e '.family == "broadcast" and .spec == {"expr": "(tanhf((x * s)) + b)", "rows": "rows", "cols": "cols",
		"per_row": 6, "per_col": 6}' "$O/scalar_params/task.json"
	# bmm(a.transpose(1, 2), b): A stored k x m in each batch
	jq -e '.family == "gemm" and .spec.batched and .spec.a_transposed and .spec.m == "m" and .spec.k == "k"' \
		"$O/bmm_transposed_a/task.json"
	# a linear without bias plus a bias parameter of the module's own: the product's bias, the
	# inputs in the kernels' order (the module declares shift before proj.weight)
	jq -e '.family == "gemm" and .spec.bias and .spec.b_layout == "nk" and .spec.epilogue == "fmaxf(v, 0.0f)"
		and ([.inputs[].name] == ["x", "proj_weight", "shift"])
		and .reference.weights == {"shift": "shift", "proj_weight": "proj.weight"}' "$O/linear_bias_param/task.json"
	# triu(A @ B): the upper triangle of the product (A and B drawn whole, with a note each)
	jq -e '.family == "gemm" and .spec.triu and (.spec.tril | not) and .spec.m == "n" and .spec.k == "n"' \
		"$O/triu_matmul/task.json"
	[ "$(jq -r --arg f "$P/triu_matmul.py" 'select(.file == $f) | .notes | length' "$BATS_FILE_TMPDIR/ours.jsonl")" = 2 ]
	jq -e '.family == "none" and .spec == {}' "$O/sort_rows/task.json"
	# f16 and bf16 problems take the families' specs as f32 ones do; mixed float types none
	jq -e '.family == "row_norm" and .spec.op == "softmax"' "$O/softmax_f16/task.json"
	jq -e '.family == "elementwise" and (.spec.expr | contains("erff"))' "$O/gelu_bf16/task.json"
	jq -e '.family == "stat_norm" and .spec.affine' "$O/group_norm_bf16/task.json"
	jq -e '.family == "none"' "$O/mixed_types/task.json"
	[[ $(jq -r --arg f "$P/mixed_types.py" 'select(.file == $f) | .why' "$BATS_FILE_TMPDIR/ours.jsonl") == \
		"its float tensors are of float16 and float32: a family stores one type" ]]
	# reductions along one axis: mid_reduce, with the op by name
	for op in mean min argmin prod; do
		jq -e --arg op "$op" '.family == "mid_reduce" and .spec ==
			{"op": $op, "outer": "batch", "reduce": "rows", "inner": "cols"}' "$O/${op}_dim/task.json"
	done
	# pooling: 1D and 2D are 3D with axes of 1; the window is constant, the output's sizes named
	jq -e '.family == "pool" and .spec == {"op": "max", "planes": "8*channels", "in_d": 1, "out_d": 1,
		"kd": 1, "sd": 1, "pd": 0, "dd": 1, "in_h": "height", "out_h": "y_2", "kh": 3, "sh": 2,
		"ph": 1, "dh": 2, "in_w": "width", "out_w": "y_3", "kw": 2, "sw": 1, "pw": 1, "dw": 1,
		"count": "padded", "override": 0}' "$O/max_pool2d/task.json"
	jq -e '.spec | .op == "avg" and .count == "valid" and .in_h == "1" and .kw == 5 and .sw == 3' \
		"$O/avg_pool1d/task.json"
	jq -e '.spec | .op == "avg" and .count == "padded" and .in_d == "depth" and .kd == 3' "$O/avg_pool3d/task.json"
	# scans: forwards, reversed (flip, cumsum, flip), exclusive (cat(zeros, cumsum(narrow)))
	jq -e '.family == "scan" and .spec == {"op": "sum", "outer": "batch", "len": "length", "inner": "1",
		"reverse": true, "exclusive": false, "masked": false}' "$O/cumsum_reverse/task.json"
	jq -e '.spec | .exclusive and (.reverse | not) and .op == "sum"' "$O/cumsum_exclusive/task.json"
	jq -e '.spec | .op == "prod" and .inner == "cols" and .len == "steps"' "$O/cumprod_mid/task.json"
	# masked: cumsum(x * mask), the mask an input of torch.bool (a byte of 0 or 1, drawn fair)
	jq -e '.spec.masked and .spec.inner == "1" and ([.inputs[].dtype] == ["f32", "bool"]) and
		.inputs[1].init == {"dist": "randint", "low": 0, "high": 2}' "$O/masked_cumsum/task.json"
	jq -e '.spec.masked and .spec.inner == "cols" and ([.inputs[].name] == ["x", "keep"])' \
		"$O/masked_cumsum_mid/task.json"
	# statistics per group: batch norm (training), instance norm (no affine), group norm
	jq -e '.family == "stat_norm" and .spec == {"outer": "batch", "groups": "channels",
		"inner": "height*width", "eps": 1e-05, "affine": true, "channels": "channels",
		"spatial": "height*width"}' "$O/batch_norm/task.json"
	jq -e '.spec == {"outer": "1", "groups": "batch*channels", "inner": "height*width", "eps": 1e-05,
		"affine": false, "channels": 1, "spatial": 1}' "$O/instance_norm/task.json"
	# with its affine, repeated per sample by PyTorch: the weight's index is the channel
	jq -e '.spec == {"outer": "1", "groups": "batch*channels", "inner": "height*width", "eps": 1e-05,
		"affine": true, "channels": "channels", "spatial": "height*width"} and
		([.inputs[].name] == ["x", "norm_weight", "norm_bias"])' "$O/instance_norm_affine/task.json"
	jq -e '.spec == {"outer": 1, "groups": "8*batch", "inner": "8*height*width", "eps": 1e-05,
		"affine": true, "channels": 8, "spatial": "height*width"}' "$O/group_norm/task.json"
	# losses as folds over every place; batchmean divides by the first axis; KL's
	# two logs one, t * log(t / p), where t, p and t / p are positive and normal
	# (PyTorch's two-log form elsewhere)
	jq -e '.family == "global_reduce" and .spec.count == "batch" and .spec.numel == "batch*dim" and
		(.spec.op.map | startswith("((targets) > 0.0f && (predictions) > 0.0f && ((targets) / (predictions)) >= 1.17549435e-38f")
			and contains("? (targets) * logf(((targets) / (predictions))) : ")
			and endswith(": (((targets) == 0.0f ? 0.0f : (targets) * logf(targets)) - (targets * logf(predictions))))"))
		and .spec.op.finalize == "(v) / n"' "$O/kl_batchmean/task.json"
	jq -e '.spec.count == "batch*dim" and (.spec.op.map | contains("0.7f")) and .spec.op.finalize == "v / n"' \
		"$O/huber_loss/task.json"
	# broadcast inputs: a weight per row (w.unsqueeze(1), input 2), labels per column (input 1)
	jq -e '.family == "global_reduce" and .spec.per_row == 4 and .spec.per_col == 0 and .spec.cols == "cols"
		and .spec.numel == "cols*rows"' "$O/weighted_mse/task.json"
	jq -e '.spec.per_col == 2 and .spec.per_row == 0 and .spec.numel == "batch*batch" and
		.reference.ties == {"shape_0": "batch"} and (.check_params | all(keys == ["batch"]))' "$O/hinge_loss/task.json"
	# rows: log-softmax and L2 by the family's ops; the triplet loss as two terms per row
	jq -e '.family == "row_norm" and .spec.op == "log_softmax"' "$O/log_softmax/task.json"
	jq -e '.family == "row_norm" and .spec.op == "l2"' "$O/l2_norm/task.json"
	jq -e '.family == "row_reduce" and (.spec.terms | length) == 2 and
		.spec.row == "fmaxf(((sqrt(t0) + 0.5f) - sqrt(t1)), 0.0f)" and .spec.op.finalize == "v / n"' \
		"$O/triplet_loss/task.json"
	# a constant initialisation (GroupNorm's weight 1, bias 0) is drawn around it
	jq -e '.inputs[1].init == {"dist": "uniform", "low": 0.5, "high": 1.5}' "$O/group_norm/task.json"
}

@test "attention from its graph: F.scaled_dot_product_attention (causal) or written out; a scale that is neither a constant nor 1/sqrt(head_dim) is refused" {
	# is_causal adds where(tril(ones), 0, -inf) to the scores; the scale follows head_dim
	jq -e '.family == "attention" and .spec == {"causal": true, "scale": 1, "scale_root": true,
		"batch": "15", "q_len": "q_len", "kv_len": "kv_len", "head_dim": "head_dim", "v_dim": "v_dim"}' \
		"$O/attention_causal/task.json"
	jq -e '.family == "attention" and (.spec | .causal == false and .scale_root and .batch == "7")' \
		"$O/attention_scaled/task.json"
	# a constant scale stays a constant; over head_dim itself it is no constant, and no root
	cd "$BATS_TEST_TMPDIR"
	for s in "0.25:* 0.25" "none:/ q.size(-1)"; do
		sed "s|/ math.sqrt(q.size(-1))|${s#*:}|" "$P/attention_scaled.py" >"scale_${s%%:*}.py"
	done
	"$htam" import -q --into imp scale_0.25.py scale_none.py >imp.jsonl
	jq -e '.spec | .scale == 0.25 and .scale_root == false' imp/scale_0_25/task.json
	jq -se '.[1] | .family == "none" and (.why | startswith("its scale is 0.013888"))' imp.jsonl
	# the family starts at small (one launch on the CUDA cores) where there
	# are at most 393216 (3 x 2^17) scores, else at flash where the head
	# and value dimensions are at most 128 (one tile of O's columns), else
	# at wg, which writes the scores out
	for t in attention_causal attention_scaled; do
		state=$(ktask --state "$O/$t")
		jq -e '(.task.spec.batch | tonumber) * .task.params.q_len * .task.params.kv_len <= 393216' <<<"$state"
		kgen -k 1 <<<"$state" | jq -e '.candidate.variant == "small"
			and (.candidate.launch.launches | map(.kernel)) == ["attn_small"]'
	done
	ktask --state "$O/attention_long" | kgen -k 1 | jq -e '.candidate.variant == "flash"
		and (.candidate.launch.launches | map(.kernel)) == ["attn_absmax", "attn_split", "attn_flash"]'
	# the cut as measured (bench/results/attention-sizes-gpu.md): 32 heads
	# of 96 x 96 (294912 scores) small, of 112 x 112 (401408) flash
	for n in 96:small 112:flash; do
		ktask --state "$O/attention_long" | jq -c --argjson n "${n%:*}" '.task.params.q_len = $n | .task.params.kv_len = $n' |
			kgen -k 1 | jq -e --arg v "${n#*:}" '.candidate.variant == $v'
	done
	ktask --state "$O/attention_scaled" | jq -e '.task.params.v_dim > 128'
	ktask --state "$O/attention_scaled" | jq -c '.task.spec.batch = "700"' | kgen -k 1 | jq -e '.candidate.variant == "wg"'
	# small is a move away from flash
	ktask --state "$O/attention_long" | jq -c '.memory.strategies = [{id: "s", moves: [{family: "attention", variant: "small"}]}]' |
		kgen -k 2 | jq -se 'map(.candidate.variant) == ["flash", "small"]
		and (.[1].candidate.launch.launches | map(.kernel)) == ["attn_small"]'
	# a batch of more matrices than wg's grid has rows (wg refuses it) goes
	# to small, whose grid is flat: a block per rows of each matrix
	ktask --state "$O/attention_scaled" | jq -c '.task.spec.batch = "70000"' | kgen -k 1 |
		jq -e '.candidate.variant == "small" and .candidate.launch.launches[0].grid == ["cdiv((q_len), WARPS * RW) * (70000)"]'
}

@test "multi-head self-attention with its linears is mha: a causal mask buffer is kept as tril and read as causal; softmax or relu, with or without the output projection; the blocks compile through the stages" {
	# minGPT's block: the mask, a buffer of ones' lower triangle, is no draw
	jq -e '.family == "mha" and .spec == {"act": "softmax", "proj": true, "causal": true, "scale": 0.1, "scale_root": false,
		"batch": "3", "seq": "seq_len", "heads": "2", "head_dim": "100", "layout": "bsc", "norm": false, "eps": 0}
		and (.inputs | map(.name) == ["x", "c_attn_weight", "c_attn_bias", "c_proj_weight", "c_proj_bias", "bias"])
		and .inputs[5].init == {"dist": "tril"}' "$O/mha_causal/task.json"
	jq -e '.family == "mha" and (.spec | .causal == false and .heads == "4" and .head_dim == "25"
		and .scale == 0.2)' "$O/mha_heads/task.json"
	# minGPT's ReLU attention: relu for the softmax, no projection (its unused c_proj an input still)
	jq -e '.family == "mha" and (.spec | .act == "relu" and .proj == false and .causal and .heads == "3")
		and (.inputs | map(.name) == ["x", "c_attn_weight", "c_attn_bias", "c_proj_weight", "c_proj_bias", "bias"])' \
		"$O/mha_relu/task.json"
	jq -se --arg f "$P/mha_causal.py" 'map(select(.file == $f))[0] | any(.notes[];
		. == "buffer bias: a lower triangle of ones (a causal mask), kept as the module makes it")' \
		"$BATS_FILE_TMPDIR/ours.jsonl"
	cd "$BATS_TEST_TMPDIR"
	# the upper triangle is no causal mask: drawn like any buffer, and the block is no family's
	sed 's/torch.tril(torch.ones/torch.triu(torch.ones/' "$P/mha_causal.py" >upper.py
	# K Q^T, the scores transposed: another operator, and no family's
	sed 's/(q @ k.transpose(-2, -1))/(k @ q.transpose(-2, -1))/' "$P/mha_causal.py" >swapped.py
	# a head size that follows a size: head_dim is that size, and the scale its root's inverse
	sed 's/^n_embd = 100/head_size = 25\nn_embd = 4 * head_size/' "$P/mha_heads.py" >rooted.py
	"$htam" import -q --into imp upper.py swapped.py rooted.py >imp.jsonl
	jq -e '.inputs[5].init.dist == "uniform"' imp/upper/task.json
	jq -se 'map(.family) == ["none", "none", "mha"]' imp.jsonl
	jq -e '.spec | .head_dim == "head_size" and .heads == "4" and .scale == 1 and .scale_root' imp/rooted/task.json
	# kgen's rules and NVRTC: one task; the family starts at flash, 13
	# launches with the projection (attn_flash between the linears), 8
	# without; wg writes the scores out, 15 launches (10 without), the
	# act's own kernel between the products
	moves='[{id: "w", moves: [{family: "mha", variant: "wg", set: {}}]},
		{id: "h", moves: [{family: "mha", variant: "heads", set: {}}]}]'
	for t in mha_causal mha_relu; do
		ktask --state "$O/$t" | jq -c ".memory.strategies = $moves" | kgen -k 2 | kcompile
	done >c.jsonl
	jq -se 'length == 4 and all(.[]; .compile.ok) and (map([.candidate.variant, (.candidate.launch.launches | length),
		.candidate.launch.launches[7].kernel, .candidate.launch.launches[8].kernel]) | unique) ==
		[["flash", 13, "attn_flash", "gemm_wg_guess"], ["heads", 10, "attn_product", "mha_relu"],
		 ["heads_flash", 8, "attn_flash", null], ["wg", 15, "attn_product", "mha_softmax"]]' c.jsonl
}

@test "nn.MultiheadAttention's self-attention and a residual LayerNorm are mha's norm_flash: x a feature map's channels-first pixels or seq-first rows, PyTorch's path with the weights or without (their average over the heads never read); a norm of the attention alone, or over the wrong axis, is not; batch_first's is, x as it is; the block compiles" {
	# a feature map (batch, channels, height, width): the pixels the
	# sequence, x and the output laid out bcs; Q times the scale, softmax
	jq -e '.family == "mha" and .spec == {"act": "softmax", "proj": true, "causal": false, "scale": 0.25, "scale_root": false,
		"batch": "3", "seq": "height*width", "heads": "3", "head_dim": "16", "layout": "bcs", "norm": true, "eps": 1e-05}
		and (.inputs | map(.name)) == ["x", "attn_in_proj_weight", "attn_in_proj_bias", "attn_out_proj_weight",
			"attn_out_proj_bias", "norm_weight", "norm_bias"]' "$O/mha_vision/task.json"
	# seq x batch x embd, need_weights off: scaled_dot_product_attention's
	# path (Q and K each times the scale's root), the norm's own eps
	jq -e '.family == "mha" and (.spec | .layout == "sbc" and .norm and .eps == 1e-06 and .heads == "2"
		and .head_dim == "30" and (.scale * 30 * .scale - 1 | fabs) < 1e-6)' "$O/mha_seq_norm/task.json"
	cd "$BATS_TEST_TMPDIR"
	sed 's/self.norm(a + s)/self.norm(a)/' "$P/mha_vision.py" >nores.py
	sed 's/nn.LayerNorm(channels)/nn.LayerNorm(width)/; s/self.norm(a + s).permute(1, 2, 0).view(B, C, H, W)/self.norm((a + s).permute(1, 2, 0).view(B, C, H, W))/' \
		"$P/mha_vision.py" >width.py
	# batch_first: x (batch, seq, embd) transposed in and the attention transposed back before the sum
	sed 's/nn.MultiheadAttention(embd, heads)/nn.MultiheadAttention(embd, heads, batch_first=True)/
		s/torch.randn(seq_len, batch_size, embd)/torch.randn(batch_size, seq_len, embd)/' "$P/mha_seq_norm.py" >first.py
	# a norm without weight and bias (none for norm_flash to read) is not either
	sed 's/nn.LayerNorm(channels)/nn.LayerNorm(channels, elementwise_affine=False)/' "$P/mha_vision.py" >plain.py
	"$htam" import -q --into imp nores.py width.py first.py plain.py >imp.jsonl
	jq -se 'map(.status) == ["imported", "imported", "imported", "imported"]
		and (map(.family) | .[0] != "mha" and .[1] != "mha" and .[2] == "mha" and .[3] != "mha")' imp.jsonl
	jq -e '.spec | .layout == "bsc" and .norm and .seq == "seq_len"' imp/first/task.json
	# kgen's rules and NVRTC: the gather, flash's 13 launches, the norm
	for t in mha_vision mha_seq_norm; do
		ktask --state "$O/$t" | kgen -k 2 | kcompile
	done >c.jsonl
	jq -se 'length == 4 and all(.[]; .compile.ok and .candidate.variant == "norm_flash"
		and (.candidate.launch.launches | map(.kernel) | .[0] == "mha_gather" and .[-1] == "mha_norm" and length == 15))' c.jsonl
	# the other variants take x as batch x seq x embd only: NVRTC says so
	ktask --state "$O/mha_vision" | jq -c '.task.spec.norm = false' | kgen -k 1 >w.jsonl
	jq -e '.candidate.variant == "flash"' w.jsonl
	kcompile <w.jsonl | jq -e '(.compile.ok | not) and (.compile.log | contains("only variant norm_flash reads x laid out"))'
}

@test "a graph no one family computes is a chain of them: a product, then group norm, then a map; a product and its sigmoid, then a row sum; a scalar parameter broadcast; two linears; a batch norm of a product's features; the chain renders and compiles as one candidate" {
	# linear -> group norm -> clamp: gemm, then stat_norm on its result, then elementwise
	jq -e '.family == "gemm" and .spec.bias and .spec.epilogue == "v"
		and (.then | map(.family)) == ["stat_norm", "elementwise"]
		and .then[0].inputs == ["gn_weight", "gn_bias"] and .then[0].from.dtype == "f32"
		and .then[0].spec.channels == 16 and .then[1].inputs == []
		and .then[1].spec.expr == "fminf(fmaxf(then_2, -2.0f), 2.0f)"
		and (.inputs | map(.name)) == ["x", "fc_weight", "fc_bias", "gn_weight", "gn_bias"]' \
		"$O/linear_groupnorm_hardtanh/task.json"
	# the sigmoid stays the product's epilogue; the sum along the features is mid_reduce's
	jq -e '.family == "gemm" and (.spec.epilogue | contains("expf"))
		and .then == [{"family": "mid_reduce", "spec": {"op": "sum", "outer": "batch", "reduce": "out_features", "inner": "1"},
			"from": {"shape": ["batch", "out_features"], "dtype": "f32"}, "inputs": []}]' \
		"$O/linear_sigmoid_rowsum/task.json"
	# a parameter of one value, () or (1,), is a broadcast input in both masks; then a softmax
	jq -e '.family == "gemm" and .then == [{"family": "broadcast", "spec": {"expr": "(fminf(then_1, c) - c)",
		"rows": "batch", "cols": "out_features", "per_row": 2, "per_col": 2},
		"from": {"shape": ["batch", "out_features"], "dtype": "f32"}, "inputs": ["c"]}]' "$O/linear_min_param/task.json"
	jq -e '(.then | map([.family, .inputs])) == [["broadcast", ["scale"]], ["row_norm", []]]
		and .then[1].spec.op == "softmax"' "$O/linear_scale_softmax/task.json"
	# the rest reads the pool's (batch, 1, 1, n / 4) result squeezed: its buffer has the view's shape,
	# and the pool's indices, squeezed and never read, are no read of another stage's tensor
	jq -e '(.then | map([.family, (.from.shape | length)])) == [["pool", 4], ["mid_reduce", 2]]
		and .then[0].spec.op == "avg" and .then[1].spec.op == "max"' "$O/linear_avgpool_max/task.json"
	cd "$BATS_TEST_TMPDIR"
	# an input two stages read (the linear's bias added again at the end, a clone of x added
	# back: KernelBench 51's residual): the first stage's inputs are named (first_inputs);
	# reductions over one value (a row's sum, then its max and logsumexp) are that value
	sed 's/return torch.clamp(self.gn(self.fc(x)), -2.0, 2.0)/return torch.clamp(self.gn(self.fc(x)), -2.0, 2.0) + self.fc.bias/' \
		"$P/linear_groupnorm_hardtanh.py" >twice.py
	sed 's/return torch.sum(torch.sigmoid(self.fc(x)), dim=1, keepdim=True)/s = torch.sum(torch.sigmoid(self.fc(x)), dim=1, keepdim=True); return torch.logsumexp(s.amax(1, keepdim=True), 1, keepdim=True)/' \
		"$P/linear_sigmoid_rowsum.py" >onevalue.py
	"$htam" import -q --into imp twice.py onevalue.py >imp.jsonl
	jq -e '.first_inputs == ["x", "fc_weight", "fc_bias"] and (.then | map([.family, .inputs])) ==
		[["stat_norm", ["gn_weight", "gn_bias"]], ["broadcast", ["fc_bias"]]]' imp/twice/task.json
	jq -e '.first_inputs == ["x", "fc_weight", "fc_bias"] and (.then | map([.family, .inputs])) ==
		[["mid_reduce", []], ["broadcast", ["x"]]]' "$O/linear_mean_residual/task.json"
	jq -e '(.then | map([.family, .spec.op])) == [["mid_reduce", "logsumexp"], ["elementwise", null]]' \
		"$O/linear_logsumexp_gelu/task.json"
	jq -e '(.then | map([.family, .spec.op])) == [["mid_reduce", "sum"]] and (has("first_inputs") | not)' \
		imp/onevalue/task.json
	ktask --state imp/twice | kgen -k 1 | kcompile | jq -e '.compile.ok and
		(.candidate.launch.launches[-1].args | index("fc_bias") and index("then_2"))'
	# no chain where its stages would not compute the graph: a value written over in place by
	# an op no map is (mul_: the epilogue or the stage after would lose it); a round trip through
	# f16 between two stages (its rounding would be lost with the cast)
	sed 's/return torch.clamp(self.gn(self.fc(x)), -2.0, 2.0)/y = self.fc(x); y.mul_(3.0); return torch.clamp(self.gn(y), -2.0, 2.0)/' \
		"$P/linear_groupnorm_hardtanh.py" >inplace.py
	sed 's/return torch.clamp(self.gn(self.fc(x)), -2.0, 2.0)/return torch.clamp(self.gn(self.fc(x)).half().float(), -2.0, 2.0)/' \
		"$P/linear_groupnorm_hardtanh.py" >halved.py
	"$htam" import -q --into imp inplace.py halved.py >imp.jsonl
	jq -se 'map(.family) == ["none", "none"]' imp.jsonl
	# two gemm stages of other layouts: the first's B_LAYOUT_nk is undefined before the second
	jq -e '.spec.b_layout == "nk" and (.then | map([.family, .spec.b_layout])) == [["gemm", "kn"]]' \
		"$O/linear_then_matmul/task.json"
	ktask --state "$O/linear_then_matmul" | kgen -k 1 | jq -r .candidate.source >two.cu
	awk '/^#undef B_LAYOUT_nk$/ { u = NR } /^namespace htam_then1 \{/ { n = NR } /^#define B_LAYOUT_kn/ { k = NR }
		END { exit !(u && u < n && n < k) }' two.cu
	# two linears with a relu between: gemm twice, the second reading the first's relu'd result
	jq -e '.spec.epilogue == "fmaxf(v, 0.0f)" and .then == [{"family": "gemm", "spec": {"batched": false,
		"a_transposed": false, "b_layout": "nk", "bias": true, "epilogue": "v", "tril": false, "triu": false,
		"batch": 1, "m": "batch", "n": "out_features", "k": "hidden"}, "from": {"shape": ["batch", "hidden"],
		"dtype": "f32"}, "inputs": ["fc2_weight", "fc2_bias"]}]' "$O/mlp_two_layers/task.json"
	# kgen's rules and NVRTC: the stages' kernels in one candidate (the second gemm's all renamed,
	# h3's unlaunched kernels too, or the source would define them twice)
	for t in linear_groupnorm_hardtanh linear_sigmoid_rowsum mlp_two_layers; do
		ktask --state "$O/$t" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 2 | kcompile
	done >c.jsonl
	jq -se 'length == 6 and all(.[]; .compile.ok and .candidate.family == "gemm")' c.jsonl
	jq -se '.[4].compile.kernels | has("gemm_h3_absmax") and has("t1_gemm_h3_absmax")
		and has("gemm_wgf") and has("t1_gemm_wgf")' c.jsonl
	jq -se '.[0].candidate.launch | ([.launches[].kernel] | index("gemm_wg") < index("t1_sn_warp")
		and .[-1] == "t2_elementwise") and ([.workspace[].name] | index("then_1") and index("then_2"))' c.jsonl
	jq -se '.[2].candidate.launch | (.launches[-1].kernel | test("^t1_mid_reduce_"))
		and (.launches[-1].args | index("then_1") < index("y"))' c.jsonl
	# linear -> batch norm (training mode) -> relu: the features side by side in each row (inner 1),
	# stat_norm's start for them a thread a column (cols), its stats kernel split's
	jq -e '(.then | map(.family)) == ["stat_norm", "elementwise"] and
		(.then[0].spec | .outer == "batch" and .groups == "out_features" and .inner == "1" and .affine)' \
		"$O/linear_batchnorm_relu/task.json"
	ktask --state "$O/linear_batchnorm_relu" | kgen -k 1 | kcompile >bn.jsonl
	jq -e '.compile.ok and ([.candidate.launch.launches[].kernel] | index("gemm_wg") < index("t1_sn_cols")
		and index("t1_sn_cols") < index("t1_sn_stats") and index("t1_sn_stats") < index("t1_sn_cols_apply")
		and .[-1] == "t2_elementwise")' bn.jsonl
}

@test "the null-kernel gate: inputs on which a copy would pass are widened to both signs, then to four times that, with a note each time" {
	jq -e '.family == "elementwise" and .inputs[0].init == {"dist": "uniform", "low": -4, "high": 4}' \
		"$O/hardtanh/task.json"
	jq -se --arg f "$P/hardtanh.py" 'map(select(.file == $f)) | .[0].notes == [
		"input x: widened to uniform(-1, 1): on the problem'"'"'s own draws a kernel that copies its input x would pass",
		"input x: widened to uniform(-4, 4): on the two-signed draws a kernel that copies its input x would pass"]' \
		"$BATS_FILE_TMPDIR/ours.jsonl"
}

@test "tolerances by the stated policy: measured against float64, grown, with floors, below 1e-2 (2u for bf16; an all-zero output, at relative L2 1, fails)" {
	for t in "$O"/*/task.json; do
		jq -e 'if (.outputs | all(.dtype == "i64" or .dtype == "i32")) then
			.tolerance == {"atol": 0, "rtol": 0, "rel_l2": 0, "atol_rms": 0,
				"why": "integer outputs must match the oracle'"'"'s exactly"}
		elif (.outputs | any(.dtype == "f16" or .dtype == "bf16")) then
			# 2-byte floats, answered in fp32 and rounded once: floors of two
			# units of roundoff u, atol one subnormal ulp
			.outputs[0].dtype as $d | (if $d == "f16" then 1 / 2048 else 1 / 256 end) as $u |
			.tolerance | .rtol == 2 * $u and .rel_l2 >= 2 * $u and .atol_rms >= 2 * $u and
			.rel_l2 <= ([1e-2, 2 * $u] | max) and .atol > 0 and .atol < 1e-7 and
			(.why | startswith("imported: PyTorch fp32 against float64") and
				contains("the oracle answers in fp32 on the " + $d + " inputs"))
		else .tolerance | .rel_l2 >= 1e-5 and .rel_l2 <= 1e-2 and .atol_rms >= 1e-5 and
			(.why | startswith("imported: PyTorch fp32 against float64")) end' "$t"
	done
	jq -e '.outputs[0].dtype == "f16" and .inputs[0].dtype == "f16"' "$O/softmax_f16/task.json"
	jq -e '.inputs | map(.dtype) | unique == ["bf16"]' "$O/group_norm_bf16/task.json"   # x, weight, bias
	jq -e '.outputs[0].dtype == "i64"' "$O/argmin_dim/task.json"   # indices: exact
	jq -e '.tolerance.rel_l2 >= 5e-5' "$O/linear_relu/task.json"   # a product: tensor-core floor
}

@test "the oracle computes the reference in float64 where the forward's sums are long (a product, sums deeper at the benchmark size), rounded once into fp32" {
	for t in "$O"/*/task.json; do
		jq -e 'if .reference.work == "f64" then
			(.outputs | all(.dtype == "f32")) and
			(.tolerance.why | endswith("the oracle computes the reference in float64 (the forward'"'"'s sums are long), rounded once into fp32"))
		else (.tolerance.why | contains("float64 (the") | not) end' "$t"
	done
	jq -e '.reference.work == "f64"' "$O/linear_relu/task.json"        # a product
	jq -e '.reference.work == "f64"' "$O/mean_dim/task.json"           # a mean deeper at the benchmark size
	jq -e '.reference | has("work") | not' "$O/hardtanh/task.json"     # pointwise: fp32 as it is
	jq -e '.reference | has("work") | not' "$O/softmax_f16/task.json"  # 2-byte floats: fp32, rounded once
	# the oracle's answer is float64's rounded once, to the bit, where fp32
	# PyTorch's own sums are not (a pointwise forward's are, fp32 or not)
	run "$PY" "$ROOT/pytorch/oracle.py" --check --f64 "$O/linear_relu" "$O/mean_dim" "$O/hardtanh"
	[ "$status" -eq 0 ]
	echo "$output" | jq -se 'length > 0 and all(.[]; .ok and (.float64_rounded | all))'
	local d=$BATS_TEST_TMPDIR t
	for t in linear_relu mean_dim; do
		cp -r "$O/$t" "$d/"
		jq 'del(.reference.work)' "$O/$t/task.json" >"$d/$t/task.json"
	done
	run "$PY" "$ROOT/pytorch/oracle.py" --check --f64 "$d/linear_relu" "$d/mean_dim"
	echo "$output" | jq -se 'length > 0 and all(.[]; .ok and (.float64_rounded | all | not))'
}

@test "the check sizes are valid: the module runs on each, on the CPU, within its tolerance of float64" {
	run "$PY" "$ROOT/pytorch/oracle.py" --check --f64 "$O"/*/
	echo "$output" | tail -3
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -s 'length')" -eq "$(jq -s 'map(.check_params | length) | add' "$O"/*/task.json)" ]
	echo "$output" | jq -se 'all(.[]; .ok and .of_tolerance < 1)'
}

@test "the module under torch.compile (PyTorch's other time) takes the task's tensors too, its own parameters as its submodules'" {
	echo "# torch.compile on the CPU (about half a minute)" >&3
	run env ROOT="$ROOT" "$PY" - "$O/linear_min_param" "$O/linear_then_matmul" <<'EOF'
import json, os, sys
import torch
sys.path.insert(0, os.path.join(os.environ["ROOT"], "pytorch"))
from problem import Problem, build, call, draw_tensor, sizes_of
from oracle import TORCH_DT, _bounds, _shape
for d in sys.argv[1:]:
    task = json.load(open(os.path.join(d, "task.json")))
    ref, sizes = task["reference"], task["check_params"][0]
    ns = Problem(open(os.path.join(d, ref["file"])).read(), ref["file"], ref.get("ties")).namespace(sizes_of(ref, sizes))
    gen = torch.Generator().manual_seed(1)
    ts = {t["name"]: draw_tensor(_bounds(t["init"], sizes), _shape(t["shape"], sizes), TORCH_DT[t["dtype"]], gen)
          for t in task["inputs"]}
    m = build(ns, 1)
    eager, compiled = call(m, ts, ref), call(torch.compile(m), ts, ref)
    # the task's tensors, not the module's own draws: a parameter of the module's own counts
    own = torch.func.functional_call(m, {}, tuple(ts[a["input"]] for a in ref["args"] if "input" in a))
    print(json.dumps({"task": task["id"], "same": bool(torch.allclose(eager, compiled, rtol=1e-4, atol=1e-5)),
                      "differs_from_own": not bool(torch.equal(eager, own))}))
EOF
	echo "$output" | tail -4
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep '^{' | jq -sc 'map([.same, .differs_from_own])')" = '[[true,true],[true,true]]' ]
}

@test "imported tasks through the stages: kgen's rules for a served family, kcompile with no reference to compile" {
	cd "$BATS_TEST_TMPDIR"
	for t in scaled_tanh linear_relu; do
		ktask --state "$O/$t" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 2 | kcompile >c.jsonl
		jq -se 'length == 2 and all(.[]; .compile.ok and .compile.reference.status == "oracle")' c.jsonl
	done
	ktask --state "$O/sort_rows" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 1 >g.jsonl
	jq -e '.candidate.status == "gen_error" and (.candidate.reason | contains("llm backend"))' g.jsonl
}

@test "a broken oracle reference is refused by name" {
	t=$(jq -c . "$O/scaled_tanh/task.json")
	mkdir -p "$BATS_TEST_TMPDIR/bad"
	for edit in '.reference.oracle = "tensorflow"' '.reference.weights = {"nosuch": "w"}' \
		'.reference.args = [{"input": "nosuch"}]' '.reference.sizes = ["nosuch"]' \
		'.reference.launch = {"launches": []}' '.family = "none"' '.reference.ties = {"w": "nosuch"}' \
		'.reference.ties = ["rows"]' '.reference.work = "f128"'; do
		rm -rf "$BATS_TEST_TMPDIR/bad/scaled_tanh"
		cp -r "$O/scaled_tanh" "$BATS_TEST_TMPDIR/bad/"
		jq "$edit" <<<"$t" >"$BATS_TEST_TMPDIR/bad/scaled_tanh/task.json"
		run ktask "$BATS_TEST_TMPDIR/bad/scaled_tanh"
		echo "$edit: $output"
		[ "$status" -eq 65 ]
		[[ $output == *"task \"scaled_tanh\": "@(reference|spec)* ]]
	done
}

@test "export writes a ModelNew that is Model's drop-in (its own constructor and weights; off the GPU, Model's forward)" {
	cd "$BATS_TEST_TMPDIR"
	ktask --state "$O/linear_relu" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 1 >c.jsonl
	"$PY" "$ROOT/pytorch/export.py" c.jsonl -o new.py
	grep -q '^class ModelNew(Model):' new.py
	grep -q '^def get_inputs' new.py
	"$PY" - <<-'PY'
	import importlib.util, torch, warnings
	spec = importlib.util.spec_from_file_location("new", "new.py")
	m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
	m.batch, m.in_features, m.out_features = 7, 11, 5
	torch.manual_seed(3); a = m.Model(*m.get_init_inputs())
	torch.manual_seed(3); b = m.ModelNew(*m.get_init_inputs())
	assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
	x = m.get_inputs()
	with warnings.catch_warnings(record=True) as w:
	    warnings.simplefilter("always")
	    assert torch.equal(a(*x), b(*x))
	assert any("running Model.forward" in str(i.message) for i in w)
	PY
	# --kernelbench: a solution file, without the problem's sizes and inputs
	"$PY" "$ROOT/pytorch/export.py" --kernelbench c.jsonl -o kb.py
	! grep -q '^def get_inputs' kb.py
	grep -q '^class Model(nn.Module):' kb.py
	# a task of the pack has no Model to stand in for
	ktask --state relu | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 1 >p.jsonl
	run "$PY" "$ROOT/pytorch/export.py" p.jsonl -o p.py
	[ "$status" -ne 0 ]
	[[ $output == *"is not an imported one"* ]]
}

@test "htam export finds a run's best kernel, and says when there is none" {
	cd "$BATS_TEST_TMPDIR"
	run "$htam" export nosuch linear_relu
	[ "$status" -eq 65 ]
	[[ $output == *"run nosuch has no task linear_relu"* ]]
	mkdir -p runs/r/linear_relu
	ktask --state --run r "$O/linear_relu" >runs/r/linear_relu/state-0.jsonl
	run "$htam" export r linear_relu
	[ "$status" -eq 65 ]
	[[ $output == *"has no correct kernel yet"* ]]
	# a state whose best is a kernel (kgen's, here; a run's after kbench)
	ktask --state --run r "$O/linear_relu" | htg-select --db m.db | htg-retrieve --db m.db |
		kgen -k 1 | jq -c '. + {best: {candidate: .candidate}, step: 1}' >runs/r/linear_relu/state-1.jsonl
	run "$htam" export r linear_relu
	[ "$status" -eq 0 ]
	grep -q '^class ModelNew(Model):' runs/r/linear_relu/best/model_new.py
}

@test "KernelBench levels 1 and 2: every problem imports or is refused with its reason, and the served ones get their family" {
	[[ -d $KB/level1 && -d $KB/level2 ]] || skip "no KernelBench problems here ($KB)"
	echo "# importing $(ls "$KB"/level1/*.py "$KB"/level2/*.py | wc -l) problems (about half a minute)" >&3
	out=$BATS_FILE_TMPDIR/kb
	"$htam" import -q --into "$out" "$KB/level1" "$KB/level2" >"$out.jsonl"
	[ "$(wc -l <"$out.jsonl")" -eq "$(ls "$KB"/level1/*.py "$KB"/level2/*.py | wc -l)" ]
	jq -se 'all(.[]; (.status == "imported" and (.task | length) > 0) or
		(.status == "refused" and (.why | length) > 0 and (.why | startswith("importer failed") | not)))' "$out.jsonl"
	jq -r 'select(.status == "imported") | .task' "$out.jsonl" | while read -r t; do
		ktask "$out/$t" >/dev/null
	done
	# what a person expects of the problems our families serve
	fam() { jq -r --arg id "$1" 'select(.task == $id) | .family' "$out.jsonl"; }
	spec() { jq -c .spec "$out/$1/task.json"; }
	[ "$(fam kb1_19_relu)" = elementwise ]
	[ "$(spec kb1_19_relu)" = '{"expr":"fmaxf(x, 0.0f)","numel":"batch_size*dim"}' ]
	[ "$(spec kb1_23_softmax)" = '{"op":"softmax","rows":"batch_size","cols":"dim"}' ]
	[ "$(spec kb1_38_l1norm)" = '{"op":"l1","rows":"batch_size","cols":"dim"}' ]
	[ "$(spec kb1_36_rmsnorm)" = '{"op":"rms","eps":1e-05,"outer":"batch_size","channels":"features","inner":"dim1*dim2"}' ]
	[ "$(spec kb1_40_layernorm)" = '{"eps":1e-05,"rows":"batch_size","cols":"dim1*dim2*features"}' ]
	[ "$(spec kb1_47_sum_reduction_over_a_dimension)" = '{"op":"sum","outer":"batch_size","reduce":"dim1","inner":"dim2"}' ]
	[ "$(spec kb1_51_argmax_over_a_dimension)" = '{"op":"argmax","outer":"batch_size","reduce":"dim1","inner":"dim2"}' ]
	[ "$(spec kb1_37_frobeniusnorm)" = '{"op":"fro_normalize","numel":"batch_size*dim1*dim2*features","count":"batch_size*dim1*dim2*features","cols":"dim2","per_row":0,"per_col":0}' ]
	# input_shape = (32768,) is a tuple of one integer, input_shape_0: a size of its own
	[ "$(spec kb1_94_mseloss | jq -c '[.numel, .count, .op.finalize]')" = '["batch_size*input_shape_0","batch_size*input_shape_0","v / n"]' ]
	# the hinge loss's (batch_size,) labels broadcast against (batch_size, *input_shape) only when the
	# two are equal: input_shape_0 is tied to batch_size, and the labels are one per column
	jq -e '.params == {"batch_size": 32768} and .reference.ties == {"input_shape_0": "batch_size"} and
		.family == "global_reduce" and .spec.per_col == 2' "$out/kb1_100_hingeloss/task.json"
	for t in 33_batchnorm:stat_norm 35_groupnorm:stat_norm 41_max_pooling_1d:pool 42_max_pooling_2d:pool \
		44_average_pooling_1d:pool 45_average_pooling_2d:pool 46_average_pooling_3d:pool 89_cumsum:scan \
		90_cumprod:scan 92_cumsum_exclusive:scan 93_masked_cumsum:scan 98_kldivloss:global_reduce \
		99_tripletmarginloss:row_reduce 100_hingeloss:global_reduce; do
		[ "$(fam "kb1_${t%%:*}")" = "${t#*:}" ] || { echo "kb1_${t%%:*}: $(fam "kb1_${t%%:*}")"; false; }
	done
	[ "$(spec kb1_95_crossentropyloss)" = '{"op":"cross_entropy","rows":"batch_size","cols":"num_classes"}' ]
	[ "$(spec kb1_1_square_matrix_multiplication)" = '{"batched":false,"a_transposed":false,"b_layout":"kn","bias":false,"epilogue":"v","tril":false,"triu":false,"batch":1,"m":"N","n":"N","k":"N"}' ]
	[ "$(spec kb1_3_batched_matrix_multiplication)" = '{"batched":true,"a_transposed":false,"b_layout":"kn","bias":false,"epilogue":"v","tril":false,"triu":false,"batch":"batch_size","m":"m","n":"n","k":"k"}' ]
	# A.T @ B and A.T @ B.T: A is the transpose of an input stored K x M
	[ "$(spec kb1_16_matmul_with_transposed_a | jq -c '[.a_transposed, .b_layout, .m, .k]')" = '[true,"kn","M","K"]' ]
	[ "$(spec kb1_18_matmul_with_transposed_both | jq -c '[.a_transposed, .b_layout, .m, .k]')" = '[true,"nk","M","K"]' ]
	# diag(A) @ B written as A.unsqueeze(1) * B: A broadcast along B's rows
	[ "$(spec kb1_12_matmul_with_diagonal_matrices)" = '{"expr":"(A * B)","rows":"N","cols":"M","per_row":1,"per_col":0}' ]
	# tril(A @ B): the lower triangle of the product
	[ "$(spec kb1_15_matmul_for_lower_triangular_matrices | jq -c '[.tril, .m, .n, .k]')" = '[true,"M","M","M"]' ]
	[ "$(spec kb1_4_matrix_vector_multiplication)" = '{"m":"M","k":"K"}' ]
	# F.scaled_dot_product_attention: PyTorch's default scale is the root's inverse at every size
	[ "$(spec kb1_97_scaleddotproductattention)" = '{"causal":false,"scale":1,"scale_root":true,"batch":"batch_size*num_heads","q_len":"sequence_length","kv_len":"sequence_length","head_dim":"embedding_dimension","v_dim":"embedding_dimension"}' ]
	[ "$(spec kb1_10_3d_tensor_matrix_multiplication | jq -r .m)" = 'M*N' ]
	[ "$(fam kb1_63_conv_standard_2d__square_input__square_kernel)" = none ]
	jq -e '.spec.b_layout == "nk" and .spec.bias and (.spec.epilogue | contains("erff"))' \
		"$out/kb2_86_matmul_divide_gelu/task.json"
	jq -se 'map(select(.file | endswith("66_Matmul_Dropout_Softmax.py"))) | .[0].status == "refused"' "$out.jsonl"
	# chains: a product then group norm then hardtanh; a product and its sigmoid then a row sum
	jq -e '.family == "gemm" and (.then | map(.family)) == ["stat_norm", "elementwise"]' \
		"$out/kb2_30_gemm_groupnorm_hardtanh/task.json"
	jq -e '.family == "gemm" and (.then | map(.family)) == ["mid_reduce"]' "$out/kb2_56_matmul_sigmoid_sum/task.json"
	jq -e '(.then | map(.family)) == ["stat_norm", "broadcast", "row_norm"]' \
		"$out/kb2_84_gemm_batchnorm_scaling_softmax/task.json"
	jq -e '(.then | map(.family)) == ["pool", "mid_reduce", "elementwise"]' "$out/kb2_55_matmul_maxpool_sum_scale/task.json"
	# a row's logsumexp (mid_reduce), then the maps; a row's sum whose max, mean and logsumexps
	# over one value are that value; a residual (x cloned, added back: the first stage's inputs
	# named); a (rows, 1) minimum plus a (1, C, 1, 1) bias, broadcast to (1, C, rows, 1)
	jq -e '(.then | map([.family, .spec.op])) == [["mid_reduce", "logsumexp"], ["elementwise", null]]' \
		"$out/kb2_64_gemm_logsumexp_leakyrelu_leakyrelu_gelu_gelu/task.json"
	jq -e '(.then | map([.family, .spec.op])) == [["mid_reduce", "sum"]]' \
		"$out/kb2_18_matmul_sum_max_avgpool_logsumexp_logsumexp/task.json"
	jq -e '.first_inputs == ["x", "gemm_weight", "gemm_bias"] and .then[-1].family == "broadcast"
		and .then[-1].inputs == ["x"] and .then[-1].spec.per_row == 1' \
		"$out/kb2_51_gemm_subtract_globalavgpool_logsumexp_gelu_residualadd/task.json"
	jq -e '(.then | map(.family)) == ["stat_norm", "mid_reduce", "broadcast"]
		and (.then[2].spec | .rows == "8192" and .cols == "batch_size" and .per_row == 2 and .per_col == 1)' \
		"$out/kb2_75_gemm_groupnorm_min_biasadd/task.json"
	echo "# the check sizes of every imported problem, on the CPU" >&3
	run "$PY" "$ROOT/pytorch/oracle.py" --check "$out"/*/
	echo "$output" | jq -c 'select(.ok | not)' | head -5
	[ "$status" -eq 0 ]
}

@test "kbench takes an imported task's records (no reference cubin to find), and without a GPU says so" {
	cd "$BATS_TEST_TMPDIR"
	ktask --state "$O/scaled_tanh" | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 1 |
		kcompile >c.jsonl
	run kbench -q <c.jsonl
	[ "$status" -eq 69 ]
	[[ $output == *"kbench: no CUDA driver"*"kbench needs an NVIDIA GPU"* ]]
	# a plan that does not fit the kernel is rejected offline, as for any task
	jq -c '.candidate.launch.launches[0].args |= .[1:]' c.jsonl | kbench -q >r.jsonl
	jq -e '.bench.status == "rejected" and (.bench.reason | contains("launch"))' r.jsonl
}
