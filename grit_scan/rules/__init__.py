"""Rules: the artifact model in, findings out.

Each rule is a small function.  Per-file rules run inside a containment
boundary: an unexpected exception while judging one file becomes a
file_unparseable finding for that file (with the exception's message) and
the other files are still judged (``--debug`` keeps the traceback).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..model import Artifact, ScanInput, nbytes_map
from . import declared, deep, descriptors, drift, gid, structure
from .finding import Finding

DEBUG_TRACEBACKS: list[str] = []


def _contained(art: Artifact, fn: Callable[[], list[Finding]], debug: bool) -> list[Finding]:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - containment is the point
        if debug:
            DEBUG_TRACEBACKS.append(traceback.format_exc())
        return [Finding("file_unparseable", art.path,
                        f"internal error while checking this file: {type(exc).__name__}: {exc} "
                        "(other files are unaffected; --debug shows the traceback)",
                        detail={"internal_error": True, "exception": type(exc).__name__})]


def _per_file(art: Artifact) -> list[Finding]:
    out = structure.file_findings(art)
    nbytes = nbytes_map(art.tensors)
    for q in art.quantized:
        out.extend(descriptors.check_tensor(art, q, nbytes))
    out.extend(descriptors.provenance(art))
    return out


def run(scan: ScanInput, deep_scan: bool = False, jobs: int = 1, debug: bool = False,
        progress: Callable[[int, int], None] | None = None) -> list[Finding]:
    findings: list[Finding] = list(structure.skipped_findings(scan))
    arts = scan.artifacts
    for art in arts:
        findings.extend(_contained(art, lambda a=art: _per_file(a), debug))
    role = drift.role_drift(arts)
    findings.extend(role)
    drifting = {f.path for f in role}
    for art in arts:
        findings.extend(_contained(art, lambda a=art: drift.artifact_drift(a, drifting), debug))
    findings.extend(gid.gid_disagreement(arts))
    findings.extend(gid.manifest_changes(arts))
    findings.extend(declared.declared_mismatch(scan))
    findings.extend(declared.zp_convention(scan))
    findings.extend(declared.partial_quantization(scan))
    if deep_scan:
        findings.extend(_deep(arts, jobs, debug, progress))
    return findings


def _deep(arts: Sequence[Artifact], jobs: int, debug: bool,
          progress: Callable[[int, int], None] | None) -> list[Finding]:
    todo = [a for a in arts if a.parsed and a.format in ("safetensors", "gguf")]
    out: list[Finding] = []
    done = 0

    def one(a: Artifact) -> list[Finding]:
        return _contained(a, lambda: deep.deep_artifact(a), debug)

    if jobs <= 1:
        results = map(one, todo)
    else:
        pool = ThreadPoolExecutor(max_workers=jobs)
        results = pool.map(one, todo)
    for res in results:
        out.extend(res)
        done += 1
        if progress:
            progress(done, len(todo))
    if jobs > 1:
        pool.shutdown()
    return out
