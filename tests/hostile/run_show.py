"""Run `grit show` (text, then --json) on every hostile case, in this one
process, and print one JSON line per case: the exit codes, the output sizes,
the input's size, and any traceback.  tests/hostile/test_show_hostile.py
runs it under the suite's address-space limit."""

import io
import json
import os
import subprocess
import sys
import tempfile
import traceback
from contextlib import redirect_stderr, redirect_stdout

from cases import CASES, good

from grit_scan.cli import main


def tree_size(d: str) -> int:
    """Bytes under ``d`` (not following links), walked without recursion
    (a case nests 1,000 directories)."""
    total, stack = 0, [d]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    total += e.stat(follow_symlinks=False).st_size
    return total


for case in CASES:
    base = tempfile.mkdtemp(prefix="grit-show-")
    d = os.path.join(base, "tree")
    os.makedirs(d)
    row = {"case": case.name}
    try:
        if not case.alone:
            good(d)
        case.make(d)
        operand = os.path.join(d, case.operand) if case.operand else d
        row["input"] = tree_size(d)
        for mode, args in (("text", []), ("json", ["--json"])):
            out, err = io.StringIO(), io.StringIO()
            with redirect_stdout(out), redirect_stderr(err):
                rc = main(["show", *args, operand])
            row[mode] = {"rc": rc, "bytes": len(out.getvalue()),
                         "traceback": "Traceback" in err.getvalue(),
                         "raw_escape": "\x1b" in out.getvalue() if mode == "text" else False}
            if mode == "json":
                json.loads(out.getvalue())
    except Exception:  # noqa: BLE001 - reported, the test fails on it
        row["error"] = traceback.format_exc()[-2000:]
    finally:
        subprocess.run(["rm", "-rf", base], check=False)  # a 1,000-level chain too
    sys.__stdout__.write(json.dumps(row) + "\n")
    sys.__stdout__.flush()
