"""The conformance suite (§15) and the decode/encode/vectors commands."""

import json
from pathlib import Path

import numpy as np
import pytest
import spec_values as S

from grit_scan.cli import main
from grit_scan.codec import vectors as V

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "fixtures" / "conformance" / "vectors.json"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_committed_suite_verifies(capsys):
    code, out, _ = run(capsys, "vectors", "verify", SUITE)
    assert code == 0 and "hold" in out


def test_committed_suite_is_what_the_generator_writes():
    assert SUITE.read_text() == V.dumps(V.generate())


def test_suite_pins_what_reconstruction_11_lists():
    suite = json.loads(SUITE.read_text())
    names = {v["name"] for v in suite["vectors"]}
    for grade in ("mxfp4", "mxfp4_rne", "nvf4", "nvf4_rtz", "q4ks", "i8s24"):
        for case in ("random", "all_zero_group", "poisoned_nan", "poisoned_inf",
                     "signed_zeros", "saturating", "subnormal_scales"):
            assert f"{grade}/{case}" in names
    assert {"mxfp4/tie_to_even", "i8s24/quad_pattern", "nvf4/wide_dynamic_range",
            "fp/frame_note_split"} <= names
    neg = {v["name"] for v in suite["negative"]}
    assert {"degenerate/all_zeros_descriptor", "degenerate/all_ones_descriptor"} <= neg
    for step in (1, 2, 3, 4, 5):
        assert any(n.startswith(f"check/step{step}/") for n in neg)
    assert len(suite["supersedes"]) == 2


def test_verify_catches_a_tampered_suite(tmp_path, capsys):
    suite = json.loads(SUITE.read_text())
    suite["vectors"][3]["decoded_f32_bits"][0] = "12345678"
    suite["negative"][0]["expected_error"] = "SizeMismatch"
    suite["vectors"][0]["gid"] = "00" * 16
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(suite))
    code, out, _ = run(capsys, "vectors", "verify", p)
    assert code == 1
    assert out.count("FAIL") >= 3 and "Appendix B.1" in out


def test_decode_command(tmp_path, capsys):
    f = tmp_path / "p.bin"
    f.write_bytes(S.B1_PAYLOAD)
    code, out, _ = run(capsys, "decode", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--payload-file", f, "--json")
    js = json.loads(out)
    assert code == 0 and js["gid"] == S.B1_GID and js["gid_base32"] == S.B1_GID_BASE32
    want = np.array(S.B1_DECODE, np.float32).view(np.uint32)
    assert js["decoded_f32_bits"] == [f"{w:08x}" for w in want]
    o = tmp_path / "out.f32"
    code, _, _ = run(capsys, "decode", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                     "--payload-file", f, "--out", o)
    assert code == 0 and np.fromfile(o, "<f4").tolist() == S.B1_DECODE


def test_decode_check_failure_exits_1(tmp_path, capsys):
    f = tmp_path / "p.bin"
    f.write_bytes(S.B1_PAYLOAD[:-1])
    code, _, err = run(capsys, "decode", "--desc", S.A4_HEX["GRADE_MXFP4"], "--shape", "32",
                       "--payload-file", f)
    assert code == 1 and "SizeMismatch" in err and "scale0 plane" in err


def test_encode_command(tmp_path, capsys):
    i = tmp_path / "in.f32"
    np.array(S.B1_INPUTS, "<f4").tofile(i)
    o = tmp_path / "out.bin"
    code, out, _ = run(capsys, "encode", "--grade", "mxfp4", "--shape", "32", "--input", i,
                       "--out", o, "--json")
    js = json.loads(out)
    assert code == 0
    assert o.read_bytes() == S.B1_PAYLOAD
    assert js == {"desc": S.A4_HEX["GRADE_MXFP4"], "plane_bytes": S.B1_PLANE_BYTES,
                  "gid": S.B1_GID, "gid_base32": S.B1_GID_BASE32, "digest": S.B1_DIGEST}


@pytest.mark.parametrize("argv", [
    ["encode", "--grade", "mxfp4", "--shape", "33", "--input", "IN", "--out", "OUT"],
    ["encode", "--grade", "nope", "--shape", "32", "--input", "IN", "--out", "OUT"],
    ["encode", "--grade", "mxfp4", "--shape", "64", "--input", "IN", "--out", "OUT"],
    ["decode", "--desc", "zz", "--shape", "32", "--payload-file", "IN"],
    ["decode", "--shape", "32"],
    ["vectors", "verify", "/nonexistent/vectors.json"],
])
def test_usage_errors(tmp_path, capsys, argv):
    i = tmp_path / "in.f32"
    np.zeros(32, "<f4").tofile(i)
    argv = [str(i) if a == "IN" else str(tmp_path / "o") if a == "OUT" else a for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 64 and "Traceback" not in err
