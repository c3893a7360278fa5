"""Per-tensor against per-channel FP8 as llm-compressor 0.14.0.1 writes them
(fixtures/producers/ct-fp8-tensor, ct-fp8-channel, hf-cache-fp8-scheme;
MANIFEST.json case PERTENSOR).  One scale over a weight of many rows is not
representable in GRIT v1 (§3.7 groups are runs of k0 along one axis, k0 a
uint16 by §3.1): no descriptor and no gid.  One scale per row is the
per-channel grade.  Two revisions of one repository that changed from the
one to the other disagree (docs/spec-notes.md)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file
from scan_exit import scan_exit

import grit_scan
from grit_scan.api import load_tensor, tensor_bytes
from grit_scan.cli import main
from grit_scan.codec.decode import decode
from grit_scan.codec.grade import registry

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
MANIFEST = {e["path"]: e for e in json.loads((P / "MANIFEST.json").read_text())["entries"]}
CACHE = "hf-cache-fp8-scheme/hub/models--grit--fp8-scheme"
BAD = {"structural", "disagreement"}
K_PROJ = "model.layers.0.self_attn.k_proj.weight"


def _header(path: Path) -> dict[str, dict[str, object]]:
    """The safetensors header as written (read here, not by grit)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    head: dict[str, dict[str, object]] = json.loads(raw[8:8 + n])
    return head


def _strategy(sub: str) -> str:
    cfg = json.loads((P / sub / "config.json").read_text())["quantization_config"]
    (g,) = cfg["config_groups"].values()
    return str(g["weights"]["strategy"])


@pytest.mark.parametrize("deep", [False, True])
def test_per_tensor_is_not_representable_and_nothing_else(deep: bool) -> None:
    assert _strategy("ct-fp8-tensor") == "tensor"
    head = _header(P / "ct-fp8-tensor" / "model.safetensors")
    assert head[K_PROJ + "_scale"]["shape"] == [1] and head[K_PROJ]["shape"] == [64, 256]
    r = grit_scan.scan([str(P / "ct-fp8-tensor")], deep=deep)
    assert [(f.kind, f.message) for f in r.findings if str(f.severity) in BAD] == []
    assert {str(f.kind) for f in r.findings} == {"not_representable"}
    (f,) = r.findings
    assert "§3.7" in f.message and "§3.1" in f.message and f.detail["count"] == 14
    assert f.detail["convention"] == "fp8-per-tensor"
    assert scan_exit(P / "ct-fp8-tensor", "graded", deep) == 3
    assert scan_exit(P / "ct-fp8-tensor", "simple", deep) == 1


def test_per_tensor_size_equation_is_what_the_file_holds() -> None:
    """One byte per E4M3 element and one BF16 scale, from the header as
    written; the refusal records both sides of the equation."""
    head = _header(P / "ct-fp8-tensor" / "model.safetensors")
    art = next(a for a in grit_scan.scan([str(P / "ct-fp8-tensor")]).artifacts if a.quantized)
    (iss,) = [i for i in art.issues if i.tensor == K_PROJ]
    w, s = head[K_PROJ]["data_offsets"], head[K_PROJ + "_scale"]["data_offsets"]
    assert isinstance(w, list) and isinstance(s, list)
    assert iss.detail["data_bytes"] == w[1] - w[0] == 64 * 256
    assert iss.detail["scale_bytes"] == s[1] - s[0] == 2
    assert (iss.detail["formats"], iss.detail["group_shape"]) == ("e4m3/bfloat16", "per-tensor")


def test_per_tensor_decode_is_refused_with_the_reason(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    spec = f"{P / 'ct-fp8-tensor' / 'model.safetensors'}::{K_PROJ}"
    try:
        rc = main(["decode", spec])
    except SystemExit as exc:
        rc = int(exc.code or 0)
    out = capsys.readouterr()
    assert rc != 0 and "per-tensor" in out.err + out.out and "§3.7" in out.err + out.out


@pytest.mark.parametrize("deep", [False, True])
def test_per_channel_is_described_and_decodes_as_the_producer(deep: bool) -> None:
    assert _strategy("ct-fp8-channel") == "channel"
    r = grit_scan.scan([str(P / "ct-fp8-channel")], deep=deep)
    assert [(f.kind, f.message) for f in r.findings if str(f.severity) in BAD] == []
    assert "not_representable" not in {str(f.kind) for f in r.findings}
    assert scan_exit(P / "ct-fp8-channel", "graded", deep) == 3
    assert scan_exit(P / "ct-fp8-channel", "simple", deep) == 1
    art, q = load_tensor(f"{P / 'ct-fp8-channel' / 'model.safetensors'}::{K_PROJ}")
    assert q.desc is not None and q.desc.k0 == 256 and q.convention == "fp8-per-channel"
    ref = load_file(str(P / "ct-fp8-channel.dequant.safetensors"))[K_PROJ]
    ours = np.asarray(decode(q.desc, list(q.shape), tensor_bytes(art, q),
                             grades=registry([q.grade] if q.grade else []),
                             layouts=q.layouts), dtype=np.float32).reshape(ref.shape)
    same = (ours.view(np.uint32) == ref.view(np.uint32)) | ((ours == 0) & (ref == 0))
    assert same.all()


def _tensors(sub: str) -> dict[str, dict[str, object]]:
    doc = json.loads(_json(P / sub))
    return {t["name"]: t for a in doc["artifacts"] for t in a.get("tensors", [])}


def _json(path: Path) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main(["scan", "--json", str(path)])
        except SystemExit:
            pass
    return buf.getvalue()


def test_per_tensor_and_per_channel_never_share_a_gid() -> None:
    per_tensor, per_channel = _tensors("ct-fp8-tensor"), _tensors("ct-fp8-channel")
    assert set(per_tensor) == set(per_channel) and len(per_tensor) == 14
    for name in per_tensor:
        assert per_tensor[name]["gid"] is None and per_tensor[name]["desc"] is None
        assert per_channel[name]["gid"] is not None
    assert not {t["gid"] for t in per_tensor.values()} & {t["gid"] for t in per_channel.values()}


def test_revisions_that_changed_group_shape_disagree() -> None:
    entry = MANIFEST[CACHE]
    revs = set(entry["revisions"])
    r = grit_scan.scan([str(P / "hf-cache-fp8-scheme")])
    (g,) = [f for f in r.findings if str(f.kind) == "gid_disagreement"]
    assert set(g.detail["group_shapes"]) == {"per-tensor", "per-channel"}
    assert set(g.detail["revisions"]) == revs
    assert all(rev in g.message for rev in revs)
    assert "per-tensor" in g.message and "per-channel" in g.message
    assert g.detail["count"] == len(entry["expect_tensors"]) == 14
    assert g.detail["compared_as"].startswith("revisions of one repository (grit/fp8-scheme)")
    # not also listed as two quantisations: it is one, whose group shape changed
    assert "quantizations" not in {str(f.kind) for f in r.findings}
    assert [str(f.kind) for f in r.findings if str(f.severity) in BAD] == ["gid_disagreement"]
    assert scan_exit(P / "hf-cache-fp8-scheme", "graded") == 2
    assert scan_exit(P / "hf-cache-fp8-scheme", "simple") == 1


def test_the_two_folders_side_by_side_are_not_compared(tmp_path: Path) -> None:
    # not revisions of one repository: different schemes are never compared
    for m in ("ct-fp8-tensor", "ct-fp8-channel"):
        shutil.copytree(P / m, tmp_path / m)
    r = grit_scan.scan([str(tmp_path)])
    assert "gid_disagreement" not in {str(f.kind) for f in r.findings}
    assert scan_exit(tmp_path, "graded") == 3 and scan_exit(tmp_path, "simple") == 1


def test_a_declared_group_size_over_a_per_tensor_scale_is_named(tmp_path: Path) -> None:
    sub = tmp_path / "ct-fp8-tensor"
    shutil.copytree(P / "ct-fp8-tensor", sub)
    cfg = json.loads((sub / "config.json").read_text())
    (g,) = cfg["quantization_config"]["config_groups"].values()
    g["weights"]["group_size"] = 128
    (sub / "config.json").write_text(json.dumps(cfg))
    r = grit_scan.scan([str(sub)])
    found = [f for f in r.findings if str(f.kind) == "declared_mismatch"]
    assert found and {f.detail["field"] for f in found} == {"group_size"}
    # the whole tensor is the one group: k_proj is 64 x 256
    assert any(f.detail["actual"] == str(64 * 256) for f in found)
    assert scan_exit(sub, "graded") == 2 and scan_exit(sub, "simple") == 1
