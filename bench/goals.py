"""Every goal of the performance issue in one run, one summary.

    python bench/goals.py [--quick] [--repeat N] [--models N] [--skip conventions,models,remote]

Runs, one after the other, with the interpreter grit-scan is installed in
(a non-editable install: see bench/models.py):

1. ``bench/conventions.py``: every convention's tree (500 shards x 800
   tensors; --quick 50) against its floor, and KB of peak RSS per stored
   tensor;
2. ``bench/models.py --only 1,2,5,6,7,8``: the BF16/NVFP4/FP8/MXFP4 trees,
   the GGUF of 100,000 Q4_K tensors, ``--deep`` and ``check --payload-file``
   against the C FNV loop, start-up against ``python -c pass``, memory per
   stored tensor;
3. ``bench/remote.py --only remote-sweep,sweep``: the remote sweep against
   the latency floor, dask against ``--jobs 2`` (remote and local).

Each script's own output streams through as it runs; at the end the summary
repeats their tables and ratio lines, with the load average before and
after, so that one run is one record for docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(script: str, args: list[str]) -> list[str]:
    """Run one bench script with this interpreter, echo its output, and
    return the lines worth repeating (tables and ratio lines)."""
    cmd = [sys.executable, os.path.join(HERE, script), *args]
    print(f"\n## {' '.join([script, *args])}  (load average {load()})", flush=True)
    keep: list[str] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None
        for line in p.stdout:
            print(line, end="", flush=True)
            if line.startswith(("|", "remote sweep", "sweep of", "grit sweep", "#")):
                keep.append(line.rstrip("\n"))
    if p.returncode:
        keep.append(f"(exit {p.returncode})")
    return keep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the scripts' --quick sizes")
    ap.add_argument("--repeat", type=int, default=3, help="best of N timed runs")
    ap.add_argument("--models", type=int, default=1000, help="models in the sweeps")
    ap.add_argument("--skip", default="", help="comma-separated: conventions, models, remote")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    quick = ["--quick"] if a.quick else []
    rep = ["--repeat", str(a.repeat)]
    # an installed package has its bytecode cached; with this set, every
    # grit process of the runs would compile its modules again
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.time()
    start = f"# {time.strftime('%Y-%m-%d %H:%M')}; load average {load()} at the start"
    parts: list[tuple[str, list[str]]] = []
    if "conventions" not in skip:
        parts.append(("per convention", run("conventions.py", quick + rep)))
    if "models" not in skip:
        parts.append(("trees, GGUF, digest, start-up, memory",
                      run("models.py", ["--only", "1,2,5,6,7,8", *quick, *rep])))
    if "remote" not in skip:
        parts.append(("sweeps", run("remote.py", ["--only", "remote-sweep,sweep",
                                                  "--models", str(a.models)])))
    print(f"\n# Summary\n{start}; {time.strftime('%H:%M')} load average {load()} at the end; "
          f"{time.time() - t0:.0f} s")
    for title, lines in parts:
        print(f"\n## {title}\n")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
