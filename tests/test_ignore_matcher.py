"""names.IgnoreMatcher: a config's ignore patterns against many module names,
as the loaders match them, within the pattern_work budget.

The references: ``names.pattern_matches`` (the transformers integrations'
matching, one name and one pattern at a time), compressed-tensors' own
``_match_name`` (compressed_tensors/utils/match.py, transcribed below), and
the budget's arithmetic as docs/reliability.md states it."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grit_scan import names
from grit_scan.names import IgnoreMatcher, pattern_matches


def _ct_match_name(name: str, target: str) -> bool:
    """compressed_tensors.utils.match._match_name (fused modules aside)."""
    if target.startswith("re:"):
        return re.match(target.removeprefix("re:"), name) is not None
    return target == name


PARTS = ["model", "layers", "0", "1", "mlp", "gate", "gate_proj", "self_attn", "q_proj",
         "lm_head", "visual", "experts", "a"]
MODULES = st.lists(st.lists(st.sampled_from(PARTS), min_size=1, max_size=6).map(".".join),
                   max_size=30)
PATTERNS = st.lists(st.sampled_from([
    "lm_head", "gate", "mlp.gate", "model.layers.0", "re:.*lm_head", "re:.*mlp.gate$",
    "re:model\\.layers\\.1\\..*", "re:.*visual.*", "model.layers.*.mlp.gate", "*proj",
    "re:.*a.*q_proj", "self_attn", "Linear", "re:(", "re:(a+)+b", "q_proj"]), max_size=6)


@given(PATTERNS, MODULES)
def test_loader_matching_is_pattern_matches(patterns: list[str], modules: list[str]) -> None:
    hit, unknown = IgnoreMatcher(patterns).match(modules)
    assert unknown == []
    for i, m in enumerate(modules):
        assert (i in hit) == any(pattern_matches(p, m) for p in patterns), (m, patterns)
        if i in hit:
            assert hit[i] in patterns and pattern_matches(hit[i], m)


@given(PATTERNS, MODULES)
def test_compressed_tensors_matching_is_its_own(patterns: list[str], modules: list[str]) -> None:
    usable = [p for p in patterns if names.pattern_refused(p) is None and p != "re:("]
    hit, unknown = IgnoreMatcher(patterns, compressed_tensors=True).match(modules)
    assert unknown == []
    for i, m in enumerate(modules):
        assert (i in hit) == any(_ct_match_name(m, p) for p in usable), (m, patterns)
        if i in hit:
            assert _ct_match_name(m, hit[i])


def test_a_class_name_or_a_component_is_not_a_compressed_tensors_match() -> None:
    mods = ["model.layers.0.mlp.down_proj", "lm_head", "model.lm_head"]
    hit, _ = IgnoreMatcher(["Linear", "mlp", "lm_head"], compressed_tensors=True).match(mods)
    assert hit == {1: "lm_head"}
    # the transformers integrations' matching takes a component or a dotted tail
    hit, _ = IgnoreMatcher(["mlp", "lm_head"]).match(mods)
    assert hit == {0: "mlp", 1: "lm_head", 2: "lm_head"}


@pytest.mark.parametrize("n,length", [(3000, 600), (1000, 253)])
def test_names_past_the_budget_are_said_not_matched(n: int, length: int) -> None:
    """A pattern with two unbounded repeats over names built to make it
    backtrack: the names the budget reaches are matched, in order, the rest
    are returned as not matched, and the count is the budget's arithmetic
    (the second size asks for less than twice the budget)."""
    mods = [f"m{i:04d}." + "a" * (length - 6) for i in range(n)]
    cost = 1 + (length * length >> 8)  # 1 + (length/16)^2 units a name
    budget = names.PATTERN_UNITS_FIXED + names.PATTERN_UNITS_PER_NAME * n
    reached = budget // cost
    assert 0 < reached < n
    hit, unknown = IgnoreMatcher(["re:.*a.*b"]).match(mods)
    assert hit == {} and unknown == list(range(reached, n))
    # a name that does match, within reach, is matched; past it, it is not known
    mods[0] = mods[0] + "b"
    mods[-1] = mods[-1] + "b"
    hit, unknown = IgnoreMatcher(["re:.*a.*b"]).match(mods)
    assert hit == {0: "re:.*a.*b"} and unknown[-1] == n - 1
    # a pattern after the one that ran out is not asked: the names that one
    # did not match stay open too
    hit, unknown = IgnoreMatcher(["re:.*a.*b", "re:m0001"]).match(mods)
    assert 1 in unknown and 1 not in hit
    # a linear pattern costs 1 + length/64 a name: all of them fit
    hit, unknown = IgnoreMatcher(["re:m.*b"]).match(mods)
    assert unknown == [] and set(hit) == {0, n - 1}


def test_plain_names_cost_no_budget() -> None:
    mods = [f"model.layers.{i}.mlp.gate" for i in range(50_000)]
    plain = [f"model.layers.{i}.mlp.gate" for i in range(0, 50_000, 2)]
    hit, unknown = IgnoreMatcher(plain, compressed_tensors=True).match(mods)
    assert unknown == [] and sorted(hit) == list(range(0, 50_000, 2))


def test_a_name_past_name_chars_matches_no_pattern() -> None:
    """As ``pattern_matches`` (the name_chars budget): a module name longer
    than MAX_NAME_CHARS is never matched, the same name a character
    shorter is."""
    for pats in (["re:.*lm_head"], ["*lm_head"], ["lm_head"]):
        for ct in (False, True):
            fits = "x" * (names.MAX_NAME_CHARS - len(".lm_head")) + ".lm_head"
            long = "x" + fits
            want = {0: pats[0]} if not ct or pats[0].startswith("re:") else {}
            assert IgnoreMatcher(pats, ct).match([fits]) == (want, []), (pats, ct)
            assert IgnoreMatcher(pats, ct).match([long]) == ({}, []), (pats, ct)
            assert not pattern_matches(pats[0], long)


def test_partial_quantization_says_which_weights_it_could_not_hold_to_the_ignore_list(
        tmp_path) -> None:
    """A config whose ignore pattern backtracks on the file's own names: the
    weights the budget reaches are judged (none is ignored, so each is
    partial_quantization), the others are named as not held to the list,
    a finding of the same kind, so the gate still fails; none is passed
    over in silence."""
    import json
    from pathlib import Path

    from grit_scan import scan
    from grit_scan.writers import Raw, write_safetensors

    n, body = 4000, 500
    mods = [f"m{i:05d}." + "a" * body + f".x{i:05d}_proj" for i in range(n)]
    tensors = {m + ".weight": Raw("BF16", [2, 2], bytes(8)) for m in mods}
    # one compressed-tensors pack-quantized module, so the file is quantised
    tensors["q.weight_packed"] = Raw("I32", [16, 2], bytes(128))
    tensors["q.weight_scale"] = Raw("BF16", [16, 1], bytes(32))
    tensors["q.weight_shape"] = Raw("I64", [2], bytes(16))
    write_safetensors(tmp_path / "model.safetensors", tensors)
    root = Path(__file__).resolve().parent.parent
    cfg = json.loads((root / "fixtures/producers/ct/w4a16-int/config.json").read_text())
    cfg["quantization_config"]["ignore"] = ["re:.*a.*b"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))

    cost = 1 + (len(mods[0]) ** 2 >> 8)
    reached = (names.PATTERN_UNITS_FIXED + names.PATTERN_UNITS_PER_NAME * n) // cost
    assert 0 < reached < n
    got = {f.message.split(" ")[0]: f for f in scan([str(tmp_path)]).findings
           if f.kind.value == "partial_quantization"}
    judged, unheld = got[str(reached)], got[str(n - reached)]
    assert judged.detail["count"] == reached and "are stored unquantised" in judged.message
    assert unheld.detail["count"] == n - reached and unheld.detail["budget"] == "pattern_work"
    assert "were not held to the declared ignore list" in unheld.message
    assert unheld.severity.value == "warning"
    assert unheld.detail["tensors"][0] == mods[reached] + ".weight"
