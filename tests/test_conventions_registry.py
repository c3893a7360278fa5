"""The convention registry: one module per convention under
grit_scan/conventions/kinds/, discovered rather than listed, in an explicit
precedence; docs/conventions.md and the suffix table come from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from grit_scan.conventions import Convention, registered
from grit_scan.conventions.docs import outputs
from grit_scan.conventions.scales import UNQUANTISED_FLOATS
from grit_scan.conventions.suffixes import split_name, table
from grit_scan.parsers import safetensors_reader

ROOT = Path(__file__).resolve().parent.parent


def test_committed_conventions_md_is_the_generated_one() -> None:
    for path, text in outputs(ROOT).items():
        assert path.read_text() == text, (
            f"{path.name} is stale: run python -m grit_scan.conventions.docs")


def test_every_kind_module_registers_exactly_one_convention() -> None:
    here = ROOT / "grit_scan" / "conventions" / "kinds"
    on_disk = {p.stem for p in here.glob("*.py") if not p.stem.startswith("_")}
    by_module = {c.__module__.rsplit(".", 1)[1] for c in registered()}
    assert by_module == on_disk
    assert len(registered()) == len(on_disk)


def test_precedence_is_explicit_and_unique() -> None:
    precedences = [c.precedence for c in registered()]
    assert precedences == sorted(precedences)
    assert len(set(precedences)) == len(precedences)


@pytest.mark.parametrize("conv", registered(), ids=lambda c: c.name)
def test_each_convention_documents_itself(conv: type[Convention]) -> None:
    assert conv.producers and conv.versions_tested and conv.planes and conv.decode
    assert conv.conventions and conv.dtypes
    # representable with a grade, or not with a spec section and a reason
    assert conv.grade or conv.not_representable is not None
    if conv.not_representable is not None:
        clause, reason = conv.not_representable
        assert clause.startswith("§") and reason
    for suf in conv.suffixes:
        assert suf in table().suffixes


def test_a_second_convention_of_one_name_is_refused() -> None:
    first = registered()[0]
    with pytest.raises(TypeError, match="defined twice"):
        type("Again", (Convention,), {"name": first.name})


def test_suffixes_come_from_the_modules() -> None:
    """Each convention's own suffixes split its parts off their module; a
    suffix no convention declares does not."""
    assert split_name("m.weight_scale_inv") == ("m", ".weight_scale_inv")
    assert split_name("m.weight.quant_state.bitsandbytes__nf4") == (
        "m", ".weight.quant_state.bitsandbytes__nf4")
    assert split_name("m.experts.gate_up_proj_blocks") == ("m.experts.gate_up_proj", "_blocks")
    assert split_name("m.weight_unheard_of") == ("m.weight_unheard_of", "")


def test_unquantised_floats_agree_with_the_reader() -> None:
    assert UNQUANTISED_FLOATS == safetensors_reader.UNQUANTISED_FLOATS


# ---------------------------------------------------------------- registry guards

def test_a_convention_without_a_name_is_refused() -> None:
    before = registered()
    with pytest.raises(TypeError, match="needs a name"):
        type("Nameless", (Convention,), {})
    assert registered() == before


def test_a_name_defined_twice_is_refused() -> None:
    taken = registered()[0].name
    with pytest.raises(TypeError, match="defined twice"):
        type("Again", (Convention,), {"name": taken, "precedence": 10_000})
    assert [c.name for c in registered()].count(taken) == 1


def test_two_conventions_sharing_a_precedence_are_refused(monkeypatch) -> None:
    from grit_scan.conventions import base

    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    first = registered()[0]
    type("Clash", (Convention,), {"name": "clash-for-test", "precedence": first.precedence})
    base.registered.cache_clear()
    try:
        with pytest.raises(TypeError, match=f"share precedence {first.precedence}"):
            base.registered()
    finally:
        monkeypatch.undo()
        base.registered.cache_clear()
    assert "clash-for-test" not in {c.name for c in registered()}


@pytest.mark.parametrize("declared,known", [
    ({"method": "gptq"}, True),
    ({"method": "awq"}, True),
    ({"method": "compressed-tensors", "format": "float-quantized"}, True),
    ({"method": "no-such-method"}, False),
    ({}, False),
    ({"method": 3}, False),
    # MLX names itself in a raw field the normalised declaration drops
    ({"raw": {"mode": "affine"}}, True),
    ({"raw": {"mode": "no-such-mode"}}, False),
    ({"raw": "mode=affine"}, False),
])
def test_recognised_declarations(declared, known) -> None:
    """What docs/conventions.md's "declared as" column lists is recognised,
    and nothing else."""
    from grit_scan.conventions.base import recognised

    listed = (ROOT / "docs" / "conventions.md").read_text()
    for key, value in list(declared.items()) + list(
            declared.get("raw", {}).items() if isinstance(declared.get("raw"), dict) else []):
        if known and isinstance(value, str) and key != "format":
            name = {"method": "quant_method"}.get(key, key)
            assert f"{name}={value}" in listed  # the docs say so, independently
    assert recognised(declared) is known
