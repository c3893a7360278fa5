"""`grit scan` and `grit manifest` — the product's front door and CI gate."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import TaskID

from ..api import (
    SLOW_PATH,
    ManifestRefused,
    NoSuchPath,
    ReadError,
    RemoteOptions,
    load_settings,
    model_roots,
    nothing_found,
    scan,
    write_manifest,
)
from ..codec.errors import GritError
from ..report.formats import OutputFormat, RenderOptions, render
from ..report.policy import NOTHING_PARSED, ExitPolicy
from ..report.report import Report
from ._app import UsageError, app, debug_enabled, error_line


def _progress_console() -> Console | None:
    err = Console(stderr=True)
    return err if err.is_terminal and not os.environ.get("NO_COLOR") else None


class _Progress:
    """One transient progress line on stderr, only on a terminal and only once
    a scan has run for PROGRESS_AFTER seconds: files done, total and files/s."""

    PROGRESS_AFTER = 1.0

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.start = time.monotonic()
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                            TimeElapsedColumn(), console=console, transient=True)
        self.tasks: dict[str, TaskID] = {}
        self.shown = False

    def update(self, label: str, done: int, total: int) -> None:
        elapsed = time.monotonic() - self.start
        if not self.shown:
            if elapsed < self.PROGRESS_AFTER:
                return
            self.bar.start()
            self.shown = True
        rate = f"{done / elapsed:.0f} files/s" if elapsed > 0 else ""
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(label, total=total, rate=rate)
        self.bar.update(self.tasks[label], completed=done, total=total, rate=rate)

    def stop(self) -> None:
        if self.shown:
            self.bar.stop()


def _complete_policy(incomplete: str) -> list[str]:
    return [p.value for p in ExitPolicy if p.value.startswith(incomplete)]


def complete_kinds(incomplete: str) -> list[str]:
    """Completion of ``KIND,...``: names and codes after the last comma."""
    from ..api import rules

    head, _, last = incomplete.rpartition(",")
    prefix = f"{head}," if head else ""
    words = [w for r in rules() for w in (r.name, r.code)]
    return [prefix + w for w in words if w.lower().startswith(last.lower())]


@app.command("scan")
def scan_cmd(
    paths: list[str] | None = typer.Argument(
        None, metavar="PATH",
        help="safetensors or GGUF files, directories (a Hugging Face cache too), an index or "
             "a grit-manifest.json. Default: the current directory."),
    deep: bool = typer.Option(False, "--deep", help="Also read tensor bytes: digests, "
                              "sparse-metadata order, probes, decode cross-checks."),
    output_format: OutputFormat = typer.Option(
        OutputFormat.CONCISE, "--output-format", metavar="FORMAT",
        help="concise (one line per finding, the default), full (explanations and explain "
             "diffs), json, sarif, github (workflow annotations) or grouped."),
    as_json: bool = typer.Option(False, "--json", help="Same as --output-format json."),
    as_sarif: bool = typer.Option(False, "--sarif", help="Same as --output-format sarif."),
    statistics: bool = typer.Option(False, "--statistics",
                                    help="Print counts per finding kind instead of the "
                                         "findings (text formats and json)."),
    output_file: Path | None = typer.Option(None, "--output-file", metavar="FILE",
                                            help="Write the report to FILE (no colour), "
                                                 "not to stdout."),
    policy: str | None = typer.Option(None, "--exit-policy", metavar="graded|simple",
                                      autocompletion=_complete_policy,
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
                                      autocompletion=complete_kinds,
                                      help="Report only these finding kinds: names, codes "
                                           "(GRIT101) or code prefixes (GRIT1)."),
    ignore: str | None = typer.Option(None, "--ignore", metavar="KIND,...",
                                      autocompletion=complete_kinds,
                                      help="Do not report these finding kinds (names, codes "
                                           "or prefixes)."),
    timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS",
                                  help="Per-request timeout for URL operands."),
    retries: int = typer.Option(3, "--retries", metavar="N",
                                help="Retries on HTTP 429/5xx, timeouts and resets (URLs)."),
    max_remote_bytes: int = typer.Option(1 << 30, "--max-remote-bytes", metavar="BYTES",
                                         help="The most bytes this scan fetches from URLs "
                                              "(0: no limit)."),
    jobs: int | None = typer.Option(None, "--jobs", metavar="N",
                                    help="Files read in parallel by --deep (default: CPUs)."),
) -> None:
    """Audit checkpoints against GRIT v1 and report what is wrong."""
    fmt = output_format_of(output_format, as_json, as_sarif)
    if statistics and fmt in (OutputFormat.SARIF, OutputFormat.GITHUB):
        raise UsageError("--statistics works with concise, full, grouped or json")
    if policy is not None and policy not in {p.value for p in ExitPolicy}:
        raise UsageError("--exit-policy takes graded or simple")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs takes a positive number")
    if timeout <= 0 or retries < 0 or max_remote_bytes < 0:
        raise UsageError("--timeout takes a positive number, --retries and "
                         "--max-remote-bytes a non-negative one")
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
    bar = _Progress(pc) if pc is not None else None
    if bar is not None:
        def read_progress(done: int, total: int) -> None:
            bar.update("reading", done, total)

        if deep:
            def progress(done: int, total: int) -> None:
                bar.update("--deep", done, total)
    try:
        report = scan(targets, deep=deep, select=select, ignore=ignore, jobs=jobs,
                      debug=debug_enabled(), progress=progress, read_progress=read_progress,
                      fail_on=fail_on, settings=settings,
                      remote=RemoteOptions(timeout=timeout, retries=retries,
                                           budget=max_remote_bytes))
    except NoSuchPath as exc:
        error_line(str(exc))
        raise typer.Exit(NOTHING_PARSED[exit_policy]) from None
    except GritError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if bar is not None:
            bar.stop()
    for tb in report.tracebacks:
        sys.stderr.write(tb)
    if SLOW_PATH in report.messages:  # the slow path is never silent, whatever the format
        sys.stderr.write(f"grit: warning: {SLOW_PATH}\n")
    empty = nothing_found(report)
    if empty is not None:
        error_line(empty)
        if fmt not in (OutputFormat.JSON, OutputFormat.SARIF):
            raise typer.Exit(report.exit_code(exit_policy))
    emit(report, fmt, RenderOptions(policy=exit_policy, statistics=statistics), output_file)
    raise typer.Exit(report.exit_code(exit_policy))


def output_format_of(fmt: OutputFormat, as_json: bool, as_sarif: bool) -> OutputFormat:
    """``--json`` and ``--sarif`` are aliases of ``--output-format``."""
    aliases = [f for f, on in ((OutputFormat.JSON, as_json), (OutputFormat.SARIF, as_sarif))
               if on]
    if len(aliases) > 1:
        raise UsageError("--json and --sarif are exclusive")
    if aliases and fmt not in (OutputFormat.CONCISE, aliases[0]):
        raise UsageError(f"--{aliases[0].value} and --output-format {fmt.value} are exclusive")
    return aliases[0] if aliases else fmt


def emit(report: Report, fmt: OutputFormat, options: RenderOptions,
         output_file: Path | None = None) -> None:
    """Render ``report`` on stdout, or into ``output_file`` (never coloured)."""
    if output_file is None:
        render(report, fmt, sys.stdout, options)
        return
    try:
        with open(output_file, "w", encoding="utf-8") as fh:
            render(report, fmt, fh, replace(options, color=False))
    except OSError as exc:
        raise UsageError(f"--output-file: cannot write {output_file}: "
                         f"{exc.strerror or exc}") from None


@app.command("manifest")
def manifest_cmd(
    paths: list[str] | None = typer.Argument(None, metavar="PATH",
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
