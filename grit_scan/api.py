"""The library API: ``grit_scan.scan(paths, deep=False) -> Report`` and the
few operations the commands need (FILE::TENSOR operands, manifests, rules).

Pipelines get the same model the CLI renders: ``report.findings``,
``report.exit_codes`` and ``report.to_json()`` (docs/pipelines.md).  This is
the layer the commands import; it wires parsers -> rules -> report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, NamedTuple

from .artifact import Artifact, Format, QTensor, ReadError, ScanInput
from .codec.errors import GritValueError
from .codec.fnv import compiled_backend
from .collector import paused
from .config import Settings, settings_from_table
from .parsers import gritconfig, models, readers, staged, tree
from .parsers.fileio import ReadMeter
from .parsers.interface import ReadContext, default_role
from .parsers.remote import MissingExtra, RemoteOptions, is_url
from .report.policy import FailOn, parse_fail_on
from .report.report import Report, from_scan, ignored_counts
from .rules.codes import Kind
from .rules.finding import Finding, Severity
from .rules.registry import Rule, Runner, enabled_kinds, lookup, parse_selection, rules

__all__ = ["SLOW_PATH", "FailOn", "ManifestRefused", "MissingExtra", "NoSuchPath",
           "ReadError", "RemoteOptions", "ReadMeter", "Rule", "Settings", "changed_roots",
           "inventory", "is_url", "LoadedTensor", "load_settings", "load_tensor", "open_tensor",
           "lookup", "model_roots", "nothing_found", "quantized_names", "resolve_target",
           "rules", "scan",
           "scan_model", "split_spec", "tensor_bytes", "write_manifest"]

SLOW_PATH = ("running the pure-Python fallback: the compiled helper (grit_scan.codec._fnv) "
             "was not built, so digests (--deep, manifests) are slower (grit --version "
             "says which is in use)")

Progress = Callable[[int, int], None]
PathLike = str | os.PathLike[str]


def scan(
    paths: Sequence[PathLike] | PathLike = (".",),
    deep: bool = False,
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    jobs: int | None = None,
    debug: bool = False,
    progress: Progress | None = None,
    read_progress: Progress | None = None,
    fail_on: str | Iterable[str] | FailOn | None = None,
    settings: Settings | None = None,
    remote: RemoteOptions | None = None,
    meter: ReadMeter | None = None,
) -> Report:
    """Scan files, directories or manifests and return the report.

    ``select``/``ignore`` take kind names, codes (GRIT101) or code prefixes
    (GRIT1); ``fail_on`` severities or kinds (which findings set the exit
    code); each overrides what ``settings`` (a config file,
    ``load_settings``) says.  ``progress``/``read_progress`` are called with
    (done, total).  ``paths`` may hold URLs (``hf://ORG/REPO[@REV][/PATH]``,
    ``https://``, ``s3://``): ``remote`` sets their timeouts, retries and
    byte budget.  ``meter`` (a ``ReadMeter``, made for this scan) counts
    the bytes read from local files.  Raises NoSuchPath for a local path
    that does not exist, and MissingExtra (a GritError) when a URL needs an
    extra that is not installed."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    roots = staged.dedupe([os.fspath(p) for p in paths] or ["."])
    for r in roots:
        if not is_url(r) and not os.path.lexists(r):
            raise NoSuchPath(f"{r}: no such file or directory")
    cfg = settings or Settings()
    sel = parse_selection(select, "--select") if select is not None else cfg.select
    ign = parse_selection(ignore, "--ignore") if ignore is not None else cfg.ignore
    enabled = enabled_kinds(sel, ign)
    if isinstance(fail_on, FailOn):
        gate = fail_on
    elif fail_on is not None:
        gate = parse_fail_on(fail_on)
    else:
        gate = cfg.fail_on or FailOn()
    n_jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    runner = Runner(enabled=enabled, debug=debug)
    # A scan allocates hundreds of thousands of small, acyclic objects (header
    # entries, tensor records): the cyclic collector would rescan them over
    # and over, tripling the cost of reading headers.  It is paused for the
    # scan and restored afterwards.
    with paused():
        data = tree.collect(roots, deep=deep, progress=read_progress, remote_options=remote,
                            meter=meter)
        if deep:  # parsers.planes loads numpy and the layout codec: --deep only
            from .parsers.planes import DigestPool, open_planes

            # the scan's digest threads, joined before it returns
            with DigestPool() as pool:
                findings = runner.run(data, partial(open_planes, sources=data.sources,
                                                    meter=meter, pool=pool), progress, n_jobs)
        else:
            findings = runner.run(data, None, progress, n_jobs)
    messages = []
    if not compiled_backend():
        messages.append(SLOW_PATH)
    findings = on_models(findings, data.artifacts)
    kept, by_path = _per_path(findings, cfg)
    hidden = _hidden_by(runner.hidden, sel, select is not None, ign, ignore is not None, cfg)
    if by_path:
        hidden.append((_config_label(cfg), by_path))
    report = replace(from_scan(data, kept, messages), fail_on=gate,
                     ignored=ignored_counts(hidden))
    if debug:
        report.tracebacks.extend([*data.tracebacks, *runner.tracebacks])
    return report


_NUMBER = r"\d[\d,]*"
_EXAMPLE = r" \(e\.g\. [^()]*\)"
_LISTED = 50  # tensor names a merged finding's detail keeps


def on_models(findings: list[Finding], artifacts: Sequence[Artifact]) -> list[Finding]:
    """A warning or info finding that every shard of a model repeats (the
    same kind and message but for its counts and example) becomes one
    finding on the model: its path is the model (its index, or its first
    shard), its count the sum, and ``detail.files`` the shards that said
    it.  A finding whose message differs in anything but its first number
    stays on its file."""
    import re

    model_of: dict[str, str] = {}
    files_of: dict[str, int] = {}
    for a in artifacts:
        if a.model is not None and a.format.is_checkpoint_file:
            model_of[a.path] = a.model
            files_of[a.model] = files_of.get(a.model, 0) + 1
    known = {a.path for a in artifacts}
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, f in enumerate(findings):
        model = model_of.get(f.path)
        if model is None or files_of[model] < 2 or f.severity in (Severity.STRUCTURAL,
                                                                   Severity.DISAGREEMENT):
            continue
        text = re.sub(_EXAMPLE, "", f.message)
        groups.setdefault((model, f.kind.value, re.sub(_NUMBER, "#", text)), []).append(i)
    merged: dict[int, Finding | None] = {}
    for (model, _kind, _shape), idx in groups.items():
        if len({findings[i].path for i in idx}) < 2:
            continue
        texts = [re.sub(_EXAMPLE, "", findings[i].message) for i in idx]
        numbers = [re.findall(_NUMBER, t) for t in texts]
        if any(n[1:] != numbers[0][1:] for n in numbers):
            continue  # they differ in more than their count
        first = findings[idx[0]]
        msg = first.message
        if numbers[0]:
            total = sum(int(n[0].replace(",", "")) for n in numbers)
            msg = re.sub(_NUMBER, str(total), msg, count=1)
        paths = sorted({findings[i].path for i in idx})
        msg += f" (in {len(paths)} shards of the model)"
        tensors = [t for i in idx for t in (findings[i].detail.get("tensors") or (
            [findings[i].tensor] if findings[i].tensor else []))]
        detail = {**first.detail, "files": paths}
        if "count" in first.detail:
            detail["count"] = sum(int(findings[i].detail.get("count", 0)) for i in idx)
        if tensors:
            detail["tensors"] = tensors[:_LISTED]
        # the model's own file (its index), else its first shard (a GGUF split)
        where = model if model in known else paths[0]
        merged[idx[0]] = replace(first, path=where, tensor=None, message=msg, detail=detail)
        for i in idx[1:]:
            merged[i] = None
    if not merged:
        return findings
    return [m for i, f in enumerate(findings)
            for m in ([merged[i]] if i in merged else [f]) if m is not None]


def inventory(paths: Sequence[PathLike] | PathLike, remote: RemoteOptions | None = None
              ) -> ScanInput:
    """What the scan's readers make of ``paths`` (``grit show``): every
    file with its tensors, its quantised tensors' conventions, grades and
    descriptor sources, the models they form and the configs read.  No rule
    runs.  Raises NoSuchPath for a local path that does not exist."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    roots = staged.dedupe([os.fspath(p) for p in paths] or ["."])
    for r in roots:
        if not is_url(r) and not os.path.lexists(r):
            raise NoSuchPath(f"{r}: no such file or directory")
    with paused():
        return tree.collect(roots, remote_options=remote)


class NoSuchPath(GritValueError):
    """A path given to scan does not exist."""


class ManifestRefused(GritValueError):
    """``write_manifest`` refused to record: nothing to record (``findings``
    0), or files with ``findings`` structural findings without
    ``allow_findings``."""

    def __init__(self, message: str, findings: int = 0) -> None:
        super().__init__(message)
        self.findings = findings


def load_settings(paths: Sequence[PathLike] | PathLike = (".",), config: PathLike | None = None,
                  isolated: bool = False, root: PathLike | None = None) -> Settings:
    """The config file's settings: ``config`` if given, else the nearest
    grit.toml / pyproject.toml [tool.grit] from the project root ``root``
    (default: the working directory) upward, never one inside a scanned
    directory below it (``paths`` do not decide: the tree being checked
    cannot change how it is checked); ``isolated`` reads none.  Raises
    GritValueError for a bad file (not regular, over a budget, invalid)."""
    if isolated:
        return Settings()
    if config is not None:
        path = os.fspath(config)
        table = gritconfig.read_table(path)
        if table is None:
            raise GritValueError(f"{path}: has no [tool.grit] table")
        found: tuple[str, dict[str, object]] | None = (path, table)
    else:
        found = gritconfig.discover(os.fspath(root) if root is not None else os.getcwd())
    if found is None:
        return Settings()
    path, table = found
    return settings_from_table(table, path, os.path.dirname(os.path.abspath(path)))


def _per_path(findings: list[Finding], cfg: Settings) -> tuple[list[Finding], list[Finding]]:
    """(kept, hidden by the config's per-path-ignores)."""
    if not cfg.per_path_ignores:
        return findings, []
    out: list[Finding] = []
    hidden: list[Finding] = []
    for f in findings:
        rel = os.path.relpath(os.path.abspath(f.path), cfg.base).replace(os.sep, "/")
        if any(p.matches(rel, f.kind) for p in cfg.per_path_ignores):
            hidden.append(f)
        else:
            out.append(f)
    return out, hidden


def _config_label(cfg: Settings) -> str:
    """The config file as the report names it: relative to the working
    directory when it lies under it."""
    src = cfg.source or "the config file"
    if cfg.source and os.path.isabs(src):
        rel = os.path.relpath(src)
        if not rel.startswith(".."):
            return rel
    return src


def _hidden_by(hidden: list[Finding], sel: frozenset[Kind] | None, sel_cli: bool,
               ign: frozenset[Kind] | None, ign_cli: bool, cfg: Settings
               ) -> list[tuple[str, list[Finding]]]:
    """The findings --select/--ignore hid, by what hid them: the option, or
    the config file that set it."""
    by: dict[str, list[Finding]] = {}
    for f in hidden:
        if sel is not None and f.kind not in sel:
            label = "--select" if sel_cli else _config_label(cfg)
        else:
            label = "--ignore" if ign_cli else _config_label(cfg)
        by.setdefault(label, []).append(f)
    return list(by.items())


def model_roots(files: Sequence[PathLike]) -> list[str]:
    """For changed files (a pre-commit hook's arguments): the models they
    belong to, each once by real path (parsers/staged.py)."""
    return staged.model_roots([os.fspath(f) for f in files])


def changed_roots(files: Sequence[PathLike]) -> tuple[list[str], list[str]]:
    """``model_roots``, and the changed files refused because their model
    resolves outside the working directory through a symbolic link."""
    return staged.changed_roots([os.fspath(f) for f in files])


def split_spec(spec: str) -> tuple[str, str] | None:
    """FILE::TENSOR -> (FILE, TENSOR), or None when ``spec`` is not one.
    Tensor names and paths may themselves hold ``::``: the split is at the
    first ``::`` whose left side is an existing file, else at the last."""
    if "::" not in spec:
        return None
    at = spec.find("::")
    while at != -1:
        path, name = spec[:at], spec[at + 2:]
        if path and name and os.path.isfile(path):
            return path, name
        at = spec.find("::", at + 1)
    path, _, name = spec.rpartition("::")
    return (path, name) if path and name else None


_SPLIT_PART = r"-\d{5}-of-\d{5}\.gguf$"


class LoadedTensor(NamedTuple):
    """A tensor ``open_tensor`` found: its file, the tensor, and the remote
    files of its model (``tensor_bytes`` reopens them; empty when local)."""

    artifact: Artifact
    tensor: QTensor
    sources: Mapping[str, Callable[[], Any]]


def load_tensor(spec: str, remote: RemoteOptions | None = None) -> tuple[Artifact, QTensor]:
    """``open_tensor``'s file and tensor."""
    t = open_tensor(spec, remote)
    return t.artifact, t.tensor


def open_tensor(spec: str, remote: RemoteOptions | None = None) -> LoadedTensor:
    """The quantised tensor ``MODEL::TENSOR`` names (its logical name, role,
    or one of its stored plane tensors).  MODEL is what ``scan`` reads as a
    model: a safetensors or GGUF file (read with the shards, split parts,
    index and configs beside it, so a tensor whose scales are in another
    shard is whole and refused for the reason a scan gives), a directory,
    a shard index (``model.safetensors.index.json``) or a URL
    (``hf://ORG/REPO``).  Raises GritValueError saying why not."""
    parts = split_spec(spec)
    if parts is None:
        raise GritValueError(f"{spec!r} is not MODEL::TENSOR")
    path, name = parts
    arts, prefer, sources = _model_of(path, remote)
    found = _find(arts, name, prefer)
    if found is not None:
        return LoadedTensor(found[0], found[1], sources)
    qs = [q for a in arts for q in a.quantized.names()[:8]][:8]
    n = sum(len(a.quantized) for a in arts)
    known = ", ".join(qs)
    raise GritValueError(
        f"{path} has no quantised tensor {name!r}"
        + (f" (quantised tensors: {known}{', ...' if n > len(qs) else ''})"
           if known else " (it has no quantised tensors)"))


def _model_of(path: str, remote: RemoteOptions | None
              ) -> tuple[list[Artifact], str | None, Mapping[str, Callable[[], Any]]]:
    """The parsed checkpoint files of the model ``path`` names, the real
    path of the file the user named (its tensors are looked in first), and
    the remote files' openers (ScanInput.sources)."""
    import re

    if is_url(path):
        data = tree.collect([path], remote_options=remote)
        prefer = None
    elif os.path.isdir(path):
        data = tree.collect([path])
        prefer = None
    elif not os.path.isfile(path):
        raise GritValueError(f"{path}: no such file or directory")
    else:
        # the file the user named, followed once (readers open without following)
        real = os.path.realpath(path)
        fmt = tree.classify(os.path.basename(path), real)
        if fmt is Format.INDEX:
            data = tree.collect([path])
        elif fmt is None or not fmt.is_checkpoint_file:
            raise GritValueError(f"{path}: neither safetensors, GGUF nor a shard index")
        else:
            parent = os.path.dirname(path) or "."
            with os.scandir(parent) as it:
                sharded = any(e.name.lower().endswith(".index.json") for e in it)
            if sharded or re.search(_SPLIT_PART, os.path.basename(path)):
                data = tree.collect_beside(path)
                if not any(a.abs_path == real for a in data.artifacts):
                    data = replace(data, artifacts=(*data.artifacts,
                                                    _read_alone(real, path, fmt)))
            else:
                art = _read_alone(real, path, fmt)
                if not art.parsed:
                    raise GritValueError(f"{path}: " + "; ".join(
                        i.message for i in art.issues[:1]))
                return [art], real, {}
        prefer = real
    arts = [a for a in data.artifacts if a.format.is_checkpoint_file and a.parsed]
    if not arts:
        why = "; ".join(i.message for a in data.artifacts for i in a.issues[:1])
        raise GritValueError(f"{path}: no readable safetensors or GGUF file"
                             + (f" ({why})" if why else ""))
    return arts, prefer, data.sources


def _read_alone(real: str, display: str, fmt: Format) -> Artifact:
    """One checkpoint file read on its own, as the model of one file a scan
    of it would make (conventions inferred by ``models.assemble``)."""
    art = readers.read_path(real, ReadContext(display, real), fmt)
    return models.assemble([art], [], None, default_role)[0]


def _find(arts: Sequence[Artifact], name: str, prefer: str | None
          ) -> tuple[Artifact, QTensor] | None:
    """The tensor ``name`` (logical name or role, else a plane tensor) in
    the file the user named first, then in the model's other files."""
    order = sorted(arts, key=lambda a: a.abs_path != prefer)
    for a in order:
        qs = a.quantized
        # by the columns' names and roles: a GGUF's 100,000 tensors are made
        # only when asked for (artifact.QList)
        at = next((i for i, (n, r) in enumerate(zip(qs.names(), qs.roles()))
                   if n == name or r == name), None)
        if at is not None:
            return a, qs[at]
    for a in order:
        for q in a.quantized:  # a plane or payload tensor of a logical tensor
            if any(r is not None and r.tensor == name for r in q.refs()):
                return a, q
    return None


def quantized_names(path: str) -> list[str]:
    """The names of the quantised tensors of a safetensors or GGUF file,
    from its header alone (no tensor bytes are read); [] for anything that
    is not a readable checkpoint file.  Never raises (shell completion)."""
    try:
        if not os.path.isfile(path):
            return []
        real = os.path.realpath(path)
        fmt = tree.classify(os.path.basename(path), real)
        if fmt is None or not fmt.is_checkpoint_file:
            return []
        art = _read_alone(real, real, fmt)
        return art.quantized.names() if art.parsed else []
    except Exception:  # noqa: BLE001 - completion must never fail the shell
        return []


def tensor_bytes(art: Artifact, q: QTensor,
                 sources: Mapping[str, Callable[[], Any]] | None = None) -> bytes:
    """The tensor's stored bytes: its payload, or its planes concatenated (a
    broadcast scalar repeated); ``sources`` reopen a remote model's files
    (``LoadedTensor.sources``).  Raises ReadError."""
    from .parsers.planes import open_planes

    with open_planes(art, sources) as planes:
        if q.payload is not None:
            return planes.read(q.payload.offset, q.payload.length, q.payload.file)
        return b"".join(planes.read(r.offset, r.length, r.file) * r.broadcast
                        for r in q.planes or [] if r is not None)


def write_manifest(paths: Sequence[PathLike], out: PathLike, deep: bool = False,
                   allow_findings: bool = False) -> tuple[int, int]:
    """Record every described tensor under ``paths`` in ``out`` (a
    grit-manifest.json); returns (files, tensors).  Raises NoSuchPath for a
    path that does not exist, ManifestRefused when there is nothing to
    record or (without ``allow_findings``) a file to record has structural
    findings, GritValueError for a file outside the manifest's directory,
    ReadError when ``out`` cannot be written."""
    from .parsers import manifest as manifest_mod  # here: a scan never writes one (start-up)

    report = scan(list(paths) or ["."], deep=False, jobs=1)
    base = os.path.realpath(os.path.dirname(os.path.abspath(out)))
    doc = manifest_mod.manifest_document(report.artifacts, base, deep)
    entries = doc["artifacts"]
    if not entries:
        raise ManifestRefused("nothing to record: no safetensors or GGUF file under "
                              + ", ".join(report.roots) + _skipped_summary(report))
    recorded = {a.path for a in report.artifacts
                if a.parsed and a.format.is_checkpoint_file}
    bad = [f for f in report.findings
           if f.severity is Severity.STRUCTURAL and f.path in recorded]
    if bad and not allow_findings:
        lines = "\n".join(f"  {f.kind.value}  {f.path}" + (f" :: {f.tensor}" if f.tensor else "")
                          for f in bad[:20])
        more = f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else ""
        raise ManifestRefused(f"{len(bad)} structural finding(s) in the files to record; fix "
                              "them, or record them anyway with --allow-findings:\n"
                              + lines + more, findings=len(bad))
    manifest_mod.write_manifest(doc, os.fspath(out))
    return len(entries), sum(len(e["tensors"]) for e in entries)


_SKIP_LABEL = {"pickle": "pickle (not a safetensors/GGUF file)",
               "other_weights": "other weights format (not a safetensors/GGUF file)",
               "outside_symlink": "symlink out of the root", "not_regular": "special file",
               "link": "dangling or looping link"}


def _skipped_summary(report: Report) -> str:
    """`` (N files skipped: 2 pickle, 1 outside_symlink)`` — by kind."""
    if not report.skipped:
        return " (no files skipped)"
    by: dict[str, int] = {}
    for s in report.skipped:
        by[s.get("kind", "other")] = by.get(s.get("kind", "other"), 0) + 1
    kinds = ", ".join(f"{n} {_SKIP_LABEL.get(k, k)}"
                      for k, n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))
    return f" ({len(report.skipped)} files skipped: {kinds})"


def nothing_found(report: Report) -> str | None:
    """When no checkpoint was found at all: the one-line diagnostic."""
    if any(a.format.is_checkpoint_file or a.format is Format.INDEX for a in report.artifacts):
        return None
    if any(a.format is Format.MANIFEST for a in report.artifacts):
        return None
    return "no checkpoint found under " + ", ".join(report.roots) + _skipped_summary(report)


def resolve_target(target: str) -> tuple[str, str]:
    """How ``grit sweep`` reads one target, decided where the user typed it
    (so a Dask worker gets an absolute path): ``("url", target)``,
    ``("path", its absolute path)`` or ``("hub", "hf://ORG/REPO")``.

    A target that exists here, or starts with ``./``, ``../``, ``/`` or
    ``~``, is a path; so is ``ORG/REPO`` when a local ``ORG`` exists (a
    mistyped path is reported missing, not looked up on the Hub).  Only
    then is an ``ORG/REPO[@REV]`` a Hub repo id.  Raises GritValueError for a
    target no file or URL can have (a NUL byte)."""
    if "\x00" in target:
        raise GritValueError("the target contains a NUL byte")
    if is_url(target):
        return "url", target
    if target in (".", "..") or target.startswith(("./", "../", "/", "~")):
        return "path", os.path.abspath(os.path.expanduser(target))
    if os.path.lexists(target):
        return "path", os.path.abspath(target)
    if _looks_like_repo_id(target) and not os.path.lexists(target.split("/", 1)[0]):
        return "hub", "hf://" + target
    return "path", os.path.abspath(target)


def scan_model(target: str, deep: bool = False, remote: RemoteOptions | None = None,
               select: str | None = None, ignore: str | None = None,
               resolved: tuple[str, str] | None = None) -> dict[str, object]:
    """Scan one target (a path, a URL or a bare ``ORG/REPO`` Hub id) as one
    model: the per-model function of ``grit sweep``, run in worker processes
    or as Dask tasks.  ``resolved`` is ``resolve_target(target)`` as the
    client computed it (resolved here when not given).  Returns ``{"target",
    "read_as", "resolved", "exit_code", "report"}`` (the ``scan --json``
    object) or ``{"target", "read_as"?, "resolved"?, "error"}``.  It never
    raises: a target that cannot be scanned, whatever the reason, is an
    error record, so one bad target cannot stop a sweep."""
    from .report.policy import ExitPolicy

    out: dict[str, object] = {"target": target}
    try:
        read_as, root = resolved if resolved is not None else resolve_target(target)
        out["read_as"], out["resolved"] = read_as, root
        report = scan([root], deep=deep, select=select, ignore=ignore, jobs=1, remote=remote)
        out["exit_code"] = report.exit_code_for(ExitPolicy.GRADED)
        out["report"] = report.to_json()
    except (GritValueError, MissingExtra, ReadError) as exc:
        out["error"] = str(exc)
    except Exception as exc:  # noqa: BLE001 - one target's failure is its own line
        out["error"] = f"internal error: {type(exc).__name__}: {exc}"
    if "error" in out:
        out.pop("exit_code", None)
        out.pop("report", None)
    return out


def _looks_like_repo_id(target: str) -> bool:
    import re

    return re.fullmatch(r"[\w.-]+/[\w.-]+(@[^/\s]+)?", target) is not None
