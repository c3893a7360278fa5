"""Read a remote file or repository as one model, as ``tree`` reads a local
directory: per directory its config.json / quantize_config.json /
hf_quant_config.json (declared quantisation, operand roles), its
checkpoint files (safetensors, GGUF: header-only ranged reads) and its
``*.index.json`` (checked against the shards' headers).  Files are chosen
by name (nothing else in a repository is fetched).  A file that cannot be
fetched becomes a file_unparseable finding naming its URL and status; the
rest of the scan goes on, until ``MAX_FAILED_FETCHES`` fetches of one root
have failed: the files left are then not requested (one finding says how
many).  A listed name that is absolute or has dot segments is a
path_escape finding and is never requested.

Over HTTP (``hf://``, ``http(s)://``) a directory's files are fetched, and
its checkpoints parsed, ``RemoteOptions.in_flight`` at a time on a thread
pool (``_Ahead``), in the order they are read: its configs, its
checkpoints, its indexes.  Each is taken at its turn, in that order, and
its costs are charged then (a ``Tab``): the byte budget, the failed-fetch
budget and the report are those of reading them one at a time.

The scan's ``sources`` (``ScanDraft.sources``, this scan's only) map each
remote artifact's ``abs_path`` to a function that reopens it, so ``--deep``
(parsers/planes.py) streams its tensors; nothing outlives the scan.
"""

from __future__ import annotations

import posixpath
import queue
import threading
import urllib.parse
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ...artifact import Artifact, ArtifactDraft, Format, ScanDraft
from ...issues.file_unparseable import (
    RemoteFailed,
    RemoteGaveUp,
    RemoteManifest,
    RemoteReadRaised,
)
from ...issues.notes import SourceNote
from ...issues.path_escape import RemoteListingEscape, UnsafeRemotePath
from ...names import Declared
from .. import configs, index, models, readers
from ..interface import SNIFF_BYTES, ByteSource, ReadContext
from . import (
    MAX_FAILED_FETCHES,
    Budget,
    RemoteError,
    RemoteOptions,
    Tab,
    UnsafePath,
    redact,
    scheme,
    unsafe_path,
)

INDEX_SUFFIX = ".index.json"


@dataclass
class RemoteTree:
    """A remote model: its display root and its files (relative paths)."""

    root: str
    group_root: str
    files: list[str]
    open: Callable[[str], ByteSource]
    optional: set[str] = field(default_factory=set)  # guessed names: absent is no finding
    refused: list[tuple[str, str]] = field(default_factory=list)  # (listed name, why)
    # the same opener charging a given budget (a Tab), and how many files may
    # be fetched ahead of their turn; None or 1: one at a time
    open_on: Callable[[str, Budget], ByteSource] | None = None
    budget: Budget | None = None
    in_flight: int = 1

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


def _failed(art: ArtifactDraft, exc: RemoteError) -> Artifact:
    art.parsed = False
    art.add(RemoteFailed(None, str(exc), exc.url, exc.status))
    return art.finish()


def read_checkpoint(src: ByteSource, ctx: ReadContext, fmt: Format) -> Artifact:
    head = src.read_at(0, SNIFF_BYTES)
    reader = next((r for r in readers.CHECKPOINT_READERS if r.sniff(head, ctx.display, src.size)),
                  None) or next(r for r in readers.CHECKPOINT_READERS if r.format is fmt)
    return reader.read(src, ctx)


class _GaveUp(RemoteError):
    """The root's failed-fetch budget is spent: the file was not requested."""


# What a thread may cost in address space: an 8 MB stack and a 64 MB
# allocator arena (glibc reserves one per thread that contends for memory),
# and what a scan needs beside its threads.
THREAD_ADDRESS_SPACE = 80 << 20
SCAN_ADDRESS_SPACE = 1 << 30


def _threads_allowed(wanted: int) -> int:
    """``wanted``, or fewer under an address-space limit (``ulimit -v``):
    the threads may not take the memory the scan itself needs (under 1 GiB
    plus 80 MB a thread, one file at a time)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: no such limit
        return wanted
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, (soft - SCAN_ADDRESS_SPACE) // THREAD_ADDRESS_SPACE))


class _Pool:
    """Up to ``width`` threads, started up front: fewer when the process
    may not start more (an address-space limit), and none to speak of when
    it cannot start two (then the directory is read one file at a time)."""

    def __init__(self, width: int) -> None:
        self.tasks: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue())
        self.threads: list[threading.Thread] = []
        for i in range(width):
            t = threading.Thread(target=self._work, name=f"grit-remote-{i}", daemon=True)
            try:
                t.start()
            except RuntimeError:  # can't start new thread
                break
            self.threads.append(t)

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        fut: Future[Any] = Future()
        self.tasks.put((fut, fn))
        return fut

    def _work(self) -> None:
        while (task := self.tasks.get()) is not None:
            fut, fn = task
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the file's turn
                fut.set_exception(exc)

    def shutdown(self) -> None:
        for _ in self.threads:
            self.tasks.put(None)
        for t in self.threads:
            t.join()


@dataclass
class _Job:
    """One file fetched (and a checkpoint parsed) ahead of its turn."""

    rel: str
    tab: Tab | None = None  # None: not launched, read at its turn
    opened: Future[ByteSource] | None = None
    parsed: Future[Artifact] | None = None
    how: tuple[ReadContext, Format] | None = None  # a checkpoint's parse
    accepted: bool = False


class _Ahead:
    """A directory's files in the order they are read, at most ``width``
    fetched ahead of their turn (thread pool), and only while the fetches
    that could still fail stay within the failed-fetch budget, so that no
    file is requested that a reading one at a time would not request.  At
    a file's turn its tab is settled: its results are used when what it
    cost fits the budget then, else it is read again on its tab (its kept
    fetches replayed, the budget refusing where it would have)."""

    def __init__(self, reading: _Reading, order: list[str]) -> None:
        tree = reading.tree
        self.reading = reading
        self.width = _threads_allowed(tree.in_flight) if len(order) > 1 else 1
        self.open_on = tree.open_on
        self.budget = tree.budget
        self.pool = (_Pool(self.width) if self.width > 1 and self.open_on is not None
                     and self.budget is not None and len(order) > 1 else None)
        if self.pool is not None and len(self.pool.threads) < 2:
            self.pool.shutdown()
            self.pool = None
        elif self.pool is not None:
            self.width = len(self.pool.threads)
        self.jobs = {rel: _Job(rel) for rel in order}
        self.waiting = deque(self.jobs[rel] for rel in order)
        self.out: deque[_Job] = deque()
        self.fill()

    def fill(self) -> None:
        if self.pool is None or self.open_on is None or self.budget is None:
            return
        while (self.waiting and len(self.out) < self.width and not self.budget.short
               and self.reading.failures + len(self.out) < MAX_FAILED_FETCHES):
            job = self.waiting.popleft()
            job.tab = self.budget.tab()
            job.opened = self.pool.submit(partial(self.open_on, job.rel, job.tab))
            if job.how is not None:
                self._parse(job)
            self.out.append(job)

    def parse_as(self, rel: str, ctx: ReadContext, fmt: Format) -> None:
        job = self.jobs.get(rel)
        if job is None:
            return
        job.how = (ctx, fmt)
        if job.opened is not None and job.parsed is None:
            self._parse(job)

    def _parse(self, job: _Job) -> None:
        assert self.pool is not None and job.opened is not None and job.how is not None
        opened, (ctx, fmt) = job.opened, job.how
        job.parsed = self.pool.submit(lambda: read_checkpoint(opened.result(), ctx, fmt))

    def source(self, rel: str) -> ByteSource:
        """``rel`` opened, at its turn (raises what opening it raised).  A
        file's job is dropped once it is taken (a checkpoint's at ``parse``),
        so what it fetched is not kept past its turn."""
        job = self.jobs.get(rel)
        if job is None or job.tab is None or job.opened is None or self.open_on is None:
            if job is not None and job in self.waiting:
                self.waiting.remove(job)
            try:
                return self.reading.source_now(rel)
            finally:
                self.fill()
        self.out.remove(job)
        pending: list[Future[Any]] = [job.opened]
        if job.parsed is not None:
            pending.append(job.parsed)
        wait_for(pending)
        # what a reading at its turn would not repeat (a thread or memory
        # refused, a bug) is not taken from ahead: the file is read again
        odd = any(f.exception() is not None and not isinstance(f.exception(), RemoteError)
                  for f in pending)
        job.accepted = job.tab.settle(redo=odd)
        opened, job.opened = job.opened, None
        try:
            return opened.result() if job.accepted else self.open_on(rel, job.tab)
        except RemoteError:
            self.reading.failures += 1
            self.jobs.pop(rel, None)
            raise
        finally:
            if job.how is None:  # nothing to parse: a config or an index
                self.jobs.pop(rel, None)
            self.fill()

    def parse(self, rel: str, src: ByteSource, ctx: ReadContext, fmt: Format) -> Artifact:
        """``rel``'s checkpoint parsed, at its turn (raises what parsing raised)."""
        job = self.jobs.pop(rel, None)
        try:
            if job is not None and job.accepted and job.parsed is not None:
                return job.parsed.result()
            return read_checkpoint(src, ctx, fmt)
        finally:
            if job is not None and job.tab is not None:
                job.tab.done()

    def close(self) -> None:
        for job in self.out:  # not started: never fetched
            for f in (job.opened, job.parsed):
                if f is not None:
                    f.cancel()
        if self.pool is not None:
            self.pool.shutdown()
        for job in self.jobs.values():
            if job.tab is not None:
                job.tab.done()
        self.jobs.clear()
        self.out.clear()


class _Reading:
    def __init__(self, tree: RemoteTree, scan: ScanDraft, tick: Callable[[], None]) -> None:
        self.tree, self.scan, self.tick = tree, scan, tick
        self.absent: set[str] = set()
        self.failures = 0
        self.not_requested = 0
        self.ahead: _Ahead | None = None

    def source(self, rel: str) -> ByteSource:
        if self.ahead is not None:
            return self.ahead.source(rel)
        return self.source_now(rel)

    def source_now(self, rel: str) -> ByteSource:
        if self.failures >= MAX_FAILED_FETCHES:
            self.not_requested += 1
            raise _GaveUp(f"{self.tree.display(rel)}: not requested", self.tree.display(rel))
        try:
            return self.tree.open(rel)
        except RemoteError:
            self.failures += 1
            raise

    def missing(self, rel: str, exc: RemoteError) -> bool:
        """Whether ``exc`` means a guessed name is absent (no finding)."""
        if isinstance(exc, _GaveUp) or (rel in self.tree.optional and exc.status == 404):
            self.absent.add(rel)
            return True
        return False

    def json(self, rel: str, art: ArtifactDraft) -> Any | None:
        try:
            src = self.source(rel)
        except RemoteError as exc:
            if not self.missing(rel, exc):
                _failed(art, exc)
            return None
        obj = configs.read_json_source(src, art)
        for note in getattr(src, "notes", ()):
            art.add(SourceNote(None, art.abs_path, note))
        return obj

    def declared(self, d: str, cfgs: list[str], group: str
                 ) -> tuple[Declared | None, Callable[[str], str]]:
        found: list[Declared] = []
        info: dict[str, object] = {}
        for rel in sorted(cfgs, key=lambda r: posixpath.basename(r).lower()):
            name = posixpath.basename(rel).lower()
            art = ArtifactDraft(path=f"{group}/{name}", abs_path=self.tree.display(rel),
                                format=Format.CONFIG, group=group)
            obj = self.json(rel, art)
            if rel in self.absent:
                continue
            if obj is not None:
                info = configs.gather(name, obj, art, found, info)
            if art.issues:
                self.scan.artifacts.append(art.finish())
        return configs.settle(found, info, group, self.scan.declared)

    def checkpoint(self, rel: str, fmt: Format, declared: Declared | None,
                   role: Callable[[str], str], group: str) -> Artifact:
        disp = self.tree.display(rel)
        draft = ArtifactDraft(path=disp, abs_path=disp, format=fmt, parsed=False, group=group)
        try:
            src = self.source(rel)
            self.scan.sources[disp] = partial(self.tree.open, rel)
            # conventions are inferred per model, across shards (parsers/models.py)
            ctx = ReadContext(disp, disp, declared, role, group=group)
            art = (self.ahead.parse(rel, src, ctx, fmt) if self.ahead is not None
                   else read_checkpoint(src, ctx, fmt))
            return _with_notes(src, art)
        except RemoteError as exc:
            if self.missing(rel, exc):
                return draft.finish()
            return _failed(draft, exc)
        except Exception as exc:  # noqa: BLE001 - containment: one file, never the scan
            draft.add(RemoteReadRaised(None, type(exc).__name__, str(exc)))
        return draft.finish()

    def directory(self, d: str, rels: list[str]) -> None:
        kinds = {rel: _kind(posixpath.basename(rel)) for rel in rels}
        cfgs = sorted((r for r in rels if kinds[r] is Format.CONFIG),
                      key=lambda r: posixpath.basename(r).lower())
        ckpts = [r for r in rels if (kinds[r] or Format.CONFIG).is_checkpoint_file]
        # the order the files are read in below, which is the order they are charged in
        self.ahead = _Ahead(self, cfgs + ckpts + [r for r in rels if kinds[r] is Format.INDEX])
        try:
            self._directory(d, rels, kinds, ckpts)
        finally:
            self.ahead.close()
            self.ahead = None

    def _directory(self, d: str, rels: list[str], kinds: dict[str, Format | None],
                   ckpts: list[str]) -> None:
        group = self.tree.display(d) if d else self.tree.group_root
        declared, role = self.declared(d, [r for r in rels if kinds[r] is Format.CONFIG], group)
        by_name: dict[str, Artifact] = {}
        if self.ahead is not None:
            for rel in ckpts:
                disp = self.tree.display(rel)
                self.ahead.parse_as(rel, ReadContext(disp, disp, declared, role,
                                                     group=group),
                                    kinds[rel] or Format.SAFETENSORS)
        start = len(self.scan.artifacts)
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
                self.scan.skipped.append(RemoteManifest(None, self.tree.display(rel)))
            if kinds[rel] is not Format.INDEX:
                continue
            disp = self.tree.display(rel)
            idx = ArtifactDraft(path=disp, abs_path=disp, format=Format.INDEX, group=group)
            obj = self.json(rel, idx)
            if obj is not None:
                got = index.read_parsed(obj, idx, names, by_name)
                obj = None  # freed before the model is assembled (index.read_parsed)
                if got is not None:
                    index_shards.append(got)
            self.scan.artifacts.append(idx.finish())
        # the same model-level reading as a local directory
        shards = list(by_name.values())
        models.put_back(self.scan.artifacts, start, shards, models.assemble(
            shards, index_shards, declared, role, self.scan.tracebacks))


def _with_notes(src: ByteSource, art: Artifact) -> Artifact:
    """``art`` with a NOTE for each of its source's notes (the remote
    source's own remarks, known once it has been read)."""
    notes = tuple(SourceNote(None, art.abs_path, note) for note in getattr(src, "notes", ()))
    return replace(art, issues=art.issues + notes) if notes else art


def read_tree(tree: RemoteTree, scan: ScanDraft,
              progress: Callable[[int, int], None] | None = None) -> None:
    for name, why in tree.refused:
        disp = tree.display(name)
        art = ArtifactDraft(path=disp, abs_path=disp, format=_kind(posixpath.basename(name))
                       or Format.SAFETENSORS, parsed=False, group=tree.group_root)
        art.add(RemoteListingEscape(None, tree.root, name, why))
        scan.artifacts.append(art.finish())
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
    if reading.not_requested:
        art = ArtifactDraft(path=tree.root, abs_path=tree.root, format=Format.SAFETENSORS,
                            parsed=False, group=tree.group_root)
        art.add(RemoteGaveUp(None, tree.root, reading.failures, reading.not_requested,
                             MAX_FAILED_FETCHES))
        scan.artifacts.append(art.finish())


def _checked(names: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Listed names split into those that may be requested and those refused."""
    ok: list[str] = []
    refused: list[tuple[str, str]] = []
    for n in names:
        why = unsafe_path(n)
        if why is None:
            ok.append(n)
        elif _kind(posixpath.basename(n)) is not None:
            refused.append((n, why))
    return ok, refused


def _hf_tree(url: str, opts: RemoteOptions, budget: Budget) -> RemoteTree:
    from . import hf, require
    from .http import HttpSource

    require("huggingface_hub", "remote", url)
    t = hf.parse(url)

    def opener_on(rel: str, on: Budget) -> ByteSource:
        target = hf.resolve_url(t, rel)
        return HttpSource(target, opts, on, hf.auth_headers(target), t.display(rel))

    opener = partial(_on, opener_on, budget)

    def tree(root: str, files: list[str], refused: list[tuple[str, str]]) -> RemoteTree:
        return RemoteTree(t.root, root, files, opener, refused=refused, open_on=opener_on,
                          budget=budget, in_flight=opts.in_flight)

    if t.path.lower().endswith(hf.FILE_SUFFIXES):
        parent = posixpath.dirname(t.path)
        files = [t.path]
        if t.path.lower().endswith(INDEX_SUFFIX):  # an index reads its directory
            files = [p for p, _ in hf.list_files(hf.HfTarget(t.repo, t.revision, parent),
                                                 opts, budget)]
        ok, refused = _checked(files)
        return tree(t.display(parent), ok, refused)
    ok, refused = _checked([p for p, _ in hf.list_files(t, opts, budget)])
    return tree(t.display(t.path), ok, refused)


def _on(opener_on: Callable[[str, Budget], ByteSource], budget: Budget, rel: str
        ) -> ByteSource:
    return opener_on(rel, budget)


def _http_tree(url: str, opts: RemoteOptions, budget: Budget) -> RemoteTree:
    """One file; an index URL also reads the shards it names and the
    configs beside it (a plain HTTP server cannot be listed).  The query
    string (a presigned URL's signature) belongs to the named file only."""

    from .http import HttpSource

    parts = urllib.parse.urlsplit(url)
    d, _, name = parts.path.rpartition("/")
    base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, d, "", ""))
    shown = redact(base)
    if not name or _kind(urllib.parse.unquote(name)) is None:
        raise RemoteError(
            f"{redact(url)}: a directory (or a file that is not a checkpoint, an index or a "
            "config) cannot be listed over plain HTTP(S); name a file "
            "(.../model.safetensors, .../model.gguf), an index "
            "(.../model.safetensors.index.json), or use hf://ORG/REPO or s3://BUCKET/PATH "
            "(pip install 'grit-scan[remote]')", redact(url))
    named = urllib.parse.unquote(name)

    def opener_on(rel: str, on: Budget) -> ByteSource:
        if rel == named:  # the URL as given: its query string too
            return HttpSource(url, opts, on, shown=f"{shown}/{rel}")
        return HttpSource(f"{base}/{urllib.parse.quote(rel)}", opts, on,
                          shown=f"{shown}/{rel}")

    opener = partial(_on, opener_on, budget)

    files, optional = [named], set()
    if named.lower().endswith(INDEX_SUFFIX):
        # the index decides which shards to fetch; it is read again (and its
        # problems reported) with the rest of the repository
        probe = ArtifactDraft(path=named, abs_path=named, format=Format.INDEX)
        obj = configs.read_json_source(opener(named), probe)
        wm = obj.get("weight_map") if isinstance(obj, dict) else None
        shards = sorted({v for v in wm.values() if isinstance(v, str) and
                         index.escapes(v) is None and unsafe_path(v) is None}
                        ) if isinstance(wm, dict) else []
        optional = set(configs.CONFIG_NAMES) | set(shards)
        files += sorted(optional - {named})
    return RemoteTree(shown, shown, files, opener, optional, open_on=opener_on, budget=budget,
                      in_flight=opts.in_flight)


def _fsspec_tree(url: str, opts: RemoteOptions, budget: Budget) -> RemoteTree:
    from . import fsspec_source

    listed = fsspec_source.list_files(url, opts, budget)
    shown = redact(url)
    if listed is None:
        base, _, name = url.rpartition("/")
        return RemoteTree(redact(base), redact(base), [name],
                          lambda rel: fsspec_source.FsspecSource(f"{base}/{rel}", opts, budget))
    fs, root, files = listed
    top = url.rstrip("/")

    def opener(rel: str) -> ByteSource:
        return fsspec_source.FsspecSource(f"{top}/{rel}", opts, budget, fs, f"{root}/{rel}")

    ok, refused = _checked([r for r, _ in files])
    return RemoteTree(shown.rstrip("/"), shown.rstrip("/"), ok, opener, refused=refused)


def collect_url(url: str, scan: ScanDraft, opts: RemoteOptions | None = None,
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
        shown = redact(url)
        art = ArtifactDraft(path=shown, abs_path=shown, format=Format.SAFETENSORS, group=shown)
        if isinstance(exc, UnsafePath):
            art.parsed = False
            art.add(UnsafeRemotePath(None, str(exc)))
            scan.artifacts.append(art.finish())
        else:
            scan.artifacts.append(_failed(art, exc))
        return
    read_tree(tree, scan, progress)


def open_source(url: str, opts: RemoteOptions | None = None,
                budget: Budget | None = None) -> ByteSource:
    """One remote file as a ByteSource (raises RemoteError, MissingExtra)."""
    opts = opts or RemoteOptions()
    budget = budget or Budget(opts.budget)
    sch = scheme(url)
    if sch in ("http", "https"):
        from .http import HttpSource

        return HttpSource(url, opts, budget)
    if sch == "hf":
        from . import hf

        return hf.open_file(url, opts, budget)
    from .fsspec_source import FsspecSource

    return FsspecSource(url, opts, budget)
