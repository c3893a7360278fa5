"""Reliability guarantees: read-only, contained, change-detecting, and the
readers' only outcomes on arbitrary bytes are a model or our own error."""

import hashlib
import json
import os
import struct
from pathlib import Path

import pytest
import spec_values as S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ref_ids import fnv1a

import grit_scan
from grit_scan.artifact import Artifact, ArtifactDraft
from grit_scan.cli import main
from grit_scan.codec.errors import GritError
from grit_scan.codec.grade import parse_grade
from grit_scan.issues import IssueCode
from grit_scan.parsers import configs, fileio, gguf_reader, index, readers
from grit_scan.parsers.manifest import read_manifest

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            st = os.stat(p, follow_symlinks=False)
            with open(p, "rb") as fh:
                out[p] = (hashlib.sha256(fh.read()).hexdigest(), st.st_mtime_ns)
    return out


def test_scan_never_writes_to_what_it_reads(capsys):
    before = snapshot(FIX)
    for deep in (False, True):
        grit_scan.scan([str(FIX)], deep=deep, jobs=2)
    assert main(["scan", "--deep", "--json", str(FIX)]) in (1, 2, 3)
    capsys.readouterr()
    assert snapshot(FIX) == before


def test_never_opens_outside_the_roots(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.safetensors"
    secret.write_bytes((FIX / "broken/sharded-ok/model-00001-of-00002.safetensors").read_bytes())
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.safetensors").symlink_to(secret)
    (root / "dirlink").symlink_to(outside, target_is_directory=True)
    (root / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "a": "../outside/secret.safetensors", "b": str(secret)}}))
    opened = []
    real_open = os.open

    def spy(path, *a, **k):
        opened.append(os.path.realpath(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", spy)
    r = grit_scan.scan([str(root)])
    monkeypatch.setattr(os, "open", real_open)
    assert not any(p.startswith(str(outside.resolve())) for p in opened), opened
    kinds = {f.kind for f in r.findings}
    assert "path_escape" in kinds


def test_file_changing_during_read_is_a_finding(tmp_path, monkeypatch):
    src = FIX / "broken/sharded-ok/model-00001-of-00002.safetensors"
    p = tmp_path / "m.safetensors"
    p.write_bytes(src.read_bytes())
    real_read = fileio.SafeFile.read_at

    def read_then_grow(self, offset, n):
        data = real_read(self, offset, n)
        if offset == 8:  # after the header: another process appends to the file
            with open(self.path, "ab") as f:
                f.write(b"\x00" * 16)
        return data

    monkeypatch.setattr(fileio.SafeFile, "read_at", read_then_grow)
    r = grit_scan.scan([str(p)])
    msgs = [f.message for f in r.findings if f.kind == "file_unparseable"]
    assert any("changed while being read" in m for m in msgs), r.findings


def test_file_replaced_during_read(tmp_path, monkeypatch):
    src = FIX / "broken/sharded-ok/model-00001-of-00002.safetensors"
    p = tmp_path / "m.safetensors"
    p.write_bytes(src.read_bytes())
    real_read = fileio.SafeFile.read_at

    def read_then_swap(self, offset, n):
        data = real_read(self, offset, n)
        if offset == 8:
            os.replace(p, tmp_path / "old")
            (tmp_path / "m.safetensors").write_bytes(src.read_bytes())
        return data

    monkeypatch.setattr(fileio.SafeFile, "read_at", read_then_swap)
    r = grit_scan.scan([str(p)])
    assert any("replaced while being read" in f.message for f in r.findings)


def test_unreadable_file_is_reported(tmp_path, monkeypatch):
    p = tmp_path / "m.safetensors"
    p.write_bytes((FIX / "broken/sharded-ok/model-00001-of-00002.safetensors").read_bytes())
    real_open = os.open

    def deny(path, *a, **k):
        if str(path).endswith("m.safetensors"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    r = grit_scan.scan([str(tmp_path)])
    assert any(f.kind == "file_unparseable" and "Permission denied" in f.message
               for f in r.findings)
    assert r.exit_codes["graded"] == 4


def test_internal_error_is_contained(monkeypatch, capsys):
    from grit_scan.rules.kinds import inferred_descriptor

    real = inferred_descriptor.check_file

    def boom(art):
        if "wrong-group-size" in art.path:
            raise RuntimeError("rule exploded")
        return real(art)

    monkeypatch.setattr(inferred_descriptor, "check_file", boom)
    r = grit_scan.scan([str(FIX / "broken")])
    bad = [f for f in r.findings if f.detail.get("internal_error")]
    assert all(f.kind == "internal_error" for f in bad)
    assert len(bad) == 1 and "rule exploded" in bad[0].message
    assert bad[0].detail["rule"] == "inferred_descriptor"  # the finding names the rule
    assert "wrong-group-size" in bad[0].path
    assert {f.kind for f in r.findings} > {"file_unparseable", "role_drift"}  # others judged
    code = main(["--debug", "scan", str(FIX / "broken/wrong-group-size")])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" in err and "rule exploded" in err
    main(["scan", str(FIX / "broken/wrong-group-size")])
    assert "Traceback" not in capsys.readouterr().err


def test_convention_error_lands_on_the_first_readable_shard(tmp_path, monkeypatch):
    """A model whose first shard cannot be read and whose second can: an
    exception while its conventions are inferred is reported on the shard
    they were inferred from (the readable one), not on the unreadable one."""
    import json

    from grit_scan.conventions.kinds.modelopt_nvfp4 import ModeloptNvfp4
    from grit_scan.writers import Raw, write_safetensors

    def boom(cls, ctx, mod, parts):
        raise RuntimeError("convention exploded")

    monkeypatch.setattr(ModeloptNvfp4, "infer", classmethod(boom))
    m = "model.layers.0.mlp.down_proj"
    (tmp_path / "model-00001-of-00002.safetensors").write_bytes(b"\xff" * 64)
    write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {
        m + ".weight": Raw("U8", [4, 16], bytes(64)),
        m + ".weight_scale": Raw("F8_E4M3", [4, 2], bytes(8)),
        m + ".weight_scale_2": Raw("F32", [1], bytes(4))})
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
        "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
        **{m + s: "model-00002-of-00002.safetensors"
           for s in (".weight", ".weight_scale", ".weight_scale_2")}}}))
    r = grit_scan.scan([str(tmp_path)])
    bad = [f for f in r.findings if f.kind == "internal_error"]
    assert len(bad) == 1 and "convention exploded" in bad[0].message
    assert bad[0].path.endswith("model-00002-of-00002.safetensors")


# ------------------------------------------------------------ property fuzzing


def _st(b: bytes, tmp: Path) -> Artifact:
    p = tmp / "f.safetensors"
    p.write_bytes(b)
    return readers.read_safetensors(str(p), "f")


def _gg(b: bytes, tmp: Path) -> Artifact:
    p = tmp / "f.gguf"
    p.write_bytes(b)
    return readers.read_gguf(str(p), "f")


def _outcome(art: Artifact) -> None:
    assert isinstance(art, Artifact)
    if not art.parsed:
        assert art.issues and art.issues[0].message


SEED_ST = (FIX / "broken/sharded-ok/model-00001-of-00002.safetensors").read_bytes()
SEED_GG = (FIX / "conventions/gguf-q4km/model-Q4_K_M.gguf").read_bytes()[:4096]


def mutate(seed: bytes):
    return st.lists(st.tuples(st.integers(0, len(seed) - 1), st.integers(0, 255)),
                    max_size=8).map(lambda edits: _apply(seed, edits))


def _apply(seed: bytes, edits):
    b = bytearray(seed)
    for i, v in edits:
        b[i] = v
    return bytes(b)


# GRIT_FUZZ_EXAMPLES raises the budget for a long run (docs/reliability.md)
FUZZ = settings(max_examples=int(os.environ.get("GRIT_FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@FUZZ
@given(st.one_of(st.binary(max_size=512), mutate(SEED_ST),
                 mutate(SEED_ST).map(lambda b: b[: len(b) // 2])))
def test_fuzz_safetensors_reader(tmp_path, data):
    _outcome(_st(data, tmp_path))


@FUZZ
@given(st.one_of(st.binary(max_size=512).map(lambda b: b"GGUF" + b), mutate(SEED_GG)))
def test_fuzz_gguf_reader(tmp_path, data):
    _outcome(_gg(data, tmp_path))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=10), c, max_size=4),
    max_leaves=20)


@FUZZ
@given(json_values)
def test_fuzz_manifest_and_index_parsers(tmp_path, obj):
    art = ArtifactDraft("i", "i", "index")
    wm = index.parse_index(obj, art)
    assert wm is None or isinstance(wm, dict)
    p = tmp_path / "grit-manifest.json"
    p.write_text(json.dumps(obj))
    m, listed = read_manifest(str(p), "m", "g")
    assert isinstance(listed, list)
    for fn in (configs.from_config, configs.from_quantize_config, configs.from_hf_quant_config):
        d = fn(obj)
        assert d is None or isinstance(d, dict)
    if isinstance(obj, dict):
        wrapped = {"grit_manifest": 1, "artifacts": [obj]}
        p.write_text(json.dumps(wrapped))
        read_manifest(str(p), "m", "g")


@FUZZ
@given(st.text(max_size=200) | st.text(alphabet="grit1(),=:ekspz0123456789abcdefuml", max_size=80))
def test_fuzz_grade_parser(text):
    try:
        g = parse_grade(text)
    except GritError:
        return
    # §4.4: the canonical form is lowercase with no whitespace, parses back to
    # the same grade (a fixed point), and rules 1-2 make whitespace and case
    # irrelevant; §6.2: grade_id is FNV-1a-64 of it (tests/ref_ids.py)
    c = g.canonical
    assert c == c.lower() and not any(ch.isspace() for ch in c) and c.startswith("grit1(")
    assert parse_grade(c) == g and parse_grade(c).canonical == c
    assert parse_grade(" " + c.upper().replace(",", " ,\n")) == g
    assert g.grade_id == fnv1a(c.encode(), 64)


@FUZZ
@given(st.sampled_from(sorted(S.GRADES.items())), st.lists(st.tuples(
    st.integers(0, 200), st.sampled_from([" ", "\t", "\n", "\r\n"])), max_size=6),
    st.booleans())
def test_grade_spellings_parse_to_the_spec_grade(item, spaces, upper):
    """Any whitespace (§4.4 rule 1) and case (rule 2) in one of the spec's
    registered grade strings gives that grade: its canonical string and the
    §6.2 grade_id the spec lists."""
    name, (canonical, grade_id) = item
    text = canonical.upper() if upper else canonical
    for at, ws in sorted(spaces, reverse=True):
        text = text[:at] + ws + text[at:]
    g = parse_grade(text)
    assert (g.canonical, g.grade_id) == (canonical, grade_id)


def test_gguf_string_array_length_does_not_hang():
    import time

    blob = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"a" + struct.pack(
        "<IIQ", 9, 8, 1 << 62)
    t = time.process_time()
    with pytest.raises(gguf_reader.ParseError):
        class F:
            size = len(blob)

            def read_at(self, off, n):
                return blob[off : off + n]
        gguf_reader.read_header(F(), ArtifactDraft("x", "x", "gguf"))  # type: ignore[arg-type]
    # a loop over 2^62 strings would never end; this CPU-time bound only
    # catches that (CPU time, which a loaded machine does not stretch)
    assert time.process_time() - t < 30


def test_safetensors_issue_codes_are_stable():
    a = _st_bytes(b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,3]}}', b"abc")
    assert [i.code for i in a.issues] == [IssueCode.BAD_TENSOR, IssueCode.BAD_OFFSETS,
                                         IssueCode.REFERENCE]  # the library refuses it too


def _st_bytes(hdr: bytes, data: bytes) -> Artifact:
    import tempfile

    d = tempfile.mkdtemp()
    p = os.path.join(d, "x.safetensors")
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr + data)
    return readers.read_safetensors(p, "x")



def test_budgets_are_documented():
    """docs/reliability.md carries every budget with its value."""
    from grit_scan.parsers import budgets

    doc = (ROOT / "docs" / "reliability.md").read_text()
    block = doc.split("<!-- budgets:begin -->")[1].split("<!-- budgets:end -->")[0]
    assert block.strip() == budgets.table()
    for b in budgets.ALL:
        assert f"| `{b.name}` | {b.value:,} |" in block


def test_budget_message_names_budget():
    from grit_scan.parsers import budgets

    msg = budgets.TENSORS_PER_FILE.exceeded("the tensor count", 150_000)
    assert "tensors_per_file budget of 100,000" in msg and "150,000" in msg
    assert budgets.shape_problem([1] * 9, budgets.SAFETENSORS_RANK) is not None
    assert budgets.shape_problem([2] * 300, budgets.GRIT_SHAPE_RANK).startswith("shape rank")
    assert "extent" in budgets.shape_problem([(1 << 64) - 1, 64], budgets.GRIT_SHAPE_RANK)
    assert budgets.shape_problem([1 << 31, 1 << 31], budgets.GRIT_SHAPE_RANK) is None
    assert budgets.shape_problem([1 << 32, 1 << 32], budgets.GRIT_SHAPE_RANK) is not None


def test_a_reader_traceback_belongs_to_its_own_scan(monkeypatch):
    # A reader that raises is contained to its file; with debug=True the
    # traceback is the scan's own: a second and a third scan report one each,
    # not the tracebacks of the scans before them.
    from grit_scan.parsers import readers

    real = readers.read_path

    def boom(path, ctx, fmt):
        if "wrong-group-size" in path:
            raise RuntimeError("reader exploded")
        return real(path, ctx, fmt)

    monkeypatch.setattr(readers, "read_path", boom)
    counts = []
    for _ in range(3):
        r = grit_scan.scan([str(FIX / "broken" / "wrong-group-size")], debug=True)
        counts.append(sum("reader exploded" in t for t in r.tracebacks))
    assert counts == [1, 1, 1]


def test_an_exception_in_convention_inference_is_contained(monkeypatch, capsys):
    # A convention whose inference raises costs its own model, not the scan:
    # one internal_error finding on that model's file naming the model, the
    # other models of the scan still judged, the traceback under --debug.
    from grit_scan.conventions.kinds.gpt_oss_mxfp4 import GptOssMxfp4

    def boom(cls, ctx, mod, parts):
        raise RuntimeError("convention exploded")

    monkeypatch.setattr(GptOssMxfp4, "infer", classmethod(boom))
    gpt, fp8 = FIX / "conventions/gpt-oss-mxfp4", FIX / "conventions/fp8-block"
    r = grit_scan.scan([str(gpt), str(fp8)], debug=True)
    bad = [f for f in r.findings if f.detail.get("internal_error")]
    assert len(bad) == 1 and bad[0].kind == "internal_error"
    assert "convention exploded" in bad[0].message and "gpt-oss-mxfp4" in bad[0].path
    assert bad[0].detail["rule"] == "conventions"
    assert sum("convention exploded" in t for t in r.tracebacks) == 1
    # the other model is read as it is without the failure
    alone = grit_scan.scan([str(fp8)])
    assert ([f for f in r.findings if "fp8-block" in f.path]
            == [f for f in alone.findings if "fp8-block" in f.path])
    assert main(["scan", "--json", str(gpt)]) == 1
    assert "Traceback" not in capsys.readouterr().err
    assert main(["--debug", "scan", str(gpt)]) == 1
    assert "Traceback" in capsys.readouterr().err
