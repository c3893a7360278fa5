"""`grit show`: the inventory of what grit reads from checkpoints.

Per model (a shard index with its shards, a GGUF split set, a single
file): the configs read and, per file, its format, producer, metadata keys,
stored tensors (name, dtype, shape, offset, bytes) and quantised tensors
(convention, grade, descriptor source).  It runs the scan's readers
(``api.inventory``), no rule; report/inventory.py renders it.
"""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

import json
import sys

import typer

from ..api import NoSuchPath, RemoteOptions, inventory
from ..artifact import Format
from ..codec.errors import GritError
from ..report.inventory import render_text, to_json
from ..report.policy import NOTHING_PARSED, ExitPolicy
from ._app import UsageError, app, error_line

EXIT_SOME_UNREAD = 1


@app.command("show")
def show_cmd(
    paths: list[str] = typer.Argument(
        ..., metavar="FILE|DIR|URL",
        help="safetensors or GGUF files, directories (a model, a Hugging Face cache), an "
             "index, or a URL (hf://ORG/REPO, https://, s3://)."),
    as_json: bool = typer.Option(False, "--json",
                                 help="One JSON document (docs/show-report.schema.json)."),
    timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS",
                                  help="Per-request timeout for URL operands."),
    retries: int = typer.Option(3, "--retries", metavar="N",
                                help="Retries on HTTP 429/5xx, timeouts and resets (URLs)."),
    max_remote_bytes: int = typer.Option(1 << 30, "--max-remote-bytes", metavar="BYTES",
                                         help="The most bytes fetched from URLs (0: no "
                                              "limit)."),
) -> None:
    """The inventory: tensors, dtypes, shapes, conventions, grades, configs.

    Exit 0 when every file was read, 1 when some file could not be (it is
    listed with the reason), 4 when nothing was found."""
    if timeout <= 0 or retries < 0 or max_remote_bytes < 0:
        raise UsageError("--timeout takes a positive number, --retries and "
                         "--max-remote-bytes a non-negative one")
    try:
        data = inventory(paths, RemoteOptions(timeout=timeout, retries=retries,
                                              budget=max_remote_bytes))
    except NoSuchPath as exc:
        error_line(str(exc))
        raise typer.Exit(NOTHING_PARSED[ExitPolicy.GRADED]) from None
    except GritError as exc:
        raise UsageError(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(to_json(data), indent=2) + "\n")
    else:
        render_text(data, sys.stdout)
    shown = [a for a in data.artifacts if a.format is not Format.CONFIG or not a.parsed]
    if not any(a.parsed and a.format is not Format.CONFIG for a in shown):
        error_line("no checkpoint read under " + ", ".join(data.roots))
        raise typer.Exit(NOTHING_PARSED[ExitPolicy.GRADED])
    raise typer.Exit(EXIT_SOME_UNREAD if any(not a.parsed for a in shown) else 0)
