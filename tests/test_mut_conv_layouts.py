"""A module's outcome does not depend on where its stored tensors are listed.

Real producers' files (fixtures/producers, MANIFEST.json) rewritten in other
layouts: each module's parts listed together (the plain path), the producer's
own order (torch's safetensors writer sorts a file's tensors by dtype and then
name, so a module's scale is listed far from its weight), and a model whose
modules span shards (a module's weight in one shard, its scale in another).
Each tensor's convention, descriptor, grade, reason, role and planes, and each
issue, must be the same in every layout; the planes' offsets and lengths must
be what each layout's own header says, and each tensor and issue must go to
the shard holding its data, as the shard index says."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from grit_scan import scan
from grit_scan.writers import Raw, write_safetensors

PRODUCERS = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
ONE_FILE = ["ct-fp8-tensor", "ct-fp8-channel", "ct/fp8-block"]
# the 7 projections of each of the 2 layers of the tiny Llama (MANIFEST.json tiny_config);
# compressed-tensors ignores lm_head
PROJ = ["mlp.down_proj", "mlp.gate_proj", "mlp.up_proj", "self_attn.k_proj",
        "self_attn.o_proj", "self_attn.q_proj", "self_attn.v_proj"]
MODULES = [f"model.layers.{k}.{p}" for k in range(2) for p in PROJ]


def _header(path: Path) -> tuple[dict[str, Any], int]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    hdr = json.loads(raw[8:8 + n])
    hdr.pop("__metadata__", None)
    return hdr, 8 + n


def _tensors(d: Path) -> dict[str, Raw]:
    """Every stored tensor of a producer's directory, in its files' listing order."""
    out: dict[str, Raw] = {}
    for f in sorted(d.glob("*.safetensors")):
        hdr, base = _header(f)
        raw = f.read_bytes()
        for name, v in hdr.items():
            a, b = v["data_offsets"]
            out[name] = Raw(v["dtype"], v["shape"], raw[base + a:base + b])
    return out


def _where(d: Path) -> dict[str, tuple[str, int, int]]:
    """Stored tensor -> (file, absolute offset, length), from the headers."""
    out = {}
    for f in d.glob("*.safetensors"):
        hdr, base = _header(f)
        for name, v in hdr.items():
            a, b = v["data_offsets"]
            out[name] = (str(f.resolve()), base + a, b - a)
    return out


def _grouped(tensors: dict[str, Raw]) -> dict[str, Raw]:
    """Each module's parts one after the other, its weight first."""
    def key(name: str) -> tuple[str, int, str]:
        stem, _, last = name.rpartition(".")
        return (stem, 0 if last.startswith("weight") and last == "weight" else 1, last)
    return {n: tensors[n] for n in sorted(tensors, key=key)}


def _copy_configs(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.glob("*.json"):
        if f.name != "model.safetensors.index.json":
            shutil.copy(f, dst / f.name)


def _one_file(src: Path, dst: Path, tensors: dict[str, Raw]) -> Path:
    _copy_configs(src, dst)
    write_safetensors(dst / "model.safetensors", tensors)
    return dst


def _sharded(src: Path, dst: Path, shards: list[dict[str, Raw]]) -> Path:
    _copy_configs(src, dst)
    wm = {}
    for k, part in enumerate(shards):
        name = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        write_safetensors(dst / name, part)
        wm |= {t: name for t in part}
    (dst / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))
    return dst


Outcome = tuple[dict[str, tuple[Any, ...]], list[tuple[Any, ...]], dict[str, int]]


def _outcome(root: Path) -> Outcome:
    """Per tensor: (convention, descriptor, grade, reason, role, shape, notes,
    planes as (stored tensor, length, broadcast)); the issues as (code,
    tensor, message, detail); the unquantised count by dtype, over every file."""
    rep = scan([str(root)])
    qs: dict[str, tuple[Any, ...]] = {}
    issues: list[tuple[Any, ...]] = []
    counts: dict[str, int] = {}
    for a in rep.artifacts:
        # the names and roles the rules take for all tensors at once are each tensor's
        assert a.quantized.names() == [q.name for q in a.quantized]
        assert a.quantized.roles() == [q.role for q in a.quantized]
        for q in a.quantized:
            assert q.name not in qs
            planes = None if q.planes is None else tuple(
                None if p is None else (p.tensor, p.length, p.broadcast) for p in q.planes)
            qs[q.name] = (q.convention, None if q.desc is None else q.desc.hex(), q.grade,
                          q.reason, q.role, tuple(q.shape), tuple(q.notes), planes)
        issues += [(i.code, i.tensor, i.message, json.dumps(i.detail, sort_keys=True))
                   for i in a.issues]
        for dt, n in a.unquantized.items():
            counts[dt] = counts.get(dt, 0) + n
    # the JSON report's tensors (names and roles taken for many tensors at once)
    listed = {(t["name"], t["role"]) for a in rep.to_json()["artifacts"]
              for t in a.get("tensors", [])}
    assert listed == {(n, v[4]) for n, v in qs.items()}
    return qs, sorted(issues), counts


def _placed(root: Path) -> None:
    """Each tensor sits in the shard holding its data plane (its weight), each
    plane's offset and length are its header's, with a file only when it is
    in another shard; each issue sits in the shard holding the tensor it names."""
    where = _where(root)
    for a in scan([str(root)]).artifacts:
        home = str(Path(a.abs_path).resolve())
        for q in a.quantized:
            if q.planes is None:  # the stored tensor it is named after
                assert where[q.name][0] == home, q.name
                continue
            data = q.planes[0]
            assert data is not None and where[data.tensor][0] == home, q.name
            for p in q.planes:
                if p is None:
                    continue
                f, off, n = where[p.tensor]
                assert (p.offset, p.length) == (off, n), p
                assert p.file == (None if f == home else f), (q.name, p)
        for i in a.issues:
            if i.tensor in where:
                assert where[i.tensor][0] == home, i


@pytest.mark.parametrize("producer", ONE_FILE)
def test_producer_order_gives_what_grouped_parts_give(tmp_path: Path, producer: str) -> None:
    src = PRODUCERS / producer
    tensors = _tensors(src)
    grouped = _outcome(_one_file(src, tmp_path / "grouped", _grouped(tensors)))
    # the producer's own file: torch sorted it by dtype, then name
    names = list(tensors)
    assert names.index("model.layers.0.self_attn.v_proj.weight_scale") < names.index(
        "model.layers.0.mlp.down_proj.weight")
    own = _outcome(src)
    assert own == grouped
    qs, issues, _ = own
    assert sorted(qs) == [m + ".weight" for m in MODULES]
    for m in MODULES:
        planes = qs[m + ".weight"][-1]
        if producer == "ct/fp8-block" and planes is None:
            # 128x128 blocks over 256 rows: not expressible, no planes (MANIFEST)
            assert "2-D" in qs[m + ".weight"][3] and "k_proj" not in m and "v_proj" not in m
            continue
        assert planes[0][0] == m + ".weight" and planes[1][0] == m + ".weight_scale"
    _placed(src)
    # the reverse of the producer's order: every module's scale after its weight
    back = _outcome(_one_file(src, tmp_path / "reversed",
                              dict(reversed(list(tensors.items())))))
    assert back == grouped


def test_not_representable_issue_names_each_module_s_own_tensor(tmp_path: Path) -> None:
    """ct-fp8-tensor is per-tensor FP8, which GRIT v1 cannot express
    (MANIFEST: ONE scale for the whole tensor): every one of the 14 modules
    gets its own not_representable issue naming its own weight and shape, in
    every layout (weight listed first, scale listed first)."""
    src = PRODUCERS / "ct-fp8-tensor"
    tensors = _tensors(src)
    for k, layout in enumerate((_grouped(tensors), tensors)):
        root = _one_file(src, tmp_path / str(k), layout)
        _, issues, _ = _outcome(root)
        nr = [i for i in issues if i[0].value == "not_representable"]
        assert [i[1] for i in nr] == [m + ".weight" for m in MODULES]
        for _code, tensor, message, detail in nr:
            rows = 64 if tensor.split(".")[-2] in ("k_proj", "v_proj") else 256
            assert message.startswith(tensor + ": one BF16 scale for a "
                                      f"{rows}x256 FP8 weight (per-tensor)")
            assert json.loads(detail)["weight_shape"] == [rows, 256]


def _spread(tensors: dict[str, Raw], n: int) -> list[dict[str, Raw]]:
    """The tensors in listing order dealt over ``n`` shards in turn, so that a
    module's weight and scale land in different shards."""
    shards: list[dict[str, Raw]] = [{} for _ in range(n)]
    for k, (name, t) in enumerate(tensors.items()):
        shards[k % n][name] = t
    return shards


@pytest.mark.parametrize("producer", ["ct-fp8-tensor", "ct-fp8-channel"])
def test_modules_spanning_shards_give_what_one_file_gives(tmp_path: Path, producer: str) -> None:
    src = PRODUCERS / producer
    tensors = _tensors(src)
    plain = _outcome(_one_file(src, tmp_path / "one", _grouped(tensors)))
    for n in (2, 3):
        shards = _spread(_grouped(tensors), n)
        # the layout splits modules: some weight is not in its scale's shard
        split = [m for m in MODULES if not any(
            m + ".weight" in s and m + ".weight_scale" in s for s in shards)]
        assert split
        root = _sharded(src, tmp_path / f"grouped-{n}", shards)
        assert _outcome(root) == plain
        _placed(root)
        root = _sharded(src, tmp_path / f"torch-{n}", _spread(tensors, n))
        assert _outcome(root) == plain
        _placed(root)


def test_producer_sharded_nvfp4_gives_what_one_file_gives(tmp_path: Path) -> None:
    """ct/nvfp4a16-sharded (MANIFEST FP1: weight_packed, weight_scale and
    weight_global_scale of one module land in different shards): the tensors
    and the not-representable issues, named after the module (its .weight, a
    name no stored tensor has), are those of the same tensors in one file."""
    src = PRODUCERS / "ct" / "nvfp4a16-sharded"
    tensors = _tensors(src)
    own = _outcome(src)
    assert own == _outcome(_one_file(src, tmp_path / "one", _grouped(tensors)))
    assert own == _outcome(_one_file(src, tmp_path / "torch", tensors))
    qs, issues, _ = own
    assert sorted(qs) == [m + ".weight" for m in MODULES]
    nr = [i for i in issues if i[0].value == "not_representable"]
    assert [i[1] for i in nr] == [m + ".weight" for m in MODULES]
    assert all(i[2].startswith(i[1] + ": compressed-tensors stores weight_global_scale")
               for i in nr)
    _placed(src)


def test_a_nameless_tensor_leaves_every_module_in_its_data_shard(tmp_path: Path) -> None:
    """A shard listing a tensor whose name is empty (a hostile header): the
    modules still go to the shard holding their weight, with the planes the
    headers give."""
    src = PRODUCERS / "ct-fp8-channel"
    tensors = _tensors(src)
    plain_qs, _, _ = _outcome(_one_file(src, tmp_path / "one", _grouped(tensors)))
    shards = _spread(tensors, 3)
    shards[1][""] = Raw("BF16", [2], bytes(4))
    root = _sharded(src, tmp_path / "nameless", shards)
    qs, _, _ = _outcome(root)
    assert qs == plain_qs
    _placed(root)


def test_one_scale_stored_as_a_matrix_is_still_per_tensor(tmp_path: Path) -> None:
    """ct-fp8-tensor's one scale per weight (MANIFEST: ONE scale for the whole
    tensor) stored as a [1, 1] matrix instead of [1]: the same one value, so
    every module is what the producer's file gives (per-tensor FP8)."""
    src = PRODUCERS / "ct-fp8-tensor"
    tensors = _tensors(src)
    for m in MODULES:
        s = tensors[m + ".weight_scale"]
        assert s.shape == [1]
        tensors[m + ".weight_scale"] = Raw(s.dtype, [1, 1], s.data)
    qs, _, _ = _outcome(_one_file(src, tmp_path / "m", tensors))
    want, _, _ = _outcome(src)
    assert {n: v[:4] for n, v in qs.items()} == {n: v[:4] for n, v in want.items()}
    assert {v[0] for v in qs.values()} == {"fp8-per-tensor"}


@pytest.mark.parametrize("rows", [2, 3])
def test_a_two_row_weight_inside_one_block(tmp_path: Path, rows: int) -> None:
    """ct/fp8-block's 128x128 blocks: a k_proj cut to its first ``rows`` rows
    lies inside one block row, so its [1, 2] scale is every row's, as for the
    producer's 64-row k_proj: the same descriptor, the scale plane repeated
    once per row."""
    src = PRODUCERS / "ct" / "fp8-block"
    tensors = _tensors(src)
    m = "model.layers.0.self_attn.k_proj"
    w = tensors[m + ".weight"]
    assert w.shape == [64, 256] and tensors[m + ".weight_scale"].shape == [1, 2]
    tensors[m + ".weight"] = Raw(w.dtype, [rows, 256], w.data[:rows * 256])
    root = _one_file(src, tmp_path / "cut", tensors)
    got = {q.name: q for a in scan([str(root)]).artifacts for q in a.quantized}[m + ".weight"]
    want = {q.name: q for q in scan([str(src)]).artifacts[0].quantized}[m + ".weight"]
    assert (got.convention, got.desc, got.grade) == (want.convention, want.desc, want.grade)
    assert got.desc is not None and got.desc.k0 == 128
    assert got.planes is not None and got.planes[1] is not None
    assert (got.planes[1].length, got.planes[1].broadcast) == (4, rows)


def test_gptq_modules_with_a_leftover_weight_in_every_layout(tmp_path: Path) -> None:
    """gptq/v2-4bit-g32-asym with a stray F16 ``.weight`` beside every
    module's qweight, scales, qzeros and g_idx: the QTensor takes that name
    (MODULE.weight, as for every GPTQ module) while its planes are the
    module's own qweight, scales and qzeros, in one file with each module's
    parts together, in the producer's order, and over shards."""
    src = PRODUCERS / "gptq" / "v2-4bit-g32-asym"
    tensors = _tensors(src)
    for m in MODULES:
        assert m + ".weight" not in tensors
        tensors[m + ".weight"] = Raw("F16", [2], bytes(4))
    plain = _outcome(_one_file(src, tmp_path / "grouped", _grouped(tensors)))
    qs, issues, _ = plain
    assert sorted(qs) == [m + ".weight" for m in MODULES]
    for m in MODULES:
        planes = qs[m + ".weight"][-1]
        assert [None if p is None else p[0] for p in planes] == [
            m + ".qweight", m + ".scales", None, m + ".qzeros"]
    named = [i[1] for i in issues if i[1] is not None and i[1].endswith(".weight")]
    assert sorted(set(named)) == [m + ".weight" for m in MODULES]
    assert _outcome(_one_file(src, tmp_path / "own", tensors)) == plain
    for n in (2, 3):
        root = _sharded(src, tmp_path / f"s{n}", _spread(tensors, n))
        assert _outcome(root) == plain
        _placed(root)
