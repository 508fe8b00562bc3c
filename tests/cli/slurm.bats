#!/usr/bin/env bats
# htam evolve --slurm on a real Slurm: a single-node cluster on loopback
# (tests/slurm/loopback: slurmctld, slurmd and munged of Debian's slurm-wlm
# and munge, state in a temporary folder), the CPU-side stages for real and
# the tests' own kbench (tests/standin/kbench, as BENCH). What a run over
# several tasks as a job array leaves: every task evolved, the elements'
# memories merged into the run's exactly (no transition lost or counted
# twice, however often it is merged), an element killed mid-step resumed.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
htam=$ROOT/bin/htam
standin=$ROOT/tests/standin/kbench

setup_file() {
	export CLUSTER=$BATS_FILE_TMPDIR/cluster
	if out=$("$ROOT/tests/slurm/loopback" start "$CLUSTER" 2>&1); then
		echo "$out" | tail -1 | sed 's/^export //' >"$BATS_FILE_TMPDIR/conf"
	else
		echo "$out" >"$BATS_FILE_TMPDIR/no-cluster"
	fi
}

teardown_file() {
	"$ROOT/tests/slurm/loopback" stop "$BATS_FILE_TMPDIR/cluster" || true
}

setup() {
	[[ ! -f $BATS_FILE_TMPDIR/no-cluster ]] || skip "no loopback Slurm: $(cat "$BATS_FILE_TMPDIR/no-cluster")"
	export "$(cat "$BATS_FILE_TMPDIR/conf")"
	export HTAM_CACHE=$BATS_FILE_TMPDIR/cache BENCH=$standin
	unset KBENCH_STANDIN_KILL KBENCH_STANDIN_FAIL
	cd "$BATS_FILE_TMPDIR"
}

# transitions RUN: "count distinct" of the run's merged memory.
transitions() {
	sqlite3 "runs/$1/htam.db" "SELECT count(*) || ' ' || count(DISTINCT candidate) FROM transitions"
}

@test "a run over three tasks as a Slurm job array: each task an element, the memories merged, the report written" {
	run "$htam" evolve relu gelu swish --steps 2 -k 2 --run s1 --slurm --sbatch "" --wait
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"run s1 submitted: job array "*" (3 tasks)"* ]]
	for t in relu gelu swish; do
		[ -s "runs/s1/$t/state-2.jsonl" ] && [ -f "runs/s1/$t/best/summary.md" ]
		[ "$(cat "runs/s1/slurm/status/$t")" = 0 ]
		grep -q "slurm-task.sh: $t (element " runs/s1/slurm/logs/*_*.log
	done
	# 3 tasks x 2 steps x 2 candidates, each once
	[ "$(transitions s1)" = "12 12" ]
	[ -f runs/s1/report.md ]
}

@test "submitting the finished run again redoes nothing and the merge stays exact" {
	md5sum runs/s1/*/state-2.jsonl >sums
	run "$htam" evolve relu gelu swish --steps 2 -k 2 --run s1 --slurm --sbatch "" --wait
	[ "$status" -eq 0 ]
	md5sum -c sums
	[ "$(transitions s1)" = "12 12" ]
}

@test "an element killed mid-step fails alone; submitted again, it resumes to the same transitions" {
	export KBENCH_STANDIN_KILL=gelu:1:0:inside
	run "$htam" evolve relu gelu swish --steps 2 -k 2 --run s2 --slurm --sbatch "" --wait
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"1 task(s) failed: gelu"* ]]
	[ "$(cat runs/s2/slurm/status/relu)" = 0 ]
	[ ! -s runs/s2/gelu/step-2.jsonl ]
	unset KBENCH_STANDIN_KILL KBENCH_STANDIN_FAIL
	run "$htam" evolve relu gelu swish --steps 2 -k 2 --run s2 --slurm --sbatch "" --wait
	[ "$status" -eq 0 ]
	[ "$(transitions s2)" = "12 12" ]
}

@test "a second submission while the first is queued is refused; Slurm's own errors are reported" {
	run "$htam" evolve relu --steps 1 -k 1 --run s3 --slurm --sbatch "--begin=now+1hour"
	[ "$status" -eq 0 ]
	run "$htam" evolve relu --steps 1 -k 1 --run s3 --slurm --sbatch "--begin=now+1hour"
	[ "$status" -eq 1 ]
	[[ $output == *"run s3 has jobs queued or running"* ]]
	scancel "$(paste -sd, runs/s3/slurm/jobs)"
	run "$htam" evolve relu --steps 1 -k 1 --run s4 --slurm --sbatch "--partition=nosuch"
	[ "$status" -ne 0 ]
	[[ $output == *"htam: evolve --slurm: "* ]]
}

@test "an element whose node has no GPU fails with kbench's status; options for this machine are refused" {
	export KBENCH_STANDIN_FAIL=69
	run "$htam" evolve relu --steps 1 -k 1 --run s5 --slurm --sbatch "" --wait
	echo "$output"
	[ "$status" -eq 69 ]
	[[ $output == *"1 task(s) failed: relu (logs in runs/s5/slurm/logs"* ]]
	[ "$(cat runs/s5/slurm/status/relu)" = 69 ]
	run "$htam" evolve relu --steps 1 -k 1 --run s5 --slurm --gpus 2
	[ "$status" -eq 2 ]
	[[ $output == *"--gpus is for a run on this machine"* ]]
	run "$htam" evolve relu --run s6 --slurm --db own.db
	[ "$status" -eq 2 ]
	[[ $output == *"--db is for a run on this machine"* ]]
	[ ! -e runs/s6 ]
}
