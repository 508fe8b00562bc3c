#!/usr/bin/env python3
"""torch-baselines.py: PyTorch's own times for the pack's tasks, and an
independent check of kbench's reference outputs. Needs PyTorch;
timing needs a GPU.

usage: torch-baselines.py [-o FILE] [--tasks DIR] [--runs N] [TASK...]
       torch-baselines.py --check DUMPDIR [--tasks DIR]

Timing: for each TASK (default: every task under DIR, else $HTAM_TASKS,
else tasks/), makes the inputs on the GPU from the task's init specs at its
params sizes, and times the task's "torch" expression in PyTorch eager and
under torch.compile (default inductor mode), fp32 with TF32 off: warm-up
calls (for torch.compile after its compilation), then the median of N runs
(default 20), each timed by a pair of CUDA events around one call. Writes
FILE (default bench/results/baselines.json) after every task:

  {"machine": "NVIDIA H200", "torch": "2.11.0+cu130", "cuda": "13.0",
   "date": "2026-12-01", "method": "...", "runs": 20,
   "tasks": {"relu": {"eager": 3086.5, "compile": 3050.2, "compile_s": 9.1},
             "x": {"eager": 10.1, "compile": null, "compile_error": "..."}}}

Times are microseconds; a mode that fails is null with its error, and the
other tasks go on. Entries of an earlier FILE from the same machine and
torch version are kept for the tasks not measured now. ktask --baselines
FILE (or HTAM_BASELINES=FILE) puts them into the task records.

--check DUMPDIR: DUMPDIR holds kbench --dump folders line<N>/size<K>/ with
meta.json, the inputs as <name>.npy and the reference's outputs as
ref_<name>.npy. Evaluates the task's "torch" expression on the dumped
inputs in float64 on the CPU and compares the reference's first output with
it at the task's tolerance. Prints one line per folder and exits 1 if any
reference is outside it (or nothing was found)."""
import argparse
import datetime
import gc
import json
import keyword
import math
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import taskpack  # noqa: E402 (bench/, beside this script)

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    # 69: a required service is missing (scripts/setup installs both)
    print("torch-baselines: needs numpy and PyTorch (%s); run scripts/setup, "
          "or use a python3 that has them" % e, file=sys.stderr)
    sys.exit(69)

WARMUP = 3
DTYPES = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32, "i64": torch.int64,
          "bool": torch.bool}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def method(runs):
    return ("PyTorch eager and torch.compile (default inductor mode), fp32, TF32 off "
            "(matmul and cuDNN); inputs made once per task on the GPU from the task's "
            "init specs at its params (seed 1); per mode %d warm-up calls (for "
            "torch.compile after its compilation), then the median of %d runs, each "
            "timed by a pair of CUDA events around one call; no L2 flush "
            "(every task reads 128 MiB or more, against 50 MB of L2)." % (WARMUP, runs))


def expression(task, sizes):
    """The task's torch expression as a function of its inputs, in order,
    with torch, F, math and the sizes in scope."""
    names = [t["name"] for t in task["inputs"]]
    for n in names:
        if keyword.iskeyword(n) or n in ("torch", "F", "math") or n in sizes:
            raise ValueError("input name '%s' clashes with Python or a size" % n)
    env = {"torch": torch, "F": F, "math": math}
    env.update(sizes)
    return eval("lambda %s: (%s)" % (", ".join(names), task["torch"]), env)


def make_input(spec, ev, gen):
    """One input on the GPU, drawn from its init spec (docs/tasks.md), its
    shape and bounds as ktask --sizes evaluated them (ev)."""
    shape = ev["shapes"][spec["name"]]
    dtype = DTYPES[spec["dtype"]]
    init = spec["init"]
    if init["dist"] == "randint":
        low, high = ev["bounds"][spec["name"]]
        return torch.randint(low, high, shape, generator=gen, device="cuda", dtype=dtype)
    x = torch.empty(shape, dtype=dtype, device="cuda")
    if init["dist"] == "normal":
        x.normal_(init["mean"], init["std"], generator=gen)
    else:
        x.uniform_(init["low"], init["high"], generator=gen)
    sc = init.get("scale")
    if sc:
        u = torch.rand((), generator=gen, device="cuda").item()
        x.mul_(sc["low"] + (sc["high"] - sc["low"]) * u)
    return x


def median_us(fn, args, runs):
    """Warm-up calls, then the median of runs calls timed by CUDA events."""
    for _ in range(WARMUP):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return round(statistics.median(times), 1)


def why(e):
    """An exception in one line, bounded."""
    lines = str(e).strip().splitlines()
    return ("%s: %s" % (type(e).__name__, lines[0] if lines else ""))[:500]


def release():
    gc.collect()
    torch.cuda.empty_cache()


def measure(task, runs):
    """{"eager": us, "compile": us, ...} for one task; a mode that fails
    gets null and "<mode>_error"."""
    rec = {}
    sizes = task["params"]
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    ev = taskpack.evaluated_task(task)
    args = [make_input(t, ev, gen) for t in task["inputs"]]
    fn = expression(task, sizes)
    with torch.no_grad():
        try:
            rec["eager"] = median_us(fn, args, runs)
        except Exception as e:
            rec["eager"], rec["eager_error"] = None, why(e)
        release()
        try:
            compiled = torch.compile(fn)
            t0 = time.monotonic()
            compiled(*args)
            torch.cuda.synchronize()
            rec["compile_s"] = round(time.monotonic() - t0, 1)
            rec["compile"] = median_us(compiled, args, runs)
        except Exception as e:
            rec["compile"], rec["compile_error"] = None, why(e)
        finally:
            compiled = None
            torch._dynamo.reset()
    del args, fn
    release()
    return rec


def write_json(path, doc):
    """Writes doc to path atomically: a half-written file is never read."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def earlier(path, machine, version):
    """The tasks of an earlier baselines file from this machine and torch."""
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError):
        return {}
    if isinstance(old, dict) and old.get("machine") == machine and old.get("torch") == version:
        return dict(old.get("tasks") or {})
    return {}


def tf32_off():
    """fp32 stays fp32: no TF32 in matmuls or cuDNN, eager or compiled.
    torch 2.9 and later have one setting per backend and deprecate the old
    flags (a mix of the two may be refused), so each version gets its own."""
    if hasattr(torch.backends, "fp32_precision"):
        torch.backends.fp32_precision = "ieee"
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")


def time_tasks(tasks, ids, out, runs):
    if not torch.cuda.is_available():
        sys.exit("torch-baselines: no CUDA device: timing needs a GPU")
    tf32_off()
    machine, version = torch.cuda.get_device_name(), torch.__version__
    doc = {"machine": machine, "torch": version, "cuda": torch.version.cuda,
           "date": datetime.date.today().isoformat(), "method": method(runs),
           "runs": runs, "tasks": earlier(out, machine, version)}
    print("torch-baselines: %s, torch %s: %s" % (machine, version, doc["method"]), flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    failed = 0
    for tid in ids:
        try:
            rec = measure(taskpack.load_task(tasks, tid), runs)
        except Exception as e:
            rec = {"eager": None, "compile": None, "error": why(e)}
            release()
        doc["tasks"][tid] = rec
        write_json(out, doc)
        failed += rec.get("eager") is None
        print("%-22s eager %10s us  compile %10s us%s" % (
            tid, rec.get("eager") or "-", rec.get("compile") or "-",
            "".join("  (%s: %s)" % (k, rec[k]) for k in ("error", "eager_error", "compile_error")
                    if k in rec)), flush=True)
    print("torch-baselines: %d tasks timed, %d without an eager time; wrote %s" % (
        len(ids), failed, out), flush=True)
    return 1 if failed else 0


def check(tasks, d):
    """Checks the reference's output in dump folder d against float64
    PyTorch on the same inputs. Returns True when it is within tolerance."""
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    task = taskpack.load_task(tasks, meta["task"])
    args = []
    for t in task["inputs"]:
        x = torch.from_numpy(np.load(os.path.join(d, t["name"] + ".npy")))
        args.append(x.double() if t["dtype"].startswith("f") else x.long())
    with torch.no_grad():
        want = expression(task, meta["sizes"])(*args)
    tol = task["tolerance"]
    out = task["outputs"][0]
    got = torch.from_numpy(np.load(os.path.join(d, "ref_" + out["name"] + ".npy")))
    want = want.reshape(-1)
    got = got.reshape(-1)
    if out["dtype"].startswith("i"):
        bad = int((got.long() != want.long()).sum())
        l2 = 0.0
        ok = bad == 0
    else:
        got = got.double()
        lim = tol["atol"] + tol["rtol"] * want.abs()
        bad = int(((got - want).abs() > lim).sum())
        norm = float(want.norm())
        l2 = float((got - want).norm() / norm) if norm > 0 else float((got - want).norm())
        ok = bad == 0 and l2 <= tol.get("rel_l2", math.inf)
    print("%s %s %s: %d elements, %d outside atol/rtol, rel_l2 %.3g" % (
        "pass" if ok else "FAIL", meta["task"], json.dumps(meta["sizes"]),
        got.numel(), bad, l2))
    return ok


def check_dumps(tasks, dump):
    dirs = sorted(os.path.join(r, x) for r, ds, fs in os.walk(dump) for x in ds
                  if os.path.exists(os.path.join(r, x, "meta.json")))
    results = [check(tasks, d) for d in dirs]
    print("%d checked, %d failed" % (len(results), results.count(False)))
    return 0 if results and all(results) else 1


def main():
    ap = argparse.ArgumentParser(prog="torch-baselines.py", description=(
        "Times PyTorch eager and torch.compile on the pack's tasks into a "
        "baselines file, or (--check) checks kbench's reference dumps against "
        "float64 PyTorch."))
    ap.add_argument("ids", nargs="*", metavar="TASK", help="task ids (default: the whole pack)")
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "bench", "results", "baselines.json"),
                    help="the baselines file (default bench/results/baselines.json)")
    ap.add_argument("--tasks", help="the pack (default $HTAM_TASKS, else tasks/)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per mode (default 20)")
    ap.add_argument("--check", metavar="DUMPDIR", help="check kbench --dump folders instead of timing")
    a = ap.parse_args()
    tasks = taskpack.tasks_dir(a.tasks)
    if a.check:
        if a.ids:
            ap.error("--check takes no TASK")
        return check_dumps(tasks, a.check)
    if not 1 <= a.runs <= 10000:
        ap.error("--runs: from 1 to 10000")
    ids = a.ids or taskpack.pack_ids(tasks)
    for tid in ids:
        if not os.path.isfile(os.path.join(tasks, tid, "task.json")):
            ap.error("%s: no such task under %s" % (tid, tasks))
    return time_tasks(tasks, ids, a.output, a.runs)


if __name__ == "__main__":
    sys.exit(main())
