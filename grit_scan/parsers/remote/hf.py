"""``hf://ORG/REPO[@REVISION][/PATH]``: a Hugging Face Hub repository (or one
file or folder of it) read through the Hub's ``resolve/REVISION/PATH`` URLs
with ranged GETs.

huggingface_hub supplies the endpoint (``HF_ENDPOINT``) and the token
(``HF_TOKEN`` or the stored login); the token goes in an Authorization
header to the Hub's host only (``http.py`` drops it on a redirect to a CDN)
and is never printed or logged.  The file list comes from the Hub's tree
API (``/api/models/REPO/tree/REVISION?recursive=true``, paginated).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from dataclasses import dataclass

from . import Budget, RemoteError, RemoteOptions, require
from .http import HttpSource, http_get

_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
FILE_SUFFIXES = (".safetensors", ".gguf", ".json")
MAX_LISTING = 64 * 1024 * 1024


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
    return HfTarget(f"{org}/{name}", revision, "/".join(parts[2:]))


def endpoint() -> str:
    env = os.environ.get("HF_ENDPOINT")
    if env:
        return env.rstrip("/")
    from huggingface_hub import constants

    return str(constants.ENDPOINT).rstrip("/")


def auth_headers() -> dict[str, str]:
    """The Authorization header for the Hub, if a token is configured."""
    from huggingface_hub import get_token

    token = get_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


def resolve_url(t: HfTarget, rel: str) -> str:
    rev = urllib.parse.quote(t.revision, safe="")
    return f"{endpoint()}/{t.repo}/resolve/{rev}/{urllib.parse.quote(rel)}"


def open_file(url: str, opts: RemoteOptions, budget: Budget) -> HttpSource:
    require("huggingface_hub", "remote", url)
    t = parse(url)
    return HttpSource(resolve_url(t, t.path), opts, budget, auth_headers(), t.display(t.path))


def list_files(t: HfTarget, opts: RemoteOptions, budget: Budget) -> list[tuple[str, int]]:
    """(path, size) of every file under ``t.path`` at ``t.revision``."""
    rev = urllib.parse.quote(t.revision, safe="")
    sub = f"/{urllib.parse.quote(t.path)}" if t.path else ""
    url: str | None = f"{endpoint()}/api/models/{t.repo}/tree/{rev}{sub}?recursive=true"
    headers = auth_headers()
    out: list[tuple[str, int]] = []
    pages = 0
    while url is not None and pages < 1000:
        pages += 1
        _, hdrs, body = http_get(url, headers, opts, budget, MAX_LISTING,
                                 shown=f"{t.display(t.path)} (file listing)", want_range=False)
        try:
            entries = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise RemoteError(f"{t.display(t.path)}: the Hub's file listing is not JSON",
                              t.root) from None
        if not isinstance(entries, list):
            raise RemoteError(f"{t.display(t.path)}: the Hub's file listing is not a list",
                              t.root)
        for e in entries:
            if isinstance(e, dict) and e.get("type") == "file" and isinstance(e.get("path"), str):
                size = e.get("size")
                out.append((e["path"], size if isinstance(size, int) else -1))
        m = _LINK_NEXT.search(hdrs.get("link", ""))
        url = urllib.parse.urljoin(url, m.group(1)) if m else None
    return sorted(out)
