#!/usr/bin/env python3
"""oracle.py: the reference of an imported task, computed by PyTorch.

kbench's worker starts it for a task whose reference is the problem's
own module (reference.oracle "pytorch") and speaks to it in JSON lines:
requests on standard input, answers on descriptor 3 (standard output is
left to the problem's own prints). The worker's device is this process's
device 0 (CUDA_VISIBLE_DEVICES names it).

  {"op": "task", "task": {...}}         load the problem
  {"op": "run", "k": K, "sizes": {...}, "tensors": [T...]}
      compute the outputs at size set K from the inputs, into the outputs
  {"op": "time", "k": 0, "sizes", "tensors", "min_reps", "budget_ms", "compile"}
      PyTorch eager's median time there (and torch.compile's, when asked)

T is {"name", "handle" (a CUDA IPC handle, hex), "offset", "bytes",
"input", "dtype", "shape"}: kbench's buffer, opened here without a copy.
Each answer is {"ok": true, ...} or {"error": "why"}.

oracle.py --check [--device D] [--f64] [--bench] TASKDIR... runs each
imported task's module at every check size set, on inputs drawn as the
task says, and writes one JSON line per set (check's docstring says
more): on the CPU it is what a machine without a GPU can verify of an
import; on the GPU with --f64 it holds the oracle against float64.
"""
import ctypes
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problem import Problem, torch_modules, build, call, draw_tensor, half_type, sizes_of, TORCH_DT  # noqa: E402

# The array interface has no bfloat16: a bf16 buffer is opened as int16
# and viewed (VIEWS); a bool one (bytes of 0 or 1) as uint8, viewed.
TYPESTR = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "bf16": "<i2", "i32": "<i4", "i64": "<i8",
           "bool": "|u1"}
VIEWS = {"bf16": "bfloat16", "bool": "bool"}


def working(task):
    """The type a task's forward runs in for its reference values, each
    output rounded once into its own type: float64 where the task says so
    (reference.work, long sums), fp32 for a task of f16 or bf16 floats,
    else the problem's own (None)."""
    if task["reference"].get("work") == "f64":
        return TORCH_DT["f64"]
    return TORCH_DT["f32"] if half_type(task) else None


class Handle(ctypes.Structure):
    # CUipcMemHandle: 64 opaque bytes (c_ubyte: a c_char array would stop
    # at the first zero byte)
    _fields_ = [("reserved", ctypes.c_ubyte * 64)]


class Driver:
    """The few CUDA driver calls the oracle needs, by ctypes, in the
    context PyTorch made current."""

    def __init__(self):
        lib = ctypes.CDLL("libcuda.so.1")
        self.open_ = lib.cuIpcOpenMemHandle_v2
        self.open_.argtypes = [ctypes.POINTER(ctypes.c_uint64), Handle, ctypes.c_uint]
        self.close_ = lib.cuIpcCloseMemHandle
        self.close_.argtypes = [ctypes.c_uint64]

    def open(self, hexhandle):
        h = Handle()
        raw = bytes.fromhex(hexhandle)
        ctypes.memmove(ctypes.addressof(h), raw, len(raw))
        p = ctypes.c_uint64()
        r = self.open_(ctypes.byref(p), h, 1)   # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
        if r != 0:
            raise RuntimeError("cuIpcOpenMemHandle failed (CUresult %d)" % r)
        return p.value

    def close(self, ptr):
        self.close_(ptr)


class Shared:
    """kbench's buffer as the array interface PyTorch reads without a copy."""

    def __init__(self, ptr, t):
        self.__cuda_array_interface__ = {
            "shape": tuple(t["shape"]), "typestr": TYPESTR[t["dtype"]],
            "data": (ptr, False), "version": 3, "strides": None}


class Oracle:
    def __init__(self):
        self.torch = torch_modules()
        self.problem = None
        self.models = {}
        self.drv = None

    def task(self, msg):
        t = msg["task"]
        self.models = {}
        if self.drv is not None:
            self.torch.cuda.empty_cache()   # the last task's memory, back to kbench
        self.taskj = t
        self.ref = t["reference"]
        self.work = working(t)
        self.problem = Problem(self.ref["source"], self.ref.get("file", "problem.py"),
                               self.ref.get("ties"))
        torch = self.torch
        if self.drv is None:
            torch.cuda.init()
            torch.empty(1, device="cuda")      # the primary context, current here
            self.drv = Driver()
            flush = int(torch.cuda.get_device_properties(0).L2_cache_size) * 2 or (256 << 20)
            self.flush = torch.empty(flush, dtype=torch.uint8, device="cuda")
        return {"ok": True, "torch": torch.__version__, "device": torch.cuda.get_device_name(0)}

    def model(self, k, sizes, double=False):
        """The module at size set k, built on the GPU (its float64 twin when
        double: built again, not cast from the first)."""
        if (k, double) not in self.models:
            ns = self.problem.namespace(sizes_of(self.ref, sizes))
            self.models[k, double] = build(ns, 0, "cuda", double).cuda()
        return self.models[k, double]

    def opened(self, msg):
        """The request's tensors, each opened once (by allocation)."""
        bases, tensors = {}, {}
        try:
            for t in msg["tensors"]:
                if t["handle"] not in bases:
                    bases[t["handle"]] = self.drv.open(t["handle"])
                x = self.torch.as_tensor(Shared(bases[t["handle"]] + t["offset"], t),
                                         device="cuda")
                if t["dtype"] in VIEWS:
                    x = x.view(getattr(self.torch, VIEWS[t["dtype"]]))
                tensors[t["name"]] = x
        except Exception:
            tensors.clear()
            for p in bases.values():
                self.drv.close(p)
            raise
        return bases, tensors

    def outputs(self, result):
        out = result if isinstance(result, (tuple, list)) else [result]
        return list(out)

    def run(self, msg):
        torch = self.torch
        bases, ts = self.opened(msg)
        try:
            t0 = time.monotonic()
            # A task of 2-byte floats is answered in fp32 on its (2-byte)
            # inputs, rounded once into its outputs: the operator's value,
            # which PyTorch's own f16 and bf16 kernels need not give (CUDA's
            # cumsum accumulates in the 2-byte type); one of long sums, in
            # float64 (reference.work). Timing runs them as they are.
            double = self.work == self.torch.float64
            res = self.outputs(call(self.model(msg["k"], msg["sizes"], double), ts, self.ref,
                                    self.work))
            outs = [t for t in self.taskj["outputs"]]
            if len(res) != len(outs):
                raise RuntimeError("the module returned %d outputs, the task has %d"
                                   % (len(res), len(outs)))
            for o, r in zip(outs, res):
                dst = ts[o["name"]]
                if tuple(r.shape) != tuple(dst.shape):
                    raise RuntimeError("output %s: the module's shape is %s, the task's %s"
                                       % (o["name"], tuple(r.shape), tuple(dst.shape)))
                dst.copy_(r)
            torch.cuda.synchronize()
            return {"ok": True, "ms": 1e3 * (time.monotonic() - t0)}
        finally:
            ts.clear()
            for p in bases.values():
                self.drv.close(p)

    def time_of(self, fn, msg):
        """Median of timed forwards (CUDA events around the forward alone),
        the L2 flushed before each, after three warm-ups."""
        torch = self.torch
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times, t0 = [], time.monotonic()
        min_reps = int(msg.get("min_reps") or 10)
        budget = float(msg.get("budget_ms") or 500) / 1e3
        while len(times) < min_reps or (time.monotonic() - t0 < budget and len(times) < 10000):
            self.flush.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
        times.sort()
        return times[len(times) // 2], len(times)

    def time(self, msg):
        bases, ts = self.opened(msg)
        try:
            m = self.model(msg["k"], msg["sizes"])
            eager, reps = self.time_of(lambda: call(m, ts, self.ref), msg)
            out = {"ok": True, "eager_us": eager, "reps": reps}
            if msg.get("compile"):
                cm = self.torch.compile(m)
                out["compile_us"], _ = self.time_of(lambda: call(cm, ts, self.ref), msg)
            return out
        finally:
            ts.clear()
            for p in bases.values():
                self.drv.close(p)


def serve():
    ans = os.fdopen(3, "w")
    o = Oracle()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
            a = getattr(o, msg["op"])(msg)
        except Exception as e:  # the problem's code or the request failed
            s = str(e).strip().splitlines()
            a = {"error": "%s: %s" % (type(e).__name__, s[0][:500] if s else "")}
        if o.drv is not None:
            # PyTorch's cached blocks back to the device: kbench and the
            # other tasks' kbench on this GPU allocate beside the oracle.
            o.torch.cuda.empty_cache()
        ans.write(json.dumps(a) + "\n")
        ans.flush()


def check(argv):
    """oracle.py --check [--device D] [--f64] [--bench] TASKDIR...: each
    imported task's module at every check size set (and, with --bench, at
    the benchmark sizes too when they fit), on inputs drawn as the task
    says, on device D (default cpu), in the type the oracle computes them
    in (working()). With --f64 those outputs are held against float64
    PyTorch's at the task's tolerance, as kbench holds a kernel against the
    oracle's (for a task whose oracle computes in float64, they are its
    outputs rounded once: float64_rounded says whether each is, to the
    bit). One JSON line per size set; exit 1 when
    any failed."""
    import argparse
    ap = argparse.ArgumentParser(prog="oracle.py --check")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--f64", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args(argv)
    torch = torch_modules()
    bad = 0
    for d in a.dirs:
        task = json.load(open(os.path.join(d, "task.json")))
        ref, tol = task["reference"], task["tolerance"]
        problem = Problem(open(os.path.join(d, ref["file"]), encoding="utf-8").read(), ref["file"],
                          ref.get("ties"))
        sets = list(enumerate(task["check_params"], start=1))
        if a.bench:
            sets.insert(0, (0, task["params"]))
        for k, sizes in sets:
            rec = {"task": task["id"], "k": k}
            elems = sum(math.prod(_shape(t["shape"], sizes)) for t in task["inputs"] + task["outputs"])
            if k == 0 and elems > 3e8:
                continue
            try:
                ns = problem.namespace(sizes_of(ref, sizes))
                work = working(task)
                model = build(ns, k, a.device, work == torch.float64)
                gen = torch.Generator().manual_seed(k)
                ts = {t["name"]: draw_tensor(_bounds(t["init"], sizes), _shape(t["shape"], sizes),
                                             TORCH_DT[t["dtype"]], gen).to(a.device)
                      for t in task["inputs"]}
                res = _list(call(model, ts, ref, work))
                if work is not None:
                    res = [r.to(TORCH_DT[o["dtype"]]) for o, r in zip(task["outputs"], res)]
                if len(res) != len(task["outputs"]):
                    raise RuntimeError("%d outputs, the task has %d" % (len(res), len(task["outputs"])))
                for o, r in zip(task["outputs"], res):
                    want = _shape(o["shape"], sizes)
                    if list(r.shape) != want:
                        raise RuntimeError("output %s has shape %s, the task says %s"
                                           % (o["name"], list(r.shape), want))
                    if r.is_floating_point() and not bool(torch.isfinite(r).all()):
                        raise RuntimeError("output %s is not finite" % o["name"])
                if a.f64:
                    r64 = _list(call(build(ns, k, a.device, double=True), ts, ref, torch.float64))
                    worst = 0.0
                    for o, x, y in zip(task["outputs"], res, r64):
                        # where the oracle computes in float64, its outputs
                        # are these rounded once, to the bit
                        rec.setdefault("float64_rounded", {})[o["name"]] = bool(
                            torch.equal(x, y.to(x.dtype)))
                        x, y = x.double(), y.double()
                        n = float(y.norm())
                        rms = n / math.sqrt(max(y.numel(), 1))
                        l2 = float((x - y).norm()) / n if n else float((x - y).norm())
                        lim = tol["atol"] + tol.get("atol_rms", 0) * rms + tol["rtol"] * y.abs()
                        over = float(((x - y).abs() - lim).max())
                        rec.setdefault("rel_l2", {})[o["name"]] = l2
                        worst = max(worst, l2 / tol["rel_l2"] if tol["rel_l2"] else (0 if l2 == 0 else 1e9))
                        if over > 0:
                            raise RuntimeError("output %s: an element is %.3g past the tolerance"
                                               % (o["name"], over))
                        if l2 > tol["rel_l2"]:
                            raise RuntimeError("output %s: relative L2 %.3g against float64 "
                                               "exceeds the tolerance %.3g" % (o["name"], l2, tol["rel_l2"]))
                    rec["of_tolerance"] = worst
                rec["ok"] = True
            except Exception as e:
                bad += 1
                rec.update(ok=False, why="%s: %s" % (type(e).__name__, str(e)[:300]))
            print(json.dumps(rec), flush=True)
    return 1 if bad else 0


def _list(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _shape(shape, sizes):
    out = []
    for d in shape:
        if isinstance(d, int):
            out.append(d)
        else:
            out.append(math.prod(int(f) if f.isdigit() else sizes[f] for f in d.split("*")))
    return out


def _bounds(init, sizes):
    d = dict(init)
    if d["dist"] == "randint":
        for k in ("low", "high"):
            d[k] = _shape([d[k]], sizes)[0] if not str(d[k]).lstrip("-").isdigit() else int(d[k])
    return d


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        import warnings
        warnings.simplefilter("ignore")     # the problems' own (InstanceNorm's, say)
        sys.exit(check(sys.argv[2:]))
    serve()
