"""The slowest hostile case, as a ratio against scanning fixtures/sample.

    python bench/hostile.py [--repeat 3] [--top 5]

Builds every case of the hostile suite (tests/hostile/cases.py, imported, so
the inputs are exactly the ones the tests scan) in a temporary directory and
times `grit scan --json` on each as a whole process (interpreter start-up
included), best of --repeat runs.  The baseline is `grit scan --json
fixtures/sample` timed the same way.  Prints the baseline, the top cases by
time with their ratio to the baseline, and a final line naming the slowest
case.  Timing stays out of the tests (tests/hostile/test_hostile.py only has
a hang guard); docs/reliability.md records a run of this script.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "hostile"))

from cases import CASES, good  # noqa: E402

GRIT = [sys.executable, "-m", "grit_scan"]


def time_scan(path: str, repeat: int) -> tuple[float, int]:
    """Best wall time of `grit scan --json PATH` over repeat runs, and its exit code."""
    best = float("inf")
    rc = -1
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run([*GRIT, "scan", "--json", path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=600)
        best = min(best, time.perf_counter() - t)
        rc = p.returncode
    return best, rc


def remove_tree(d: str) -> None:
    """rmtree, after flattening the 1,000-level case bottom up (rmtree recurses)."""
    chain = [d]
    while os.path.isdir(os.path.join(chain[-1], "n")) and len(chain) < 5000:
        chain.append(os.path.join(chain[-1], "n"))
    for p in reversed(chain[1:]):
        for f in os.listdir(p):
            if f != "n":
                os.unlink(os.path.join(p, f))
        os.rmdir(p)
    shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()

    sample = os.path.join(ROOT, "fixtures", "sample")
    base, base_rc = time_scan(sample, args.repeat)
    print(f"baseline  grit scan --json fixtures/sample  {base:.3f}s  (exit {base_rc})",
          flush=True)

    results: list[tuple[float, str, int]] = []
    with tempfile.TemporaryDirectory(prefix="grit-hostile-bench-") as tmp:
        for c in CASES:
            d = os.path.join(tmp, c.name)
            os.makedirs(d)
            if not c.alone:
                good(d)
            c.make(d)
            secs, rc = time_scan(d, args.repeat)
            results.append((secs, c.name, rc))
            remove_tree(d)

    results.sort(reverse=True)
    print(f"{len(results)} hostile cases, best of {args.repeat}, top {args.top}:")
    for secs, name, rc in results[:args.top]:
        print(f"  {name:<40} {secs:7.3f}s  {secs / base:5.2f}x  (exit {rc})")
    secs, name, _ = results[0]
    print(f"slowest hostile case: {name}  {secs:.3f}s = {secs / base:.2f}x "
          f"scanning fixtures/sample", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
