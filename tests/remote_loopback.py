"""A loopback HTTP server for the remote tests and benchmarks.

It mimics what grit reads from the Hugging Face Hub: ``/api/models/REPO/
tree/REV?recursive=true`` (paginated with a Link header), ``/REPO/resolve/
REV/PATH`` answered with a 302 to ``/cdn/REPO/REV/PATH`` (as the Hub sends
LFS files to its CDN), and plain ``/files/PATH``.  Every file is served
with ``Range`` support.  Faults are injected per served path: a status, a
number of 429s, a connection reset after N body bytes, a server that
ignores Range.  Every request is recorded with the bytes it sent.

``latency`` (seconds) is added to every response, as a distant Hub adds
its round trip; ``most_in_flight`` is the most requests the server was
answering at one time (what a test of concurrent fetching asserts on).
"""

from __future__ import annotations

import json
import os
import re
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


def _expert(s: int, i: int) -> str:
    return f"model.layers.{s}.mlp.experts.{i}.down_proj.weight"


def sharded_model(d: Path, shards: int, tensors: Sequence[int],
                  name: Callable[[int, int], str] = _expert, config: bool = True) -> int:
    """``shards`` safetensors shards (header only, sparse files) with
    ``tensors[s % len(tensors)]`` BF16 tensors each, named ``name(shard, i)``,
    their model.safetensors.index.json and (``config``) a config.json;
    returns the header bytes written."""
    d.mkdir(parents=True)
    wm: dict[str, str] = {}
    heads = 0
    for s in range(shards):
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        header: dict[str, Any] = {}
        off = 0
        for i in range(tensors[s % len(tensors)]):
            t = name(s, i)
            header[t] = {"dtype": "BF16", "shape": [64, 64], "data_offsets": [off, off + 8192]}
            wm[t] = fname
            off += 8192
        raw = json.dumps(header).encode()
        with open(d / fname, "wb") as fh:
            fh.write(struct.pack("<Q", len(raw)) + raw)
            fh.truncate(8 + len(raw) + off)
        heads += 8 + len(raw)
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wm}))
    if config:
        (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                                   "torch_dtype": "bfloat16"}))
    return heads


@contextmanager
def hf_endpoint(url: str) -> Iterator[None]:
    """HF_ENDPOINT set to ``url`` for the block, then restored."""
    old = os.environ.get("HF_ENDPOINT")
    os.environ["HF_ENDPOINT"] = url
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("HF_ENDPOINT", None)
        else:
            os.environ["HF_ENDPOINT"] = old


@dataclass
class Hit:
    path: str
    range: str | None
    status: int
    sent: int
    auth: str | None


@dataclass
class Loopback:
    repos: dict[str, str] = field(default_factory=dict)  # "org/repo" -> local directory
    files: str = ""  # the directory served under /files/
    faults: dict[str, dict[str, Any]] = field(default_factory=dict)  # fs path suffix -> fault
    page_size: int = 1000
    hits: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""
    latency: float = 0.0
    in_flight: int = 0
    most_in_flight: int = 0

    def start(self) -> Loopback:
        handler = type("H", (_Handler,), {"box": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def reset(self) -> None:
        with self.lock:
            self.hits.clear()
            self.most_in_flight = 0

    def entered(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def left(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def data_hits(self) -> list[Hit]:
        """Requests that served file bytes (not redirects, not listings)."""
        return [h for h in self.hits if h.path.startswith(("/cdn/", "/files/"))]

    def bytes_sent(self) -> int:
        return sum(h.sent for h in self.hits)

    def record(self, hit: Hit) -> None:
        with self.lock:
            self.hits.append(hit)


class _Handler(BaseHTTPRequestHandler):
    box: Loopback

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
               rng: str | None = None) -> None:
        # recorded before the reply goes out: the client may be done before
        # this thread runs again (and so is the request no longer in flight)
        self.box.record(Hit(self.path, rng, status, len(body), self.headers.get("Authorization")))
        self._answered()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
        self.box.entered()
        self.counted = True
        try:
            if self.box.latency:
                time.sleep(self.box.latency)
            self._get()
        finally:
            self._answered()

    def _answered(self) -> None:
        """The request is no longer in flight: its answer is going out."""
        if getattr(self, "counted", False):
            self.counted = False
            self.box.left()

    def _get(self) -> None:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        m = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)(/.*)?", path)
        if m:
            return self._listing(m.group(1), unquote(m.group(2)), (m.group(3) or "").strip("/"),
                                 int(parse_qs(parts.query).get("page", ["0"])[0]))
        m = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if m:
            if m.group(1) not in self.box.repos:
                return self._reply(401, b'{"error":"Repository not found"}')
            return self._reply(302, headers={"Location": f"/cdn/{m.group(1)}/{m.group(2)}/"
                                             f"{m.group(3)}?X-Amz-Signature=secret"})
        m = re.fullmatch(r"/cdn/([^/]+/[^/]+)/([^/]+)/(.+)", path)
        if m and m.group(1) in self.box.repos:
            return self._file(os.path.join(self.box.repos[m.group(1)], m.group(3)))
        if path.startswith("/files/") and self.box.files:
            return self._file(os.path.join(self.box.files, path[len("/files/"):]))
        return self._reply(404, b"not found")

    def _listing(self, repo: str, rev: str, sub: str, page: int) -> None:
        root = self.box.repos.get(repo)
        if root is None:
            return self._reply(404, b'{"error":"Repository not found"}')
        entries = []
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, sub)):
            dirnames.sort()
            for f in sorted(filenames):
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                entries.append({"type": "file", "path": rel, "size": os.path.getsize(full),
                                "oid": "0" * 40})
        n = self.box.page_size
        chunk = entries[page * n:(page + 1) * n]
        headers = {"Content-Type": "application/json"}
        if (page + 1) * n < len(entries):
            headers["Link"] = (f'<{self.box.url}/api/models/{repo}/tree/{rev}'
                               f'?recursive=true&page={page + 1}>; rel="next"')
        self._reply(200, json.dumps(chunk).encode(), headers)

    def _file(self, full: str) -> None:
        fault = next((v for k, v in self.box.faults.items() if full.endswith(k)), {})
        if "status" in fault:
            return self._reply(fault["status"], b"denied")
        if fault.get("429", 0) > 0:
            with self.box.lock:
                fault["429"] -= 1
            return self._reply(429, b"slow down", {"Retry-After": "0"})
        if not os.path.isfile(full):
            return self._reply(404, b"not found")
        with open(full, "rb") as fh:
            data = fh.read()
        rng = self.headers.get("Range")
        if fault.get("ignore_range") or rng is None:
            return self._reply(200, data, rng=rng)
        m = _RANGE.match(rng)
        if m is None:
            return self._reply(416, b"", {"Content-Range": f"bytes */{len(data)}"}, rng)
        start = int(m.group(1))
        end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        if start >= len(data):
            return self._reply(416, b"", {"Content-Range": f"bytes */{len(data)}"}, rng)
        body = data[start:end + 1]
        if "reset_after" in fault:  # promise the whole range, then drop the connection
            self._answered()
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            cut = body[:fault["reset_after"]]
            self.box.record(Hit(self.path, rng, 206, len(cut), None))
            self.wfile.write(cut)
            self.wfile.flush()
            self.close_connection = True
            import socket

            self.connection.shutdown(socket.SHUT_RDWR)
            return None
        self._reply(206, body, {"Content-Range": f"bytes {start}-{end}/{len(data)}"}, rng)
