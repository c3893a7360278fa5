"""`grit scan` and `grit manifest` — the product's front door and CI gate."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from rich.console import Console

from ..api import scan
from ..cli import UsageError, app, debug_enabled
from ..codec.base32 import encode as b32
from ..codec.errors import GritError
from ..codec.fingerprint import gid
from ..report import sarif, text
from ..report.model import Report
from .common import emit_json


def _progress_console() -> Console | None:
    err = Console(stderr=True)
    return err if err.is_terminal else None


@app.command("scan")
def scan_cmd(
    paths: list[str] | None = typer.Argument(
        None, metavar="[PATH]...",
        help="safetensors or GGUF files, directories (a Hugging Face cache too), an index or "
             "a grit-manifest.json. Default: the current directory."),
    deep: bool = typer.Option(False, "--deep", help="Also read tensor bytes: digests, "
                              "sparse-metadata order, probes, decode cross-checks."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report."),
    as_sarif: bool = typer.Option(False, "--sarif", help="Print a SARIF 2.1.0 log."),
    policy: str = typer.Option("graded", "--exit-policy", metavar="graded|simple",
                               help="graded: 0/1/2/3/4 by severity; simple: 0/1/2."),
    select: str | None = typer.Option(None, "--select", metavar="KIND,...",
                                      help="Report only these finding kinds."),
    ignore: str | None = typer.Option(None, "--ignore", metavar="KIND,...",
                                      help="Do not report these finding kinds."),
    jobs: int | None = typer.Option(None, "--jobs", metavar="N",
                                    help="Files read in parallel by --deep (default: CPUs)."),
) -> None:
    """Audit checkpoints against GRIT v1 and report what is wrong."""
    if as_json and as_sarif:
        raise UsageError("--json and --sarif are exclusive")
    if policy not in ("graded", "simple"):
        raise UsageError("--exit-policy takes graded or simple")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs takes a positive number")
    progress = read_progress = None
    pc = _progress_console()
    if pc is not None:  # a progress bar on stderr, only on a terminal
        from rich.progress import Progress

        bar = Progress(console=pc, transient=True)
        bar.start()
        tasks: dict[str, object] = {}

        def _update(label: str, done: int, total: int) -> None:
            if label == "reading" and total < 50:
                return  # a handful of files needs no bar
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done, total=total)  # type: ignore[arg-type]

        def read_progress(done: int, total: int) -> None:
            _update("reading", done, total)

        if deep:
            def progress(done: int, total: int) -> None:
                _update("--deep", done, total)
    try:
        report = scan(paths or ["."], deep=deep, select=select, ignore=ignore, jobs=jobs,
                      debug=debug_enabled(), progress=progress, read_progress=read_progress)
    except GritError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if pc is not None:
            bar.stop()
    if debug_enabled():
        from ..parsers.tree import READ_TRACEBACKS
        from ..rules import DEBUG_TRACEBACKS

        for tb in READ_TRACEBACKS + DEBUG_TRACEBACKS:
            sys.stderr.write(tb)
    emit(report, as_json, as_sarif, policy)
    raise typer.Exit(report.exit_code(policy))


def emit(report: Report, as_json: bool, as_sarif: bool, policy: str) -> None:
    if as_json:
        emit_json(report.to_json())
    elif as_sarif:
        emit_json(sarif.to_sarif(report))
    else:
        probe = Console()
        width = None if probe.is_terminal else 160  # CI logs: do not wrap at 80 columns
        text.render(report, Console(highlight=False, width=width), policy)


@app.command("manifest")
def manifest_cmd(
    paths: list[str] | None = typer.Argument(None, metavar="[PATH]...",
                                             help="What to record (default: .)."),
    deep: bool = typer.Option(False, "--deep", help="Also record plane digests."),
    out: Path = typer.Option(Path("grit-manifest.json"), "--out", metavar="FILE",
                             help="Where to write the manifest (default ./grit-manifest.json)."),
) -> None:
    """Write grit-manifest.json: descriptors, gids (and digests with --deep).

    Commit it; `grit scan grit-manifest.json` then reports every tensor whose
    gid or digest changed and every file that is gone."""
    report = scan(paths or ["."], deep=False, jobs=1)
    base = os.path.realpath(os.path.dirname(os.path.abspath(out)))
    entries = []
    from ..parsers.fileio import SafeFile
    from ..rules.deep import digest_of

    for a in report.artifacts:
        if not a.parsed or a.format not in ("safetensors", "gguf"):
            continue
        real = os.path.realpath(a.abs_path)
        rel = os.path.relpath(real, base)
        if rel.startswith(".."):
            raise UsageError(f"{a.path} is outside {base}: write the manifest in a directory "
                             "that contains every scanned file")
        tensors = {}
        f = SafeFile(real) if deep else None
        try:
            for q in a.quantized:
                if q.desc is None or q.grade is None:
                    continue
                ent = {"desc": q.desc.hex(), "shape": list(q.shape),
                       "gid": b32(gid(q.grade, q.desc, q.shape))}
                if f is not None:
                    ent["digest"] = digest_of(f, q).hex()
                tensors[q.name] = ent
        finally:
            if f is not None:
                f.close()
        entries.append({"path": rel.replace(os.sep, "/"), "tensors": tensors})
    doc = {"grit_manifest": 1, "artifacts": entries}
    try:
        out.write_text(json.dumps(doc, indent=1) + "\n")
    except OSError as exc:
        raise UsageError(f"--out: {exc.strerror or exc}: {out}") from None
    n = sum(len(e["tensors"]) for e in entries)
    typer.echo(f"wrote {out}: {len(entries)} file(s), {n} described tensor(s)"
               + (" with digests" if deep else ""))
