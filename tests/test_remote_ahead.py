"""A remote model's files fetched several at a time (parsers/remote/collect.py,
``_Ahead``): more than one request in flight per worker, and the same
reports, byte charges and refusals as reading them one at a time.

The expected values come from the one-at-a-time reading
(``RemoteOptions(in_flight=1)``), the plain path; concurrency is asserted on
what the loopback server observed, never on time."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from remote_loopback import Loopback, hf_endpoint, sharded_model  # noqa: E402

import grit_scan  # noqa: E402
from grit_scan.artifact import ScanDraft  # noqa: E402
from grit_scan.parsers.remote import MAX_FAILED_FETCHES, Budget, RemoteOptions  # noqa: E402
from grit_scan.parsers.remote.collect import collect_url  # noqa: E402

ONE = RemoteOptions(timeout=10.0, retries=0, backoff=0.0, in_flight=1)
MANY = RemoteOptions(timeout=10.0, retries=0, backoff=0.0, in_flight=8)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("ahead")
    # headers from ~12 kB to ~190 kB: some shards need a second ranged read
    sharded_model(tmp / "big", 6, [120, 1800, 400, 1200])
    sharded_model(tmp / "small", 4, [20])
    sharded_model(tmp / "gone", 40, [10])
    srv = Loopback(repos={"t/big": str(tmp / "big"), "t/small": str(tmp / "small"),
                          "t/gone": str(tmp / "gone")}).start()
    with hf_endpoint(srv.url):
        yield srv
    srv.stop()


def _read(url: str, opts: RemoteOptions, limit: int) -> tuple[list[Any], int, int]:
    """What the readers made of ``url`` (per file: path, parsed, tensors,
    issues), the bytes charged and the requests counted."""
    budget = Budget(limit)
    scan = ScanDraft(roots=[url])
    collect_url(url, scan, opts, budget)
    files = [(a.path, a.parsed, len(a.tensors), [(i.code.name, i.message) for i in a.issues])
             for a in scan.artifacts]
    return files, budget.bytes, budget.requests


def test_one_worker_keeps_several_requests_in_flight(hub: Loopback, tmp_path: Path) -> None:
    """``grit sweep --jobs 1`` scans in its own process, one model at a time:
    the server sees more than one of its requests at once."""
    from typer.testing import CliRunner

    from grit_scan.commands._app import app, register

    register()
    hub.latency = 0.2  # every response waits, so requests made together overlap
    try:
        hub.reset()
        code = CliRunner().invoke(app, ["sweep", "--out", str(tmp_path / "s.jsonl"),
                                        "--jobs", "1", "hf://t/small"]).exit_code
        many = hub.most_in_flight
        hub.reset()
        grit_scan.scan(["hf://t/small"], jobs=1, remote=ONE)
        one = hub.most_in_flight
    finally:
        hub.latency = 0.0
    line = json.loads((tmp_path / "s.jsonl").read_text())
    assert code == 0 and line["outcome"] == "clean", line
    assert many > 1
    assert one == 1  # the one-at-a-time reading: what the observation tells apart


@pytest.mark.parametrize("repo", ["t/small", "t/big"])
def test_reports_equal_one_at_a_time(hub: Loopback, repo: str) -> None:
    one = grit_scan.scan([f"hf://{repo}"], jobs=1, remote=ONE).to_json()
    many = grit_scan.scan([f"hf://{repo}"], jobs=1, remote=MANY).to_json()
    assert many == one
    # the pool is the scan's own: no thread of it outlives the scan
    assert not [t for t in threading.enumerate() if t.name.startswith("grit-remote")]
    # the shards and the index (a config without a problem is no artifact)
    assert one["findings"] == [] and len(one["artifacts"]) == (7 if repo == "t/big" else 5)


def test_byte_budget_charged_as_one_at_a_time(hub: Loopback) -> None:
    """Whatever the budget, the files it refuses, what it charges and the
    requests it counts are those of the one-at-a-time reading."""
    _, total, _ = _read("hf://t/big", ONE, 0)
    assert total > 400_000
    refused = 0
    for limit in [1, 30_000, 120_000, 200_000, 260_000, 333_333, 420_000, total - 1, total]:
        hub.reset()
        one = _read("hf://t/big", ONE, limit)
        asked_one = len(hub.hits)
        hub.reset()
        many = _read("hf://t/big", MANY, limit)
        assert many == one, limit
        assert one[1] <= limit
        # a fetch ahead cut short by the budget is made again at its turn:
        # at most the files already ahead (a redirect and a GET each)
        assert asked_one <= len(hub.hits) <= asked_one + 2 * MANY.in_flight
        refused += any("remote byte budget" in m for f in one[0] for _, m in f[3])
    assert refused == 8  # every budget but the whole


def test_failed_fetches_cost_what_they_did(hub: Loopback) -> None:
    """40 shards that all answer 404: MAX_FAILED_FETCHES of them are
    requested and the rest are not, fetched ahead or not."""
    hub.faults = {".safetensors": {"status": 404}}
    try:
        hub.reset()
        one = grit_scan.scan(["hf://t/gone"], jobs=1, remote=ONE).to_json()
        asked_one = sorted(h.path for h in hub.data_hits())
        hub.reset()
        many = grit_scan.scan(["hf://t/gone"], jobs=1, remote=MANY).to_json()
        asked_many = sorted(h.path for h in hub.data_hits())
    finally:
        hub.faults = {}
    assert many == one
    assert asked_many == asked_one
    assert sum(".safetensors" in p for p in asked_one) == MAX_FAILED_FETCHES
    assert any(f"{MAX_FAILED_FETCHES} fetches failed" in f["message"] for f in one["findings"])


def test_threads_fit_an_address_space_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``ulimit -v`` the threads may not take what the scan needs:
    1 GiB for the scan, 80 MB a thread (stack and allocator arena)."""
    import resource

    from grit_scan.parsers.remote import collect

    for soft, want in [(resource.RLIM_INFINITY, 8), (500 << 20, 1), (1 << 30, 1),
                       ((1 << 30) + 3 * (80 << 20), 3), (2 << 30, 8)]:
        monkeypatch.setattr(resource, "getrlimit", lambda _r, s=soft: (s, s))
        assert collect._threads_allowed(8) == want, soft
