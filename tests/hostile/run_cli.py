"""Run the real ``grit`` command line in this process, its output on the
process's own stdout (a real byte stream: whatever encoding the parent set
with PYTHONIOENCODING), and report the peak RSS.

Used by test_round3.py as a subprocess under limits.py's address-space
limit: ``python run_cli.py ARGS`` exits with grit's exit code and writes
``GRIT_PEAK_RSS_MB=<float>`` as the last line of stderr."""

import sys

from grit_scan.cli import main


def peak_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


try:
    rc = main(sys.argv[1:])
except SystemExit as exc:  # typer's exits
    rc = exc.code if isinstance(exc.code, int) else 1
sys.stdout.flush()
sys.stderr.write(f"GRIT_PEAK_RSS_MB={peak_rss_mb():.1f}\n")
sys.exit(rc)
