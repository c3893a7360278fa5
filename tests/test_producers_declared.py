"""Declared vs actual where the convention is not representable in GRIT
(fixtures/producers, MANIFEST.json): transformers' FineGrainedFP8 with a
config hand-edited to weight_block_size [64, 64] over 128x128-block scales,
and compressed-tensors NVFP4 with a config group_size of 32 over its
16-element scale blocks.  "Not representable" must not hide "the config
contradicts the bytes"; the untouched producer file gives neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scan_exit import scan_exit

import grit_scan

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
BAD = {"structural", "disagreement"}


def _exit(sub: str, policy: str, deep: bool = False) -> int:
    return scan_exit(P / sub, policy, deep)


@pytest.mark.parametrize("deep", [False, True])
def test_finegrained_fp8_as_written_is_clean(deep: bool) -> None:
    r = grit_scan.scan([str(P / "fp8-finegrained-128")], deep=deep)
    assert [(f.kind, f.message) for f in r.findings if str(f.severity) in BAD] == []
    assert _exit("fp8-finegrained-128", "graded", deep) == 3
    assert _exit("fp8-finegrained-128", "simple", deep) == 1


def _mismatch(sub: str) -> tuple[grit_scan.Report, object]:
    r = grit_scan.scan([str(P / sub)])
    (f,) = [f for f in r.findings if str(f.kind) == "declared_mismatch"]
    assert "not_representable" in {str(x.kind) for x in r.findings}
    return r, f


def test_weight_block_size_64_over_128_blocks_is_named() -> None:
    # 256x256 weights with weight_scale_inv [2, 2]: 128x128 tiles (MANIFEST)
    _, f = _mismatch("fp8-finegrained-lying-64")
    d = f.detail  # type: ignore[attr-defined]
    assert (d["field"], d["declared"], d["actual"]) == ("weight_block_size", "[64, 64]",
                                                        "[128, 128]")
    assert d["count"] == 10
    assert _exit("fp8-finegrained-lying-64", "graded") == 2
    assert _exit("fp8-finegrained-lying-64", "simple") == 1


def test_nvfp4_group_size_32_over_16_blocks_is_named() -> None:
    _, f = _mismatch("ct-nvfp4-lying-g32")
    d = f.detail  # type: ignore[attr-defined]
    assert (d["field"], d["declared"], d["actual"]) == ("group_size", "32", "16")
    assert d["count"] == 14
    assert _exit("ct-nvfp4-lying-g32", "graded") == 2 and _exit("ct-nvfp4-lying-g32",
                                                                  "simple") == 1


def test_the_correct_nvfp4_file_names_no_contradiction() -> None:
    r = grit_scan.scan([str(P / "ct" / "nvfp4a16-sharded")])
    assert "declared_mismatch" not in {str(f.kind) for f in r.findings}


def test_an_unreadable_file_is_not_said_to_hold_nothing_quantised(tmp_path: Path) -> None:
    """A config declaring quantisation beside a file grit could not read:
    the file's own finding, never "no tensor is quantised" (the file may
    hold them)."""
    (tmp_path / "config.json").write_bytes((P / "mlx-q4-g64" / "config.json").read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"garbage12")
    r = grit_scan.scan([str(tmp_path)])
    assert [str(f.kind) for f in r.findings] == ["file_unparseable"]
    # a readable file of floats under the same config is stale: declared_mismatch
    (tmp_path / "model.safetensors").write_bytes((8).to_bytes(8, "little") + b"{}      ")
    assert [str(f.kind) for f in grit_scan.scan([str(tmp_path)]).findings] == ["declared_mismatch"]


def _grit_sample_declaring(tmp_path: Path, declared: dict[str, object]) -> grit_scan.Report:
    """fixtures/sample/llama-mxfp4 (4 tensors a __grit__ header describes as
    MXFP4: E2M1 elements, 32 to a scale, OCP MX) under a config that
    declares ``declared``."""
    import json
    import shutil

    src = Path(__file__).resolve().parent.parent / "fixtures" / "sample" / "llama-mxfp4"
    shutil.copytree(src, tmp_path / "m")
    cfg = json.loads((src / "config.json").read_text())
    cfg["quantization_config"] = declared
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    return grit_scan.scan([str(tmp_path / "m")])


def test_a_grit_header_does_not_silence_the_config(tmp_path: Path) -> None:
    """A loader that follows config.json reads the bytes as GPTQ 4-bit in
    groups of 128; the GRIT header says groups of 32: the contradiction is
    reported, not outranked into silence."""
    r = _grit_sample_declaring(tmp_path, {"quant_method": "gptq", "bits": 8, "group_size": 128})
    got = sorted((f.detail["field"], f.detail["declared"], f.detail["actual"],  # type: ignore[attr-defined]
                  f.detail["count"]) for f in r.findings  # type: ignore[attr-defined]
                 if str(f.kind) == "declared_mismatch")
    assert got == [("bits", "8", "4", 4), ("group_size", "128", "32", 4)]


def test_a_grit_header_agreeing_with_the_config_is_quiet(tmp_path: Path) -> None:
    """The same bits and group size under another producer's format name:
    GRIT may annotate that producer's layout, so the name alone is no
    contradiction."""
    r = _grit_sample_declaring(tmp_path, {"quant_method": "compressed-tensors",
                                          "format": "mxfp4-pack-quantized", "bits": 4,
                                          "group_size": 32})
    assert "declared_mismatch" not in {str(f.kind) for f in r.findings}


@pytest.mark.parametrize(("fmt", "contradicted"), [("int-quantized", False),
                                                   ("pack-quantized", True)])
def test_a_grit_header_of_int8_bytes_under_a_narrower_declaration(
        tmp_path: Path, fmt: str, contradicted: bool) -> None:
    """compressed-tensors int-quantized keeps b-bit values in int8 bytes, so a
    GRIT header saying s8 (8 bits) does not contradict a declared 4; a
    declaration whose bytes would be packed 4-bit does."""
    import json

    import numpy as np

    from grit_scan.codec import grade as G
    from grit_scan.codec.encode import encode
    from grit_scan.writers import GritTensor, write_grit_safetensors

    w = np.random.default_rng(3).standard_normal((32, 64)).astype(np.float32)
    enc = encode(w, G.GRADE_I8S24, 1)  # e=s8, k0=32
    write_grit_safetensors(tmp_path / "model.safetensors",
                           [GritTensor.from_encoded("model.layers.0.mlp.down_proj.weight", enc)])
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": {
        "quant_method": "compressed-tensors", "format": fmt, "bits": 4, "group_size": 32}}))
    got = [(f.detail["field"], f.detail["declared"], f.detail["actual"])  # type: ignore[attr-defined]
           for f in grit_scan.scan([str(tmp_path)]).findings if str(f.kind) == "declared_mismatch"]
    assert got == ([("bits", "4", "8")] if contradicted else [])


def _with_config_of(tmp_path: Path, weights: Path, config: Path) -> Path:
    """``weights``' directory with ``config``'s config.json in place of its own."""
    import shutil

    out = tmp_path / "m"
    shutil.copytree(weights, out)
    (out / "config.json").write_bytes((config / "config.json").read_bytes())
    return out


def test_quantised_in_an_unknown_layout_is_not_said_to_be_unquantised(tmp_path: Path) -> None:
    """HQQ's own file (hqq 0.2, MANIFEST.json: a layout no convention of
    grit's claims) under compressed-tensors' config for w4a16 (a format a
    convention recognises): its 14 W_q/scale/zero tensors look quantised,
    so "no tensor is quantised (a stale or copied config?)" would be false.
    The declaration is still unmet, and says why."""
    m = _with_config_of(tmp_path, P / "hqq-4bit-g64", P / "ct" / "w4a16-int")
    r = grit_scan.scan([str(m)])
    by_kind = {str(f.kind): f for f in r.findings}
    assert set(by_kind) == {"declared_mismatch", "unsupported_convention"}
    unsupported = by_kind["unsupported_convention"].message
    assert unsupported.startswith("14 tensor(s) look quantised")
    got = by_kind["declared_mismatch"]
    assert str(got.severity) == "disagreement"
    assert "is quantised" not in got.message and "stale" not in got.message
    assert "but 14 tensor(s) in 1 file(s) look quantised in a layout no convention claims" \
        in got.message
    assert got.detail["look_quantised"] == 14  # type: ignore[attr-defined]


def test_a_decoy_tensor_does_not_silence_a_stale_config(tmp_path: Path) -> None:
    """A stale config beside float weights and one tensor named like
    quantised data (optimum-quanto's ``._data``, which no convention
    claims): the pull request's author cannot turn the disagreement into a
    warning."""
    from grit_scan.writers import Raw, write_safetensors

    (tmp_path / "config.json").write_bytes((P / "ct" / "w4a16-int" / "config.json").read_bytes())
    write_safetensors(tmp_path / "model.safetensors", {
        "model.layers.0.mlp.down_proj.weight": Raw("BF16", [4, 4], bytes(32)),
        "decoy._data": Raw("I8", [2, 2], bytes(4)),
    })
    r = grit_scan.scan([str(tmp_path)])
    kinds = {str(f.kind): str(f.severity) for f in r.findings}
    assert kinds == {"declared_mismatch": "disagreement", "unsupported_convention": "warning"}
    assert scan_exit(tmp_path, "simple", False) == 1


# -- a compressed-tensors ignore list that names quantised modules


def _ct_with_ignore(tmp_path: Path, ignore: list[str], sub: str = "ct/w4a16-int") -> Path:
    """llm-compressor's W4A16 pack-quantized checkpoint (MANIFEST.json), its
    tensors linked, its config's ``ignore`` list replaced."""
    import json
    import os

    d = tmp_path / "m"
    d.mkdir()
    for f in (P / sub).iterdir():
        if f.suffix == ".safetensors":
            os.link(f, d / f.name)
    cfg = json.loads((P / sub / "config.json").read_text())
    cfg["quantization_config"]["ignore"] = ignore
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def _packed_modules(sub: str = "ct/w4a16-int") -> list[str]:
    """The modules whose weight llm-compressor packed, from the header itself."""
    import json
    import struct

    (f,) = (P / sub).glob("*.safetensors")
    with f.open("rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
    return sorted(k[: -len(".weight_packed")] for k in header if k.endswith(".weight_packed"))


def _ignored(d: Path) -> list[object]:
    return [f for f in grit_scan.scan([str(d)]).findings
            if str(f.kind) == "declared_mismatch" and f.detail.get("field") == "ignore"]


def test_an_ignore_list_naming_every_quantised_module_is_a_disagreement(tmp_path: Path) -> None:
    """compressed-tensors builds an ignored module unquantised: with every
    module ignored, a loader following the config loads none of the packed
    weights (compressed_tensors.utils.match: ``re:`` is re.match)."""
    mods = _packed_modules()
    assert len(mods) == 14
    (f,) = _ignored(_ct_with_ignore(tmp_path, ["lm_head", "re:.*"]))
    d = f.detail  # type: ignore[attr-defined]
    assert d["count"] == 14 and d["declared"] == ["re:.*"]
    # each named by its QTensor, the packed weight (``mod.weight_packed``)
    assert sorted(t.rpartition(".")[0] for t in d["tensors"]) == mods
    assert str(f.severity) == "disagreement"  # type: ignore[attr-defined]
    assert scan_exit(tmp_path / "m", "simple", False) == 1


@pytest.mark.parametrize("k", [0, 3])  # 0: the module whose tensor the header lists first
def test_one_exactly_named_module_is_named(tmp_path: Path, k: int) -> None:
    mod = _packed_modules()[k]
    (f,) = _ignored(_ct_with_ignore(tmp_path, ["lm_head", mod]))
    assert f.detail["count"] == 1  # type: ignore[attr-defined]
    assert f.tensor == mod + ".weight_packed"  # type: ignore[attr-defined]
    assert f"(e.g. {mod!r}, by {mod!r})" in f.message  # type: ignore[attr-defined]


@pytest.mark.parametrize("ignore", [
    ["lm_head"],                         # as llm-compressor wrote it
    ["re:.*mlp.gate$", "re:.*lm_head"],  # a MoE router's pattern: no gate_proj
    ["mlp", "down_proj"],                # not module names: compressed-tensors matches names whole
    ["Linear"],                          # a class name: matched by class, which names do not tell
])
def test_an_ignore_list_naming_no_quantised_module_says_nothing(tmp_path: Path,
                                                                ignore: list[str]) -> None:
    assert _ignored(_ct_with_ignore(tmp_path, ignore)) == []


def test_only_compressed_tensors_reads_an_ignore_key(tmp_path: Path) -> None:
    """transformers' FineGrainedFP8 loader reads modules_to_not_convert, not
    ``ignore``: the key is not held to compressed-tensors' meaning there."""
    d = _ct_with_ignore(tmp_path, ["re:.*"], "fp8-finegrained-128")
    assert _ignored(d) == []


def test_patterns_past_the_ignore_budget_are_not_matched_but_reported(tmp_path: Path) -> None:
    """An ignore list over the ignore_patterns budget: its tail is not
    matched (the config's own finding says it was not read), so the tail's
    ``re:.*`` names no module here."""
    from grit_scan.parsers import budgets

    d = _ct_with_ignore(tmp_path, ["lm_head"] * budgets.IGNORE_PATTERNS.value + ["re:.*"])
    assert _ignored(d) == []
    said = [f.message for f in grit_scan.scan([str(d)]).findings
            if "ignore_patterns budget" in f.message]
    assert len(said) == 1


def test_quantised_modules_past_the_pattern_budget_are_named(tmp_path: Path) -> None:
    """An ignore pattern that backtracks on the file's own (long) module
    names: the modules the pattern_work budget reaches are matched, the
    rest are named as not matched (a disagreement too: the gate fails
    closed), the count the budget's arithmetic (names.py)."""
    import json
    import struct

    from grit_scan import names
    from grit_scan.writers import Raw, write_safetensors

    n, body = 3000, 400
    mods = [f"m{i:05d}." + "a" * body + "_proj" for i in range(n)]
    shape = struct.pack("<qq", 64, 64)  # weight_shape: a [64, 64] weight, 4 bits, group 32
    tensors = {}
    for m in mods:
        tensors[m + ".weight_packed"] = Raw("I32", [64, 8], bytes(64 * 8 * 4))
        tensors[m + ".weight_scale"] = Raw("BF16", [64, 2], bytes(64 * 2 * 2))
        tensors[m + ".weight_shape"] = Raw("I64", [2], shape)
    d = tmp_path / "m"
    d.mkdir()
    write_safetensors(d / "model.safetensors", tensors)
    cfg = json.loads((P / "ct/w4a16-int/config.json").read_text())
    cfg["quantization_config"]["ignore"] = ["re:.*a.*b"]
    cfg["quantization_config"]["config_groups"]["group_0"]["weights"]["group_size"] = 32
    (d / "config.json").write_text(json.dumps(cfg))
    cost = 1 + (len(mods[0]) ** 2 >> 8)
    reached = (names.PATTERN_UNITS_FIXED + names.PATTERN_UNITS_PER_NAME * n) // cost
    assert 0 < reached < n
    (f,) = _ignored(d)
    assert f.detail["count"] == n - reached  # type: ignore[attr-defined]
    assert f.detail["budget"] == "pattern_work"  # type: ignore[attr-defined]
    assert "could not be matched against" in f.message  # type: ignore[attr-defined]
    assert str(f.severity) == "disagreement"  # type: ignore[attr-defined]


# -- compressed-tensors formats no convention reads, and its uncompressed storage


def _ct_with(tmp_path: Path, edit: Any, sub: str = "ct/w4a16-int") -> Path:
    """llm-compressor's W4A16 checkpoint, its config's quantization_config
    edited by ``edit``."""
    import json
    import os

    d = tmp_path / "m"
    d.mkdir(parents=True)
    for f in (P / sub).iterdir():
        if f.suffix == ".safetensors":
            os.link(f, d / f.name)
    cfg = json.loads((P / sub / "config.json").read_text())
    edit(cfg["quantization_config"])
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def _kinds(d: Path) -> list[tuple[str, str]]:
    return sorted((str(f.kind), f.message) for f in grit_scan.scan([str(d)]).findings)


def test_a_format_no_convention_reads_is_said_so_not_contradicted(tmp_path: Path) -> None:
    """compressed-tensors names its storage by format: ``marlin-24`` is one
    no convention reads.  Over packed tensors no convention claims (renamed
    here), they are named as not checked (a warning), not as a declaration
    the bytes contradict; over tensors a convention reads by their layout,
    nothing goes unchecked and nothing is said of the format."""
    def edit(qc: dict[str, Any]) -> None:
        qc["format"] = "marlin-24"
        for g in qc["config_groups"].values():
            g["format"] = "marlin-24"

    got = _kinds(_ct_with(tmp_path / "read", edit))
    assert [k for k, _ in got] == ["not_representable"]  # the pack-quantized layout, read

    import json
    import struct

    from grit_scan.writers import Raw, write_safetensors

    d = tmp_path / "unread"
    d.mkdir()
    write_safetensors(d / "model.safetensors", {
        "model.layers.0.mlp.down_proj.weight_packed": Raw("I32", [64, 8], bytes(2048)),
        "model.layers.0.mlp.down_proj.scale_packed": Raw("F16", [2, 64], bytes(256)),
        "model.layers.0.mlp.down_proj.meta": Raw("I16", [64, 2], bytes(256)),
        "model.layers.0.mlp.down_proj.weight_shape": Raw("I64", [2],
                                                         struct.pack("<qq", 64, 64))})
    qc = {"quant_method": "compressed-tensors", "format": "marlin-24",
          "config_groups": {"group_0": {"format": "marlin-24", "targets": ["Linear"],
                                        "weights": {"num_bits": 4, "type": "int"}}}}
    (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                               "quantization_config": qc}))
    got = _kinds(d)
    assert [k for k, _ in got] == ["unsupported_convention"], got
    assert "declares format 'marlin-24', which no convention recognises" in got[0][1]


def test_mixed_precision_names_its_groups_formats(tmp_path: Path) -> None:
    """A top-level ``mixed-precision`` with known group formats is read as
    those formats: the findings are the producer's file's own."""
    want = _kinds(_ct_with(tmp_path / "a", lambda qc: None))

    def edit(qc: dict[str, Any]) -> None:
        qc["format"] = "mixed-precision"

    assert _kinds(_ct_with(tmp_path / "b", edit)) == want


def test_dense_storage_with_packed_tensors_is_contradicted(tmp_path: Path) -> None:
    """``dense``: the model's tensors stored as they are, uncompressed; 14
    packed weights contradict it."""
    def edit(qc: dict[str, Any]) -> None:
        qc["format"] = "dense"
        for g in qc["config_groups"].values():
            g["format"] = "dense"

    d = _ct_with(tmp_path, edit)
    (f,) = [f for f in grit_scan.scan([str(d)]).findings if str(f.kind) == "declared_mismatch"]
    det = f.detail  # type: ignore[attr-defined]
    assert (det["field"], det["declared"], det["count"]) == ("format", "dense", 14)


def test_dense_storage_of_floats_is_no_news(tmp_path: Path) -> None:
    """A compressed-tensors config of ``dense`` storage over float tensors
    (a model saved uncompressed): nothing quantised is what it says, not a
    stale config."""
    import json

    from grit_scan.writers import Raw, write_safetensors

    d = tmp_path / "m"
    d.mkdir()
    write_safetensors(d / "model.safetensors", {
        "model.layers.0.mlp.down_proj.weight": Raw("BF16", [64, 64], bytes(64 * 64 * 2)),
        "model.norm.weight": Raw("BF16", [64], bytes(128))})
    qc = {"quant_method": "compressed-tensors", "format": "dense", "ignore": ["lm_head"],
          "config_groups": {"group_0": {"format": "dense", "targets": ["Linear"],
                                        "weights": {"num_bits": 8, "type": "int"}}}}
    (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                               "quantization_config": qc}))
    assert _kinds(d) == []
    qc["format"] = "int-quantized"  # a compressed format over floats: still a stale config
    qc["config_groups"]["group_0"]["format"] = "int-quantized"
    (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                               "quantization_config": qc}))
    assert [k for k, _ in _kinds(d)] == ["declared_mismatch"]
    qc["format"] = "mixed-precision"  # the groups' formats are what it declares
    (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                               "quantization_config": qc}))
    assert [k for k, _ in _kinds(d)] == ["declared_mismatch"]


def test_a_sparsity_format_no_convention_reads_is_named(tmp_path: Path) -> None:
    """compressed-tensors' 2:4 sparse storage (Sparse24BitMaskCompressor:
    ``<weight>.compressed`` [rows, cols/2], ``.bitmask`` U8 [rows, cols/8],
    ``.shape``) under a ``dense`` quantisation: its tensors are named as
    not checked, and the dense declaration is not contradicted."""
    import json
    import struct

    from grit_scan.writers import Raw, write_safetensors

    d = tmp_path / "m"
    d.mkdir()
    tensors = {"model.norm.weight": Raw("BF16", [64], bytes(128))}
    for i in range(3):
        w = f"model.layers.{i}.mlp.down_proj.weight"
        tensors[w + ".compressed"] = Raw("BF16", [64, 32], bytes(64 * 32 * 2))
        tensors[w + ".bitmask"] = Raw("U8", [64, 8], bytes(64 * 8))
        tensors[w + ".shape"] = Raw("I64", [2], struct.pack("<qq", 64, 64))
    write_safetensors(d / "model.safetensors", tensors)
    qc = {"quant_method": "compressed-tensors", "format": "dense", "config_groups": {},
          "sparsity_config": {"format": "sparse-24-bitmask", "sparsity_structure": "2:4",
                              "targets": ["Linear"]}}
    (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                               "quantization_config": qc}))
    got = _kinds(d)
    assert [k for k, _ in got] == ["unsupported_convention"]
    assert ("sparsity format 'sparse-24-bitmask', which no convention reads: 6 tensor(s) in "
            "1 file(s) are stored sparse-compressed") in got[0][1]


def test_sparse_and_quantised_storage_is_not_called_a_stale_config(tmp_path: Path) -> None:
    """2:4 sparsity over FP8 weights (``float-quantized`` with a
    sparse-24-bitmask ``sparsity_config``): the quantised weights are
    inside the sparse-compressed tensors no convention reads. They are
    named as not checked; "no tensor is quantised (a stale config?)" would
    be a false alarm.  Without the sparse tensors, the same config over
    floats is a stale config again."""
    import json
    import struct

    from grit_scan.writers import Raw, write_safetensors

    d = tmp_path / "m"
    d.mkdir()
    tensors = {"model.norm.weight": Raw("BF16", [64], bytes(128))}
    for i in range(3):
        m = f"model.layers.{i}.mlp.down_proj"
        tensors[m + ".weight.compressed"] = Raw("F8_E4M3", [64, 32], bytes(64 * 32))
        tensors[m + ".weight.bitmask"] = Raw("U8", [64, 8], bytes(64 * 8))
        tensors[m + ".weight.shape"] = Raw("I64", [2], struct.pack("<qq", 64, 64))
        tensors[m + ".weight_scale"] = Raw("BF16", [64, 1], bytes(128))
    write_safetensors(d / "model.safetensors", tensors)
    qc = {"quant_method": "compressed-tensors", "format": "float-quantized",
          "config_groups": {"group_0": {"format": "float-quantized", "targets": ["Linear"],
                                        "weights": {"num_bits": 8, "type": "float",
                                                    "strategy": "channel"}}},
          "sparsity_config": {"format": "sparse-24-bitmask", "sparsity_structure": "2:4",
                              "targets": ["Linear"]}}
    (d / "config.json").write_text(json.dumps({"model_type": "llama",
                                               "quantization_config": qc}))
    got = _kinds(d)
    assert [k for k, _ in got] == ["unsupported_convention"], got
    assert "6 tensor(s) in 1 file(s) are stored sparse-compressed" in got[0][1]
    write_safetensors(d / "model.safetensors", {
        f"model.layers.{i}.mlp.down_proj.weight": Raw("BF16", [64, 64], bytes(64 * 64 * 2))
        for i in range(3)})
    assert [k for k, _ in _kinds(d)] == ["declared_mismatch"]
