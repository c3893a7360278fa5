"""declared_mismatch: the declared quantisation (config.json,
quantize_config.json, hf_quant_config.json) contradicts the bytes."""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import compress, repeat
from operator import attrgetter, is_, itemgetter, methodcaller
from typing import Any

from ...artifact import Artifact, QTensor, ScanInput
from ...issues import IssueCode
from ...issues.unsupported_convention import Unclaimed
from ...names import IgnoreMatcher
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import config_path, positions

_CODE, _DETAIL = attrgetter("code"), attrgetter("detail")
_REFUSED = IssueCode.NOT_REPRESENTABLE

RULE = Rule(
    code="GRIT203",
    kind=Kind.DECLARED_MISMATCH,
    severity=Severity.DISAGREEMENT,
    summary='the declared quantisation contradicts the bytes',
    doc="""\
**Disagreement.** `config.json` (`quantization_config`, also under
`text_config`), `quantize_config.json` or ModelOpt's `hf_quant_config.json`
declares bits, a group size, a `weight_block_size` or a format that the
bytes contradict (whether or not the convention is representable in GRIT) — or
declares a quantisation a convention recognises for a checkpoint whose
tensors are not quantised (a method no convention recognises is
`unsupported_convention` instead). Where tensors look quantised in a layout
no convention claims, the finding says that instead of "no tensor is
quantised": the config may be wrong, or the layout one grit does not know
(`unsupported_convention` names those tensors). A compressed-tensors config
whose `ignore` list names modules whose tensors are quantised (matched as
compressed-tensors matches it: `re:` by `re.match`, else the exact module
name) contradicts them too: its loader builds an ignored module unquantised
and does not load their quantised tensors; modules the list could not be
matched against within the `pattern_work` budget are named as such.
compressed-tensors' `dense` format is its uncompressed storage: over
float tensors it is what it says, and a quantised tensor contradicts it. A tensor a GRIT header describes is
held to the declared bits and group size too (a loader that follows the
config reads its bytes that way), but not to the declared format's name:
GRIT may annotate any producer's layout.

Example (`fixtures/broken/declared-contradicts`):

    config.json quantization_config declares group_size = 16 but the bytes of 1 tensor(s) say 32

Fix: correct the config (it was probably copied from another run).
""",
)
RULES = (RULE,)

# declared method/format -> conventions that satisfy it
FORMAT_CONVENTIONS: dict[str, tuple[str, ...]] = {
    "nvfp4-pack-quantized": ("compressed-tensors-nvfp4",),
    "mxfp4-pack-quantized": ("compressed-tensors-mxfp4",),
    "float-quantized": ("fp8-per-tensor", "fp8-per-channel", "fp8-per-group", "fp8-block"),
    "naive-quantized": ("fp8-per-tensor", "fp8-per-channel", "fp8-per-group", "fp8-block"),
    "pack-quantized": ("compressed-tensors-pack-quantized",),
    "int-quantized": ("compressed-tensors-int",),
    "mxfp8-quantized": ("compressed-tensors-mxfp8",),
    # compressed-tensors' uncompressed storage: no quantised tensor is its
    "dense": (),
}
METHOD_CONVENTIONS: dict[str, tuple[str, ...]] = {
    "mxfp4": ("gpt-oss-mxfp4",),
    "gptq": ("gptq",),
    "awq": ("awq",),
    "fp8": ("fp8-per-tensor", "fp8-per-channel", "fp8-block", "fp8-per-group"),
    "fbgemm_fp8": ("fp8-per-channel",),
    "bitsandbytes": ("bitsandbytes-nf4", "bitsandbytes-fp4", "bitsandbytes-4-bit",
                     "bitsandbytes-int8"),
    "modelopt": ("modelopt-nvfp4", "fp8-per-tensor", "fp8-per-channel"),
}
ALGO_CONVENTIONS: dict[str, tuple[str, ...]] = {
    "NVFP4": ("modelopt-nvfp4", "compressed-tensors-nvfp4"),
    "FP8": ("fp8-per-tensor", "fp8-per-channel"),
}


def _bits_group(q: QTensor) -> tuple[int | None, int | None]:
    if q.desc is None:
        return None, None
    from ...codec import fmt  # here: a described tensor (start-up, docs/performance.md)

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


Contradiction = tuple[str, str, str]  # (field, declared, actual)


def _contradictions(q: QTensor, dec: dict[str, Any],
                    exp: tuple[str, tuple[str, ...]] | None) -> list[Contradiction]:
    """What the bytes of one tensor say against the declaration."""
    out: list[Contradiction] = []
    grit = q.convention == "grit"
    if grit:
        # a GRIT header states the layout exactly, and a loader that follows
        # the config reads the bytes as the config says: its bits and group
        # size are held to the header's.  Its format name is not: GRIT may
        # annotate any producer's layout (RULE's doc)
        exp = None
    bits, k0 = _bits_group(q)
    db, dg = dec.get("bits"), dec.get("group_size")
    # compressed-tensors int-quantized keeps b-bit values in int8 bytes (e=s8):
    # a declared b < 8 is not contradicted by the header
    narrow = (q.convention == "compressed-tensors-int"
              or (grit and dec.get("format") == "int-quantized")) and isinstance(db, int) and db < 8
    if isinstance(db, int) and bits is not None and db != bits and q.desc is not None \
            and not narrow:
        out.append(("bits", str(db), str(bits)))
    if isinstance(dg, int) and dg > 0 and k0 is not None and dg != k0:
        out.append(("group_size", str(dg), str(k0)))
    if isinstance(dg, int) and dg == -1 and k0 is not None and q.shape and (
            k0 != q.shape[q.desc.group_axis if q.desc else -1]):
        out.append(("group_size", "-1 (per channel)", str(k0)))
    if exp is not None and q.convention and q.convention not in exp[1]:
        out.append(("format", exp[0], q.convention))
    return out


def _refused_contradictions(detail: Mapping[str, Any],
                            dec: dict[str, Any]) -> list[Contradiction]:
    """What a not-representable tensor's recorded shapes say against the
    declaration: its group size (NVFP4's 16), or whether the declared
    weight_block_size tiles the weight into the stored scale grid."""
    out: list[Contradiction] = []
    dg, got = dec.get("group_size"), detail.get("actual_group_size")
    if isinstance(dg, int) and dg > 0 and isinstance(got, int) and dg != got:
        out.append(("group_size", str(dg), str(got)))
    db, bits = dec.get("bits"), detail.get("actual_bits")
    if isinstance(db, int) and isinstance(bits, int) and db != bits:
        out.append(("bits", str(db), str(bits)))
    wbs, ws, ss = dec.get("weight_block_size"), detail.get("weight_shape"), detail.get(
        "scale_shape")
    if (isinstance(wbs, list) and len(wbs) == 2 and all(isinstance(b, int) and b > 0
                                                       for b in wbs)
            and isinstance(ws, list) and isinstance(ss, list) and len(ws) == len(ss) == 2):
        tiles = [-(-ws[0] // wbs[0]), -(-ws[1] // wbs[1])]
        if tiles != ss:
            actual = (f"[{ws[0] // ss[0]}, {ws[1] // ss[1]}]"
                      if ss[0] and ss[1] and ws[0] % ss[0] == 0 and ws[1] % ss[1] == 0
                      else f"scales {ss} over a {ws} weight")
            out.append(("weight_block_size", str(wbs), actual))
    return out


def check_scan(scan: ScanInput) -> list[Finding]:
    out: list[Finding] = []
    by_group: dict[str, list[Artifact]] = defaultdict(list)
    for a in scan.artifacts:
        if a.format.hf_named and a.group is not None:
            by_group[a.group].append(a)
    for group, dec in sorted(scan.declared.items()):
        arts = by_group.get(group, [])
        src = dec.get("source", "config")
        cfg_path = config_path(group, src)
        if arts and not any(a.quantized for a in arts) and all(a.parsed for a in arts):
            # (a file grit could not read may hold them: it has its own finding)
            # here: the convention registry, which only a declaring model needs (start-up)
            from ...conventions.base import (
                CT_UNCOMPRESSED,
                ct_formats,
                ct_sparsity,
                recognised,
                sparse_parts,
            )

            if not recognised(dec):
                continue  # a method no convention knows: unsupported_convention says so
            if dec.get("method") == "compressed-tensors" and set(ct_formats(dec)) == {
                    CT_UNCOMPRESSED}:
                continue  # stored uncompressed, as declared: nothing quantised is no news
            if ct_sparsity(dec) and any(sparse_parts(a.tensor_names()) for a in arts):
                # sparse-compressed tensors hide what is quantised among them
                # (unsupported_convention names them): not a stale config
                continue
            what = dec.get("quant_algo") or dec.get("format") or dec.get("method") or "?"
            # tensors that look quantised in a layout no convention claims
            # (unsupported_convention names them): the checkpoint may well be
            # quantised, in a layout this scanner does not know, so it is not
            # said to hold nothing quantised; the declaration still goes
            # unmet, and a decoy tensor must not silence it (an attacker's
            # stale config beside one tensor named like quantised data)
            looks = sum(i.count for a in arts for i in a.issues if isinstance(i, Unclaimed))
            detail: dict[str, Any] = {"declared": _public(dec), "quantized": 0}
            if looks:
                detail["look_quantised"] = looks
                said = (f"{looks} tensor(s) in {len(arts)} file(s) look quantised in a layout "
                        "no convention claims (a wrong config, or a layout grit does not know)")
            else:
                said = (f"no tensor in {len(arts)} file(s) is quantised "
                        "(a stale or copied config?)")
            out.append(RULE.finding(cfg_path, f"{src} declares {what} quantisation but {said}",
                                    None, detail))
            continue
        out.extend(_ignored_but_quantised(dec, arts, src, cfg_path))
        # the tensors each contradiction holds, per file: asked once per kin (docs/performance.md)
        mism: dict[Contradiction, list[tuple[Artifact, Sequence[int]]]] = defaultdict(list)
        # what the refusals of not-representable conventions record of the bytes
        named: dict[Contradiction, list[tuple[Artifact, str]]] = defaultdict(list)
        exp = _expected_conventions(dec)
        for a in arts:
            for key, idx in positions(a, functools.partial(_contradictions, dec=dec, exp=exp)).items():
                mism[key].append((a, idx))
        # asked once per detail object: the modules a convention's plan was
        # replayed on share their issue's detail (conventions/engine.py)
        # (each detail kept while the loop runs, so no id is reused)
        refused: dict[int, tuple[Mapping[str, Any], list[Contradiction]]] = {}
        for a in arts:
            # the file's refusals and their details picked at C speed; a
            # file whose details contradict nothing (the usual case) is not
            # visited issue by issue
            picked = list(compress(a.issues, map(is_, map(_CODE, a.issues), repeat(_REFUSED))))
            details = list(map(_DETAIL, picked))
            contradicts = False
            for i, detail in dict(zip(map(id, details), details)).items():
                seen = refused.get(i)
                if seen is None:
                    seen = refused[i] = (detail, _refused_contradictions(detail, dec))
                contradicts = contradicts or bool(seen[1])
            if not contradicts:
                continue
            for iss, detail in zip(picked, details):
                if iss.tensor is not None:
                    for key in refused[id(detail)][1]:
                        named[key].append((a, iss.tensor))
        for (field, want, got), found in sorted(named.items()):
            a, name = found[0]
            out.append(RULE.finding(
                a.path, f"{src} declares {field} = {want} but the bytes of {len(found)} "
                f"tensor(s) say {got} (e.g. {name}); the convention is not representable in "
                "GRIT either, which does not make the config right", name if len(found) == 1
                else None,
                {"field": field, "declared": want, "actual": got, "count": len(found),
                 "tensors": [n for _, n in found[:50]], "config": cfg_path,
                 "likeliest_cause": "the config was written for a different quantisation run "
                                    "(or copied from another checkpoint)"}))
        for (field, want, got), parts in sorted(mism.items()):
            a, idx = parts[0]
            q = a.quantized[idx[0]]
            count = sum(len(ix) for _, ix in parts)
            names = list(itertools.islice((x.quantized[i].name for x, ix in parts for i in ix),
                                          50))
            out.append(RULE.finding(
                a.path, f"{src} declares {field} = {want} but the bytes of {count} "
                f"tensor(s) say {got} (e.g. {q.name})", q.name if count == 1 else None,
                {"field": field, "declared": want, "actual": got, "count": count,
                 "tensors": names, "config": cfg_path,
                 "likeliest_cause": "the config was written for a different quantisation run "
                                    "(or copied from another checkpoint)"}))
    return out


_MODULE = methodcaller("rpartition", ".")
_HEAD = itemgetter(0)


def _ignored_but_quantised(dec: dict[str, Any], arts: Sequence[Artifact], src: str,
                           cfg_path: str) -> list[Finding]:
    """Quantised modules that a compressed-tensors config's ``ignore`` list
    names, as compressed-tensors matches it (names.IgnoreMatcher): its
    loader builds an ignored module unquantised, so the quantised tensors
    stored for it are not what it loads.  The module is the quantised
    tensor's name without its last component (``mod.weight``).  Modules
    the list could not be matched against within the pattern_work budget
    are named too: the gate fails closed on them."""
    raw = dec.get("raw")
    listed = raw.get("ignore") if isinstance(raw, dict) else None
    if dec.get("method") != "compressed-tensors" or not isinstance(listed, list):
        return []
    kept = set(dec.get("ignore") or ())  # what the ignore_patterns budget kept
    matcher = IgnoreMatcher([p for p in listed if isinstance(p, str) and p in kept],
                            compressed_tensors=True)
    if not matcher:
        return []
    found: list[tuple[Artifact, str, str, str]] = []
    unknown: list[tuple[Artifact, str]] = []
    heads = matcher.heads()
    for a in arts:
        if not a.quantized:
            continue
        if heads is not None:
            # plain names only: a file none of whose stored tensors is under
            # one of them holds no quantised tensor under one (a quantised
            # tensor is in the file of its data, ``mod.weight_packed``), asked
            # of the file's names at once (500 shards of 800 tensors: ``lm_head``)
            text = "\n" + "\n".join(a.tensor_names())
            if not any("\n" + h in text for h in heads):
                continue
        names = a.quantized.names()
        if heads is not None:
            # the tensors under one of them, asked at C speed
            names = list(compress(names, map(methodcaller("startswith", heads), names)))
        mods = list(map(_HEAD, map(_MODULE, names)))
        hit, left = matcher.match(mods)
        found.extend((a, names[i], mods[i], p) for i, p in hit.items())
        unknown.extend((a, names[i]) for i in left)
    out: list[Finding] = []
    cause = "the ignore list was changed after quantising, or copied from another run"
    if found:
        a, name, mod, pattern = found[0]
        out.append(RULE.finding(
            a.path, f"{src} ignores {len(found)} module(s) whose tensors are quantised (e.g. "
            f"{mod!r}, by {pattern!r}): compressed-tensors builds an ignored module "
            "unquantised, so a loader that follows the config does not load their quantised "
            "tensors", name if len(found) == 1 else None,
            {"field": "ignore", "declared": sorted({p for *_, p in found})[:50],
             "count": len(found), "tensors": [n for _, n, _, _ in found[:50]],
             "config": cfg_path, "likeliest_cause": cause}))
    if unknown:
        a, name = unknown[0]
        out.append(RULE.finding(
            a.path, f"{src}'s ignore list could not be matched against {len(unknown)} "
            f"quantised module(s) within the pattern_work budget (e.g. {name}; "
            "docs/reliability.md): grit cannot say whether a loader that follows the config "
            "loads them", name if len(unknown) == 1 else None,
            {"field": "ignore", "count": len(unknown),
             "tensors": [n for _, n in unknown[:50]], "config": cfg_path,
             "budget": "pattern_work"}))
    return out


def _public(dec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in dec.items() if k not in ("raw", "all")}
