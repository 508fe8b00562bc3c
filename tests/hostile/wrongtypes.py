#!/usr/bin/env python3
"""wrongtypes.py: feeds a stage records whose members have the wrong type,
one member at a time, and says whether each case was handled cleanly.

usage: wrongtypes.py [--db FILE] [--cases N] [--ignore KEY]... INPUT -- TOOL [ARG...]
       wrongtypes.py --file PREFIX [options] FILE -- TOOL [ARG...] {} [ARG...]

INPUT holds the stage's records (one or more lines, as a step gives them).
For every member of the first record (every path: objects, arrays and their
elements, leaves), the member is replaced by values of other types (a
string for a number, a number for a string, an array for an object, an
object for an array, a string for a boolean), and a count (a step, a size,
a repetition count) by a negative and a fractional number, and the stage
runs on the edited input. A case is clean when:

  - the stage exits 65 and its first line of stderr is "TOOL: line 1: "
    naming the member (its name, or its parent's for an array element), or
  - the stage exits 0 and writes, record for record, what it writes for
    the original input, or that with the same edit applied (the stage does
    not read the member, it only carries it along), or
  - the stage exits 0 and the record made from the edited one says the
    candidate failed (compile.ok false, or a candidate or bench status
    that is not ok) with a reason naming the member: a candidate's plan or
    defines are data a model wrote, and their faults flow on as statuses.

Anything else (another exit status, a signal, an output that changed) is a
defect: the stage read a member of the wrong type without saying so. With
--db FILE, each run gets a fresh copy of that memory as $HTAM_DB. Prints
one line per defect and a last line "TOOL: N cases, N clean (N refused, N
unused), N defects"; exits 1 if there was a defect. --cases N keeps every
N-th case only (for a quick smoke). --ignore KEY leaves members named KEY
out of every comparison (a compile's time in ms, which no two runs share).

--file PREFIX: FILE is a JSON document the tool reads by name (a task.json,
whose folder is copied whole), given where the command has {}; its members
appear in the tool's output under PREFIX ("task"), and a refusal is a
message "TOOL: ...FILE...: " naming the member."""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile


def paths(v, prefix=()):
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, prefix + (i,))


def get(v, path):
    for p in path:
        v = v[p]
    return v


def put(v, path, value):
    """A copy of v with the member at path replaced; None if it has none."""
    v = copy.deepcopy(v)
    try:
        get(v, path[:-1])[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return None
    return v


# Members that count something: a negative or fractional value is wrong.
COUNTS = {"step", "reps", "trials", "attempts"}
SIZES = {"params", "check_params"}


def is_count(path):
    keys = [p for p in path if isinstance(p, str)]
    return bool(keys) and (keys[-1] in COUNTS or any(k in SIZES for k in keys[:-1]))


# Members whose value may be an integer or a string by contract: size
# expressions, and the knobs of defines and of a move's "set".
EXPRS = {"bytes", "flops", "shape", "grid", "block", "cluster", "smem", "count",
         "low", "high", "defines", "set", "numel", "m", "n", "k", "batch"}


def is_expr(path):
    keys = [p for p in path if isinstance(p, str)]
    return bool(keys) and (keys[-1] in EXPRS or (len(keys) > 1 and keys[-2] in EXPRS))


def wrong_values(x, path):
    """Values of other types than x, and bad numbers for a count."""
    if is_expr(path) and isinstance(x, (int, str)) and not isinstance(x, bool):
        return [{}, []] + ([-1, 1.5] if is_count(path) and isinstance(x, int) else [])
    if isinstance(x, bool):
        return ["true", 1]
    if isinstance(x, int):
        return ["7", []] + ([-1, 1.5] if is_count(path) else [])
    if isinstance(x, float):
        return ["7", {}]
    if isinstance(x, str):
        return [7, {}]
    if isinstance(x, dict):
        return [[], "x"]
    if isinstance(x, list):
        return [{}, "x"]
    return ["x", 1]


def failure_naming(rec, name):
    """Does the record say its candidate failed, for a reason naming name?"""
    for k in ("compile", "candidate", "bench"):
        o = rec.get(k)
        if not isinstance(o, dict):
            continue
        failed = o.get("ok") is False if k == "compile" else o.get("status") not in (None, "ok")
        if failed and name and name in str(o.get("reason", "")):
            return True
    return False


def name_of(path):
    """The member's name as a message would give it: its key, or for an
    array element its array's key."""
    for p in reversed(path):
        if isinstance(p, str):
            return p
    return None


IGNORED = set()


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in IGNORED}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def canon(lines):
    return [json.dumps(strip(json.loads(l)), sort_keys=True) for l in lines if l.strip()]


def main():
    args = sys.argv[1:]
    db = None
    every = 1
    prefix = None
    while args and args[0].startswith("--") and args[0] != "--":
        if args[0] == "--db":
            db, args = args[1], args[2:]
        elif args[0] == "--cases":
            every, args = int(args[1]), args[2:]
        elif args[0] == "--ignore":
            IGNORED.add(args[1])
            args = args[2:]
        elif args[0] == "--file":
            prefix, args = tuple(args[1].split(".")), args[2:]
        else:
            sys.exit("wrongtypes: unknown option " + args[0])
    inp, sep, tool = args[0], args[1], args[2:]
    assert sep == "--" and tool, __doc__
    name = os.path.basename(tool[0])
    with open(inp) as f:
        lines = [l for l in f.read().splitlines() if l.strip()] if prefix is None else [f.read()]
    first, rest = json.loads(lines[0]), lines[1:]
    tmp = tempfile.mkdtemp()
    if prefix is not None:
        folder = os.path.join(tmp, os.path.basename(os.path.dirname(os.path.abspath(inp))))
        shutil.copytree(os.path.dirname(os.path.abspath(inp)), folder)
        docpath = os.path.join(folder, os.path.basename(inp))

    def run(text):
        env = dict(os.environ)
        if db:
            shutil.copy(db, os.path.join(tmp, "m.db"))
            env["HTAM_DB"] = os.path.join(tmp, "m.db")
        if prefix is None:
            p = subprocess.run(tool, input=text, capture_output=True, text=True, env=env,
                               errors="replace", timeout=120)
        else:
            with open(docpath, "w") as f:
                f.write(text)
            p = subprocess.run([folder if a == "{}" else a for a in tool], capture_output=True,
                               text=True, env=env, errors="replace", timeout=120)
        return p.returncode, p.stdout, p.stderr

    rc, out, err = run("\n".join(lines) + "\n")
    if rc != 0:
        sys.exit("wrongtypes: %s fails on the original input (%d): %s" % (name, rc, err))
    orig = canon(out.splitlines())
    cases = clean = refused = unused = 0
    defects = []
    n = 0
    for path in paths(first):
        if not path:
            continue
        for value in wrong_values(get(first, path), path):
            n += 1
            if n % every:
                continue
            edited = put(first, path, value)
            if edited is None:
                continue
            cases += 1
            rc, out, err = run("\n".join([json.dumps(edited)] + rest) + "\n")
            where = ".".join(str(p) for p in path)
            head = err.splitlines()[0] if err.strip() else ""
            lead = name + ": line 1: " if prefix is None else name + ": "
            if rc == 65 and head.startswith(lead) and (
                    name_of(path) is None or name_of(path) in head):
                clean += 1
                refused += 1
                continue
            if rc == 0:
                got = canon(out.splitlines())
                # each record as before, or with the same edit (an output
                # record made from another input record has neither)
                also = []
                for l in orig:
                    e = put(json.loads(l), (prefix or ()) + path, value)
                    also.append(json.dumps(strip(e), sort_keys=True) if e is not None else l)
                if len(got) == len(orig) and all(g in (o, a) or failure_naming(
                        json.loads(g), name_of(path)) for g, o, a in zip(got, orig, also)):
                    clean += 1
                    unused += 1
                    continue
                defects.append("%s: %s = %s: exit 0, and the output changed" %
                               (name, where, json.dumps(value)))
            else:
                defects.append("%s: %s = %s: exit %d: %s" %
                               (name, where, json.dumps(value), rc, head[:160]))
    shutil.rmtree(tmp)
    for d in defects:
        print(d)
    print("%s: %d cases, %d clean (%d refused, %d unused), %d defects" %
          (name, cases, clean, refused, unused, len(defects)))
    sys.exit(1 if defects else 0)


if __name__ == "__main__":
    main()
