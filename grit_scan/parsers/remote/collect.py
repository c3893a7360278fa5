"""Read a remote file or repository as one model, as ``tree`` reads a local
directory: per directory its config.json / quantize_config.json /
hf_quant_config.json (declared quantisation, operand roles), its
checkpoint files (safetensors, GGUF: header-only ranged reads) and its
``*.index.json`` (checked against the shards' headers).  Files are chosen
by name (nothing else in a repository is fetched).  A file that cannot be
fetched becomes a file_unparseable finding naming its URL and status; the
rest of the scan goes on.

``OPENERS`` maps each remote artifact's ``abs_path`` to a function that
reopens it, so ``--deep`` (parsers/planes.py) streams its tensors.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...artifact import Artifact, Format, Issue, IssueCode, ScanInput
from ...names import Declared
from .. import configs, index, models, readers
from ..interface import SNIFF_BYTES, ByteSource, ReadContext
from . import Budget, RemoteError, RemoteOptions, scheme

Opener = Callable[[], ByteSource]
OPENERS: dict[str, Opener] = {}
INDEX_SUFFIX = ".index.json"


@dataclass
class RemoteTree:
    """A remote model: its display root and its files (relative paths)."""

    root: str
    group_root: str
    files: list[str]
    open: Callable[[str], ByteSource]
    optional: set[str] = field(default_factory=set)  # guessed names: absent is no finding

    def display(self, rel: str) -> str:
        return f"{self.root.rstrip('/')}/{rel}" if rel else self.root


def _kind(name: str) -> Format | None:
    low = name.lower()
    if low.endswith(INDEX_SUFFIX):
        return Format.INDEX
    if low in configs.CONFIG_NAMES:
        return Format.CONFIG
    if low == "grit-manifest.json":
        return Format.MANIFEST
    return next((r.format for r in readers.CHECKPOINT_READERS if r.claims(name)), None)


def _failed(art: Artifact, exc: RemoteError) -> Artifact:
    art.parsed = False
    art.issue(IssueCode.UNPARSEABLE, str(exc), url=exc.url, http_status=exc.status)
    return art


def read_checkpoint(src: ByteSource, ctx: ReadContext, fmt: Format) -> Artifact:
    head = src.read_at(0, SNIFF_BYTES)
    reader = next((r for r in readers.CHECKPOINT_READERS if r.sniff(head, ctx.display, src.size)),
                  None) or next(r for r in readers.CHECKPOINT_READERS if r.format is fmt)
    return reader.read(src, ctx)


class _Reading:
    def __init__(self, tree: RemoteTree, scan: ScanInput, tick: Callable[[], None]) -> None:
        self.tree, self.scan, self.tick = tree, scan, tick
        self.absent: set[str] = set()

    def source(self, rel: str) -> ByteSource:
        return self.tree.open(rel)

    def json(self, rel: str, art: Artifact) -> Any | None:
        try:
            src = self.source(rel)
        except RemoteError as exc:
            if rel in self.tree.optional and exc.status == 404:
                self.absent.add(rel)
                return None
            _failed(art, exc)
            return None
        return configs.read_json_source(src, art)

    def declared(self, d: str, cfgs: list[str], group: str
                 ) -> tuple[Declared | None, Callable[[str], str]]:
        found: list[Declared] = []
        info: dict[str, object] = {}
        for rel in sorted(cfgs, key=lambda r: posixpath.basename(r).lower()):
            name = posixpath.basename(rel).lower()
            art = Artifact(path=f"{group}/{name}", abs_path=self.tree.display(rel),
                           format=Format.CONFIG, group=group)
            obj = self.json(rel, art)
            if rel in self.absent:
                continue
            if obj is not None:
                info = configs.gather(name, obj, art, found, info)
            if art.issues:
                self.scan.artifacts.append(art)
        return configs.settle(found, info, group, self.scan.declared)

    def checkpoint(self, rel: str, fmt: Format, declared: Declared | None,
                   role: Callable[[str], str], group: str) -> Artifact:
        disp = self.tree.display(rel)
        art = Artifact(path=disp, abs_path=disp, format=fmt, parsed=False, group=group)
        try:
            src = self.source(rel)
            OPENERS[disp] = lambda: self.tree.open(rel)
            # conventions are inferred per model, across shards (parsers/models.py)
            art = read_checkpoint(src, ReadContext(disp, disp, declared, role, infer=False), fmt)
        except RemoteError as exc:
            if rel in self.tree.optional and exc.status == 404:
                self.absent.add(rel)
                return art
            _failed(art, exc)
        except Exception as exc:  # noqa: BLE001 - containment: one file, never the scan
            art.issue(IssueCode.UNPARSEABLE, f"internal error while reading this file: "
                      f"{type(exc).__name__}: {exc} (other files are unaffected)",
                      internal_error=True)
        art.group = group
        return art

    def directory(self, d: str, rels: list[str]) -> None:
        group = self.tree.display(d) if d else self.tree.group_root
        kinds = {rel: _kind(posixpath.basename(rel)) for rel in rels}
        declared, role = self.declared(d, [r for r in rels if kinds[r] is Format.CONFIG], group)
        by_name: dict[str, Artifact] = {}
        for rel in rels:
            fmt = kinds[rel]
            if fmt is None or not fmt.is_checkpoint_file:
                continue
            art = self.checkpoint(rel, fmt, declared, role, group)
            self.tick()
            if rel in self.absent:
                continue
            self.scan.artifacts.append(art)
            by_name[posixpath.basename(rel)] = art
        names = {posixpath.basename(r) for r in rels if r not in self.absent}
        index_shards: list[index.Indexed] = []
        for rel in rels:
            if kinds[rel] is Format.MANIFEST:
                self.scan.skipped.append(Issue(
                    IssueCode.SKIPPED, f"{self.tree.display(rel)}: manifests are read from "
                    "local directories only; skipped", detail={"path": self.tree.display(rel)}))
            if kinds[rel] is not Format.INDEX:
                continue
            disp = self.tree.display(rel)
            art = Artifact(path=disp, abs_path=disp, format=Format.INDEX, group=group)
            obj = self.json(rel, art)
            if obj is not None:
                got = index.read_parsed(obj, art, names, by_name)
                obj = None  # freed before the model is assembled (index.read_parsed)
                if got is not None:
                    index_shards.append(got)
            self.scan.artifacts.append(art)
        # the same model-level reading as a local directory
        models.assemble(list(by_name.values()), index_shards, declared, role)


def read_tree(tree: RemoteTree, scan: ScanInput,
              progress: Callable[[int, int], None] | None = None) -> None:
    dirs: dict[str, list[str]] = {}
    for rel in tree.files:
        dirs.setdefault(posixpath.dirname(rel), []).append(rel)
    total = sum(1 for r in tree.files if (_kind(posixpath.basename(r)) or Format.CONFIG)
                .is_checkpoint_file)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    reading = _Reading(tree, scan, tick)
    for d in sorted(dirs):
        reading.directory(d, sorted(dirs[d]))


def _hf_tree(url: str, opts: RemoteOptions, budget: Budget) -> RemoteTree:
    from . import hf, require
    from .http import HttpSource

    require("huggingface_hub", "remote", url)
    t = hf.parse(url)
    headers = hf.auth_headers()

    def opener(rel: str) -> ByteSource:
        return HttpSource(hf.resolve_url(t, rel), opts, budget, headers, t.display(rel))

    if t.path.lower().endswith(hf.FILE_SUFFIXES):
        parent = posixpath.dirname(t.path)
        files = [t.path]
        if t.path.lower().endswith(INDEX_SUFFIX):  # an index reads its directory
            files = [p for p, _ in hf.list_files(hf.HfTarget(t.repo, t.revision, parent),
                                                 opts, budget)]
        return RemoteTree(t.root, t.display(parent), files, opener)
    files = [p for p, _ in hf.list_files(t, opts, budget)]
    return RemoteTree(t.root, t.display(t.path), files, opener)


def _http_tree(url: str, opts: RemoteOptions, budget: Budget) -> RemoteTree:
    """One file; an index URL also reads the shards it names and the
    configs beside it (a plain HTTP server cannot be listed)."""

    from .http import HttpSource

    base, _, name = url.rpartition("/")

    def opener(rel: str) -> ByteSource:
        return HttpSource(f"{base}/{rel}", opts, budget)

    files, optional = [name], set()
    if name.lower().endswith(INDEX_SUFFIX):
        # the index decides which shards to fetch; it is read again (and its
        # problems reported) with the rest of the repository
        probe = Artifact(path=name, abs_path=name, format=Format.INDEX)
        obj = configs.read_json_source(opener(name), probe)
        wm = obj.get("weight_map") if isinstance(obj, dict) else None
        shards = sorted({v for v in wm.values() if isinstance(v, str) and
                         index.escapes(v) is None}) if isinstance(wm, dict) else []
        optional = set(configs.CONFIG_NAMES) | set(shards)
        files += sorted(optional)
    return RemoteTree(base, base, files, opener, optional)


def _fsspec_tree(url: str, opts: RemoteOptions, budget: Budget) -> RemoteTree:
    from . import fsspec_source

    listed = fsspec_source.list_files(url, opts, budget)
    if listed is None:
        base, _, name = url.rpartition("/")
        return RemoteTree(base, base, [name],
                          lambda rel: fsspec_source.FsspecSource(f"{base}/{rel}", opts, budget))
    fs, root, files = listed
    top = url.rstrip("/")

    def opener(rel: str) -> ByteSource:
        return fsspec_source.FsspecSource(f"{top}/{rel}", opts, budget, fs, f"{root}/{rel}")

    return RemoteTree(top, top, [r for r, _ in files], opener)


def collect_url(url: str, scan: ScanInput, opts: RemoteOptions | None = None,
                budget: Budget | None = None,
                progress: Callable[[int, int], None] | None = None) -> None:
    """Read one remote root into ``scan`` (its failures become findings or
    skipped entries; MissingExtra propagates: it is a usage error)."""
    opts = opts or RemoteOptions()
    budget = budget or Budget(opts.budget)
    sch = scheme(url)
    try:
        if sch == "hf":
            tree = _hf_tree(url, opts, budget)
        elif sch in ("http", "https"):
            tree = _http_tree(url, opts, budget)
        else:
            tree = _fsspec_tree(url, opts, budget)
    except RemoteError as exc:
        art = Artifact(path=url, abs_path=url, format=Format.SAFETENSORS, group=url)
        scan.artifacts.append(_failed(art, exc))
        return
    read_tree(tree, scan, progress)
