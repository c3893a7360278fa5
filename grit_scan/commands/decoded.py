"""What ``grit decode`` prints or writes: the values, the ``--json``
document, the ``--out`` file.  Shared by a payload decode (codec_ops.py) and
a checkpoint tensor's decode (tensor_ops.py), which import it, not each
other."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import typer

from ..codec import descriptor as desc_mod
from ..codec.base32 import encode as b32
from ..codec.decode import decode_bits
from ..codec.fingerprint import gid
from ..codec.grade import Grade
from ._app import UsageError


def decoded_document(values: np.ndarray, dims: list[int], g: Grade | None,
                     gd: bytes | None, tensor: str | None = None) -> dict[str, object]:
    """``grit decode --json``: one document with the shape, the grade, the
    gid, the values as nested arrays in the tensor's shape (a NaN or an
    infinity is null there) and every value's binary32 bit pattern, flat."""
    v = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
    finite = np.isfinite(v)
    shown = v.astype(object)
    shown[~finite] = None
    return {"tensor": tensor, "shape": list(dims),
            "grade": g.canonical if g is not None else None,
            "grade_name": g.name if g is not None else None,
            "gid": gd.hex() if gd else None, "gid_base32": b32(gd) if gd else None,
            "values": shown.reshape(dims).tolist() if dims else shown.tolist(),
            "decoded_f32_bits": decode_bits(values)}


def write_decoded(values: np.ndarray, d: desc_mod.Descriptor, dims: list[int],
                  g: Grade | None, out: Path | None, as_json: bool,
                  tensor: str | None = None) -> None:
    gd = gid(g, d, dims) if g is not None else None
    if out is not None:
        try:
            np.ascontiguousarray(values, dtype="<f4").tofile(out)
        except OSError as exc:
            raise UsageError(f"--out: {exc.strerror or exc}: {out}") from None
    if as_json:
        sys.stdout.write(json.dumps(decoded_document(values, dims, g, gd, tensor)) + "\n")
    elif out is None:
        flat = np.ascontiguousarray(values).reshape(-1)
        shown = ", ".join(f"{x:g}" for x in flat[:16])
        typer.echo(f"{flat.size} values: {shown}{' ...' if flat.size > 16 else ''}")
        if gd:
            typer.echo(f"gid {gd.hex()}  {b32(gd)}")
    else:
        typer.echo(f"wrote {values.size} binary32 values to {out}")
