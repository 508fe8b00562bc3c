#!/usr/bin/env bats
# kgen --backend llm and --backend replay, against tests/llm-server.py: a
# real chat-completions server on loopback that each test starts with a
# script of answers (tests/data/kgen/answers/*.md) and HTTP behaviours.
# The input is the relu task's step-0 state (built with jq from
# tasks/relu), with a direction and memory from tests/data/kgen.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DATA=$ROOT/tests/data/kgen
KEY=sk-htam-canary-5e1f0c27d9b34a68

setup() {
	T=$BATS_TEST_TMPDIR
	SERVER=
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
	unset OPENAI_API_KEY HTAM_PROMPTS HTAM_LLM_URL
	export HTAM_LLM_MODEL=test-model HTAM_LLM_KEY=$KEY
	# The state after htg-select and htg-retrieve, at step 0 ...
	jq -c --rawfile src "$ROOT/tasks/relu/reference.cu" \
		'{task: (.reference.source = $src), run: "r1", step: 0, best: null,
		  history: [], features: {family: .family, bound: "memory",
		  floor_fraction: 0, last_outcome: null}}' "$ROOT/tasks/relu/task.json" |
		jq -c --slurpfile g "$DATA/guidance.json" '. + $g[0]' >"$T/state.json"
	# ... and at step 2, with a best kernel, its measurements and failures.
	jq -c --slurpfile l "$DATA/later.json" '. + $l[0]' "$T/state.json" >"$T/later.json"
}

teardown() {
	if [[ -n $SERVER ]]; then kill "$SERVER" 2>/dev/null || true; fi
}

# serve STEP...: starts the server with that script and points kgen at it.
serve() {
	rm -f "$T/port"
	python3 "$ROOT/tests/llm-server.py" --port-file "$T/port" \
		--log "$T/server.log" --lifetime 60 "$@" 3>&- &
	SERVER=$!
	for _ in $(seq 100); do [[ -s $T/port ]] && break; sleep 0.05; done
	export HTAM_LLM_URL=http://127.0.0.1:$(cat "$T/port")/v1
}

# The candidate of output line N (1-based), as compact JSON.
cand() { sed -n "${1}p" "$T/out" | jq -c .candidate; }

# Milliseconds since the epoch.
ms() { date +%s%3N; }

@test "kgen --help prints the usage and exits 0" {
	run --separate-stderr kgen --help
	[ "$status" -eq 0 ]
	[[ $output == "usage: kgen [options] < states > candidates"*"--backend NAME"*"--transcripts DIR"*"HTAM_LLM_URL"* ]]
	[ -z "$stderr" ]
}

@test "kgen: a bad option or number is a usage error (exit 2)" {
	run kgen --frobnicate
	[ "$status" -eq 2 ]
	run -2 kgen --backend llm -k 0
	[ "$output" = "kgen: --candidates 0: too small (1 to 64)" ]
	run -2 kgen --backend llm --timeout soon
	[ "$output" = "kgen: --timeout soon: not a number (0.001 to 86400)" ]
	run -2 kgen --backend gpt
	[[ $output == *"unknown backend 'gpt'"* ]]
}

@test "kgen --backend llm: without HTAM_LLM_URL it says what to set (exit 2)" {
	run -2 --separate-stderr kgen --backend llm <"$T/state.json"
	[[ $stderr == "kgen: HTAM_LLM_URL is not set"*"/v1"* ]]
}

@test "kgen --backend llm: a good answer becomes a candidate" {
	serve answer:good
	run --separate-stderr kgen --backend llm -k 1 <"$T/state.json"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	echo "$output" >"$T/out"
	[ "$(wc -l <"$T/out")" -eq 1 ]
	# The state is kept, the candidate added.
	[ "$(jq -c '[.task.id, .run, .step, .direction.id]' "$T/out")" = '["relu","r1",0,"memory_access"]' ]
	c=$(cand 1)
	[ "$(jq -r .generator <<<"$c")" = llm:test-model ]
	[ "$(jq -r .strategy <<<"$c")" = vector_loads ]
	[ "$(jq -c .parent <<<"$c")" = null ]
	[ "$(jq -c .defines <<<"$c")" = '{}' ]
	[ "$(jq -c .launch <<<"$c")" = '{"launches":[{"kernel":"relu_vec4","grid":["min(cdiv(rows*cols, 1024), 4224)"],"block":[256],"args":["x","y","i64:rows*cols"]}]}' ]
	[[ $(jq -r .source <<<"$c") == 'extern "C" __global__ void __launch_bounds__(256)'* ]]
	[ "$(jq -r .status <<<"$c")" = null ]
	[ "$(jq -c '[.attempts, (.usage.prompt_tokens > 1000), (.usage.completion_tokens > 100), (.latency_ms >= 0)]' <<<"$c")" = '[1,true,true,true]' ]
	# id is the SHA-256 of the canonical JSON of {source, defines, launch}.
	want=$(jq -c '{source, defines, launch}' <<<"$c" | python3 -c '
import hashlib, json, sys
v = json.load(sys.stdin)
print(hashlib.sha256(json.dumps(v, sort_keys=True, separators=(",", ":")).encode()).hexdigest())')
	[ "$(jq -r .id <<<"$c")" = "$want" ]
	# What the server got: the endpoint, the key, the model, the options.
	req=$(head -n 1 "$T/server.log")
	[ "$(jq -r .path <<<"$req")" = /v1/chat/completions ]
	[ "$(jq -r .auth <<<"$req")" = "Bearer $KEY" ]
	# The endpoint's whole address works as well as the base URL.
	HTAM_LLM_URL=$HTAM_LLM_URL/chat/completions/ kgen --backend llm -k 1 <"$T/state.json" >/dev/null
	[ "$(tail -n 1 "$T/server.log" | jq -r .path)" = /v1/chat/completions ]
	[ "$(jq -c '.request | [.model, .temperature, .max_tokens, (.messages | map(.role))]' <<<"$req")" = '["test-model",0.7,8192,["system","user"]]' ]
}

@test "kgen --backend llm: the prompt carries the task, the direction and the memory" {
	serve answer:good
	kgen --backend llm -k 1 --temperature 0.2 --max-tokens 3000 --seed 7 <"$T/state.json" >/dev/null
	jq -r '.request.messages[1].content' "$T/server.log" >"$T/prompt"
	jq -r '.request.messages[0].content' "$T/server.log" >"$T/system"
	grep -q 'ReLU of each value of a 4096 x 393216 matrix' "$T/prompt"
	grep -q 'torch.relu(x)' "$T/prompt"
	grep -q 'Sizes timed: rows = 4096, cols = 393216' "$T/prompt"
	grep -q 'rows = 37, cols = 4099' "$T/prompt"
	grep -q -- '- input x: f32 \[rows, cols\]' "$T/prompt"
	grep -q 'relu_ref(const float \*x' "$T/prompt"
	grep -q '"kernel": "relu_ref"' "$T/prompt"
	grep -q 'None yet: the kernel to beat is the reference above' "$T/prompt"
	grep -q 'Memory Access (memory_access), chosen with score 0.82: prior 0.35' "$T/prompt"
	grep -q '^vector_loads: Load and store aligned float4 vectors' "$T/prompt"
	grep -q -- '- grid_stride: Size the grid' "$T/prompt"
	grep -q 'float4 loads gave 1.3x' "$T/prompt"
	grep -q 'too few blocks for 132 SMs' "$T/prompt"
	grep -q 'Vector loads on a row offset by an odd count' "$T/prompt"
	grep -q 'Write candidate 1 of 1' "$T/prompt"
	# The output contract is in the system message.
	grep -q 'One ```cuda block' "$T/system"
	grep -q 'extern "C" __global__' "$T/system"
	grep -q 'One ```json block: the launch plan' "$T/system"
	grep -q 'cooperative_groups.h' "$T/system"
	[ "$(jq -c '.request | [.temperature, .max_tokens, .seed]' "$T/server.log")" = '[0.2,3000,7]' ]
}

@test "kgen --backend llm: at a later step the prompt carries the best kernel, its measurements and the failures" {
	serve answer:good
	kgen --backend llm -k 1 <"$T/later.json" >"$T/out"
	jq -r '.request.messages[1].content' "$T/server.log" >"$T/prompt"
	grep -q '^Candidate 5f0c3a1e9b2d (strategy grid_stride):' "$T/prompt"
	grep -q 'void relu_grid' "$T/prompt"
	grep -q 'Measured: median 3411.5 us (the reference: 3720.4 us, speedup 1.0905x), 3775.2 GB/s; the roofline floor is 3039.6 us.' "$T/prompt"
	grep -q 'It reaches 89.1% of the roofline floor' "$T/prompt"
	grep -q 'It is memory-bound.' "$T/prompt"
	grep -q 'Kernel relu_grid: 18 registers, 0 spill stores, 0 spill loads.' "$T/prompt"
	grep -q -- '- step 1: memory_access / vector_loads: incorrect, gain 1x' "$T/prompt"
	grep -q -- '- step 1, strategy vector_loads, compile_error: NVRTC failed' "$T/prompt"
	grep -q 'identifier "float8" is undefined' "$T/prompt"
	grep -q 'first mismatch: {"index": 151660, "got": "NaN", "want": 0.4183}' "$T/prompt"
	# The candidate's parent is the best kernel.
	[ "$(jq -r .candidate.parent "$T/out")" = 5f0c3a1e9b2d4c7f8a6e1d0b3c5a7f9e2d4b6a8c0e1f3a5b7c9d2e4f6a8b0c1d ]
}

@test "kgen --backend llm: K requests are in flight at once, one strategy each" {
	serve 'answer:good;delay=1'
	t0=$(ms)
	kgen --backend llm -k 4 <"$T/state.json" >"$T/out"
	t1=$(ms)
	[ "$(wc -l <"$T/out")" -eq 4 ]
	# Four one-second answers in well under four seconds ...
	[ $((t1 - t0)) -lt 3000 ]
	# ... because the server saw all four requests before it answered one.
	[ "$(jq -s '(map(.start) | max) < (map(.end) | min)' "$T/server.log")" = true ]
	[ "$(jq -r .candidate.strategy "$T/out" | tr '\n' ' ')" = "vector_loads grid_stride streaming_stores vector_loads " ]
	[ "$(jq -r '.request.messages[1].content' "$T/server.log" | grep -o 'Write candidate . of 4' | sort | tr '\n' ' ')" = "Write candidate 1 of 4 Write candidate 2 of 4 Write candidate 3 of 4 Write candidate 4 of 4 " ]
}

@test "kgen --backend llm: prose around the code is fine" {
	serve answer:prose
	kgen --backend llm -k 1 <"$T/state.json" >"$T/out"
	serve answer:good
	kgen --backend llm -k 1 <"$T/state.json" >>"$T/out"
	# The same kernel and plan as the bare answer: the same id.
	[ "$(cand 1 | jq -r .status)" = null ]
	[ "$(cand 1 | jq -r .id)" = "$(cand 2 | jq -r .id)" ]
}

@test "kgen --backend llm: with two cuda blocks the last is taken, and a note says so" {
	serve answer:two-blocks
	kgen --backend llm -k 1 <"$T/state.json" >"$T/out"
	[ "$(cand 1 | jq -r .launch.launches[0].kernel)" = relu_vec4 ]
	[[ $(cand 1 | jq -r .source) == *relu_vec4* ]]
	[[ $(cand 1 | jq -r .source) != *relu_ref* ]]
	[ "$(cand 1 | jq -c .notes)" = '["the answer has 2 cuda blocks; the last was taken"]' ]
}

@test "kgen --backend llm: reasoning before </think> is skipped" {
	serve answer:think
	kgen --backend llm -k 1 <"$T/state.json" >"$T/out"
	[ "$(cand 1 | jq -r .launch.launches[0].kernel)" = relu_vec4 ]
	[ "$(cand 1 | jq -c .notes)" = null ]
}

@test "kgen --backend llm: a stray fence after the blocks does no harm" {
	serve answer:stray-fence
	kgen --backend llm -k 1 <"$T/state.json" >"$T/out"
	[ "$(cand 1 | jq -r .launch.launches[0].kernel)" = relu_vec4 ]
}

@test "kgen --backend llm: defines come with the plan as {defines, launch}" {
	serve answer:defines
	kgen --backend llm -k 1 <"$T/state.json" >"$T/out"
	[ "$(cand 1 | jq -c .defines)" = '{"BLOCK":512,"WAVES":16}' ]
	[ "$(cand 1 | jq -c .launch.launches[0].block)" = '["BLOCK"]' ]
}

@test "kgen --backend llm: a broken launch plan is a gen_error, not a crash" {
	serve answer:broken-plan
	run --separate-stderr kgen --backend llm -k 1 <"$T/state.json"
	[ "$status" -eq 0 ]
	echo "$output" >"$T/out"
	[ "$(cand 1 | jq -r .status)" = gen_error ]
	[ "$(cand 1 | jq -r .reason)" = "the json block is not valid JSON: line 2, column 52: string or '}' expected near '}'" ]
	# No kernel, but an id, the generator and the usage.
	[ "$(cand 1 | jq -c '[has("source"), has("launch"), (.id | length), .generator, .attempts]')" = '[false,false,64,"llm:test-model",1]' ]
	# One state, one candidate, nothing usable: said once.
	[ "$stderr" = "kgen: line 1: task \"relu\" step 0: llm:test-model gave nothing usable for any of the 1 candidates; the last: $(cand 1 | jq -r .reason)" ]
}

@test "kgen --backend llm: answers that do not fit the task say why" {
	serve answer:no-code answer:wrong-kernel answer:bad-arg answer:bad-size answer:zero-grid answer:not-extern-c answer:good
	# Six steps, one request each, in order.
	for step in 0 1 2 3 4 5; do jq -c ".step = $step" "$T/state.json"; done >"$T/states"
	run --separate-stderr kgen --backend llm -k 1 <"$T/states"
	[ "$status" -eq 0 ]
	echo "$output" >"$T/out"
	[ "$(grep -c 'gave nothing usable' <<<"$stderr")" -eq 6 ]
	[ "$(cand 1 | jq -r .reason)" = "the answer has no \`\`\`cuda block" ]
	[ "$(cand 2 | jq -r .reason)" = "the launch plan launches 'relu_fast', but the cuda block defines no __global__ relu_fast (it defines [\"relu_vec4\"])" ]
	[ "$(cand 3 | jq -r .reason)" = "launch plan: launches[0].args[1]: 'out' is neither a buffer of the task or workspace nor a typed scalar (i32:, i64:, f32:, f64:)" ]
	[[ $(cand 4 | jq -r .reason) == "launch plan: launches[0].grid[0]: column "*"'n'"* ]]
	[[ $(cand 5 | jq -r .reason) == 'launch plan: at sizes {"cols":'*'}: launches[0].grid: x = 0 is outside'* ]]
	[ "$(cand 6 | jq -r .reason)" = 'the kernels are not declared extern "C" (their names would be mangled)' ]
	[ "$(jq -r .candidate.status "$T/out" | sort -u)" = gen_error ]
}

@test "kgen --backend llm: an answer cut off at max_tokens says so" {
	serve cut:cut
	kgen --backend llm -k 1 <"$T/state.json" >"$T/out" 2>/dev/null
	[ "$(cand 1 | jq -r .reason)" = 'a ``` block is not closed (the answer was cut off at --max-tokens)' ]
}

@test "kgen --backend llm: a body that is not JSON, no choices or no content are gen_errors" {
	serve body:broken body:empty-choices body:no-content
	for _ in 1 2 3; do kgen --backend llm -k 1 --retries 0 <"$T/state.json" >>"$T/out" 2>/dev/null; done
	[[ $(cand 1 | jq -r .reason) == "the response is not JSON: line 1, column "* ]]
	[ "$(cand 2 | jq -r .reason)" = "the response has no choices" ]
	[ "$(cand 3 | jq -r .reason)" = "the response's choice has no message content (finish_reason content_filter)" ]
	# A 200 that makes no sense is not retried.
	[ "$(wc -l <"$T/server.log")" -eq 3 ]
}

@test "kgen --backend llm: 429 then success is retried" {
	serve status:429 status:429 answer:good
	run --separate-stderr kgen --backend llm -k 2 --backoff 0.05 -v <"$T/state.json"
	[ "$status" -eq 0 ]
	echo "$output" >"$T/out"
	[ "$(jq -c '[.candidate.attempts, .candidate.status, .candidate.launch.launches[0].kernel]' "$T/out" | sort -u)" = '[2,null,"relu_vec4"]' ]
	[[ $stderr == *"kgen: line 1: candidate "?": HTTP 429: scripted status 429; attempt 2 in "* ]]
	[ "$(wc -l <"$T/server.log")" -eq 4 ]
}

@test "kgen --backend llm: Retry-After is honoured, and capped by --max-wait" {
	serve 'status:429;retry-after=1' answer:good
	t0=$(ms)
	kgen --backend llm -k 1 --backoff 0.01 <"$T/state.json" >"$T/out"
	t1=$(ms)
	[ "$(cand 1 | jq -r .attempts)" = 2 ]
	# The backoff alone would have waited 10 ms; the server asked for 1 s.
	[ $((t1 - t0)) -ge 1000 ]
	[ $((t1 - t0)) -lt 5000 ]
	kill "$SERVER"
	serve 'status:503;retry-after=3600' answer:good
	t0=$(ms)
	kgen --backend llm -k 1 --max-wait 0.3 <"$T/state.json" >"$T/out"
	t1=$(ms)
	[ "$(cand 1 | jq -r .attempts)" = 2 ]
	[ $((t1 - t0)) -lt 3000 ]
	# Over a year, or more seconds than any clock counts: still the server
	# asking for the longest wait, so --max-wait (1.2 s here), never the
	# 10 ms backoff as if the header were not there.
	for after in 63072000 99999999999999999999999999; do
		kill "$SERVER"
		serve "status:503;retry-after=$after" answer:good
		t0=$(ms)
		kgen --backend llm -k 1 --backoff 0.01 --max-wait 1.2 <"$T/state.json" >"$T/out"
		t1=$(ms)
		[ "$(cand 1 | jq -r .attempts)" = 2 ]
		[ $((t1 - t0)) -ge 1200 ]
	done
}

@test "kgen --backend llm: 500 forever gives up after the retries, as a gen_error" {
	serve status:500
	t0=$(ms)
	run --separate-stderr kgen --backend llm -k 2 --retries 2 --backoff 0.05 <"$T/state.json"
	t1=$(ms)
	[ "$status" -eq 0 ]
	echo "$output" >"$T/out"
	[ "$(jq -c '.candidate | [.status, .reason, .attempts]' "$T/out" | sort -u)" = '["gen_error","HTTP 500: scripted status 500 (after 3 attempts)",3]' ]
	[ "$(wc -l <"$T/server.log")" -eq 6 ]
	[ $((t1 - t0)) -lt 5000 ]
	# Reported once, on one line.
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
	[[ $stderr == *"gave nothing usable for any of the 2 candidates; the last: HTTP 500"* ]]
}

@test "kgen --backend llm: a server that never answers times out, within the timeouts" {
	serve hang
	t0=$(ms)
	kgen --backend llm -k 2 --timeout 1 --retries 1 --backoff 0.05 <"$T/state.json" >"$T/out" 2>/dev/null
	t1=$(ms)
	[ "$(jq -c '.candidate | [.status, .attempts]' "$T/out" | sort -u)" = '["gen_error",2]' ]
	[[ $(cand 1 | jq -r .reason) == "no answer within the timeout ("*") (after 2 attempts)" ]]
	# Two attempts of 1 s, one short backoff.
	[ $((t1 - t0)) -ge 2000 ]
	[ $((t1 - t0)) -lt 8000 ]
}

@test "kgen --backend llm: a server that cannot be reached is a missing service (exit 69)" {
	# A port that was free a moment ago: nothing listens there.
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export HTAM_LLM_URL=http://127.0.0.1:$port/v1
	run -69 --separate-stderr kgen --backend llm -k 2 --retries 1 --backoff 0.01 <"$T/state.json"
	[ -z "$output" ]
	[[ $stderr == "kgen: line 1: cannot reach http://127.0.0.1:$port/v1/chat/completions: request failed: "* ]]
}

@test "kgen --backend llm: the key never appears in a record, a transcript or a message" {
	serve 'echo-key;code=429' echo-key answer:good
	kgen --backend llm -k 1 -v --backoff 0.01 --transcripts "$T/tr" <"$T/state.json" >"$T/out" 2>"$T/err"
	kgen --backend llm -k 1 -v --transcripts "$T/tr" <"$T/state.json" >>"$T/out" 2>>"$T/err"
	# The server did get it, and echoed it back in a 429 and a 401 ...
	[ "$(jq -r .auth "$T/server.log" | sort -u)" = "Bearer $KEY" ]
	grep -q 'candidate 0: HTTP 429: Incorrect API key provided: Bearer \[key\]; attempt 2 in' "$T/err"
	[ "$(cand 1 | jq -r .reason)" = "HTTP 401: Incorrect API key provided: Bearer [key]" ]
	[ "$(cand 2 | jq -r .status)" = null ]
	# ... but nothing kgen wrote holds it.
	ls "$T/tr"/*.json >/dev/null
	run grep -rlF "$KEY" "$T/out" "$T/err" "$T/tr"
	[ "$status" -eq 1 ]
	# OPENAI_API_KEY is the fallback.
	unset HTAM_LLM_KEY
	export OPENAI_API_KEY=sk-openai-fallback-123456
	kgen --backend llm -k 1 <"$T/state.json" >/dev/null
	[ "$(tail -n 1 "$T/server.log" | jq -r .auth)" = "Bearer sk-openai-fallback-123456" ]
}

@test "kgen --backend llm: a key the server echoes JSON-escaped is scrubbed too, decoded or not" {
	# in an error's message, in a body cut short, and in an answer's code
	serve 'echo-key;escaped=1;code=429' 'echo-key;escaped=cut' echo-key-answer
	kgen --backend llm -k 1 -v --backoff 0.01 --retries 0 --transcripts "$T/tr" <"$T/state.json" >"$T/out" 2>"$T/err"
	kgen --backend llm -k 1 -v --retries 0 --transcripts "$T/tr" <"$T/state.json" >>"$T/out" 2>>"$T/err"
	kgen --backend llm -k 1 -v --retries 0 --transcripts "$T/tr" <"$T/state.json" >>"$T/out" 2>>"$T/err"
	[ "$(jq -r .auth "$T/server.log" | sort -u)" = "Bearer $KEY" ]
	[ "$(cand 1 | jq -r .reason)" = "HTTP 429: Incorrect API key provided: Bearer [key]" ]
	# the answer's code holds "[key]" where the server quoted it
	cand 3 | jq -e '.source | contains("// your key: Bearer [key]")'
	escaped=$(python3 -c 'import sys; print("".join("\\u%04x" % ord(c) for c in sys.argv[1]))' "$KEY")
	for needle in "$KEY" "$escaped" "${escaped:0:60}"; do
		run grep -rlF -- "$needle" "$T/out" "$T/err" "$T/tr"
		[ "$status" -eq 1 ] || { echo "found '$needle' in $output"; false; }
	done
}

@test "kgen --transcripts keeps each attempt's prompt and answer" {
	serve status:429 answer:good
	kgen --backend llm -k 1 --backoff 0.01 --transcripts "$T/tr" <"$T/state.json" >"$T/out"
	[ "$(cd "$T/tr" && ls)" = "$(printf 'r1-relu-s0-c0-a1.json\nr1-relu-s0-c0-a2.json')" ]
	[ "$(jq -c '[.final, .http_status, .error, .retry_in_ms >= 0]' "$T/tr/r1-relu-s0-c0-a1.json")" = '[false,429,"HTTP 429: scripted status 429",true]' ]
	[ "$(jq -c '[.final, .http_status, .attempt, .model, .finish_reason]' "$T/tr/r1-relu-s0-c0-a2.json")" = '[true,200,2,"test-model","stop"]' ]
	jq -j .answer "$T/tr/r1-relu-s0-c0-a2.json" | cmp - "$DATA/answers/good.md"
	# The prompt as sent, and its hash, which replay matches on.
	[ "$(jq -c .request "$T/tr/r1-relu-s0-c0-a2.json")" = "$(sed -n 2p "$T/server.log" | jq -c .request)" ]
	[ "$(jq -r .prompt_sha256 "$T/tr/r1-relu-s0-c0-a2.json")" = "$(jq -c .request.messages "$T/tr/r1-relu-s0-c0-a2.json" | python3 -c '
import hashlib, json, sys
print(hashlib.sha256(json.dumps(json.load(sys.stdin), sort_keys=True, separators=(",", ":")).encode()).hexdigest())')" ]
}

@test "kgen --backend replay reproduces an llm run exactly, with no network" {
	serve answer:good answer:two-blocks answer:broken-plan status:500 answer:defines answer:prose
	cat "$T/state.json" "$T/later.json" >"$T/states"
	kgen --backend llm -k 3 --retries 0 --transcripts "$T/tr" <"$T/states" >"$T/llm.out"
	kill "$SERVER"
	SERVER=
	unset HTAM_LLM_URL HTAM_LLM_MODEL HTAM_LLM_KEY
	kgen --backend replay -k 3 --transcripts "$T/tr" <"$T/states" >"$T/replay.out"
	[ "$(wc -l <"$T/replay.out")" -eq 6 ]
	cmp "$T/llm.out" "$T/replay.out"
	# A mix of kernels and errors came back, all reproduced.
	[ "$(jq -r '.candidate.status // "ok"' "$T/replay.out" | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = "2gen_error 4ok " ]
}

@test "kgen --backend replay: a prompt that was never recorded is a gen_error" {
	serve answer:good
	kgen --backend llm -k 1 --transcripts "$T/tr" <"$T/state.json" >/dev/null
	cp -r "$ROOT/tools/kgen/prompts" "$T/prompts"
	echo "Be brief." >>"$T/prompts/user.txt"
	run --separate-stderr kgen --backend replay -k 1 --transcripts "$T/tr" --prompts "$T/prompts" <"$T/state.json"
	[ "$status" -eq 0 ]
	[[ $(jq -r .candidate.reason <<<"$output") == "replay: no recorded answer for this prompt (sha256 "*") in $T/tr" ]]
	[ "$(jq -r .candidate.generator <<<"$output")" = replay ]
	[[ $stderr == *"replay gave nothing usable for any of the 1 candidates"* ]]
	run -2 kgen --backend replay <"$T/state.json"
	[[ $output == *"--backend replay needs --transcripts DIR"* ]]
}

@test "kgen --prompts: the templates are files a user can edit" {
	serve answer:good
	mkdir "$T/p"
	printf 'You write CUDA.\n' >"$T/p/system.txt"
	printf 'Make {{task.id}} faster; apply {{strategy}}\n' >"$T/p/user.txt"
	kgen --backend llm -k 1 --prompts "$T/p" <"$T/state.json" >/dev/null
	[ "$(jq -r '.request.messages[1].content' "$T/server.log")" = "Make relu faster; apply vector_loads: Load and store aligned float4 vectors, with a scalar tail. (record: {\"tried\": 5, \"helped\": 4, \"mean_gain\": 1.21})" ]
	# $HTAM_PROMPTS names the folder too.
	HTAM_PROMPTS=$T/p kgen --backend llm -k 1 <"$T/state.json" >/dev/null
	[ "$(tail -n 1 "$T/server.log" | jq -r '.request.messages[0].content')" = "You write CUDA." ]
	# A placeholder kgen does not know is found before any request.
	printf 'line one\nMake {{task.name}} faster\n' >"$T/p/user.txt"
	run -2 kgen --backend llm --prompts "$T/p" <"$T/state.json"
	[ "$output" = "kgen: $T/p/user.txt: line 2: unknown placeholder {{task.name}} (see kgen(1) for the list)" ]
	run -2 kgen --backend llm --prompts "$T/nowhere" <"$T/state.json"
	[[ $output == "kgen: --prompts $T/nowhere: cannot read $T/nowhere/system.txt: No such file or directory" ]]
}

@test "kgen: a malformed input line is an error (exit 65), nothing half-written" {
	serve answer:good
	{ cat "$T/state.json"; echo '{"task": '; } >"$T/bad"
	run -65 --separate-stderr kgen --backend llm -k 2 <"$T/bad"
	[ "$(grep -c . <<<"$output")" -eq 2 ]
	[[ $stderr == "kgen: line 2"* ]]
	jq -c 'del(.task)' "$T/state.json" >"$T/notask"
	run -65 --separate-stderr kgen --backend llm <"$T/notask"
	[ "$stderr" = "kgen: line 1: no task object (is this a state record from ktask or htg-update?)" ]
	[ -z "$output" ]
}

@test "kgen --backend llm: the good kernel compiles with kcompile" {
	serve answer:good answer:defines
	kgen --backend llm -k 2 <"$T/state.json" >"$T/out"
	kcompile --no-cache <"$T/out" >"$T/compiled"
	[ "$(jq -c '[.compile.ok, .compile.status]' "$T/compiled" | sort -u)" = '[true,"ok"]' ]
	[ "$(jq -r '.compile.kernels | keys[]' "$T/compiled" | sort | tr '\n' ' ')" = "relu_knobs relu_vec4 " ]
}
