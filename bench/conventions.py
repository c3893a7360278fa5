"""A bench per convention: every convention in the registry on a sharded tree,
whole process against the floor, and peak RSS per stored tensor.

    python bench/conventions.py [--quick | --shards N] [--only NAME,NAME] [--repeat N]
                                [--keep DIR]

Each tree is 500 shards x 800 stored tensors (--quick: 50 shards), with
config.json and model.safetensors.index.json, built by ``build`` below from
what the real producers write (fixtures/producers/*/ and their MANIFEST):
the tensor names, dtypes and shapes of a [256, 512] linear, the producer's
config, and the producer's order inside a shard (torch's safetensors writer
sorts a file's tensors by dtype, widest first, then by name; MLX by name),
so that a module's parts are not listed together, as they are not in real
files.  Beside the registry's conventions: a BF16 tree (the reference), and
a tree whose quant_method no convention claims (HQQ's layout, "unknown").

Timing and memory are bench/models.py's (``timed_pair``, ``peak_rss_mb``, its
floor: each shard's 8-byte length + ``json.loads`` of its header, and
``json.load`` of the index): the ratio is the whole ``grit scan --json``
process against that floor process, best of --repeat each, run alternately;
KB per tensor is (peak RSS of the scan - that of ``import grit_scan.api``) /
stored tensors.  Goals (issue 31): ratio <= 2, <= 0.5 KB a tensor, for every
convention.

tests/test_bench_conventions.py builds each tree at --quick size and holds
what grit recognises in it to ``expect`` (the bench measures what it says).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import models  # noqa: E402
from models import IN, OUT, PROJ, linear  # noqa: E402

Entry = tuple[str, str, list[int]]

# safetensors' Dtype enum order (safetensors/src/tensor.rs); torch's
# ``save_file`` (the Rust writer) lists a file's tensors by dtype in
# descending order of it, then by name
_DTYPE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
                "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"]
_RANK = {d: i for i, d in enumerate(_DTYPE_ORDER)}


def torch_order(entries: list[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: (-_RANK[e[1]], e[0]))


def name_order(entries: list[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: e[0])


@dataclass(frozen=True)
class Tree:
    """One convention's tree: the stored tensors of the k-th linear, the
    config's quantisation, and what grit should recognise in it."""

    make: Callable[[int], list[Entry]]
    parts: int  # stored tensors per module
    quantization_config: dict[str, object] | None
    # the ``convention`` every quantised tensor carries (None: none is quantised)
    convention: str | None
    # True: each module is reported not representable (a reason and a finding)
    not_representable: bool = False
    # finding kinds the scan must report (an unclaimed tree: unsupported_convention)
    findings: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict)
    order: Callable[[list[Entry]], list[Entry]] = torch_order
    config_extra: dict[str, object] = field(default_factory=dict)


def _ct(fmt: str, weights: dict[str, object],
        inputs: dict[str, object] | None = None) -> dict[str, object]:
    """A compressed-tensors 0.19 config (llm-compressor), as the fixtures' config.json."""
    def args(d: dict[str, object]) -> dict[str, object]:
        return {"actorder": None, "block_structure": None, "dynamic": False,
                "group_size": None, "observer": "memoryless_minmax", "observer_kwargs": {},
                "scale_dtype": None, "symmetric": True, "zp_dtype": None, **d}
    return {"config_groups": {"group_0": {
                "format": fmt, "input_activations": None if inputs is None else args(inputs),
                "output_activations": None, "targets": ["Linear"], "weights": args(weights)}},
            "format": fmt, "global_compression_ratio": None, "ignore": ["lm_head"],
            "kv_cache_scheme": None, "quant_method": "compressed-tensors",
            "quantization_status": "compressed", "sparsity_config": {}, "transform_config": {},
            "version": "0.19.0"}


_TOKEN_FP8 = {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True,
              "observer": None}


def _parts(*spec: tuple[str, str, list[int]]) -> Callable[[int], list[Entry]]:
    def make(k: int) -> list[Entry]:
        m = linear(k)
        return [(m + suf, dt, list(shape)) for suf, dt, shape in spec]
    return make


def _mxfp4_gpt_oss(k: int) -> list[Entry]:
    m = f"model.layers.{k // 2}.mlp.experts.{('gate_up_proj', 'down_proj')[k % 2]}"
    g = IN // 32
    return [(m + "_blocks", "U8", [4, OUT, g, 16]), (m + "_scales", "U8", [4, OUT, g])]


_MODELOPT_HF = {"producer": {"name": "modelopt", "version": "0.47.0"}}
_HQQ_META = [(".axis", "I32", []), (".group_size", "I32", []), (".nbits", "I32", []),
             (".shape", "I64", [2]), (".channel_wise", "U8", []), (".compute_dtype", "U8", [14]),
             (".encoded_state_dict", "U8", []), (".offload_meta", "U8", []),
             (".optimize", "U8", []), (".packing", "U8", [7]), (".quant_scale", "U8", []),
             (".quant_zero", "U8", []), (".round_zero", "U8", []),
             (".stores_quant_config", "U8", []), (".unpack_view_dtype", "U8", [11]),
             (".view_as_float", "U8", [])]
_GROUPS = IN // 128  # group 128 along the input

TREES: dict[str, Tree] = {
    "bf16": Tree(_parts((".weight", "BF16", [OUT, IN])), 1, None, None),
    "modelopt-nvfp4": Tree(
        _parts((".weight", "U8", [OUT, IN // 2]), (".weight_scale", "F8_E4M3", [OUT, IN // 16]),
               (".weight_scale_2", "F32", []), (".input_scale", "F32", [])), 4,
        {"config_groups": {"group_0": {
            "input_activations": {"dynamic": False, "num_bits": 4, "type": "float",
                                  "group_size": 16},
            "weights": {"dynamic": False, "num_bits": 4, "type": "float", "group_size": 16},
            "targets": ["Linear"]}},
         "ignore": ["lm_head"], "quant_algo": "NVFP4", "producer": _MODELOPT_HF["producer"],
         "quant_method": "modelopt"},
        "modelopt-nvfp4",
        extra={"hf_quant_config.json": {**_MODELOPT_HF, "quantization": {
            "quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
            "exclude_modules": ["lm_head"]}}}),
    "ct-nvfp4": Tree(
        _parts((".weight_packed", "U8", [OUT, IN // 2]),
               (".weight_scale", "F8_E4M3", [OUT, IN // 16]),
               (".weight_global_scale", "F32", [1])), 3,
        _ct("nvfp4-pack-quantized", {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                     "group_size": 16, "scale_dtype": "torch.float8_e4m3fn"}),
        "compressed-tensors-nvfp4", not_representable=True),
    "fp8-per-tensor": Tree(  # ModelOpt FP8
        _parts((".weight", "F8_E4M3", [OUT, IN]), (".weight_scale", "F32", []),
               (".input_scale", "F32", [])), 3,
        {"config_groups": {"group_0": {
            "input_activations": {"dynamic": False, "num_bits": 8, "type": "float"},
            "weights": {"dynamic": False, "num_bits": 8, "type": "float"},
            "targets": ["Linear"]}},
         "ignore": ["lm_head"], "quant_algo": "FP8", "producer": _MODELOPT_HF["producer"],
         "quant_method": "modelopt"},
        "fp8-per-tensor", not_representable=True,  # one scale over many rows (§3.7)
        extra={"hf_quant_config.json": {**_MODELOPT_HF, "quantization": {
            "quant_algo": "FP8", "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]}}}),
    "fp8-per-channel": Tree(  # compressed-tensors FP8_DYNAMIC
        _parts((".weight", "F8_E4M3", [OUT, IN]), (".weight_scale", "BF16", [OUT, 1])), 2,
        _ct("float-quantized", {"num_bits": 8, "type": "float", "strategy": "channel"},
            _TOKEN_FP8),
        "fp8-per-channel"),
    "fp8-block": Tree(  # compressed-tensors FP8_BLOCK
        _parts((".weight", "F8_E4M3", [OUT, IN]),
               (".weight_scale", "BF16", [OUT // 128, IN // 128])), 2,
        _ct("float-quantized", {"num_bits": 8, "type": "float", "strategy": "block",
                                "block_structure": [128, 128]},
            {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 128,
             "dynamic": True, "observer": None}),
        "fp8-block", not_representable=True),
    "finegrained-fp8": Tree(  # transformers FineGrainedFP8 (DeepSeek-V3's layout)
        _parts((".weight", "F8_E4M3", [OUT, IN]),
               (".weight_scale_inv", "F32", [OUT // 128, IN // 128])), 2,
        {"activation_scheme": "dynamic", "dequantize": False, "modules_to_convert": None,
         "modules_to_not_convert": ["lm_head"], "quant_method": "fp8", "scale_fmt": "float",
         "weight_block_size": [128, 128]},
        "fp8-block", not_representable=True),
    "gpt-oss-mxfp4": Tree(
        _mxfp4_gpt_oss, 2,
        {"quant_method": "mxfp4", "modules_to_not_convert": [
            "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
            "lm_head"]},
        "gpt-oss-mxfp4",
        config_extra={"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}),
    "ct-mxfp4": Tree(
        _parts((".weight_packed", "U8", [OUT, IN // 2]), (".weight_scale", "U8", [OUT, IN // 32])),
        2, _ct("mxfp4-pack-quantized", {"num_bits": 4, "type": "float", "strategy": "group",
                                        "group_size": 32, "scale_dtype": "torch.uint8"}),
        "compressed-tensors-mxfp4"),
    "ct-mxfp8": Tree(
        _parts((".weight", "F8_E4M3", [OUT, IN]), (".weight_scale", "U8", [OUT, IN // 32])), 2,
        _ct("mxfp8-quantized", {"num_bits": 8, "type": "float", "strategy": "group",
                                "group_size": 32, "scale_dtype": "torch.uint8"},
            {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 32,
             "dynamic": True, "observer": None, "scale_dtype": "torch.uint8"}),
        "compressed-tensors-mxfp8"),
    "gptq": Tree(  # GPTQModel, v1 checkpoint format, 4-bit, group 128, symmetric
        _parts((".g_idx", "I32", [IN]), (".qweight", "I32", [IN // 8, OUT]),
               (".qzeros", "I32", [_GROUPS, OUT // 8]), (".scales", "F16", [_GROUPS, OUT])), 4,
        {"bits": 4, "checkpoint_format": "gptq", "damp_percent": 0.01, "desc_act": False,
         "group_size": 128, "lm_head": False, "pack_dtype": "int32", "quant_method": "gptq",
         "static_groups": False, "sym": True, "true_sequential": True},
        "gptq", not_representable=True),
    "awq-gemm": Tree(
        _parts((".qweight", "I32", [IN, OUT // 8]), (".qzeros", "I32", [_GROUPS, OUT // 8]),
               (".scales", "F16", [_GROUPS, OUT])), 3,
        {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq",
         "version": "gemm", "zero_point": True},
        "awq", not_representable=True),
    "awq-gemv": Tree(  # AutoAWQ GEMV: zero points and scales padded past the last group
        _parts((".qweight", "I32", [OUT, IN // 8]), (".qzeros", "I32", [OUT, 1]),
               (".scales", "F16", [OUT, 8])), 3,
        {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq",
         "version": "gemv", "zero_point": True},
        "awq", not_representable=True),
    "bnb-nf4": Tree(  # bitsandbytes 4-bit NF4, double quantisation (blocksize 64, then 256)
        _parts((".weight.nested_absmax", "F32", [OUT * IN // 64 // 256]),
               (".weight.nested_quant_map", "F32", [256]), (".weight.quant_map", "F32", [16]),
               (".weight", "U8", [OUT * IN // 2, 1]), (".weight.absmax", "U8", [OUT * IN // 64]),
               (".weight.quant_state.bitsandbytes__nf4", "U8", [171])), 6,
        {"_load_in_4bit": True, "_load_in_8bit": False, "bnb_4bit_compute_dtype": "bfloat16",
         "bnb_4bit_quant_storage": "uint8", "bnb_4bit_quant_type": "nf4",
         "bnb_4bit_use_double_quant": True, "llm_int8_enable_fp32_cpu_offload": False,
         "llm_int8_has_fp16_weight": False, "llm_int8_skip_modules": None,
         "llm_int8_threshold": 6.0, "load_in_4bit": True, "load_in_8bit": False,
         "quant_method": "bitsandbytes"},
        "bitsandbytes-nf4", not_representable=True),
    "bnb-int8": Tree(
        _parts((".SCB", "F32", [OUT]), (".weight", "I8", [OUT, IN]), (".weight_format", "U8", [])),
        3,
        {"_load_in_4bit": False, "_load_in_8bit": True, "bnb_4bit_compute_dtype": "float32",
         "bnb_4bit_quant_storage": "uint8", "bnb_4bit_quant_type": "fp4",
         "bnb_4bit_use_double_quant": False, "llm_int8_enable_fp32_cpu_offload": False,
         "llm_int8_has_fp16_weight": False, "llm_int8_skip_modules": None,
         "llm_int8_threshold": 6.0, "load_in_4bit": False, "load_in_8bit": True,
         "quant_method": "bitsandbytes"},
        "bitsandbytes-int8", not_representable=True),
    "ct-int": Tree(  # compressed-tensors W8A8 int8
        _parts((".weight", "I8", [OUT, IN]), (".weight_scale", "BF16", [OUT, 1])), 2,
        _ct("int-quantized", {"num_bits": 8, "type": "int", "strategy": "channel"},
            {"num_bits": 8, "type": "int", "strategy": "token", "dynamic": True,
             "observer": None}),
        "compressed-tensors-int"),
    "ct-pack-quantized": Tree(  # compressed-tensors W4A16
        _parts((".weight_shape", "I64", [2]), (".weight_packed", "I32", [OUT, IN // 8]),
               (".weight_scale", "BF16", [OUT, _GROUPS])), 3,
        _ct("pack-quantized", {"num_bits": 4, "type": "int", "strategy": "group",
                               "group_size": 128}),
        "compressed-tensors-pack-quantized", not_representable=True),
    "mlx-affine": Tree(  # mlx-lm 4-bit, group 64
        _parts((".biases", "BF16", [OUT, IN // 64]), (".scales", "BF16", [OUT, IN // 64]),
               (".weight", "U32", [OUT, IN // 8])), 3,
        {"group_size": 64, "bits": 4, "mode": "affine"},
        "mlx-affine", not_representable=True, order=name_order,
        config_extra={"quantization": {"group_size": 64, "bits": 4, "mode": "affine"}}),
    "unknown": Tree(  # HQQ's layout (transformers HqqConfig): no convention claims it
        _parts(*_HQQ_META, (".scale", "BF16", [OUT * IN // 64, 1]),
               (".zero", "BF16", [OUT * IN // 64, 1]), (".W_q", "U8", [OUT * IN // 4, 64])),
        len(_HQQ_META) + 3,
        {"quant_method": "hqq", "quant_config": {"weight_quant_params": {
            "nbits": 4, "group_size": 64, "axis": 1, "channel_wise": True, "optimize": True,
            "round_zero": True, "view_as_float": False}},
         "skip_modules": ["lm_head"]},
        None, findings=("unsupported_convention",)),
}


def build(root: str, name: str, shards: int, per: int = 800) -> dict[str, int]:
    """Convention ``name``'s tree under ``root``: ``shards`` shards of ``per``
    stored tensors (as many whole modules as fit), config and index."""
    t = TREES[name]
    config: dict[str, object] = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                 "hidden_size": IN, "torch_dtype": "bfloat16",
                                 **t.config_extra}
    if t.quantization_config is not None:
        config["quantization_config"] = t.quantization_config
    if t.make is _mxfp4_gpt_oss:
        def layers(k: int) -> int:
            return k // 2 + 1
    else:
        def layers(k: int) -> int:
            return k // len(PROJ) + 1
    return models.build_tree_of(root, t.make, t.parts, config, layers, shards, per,
                                extra=t.extra, order=t.order)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="50 shards instead of 500")
    ap.add_argument("--shards", type=int, help="this many shards (overrides --quick)")
    ap.add_argument("--only", help="comma-separated tree names: " + ", ".join(TREES))
    ap.add_argument("--repeat", type=int, default=3, help="best of N timed runs")
    ap.add_argument("--keep", help="build the trees here and keep them")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(TREES)
    bad = [n for n in names if n not in TREES]
    if bad:
        ap.error(f"unknown tree(s) {', '.join(bad)}; known: {', '.join(TREES)}")
    tmp = a.keep or tempfile.mkdtemp(prefix="grit-bench-conv-")
    os.makedirs(tmp, exist_ok=True)
    # an installed package has its bytecode cached (pip compiles it); with
    # PYTHONDONTWRITEBYTECODE every grit process would compile its modules
    # from source again (about 0.3 s on the 2-core VM), which is not what a
    # user's scan costs.  The children cache it under the bench's directory
    # (never in the checkout or the install): the first run of each writes it
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        print("# PYTHONDONTWRITEBYTECODE unset for the runs", flush=True)
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    models.TMP = tmp
    shards, per = a.shards or (50 if a.quick else 500), 800
    load0 = os.getloadavg()
    print(f"# {shards} shards x {per} tensors; python {sys.version.split()[0]}; load average "
          f"{' '.join(f'{x:.2f}' for x in load0)}; {time.strftime('%Y-%m-%d %H:%M')}",
          flush=True)
    floor_py = os.path.join(tmp, "floor.py")
    with open(floor_py, "w") as f:
        f.write(models.FLOOR)
    base_rss = models.peak_rss_mb([models.PY, "-c", "import grit_scan.api"])
    rows: list[tuple[str, int, float, float, float, float, str]] = []
    try:
        for name in names:
            root = os.path.join(tmp, f"tree-{name}")
            info = build(root, name, shards, per)
            report = os.path.join(tmp, f"report-{name}.json")
            cmd = [models.GRIT, "scan", "--json", root]
            rss = models.peak_rss_mb(cmd, report)  # also the warm-up run
            found = models.kinds(report)
            os.remove(report)
            floor, ours = models.timed_pair([models.PY, floor_py, root], cmd, a.repeat)
            kb = (rss - base_rss) * 1024 / info["tensors"]
            rows.append((name, info["tensors"], ours / floor, ours, floor, kb, found))
            print(f"{name:<20} {info['tensors']:>8,} tensors  {ours / floor:5.2f}x "
                  f"(grit {ours:.2f} s, floor {floor:.2f} s)  {kb:5.2f} KB/tensor  "
                  f"[{found}]", flush=True)
            if not a.keep:
                shutil.rmtree(root)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"# load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| tree | stored tensors | process / floor | grit s | floor s | KB / tensor "
          "| goals met |\n|---|---|---|---|---|---|---|")
    for name, n, r, ours, floor, kb, _ in rows:
        met = "yes" if r <= 2 and kb <= 0.5 else "no"
        print(f"| {name} | {n:,} | {r:.2f}x | {ours:.2f} | {floor:.2f} | {kb:.2f} | {met} |")


if __name__ == "__main__":
    main()
