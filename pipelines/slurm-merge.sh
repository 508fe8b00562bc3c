#!/usr/bin/env bash
# slurm-merge.sh OUT: the last job of a run submitted to Slurm (htam evolve
# --slurm), after every element of its array: each element's memory
# (OUT/slurm/mem/*.db) imported into the run's (OUT/htam.db). Import adds
# only what the run's memory lacks and refolds statistics from the
# transitions new to it, so the merge is exact and running it again
# changes nothing. Then the report. Its exit status goes to
# OUT/slurm/status/merge.
set -uo pipefail
out=${1:?usage: slurm-merge.sh OUT}
# sbatch runs a copy of this script: the pipelines are found by HTAM_HOME
here=${HTAM_HOME:?slurm scripts run under htam evolve --slurm, which sets HTAM_HOME}/pipelines
s=$out/slurm
status() { echo "$1" >"$s/status/merge.tmp" && mv -f "$s/status/merge.tmp" "$s/status/merge"; exit "$1"; }
shopt -s nullglob
for db in "$s"/mem/*.db; do
	htg-memory --db "$db" export | htg-memory --db "$out/htam.db" import --allow-new ||
		{ echo "slurm-merge.sh: $db: not merged" >&2; status 1; }
done
"$here/report.sh" "$out" || status 1
status 0
