"""parsers/models._first_under against its definition: for each wanted
text t, the first position of a name that starts with t + "." (the
position an issue naming a module goes to)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan.parsers.models import _first_under

component = st.sampled_from(["", "a", "b", "model", "layers", "0", "1", "weight", "w.x"])
name = st.lists(component, min_size=1, max_size=5).map(".".join)


def definition(names: list[str], want: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in want:
        hits = [g for g, n in enumerate(names) if n.startswith(t + ".")]
        if hits:
            out[t] = hits[0]
    return out


@settings(max_examples=500, deadline=None)
@given(st.lists(name, max_size=30), st.sets(name, max_size=8))
def test_first_name_under_each_wanted_text(names: list[str], want: set[str]) -> None:
    want_ = definition(names, want)
    assert _first_under(names, want) == want_
    for chunk in (1, 3):  # names split a few at a time: the first is still the first
        assert _first_under(names, want, chunk) == want_


def test_a_model_s_modules() -> None:
    names = ["model.layers.0.mlp.down_proj.weight_packed", "model.layers.0.mlp.down_proj.weight",
             "model.layers.0.mlp.down_proj.weight.extra", "model.norm.weight",
             "model.layers.1.mlp.up_proj.weight_scale"]
    want = {"model.layers.0.mlp.down_proj", "model.layers.0.mlp.down_proj.weight",
            "model.layers.1.mlp.up_proj", "model.layers.2", "model", "model.norm.weight"}
    assert _first_under(names, want) == {"model.layers.0.mlp.down_proj": 0,
                                         "model.layers.0.mlp.down_proj.weight": 2,
                                         "model.layers.1.mlp.up_proj": 4, "model": 0}


many = st.lists(st.sampled_from(["a", "b", *(f"c{k}" for k in range(12))]), min_size=1,
                max_size=4).map(".".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(many, max_size=30), st.sets(many, min_size=9, max_size=30))
def test_many_last_components_wanted(names: list[str], want: set[str]) -> None:
    # past _MAX_PROBES distinct last components no substring pass is made:
    # every name is split, and the answer is the same
    assert _first_under(names, want) == definition(names, want)
    assert _first_under(names, want, 2) == definition(names, want)
