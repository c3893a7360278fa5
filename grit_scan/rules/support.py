"""Pieces several kind modules share (no checks of their own live here).

* ``issue_findings``: reader issues (``IssueCode``) -> findings of one rule
  (``issues_with``: the issues of some codes);
* ``split_issues``: what is wrong with the parts of each GGUF split set
  (missing, extra or duplicated parts, counts that disagree), which the
  missing_shard and index_inconsistency kinds report;
* grade families (``family``, ``identity``, ``declared_mix``,
  ``checkpoint_key``): what "the same role" and "the same grade" mean for the
  drift rules;
* ``judged``: the tensors a descriptor rule may judge;
* ``kins`` and ``positions``: an artifact's tensors grouped by everything
  the rules judge them by, so that a rule asks its question once per group
  rather than once per tensor (docs/performance.md).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter
from typing import TypeVar

from ..artifact import Artifact, Format, QTensor, ScanInput, Source
from ..issues import Issue, IssueCode
from ..issues.index_inconsistency import (
    SplitCountsDisagree,
    SplitPartOutside,
    SplitPartRepeated,
    SplitTensorCount,
)
from ..issues.missing_shard import SplitPartMissing
from .finding import Finding
from .registry import Rule, memoised

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def config_path(group: str, source: str) -> str:
    """The path of the config a declaration came from: its model's group
    and the file name its ``source`` starts with (``config.json
    quantization_config``)."""
    return posixpath.join(group, source.split(" ")[0])


def issue_findings(art: Artifact, rule: Rule, codes: Collection[IssueCode],
                   keep: Callable[[Issue], bool] | None = None,
                   message: Callable[[Issue], str] | None = None) -> list[Finding]:
    """The artifact's issues with one of ``codes`` as findings of ``rule``."""
    return [rule.finding(art.path, message(iss) if message else iss.message, iss.tensor,
                         iss.detail)
            for iss in issues_with(art, codes) if keep is None or keep(iss)]


_CODE = attrgetter("code")


def issues_with(art: Artifact, codes: Collection[IssueCode]) -> list[Issue]:
    """The artifact's issues with one of ``codes``, in order.  Each issue's
    code is read once per run (``memoised``), and a kind none of whose codes
    the artifact has gets nothing without a pass over its issues (a model
    whose every module is not representable gives a file 400 of them, and
    six kinds ask)."""
    got, present = memoised("issue_codes", art, lambda: _codes(art.issues))
    if present.isdisjoint(codes):
        return []
    return list(compress(art.issues, map(codes.__contains__, got)))


def _codes(issues: Sequence[Issue]) -> tuple[list[IssueCode], frozenset[IssueCode]]:
    got: list[IssueCode] = list(map(_CODE, issues))
    return got, frozenset(got)


def split_issues(scan: ScanInput) -> list[tuple[str, Issue]]:
    """(the file it is reported on, the issue) for each problem of a GGUF
    split set (research: gguf-ggml-internals.md): every part present once,
    the parts agreeing on ``split.count``, and their tensors adding up to
    ``split.tensors.count``.  The parts of one set are the GGUF files
    parsers/models.py grouped into one model; problems are reported on part
    1 (else the first part parsed).  Once per scan."""
    return memoised("split_issues", scan, lambda: _split_issues(scan.artifacts))


def _split_issues(arts: Sequence[Artifact]) -> list[tuple[str, Issue]]:
    models: dict[str, list[Artifact]] = {}
    for a in arts:
        if a.format is Format.GGUF:
            models.setdefault(a.model if a.model is not None else a.path, []).append(a)
    out: list[tuple[str, Issue]] = []
    for model, members in models.items():
        if len(members) > 1 or any("split.count" in a.metadata for a in members):
            out.extend(_check_split(model, members))
    return out


def _check_split(model: str, members: list[Artifact]) -> list[tuple[str, Issue]]:
    parsed = [a for a in members if a.parsed]
    if not parsed:
        return []
    counts = {c for a in parsed if isinstance(c := a.metadata.get("split.count"), int)}
    numbers: dict[int, list[Artifact]] = defaultdict(list)
    for a in parsed:
        no = a.metadata.get("split.no")
        if isinstance(no, int):
            numbers[no].append(a)
    head = numbers.get(0, [None])[0] or parsed[0]
    out: list[tuple[str, Issue]] = []

    def issue(found: Issue) -> None:
        out.append((head.path, found))

    # the model key is the split's display path without its part suffix; a
    # lone file that says it is a split keeps its name, less ".gguf", as the
    # prefix llama.cpp's gguf-split names parts with
    base = model[max(model.rfind("/"), model.rfind("\\")) + 1:]
    if base.lower().endswith(".gguf"):
        base = base[:-5]
    if len(counts) > 1:
        issue(SplitCountsDisagree(None, base, tuple(sorted(counts))))
        return out
    n = next(iter(counts), None)
    if not isinstance(n, int) or n < 1:
        return out
    for no, parts in sorted(numbers.items()):
        if len(parts) > 1:
            issue(SplitPartRepeated(None, no + 1, base, tuple(a.path for a in parts)))
        if no >= n:
            for a in parts:
                issue(SplitPartOutside(None, a.path, no + 1, n))
    missing = [k for k in range(n) if k not in numbers]
    for k in missing:
        name = f"{base}-{k + 1:05d}-of-{n:05d}.gguf"
        issue(SplitPartMissing(None, name, head.path, n, len(numbers)))
    want = head.metadata.get("split.tensors.count")
    have = sum(len(a.tensors) for a in parsed)
    if not missing and isinstance(want, int) and want != have:
        issue(SplitTensorCount(None, base, want, have))
    return out


def judged(q: QTensor) -> bool:
    """A tensor whose descriptor the descriptor rules judge: one recovered or
    inferred from the file (not a manifest's record, not a refusal)."""
    return q.desc is not None and q.reason is None and q.source not in (Source.NONE,
                                                                        Source.MANIFEST)


class Kin:
    """The tensors of one artifact that share every attribute a rule judges
    them by — descriptor, grade, shape, source, convention, reason and
    layouts — and differ only in name, role and where their bytes are.
    ``rep`` is the first of them, ``idx`` their positions in
    ``art.quantized`` (ascending)."""

    __slots__ = ("rep", "idx", "judged", "_identity")

    def __init__(self, rep: QTensor, idx: Sequence[int]) -> None:
        self.rep, self.idx, self.judged = rep, idx, judged(rep)
        self._identity: str | None = None

    @property
    def identity(self) -> str:
        if self._identity is None:
            self._identity = identity(self.rep)
        return self._identity


def _kin_key(q: QTensor) -> tuple[object, ...]:
    shape = q.shape if type(q.shape) is tuple else tuple(q.shape)
    return (id(q.desc), id(q.grade), shape, id(q.source), q.convention, q.reason,
            id(q.layouts))


_FEW = 8  # kins compared one by one; past that, looked up by key


def _kins(art: Artifact) -> list[Kin]:
    qs = art.quantized
    if qs.columnar:
        # a group per Replays (artifact.QList) and per object, merged by key
        # in order of their first tensor: no tensor is made but each kin's first
        merged: dict[tuple[object, ...], tuple[QTensor, list[Sequence[int]]]] = {}
        for rep, idx, _maker in qs.units():
            key = _kin_key(rep)
            got = merged.get(key)
            if got is None:
                merged[key] = (rep, [idx])
            else:
                got[1].append(idx)
        return [Kin(rep, parts[0] if len(parts) == 1 else sorted(chain.from_iterable(parts)))
                for rep, parts in merged.values()]
    return _object_kins(art)


def _object_kins(art: Artifact) -> list[Kin]:
    # Descriptors, grades, sources and layouts are shared objects, compared by
    # identity (a descriptor's or an enum's hash is a Python call, a layouts
    # mapping is not hashable); a shape, a convention and a reason by value.
    # Equal descriptors held as two objects make two kins: slower, not wrong.
    # Comparing attributes costs less than building a key per tensor, and a
    # file's tensors are mostly of one kin or a few.
    qs = art.quantized
    reps: list[QTensor] = [qs[0]]
    idxs: list[list[int]] = []
    r = qs[0]
    start = len(qs)
    for n, q in enumerate(qs):
        if not (q.desc is r.desc and q.grade is r.grade and q.source is r.source
                and q.layouts is r.layouts and q.shape == r.shape
                and q.convention == r.convention and q.reason == r.reason):
            start = n
            break
    else:
        return [Kin(r, range(len(qs)))]  # the usual case: one kin
    idxs.append(list(range(start)))
    keyed: dict[tuple[object, ...], list[int]] | None = None
    for n in range(start, len(qs)):
        q = qs[n]
        if keyed is not None:
            key = _kin_key(q)
            ix = keyed.get(key)
            if ix is None:
                reps.append(q)
                ix = keyed[key] = []
                idxs.append(ix)
            ix.append(n)
            continue
        for k, r in enumerate(reps):
            if (q.desc is r.desc and q.grade is r.grade and q.source is r.source
                    and q.layouts is r.layouts and q.shape == r.shape
                    and q.convention == r.convention and q.reason == r.reason):
                idxs[k].append(n)
                break
        else:
            reps.append(q)
            idxs.append([n])
            if len(reps) > _FEW:
                keyed = {}
                for r, ix in zip(reps, idxs):
                    keyed.setdefault(_kin_key(r), ix)
    return [Kin(r, ix) for r, ix in zip(reps, idxs)]


def kins(art: Artifact) -> list[Kin]:
    """The artifact's quantised tensors grouped into kins, in order of their
    first tensor; computed once per rules run (performance: a 100,000-tensor
    GGUF is one kin, asked once instead of 100,000 times by each rule)."""
    if not art.quantized:
        return []
    return memoised("kins", art, lambda: _kins(art))


def positions(art: Artifact, keys: Callable[[QTensor], Iterable[K]]) -> dict[K, Sequence[int]]:
    """The positions in ``art.quantized`` of the tensors under each of the
    keys ``keys`` gives them, ascending, the keys in order of their first
    tensor: what a per-tensor loop appending to ``dict[K, list]`` builds.
    ``keys`` must depend only on what a kin shares; it is asked once per kin.
    It must give no key to a grit-manifest.json's records, which are never
    ``judged`` (every caller's keys ask ``judged`` or a convention they
    lack): a manifest is not grouped into kins at all (performance: 25,000
    records)."""
    if art.format is Format.MANIFEST:
        return {}
    parts: dict[K, list[Sequence[int]]] = {}
    for kin in kins(art):
        for k in keys(kin.rep):
            parts.setdefault(k, []).append(kin.idx)
    # kins are in order of their first tensor, so the keys are too
    return {k: p[0] if len(p) == 1 else sorted(chain.from_iterable(p))
            for k, p in parts.items()}


def per_tensor(art: Artifact, value: Callable[[Kin], V | None]) -> list[V | None]:
    """``value`` of each of the artifact's quantised tensors, in their order,
    asked once per kin."""
    out: list[V | None] = [None] * len(art.quantized)
    for kin in kins(art):
        v = value(kin)
        if v is not None:
            any(map(out.__setitem__, kin.idx, repeat(v)))  # out[i] = v, at C speed
    return out


# compiled where first used (re's cache), not at import: start-up, docs/performance.md;
# their uses are memoised or per file
_LAYER = r"(?<=\.)\d+(?=\.)|^\d+(?=\.)"
_SPLIT = r"-\d{5}-of-\d{5}(?=\.gguf$)"
_K0 = r"(?<=[(,])k0=\d+"


@functools.lru_cache(maxsize=65536)
def family(role: str) -> str:
    """A role with its layer index dropped: ``blk.3.attn_q.weight`` ->
    ``blk.*.attn_q.weight``."""
    return re.sub(_LAYER, "*", role)


def families(roles: Sequence[str]) -> list[str]:
    """``family`` of each of ``roles``, in one substitution over their
    lines (performance: a per-tensor call was a tenth of an FP8 tree's rules),
    or one at a time when a role holds a line break."""
    text = "\n".join(roles)
    if text.count("\n") != max(len(roles) - 1, 0):
        return list(map(family, roles))
    # ``^`` of each line, as of each role
    return re.sub(_LAYER.replace("^", "(?m:^)"), "*", text).split("\n") if roles else []


def per_channel(q: QTensor) -> bool:
    """One scale per row: the group is the whole group axis (k0 = its extent)."""
    d = q.desc
    return d is not None and bool(q.shape) and d.k0 == q.shape[d.group_axis % len(q.shape)]


@functools.lru_cache(maxsize=1024)
def _per_channel_name(canonical: str) -> str:
    """A grade named with ``k0=row`` (memoised: asked once per tensor by
    three rules, of a handful of grades)."""
    return re.sub(_K0, "k0=row", canonical)


def identity(q: QTensor) -> str:
    """What a tensor is quantised as, for the drift rules: the producer's
    convention when the descriptor was inferred from one (fp8-block tensors
    whose scales happen to fit GRIT beside ones whose scales do not are one
    recipe), else its grade.  A per-channel grade is named without its k0
    (``k0=row``): k0 is then the row length, which differs between q_proj
    and down_proj by shape alone."""
    if q.source in (Source.INFERRED, Source.NONE) and q.convention:
        return q.convention
    if q.grade is not None:
        if per_channel(q):
            return _per_channel_name(q.grade.canonical)
        return q.grade.name or q.grade.canonical
    if q.desc is not None:
        return f"grade_id {q.desc.grade_id:#018x}"
    return q.convention or "unknown"


def declared_mix(art: Artifact) -> str | None:
    """The recipe a GGUF's general.file_type declares (Q4_K_M, Q4_0,
    MXFP4_MOE, ...).  llama-quantize mixes types by design under every
    recipe (output.weight in Q6_K, attn_v and ffn_down with more bits, ...),
    so none of them is drift; for a split, shard 1's file type governs every
    part (parsers/models.py)."""
    name = art.metadata.get("file_type_name")
    if art.format is Format.GGUF and isinstance(name, str):
        return name
    return None


def checkpoint_key(a: Artifact) -> str:
    """Which checkpoint (model) a file belongs to: the model parsers/models.py
    assembled it into, else a safetensors directory, a GGUF file, or the set
    of a split GGUF's parts."""
    if a.model is not None:
        return a.model
    if a.format is Format.GGUF:
        return re.sub(_SPLIT, "", a.path)
    return a.group or a.path


def models(arts: Sequence[Artifact]) -> dict[str, list[Artifact]]:
    """The checkpoint files of a scan grouped by model, in path order."""
    out: dict[str, list[Artifact]] = defaultdict(list)
    for a in sorted(arts, key=lambda a: a.path):
        if a.format.is_checkpoint_file and a.parsed:
            out[checkpoint_key(a)].append(a)
    return dict(out)


def quant_family(members: Sequence[Artifact]) -> str | None:
    """What kind of quantisation a model holds, whatever its group sizes:
    the most common (element format, scale formats, zero point, levels) of
    its described tensors, e.g. ``e2m1/e8m0`` for every MXFP4 variant.  Two
    models that differ only in k0 share a family (and ought to agree); a
    Q4_K and a Q8_0 file do not."""
    # counted on the format words, once per kin; named once, for the winner.
    # Kins come in order of their first tensor, so the families are counted
    # in the order a per-tensor count meets them (most_common breaks ties by it)
    fams: Counter[tuple[int, int, int, int]] = Counter()
    for a in members:
        for kin in kins(a):
            d = kin.rep.desc
            if d is not None and kin.rep.reason is None:
                fams[(d.elem, d.scale0, d.scale1 if d.n_levels > 1 else -1,
                      d.zp_fmt)] += len(kin.idx)
    if not fams:
        return None
    elem, s0, s1, zp = fams.most_common(1)[0][0]
    from ..codec.fmt import name as fmt_name  # here: a described tensor (start-up)

    parts = [fmt_name(elem), fmt_name(s0)]
    if s1 >= 0:
        parts.append(fmt_name(s1))
    if zp:
        parts.append("zp:" + fmt_name(zp))
    return "/".join(parts)


def group_shape(q: QTensor) -> str:
    """How a tensor's scales are laid over it: ``per-tensor`` (one scale),
    ``per-channel`` (one per row), ``2-D blocks`` (a producer's tile
    convention) or ``groups`` (runs of k0 along one axis; the run length is
    compared, not part of the shape)."""
    conv = q.convention or ""
    planes = q.planes
    scale = planes[1] if planes is not None and len(planes) > 1 else None
    if conv.endswith("per-tensor") or (per_channel(q) and scale is not None
                                        and scale.broadcast > 1):
        return "per-tensor"
    if conv.endswith("-block"):
        return "2-D blocks"
    if per_channel(q):
        return "per-channel"
    return "groups"


def formats(q: QTensor) -> str | None:
    """A described tensor's element and scale formats, zero point and
    sparsity (``s8/bfloat16 zp:s8``, ``e2m1/e8m0 2:4 sparse``); None without
    a descriptor or for a refused one."""
    d = q.desc
    if d is None or q.reason is not None:
        return None
    from ..codec.fmt import name as fmt_name  # here: a described tensor (start-up)

    parts = [fmt_name(d.elem), fmt_name(d.scale0)]
    if d.n_levels > 1:
        parts.append(fmt_name(d.scale1))
    out = "/".join(parts)
    if d.zp_fmt:
        out += " zp:" + fmt_name(d.zp_fmt)
    if d.sp_n:
        out += f" {d.sp_n}:{d.sp_m} sparse"
    return out


def refused_schemes(art: Artifact) -> dict[str, tuple[str, str]]:
    """Tensor name -> (formats, group shape) of the tensors a convention
    refused as not representable but whose formats and group shape it
    recorded on the issue (FP8 with one scale per tensor, or 2-D blocks):
    such a tensor has a scheme but no descriptor, so no gid."""
    def compute() -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        for iss in art.issues:
            if iss.code is IssueCode.NOT_REPRESENTABLE and iss.tensor is not None:
                f, g = iss.detail.get("formats"), iss.detail.get("group_shape")
                if isinstance(f, str) and isinstance(g, str):
                    out.setdefault(iss.tensor, (f, g))
        return out
    if not art.issues:
        return {}
    return memoised("refused_schemes", art, compute)


def scheme_parts(members: Sequence[Artifact]) -> tuple[str, str] | None:
    """The quantisation scheme of a model as (formats, group shape): the
    formats most of its tensors hold (``formats``, or what a refusal
    recorded: ``refused_schemes``; counted once per kin, weighted by its
    tensors, ties to the first met) and its group shape.  A model is
    per-channel only when every described tensor has one scale per row:
    groups whose run happens to be a short row's length are still groups."""
    fmts: Counter[str] = Counter()
    shapes: Counter[str] = Counter()
    for a in members:
        for kin in kins(a):
            f = formats(kin.rep)
            if f is not None:
                fmts[f] += len(kin.idx)
                shapes[group_shape(kin.rep)] += len(kin.idx)
        refused = refused_schemes(a).values()
        if refused:  # counted at C speed, each key in the order first met
            fmts.update(map(itemgetter(0), refused))
            shapes.update(map(itemgetter(1), refused))
    if not fmts:
        return None
    if "per-channel" in shapes and "groups" in shapes:
        shapes["groups"] += shapes.pop("per-channel")
    return fmts.most_common(1)[0][0], shapes.most_common(1)[0][0]


def model_scheme(members: Sequence[Artifact]) -> str | None:
    """The quantisation scheme of a model (``scheme_parts``) as one string,
    e.g. ``e4m3/bfloat16 per-channel`` or ``s8/bfloat16 groups``.  Models
    compare their tensors only under one scheme; other schemes are other
    quantisations (the quantizations kind lists them), except the group
    shape of revisions of one repository (gid_disagreement)."""
    got = scheme_parts(members)
    return None if got is None else f"{got[0]} {got[1]}"


def quant_label(members: Sequence[Artifact]) -> str:
    """How a model's quantisation is known to people: the GGUF recipe, the
    declared method or format, or its family."""
    for a in members:
        mix = declared_mix(a)
        if mix:
            return mix
    for a in members:
        dec = a.quantized.declared()
        if dec:
            for key in ("quant_algo", "format", "method"):
                v = dec.get(key)
                if isinstance(v, str) and v:
                    return v
    return quant_family(members) or "unquantised"
