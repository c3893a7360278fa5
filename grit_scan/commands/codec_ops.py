"""`grit decode`, `grit encode`, `grit vectors` — the codec on the command line."""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

# numpy and the array codec (decode, encode, the vector suite) are imported
# by the commands that run them, so that help and the other commands' start-up
# do not load them.

import json
import math
import sys
from pathlib import Path

import typer

from ..codec import descriptor as desc_mod
from ..codec.base32 import encode as b32
from ..codec.errors import GritCheckError, GritError
from ..codec.fingerprint import digest_planes, gid
from ..codec.grade import registry, resolve
from ._app import UsageError, app
from .common import complete_tensor, emit_json, parse_int_list, read_regular

DEFAULT_VECTORS = Path("fixtures/conformance/vectors.json")

# what `grit encode --input` may hold: 2**31 binary32 values (8 GiB)
MAX_ENCODE_ELEMENTS = 1 << 31

vectors_app = typer.Typer(help="Generate or verify the conformance vector suite (§15).",
                          no_args_is_help=True)
app.add_typer(vectors_app, name="vectors")


def _read(path: Path, what: str) -> bytes:
    """A regular file's bytes: a FIFO would block and /dev/zero never ends,
    so anything else is refused before it is opened (issue 16)."""
    return read_regular(path, what)


def _layouts(path: Path | None) -> dict[int, str]:
    if path is None:
        return {}
    try:
        raw = json.loads(_read(path, "--layouts"))
        return {int(k, 16): str(v) for k, v in raw.items()}
    except (ValueError, AttributeError) as exc:
        raise UsageError(f"--layouts: expected a JSON object of hex word -> expression ({exc})"
                         ) from None


def print_check_failure(exc: GritCheckError) -> None:
    sys.stderr.write(f"{exc.status.label} (step {exc.detail.step})\n{exc.detail.message}\n")


@app.command("decode")
def decode_cmd(
    tensor: str | None = typer.Argument(None, metavar="[FILE::TENSOR]",
                                        autocompletion=complete_tensor,
                                        help="A tensor inside a checkpoint."),
    desc_hex: str | None = typer.Option(None, "--desc", metavar="HEX128",
                                        help="The descriptor as 128 hex digits."),
    shape: str | None = typer.Option(None, "--shape", metavar="D0,D1,...", help="Tensor extents."),
    payload_file: Path | None = typer.Option(
        None, "--payload-file", metavar="FILE",
        help="data ‖ scale0 ‖ scale1 ‖ aux in the descriptor's placements."),
    grade_text: str | None = typer.Option(
        None, "--grade", metavar="GRADE", help="The grade string of an unregistered grade_id."),
    layouts_file: Path | None = typer.Option(
        None, "--layouts", metavar="FILE",
        help="JSON map of class-0x8 placement words (hex) to layout expressions."),
    out: Path | None = typer.Option(None, "--out", metavar="FILE",
                                    help="Write little-endian binary32 values here."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON document: shape, grade, gid, values, bits."),
) -> None:
    """Decode a GRIT payload to binary32 (§8); checked at level 1 first."""
    if tensor is not None:
        from .tensor_ops import decode_tensor

        decode_tensor(tensor, out, as_json)
        return
    if desc_hex is None or shape is None or payload_file is None:
        raise UsageError("give --desc, --shape and --payload-file (or FILE::TENSOR)")
    try:
        d = desc_mod.from_hex(desc_hex)
    except GritError as exc:
        raise UsageError(f"--desc: {exc}") from None
    dims = parse_int_list(shape, "--shape", minimum=0)
    grades = registry()
    if grade_text is not None:
        try:
            g = resolve(grade_text)
        except GritError as exc:
            raise UsageError(f"--grade: {exc}") from None
        grades[g.grade_id] = g
    payload = _read(payload_file, "--payload-file")
    from ..codec.decode import decode
    from .decoded import write_decoded

    try:
        values = decode(d, dims, payload, grades=grades, layouts=_layouts(layouts_file))
    except GritCheckError as exc:
        print_check_failure(exc)
        raise typer.Exit(1) from None
    write_decoded(values, d, dims, grades.get(d.grade_id), out, as_json)


@app.command("encode")
def encode_cmd(
    grade_text: str = typer.Option(..., "--grade", metavar="GRADE",
                                   help="Grade string or registered name."),
    shape: str = typer.Option(..., "--shape", metavar="D0,D1,...", help="Tensor extents."),
    input_file: Path = typer.Option(..., "--input", metavar="FILE",
                                    help="Little-endian binary32 values."),
    group_axis: int | None = typer.Option(None, "--group-axis", metavar="N",
                                          help="Group axis (default: the last axis)."),
    out: Path = typer.Option(..., "--out", metavar="FILE", help="Write the payload here."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Quantise binary32 values into a grade (§9, §10); ROW_MAJOR placement."""
    try:
        g = resolve(grade_text)
    except GritError as exc:
        raise UsageError(f"--grade: {exc}") from None
    dims = parse_int_list(shape, "--shape", minimum=0)
    n = math.prod(dims)  # exact: np.prod wraps at 2**63 (3 x 6148914691236517206 -> 2)
    if n > MAX_ENCODE_ELEMENTS:
        raise UsageError(f"--shape {dims} has {n:,} elements; grit encode takes at most "
                         f"{MAX_ENCODE_ELEMENTS:,}")
    raw = _read(input_file, "--input")
    if len(raw) != 4 * n:
        raise UsageError(f"--input holds {len(raw)} bytes; shape {dims} needs {4 * n}")
    import numpy as np

    from ..codec.encode import encode

    values = np.frombuffer(raw, dtype="<f4").reshape(dims)
    try:
        enc = encode(values, g, group_axis)
    except GritError as exc:
        raise UsageError(str(exc)) from None
    try:
        out.write_bytes(enc.payload)
    except OSError as exc:
        raise UsageError(f"--out: {exc.strerror or exc}: {out}") from None
    gd = gid(g, enc.desc, enc.shape)
    res = {"desc": enc.desc.hex(), "plane_bytes": enc.plane_bytes, "gid": gd.hex(),
           "gid_base32": b32(gd), "digest": digest_planes(enc.planes).hex()}
    if as_json:
        emit_json(res)
    else:
        for k, v in res.items():
            typer.echo(f"{k:<12}{v}")


@vectors_app.command("gen")
def vectors_gen(
    out: Path = typer.Option(DEFAULT_VECTORS, "--out", metavar="PATH",
                             help="Where to write vectors.json."),
) -> None:
    """Generate the conformance suite deterministically."""
    from ..codec import vectors as vectors_mod

    suite = vectors_mod.generate()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(vectors_mod.dumps(suite))
    except OSError as exc:
        raise UsageError(f"--out: {exc.strerror or exc}: {out}") from None
    typer.echo(f"wrote {len(suite['vectors'])} vectors, {len(suite['negative'])} negative, "
               f"{len(suite['supersedes'])} supersedes demos to {out}")


def shipped_vectors() -> bytes:
    """The conformance suite shipped in the package (grit_scan/codec/
    vectors.json, identical to fixtures/conformance/vectors.json)."""
    from importlib.resources import files

    return files("grit_scan.codec").joinpath("vectors.json").read_bytes()


@vectors_app.command("verify")
def vectors_verify(
    path: Path | None = typer.Argument(
        None, metavar="[PATH]", help="A vectors.json (default: the suite shipped with grit)."),
) -> None:
    """Re-derive every vector; exit 0 only if all hold."""
    try:
        suite = json.loads(_read(path, "vectors") if path is not None else shipped_vectors())
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})") from None
    if not isinstance(suite, dict):
        raise UsageError(f"{path}: not a vector suite")
    from ..codec import vectors as vectors_mod

    failures = vectors_mod.verify(suite)
    total = sum(len(suite.get(k, [])) for k in ("vectors", "negative", "supersedes"))
    if failures:
        for f in failures:
            typer.echo(f"FAIL {f}")
        typer.echo(f"{len(failures)} failure(s) in {total} vectors")
        raise typer.Exit(1)
    typer.echo(f"all {total} vectors hold")
