#!/usr/bin/env bash
# best.sh STATE DIR: writes the best kernel of a finished run as files to
# take away: kernel.cu, launch.json (with its defines) and summary.md.
# Each is written whole (a temporary file renamed into place), summary.md
# last: it is the Make target, so it exists only once the others do.
set -euo pipefail
state=$1 dir=$2
mkdir -p "$dir"
# put FILE: standard input into DIR/FILE, whole or not at all.
put() { cat >"$dir/$1.tmp" && mv -f "$dir/$1.tmp" "$dir/$1"; }
if ! jq -e '.best.candidate' "$state" >/dev/null; then
	jq -r '"# \(.task.id): no correct kernel was found in \(.step) steps\n"' "$state" | put summary.md
	exit 0
fi
jq -r '.best.candidate.source' "$state" | put kernel.cu
jq '{defines: .best.candidate.defines, launch: .best.candidate.launch}' "$state" | put launch.json
jq -r '
  def us: if . == null then "-" else (. * 10 | round / 10 | tostring) + " us" end;
  def x: if . == null then "-" else (. * 100 | round / 100 | tostring) + "x" end;
  .best.bench as $b | .task as $t |
  "# \($t.id): best kernel after \(.step) steps\n",
  "\($t.description)\n",
  "| | |", "|---|---|",
  "| time (median) | \($b.time_us.median | us) |",
  "| reference time | \($b.ref_time_us | us) |",
  "| speedup over the reference | \($b.speedup | x) |",
  def vs($k): if $t.baseline_us[$k] and $b.time_us.median then $t.baseline_us[$k] / $b.time_us.median else null end;
  "| PyTorch eager | \($t.baseline_us.eager | us) |",
  "| speedup over eager | \(vs("eager") | x) |",
  "| torch.compile | \($t.baseline_us.compile | us) |",
  "| speedup over torch.compile | \(vs("compile") | x) |",
  "| roofline floor | \($b.floor_us | us) |",
  "| fraction of the floor | \(if $b.floor_fraction then ($b.floor_fraction * 100 | round | tostring) + "%" else "-" end) |",
  "| generator, strategy | \(.best.candidate.generator) \(.best.candidate.strategy // "") |",
  "",
  def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) + "x" end;
  "Directions that led here: \([.history[] | "\(.step): \(.direction // "-") / \(.strategy // "-") (\(.outcome // "-"), gain \(.gain | g))"] | join("; "))",
  "",
  "Files: kernel.cu (the source), launch.json (the defines, passed as -D, and the launch plan)."
' "$state" | put summary.md
