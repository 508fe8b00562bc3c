#!/usr/bin/env python3
"""check_dump.py: checks kbench's reference outputs against an independent
CPU computation in float64: the task's own PyTorch expression ("torch" in
task.json) evaluated on the dumped inputs.

usage: check_dump.py TASKS_DIR DUMP_DIR

DUMP_DIR holds kbench --dump folders line<N>/size<K>/ with meta.json, the
inputs as <name>.npy and the reference's outputs as ref_<name>.npy. Prints
one line per folder and exits 1 if any reference is outside the task's
tolerance."""
import json, math, os, sys
import numpy as np
import torch
import torch.nn.functional as F

def check(tasks, d):
    meta = json.load(open(os.path.join(d, "meta.json")))
    task = json.load(open(os.path.join(tasks, meta["task"], "task.json")))
    env = {"torch": torch, "F": F, "math": math}
    env.update(meta["sizes"])
    for t in task["inputs"]:
        a = np.load(os.path.join(d, t["name"] + ".npy"))
        x = torch.from_numpy(a)
        env[t["name"]] = x.double() if t["dtype"].startswith("f") else x.long()
    with torch.no_grad():
        want = eval(task["torch"], env)
    tol = task["tolerance"]
    ok = True
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
        l2 = float((got - want).norm() / want.norm()) if float(want.norm()) > 0 else float((got - want).norm())
        ok = bad == 0 and l2 <= tol.get("rel_l2", math.inf)
    print("%s %s %s: %d elements, %d outside atol/rtol, rel_l2 %.3g" % (
        "pass" if ok else "FAIL", meta["task"], json.dumps(meta["sizes"]),
        got.numel(), bad, l2))
    return ok

def main():
    tasks, dump = sys.argv[1], sys.argv[2]
    dirs = sorted(os.path.join(r, x) for r, ds, fs in os.walk(dump) for x in ds
                  if os.path.exists(os.path.join(r, x, "meta.json")))
    results = [check(tasks, d) for d in dirs]
    print("%d checked, %d failed" % (len(results), results.count(False)))
    sys.exit(0 if results and all(results) else 1)

main()
