"""`grit scan` and `grit manifest` — the product's front door and CI gate."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from ..api import (
    ManifestRefused,
    NoSuchPath,
    ReadError,
    load_settings,
    model_roots,
    nothing_found,
    scan,
    write_manifest,
)
from ..codec.errors import GritError
from ..report import sarif, text
from ..report.policy import NOTHING_PARSED, ExitPolicy
from ..report.report import Report
from ._app import UsageError, app, debug_enabled, error_line
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
    policy: str | None = typer.Option(None, "--exit-policy", metavar="graded|simple",
                                      help="graded: 0/1/2/3/4 by severity; simple: 0/1/2 "
                                           "(default: the config file's, else graded)."),
    fail_on: str | None = typer.Option(None, "--fail-on", metavar="WHAT,...",
                                       help="Only these findings make the exit non-zero: "
                                            "severities (structural, disagreement, warning), "
                                            "kinds, codes or prefixes."),
    config: str | None = typer.Option(None, "--config", metavar="FILE",
                                      help="Read settings from this grit.toml or "
                                           "pyproject.toml instead of the nearest one."),
    isolated: bool = typer.Option(False, "--isolated", help="Read no config file."),
    changed: bool = typer.Option(False, "--changed",
                                 help="PATHs are changed files (pre-commit): scan the models "
                                      "they belong to; none passes."),
    select: str | None = typer.Option(None, "--select", metavar="KIND,...",
                                      help="Report only these finding kinds: names, codes "
                                           "(GRIT101) or code prefixes (GRIT1)."),
    ignore: str | None = typer.Option(None, "--ignore", metavar="KIND,...",
                                      help="Do not report these finding kinds (names, codes "
                                           "or prefixes)."),
    jobs: int | None = typer.Option(None, "--jobs", metavar="N",
                                    help="Files read in parallel by --deep (default: CPUs)."),
) -> None:
    """Audit checkpoints against GRIT v1 and report what is wrong."""
    if as_json and as_sarif:
        raise UsageError("--json and --sarif are exclusive")
    if policy is not None and policy not in {p.value for p in ExitPolicy}:
        raise UsageError("--exit-policy takes graded or simple")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs takes a positive number")
    if config is not None and isolated:
        raise UsageError("--config and --isolated are exclusive")
    targets = paths or ["."]
    try:
        settings = load_settings(targets, config, isolated)
    except GritError as exc:
        raise UsageError(str(exc)) from None
    exit_policy = ExitPolicy(policy or settings.exit_policy or ExitPolicy.GRADED)
    if changed:
        targets = model_roots(targets)
        if not targets:
            typer.echo("grit: no model among the changed files; nothing to scan")
            raise typer.Exit(0)
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
        report = scan(targets, deep=deep, select=select, ignore=ignore, jobs=jobs,
                      debug=debug_enabled(), progress=progress, read_progress=read_progress,
                      fail_on=fail_on, settings=settings)
    except NoSuchPath as exc:
        error_line(str(exc))
        raise typer.Exit(NOTHING_PARSED[exit_policy]) from None
    except GritError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if pc is not None:
            bar.stop()
    for tb in report.tracebacks:
        sys.stderr.write(tb)
    empty = nothing_found(report)
    if empty is not None:
        error_line(empty)
        if not (as_json or as_sarif):
            raise typer.Exit(report.exit_code(exit_policy))
    emit(report, as_json, as_sarif, exit_policy)
    raise typer.Exit(report.exit_code(exit_policy))


def emit(report: Report, as_json: bool, as_sarif: bool, policy: ExitPolicy) -> None:
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
    allow_findings: bool = typer.Option(False, "--allow-findings",
                                        help="Record files that have structural findings "
                                             "(refused otherwise)."),
) -> None:
    """Write grit-manifest.json: descriptors, gids (and digests with --deep).

    Commit it; `grit scan grit-manifest.json` then reports every tensor whose
    gid or digest changed and every file that is gone."""
    try:
        files, n = write_manifest(paths or ["."], out, deep=deep, allow_findings=allow_findings)
    except NoSuchPath as exc:
        error_line(str(exc))
        raise typer.Exit(NOTHING_PARSED[ExitPolicy.GRADED]) from None
    except ManifestRefused as exc:
        error_line(str(exc))
        raise typer.Exit(1 if exc.findings else NOTHING_PARSED[ExitPolicy.GRADED]) from None
    except GritError as exc:
        raise UsageError(f"--out: {exc}" if isinstance(exc, ReadError) else str(exc)) from None
    typer.echo(f"wrote {out}: {files} file(s), {n} described tensor(s)"
               + (" with digests" if deep else ""))
