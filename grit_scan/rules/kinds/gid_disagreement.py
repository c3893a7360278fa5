"""gid_disagreement: the same operand described differently by two files,
tools or revisions, with the field-by-field explain diff (§7.5, §13.2); and
a grit-manifest.json checked against what is on disk now.

Tensors are grouped by role, then by gid (hashing, never pairwise), and
roles that disagree in the same way between the same two files are reported
together with one diff.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import compress, repeat
from operator import ne
from typing import TYPE_CHECKING

from ...artifact import Artifact, Format, QList, QTensor, Recorded, ScanInput, Source
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import (
    Kin,
    checkpoint_key,
    formats,
    group_shape,
    kins,
    model_scheme,
    models,
    per_tensor,
    refused_schemes,
)

# The codec loads where a described tensor is compared: every scan imports
# this module for its RULE (start-up, docs/performance.md); the explain codec only when
# two descriptions are.
if TYPE_CHECKING:
    from ...codec.explain import Explanation, Operand
    from ...codec.grade import Grade

RULE = Rule(
    code="GRIT201",
    kind=Kind.GID_DISAGREEMENT,
    severity=Severity.DISAGREEMENT,
    summary='the same operand carries different gids in different files, tools or revisions',
    doc="""\
**Disagreement.** The same operand — matched by role across files, tools or
revisions (GGUF and Hugging Face names map to one role) — carries different
gids, or a tensor's gid changed since a grit-manifest.json recorded it. The
finding carries the field-by-field explain diff.

Only models that ought to agree are compared, and the finding says why
(`compared_as`) and names the scheme both hold (`scheme`): revisions of one
Hugging Face repository holding the same scheme, or, outside a cache,
models holding the same scheme. A scheme is the element and scale formats,
the group shape (per-tensor, per-channel, groups along one axis, a
producer's 2-D blocks), the zero point and the sparsity; the group size
within a shape is what may disagree (an HF MXFP4 export and its GGUF
conversion). Models of different schemes (per-channel beside 128x128 block
FP8, W8A8 beside W4AFP8, a `-GGUF` repository's Q4_K_M and Q8_0) and
unrelated repositories are never compared; the `quantizations` kind lists
the former ([spec-notes.md](spec-notes.md#models-not-files-issue-12)).

One exception, for revisions of one Hugging Face repository only: an operand
(the same role, element and scale formats) whose group shape changed between
two revisions — per-tensor to per-channel, per-channel to 2-D blocks, groups
to per-channel — is a disagreement, even where one side is not representable
(it has a scheme, not a gid). The message names both group shapes, both
revisions, a count and the first few operands (`compared_as`: revisions of
one repository whose operands changed group shape; `group_shapes`,
`revisions`). Revisions whose formats differ stay listed by `quantizations`,
and folders side by side keep the rule above
([spec-notes.md](spec-notes.md#per-tensor-fp8-scales-not-representable)).

Example (`fixtures/broken/tool-disagreement`):

    1 operand(s) differ from .../gguf/model.gguf (e.g. blk.0.attn_q.weight) in k0 (64 vs 32);
    both e2m1/e8m0 groups (the same tensors)

Example (`fixtures/producers/hf-cache-fp8-scheme`):

    14 operand(s) changed group shape between revisions of grit/fp8-scheme: per-channel in
    01454a32..., per-tensor in feaac60f... (e.g. blk.0.ffn_down.weight, ...); both e4m3/bfloat16

Fix: `grit explain FILE::TENSOR FILE::TENSOR` shows which tool wrote what
([triage.md](triage.md)). A verdict of "decode-equivalent through a
supersedes edge" means the bytes are interchangeable.
""",
)
RULES = (RULE,)


def check_scan(scan: ScanInput) -> list[Finding]:
    return (gid_disagreement(scan.artifacts) + group_shape_changes(scan.artifacts)
            + manifest_changes(scan.artifacts))


def _operand(a: Artifact, q: QTensor, grade: Grade | None = None) -> Operand:
    from ...codec.explain import Operand

    assert q.desc is not None
    return Operand(f"{a.path}::{q.name}", q.desc, grade or q.grade, tuple(q.shape),
                   layouts=q.layouts)


def _gid(q: QTensor) -> bytes | None:
    if q.desc is None or q.grade is None:
        return None
    from ...codec.fingerprint import gid

    return gid(q.grade, q.desc, q.shape)


Member = tuple[Artifact, QTensor]


def comparison_classes(arts: Sequence[Artifact]) -> dict[tuple[str, ...], list[Artifact]]:
    """Which files ought to agree, and why (docs/findings.md): models that
    hold the same quantisation scheme (``support.scheme``: element and scale
    formats, group shape, zero point, sparsity), and

    * in a Hugging Face cache, only revisions of one repository (never two
      unrelated repositories);
    * elsewhere, models of the same tensors (an HF export and its GGUF
      conversion, two tools' MXFP4).

    Models holding different schemes (per-channel beside 128x128 block FP8,
    W8A8 beside W4AFP8, a -GGUF repository's Q4_K_M beside its Q8_0) are
    never compared; the quantizations kind lists them."""
    return _classes(models(arts))


def _classes(ms: dict[str, list[Artifact]]) -> dict[tuple[str, ...], list[Artifact]]:
    """``comparison_classes`` of the models ``support.models`` gives."""
    out: dict[tuple[str, ...], list[Artifact]] = defaultdict(list)
    for members in ms.values():
        sch = model_scheme(members)
        if sch is None:
            continue
        repo = members[0].repo
        key = ("repo", repo, sch) if repo else ("scheme", sch)
        out[key].extend(members)
    return out


def _why(key: tuple[str, ...]) -> str:
    if key[0] == "repo":
        return f"revisions of one repository ({key[1]}) holding the same scheme ({key[2]})"
    return f"models holding the same scheme ({key[1]}) of the same tensors"


def gid_disagreement(arts: Sequence[Artifact]) -> list[Finding]:
    out: list[Finding] = []
    ms = models(arts)
    if len(ms) < 2:
        # one model: no class holds two (``_disagreements``), so no model's
        # scheme need be known (a refused tensor's is read from its issue)
        return out
    for key, members in sorted(_classes(ms).items()):
        out.extend(_disagreements(members, _why(key), key[-1],
                                  f"revisions of {key[1]}" if key[0] == "repo"
                                  else "the same tensors"))
    return out


def _compared(kin: Kin) -> tuple[bytes, str] | None:
    if kin.rep.source == Source.MANIFEST:
        return None
    g, fmts = _gid(kin.rep), formats(kin.rep)
    return (g, fmts) if g is not None and fmts is not None else None


def _disagreements(arts: Sequence[Artifact], why: str, sch: str, short: str
                   ) -> list[Finding]:
    if len({checkpoint_key(a) for a in arts}) < 2:
        # one model: a role it repeats is an index matter (below), so there is
        # nothing to compare and no tensor need be visited (docs/performance.md)
        return []
    # a role is compared between tensors of the same formats only: a tensor
    # of other formats (a recipe's Q6_K output.weight beside Q4_K) is
    # another quantisation
    by_role: dict[tuple[str, str], dict[bytes, list[Member]]] = defaultdict(
        lambda: defaultdict(list))
    for a in arts:
        # a gid and a scheme per kin, not per tensor (docs/performance.md); the tensors in their order
        for q, g in zip(a.quantized, per_tensor(a, _compared)):
            if g is not None:
                by_role[(q.role, g[1])][g[0]].append((a, q))
    patterns: dict[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]],
                   list[tuple[str, list[Member], list[Member]]]] = defaultdict(list)
    for (role, _sch), gids in by_role.items():
        if len(gids) < 2:
            continue
        # the most common description first: the odd one out is the news
        groups = sorted(gids.values(), key=lambda v: (-len(v), v[0][0].path, v[0][1].name))
        (a1, q1), (a2, q2) = groups[0][0], groups[1][0]
        if checkpoint_key(a1) == checkpoint_key(a2):
            continue  # one model repeating a role is an index matter, not a tool disagreement
        from ...codec.explain import explain

        ex = explain(_operand(a1, q1), _operand(a2, q2))
        key = (tuple(sorted({a.path for a, _ in groups[0]})),
               tuple(sorted({a.path for g in groups[1:] for a, _ in g})), tuple(ex.differences))
        patterns[key].append((role, groups[0], groups[1]))
    out = []
    for (side_a, side_b, diffs), items in sorted(patterns.items(), key=lambda kv: kv[0][:2]):
        role, ga, gb = items[0]
        (a1, q1), (a2, q2) = ga[0], gb[0]
        import shlex

        from ...codec.explain import explain

        ex = explain(_operand(a1, q1), _operand(a2, q2))
        roles = [r for r, *_ in items]

        def names(paths: tuple[str, ...]) -> str:
            return paths[0] + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")

        # the finding is on the first of side_b: the message names the other
        # side, what differs, and why the two were compared (their scheme)
        also = f" here and in {names(side_b[1:])}" if len(side_b) > 1 else ""
        msg = (f"{len(roles)} operand(s){also} differ from {names(side_a)} (e.g. {role}) "
               f"{_verdict(ex)}; both {sch} ({short})")
        out.append(RULE.finding(
            a2.path, msg, q2.name,
            {"roles": roles[:50], "count": len(roles), "paths": list(side_b),
             "agreeing_paths": list(side_a), "other_tensor": q1.name, "compared_as": why,
             "scheme": sch,
             "differences": list(diffs), "explain": ex.to_json(),
             "likeliest_cause": _cause(diffs, ex.decode_equivalent),
             "suggested_fix": shlex.join(["grit", "explain", f"{a1.path}::{q1.name}",
                                          f"{a2.path}::{q2.name}"])}))
    return out


# an operand of one model: (its group shape, the file and tensor, whether it has a gid)
_Op = tuple[str, Artifact, str, bool]
_SHOWN = 3  # operands a group-shape message names; the detail has up to 50


def _operands(members: Sequence[Artifact]) -> dict[tuple[str, str], _Op]:
    """(role, formats) -> the group shape of the model's first tensor of
    that role and formats, described or refused with a recorded scheme.  A
    model holding groups along one axis counts its per-channel tensors as
    groups too (a run that happens to be a short row's length), as
    ``support.scheme_parts`` does."""
    found: dict[tuple[str, str], _Op] = {}
    for a in members:
        qs = a.quantized
        if a.format is Format.MANIFEST or not qs:
            continue
        names: list[str] | None = None
        roles: list[str] | None = None
        for kin in kins(a):
            f = formats(kin.rep)
            if f is None or kin.rep.source == Source.MANIFEST:
                continue
            if names is None:
                names, roles = _names_roles(qs)
            assert roles is not None
            g = group_shape(kin.rep)
            has_gid = _gid(kin.rep) is not None
            for i in kin.idx:
                found.setdefault((roles[i], f), (g, a, names[i], has_gid))
        refused = refused_schemes(a)
        if refused:
            if names is None:
                names, roles = _names_roles(qs)
            assert roles is not None
            for i, n in enumerate(names):
                got = refused.get(n)
                if got is not None:
                    found.setdefault((roles[i], got[0]), (got[1], a, n, False))
    if any(op[0] == "groups" for op in found.values()):
        found = {k: ("groups", a, n, g) if shape == "per-channel" else (shape, a, n, g)
                 for k, (shape, a, n, g) in found.items()}
    return found


def _names_roles(qs: Sequence[QTensor]) -> tuple[list[str], list[str]]:
    """Every tensor's name and role, from a QList's columns when it has them."""
    if isinstance(qs, QList):
        return qs.names(), qs.roles()
    return [q.name for q in qs], [q.role for q in qs]


def group_shape_changes(arts: Sequence[Artifact]) -> list[Finding]:
    """Revisions of one Hugging Face repository whose same operand (role,
    element and scale formats) changed its group shape: per-tensor to
    per-channel, per-channel to 2-D blocks, ...  Compared even where one
    side is not representable (a scheme, no gid).  Operands that both have
    a gid under one scheme are gid_disagreement's own comparison."""
    by_repo: dict[str, list[tuple[str, list[Artifact]]]] = defaultdict(list)
    for key, members in models(arts).items():
        if members[0].repo:
            by_repo[members[0].repo].append((key, members))
    out: list[Finding] = []
    for repo, ms in sorted(by_repo.items()):
        if len(ms) < 2:
            continue
        schemes = {key: model_scheme(members) for key, members in ms}
        ops = {key: _operands(members) for key, members in ms}
        every: dict[tuple[str, str], dict[str, list[tuple[str, _Op]]]] = defaultdict(
            lambda: defaultdict(list))
        for key, _members in ms:
            for op_key, op in ops[key].items():
                every[op_key][op[0]].append((key, op))
        # (formats, shape a, shape b, models a, models b) -> [(role, op a, op b)]
        patterns: dict[tuple[str, str, str, tuple[str, ...], tuple[str, ...]],
                       list[tuple[str, _Op, _Op]]] = defaultdict(list)
        for (role, fmts), by_shape in every.items():
            if len(by_shape) < 2:
                continue
            groups = sorted(by_shape.items(), key=lambda kv: (-len(kv[1]), kv[1][0][0]))
            shape_a, side_a = groups[0]
            for shape_b, side_b in groups[1:]:
                (ka, op_a), (kb, op_b) = side_a[0], side_b[0]
                if op_a[3] and op_b[3] and schemes[ka] == schemes[kb]:
                    continue  # both described under one scheme: compared by gid
                patterns[(fmts, shape_a, shape_b, tuple(k for k, _ in side_a),
                          tuple(k for k, _ in side_b))].append((role, op_a, op_b))
        for (fmts, shape_a, shape_b, _ma, _mb), items in sorted(patterns.items()):
            out.append(_shape_finding(repo, fmts, shape_a, shape_b, items))
    return out


def _shape_finding(repo: str, fmts: str, shape_a: str, shape_b: str,
                   items: list[tuple[str, _Op, _Op]]) -> Finding:
    items = sorted(items, key=lambda it: (it[0], it[1][2], it[2][2]))  # not kin order
    roles = [r for r, _, _ in items]
    _, a1, n1, _ = items[0][1]
    _, a2, n2, _ = items[0][2]
    rev_a, rev_b = a1.revision or a1.path, a2.revision or a2.path
    more = f" and {len(roles) - _SHOWN} more" if len(roles) > _SHOWN else ""
    msg = (f"{len(roles)} operand(s) changed group shape between revisions of {repo}: "
           f"{shape_a} in {rev_a}, {shape_b} in {rev_b} (e.g. {', '.join(roles[:_SHOWN])}"
           f"{more}); both {fmts}")
    return RULE.finding(
        a2.path, msg, n2,
        {"roles": roles[:50], "count": len(roles), "paths": [a2.path],
         "agreeing_paths": [a1.path], "other_tensor": n1,
         "compared_as": f"revisions of one repository ({repo}) whose operands changed "
                        "group shape",
         "scheme": fmts, "group_shapes": [shape_a, shape_b], "revisions": [rev_a, rev_b],
         "differences": ["group_shape"],
         "likeliest_cause": f"the repository was quantised again with another scale "
                            f"granularity ({shape_a} -> {shape_b}): a loader, kernel or "
                            "cached descriptor made for one revision reads the other's "
                            "scales wrongly",
         "suggested_fix": "pin the revision you validated, or validate the new one and "
                          "update what depends on its scale layout"})


_DERIVED = ("grade_id", "grade", "decode_projection", "gid")  # follow from the fields
_VERDICT_FIELDS = 3  # differing fields a message names; the explain diff has all


def _verdict(ex: Explanation) -> str:
    """The explain verdict, short: the differing fields that are not
    derived from others (grade_id, gid, ... follow from k0), with values."""
    if ex.decode_equivalent or ex.identical:
        return f"as {ex.verdict}"
    rows = {r["field"]: r for r in ex.to_json()["fields"] if not r["same"]}
    own = [d for d in ex.differences if d not in _DERIVED] or list(ex.differences)
    parts = [f"{d} ({rows[d]['a']} vs {rows[d]['b']})" if d in rows else d
             for d in own[:_VERDICT_FIELDS]]
    more = f" and {len(own) - _VERDICT_FIELDS} more" if len(own) > _VERDICT_FIELDS else ""
    return "in " + ", ".join(parts) + more


def _cause(diffs: tuple[str, ...], decode_eq: bool) -> str:
    s = set(diffs)
    if decode_eq:
        return "the grades differ only on encode: the bytes are interchangeable (supersedes)"
    if "k0" in s:
        return "the two tools used different group sizes"
    if "elem" in s:
        return "the element format differs (for example a type-code mix-up)"
    if s & {"placement_data", "placement_scale", "placement_meta"} and not s & {
            "k0", "elem", "scale0"}:
        return "the same numbers in different physical layouts: a relayout, not a bug, if " \
               "both tools read their own layout"
    if "shape" in s:
        return "the shapes differ (a transposed or reshaped export)"
    return "the numeric contracts differ"


def manifest_changes(arts: Sequence[Artifact]) -> list[Finding]:
    """grit-manifest.json against the files it lists (a hash join on path
    and tensor name).  Recorded digests were attached to the files' tensors
    when they were collected; ``--deep`` verifies them."""
    out = []
    by_path = {a.abs_path: a for a in arts if a.format.is_checkpoint_file}
    for man in arts:
        if man.format is not Format.MANIFEST or not man.parsed:
            continue
        resolved = man.metadata.get("resolved", {})
        # per listed file: each tensor's gid now by name, asked once per kin
        # (a function of what the kin shares); only an entry whose tensor is
        # gone or whose gid differs is looked at (made) on its own (issue
        # 15: 25,000 entries)
        now_of: dict[str, dict[str, object]] = {}
        positions: dict[str, dict[str, int]] = {}  # built for a changed gid only
        for r in Recorded.of(man.quantized):
            art = by_path.get(resolved.get(r.rel, ""))
            if art is None:
                continue  # the reader already reported the file as gone
            now_by_name = now_of.get(art.abs_path)
            if now_by_name is None:  # the last of a name listed twice wins
                now_by_name = now_of[art.abs_path] = dict(
                    zip(art.quantized.names(), per_tensor(art, _now)))
            # _GONE: no tensor by that name now
            now = list(map(now_by_name.get, r.names_, repeat(_GONE)))
            # an entry differs from what the file says now (a superset of the
            # findings: each is then looked at as it always was), in order
            for j in compress(range(len(r)), map(ne, r.gids, now)):
                q, g_now = r.entry(j), now[j]
                if g_now is _GONE:
                    out.append(RULE.finding(art.path, f"{q.name}: in the manifest but no longer "
                                            f"a described tensor in {art.path}", q.name,
                                            {"manifest": man.path}))
                elif q.expected_gid is not None and isinstance(g_now, bytes):
                    pos_of = positions.get(art.abs_path)
                    if pos_of is None:  # the last of a name listed twice, as now_by_name's
                        pos_of = positions[art.abs_path] = {
                            n: i for i, n in enumerate(art.quantized.names())}
                    cur = art.quantized[pos_of[q.name]]
                    out.append(_changed(man, q, art, cur, q.expected_gid, g_now))
    return out


# no tensor by that name now, or one without a descriptor
_GONE = object()


def _now(kin: Kin) -> object:
    """What a manifest's recorded gid is compared with: the kin's gid now
    (None without a grade), or _GONE when it has no descriptor."""
    return _GONE if kin.rep.desc is None else _gid(kin.rep)


def _changed(man: Artifact, q: QTensor, art: Artifact, cur: QTensor, expected: bytes,
             g_now: bytes) -> Finding:
    """The finding for manifest entry ``q`` whose tensor ``cur`` of ``art``
    now has gid ``g_now``."""
    assert q.desc is not None
    from ...codec.base32 import encode as b32
    from ...codec.explain import Operand, explain
    from ...codec.grade import registry

    reg = registry([cur.grade] if cur.grade else [])
    old = Operand(f"{man.path}::{q.name}", q.desc, reg.get(q.desc.grade_id), tuple(q.shape))
    ex = explain(old, _operand(art, cur))
    return RULE.finding(
        art.path, f"{q.name}: gid changed since {man.path} was written "
        f"({b32(expected)} -> {b32(g_now)}): {ex.verdict}", q.name,
        {"manifest": man.path, "expected": b32(expected), "actual": b32(g_now),
         "explain": ex.to_json()})
