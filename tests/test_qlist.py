"""Issue 15: an artifact's quantised tensors are an ``artifact.QList``.  A
convention's plan replayed on a module is kept as (plan, position) and made
into a QTensor when asked for; the rules and the JSON writer read names,
roles, groups and plane sizes from the columns.  Every column must say what
the QTensors it stands for say, and the QTensors what the headers say."""

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan import conventions, scan
from grit_scan.artifact import QList, QListBuilder, QTensor, Source, plane_bytes
from grit_scan.parsers.roles import role_function
from grit_scan.writers import Raw, write_safetensors

OUT, IN = 4, 32


def _fp8(m: str, rows: int = OUT) -> dict[str, Raw]:
    # compressed-tensors float-quantized, per channel: one F32 scale per row
    return {m + ".weight": Raw("F8_E4M3", [rows, IN], bytes(rows * IN)),
            m + ".weight_scale": Raw("F32", [rows, 1], bytes(4 * rows))}


def _header_names(path: Path) -> list[str]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return [k for k in json.loads(raw[8:8 + n]) if k != "__metadata__"]


def _sharded(root: Path) -> list[Path]:
    """Two shards of a llama model: two signatures (q_proj rows differ),
    one module straddling the shards."""
    (root / "config.json").write_text(json.dumps({"model_type": "llama"}))
    one, two = root / "model-00001-of-00002.safetensors", root / "model-00002-of-00002.safetensors"
    first: dict[str, Raw] = {}
    second: dict[str, Raw] = {}
    for k in range(8):
        part = first if k < 4 else second
        part |= _fp8(f"model.layers.{k}.mlp.down_proj")
        part |= _fp8(f"model.layers.{k}.self_attn.q_proj", rows=8)
    first["model.layers.8.mlp.down_proj.weight"] = Raw("F8_E4M3", [OUT, IN], bytes(OUT * IN))
    second["model.layers.8.mlp.down_proj.weight_scale"] = Raw("F32", [OUT, 1], bytes(4 * OUT))
    write_safetensors(one, first)
    write_safetensors(two, second)
    wm = {n: one.name for n in first} | {n: two.name for n in second}
    (root / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))
    return [one, two]


def _by_hand(monkeypatch: pytest.MonkeyPatch, root: Path) -> dict[str, list[QTensor]]:
    """Each shard's QTensors with no plan: every module through its convention."""
    with monkeypatch.context() as m:
        m.setattr(conventions.engine, "_learn", lambda *a: None)
        return {a.path: list(a.quantized) for a in scan([str(root)]).artifacts
                if a.quantized}


def test_columns_say_what_the_tensors_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shards = _sharded(tmp_path)
    by_hand = _by_hand(monkeypatch, tmp_path)
    arts = {a.path: a for a in scan([str(tmp_path)]).artifacts if a.quantized}
    assert sorted(arts) == sorted(by_hand) and len(arts) == 2
    for path, a in arts.items():
        qs = a.quantized
        assert qs.columnar  # the plans' tensors are kept as columns
        made = list(qs)
        assert made == by_hand[path]
        # each quantised tensor is named by its weight, as the header lists it
        header = _header_names(next(s for s in shards if s.name == Path(path).name))
        assert sorted(q.name for q in made) == sorted(n for n in header
                                                      if n.endswith(".weight"))
        assert qs.names() == [q.name for q in made]
        assert qs.roles() == [q.role for q in made]
        # llama's gguf names, with each module's own layer
        for q in made:
            layer = q.name.split(".")[2]
            kind = "ffn_down" if "down_proj" in q.name else "attn_q"
            assert q.role == f"blk.{layer}.{kind}.weight"
        assert qs.names_at([len(made) - 1, 0]) == [made[-1].name, made[0].name]
        assert [q for q in qs[1:3]] == made[1:3] and qs[-1] == made[-1]
        # groups: every position once, each group's tensors alike but in name
        seen: list[int] = []
        for rep, idx, _maker in qs.units():
            assert rep == made[idx[0]] and list(idx) == sorted(idx)
            assert {(made[i].shape, made[i].desc) for i in idx} == {(rep.shape, rep.desc)}
            seen.extend(idx)
        assert sorted(seen) == list(range(len(made)))
        # plane sizes: the right ones pass, one wrong plane is found
        for rep, idx, _maker in qs.units():
            sizes = plane_bytes(rep.planes)
            assert qs.size_mismatches(idx, sizes) == []
            wrong = [sizes[0] + 1, *sizes[1:]]
            assert qs.size_mismatches(idx, wrong) == list(idx)
        assert qs.declared() is None


def test_straddling_module_lives_with_its_data(tmp_path: Path) -> None:
    _sharded(tmp_path)
    arts = {Path(a.path).name: a for a in scan([str(tmp_path)]).artifacts}
    one = arts["model-00001-of-00002.safetensors"]
    q = next(q for q in one.quantized if q.name == "model.layers.8.mlp.down_proj.weight")
    assert q.planes is not None
    data, scale = q.planes[0], q.planes[1]
    assert data is not None and data.file is None  # its own shard
    assert scale is not None and scale.file is not None
    assert scale.file.endswith("model-00002-of-00002.safetensors")


def test_a_built_list_never_changes_and_behaves_as_a_list(tmp_path: Path) -> None:
    _sharded(tmp_path)
    a = next(a for a in scan([str(tmp_path)]).artifacts if a.quantized)
    qs = a.quantized
    made = list(qs)
    n = len(made)
    # a builder that extends from a built list leaves the list as it was
    more = QListBuilder(home=qs.home)
    more.extend(qs)
    more.pop()
    odd = QTensor("x.weight", "x.weight", (1,), Source.NONE)
    more.append(odd)
    assert more.last() is odd and more.names() == [*(q.name for q in made[:-1]), "x.weight"]
    grown = more.build()
    assert len(qs) == n and list(qs) == made
    assert grown[-1] is odd and list(grown) == [*made[:-1], odd]
    # a built list takes nothing more, through its builder either
    with pytest.raises(RuntimeError):
        more.append(odd)
    with pytest.raises(RuntimeError):
        more.pop()
    assert not hasattr(qs, "append") and not hasattr(qs, "__setitem__")
    # a slice is a new list of the same tensors
    assert list(qs[1:]) == made[1:] and len(qs) == n
    # a QList compares equal to the list of the same tensors
    assert QList([odd]) == [odd]
    both = QListBuilder()
    both.extend(QList([odd]))
    both.extend([odd])
    built = both.build()
    assert built == [odd, odd] and odd in built and built.count(odd) == 2


# --------------------------------------------------------------------- roles

_WORDS = st.sampled_from(["model", "layers", "mlp", "down_proj", "self_attn", "q_proj",
                          "experts", "gate_up_proj", "embed_tokens", "lm_head", "weight",
                          "bias", "norm", "x"])
_PART = st.one_of(_WORDS, st.integers(0, 120).map(str),
                  st.sampled_from(["01", "7b", "", "\n", "٣", "1٣", "é"]))
_NAME = st.lists(_PART, min_size=1, max_size=7).map(".".join)


@settings(max_examples=300, deadline=None)
@given(names=st.lists(_NAME, max_size=40),
       model_type=st.sampled_from(["llama", "gpt_oss", "qwen3", None, "nonesuch"]))
def test_many_roles_are_the_roles_one_at_a_time(names: list[str], model_type: str | None) -> None:
    """``RoleMap.many`` (one regex pass over all names) gives, name for
    name, what mapping each alone gives."""
    role = role_function(model_type, 32)
    again = role_function(model_type, 32)
    assert again.many(names) == [role(n) for n in names]


def test_many_roles_known_values() -> None:
    """gguf's llama names, with the layer of each module put back."""
    role = role_function("llama", 32)
    mods = [f"model.layers.{k}.mlp.down_proj" for k in (0, 17, 100_000)] + [
        "model.layers.3.self_attn.q_proj", "model.embed_tokens", "model.layers.x.mlp.up"]
    assert role.many(mods) == ["blk.0.ffn_down.weight", "blk.17.ffn_down.weight",
                               "blk.100000.ffn_down.weight", "blk.3.attn_q.weight",
                               "token_embd.weight", "model.layers.x.mlp.up.weight"]


class _Map:
    """A TensorNameMap-like map (``mapping``: name -> (tensor type, gguf
    name)) with what gguf's built maps lack but a map may hold: a name with
    two numbers, and a layer other than 0 mapped on its own."""

    mapping = {"m.0.k": (None, "blk.0.k"), "m.5.k": (None, "special"),
               "q.7.r.0.s": (None, "blk.0.y"), "a.0.b": (None, "blk.0.b")}


@settings(max_examples=300, deadline=None)
@given(names=st.lists(st.lists(st.sampled_from(["m", "k", "q", "r", "s", "a", "b", "0", "5",
                                                "7", "9", "12"]),
                               min_size=1, max_size=5).map(".".join), max_size=30))
def test_many_roles_on_a_map_with_odd_names(names: list[str]) -> None:
    from grit_scan.parsers.roles import _Mapped

    one = _Mapped(_Map())
    many = _Mapped(_Map())
    assert many.many(names) == [one(n) for n in names]
    assert many.many(names, ".weight") == [
        n + ".weight" if r is None else r for n, r in zip(names, map(one, names))]
    # what each alone gives: by the map's own entry, by the second number
    assert many.many(["m.5.k", "q.7.r.9.s", "m.3.k", "z.1"]) == [
        "special.weight", "blk.9.y.weight", "blk.3.k.weight", None]


_TEXT = st.text(alphabet=st.sampled_from(list("ab.\n0123٣x")), max_size=12)


@settings(max_examples=500, deadline=None)
@given(names=st.lists(_TEXT, max_size=20))
def test_first_numbers_is_re_search(names: list[str]) -> None:
    """The regex pass finds, for each name, the first match ``re.search``
    finds of roles._NUMBER (Arabic-Indic digits are ``\\d`` too), or says
    None when a name has none (or holds a line break)."""
    import re

    from grit_scan.parsers import roles

    number = re.compile(roles._NUMBER)
    found = [number.search(n) for n in names]
    want = None if None in found else (
        [n[:m.start()] + "0" + n[m.end():] for n, m in zip(names, found) if m],
        [m.group() for m in found if m], [n[m.end():] for n, m in zip(names, found) if m])
    fallback = roles._first_numbers(names)
    if any("\n" in n for n in names):
        assert fallback is None or want is not None
    else:
        got = None if fallback is None else tuple(map(list, fallback))
        assert got == (None if want is None else tuple(want))


def test_manifest_compares_replayed_tensors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """gid_disagreement against a grit-manifest.json reads the listed
    files' replayed tensors from the columns: a module whose scale dtype
    changed (another grade, so another gid) and one that is gone are
    reported, and no other."""
    from grit_scan.cli import main

    monkeypatch.chdir(tmp_path)
    root = tmp_path / "m"
    root.mkdir()
    shards = _sharded(root)
    assert main(["manifest", "--allow-findings", "m"]) == 0
    capsys.readouterr()
    # layer 5 of the second shard: its scale BF16 (grade s0 becomes bfloat16);
    # layer 6's q_proj: gone
    tensors: dict[str, Raw] = {}
    for k in range(4, 8):
        tensors |= _fp8(f"model.layers.{k}.mlp.down_proj")
        if k != 6:
            tensors |= _fp8(f"model.layers.{k}.self_attn.q_proj", rows=8)
    tensors["model.layers.5.mlp.down_proj.weight_scale"] = Raw("BF16", [OUT, 1], bytes(2 * OUT))
    tensors["model.layers.8.mlp.down_proj.weight_scale"] = Raw("F32", [OUT, 1], bytes(4 * OUT))
    write_safetensors(shards[1], tensors)
    index = json.loads((root / "model.safetensors.index.json").read_text())
    del index["weight_map"]["model.layers.6.self_attn.q_proj.weight"]
    del index["weight_map"]["model.layers.6.self_attn.q_proj.weight_scale"]
    (root / "model.safetensors.index.json").write_text(json.dumps(index))
    main(["scan", "--json", "grit-manifest.json"])
    doc = json.loads(capsys.readouterr().out)
    found = sorted((f["tensor"], f["message"].split(": ", 1)[1][:20])
                   for f in doc["findings"] if f["kind"] == "gid_disagreement")
    assert found == [("model.layers.5.mlp.down_proj.weight", "gid changed since gr"),
                     ("model.layers.6.self_attn.q_proj.weight", "in the manifest but ")]


@settings(max_examples=300, deadline=None)
@given(roles=st.lists(st.lists(st.sampled_from(["blk", "3", "17", "0", "attn_q", "weight", "",
                                                "\n", "x1", "٣"]),
                               min_size=1, max_size=5).map(".".join), max_size=20))
def test_families_are_each_family(roles: list[str]) -> None:
    """``support.families`` (one substitution over the roles' lines) is
    ``family`` of each role, line breaks and all."""
    from grit_scan.rules.support import families, family

    assert families(roles) == [family(r) for r in roles]
    assert families(["blk.3.attn_q.weight", "17.x", "a.b"]) == [
        "blk.*.attn_q.weight", "*.x", "a.b"]
