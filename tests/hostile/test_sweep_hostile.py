"""`grit sweep` against state and targets an attacker controls: --out as a
symlink, a non-sweep file, a device, a FIFO or a directory; --from likewise;
a target with a NUL byte or terminal escapes; a worker killed mid-sweep; a
huge --out resumed; two sweeps on one --out.  Each failed on the commit
before the sweep's hardening (a truncated or emptied file, exit 70, a hang,
1.5 GB, everything scanned twice, raw escapes on stderr).  Commands run in
their own process under the hostile suite's address-space limit (limits.py)
with a timeout.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from limits import AS_LIMIT, CHILD_ENV, DEFINED_EXITS, run_limited

ROOT = Path(__file__).resolve().parent.parent.parent
FIX = ROOT / "fixtures"
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = [str(p) for g in ("broken", "conventions") for p in sorted((FIX / g).iterdir())
          if p.is_dir()]


def sweep(*args: str, timeout: float = 120, stdin: Any = None) -> subprocess.CompletedProcess:
    p = run_limited(["-m", "grit_scan", "sweep", *args], timeout=timeout, cwd=HERE,
                    **({"stdin": stdin} if stdin is not None else {}))
    assert p.returncode in DEFINED_EXITS, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    return p


def summary(p: subprocess.CompletedProcess) -> dict[str, Any]:
    return json.loads(p.stdout.strip().splitlines()[-1])["summary"]


def records(out: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    by = {r["target"]: r for r in rows}
    assert len(by) == len(rows), "a target recorded twice"
    return by


# --- --out

def test_out_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"line one\nno trailing newline")
    link = tmp_path / "s.jsonl"
    link.symlink_to(victim)
    p = sweep("--out", str(link), MODELS[0])
    assert p.returncode == 64 and "symbolic link" in p.stderr
    assert victim.read_bytes() == b"line one\nno trailing newline"


@pytest.mark.parametrize("content", [
    b"no trailing newline",
    b"{\"a\": 1}",
    b"{\"a\": 1}\n{\"b\": 2}\n",
    b"# notes\nimportant\n",
])
def test_a_non_sweep_out_file_is_refused_never_truncated(tmp_path: Path, content: bytes) -> None:
    out = tmp_path / "notes.txt"
    out.write_bytes(content)
    p = sweep("--out", str(out), MODELS[0])
    assert p.returncode == 64 and "not a grit sweep file" in p.stderr, p.stderr
    assert out.read_bytes() == content


def test_a_torn_last_record_is_cut_and_rescanned(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    first = sweep("--out", str(out), MODELS[0])
    whole = out.read_bytes()
    out.write_bytes(whole + b'{"exit_code": 0, "report": {"roo')  # a sweep killed mid-write
    p = sweep("--out", str(out), MODELS[0], MODELS[1])
    assert summary(p)["already_done"] == 1 and summary(p)["scanned"] == 1
    assert out.read_bytes().startswith(whole) and set(records(out)) == {MODELS[0], MODELS[1]}
    assert first.returncode in DEFINED_EXITS


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory"])
@pytest.mark.parametrize("option", ["--out", "--from"])
def test_out_and_from_must_be_regular_files(tmp_path: Path, kind: str, option: str) -> None:
    if kind == "dev-zero":
        path = "/dev/zero"
    elif kind == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    else:
        path = str(tmp_path)
    args = ([option, path, MODELS[0]] if option == "--out"
            else [option, path, "--out", str(tmp_path / "s.jsonl")])
    p = sweep(*args, timeout=60)
    assert p.returncode == 64, p.stderr
    assert "regular file" in p.stderr or "directory" in p.stderr, p.stderr


def test_from_stdin_that_never_ends_a_line_is_refused(tmp_path: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        p = sweep("--from", "-", "--out", str(tmp_path / "s.jsonl"), stdin=zero, timeout=60)
    assert p.returncode == 64 and "longer than" in p.stderr


def test_a_second_sweep_on_the_same_out_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    out.write_bytes(b"")
    with open(out, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # a first sweep, still running
        p = sweep("--out", str(out), MODELS[0])
    assert p.returncode == 64 and "another grit sweep" in p.stderr
    assert out.read_bytes() == b""


def _maxrss_kib(args: list[str]) -> tuple[int, int, str]:
    """(exit code, peak RSS in KiB, stderr) of a child under AS_LIMIT."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))

    p = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=CHILD_ENV, preexec_fn=limit, cwd=HERE)
    assert p.stderr is not None
    err = p.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss, err


def test_resume_streams_a_large_out_file(tmp_path: Path) -> None:
    """A 300 MB state (one 200 MB record, 50,000 small ones) is resumed in
    bounded memory: the records are read a line at a time and only the
    targets asked for are kept.  The old reader held the file three times
    (more than the 500 MB address-space limit)."""
    out = tmp_path / "s.jsonl"
    big = "x" * (200 << 20)
    with open(out, "w", encoding="ascii") as fh:
        fh.write(json.dumps({"exit_code": 0, "report": {"pad": big}, "target": MODELS[0]},
                            sort_keys=True) + "\n")
        del big
        small = json.dumps({"exit_code": 3, "report": {"pad": "y" * 2000},
                            "target": "t"}, sort_keys=True)
        for i in range(50_000):
            fh.write(small.replace('"t"}', f'"other-{i}"}}') + "\n")
    size = out.stat().st_size
    assert size > 300e6
    rc, rss_kib, err = _maxrss_kib(["-m", "grit_scan", "sweep", "--out", str(out),
                                    MODELS[0], MODELS[1]])
    assert rc in DEFINED_EXITS and "Traceback" not in err, err[-2000:]
    assert rss_kib < 250 * 1024, f"{rss_kib / 1024:.0f} MB peak for a {size >> 20} MB state"
    with open(out, "rb") as fh:  # the new record was appended after the old ones
        fh.seek(-20_000, os.SEEK_END)
        tail = fh.read().splitlines()[-1]
    assert json.loads(tail)["target"] == MODELS[1]
    assert out.stat().st_size > size


# --- targets

@pytest.mark.parametrize("mode", [["--jobs", "1"], ["--jobs", "2"], ["--dask"]])
def test_a_nul_target_is_one_error_line_and_the_sweep_goes_on(
        tmp_path: Path, mode: list[str]) -> None:
    lst = tmp_path / "targets.txt"
    lst.write_bytes(b"\n".join([MODELS[0].encode(), b"bad\x00target", MODELS[1].encode(),
                                MODELS[2].encode()]) + b"\n")
    out = tmp_path / "s.jsonl"
    cluster = None
    if mode == ["--dask"]:
        distributed = pytest.importorskip("distributed")
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                           protocol="tcp", dashboard_address=None)
        mode = ["--dask", cluster.scheduler_address]
    try:
        p = sweep("--from", str(lst), "--out", str(out), *mode, timeout=240)
    finally:
        if cluster is not None:
            cluster.close()
    by = records(out)
    assert set(by) == {MODELS[0], "bad\x00target", MODELS[1], MODELS[2]}
    assert "NUL byte" in by["bad\x00target"]["error"]
    assert all("report" in by[m] for m in MODELS[:3])
    assert summary(p)["outcomes"]["unreadable"] == 1 and p.returncode == 4


def test_targets_on_stderr_are_escaped(tmp_path: Path) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"
    lst = tmp_path / "targets.txt"
    lst.write_text(evil + "\n" + MODELS[0] + "\n", encoding="utf-8")
    p = sweep("--from", str(lst), "--out", str(tmp_path / "s.jsonl"))
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in p.stderr and raw not in p.stdout
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eevil" in p.stderr
    assert evil in records(tmp_path / "s.jsonl")  # the record keeps the exact target


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def test_a_killed_worker_does_not_end_the_sweep(tmp_path: Path) -> None:
    """SIGKILL one --jobs 2 worker mid-sweep: the targets it took down are
    retried, every target is recorded once, the summary is printed."""
    targets = [t + "/." * k for k in range(3) for t in MODELS]  # distinct spellings
    lst = tmp_path / "targets.txt"
    lst.write_text("\n".join(targets) + "\n")
    out = tmp_path / "s.jsonl"
    p = subprocess.Popen([sys.executable, "-m", "grit_scan", "sweep", "--from", str(lst),
                          "--out", str(out), "--jobs", "2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=HERE, env=CHILD_ENV)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and p.poll() is None:
        done = out.read_text().count("\n") if out.exists() else 0
        kids = _children(p.pid)
        if done >= 3 and kids:
            killed = kids[-1]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.005)
    stdout, stderr = p.communicate(timeout=300)
    assert killed is not None, "the sweep ended before a worker could be killed"
    assert p.returncode in DEFINED_EXITS, (p.returncode, stderr[-2000:])
    assert "Traceback" not in stderr and "BrokenProcessPool" not in stderr
    by = records(out)
    assert set(by) == set(targets)
    assert json.loads(stdout.strip().splitlines()[-1])["summary"]["targets"] == len(targets)
    assert not any("died" in r.get("error", "") for r in by.values())  # retried, scanned


def _killer(target: str, resolved: tuple[str, str] | None = None) -> dict[str, Any]:
    """A scan that kills its own worker on one target (a model that makes
    the OOM killer fire, say) and scans the others."""
    if target.endswith("kill-me"):
        os.kill(os.getpid(), signal.SIGKILL)
    return {"target": target, "exit_code": 0, "report": {}}


def test_a_target_that_kills_its_worker_twice_is_recorded_as_failed() -> None:
    from grit_scan.commands.sweep_cmd import WORKER_DIED, _local

    todo: list[tuple[str, tuple[str, str] | None]] = [
        (f"t{i}", None) for i in range(12)]
    todo.insert(5, ("kill-me", ("path", "/kill-me")))
    got = list(_local(_killer, todo, 2))
    by = {r["target"]: r for r in got}
    assert len(got) == len(todo) == len(by)
    assert by["kill-me"] == {"target": "kill-me", "error": WORKER_DIED, "read_as": "path",
                             "resolved": "/kill-me"}
    assert all(by[f"t{i}"] == {"target": f"t{i}", "exit_code": 0, "report": {}}
               for i in range(12))


def test_a_full_disk_stops_the_sweep_with_its_summary(tmp_path: Path) -> None:
    """A write to --out that fails (here the file-size limit: EFBIG) is one
    line, the summary and exit 64, not an internal error."""
    import resource

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "s.jsonl"
    p = subprocess.run([sys.executable, "-m", "grit_scan", "sweep", "--out", str(out),
                        *MODELS[:3]], capture_output=True, text=True, timeout=120, cwd=HERE,
                       env=CHILD_ENV, preexec_fn=small_files)
    assert p.returncode == 64, p.stderr[-2000:]
    assert "cannot write" in p.stderr and "Traceback" not in p.stderr
    assert summary(p)["scanned"] < 3 and out.stat().st_size <= 4096


def test_a_target_submitted_to_a_pool_that_just_broke_is_retried_not_fatal() -> None:
    """The pool can break between a result and the next submission (a
    worker killed meanwhile): the target refused is a suspect, retried
    alone, not an exit 70."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from grit_scan.commands.sweep_cmd import _alone, _feed

    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(BrokenProcessPool):
            pool.submit(_killer, "kill-me").result()
        pending: dict = {}
        suspects: list = []
        assert _feed(pool, pending, suspects, iter([("t1", None), ("t2", None)]), _killer,
                     4) is False
    assert pending == {} and suspects == [("t1", None)]
    assert _alone(_killer, suspects[0]) == {"target": "t1", "exit_code": 0, "report": {}}
