"""Declared quantisation: config.json, quantize_config.json, hf_quant_config.json.

The three places a Hugging Face checkpoint states its quantisation are
normalised into one dict (``Declared``): method, bits, group size, format,
zero-point convention, act-order, and the patterns of modules left
unquantised.  Matching those patterns against modules is ``names.IgnoreMatcher``
(pure, shared with the rules); here patterns a loader would backtrack on are
refused when the config is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..artifact import ArtifactDraft, Format
from ..issues.file_unparseable import (
    ChangedWhileRead,
    InvalidJson,
    OverBudget,
    ParseFailed,
    PatternRefused,
    Unreadable,
)
from ..issues.path_escape import RemoteCode
from ..names import Declared, pattern_refused
from . import budgets, json_text
from .budgets import Budget
from .fileio import ReadError, ReadMeter, SafeFile
from .interface import ByteSource
from .roles import role_function

CONFIG_NAMES = ("config.json", "quantize_config.json", "hf_quant_config.json")


def read_json(path: str, art: ArtifactDraft,
              limit: Budget = budgets.JSON_FILE_BYTES,
              meter: ReadMeter | None = None,
              loads: Callable[[str], Any] | None = None) -> Any | None:
    """A bounded, strict JSON read of a local file; problems become issues
    on ``art`` (see ``read_json_source``); ``meter`` counts its bytes."""
    try:
        with SafeFile(path, meter) as f:
            return read_json_source(f, art, limit, loads)
    except ReadError as exc:
        art.add(Unreadable(None, str(exc)))
        art.parsed = False
        return None


def read_json_source(source: ByteSource, art: ArtifactDraft,
                     limit: Budget = budgets.JSON_FILE_BYTES,
                     loads: Callable[[str], Any] | None = None) -> Any | None:
    """A bounded, strict JSON read over any ByteSource (a local file, a
    remote config or index); problems become issues on ``art``.  The size
    (``limit``) and the JSON value count (``json_file_items``, counted before
    parsing) are budgeted, so memory stays linear in the file.  ``loads``
    parses the text (``loads_json`` unless given; it raises what
    ``json.loads`` raises: index.json_loads)."""
    try:
        if source.size > limit.value:
            art.add(OverBudget(None, limit.exceeded("the file's size", source.size), limit.name))
            art.parsed = False
            return None
        raw = source.read_at(0, source.size)
        why = source.changed()
    except ReadError as exc:
        art.add(ParseFailed(None, str(exc)))
        art.parsed = False
        return None
    if why:
        art.add(ChangedWhileRead(None, why, "its contents were not used"))
        art.parsed = False
        return None
    try:
        text = raw.decode("utf-8")
        del raw  # the text is what is parsed; the bytes would double the peak
        n_items = budgets.json_items(text, min(budgets.JSON_FILE_ITEMS.value,
                                               budgets.INDEX_ENTRIES.value))
        if n_items > budgets.JSON_FILE_ITEMS.value:
            art.add(OverBudget(None, budgets.JSON_FILE_ITEMS.exceeded(
                "its JSON value count", n_items), budgets.JSON_FILE_ITEMS.name))
            art.parsed = False
            return None
        if art.format is Format.INDEX and n_items > budgets.INDEX_ENTRIES.value:
            # each weight_map entry is one of the values counted, so the
            # entry budget is applied before the parse that would build them
            # (1.5M entries, 44 MB, took about 470 MB to parse)
            art.add(OverBudget(None, budgets.INDEX_ENTRIES.exceeded(
                "its JSON value count, which bounds its weight_map entries,", n_items),
                budgets.INDEX_ENTRIES.name))
            art.parsed = False
            return None
        return (loads or loads_json)(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        art.add(InvalidJson(None, str(exc)))
        art.parsed = False
        return None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def loads_json(text: str) -> Any:
    """``json.loads(text)`` with NaN and Infinity refused (json_text)."""
    return json_text.loads(text, parse_constant=_no_constant)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _strs(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def from_config(obj: Any) -> Declared | None:
    """config.json: quantization_config, also nested under text_config."""
    if not isinstance(obj, dict):
        return None
    qc = obj.get("quantization_config")
    where = "config.json quantization_config"
    if not isinstance(qc, dict):
        tc = obj.get("text_config")
        if isinstance(tc, dict) and isinstance(tc.get("quantization_config"), dict):
            qc = tc["quantization_config"]
            where = "config.json text_config.quantization_config"
    if not isinstance(qc, dict):
        return None
    return _normalise(qc, where)


def remote_code(obj: Any) -> list[str]:
    """auto_map entries that name another repository (``org/repo--module.Class``)."""
    am = obj.get("auto_map") if isinstance(obj, dict) else None
    if not isinstance(am, dict):
        return []
    refs = []
    for v in am.values():
        for ref in (v if isinstance(v, list) else [v]):
            if isinstance(ref, str) and "--" in ref:
                refs.append(ref)
    return refs


def model_info(obj: Any) -> dict[str, Any]:
    """model_type, layer count and architecture name from config.json."""
    out: dict[str, Any] = {}
    if not isinstance(obj, dict):
        return out
    tc = obj.get("text_config")
    sources: list[dict[str, Any]] = [obj, tc if isinstance(tc, dict) else {}]
    for src in sources:
        if isinstance(src.get("model_type"), str) and "model_type" not in out:
            out["model_type"] = src["model_type"]
        n = _int(src.get("num_hidden_layers"))
        if n is not None and "n_layers" not in out:
            out["n_layers"] = n
    return out


def _normalise(qc: dict[str, Any], where: str) -> Declared:
    method = str(qc.get("quant_method", "")).lower() or None
    d: Declared = {"source": where, "method": method, "raw": qc}
    bits = _int(qc.get("bits", qc.get("w_bit")))
    group = _int(qc.get("group_size", qc.get("q_group_size")))
    d["bits"], d["group_size"] = bits, group
    d["format"] = qc.get("checkpoint_format", qc.get("format"))
    d["desc_act"] = qc.get("desc_act") if isinstance(qc.get("desc_act"), bool) else None
    d["sym"] = qc.get("sym") if isinstance(qc.get("sym"), bool) else None
    d["zero_point"] = qc.get("zero_point") if isinstance(qc.get("zero_point"), bool) else None
    d["version"] = qc.get("version") if isinstance(qc.get("version"), str) else None
    d["ignore"] = _ignore(_strs(qc.get("ignore")) + _strs(qc.get("modules_to_not_convert"))
                          + _strs(qc.get("exclude_modules")))
    wbs = qc.get("weight_block_size")
    d["weight_block_size"] = wbs if isinstance(wbs, list) else None
    if method == "compressed-tensors":
        groups = qc.get("config_groups")
        fmts, gsz, nbits, types, blocks = set(), set(), set(), set(), set()
        if isinstance(groups, dict):
            for g in groups.values():
                if not isinstance(g, dict):
                    continue
                w: dict[str, Any] = g["weights"] if isinstance(g.get("weights"), dict) else {}
                if isinstance(g.get("format"), str):
                    fmts.add(g["format"])
                if _int(w.get("group_size")) is not None:
                    gsz.add(w["group_size"])
                if _int(w.get("num_bits")) is not None:
                    nbits.add(w["num_bits"])
                if isinstance(w.get("type"), str):
                    types.add(w["type"])
                bs = w.get("block_structure")
                if isinstance(bs, list) and all(_int(x) is not None for x in bs):
                    blocks.add(tuple(bs))
        if isinstance(qc.get("format"), str):
            fmts.add(qc["format"])
        d["formats"] = sorted(fmts)
        d["format"] = d["formats"][0] if len(fmts) == 1 else qc.get("format")
        d["group_size"] = next(iter(gsz)) if len(gsz) == 1 else group
        d["bits"] = next(iter(nbits)) if len(nbits) == 1 else bits
        d["type"] = next(iter(types)) if len(types) == 1 else None
        if len(blocks) == 1:  # strategy "block": [rows, cols] of one scale's tile
            d["weight_block_size"] = list(next(iter(blocks)))
    return d


def _ignore(patterns: list[str]) -> list[str]:
    """At most ``ignore_patterns`` patterns are kept (``refused_patterns``
    says what was dropped and why)."""
    return patterns[: budgets.IGNORE_PATTERNS.value]


def refused_patterns(obj: Any) -> list[str]:
    """Why ignore patterns of a config are not matched: over a budget, or a
    regular expression that could backtrack without bound (names.py)."""
    out: list[str] = []
    qc = obj.get("quantization_config") if isinstance(obj, dict) else None
    for src in (qc, obj.get("quantization") if isinstance(obj, dict) else None, obj):
        if not isinstance(src, dict):
            continue
        pats = (_strs(src.get("ignore")) + _strs(src.get("modules_to_not_convert"))
                + _strs(src.get("exclude_modules")))
        if len(pats) > budgets.IGNORE_PATTERNS.value:
            out.append(budgets.IGNORE_PATTERNS.exceeded("its ignore list", len(pats)))
        for p in pats[: budgets.IGNORE_PATTERNS.value]:
            why = pattern_refused(p)
            if why:
                # ``why`` names the budget (pattern_chars or pattern_open_repeats)
                out.append(f"ignore pattern {p[:80]!r} is refused and matches nothing "
                           f"(docs/reliability.md): {why}")
        if out:
            break
    return out


def from_quantize_config(obj: Any) -> Declared | None:
    """quantize_config.json (AutoGPTQ / GPTQModel / AutoAWQ)."""
    if not isinstance(obj, dict):
        return None
    d = _normalise(obj, "quantize_config.json")
    if d["method"] is None:
        d["method"] = "gptq" if "desc_act" in obj or "damp_percent" in obj else (
            "awq" if "zero_point" in obj or "w_bit" in obj else None)
    return d


def from_hf_quant_config(obj: Any) -> Declared | None:
    """ModelOpt's hf_quant_config.json."""
    if not isinstance(obj, dict):
        return None
    q = obj.get("quantization")
    if not isinstance(q, dict):
        return None
    algo = q.get("quant_algo")
    d: Declared = {"source": "hf_quant_config.json", "method": "modelopt", "raw": q,
                   "quant_algo": algo if isinstance(algo, str) else None,
                   "group_size": _int(q.get("group_size")),
                   "ignore": _ignore(_strs(q.get("exclude_modules"))), "format": None, "bits": None}
    prod = obj.get("producer")
    if isinstance(prod, dict) and isinstance(prod.get("name"), str):
        d["producer"] = prod["name"]
    layers = q.get("quantized_layers")
    d["quantized_layers"] = layers if isinstance(layers, dict) else None
    return d


def merge(found: list[Declared]) -> Declared | None:
    """One declared quantisation for a checkpoint; the most specific wins
    (quantize_config.json, hf_quant_config.json, then config.json), and
    every source is kept so a rule can report disagreements between them."""
    if not found:
        return None
    order = {"quantize_config.json": 0, "hf_quant_config.json": 1}
    found = sorted(found, key=lambda d: order.get(d["source"], 2))
    out = dict(found[0])
    for other in found[1:]:
        for k, v in other.items():
            if out.get(k) in (None, [], "") and v not in (None, [], ""):
                out[k] = v
    out["sources"] = [d["source"] for d in found]
    out["all"] = found
    return out


def declared_of(name: str, obj: Any, art: ArtifactDraft) -> tuple[Declared | None,
                                                             dict[str, Any] | None]:
    """What one config file (by its lower-case name) declares, and for
    config.json the model's type and layer count; its problems (refused
    ignore patterns, auto_map code from another repository) become issues on
    ``art``.  Local directories and remote repositories read configs alike."""
    for why in refused_patterns(obj):
        art.add(PatternRefused(None, why))
    if name == "config.json":
        for ref in remote_code(obj):
            art.add(RemoteCode(None, ref))
        return from_config(obj), model_info(obj)
    if name == "quantize_config.json":
        return from_quantize_config(obj), None
    return from_hf_quant_config(obj), None


def gather(name: str, obj: Any, art: ArtifactDraft, found: list[Declared],
           info: dict[str, Any]) -> dict[str, Any]:
    """``declared_of`` for one config of a checkpoint: what it declares goes
    into ``found``; returns the model info (config.json's, else ``info``)."""
    dec, model = declared_of(name, obj, art)
    if dec is not None:
        found.append(dec)
    return model if model is not None else info


def settle(found: list[Declared], info: dict[str, Any], group: str,
           declared_map: dict[str, Declared]) -> tuple[Declared | None, Callable[[str], str]]:
    """The checkpoint's one declared quantisation (recorded in
    ``declared_map`` under ``group``) and its operand-role mapper."""
    declared = merge(found)
    if declared is not None:
        declared["model"] = info
        declared["config_dir"] = group
        declared_map[group] = declared
    model_type, n_layers = info.get("model_type"), info.get("n_layers")
    return declared, role_function(model_type if isinstance(model_type, str) else None,
                                   n_layers if isinstance(n_layers, int) else None)
