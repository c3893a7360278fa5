"""`grit sweep`: scan thousands of models, one JSON line each, resumably.

Each target (a path, a URL or a Hub repo id) is scanned as one model by
``api.scan_model``, in local worker processes (``--jobs``) or as Dask tasks
on an existing cluster (``--dask SCHEDULER_ADDRESS``).  Each result is one
line of ``--out`` (``{"target", "exit_code", "report"}`` with the
``scan --json`` object, or ``{"target", "error"}``), written and flushed as
it completes; a rerun skips the targets already in ``--out``.
"""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, issue 15); these are evaluated once, at import.

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from functools import partial
from pathlib import Path
from typing import Any

import typer

from ..api import RemoteOptions, scan_model
from ._app import UsageError, app


def read_targets(args: list[str], from_file: Path | None) -> list[str]:
    """Targets from the arguments and ``--from`` (one per line; blank lines
    and lines starting with # ignored), first occurrence kept."""
    lines = list(args)
    if from_file is not None:
        try:
            text = sys.stdin.read() if str(from_file) == "-" else from_file.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--from {from_file}: {exc}") from None
        lines += text.splitlines()
    seen: dict[str, None] = {}
    for line in lines:
        t = line.strip()
        if t and not t.startswith("#"):
            seen.setdefault(t, None)
    return list(seen)


def done_targets(out: Path) -> set[str]:
    """Targets already in ``out``; a torn last line (a killed run) is cut off."""
    if not out.exists():
        return set()
    raw = out.read_bytes()
    keep = raw[: raw.rfind(b"\n") + 1]
    done = set()
    for line in keep.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("target"), str):
            done.add(obj["target"])
    if len(keep) != len(raw):
        with open(out, "r+b") as fh:
            fh.truncate(len(keep))
    return done


def _local(fn: Callable[[str], dict[str, Any]], targets: list[str], jobs: int
           ) -> Iterator[dict[str, Any]]:
    if jobs <= 1:
        for t in targets:
            yield fn(t)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        pending: set[Future[dict[str, Any]]] = set()
        it = iter(targets)
        for t in it:  # a bounded window of submitted targets
            pending.add(pool.submit(fn, t))
            if len(pending) >= 4 * jobs:
                break
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                yield f.result()
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(fn, nxt))


BATCH = 16


def _batch(fn: Callable[[str], dict[str, Any]], targets: list[str]) -> list[dict[str, Any]]:
    return [fn(t) for t in targets]


def _dask(fn: Callable[[str], dict[str, Any]], targets: list[str], address: str
          ) -> Iterator[dict[str, Any]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'grit-scan[sweep]'"
                         ) from None
    try:
        client = Client(address, timeout="30s")  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--dask {address}: cannot connect to the scheduler: {exc}") from None
    try:
        # batches amortise the per-task scheduling cost over several small models
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        size = max(1, min(BATCH, len(targets) // (8 * workers)))
        batches = [targets[i:i + size] for i in range(0, len(targets), size)]
        futures = client.map(partial(_batch, fn), batches, pure=False)
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            yield from fut.result()
            fut.release()
    finally:
        client.close()  # type: ignore[no-untyped-call]


@app.command("sweep")
def sweep_cmd(
    targets: list[str] | None = typer.Argument(
        None, metavar="[TARGET]...",
        help="Paths, URLs (hf://ORG/REPO, https://, s3://) or Hub repo ids (ORG/REPO)."),
    from_file: Path | None = typer.Option(None, "--from", metavar="FILE",
                                          help="Read targets from FILE, one per line (- for "
                                               "stdin)."),
    out: Path = typer.Option(..., "--out", metavar="FILE",
                             help="The JSON-lines output; targets already in it are skipped."),
    jobs: int = typer.Option(1, "--jobs", metavar="N", help="Local worker processes."),
    dask: str | None = typer.Option(None, "--dask", metavar="SCHEDULER_ADDRESS",
                                    help="Run the scans as tasks on this Dask cluster."),
    deep: bool = typer.Option(False, "--deep", help="Also read tensor bytes (see scan)."),
    timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS",
                                  help="Per-request timeout for remote targets."),
    retries: int = typer.Option(3, "--retries", metavar="N",
                                help="Retries on HTTP 429/5xx, timeouts and resets."),
    max_remote_bytes: int = typer.Option(1 << 30, "--max-remote-bytes", metavar="BYTES",
                                         help="Byte budget per target (0: no limit)."),
) -> None:
    """Scan many models; one JSON line each in --out, plus a summary."""
    if jobs < 1:
        raise UsageError("--jobs takes a positive number")
    if timeout <= 0 or retries < 0 or max_remote_bytes < 0:
        raise UsageError("--timeout must be positive; --retries and --max-remote-bytes "
                         "non-negative")
    wanted = read_targets(targets or [], from_file)
    if not wanted:
        raise UsageError("no targets: give them as arguments or with --from FILE")
    done = done_targets(out)
    todo = [t for t in wanted if t not in done]
    opts = RemoteOptions(timeout=timeout, retries=retries, budget=max_remote_bytes)
    fn = partial(scan_model, deep=deep, remote=opts)
    results = _dask(fn, todo, dask) if dask else _local(fn, todo, jobs)
    codes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    n = 0
    with open(out, "a", encoding="utf-8") as fh:
        for res in results:
            fh.write(json.dumps(res, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            n += 1
            if "error" in res:
                codes["error"] += 1
            else:
                codes[str(res["exit_code"])] += 1
                for f in res["report"].get("findings", []):
                    kinds[f.get("kind", "?")] += 1
            sys.stderr.write(f"[{n}/{len(todo)}] {res['target']}: "
                             f"{'error' if 'error' in res else 'exit ' + str(res['exit_code'])}\n")
    summary = {"targets": len(wanted), "already_done": len(wanted) - len(todo), "scanned": n,
               "exit_codes": dict(sorted(codes.items())), "findings": dict(sorted(kinds.items())),
               "out": str(out)}
    typer.echo(json.dumps({"summary": summary}, sort_keys=True))
    raise typer.Exit(1 if codes.get("error") else 0)
