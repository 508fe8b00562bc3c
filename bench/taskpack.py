"""taskpack.py: what the Python scripts of bench/ share about the task pack:
finding and loading tasks, their sizes evaluated (by ktask --sizes: the one
evaluator of size expressions is lib/expr.c), the roofline floor that
ktask --list gives, and the baselines file that torch-baselines.py writes.
Plain Python: no PyTorch needed."""
import json
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ktask():
    """The ktask beside bench/ (bin/ of the checkout), else the one on PATH."""
    mine = os.path.join(ROOT, "bin", "ktask")
    return mine if os.access(mine, os.X_OK) else (shutil.which("ktask") or "ktask")


_evaluated = {}


def evaluated(root, tid):
    """Task tid of the pack in root evaluated at its params, as ktask --sizes
    writes it: {"sizes", "shapes": {tensor: [dims]}, "bounds": {input: [low,
    high]}, "bytes", "flops", "floor_us"}. Raises ValueError with ktask's
    message when the task does not load."""
    key = (root, tid)
    if key not in _evaluated:
        p = subprocess.run([ktask(), "--sizes", os.path.join(root, tid)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise ValueError(p.stderr.strip() or "ktask --sizes %s failed" % tid)
        _evaluated[key] = json.loads(p.stdout)
    return _evaluated[key]


def evaluated_task(task):
    """The same for a task object (from a record; it needs only its params
    and whichever of bytes, flops and tensors it has): ktask --sizes -."""
    p = subprocess.run([ktask(), "--sizes", "-"], input=json.dumps({"task": task}) + "\n",
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip() or "ktask --sizes failed")
    return json.loads(p.stdout)


def floor_us(task):
    """The roofline floor of a task: its bytes over the H200's copy
    bandwidth or its flops over the fp32 rate, whichever takes longer, in
    microseconds, at its params (what ktask --list shows)."""
    return evaluated_task(task)["floor_us"]


def tasks_dir(given=None):
    """The pack: given, else the first folder of $HTAM_TASKS, else tasks/
    beside bench/."""
    env = (os.environ.get("HTAM_TASKS") or "").split(":")[0]
    return given or env or os.path.join(ROOT, "tasks")


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
