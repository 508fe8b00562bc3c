#!/usr/bin/env bats
# kcompile: candidate records in, the same records with `compile` out.
# Real NVRTC (no GPU needed); every test has a cache of its own. The
# sources are in tests/data/kcompile, the task is tests/data/kcompile/scale.

bats_require_minimum_version 1.5.0

setup() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	DATA=$ROOT/tests/data/kcompile
	export HTAM_CACHE=$BATS_TEST_TMPDIR/cache
	cd "$BATS_TEST_TMPDIR"
	TASK=$(ktask "$DATA/scale")
}

# candidate FILE DEFINES LAUNCH: a record of the scale task whose candidate
# is the source in FILE (its id is the file name).
candidate() {
	jq -c --rawfile src "$DATA/$1" --argjson defines "$2" --argjson launch "$3" \
		--arg id "$1" '. + {candidate: {id: $id, source: $src, defines: $defines,
		launch: $launch, generator: "rules", strategy: null, parent: null}}' <<<"$TASK"
}

# plan KERNEL [BLOCK]: a launch plan that runs KERNEL once, on x and y.
plan() {
	printf '{"launches":[{"kernel":"%s","grid":[1],"block":[%s],"args":["x","y"]}]}' \
		"$1" "${2:-32}"
}

SCALE_PLAN='{"launches":[{"kernel":"scale_grid","grid":["min(cdiv(n, BLOCK), 1024)"],
	"block":["BLOCK"],"args":["x","y","i64:n"]}]}'

@test "--help prints the usage, and every option in it is in the man page" {
	run kcompile --help
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "usage: kcompile [-nv] [-a ARCH] [-j JOBS] [-t SECONDS] < records" ]]
	for opt in $(grep -o -- '--[a-z-]*' <<<"$output"); do
		grep -qF -- "${opt//-/'\-'}" "$ROOT/tools/kcompile/kcompile.1" ||
			{ echo "man page lacks $opt"; false; }
	done
}

@test "a bad command line exits 2 and says what is wrong" {
	run kcompile -j 0
	[ "$status" -eq 2 ]
	[[ $output == "kcompile: --jobs 0: too small (1 to 1024)" ]]
	run kcompile --timeout 1x
	[ "$status" -eq 2 ]
	run kcompile -a sm_12
	[ "$status" -eq 2 ]
	[[ $output == *"architecture 'sm_12': NVRTC"*"cannot build a cubin for it"* ]]
	run kcompile extra-argument
	[ "$status" -eq 2 ]
}

@test "every reference of the pack compiles and reports its registers" {
	HTAM_TASKS=$ROOT/tasks run bash -c 'ktask | kcompile'
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq "$(ls -d "$ROOT"/tasks/*/ | wc -l)" ]
	[ "${#lines[@]}" -gt 0 ]
	for line in "${lines[@]}"; do
		# ok, and every kernel its launch plan names has registers
		jq -e '.compile | keys == ["reference"]' <<<"$line" >/dev/null
		jq -e '.compile.reference as $c | $c.ok and $c.status == "ok" and
			([.task.reference.launch.launches[].kernel] | all($c.kernels[.].registers > 0))' \
			<<<"$line" >/dev/null || { jq -c '[.task.id, .compile.reference.reason]' <<<"$line"; false; }
	done
}

@test "a candidate compiles: the cubin and its hash, the resources, the options" {
	candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f"}' "$SCALE_PLAN" >in.jsonl
	run kcompile <in.jsonl
	[ "$status" -eq 0 ]
	c=$(jq -c .compile <<<"$output")
	[ "$(jq -c '[.ok, .status, .reason, .arch, .cached]' <<<"$c")" = '[true,"ok",null,"sm_90a",false]' ]
	[ "$(jq -r .cubin <<<"$c" | base64 -d | sha256sum | cut -d' ' -f1)" = "$(jq -r .cubin_sha256 <<<"$c")" ]
	[ "$(jq -r .cubin <<<"$c" | base64 -d | head -c 4 | od -An -c | tr -d ' ')" = '177ELF' ]
	jq -e '.kernels.scale_grid | .registers > 0 and .spill_stores == 0 and .stack == 0' <<<"$c"
	jq -e '.options | index("-DBLOCK=256") and index("-DSCALE=2.0f") and
		index("--gpu-architecture=sm_90a") and index("--ptxas-options=-v")' <<<"$c"
	jq -e '.log | contains("Compiling entry function '\''scale_grid'\''")' <<<"$c"
	jq -e '.reference.ok and .reference.kernels.scale_ref.registers > 0' <<<"$c"
	# the members kcompile does not own are kept
	[ "$(jq -c 'del(.compile)' <<<"$output")" = "$(jq -c . in.jsonl)" ]
}

@test "-a and HTAM_ARCH choose the architecture" {
	candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f"}' "$SCALE_PLAN" >in.jsonl
	run kcompile -a sm_80 <in.jsonl
	[ "$status" -eq 0 ]
	[ "$(jq -c '.compile | [.ok, .arch, (.options | index("--gpu-architecture=sm_80") != null)]' <<<"$output")" = '[true,"sm_80",true]' ]
	HTAM_ARCH=sm_89 run kcompile <in.jsonl
	[ "$(jq -r .compile.reference.arch <<<"$output")" = sm_89 ]
}

@test "a syntax error: status error, NVRTC's first error as the reason, the log" {
	candidate syntax_error.cu '{}' "$(plan k)" | kcompile >out.jsonl
	run jq -c '.compile | [.ok, .status, .reason, .cubin]' out.jsonl
	[ "$output" = '[false,"error","kernel.cu(6): error: expected a \";\"",null]' ]
	jq -e '.compile.log | contains("1 error detected")' out.jsonl
	jq -e '.compile.reference.ok' out.jsonl
}

@test "includes outside the allow-list are refused before NVRTC, naming the line" {
	# Each file's first line says what kcompile must answer.
	for f in "$DATA"/guard/*.cu; do
		want=$(head -1 "$f" | sed 's,^// expect: ,,')
		got=$(candidate "guard/${f##*/}" '{}' "$(plan k)" | kcompile |
			jq -r '.compile | if .ok then "ok" else "\(.status): \(.reason)" end')
		[[ $got == "$want"* ]] || { echo "${f##*/}: want '$want', got '$got'"; false; }
	done
	candidate guard/system_header.cu '{}' "$(plan k)" | kcompile >out.jsonl
	run jq -c '.compile | [.ms, .log, .options, .kernels]' out.jsonl
	[ "$output" = '[0,"",[],{}]' ]
}

@test "every header of the allow-list compiles" {
	candidate headers.cu '{}' "$(plan k)" | kcompile >out.jsonl
	run jq -c '.compile | [.ok, .reason]' out.jsonl
	[ "$output" = '[true,null]' ]
}

@test "a define that is not a plain name and value is refused" {
	candidate scale.cu '{"BLOCK": "256 -include /etc/passwd", "SCALE": "2.0f"}' "$SCALE_PLAN" >in.jsonl
	run jq -c '.compile | [.status, .reason]' <(kcompile <in.jsonl)
	[ "$output" = '["refused","define BLOCK: the value must be an integer or a string of letters, digits and _ . + - (at most 64)"]' ]
	candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f", "A=1 -DB": 1}' "$SCALE_PLAN" >in.jsonl
	run jq -r .compile.reason <(kcompile <in.jsonl)
	[ "$output" = "define 'A=1 -DB': the name must be a C identifier" ]
	# names of the implementation are not a candidate's to define
	for name in __CUDACC_RTC__ __CUDA_ARCH__ _GLIBCXX_ASSERTIONS; do
		candidate scale.cu "{\"BLOCK\": 256, \"SCALE\": \"2.0f\", \"$name\": 1}" "$SCALE_PLAN" >in.jsonl
		run jq -r .compile.reason <(kcompile <in.jsonl)
		[ "$output" = "define $name: a reserved name (it begins with _ and a capital letter or another _)" ]
	done
}

@test "a launch plan naming a kernel the source does not define fails the compile" {
	candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f"}' "${SCALE_PLAN/scale_grid/scale_vec4}" >in.jsonl
	run jq -c '.compile | [.ok, .status, .reason, .cubin, (.kernels | keys)]' <(kcompile <in.jsonl)
	[ "$output" = "[false,\"error\",\"launch plan names kernel 'scale_vec4' which the source does not define\",null,[\"scale_grid\"]]" ]
	candidate cxx_name.cu '{}' "$(plan k)" >in.jsonl
	run jq -r .compile.reason <(kcompile <in.jsonl)
	[ "$output" = "launch plan names kernel 'k' which the source does not define (it has the C++ name '_Z1kPKfPf': declare it extern \"C\")" ]
}

@test "a launch plan that does not evaluate is an error, and NVRTC is not run" {
	candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f"}' "${SCALE_PLAN/cdiv(n, BLOCK)/cdiv(n, BLOK)}" >in.jsonl
	run jq -c '.compile | [.status, .reason, .ms]' <(kcompile <in.jsonl)
	[ "$output" = "[\"error\",\"launch plan: launches[0].grid[0]: column 13: unknown name 'BLOK'\",0]" ]
}

@test "a kernel that spills reports its spill stores and loads" {
	candidate spill.cu '{}' "$(plan spill 1024)" | kcompile >out.jsonl
	jq -e '.compile.ok' out.jsonl
	jq -e '.compile.kernels.spill | .registers <= 32 and .spill_stores > 0 and
		.spill_loads > 0 and .stack > 0' out.jsonl
}

@test "a candidate that failed generation is skipped, its reference compiled" {
	jq -c '. + {candidate: {id: "c1", status: "gen_error", reason: "HTTP 500 from the endpoint"}}' \
		<<<"$TASK" | kcompile >out.jsonl
	run jq -c '.compile | [.ok, .status, .reason, .reference.ok]' out.jsonl
	[ "$output" = '[false,"skipped","generation failed: HTTP 500 from the endpoint",true]' ]
}

@test "the cache: a miss, then a hit with the same cubin" {
	candidate scale.cu '{"BLOCK": 128, "SCALE": "2.0f"}' "$SCALE_PLAN" >in.jsonl
	kcompile <in.jsonl >first.jsonl
	kcompile <in.jsonl >second.jsonl
	[ "$(jq -c '.compile | [.cached, .reference.cached]' first.jsonl)" = '[false,false]' ]
	[ "$(jq -c '.compile | [.cached, .reference.cached]' second.jsonl)" = '[true,true]' ]
	[ "$(jq -c '.compile | del(.cached, .reference)' first.jsonl)" = "$(jq -c '.compile | del(.cached, .reference)' second.jsonl)" ]
	[ "$(find "$HTAM_CACHE/kcompile" -type f | wc -l)" -eq 2 ]
	# another define is another key
	candidate scale.cu '{"BLOCK": 64, "SCALE": "2.0f"}' "$SCALE_PLAN" | kcompile >third.jsonl
	[ "$(jq -c '.compile | [.cached, .reference.cached]' third.jsonl)" = '[false,true]' ]
}

@test "the cache: a corrupt or truncated entry is reported, not used, and rebuilt" {
	kcompile <<<"$TASK" >first.jsonl
	entry=$(find "$HTAM_CACHE/kcompile" -type f)
	size=$(stat -c %s "$entry")
	# flip one byte in the middle of the entry
	printf '\x00' | dd of="$entry" bs=1 seek=$((size / 2)) conv=notrunc status=none
	run kcompile <<<"$TASK"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "kcompile: cache entry $entry is corrupt (its checksum does not match): not used, compiling again" ]]
	[ "$(jq -c '.compile.reference | [.ok, .cached]' <<<"${lines[1]}")" = '[true,false]' ]
	[ "$(jq -r .compile.reference.cubin_sha256 <<<"${lines[1]}")" = "$(jq -r .compile.reference.cubin_sha256 first.jsonl)" ]
	# the entry was rebuilt
	[ "$(kcompile <<<"$TASK" | jq -c .compile.reference.cached)" = true ]
	truncate -s $((size - 100)) "$entry"
	run kcompile <<<"$TASK"
	[[ ${lines[0]} == *"is corrupt (it is truncated or too long)"* ]]
	[ "$(jq -c .compile.reference.cached <<<"${lines[1]}")" = false ]
}

@test "a cache that cannot be written: one warning, and the compiles go on" {
	printf '%s\n%s\n' "$(candidate scale.cu '{"BLOCK": 32, "SCALE": "1.0f"}' "$SCALE_PLAN")" \
		"$(candidate scale.cu '{"BLOCK": 64, "SCALE": "1.0f"}' "$SCALE_PLAN")" >in.jsonl
	HTAM_CACHE=/dev/null/cache kcompile -j 1 <in.jsonl >out.jsonl 2>err.txt
	[ "$(wc -l <err.txt)" -eq 1 ]
	grep -q '^kcompile: cache /dev/null/cache/kcompile/.*: Not a directory; going on without the cache$' err.txt
	[ "$(jq -c '[.compile.ok, .compile.reference.ok]' out.jsonl | sort -u)" = '[true,true]' ]
}

@test "--no-cache neither reads nor writes the cache" {
	kcompile --no-cache <<<"$TASK" >out.jsonl
	[ ! -e "$HTAM_CACHE" ]
	jq -e '.compile.reference | .ok and (.cached | not)' out.jsonl
}

@test "a compile past its deadline is stopped as a timeout, and kcompile goes on" {
	{ candidate slow.cu '{}' "$(plan slow 1024)"
	  candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f"}' "$SCALE_PLAN"; } >in.jsonl
	SECONDS=0
	run kcompile -j 1 -t 1 <in.jsonl
	elapsed=$SECONDS
	[ "$status" -eq 0 ]
	[ "$(jq -c '.compile | [.ok, .status, .reason, .cached]' <<<"${lines[0]}")" = \
		'[false,"timeout","the compile ran past its deadline of 1 s and was stopped",false]' ]
	jq -e '.compile.ms >= 1000' <<<"${lines[0]}"
	jq -e '.compile.ok' <<<"${lines[1]}"
	[ "$elapsed" -lt 10 ]
	# a timeout is not cached: it depends on the deadline, not the source
	[ "$(kcompile -t 1 <<<"${lines[0]}" 2>/dev/null | jq -c .compile.cached)" = false ]
}

@test "-j 2: compiles run at once, and records come out in input order" {
	# Two compiles wait out their 3 s deadline: one after the other that
	# would take 6 s. The fast ones are done long before the first slow one
	# and still wait their turn to be written.
	{ candidate slow.cu '{}' "$(plan slow 1024)"
	  candidate scale.cu '{"BLOCK": 32, "SCALE": "2.0f"}' "$SCALE_PLAN"
	  candidate slow.cu '{"ANOTHER_KEY": 1}' "$(plan slow 1024)"
	  candidate scale.cu '{"BLOCK": 64, "SCALE": "2.0f"}' "$SCALE_PLAN"; } >in.jsonl
	SECONDS=0
	run kcompile -j 2 -t 3 <in.jsonl
	elapsed=$SECONDS
	[ "$status" -eq 0 ]
	[ "$(jq -r '"\(.candidate.defines.BLOCK // "slow"):\(.compile.status)"' <<<"$output" | paste -sd' ')" = \
		"slow:timeout 32:ok slow:timeout 64:ok" ]
	[ "$elapsed" -lt 6 ]
}

@test "a task record alone compiles just its reference" {
	run kcompile <<<"$TASK"
	[ "$status" -eq 0 ]
	jq -e '(.compile | keys) == ["reference"] and .compile.reference.ok' <<<"$output"
}

@test "a long log is cut to 16 KiB, keeping the first error and the end" {
	{ echo 'extern "C" __global__ void k(const float *x, float *y) {'
	  for i in $(seq 1 300); do echo "  y[$i] = an_undefined_name_that_is_long_enough_to_fill_the_log_$i;"; done
	  echo '}'; } >"$BATS_TEST_TMPDIR/many_errors.cu"
	jq -c --rawfile src "$BATS_TEST_TMPDIR/many_errors.cu" --argjson launch "$(plan k)" \
		'. + {candidate: {id: "m", source: $src, defines: {}, launch: $launch}}' <<<"$TASK" >in.jsonl
	kcompile <in.jsonl >out.jsonl
	jq -e '.compile | .status == "error" and (.log | length) <= 16384' out.jsonl
	jq -e '.compile.log | test("\\[kcompile: [0-9]+ bytes of the log cut here\\]")' out.jsonl
	jq -e '.compile.log | startswith("kernel.cu(2): error: identifier \"an_undefined_name_that_is_long_enough_to_fill_the_log_1\" is undefined")' out.jsonl
	jq -e '.compile.log | endswith("100 errors detected in the compilation of \"kernel.cu\".\nCompilation terminated.\n")' out.jsonl
	# 25 KiB of warnings before the one error: the error and the end are
	# kept, the warnings cut; a warning about "error_count" is no error.
	{ echo '__device__ void f() {'
	  for i in $(seq 1 200); do echo "  int error_count_$i;"; done
	  echo '}'
	  echo 'extern "C" __global__ void k(const float *x, float *y) { y[0] = undefined_name; }'
	} >"$BATS_TEST_TMPDIR/warnings.cu"
	jq -c --rawfile src "$BATS_TEST_TMPDIR/warnings.cu" --argjson launch "$(plan k)" \
		'. + {candidate: {id: "w", source: $src, defines: {}, launch: $launch}}' <<<"$TASK" >in.jsonl
	kcompile <in.jsonl >out.jsonl
	[ "$(jq -r .compile.reason out.jsonl)" = 'kernel.cu(203): error: identifier "undefined_name" is undefined' ]
	jq -e '.compile.log | (length) <= 16384 and startswith("kernel.cu(2): warning #177-D")' out.jsonl
	jq -e '.compile.log | test("bytes of the log cut here\\]\nkernel.cu\\(203\\): error: identifier")' out.jsonl
}

@test "a bad JSON line: the records before it are written, then exit 65 naming the line" {
	{ echo "$TASK"; echo '{"task": '; echo "$TASK"; } >in.jsonl
	kcompile <in.jsonl >out.jsonl 2>err.txt && false || status=$?
	[ "$status" -eq 65 ]
	[ "$(wc -l <out.jsonl)" -eq 1 ]
	jq -e '.compile.reference.ok' out.jsonl
	[ "$(cat err.txt)" = "kcompile: line 2, column 9: unexpected token near end of file" ]
}

@test "a record without what kcompile needs is bad input (65), the field named" {
	run kcompile <<<'{"step": 0}'
	[ "$status" -eq 65 ]
	[ "$output" = "kcompile: line 1: task: missing (kcompile needs the task and its reference; see ktask)" ]
	run kcompile <<<"$(jq -c '. + {candidate: {id: "c", defines: {}, launch: {}}}' <<<"$TASK")"
	[ "$status" -eq 65 ]
	[ "$output" = "kcompile: line 1: candidate.source: expected a string (the kernel source)" ]
	run kcompile <<<"$(jq -c '. + {candidate: {id: "c", source: "", defines: [1], launch: {}}}' <<<"$TASK")"
	[ "$status" -eq 65 ]
	[ "$output" = "kcompile: line 1: candidate.defines: expected an object (knob name to value)" ]
}

@test "each kernel's parameters (bytes each, from the cubin) and the module's writable memory" {
	candidate state.cu '{}' '{"launches":[{"kernel":"k","grid":[1],"block":[32],
		"args":["x","y","i64:n","i32:n","f32:2","f64:1","i32:0"]}]}' | kcompile >out.jsonl
	jq -e '.compile.ok' out.jsonl
	# x, y, n, m, a, d, c: pointers and long long 8 bytes, int and float 4, char 1
	[ "$(jq -c '.compile.kernels.k.params' out.jsonl)" = '[8,8,8,4,4,8,1]' ]
	[ "$(jq -c '.compile.reference.kernels.scale_ref.params' out.jsonl)" = '[8,8,8]' ]
	# a kernel that trades registers between warpgroups (setmaxnreg) has a
	# record of no value among its attributes: its parameters still read
	candidate regs.cu '{}' '{"launches":[{"kernel":"k","grid":[1],"block":[256],
		"args":["x","y","i64:n"]}]}' | kcompile >regs.jsonl
	[ "$(jq -c '.compile.kernels.k.params' regs.jsonl)" = '[8,8,8]' ]
	# zero-initialised and initialised sections, every variable named, static too
	jq -c '.compile.state' out.jsonl
	[ "$(jq -c '[.compile.state[] | {section, objects: [.objects[].name] | sort}] | sort_by(.section)' out.jsonl)" = \
		'[{"section":".nv.global","objects":["count","hidden"]},{"section":".nv.global.init","objects":["counter","table"]}]' ]
	jq -e '.compile.state[] | select(.section == ".nv.global.init") | .bytes >= 408
		and (.objects[] | select(.name == "table") | .bytes == 400)' out.jsonl
	# a kernel without module-scope memory has none
	[ "$(jq -c .compile.reference.state out.jsonl)" = '[]' ]
}

@test "messages cut inside a multi-byte character stay valid UTF-8 (a long non-ASCII header, a plan expression)" {
	# Both reach kcompile from an LLM's answer; each used to kill it (SIGSEGV).
	long=$(printf 'é%.0s' $(seq 300))
	jq -c --arg src "#include <$long.h>" '. + {candidate: {id: "u", source: $src, defines: {},
		launch: {launches: [{kernel: "k", grid: [1], block: [1], args: ["x", "y"]}]}}}' <<<"$TASK" >in.jsonl
	run --separate-stderr kcompile <in.jsonl
	[ "$status" -eq 0 ]
	jq -e '.compile.status == "refused" and (.compile.reason | startswith("line 1: #include <éé"))' <<<"$output"
	candidate scale.cu '{"BLOCK": 256, "SCALE": "2.0f"}' "${SCALE_PLAN/cdiv(n, BLOCK)/n + $long}" >in.jsonl
	run --separate-stderr kcompile <in.jsonl
	[ "$status" -eq 0 ]
	jq -e '.compile.status == "error" and (.compile.reason | startswith("launch plan: launches[0].grid[0]"))' <<<"$output"
}

@test "the include guard is linear: a 1 MB source of nested comment markers is judged at once" {
	# Each line inside the comment starts like a directive and opens another
	# comment: the guard used to search the rest of the source for every
	# one (115 s under the sanitizers, outside any deadline).
	python3 -c 'import sys; sys.stdout.write("/*\n" + "# /*\n" * 200000)' >nested.cu
	jq -c --rawfile src nested.cu --argjson launch "$(plan k)" \
		'. + {candidate: {id: "nested", source: $src, defines: {}, launch: $launch}}' <<<"$TASK" >in.jsonl
	SECONDS=0
	run --separate-stderr timeout 60 kcompile -t 5 <in.jsonl
	[ "$status" -eq 0 ]
	echo "# $SECONDS s" >&3
	jq -e '.compile.status == "error"' <<<"$output"
}
