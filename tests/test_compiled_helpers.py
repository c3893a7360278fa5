"""Issue 15: the compiled helpers of a scan.  ``_fnv.replay_modules`` and
``first_sights`` (no longer called: the conventions run their replay loop
and signature numbers in Python) are held to their contracts; ``distribute`` groups a model's
replayed tensors by the shard holding their data (parsers/models.py), and
``positions_of`` selects partial_quantization's candidates.  Each must do
exactly what the Python it stands in for does: the references here are
their contracts written out in Python, independently of the code under
test, and whole scans are held to the same scans without the helpers."""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

try:
    from grit_scan.codec import _fnv as compiled
except ImportError:  # pragma: no cover - depends on the build
    compiled = None
needs_c = pytest.mark.skipif(compiled is None or not hasattr(compiled, "replay_modules"),
                             reason="the compiled helper is not built")

Key = tuple[tuple[str, ...], tuple[int, ...]]


def reference(order: list[Any], sig: list[int], fast: dict[Key, Any],
              used: bytearray) -> tuple[list[int], list[int]]:
    """The documented contract: take modules off the end of ``order`` while
    the last one's signature is in ``fast`` and its parts are one after the
    other."""
    kinds: list[int] = []
    vals: list[int] = []
    while order:
        mod, flat = order[-1]
        sufs, gs = tuple(flat[0::2]), tuple(flat[1::2])
        hit = fast.get((sufs, tuple(sig[g] for g in gs)))
        if hit is None or gs[-1] - gs[0] != len(gs) - 1:
            break
        order.pop()
        for k in hit[1]:
            used[gs[0] + k] = 1
        kinds.append(hit[0])
        vals.append(gs[0])
    return kinds, vals


SUFS = [".weight", ".weight_scale", ".bias"]


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Any], list[int], dict[Key, Any], int]:
    n = draw(st.integers(1, 40))
    sig = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    order: list[Any] = []
    for m in range(draw(st.integers(0, 12))):
        parts = draw(st.integers(1, 3))
        start = draw(st.integers(0, n - 1))
        contiguous = draw(st.booleans())
        gs = ([min(start + j, n - 1) for j in range(parts)] if contiguous
              else draw(st.lists(st.integers(0, n - 1), min_size=parts, max_size=parts)))
        sufs = draw(st.lists(st.sampled_from(SUFS), min_size=parts, max_size=parts))
        # some suffixes equal to, not the same objects as, the others'
        # (the helper caches signatures by identity)
        sufs = [("".join(list(x)) if draw(st.booleans()) else x) for x in sufs]
        order.append((f"m{m}", tuple(x for pair in zip(sufs, gs) for x in pair)))
    # every module's signature may be known, with parts consumed that fit
    fast: dict[Key, Any] = {}
    for _mod, flat in order:
        if draw(st.booleans()):
            sufs, gs = tuple(flat[0::2]), tuple(flat[1::2])
            key = (sufs, tuple(sig[g] for g in gs))
            room = n - gs[0]
            fast[key] = (draw(st.integers(0, 5)),
                         tuple(draw(st.lists(st.integers(0, max(0, min(len(gs), room) - 1)),
                                             max_size=len(gs), unique=True))))
    return order, sig, fast, n


@needs_c
@settings(max_examples=400, deadline=None)
@given(case=cases())
def test_replay_modules_is_the_contract(case: tuple[list[Any], list[int], dict[Key, Any], int]
                                        ) -> None:
    order, sig, fast, n = case
    want_order, want_used = list(order), bytearray(n)
    want = reference(want_order, sig, fast, want_used)
    got_order, got_used = list(order), bytearray(n)
    kb, vb = compiled.replay_modules(got_order, array("q", sig), fast, got_used)
    assert (list(array("i", kb)), list(array("q", vb))) == want
    assert got_order == want_order and got_used == want_used


@needs_c
def test_replay_modules_leaves_odd_entries_to_python() -> None:
    sig = array("q", [0, 1, 0, 1])
    fast = {((".weight", ".weight_scale"), (0, 1)): (3, (0, 1))}
    good = ("a", (".weight", 0, ".weight_scale", 1))
    for odd in [("b", [".weight", 2, ".weight_scale", 3]),  # not a tuple
                ("b", (".weight", 2, ".weight_scale")),  # odd length
                ("b", (".weight", 2 ** 70, ".weight_scale", 3)),  # no such position
                ("b", (".weight", -1, ".weight_scale", 0)),
                ("b", (".weight", 2.0, ".weight_scale", 3)),
                "b"]:
        order: list[Any] = [odd, good]
        used = bytearray(4)
        kb, vb = compiled.replay_modules(order, sig, fast, used)
        assert list(array("i", kb)) == [3] and list(array("q", vb)) == [0]
        assert order == [odd] and used == bytearray([1, 1, 0, 0])
    # a consumed part past the end of ``used``: left, nothing marked
    order = [good]
    used = bytearray(1)
    assert compiled.replay_modules(order, sig, {**fast, next(iter(fast)): (3, (0, 1))},
                                   used) == (b"", b"")
    assert order == [good] and used == bytearray(1)


# --- _fnv.distribute: parsers/models.py's grouping of replays by shard ------

needs_distribute = pytest.mark.skipif(compiled is None or not hasattr(compiled, "distribute"),
                                      reason="the compiled helper is not built")


@st.composite
def spreads(draw: st.DrawFn) -> tuple[list[int], list[int], list[int], list[int], str]:
    n_pos = draw(st.integers(1, 30))
    code = draw(st.sampled_from(["H", "q"]))
    run = draw(st.lists(st.integers(0, 6), min_size=n_pos, max_size=n_pos))
    parts = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    n = draw(st.integers(0, 25))
    kinds = draw(st.lists(st.integers(0, len(parts) - 1), min_size=n, max_size=n))
    vals = [draw(st.integers(0, max(0, n_pos - 1 - parts[k]))) for k in kinds]
    return kinds, vals, parts, run, code


@needs_distribute
@settings(max_examples=400, deadline=None)
@given(case=spreads(), spoil=st.sampled_from(["", "kind", "val", "neg"]))
def test_distribute_is_a_stable_grouping_by_file(
        case: tuple[list[int], list[int], list[int], list[int], str], spoil: str) -> None:
    kinds, vals, parts, run, code = case
    if spoil and kinds:
        if spoil == "kind":
            kinds = [len(parts)] + kinds[1:]
        elif spoil == "val":
            vals = [len(run)] + vals[1:]
        else:
            vals = [-1] + vals[1:]
    got = compiled.distribute(array("i", kinds), array("q", vals), array("q", parts),
                              array(code, run), array(code).itemsize)
    if any(k >= len(parts) for k in kinds) or any(
            g < 0 or g + parts[k] >= len(run) for k, g in zip(kinds, vals)):
        assert got is None
        return
    want: dict[int, tuple[list[int], list[int]]] = {}
    for k, g in zip(kinds, vals):
        ks, vs = want.setdefault(run[g + parts[k]], ([], []))
        ks.append(k)
        vs.append(g)
    assert [(f, list(array("i", kb)), list(array("q", vb))) for f, kb, vb in got] == [
        (f, *want[f]) for f in sorted(want)]


def test_distribute_with_and_without_the_helper(tmp_path: Path, monkeypatch) -> None:
    """A sharded model whose modules sit in three shards, two straddling two
    (weight last in one shard, scale first in the next): each shard gets the
    same replayed tensors, in the same order, either way."""
    import json

    from grit_scan import scan
    from grit_scan.parsers import models
    from grit_scan.writers import Raw, write_safetensors

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    wm: dict[str, str] = {}
    for k in range(3):
        name = f"model-0000{k + 1}-of-00003.safetensors"
        tensors = {}
        if k:  # first, the previous shard's last module's scale (parts one after the other)
            tensors[f"model.layers.{4 * k - 1}.self_attn.q_proj.weight_scale"] = Raw(
                "F32", [4, 1], bytes(16))
        for layer in range(4 * k, 4 * k + 4):
            for proj in ("mlp.down_proj", "self_attn.q_proj"):
                m = f"model.layers.{layer}.{proj}"
                tensors[m + ".weight"] = Raw("F8_E4M3", [4, 32], bytes(128))
                if not (layer == 4 * k + 3 and proj == "self_attn.q_proj" and k < 2):
                    tensors[m + ".weight_scale"] = Raw("F32", [4, 1], bytes(16))
        write_safetensors(tmp_path / name, tensors)
        wm |= {n: name for n in tensors}
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))

    def shards() -> dict[str, tuple[list[str], Any]]:
        out = {}
        for a in scan([str(tmp_path)]).artifacts:
            if a.quantized:
                got = a.quantized.columns()
                assert got is not None
                out[Path(a.path).name] = (a.quantized.names(), (list(got[0]), list(got[1])))
        return out

    with_c = shards()
    monkeypatch.setattr(models, "_compiled", None)
    without = shards()
    assert with_c == without
    assert sorted(len(v[0]) for v in with_c.values()) == [8, 8, 8]


# --- _fnv.first_sights: conventions.infer's signature numbers ---------------

@needs_c
@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(["F32", "BF16", "U8"]),
                                st.lists(st.integers(0, 3), max_size=3).map(tuple),
                                st.booleans()),
                      max_size=60))
def test_first_sights_are_the_first_positions_of_equal_pairs(
        pairs: list[tuple[str, tuple[int, ...], bool]]) -> None:
    # equal shapes as one object or as copies (a cache by identity must not
    # tell them apart)
    dtypes = [d if same else "".join(list(d)) for d, _s, same in pairs]
    shapes = [s if same else tuple(list(s)) for _d, s, same in pairs]
    want = [next(j for j in range(len(pairs)) if (dtypes[j], shapes[j]) == (dtypes[i], shapes[i]))
            for i in range(len(pairs))]
    assert list(array("q", compiled.first_sights(dtypes, shapes))) == want


@needs_c
def test_first_sights_leaves_odd_columns_to_python() -> None:
    assert compiled.first_sights(["F32"], [(1,), (2,)]) is None  # lengths differ
    assert compiled.first_sights(["F32"], [[1]]) is None  # not a tuple
    assert compiled.first_sights([b"F32"], [(1,)]) is None  # not a str
    assert compiled.first_sights(["F32"], [(1.0,)]) is None  # not an int extent


# --- _fnv.positions_of: partial_quantization's candidates ----------------------

@pytest.mark.skipif(compiled is None or not hasattr(compiled, "positions_of"),
                    reason="the compiled helper is not built")
@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a.weight", "b.weight_scale", "c.weight",
                                                "weight", "d.bias", "é.weight", ""]),
                               st.sampled_from(["F32", "BF16", "F8_E4M3", "U8"]),
                               st.integers(0, 3), st.booleans()),
                     max_size=40))
def test_positions_of_is_the_three_tests(rows: list[tuple[str, str, int, bool]]) -> None:
    names = [n for n, _d, _r, _c in rows]
    # dtypes equal to, not always the same objects as, the set's members
    dtypes = [d if same else "".join(list(d)) for _n, d, _r, same in rows]
    ranks = array("B", [r for _n, _d, r, _c in rows])
    floats = frozenset(("F32", "BF16"))
    want = [i for i, (n, d, r) in enumerate(zip(names, dtypes, ranks))
            if r == 2 and d in floats and n.endswith(".weight")]
    assert compiled.positions_of(names, dtypes, ranks, floats, ".weight", 2) == want
    assert compiled.positions_of(names, dtypes[:-1] + [b"x"] if dtypes else [b"x"], ranks,
                                 floats, ".weight", 2) is None


def test_partial_quantization_with_and_without_the_helper(monkeypatch) -> None:
    """The fixture's finding, with the compiled candidates and without."""
    from grit_scan import scan
    from grit_scan.rules.kinds import partial_quantization

    root = Path(__file__).resolve().parent.parent / "fixtures" / "broken" / "partial-quantization"

    def found() -> list[tuple[str, str, Any]]:
        return [(f.path, f.message, f.detail) for f in scan([str(root)]).findings
                if f.kind == "partial_quantization"]

    with_c = found()
    monkeypatch.setattr(partial_quantization, "_positions_of", None)
    assert found() == with_c and len(with_c) == 1
