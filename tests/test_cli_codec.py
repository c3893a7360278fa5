"""The command-line contract of `grit grade`, `grit check`, `grit explain`."""

import json
import subprocess
import sys

import pytest
import spec_values as S
from ref_ids import digest as ref_digest

from grit_scan import __version__
from grit_scan.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version(capsys):
    import importlib.util

    code, out, _ = run(capsys, "--version")
    first, helpers = out.strip().splitlines()
    assert code == 0 and first == f"grit {__version__}"
    built = importlib.util.find_spec("grit_scan.codec._fnv") is not None
    assert helpers.startswith("compiled helpers: in use" if built else
                              "compiled helpers: not built")


def test_python_dash_m():
    p = subprocess.run([sys.executable, "-m", "grit_scan", "grade", "mxfp4", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0
    assert json.loads(p.stdout)["grade_id"] == "0x2370ee9ee454a183"


def test_grade_json_keys(capsys):
    code, out, _ = run(capsys, "grade", "GRIT1( e=fp4 , k0=32, s0=ue8m0, esr=exp2floormaxabs )",
                       "--json")
    js = json.loads(out)
    assert code == 0
    assert js == {"canonical": S.GRADES["GRADE_MXFP4"][0], "grade_id": "0x2370ee9ee454a183",
                  "decode_projection": S.MXFP4_DECODE_PROJECTION, "name": "GRADE_MXFP4"}


def test_grade_text(capsys):
    code, out, _ = run(capsys, "grade", "q4ks")
    assert code == 0 and "0x1c600de02594fb55" in out and S.Q4KS_DECODE_PROJECTION in out


@pytest.mark.parametrize("bad,needle", [
    ("grit1(e=e2m1,k0=32,s0=e8m0)", "esr"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,swizzled=1)", "swizzled"),
    ("grit1(e=e4m3fnuz,k0=32,s0=e8m0,esr=ratiomaxabs)", "e4m3fnuz is not e4m3"),
])
def test_grade_invalid_exits_usage_naming_key(capsys, bad, needle):
    code, out, err = run(capsys, "grade", bad)
    assert code == 64 and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_check_ok_json(capsys):
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--plane-bytes", "16,1,0,0", "--json")
    js = json.loads(out)
    assert code == 0 and js["status"] == "OK"
    assert js["gid"] == S.B1_GID and js["gid_base32"] == S.B1_GID_BASE32
    assert set(js) >= {"status", "step", "message", "expected", "actual", "plane", "gid",
                       "gid_base32"}


def test_check_size_mismatch_exit_1(capsys):
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "8192",
                       "--plane-bytes", "4096,128,0,0", "--json")
    js = json.loads(out)
    assert code == 1 and js["status"] == "SizeMismatch" and js["step"] == 4
    assert js["plane"] == 1 and js["expected"] == 256 and js["actual"] == 128


def test_check_payload_digest(tmp_path, capsys):
    f = tmp_path / "b1.bin"
    f.write_bytes(S.B1_PAYLOAD)
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--payload-file", str(f), "--digest", S.B1_DIGEST, "--json")
    js = json.loads(out)
    assert code == 0 and js["digest"] == S.B1_DIGEST
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--payload-file", str(f), "--digest", "0" * 32, "--json")
    assert code == 1 and json.loads(out)["status"] == "DigestMismatch"
    f.write_bytes(S.B1_PAYLOAD[:-1])
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--payload-file", str(f), "--json")
    js = json.loads(out)
    assert code == 1 and js["status"] == "SizeMismatch" and js["plane"] == 1


@pytest.mark.parametrize("level", ["0", "1", "2", "3"])
@pytest.mark.parametrize("extra", [0, 1, 5000])
def test_check_payload_digest_at_every_level(tmp_path, capsys, level, extra):
    """The digest printed is §6.5's over the planes the §7.3 sizes cut
    (surplus bytes in the last plane that has a size), whether the payload
    is kept (level 3) or only streamed (0-2): the independent reference
    of tests/ref_ids.py, over a payload with ``extra`` bytes."""
    payload = S.B1_PAYLOAD + bytes(range(256)) * (extra // 256) + bytes(extra % 256)
    f = tmp_path / "p.bin"
    f.write_bytes(payload)
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--payload-file", str(f), "--level", level, "--json")
    # MXFP4 x 32: 16 data bytes, then one E8M0 scale byte, which takes the surplus
    assert len(S.B1_PAYLOAD) == 17
    want = ref_digest([payload[:16], payload[16:], b"", b""])
    assert json.loads(out)["digest"] == f"{want:032x}"
    assert code == (0 if extra == 0 or level == "0" else 1)


@pytest.mark.parametrize("meta,status", [(b"\xcc" * 4, "OK"), (b"\xc3\xcc\xcc\xcc",
                                                                "DigestMismatch")])
def test_check_payload_file_reads_the_sparsity_metadata_at_level_2(tmp_path, capsys, meta,
                                                                   status):
    """SPORDER_ASC_LSB (§7.4): level 2 reads the aux plane of the payload
    file, not only its digest (the planes of tests/test_check.py)."""
    f = tmp_path / "i8.bin"
    f.write_bytes(bytes([0x7F, 0x2A] * 8) + bytes([0x0C, 0x26]) + meta)
    code, out, _ = run(capsys, "check", "--desc", S.A4_HEX["GRADE_I8S24"], "--shape", "32",
                       "--payload-file", str(f), "--level", "2", "--json")
    js = json.loads(out)
    assert js["status"] == status and code == (status != "OK")
    assert status == "OK" or (js["step"], js["plane"]) == (5, 3)


def test_check_payload_file_must_be_a_regular_file(tmp_path, capsys):
    """/dev/zero never ends and a directory has no bytes: refused before a
    read (exit 64), never a MemoryError."""
    for path in ("/dev/zero", str(tmp_path)):
        code, _, err = run(capsys, "check", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape",
                           "32", "--payload-file", path)
        assert code == 64 and "not a regular file" in err and "Traceback" not in err


def test_check_statuses_text(capsys):
    code, out, _ = run(capsys, "check", "--desc", "ff" * 64, "--shape", "32",
                       "--plane-bytes", "16,1,0,0")
    assert code == 1 and out.startswith("GradeUnknown (step 1)")


@pytest.mark.parametrize("argv", [
    ["check", "--desc", "00", "--shape", "32", "--plane-bytes", "1,2,3,4"],
    ["check", "--desc", "ab" * 64, "--shape", "x", "--plane-bytes", "1,2,3,4"],
    ["check", "--desc", "ab" * 64, "--shape", "32", "--plane-bytes", "1,2,3"],
    ["check", "--desc", "ab" * 64, "--shape", "32"],
    ["check", "--desc", "ab" * 64, "--shape", "32", "--plane-bytes", "1,2,3,4", "--level", "2"],
    ["check", "--desc", "ab" * 64, "--shape", "32", "--payload-file", "/nonexistent/x"],
    ["check", "--shape", "32"],
    ["explain", "mxfp4"],
    ["explain", "mxfp4", "not-a-grade"],
    ["nonsense"],
])
def test_usage_errors_exit_64(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 64 and "Traceback" not in err


def test_explain_exit_codes(capsys):
    code, out, _ = run(capsys, "explain", S.A4_HEX["GRADE_MXFP4"], "mxfp4", "--shape", "32")
    assert code == 0 and f"identical gid {S.B1_GID_BASE32}" in out
    code, out, _ = run(capsys, "explain", "mxfp4", "mxfp4_rne", "--json")
    js = json.loads(out)
    assert code == 1 and js["decode_equivalent"] and not js["identical"]
    code, out, _ = run(capsys, "explain", "mxfp4", "nvf4")
    assert code == 1 and "Verdict: differ in" in out
