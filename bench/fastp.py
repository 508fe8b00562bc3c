#!/usr/bin/env python3
"""fastp.py: our best kernels against PyTorch over a run of the pack, the
KernelBench way: per task the floor, PyTorch eager and torch.compile, our
best time and the speedups; then fast_1, fast_1.5, fast_2 and the
geometric-mean speedup over eager and over compile. No PyTorch needed.

usage: fastp.py [--baselines FILE] [--tasks DIR] RUNDIR > table.md

RUNDIR holds one folder per task with the state files of
pipelines/evolve.mk (state-N.jsonl); the last state of each gives the task
(with its baseline_us) and the best kernel. --baselines FILE (default
$HTAM_BASELINES) puts a baselines file's times over the states' as ktask
--baselines does; --tasks DIR counts every task of that pack, a task the
run lacks being one without a correct kernel.

Definitions (printed under the table too):
  fast_p   the fraction of the tasks whose best kernel is correct and more
           than p times faster than the baseline; every task is in the
           denominator, and a task without a correct kernel is not fast.
  geomean  the geometric mean of baseline / ours over the same tasks; a task
           without a correct kernel counts 1.0 (its user keeps PyTorch).
A task without a time for a baseline (torch.compile, for some) is shown
"-" and left out of that baseline's row: fast_p and geomean alike.

Exit: 0 ok; 2 a bad command line (RUNDIR, --tasks or --baselines not
there); 65 a state or baselines file that is not what it should be."""
import argparse
import glob
import json
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import taskpack  # noqa: E402 (bench/, beside this script)

PS = (1, 1.5, 2)
BASELINES = (("eager", "PyTorch eager"), ("compile", "torch.compile"))


def fail(msg, code=65):
    print("fastp: %s" % msg, file=sys.stderr)
    sys.exit(code)


def last_state(folder):
    """The state-N.jsonl of folder with the largest N, or None."""
    states = []
    for p in glob.glob(os.path.join(folder, "state-*.jsonl")):
        m = re.fullmatch(r"state-(\d+)\.jsonl", os.path.basename(p))
        if m:
            states.append((int(m.group(1)), p))
    return max(states)[1] if states else None


def read_state(path):
    try:
        with open(path) as f:
            lines = [l for l in f if l.strip()]
        if len(lines) != 1:
            raise ValueError("expected one record, found %d" % len(lines))
        rec = json.loads(lines[0])
        rec["task"]["id"]
        return rec
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail("%s: %s" % (path, e))


def best_us(state):
    """Our best correct time for the state, or None."""
    best = state.get("best") or {}
    bench = best.get("bench") or {}
    t = (bench.get("time_us") or {}).get("median")
    if bench.get("status") == "ok" and isinstance(t, (int, float)) and t > 0:
        return float(t)
    return None


def rows_of(rundir, tasks, baselines):
    """One row per task: id, floor, baselines (kind to us or None), ours."""
    rows = {}
    for folder in sorted(glob.glob(os.path.join(rundir, "*", ""))):
        path = last_state(folder)
        if path:
            st = read_state(path)
            rows[st["task"]["id"]] = (st["task"], best_us(st))
    if tasks:
        for tid in taskpack.pack_ids(tasks):
            if tid not in rows:
                rows[tid] = (taskpack.load_task(tasks, tid), None)
    if not rows:
        fail("%s: no task folder with a state-N.jsonl" % rundir)
    out = []
    for tid in sorted(rows):
        task, ours = rows[tid]
        try:
            floor = taskpack.floor_us(task)
        except (KeyError, ValueError):
            floor = None
        base = taskpack.merge_baselines(task, baselines)
        out.append({"id": tid, "floor": floor, "ours": ours,
                    "base": {k: base.get(k) for k, _ in BASELINES}})
    return out


def summary(rows, kind):
    """(tasks, correct, [fast_p count per p], geomean) over the tasks that
    have this baseline."""
    have = [r for r in rows if r["base"][kind]]
    sp = [r["base"][kind] / r["ours"] if r["ours"] else None for r in have]
    fast = [sum(1 for s in sp if s is not None and s > p) for p in PS]
    geo = math.exp(sum(math.log(s if s is not None else 1.0) for s in sp) / len(sp)) if sp else None
    return len(have), sum(1 for s in sp if s is not None), fast, geo


def us(x):
    return "-" if x is None else "%.1f" % x


def times(x):
    return "-" if x is None else "%.2fx" % x


def table(rows, source):
    out = ["# Kernels against PyTorch", "",
           "Baselines: %s." % source, "",
           "| task | floor us | eager us | compile us | ours us | vs eager | vs compile |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        vs = {k: r["base"][k] / r["ours"] if r["ours"] and r["base"][k] else None
              for k, _ in BASELINES}
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["id"], us(r["floor"]), us(r["base"]["eager"]), us(r["base"]["compile"]),
            us(r["ours"]),
            times(vs["eager"]), times(vs["compile"])))
    out += ["", "| over | tasks | correct | %s | geomean speedup |" % " | ".join(
        "fast_%g" % p for p in PS), "|---|---|---|---|---|---|---|"]
    for kind, name in BASELINES:
        n, correct, fast, geo = summary(rows, kind)
        out.append("| %s | %d | %d | %s | %s |" % (
            name, n, correct,
            " | ".join("%.2f (%d/%d)" % (f / n, f, n) if n else "-" for f in fast),
            "%.3fx" % geo if geo is not None else "-"))
    out += ["", "- fast_p: the fraction of the tasks whose best kernel is correct and more than p "
            "times faster than the baseline (KernelBench's definition); every task is in the "
            "denominator, and a task without a correct kernel is not fast.",
            "- geomean: the geometric mean of baseline / ours over the same tasks; a task "
            "without a correct kernel counts 1.0 (its user keeps PyTorch).",
            "- floor: the task's bytes at 4.239 TB/s or its flops at 67 TFLOP/s, whichever "
            "takes longer (an H200's ceilings); ours: the median of the best correct "
            "kernel, \"-\" when none was correct."]
    for kind, name in BASELINES:
        missing = [r["id"] for r in rows if not r["base"][kind]]
        if missing:
            many = len(missing) > 1
            out.append("- %d task%s without a %s time (%s): shown \"-\" and left out of the "
                       "%s row, fast_p and geomean alike; bench/torch-baselines.py measures "
                       "%s." % (len(missing), "s" if many else "", name, ", ".join(missing),
                                name, "them" if many else "it"))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(prog="fastp.py", description=(
        "Our best kernels of a run against PyTorch eager and torch.compile: "
        "a Markdown table with fast_p and geometric-mean speedups."))
    ap.add_argument("rundir", metavar="RUNDIR", help="a run: one folder per task of state-N.jsonl")
    ap.add_argument("--baselines", default=os.environ.get("HTAM_BASELINES") or None,
                    help="a baselines file whose times replace the states' (default $HTAM_BASELINES)")
    ap.add_argument("--tasks", help="count every task of this pack, run or not")
    a = ap.parse_args()
    if not os.path.isdir(a.rundir):
        fail("%s: no such folder" % a.rundir, 2)
    baselines, source = None, "the tasks' baseline_us as the run's states carry them"
    if a.baselines:
        if not os.path.isfile(a.baselines) or not os.access(a.baselines, os.R_OK):
            fail("--baselines %s: no such file, or not readable" % a.baselines, 2)
        try:
            baselines = taskpack.load_baselines(a.baselines)
        except ValueError as e:
            fail(str(e))
        source = "%s (%s, torch %s, %s) over the states' baseline_us" % (
            a.baselines, baselines.get("machine", "?"), baselines.get("torch", "?"),
            baselines.get("date", "?"))
    if a.tasks and not os.path.isdir(a.tasks):
        fail("--tasks %s: no such folder" % a.tasks, 2)
    sys.stdout.write(table(rows_of(a.rundir, a.tasks, baselines), source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
