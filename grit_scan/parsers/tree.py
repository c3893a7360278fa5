"""Walk the given paths and read every checkpoint file in them.

* Deterministic: directories are walked in sorted order.
* Contained: a symlink is followed only when its resolved target lies inside
  the scanned root (a Hugging Face cache's ``snapshots/*`` links into
  ``../../blobs`` qualify when the repository or cache directory is the
  root); links that leave the root, dangling links and loops are skipped
  with a note.  Index and manifest paths are validated before opening.
* Safe: FIFOs, sockets and devices are never opened blocking; they are
  skipped with a note.
* Routed by content: GGUF by its magic, safetensors by its header shape;
  the extension only decides which reader explains a broken file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from typing import Any

from ..artifact import Artifact, ArtifactDraft, Format, ReadError, ScanDraft, ScanInput
from ..issues import Issue
from ..issues.file_unparseable import NotACheckpoint, NotRegularFile, PathMissing, Skipped
from ..issues.internal_error import ReaderRaised
from ..issues.path_escape import ManifestLinkEscape
from ..names import Declared
from . import budgets, configs, index, models, readers
from .fileio import ReadMeter, SafeFile
from .interface import SNIFF_BYTES, ReadContext
from .remote import RemoteOptions, is_url, redact
from .skips import (
    INDEX_SUFFIX,
    MANIFEST_NAME,
    SkipKind,
    reader_would_follow,
    unsupported_reason,
    unsupported_weights,
)


class _Dir:
    """What one directory holds: its checkpoint files, configs, indexes.
    (A plain class: creating a dataclass costs every scan's start-up, issue 31.)"""

    __slots__ = ("rel", "files", "configs", "indexes", "manifests", "names")

    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.files: list[tuple[str, str, Format]] = []  # (abs, display, fmt)
        self.configs: dict[str, str] = {}  # name -> abs
        self.indexes: list[tuple[str, str]] = []
        self.manifests: list[tuple[str, str]] = []
        self.names: dict[str, str] = {}  # file name -> abs (for indexes)


def sniff(path: str) -> Format | None:
    """The checkpoint format whose reader recognises the first bytes."""
    try:
        with SafeFile(path) as f:
            head = f.read_at(0, SNIFF_BYTES)
            size = f.size
    except ReadError:
        return None
    for r in readers.CHECKPOINT_READERS:
        if r.sniff(head, path, size):
            return r.format
    return None


def classify(name: str, path: str) -> Format | None:
    """What a file is: JSON formats by name, checkpoints by content (the
    extension only decides which reader explains a broken file)."""
    low = name.lower()
    if low.endswith(INDEX_SUFFIX):
        return Format.INDEX
    if low == MANIFEST_NAME:
        return Format.MANIFEST
    if low in configs.CONFIG_NAMES:
        return Format.CONFIG
    fmt = sniff(path)
    if fmt is not None:
        return fmt
    return next((r.format for r in readers.CHECKPOINT_READERS if r.claims(name)), None)


HF_REPO_PREFIXES = ("models--", "datasets--", "spaces--")
HF_REPO_PARTS = ("blobs", "refs", "snapshots")  # what makes a directory an HF cache repository
HF_INTERNAL = ("blobs", "refs", ".no_exist")  # reached through snapshots/*, never walked


def hf_repo(real_dir: str, names: set[str] | None = None) -> bool:
    """True when ``real_dir`` really is a Hugging Face cache repository
    (``models--org--name`` holding blobs/, refs/ and snapshots/)."""
    if not os.path.basename(real_dir).startswith(HF_REPO_PREFIXES):
        return False
    if names is None:
        return all(os.path.isdir(os.path.join(real_dir, n)) for n in HF_REPO_PARTS)
    return set(HF_REPO_PARTS) <= names and all(
        os.path.isdir(os.path.join(real_dir, n)) for n in HF_REPO_PARTS)


def snapshot_blobs(real_root: str) -> str | None:
    """The repository's blobs/ when ``real_root`` is (inside) one snapshot
    of an HF cache repository (``.../models--o--n/snapshots/<rev>/...``):
    the snapshot's files are relative links into ``../../blobs`` and belong
    to it, as ``snapshot_download()`` hands out exactly this directory."""
    parts = real_root.split(os.sep)
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "snapshots":
            repo = os.sep.join(parts[:i])
            if hf_repo(repo):
                return os.path.join(repo, "blobs")
    return None


class Walker:
    def __init__(self, root: str, skipped: list[Issue], display_root: str,
                 max_depth: int = budgets.WALK_DEPTH.value) -> None:
        self.root = os.path.realpath(root)
        self.display_root = display_root
        self.skipped = skipped
        self.visited: set[str] = set()
        self.dirs: dict[str, _Dir] = {}
        self.max_depth = max_depth
        blobs = snapshot_blobs(self.root)
        self.also_inside = (blobs,) if blobs else ()

    def revision(self, real_dir: str) -> str | None:
        """The snapshot directory of a cache repository that ``real_dir`` is
        or lies in (``.../models--o--n/snapshots/<rev>``), else None."""
        parts = real_dir.split(os.sep)
        for i in range(len(parts) - 2, 0, -1):
            if parts[i] == "snapshots" and parts[i - 1].startswith(HF_REPO_PREFIXES):
                return os.sep.join(parts[:i + 2])
        return None

    def inside(self, real: str) -> bool:
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep)
                   for r in (self.root, *self.also_inside))

    def disp(self, rel: str) -> str:
        return os.path.join(self.display_root, rel) if rel else self.display_root

    def skip(self, rel: str, why: str, kind: SkipKind | None = None, escape: bool = False,
             **detail: object) -> None:
        self.skipped.append(Skipped(None, self.disp(rel), why,
                                    kind.value if kind is not None else None, escape, detail))

    def outside_link(self, rel: str, name: str) -> None:
        """A symlink leaving the root: a path_escape only when a checkpoint
        reader would follow it (skips.reader_would_follow)."""
        if reader_would_follow(name):
            self.skip(rel, "symlink points outside the scanned root; not followed "
                      "(scan the directory that contains its target)",
                      SkipKind.OUTSIDE_SYMLINK, escape=True)
        else:
            self.skip(rel, "symlink points outside the scanned root and is not a checkpoint; "
                      "not followed", SkipKind.OUTSIDE_SYMLINK)

    def walk(self, real_dir: str, rel: str) -> None:
        """Walk iteratively (a stack, not recursion: 1,000 nested
        directories cannot overflow it), in sorted order."""
        stack: list[tuple[str, str, int]] = [(real_dir, rel, 0)]
        while stack:
            real, r, depth = stack.pop()
            subdirs = self._one_dir(real, r, depth)
            stack.extend(reversed(subdirs))

    def _one_dir(self, real_dir: str, rel: str, depth: int) -> list[tuple[str, str, int]]:
        if real_dir in self.visited:
            self.skip(rel, "directory already visited (symlink loop); skipped", SkipKind.LINK)
            return []
        self.visited.add(real_dir)
        try:
            entries = sorted(os.scandir(real_dir), key=lambda e: e.name)
        except OSError as exc:
            # as severe as an unreadable file: what it holds was not checked
            self.skip(rel, f"cannot list this directory: {exc.strerror or exc}",
                      SkipKind.UNREADABLE, unreadable=True)
            return []
        names = {e.name for e in entries}
        cache_repo = hf_repo(real_dir, names)
        revision = self.revision(real_dir)
        d = self.dirs.setdefault(rel, _Dir(rel))
        subdirs: list[tuple[str, str, int]] = []
        for e in entries:
            erel = os.path.join(rel, e.name) if rel else e.name
            if cache_repo and e.name in HF_INTERNAL:
                self.skip(erel, "Hugging Face cache internals, scanned through snapshots/*")
                continue
            path = os.path.join(real_dir, e.name)
            try:
                is_link = e.is_symlink()
                st = os.stat(path, follow_symlinks=False)
            except OSError as exc:
                self.skip(erel, f"cannot stat: {exc.strerror or exc}", SkipKind.UNREADABLE)
                continue
            target = path
            if is_link:
                try:
                    target = os.path.realpath(path, strict=True)
                except (OSError, RuntimeError):
                    self.skip(erel, "dangling or looping symlink; skipped", SkipKind.LINK)
                    continue
                if not self.inside(target):
                    self.outside_link(erel, e.name)
                    continue
                try:
                    st = os.stat(target)
                except OSError as exc:
                    self.skip(erel, f"cannot stat link target: {exc.strerror or exc}",
                              SkipKind.UNREADABLE)
                    continue
            if stat.S_ISDIR(st.st_mode):
                if self.max_depth == 0:
                    continue  # one directory only (an index's neighbours)
                if depth + 1 > self.max_depth:
                    self.skip(erel, budgets.WALK_DEPTH.exceeded("directory nesting", depth + 1),
                              budget=budgets.WALK_DEPTH.name)
                else:
                    subdirs.append((target, erel, depth + 1))
                continue
            if not stat.S_ISREG(st.st_mode):
                self.skip(erel, "not a regular file (FIFO, socket or device); skipped",
                          SkipKind.NOT_REGULAR)
                continue
            # an index in this directory may name the file, even when the same
            # blob was already read through another revision's link
            d.names[e.name] = target
            # the same blob through two links is read once, except by two
            # revisions of a cache repository: each is a model of its own,
            # judged against its own configs even when its weights are shared
            seen = target if revision is None else f"{revision}\0{target}"
            if seen in self.visited:
                continue
            self.visited.add(seen)
            self._classify(d, e.name, target, erel)
        return subdirs

    def _classify(self, d: _Dir, name: str, target: str, erel: str) -> None:
        fmt = classify(name, target)
        if fmt is None:
            weights = unsupported_weights(name)
            if weights is not None:
                self.skip(erel, unsupported_reason(weights), weights)
            return
        if fmt is Format.CONFIG:
            d.configs[name.lower()] = target
        elif fmt is Format.INDEX:
            d.indexes.append((target, self.disp(erel)))
        elif fmt is Format.MANIFEST:
            d.manifests.append((target, self.disp(erel)))
        else:
            d.files.append((target, self.disp(erel), fmt))


def _declared(d: _Dir, scan: ScanDraft, group: str, meter: ReadMeter | None = None
              ) -> tuple[Declared | None, Callable[[str], str], list[Artifact]]:
    found: list[Declared] = []
    info: dict[str, object] = {}
    arts: list[Artifact] = []
    for name in sorted(d.configs):
        path = d.configs[name]
        art = ArtifactDraft(path=os.path.join(group, name), abs_path=path, format=Format.CONFIG,
                            group=group)
        obj = configs.read_json(path, art, budgets.CONFIG_BYTES, meter)
        if obj is not None:
            info = configs.gather(name, obj, art, found, info)
        if art.issues:
            arts.append(art.finish())
    declared, role = configs.settle(found, info, group, scan.declared)
    return declared, role, arts


def contained_read(path: str, disp: str, fmt: Format, declared: Declared | None,
                   role: Callable[[str], str],
                   tracebacks: list[str] | None = None,
                   meter: ReadMeter | None = None, group: str | None = None) -> Artifact:
    """Read one file; an unexpected exception in a reader is contained to
    that file (a finding with the exception's message), never the scan; its
    traceback goes to ``tracebacks`` (the scan's, for --debug).  Conventions
    are the model's, once its files are grouped (parsers/models.py);
    ``meter`` counts the bytes read (the scan's, fileio.ReadMeter)."""
    try:
        return readers.read_path(path, ReadContext(disp, path, declared, role, meter, group),
                                 fmt)
    except Exception as exc:  # noqa: BLE001 - containment is the point
        import traceback

        if tracebacks is not None:
            tracebacks.append(traceback.format_exc())
        art = ArtifactDraft(path=disp, abs_path=path, format=fmt, parsed=False, group=group)
        art.add(ReaderRaised(None, type(exc).__name__, str(exc)[:500]))
        return art.finish()


def _parse_indexes(d: _Dir, group: str,
                   meter: ReadMeter | None = None) -> list[tuple[ArtifactDraft, Any]]:
    """Each index of the directory and its parsed JSON (None if it has
    none), read before the shards: the JSON text is then freed before any
    shard is read, and only the parsed entries are alive beside the shards'
    columns (performance: a 400,000-entry index is 35 MB of text, and parsing
    it after the shards was a sharded scan's peak)."""
    out: list[tuple[ArtifactDraft, Any]] = []
    for path, disp in d.indexes:
        art = ArtifactDraft(path=disp, abs_path=path, format=Format.INDEX, group=group)
        out.append((art, configs.read_json(path, art, meter=meter,
                                           loads=index.json_loads(d.names))))
    return out


def _read_dir(d: _Dir, scan: ScanDraft, group: str,
              tick: Callable[[], None] | None = None,
              inside: Callable[[str], bool] | None = None,
              meter: ReadMeter | None = None) -> None:
    declared, role, cfg_arts = _declared(d, scan, group, meter)
    scan.artifacts.extend(cfg_arts)
    start = len(scan.artifacts)
    indexes = _parse_indexes(d, group, meter)
    by_name: dict[str, Artifact] = {}
    for path, disp, fmt in d.files:
        art = contained_read(path, disp, fmt, declared, role, tracebacks=scan.tracebacks,
                             meter=meter, group=group)
        scan.artifacts.append(art)
        if tick is not None:
            tick()
        by_name[os.path.basename(disp)] = art
    index_shards: list[index.Indexed] = []
    indexes.reverse()
    while indexes:
        # each index checked against the shards, then its parsed JSON
        # dropped before the model's conventions are inferred
        # (index.read_parsed)
        idx, obj = indexes.pop()
        got = None if obj is None else index.read_parsed(obj, idx, d.names, by_name)
        del obj
        if got is not None:
            index_shards.append(got)
        scan.artifacts.append(idx.finish())
    # the directory's files as the models they make up (conventions across
    # shards, GGUF splits, cache repositories)
    shards = list(by_name.values())
    models.put_back(scan.artifacts, start, shards,
              models.assemble(shards, index_shards, declared, role, scan.tracebacks))
    read = {a.abs_path for a in scan.artifacts}
    for path, disp in d.manifests:
        # here: the manifest reader loads the fingerprint codec (docs/performance.md)
        from .manifest import read_manifest

        man, listed = read_manifest(path, disp, group, meter)
        # where each listed path resolves, as the reader found it (one
        # realpath per listed file for the reader, unlisted and this loop;
        # it has every listed path)
        resolved: dict[str, str] = man.metadata.get("resolved", {})
        if man.parsed:
            man.metadata["unlisted"] = unlisted(path, resolved)
        if inside is None:
            inside = Walker(os.path.dirname(path), [], "").inside
        base = os.path.dirname(path)
        pending: dict[str, _Dir] = {}  # the listed files not yet read, by directory
        for rel in listed:
            target = os.path.join(base, rel)
            real = resolved[rel]
            if not inside(real):
                # resolved before opening: a listed in-tree symlink to a file
                # outside the scanned tree is reported, never read
                man.add(ManifestLinkEscape(None, rel))
                continue
            if real in read or not os.path.isfile(real):
                continue
            listed_fmt = classify(os.path.basename(rel), real)
            shown = os.path.join(os.path.dirname(disp), rel)
            sub = pending.get(os.path.dirname(target))
            if sub is None:
                sub = pending[os.path.dirname(target)] = _Dir(os.path.dirname(shown))
            sub.files.append((real, shown, listed_fmt or Format.SAFETENSORS))
            read.add(real)
        scan.artifacts.append(man.finish())
        # Each directory's listed files are read as the models they make up,
        # with that directory's configs, as a scan of it would read them
        # (docs/ci-gate.md): a module whose weight and scale are in two
        # shards is one tensor, not "no longer described" (its index is not
        # read: the manifest names the files, not the index)
        for where, sub in pending.items():
            w = Walker(where, [], sub.rel, max_depth=0)
            w.walk(w.root, "")
            top = w.dirs.get("", _Dir(""))
            sub.configs, sub.names = top.configs, top.names
            _read_dir(sub, scan, sub.rel or ".", tick, inside, meter)


def unlisted(manifest: str, resolved: Mapping[str, str]) -> list[str]:
    """Checkpoint files under the manifest's directory that it does not list
    (paths relative to that directory), walked as a scan of it would be.
    ``resolved`` gives where each listed path resolves (the reader's)."""
    base = os.path.dirname(os.path.abspath(manifest))
    want = set(resolved.values())
    w = Walker(base, [], "")
    w.walk(w.root, "")
    return sorted(disp.replace(os.sep, "/") for d in w.dirs.values()
                  for real, disp, _ in d.files if real not in want)


def collect_beside(path: str) -> ScanInput:
    """The directory holding ``path`` read on its own (not its
    subdirectories), as a scan of it would read it: the model a shard or a
    split part belongs to, with its index and configs (a tensor whose
    scales are in another shard is then one tensor)."""
    scan = ScanDraft(roots=[path])
    parent = os.path.dirname(path) or "."
    w = Walker(parent, scan.skipped, parent, max_depth=0)
    w.walk(w.root, "")
    _read_dir(w.dirs.get("", _Dir("")), scan, parent, None, w.inside)
    return scan.finish()


def _ticker(progress: Callable[[int, int], None] | None, total: int) -> Callable[[], None]:
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    return tick


def collect(paths: list[str], deep: bool = False,
            progress: Callable[[int, int], None] | None = None,
            remote_options: RemoteOptions | None = None,
            meter: ReadMeter | None = None) -> ScanInput:
    """Read everything under ``paths`` (files, directories, manifests, and
    URLs through parsers/remote).  ``progress(done, total)`` is called as
    checkpoint files are read; ``meter`` counts the bytes read from local
    files (headers, configs, indexes, manifests; not the walk's sniffs)."""
    # a URL's password and signed query values never reach the report
    scan = ScanDraft(roots=[redact(p) if is_url(p) else p for p in paths], deep=deep)
    budget = None
    for p in paths:
        if is_url(p):  # hf://, https://, s3://, ...: parsers/remote/collect.py
            from .remote import Budget
            from .remote.collect import collect_url

            opts = remote_options or RemoteOptions()
            budget = budget or Budget(opts.budget)
            collect_url(p, scan, opts, budget, progress)
            continue
        try:
            st = os.stat(p)
        except OSError as exc:
            scan.skipped.append(PathMissing(None, p, str(exc.strerror or exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            w = Walker(p, scan.skipped, p)
            w.walk(w.root, "")
            tick = _ticker(progress, sum(len(x.files) for x in w.dirs.values()))
            for rel in sorted(w.dirs):
                _read_dir(w.dirs[rel], scan, os.path.join(p, rel) if rel else p, tick,
                          w.inside, meter)
            continue
        name = os.path.basename(p)
        d = _Dir(rel="")
        if not stat.S_ISREG(st.st_mode):
            scan.skipped.append(NotRegularFile(None, p))
            continue
        # a file named on the command line is followed once, here, as the
        # walk follows a link inside the root; SafeFile then opens the
        # resolved path without following (fileio.py)
        real = os.path.realpath(p)
        fmt = classify(name, real)
        if fmt is not None and fmt.is_checkpoint_file:
            d.files.append((real, p, fmt))
        elif fmt is Format.INDEX:
            d.indexes.append((real, p))
            # an index's shards live beside it: that directory is the tree
            parent = os.path.dirname(p) or "."
            w = Walker(parent, scan.skipped, parent, max_depth=0)
            w.walk(w.root, "")
            top = w.dirs.get("", _Dir(""))
            d.files = [f for f in top.files]
            d.names = top.names
            d.configs = top.configs
        elif fmt is Format.MANIFEST:
            d.manifests.append((real, p))
        elif fmt is Format.CONFIG:
            continue
        else:
            weights = unsupported_weights(name) or SkipKind.OTHER
            scan.skipped.append(NotACheckpoint(None, p, weights.value))
            continue
        _read_dir(d, scan, os.path.dirname(p) or ".", meter=meter)
    # what a manifest recorded travels with the files' tensors (--deep
    # verifies recorded digests), so no rule has to change the model
    files = {a.abs_path: a for a in scan.artifacts if a.format.is_checkpoint_file}
    read = dict(files)
    for man in scan.artifacts:
        if man.format is Format.MANIFEST and man.parsed:
            from .manifest import attach_expected

            files.update(attach_expected(man, files))
    # the files given digests, as the new artifacts attach_expected made
    swap = {id(read[p]): a for p, a in files.items() if a is not read[p]}
    if swap:
        scan.artifacts[:] = [swap.get(id(a), a) for a in scan.artifacts]
    return scan.finish()
