"""The library API: ``grit_scan.scan(paths, deep=False) -> Report`` and the
few operations the commands need (FILE::TENSOR operands, manifests, rules).

Pipelines get the same model the CLI renders: ``report.findings``,
``report.exit_codes`` and ``report.to_json()`` (docs/pipelines.md).  This is
the layer the commands import; it wires parsers -> rules -> report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from .artifact import Artifact, Format, QTensor, ReadError
from .codec.errors import GritValueError
from .codec.fnv import compiled_backend
from .collector import paused
from .config import Settings, settings_from_table
from .parsers import gritconfig, readers, staged, tree
from .parsers.fileio import bytes_read
from .parsers.interface import ReadContext
from .parsers.remote import MissingExtra, RemoteOptions, is_url
from .report.policy import FailOn, parse_fail_on
from .report.report import Report, from_scan, ignored_counts
from .rules.codes import Kind
from .rules.finding import Finding, Severity
from .rules.registry import Rule, Runner, enabled_kinds, lookup, parse_selection, rules

__all__ = ["SLOW_PATH", "FailOn", "ManifestRefused", "MissingExtra", "NoSuchPath",
           "ReadError", "RemoteOptions", "Rule", "Settings", "bytes_read", "changed_roots",
           "is_url",
           "load_settings", "load_tensor", "lookup", "model_roots", "nothing_found",
           "quantized_names", "rules", "scan",
           "scan_model", "split_spec", "tensor_bytes", "write_manifest"]

SLOW_PATH = ("running the pure-Python fallback: the compiled helper (grit_scan.codec._fnv) "
             "was not built, so GGUF headers and --deep digests are slower (grit --version "
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
) -> Report:
    """Scan files, directories or manifests and return the report.

    ``select``/``ignore`` take kind names, codes (GRIT101) or code prefixes
    (GRIT1); ``fail_on`` severities or kinds (which findings set the exit
    code); each overrides what ``settings`` (a config file,
    ``load_settings``) says.  ``progress``/``read_progress`` are called with
    (done, total).  ``paths`` may hold URLs (``hf://ORG/REPO[@REV][/PATH]``,
    ``https://``, ``s3://``): ``remote`` sets their timeouts, retries and
    byte budget.  Raises NoSuchPath for a local path that does not exist, and
    MissingExtra (a GritError) when a URL needs an extra that is not
    installed."""
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
    if deep:  # parsers.planes loads numpy and the layout codec: --deep only
        from .parsers.planes import open_planes
    with paused():
        data = tree.collect(roots, deep=deep, progress=read_progress, remote_options=remote)
        findings = runner.run(data, open_planes if deep else None, progress, n_jobs)
    messages = []
    if not compiled_backend():
        messages.append(SLOW_PATH)
    kept, by_path = _per_path(findings, cfg)
    hidden = _hidden_by(runner.hidden, sel, select is not None, ign, ignore is not None, cfg)
    if by_path:
        hidden.append((_config_label(cfg), by_path))
    report = replace(from_scan(data, kept, messages), fail_on=gate,
                     ignored=ignored_counts(hidden))
    if debug:
        report.tracebacks.extend(tree.READ_TRACEBACKS + runner.tracebacks)
    return report


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


def load_tensor(spec: str) -> tuple[Artifact, QTensor]:
    """The quantised tensor FILE::TENSOR names (its logical name, role, or
    one of its stored plane tensors).  Raises GritValueError saying why not."""
    parts = split_spec(spec)
    if parts is None:
        raise GritValueError(f"{spec!r} is not FILE::TENSOR")
    path, name = parts
    if not os.path.isfile(path):
        raise GritValueError(f"{path}: no such file")
    # the file the user named, followed once (readers open without following)
    real = os.path.realpath(path)
    fmt = tree.classify(os.path.basename(path), real)
    if fmt is None or not fmt.is_checkpoint_file:
        raise GritValueError(f"{path}: neither safetensors nor GGUF")
    art = readers.read_path(real, ReadContext(path, real), fmt=fmt)
    if not art.parsed:
        raise GritValueError(f"{path}: " + "; ".join(i.message for i in art.issues[:1]))
    qs = art.quantized
    # by the columns' names and roles: a GGUF's 100,000 tensors are made
    # only when asked for (artifact.QList)
    at = next((i for i, (n, r) in enumerate(zip(qs.names(), qs.roles()))
               if n == name or r == name), None)
    if at is not None:
        return art, qs[at]
    for q in qs:  # a plane or payload tensor of a logical tensor
        refs = q.refs()
        if any(r is not None and r.tensor == name for r in refs):
            return art, q
    known = ", ".join(q.name for q in art.quantized[:8])
    raise GritValueError(
        f"{path} has no quantised tensor {name!r}"
        + (f" (quantised tensors: {known}{', ...' if len(art.quantized) > 8 else ''})"
           if known else " (it has no quantised tensors)"))


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
        art = readers.read_path(real, fmt=fmt)
        return art.quantized.names() if art.parsed else []
    except Exception:  # noqa: BLE001 - completion must never fail the shell
        return []


def tensor_bytes(art: Artifact, q: QTensor) -> bytes:
    """The tensor's stored bytes: its payload, or its planes concatenated (a
    broadcast scalar repeated).  Raises ReadError."""
    from .parsers.planes import open_planes

    with open_planes(art) as planes:
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
    from .parsers import manifest as manifest_mod  # here: a scan never writes one (issue 15)

    report = scan(list(paths) or ["."], deep=False, jobs=1)
    base = os.path.realpath(os.path.dirname(os.path.abspath(out)))
    doc = manifest_mod.manifest_document(report.artifacts, base, deep)
    entries = doc["artifacts"]
    if not entries:
        raise ManifestRefused("nothing to record: no safetensors or GGUF file under "
                              + ", ".join(report.roots) + _skipped_summary(report))
    recorded = {a.path for a in report.artifacts
                if a.parsed and a.format in (Format.SAFETENSORS, Format.GGUF)}
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


def scan_model(target: str, deep: bool = False, remote: RemoteOptions | None = None,
               select: str | None = None, ignore: str | None = None) -> dict[str, object]:
    """Scan one target (a path, a URL or a bare ``ORG/REPO`` Hub id) as one
    model: the per-model function of ``grit sweep``, run in worker processes
    or as Dask tasks.  Returns ``{"target", "exit_code", "report"}`` (the
    ``scan --json`` object) or ``{"target", "error"}``; never raises for the
    target's contents."""
    from .report.policy import ExitPolicy

    root = target
    if not is_url(target) and not os.path.exists(target) and _looks_like_repo_id(target):
        root = "hf://" + target
    try:
        report = scan([root], deep=deep, select=select, ignore=ignore, jobs=1, remote=remote)
    except (GritValueError, MissingExtra, ReadError) as exc:
        return {"target": target, "error": str(exc)}
    return {"target": target, "exit_code": report.exit_code(ExitPolicy.GRADED),
            "report": report.to_json()}


def _looks_like_repo_id(target: str) -> bool:
    import re

    return re.fullmatch(r"[\w.-]+/[\w.-]+(@[^/\s]+)?", target) is not None
