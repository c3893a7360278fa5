"""model.safetensors.index.json: shards, escapes and consistency (research §2).

Index paths are validated before anything is opened: an absolute path, a
``..`` component, a drive letter, a UNC path or a backslash escapes the
scanned root and is reported, never opened.  After the shards are read the
index is checked against their headers: missing shards, tensors mapped to a
shard that lacks them, tensors present in two shards, unindexed tensors, and
``total_size`` against the real tensor bytes.
"""

from __future__ import annotations

import functools
import ntpath
import os
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from operator import contains
from typing import Any, NamedTuple

from ..artifact import Artifact, ArtifactDraft
from ..issues.file_unparseable import (
    IndexNotObject,
    IndexNoWeightMap,
    IndexShardNotName,
    OverBudget,
)
from ..issues.index_inconsistency import (
    IndexMetadataNotObject,
    IndexNoMetadata,
    InSeveralShards,
    NotInIndex,
    NotInShard,
    PickleShard,
    ShardNotIndexed,
)
from ..issues.missing_shard import ShardMissing
from ..issues.notes import TotalSizeDiffers, TotalSizeNotCount
from ..issues.path_escape import IndexEscape
from . import budgets, configs, json_text

CONFUSED_EXT = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")


@functools.lru_cache(maxsize=8192)
def escapes(rel: str) -> str | None:
    """Why a relative path from a manifest would leave its directory, or None.
    Memoised: an index names a few hundred shards 400,000 times (docs/performance.md)."""
    if not rel:
        return "an empty path"
    if "\x00" in rel:
        return "a NUL byte in the path"
    if rel.startswith(("/", "\\")) or os.path.isabs(rel):
        return "an absolute path"
    if ntpath.splitdrive(rel)[0]:  # Windows' rules: any `X:` (a letter's among them)
        return "a drive-qualified path"
    if rel.startswith("\\\\") or rel.startswith("//"):
        return "a UNC path"
    parts = re.split(r"[\\/]", rel)
    if ".." in parts:
        return "a '..' component"
    if "\\" in rel:
        return "a backslash (a Windows path separator)"
    return None


def share_shard_names(obj: Any) -> Any:
    """``obj`` (an index's parsed JSON) with each distinct shard name of its
    weight_map held as one string, as it comes from ``json.loads`` (which
    shares equal keys but makes every value anew: a 400,000-entry map would
    hold 400,000 copies of a few hundred names until it is dropped, beside
    every shard's tensors).  The map's keys, order and values' text are as
    they were; anything but a map of strings is left for ``parse_index`` to
    report."""
    wm = obj.get("weight_map") if isinstance(obj, dict) else None
    if isinstance(wm, dict) and wm and set(map(type, wm.values())) <= {str}:
        one: dict[str, str] = {}
        shared = list(map(one.setdefault, wm.values(), wm.values()))
        wm.update(zip(list(wm), shared))  # existing keys: the order is kept
    return obj


# an index of a directory of more files than this is parsed without the
# typed decode (json_loads): its type lists every file name
TYPED_SHARDS = 4096


def json_loads(files: Collection[str]) -> Callable[[str], Any]:
    """The parser of an index in a directory holding ``files`` (file names),
    for configs.read_json.  A long index is first decoded with its
    weight_map's values typed as one of ``files``
    (safetensors_json.decode_index), which gives each shard name as one
    string as it decodes; any other text (a shard named that is not here, a
    value not a string, anything the plain parse must judge) is parsed by
    ``configs.loads_json`` and its names shared (``share_shard_names``).
    Either way the parsed index is the same to ``parse_index``
    (tests/test_typed_json.py)."""
    def loads(text: str) -> Any:
        if len(text) >= json_text.FAST_FROM and 0 < len(files) <= TYPED_SHARDS:
            from . import safetensors_json  # msgspec: a long text only (json_text)

            got = safetensors_json.decode_index(text, tuple(sorted(files)))
            if got is not None:
                return got
        return share_shard_names(configs.loads_json(text))
    return loads


def _json_kind(value: object) -> str:
    """What a parsed JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "an array" if isinstance(value, list) else "an object"


def parse_index(obj: Any, art: ArtifactDraft) -> dict[str, str] | None:
    """The weight_map (tensor -> shard) of a valid index, or None with issues."""
    if not isinstance(obj, dict):
        art.add(IndexNotObject(None))
        art.parsed = False
        return None
    wm = obj.get("weight_map")
    # JSON object keys are always strings; the values are tested by type in
    # one C-level pass (400,000 entries: docs/performance.md)
    if not isinstance(wm, dict):
        art.add(IndexNoWeightMap(None))
        art.parsed = False
        return None
    if not set(map(type, wm.values())) <= {str}:
        bad = next(k for k, v in wm.items() if type(v) is not str)
        art.add(IndexShardNotName(bad, _json_kind(wm[bad])))
        art.parsed = False
        return None
    meta = obj.get("metadata")
    if "metadata" not in obj:
        art.add(IndexNoMetadata(None))
    elif not isinstance(meta, dict):
        art.add(IndexMetadataNotObject(None))
        meta = None
    ts = (meta or {}).get("total_size")
    if ts is not None:
        if isinstance(ts, int) and not isinstance(ts, bool) and ts >= 0:
            art.metadata["total_size"] = ts
        else:
            art.add(TotalSizeNotCount(None, ts))
    if len(wm) > budgets.INDEX_ENTRIES.value:
        art.add(OverBudget(None, budgets.INDEX_ENTRIES.exceeded("the weight_map", len(wm)),
                           budgets.INDEX_ENTRIES.name))
        art.parsed = False
        return None
    if not any(escapes(shard) or shard.lower().endswith(CONFUSED_EXT)
               for shard in set(wm.values())):
        return wm  # the usual case: judged per distinct shard, the map not copied (speed)
    good: dict[str, str] = {}
    reported: set[str] = set()
    for tensor, shard in wm.items():
        why = escapes(shard)
        if why:
            if shard not in reported:
                art.add(IndexEscape(tensor, shard, why))
                reported.add(shard)
            continue
        if shard.lower().endswith(CONFUSED_EXT) and shard not in reported:
            art.add(PickleShard(tensor, shard))
            reported.add(shard)
        good[tensor] = shard
    return good


class Indexed(NamedTuple):
    """What an index says of its directory's shards: the names it maps
    tensors to (sorted), and whether each of them is here, parsed, and holds
    exactly the tensors the index maps to it.  Then no tensor name is in two
    of them (the index maps a name to one shard), which parsers/models.py
    need not check again (performance: 400,000 names).  A NamedTuple: every
    scan imports this module (start-up, docs/performance.md)."""

    shards: tuple[str, ...]
    exact: bool
    name: str  # the index's file name


def read_parsed(obj: Any, art: ArtifactDraft, names: Collection[str],
                shards_read: Mapping[str, Artifact]) -> Indexed | None:
    """An index's parsed JSON against the directory: ``names`` are the file
    names there, ``shards_read`` the shards already read, by file name.  The
    shards it names go to ``art.metadata["shards"]``, and are returned (None:
    no usable weight map).  Callers drop ``obj`` afterwards: for 400,000
    entries it holds ~90 MB, and the model's conventions, inferred next, are
    where a sharded scan peaks (docs/performance.md)."""
    wm = parse_index(obj, art)
    if wm is None:
        return None
    distinct = set(wm.values())
    exists = {s: s in names for s in distinct}
    shards = {s: shards_read[s] for s in distinct if s in shards_read}
    exact = check_index(art, wm, shards, exists)
    _unindexed_shards(art, distinct, shards_read)
    art.metadata["shards"] = sorted(distinct)
    return Indexed(tuple(art.metadata["shards"]), exact, os.path.basename(art.path))


# a sharded checkpoint's file name: the shard number and count, five digits each
# (transformers' ``model-00001-of-00004.safetensors``)
ST_SHARD = r"^(?P<base>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.safetensors$"
_INDEX_SUFFIX = ".safetensors.index.json"


def _unindexed_shards(art: ArtifactDraft, named: Collection[str],
                      shards_read: Mapping[str, Artifact]) -> None:
    """A file read beside the index whose name makes it a shard of the
    index's set (the index's base name, and a shard count of a shard the
    index names, or any when it names none of that form) that the index
    maps no tensor to: a loader going by the index never reads it."""
    name = os.path.basename(art.path)
    if not name.endswith(_INDEX_SUFFIX):
        return
    base = name[: -len(_INDEX_SUFFIX)]
    counts = set()
    for s in named:
        m = re.match(ST_SHARD, s)
        if m is not None and m["base"] == base:
            counts.add(m["n"])
    for s in sorted(shards_read):
        m = re.match(ST_SHARD, s)
        if (m is not None and m["base"] == base and s not in named
                and (not counts or m["n"] in counts)):
            art.add(ShardNotIndexed(None, s, len(shards_read[s].tensor_names())))


def check_index(art: ArtifactDraft, weight_map: dict[str, str], shards: dict[str, Artifact],
                exists: dict[str, bool]) -> bool:
    """Cross-check an index against the shard headers (same directory).
    True: every shard it names is here, parsed, and holds exactly the
    tensors it maps there (``Indexed.exact``)."""
    # ``exists`` has every shard the index names
    missing = sorted(s for s, here in exists.items() if not here)
    if missing:
        per_shard = Counter(weight_map.values())  # one pass: O(N), not O(N) per missing shard
        for s in missing:
            n = per_shard[s]
            art.add(ShardMissing(None, s, n))
    total = sum(sum(sh.tensors_nbytes()) for sh in shards.values())
    if not missing and _exact(weight_map, shards, len(exists)):
        # every shard is here, parsed, and holds exactly the tensors the index
        # maps to it: nothing is unheld, duplicated or unindexed (checked per
        # shard at C speed, no map of every tensor built: docs/performance.md)
        _total_size(art, total, bool(shards), missing)
        return True
    # one pass over the shards' name columns and one over the entries; only
    # the problems are sorted (performance: 400,000 entries, a few hundred shards)
    holder: dict[str, str] = {}
    dups: dict[str, list[str]] = {}
    for sname, sh in shards.items():
        for name in sh.tensor_names():
            first = holder.setdefault(name, sname)
            if first != sname:
                dups.setdefault(name, [first]).append(sname)
    parsed = {s for s, sh in shards.items() if sh.parsed}
    unheld = sorted((tensor, shard) for tensor, shard in weight_map.items()
                    if shard in parsed and holder.get(tensor) != shard
                    and shard not in dups.get(tensor, ()))
    for tensor, shard in unheld:
        art.add(NotInShard(tensor, shard))
    for tensor, where in sorted(dups.items()):
        art.add(InSeveralShards(tensor, tuple(sorted(where))))
    for tensor in sorted(n for n in holder if n not in weight_map and n not in dups):
        art.add(NotInIndex(tensor, holder[tensor]))
    _total_size(art, total, bool(shards), missing)
    return False


def _exact(weight_map: dict[str, str], shards: dict[str, Artifact], named: int) -> bool:
    """Each of the ``named`` shards the index names is here, parsed, and
    lists exactly the tensors the index maps to it.  When every entry's
    tensor is among its shard's names, each shard's entries (distinct keys)
    are at most its names; when the shards' names, distinct within each
    shard, are as many in all as the entries, each shard's entries are then
    exactly its names.  So no tensor is unheld, duplicated or missing from
    the index.  Each entry is looked up in its shard's own set of names, a
    few hundred, not in the index's 400,000 (performance: memory locality)."""
    if len(shards) != named:
        return False
    held: dict[str, set[str]] = {}
    total = 0
    for sname, sh in shards.items():
        names = sh.tensor_names()
        held[sname] = got = set(names)
        if not sh.parsed or len(got) != len(names):
            return False
        total += len(names)
    return total == len(weight_map) and all(
        map(contains, map(held.__getitem__, weight_map.values()), weight_map))


def _total_size(art: ArtifactDraft, total: int, any_shard: bool, missing: list[str]) -> None:
    ts = art.metadata.get("total_size")
    if isinstance(ts, int) and any_shard and not missing and total != ts:
        art.add(TotalSizeDiffers(None, total, ts))
