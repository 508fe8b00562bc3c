"""trace.py: what a problem does, seen from PyTorch's dispatcher.

Every aten operation a problem runs (drawing its inputs, building its
module, its forward) is recorded with its arguments and results. On the
meta device nothing is computed or allocated, so a problem is traced at
KernelBench's sizes (gigabytes of tensors) in milliseconds; the importer
reads shapes, distributions, flops and the operator graph from traces.
"""
from torch.utils._python_dispatch import TorchDispatchMode
import torch

# Operations that move no data and compute nothing: they name the same
# values in another shape or object.
VIEWS = {
    "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
    "aten.t.default", "aten.transpose.int", "aten.permute.default",
    "aten.expand.default", "aten.unsqueeze.default", "aten.squeeze.dim",
    "aten.squeeze.dims", "aten.squeeze.default", "aten.alias.default",
    "aten.detach.default", "aten.lift_fresh.default", "aten.slice.Tensor",
    "aten.select.int", "aten.as_strided.default", "aten._reshape_alias.default",
}
# Operations that only copy (no arithmetic).
COPIES = {"aten.clone.default", "aten.contiguous.default", "aten._to_copy.default",
          "aten.copy_.default"}
FACTORIES = {
    "aten.rand.default", "aten.randn.default", "aten.randint.low",
    "aten.randint.default", "aten.empty.memory_format", "aten.zeros.default",
    "aten.ones.default", "aten.full.default", "aten.arange.default",
    "aten.arange.start", "aten.arange.start_step", "aten.scalar_tensor.default",
    "aten.empty_strided.default", "aten.rand_like.default", "aten.randn_like.default",
    "aten.zeros_like.default", "aten.ones_like.default", "aten.empty_like.default",
}
# Operations whose result is random: a forward that runs one is not a
# function of its inputs.
RANDOM = {"aten.native_dropout.default", "aten.bernoulli.default", "aten.bernoulli_.float",
          "aten.bernoulli.p", "aten.rand.default", "aten.randn.default",
          "aten.randint.low", "aten.randint.default", "aten.rand_like.default",
          "aten.randn_like.default", "aten.normal_.default", "aten.uniform_.default",
          "aten.multinomial.default", "aten.randperm.default", "aten.dropout.default"}


def skey(t):
    """A key shared by a tensor and every view of its storage."""
    return t.untyped_storage()._cdata


class Op:
    __slots__ = ("name", "args", "kwargs", "outs")

    def __init__(self, name, args, kwargs, outs):
        self.name, self.args, self.kwargs, self.outs = name, args, kwargs, outs

    def tensors(self):
        return [a for a in flat(self.args) if isinstance(a, torch.Tensor)]


def flat(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from flat(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from flat(y)
    else:
        yield x


class Trace(TorchDispatchMode):
    """Records each aten operation run under it, in order."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        outs = [o for o in flat(out)] if isinstance(out, (list, tuple)) else [out]
        self.ops.append(Op(str(func), list(args), dict(kwargs), outs))
        return out


def flop_terms(op):
    """Floating-point operations of one traced op as terms (coefficient,
    [dimensions]) whose products sum to them, never more than it does:
    the products' multiply-adds counted twice, every other arithmetic op
    one per element it writes (a reduction: one per element it reads),
    views, copies and factories none. The terms' shape depends only on
    the op and its ranks, so traces at several sizes line up term by
    term."""
    n = op.name
    if n in VIEWS or n in COPIES or n in FACTORIES:
        return []
    a = op.args
    shp = lambda t: [int(d) for d in t.shape]
    if n == "aten.mm.default":
        (m, k), (_, nn) = shp(a[0]), shp(a[1])
        return [(2, [m, k, nn])]
    if n == "aten.addmm.default":
        (m, k), (_, nn) = shp(a[1]), shp(a[2])
        return [(2, [m, k, nn]), (1, [m, nn])]
    if n in ("aten.bmm.default", "aten.baddbmm.default"):
        x, y = (a[0], a[1]) if n == "aten.bmm.default" else (a[1], a[2])
        (b, m, k), (_, _, nn) = shp(x), shp(y)
        return [(2, [b, m, k, nn])]
    if n in ("aten.convolution.default", "aten._convolution.default"):
        x, w, out = shp(a[0]), shp(a[1]), shp(op.outs[0])
        conv = (x if bool(a[6]) else out)[2:]
        return [(2, [x[0]] + conv + w)]
    if n.startswith("aten._scaled_dot_product") or n == "aten.scaled_dot_product_attention.default":
        q, k = shp(a[0]), shp(a[1])
        return [(4, q[:-1] + [k[-2], q[-1]])]
    reductions = ("sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin",
                  "linalg_vector_norm", "norm", "prod", "var", "std", "logsumexp")
    if n.split(".")[1] in reductions and isinstance(a[0], torch.Tensor):
        return [(1, shp(a[0]))]
    return [(1, shp(o)) for o in op.outs if isinstance(o, torch.Tensor)]
