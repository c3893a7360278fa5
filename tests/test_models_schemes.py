"""Models compared like with like, every revision audited, findings at the
level of their cause, and one notion of a model for every command; over
fixtures/producers or temporary trees built from it."""

import json
import shutil
from pathlib import Path

import pytest

import grit_scan
from grit_scan.cli import main

ROOT = Path(__file__).resolve().parent.parent
PROD = ROOT / "fixtures" / "producers"
FIX = ROOT / "fixtures"


def kinds(report):
    return [f.kind.value for f in report.findings]


def ct_strategy(model):
    """What compressed-tensors itself says the model's weights are: (type,
    bits, strategy, group size, block shape), from its config.json."""
    cfg = json.loads((PROD / "ct" / model / "config.json").read_text())
    (w,) = [g["weights"] for g in cfg["quantization_config"]["config_groups"].values()]
    return (w["type"], w["num_bits"], w["strategy"], w.get("group_size"),
            tuple(w.get("block_structure") or ()))


# --- 1. a scheme key: different schemes are listed, never compared -------------

def test_ct_side_by_side_has_no_disagreement_between_schemes(capsys):
    # the pairs the issue met: per-channel vs 128x128 block FP8, W8A8 vs W4AFP8
    assert ct_strategy("fp8-dynamic-sharded")[2:] != ct_strategy("fp8-block")[2:]
    assert ct_strategy("w8a8-int8")[1:4] != ct_strategy("w4afp8")[1:4]
    r = grit_scan.scan([str(PROD / "ct")], jobs=1)
    assert "gid_disagreement" not in kinds(r)
    assert r.exit_codes == {"graded": 3, "simple": 1}  # warnings and one info
    assert main(["scan", "--fail-on", "structural,disagreement", str(PROD / "ct")]) == 0
    (q,) = [f for f in r.findings if f.kind.value == "quantizations"]
    listing = q.detail["listing"]
    named = {m: lab for lab, ms in listing.items() for m in ms}
    # the models are named by their folders, each once
    assert set(named) <= {p.name for p in (PROD / "ct").iterdir() if p.is_dir()}
    assert sum(map(len, listing.values())) == len(named) >= 7
    # models compressed-tensors labels alike but whose schemes differ are two entries
    assert named["fp8-block"] != named["fp8-dynamic-sharded"]
    assert named["w8a8-int8"] != named["w4afp8"]
    assert "per-channel" in named["fp8-dynamic-sharded"] and "2-D blocks" in named["fp8-block"]
    assert "per-channel" in named["w8a8-int8"] and "groups" in named["w4afp8"]
    # the concise line is short; the full format carries the whole listing
    capsys.readouterr()
    main(["scan", str(PROD / "ct")])
    out = capsys.readouterr().out
    assert all(len(line) < 300 for line in out.splitlines() if "GRIT401" in line)
    main(["scan", "--output-format", "full", str(PROD / "ct")])
    full = capsys.readouterr().out
    assert all(f"({m})" in full for m in named)


def test_two_fp8_schemes_in_one_folder_are_not_compared(tmp_path):
    for m in ("fp8-block", "fp8-dynamic-sharded"):
        shutil.copytree(PROD / "ct" / m, tmp_path / m)
    r = grit_scan.scan([str(tmp_path)], jobs=1)
    assert "gid_disagreement" not in kinds(r)
    assert r.exit_codes == {"graded": 3, "simple": 1}
    assert main(["scan", "--fail-on", "structural,disagreement", str(tmp_path)]) == 0


def test_whole_producers_tree_compares_no_two_schemes():
    r = grit_scan.scan([str(PROD)], jobs=1)
    # the one disagreement is the cache whose revisions changed group shape
    # (per-tensor to per-channel FP8): revisions of one repository, never two schemes
    (g,) = [f for f in r.findings if f.kind.value == "gid_disagreement"]
    assert g.detail["differences"] == ["group_shape"] and "grit/fp8-scheme" in g.message
    # the one structural finding of the tree is the split GGUF with a part missing
    structural = [(f.kind.value, Path(f.path).parent.name) for f in r.findings
                  if f.severity.value == "structural"]
    assert structural == [("missing_shard", "gguf-split-missing")]
    assert r.exit_codes == {"graded": 1, "simple": 1}
    assert main(["scan", "--fail-on", "structural,disagreement", str(PROD)]) == 1
    # the disagreements are the configs that lie about their bytes (GPTQ
    # declaring 3 bits over 4-bit bytes; the hand-edited NVFP4 group_size 32
    # and FineGrainedFP8 64x64 copies) and the legacy GPTQ file that leaves
    # its zero-point convention undeclared (§13), and the revision that
    # changed group shape; none compares two schemes
    disagreements = sorted((f.kind.value, Path(f.path).parent.name) for f in r.findings
                           if f.severity.value == "disagreement")
    assert disagreements == [("declared_mismatch", "ct-nvfp4-lying-g32"),
                             ("declared_mismatch", "fp8-finegrained-lying-64"),
                             ("declared_mismatch", "wrong-bits-config-3"),
                             ("gid_disagreement", "feaac60f0b993e01c1f3d9d3384e5984e9d218a3"),
                             ("zp_convention_undeclared", "v1-legacy-4bit-g128")]
    assert main(["scan", "--fail-on", "disagreement", str(PROD)]) == 2


def test_a_disagreement_names_its_operands_and_the_scheme_they_share():
    # one MXFP4 model exported by two tools, one of which wrote k0 = 64: the
    # same scheme (e2m1 elements, e8m0 scales, groups along one axis)
    r = grit_scan.scan([str(FIX / "broken" / "tool-disagreement")], jobs=1)
    (f,) = [f for f in r.findings if f.kind.value == "gid_disagreement"]
    assert f.detail["scheme"] == "e2m1/e8m0 groups"
    assert "both e2m1/e8m0 groups" in f.message
    assert f.detail["compared_as"] == ("models holding the same scheme (e2m1/e8m0 groups) "
                                       "of the same tensors")
    assert f.detail["paths"] and f.detail["agreeing_paths"]
    assert "k0" in f.detail["differences"]
    assert r.exit_codes == {"graded": 2, "simple": 1}
    assert main(["scan", "--fail-on", "disagreement",
                 str(FIX / "broken" / "tool-disagreement")]) == 2


def _revisions(tmp_path, pair):
    """Two revisions of one cache repository, one per model of ``pair``."""
    repo = tmp_path / "hub" / "models--org--m"
    for n, m in enumerate(pair):
        shutil.copytree(PROD / "ct" / m, repo / "snapshots" / (str(n) * 40))
    (repo / "refs").mkdir()
    (repo / "blobs").mkdir()
    return grit_scan.scan([str(tmp_path / "hub")], jobs=1)


@pytest.mark.parametrize("pair,shapes", [
    (("fp8-block", "fp8-dynamic-sharded"), ["2-D blocks", "per-channel"]),
    (("w8a8-int8", "w4afp8"), ["per-channel", "groups"])])
def test_revisions_that_change_group_shape_disagree(tmp_path, pair, shapes):
    # the same formats (compressed-tensors' own config: the same type, scale
    # dtype) under another group shape in the next revision: a disagreement
    # (spec-notes.md), where two folders side by side are never compared
    assert ct_strategy(pair[0])[2] != ct_strategy(pair[1])[2]
    r = _revisions(tmp_path, pair)
    (g,) = [f for f in r.findings if f.kind.value == "gid_disagreement"]
    assert sorted(g.detail["group_shapes"]) == sorted(shapes)
    assert g.detail["revisions"] and set(g.detail["revisions"]) == {"0" * 40, "1" * 40}
    assert g.detail["compared_as"].startswith("revisions of one repository (org/m)")
    assert g.detail["count"] == 14 and "changed group shape" in g.message
    # one quantisation in two group shapes: not listed as two quantisations
    assert "quantizations" not in kinds(r)
    assert r.exit_codes == {"graded": 2, "simple": 1}


def test_revisions_of_different_formats_are_listed_not_compared(tmp_path):
    # e4m3 per-channel FP8 and s8 per-channel W8A8: other formats, never compared
    assert ct_strategy("fp8-dynamic-sharded")[0] != ct_strategy("w8a8-int8")[0]
    r = _revisions(tmp_path, ("fp8-dynamic-sharded", "w8a8-int8"))
    assert "gid_disagreement" not in kinds(r)
    (q,) = [f for f in r.findings if f.kind.value == "quantizations"]
    assert len(q.detail["quantizations"]) == 2 and q.detail["repo"] == "org/m"
    assert r.exit_codes == {"graded": 3, "simple": 1}


# --- 2. every revision of a cache repository is audited against its own configs

def test_a_revision_sharing_blobs_is_judged_by_its_own_config(tmp_path):
    src = PROD / "hf-cache" / "hub" / "models--grit-fixtures--tiny-llama-gptq"
    repo = tmp_path / "hub" / src.name
    shutil.copytree(src, repo, symlinks=True)
    (first,) = (repo / "snapshots").iterdir()
    second = repo / "snapshots" / ("f" * 40)
    second.mkdir()
    for name in ("model.safetensors", "config.json"):
        # a link into ../../blobs, to the very blob the first revision links to
        (second / name).symlink_to(Path("../../blobs") / (first / name).readlink().name)
        assert (second / name).resolve() == (first / name).resolve()
    qc = json.loads((first / "quantize_config.json").read_text())
    assert qc["bits"] == 4
    (second / "quantize_config.json").write_text(json.dumps({**qc, "bits": 3}))
    r = grit_scan.scan([str(tmp_path / "hub")], jobs=1)
    mism = [f for f in r.findings if f.kind.value == "declared_mismatch"]
    assert [Path(f.path).parent.name for f in mism] == ["f" * 40]
    assert "bits = 3" in mism[0].message
    # both revisions were read, each as a model of its own
    read = {Path(a.path).parent.name for a in r.artifacts if a.format.is_checkpoint_file}
    assert read == {first.name, "f" * 40}
    assert r.exit_codes == {"graded": 2, "simple": 1}
    assert main(["scan", "--fail-on", "disagreement", str(tmp_path / "hub")]) == 2
    # the snapshot alone says the same
    alone = grit_scan.scan([str(second)], jobs=1)
    assert [f.kind.value for f in alone.findings if f.kind.value == "declared_mismatch"] == [
        "declared_mismatch"]


# --- 3. findings at the level of their cause ---------------------------------

def _stored(path):
    """(name, offset, nbytes) of each tensor from the safetensors header
    itself (8-byte length, JSON), not from grit."""
    raw = Path(path).read_bytes()
    n = int.from_bytes(raw[:8], "little")
    hdr = json.loads(raw[8:8 + n])
    return 8 + n, {k: v["data_offsets"] for k, v in hdr.items() if k != "__metadata__"}


@pytest.mark.parametrize("name", ["model.safetensors", "model.safetensors.part"])
def test_a_truncated_file_is_one_finding(tmp_path, name, capsys):
    src = PROD / "ct" / "w8a8-int8"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    full = (tmp_path / "model.safetensors").stat().st_size
    base, offs = _stored(tmp_path / "model.safetensors")
    keep = full // 2
    with open(tmp_path / "model.safetensors", "r+b") as fh:
        fh.truncate(keep)
    if name != "model.safetensors":  # a download cut short, still named .part
        (tmp_path / "model.safetensors").rename(tmp_path / name)
    cut = sorted(k for k, (_, end) in offs.items() if base + end > keep)
    assert len(cut) > 3
    r = grit_scan.scan([str(tmp_path)], jobs=1)
    (f,) = [f for f in r.findings if f.severity.value == "structural"]
    assert f.kind.value == "size_mismatch" and f.tensor is None
    assert (f.detail["expected"], f.detail["actual"]) == (full, keep)
    assert f"{keep:,} of {full:,} bytes present" in f.message
    # every stored tensor cut short is named, through the quantised tensor using it
    named = set(f.detail["tensors"])
    for t in cut:
        assert t in named or t.rsplit(".", 1)[0] + ".weight" in named, t
    assert f.detail["count"] == len(f.detail["tensors"])
    assert f"{f.detail['count']} tensor(s) run past its end" in f.message
    assert r.exit_codes == {"graded": 1, "simple": 1}
    capsys.readouterr()
    assert main(["scan", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len([x for x in lines if "GRIT101" in x]) == 1


def _header_dtypes(path):
    raw = Path(path).read_bytes()
    n = int.from_bytes(raw[:8], "little")
    return {k: v["dtype"] for k, v in json.loads(raw[8:8 + n]).items() if k != "__metadata__"}


def test_a_warning_every_shard_repeats_is_one_finding_on_the_model(capsys):
    rel = PROD / "ct" / "fp8-dynamic-sharded"
    shards = sorted(rel.glob("model-*.safetensors"))
    # FP8 weights per shard, from the headers themselves
    fp8 = {s.name: sum(1 for k, d in _header_dtypes(s).items()
                       if d == "F8_E4M3" and k.endswith(".weight")) for s in shards}
    with_fp8 = sorted(n for n, c in fp8.items() if c)
    assert len(with_fp8) >= 2
    r = grit_scan.scan([str(rel)], jobs=1)
    for kind in ("inferred_descriptor", "unregistered_grade"):
        (f,) = [f for f in r.findings if f.kind.value == kind]
        assert f.path == str(rel / "model.safetensors.index.json")
        assert [Path(p).name for p in f.detail["files"]] == with_fp8
        assert f.message.startswith(f"{sum(fp8.values())} tensor")
        assert f"in {len(with_fp8)} shards of the model" in f.message
    assert r.exit_codes == {"graded": 3, "simple": 1}
    capsys.readouterr()
    assert main(["scan", "--fail-on", "structural,disagreement", str(rel)]) == 0
    out = capsys.readouterr().out
    assert len([x for x in out.splitlines() if "GRIT305" in x]) == 1


def test_summary_counts_files_not_folders(capsys):
    rel = PROD / "gguf-quants"
    r = grit_scan.scan([str(rel)], jobs=1)
    doc = r.to_json()
    files = len(list(rel.iterdir()))  # every file of the folder is a checkpoint
    assert doc["summary"]["files"] == files
    (q,) = [f for f in r.findings if f.kind.value == "quantizations"]
    assert q.path == str(rel)  # the listing is on the folder, not a file
    with_findings = len({f.path for f in r.findings} - {str(rel)})
    assert f"in {with_findings} of {files} files and on 1 other path" in doc["summary"]["text"]
    assert r.exit_codes == {"graded": 3, "simple": 1}
    assert main(["scan", str(rel)]) == 3


def test_an_empty_input_says_so(tmp_path, capsys):
    r = grit_scan.scan([str(tmp_path)], jobs=1)
    assert r.findings == [] and r.exit_codes == {"graded": 4, "simple": 2}
    assert r.to_json()["summary"]["text"] == "No checkpoint found: no file was read"
    capsys.readouterr()
    assert main(["scan", "--json", str(tmp_path)]) == 4
    assert "No findings" not in capsys.readouterr().out
    assert main(["scan", "--exit-policy", "simple", str(tmp_path)]) == 2


def test_a_path_escape_shows_in_every_format(tmp_path, capsys):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.safetensors").symlink_to(PROD / "ct" / "mxfp8" /
                                                      "model.safetensors")
    target = str(tmp_path / "m")
    r = grit_scan.scan([target], jobs=1)
    assert [f.kind.value for f in r.findings] == ["path_escape"]
    assert r.exit_codes == {"graded": 4, "simple": 2}  # nothing could be read
    for fmt in ("concise", "full", "grouped", "github", "json", "sarif"):
        capsys.readouterr()
        assert main(["scan", "--output-format", fmt, target]) == 4
        out = capsys.readouterr().out
        assert "path_escape" in out or "GRIT108" in out, fmt


def test_concise_lines_stay_short_over_every_fixture(capsys):
    for tree in (PROD, FIX / "broken", FIX / "conventions", FIX / "sample"):
        for fmt in ("concise", "grouped"):
            capsys.readouterr()
            main(["scan", "--output-format", fmt, str(tree)])
            out = capsys.readouterr().out
            long = [x for x in out.splitlines() if len(x) >= 300]
            assert not long, (tree, fmt, long[:1])


def test_layout_expressions_only_in_full_and_json():
    from grit_scan.codec.placement import placement_name
    from grit_scan.parsers.ggml_types import GGML_Q4K_DATA
    from grit_scan.report.text import concise_message

    word = 0x8000000000000000 | 1
    name = placement_name(word, {word: GGML_Q4K_DATA})
    assert name == f"EXPR {GGML_Q4K_DATA}" and len(GGML_Q4K_DATA) > 200
    msg = (f"blk.0.attn_q.weight: 10 bytes on disk; the descriptor in its placements "
           f"(data={name}, scale=ROW_MAJOR) requires 12")
    short = concise_message(msg, 250)
    assert GGML_Q4K_DATA not in short and "EXPR Compose(Perm(" in short
    assert short.endswith("scale=ROW_MAJOR) requires 12")


# --- 4. one notion of a model for every command ------------------------------

SPLIT = "model.layers.0.self_attn.v_proj"  # MANIFEST: its weight and scale in two shards


def _same(ours, ref):
    import numpy as np

    ref = ref.astype(np.float32)
    return bool(np.all((ours.view(np.uint32) == ref.view(np.uint32)) | ((ours == 0) & (ref == 0))
                       | (np.isnan(ours) & np.isnan(ref))))


def test_dir_index_and_shard_operands_follow_planes_into_other_shards(capsys):
    import numpy as np
    from safetensors.numpy import load_file

    rel = PROD / "ct" / "fp8-dynamic-sharded"
    manifest = json.loads((PROD / "MANIFEST.json").read_text())
    (entry,) = [e for e in manifest["entries"] if e["path"] == "ct/fp8-dynamic-sharded"]
    assert SPLIT in entry["modules_split_across_shards"]
    wm = json.loads((rel / "model.safetensors.index.json").read_text())["weight_map"]
    assert wm[SPLIT + ".weight"] != wm[SPLIT + ".weight_scale"]
    ref = load_file(str(PROD / "ct" / "fp8-dynamic-sharded.dequant.safetensors"))[
        SPLIT + ".weight"]
    name = SPLIT + ".weight"
    for model in (rel, rel / "model.safetensors.index.json", rel / wm[name],
                  rel / wm[SPLIT + ".weight_scale"]):
        capsys.readouterr()
        assert main(["decode", "--json", f"{model}::{name}"]) == 0, model
        doc = json.loads(capsys.readouterr().out)
        assert doc["shape"] == list(ref.shape)
        vals = np.array([[np.nan if x is None else x for x in row] for row in doc["values"]],
                        dtype=np.float32)
        assert _same(vals, ref), model
        bits = np.array([int(b, 16) for b in doc["decoded_f32_bits"]], dtype=np.uint32)
        assert _same(bits.view(np.float32).reshape(ref.shape), ref)
        assert doc["grade"].startswith("grit1(e=e4m3,k0=") and doc["gid_base32"]
    # explain takes the same operands
    capsys.readouterr()
    assert main(["explain", f"{rel}::{name}", f"{rel / 'model.safetensors.index.json'}::{name}"
                 ]) == 0  # identical


def test_a_refusal_gives_the_reason_scan_gives(capsys):
    rel = PROD / "ct" / "nvfp4a16-sharded"
    wm = json.loads((rel / "model.safetensors.index.json").read_text())["weight_map"]
    name = "model.layers.0.self_attn.q_proj.weight"
    r = grit_scan.scan([str(rel)], jobs=1)
    (nr,) = [f for f in r.findings if f.kind.value == "not_representable"]
    assert "DIVISOR" in nr.message
    # the shard holding its packed values (the operand), and the
    # shard holding its scales, the directory and the index
    shards = {wm[name.replace(".weight", ".weight_packed")],
              wm[name.replace(".weight", ".weight_global_scale")]}
    for model in (*(rel / s for s in sorted(shards)), rel, rel / "model.safetensors.index.json"):
        capsys.readouterr()
        assert main(["decode", "--json", f"{model}::{name}"]) == 4
        doc = json.loads(capsys.readouterr().out)
        assert doc["exit_code"] == 4 and doc["reason"] in nr.message
        assert "DIVISOR" in doc["reason"] and "pack-quantized" not in doc["reason"]
        # without --json: one line on stderr, the same exit code
        assert main(["decode", f"{model}::{name}"]) == 4
        assert "DIVISOR" in capsys.readouterr().err


# --- 5. pipeline-grade codec commands ----------------------------------------

def test_decode_json_errors_are_json_on_stdout(tmp_path, capsys):
    for spec in (f"{tmp_path}/none.safetensors::x",
                 f"{PROD / 'ct' / 'mxfp8' / 'model.safetensors'}::no.such.tensor"):
        capsys.readouterr()
        assert main(["decode", "--json", spec]) == 4
        doc = json.loads(capsys.readouterr().out)
        assert doc["tensor"] == spec and doc["error"] and doc["exit_code"] == 4


@pytest.mark.parametrize("alias,spelled", [
    ("nvfp4", "grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,esr=ratiomaxabs)"),
    ("mxfp4", "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)"),
    # OCP MX v1.0 MXFP8: E4M3 elements, one E8M0 scale per 32, floor(log2 amax) - emax
    ("mxfp8", "grit1(e=e4m3,k0=32,s0=e8m0,esr=exp2floormaxabs)"),
])
def test_grade_names_and_aliases(alias, spelled, capsys):
    capsys.readouterr()
    assert main(["grade", "--json", alias]) == 0
    by_alias = json.loads(capsys.readouterr().out)
    assert main(["grade", "--json", spelled]) == 0
    assert json.loads(capsys.readouterr().out) == by_alias
    # explain takes the same names
    assert main(["explain", alias, spelled]) == 0


def test_an_unknown_or_ambiguous_grade_name_lists_the_names(capsys):
    for word in ("fp8", "nvfp5"):
        capsys.readouterr()
        assert main(["grade", word]) == 64
        err = capsys.readouterr().err
        assert all(n in err for n in ("mxfp4", "nvf4", "nvfp4", "mxfp8")), err


def test_the_conformance_vectors_ship_with_the_package(tmp_path, monkeypatch, capsys):
    from importlib.resources import files

    shipped = files("grit_scan.codec").joinpath("vectors.json").read_bytes()
    assert shipped == (FIX / "conformance" / "vectors.json").read_bytes()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"codec/vectors.json"' in pyproject  # package data, in a wheel too
    monkeypatch.chdir(tmp_path)  # no checkout around
    capsys.readouterr()
    assert main(["vectors", "verify"]) == 0
    assert "vectors hold" in capsys.readouterr().out


# --- 6. the library ----------------------------------------------------------

def test_the_library_surface():
    import pickle
    import pydoc

    text = pydoc.render_doc(grit_scan, renderer=pydoc.plaintext)
    assert "scan(paths" in text and "Raises" in text
    assert issubclass(grit_scan.NoSuchPath, grit_scan.GritValueError)
    assert issubclass(grit_scan.GritValueError, grit_scan.GritError)
    with pytest.raises(grit_scan.NoSuchPath):
        grit_scan.scan("/nonexistent/grit")
    with pytest.raises(grit_scan.GritValueError):
        grit_scan.scan(str(FIX / "sample"), select="no_such_kind")
    r = grit_scan.scan(str(FIX / "sample"), jobs=1)
    assert isinstance(r.exit_code, int) and r.exit_code == r.exit_codes["graded"] == 1
    assert r.exit_code_for("simple") == r.exit_codes["simple"]
    assert r.summary == r.to_json()["summary"]
    assert len(repr(r)) < 300 and "findings=7" in repr(r)
    for f in r.findings:
        assert json.loads(json.dumps(f.detail)) == f.to_json()["detail"]
        with pytest.raises(TypeError):
            f.detail["x"] = 1  # what a rule said cannot be changed
        assert pickle.loads(pickle.dumps(f)) == f


# --- 7. unaudited weights are named ------------------------------------------

def test_unaudited_weights_are_named_in_the_summary(tmp_path, capsys):
    for f in (PROD / "ct" / "mxfp8").iterdir():
        shutil.copy(f, tmp_path / f.name)
    clean = grit_scan.scan([str(tmp_path)], jobs=1).exit_codes
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04K\x01.")  # pickle protocol 4: 1
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07")
    r = grit_scan.scan([str(tmp_path)], jobs=1)
    assert r.exit_codes == clean  # the exit code stays as the spec says
    got = {(Path(x["path"]).name, x["kind"]) for x in r.summary["not_audited"]}
    assert got == {("pytorch_model.bin", "pickle"), ("model.onnx", "other_weights")}
    text = r.summary["text"]
    assert "not audited:" in text and "pytorch_model.bin (pickle)" in text
    assert "modelscan" in text and "fickling" in text
    for fmt in ("concise", "full", "grouped", "github"):
        capsys.readouterr()
        assert main(["scan", "--output-format", fmt, str(tmp_path)]) == clean["graded"]
        assert "pytorch_model.bin (pickle)" in capsys.readouterr().out, fmt


def test_hf_operands_follow_planes_into_other_shards(capsys, monkeypatch):
    import os
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from remote_loopback import Loopback

    srv = Loopback(repos={"fx/fp8": str(PROD / "ct" / "fp8-dynamic-sharded"),
                          "fx/nvfp4": str(PROD / "ct" / "nvfp4a16-sharded")}).start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", srv.url)
        name = SPLIT + ".weight"
        capsys.readouterr()
        assert main(["decode", "--json", f"{PROD / 'ct' / 'fp8-dynamic-sharded'}::{name}"]) == 0
        local = json.loads(capsys.readouterr().out)
        assert main(["decode", "--json", f"hf://fx/fp8::{name}"]) == 0
        remote = json.loads(capsys.readouterr().out)
        assert remote["decoded_f32_bits"] == local["decoded_f32_bits"]
        assert remote["shape"] == local["shape"] and remote["gid"] == local["gid"]
        assert main(["decode", "--json",
                     "hf://fx/nvfp4::model.layers.0.self_attn.q_proj.weight"]) == 4
        assert "DIVISOR" in json.loads(capsys.readouterr().out)["reason"]
    finally:
        srv.stop()
