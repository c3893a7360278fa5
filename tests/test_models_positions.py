"""parsers/models._first_under against its definition: for each wanted
text t, the first position of a name that starts with t + "." (the
position an issue naming a module goes to)."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st

from grit_scan.parsers import models
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


deep = st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=1, max_size=9).map(".".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(deep, max_size=40), st.sets(deep, min_size=6, max_size=20))
def test_wanted_names_of_many_depths(names: list[str], want: set[str]) -> None:
    # past _MAX_DEPTHS distinct depths _first_under sorts the names instead
    # of a pass a depth (_first_in_order): the same answer
    assert _first_under(names, want) == definition(names, want)


def test_runs_across_many_blocks() -> None:
    # _first_in_order's range minima: runs of names under a wanted module
    # that span whole blocks of _BLOCK positions, and ones inside a block,
    # the names listed in an order unrelated to their sorted one
    rng = random.Random(20261205)
    names = [".".join(["m", *rng.choice(["a", "b", "a.b", "a.b.c", "c.d.e.f.g"]).split("."),
                       str(rng.randrange(50)), "w"]) for _ in range(3000)]
    want = {"m", "m.a", "m.a.b", "m.a.b.c", "m.c", "m.c.d.e.f", "m.a.7", "m.b.49", "m.x",
            "m.c.d.e.f.g.3"}
    assert len(set(map(lambda t: t.count("."), want))) > models._MAX_DEPTHS
    got = models._first_in_order(names, list(range(len(names))), want)
    assert got == definition(names, want)
    assert max(got.values()) > 2 * models._BLOCK  # runs reach past the first blocks
    # positions that are not the listing order (a filtered subset's)
    pos = sorted(rng.sample(range(10 * len(names)), len(names)))
    want_ = {t: pos[g] for t, g in definition(names, want).items()}
    assert models._first_in_order(names, pos, want) == want_


slashed = st.lists(st.sampled_from(["a", "b", "a/b", "", "0", "/"]), min_size=1,
                   max_size=6).map(".".join)


@settings(max_examples=500, deadline=None)
# the least at the first position after the whole blocks (the tail's first)
@example(named=[("a.1", 5), ("a.2", 5), ("a.3", 0)], want={"a"}, block=2)
# the least at the run's first, inside a block, before a whole one
@example(named=[("0.x", 9), ("a.1", 0), ("a.2", 5), ("a.3", 5)], want={"a"}, block=2)
@given(st.lists(st.tuples(slashed, st.integers(0, 10_000)), max_size=60),
       st.sets(slashed, max_size=12), st.integers(1, 5))
def test_first_in_order_is_the_least_position_under_each_wanted_name(
        named: list[tuple[str, int]], want: set[str], block: int) -> None:
    # small blocks, so that runs start and end inside blocks, on their
    # edges, and span whole ones; positions in any order (the least wins);
    # names holding "/" sort right after a wanted name and its dot
    names, pos = [n for n, _ in named], [p for _, p in named]
    least = {t: min(p for n, p in named if n.startswith(t + "."))
             for t in want if any(n.startswith(t + ".") for n in names)}
    saved = models._BLOCK
    models._BLOCK = block
    try:
        assert models._first_in_order(names, pos, want) == least
    finally:
        models._BLOCK = saved
