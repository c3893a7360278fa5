"""The remote defects of the third reliability audit, and the remote
fallbacks an auditor asked for, each against a hostile server on
127.0.0.1 (remote_servers.py).

Every scan runs in its own process under the hostile suite's address-space
limit (limits.py) and reports its own time and peak RSS (run_scan.py).
Times are bounds on hangs, never speed goals: a scan whose requests each
have a deadline of T seconds must end within a few T.  Each test failed on
the round's start commit (7b7b45c): a hang past the child's timeout, a
secret in the output, a request that should not have been made.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from limits import AS_LIMIT, CHILD_ENV, DEFINED_EXITS
from remote_servers import (
    Drip,
    Files,
    Hub,
    Silent,
    plain_http_server,
    reply,
    running,
    self_signed,
    serve_file,
)

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_scan.py")
ROOT = Path(HERE).parent.parent
FIX = ROOT / "fixtures"
SAMPLE = FIX / "sample" / "llama-mxfp4" / "model.safetensors"
FORMATS = ("json", "sarif", "concise", "full", "github", "grouped")
TOKEN = "hf_tok3n_S3CRET_value"
# the budgets docs/reliability.md states (parsers/remote/__init__.py holds them)
MAX_LISTING_PAGES = 100
MAX_FAILED_FETCHES = 32


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def child(args: list[str], env: dict[str, str] | None = None, timeout: float = 60
          ) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                       timeout=timeout, env={**CHILD_ENV, **(env or {})}, cwd=HERE,
                       preexec_fn=_limit)
    assert p.returncode in DEFINED_EXITS, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    return p


def scan(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> dict[str, Any]:
    """`grit scan --json ARGS` in a child: {"rc", "cpu_seconds", "maxrss_mb", "report"}."""
    p = child([RUNNER, *args], env, timeout)
    out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["report"] is not None, p.stdout[-2000:]
    out["stderr"] = p.stderr
    return out


def messages(report: dict[str, Any]) -> list[str]:
    return [f["message"] for f in report["findings"]]


def hub_env(hub: Any, **more: str) -> dict[str, str]:
    return {"HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HUB_OFFLINE": "0", **more}


# -- deadlines ---------------------------------------------------------------

@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers"])
def test_slow_drip_server_is_cut_off_by_the_whole_request_deadline(headers: bool) -> None:
    """1 byte/s defeats a per-read timeout; --timeout 3 --retries 0 ends the
    request at its 3 s deadline, and the finding says so.  The child's own
    40 s limit is the hang guard (the start commit was still reading at 40 s);
    no wall-clock bound is asserted, which a loaded machine would decide."""
    with running(Drip(headers)) as srv:
        out = scan("--timeout", "3", "--retries", "0", f"{srv.url}/m/model.safetensors",
                   timeout=40)
    assert out["rc"] == 4
    (msg,) = messages(out["report"])
    assert "timed out: the whole request took longer than 3 s" in msg


def test_fsspec_source_has_the_same_deadline() -> None:
    """A silent ftp server held fsspec for 30 s under --timeout 2; now the
    deadline ends it (the finding says it timed out) well inside the child's
    20 s limit."""
    srv = Silent()
    try:
        out = scan("--timeout", "2", "--retries", "0",
                   f"ftp://127.0.0.1:{srv.port}/m/model.safetensors", timeout=20)
    finally:
        srv.stop()
    assert out["rc"] == 4
    assert any("timed out" in m for m in messages(out["report"]))


# -- credentials -------------------------------------------------------------

def test_userinfo_url_is_fetched_with_basic_auth_and_redacted_everywhere() -> None:
    password = "pa55-W0RD-hunter2"
    local = scan(str(SAMPLE))
    with running(Files(str(SAMPLE.parent), "alice", password)) as srv:
        url = srv.url.replace("://", f"://alice:{password}@") + "/files/model.safetensors"
        out = scan(url)
        texts = [child(["-m", "grit_scan", "scan", "--output-format", f, url])
                 for f in FORMATS]
        asked = list(srv.requests)
    report = out["report"]
    # fetched from 127.0.0.1 with basic auth, and read as the local file is
    assert asked and all(r.host == f"127.0.0.1:{srv.port}" for r in asked)
    assert all(r.auth == "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()
               for r in asked)
    assert [f["kind"] for f in report["findings"]] == [
        f["kind"] for f in local["report"]["findings"]]
    assert out["rc"] == local["rc"]
    assert report["roots"] == [f"http://***@127.0.0.1:{srv.port}/files/model.safetensors"]
    for p in texts:
        assert password not in p.stdout + p.stderr and "alice" not in p.stdout + p.stderr
    assert password not in json.dumps(report) and "alice" not in json.dumps(report)


def test_credentials_are_redacted_from_errors() -> None:
    password = "pa55-W0RD-hunter2"
    url = (f"http://bob:{password}@nosuchhost.invalid/m/model.safetensors"
           "?X-Amz-Signature=SIGNATUREvalue&sig=SIGvalue2")
    for f in FORMATS:
        p = child(["-m", "grit_scan", "scan", "--retries", "0", "--output-format", f, url])
        text = p.stdout + p.stderr
        assert p.returncode == 4
        for secret in (password, "bob", "SIGNATUREvalue", "SIGvalue2"):
            assert secret not in text, (f, text)
        assert "could not be resolved" in text or f == "sarif"


def test_presigned_url_is_requested_and_its_query_redacted() -> None:
    query = ("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260101"
             "&X-Amz-Signature=0123456789abcdefSIG&token=TOKENvalue&sig=SIGvalue")
    secrets = ("AKIAEXAMPLE", "0123456789abcdefSIG", "TOKENvalue", "SIGvalue")
    local = scan(str(SAMPLE))
    with running(Files(str(SAMPLE.parent))) as srv:
        url = f"{srv.url}/files/model.safetensors?{query}"
        out = scan(url)
        texts = [child(["-m", "grit_scan", "scan", "--output-format", f, url])
                 for f in FORMATS]
        asked = list(srv.requests)
    assert asked and all(r.path == f"/files/model.safetensors?{query}" for r in asked)
    assert out["rc"] == local["rc"]
    assert [f["kind"] for f in out["report"]["findings"]] == [
        f["kind"] for f in local["report"]["findings"]]
    for text in [json.dumps(out["report"])] + [p.stdout + p.stderr for p in texts]:
        for s in secrets:
            assert s not in text


# -- the token ---------------------------------------------------------------

def test_token_is_not_sent_over_http_after_a_redirect_from_https(tmp_path: Path) -> None:
    """The Hub over https 302s to plain http on the same host and port."""
    cert, ctx = self_signed(str(tmp_path))
    data = SAMPLE.read_bytes()

    def resolve(h: Any, repo: str, rev: str, path: str) -> None:
        if h.headers.get("Host") and isinstance(h.connection, __import__("ssl").SSLSocket):
            port = h.server.server_address[1]
            return reply(h, 302, b"", {"Location": f"http://127.0.0.1:{port}/plain/{path}"})
        return serve_file(h, data)

    listing = json.dumps([{"type": "file", "path": "model.safetensors", "size": len(data)}])
    hub = Hub(lambda page: (listing.encode(), None), resolve, tls=ctx)
    hub.resolve = resolve
    with running(hub):
        out = scan("hf://o/r", env=hub_env(hub, SSL_CERT_FILE=cert))
        asked = list(hub.requests)
    assert [r.tls for r in asked if r.path.startswith("/api/")] == [True]
    assert all(r.auth == f"Bearer {TOKEN}" for r in asked if r.tls)
    plain = [r for r in asked if not r.tls]
    assert plain, asked  # the redirect was followed, over http
    assert all(r.auth is None for r in plain), plain
    assert TOKEN not in json.dumps(out["report"])


def test_token_is_not_sent_to_a_next_page_on_another_host() -> None:
    other = Hub(lambda page: (b"[]", None))
    entry = [{"type": "file", "path": "a.safetensors", "size": 10}]
    with running(other):
        hub = Hub(lambda page: (json.dumps(entry).encode(),
                                f'<{other.url}/api/models/o/r/tree/main?page=1>; rel="next"'))
        with running(hub):
            out = scan("hf://o/r", env=hub_env(hub))
        asked = list(other.requests)
    assert all(r.auth is None for r in asked), asked
    assert any("another origin" in m for m in messages(out["report"]))


# -- listing budgets ---------------------------------------------------------

def test_a_next_page_pointing_at_itself_is_read_once() -> None:
    entry = [{"type": "file", "path": "m/model.safetensors", "size": 10}]
    hub = Hub(lambda page: (json.dumps(entry).encode(), None))
    hub.listing = lambda page: (json.dumps(entry).encode(),
                                f'<{hub.url}/api/models/o/r/tree/main?recursive=true>; '
                                'rel="next"')
    with running(hub):
        out = scan("hf://o/r", env=hub_env(hub), timeout=120)
        pages = hub.listing_requests()
    assert len(pages) == 1
    assert any("already read" in m for m in messages(out["report"]))


def test_listing_pages_are_budgeted() -> None:
    hub = Hub(lambda page: (b"[]", None))
    hub.listing = lambda page: (b"[]", f'<{hub.url}/api/models/o/r/tree/main?page={page + 1}>; '
                                'rel="next"')
    with running(hub):
        out = scan("hf://o/r", env=hub_env(hub), timeout=120)
        pages = hub.listing_requests()
    assert len(pages) == MAX_LISTING_PAGES
    assert any(f"more than {MAX_LISTING_PAGES} pages" in m for m in messages(out["report"]))


def test_a_huge_listing_page_is_refused_within_its_byte_budget() -> None:
    """A 40 MB page of empty objects: 612 MB and 14 s for a 64 MB one before."""
    page = b"[" + b"{}," * (40 * 1024 * 1024 // 3) + b"{}]"
    with running(Hub(lambda p: (page, None))) as hub:
        out = scan("hf://o/r", env=hub_env(hub), timeout=120)
    assert any("exceeds 16,777,216 bytes" in m for m in messages(out["report"]))
    assert out["maxrss_mb"] < 250, out["maxrss_mb"]


def test_listing_entries_are_budgeted() -> None:
    """60,000 tiny elements: the entry budget stops the parse, not memory."""
    page = json.dumps([{"type": "file", "path": f"f/{i}.txt", "size": 1}
                       for i in range(60_000)]).encode()
    with running(Hub(lambda p: (page, None))) as hub:
        out = scan("hf://o/r", env=hub_env(hub), timeout=120)
    assert any("more than 50,000 entries" in m for m in messages(out["report"]))


def test_names_that_all_fail_cost_a_bounded_number_of_requests() -> None:
    """40,000 listed checkpoints that all answer 404 made 32,000+ requests."""
    page = json.dumps([{"type": "file", "path": f"m{i:05d}/model.safetensors", "size": 10}
                       for i in range(40_000)]).encode()
    with running(Hub(lambda p: (page, None))) as hub:
        out = scan("hf://o/r", env=hub_env(hub), timeout=120)
        resolves = [r for r in hub.requests if "/resolve/" in r.path]
    assert len(resolves) == MAX_FAILED_FETCHES == 32
    assert out["rc"] == 4
    msgs = messages(out["report"])
    assert sum("HTTP 404" in m for m in msgs) == 32
    assert any("39,968 more files were not requested" in m or
               "39968 more files were not requested" in m for m in msgs), msgs[-3:]


# -- dot segments ------------------------------------------------------------

def test_dot_segments_and_absolute_names_in_a_listing_are_refused() -> None:
    bad = ["../../../etc/passwd.safetensors", "/abs/x.safetensors", "./c.safetensors",
           "d/../e.safetensors", "f//g.safetensors"]
    entries = [{"type": "file", "path": p, "size": 10} for p in bad + ["ok.safetensors"]]
    with running(Hub(lambda p: (json.dumps(entries).encode(), None))) as hub:
        out = scan("hf://o/r", env=hub_env(hub))
        asked = [r.path for r in hub.requests if "/resolve/" in r.path]
    assert asked == ["/o/r/resolve/main/ok.safetensors"]
    escapes = [f for f in out["report"]["findings"] if f["kind"] == "path_escape"]
    assert len(escapes) == len(bad)
    assert all("refused, never requested" in f["message"] for f in escapes)


@pytest.mark.parametrize("url", ["hf://h3/..", "hf://o/r@..", "hf://o/r@main/../x.gguf",
                                 "hf://o/r/a/./b.gguf", "hf://../r"])
def test_dot_segments_in_hf_urls_are_refused_before_any_request(url: str) -> None:
    with running(Hub(lambda p: (b"[]", None))) as hub:
        out = scan(url, env=hub_env(hub))
        asked = list(hub.requests)
    assert asked == []
    assert [f["kind"] for f in out["report"]["findings"]] == ["path_escape"]
    assert out["rc"] in DEFINED_EXITS and out["rc"] != 0


# -- fallbacks (plain http servers) -------------------------------------------

def test_plain_http_server_serves_an_index_and_its_shards() -> None:
    """python -m http.server ignores Range: small files are read whole, with a note."""
    d = FIX / "broken" / "sharded-ok"
    idx = next(p.name for p in d.iterdir() if p.name.endswith(".index.json"))
    local = scan(str(d / idx))
    with running(plain_http_server(str(d))) as srv:
        out = scan(f"{srv.url}/{idx}")
        asked = list(srv.requests)
    assert out["rc"] == local["rc"]
    assert sorted(f["kind"] for f in out["report"]["findings"]) == sorted(
        f["kind"] for f in local["report"]["findings"])
    parsed = [a for a in out["report"]["artifacts"] if a["parsed"]]
    assert len(parsed) == len([a for a in local["report"]["artifacts"] if a["parsed"]])
    assert all(any("ignored the Range request" in n for n in a["notes"]) for a in parsed)
    # each shard once: the whole body arrived with the first request
    shards = [r.path for r in asked if r.path.endswith(".safetensors")]
    assert sorted(shards) == sorted(f"/{p.name}" for p in d.glob("*.safetensors"))


@pytest.mark.parametrize("tail", ["/", "/dir/", "/weights.bin"])
def test_directory_urls_over_plain_http_name_what_works(tail: str) -> None:
    with running(plain_http_server(str(FIX / "sample"))) as srv:
        out = scan(f"{srv.url}{tail}")
    (msg,) = messages(out["report"])
    assert "cannot be listed over plain HTTP(S)" in msg
    for works in (".index.json", "hf://ORG/REPO", "s3://"):
        assert works in msg
    assert out["rc"] == 4


# -- what is retried -----------------------------------------------------------

def _attempts(url: str, retries: int = 3) -> int:
    from grit_scan.parsers.remote import Budget, RemoteError, RemoteOptions
    from grit_scan.parsers.remote.collect import open_source

    budget = Budget(0)
    with pytest.raises(RemoteError):
        open_source(url, RemoteOptions(timeout=5, retries=retries, backoff=0.0), budget)
    return budget.requests


def test_connection_refused_is_not_retried() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    assert _attempts(f"http://127.0.0.1:{port}/model.safetensors") == 1


def test_dns_failure_is_not_retried() -> None:
    assert _attempts("http://nosuchhost.invalid/model.safetensors") == 1


def test_tls_failure_is_not_retried(tmp_path: Path) -> None:
    _, ctx = self_signed(str(tmp_path))  # not trusted by the client
    with running(Files(str(SAMPLE.parent), tls=ctx)) as srv:
        assert _attempts(f"{srv.url}/files/model.safetensors") == 1
        assert srv.connections == 1


@pytest.mark.parametrize(("status", "tries"), [(400, 1), (401, 1), (404, 1), (410, 1),
                                                (408, 4), (429, 4), (500, 4), (503, 4)])
def test_only_retryable_statuses_are_retried(status: int, tries: int) -> None:
    class Status(Files):
        def respond(self, h: Any) -> None:
            reply(h, status, b"no", {"Retry-After": "0"})

    with running(Status(str(SAMPLE.parent))) as srv:
        assert _attempts(f"{srv.url}/files/model.safetensors") == tries
        assert len(srv.requests) == tries
