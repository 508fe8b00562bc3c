#!/usr/bin/env bats
# The fuzz targets (tests/fuzz) over their committed corpus, through the
# plain driver, under the sanitizers of this build: a smoke of make fuzz.
# Every target of tests/fuzz has a corpus, and every input of it passes.

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

@test "every fuzz target runs clean over its corpus" {
	cd "$ROOT"
	n=0
	for src in tests/fuzz/*.c; do
		t=$(basename "$src" .c)
		[ "$t" != driver ] || continue
		bin=${O:-build/obj}/tests/fuzz/fuzz-$t
		[ -x "$bin" ] || { echo "$bin is not built (make units)"; false; }
		files=$(ls tests/fuzz/corpus/"$t" | wc -l)
		[ "$files" -gt 0 ] || { echo "tests/fuzz/corpus/$t is empty"; false; }
		run "$bin" "tests/fuzz/corpus/$t"
		[ "$status" -eq 0 ] || { echo "$output" | tail -20; false; }
		[ "$output" = "fuzz-$t: $files inputs" ]
		n=$((n + 1))
	done
	echo "# $n targets" >&3
	[ "$n" -gt 0 ]
}
