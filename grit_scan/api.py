"""The library API: ``grit_scan.scan(paths, deep=False) -> Report`` and the
few operations the commands need (FILE::TENSOR operands, manifests, rules).

Pipelines get the same model the CLI renders: ``report.findings``,
``report.exit_codes`` and ``report.to_json()`` (docs/pipelines.md).  This is
the layer the commands import; it wires parsers -> rules -> report.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Sequence

from .artifact import Artifact, QTensor, ReadError
from .codec.errors import GritValueError
from .codec.fnv import compiled_backend
from .parsers import manifest as manifest_mod
from .parsers import readers, tree
from .parsers.planes import open_planes
from .parsers.remote import MissingExtra, RemoteOptions, is_url
from .report.report import Report, from_scan
from .rules.registry import Rule, Runner, enabled_kinds, lookup, parse_selection, rules

__all__ = ["MissingExtra", "ReadError", "RemoteOptions", "Rule", "is_url", "load_tensor",
           "lookup", "rules", "scan", "scan_model", "split_spec", "tensor_bytes",
           "write_manifest"]

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
    remote: RemoteOptions | None = None,
) -> Report:
    """Scan files, directories or manifests and return the report.

    ``select``/``ignore`` take kind names, codes (GRIT101) or code prefixes
    (GRIT1); ``progress``/``read_progress`` are called with (done, total).
    ``paths`` may hold URLs (``hf://ORG/REPO[@REV][/PATH]``, ``https://``,
    ``s3://``): ``remote`` sets their timeouts, retries and byte budget.
    Raises MissingExtra (a GritError) when a URL needs an extra that is not
    installed."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    roots = [os.fspath(p) for p in paths] or ["."]
    enabled = enabled_kinds(parse_selection(select, "--select"),
                            parse_selection(ignore, "--ignore"))
    n_jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    runner = Runner(enabled=enabled, debug=debug)
    # A scan allocates hundreds of thousands of small, acyclic objects (header
    # entries, tensor records): the cyclic collector would rescan them over
    # and over, tripling the cost of reading headers.  It is paused for the
    # scan and restored afterwards.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        data = tree.collect(roots, deep=deep, progress=read_progress, remote_options=remote)
        findings = runner.run(data, open_planes if deep else None, progress, n_jobs)
    finally:
        if was_enabled:
            gc.enable()
    messages = []
    if deep and not compiled_backend():
        messages.append("--deep is running the pure-Python FNV-1a digest (the compiled helper "
                        "was not built): digests will be slow")
    report = from_scan(data, findings, messages)
    if debug:
        report.tracebacks.extend(tree.READ_TRACEBACKS + runner.tracebacks)
    return report


def split_spec(spec: str) -> tuple[str, str] | None:
    """FILE::TENSOR -> (FILE, TENSOR), or None when ``spec`` is not one."""
    if "::" not in spec:
        return None
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
    fmt = tree.classify(os.path.basename(path), path)
    if fmt is None or not fmt.is_checkpoint_file:
        raise GritValueError(f"{path}: neither safetensors nor GGUF")
    art = readers.read_path(path, fmt=fmt)
    if not art.parsed:
        raise GritValueError(f"{path}: " + "; ".join(i.message for i in art.issues[:1]))
    for q in art.quantized:
        if q.name == name or q.role == name:
            return art, q
    for q in art.quantized:  # a plane or payload tensor of a logical tensor
        refs = (q.planes or []) + [q.payload]
        if any(r is not None and r.tensor == name for r in refs):
            return art, q
    known = ", ".join(q.name for q in art.quantized[:8])
    raise GritValueError(
        f"{path} has no quantised tensor {name!r}"
        + (f" (quantised tensors: {known}{', ...' if len(art.quantized) > 8 else ''})"
           if known else " (it has no quantised tensors)"))


def tensor_bytes(art: Artifact, q: QTensor) -> bytes:
    """The tensor's stored bytes: its payload, or its planes concatenated (a
    broadcast scalar repeated).  Raises ReadError."""
    with open_planes(art) as planes:
        if q.payload is not None:
            return planes.read(q.payload.offset, q.payload.length)
        return b"".join(planes.read(r.offset, r.length) * r.broadcast
                        for r in q.planes or [] if r is not None)


def write_manifest(paths: Sequence[PathLike], out: PathLike, deep: bool = False
                   ) -> tuple[int, int]:
    """Record every described tensor under ``paths`` in ``out`` (a
    grit-manifest.json); returns (files, tensors).  Raises GritValueError
    for a file outside the manifest's directory, ReadError when ``out``
    cannot be written."""
    report = scan(list(paths) or ["."], deep=False, jobs=1)
    base = os.path.realpath(os.path.dirname(os.path.abspath(out)))
    doc = manifest_mod.manifest_document(report.artifacts, base, deep)
    manifest_mod.write_manifest(doc, os.fspath(out))
    entries = doc["artifacts"]
    return len(entries), sum(len(e["tensors"]) for e in entries)




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
