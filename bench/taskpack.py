"""taskpack.py: what the Python scripts of bench/ share about the task pack:
finding and loading tasks, size expressions (the language of lib/expr.h,
on 64-bit integers with C's truncating / and %), the roofline floor of
shared/TASKS.md, and the baselines file that torch-baselines.py writes.
Plain Python: no PyTorch needed."""
import json
import os
import re

# The H200's ceilings that shared/TASKS.md and ktask --list use (lib/task.h).
H200_COPY_BYTES_PER_S = 4.239e12
H200_FP32_FLOPS_PER_S = 67e12

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MAX_DEPTH = 64
TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(\S))")


class SizeError(ValueError):
    """A size expression that does not evaluate: "column N: what"."""


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _checked(v, col, what):
    if not INT64_MIN <= v <= INT64_MAX:
        raise SizeError("column %d: overflow in %s" % (col, what))
    return v


class _Parser:
    def __init__(self, src, sizes):
        self.toks = [(m.start(m.lastindex), m.group(1), m.group(2), m.group(3))
                     for m in TOKEN.finditer(src) if m.lastindex]
        self.toks.append((len(src), None, None, None))
        self.i = 0
        self.depth = 0
        self.sizes = sizes

    def peek(self):
        return self.toks[self.i]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def fail(self, tok, what):
        raise SizeError("column %d: %s" % (tok[0] + 1, what))

    def deeper(self, tok):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(tok, "nested deeper than %d" % MAX_DEPTH)

    def binary(self, ops, operand):
        v = operand()
        while self.peek()[3] in ops:
            tok = self.take()
            r = operand()
            op = tok[3]
            if op in "/%" and r == 0:
                self.fail(tok, "division by zero")
            if op == "+":
                v = v + r
            elif op == "-":
                v = v - r
            elif op == "*":
                v = v * r
            elif op == "/":
                v = _trunc_div(v, r)
            else:
                v = v - r * _trunc_div(v, r)
            v = _checked(v, tok[0] + 1, "'%s'" % op)
        return v

    def sum(self):
        return self.binary(("+", "-"), self.product)

    def product(self):
        return self.binary(("*", "/", "%"), self.unary)

    def unary(self):
        tok = self.peek()
        if tok[3] in ("+", "-"):
            self.take()
            self.deeper(tok)
            v = self.unary()
            self.depth -= 1
            return v if tok[3] == "+" else _checked(-v, tok[0] + 1, "'-'")
        return self.atom()

    def atom(self):
        tok = self.take()
        pos, num, name, other = tok
        if num is not None:
            return _checked(int(num), pos + 1, "a number")
        if name is not None:
            if self.peek()[3] == "(":
                self.take()
                self.deeper(tok)
                args = [self.sum()]
                while self.peek()[3] == ",":
                    self.take()
                    args.append(self.sum())
                if self.peek()[3] != ")":
                    self.fail(self.peek(), "expected ',' or ')' in call of '%s'" % name)
                self.take()
                self.depth -= 1
                return self.call(tok, name, args)
            if name not in self.sizes:
                self.fail(tok, "unknown name '%s'" % name)
            try:
                return int(self.sizes[name])
            except (TypeError, ValueError):
                self.fail(tok, "'%s' is not an integer" % name)
        if other == "(":
            self.deeper(tok)
            v = self.sum()
            if self.peek()[3] != ")":
                self.fail(self.peek(), "expected ')'")
            self.take()
            self.depth -= 1
            return v
        if other is None:
            self.fail(tok, "unexpected end of expression")
        self.fail(tok, "unexpected '%s'" % other)

    def call(self, tok, name, args):
        if name == "cdiv":
            if len(args) != 2:
                self.fail(tok, "cdiv takes 2 arguments, not %d" % len(args))
            a, b = args
            if b == 0:
                self.fail(tok, "division by zero in cdiv")
            q = _trunc_div(a, b)
            r = a - q * b
            if r != 0 and (r > 0) == (b > 0):
                q += 1
            return _checked(q, tok[0] + 1, "cdiv")
        if name in ("min", "max"):
            if len(args) < 2:
                self.fail(tok, "%s takes 2 or more arguments, not %d" % (name, len(args)))
            return min(args) if name == "min" else max(args)
        self.fail(tok, "unknown function '%s' (cdiv, min, max)" % name)


def size_eval(expr, sizes):
    """The value of a size expression (an int, or a string of lib/expr.h's
    language) with names looked up in sizes; raises SizeError."""
    if isinstance(expr, bool) or not isinstance(expr, (int, str)):
        raise SizeError("expected an integer or a size expression, not %r" % (expr,))
    if isinstance(expr, int):
        return expr
    p = _Parser(expr, sizes)
    v = p.sum()
    if p.peek()[1:] != (None, None, None):
        p.fail(p.peek(), "unexpected '%s'" % (p.peek()[1] or p.peek()[2] or p.peek()[3]))
    return v


def floor_us(task, sizes=None):
    """The roofline floor of shared/TASKS.md: the task's bytes over the
    H200's copy bandwidth or its flops over the fp32 rate, whichever takes
    longer, in microseconds, at sizes (default: the task's params)."""
    sizes = task["params"] if sizes is None else sizes
    return 1e6 * max(size_eval(task["bytes"], sizes) / H200_COPY_BYTES_PER_S,
                     size_eval(task["flops"], sizes) / H200_FP32_FLOPS_PER_S)


def tasks_dir(given=None):
    """The pack: given, else $HTAM_TASKS, else tasks/ beside bench/."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return given or os.environ.get("HTAM_TASKS") or os.path.join(here, "tasks")


def pack_ids(root):
    """The ids of the tasks under root (folders holding task.json), sorted."""
    return sorted(d for d in os.listdir(root)
                  if not d.startswith(".") and os.path.isfile(os.path.join(root, d, "task.json")))


def load_task(root, tid):
    with open(os.path.join(root, tid, "task.json")) as f:
        return json.load(f)


BASELINE_KINDS = ("eager", "compile")


def load_baselines(path):
    """A baselines file, checked as ktask checks it; raises ValueError
    naming the file and the member that is wrong."""
    try:
        with open(path) as f:
            root = json.load(f)
    except OSError as e:
        raise ValueError("baselines %s: %s" % (path, e.strerror))
    except ValueError as e:
        raise ValueError("baselines %s: %s" % (path, e))
    tasks = root.get("tasks") if isinstance(root, dict) else None
    if not isinstance(tasks, dict):
        raise ValueError('baselines %s: expected an object with a "tasks" object' % path)
    for tid, b in tasks.items():
        if not isinstance(b, dict):
            raise ValueError("baselines %s: tasks.%s: expected an object" % (path, tid))
        for k in BASELINE_KINDS:
            v = b.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0):
                raise ValueError("baselines %s: tasks.%s.%s: expected a positive number "
                                 "of microseconds, or null" % (path, tid, k))
    return root


def merge_baselines(task, baselines):
    """task's baseline_us with the measured times of a baselines file (as
    load_baselines returns it, or None) over it, as ktask --baselines merges
    them: null or missing leaves task.json's."""
    out = dict(task.get("baseline_us") or {})
    for k in BASELINE_KINDS:
        v = ((baselines or {}).get("tasks") or {}).get(task.get("id"), {}).get(k)
        if v is not None:
            out[k] = v
    return out
