"""problem.py: a KernelBench-style problem file, loaded at any sizes.

A problem file defines a Model (an nn.Module), get_inputs() and
get_init_inputs(), and sets its sizes as module-level integers
(batch_size = 16, M = 1024 * 2, depth, height, width = (16, 32, 32)),
or tuples of them bound to one name (input_shape = (4096,): its places
are the integers input_shape_0, input_shape_1, ...).
Problem.namespace(sizes) runs the file with those integers replaced, so
everything computed from them (a bias_shape, the inputs, the
constructor's arguments) follows. Sizes the file only works with equal
(batch_size and input_shape_0 when a (batch,) tensor broadcasts against
a (batch, *input_shape) one) are tied: Problem.ties maps each member
to the size it follows (a task's reference.ties). The importer,
the oracle and exported modules all load problems this way.
"""
import ast
import operator

_INT_OPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod,
}


def fold_int(node):
    """The value of an expression of integer literals, or None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = fold_int(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        a, b = fold_int(node.left), fold_int(node.right)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Pow) and (b < 0 or b > 64):
            return None
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            return None
        return _INT_OPS[type(node.op)](a, b)
    return None


def _leaves(target, value):
    """(name, int) pairs of an assignment of integers to names, or None
    when the statement assigns anything else; a tuple of integers bound
    to one name gives a pair per place (name_0, name_1, ...)."""
    if isinstance(target, ast.Name):
        v = fold_int(value)
        if v is not None:
            return [(target.id, v)]
        if isinstance(value, (ast.Tuple, ast.List)) and value.elts:
            vs = [fold_int(e) for e in value.elts]
            if all(x is not None for x in vs):
                return [("%s_%d" % (target.id, i), x) for i, x in enumerate(vs)]
        return None
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts):
        out = []
        for t, v in zip(target.elts, value.elts):
            sub = _leaves(t, v)
            if sub is None:
                return None
            out += sub
        return out
    return None


class Problem:
    """A problem file: its text, its module-level integer sizes in the
    order the file sets them, and a way to run it at other sizes."""

    def __init__(self, source, path="problem.py", ties=None):
        self.source = source
        self.path = path
        self.ties = dict(ties or {})    # member -> the size it follows
        self.tree = ast.parse(source, path)
        self.sizes = {}
        for st in self.tree.body:
            for name, v in self._int_assign(st) or []:
                self.sizes.setdefault(name, v)

    @staticmethod
    def _int_assign(st):
        if not isinstance(st, ast.Assign):
            return None
        out = []
        for t in st.targets:
            sub = _leaves(t, st.value)
            if sub is None:
                return None
            out += sub
        return out

    @staticmethod
    def _valued(target, value, sizes):
        """value (the integers target is assigned) with the integers of
        sizes in place of its own: the shape of the assignment kept."""
        if isinstance(target, ast.Name):
            if fold_int(value) is not None:
                return ast.Constant(value=int(sizes.get(target.id, fold_int(value))))
            return ast.Tuple(elts=[ast.Constant(value=int(sizes.get("%s_%d" % (target.id, i),
                                                                    fold_int(e))))
                                   for i, e in enumerate(value.elts)], ctx=ast.Load())
        return ast.Tuple(elts=[Problem._valued(t, v, sizes) for t, v in zip(target.elts, value.elts)],
                         ctx=ast.Load())

    def namespace(self, sizes=None):
        """Runs the file with the integers in sizes (name -> int) in place
        of its own (and each tied integer at the size it follows) and
        returns its globals."""
        sizes = dict(sizes or {})
        for m, n in self.ties.items():
            if n in sizes:
                sizes[m] = sizes[n]
        body = []
        for st in self.tree.body:
            pairs = self._int_assign(st)
            if pairs is None:
                body.append(st)
                continue
            for t in st.targets:
                a = ast.Assign(targets=[t], value=self._valued(t, st.value, sizes))
                body.append(ast.copy_location(a, st))
        mod = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
        ns = {"__name__": "__htam_problem__", "__file__": self.path}
        exec(compile(mod, self.path, "exec"), ns)
        for need in ("Model", "get_inputs", "get_init_inputs"):
            if need not in ns:
                raise ProblemError("defines no %s" % need)
        return ns

    def forward_text(self):
        """The forward's return expression when it is a single statement,
        else a pointer to the file."""
        for st in self.tree.body:
            if isinstance(st, ast.ClassDef) and st.name == "Model":
                for f in st.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "forward":
                        body = [b for b in f.body if not (isinstance(b, ast.Expr)
                                and isinstance(b.value, ast.Constant))]
                        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value:
                            return ast.unparse(body[0].value)
        return "Model.forward (%s)" % self.path

    def docline(self):
        """The first line of Model's docstring, or None."""
        for st in self.tree.body:
            if isinstance(st, ast.ClassDef) and st.name == "Model":
                d = ast.get_docstring(st)
                if d:
                    return " ".join(d.strip().splitlines()[0].split())
        return None


class ProblemError(Exception):
    """A problem file that cannot be used, with the reason."""


def torch_modules():
    """torch, with the settings every htam PyTorch run uses: no TF32 in
    matrix products or convolutions (fp32 means fp32)."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return torch


TORCH_DT_NAMES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
                  "i32": "int32", "i64": "int64", "bool": "bool"}


def half_type(task):
    """The task's 2-byte float type ("f16" or "bf16"), or None: such a task
    is answered in fp32 on its 2-byte inputs, each output rounded once
    (the oracle), and its tolerances have 2-byte floors (the importer)."""
    for t in task["inputs"] + task["outputs"]:
        if t["dtype"] in ("f16", "bf16"):
            return t["dtype"]
    return None


def _torch():
    import torch
    return torch


class _Dtypes(dict):
    def __missing__(self, k):
        return getattr(_torch(), TORCH_DT_NAMES[k])


TORCH_DT = _Dtypes()


def draw_tensor(spec, shape, dtype, gen, device="cpu"):
    """A tensor drawn as a task's init says (kbench draws its own by the
    same specification on the device; this one serves the CPU checks)."""
    torch = _torch()
    d = spec
    if d["dist"] == "randint":
        return torch.randint(int(d["low"]), int(d["high"]), shape, generator=gen).to(dtype)
    if d["dist"] == "tril":
        return torch.ones(shape, dtype=torch.float64).tril().to(dtype)
    if d["dist"] == "normal":
        t = torch.randn(shape, generator=gen, dtype=torch.float64).mul(d["std"]).add(d["mean"])
    else:
        t = torch.rand(shape, generator=gen, dtype=torch.float64).mul(d["high"] - d["low"]).add(d["low"])
    if "scale" in d:
        s = d["scale"]
        t = t * (s["low"] + (s["high"] - s["low"]) * float(torch.rand((), generator=gen,
                                                                        dtype=torch.float64)))
    return t.to(dtype)


def build(ns, seed, device=None, double=False):
    """The problem's module from its namespace ns (Problem.namespace),
    built under torch's seed seed on device (default the current one), in
    float64 when double. Two builds under one seed hold the same values: a
    float64 twin of a module is built again, not copied, as a copy's
    lambdas over submodules (minGPT's mlpf) still call the first's."""
    torch = _torch()
    torch.manual_seed(seed)
    with torch.device(device or torch.get_default_device()):
        m = ns["Model"](*ns["get_init_inputs"]())
    return m.double() if double else m


def call(model, tensors, ref, dtype=None):
    """The module's forward on a task's tensors (name -> tensor): its
    parameters and buffers replaced by the task's (buffers copied, as a
    forward may update one: batch norm's running statistics), then its
    arguments in order (constants as the problem has them). Float tensors
    are cast to dtype when one is given."""
    torch = _torch()

    def cast(t):
        return t.to(dtype) if dtype is not None and t.is_floating_point() else t
    buffers = {k for k, _ in model.named_buffers()}
    # a torch.compile'd module holds the problem's as _orig_mod: its own
    # parameters (not a submodule's) are reached only through that name
    pre = "_orig_mod." if isinstance(getattr(model, "_orig_mod", None), torch.nn.Module) else ""
    state = {pre + k: (cast(tensors[n]).clone() if pre + k in buffers or dtype is not None else tensors[n])
             for n, k in ref["weights"].items()}
    args = [(cast(tensors[a["input"]]).clone() if dtype is not None else tensors[a["input"]])
            if "input" in a else a["value"] for a in ref["args"]]
    with torch.no_grad():
        return torch.func.functional_call(model, state, tuple(args))


def sizes_of(ref, sizes):
    """The problem's own integers at a task's size set."""
    return {n: sizes[n] for n in ref["sizes"]}
