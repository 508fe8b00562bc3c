"""families.py: which template family serves a traced forward, and its spec.

Each recogniser reads the forward's trace (trace.Op list, at one size)
and, when the graph is exactly one the family computes, returns
(family, spec) with the spec's logical dimensions as lists of
(tensor, axis) pairs that the importer turns into size expressions. The
graphs served are those of docs/templates.md's families: elementwise
maps (any chain of the pointwise ops below over same-shaped inputs),
softmax and L1 normalisation over the last axis, RMS normalisation over
channels, layer norm, reductions along one axis (sum, mean, product,
maximum, minimum and their indices), the
Frobenius normalisation, the mean squared error, cross entropy, matrix
products (plain, batched, F.linear) with a pointwise epilogue, and
matrix-vector products. Anything else is served by no family.
"""
import math

import torch

from trace import VIEWS, COPIES

SKIP = VIEWS | COPIES


def lit(v):
    """A CUDA float literal that reads back as PyTorch's fp32 cast of v."""
    v = float(v)
    if not math.isfinite(v):
        raise Unsupported("a non-finite constant")
    r = repr(v)
    if "e" not in r and "." not in r:
        r += ".0"
    return r + "f"


class Unsupported(Exception):
    pass


# Reductions along one axis, to the ops of mid_reduce's family file.
MID_REDUCE = {
    "aten.sum.dim_IntList": "sum", "aten.mean.dim": "mean", "aten.prod.dim_int": "prod",
    "aten.max.dim": "max", "aten.min.dim": "min", "aten.amax.default": "max",
    "aten.amin.default": "min", "aten.argmax.default": "argmax", "aten.argmin.default": "argmin",
}


def _binary(fmt):
    return lambda a, b, op: fmt % (a, b)


# Pointwise ops: name -> function of the C texts of the tensor args (in
# order, Python scalars already literals) and the op itself.
def _pointwise(name, args, op):
    a = args[0] if args else None
    kw = op.kwargs
    if name == "aten.relu.default":
        return "fmaxf(%s, 0.0f)" % a
    if name == "aten.sigmoid.default":
        return "(1.0f / (1.0f + expf(-(%s))))" % a
    if name == "aten.tanh.default":
        return "tanhf(%s)" % a
    if name == "aten.gelu.default":
        if kw.get("approximate", "none") == "tanh":
            return ("(0.5f * (%s) * (1.0f + tanhf(0.7978845608028654f * ((%s) + 0.044715f * "
                    "(%s) * (%s) * (%s)))))" % (a, a, a, a, a))
        return "(0.5f * (%s) * (1.0f + erff((%s) * 0.7071067811865476f)))" % (a, a)
    if name == "aten.silu.default":
        return "((%s) / (1.0f + expf(-(%s))))" % (a, a)
    if name == "aten.hardsigmoid.default":
        return "(fminf(fmaxf((%s) + 3.0f, 0.0f), 6.0f) / 6.0f)" % a
    if name == "aten.hardswish.default":
        return "((%s) * fminf(fmaxf((%s) + 3.0f, 0.0f), 6.0f) / 6.0f)" % (a, a)
    if name == "aten.hardtanh.default":
        lo = lit(op.args[1] if len(op.args) > 1 else -1.0)
        hi = lit(op.args[2] if len(op.args) > 2 else 1.0)
        return "fminf(fmaxf(%s, %s), %s)" % (a, lo, hi)
    if name == "aten.elu.default":
        alpha = float(op.args[1]) if len(op.args) > 1 else 1.0
        scale = float(op.args[2]) if len(op.args) > 2 else 1.0
        iscale = float(op.args[3]) if len(op.args) > 3 else 1.0
        return ("((%s) > 0.0f ? (%s) * %s : %s * expm1f((%s) * %s) * %s)"
                % (a, a, lit(scale), lit(alpha), a, lit(iscale), lit(scale)))
    if name == "aten.leaky_relu.default":
        slope = lit(op.args[1] if len(op.args) > 1 else 0.01)
        return "((%s) > 0.0f ? (%s) : (%s) * %s)" % (a, a, a, slope)
    if name == "aten.softplus.default":
        beta = float(op.args[1]) if len(op.args) > 1 else 1.0
        thr = float(op.args[2]) if len(op.args) > 2 else 20.0
        return ("((%s) * %s > %s ? (%s) : log1pf(expf((%s) * %s)) / %s)"
                % (a, lit(beta), lit(thr), a, a, lit(beta), lit(beta)))
    if name == "aten.mish.default":
        return "((%s) * tanhf((%s) > 20.0f ? (%s) : log1pf(expf(%s))))" % (a, a, a, a)
    simple = {"aten.exp.default": "expf", "aten.log.default": "logf", "aten.abs.default": "fabsf",
              "aten.sqrt.default": "sqrtf", "aten.rsqrt.default": "rsqrtf", "aten.sin.default": "sinf",
              "aten.cos.default": "cosf", "aten.erf.default": "erff", "aten.log1p.default": "log1pf",
              "aten.expm1.default": "expm1f", "aten.floor.default": "floorf",
              "aten.ceil.default": "ceilf"}
    if name in simple:
        return "%s(%s)" % (simple[name], a)
    if name == "aten.neg.default":
        return "(-(%s))" % a
    if name == "aten.reciprocal.default":
        return "(1.0f / (%s))" % a
    if name in ("aten.mul.Tensor", "aten.mul.Scalar"):
        return "(%s * %s)" % (args[0], args[1])
    if name in ("aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar"):
        alpha = kw.get("alpha", 1)
        b = args[1] if alpha == 1 else "(%s * %s)" % (lit(alpha), args[1])
        return "(%s %s %s)" % (args[0], "+" if ".add." in name else "-", b)
    if name == "aten.rsub.Scalar" or name == "aten.rsub.Tensor":
        return "(%s - %s)" % (args[1], args[0])
    if name in ("aten.div.Tensor", "aten.div.Scalar") and kw.get("rounding_mode") is None:
        return "(%s / %s)" % (args[0], args[1])
    if name in ("aten.pow.Tensor_Scalar",):
        e = float(op.args[1])
        if e == 2.0:
            return "((%s) * (%s))" % (a, a)
        if e == 3.0:
            return "((%s) * (%s) * (%s))" % (a, a, a)
        if e == 0.5:
            return "sqrtf(%s)" % a
        return "powf(%s, %s)" % (a, lit(e))
    if name in ("aten.clamp.default", "aten.clamp.Tensor"):
        lo = op.args[1] if len(op.args) > 1 else kw.get("min")
        hi = op.args[2] if len(op.args) > 2 else kw.get("max")
        e = a
        if lo is not None:
            e = "fmaxf(%s, %s)" % (e, lit(lo))
        if hi is not None:
            e = "fminf(%s, %s)" % (e, lit(hi))
        return e
    if name == "aten.clamp_min.default":
        return "fmaxf(%s, %s)" % (a, lit(op.args[1]))
    if name == "aten.clamp_max.default":
        return "fminf(%s, %s)" % (a, lit(op.args[1]))
    if name == "aten.minimum.default":
        return "fminf(%s, %s)" % (args[0], args[1])
    if name == "aten.maximum.default":
        return "fmaxf(%s, %s)" % (args[0], args[1])
    return None


def pointwise_expr(ops, known, shape):
    """Runs ops over the C texts in known (storage key -> text) as far as
    each is pointwise over tensors of exactly shape (or Python scalars);
    returns known extended. Copies and views that keep the shape pass the
    text on."""
    from trace import skey
    known = dict(known)
    for op in ops:
        if not op.outs or not isinstance(op.outs[0], torch.Tensor):
            continue
        out = op.outs[0]
        if op.name in SKIP:
            src = op.args[0] if op.args else None
            if isinstance(src, torch.Tensor) and skey(src) in known and list(out.shape) == list(shape) \
                    and list(src.shape) == list(shape) and out.dtype == torch.float32 \
                    and src.is_contiguous() and out.is_contiguous():
                known[skey(out)] = known[skey(src)]
            continue
        if list(out.shape) != list(shape) or out.dtype != torch.float32:
            continue
        args = []
        ok = True
        for x in op.args:
            if isinstance(x, torch.Tensor):
                if skey(x) not in known or list(x.shape) != list(shape) or not x.is_contiguous():
                    ok = False
                    break
                args.append(known[skey(x)])
            elif isinstance(x, bool) or x is None:
                args.append(None)
            elif isinstance(x, (int, float)):
                try:
                    args.append(lit(x))
                except Unsupported:
                    ok = False
                    break
            else:
                args.append(None)
        if not ok:
            continue
        try:
            text = _pointwise(op.name, args, op)
        except Unsupported:
            text = None
        if text is not None:
            known[skey(out)] = text
    return known


def _real(ops):
    return [o for o in ops if o.name not in SKIP]


def _dims(t, axes=None):
    """(tensor, axis) pairs of t's axes (all, or those in axes)."""
    n = t.dim()
    return [(t, i) for i in (range(n) if axes is None else axes)]


def recognise(ops, inputs, outputs):
    """(family, spec, note) for the forward trace ops whose graph inputs
    are inputs (name -> tensor, forward tensors and parameters alike) and
    whose results are outputs (tensors); (None, None, why) when no family
    serves it."""
    from trace import skey
    if len(outputs) != 1:
        return None, None, "%d outputs (the families write one)" % len(outputs)
    y = outputs[0]
    names = {skey(t): n for n, t in inputs.items()}
    real = _real(ops)
    origin = _Origins(inputs)

    def input_of(t):
        """The input a tensor is, through views that keep its layout."""
        return origin.get(t) if t.is_contiguous() else None

    # Elementwise: the output is a pointwise expression of same-shaped inputs.
    if y.dtype == torch.float32 and all(t.dtype == torch.float32 for t in inputs.values()):
        known = {skey(t): n for n, t in inputs.items() if list(t.shape) == list(y.shape)}
        known = pointwise_expr(ops, known, y.shape)
        if skey(y) in known and known[skey(y)] not in inputs and real:
            return "elementwise", {"expr": known[skey(y)], "numel": _dims(y)}, None
    if not real:
        return None, None, "the forward computes nothing"
    first = real[0]
    x = first.args[0] if first.args and isinstance(first.args[0], torch.Tensor) else None
    xname = input_of(x) if x is not None else None
    last = x.dim() - 1 if x is not None else -1

    def axis(d):
        return d % x.dim() if x is not None and x.dim() else d

    seq = [o.name for o in real]
    if xname and seq == ["aten._softmax.default"] and axis(first.args[1]) == last:
        return "row_norm", {"op": "softmax", "rows": _dims(x, range(last)), "cols": _dims(x, [last])}, None
    if xname and seq == ["aten.abs.default", "aten.mean.dim", "aten.div.Tensor"]:
        m = real[1]
        if [axis(d) for d in m.args[1]] == [last] and _kw(m, 2, "keepdim") and \
                real[2].args[0] is x and real[2].args[1] is m.outs[0] and m.args[0] is real[0].outs[0]:
            return "row_norm", {"op": "l1", "rows": _dims(x, range(last)), "cols": _dims(x, [last])}, None
    if xname and seq == ["aten.pow.Tensor_Scalar", "aten.mean.dim", "aten.add.Tensor",
                         "aten.sqrt.default", "aten.div.Tensor"] and x.dim() >= 2:
        p, m, a, s, d = real
        if float(p.args[1]) == 2.0 and [axis(v) for v in m.args[1]] == [1] and _kw(m, 2, "keepdim") \
                and isinstance(a.args[1], (int, float)) and d.args[0] is x and d.args[1] is s.outs[0]:
            return "channel_norm", {"op": "rms", "eps": float(a.args[1]), "outer": _dims(x, [0]),
                                    "channels": _dims(x, [1]),
                                    "inner": _dims(x, range(2, x.dim()))}, None
    if xname and seq == ["aten.native_layer_norm.default"]:
        n_norm = len(first.args[1])
        w, b = first.args[2], first.args[3]
        if w is not None and b is not None and input_of(w) and input_of(b) \
                and list(inputs)[1:3] == [input_of(w), input_of(b)]:
            return "layer_norm", {"eps": float(first.args[4]),
                                  "rows": _dims(x, range(x.dim() - n_norm)),
                                  "cols": _dims(x, range(x.dim() - n_norm, x.dim()))}, None
    if xname and len(real) == 1 and y is first.outs[0] and first.name in MID_REDUCE \
            and len(first.args) > 1 and x.dtype == torch.float32 and x.dim() >= 1 \
            and y.dtype == (torch.int64 if first.name.startswith("aten.arg") else torch.float32) \
            and not first.kwargs.get("dtype") and not (len(first.args) > 3 and first.args[3] is not None):
        dims = first.args[1]
        d = dims[0] if isinstance(dims, (list, tuple)) and len(dims) == 1 else dims
        if isinstance(d, int):
            d = axis(d)
            return "mid_reduce", {"op": MID_REDUCE[first.name], "outer": _dims(x, range(d)),
                                  "reduce": _dims(x, [d]), "inner": _dims(x, range(d + 1, x.dim()))}, None
    if xname and seq in (["aten.linalg_vector_norm.default", "aten.div.Tensor"],
                         ["aten.norm.Scalar", "aten.div.Tensor"]):
        nrm, d = real
        order = nrm.args[1] if len(nrm.args) > 1 else 2
        dims = nrm.args[2] if len(nrm.args) > 2 else None
        if float(order) == 2.0 and not dims and d.args[0] is x and d.args[1] is nrm.outs[0]:
            return "global_reduce", {"op": "fro_normalize", "numel": _dims(x)}, None
    if xname and seq == ["aten.sub.Tensor", "aten.pow.Tensor_Scalar", "aten.mean.default"]:
        s, p, m = real
        b = s.args[1]
        if isinstance(b, torch.Tensor) and input_of(b) and list(b.shape) == list(x.shape) \
                and float(p.args[1]) == 2.0 and len(inputs) == 2:
            return "global_reduce", {"op": "mse", "numel": _dims(x)}, None
    if xname and seq == ["aten._log_softmax.default", "aten.nll_loss_forward.default"] and x.dim() == 2:
        ls, nll = real
        t = nll.args[1]
        if axis(ls.args[1]) == 1 and nll.args[2] is None and int(nll.args[3]) == 1 \
                and int(nll.args[4]) == -100 and input_of(t) and t.dtype == torch.int64:
            return "row_loss", {"op": "cross_entropy", "rows": _dims(x, [0]), "cols": _dims(x, [1])}, None
    g = _gemm(ops, real, inputs, names, origin, y)
    if g:
        return g + (None,)
    return None, None, "no family computes %s" % " -> ".join(
        o.replace("aten.", "").replace(".default", "") for o in seq[:6]) + (" ..." if len(seq) > 6 else "")


def _kw(op, i, name):
    if len(op.args) > i:
        return bool(op.args[i])
    return bool(op.kwargs.get(name, False))


class _Origins:
    """The input a tensor views, by storage (views share their base's),
    for views that hold all of the input's elements from its start."""

    def __init__(self, inputs):
        from trace import skey
        self.by_key = {skey(t): (n, t.numel()) for n, t in inputs.items()}

    def get(self, t):
        from trace import skey
        hit = self.by_key.get(skey(t))
        if hit and t.numel() == hit[1] and t.storage_offset() == 0:
            return hit[0]
        return None


def _gemm(ops, real, inputs, names, origin, y):
    from trace import skey
    mm = [o for o in real if o.name in ("aten.mm.default", "aten.addmm.default", "aten.bmm.default")]
    if len(mm) != 1 or real[0] is not mm[0]:
        return None
    mm = mm[0]
    a, b = (mm.args[1], mm.args[2]) if mm.name == "aten.addmm.default" else (mm.args[0], mm.args[1])
    bias = mm.args[0] if mm.name == "aten.addmm.default" else None
    an = origin.get(a)
    if not an or not a.is_contiguous():
        return None
    a_in = inputs[an]
    # B is an input as it is (kn), or the transpose of an input's (n, k) (nk).
    bn = origin.get(b)
    if bn and b.is_contiguous():
        layout = "kn"
    elif bn and b.dim() == 2 and b.stride() == (1, b.shape[0]):
        layout = "nk"
    else:
        return None
    if bias is not None and not (origin.get(bias) and bias.dim() == 1):
        return None
    want = [an, bn] + ([origin.get(bias)] if bias is not None else [])
    if list(inputs)[:len(want)] != want or len(inputs) != len(want):
        return None
    v = mm.outs[0]
    if mm.name != "aten.bmm.default" and v.shape[1] == 1 and layout == "kn" and bias is None \
            and len(real) == 1:
        return "gemv", {"m": [(v, 0)], "k": [(a, 1)]}
    known = pointwise_expr([o for o in ops if o is not mm], {skey(v): "v"}, v.shape)
    # The result may be reshaped back (a 3-D input flattened for the product).
    epi = known.get(skey(y)) if list(y.shape) == list(v.shape) else None
    if epi is None and y.is_contiguous() and y.numel() == v.numel():
        for op in ops:
            if op.name in ("aten._unsafe_view.default", "aten.view.default") and op.outs[0] is y \
                    and skey(op.args[0]) in known:
                epi = known[skey(op.args[0])]
    if epi is None:
        return None
    batched = mm.name == "aten.bmm.default"
    if batched:
        spec = {"batched": True, "b_layout": layout, "bias": False, "epilogue": epi,
                "batch": [(a, 0)], "m": [(a, 1)], "n": [(v, 2)], "k": [(a, 2)]}
    else:
        spec = {"batched": False, "b_layout": layout, "bias": bias is not None, "epilogue": epi,
                "batch": 1, "m": [(v, 0)], "n": [(v, 1)], "k": [(a, 1)]}
    return "gemm", spec
