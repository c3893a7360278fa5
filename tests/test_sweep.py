"""grit sweep: one JSON line per model, resumable, local processes and Dask."""

from __future__ import annotations

import json
import os
import shutil
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


def _policy(codes: list[int]) -> int:
    """docs/cli.md: 4 when any target could not be read (exit 4), else the
    most severe graded code (1 before 2 before 3), 0 when all are clean."""
    if 4 in codes:
        return 4
    return min((c for c in codes if c), default=0)


def _summary(stdout: str) -> dict[str, Any]:
    return json.loads(stdout.strip().splitlines()[-1])["summary"]


def _lines(out: Path, complete: bool = False) -> dict[str, Any]:
    text = out.read_text()
    if complete:  # a killed sweep may leave its last record torn: the next run cuts it
        text = text[:text.rfind("\n") + 1]
    rows = [json.loads(line) for line in text.splitlines()]
    by = {r["target"]: r for r in rows}
    assert len(by) == len(rows)  # no target twice
    return by


def test_sweep_lines_are_the_scan_json(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    targets = _targets()[:4]
    r = CliRunner().invoke(app, ["sweep", *targets, "--out", str(out), "--jobs", "2"])
    summary = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
    assert summary["scanned"] == 4 and summary["already_done"] == 0
    by = _lines(out)
    assert set(by) == set(targets)
    codes = []
    for t in targets:
        s = CliRunner().invoke(app, ["scan", "--json", t])
        assert by[t]["report"] == json.loads(s.stdout)
        assert by[t]["exit_code"] == s.exit_code
        assert by[t]["read_as"] == "path" and by[t]["resolved"] == t
        codes.append(s.exit_code)
    assert r.exit_code == _policy(codes), r.output


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
    first = _lines(out, complete=True)
    assert 5 <= len(first) < len(targets)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    codes = [CliRunner().invoke(app, ["scan", "--json", t]).exit_code for t in targets]
    assert r.returncode == _policy(codes), r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])["summary"]
    assert summary["already_done"] == len(first)
    assert summary["scanned"] == len(targets) - len(first)
    assert set(_lines(out)) == set(targets)
    # a third run scans nothing, and its exit code still covers every target
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert json.loads(r.stdout.strip().splitlines()[-1])["summary"]["scanned"] == 0
    assert r.returncode == _policy(codes)


def test_sweep_on_dask_equals_local(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    srv = Loopback(repos={f"fx/{Path(t).name}": t for t in _targets()[:6]}).start()
    os.environ["HF_ENDPOINT"] = srv.url
    targets = [f"hf://fx/{Path(t).name}" for t in _targets()[:6]] + ["fx/" + Path(
        _targets()[0]).name]
    try:
        local = tmp_path / "local.jsonl"
        r = CliRunner().invoke(app, ["sweep", *targets, "--out", str(local)])
        want = r.exit_code
        assert want == _policy([x["exit_code"] for x in _lines(local).values()]), r.output
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster:
            dist = tmp_path / "dask.jsonl"
            r = CliRunner().invoke(app, ["sweep", *targets, "--out", str(dist), "--dask",
                                         cluster.scheduler_address])
            assert r.exit_code == want, r.output
    finally:
        srv.stop()
        os.environ.pop("HF_ENDPOINT", None)
    assert _lines(dist) == _lines(local)
    assert len(_lines(local)) == 7
    # a bare repo id is read from the Hub like hf://
    bare = _lines(local)[targets[-1]]
    assert bare["read_as"] == "hub" and bare["resolved"] == "hf://" + targets[-1]
    assert bare["report"]["summary"] == _lines(local)[targets[0]]["report"]["summary"]
    assert _lines(local)[targets[0]]["read_as"] == "url"


def _sweep(tmp_path: Path, *targets: str, cwd: Path | None = None,
           env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    out = tmp_path / "s.jsonl"
    r = subprocess.run([sys.executable, "-m", "grit_scan", "sweep", "--out", str(out),
                        "--retries", "0", "--timeout", "5", *targets],
                       capture_output=True, text=True, timeout=300, cwd=cwd or tmp_path,
                       env={**os.environ, **(env or {})})
    return r, (_lines(out) if out.exists() else {})


def test_a_missing_local_path_is_a_path_not_a_hub_id(tmp_path: Path) -> None:
    """ORG/REPO is a Hub id only when no such local path exists: with a
    local fixtures/ the target is a mistyped path (exit 4), no request is
    made, and the line says how it was read."""
    (tmp_path / "fixtures").mkdir()
    srv = Loopback(repos={}).start()
    try:
        r, by = _sweep(tmp_path, "fixtures/does-not-exist", env={"HF_ENDPOINT": srv.url})
    finally:
        srv.stop()
    rec = by["fixtures/does-not-exist"]
    assert rec["read_as"] == "path"
    assert rec["resolved"] == str(tmp_path / "fixtures/does-not-exist")
    assert "no such file or directory" in rec["error"] and rec["outcome"] == "unreadable"
    assert srv.hits == []
    assert r.returncode == 4, r.stderr
    assert _summary(r.stdout)["outcomes"]["unreadable"] == 1


def test_paths_and_hub_ids_are_told_apart(tmp_path: Path) -> None:
    model = FIX / "broken/sharded-ok"
    (tmp_path / "org").mkdir()
    shutil.copytree(model, tmp_path / "org/repo")  # exists locally: a path
    home = tmp_path / "home"
    shutil.copytree(model, home / "m")
    srv = Loopback(repos={"hub/repo": str(model)}).start()
    try:
        r, by = _sweep(tmp_path, "org/repo", "./org/repo", "~/m", "hub/repo", str(model),
                       env={"HF_ENDPOINT": srv.url, "HOME": str(home)})
    finally:
        srv.stop()
    assert {t: (x["read_as"], x["resolved"]) for t, x in by.items()} == {
        "org/repo": ("path", str(tmp_path / "org/repo")),
        "./org/repo": ("path", str(tmp_path / "org/repo")),
        "~/m": ("path", str(home / "m")),
        "hub/repo": ("hub", "hf://hub/repo"),
        str(model): ("path", str(model)),
    }
    assert all(x["exit_code"] == 0 for x in by.values()), r.stderr
    assert any("/api/models/hub/repo" in h.path for h in srv.hits)
    assert r.returncode == 0
    assert "] ~/m (path): exit 0 clean\n" in r.stderr
    assert "] hub/repo (hub): exit 0 clean\n" in r.stderr


@pytest.mark.parametrize(("names", "code", "outcomes"), [
    (["sharded-ok", "wrong-group-size", "missing-shard-dir"], 4,
     {"clean": 1, "structural": 1, "unreadable": 1}),
    (["sharded-ok", "note-assumed"], 3, {"clean": 1, "warning": 1}),
    (["note-assumed", "declared-contradicts", "wrong-group-size"], 1,
     {"warning": 1, "disagreement": 1, "structural": 1}),
    (["sharded-ok"], 0, {"clean": 1}),
])
def test_exit_code_follows_the_scan_policy_over_all_targets(
        tmp_path: Path, names: list[str], code: int, outcomes: dict[str, int]) -> None:
    targets = [str(FIX / "broken" / n) for n in names]
    r, by = _sweep(tmp_path, *targets)
    for t in targets:  # each target's own scan agrees with the outcome recorded
        if (FIX / "broken" / Path(t).name).exists():
            s = CliRunner().invoke(app, ["scan", "--json", t])
            assert by[t]["exit_code"] == s.exit_code
    assert r.returncode == code, r.stderr
    summary = _summary(r.stdout)
    want = {"clean": 0, "warning": 0, "disagreement": 0, "structural": 0, "unreadable": 0}
    assert summary["outcomes"] == {**want, **outcomes}
    assert summary["exit_code"] == code


def test_dask_workers_get_absolute_paths(tmp_path: Path) -> None:
    """A worker started in another directory reads a relative target."""
    distributed = pytest.importorskip("distributed")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    here = os.getcwd()
    os.chdir(elsewhere)
    try:
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    finally:
        os.chdir(here)
    shutil.copytree(FIX / "broken/sharded-ok", tmp_path / "models/m")
    try:
        r, by = _sweep(tmp_path, "models/m", "--dask", cluster.scheduler_address)
    finally:
        cluster.close()
    rec = by["models/m"]
    assert rec.get("exit_code") == 0, rec  # read by the worker, from the absolute path
    assert rec["resolved"] == str(tmp_path / "models/m")
    assert r.returncode == 0
