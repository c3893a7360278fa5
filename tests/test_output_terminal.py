"""Terminal behaviour of issue 14 not covered by test_output.py: `grit
explain` at 80 and 200 columns, completion of FILE::TENSOR operands, and the
progress line of `grit scan` on a (pseudo-)terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grit_scan.codec.descriptor import FIELDS

ROOT = Path(__file__).resolve().parent.parent

# From the registered grades table of /work/shared/spec/RECONSTRUCTION.md
# (and Appendix A's GRADE_MXFP4 / GRADE_NVF4), not from the code under test.
MXFP4 = "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)"
NVF4 = "grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,esr=ratiomaxabs)"
MXFP4_ID, NVF4_ID = "0x2370ee9ee454a183", "0x00ff6f4c2870831e"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "GRIT_PROGRESS_AFTER")}
    env.update(extra)
    return env


def _explain(columns: int | None, *argv: str) -> tuple[int, list[str]]:
    """`grit explain` in a subprocess (in-process runs would register only
    the codec commands first and change the order help lists them in)."""
    env = _env(COLUMNS=str(columns)) if columns else _env()
    p = subprocess.run([sys.executable, "-m", "grit_scan", "explain", *argv],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    return p.returncode, p.stdout.splitlines()


def _rows(lines: list[str]) -> dict[str, list[str]]:
    """field -> the lines that belong to it (its own line and any A:/B:
    lines below it), by the field names the layout must show."""
    out: dict[str, list[str]] = {}
    current = None
    for line in lines:
        m = re.match(r"^[ *] (\S+)", line)
        if m and m.group(1) in (*FIELDS, "grade", "decode_projection") and \
                m.group(1) not in out:  # (the verdict's list comes later)
            current = m.group(1)
            out[current] = [line]
        elif current is not None and re.match(r"^ {4}(A|B|A, B): ", line):
            out[current].append(line)
        else:
            current = None
    return out


@pytest.mark.parametrize("columns", [80, 200])
def test_explain_fits_the_terminal_without_splitting_values(columns):
    code, lines = _explain(columns, "mxfp4", "nvf4")
    assert code == 1
    text = "\n".join(lines)
    # Every line fits, except one that holds a single value wider than the
    # terminal (a decode projection at 80 columns): that value keeps its line.
    for line in lines:
        if len(line) > columns:
            m = re.fullmatch(r" {4}[AB]: (\S+)", line)
            assert m and len(m.group(1)) > columns - 7, line
    rows = _rows(lines)
    assert set(FIELDS) <= set(rows), set(FIELDS) - set(rows)
    # values known independently (the spec's registered grades table)
    k0 = " ".join(rows["k0"])
    assert re.search(r"\b32\b.*\b16\b", k0, re.S), rows["k0"]
    for value in (MXFP4, NVF4, MXFP4_ID, NVF4_ID):
        assert any(value in line for line in lines), value  # never split
    assert [rows[f][0][0] for f in ("k0", "scale0", "elem")] == ["*", "*", " "], rows
    assert "k0 (32 vs 16)" in text
    if columns == 80:  # vertical: A and B on lines of their own
        assert any(line == f"    A: {MXFP4}" for line in lines)
        assert any(line == f"    B: {NVF4}" for line in lines)
    else:  # wide: one row per field, both values on it
        assert len(rows["grade"]) == 1 and MXFP4 in rows["grade"][0] and NVF4 in rows["grade"][0]


def test_explain_piped_is_never_wrapped():
    code, lines = _explain(None, "mxfp4", "nvf4")
    assert code == 1
    grade = next(line for line in lines if line.startswith("* grade "))
    assert MXFP4 in grade and NVF4 in grade


# --- completion of FILE::TENSOR ---------------------------------------------

SAMPLE = "fixtures/sample/llama-mxfp4/model.safetensors"


def _header(path: Path) -> tuple[int, dict]:
    import json
    import struct

    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return n, json.loads(raw[8:8 + n])


def _logical_names() -> list[str]:
    """The quantised tensors of the sample, read from its header here: each
    is stored as NAME.grit_data plus its scale planes (the GRIT convention)."""
    _, h = _header(ROOT / SAMPLE)
    return [k.removesuffix(".grit_data") for k in h if k.endswith(".grit_data")]


def _complete(words: str, cword: int) -> subprocess.CompletedProcess[str]:
    env = _env(_GRIT_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword))
    return subprocess.run([sys.executable, "-m", "grit_scan"], capture_output=True,
                          text=True, cwd=ROOT, env=env)


@pytest.mark.parametrize("words,cword", [
    ("grit explain {spec}", 2),
    ("grit explain mxfp4 {spec}", 3),
    ("grit decode {spec}", 2),
])
def test_tensor_names_complete_after_file(words, cword):
    names = _logical_names()
    assert len(names) == 4  # the sample: q_proj and k_proj of two layers
    for prefix in ("model.layers.1", "model.layers.0.self_attn.k", "", "nope"):
        p = _complete(words.format(spec=f"{SAMPLE}::{prefix}"), cword)
        assert p.returncode == 0, p.stderr
        want = sorted(f"{SAMPLE}::{n}" for n in names if n.startswith(prefix))
        assert sorted(p.stdout.split()) == want, prefix
    assert len(_complete(words.format(spec=f"{SAMPLE}::model.layers.1"), cword)
               .stdout.split()) == 2


def test_tensor_completion_offers_nothing_for_unreadable_files(tmp_path):
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\xff" * 64)
    huge = tmp_path / "huge.safetensors"  # a header length far beyond the file
    huge.write_bytes((1 << 62).to_bytes(8, "little") + b"{}")
    for spec in (f"{junk}::", f"{huge}::m", f"{tmp_path}/missing.safetensors::m",
                 f"{tmp_path}::m", "README.md::m", "::m", "mxfp4"):
        p = _complete(f"grit explain {spec}", 2)
        assert p.returncode == 0 and p.stdout.strip() == "" and "Traceback" not in p.stderr, spec


def test_tensor_completion_reads_the_header_only(tmp_path, monkeypatch):
    """A copy of the sample cut after its header still completes, and
    completing reads no more than the header (fileio counts bytes read)."""
    from grit_scan.commands.common import complete_tensor
    from grit_scan.parsers import fileio

    n, _ = _header(ROOT / SAMPLE)
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes((ROOT / SAMPLE).read_bytes()[:8 + n])
    used = [0]
    read_at = fileio.SafeFile.read_at

    def counted(self, offset, size):  # every byte any SafeFile returns
        got = read_at(self, offset, size)
        used[0] += len(got)
        return got

    monkeypatch.setattr(fileio.SafeFile, "read_at", counted)
    got = complete_tensor(f"{cut}::model.")
    assert sorted(got) == sorted(f"{cut}::{x}" for x in _logical_names())
    assert 8 + n <= used[0] <= 8 + n + 16


# --- the progress line ------------------------------------------------------

ANSI = re.compile(r"\x1b[\[\]()#;?]*[0-9;]*[A-Za-z]")


def _scan_on_pty(extra: dict[str, str]) -> tuple[str, str, int]:
    """`grit scan fixtures/sample` with stderr on a pseudo-terminal and
    stdout on a pipe: (stdout, what the terminal received, exit code)."""
    import pty

    master, slave = pty.openpty()
    env = _env(GRIT_PROGRESS_AFTER="0", COLUMNS="200", **extra)
    p = subprocess.Popen([sys.executable, "-m", "grit_scan", "scan", "fixtures/sample"],
                         stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                         cwd=ROOT, env=env)
    os.close(slave)
    out, _ = p.communicate()
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO once the child's side is closed (Linux)
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return out.decode(), b"".join(chunks).decode(errors="replace"), p.returncode


def _piped_scan() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grit_scan", "scan", "fixtures/sample"],
                          capture_output=True, text=True, cwd=ROOT,
                          env=_env(GRIT_PROGRESS_AFTER="0", COLUMNS="200"))


def test_progress_line_on_a_terminal_keeps_under_no_color_without_escapes():
    piped = _piped_scan()
    assert "files/s" not in piped.stderr  # not a terminal: no progress line
    out, err, code = _scan_on_pty({"NO_COLOR": "1"})
    assert code == piped.returncode
    assert out == piped.stdout  # stdout is unaffected by the progress line
    assert re.search(r"reading \d+/\d+ files +\d+ files/s +\d+\.\d MB/s", err), err
    assert not ANSI.search(err), repr(err)
    assert "\r" in err  # redrawn in place and erased, not printed as lines


def test_progress_line_is_coloured_without_no_color():
    out, err, _ = _scan_on_pty({})
    assert "files/s" in err and "MB/s" in err
    assert ANSI.search(err)
    assert out == _piped_scan().stdout


def test_progress_rate_counts_the_bytes_read(monkeypatch):
    """The MB/s figure is the bytes read since the line was set up over the
    time elapsed (held exactly here: on a loaded machine the 33 kB sample
    can take long enough for a real run to round its rate to 0.0)."""
    import io

    from grit_scan import scan
    from grit_scan.commands import scan_run
    from grit_scan.parsers import fileio
    meter = fileio.ReadMeter()
    scan([str(ROOT / "fixtures" / "sample")], meter=meter)
    # a scan counts the header bytes it reads: at least each file's 8-byte
    # length and its header
    sizes = [_header(p)[0] + 8 for p in (ROOT / "fixtures" / "sample").rglob("*.safetensors")]
    assert sizes and meter.total >= sum(sizes)

    clock = [102.0, 100.0]  # popped from the end: set-up, then the update
    monkeypatch.setattr(scan_run.time, "monotonic", lambda: clock.pop() if clock else 102.0)
    monkeypatch.setenv("GRIT_PROGRESS_AFTER", "0")
    monkeypatch.setenv("COLUMNS", "200")
    out = io.StringIO()
    line = scan_run._Progress(out, color=False)
    line.meter.add(3_000_000)  # what the scan read since the line was set up
    line.update("reading", 3, 4)
    # 3 files and 3,000,000 bytes in 2 s
    assert out.getvalue() == "\rreading 3/4 files  2 files/s  1.5 MB/s  0:02"
