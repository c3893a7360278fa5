"""Declared vs actual where the convention is not representable in GRIT
(fixtures/producers, MANIFEST.json): transformers' FineGrainedFP8 with a
config hand-edited to weight_block_size [64, 64] over 128x128-block scales,
and compressed-tensors NVFP4 with a config group_size of 32 over its
16-element scale blocks.  "Not representable" must not hide "the config
contradicts the bytes"; the untouched producer file gives neither."""

from __future__ import annotations

from pathlib import Path

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
