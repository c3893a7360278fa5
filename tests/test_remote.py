"""Remote scans over a loopback server (tests/remote_loopback.py): parity
with local scans, request and byte counts, and every failure mode."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import grit_scan
from grit_scan.parsers.remote import Budget, RemoteError, RemoteOptions
from grit_scan.parsers.remote.collect import open_source

sys.path.insert(0, os.path.dirname(__file__))
from remote_loopback import Loopback, hf_endpoint  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
FAST = RemoteOptions(timeout=5.0, retries=2, backoff=0.0)


def _fixture_dirs() -> list[Path]:
    out = [FIX / "sample"]
    for group in ("broken", "conventions"):
        out += sorted(p for p in (FIX / group).iterdir() if p.is_dir())
    # manifests are read from local directories only (docs/cli.md), and the
    # safetensors library is asked about local files only (reference_loader)
    return [p for p in out if not any(p.rglob("grit-manifest.json"))
            and p.name != "reference-loader"]


@pytest.fixture(scope="module")
def server() -> Any:
    repos = {f"fx/{p.name}": str(p) for p in _fixture_dirs()}
    srv = Loopback(repos=repos, files=str(FIX)).start()
    with hf_endpoint(srv.url):
        yield srv
    srv.stop()


def _normalised(doc: Any, prefix: str, repl: str) -> Any:
    if isinstance(doc, str):
        return doc.replace(prefix, repl)
    if isinstance(doc, list):
        return [_normalised(x, prefix, repl) for x in doc]
    if isinstance(doc, dict):
        return {_normalised(k, prefix, repl): _normalised(v, prefix, repl)
                for k, v in doc.items()}
    return doc


@pytest.mark.parametrize("fixture", _fixture_dirs(), ids=lambda p: p.name)
def test_remote_report_equals_local(server: Loopback, fixture: Path) -> None:
    local = grit_scan.scan([str(fixture)], jobs=1).to_json()
    remote = grit_scan.scan([f"hf://fx/{fixture.name}"], jobs=1, remote=FAST).to_json()
    assert local["findings"] or local["artifacts"]
    assert _normalised(remote, f"hf://fx/{fixture.name}", str(fixture)) == local


@pytest.mark.parametrize("name", ["digest-mismatch", "sample"])
def test_remote_deep_equals_local(server: Loopback, name: str) -> None:
    local = grit_scan.scan([str(FIX / "broken" / name if name != "sample" else FIX / name)],
                           deep=True, jobs=1).to_json()
    remote = grit_scan.scan([f"hf://fx/{name}"], deep=True, jobs=1, remote=FAST).to_json()
    loc = str(FIX / "broken" / name if name != "sample" else FIX / name)
    assert _normalised(remote, f"hf://fx/{name}", loc) == local


def _big_header_safetensors(path: Path, n_tensors: int, tensor_bytes: int) -> int:
    """A safetensors file whose header exceeds the speculative block; returns
    8 + the header length."""
    header: dict[str, Any] = {}
    off = 0
    for i in range(n_tensors):
        header[f"model.layers.{i}.mlp.down_proj.weight"] = {
            "dtype": "F32", "shape": [tensor_bytes // 4], "data_offsets": [off, off + tensor_bytes]}
        off += tensor_bytes
    raw = json.dumps(header).encode()
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(raw)) + raw)
        fh.truncate(8 + len(raw) + off)
    return 8 + len(raw)


def test_safetensors_header_costs_two_ranged_requests(server: Loopback, tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    head = _big_header_safetensors(tmp_path / "m" / "model.safetensors", 3000, 4096)
    assert head > 100_000  # the second read is needed
    server.repos["t/big"] = str(tmp_path / "m")
    server.reset()
    rep = grit_scan.scan(["hf://t/big"], jobs=1, remote=FAST)
    assert rep.artifacts[0].parsed and len(rep.artifacts[0].tensors) == 3000
    data = server.data_hits()
    assert [h.range for h in data] == ["bytes=0-99999", f"bytes=100000-{head - 1}"]
    assert sum(h.sent for h in data) == head  # the header, not one tensor byte
    # listing + 2 x (302 + 206)
    assert len(server.hits) == 5


def test_sharded_repository_one_request_per_small_file(server: Loopback) -> None:
    server.reset()
    grit_scan.scan(["hf://fx/sharded-ok"], jobs=1, remote=FAST)
    d = FIX / "broken" / "sharded-ok"
    files = sorted(p.name for p in d.iterdir())
    data = server.data_hits()
    assert sorted(h.path.split("?")[0].rsplit("/", 1)[1] for h in data) == files
    assert sum(h.sent for h in data) == sum(min(100_000, (d / f).stat().st_size) for f in files)


def test_gguf_vocabulary_is_not_downloaded_twice(server: Loopback, tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    (tmp_path / "g").mkdir()
    w = gguf.GGUFWriter(str(tmp_path / "g" / "model.gguf"), "llama")
    n = 20_000
    w.add_token_list([f"tok{i:06d}" for i in range(n)])
    w.add_token_scores([0.0] * n)
    w.add_token_types([1] * n)
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 256 * 64), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    server.repos["t/gguf"] = str(tmp_path / "g")
    server.reset()
    rep = grit_scan.scan(["hf://t/gguf"], jobs=1, remote=FAST)
    art = rep.artifacts[0]
    header = art.metadata["header_bytes"]
    fetched = sum(h.sent for h in server.data_hits())
    assert art.parsed and header > 200_000
    assert fetched <= 1.2 * header, (fetched, header)
    assert fetched < art.size / 4  # the tensor bytes stay on the server


def _finding_for(rep: Any, needle: str) -> list[str]:
    return [f.message for f in rep.findings if needle in f.path or needle in f.message]


@pytest.mark.parametrize(("fault", "expect"), [
    ({"status": 404}, "HTTP 404"),
    ({"status": 403}, "HTTP 403"),
    ({"429": 100}, "HTTP 429"),
    ({"status": 503}, "HTTP 503"),
    ({"reset_after": 10}, "connection closed after"),
])
def test_failed_file_is_a_finding_and_the_scan_goes_on(
        server: Loopback, fault: dict[str, Any], expect: str) -> None:
    server.faults = {"llama-mxfp4/model.safetensors": dict(fault)}
    server.reset()
    try:
        rep = grit_scan.scan(["hf://fx/sample"], jobs=1, remote=FAST)
    finally:
        server.faults = {}
    bad = [f for f in rep.findings if f.path == "hf://fx/sample/llama-mxfp4/model.safetensors"]
    assert len(bad) == 1 and bad[0].kind.value == "file_unparseable"
    assert expect in bad[0].message and "hf://fx/sample/llama-mxfp4" in bad[0].message
    assert "X-Amz-Signature" not in bad[0].message  # signed URLs are not echoed
    # the other two models were read
    assert sum(1 for a in rep.artifacts if a.parsed and a.format.is_checkpoint_file) == 2
    tries = [h for h in server.data_hits() if "llama-mxfp4/model.safetensors" in h.path]
    # 404 and 403 cannot succeed on a retry; 429, 503 and a reset can
    retried = "status" not in fault or fault["status"] >= 500
    assert len(tries) == (FAST.retries + 1 if retried else 1)


def test_429_then_success_is_retried(server: Loopback) -> None:
    server.faults = {"llama-gguf/model.gguf": {"429": 2}}
    try:
        rep = grit_scan.scan(["hf://fx/sample"], jobs=1, remote=FAST)
    finally:
        server.faults = {}
    assert all(a.parsed for a in rep.artifacts)


def test_byte_budget_is_never_exceeded(server: Loopback, tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    _big_header_safetensors(tmp_path / "b" / "model.safetensors", 3000, 4096)
    server.files = str(tmp_path / "b")
    budget = Budget(150_000)
    try:
        with pytest.raises(RemoteError, match="budget of 150,000 bytes"):
            src = open_source(f"{server.url}/files/model.safetensors",
                              RemoteOptions(budget=150_000), budget)
            src.read_at(0, src.size)
    finally:
        server.files = str(FIX)
    assert budget.bytes <= 150_000


def test_ignored_range_over_the_whole_body_limit_reads_no_body(server: Loopback,
                                                               tmp_path: Path) -> None:
    from grit_scan.parsers.remote import WHOLE_BODY_LIMIT

    assert WHOLE_BODY_LIMIT == 16 * 1024 * 1024
    with open(tmp_path / "big.gguf", "wb") as fh:
        fh.truncate(WHOLE_BODY_LIMIT + 1)
    server.files = str(tmp_path)
    server.faults = {"big.gguf": {"ignore_range": True}}
    budget = Budget(0)
    try:
        with pytest.raises(RemoteError, match="ignored the Range request .*16,777,217 bytes"):
            open_source(f"{server.url}/files/big.gguf", FAST, budget)
    finally:
        server.faults = {}
        server.files = str(FIX)
    assert budget.bytes == 0 and budget.requests == 1


def test_ignored_range_under_the_limit_is_read_whole_with_a_note(server: Loopback) -> None:
    local = grit_scan.scan([str(FIX / "sample")], jobs=1).to_json()
    server.faults = {"llama-mxfp4/model.safetensors": {"ignore_range": True}}
    server.reset()
    try:
        rep = grit_scan.scan(["hf://fx/sample"], jobs=1, remote=FAST).to_json()
    finally:
        server.faults = {}
    arts = {a["path"]: a for a in rep["artifacts"]}
    art = arts.pop("hf://fx/sample/llama-mxfp4/model.safetensors")
    assert [n for n in art["notes"] if "ignored the Range request" in n] == [
        "hf://fx/sample/llama-mxfp4/model.safetensors: the server ignored the Range request "
        "and sent the whole file; it was read whole (at most 16,777,216 bytes are accepted "
        "from such a server)"]
    art["notes"] = [n for n in art["notes"] if "ignored the Range" not in n]
    rep["artifacts"] = sorted([art, *arts.values()], key=lambda a: a["path"])
    local["artifacts"] = sorted(local["artifacts"], key=lambda a: a["path"])
    assert _normalised(rep, "hf://fx/sample", str(FIX / "sample")) == local
    size = (FIX / "sample/llama-mxfp4/model.safetensors").stat().st_size
    tries = [h for h in server.data_hits() if "llama-mxfp4/model.safetensors" in h.path]
    assert [(h.status, h.sent) for h in tries] == [(200, size)]


def test_https_file_and_index_urls(server: Loopback) -> None:
    d = FIX / "broken" / "missing-shard"
    idx = next(p.name for p in d.iterdir() if p.name.endswith(".index.json"))
    url = f"{server.url}/files/broken/missing-shard"
    rep = grit_scan.scan([f"{url}/{idx}"], jobs=1, remote=FAST)
    kinds = sorted(f.kind.value for f in rep.findings)
    local = grit_scan.scan([str(d / idx)], jobs=1)
    assert kinds == sorted(f.kind.value for f in local.findings)
    assert "missing_shard" in kinds


def test_unknown_repository_is_a_finding(server: Loopback) -> None:
    rep = grit_scan.scan(["hf://fx/does-not-exist", str(FIX / "sample")], jobs=1, remote=FAST)
    bad = [f for f in rep.findings if f.path == "hf://fx/does-not-exist"]
    assert len(bad) == 1 and "HTTP 404" in bad[0].message
    assert any(a.parsed for a in rep.artifacts)


def test_token_goes_to_the_hub_only(server: Loopback, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
    server.reset()
    rep = grit_scan.scan(["hf://fx/sample"], jobs=1, remote=FAST)
    hub = [h for h in server.hits if "/resolve/" in h.path or h.path.startswith("/api/")]
    assert hub and all(h.auth == "Bearer hf_secret_token_value" for h in hub)
    assert "hf_secret_token_value" not in json.dumps(rep.to_json())


def test_missing_extra_is_one_line(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['huggingface_hub'] = None; sys.argv = ['grit', 'scan', "
            "'hf://org/repo']; from grit_scan.cli import run; run()")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 64
    assert p.stderr.strip().splitlines() == [
        "grit: error: hf://org/repo: hf:// URLs need the huggingface_hub package: "
        "pip install 'grit-scan[remote]'"]


def test_scan_cli_takes_the_remote_options(server: Loopback, capsys: Any) -> None:
    from grit_scan.cli import main

    code = main(["scan", "--json", "--max-remote-bytes", "2000", "--retries", "0",
                 "--timeout", "5", "hf://fx/sample"])
    doc = json.loads(capsys.readouterr().out)
    assert any("budget" in f["message"] for f in doc["findings"])
    assert code in (1, 4)  # files over the budget are not read
    assert main(["scan", "--timeout", "0", "hf://fx/sample"]) == 64


def test_remote_sources_do_not_outlive_the_scan(server: Loopback) -> None:
    """--deep reopens remote files through the scan's own sources: once the
    scan is over, nothing of its remote trees is kept."""
    import gc

    from grit_scan.parsers.remote import collect

    grit_scan.scan(["hf://fx/sample"], deep=True, jobs=1, remote=FAST)
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, collect.RemoteTree)]


def test_budgets_are_the_documented_ones() -> None:
    from grit_scan.parsers import remote

    text = (ROOT / "docs" / "reliability.md").read_text()
    for name, value in [("WHOLE_BODY_LIMIT", 16 * 1024 * 1024),
                        ("MAX_LISTING_BYTES", 16 * 1024 * 1024),
                        ("MAX_LISTING_PAGES", 100), ("MAX_LISTING_ENTRIES", 50_000),
                        ("MAX_FAILED_FETCHES", 32)]:
        assert getattr(remote, name) == value
        assert f"`{name}`" in text and f"{value:,}" in text, name
