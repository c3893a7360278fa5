"""Run `grit scan --json` in this process and report rc, CPU time and peak RSS.

Used by the hostile-input tests as a subprocess, so each case's CPU time and
memory are its own: prints one JSON line {"rc", "cpu_seconds", "maxrss_mb",
"report"} on stdout (the report is the --json document), and exits with
the scan's own exit code.  CPU time (user + system, every thread), not
wall-clock time: a loaded machine stretches the one, not the other."""

import io
import json
import resource
import sys
import time
from contextlib import redirect_stdout

from grit_scan.cli import main

t0 = time.process_time()
buf = io.StringIO()
with redirect_stdout(buf):
    rc = main(["scan", "--json", *sys.argv[1:]])
cpu = time.process_time() - t0


def peak_rss_mb() -> float:
    """This process's own peak RSS.  ru_maxrss would include the parent's
    high-water mark inherited across fork/exec on Linux; VmHWM does not."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


rss = peak_rss_mb()
try:
    report = json.loads(buf.getvalue())
except ValueError:
    report = None
print(json.dumps({"rc": rc, "cpu_seconds": cpu, "maxrss_mb": rss, "report": report,
                  "stdout": buf.getvalue() if report is None else ""}))
sys.exit(rc)
