"""The conventions engine on small trees whose every expected value follows
from how they were written: what no convention claims, a float-only model,
modules every one of which a convention refuses the same way, and what a
declaration no convention recognises is called."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from grit_scan import scan
from grit_scan.issues import IssueCode
from grit_scan.writers import Raw, write_safetensors

PRODUCERS = Path(__file__).resolve().parent.parent / "fixtures" / "producers"


def test_unclaimed_names_the_tensors_that_look_quantised(tmp_path: Path) -> None:
    """Looks quantised: a name ending as producers name quantised data
    (.qweight), or an integer/FP8 tensor of rank 2 or more beside a tensor
    named ``scale`` under the same stem.  Not: a float tensor beside a scale,
    an integer matrix with no scale beside it, an integer vector."""
    t = {"j.data": Raw("U8", [4, 4], bytes(16)), "j.scale": Raw("F32", [4], bytes(16)),
         "k.codes": Raw("I8", [4, 4], bytes(16)),
         "m.w": Raw("F32", [4, 4], bytes(64)), "m.scale": Raw("F32", [1], bytes(4)),
         "v.codes": Raw("I8", [16], bytes(16)), "v.scale": Raw("F32", [1], bytes(4))}
    qweights = [f"l{i:02d}.qweight" for i in range(51)]
    t |= {n: Raw("I32", [1], bytes(4)) for n in qweights}
    write_safetensors(tmp_path / "model.safetensors", t)
    a = scan([str(tmp_path)]).artifacts[0]
    found = ["j.data", *qweights]
    (iss,) = [i for i in a.issues if i.code == IssueCode.UNSUPPORTED]
    assert iss.tensor == "j.data" and iss.detail["count"] == len(found) == 52
    assert iss.detail["tensors"] == found[:50]  # the first 50, in listing order
    assert iss.message == ("52 tensor(s) look quantised but no convention claims them "
                           "(e.g. j.data): their quantisation is not checked")
    assert a.unquantized == {"U8": 1, "F32": 4, "I8": 2, "I32": 51}


def _shard(path: Path, tensors: dict[str, Raw]) -> None:
    write_safetensors(path, tensors)


@pytest.mark.parametrize("repeat", [False, True], ids=["disjoint", "repeated-name"])
def test_float_only_model_is_counted_never_inferred(tmp_path: Path, repeat: bool) -> None:
    """Two shards of the four float dtypes (one listing a tensor of the other again when
    ``repeat``): every float tensor is counted once, by its dtype, and a float
    tensor named like quantised data (.scales) is not reported as unclaimed,
    since no convention stores quantised values in a float dtype."""
    one = {"a.weight": Raw("BF16", [4, 4], bytes(32)), "a.scales": Raw("F32", [4, 4], bytes(64)),
           "a.bias": Raw("F64", [4], bytes(32))}
    two = {"b.weight": Raw("F16", [4, 4], bytes(32)), "b.bias": Raw("F32", [4], bytes(16))}
    if repeat:
        two["a.weight"] = one["a.weight"]  # counted in its first shard
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    _shard(tmp_path / names[0], one)
    _shard(tmp_path / names[1], two)
    wm = {n: names[0] for n in one} | {n: names[1] for n in two if n not in one}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wm}))
    arts = {Path(a.path).name: a for a in scan([str(tmp_path)]).artifacts}
    assert arts[names[0]].unquantized == {"BF16": 1, "F32": 1, "F64": 1}
    assert arts[names[1]].unquantized == {"F16": 1, "F32": 1}
    for a in arts.values():
        assert not list(a.quantized)
        assert not [i for i in a.issues if i.code == IssueCode.UNSUPPORTED]


def _tensors(path: Path) -> dict[str, Raw]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    hdr = json.loads(raw[8:8 + n])
    hdr.pop("__metadata__", None)
    return {k: Raw(v["dtype"], v["shape"], raw[8 + n + v["data_offsets"][0]:
                                              8 + n + v["data_offsets"][1]])
            for k, v in hdr.items()}


def test_each_refused_module_gets_its_own_issue(tmp_path: Path) -> None:
    """ModelOpt NVFP4 (fixtures/producers/modelopt/nvfp4) whose k_proj and
    v_proj weights of both layers (four modules of one signature) are stored
    flat instead of [out, in/2]: each of the four is refused with a size issue
    naming its own module and no tensor, and every other module is what the
    producer's file gives."""
    src = PRODUCERS / "modelopt" / "nvfp4"
    tensors = _tensors(src / "model.safetensors")
    flat = [f"model.layers.{k}.self_attn.{p}" for k in range(2) for p in ("k_proj", "v_proj")]
    for m in flat:
        w = tensors[m + ".weight"]
        assert w.shape == [64, 128]  # 64 rows of 256 E2M1 codes, two a byte
        tensors[m + ".weight"] = Raw(w.dtype, [64 * 128], w.data)
    for f in src.glob("*.json"):
        (tmp_path / f.name).write_text(f.read_text())
    write_safetensors(tmp_path / "model.safetensors", tensors)
    a = scan([str(tmp_path)]).artifacts[0]
    size = [i for i in a.issues if i.code == IssueCode.SIZE]
    assert [i.tensor for i in size] == flat
    for i, m in zip(size, flat, strict=True):
        assert i.message == f"{m}.weight: NVFP4 data is [out, in/2]; got [8192]"
    got = {q.name: q for q in a.quantized}
    want = {q.name: q for q in scan([str(src)]).artifacts[0].quantized}
    assert sorted(got) == sorted(set(want) - {m + ".weight" for m in flat})
    for name, q in got.items():
        w = want[name]
        assert (q.convention, q.desc, q.grade, q.role) == (w.convention, w.desc, w.grade, w.role)
        assert q.planes is not None and w.planes is not None
        assert [None if p is None else (p.tensor, p.length) for p in q.planes] == [
            None if p is None else (p.tensor, p.length) for p in w.planes]


def _declares(tmp_path: Path, qc: dict[str, object]) -> list[str]:
    write_safetensors(tmp_path / "model.safetensors",
                      {"m.qweight": Raw("I32", [4, 4], bytes(64)),
                       "m.weight": Raw("F16", [4, 4], bytes(32))})
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama",
                                                      "quantization_config": qc}))
    return [f.message for f in scan([str(tmp_path)]).findings
            if f.kind.value == "unsupported_convention"]


TAIL = ", which no convention recognises: 1 tensor(s) in 1 file(s) are not checked"


@pytest.mark.parametrize("qc,named", [
    ({"quant_method": "frobnicate", "bits": 4}, "quant_method 'frobnicate'"),
    # the format is named before the quant_method; an empty or non-text one is not a name
    ({"quant_method": "frobnicate", "format": "zz"}, "format 'zz'"),
    ({"quant_method": "frobnicate", "format": ""}, "quant_method 'frobnicate'"),
    ({"quant_method": "frobnicate", "format": ["a", "b"]}, "quant_method 'frobnicate'"),
    ({"bits": 4, "group_size": 128},
     "quantisation without a quant_method (bits 4, group_size 128)"),
    ({"group_size": 64}, "quantisation without a quant_method (group_size 64)"),
    ({}, "quantisation without a quant_method (no fields grit reads)"),
])
def test_an_unrecognised_declaration_is_named_by_what_it_gives(
        tmp_path: Path, qc: dict[str, object], named: str) -> None:
    assert _declares(tmp_path, qc) == [
        f"config.json quantization_config declares {named}{TAIL}"]


def test_modules_named_like_words_of_their_note(tmp_path: Path) -> None:
    """Two NVFP4 modules (ModelOpt's layout: U8 [out, in/2] weight, F8_E4M3
    [out, in/16] weight_scale) without their global scale, named ``scale`` and
    ``wrong`` (words of the note such a module gets): each gets its own
    QTensor, planes and note, and every tensor is consumed (none counted
    unquantised)."""
    t = {}
    for m in ("scale", "wrong", "zz"):
        t[m + ".weight"] = Raw("U8", [4, 16], bytes(64))
        t[m + ".weight_scale"] = Raw("F8_E4M3", [4, 2], bytes(8))
    write_safetensors(tmp_path / "model.safetensors", t)
    a = scan([str(tmp_path)]).artifacts[0]
    qs = {q.name: q for q in a.quantized}
    assert sorted(qs) == ["scale.weight", "wrong.weight", "zz.weight"]
    for m in ("scale", "wrong", "zz"):
        q = qs[m + ".weight"]
        assert q.convention == "modelopt-nvfp4" and q.shape == (4, 32)
        assert q.planes is not None
        assert [None if p is None else (p.tensor, p.length) for p in q.planes] == [
            (m + ".weight", 64), (m + ".weight_scale", 8), None, None]
        assert len(q.notes) == 1 and "global scale tensor is missing" in q.notes[0]
    assert a.unquantized == {}



def _signatures(d: Path) -> dict[tuple[object, ...], bool]:
    """The modules' signatures in a producer's files, read from the headers:
    (each part's suffix after the module, dtype and shape, in listing order)
    -> whether a module of it holds more than float tensors.  A module is
    the name before its last component, or before ``.weight_*``."""
    mods: dict[str, list[tuple[str, str, tuple[int, ...]]]] = {}
    for f in sorted(d.glob("*.safetensors")):
        for name, t in _tensors(f).items():
            stem, _, last = name.rpartition(".")
            mods.setdefault(stem, []).append(("." + last, t.dtype, tuple(t.shape)))
    return {tuple(parts): any(dt not in ("F32", "F16", "BF16", "F64") for _, dt, _ in parts)
            for parts in mods.values()}


@pytest.mark.parametrize("producer", [
    "ct-fp8-tensor",  # a not-representable issue per module, named after its weight
    "ct/nvfp4a16-sharded",  # named MODULE.weight, a name no stored tensor has
    "gptq/v2-4bit-g32-asym",  # an issue with the module's sizes in its detail
    "ct-fp8-channel",  # representable, no issue
    "gptq-stray-weight",  # named after a stored part that is not its data
])
def test_each_signature_is_learned_once(producer: str, monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    """What a convention did for the first module of a signature is done
    again for the others (conventions.engine's plans): each signature of the
    producer's files is learned once, as a plan when its modules are
    quantised, as nothing when they are plain floats; never refused."""
    from grit_scan.conventions import engine

    learned: list[object] = []
    real = engine._learn

    def spy(*a: object) -> object:
        plan = real(*a)  # type: ignore[arg-type]
        learned.append(plan)
        return plan

    monkeypatch.setattr(engine, "_learn", spy)
    src = PRODUCERS / producer
    if producer == "gptq-stray-weight":
        # gptq/v2-4bit-g32-asym with an F16 .weight beside each module's parts:
        # its QTensor takes that name while its data plane is the qweight
        src = tmp_path
        tensors = _tensors(PRODUCERS / "gptq" / "v2-4bit-g32-asym" / "model.safetensors")
        for m in sorted({n.rpartition(".")[0] for n in tensors if n.endswith(".qweight")}):
            tensors[m + ".weight"] = Raw("F16", [2], bytes(4))
        for f in (PRODUCERS / "gptq" / "v2-4bit-g32-asym").glob("*.json"):
            (tmp_path / f.name).write_text(f.read_text())
        write_safetensors(tmp_path / "model.safetensors", tensors)
    scan([str(src)])
    sigs = _signatures(src)
    assert len(learned) == len(sigs)
    assert sum(p is engine._NOTHING for p in learned) == sum(not q for q in sigs.values())
    assert all(p is not None for p in learned)


@pytest.mark.parametrize("names", [("a", "b", "c"), ("scale", "wrong", "zz")],
                         ids=["replayed", "one-by-one"])
def test_nvfp4_without_its_global_scale_is_short_of_it(tmp_path: Path,
                                                      names: tuple[str, ...]) -> None:
    """ModelOpt NVFP4 modules without weight_scale_2: GRADE_NVF4's level-1
    scale is one binary32 per tensor (§10.3), 4 bytes no plane holds, so
    each module, whether its QTensor was replayed from the first module's or
    inferred on its own (modules named like words of their note), has its own
    size finding."""
    t = {}
    for m in names:
        t[m + ".weight"] = Raw("U8", [4, 16], bytes(64))
        t[m + ".weight_scale"] = Raw("F8_E4M3", [4, 2], bytes(8))
    write_safetensors(tmp_path / "model.safetensors", t)
    rep = scan([str(tmp_path)])
    short = sorted((f.tensor, f.message) for f in rep.findings if f.kind.value == "size_mismatch")
    assert short == [(f"{m}.weight", f"{m}.weight (modelopt-nvfp4): scale1 plane is 0 bytes; "
                      "descriptor requires 4. Likeliest cause: the plane is short by 4 bytes: "
                      "a truncated shard, a short read or a mis-served range.")
                     for m in names]
