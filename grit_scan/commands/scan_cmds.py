"""`grit scan` and `grit manifest` — the product's front door and CI gate."""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

from pathlib import Path

import typer

from ..api import ManifestRefused, NoSuchPath, ReadError, write_manifest
from ..codec.errors import GritError
from ..report.formats import OutputFormat
from ..report.policy import NOTHING_PARSED, ExitPolicy
from ._app import UsageError, app, debug_enabled, error_line
from .scan_run import run_scan


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
    raise typer.Exit(run_scan(
        paths=paths, deep=deep, output_format=output_format, as_json=as_json,
        as_sarif=as_sarif, statistics=statistics, output_file=output_file, policy=policy,
        fail_on=fail_on, config=config, isolated=isolated, changed=changed, select=select,
        ignore=ignore, timeout=timeout, retries=retries, max_remote_bytes=max_remote_bytes,
        jobs=jobs, debug=debug_enabled()))


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
