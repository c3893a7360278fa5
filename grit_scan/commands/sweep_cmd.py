"""`grit sweep`: scan thousands of models, one JSON line each, resumably.

Each target (a path, a URL or a Hub repo id, resolved here by
``api.resolve_target``) is scanned as one model by ``api.scan_model``, in
local worker processes (``--jobs``) or as Dask tasks on an existing cluster
(``--dask SCHEDULER_ADDRESS``); a worker scans one model at a time and
keeps up to ``RemoteOptions.in_flight`` of a remote model's requests in
flight (parsers/remote/collect.py).  Each result is one line of ``--out``
(``{"target", "read_as", "resolved", "outcome", "exit_code", "report"}``
with the ``scan --json`` object, or ``{"target", "outcome", "error"}``),
written and synced as it completes; a rerun skips the targets already in
``--out`` (sweep_state.py keeps that file safe).  One bad target, or a dead
worker, is one error line: the sweep goes on and always ends with its
summary and the exit code of the scan policy over all targets.
"""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any

import typer

from ..api import RemoteOptions, scan_model
from ..report.escape import esc
from ._app import EXIT_USAGE, UsageError, app, error_line
from .sweep_state import OutFile, open_out, read_targets, recorded

# A target and how the client resolved it (api.resolve_target), or the
# error that stopped it resolving.
Job = tuple[str, tuple[str, str] | None]
Result = dict[str, Any]
ScanFn = Callable[..., Result]

# The outcome of a target, by its graded exit code (docs/exit-codes.md); an
# error record, or 4 (nothing parsed), is "unreadable".
OUTCOMES = ("clean", "structural", "disagreement", "warning", "unreadable")
EXIT_UNREADABLE = 4


def outcome(code: int | None) -> str:
    return OUTCOMES[code] if code is not None and 0 <= code < len(OUTCOMES) else "unreadable"


def sweep_exit(outcomes: Counter[str]) -> int:
    """The scan policy over all targets: 4 when any target could not be
    read, else the most severe target's code (1 structural, 2
    disagreement, 3 warnings), 0 when every target is clean."""
    if outcomes.get("unreadable"):
        return EXIT_UNREADABLE
    return min((OUTCOMES.index(o) for o in ("structural", "disagreement", "warning")
                if outcomes.get(o)), default=0)


def _failed(job: Job, why: str) -> Result:
    out: Result = {"target": job[0], "error": why}
    if job[1] is not None:
        out["read_as"], out["resolved"] = job[1]
    return out


def _run(fn: ScanFn, job: Job) -> Result:
    return fn(job[0], resolved=job[1])


def _local(fn: ScanFn, todo: list[Job], jobs: int) -> Iterator[Result]:
    if jobs <= 1:
        for job in todo:
            yield _run(fn, job)
        return
    yield from _pool(fn, todo, jobs)


WORKER_DIED = ("the worker process scanning it died twice (killed, or out of memory); "
               "recorded as failed")


def _pool(fn: ScanFn, todo: list[Job], jobs: int) -> Iterator[Result]:
    """``--jobs N``: a bounded window of targets on N worker processes.
    When a worker dies (SIGKILL, the OOM killer) the pool breaks and every
    target in flight fails with it (and so does any submitted after): each
    is retried once, alone in a fresh process, so the one that kills its
    worker is recorded as failed and the others are scanned; then the sweep
    goes on in a new pool.  Every round takes at least one target, so it
    ends."""
    it = iter(todo)
    exhausted = False
    while not exhausted:
        suspects: list[Job] = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            pending: dict[Future[Result], Job] = {}
            exhausted = _feed(pool, pending, suspects, it, fn, 4 * jobs)
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    job = pending.pop(f)
                    try:
                        yield f.result()
                    except BrokenProcessPool:
                        suspects.append(job)
                    except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
                        yield _failed(job, f"internal error: {type(exc).__name__}: {exc}")
                # nothing more once the pool is broken: the rest of the window fails
                exhausted = _feed(pool, pending, suspects, it, fn, 4 * jobs) or exhausted
        for job in suspects:
            yield _alone(fn, job)


def _feed(pool: ProcessPoolExecutor, pending: "dict[Future[Result], Job]",
          suspects: list[Job], it: Iterator[Job], fn: ScanFn, window: int) -> bool:
    """Submit targets until ``window`` are pending (none once the pool is
    broken); a target the broken pool refuses is a suspect.  True when the
    targets are exhausted."""
    while not suspects and len(pending) < window:
        job = next(it, None)
        if job is None:
            return True
        try:
            pending[pool.submit(_run, fn, job)] = job
        except BrokenProcessPool:
            suspects.append(job)
    return False


def _alone(fn: ScanFn, job: Job) -> Result:
    """A second attempt at one target, in a process of its own."""
    with ProcessPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(_run, fn, job).result()
        except BrokenProcessPool:
            return _failed(job, WORKER_DIED)
        except Exception as exc:  # noqa: BLE001 - as in _pool
            return _failed(job, f"internal error: {type(exc).__name__}: {exc}")


BATCH = 16


def _batch(fn: ScanFn, batch: list[Job]) -> list[Result]:
    return [_run(fn, job) for job in batch]


def _dask(fn: ScanFn, todo: list[Job], address: str) -> Iterator[Result]:
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
        size = max(1, min(BATCH, len(todo) // (8 * workers)))
        batches = [todo[i:i + size] for i in range(0, len(todo), size)]
        futures = client.map(partial(_batch, fn), batches, pure=False)
        batch_of = {fut.key: b for fut, b in zip(futures, batches)}
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            try:
                got: list[Result] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker (KilledWorker), a lost task
                got = [_failed(job, f"the Dask task failed: {type(exc).__name__}: {exc}")
                       for job in batch_of[fut.key]]
            yield from got
            fut.release()
    finally:
        client.close()  # type: ignore[no-untyped-call]


def _resolve(target: str) -> Job:
    """Where the target is read from, decided here (a Dask worker gets an
    absolute path); None when it cannot be (its scan reports why)."""
    from ..api import resolve_target
    from ..codec.errors import GritError

    try:
        return target, resolve_target(target)
    except (GritError, ValueError, OSError):
        return target, None


def _progress_line(n: int, total: int, res: Result) -> str:
    how = f" ({res['read_as']})" if "read_as" in res else ""
    if "error" in res:
        what = "error: " + str(res["error"])
    else:
        what = f"exit {res['exit_code']} {res['outcome']}"
    return esc(f"[{n}/{total}] {res['target']}{how}: {what}") + "\n"


@app.command("sweep")
def sweep_cmd(
    targets: list[str] | None = typer.Argument(
        None, metavar="[TARGET]...",
        help="Paths, URLs (hf://ORG/REPO, https://, s3://) or Hub repo ids (ORG/REPO)."),
    from_file: str | None = typer.Option(None, "--from", metavar="FILE",
                                         help="Read targets from FILE, one per line (- for "
                                              "stdin)."),
    out: str = typer.Option(..., "--out", metavar="FILE",
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
    sink = open_out(out)
    try:
        raise typer.Exit(_sweep(sink, wanted, jobs, dask, deep,
                                RemoteOptions(timeout=timeout, retries=retries,
                                              budget=max_remote_bytes)))
    finally:
        sink.close()


def _sweep(sink: OutFile, wanted: list[str], jobs: int, dask: str | None, deep: bool,
           opts: RemoteOptions) -> int:
    done = recorded(sink, set(wanted))
    todo = [_resolve(t) for t in wanted if t not in done]
    fn = partial(scan_model, deep=deep, remote=opts)
    results = _dask(fn, todo, dask) if dask else _local(fn, todo, jobs if todo else 1)
    outcomes: Counter[str] = Counter(outcome(c) for c in done.values())
    codes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    n = 0
    stopped = None
    for res in results:
        code = None if "error" in res else res.get("exit_code")
        res["outcome"] = outcome(code if isinstance(code, int) else None)
        try:
            sink.append(res)
        except OSError as exc:  # a full disk: stop, say so, and still summarise
            stopped = f"--out {sink.path}: cannot write: {exc.strerror or exc}; stopped"
            break
        n += 1
        outcomes[res["outcome"]] += 1
        if "error" in res:
            codes["error"] += 1
        else:
            codes[str(res["exit_code"])] += 1
            for f in res["report"].get("findings", []):
                kinds[f.get("kind", "?")] += 1
        sys.stderr.write(_progress_line(n, len(todo), res))
        sys.stderr.flush()
    exit_code = sweep_exit(outcomes)
    if stopped is not None:
        error_line(stopped)
        exit_code = EXIT_USAGE
    summary = {"targets": len(wanted), "already_done": len(wanted) - len(todo), "scanned": n,
               "outcomes": {o: outcomes.get(o, 0) for o in OUTCOMES},
               "exit_code": exit_code,
               "exit_codes": dict(sorted(codes.items())), "findings": dict(sorted(kinds.items())),
               "out": sink.path}
    typer.echo(json.dumps({"summary": summary}, sort_keys=True))
    return exit_code
