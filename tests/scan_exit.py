"""The exit code of `grit scan` on one path under an exit policy, run
in-process through the console entry point (shared by the producer tests)."""

from __future__ import annotations

from pathlib import Path

from grit_scan.cli import main


def scan_exit(sub: Path, policy: str, deep: bool = False) -> int:
    args = ["scan", str(sub), "--exit-policy", policy] + (["--deep"] if deep else [])
    try:
        return main(args) or 0
    except SystemExit as exc:
        return int(exc.code or 0)
