"""Declared versus actual quantisation (config.json, quantize_config.json,
hf_quant_config.json), the GPTQ zero-point convention, and partial
quantisation of the declared scope."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from ..codec import fmt
from ..model import Artifact, QTensor, ScanInput
from ..parsers.configs import applies
from ..parsers.conventions import split_name
from .finding import Finding

# declared method/format -> conventions that satisfy it
FORMAT_CONVENTIONS: dict[str, tuple[str, ...]] = {
    "nvfp4-pack-quantized": ("compressed-tensors-nvfp4",),
    "mxfp4-pack-quantized": ("compressed-tensors-mxfp4",),
    "float-quantized": ("fp8-per-tensor", "fp8-per-channel", "fp8-per-group", "fp8-block"),
    "naive-quantized": ("fp8-per-tensor", "fp8-per-channel", "fp8-per-group", "fp8-block"),
    "pack-quantized": ("compressed-tensors-pack-quantized",),
}
METHOD_CONVENTIONS: dict[str, tuple[str, ...]] = {
    "mxfp4": ("gpt-oss-mxfp4",),
    "gptq": ("gptq",),
    "awq": ("awq",),
    "fp8": ("fp8-per-tensor", "fp8-per-channel", "fp8-block", "fp8-per-group"),
    "fbgemm_fp8": ("fp8-per-channel",),
    "bitsandbytes": ("bitsandbytes-nf4", "bitsandbytes-fp4", "bitsandbytes-4-bit"),
    "modelopt": ("modelopt-nvfp4", "fp8-per-tensor", "fp8-per-channel"),
}
ALGO_CONVENTIONS: dict[str, tuple[str, ...]] = {
    "NVFP4": ("modelopt-nvfp4", "compressed-tensors-nvfp4"),
    "FP8": ("fp8-per-tensor", "fp8-per-channel"),
}
_LINEAR = re.compile(r"(proj|fc\d?|dense|linear|query|key|value|experts|wqkv|qkv|w[123])$")
_NEVER = re.compile(r"(embed|norm|lm_head|wte|wpe|router|gate\.weight$)")


def _bits_group(q: QTensor) -> tuple[int | None, int | None]:
    if q.desc is None:
        return None, None
    return fmt.unpack(q.desc.elem).width, q.desc.k0


def _expected_conventions(dec: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    fmt_ = dec.get("format")
    if isinstance(fmt_, str) and fmt_ in FORMAT_CONVENTIONS:
        return fmt_, FORMAT_CONVENTIONS[fmt_]
    algo = dec.get("quant_algo")
    if isinstance(algo, str) and algo in ALGO_CONVENTIONS:
        return algo, ALGO_CONVENTIONS[algo]
    m = dec.get("method")
    if isinstance(m, str) and m in METHOD_CONVENTIONS:
        return m, METHOD_CONVENTIONS[m]
    return None


def declared_mismatch(scan: ScanInput) -> list[Finding]:
    out: list[Finding] = []
    by_group: dict[str, list[Artifact]] = defaultdict(list)
    for a in scan.artifacts:
        if a.format in ("safetensors",) and a.group is not None:
            by_group[a.group].append(a)
    for group, dec in sorted(scan.declared.items()):
        arts = by_group.get(group, [])
        qs = [(a, q) for a in arts for q in a.quantized]
        src = dec.get("source", "config")
        cfg_path = _cfg_path(group, src)
        if not qs and arts:
            what = dec.get("quant_algo") or dec.get("format") or dec.get("method") or "?"
            out.append(Finding(
                "declared_mismatch", cfg_path,
                f"{src} declares {what} quantisation but no tensor in "
                f"{len(arts)} file(s) is quantised (a stale or copied config?)", None,
                {"declared": _public(dec), "quantized": 0}))
            continue
        mism: dict[tuple[str, str, str], list[tuple[Artifact, QTensor]]] = defaultdict(list)
        exp = _expected_conventions(dec)
        for a, q in qs:
            if q.convention == "grit":
                continue  # a GRIT header outranks the config; explain covers it
            bits, k0 = _bits_group(q)
            db, dg = dec.get("bits"), dec.get("group_size")
            if isinstance(db, int) and bits is not None and db != bits and q.desc is not None:
                mism[("bits", str(db), str(bits))].append((a, q))
            if isinstance(dg, int) and dg > 0 and k0 is not None and dg != k0:
                mism[("group_size", str(dg), str(k0))].append((a, q))
            if isinstance(dg, int) and dg == -1 and k0 is not None and q.shape and (
                    k0 != q.shape[q.desc.group_axis if q.desc else -1]):
                mism[("group_size", "-1 (per channel)", str(k0))].append((a, q))
            if exp is not None and q.convention and q.convention not in exp[1]:
                mism[("format", exp[0], q.convention)].append((a, q))
        for (field, want, got), items in sorted(mism.items()):
            a, q = items[0]
            out.append(Finding(
                "declared_mismatch", a.path,
                f"{src} declares {field} = {want} but the bytes of {len(items)} tensor(s) say "
                f"{got} (e.g. {q.name})", q.name if len(items) == 1 else None,
                {"field": field, "declared": want, "actual": got, "count": len(items),
                 "tensors": [x.name for _, x in items[:50]], "config": cfg_path,
                 "likeliest_cause": "the config was written for a different quantisation run "
                                    "(or copied from another checkpoint)"}))
    return out


def _public(dec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in dec.items() if k not in ("raw", "all")}


def _cfg_path(group: str, src: str) -> str:
    import os

    return os.path.join(group, src.split(" ")[0])


def zp_convention(scan: ScanInput) -> list[Finding]:
    """GPTQ zero points whose v1 (stored z-1) or v2 convention is undeclared."""
    out = []
    for a in scan.artifacts:
        names = [q.name for q in a.quantized if q.convention == "gptq"]
        if not names:
            continue
        dec = next((q.declared for q in a.quantized if q.convention == "gptq"), None) or {}
        fmt_ = dec.get("format")
        if fmt_ in ("gptq", "gptq_v2"):
            continue
        out.append(Finding(
            "undeclared_zp_convention", a.path,
            f"{len(names)} GPTQ tensor(s) store zero points but no checkpoint_format says "
            "whether they are v1 ('gptq': z-1 stored, added back at load) or 'gptq_v2' (z); "
            "a loader that guesses wrong shifts every weight by one step (vllm#38966)",
            names[0] if len(names) == 1 else None,
            {"count": len(names), "tensors": names[:50], "declared_format": fmt_,
             "suggested_fix": "set checkpoint_format in quantize_config.json"}))
    return out


def partial_quantization(scan: ScanInput) -> list[Finding]:
    """Linear weights that the declared scope covers but that are stored
    unquantised, beside others that are quantised."""
    out = []
    for a in scan.artifacts:
        if a.format != "safetensors" or not a.quantized:
            continue
        dec = next((q.declared for q in a.quantized if q.declared), None)
        if not dec:
            continue
        quantised_mods = {split_name(q.name)[0] for q in a.quantized}
        missing = []
        for t in a.tensors:
            mod, suf = split_name(t.name)
            if suf != ".weight" or t.dtype not in ("F32", "F16", "BF16") or len(t.shape) != 2:
                continue
            if mod in quantised_mods or _NEVER.search(t.name) or not _LINEAR.search(mod):
                continue
            if applies(dec, mod):
                missing.append(t.name)
        if missing:
            out.append(Finding(
                "partial_quantization", a.path,
                f"{len(missing)} linear weight(s) the declared quantisation covers are stored "
                f"unquantised (e.g. {missing[0]}) beside {len(a.quantized)} quantised ones: an "
                "ignore list not respected, or a conversion that stopped part way",
                missing[0] if len(missing) == 1 else None,
                {"count": len(missing), "tensors": missing[:50],
                 "declared_ignore": dec.get("ignore", [])}))
    return out
