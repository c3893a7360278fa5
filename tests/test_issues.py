"""The issue variants (grit_scan/issues/): each situation is a frozen record
with typed fields, its message is its kind's template over those fields, and
each finding kind owns the variants it reports."""

import string
from pathlib import Path

import pytest

from grit_scan import issues
from grit_scan.artifact import Artifact, Format
from grit_scan.issues.file_unparseable import ParseFailed
from grit_scan.issues.grit_check import AwqGemvSizes, Fp8PerTensorSizes
from grit_scan.issues.not_representable import NotRepresentable
from grit_scan.issues.notes import UnusedNoScale
from grit_scan.issues.unsupported_convention import Unclaimed
from grit_scan.rules.codes import Kind
from grit_scan.rules.registry import modules as rule_modules

ROOT = Path(__file__).resolve().parent.parent
ALL = [(m, v) for m in issues.modules() for v in issues.variants(m)]


def test_every_template_names_only_fields_of_its_variant():
    assert len(ALL) >= 15
    for _, v in ALL:
        names = set(v.FIELDS) | {
            k for k in dir(v) if not k.startswith("_")}
        for _, field, _, _ in string.Formatter().parse(v.TEXT):
            if field is None:
                continue
            root = field.split(".")[0].split("[")[0]
            assert root in names, (v.__name__, field)


def test_each_kind_owns_its_variants_and_codes():
    kinds = {k.value for k in Kind}
    rule_names = {m.name for m in rule_modules()}
    seen: dict[issues.IssueCode, str] = {}
    for m in issues.modules():
        name = m.__name__.rpartition(".")[2]
        if name != "notes":
            assert m.KIND in kinds and name in rule_names, name
        for code in m.CODES:
            assert code not in seen, (code, name, seen.get(code))
            seen[code] = name
        for v in issues.variants(m):
            assert v.CODE in m.CODES, (name, v.__name__)
            fields = list(v.FIELDS)
            # a variant naming a tensor names it first: plans replay it (renamed)
            assert "tensor" not in fields or fields[0] == "tensor", v.__name__
    assert set(seen) == set(issues.IssueCode), set(issues.IssueCode) - set(seen)


def test_a_variant_is_frozen_and_its_message_is_rendered_from_its_fields():
    iss = Fp8PerTensorSizes("m.weight", "F32", 131072, 4, 131071, 4)
    with pytest.raises(AttributeError):
        iss.data_have = 131072  # type: ignore[misc]
    assert not hasattr(iss, "__dict__")  # slotted: no attribute beyond its fields
    # compared and hashed by its fields, never equal to another variant's
    assert iss == Fp8PerTensorSizes("m.weight", "F32", 131072, 4, 131071, 4)
    assert hash(iss) == hash(Fp8PerTensorSizes("m.weight", "F32", 131072, 4, 131071, 4))
    assert iss != Fp8PerTensorSizes("n.weight", "F32", 131072, 4, 131071, 4)
    assert iss.renamed("n.weight") == Fp8PerTensorSizes("n.weight", "F32", 131072, 4, 131071,
                                                         4)
    assert iss.code is issues.IssueCode.SIZE and iss.tensor == "m.weight"
    assert iss.message == ("m.weight: per-tensor FP8 holds one byte per element and one F32 "
                           "scale: 131,072 + 4 bytes; the file holds 131,071 + 4")


def test_a_variant_is_made_as_a_dataclass_is():
    """The record machinery (issues._RecordType): fields in declaration
    order after the extended variant's, defaults and default factories,
    keyword construction, and the errors a dataclass gives."""
    from grit_scan.issues.file_unparseable import ManifestDescInvalid, PathMissing, Skipped

    assert ManifestDescInvalid.FIELDS == ("tensor", "file", "error")  # _ManifestTensor's first
    one = Skipped(None, "p", "why")
    assert (one.kind, one.escape, one.more) == (None, False, {})
    assert one.more is not Skipped(None, "p", "why").more  # made anew for each
    assert Skipped(tensor=None, why="why", path="p") == one
    gone = PathMissing(None, "p", "no such file")
    assert PathMissing.FIELDS == ("tensor", "path", "error")  # ClassVars are not fields
    assert (gone.kind, gone.missing) == ("missing", True)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'error'"):
        PathMissing(None, "p")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 4 positional arguments but 5"):
        PathMissing(None, "p", "e", "more")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'path'"):
        PathMissing(None, "p", "e", path="q")  # type: ignore[misc]
    with pytest.raises(TypeError, match="no default but follows"):
        type("Bad", (issues.Issue,), {"__annotations__": {"a": "int", "b": "str"}, "a": 1})
    with pytest.raises(TypeError, match="from __future__ import annotations"):
        # Python 3.14 defers annotations: a body without their text is refused
        type("Later", (issues.Issue,), {"__annotate__": lambda fmt: {"a": int}})
    with pytest.raises(AttributeError):
        del gone.path
    # never equal to another variant with the same values
    other = type("Other", (issues.Issue,), {"__annotations__": {"tensor": "None", "path": "str",
                                                                   "error": "str"}})
    assert other(None, "p", "no such file") != gone and gone == PathMissing(None, "p",
                                                                            "no such file")
    assert repr(gone) == "PathMissing(tensor=None, path='p', error='no such file')"
    # each variant its own constructor, an extending one's not its base's
    kid = type("Kid", (PathMissing,), {"__annotations__": {"why": "str"}})
    assert kid(None, "p", "e", "w").why == "w" and PathMissing(None, "q", "e").path == "q"
    with pytest.raises(TypeError):
        kid(None, "p", "e")


def test_a_variant_survives_pickling():
    """``--jobs`` sends artifacts, and their issues, between processes."""
    import pickle

    iss = Fp8PerTensorSizes("m.weight", "F32", 131072, 4, 131071, 4)
    back = pickle.loads(pickle.dumps(iss))
    assert back == iss and type(back) is Fp8PerTensorSizes and back is not iss


def test_detail_is_the_named_fields_in_order():
    iss = AwqGemvSizes("m.weight", "m", 64, 128, 32, 4, (4096, 1024, 512), (4096, 1024, 256))
    assert list(iss.detail.items()) == [("expected", [4096, 1024, 512]),
                                        ("actual", [4096, 1024, 256])]
    assert "qzeros of 4,096, 1,024 and 512 bytes" in iss.message
    assert iss.message.endswith("the file holds 4,096, 1,024 and 256")
    many = Unclaimed("a.w", 120, tuple(f"t{i}" for i in range(50)))
    assert many.detail["count"] == 120 and len(many.detail["tensors"]) == 50
    assert many.message.startswith("120 tensor(s) look quantised but no convention claims "
                                   "them (e.g. a.w)")


def test_renamed_is_the_same_issue_for_another_tensor():
    facts = {"clause": "§3.7", "convention": "fp8-block", "group_shape": "2-D"}
    one = NotRepresentable("a.0.weight", "2-D blocks are not expressible", facts)
    two = one.renamed("a.1.weight")
    assert type(two) is NotRepresentable and two.tensor == "a.1.weight"
    assert two.message == "a.1.weight: 2-D blocks are not expressible"
    assert two.detail is one.detail  # shared by every module a plan replays
    assert two.clause == "§3.7" and two.convention == "fp8-block"
    assert one.others() == ("2-D blocks are not expressible", facts)
    note = UnusedNoScale("x.weight", "F8_E4M3")
    assert note.renamed("y.weight").message == (
        "F8_E4M3 tensor 'y.weight' has no scale tensor beside it; its quantisation is "
        "not described")


def test_an_artifact_holds_variants_of_every_kind():
    art = Artifact("f.safetensors", "/f.safetensors", Format.SAFETENSORS, 8, (),
                   issues=(UnusedNoScale("x", "F8_E5M2"),
                           ParseFailed(None, "header too small: the file is 3 bytes")))
    assert [i.code.value for i in art.issues] == ["note", "unparseable"]
    assert art.issues[1].message == "header too small: the file is 3 bytes"
    assert art.issues[1].tensor is None and dict(art.issues[1].detail) == {}


def test_no_issue_is_written_as_free_text():
    """Every issue a reader or a convention records is a variant of
    grit_scan/issues/: the draft artifacts have no free-text path."""
    from grit_scan.artifact import ArtifactDraft, IssueLog

    assert not hasattr(ArtifactDraft, "issue") and not hasattr(IssueLog, "issue")
    assert not hasattr(issues, "Reported")
    for path in (ROOT / "grit_scan").rglob("*.py"):
        text = path.read_text()
        assert ".issue(" not in text, path


def test_findings_docs_list_each_kinds_messages():
    text = (ROOT / "docs" / "findings.md").read_text()
    for _, v in ALL:
        assert f"- {v.__name__}: `{v.TEXT}`" in text, v.__name__


class _Refused(issues.Issue):
    """A not-representable variant whose detail is built on each access."""

    CODE = issues.IssueCode.NOT_REPRESENTABLE
    TEXT = "{tensor}: refused by {convention}"
    DETAIL = ("clause", "convention")
    tensor: str
    convention: str
    clause: str = "§3.7"


def test_not_representable_keys_each_issue_by_its_own_detail():
    """Two conventions whose details are made afresh on each access are
    counted apart (an id-keyed cache must keep what it keys alive)."""
    from grit_scan.rules.kinds import not_representable

    # a, b, b, a, a, b, b, a: a freed mapping's memory is taken by the one
    # after next, whose convention differs
    found = tuple(_Refused(f"m.{k}.weight", "conv-a" if k % 4 in (0, 3) else "conv-b")
                  for k in range(8))
    art = Artifact("f.safetensors", "/f.safetensors", Format.SAFETENSORS, 8, (), issues=found)
    findings = not_representable.check_file(art)
    got = {f.detail["convention"]: f.detail["count"] for f in findings}
    assert got == {"conv-a": 4, "conv-b": 4}
    # each group lists its own tensors, in the order the issues came
    assert {f.detail["convention"]: f.detail["tensors"] for f in findings} == {
        "conv-a": ["m.0.weight", "m.3.weight", "m.4.weight", "m.7.weight"],
        "conv-b": ["m.1.weight", "m.2.weight", "m.5.weight", "m.6.weight"]}
