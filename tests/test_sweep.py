"""grit sweep: one JSON line per model, resumable, local processes and Dask."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from grit_scan.commands._app import app, register

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
sys.path.insert(0, os.path.dirname(__file__))
from remote_loopback import Loopback  # noqa: E402

register()


def _targets() -> list[str]:
    return [str(p) for g in ("broken", "conventions") for p in sorted((FIX / g).iterdir())
            if p.is_dir()]


def _lines(out: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by = {r["target"]: r for r in rows}
    assert len(by) == len(rows)  # no target twice
    return by


def test_sweep_lines_are_the_scan_json(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    targets = _targets()[:4]
    r = CliRunner().invoke(app, ["sweep", *targets, "--out", str(out), "--jobs", "2"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
    assert summary["scanned"] == 4 and summary["already_done"] == 0
    by = _lines(out)
    assert set(by) == set(targets)
    for t in targets:
        s = CliRunner().invoke(app, ["scan", "--json", t])
        assert by[t]["report"] == json.loads(s.stdout)
        assert by[t]["exit_code"] == s.exit_code


def test_sweep_killed_halfway_resumes(tmp_path: Path) -> None:
    targets = _targets()
    lst = tmp_path / "targets.txt"
    lst.write_text("\n".join(targets) + "\n")
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "grit_scan", "sweep", "--from", str(lst), "--out", str(out)]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().count("\n") >= 5:
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    first = _lines(out)
    assert 5 <= len(first) < len(targets)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
    assert summary["already_done"] == len(first)
    assert summary["scanned"] == len(targets) - len(first)
    assert set(_lines(out)) == set(targets)
    # a third run scans nothing
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert json.loads(r.stdout.strip().splitlines()[-1])["summary"]["scanned"] == 0


def test_sweep_on_dask_equals_local(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    srv = Loopback(repos={f"fx/{Path(t).name}": t for t in _targets()[:6]}).start()
    os.environ["HF_ENDPOINT"] = srv.url
    targets = [f"hf://fx/{Path(t).name}" for t in _targets()[:6]] + ["fx/" + Path(
        _targets()[0]).name]
    try:
        local = tmp_path / "local.jsonl"
        r = CliRunner().invoke(app, ["sweep", *targets, "--out", str(local)])
        assert r.exit_code == 0, r.output
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster:
            dist = tmp_path / "dask.jsonl"
            r = CliRunner().invoke(app, ["sweep", *targets, "--out", str(dist), "--dask",
                                         cluster.scheduler_address])
            assert r.exit_code == 0, r.output
    finally:
        srv.stop()
        os.environ.pop("HF_ENDPOINT", None)
    assert _lines(dist) == _lines(local)
    assert len(_lines(local)) == 7
    # a bare repo id is read from the Hub like hf://
    bare = _lines(local)[targets[-1]]["report"]
    assert bare["summary"] == _lines(local)[targets[0]]["report"]["summary"]
