#!/usr/bin/env python3
"""importer.py FILE|DIR... [--into DIR]: KernelBench-style problems into task folders.

Each problem file (a Model, get_inputs(), get_init_inputs(), module-level
integer sizes) becomes DIR/<id>/ holding task.json and problem.py (the
file as it is: the oracle runs it). One JSON line per file goes to
standard output ({"file", "status": "imported" | "refused", "task",
"family", "why", "notes"}), and a line a person reads to standard error.
docs/tasks.md ("Imported tasks") states every rule applied here.
"""
import argparse
import inspect
import json
import math
import os
import re
import sys
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from problem import Problem, ProblemError, torch_modules, build, call, draw_tensor, half_type, sizes_of, TORCH_DT  # noqa: E402

torch = torch_modules()
from trace import Trace, flop_terms, skey, RANDOM, VIEWS, COPIES  # noqa: E402
import families  # noqa: E402

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.int64: "i64", torch.int32: "i32", torch.bool: "bool"}
BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "bool": 1}
# The unit roundoff of the 2-byte float types (half an ulp of 1), and
# their smallest subnormal (the ulp of values near 0).
ROUNDOFF = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
TINIEST = {"f16": 2.0 ** -24, "bf16": 2.0 ** -133}
# A check size set runs for real on the CPU, in fp32 and float64, at
# three seeds: these bound its cost.
CHECK_MAX_ELEMENTS = 4_000_000
CHECK_MAX_FLOPS = 2e9
SEEDS = (1, 2, 3)
MARGIN = 8.0
# Rounding error grows with the square root of a sum's length when one
# thread adds in order; kernels (and PyTorch) add in blocks and trees, so
# the growth from the check sizes to the benchmark size is capped at
# that of a 1024-long sequential run.
GROW_MAX = 32.0
# Sizes at or below this stay as the problem has them in every check set
# (kernel sizes, strides, group counts): they shape the problem rather
# than its extent.
KEEP_AT_OR_BELOW = 8


class Refused(Exception):
    """The problem cannot be imported; the message says why."""


# ---------------------------------------------------------------- running

class Run:
    """A problem run once on the meta device at one size set: what
    get_inputs drew, the module, the forward and their traces."""

    def __init__(self, problem, sizes):
        ns = problem.namespace(sizes)
        with torch.device("meta"):
            self.draw = Trace()
            with self.draw:
                args = ns["get_inputs"]()
            init = ns["get_init_inputs"]()
            self.build = Trace()
            with self.build:
                model = ns["Model"](*init)
            self.forward = Trace()
            with torch.no_grad(), self.forward:
                out = model(*args)
        self.args, self.init, self.model = list(args), list(init), model
        self.outs = _outputs(out)
        self.params = list(model.named_parameters()) + list(model.named_buffers())

    def shapes(self):
        """Every tensor's shape: forward tensors, parameters and buffers,
        outputs."""
        ts = [a for a in self.args if isinstance(a, torch.Tensor)]
        return ([list(t.shape) for t in ts] + [list(t.shape) for _, t in self.params]
                + [list(t.shape) for t in self.outs])

    def in_shapes(self):
        ts = [a for a in self.args if isinstance(a, torch.Tensor)]
        return [list(t.shape) for t in ts] + [list(t.shape) for _, t in self.params]

    def terms(self):
        out = []
        for op in self.forward.ops:
            out += flop_terms(op)
        return out


def _outputs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise Refused("forward returns %s, not a tensor or a tuple of tensors" % type(out).__name__)


def meta_run(problem, sizes):
    try:
        return Run(problem, sizes)
    except ProblemError as e:
        raise Refused("the file %s" % e)
    except Refused:
        raise
    except Exception as e:  # the problem's own code failed at these sizes
        raise _Invalid(_short(e))


class _Invalid(Exception):
    pass


def _short(e):
    s = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
    return s[:300]


def real_run(problem, sizes, seed):
    """The problem's own inputs and module at sizes, on the CPU, and its
    forward's outputs: raises _Invalid when the problem fails there."""
    try:
        ns = problem.namespace(sizes)
        torch.manual_seed(seed)
        args = ns["get_inputs"]()
        model = ns["Model"](*ns["get_init_inputs"]())
        with torch.no_grad():
            out = _outputs(model(*args))
    except Refused:
        raise
    except Exception as e:
        raise _Invalid(_short(e))
    for o in out:
        if o.numel() == 0 or 0 in o.shape:
            raise _Invalid("an output is empty")
    return out


# ---------------------------------------------------------------- sizes

def classify_sizes(problem, base):
    """The module-level integers that size the problem (changing one
    changes a tensor's shape), those that only configure it, and the
    ties: integers the problem only runs with equal (batch_size and
    input_shape_0 when a (batch,) tensor broadcasts against a (batch,
    *input_shape) one), member -> the size it follows. An integer that
    breaks the problem on its own is tried with one other of its value,
    then with all of them."""
    sizes, fixed, ties = {}, {}, {}
    ref = base.in_shapes()
    for name, v in problem.sizes.items():
        if name in ties:
            continue
        if v < 1:
            fixed[name] = v
            continue
        try:
            r = meta_run(problem, {name: v + 1})
        except _Invalid as e:
            peers = [m for m, w in problem.sizes.items() if w == v and m != name and m not in ties]
            tie = _tie(problem, name, v, peers, ref)
            if tie is None:
                fixed[name] = (v, "%s=%d breaks the problem (%s)" % (name, v + 1, e))
            else:
                sizes[name] = v
                for m in tie:
                    ties[m] = name
                    sizes.pop(m, None)
                    fixed.pop(m, None)
            continue
        if r.in_shapes() != ref:
            sizes[name] = v
        else:
            fixed[name] = v
    return sizes, fixed, ties


def multiples(problem, base, fixed):
    """The integers that broke the problem at v + 1 but run it at 2 v, at
    other shapes (v + 1 broke a divisibility, an embedding over a head
    count, that 2 v keeps): name -> v. Sizes only where the others give
    no check sets, whose candidates then keep v's factors of two
    (candidates' halving), as few odd values do."""
    ref, out = base.in_shapes(), {}
    for name, f in fixed.items():
        if not isinstance(f, tuple):
            continue
        try:
            r = meta_run(problem, {name: 2 * f[0]})
        except _Invalid:
            continue
        if r.in_shapes() != ref:
            out[name] = f[0]
    return out


def _tie(problem, name, v, peers, ref):
    """The smallest set of peers that, moved with name from v to v + 1,
    runs the problem at other shapes: one peer, else all; None if none."""
    for group in [[m] for m in peers] + ([peers] if len(peers) > 1 else []):
        try:
            r = meta_run(problem, dict({m: v + 1 for m in group}, **{name: v + 1}))
        except _Invalid:
            continue
        if r.in_shapes() != ref:
            return group
    return None


ODD = [7, 11, 13, 9, 17, 5, 19, 23, 15, 21, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43]


def candidates(sizes, scaled=False):
    """Size sets to try as check sets, best first: distinct small odd
    values; the problem's sizes halved down to 8..32 (keeping the
    divisibility they had), plus one; then a few seeded random draws;
    scaled, last, every large size that one power of two (8 to 64)
    divides over it, so that the sizes keep the divisibility they have
    with one another (an image over its patch, a width over its head
    count)."""
    big = [n for n, v in sizes.items() if v > KEEP_AT_OR_BELOW]
    keep = {n: v for n, v in sizes.items() if v <= KEEP_AT_OR_BELOW}
    if not big:
        return
    order = sorted(big, key=lambda n: -sizes[n])
    for shift in range(0, 4):
        vals = ODD[shift:] + ODD[:shift]
        yield dict(keep, **{n: vals[i % len(vals)] for i, n in enumerate(order)})
        yield dict(keep, **{n: list(reversed(vals[:len(order)]))[i] for i, n in enumerate(order)})

    def halve(v, top):
        while v > top and v % 2 == 0:
            v //= 2
        return v if v <= 4 * top else top + 1
    for top in (32, 16, 64):
        h = {n: halve(sizes[n], top) for n in big}
        yield dict(keep, **h)
        yield dict(keep, **{n: v + 1 for n, v in h.items()})
        yield dict(keep, **{n: v + (1 if i % 2 else 0) for i, (n, v) in enumerate(h.items())})
    # one size at a time (a batch, say), the others as the problem has them
    for n in order:
        for v in (3, 5, 2, 1):
            if v < sizes[n]:
                yield dict(sizes, **{n: v})
    import random
    rng = random.Random(12345)
    for _ in range(24):
        yield dict(keep, **{n: rng.choice([3, 5, 6, 7, 9, 10, 11, 12, 13, 15, 16, 17, 20, 24, 31, 32])
                            for n in big})
    for d in ((8, 16, 32, 64) if scaled else ()):
        yield dict(keep, **{n: sizes[n] // d if sizes[n] % d == 0 else sizes[n] for n in big})


def cost_ok(run):
    elems = sum(int(torch.Size(s).numel()) for s in run.shapes())
    flops = sum(c * math.prod(d) for c, d in run.terms())
    return elems <= CHECK_MAX_ELEMENTS and flops <= CHECK_MAX_FLOPS


def _check_run(problem, cand, base_run):
    """The meta run of a check set that runs like the benchmark's (the same
    operations; on the CPU too, for real), or None where it costs more than
    a CPU check may; raises _Invalid where it does not run so."""
    r = meta_run(problem, cand)
    if not cost_ok(r):
        return None
    if len(r.forward.ops) != len(base_run.forward.ops) or \
            [o.name for o in r.forward.ops] != [o.name for o in base_run.forward.ops]:
        raise _Invalid("the forward runs other operations at these sizes")
    real_run(problem, cand, 1)
    return r


# The innermost axis of the vector check set: a multiple of this many values,
# a 16-byte vector's of every float type (and two of f32's).
ALIGN = 16


def aligned_check(problem, chosen, runs, base_run):
    """One more check set, for the kernels' vector paths: the first one's,
    with the size that names the first input's last axis (the same size in
    every check set) rounded up to a multiple of ALIGN, so that rows are
    whole 16-byte vectors while the other sizes stay odd; None where no
    one size names that axis (a literal keeps the problem's own), it is
    already a multiple, or the set does not run. The odd sets leave every
    row a tail; without this one, a vector path met only the benchmark's
    sizes."""
    last = [r.in_shapes()[0][-1] if r.in_shapes() and r.in_shapes()[0] else None for r in runs]
    names = [n for n in chosen[0] if all(c.get(n) == v for c, v in zip(chosen, last))]
    if len(names) != 1:
        return None
    n, v = names[0], chosen[0][names[0]]
    cand = dict(chosen[0], **{n: max(ALIGN, -(-v // ALIGN) * ALIGN)})
    if cand[n] == v or cand in chosen:
        return None
    try:
        r = _check_run(problem, cand, base_run)
    except _Invalid:
        return None
    return (cand, r) if r else None


def choose_checks(problem, sizes, base_run, want=3, scaled=False):
    """At least two check size sets on which the problem runs (on the CPU,
    for real), each different from the benchmark sizes and from the
    others, and the aligned one (aligned_check) where there is one; the
    first error seen when none is found."""
    chosen, runs, first_err, costly = [], [], None, 0
    base = {n: v for n, v in sizes.items()}
    for cand in candidates(sizes, scaled):
        if cand == base or cand in chosen:
            continue
        try:
            r = _check_run(problem, cand, base_run)
        except _Invalid as e:
            first_err = first_err or str(e)
            continue
        if r is None:
            costly += 1
            continue
        chosen.append(cand)
        runs.append(r)
        if len(chosen) == want:
            break
    if len(chosen) < 2:
        why = [first_err] if first_err else []
        if costly:
            why.append("%d size sets that run cost more than a CPU check may (%d elements, "
                       "%.0e flops)" % (costly, CHECK_MAX_ELEMENTS, CHECK_MAX_FLOPS))
        raise Refused("no two small size sets on which the problem runs%s" %
                      (" (%s)" % "; ".join(why) if why else ""))
    a = aligned_check(problem, chosen, runs, base_run)
    if a and a[0] != base:
        chosen.append(a[0])
        runs.append(a[1])
    return chosen, runs


class Dims:
    """Names for dimensions, by the vector of their values over the size
    sets: a constant is a number, a size's vector is its name, and any
    other vector gets a new derived name that each size set carries."""

    def __init__(self, sets):
        self.sets = sets             # list of dicts, params first
        self.names = list(sets[0])
        self.by_vec = {}
        for n in self.names:
            self.by_vec.setdefault(tuple(s[n] for s in sets), n)
        self.derived = 0

    def name(self, vec, hint):
        vec = tuple(int(v) for v in vec)
        if len(set(vec)) == 1:
            return vec[0]
        if vec in self.by_vec:
            return self.by_vec[vec]
        for a in self.names:
            for b in self.names:
                if a <= b and tuple(s[a] * s[b] for s in self.sets) == vec:
                    return "%s*%s" % (a, b)
        name = re.sub(r"\W", "_", hint)
        while name in self.sets[0]:
            self.derived += 1
            name = "%s_%d" % (re.sub(r"\W", "_", hint), self.derived)
        for s, v in zip(self.sets, vec):
            s[name] = v
        self.by_vec[vec] = name
        return name

    def product(self, factors):
        """A size expression for the product of dimension vectors."""
        num, names = 1, []
        for f in factors:
            if isinstance(f, int):
                num *= f
            else:
                names.append(f)
        parts = ([str(num)] if num != 1 or not names else []) + sorted(names)
        return "*".join(parts)


# ---------------------------------------------------------------- inputs

def _affine(dist, mul=1.0, add=0.0):
    d = dict(dist)
    if d["dist"] == "uniform":
        lo, hi = d["low"] * mul + add, d["high"] * mul + add
        d["low"], d["high"] = min(lo, hi), max(lo, hi)
    elif d["dist"] == "normal":
        d["mean"], d["std"] = d["mean"] * mul + add, abs(d["std"] * mul)
    else:
        return None
    return d


def provenance(trace, runs_per_set=None):
    """Storage key -> (distribution, note) of the tensors a trace drew:
    rand is uniform(0, 1), randn normal(0, 1), randint its bounds, scalar
    affine maps move them; anything else keeps the draw it started from,
    with a note that the problem transformed it."""
    prov = {}
    for op in trace.ops:
        if not op.outs or not isinstance(op.outs[0], torch.Tensor):
            continue
        out = op.outs[0]
        n, a = op.name, op.args
        if n == "aten.rand.default":
            prov[skey(out)] = ({"dist": "uniform", "low": 0.0, "high": 1.0}, None)
        elif n == "aten.randn.default":
            prov[skey(out)] = ({"dist": "normal", "mean": 0.0, "std": 1.0}, None)
        elif n in ("aten.randint.low", "aten.randint.default"):
            lo, hi = (a[0], a[1]) if n == "aten.randint.low" else (0, a[0])
            prov[skey(out)] = ({"dist": "randint", "low": int(lo), "high": int(hi)}, None)
        elif n in ("aten.ones.default", "aten.zeros.default", "aten.full.default"):
            v = 1.0 if "ones" in n else 0.0 if "zeros" in n else float(a[1])
            prov[skey(out)] = ({"dist": "constant", "value": v}, None)
        else:
            src = [t for t in op.tensors() if skey(t) in prov]
            if not src:
                continue
            d, note = prov[skey(src[0])]
            scal = [x for x in a[1:] if isinstance(x, (int, float)) and not isinstance(x, bool)]
            nd = None
            if n == "aten.mul.Tensor" and len(src) == 2 and "scale" not in d:
                # a draw times a random scalar: kbench's per-seed scale
                big, small = sorted(src, key=lambda t: -t.dim())
                ds, _ = prov[skey(small)]
                if small.dim() == 0 and ds["dist"] == "uniform" and big.dim() > 0:
                    d0, note = prov[skey(big)]
                    if d0["dist"] in ("uniform", "normal"):
                        prov[skey(out)] = (dict(d0, scale=dict(ds)), note)
                        continue
            if n in VIEWS or n in ("aten.clone.default", "aten.contiguous.default"):
                nd = d
            elif d["dist"] in ("uniform", "normal") and len(src) == 1 and src[0] is a[0] and len(scal) == 1:
                c = float(scal[0])
                nd = {"aten.mul.Tensor": lambda: _affine(d, mul=c),
                      "aten.add.Tensor": lambda: _affine(d, add=c * float(op.kwargs.get("alpha", 1))),
                      "aten.sub.Tensor": lambda: _affine(d, add=-c * float(op.kwargs.get("alpha", 1))),
                      "aten.div.Tensor": lambda: _affine(d, mul=1.0 / c) if c else None,
                      }.get(n, lambda: None)()
            if nd is None:
                note = note or "the problem's get_inputs transforms its draw (%s)" % n.replace("aten.", "")
                nd = d
            prov[skey(out)] = (nd, note)
    return prov


def init_provenance(trace):
    """Storage key -> distribution of parameters and buffers as the
    module's constructor initialised them (the last write wins)."""
    prov = {}
    for op in trace.ops:
        n, a = op.name, op.args
        t = a[0] if a and isinstance(a[0], torch.Tensor) else None
        out = op.outs[0] if op.outs and isinstance(op.outs[0], torch.Tensor) else None
        if n == "aten.uniform_.default" and t is not None:
            lo = float(a[1]) if len(a) > 1 else float(op.kwargs.get("from", 0.0))
            hi = float(a[2]) if len(a) > 2 else float(op.kwargs.get("to", 1.0))
            prov[skey(t)] = {"dist": "uniform", "low": lo, "high": hi}
        elif n == "aten.normal_.default" and t is not None:
            m = float(a[1]) if len(a) > 1 else float(op.kwargs.get("mean", 0.0))
            s = float(a[2]) if len(a) > 2 else float(op.kwargs.get("std", 1.0))
            prov[skey(t)] = {"dist": "normal", "mean": m, "std": s}
        elif n == "aten.fill_.Scalar" and t is not None:
            prov[skey(t)] = {"dist": "constant", "value": float(a[1])}
        elif n == "aten.zero_.default" and t is not None:
            prov[skey(t)] = {"dist": "constant", "value": 0.0}
        elif out is not None and n in ("aten.rand.default", "aten.randn.default", "aten.ones.default",
                                       "aten.zeros.default", "aten.full.default"):
            prov[skey(out)] = {"aten.rand.default": {"dist": "uniform", "low": 0.0, "high": 1.0},
                               "aten.randn.default": {"dist": "normal", "mean": 0.0, "std": 1.0},
                               "aten.ones.default": {"dist": "constant", "value": 1.0},
                               "aten.zeros.default": {"dist": "constant", "value": 0.0},
                               }.get(n) or {"dist": "constant", "value": float(a[1])}
    return prov


def empirical_init(problem, sizes, key, notes):
    """A parameter's distribution from its values when the constructor's
    trace does not show it (torch.tensor(2.0), a copy): the module built
    twice, with two seeds, at a check size. The same values both times
    are a constant; else uniform or normal by their spread."""
    vals = []
    for seed in (1, 2):
        ns = problem.namespace(sizes)
        torch.manual_seed(seed)
        m = ns["Model"](*ns["get_init_inputs"]())
        buffers = dict(m.named_buffers())
        st = dict(m.named_parameters())
        st.update(buffers)
        shape = st[key].shape
        vals.append(st[key].detach().double().flatten())
    a, b = vals
    if torch.equal(a, b):
        if a.numel() and bool((a == a[0]).all()):
            return {"dist": "constant", "value": float(a[0])}
        # A causal mask: the module's own values, which no seed changes.
        if key in buffers and len(shape) >= 2 and \
                torch.equal(a.view(shape), torch.ones(shape, dtype=torch.float64).tril()):
            notes.append("buffer %s: a lower triangle of ones (a causal mask), kept as the "
                         "module makes it" % key)
            return {"dist": "tril"}
        notes.append("parameter %s: set from values htam cannot draw; drawn from their range" % key)
        lo, hi = float(a.min()), float(a.max())
        return {"dist": "uniform", "low": lo, "high": hi if hi > lo else lo + 1}
    x = torch.cat(vals)
    mean, std = float(x.mean()), float(x.std()) if x.numel() > 1 else 1.0
    lo, hi = float(x.min()), float(x.max())
    if std > 0 and hi - lo <= 3.8 * std:   # a uniform's range is 3.46 std; a normal's grows
        w = math.sqrt(3) * std
        d = {"dist": "uniform", "low": mean - w, "high": mean + w}
    else:
        d = {"dist": "normal", "mean": mean, "std": std or 1.0}
    notes.append("parameter %s: initialised by code htam does not trace; drawn as %s, "
                 "estimated from its values" % (key, _dist_text(d)))
    return d


def task_init(dist, dtype, what):
    """The task's init for a distribution: constants become a draw around
    the constant (a kernel that assumes a norm's weight is one, or its
    bias zero, must fail), with a note."""
    isint = dtype in ("i32", "i64")
    if dist["dist"] == "tril":
        return dict(dist), None
    if dtype == "bool":
        fair = dist["dist"] == "randint" and int(dist["low"]) == 0 and int(dist["high"]) == 2
        return {"dist": "randint", "low": 0, "high": 2}, \
            None if fair else "%s: a mask; htam draws it fair (each place 0 or 1, as randint(0, 2))" % what
    if dist["dist"] == "constant":
        c = dist["value"]
        if isint:
            return {"dist": "randint", "low": str(int(c)), "high": str(int(c) + 1)}, None
        w = max(abs(c), 1.0) / 2
        return ({"dist": "uniform", "low": c - w, "high": c + w},
                "%s: the problem sets it to %g; htam draws it from [%g, %g] so that a kernel "
                "assuming the constant fails" % (what, c, c - w, c + w))
    if dist["dist"] == "randint":
        if not isint:
            return ({"dist": "uniform", "low": float(dist["low"]), "high": float(dist["high"])},
                    "%s: integers cast to floats in the problem; htam draws floats from [%g, %g)"
                    % (what, dist["low"], dist["high"]))
        return dict(dist), None
    if isint:
        return {"dist": "randint", "low": "0", "high": "2"}, "%s: an integer tensor of a float draw" % what
    if dist["dist"] == "uniform" and dist["low"] >= dist["high"]:
        return {"dist": "uniform", "low": dist["low"] - 0.5, "high": dist["low"] + 0.5}, \
            "%s: an empty range widened" % what
    return dict(dist), None


# ---------------------------------------------------------------- tolerance

def evaluate_randint_bounds(spec, sizes):
    """randint bounds are size expressions (a size's name or a number)."""
    d = dict(spec)
    for k in ("low", "high"):
        if d["dist"] == "randint" and isinstance(d[k], str):
            d[k] = int(sizes[d[k]]) if d[k] in sizes else int(d[k])
    return d


def trials(problem, task, sets):
    """(sizes, tensors, fp32 outputs, float64 outputs) at every check set
    and seed, on the CPU, on inputs drawn as the task says (for a task of
    f16 or bf16 floats, drawn in its type and then widened: the oracle's
    fp32 forward on the 2-byte inputs)."""
    for k, sizes in enumerate(sets[1:], start=1):
        ns = problem.namespace(sizes_of(task["reference"], sizes))
        for seed in SEEDS:
            gen = torch.Generator().manual_seed(1000 * k + seed)
            model = build(ns, seed)
            tensors = {}
            for t in task["inputs"]:
                tensors[t["name"]] = draw_tensor(evaluate_randint_bounds(t["init"], sizes),
                                                 _eval_shape(t["shape"], sizes),
                                                 TORCH_DT[t["dtype"]], gen)
            y32 = _outputs(call(model, tensors, task["reference"], torch.float32))
            y64 = _outputs(call(build(ns, seed, double=True), tensors, task["reference"],
                                torch.float64))
            yield sizes, tensors, y32, y64


def measure(problem, task, sets):
    """Worst errors of the fp32 forward against the float64 one over the
    check sets and seeds: relative L2, the largest element error in units
    of the output's rms, and whether every output was all zeros."""
    worst_l2 = worst_el = 0.0
    zero_everywhere = True
    for sizes, _, y32, y64 in trials(problem, task, sets):
        for a, b in zip(y32, y64):
            if not a.dtype.is_floating_point:
                if not torch.equal(a.long(), b.long()):
                    worst_l2 = max(worst_l2, 1e-7)
                continue
            b64 = b.double()
            d = (a.double() - b64)
            nb = float(b64.norm())
            if not math.isfinite(nb) or not math.isfinite(float(d.norm())):
                raise Refused("the forward gives non-finite values at check sizes %s" % _sz(sizes))
            if nb == 0:
                continue
            zero_everywhere = False
            rms = nb / math.sqrt(b64.numel())
            worst_l2 = max(worst_l2, float(d.norm()) / nb)
            worst_el = max(worst_el, float(d.abs().max()) / rms)
    return worst_l2, worst_el, zero_everywhere


def passes(got, want, tol):
    """Would kbench take got for want at tolerance tol?"""
    got, want = got.double(), want.double()
    n = float(want.norm())
    rms = n / math.sqrt(max(want.numel(), 1))
    lim = tol["atol"] + tol.get("atol_rms", 0) * rms + tol["rtol"] * want.abs()
    if bool(((got - want).abs() > lim).any()):
        return False
    l2 = float((got - want).norm())
    return (l2 / n if n else l2) <= tol["rel_l2"]


def null_kernels(task, tensors):
    """The null-kernel gate's kernels as outputs: zeros, a constant 1, a
    copy of each input with as many elements as the output."""
    yield "writes zeros", lambda o: torch.zeros_like(o)
    yield "writes 1", lambda o: torch.ones_like(o)
    for t in task["inputs"]:
        x = tensors[t["name"]]
        yield "copies its input %s" % t["name"], (
            lambda o, x=x: x.reshape(o.shape).to(o.dtype) if x.numel() == o.numel() else None)


def gate(problem, task, sets):
    """The first null kernel that passes at every check set and seed (so
    that kbench could not tell it from the operator), or None."""
    alive = None
    for _, tensors, _, y64 in trials(problem, task, sets):
        now = set()
        for name, make in null_kernels(task, tensors):
            if all((g := make(w)) is not None and passes(g, w, task["tolerance"]) for w in y64):
                now.add(name)
        alive = now if alive is None else alive & now
        if not alive:
            return None
    return sorted(alive)[0] if alive else None


def _eval_shape(shape, sizes):
    out = []
    for d in shape:
        if isinstance(d, int):
            out.append(d)
        else:
            v = 1
            for f in d.split("*"):
                v *= int(f) if f.isdigit() else sizes[f]
            out.append(v)
    return out


def _sz(sizes):
    return " ".join("%s=%s" % kv for kv in sizes.items())


# ---------------------------------------------------------------- import

def task_id(path):
    base = os.path.splitext(os.path.basename(path))[0]
    level = os.path.basename(os.path.dirname(os.path.abspath(path)))
    m = re.match(r"level(\d+)$", level)
    prefix = "kb%s_" % m.group(1) if m else ""
    tid = re.sub(r"[^A-Za-z0-9_-]+", "_", prefix + base).strip("_").lower()
    return tid[:64], ("%s/%s" % (level, base) if m else None)


def import_file(path, into):
    notes = []
    src = open(path, encoding="utf-8").read()
    try:
        problem = Problem(src, os.path.basename(path))
    except SyntaxError as e:
        raise Refused("not Python: %s" % e)
    try:
        base = meta_run(problem, {})
    except _Invalid as e:
        raise Refused("the problem does not run at its own sizes on the meta device (%s)" % e)
    rnd = sorted({o.name for o in base.forward.ops if o.name in RANDOM})
    if rnd:
        raise Refused("the forward is random (%s): no kernel can match it" %
                      ", ".join(r.replace("aten.", "") for r in rnd))
    sizes, fixed, ties = classify_sizes(problem, base)
    problem.ties = ties
    if not sizes:
        broke = [f[1] for f in fixed.values() if isinstance(f, tuple)]
        raise Refused("no module-level integer can change, on its own or with others of its value, "
                      "to give other sizes" + (": %s" % broke[0] if broke else " (none shapes a tensor)"))

    try:
        checks, check_runs = choose_checks(problem, sizes, base)
    except Refused as first:
        # no check sets with those integers fixed that broke it at v + 1:
        # once more with those that run at 2 v as sizes too (minGPT's
        # block: 768 x 3072 weights at any n_embd over its n_head)
        more = multiples(problem, base, fixed)
        if not more:
            raise
        try:
            checks, check_runs = choose_checks(problem, dict(sizes, **more), base, scaled=True)
        except Refused:
            raise first from None
        sizes = dict(sizes, **more)

    # Inputs: the forward's tensors, then parameters and buffers.
    sig = inspect.signature(type(base.model).forward)
    pnames = [p for p in sig.parameters if p != "self"]
    var = any(sig.parameters[p].kind == inspect.Parameter.VAR_POSITIONAL for p in pnames)
    arg_names = []
    for i, a in enumerate(base.args):
        n = pnames[i] if i < len(pnames) and not var else "in%d" % i
        arg_names.append(re.sub(r"\W", "_", n))
    prov = provenance(base.draw)
    iprov = init_provenance(base.build)
    ref_args, inputs, weights, used = [], [], {}, set()

    def uniq(n):
        n = re.sub(r"\W", "_", n)
        if n[0].isdigit():
            n = "t_" + n
        while n in used or n in sizes or n == "v":
            n += "_"
        used.add(n)
        return n

    tensor_objs = {}
    for name, a in zip(arg_names, base.args):
        if isinstance(a, torch.Tensor):
            dt = DTYPES.get(a.dtype)
            if not dt:
                raise Refused("input %s is %s (htam serves f32, f64, f16, bf16, i32, i64, bool)"
                              % (name, a.dtype))
            n = uniq(name)
            d, note = prov.get(skey(a), (None, None))
            if d is None:
                raise Refused("input %s: get_inputs makes it without a random draw htam knows" % n)
            init, n2 = task_init(d, dt, "input " + n)
            inputs.append({"name": n, "dtype": dt, "init": init})
            for x in (note and "input %s: %s; htam draws it as %s" % (n, note, _dist_text(init)), n2):
                if x:
                    notes.append(x)
            ref_args.append({"input": n})
            tensor_objs[n] = a
        elif isinstance(a, (int, float, bool)) or a is None:
            ref_args.append({"value": a})
        else:
            raise Refused("input %d is a %s" % (len(ref_args), type(a).__name__))
    for key, t in base.params:
        dt = DTYPES.get(t.dtype)
        if not dt:
            raise Refused("parameter %s is %s" % (key, t.dtype))
        n = uniq(key.replace(".", "_"))
        d = iprov.get(skey(t)) or empirical_init(problem, checks[0], key, notes)
        init, n2 = task_init(d, dt, "parameter " + key)
        if n2:
            notes.append(n2)
        inputs.append({"name": n, "dtype": dt, "init": init})
        weights[n] = key
        tensor_objs[n] = t
    for i, o in enumerate(base.outs):
        if o.dtype not in DTYPES or o.dtype == torch.bool:
            raise Refused("output %d is %s" % (i, o.dtype)
                          + (" (a bool is an input's type, a mask)" if o.dtype == torch.bool else ""))
    if not inputs:
        raise Refused("the forward reads no tensor")

    sets = [dict(sizes)] + [dict(c) for c in checks]
    runs = [base] + check_runs
    dims = Dims(sets)

    def shape_of(getter, hint):
        vecs = list(zip(*[getter(r) for r in runs]))
        return [dims.name(v, "%s_%d" % (hint, i)) for i, v in enumerate(vecs)]

    n_args = len([a for a in base.args if isinstance(a, torch.Tensor)])
    for i, t in enumerate(inputs):
        t["shape"] = shape_of(lambda r, i=i: r.in_shapes()[i], t["name"])
    outputs = []
    for i, o in enumerate(base.outs):
        name = uniq("y" if i == 0 else "y%d" % (i + 1))
        outputs.append({"name": name, "dtype": DTYPES[o.dtype],
                        "shape": shape_of(lambda r, i=i: [int(x) for x in r.outs[i].shape], name)})
    # randint bounds: size expressions over the sets' own values.
    for i, t in enumerate(inputs[:n_args]):
        if t["init"]["dist"] != "randint" or t["dtype"] not in ("i32", "i64"):
            continue
        highs = []
        for r in runs:
            ts = [x for x in r.args if isinstance(x, torch.Tensor)]
            highs.append(provenance(r.draw)[skey(ts[i])][0].get("high", 1))
        t["init"]["high"] = str(dims.name(highs, t["name"] + "_high"))
        t["init"]["low"] = str(t["init"]["low"])

    # bytes and flops over the size names.
    def bytes_expr(t):
        n = dims.product(t["shape"])
        return str(BYTES[t["dtype"]]) if n == "1" else "%d*%s" % (BYTES[t["dtype"]], n)
    bytes_terms = [bytes_expr(t) for t in inputs + outputs]
    term_lists = [r.terms() for r in runs]
    if len({len(tl) for tl in term_lists}) != 1:
        raise Refused("the forward's operations differ between size sets")
    flops = {}
    for j in range(len(term_lists[0])):
        coef = term_lists[0][j][0]
        factors = [dims.name([tl[j][1][f] for tl in term_lists], "f%d" % j)
                   for f in range(len(term_lists[0][j][1]))]
        e = dims.product(factors)
        flops[e] = flops.get(e, 0) + coef
    flops_expr = " + ".join(("%d*%s" % (c, e) if c != 1 else e) for e, c in sorted(flops.items())) or "0"

    # The family, from the forward's graph at the benchmark sizes.
    graph_inputs = {t["name"]: tensor_objs[t["name"]] for t in inputs}
    inits = {t["name"]: t["init"] for t in inputs}
    fam, spec, why_not = families.recognise(base.forward.ops, graph_inputs, base.outs, inits)
    then = None
    if fam:
        def run_inputs(r):
            ts = [a for a in r.args if isinstance(a, torch.Tensor)] + [p for _, p in r.params]
            return dict(zip(graph_inputs, ts))
        others = [families.recognise(r.forward.ops, run_inputs(r), r.outs, inits) for r in check_runs]
        spec, why_not = families.settle(fam, spec, [o[1] if o[0] == fam else None for o in others])
        fam = fam if spec else None
    if fam:
        # A family whose kernels take the inputs in another order than the
        # problem declared them (gemm: A, B, then the bias) names it; the
        # oracle and the export take the inputs by name.
        order = spec.pop("_inputs", None)
        if order:
            inputs.sort(key=lambda t: order.index(t["name"]))
        then = spec.pop("_then", None)
        # the first stage's inputs, named where a later stage reads one of
        # them too (a residual)
        first = spec.pop("_first", None)
        if not then or not set(first or []) & {n for st in then for n in st["inputs"]}:
            first = None

        def sized(spec):
            return {k: _spec_dim(v, k, dims, runs, base)
                    if isinstance(v, list) and all(isinstance(f, (tuple, int)) for f in v) else v
                    for k, v in spec.items()}
        spec = sized(spec)
        # a chain's later stages (docs/tasks.md, "Chains"): each reads the
        # buffer the stage before writes, of the shape and type given
        then = [{"family": st["family"], "spec": sized(st["spec"]),
                 "from": {"shape": [_spec_dim([f], "then%d" % j, dims, runs, base)
                                    for f in st["shape"]], "dtype": DTYPES[st["dtype"]]},
                 "inputs": st["inputs"]} for j, st in enumerate(then or [])]
    tid, kb = task_id(path)
    task = {
        "id": tid,
        "description": (problem.docline() or "KernelBench %s" % (kb or tid))
        + " (imported from %s)" % (kb or os.path.basename(path)),
        "torch": problem.forward_text(),
        "family": fam or "none",
        "spec": spec or {},
        **({"then": then} if then else {}),
        **({"first_inputs": first} if fam and first else {}),
        "params": sets[0],
        "check_params": sets[1:],
        "inputs": inputs,
        "outputs": outputs,
        "bytes": " + ".join(bytes_terms),
        "flops": flops_expr,
        "reference": {"oracle": "pytorch", "file": "problem.py", "sizes": list(sizes),
                      "args": ref_args, "weights": weights},
    }
    if ties:
        task["reference"]["ties"] = ties
    if kb:
        task["kernelbench"] = kb
    # Tolerance, by the policy of docs/tasks.md; then the null-kernel gate:
    # inputs that cannot tell a null kernel from the operator (relu of
    # uniform(0, 1) draws is a copy) are widened to both signs, and if that
    # is not enough (hardtanh of uniform(-1, 1) is a copy too), to four
    # times that range.
    widened = []
    for stage in range(3):
        l2, el, zero = measure(problem, task, sets)
        if zero and all(DTYPES[o.dtype].startswith("f") for o in base.outs):
            raise Refused("the output is all zeros at every check size: a kernel writing zeros "
                          "would pass")
        task["tolerance"] = tolerance(l2, el, runs, base, fam, half_type(task))
        if answers_in_f64(runs, base, outputs):
            task["reference"]["work"] = "f64"
            task["tolerance"]["why"] += ("; the oracle computes the reference in float64 (the "
                                         "forward's sums are long), rounded once into fp32")
        if all(o["dtype"].startswith("i") for o in outputs):
            task["tolerance"] = {"atol": 0, "rtol": 0, "rel_l2": 0, "atol_rms": 0,
                                 "why": "integer outputs must match the oracle's exactly"}
        null = gate(problem, task, sets)
        if not null:
            break
        if stage == 0:
            widened = [t for t in inputs[:n_args] if t["init"]["dist"] == "uniform" and t["init"]["low"] >= 0]
        if stage == 2 or not widened:
            raise Refused("a kernel that %s would pass at every check size: the problem's inputs "
                          "cannot tell it from the operator" % null)
        for t in widened:
            if stage == 0:
                t["init"]["low"] = -t["init"]["high"]
            else:
                t["init"]["low"], t["init"]["high"] = 4 * t["init"]["low"], 4 * t["init"]["high"]
            notes.append("input %s: widened to uniform(%g, %g): on the %s draws a kernel that %s "
                         "would pass" % (t["name"], t["init"]["low"], t["init"]["high"],
                                         "problem's own" if stage == 0 else "two-signed", null))
    out_dir = os.path.join(into, tid)
    tmp = out_dir + ".tmp%d" % os.getpid()
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, "problem.py"), "w", encoding="utf-8") as f:
        f.write(src)
    with open(os.path.join(tmp, "task.json"), "w", encoding="utf-8") as f:
        json.dump(task, f, indent=2)
        f.write("\n")
    if os.path.isdir(out_dir):
        import shutil
        shutil.rmtree(out_dir)
    os.rename(tmp, out_dir)
    return task, why_not, notes


def _spec_dim(factors, key, dims, runs, base):
    """A size expression for a spec dimension the recogniser gave as a
    list of factors: (tensor, axis) pairs, constants, and (tensor, axis,
    divisor) for an axis's size over a constant or over another axis's
    size, a (tensor, axis) pair (mha's heads: the batch of heads over the
    batch); an empty list is 1."""
    out = []
    for f in factors:
        if isinstance(f, int):
            out.append(f)
            continue
        t, ax = f[0], f[1]
        div = f[2] if len(f) > 2 else 1
        out.append(dims.name([_dim_at(r, base, t, ax) // (div if isinstance(div, int) else
                                                          _dim_at(r, base, div[0], div[1])) for r in runs],
                             "%s_%d" % (key, ax)))
    return dims.product(out)


def _dim_at(run, base, t, axis):
    """The size at run of base's tensor t's axis: t is found in run by
    its place among the forward's tensors, parameters and outputs, or in
    the trace by the op position (an intermediate)."""
    for i, a in enumerate([x for x in base.args if isinstance(x, torch.Tensor)]):
        if a is t:
            return int([x for x in run.args if isinstance(x, torch.Tensor)][i].shape[axis])
    for i, (_, p) in enumerate(base.params):
        if p is t:
            return int(run.params[i][1].shape[axis])
    for i, o in enumerate(base.outs):
        if o is t:
            return int(run.outs[i].shape[axis])
    for j, op in enumerate(base.forward.ops):
        for k, o in enumerate(op.outs):
            if o is t:
                return int(run.forward.ops[j].outs[k].shape[axis])
        for k, a in enumerate(op.args):
            if a is t:
                return int(run.forward.ops[j].args[k].shape[axis])
    raise Refused("internal: a dimension the family names is not found at other sizes")


def tolerance(l2, el, runs, base, fam, half=None):
    """The tolerance policy: the fp32 forward's worst errors against
    float64 at the check sizes, grown with the square root of how much
    deeper the benchmark size's sums are (flops per output element), times
    a margin of 8, with floors (1e-5; 5e-5 where a matrix product or a
    convolution may run on tensor cores) and never above 1e-2 (an output
    that needs more is refused). A task of f16 or bf16 floats is answered
    by the oracle in fp32 on its 2-byte inputs, rounded once into its
    outputs; a kernel computing in fp32 and rounding once may round the
    other way, so the floors are two units of roundoff, 2u, and atol one ulp
    of the type's subnormals (f16's are 6e-8: a softmax of a long row
    reaches them)."""
    d_bench = _depth(runs[0])
    d_check = max(_depth(r) for r in runs[1:])
    grow = min(math.sqrt(max(d_bench / d_check, 1.0)), GROW_MAX)
    floor = 5e-5 if _products(base) else 1e-5
    if half:
        floor = max(floor, 2 * ROUNDOFF[half])
    rel_l2 = max(MARGIN * grow * l2, floor)
    atol_rms = max(MARGIN * grow * el, floor)
    if rel_l2 > max(1e-2, floor) or atol_rms > 1e-1:
        raise Refused("fp32 against float64 errs %.2g (relative L2) at the check sizes, "
                      "%.3g once grown to the benchmark size: too imprecise to verify" % (l2, rel_l2))
    rtol = floor
    why = ("imported: PyTorch fp32 against float64 on the CPU at the check sizes, %d seeds each: "
           "worst relative L2 error %.2g, worst element error %.2g of the output's rms; grown by "
           "sqrt(%.0f / %.0f) = %.2f for the benchmark size's deeper sums (flops per output), times "
           "%g, floors %g; atol_rms is in units of the reference output's rms"
           % (len(SEEDS), l2, el, d_bench, d_check, grow,
              MARGIN, floor))
    atol = 0
    if half:
        atol = TINIEST[half]
        why += ("; the oracle answers in fp32 on the %s inputs, rounded once (floors 2u = %g), "
                "and atol is one ulp of %s's subnormals" % (half, floor, half))
    return {"atol": atol, "atol_rms": _round(atol_rms), "rtol": rtol, "rel_l2": _round(rel_l2), "why": why}


def _depth(run):
    """Flops per output element of a traced run: how deep its sums are."""
    f = sum(c * math.prod(d) for c, d in run.terms())
    n = sum(int(o.numel()) for o in run.outs)
    return max(f / max(n, 1), 1.0)


def _products(base):
    """Whether the forward holds a matrix product, a convolution or an
    attention: ops PyTorch may run on tensor cores, with long sums."""
    return any(o.name in ("aten.mm.default", "aten.addmm.default", "aten.bmm.default",
                          "aten.baddbmm.default", "aten.convolution.default")
               or o.name.startswith("aten._scaled_dot_product") for o in base.forward.ops)


def answers_in_f64(runs, base, outputs):
    """Whether the oracle computes the reference in float64 (reference.work
    "f64", docs/tasks.md): for fp32 outputs of a forward that sums, a
    product or sums that deepen from the check sizes to the benchmark's.
    There fp32 PyTorch's own error grows with the sums and, on the GPU, is a
    share of the tolerance (KernelBench level 2's 84, a softmax after a
    product 8192 deep: half of it); against it, a kernel as accurate as
    PyTorch may fail where their errors add. Against float64 the target is
    the operator's value, as the pack's references (long sums in double)
    give. A forward of the same depth at every size (pointwise, or sums of
    a fixed length) keeps fp32: its error is measured as it is, and
    float64 would double the oracle's memory for nothing."""
    if not all(o["dtype"] == "f32" for o in outputs):
        return False
    return _products(base) or _depth(runs[0]) > max(_depth(r) for r in runs[1:])


def _round(x):
    """Two significant digits, rounded up."""
    if x <= 0:
        return 0
    e = math.floor(math.log10(x)) - 1
    return float("%de%d" % (math.ceil(x / 10.0 ** e - 1e-9), e))


def _dist_text(d):
    if d["dist"] == "uniform":
        return "uniform(%g, %g)" % (d["low"], d["high"])
    if d["dist"] == "normal":
        return "normal(%g, %g)" % (d["mean"], d["std"])
    if d["dist"] == "tril":
        return "tril (ones on and below the diagonal)"
    return "randint(%s, %s)" % (d["low"], d["high"])


def problem_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for f in sorted(os.listdir(p), key=_natural):
                if f.endswith(".py"):
                    yield os.path.join(p, f)
        else:
            yield p


def _natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def main(argv):
    ap = argparse.ArgumentParser(prog="htam import", description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", metavar="FILE|DIR")
    ap.add_argument("--into", default="imported", metavar="DIR")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")     # the problems' own (InstanceNorm's, say)
    os.makedirs(a.into, exist_ok=True)
    refused = 0
    for path in problem_files(a.paths):
        rec = {"file": path}
        try:
            task, why_not, notes = import_file(path, a.into)
            rec.update(status="imported", task=task["id"], family=task["family"],
                       why=why_not, notes=notes)
            msg = "%s: imported as %s (%s)" % (path, task["id"],
                                                 task["family"] if task["family"] != "none"
                                                 else "no family: %s" % why_not)
        except Refused as e:
            refused += 1
            rec.update(status="refused", why=str(e))
            msg = "%s: refused: %s" % (path, e)
        except Exception as e:  # a defect of the importer: say so, go on
            refused += 1
            rec.update(status="refused", why="importer failed: " + _short(e))
            msg = "%s: refused: importer failed: %s" % (path, _short(e))
            if os.environ.get("HTAM_DEBUG"):
                traceback.print_exc()
        print(json.dumps(rec), flush=True)
        if not a.quiet:
            print("htam import: " + msg, file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
