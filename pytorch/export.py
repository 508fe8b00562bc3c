#!/usr/bin/env python3
"""export.py RECORD -o FILE.py: a kernel as a drop-in PyTorch module.

RECORD is a JSON line holding an imported task and a candidate (the best
of a run, as `htam export` picks it, or any kgen output). FILE.py is the
problem's own source followed by a ModelNew: a subclass of Model (the
same constructor, so the same parameters, initialised the same way) whose
forward launches the candidate's cubin with its launch plan on the
current CUDA stream, through the CUDA driver by ctypes: no build step, no
dependency beyond PyTorch. The cubin comes from kcompile and the launch
plans, evaluated at each of the task's size sets, from ktask --sizes; a
forward at shapes the task does not have (or on tensors not on a CUDA
device, or of other dtypes) runs Model's forward instead, and says so
once. It is a KernelBench solution file: its ModelNew is what
KernelBench's harness loads.
"""
import argparse
import json
import os
import subprocess
import sys

TEMPLATE = r'''

# ---------------------------------------------------------------------------
# Exported by htam (htam export): task %(task)r, candidate %(cand)r
# (%(generator)s%(strategy)s)%(timing)s.
# ModelNew launches the kernel below with its launch plan at the shapes the
# task was checked at; at any other shapes it runs Model.forward.
# ---------------------------------------------------------------------------
import base64 as _htam_base64
import ctypes as _htam_ctypes
import warnings as _htam_warnings

_HTAM_CUBIN = _htam_base64.b64decode(%(cubin)r)
_HTAM_TASK = %(task_json)s
_HTAM_SETS = %(sets_json)s
_HTAM_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
                "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64,
                "bool": torch.bool}


class _HtamLaunchConfig(_htam_ctypes.Structure):
    _fields_ = [("grid", _htam_ctypes.c_uint * 3), ("block", _htam_ctypes.c_uint * 3),
                ("smem", _htam_ctypes.c_uint), ("stream", _htam_ctypes.c_void_p),
                ("attrs", _htam_ctypes.c_void_p), ("num_attrs", _htam_ctypes.c_uint)]


class _HtamLaunchAttribute(_htam_ctypes.Structure):
    # CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value union
    _fields_ = [("id", _htam_ctypes.c_int), ("pad", _htam_ctypes.c_char * 4),
                ("value", _htam_ctypes.c_uint * 16)]


class _HtamDriver:
    """The CUDA driver calls that load the cubin and launch its kernels."""
    CLUSTER_DIMENSION = 4                 # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    MAX_DYNAMIC_SHARED = 8                # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

    def __init__(self):
        self.lib = _htam_ctypes.CDLL("libcuda.so.1")
        self.modules = {}

    def check(self, r, what):
        if r != 0:
            raise RuntimeError("htam ModelNew: %%s failed (CUresult %%d)" %% (what, r))

    def function(self, device, name, smem):
        mod = self.modules.get(device)
        if mod is None:
            mod = _htam_ctypes.c_void_p()
            self.check(self.lib.cuModuleLoadData(_htam_ctypes.byref(mod), _HTAM_CUBIN),
                       "cuModuleLoadData")
            self.modules[device] = mod
        f = _htam_ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(_htam_ctypes.byref(f), mod, name.encode()),
                   "cuModuleGetFunction(%%s)" %% name)
        if smem > 48 * 1024:
            self.check(self.lib.cuFuncSetAttribute(f, self.MAX_DYNAMIC_SHARED, int(smem)),
                       "cuFuncSetAttribute")
        return f

    def launch(self, device, l, buffers, stream):
        kinds = {"i32": _htam_ctypes.c_int32, "i64": _htam_ctypes.c_int64,
                 "f32": _htam_ctypes.c_float, "f64": _htam_ctypes.c_double}
        vals = []
        for a in l["args"]:
            if a["kind"] == "buffer":
                vals.append(_htam_ctypes.c_uint64(buffers[a["buffer"]].data_ptr()))
            else:
                vals.append(kinds[a["kind"]](a["value"]))
        params = (_htam_ctypes.c_void_p * max(len(vals), 1))(
            *[_htam_ctypes.cast(_htam_ctypes.byref(v), _htam_ctypes.c_void_p) for v in vals])
        cfg = _HtamLaunchConfig()
        cfg.grid[:] = l["grid"]
        cfg.block[:] = l["block"]
        cfg.smem = l["smem"]
        cfg.stream = stream
        attr = _HtamLaunchAttribute()
        if l["cluster"][0] * l["cluster"][1] * l["cluster"][2] > 1:
            attr.id = self.CLUSTER_DIMENSION
            attr.value[0:3] = l["cluster"]
            cfg.attrs = _htam_ctypes.cast(_htam_ctypes.byref(attr), _htam_ctypes.c_void_p)
            cfg.num_attrs = 1
        f = self.function(device, l["kernel"], l["smem"])
        self.check(self.lib.cuLaunchKernelEx(_htam_ctypes.byref(cfg), f, params, None),
                   "cuLaunchKernelEx(%%s)" %% l["kernel"])


_htam_driver = None


class ModelNew(Model):
    """Model, with its forward computed by the kernel htam evolved."""

    _htam_warned = False

    def _htam_tensors(self, args):
        ref = _HTAM_TASK["reference"]
        state = dict(self.named_parameters())
        state.update(dict(self.named_buffers()))
        ts = {n: state[k] for n, k in ref["weights"].items()}
        for a, v in zip(ref["args"], args):
            if "input" in a:
                ts[a["input"]] = v
        return ts

    def _htam_set(self, ts):
        for s in _HTAM_SETS:
            if all(isinstance(ts.get(t["name"]), torch.Tensor)
                   and list(ts[t["name"]].shape) == s["shapes"][t["name"]]
                   and ts[t["name"]].dtype == _HTAM_DTYPES[t["dtype"]]
                   and ts[t["name"]].is_cuda for t in _HTAM_TASK["inputs"]):
                return s
        return None

    def forward(self, *args):
        global _htam_driver
        ts = self._htam_tensors(args)
        s = self._htam_set(ts) if len(args) == len(_HTAM_TASK["reference"]["args"]) else None
        if s is None:
            if not ModelNew._htam_warned:
                _htam_warnings.warn("htam ModelNew: shapes, dtypes or devices the kernel was not "
                                    "checked at; running Model.forward")
                ModelNew._htam_warned = True
            return super().forward(*args)
        device = next(iter(ts.values())).device
        with torch.cuda.device(device):
            bufs = {n: t.contiguous() for n, t in ts.items()}
            outs = [torch.empty(s["shapes"][o["name"]], dtype=_HTAM_DTYPES[o["dtype"]], device=device)
                    for o in _HTAM_TASK["outputs"]]
            for o, t in zip(_HTAM_TASK["outputs"], outs):
                bufs[o["name"]] = t
            for w in s["plan"]["workspace"]:
                bufs[w["name"]] = torch.empty(max(w["count"], 1), dtype=_HTAM_DTYPES[w["dtype"]],
                                              device=device)
            if _htam_driver is None:
                _htam_driver = _HtamDriver()
            stream = torch.cuda.current_stream(device).cuda_stream
            for l in s["plan"]["launches"]:
                _htam_driver.launch(device.index, l, bufs, stream)
        return outs[0] if len(outs) == 1 else tuple(outs)
'''


def solution_part(source):
    """The problem without what its harness supplies: imports and
    definitions but its sizes, get_inputs and get_init_inputs."""
    import ast
    tree = ast.parse(source)
    keep = [st for st in tree.body
            if isinstance(st, (ast.Import, ast.ImportFrom, ast.ClassDef))
            or (isinstance(st, ast.FunctionDef) and st.name not in ("get_inputs", "get_init_inputs"))]
    return "\n\n".join(ast.get_source_segment(source, st) for st in keep) + "\n"


def run(cmd, data):
    p = subprocess.run(cmd, input=data, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("htam export: %s: %s" % (cmd[0], p.stderr.strip().splitlines()[-1:] or p.returncode))
    return p.stdout


def main(argv):
    ap = argparse.ArgumentParser(prog="htam export", description=__doc__.splitlines()[0])
    ap.add_argument("record", help="a JSON line with the task and the candidate ('-': stdin)")
    ap.add_argument("-o", "--output", required=True, metavar="FILE.py")
    ap.add_argument("--kernelbench", action="store_true",
                    help="leave out the problem's sizes, get_inputs and get_init_inputs, "
                         "as a KernelBench solution file has")
    a = ap.parse_args(argv)
    text = sys.stdin.read() if a.record == "-" else open(a.record).read()
    lines = [l for l in text.splitlines() if l.strip()]
    if len(lines) != 1:
        sys.exit("htam export: %s: expected one JSON line, not %d" % (a.record, len(lines)))
    rec = json.loads(lines[0])
    task, cand = rec.get("task"), rec.get("candidate")
    if not isinstance(task, dict) or not isinstance(cand, dict):
        sys.exit("htam export: %s: the line needs a task and a candidate" % a.record)
    if not task.get("reference", {}).get("oracle"):
        sys.exit("htam export: task %s is not an imported one (its reference is a CUDA kernel, "
                 "not a PyTorch module to stand in for)" % task.get("id"))
    line = json.dumps({"task": task, "candidate": cand})
    compiled = json.loads(run(["kcompile"], line + "\n"))
    comp = compiled.get("compile", {})
    if not comp.get("ok") or not comp.get("cubin"):
        sys.exit("htam export: the candidate does not compile: %s" % comp.get("reason"))
    sets = json.loads(run(["ktask", "--sizes", "-"], line + "\n"))["sets"]
    slim = {"id": task["id"], "inputs": [{"name": t["name"], "dtype": t["dtype"]} for t in task["inputs"]],
            "outputs": [{"name": t["name"], "dtype": t["dtype"]} for t in task["outputs"]],
            "reference": {k: task["reference"][k] for k in ("args", "weights")}}
    bench = rec.get("bench") or {}
    timing = ""
    if bench.get("time_us"):
        timing = "; measured %.1f us, %s" % (bench["time_us"]["median"], ", ".join(
            "%.2fx %s" % (bench[k], n) for k, n in (("vs_eager", "PyTorch eager"),
                                                  ("vs_compile", "torch.compile")) if bench.get(k)))
    problem = task["reference"]["source"]
    if a.kernelbench:
        problem = solution_part(problem)
    src = problem.rstrip("\n") + "\n" + TEMPLATE % {
        "task": task["id"], "cand": cand.get("id"), "generator": cand.get("generator", "?"),
        "strategy": ", " + cand["strategy"] if cand.get("strategy") else "", "timing": timing,
        "cubin": comp["cubin"], "task_json": json.dumps(slim, indent=1),
        "sets_json": json.dumps(sets)}
    compile(src, a.output, "exec")
    tmp = a.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(src)
    os.replace(tmp, a.output)
    print("htam export: %s: ModelNew of %s (%d size sets)" % (a.output, task["id"], len(sets)),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
