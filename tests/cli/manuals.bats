#!/usr/bin/env bats
# Each tool's --help and its man page (tools/TOOL/TOOL.1, OPTIONS section)
# list the same long options, as git's t0450 holds its -h against its
# manuals; both come from what the tool parses (lib/opt.h's table).

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# help_options TOOL: the long options --help lists, one a line, sorted.
help_options() {
	"$1" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u
}

# man_options PAGE: the long options of the page's OPTIONS section.
man_options() {
	awk '/^\.SH/ {on = ($2 == "OPTIONS")} on' "$1" | grep -oE -- '\\-\\-[a-z][a-z\\-]*' |
		sed 's/\\//g' | sort -u
}

@test "every tool's --help and man page list the same options" {
	n=0
	for d in "$ROOT"/tools/*/; do
		t=$(basename "$d")
		diff <(help_options "$t") <(man_options "$d/$t.1") ||
			{ echo "$t: --help (<) and $t.1 (>) differ"; false; }
		n=$((n + 1))
	done
	echo "# $n tools" >&3
}

@test "a mistake on any tool's command line reads the same: exit 2, the option named" {
	for d in "$ROOT"/tools/*/; do
		t=$(basename "$d")
		run "$t" --no-such-option
		[ "$status" -eq 2 ]
		[ "${lines[0]}" = "$t: --no-such-option: not an option ($t --help lists them)" ]
	done
}
