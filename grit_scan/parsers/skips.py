"""Why the walker does not read a path, by kind (the ``kind`` of a skipped
entry in the report, docs/json-report.md), and which outside symlinks matter.

A symlink whose target leaves the scanned root matters only when a
checkpoint reader would follow it: a file named as a checkpoint, an index
or a manifest.  Those are ``path_escape`` findings; any other outside link
(``.venv/bin/python``, a README linked to /etc) is skipped with a note.
"""

from __future__ import annotations

import enum

from . import readers

INDEX_SUFFIX = ".index.json"
MANIFEST_NAME = "grit-manifest.json"


class SkipKind(str, enum.Enum):
    PICKLE = "pickle"  # pytorch_model.bin, *.pt, *.ckpt: not a safetensors/GGUF file
    OTHER_WEIGHTS = "other_weights"  # ONNX, Keras, Flax, NumPy weights
    OUTSIDE_SYMLINK = "outside_symlink"  # a non-checkpoint link leaving the root
    NOT_REGULAR = "not_regular"  # FIFO, socket, device
    UNREADABLE = "unreadable"  # cannot stat or list
    LINK = "link"  # dangling or looping symlink, a directory visited twice
    MISSING = "missing"  # a path given on the command line that does not exist
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


_WEIGHT_SUFFIXES = {
    ".bin": SkipKind.PICKLE, ".pt": SkipKind.PICKLE, ".pth": SkipKind.PICKLE,
    ".ckpt": SkipKind.PICKLE, ".pkl": SkipKind.PICKLE, ".pickle": SkipKind.PICKLE,
    ".onnx": SkipKind.OTHER_WEIGHTS, ".h5": SkipKind.OTHER_WEIGHTS,
    ".msgpack": SkipKind.OTHER_WEIGHTS,
    ".npy": SkipKind.OTHER_WEIGHTS, ".tflite": SkipKind.OTHER_WEIGHTS,
}


def unsupported_weights(name: str) -> SkipKind | None:
    """A weights file grit cannot read (by its name), or None."""
    low = name.lower()
    return next((k for suf, k in _WEIGHT_SUFFIXES.items() if low.endswith(suf)), None)


def unsupported_reason(kind: SkipKind) -> str:
    what = "a pickle" if kind is SkipKind.PICKLE else "weights in another format"
    return f"not a safetensors/GGUF file ({what}); not read"


def reader_would_follow(name: str) -> bool:
    """True when a checkpoint reader would open a file of this name: a
    checkpoint, an index or a manifest (an outside link to one is a
    path_escape; any other outside link is only skipped)."""
    low = name.lower()
    return (low.endswith(INDEX_SUFFIX) or low == MANIFEST_NAME
            or any(r.claims(name) for r in readers.CHECKPOINT_READERS))
