"""A sharded safetensors model is one model: conventions are inferred over
the union of its shards, each quantised tensor is listed under the shard
holding its data, each unquantised tensor counted in the shard holding it
(a name in two shards in its first), and an issue goes to the shard holding
the tensor it names.

The shards are written by the safetensors library; every expected listing
and count is computed from the dictionaries the test wrote (which shard got
which tensor), never from the scanner.
"""

from __future__ import annotations

import json
from collections import Counter

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import save_file

from grit_scan.cli import main

DT = {"F16": np.float16, "F32": np.float32, "BF16": ml_dtypes.bfloat16,
      "F8_E4M3": ml_dtypes.float8_e4m3fn}
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
          "quantization_config": {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0}}


def t(dtype, shape):
    return np.zeros(shape, dtype=DT[dtype])


def fp8(mod, scale_shape=(16, 1)):
    """One fbgemm FP8 per-channel linear: F8_E4M3 weight, F32 per-row scale."""
    return {f"{mod}.weight": t("F8_E4M3", (16, 32)),
            f"{mod}.weight_scale": t("F32", scale_shape)}


def q(i, p):
    return f"model.layers.{i}.self_attn.{p}_proj"


def write(root, shards, index=False, config=True):
    """``shards``: file name -> {tensor name: array}."""
    for fname, tensors in shards.items():
        save_file(tensors, str(root / fname))
    if index:
        wm = {n: f for f, ts in shards.items() for n in ts}
        (root / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {}, "weight_map": wm}))
    if config:
        (root / "config.json").write_text(json.dumps(CONFIG))


def scan_json(root, capsys):
    try:
        main(["scan", "--json", str(root)])
    except SystemExit:
        pass
    return json.loads(capsys.readouterr().out)


def by_file(doc):
    return {a["path"].rsplit("/", 1)[-1]: a for a in doc["artifacts"]}


def expected_unquantized(tensors, used):
    return dict(Counter(str(_dtype_name(a)) for n, a in tensors.items() if n not in used))


def _dtype_name(a):
    return {v: k for k, v in DT.items()}[a.dtype.type]


S1, S2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def split_model():
    """Layer 1's q_proj has its weight in shard 1 and its scale in shard 2
    (transformers' sharding does this); the rest of each module is whole."""
    one = {**fp8(q(0, "q")), f"{q(1, 'q')}.weight": t("F8_E4M3", (16, 32)),
           "model.layers.0.input_layernorm.weight": t("F16", (32,)),
           "model.layers.1.input_layernorm.weight": t("F16", (32,))}
    two = {f"{q(1, 'q')}.weight_scale": t("F32", (16, 1)), **fp8(q(1, "k")),
           "model.norm.weight": t("F32", (32,)), "model.embed_tokens.weight": t("BF16", (8, 32))}
    return {S1: one, S2: two}


def three_shards():
    """Shard 2 holds the data of one module only, shard 3 of one module
    whose scale is in shard 2: runs of one tensor per shard."""
    n = "model-0000{}-of-00003.safetensors"
    return {n.format(1): {**fp8(q(0, "q")), **fp8(q(1, "q")), **fp8(q(2, "q")),
                          "model.norm.weight": t("F32", (32,))},
            n.format(2): {**fp8(q(0, "k")), f"{q(1, 'k')}.weight_scale": t("F32", (16, 1))},
            n.format(3): {f"{q(1, 'k')}.weight": t("F8_E4M3", (16, 32)), **fp8(q(0, "v")),
                          **fp8(q(1, "v"))}}


@pytest.mark.parametrize("index", [True, False])
@pytest.mark.parametrize("build", [split_model, three_shards])
def test_modules_go_to_the_shard_holding_their_data(tmp_path, capsys, index, build):
    shards = build()
    write(tmp_path, shards, index=index)
    files = by_file(scan_json(tmp_path, capsys))
    quantised = {f: {n for n in ts if n.endswith(".weight") and ts[n].dtype == DT["F8_E4M3"]}
                 for f, ts in shards.items()}
    for f in shards:
        assert {x["name"] for x in files[f]["tensors"]} == quantised[f], f
        assert files[f]["n_quantized"] == len(quantised[f])
        used = {n for n in shards[f] if n.rsplit(".", 1)[0] + ".weight" in
                set().union(*quantised.values()) or n.endswith(".weight_scale")}
        assert files[f]["unquantized"] == expected_unquantized(shards[f], used), f
    # every quantised tensor is the fbgemm FP8 per-channel convention's
    conv = {x["convention"] for f in shards for x in files[f]["tensors"]}
    assert len(conv) == 1 and None not in conv


@pytest.mark.parametrize("index", [True, False])
def test_a_float_model_counts_every_tensor_where_it_is(tmp_path, capsys, index):
    shards = {S1: {"a.weight": t("F16", (4,)), "b.weight": t("F16", (4,)),
                   "c.weight": t("BF16", (4,))},
              S2: {"d.weight": t("F32", (4,)), "e.weight": t("F16", (4,))}}
    write(tmp_path, shards, index=index, config=False)
    files = by_file(scan_json(tmp_path, capsys))
    for f, ts in shards.items():
        assert files[f]["unquantized"] == expected_unquantized(ts, set()), f
        assert files[f]["n_quantized"] == 0


def test_a_name_in_two_shards_counts_in_its_first(tmp_path, capsys):
    shards = split_model()
    shards[S2]["model.layers.0.input_layernorm.weight"] = t("F16", (32,))  # also in shard 1
    write(tmp_path, shards, index=False)
    files = by_file(scan_json(tmp_path, capsys))
    assert files[S1]["unquantized"] == {"F16": 2}
    assert files[S2]["unquantized"] == {"F32": 1, "BF16": 1}  # the duplicate F16 not again
    assert {x["name"] for x in files[S2]["tensors"]} == {f"{q(1, 'k')}.weight"}


def test_a_float_model_with_a_name_in_two_shards(tmp_path, capsys):
    shards = {S1: {"a.weight": t("F16", (4,)), "b.weight": t("BF16", (4,))},
              S2: {"a.weight": t("F16", (4,)), "c.weight": t("F32", (4,))}}
    write(tmp_path, shards, config=False)
    files = by_file(scan_json(tmp_path, capsys))
    assert files[S1]["unquantized"] == {"F16": 1, "BF16": 1}
    assert files[S2]["unquantized"] == {"F32": 1}


def test_an_unclaimed_module_is_reported_on_its_shard(tmp_path, capsys):
    shards = split_model()
    # a scale layout no convention knows, on a module in shard 2: 3 scale
    # columns for 32 weight columns (no group size gives that)
    shards[S2].update(fp8(q(1, "v"), scale_shape=(16, 3)))
    write(tmp_path, shards, index=True)
    doc = scan_json(tmp_path, capsys)
    named = [f for f in doc["findings"] if f"{q(1, 'v')}.weight" in f["message"]]
    assert [(f["kind"], f["path"].rsplit("/", 1)[-1]) for f in named] == [
        ("unsupported_convention", S2)]
    assert named[0]["message"].startswith("1 tensor(s) look quantised")
    files = by_file(doc)
    assert f"{q(1, 'v')}.weight" not in {x["name"] for x in files[S2]["tensors"]}


def int8(mod):
    """One bitsandbytes LLM.int8 linear: I8 weight, F32 per-row absmax SCB."""
    return {f"{mod}.weight": np.zeros((16, 32), dtype=np.int8),
            f"{mod}.SCB": np.ones(16, dtype=np.float32)}


@pytest.mark.parametrize("index", [True, False])
def test_a_convention_without_planes_is_listed_where_its_weight_is(tmp_path, capsys, index):
    """LLM.int8 tensors are recognised but not representable (no planes):
    each is still listed in the shard holding its weight, split or not."""
    one = {**int8(q(0, "q")), f"{q(1, 'q')}.SCB": np.ones(16, dtype=np.float32),
           "model.norm.weight": t("F16", (32,))}
    two = {f"{q(1, 'q')}.weight": np.zeros((16, 32), dtype=np.int8), **int8(q(1, "k"))}
    shards = {S1: one, S2: two}
    for fname, tensors in shards.items():
        save_file(tensors, str(tmp_path / fname))
    if index:
        wm = {n: f for f, ts in shards.items() for n in ts}
        (tmp_path / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {}, "weight_map": wm}))
    (tmp_path / "config.json").write_text(json.dumps(
        {"quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": True}}))
    files = by_file(scan_json(tmp_path, capsys))
    for f, ts in shards.items():
        want = {n for n, a in ts.items() if n.endswith(".weight") and a.dtype == np.int8}
        assert {x["name"] for x in files[f]["tensors"]} == want, f
        assert all(x["grade"] is None and x["reason"] for x in files[f]["tensors"])
    assert files[S1]["unquantized"] == {"F16": 1} and files[S2]["unquantized"] == {}


@pytest.mark.parametrize("build", [split_model, three_shards])
def test_grouping_makes_new_records_and_leaves_the_read_ones_alone(tmp_path, build):
    """Readers return finished artifacts (frozen), and grouping into models
    gives new records: the records read are exactly as they were, while
    the new ones carry the model's tensors, issues and counts."""
    import dataclasses

    from grit_scan.artifact import Artifact, Format
    from grit_scan.parsers import models, readers

    write(tmp_path, build())
    read = [readers.read_safetensors(str(p), p.name)
            for p in sorted(tmp_path.glob("*.safetensors"))]
    assert all(isinstance(a, Artifact) and a.format is Format.SAFETENSORS for a in read)
    with pytest.raises(dataclasses.FrozenInstanceError):
        read[0].parsed = False  # type: ignore[misc]
    before = [(a.issues, list(a.quantized), dict(a.unquantized), dict(a.metadata), a.model)
              for a in read]
    new = models.assemble(read, [], None, lambda m: m)
    assert [(a.issues, list(a.quantized), dict(a.unquantized), dict(a.metadata), a.model)
            for a in read] == before
    assert all(a is not b for a, b in zip(read, new))
    assert all(not a.quantized and not a.unquantized for a in read)
    # the model's three FP8 modules per shard (split_model: 2 + 1) were inferred
    assert sum(len(a.quantized) for a in new) == sum(
        n.endswith("_proj.weight") for a in read for n in a.tensor_names())
    assert all(b.model is not None for b in new) and any(b.unquantized for b in new)
