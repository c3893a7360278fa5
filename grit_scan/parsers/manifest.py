"""grit-manifest.json (RECONSTRUCTION §10): what a later scan must still find.

``{"grit_manifest": 1, "tool_version": "0.1.0", "spec_version": 1,
"artifacts": [{"path": "<relative>", "tensors":
{"<name>": {"desc": "<128 hex>", "shape": [..], "gid": "<base32>",
"digest": "<32 hex, optional>"}}}]}``; ``tool_version`` and
``spec_version`` are recorded since 0.1.0 and optional when reading.
Paths are validated like index paths (never absolute, never ``..``); the
listed files are read from the manifest's directory, and files that are gone are reported.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import chain, repeat
from operator import itemgetter, methodcaller
from typing import Any

from .._version import __version__
from ..artifact import (
    NO_LAYOUTS,
    Artifact,
    ArtifactDraft,
    Format,
    QList,
    QTensor,
    ReadError,
    Recorded,
    Source,
)
from ..codec import base32
from ..codec import descriptor as desc_mod
from ..codec.errors import GritError, GritValueError
from ..codec.fingerprint import gid
from ..issues.file_unparseable import (
    ManifestDescInvalid,
    ManifestDescNotText,
    ManifestDigestBad,
    ManifestEntryNoPath,
    ManifestGidInvalid,
    ManifestGidNotText,
    ManifestShapeBad,
    ManifestTensorNotObject,
    NotAManifest,
)
from ..issues.missing_shard import ManifestFileGone
from ..issues.path_escape import ManifestEscape
from .configs import read_json
from .fileio import ReadMeter
from .index import escapes

MANIFEST_VERSION = 1
SPEC_VERSION = 1  # the GRIT descriptor version the gids and digests follow

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


def read_manifest(path: str, display: str, group: str,
                  meter: ReadMeter | None = None) -> tuple[ArtifactDraft, list[str]]:
    art = ArtifactDraft(path=display, abs_path=path, format=Format.MANIFEST, group=group)
    obj = read_json(path, art, meter=meter)
    listed: list[str] = []
    if obj is None:
        return art, listed
    if not isinstance(obj, dict) or obj.get("grit_manifest") != 1 or not isinstance(
            obj.get("artifacts"), list):
        art.add(NotAManifest(None))
        art.parsed = False
        return art, listed
    base = os.path.dirname(path)
    # descriptor and gid texts already decoded (a manifest repeats a few
    # descriptors, and a gid per kind of tensor): 25,000 entries, docs/performance.md
    memo: dict[tuple[str, str], Any] = {}
    got: list[Recorded] = []  # per listed file with entries
    for ent in obj["artifacts"]:
        if not isinstance(ent, dict) or not isinstance(ent.get("path"), str):
            art.add(ManifestEntryNoPath(None))
            continue
        rel = ent["path"]
        why = escapes(rel)
        if why:
            art.add(ManifestEscape(None, rel, why))
            continue
        listed.append(rel)
        if not os.path.isfile(os.path.join(base, rel)):
            art.add(ManifestFileGone(None, rel))
        tensors = ent.get("tensors")
        if not isinstance(tensors, dict):
            continue
        got.append(_tensors(art, rel, tensors, memo))
    art.quantized.add_replays(got, *Recorded.columns(got))
    art.metadata["listed"] = listed
    for key in ("tool_version", "spec_version"):
        if isinstance(obj.get(key), (str, int)):
            art.metadata[key] = obj[key]
    # where each listed path resolves, so the rules (and the tree walk) can
    # join on it without I/O
    art.metadata["resolved"] = _resolved(base, listed)
    return art, listed


def _resolved(base: str, rels: list[str]) -> dict[str, str]:
    """``os.path.realpath(os.path.join(base, rel))`` for each of ``rels``.
    A plain file name that is not a symbolic link resolves to the resolved
    base joined with it, as realpath finds it: one lstat, not one per
    component of the path (performance: a manifest lists hundreds of shards)."""
    real_base = os.path.realpath(base)
    out = {}
    for rel in rels:
        target = os.path.join(base, rel)
        if (rel and os.path.basename(rel) == rel and rel not in (os.curdir, os.pardir)
                and not os.path.islink(target)):
            out[rel] = os.path.join(real_base, rel)
        else:
            out[rel] = os.path.realpath(target)
    return out


def _decoded(memo: dict[tuple[str, str], Any], what: str, text: str,
             decode: Callable[[str], Any]) -> Any:
    """``decode(text)``, or the GritError it raised, memoised in ``memo``."""
    key = (what, text)
    got = memo.get(key, memo)
    if got is memo:
        try:
            got = decode(text)
        except GritError as exc:
            got = exc
        memo[key] = got
    return got


_EXTENT_TYPES = frozenset((int, bool))  # what isinstance(x, int) accepts of JSON's values
# itemgetter, not dict.get: three times faster per entry, and an entry
# without one of them goes entry by entry (KeyError), which says what it lacks
_DESC, _SHAPE, _GID = (itemgetter(k) for k in ("desc", "shape", "gid"))
_DIGEST = methodcaller("get", "digest")  # optional: most manifests record none
_HAS = dict.__contains__
_OBJECTS, _LISTS = frozenset((dict,)), frozenset((list,))
_STRS = frozenset((str,))


def _tensors(art: ArtifactDraft, rel: str, tensors: dict[str, Any],
             memo: dict[tuple[str, str], Any]) -> Recorded:
    """One listed file's entries.  The usual file (every entry an object
    whose descriptor and gid texts decode, and whose shape is a list of
    non-negative integers) is read with C-level passes, each distinct text
    and shape checked once; any other goes entry by entry through
    ``_tensor``, which reports what is wrong (a manifest may list 25,000
    entries)."""
    ents = list(tensors.values())
    if not _OBJECTS.issuperset(map(type, ents)):
        return _each(art, rel, tensors, memo)
    try:
        descs, gids, shapes = (list(map(_DESC, ents)), list(map(_GID, ents)),
                               list(map(_SHAPE, ents)))
        # a list or an object where a text or an extent belongs is
        # unhashable: entry by entry too
        distinct_descs, distinct_gids = set(descs), set(gids)
        distinct_shapes = (set(map(tuple, shapes)) if _LISTS.issuperset(map(type, shapes))
                           else None)
    except (KeyError, TypeError):
        return _each(art, rel, tensors, memo)
    if (distinct_shapes is None or not _STRS.issuperset(map(type, distinct_descs))
            or not _STRS.issuperset(map(type, distinct_gids))):
        return _each(art, rel, tensors, memo)
    desc_of = {t: _decoded(memo, "desc", t, desc_mod.from_hex) for t in distinct_descs}
    gid_of = {t: _decoded(memo, "gid", t, base32.decode) for t in distinct_gids}
    # every extent an integer (asked of every extent: 2.0 is a distinct
    # shape's equal) and none negative (of each distinct shape):
    # ``_shape_ok`` per entry, at once
    if (any(isinstance(v, GritError) for v in chain(desc_of.values(), gid_of.values()))
            or not _EXTENT_TYPES.issuperset(map(type, chain.from_iterable(shapes)))
            or min(chain.from_iterable(distinct_shapes), default=0) < 0):
        return _each(art, rel, tensors, memo)
    digests = None
    if any(map(_HAS, ents, repeat("digest"))):
        raw = list(map(_DIGEST, ents))
        digests = list(map(_digest, raw))
        if digests.count(None) != raw.count(None):  # one is not 32 hex digits
            return _each(art, rel, tensors, memo)
    return Recorded(rel, list(tensors), shapes, list(map(desc_of.__getitem__, descs)),
                    list(map(gid_of.__getitem__, gids)), digests)


def _digest(text: Any) -> bytes | None:
    """A recorded digest: 32 hex digits, else none."""
    return bytes.fromhex(text) if isinstance(text, str) and _HEX32.fullmatch(text) else None


def _shape_ok(shape: Any) -> bool:
    return isinstance(shape, list) and (not shape or (
        _EXTENT_TYPES.issuperset(map(type, shape)) and min(shape) >= 0))


def _each(art: ArtifactDraft, rel: str, tensors: dict[str, Any],
          memo: dict[tuple[str, str], Any]) -> Recorded:
    """The file's entries read one by one: the Recorded of those that are
    well formed, holding them as objects."""
    notes = (f"file={rel}",)  # one tuple for the file's entries
    out = []
    for name, t in tensors.items():
        q = _tensor(art, rel, name, t, notes, memo)
        if q is not None:
            out.append(q)
    return Recorded.of_entries(rel, out)


def _tensor(art: ArtifactDraft, rel: str, name: str, t: Any, notes: tuple[str, ...],
            memo: dict[tuple[str, str], Any]) -> QTensor | None:
    if not isinstance(t, dict):
        art.add(ManifestTensorNotObject(name, rel))
        return None
    text = t.get("desc", "")
    if not isinstance(text, str):
        art.add(ManifestDescNotText(name, rel))
        return None
    d = _decoded(memo, "desc", text, desc_mod.from_hex)
    if isinstance(d, GritError):
        art.add(ManifestDescInvalid(name, rel, str(d)))
        return None
    shape: Any = t.get("shape")
    if not _shape_ok(shape):
        art.add(ManifestShapeBad(name, rel))
        return None
    expected_gid = None
    g = t.get("gid")
    if isinstance(g, str):
        got = _decoded(memo, "gid", g, base32.decode)
        if isinstance(got, GritError):
            art.add(ManifestGidInvalid(name, rel, str(got)))
        else:
            expected_gid = got
    elif g is not None:  # absent or null: nothing recorded to compare
        art.add(ManifestGidNotText(name, rel))
    raw = t.get("digest")
    digest = _digest(raw)
    if digest is None and raw is not None:  # absent or null: none recorded
        art.add(ManifestDigestBad(name, rel))
    return QTensor(name, f"{rel}::{name}", tuple(shape), Source.MANIFEST, d, None, "manifest",
                   None, None, None, digest, expected_gid, NO_LAYOUTS, notes)


def attach_expected(man: Artifact, files: Mapping[str, Artifact]) -> dict[str, Artifact]:
    """Each listed file whose tensors get the digest the manifest recorded
    (a hash join on real path and tensor name), unless the file records its
    own: by path, a new artifact with those tensors (``files`` and their
    tensors are not changed)."""
    by_file: dict[str, dict[str, bytes]] = {}
    resolved = man.metadata.get("resolved", {})
    if not isinstance(resolved, dict):
        return {}
    # only a file with a recorded digest is looked at (a manifest written
    # without --deep records none: nothing to attach, no entry made)
    for r in Recorded.of(man.quantized):
        art = files.get(resolved.get(r.rel) or "")
        if r.digests is None or art is None:
            continue
        by_file.setdefault(art.abs_path, {}).update(
            (n, d) for n, d in zip(r.names_, r.digests) if d is not None)
    out: dict[str, Artifact] = {}
    for path, want in by_file.items():
        art = files[path]
        qs = QList((replace(c, expected_digest=want[c.name])
                    if c.name in want and c.expected_digest is None else c
                    for c in art.quantized), art.quantized.home)
        out[path] = replace(art, quantized=qs)
    return out


def manifest_document(artifacts: Sequence[Artifact], base: str, deep: bool) -> dict[str, Any]:
    """The grit-manifest.json object for ``artifacts`` (paths relative to
    ``base``); with ``deep`` every described tensor's §6.5 digest is read."""
    entries = []
    for a in artifacts:
        if not a.parsed or not a.format.is_checkpoint_file:
            continue
        real = os.path.realpath(a.abs_path)
        rel = os.path.relpath(real, base)
        if rel.startswith(".."):
            raise GritValueError(f"{a.path} is outside {base}: write the manifest in a "
                                 "directory that contains every scanned file")
        tensors: dict[str, Any] = {}
        described = [q for q in a.quantized if q.desc is not None and q.grade is not None]
        digests: dict[str, str] = {}
        if deep and described:
            from .planes import open_planes  # numpy: with --deep only

            with open_planes(a) as planes:
                for q, got in zip(described, planes.digests(described)):
                    if isinstance(got, Exception):
                        raise got
                    digests[q.name] = got.hex()
        for q in described:
            assert q.desc is not None and q.grade is not None
            ent: dict[str, Any] = {"desc": q.desc.hex(), "shape": list(q.shape),
                                   "gid": base32.encode(gid(q.grade, q.desc, q.shape))}
            if q.name in digests:
                ent["digest"] = digests[q.name]
            tensors[q.name] = ent
        entries.append({"path": rel.replace(os.sep, "/"), "tensors": tensors})
    return {"grit_manifest": MANIFEST_VERSION, "tool_version": __version__,
            "spec_version": SPEC_VERSION, "artifacts": entries}


def write_manifest(doc: Mapping[str, Any], out: str) -> None:
    """Write a manifest document (raises ReadError with the OS reason)."""
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, indent=1) + "\n")
    except OSError as exc:
        raise ReadError(f"{exc.strerror or exc}: {out}") from None
