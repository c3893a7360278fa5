"""``hf://ORG/REPO[@REVISION][/PATH]``: a Hugging Face Hub repository (or one
file or folder of it) read through the Hub's ``resolve/REVISION/PATH`` URLs
with ranged GETs.

huggingface_hub supplies the endpoint (``HF_ENDPOINT``) and the token
(``HF_TOKEN`` or the stored login).  The token goes in an Authorization
header only to a URL of the endpoint's own origin (scheme, host, port),
and only when that origin is https or a loopback address; ``http.py``
drops it on a redirect that leaves the origin (a CDN, another host, plain
http).  It is never printed or logged.  The file list comes from the Hub's
tree API (``/api/models/REPO/tree/REVISION?recursive=true``), paginated by
``Link: rel="next"``: a next page on another origin, or one already read,
is refused, and pages, bytes and entries have budgets.  Entries are parsed
one at a time, so a page costs memory in proportion to the entries kept.
Repository ids, revisions and paths with ``.``/``..``/empty segments or a
leading ``/`` are refused (``UnsafePath``) before any request.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import (
    MAX_LISTING_BYTES,
    MAX_LISTING_ENTRIES,
    MAX_LISTING_PAGES,
    Budget,
    RemoteError,
    RemoteOptions,
    UnsafePath,
    require,
    unsafe_path,
)
from .http import LOOPBACK, HttpSource, http_get, origin

_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
FILE_SUFFIXES = (".safetensors", ".gguf", ".json")


@dataclass(frozen=True)
class HfTarget:
    """A Hub repository, revision and path inside it."""

    repo: str
    revision: str
    path: str  # "" for the repository root

    @property
    def root(self) -> str:
        rev = "" if self.revision == "main" else f"@{self.revision}"
        return f"hf://{self.repo}{rev}"

    def display(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root


def parse(url: str) -> HfTarget:
    """hf://ORG/REPO[@REVISION][/PATH] (raises RemoteError when malformed)."""
    rest = url[len("hf://"):].strip("/")
    parts = rest.split("/")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise RemoteError(f"{url}: an hf:// URL names ORG/REPO[@REVISION][/PATH]", url)
    org, name = parts[0], parts[1]
    revision = "main"
    if "@" in name:
        name, revision = name.split("@", 1)
        revision = urllib.parse.unquote(revision)
    if not re.fullmatch(r"[\w.-]+", org) or not re.fullmatch(r"[\w.-]+", name) or not revision:
        raise RemoteError(f"{url}: {org}/{name} is not a repository id", url)
    path = "/".join(parts[2:])
    for what, value in (("repository id", f"{org}/{name}"), ("revision", revision),
                        ("path", path)):
        why = unsafe_path(value) if value else None
        if why is not None:
            raise UnsafePath(f"{url}: the {what} {value!r} has {why}: refused, nothing "
                             "was requested", url)
    return HfTarget(f"{org}/{name}", revision, path)


def endpoint() -> str:
    env = os.environ.get("HF_ENDPOINT")
    if env:
        return env.rstrip("/")
    from huggingface_hub import constants

    return str(constants.ENDPOINT).rstrip("/")


def auth_headers(url: str) -> dict[str, str]:
    """The Authorization header for a request to ``url``: the token, when
    one is configured and ``url`` is on the Hub's own origin over https
    (or a loopback address); else none."""
    hub = origin(endpoint())
    if origin(url) != hub or (hub[0] != "https" and hub[1] not in LOOPBACK):
        return {}
    from huggingface_hub import get_token

    token = get_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


def resolve_url(t: HfTarget, rel: str) -> str:
    rev = urllib.parse.quote(t.revision, safe="")
    return f"{endpoint()}/{t.repo}/resolve/{rev}/{urllib.parse.quote(rel)}"


def open_file(url: str, opts: RemoteOptions, budget: Budget) -> HttpSource:
    require("huggingface_hub", "remote", url)
    t = parse(url)
    target = resolve_url(t, t.path)
    return HttpSource(target, opts, budget, auth_headers(target), t.display(t.path))


def list_files(t: HfTarget, opts: RemoteOptions, budget: Budget) -> list[tuple[str, int]]:
    """(path, size) of every file under ``t.path`` at ``t.revision``
    (raises RemoteError: a failed page, a budget, a page on another origin
    or read twice)."""
    rev = urllib.parse.quote(t.revision, safe="")
    sub = f"/{urllib.parse.quote(t.path)}" if t.path else ""
    url: str | None = f"{endpoint()}/api/models/{t.repo}/tree/{rev}{sub}?recursive=true"
    hub = origin(endpoint())
    shown = f"{t.display(t.path)} (file listing)"
    out: dict[str, int] = {}
    seen: set[str] = set()
    spent = entries = 0
    while url is not None:
        if url in seen:
            raise RemoteError(f"{shown}: the listing's next page is a page already read; "
                              "not followed", t.root)
        if len(seen) >= MAX_LISTING_PAGES:
            raise RemoteError(f"{shown}: the listing has more than {MAX_LISTING_PAGES} pages "
                              "(the listing budget); name a folder (hf://ORG/REPO/DIR)",
                              t.root)
        if origin(url) != hub:
            raise RemoteError(f"{shown}: the listing's next page is on another origin "
                              f"({origin(url)[1]}); not followed", t.root)
        seen.add(url)
        got = http_get(url, auth_headers(url), opts, budget, MAX_LISTING_BYTES - spent + 1,
                       shown=shown, want_range=False)
        spent += len(got.body)
        if spent > MAX_LISTING_BYTES:
            raise RemoteError(f"{shown}: the listing exceeds {MAX_LISTING_BYTES:,} bytes (the "
                              "listing budget); name a folder (hf://ORG/REPO/DIR)", t.root)
        for e in _entries(got.body, shown, t.root):
            entries += 1
            if entries > MAX_LISTING_ENTRIES:
                raise RemoteError(f"{shown}: the listing has more than "
                                  f"{MAX_LISTING_ENTRIES:,} entries (the listing budget); "
                                  "name a folder (hf://ORG/REPO/DIR)", t.root)
            if isinstance(e, dict) and e.get("type") == "file" and isinstance(e.get("path"), str):
                size = e.get("size")
                out[e["path"]] = size if isinstance(size, int) else -1
        m = _LINK_NEXT.search(got.headers.get("link", ""))
        url = urllib.parse.urljoin(url, m.group(1)) if m else None
    return sorted(out.items())


def _entries(body: bytes, shown: str, root: str) -> Iterator[Any]:
    """The elements of a JSON array, decoded one at a time (a page of a
    million tiny elements is stopped by the entry budget, not built whole)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise RemoteError(f"{shown}: the Hub's file listing is not UTF-8", root) from None
    dec = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    pos = ws.match(text, 0).end()  # type: ignore[union-attr]
    if text[pos:pos + 1] != "[":
        raise RemoteError(f"{shown}: the Hub's file listing is not a JSON list", root)
    pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos:pos + 1] == "]":
        return
    while True:
        try:
            item, pos = dec.raw_decode(text, pos)
        except (ValueError, RecursionError):
            raise RemoteError(f"{shown}: the Hub's file listing is not JSON", root) from None
        yield item
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        sep = text[pos:pos + 1]
        if sep == "]":
            return
        if sep != ",":
            raise RemoteError(f"{shown}: the Hub's file listing is not JSON", root)
        pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
