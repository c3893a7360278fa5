"""`grit grade`, `grit check`, `grit explain` — the identity-layer commands.

Their names, options and JSON keys are a contract scripts depend on
(docs/cli.md); keep them stable.
"""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import typer

from ..codec import descriptor as desc_mod
from ..codec import explain as explain_mod
from ..codec.base32 import encode as b32
from ..codec.check import PlaneSizes, grit_check, needs_contents, plane_sizes
from ..codec.errors import GritError, GritValueError, Status
from ..codec.fingerprint import digest_read_ahead, gid
from ..codec.grade import registry, resolve
from ..codec.layout import payload_lengths
from ._app import UsageError, app
from .common import complete_tensor, emit_json, parse_int_list

_HEX32 = re.compile(r"(0x)?[0-9a-fA-F]{32}")


@app.command("grade")
def grade_cmd(
    text: str = typer.Argument(..., metavar="STRING",
                               help="A grade string, or a registered name such as mxfp4."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Canonicalise a grade: canonical string, grade_id, decode projection, name."""
    try:
        g = resolve(text)
    except GritError as exc:
        raise UsageError(f"invalid grade: {exc}") from None
    out = {
        "canonical": g.canonical,
        "grade_id": f"0x{g.grade_id:016x}",
        "decode_projection": g.decode_projection,
        "name": g.name,
    }
    if as_json:
        emit_json(out)
        return
    typer.echo(f"canonical          {out['canonical']}")
    typer.echo(f"grade_id           {out['grade_id']}")
    typer.echo(f"decode_projection  {out['decode_projection']}")
    typer.echo(f"name               {out['name'] or '(not registered)'}")


# --payload-file is read in pieces of this size, each hashed as the next is read
_PIECE = 1 << 20


def _payload(path: Path, sizes: PlaneSizes | None,
             keep: bool) -> tuple[list[int], bytes, list[memoryview] | None]:
    """The plane lengths, the §6.5 digest and (``keep``) the planes of a
    payload file, data ‖ scale0 ‖ scale1 ‖ aux by the §7.3 sizes (all data
    when unknown).  The file is hashed as it is read, on the loop of every
    digest (fingerprint.digest_read_ahead); without ``keep`` it is never
    held whole.  A FIFO would block and /dev/zero never ends, so anything
    but a regular file is refused before it is read."""
    what = "--payload-file"
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise UsageError(f"{what}: not a regular file: {path}")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror or exc}: {path}") from None
    with os.fdopen(fd, "rb", buffering=0) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{what}: not a regular file: {path}")
        total = st.st_size
        lengths = [total, 0, 0, 0] if sizes is None else payload_lengths(total, sizes.as_list())
        whole = bytearray(total) if keep else None

        def pieces() -> Iterator[bytes | memoryview]:
            for off in range(0, total, _PIECE):
                n = min(_PIECE, total - off)
                if whole is None:
                    got: bytes | memoryview = f.read(n)
                else:
                    got = memoryview(whole)[off : off + n]
                    got = got[: f.readinto(got)]
                yield got
                if len(got) < n:
                    return  # the file shrank: the digest says it came short

        try:
            dig = digest_read_ahead(pieces(), lengths)
        except GritValueError as exc:
            raise UsageError(f"{what}: {path} changed while it was read ({exc})") from None
        except OSError as exc:
            raise UsageError(f"{what}: {exc.strerror or exc}: {path}") from None
    if whole is None:
        return lengths, dig, None
    view = memoryview(whole)
    planes, off = [], 0
    for n in lengths:
        planes.append(view[off : off + n])
        off += n
    return lengths, dig, planes


@app.command("check")
def check_cmd(
    desc_hex: str = typer.Option(..., "--desc", metavar="HEX128",
                                 help="The 64-byte descriptor as 128 hex digits."),
    shape: str = typer.Option(..., "--shape", metavar="D0,D1,...", help="Tensor extents."),
    plane_bytes: str | None = typer.Option(
        None, "--plane-bytes", metavar="A,B,C,D",
        help="Byte lengths of data, scale0, scale1, aux."),
    payload_file: Path | None = typer.Option(
        None, "--payload-file", metavar="FILE",
        help="data ‖ scale0 ‖ scale1 ‖ aux, split by the §7.3 sizes."),
    level: int = typer.Option(1, "--level", metavar="N",
                              help="0 nothing, 1 structure, 2 contents (needs a payload)."),
    digest: str | None = typer.Option(None, "--digest", metavar="HEX32",
                                      help="Expected plane digest (implies level 2)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run grit_check (§7.3) on a descriptor, a shape and plane sizes or a payload."""
    try:
        d = desc_mod.from_hex(desc_hex)
    except GritError as exc:
        raise UsageError(f"--desc: {exc}") from None
    dims = parse_int_list(shape, "--shape", minimum=0)
    if (plane_bytes is None) == (payload_file is None):
        raise UsageError("give exactly one of --plane-bytes and --payload-file")
    expected = None
    if digest is not None:
        if not _HEX32.fullmatch(digest.strip()):
            raise UsageError("--digest takes 32 hex digits")
        expected = bytes.fromhex(digest.strip().removeprefix("0x"))
        level = max(level, 2)
    if level not in (0, 1, 2, 3):
        raise UsageError("--level takes 0, 1, 2 or 3")
    planes: list[memoryview] | None = None
    payload_digest = None
    if payload_file is not None:
        try:
            sizes = plane_sizes(d, dims)
        except Exception:  # noqa: BLE001 - sizes unknown: the check reports why
            sizes = None
        # the contents are kept only where a level reads more than their
        # digest: probes (3), the sparsity metadata order (2)
        keep = level >= 3 or (level == 2 and needs_contents(d))
        pb, payload_digest, planes = _payload(payload_file, sizes, keep)
    else:
        assert plane_bytes is not None
        pb = parse_int_list(plane_bytes, "--plane-bytes", count=4)
        if level >= 2:
            raise UsageError(f"--level {level} reads plane contents: give --payload-file")
    res = grit_check(d, dims, pb, level, planes=planes, expected_digest=expected,
                     planes_digest=payload_digest)
    g = registry().get(d.grade_id)
    gid_val = gid(g, d, dims) if g is not None else None
    det = res.detail
    out: dict[str, object] = {
        "status": res.status.label,
        "step": det.step if det else None,
        "message": det.message if det else "OK",
        "expected": det.expected if det else None,
        "actual": det.actual if det else None,
        "plane": det.plane if det else None,
        "gid": gid_val.hex() if gid_val else None,
        "gid_base32": b32(gid_val) if gid_val else None,
    }
    if payload_digest is not None:
        out["digest"] = payload_digest.hex()
    if as_json:
        emit_json(out)
    else:
        where = ""
        if det is not None:
            where = f" (step {det.step}" + (
                f", {['data', 'scale0', 'scale1', 'aux'][det.plane]} plane" if det.plane is not None
                else "") + ")"
        typer.echo(f"{res.status.label}{where}")
        if det is not None:
            typer.echo(det.message)
        if gid_val is not None:
            typer.echo(f"gid     {gid_val.hex()}  {b32(gid_val)}")
        if payload_digest is not None:
            typer.echo(f"digest  {out['digest']}")
    raise typer.Exit(0 if res.status == Status.OK else 1)


@app.command("explain")
def explain_cmd(
    a: str = typer.Argument(..., metavar="A", autocompletion=complete_tensor,
                            help="Descriptor hex, grade string, grade name or FILE::TENSOR."),
    b: str = typer.Argument(..., metavar="B", autocompletion=complete_tensor,
                            help="The other operand, same forms as A."),
    shape: str | None = typer.Option(None, "--shape", metavar="D0,D1,...",
                                     help="Shape for descriptors and grades (for the gid)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Field-by-field diff of two descriptors, with a verdict (§7.5)."""
    dims = parse_int_list(shape, "--shape", minimum=0) if shape else None
    from .operands import resolve_operand

    oa = resolve_operand(a, dims)
    ob = resolve_operand(b, dims)
    ex = explain_mod.explain(oa, ob)
    if as_json:
        emit_json(ex.to_json())
    else:
        import sys

        from ..report.text import render_explain

        render_explain(ex.to_json(), ex.lines(), sys.stdout)
    raise typer.Exit(0 if ex.identical else 1)
