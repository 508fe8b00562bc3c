#!/usr/bin/env bash
# slurm-task.sh OUT: one element of a run's Slurm job array (htam evolve
# --slurm): the evolution of task number SLURM_ARRAY_TASK_ID of
# OUT/slurm/tasks, as one job step (srun make -f evolve.mk), with its own
# memory OUT/slurm/mem/TASK.db. That memory starts as a copy of the run's
# (export | import: SQLite files are never copied, and never shared between
# nodes: SQLite over a network filesystem is not safe for concurrent
# writers), so each task learns from what the run knew when the element
# first started and from its own steps; slurm-merge.sh folds every
# element's memory back into the run's. The element's exit status goes to
# OUT/slurm/status/TASK. Run again (htam evolve --slurm), an element
# resumes its task where it stopped, with the memory it had.
set -uo pipefail
out=${1:?usage: slurm-task.sh OUT}
i=${SLURM_ARRAY_TASK_ID:?slurm-task.sh runs as an element of a Slurm job array}
# sbatch runs a copy of this script: the pipelines are found by HTAM_HOME
here=${HTAM_HOME:?slurm scripts run under htam evolve --slurm, which sets HTAM_HOME}/pipelines
id=$(sed -n "$((i + 1))p" "$out/slurm/tasks")
[[ -n $id ]] || { echo "slurm-task.sh: no task number $i in $out/slurm/tasks" >&2; exit 1; }
mapfile -d '' args <"$out/slurm/make.args"
s=$out/slurm
db=$s/mem/$id.db
status() { echo "$1" >"$s/status/$id.tmp" && mv -f "$s/status/$id.tmp" "$s/status/$id"; exit "$1"; }
# A memory is made whole before it is used: DB.ready marks it so (an
# element killed while making it makes it again; SQLite's files are never
# renamed, since a database in WAL mode is more than its main file).
if [[ ! -f $db.ready ]]; then
	rm -f "$db" "$db-wal" "$db-shm"
	if [[ -f $out/htam.db ]]; then
		htg-memory --db "$out/htam.db" export | htg-memory --db "$db" import --allow-new ||
			status 1
	else
		htg-memory --db "$db" export >/dev/null || status 1   # the seed memory
	fi
	: >"$db.ready"
fi
echo "slurm-task.sh: $id (element $i of job ${SLURM_ARRAY_JOB_ID-?}) on $(hostname)" >&2
srun --export=ALL make -f "$here/evolve.mk" TASKS="$id" DB="$db" STATUS_FILE="$s/status/$id.exit" \
	"${args[@]}"
rc=$?
((rc == 0)) || rc=$(cat "$s/status/$id.exit" 2>/dev/null || echo "$rc")
status "$rc"
