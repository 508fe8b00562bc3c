#!/usr/bin/env bats
# make install: the tools, htam, their manuals and what they read, under
# a PREFIX; the installed tools work from any folder with nothing of the
# checkout on PATH, and every tool has its manual.

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup_file() {
	export PREFIX=$BATS_FILE_TMPDIR/prefix
	# Under make test, O and the parent make's flags name the sanitized
	# build; an install is of the plain one.
	env -u O -u BIN -u SANFLAGS -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$ROOT" install PREFIX="$PREFIX" >/dev/null
}

@test "the installed tools find the pack, the templates and the prompts" {
	cd "$BATS_TEST_TMPDIR"
	export PATH=$PREFIX/bin:/usr/bin:/bin HTAM_CACHE=$BATS_TEST_TMPDIR/cache
	unset HTAM_TASKS HTAM_TEMPLATES HTAM_PROMPTS
	ktask --state relu | htg-select --db m.db | htg-retrieve --db m.db | kgen -k 1 | kcompile >c.jsonl
	jq -e '.candidate.generator == "rules" and .compile.ok' c.jsonl
	[ "$(htam tasks | wc -l)" -eq $(( $(ls -d "$ROOT"/tasks/*/ | wc -l) + 1 )) ]
	[ -f "$PREFIX/share/htam/pipelines/evolve.mk" ]
}

@test "every tool and htam has its manual" {
	for t in "$ROOT"/tools/*/; do
		t=$(basename "$t")
		[ -x "$PREFIX/bin/$t" ]
		[ -f "$PREFIX/share/man/man1/$t.1" ] || { echo "no manual for $t"; false; }
		man -M "$PREFIX/share/man" "$t" 2>/dev/null | grep -q "^NAME"
	done
	[ -f "$PREFIX/share/man/man1/htam.1" ]
}
