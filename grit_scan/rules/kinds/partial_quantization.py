"""partial_quantization: linear weights that the declared scope covers but
that are stored unquantised, beside others that are quantised."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import compress

from ...artifact import Artifact, TensorTable
from ...names import IgnoreMatcher
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule

RULE = Rule(
    code="GRIT308",
    kind=Kind.PARTIAL_QUANTIZATION,
    severity=Severity.WARNING,
    summary='only part of the declared scope is quantised',
    doc="""\
**Warning.** Linear weights that the declared quantisation covers (not in
its ignore / modules_to_not_convert / exclude_modules patterns) are stored
unquantised beside quantised ones — an ignore list not respected, or a
conversion that stopped part way (sglang#32736, vllm#27608). Weights
that the patterns could not be matched against within the `pattern_work`
budget (a `re:` pattern that backtracks on the file's own names) are named
in a finding of their own: grit cannot say whether the declared
quantisation covers them, and says so instead of passing them over.

Example (`fixtures/broken/partial-quantization`):

    1 linear weight(s) the declared quantisation covers are stored unquantised (e.g. model.layers.0.self_attn.o_proj.weight)

Fix: quantise them, or add them to the ignore list.
""",
)
RULES = (RULE,)

# compiled in check_file, where a quantised file is checked (re's cache), not
# at import: every scan imports this module for its RULE (start-up, docs/performance.md)
_LINEAR = r"(proj|fc\d?|dense|linear|query|key|value|experts|wqkv|qkv|w[123])$"
_NEVER = r"(embed|norm|lm_head|wte|wpe|router|gate\.weight$)"


_FLOATS = frozenset(("F32", "F16", "BF16"))  # the dtypes of an unquantised linear weight


def _float_weights(a: Artifact) -> Iterable[str]:
    """The names of ``a``'s rank-2 tensors of a float dtype whose names end
    in ``.weight``: the float ones picked with a C-level map (most tensors
    of a quantised file are not float), then only those asked the rest."""
    floats = list(map(_FLOATS.__contains__, a.tensor_dtypes()))
    ranks = (a.tensors.ranks if isinstance(a.tensors, TensorTable)
             else [len(t.shape) for t in a.tensors])
    return (name for name, rank in zip(compress(a.tensor_names(), floats),
                                       compress(ranks, floats))
            if rank == 2 and name.endswith(".weight"))


def check_file(a: Artifact) -> list[Finding]:
    if not a.format.hf_named or not a.quantized:
        return []
    dec = a.quantized.declared()
    if not dec or _FLOATS.isdisjoint(a.tensor_dtypes()):
        return []  # (no float tensor: nothing is a candidate, asked at C speed)
    # here: the conventions' suffix table, which a scan of floats never needs (start-up)
    from ...conventions import split_name

    never, linear = re.compile(_NEVER), re.compile(_LINEAR)
    quantised_mods: set[str] | None = None  # built for the first candidate (docs/performance.md)
    names: list[str] = []
    mods: list[str] = []
    # the cheap column tests first: a name split_name gives the suffix .weight ends in it
    for name in _float_weights(a):
        mod, suf = split_name(name)
        if suf != ".weight":
            continue
        if quantised_mods is None:
            quantised_mods = {split_name(n)[0] for n in a.quantized.names()}
        if mod in quantised_mods or never.search(name) or not linear.search(mod):
            continue
        names.append(name)
        mods.append(mod)
    if not names:
        return []
    # the candidates the declared ignore list does not name, all at once
    # (the pattern_work budget: names.IgnoreMatcher)
    ignored, unknown = IgnoreMatcher(dec.get("ignore", [])).match(mods)
    skip = set(unknown)
    missing = [n for i, n in enumerate(names) if i not in ignored and i not in skip]
    out = []
    if missing:
        out.append(RULE.finding(
            a.path, f"{len(missing)} linear weight(s) the declared quantisation covers are "
            f"stored unquantised (e.g. {missing[0]}) beside {len(a.quantized)} quantised ones: "
            "an ignore list not respected, or a conversion that stopped part way",
            missing[0] if len(missing) == 1 else None,
            {"count": len(missing), "tensors": missing[:50],
             "declared_ignore": dec.get("ignore", [])}))
    if unknown:
        first = names[unknown[0]]
        out.append(RULE.finding(
            a.path, f"{len(unknown)} linear weight(s) stored unquantised (e.g. {first}) beside "
            f"{len(a.quantized)} quantised ones were not held to the declared ignore list: "
            "matching its patterns against them would pass the pattern_work budget "
            "(docs/reliability.md), so grit cannot say whether the declared quantisation "
            "covers them", first if len(unknown) == 1 else None,
            {"count": len(unknown), "tensors": [names[i] for i in unknown[:50]],
             "declared_ignore": dec.get("ignore", []), "budget": "pattern_work"}))
    return out
