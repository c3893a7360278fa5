"""grit-manifest.json (RECONSTRUCTION §10): what a later scan must still find.

``{"grit_manifest": 1, "artifacts": [{"path": "<relative>", "tensors":
{"<name>": {"desc": "<128 hex>", "shape": [..], "gid": "<base32>",
"digest": "<32 hex, optional>"}}}]}``.  Paths are validated like index paths
(never absolute, never ``..``); the listed files are read from the
manifest's directory, and files that are gone are reported.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..codec import base32
from ..codec import descriptor as desc_mod
from ..codec.errors import GritError
from ..model import Artifact, IssueCode, QTensor, Source
from .configs import read_json
from .index import escapes

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


def read_manifest(path: str, display: str, group: str) -> tuple[Artifact, list[str]]:
    art = Artifact(path=display, abs_path=path, format="grit-manifest", group=group)
    obj = read_json(path, art)
    listed: list[str] = []
    if obj is None:
        return art, listed
    if not isinstance(obj, dict) or obj.get("grit_manifest") != 1 or not isinstance(
            obj.get("artifacts"), list):
        art.issue(IssueCode.UNPARSEABLE, "not a grit-manifest.json: expected {\"grit_manifest\":"
                  " 1, \"artifacts\": [...]}")
        art.parsed = False
        return art, listed
    base = os.path.dirname(path)
    for ent in obj["artifacts"]:
        if not isinstance(ent, dict) or not isinstance(ent.get("path"), str):
            art.issue(IssueCode.UNPARSEABLE, "a manifest artifact entry has no path")
            continue
        rel = ent["path"]
        why = escapes(rel)
        if why:
            art.issue(IssueCode.PATH_ESCAPE, f"manifest path {rel!r} is {why}: it would leave "
                      "the manifest's directory; not opened", path=rel)
            continue
        listed.append(rel)
        if not os.path.isfile(os.path.join(base, rel)):
            art.issue(IssueCode.MISSING_SHARD, f"{rel}: the manifest lists this file but it is "
                      "gone", path=rel, manifest=True)
        tensors = ent.get("tensors")
        if not isinstance(tensors, dict):
            continue
        for name, t in tensors.items():
            q = _tensor(art, rel, name, t)
            if q is not None:
                art.quantized.append(q)
    art.metadata["listed"] = listed
    return art, listed


def _tensor(art: Artifact, rel: str, name: str, t: Any) -> QTensor | None:
    if not isinstance(t, dict):
        art.issue(IssueCode.UNPARSEABLE, f"{rel}::{name}: entry is not an object", tensor=name)
        return None
    try:
        d = desc_mod.from_hex(str(t.get("desc", "")))
    except GritError as exc:
        art.issue(IssueCode.UNPARSEABLE, f"{rel}::{name}: desc: {exc}", tensor=name)
        return None
    shape = t.get("shape")
    if not isinstance(shape, list) or not all(isinstance(x, int) and x >= 0 for x in shape):
        art.issue(IssueCode.UNPARSEABLE, f"{rel}::{name}: bad shape", tensor=name)
        return None
    q = QTensor(name=name, role=f"{rel}::{name}", shape=tuple(shape), source=Source.MANIFEST,
                desc=d, convention="manifest")
    g = t.get("gid")
    if isinstance(g, str):
        try:
            q.expected_gid = base32.decode(g)
        except GritError as exc:
            art.issue(IssueCode.UNPARSEABLE, f"{rel}::{name}: gid: {exc}", tensor=name)
    dg = t.get("digest")
    if isinstance(dg, str) and _HEX32.fullmatch(dg):
        q.expected_digest = bytes.fromhex(dg)
    q.notes.append(f"file={rel}")
    return q
