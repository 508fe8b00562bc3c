#!/usr/bin/env bash
# report.sh RUNDIR: writes RUNDIR/report.md, a Markdown report of an
# evolution run (per task: best and reference times, speedup, PyTorch
# eager and torch.compile times and the speedups over them, fraction of
# the floor, steps, the path of directions and strategies, failures by
# kind), with best-time.png (gnuplot) and memory.png (Graphviz).
# Every file is written under a temporary name and renamed into place.
set -euo pipefail
dir=$1
out=$dir/report.md.tmp
shopt -s nullglob

# The state with the largest N: a version sort puts state-10 after state-9
# whatever the folders' names hold.
last_state() {
	local s=("$1"/state-*.jsonl)
	((${#s[@]})) && printf '%s\n' "${s[@]}" | sort -V | tail -1
	return 0
}

{
	echo "# htam run $(basename "$dir")"
	echo
	echo "| task | steps | best us | reference us | speedup | eager us | vs eager | compile us | vs compile | floor us | of floor | failures |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$out"
plotdata=$dir/best-time.dat.tmp
: >"$plotdata"
for t in "$dir"/*/; do
	t=${t%/}
	state=$(last_state "$t")
	[[ -n $state ]] || continue
	fails=$(cat "$t"/step-*.jsonl 2>/dev/null | jq -rs '
		[.[] | .bench.status // .compile.status // .candidate.status // "unknown"
		 | select(. != "ok")] | group_by(.) | map("\(.[0]) \(length)") | join(", ")')
	jq -r --arg fails "${fails:--}" '
		def f1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
		def f2: if . == null then "-" else (. * 100 | round / 100 | tostring) + "x" end;
		def vs($k): if .task.baseline_us[$k] and .best.bench.time_us.median
			then .task.baseline_us[$k] / .best.bench.time_us.median else null end;
		.best.bench as $b |
		"| \(.task.id) | \(.step) | \($b.time_us.median | f1) | \($b.ref_time_us | f1) | \($b.speedup | f2) | \(.task.baseline_us.eager | f1) | \(vs("eager") | f2) | \(.task.baseline_us.compile | f1) | \(vs("compile") | f2) | \($b.floor_us | f1) | \(if $b.floor_fraction then ($b.floor_fraction * 100 | round | tostring) + "%" else "-" end) | \($fails) |"
	' "$state" >>"$out"
	# the best time at each step, for the plot: "task step time floor", step
	# 0 being the reference's time (what the run started from)
	{
		jq -r 'select(.best.bench.ref_time_us) | "\(.task.id) 0 \(.best.bench.ref_time_us) \(.best.bench.floor_us // 0)"' "$state"
		for s in $(printf '%s\n' "$t"/state-*.jsonl | sort -V); do
			jq -r 'select(.best.bench.time_us.median) | "\(.task.id) \(.step) \(.best.bench.time_us.median) \(.best.bench.floor_us // 0)"' "$s"
		done
	} >>"$plotdata"
done
{
	echo
	echo "## Paths"
	echo
	for t in "$dir"/*/; do
		state=$(last_state "${t%/}")
		[[ -n $state ]] || continue
		jq -r 'def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) + "x" end;
			"- **\(.task.id)**: " + ([.history[] | "\(.direction // "-") / \(.strategy // "-") (\(.outcome // "-"), gain \(.gain | g))"] | join(" -> "))' "$state"
	done
} >>"$out"

# One panel per task, linear axes from 0 so that a 25% gain looks like
# one: the best time at each step from step 0 (the reference), and the
# roofline floor dashed.
if command -v gnuplot >/dev/null && [[ -s $plotdata ]]; then
	tasks=$(cut -d' ' -f1 "$plotdata" | sort -u)
	n=$(wc -w <<<"$tasks")
	cols=$(( n < 4 ? n : 4 ))
	rows=$(( (n + cols - 1) / cols ))
	script="set terminal png size $((cols * 320)),$((rows * 240 + 30)) noenhanced font ',9';
		set output '$dir/best-time.png.tmp';
		set multiplot layout $rows,$cols title 'best time per step (us); dashed: the roofline floor';
		set yrange [0:*]; set xtics 1; set format y '%.0f'; set key off"
	for x in $tasks; do
		steps=$(awk -v t="$x" '$1 == t {print $2}' "$plotdata" | sort -n | tail -1)
		script+="; set title '$x'; set xrange [-0.2:$steps + 0.2];
			plot '< grep \"^$x \" $plotdata' using 2:3 with linespoints pt 7 ps 0.6 lw 2,
			'' using 2:4 with lines dt 2 lc rgb 'gray40'"
	done
	gnuplot -e "$script; unset multiplot" 2>/dev/null
	mv -f "$dir/best-time.png.tmp" "$dir/best-time.png"
	printf '\n![best time per step](best-time.png)\n' >>"$out"
fi
db=$dir/htam.db
if command -v dot >/dev/null && [[ -f $db ]] && command -v htg-memory >/dev/null; then
	htg-memory dot --db "$db" | dot -Tpng -o "$dir/memory.png.tmp"
	mv -f "$dir/memory.png.tmp" "$dir/memory.png"
	printf '\n![the memory](memory.png)\n' >>"$out"
fi
mv -f "$plotdata" "$dir/best-time.dat"
mv -f "$out" "$dir/report.md"
