"""The plain records of the artifact model: what a file is (``Format``),
where a descriptor came from (``Source``), one stored tensor
(``StoredTensor``), one stored byte run (``PlaneRef``) and one quantised
logical tensor (``QTensor``).  Each is immutable (a NamedTuple, a frozen
dataclass, an enum); columns.py keeps many of them as columns, and
artifact.py gathers them into an ``Artifact``.  Nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .codec.errors import GritError

if TYPE_CHECKING:  # annotations only: a float-only scan never loads the codec (docs/performance.md)
    from .codec.descriptor import Descriptor
    from .codec.grade import Grade


class ReadError(GritError):
    """A file that cannot be opened or read (not a regular file, EACCES, EIO)."""


class Format(str, enum.Enum):
    """What a scanned file is; readers are dispatched on it (parsers/interface.py)."""

    SAFETENSORS = "safetensors"
    GGUF = "gguf"
    NPZ = "npz"  # numpy.savez / mlx.core.savez archives
    INDEX = "index"  # *.safetensors.index.json
    MANIFEST = "grit-manifest"
    CONFIG = "config"  # config.json, quantize_config.json, hf_quant_config.json

    @property
    def is_checkpoint_file(self) -> bool:
        """A file that holds tensors (the others describe them)."""
        return self not in (Format.INDEX, Format.MANIFEST, Format.CONFIG)

    @property
    def hf_named(self) -> bool:
        """A file of tensors named as Hugging Face checkpoints name them
        (every tensor format but GGUF, which names its own): conventions are
        inferred over its tensors, per model (parsers/models.py)."""
        return self is not Format.GGUF and self.is_checkpoint_file

    @property
    def is_checkpoint(self) -> bool:
        """Counts as "something was parsed" for exit code 4 (§13)."""
        return self is not Format.CONFIG

    def __str__(self) -> str:
        return self.value


class Source(str, enum.Enum):
    """Where a tensor's descriptor came from."""

    GRIT_HEADER = "grit-header"  # safetensors __metadata__["__grit__"]
    GGUF_KV = "gguf-kv"  # grit.* keys of a GGUF file
    GGML_TYPE = "ggml-type"  # a ggml block type with a decode-exact mapping
    INFERRED = "inferred"  # a known convention (gpt-oss MXFP4, ModelOpt NVFP4, ...)
    MANIFEST = "manifest"  # grit-manifest.json
    NONE = "none"  # no descriptor; ``reason`` says why


class StoredTensor(NamedTuple):
    """One tensor as the file lists it (a safetensors key or a GGUF tensor).
    A NamedTuple: a scan builds hundreds of thousands of these."""

    name: str
    dtype: str  # safetensors dtype or ggml type name
    shape: tuple[int, ...]  # as the file states it (GGUF: numpy order)
    offset: int  # absolute offset of the first byte in the file
    nbytes: int  # what the header says the tensor occupies
    available: int  # how many of those bytes the file actually holds


NO_LAYOUTS: Mapping[int, str] = MappingProxyType({})


class PlaneRef(NamedTuple):
    """Where one stored byte run of a quantised tensor lives (immutable: a
    NamedTuple, as cheap to make as a tuple, since the scan makes one per
    plane it is asked for)."""

    tensor: str | None  # the stored tensor holding it (None: synthesised)
    offset: int  # absolute file offset
    length: int  # bytes available on disk
    broadcast: int = 1  # >1: a scalar repeated this many times (per-tensor scales)
    # the file holding it when that is another shard of the same model (a
    # module whose weight and scales straddle shards); None: the artifact's own
    file: str | None = None


@dataclass(frozen=True, slots=True)
class QTensor:
    """A logical quantised tensor and what GRIT says about its bytes.
    Frozen: whoever makes one (a convention, a reader, a plan's replays)
    builds it whole; a later stage that changes it makes a new one
    (``dataclasses.replace``)."""

    name: str
    role: str  # normalised operand name for cross-file matching
    shape: tuple[int, ...]
    source: Source
    desc: Descriptor | None = None
    grade: Grade | None = None
    convention: str | None = None  # e.g. "gpt-oss-mxfp4", "ggml:Q4_K", "gptq"
    reason: str | None = None  # why there is no descriptor
    # stored bytes: either one payload run (GGUF blocks, __grit__ payload) or
    # one run per plane in data, scale0, scale1, aux order (None = absent)
    payload: PlaneRef | None = None
    planes: Sequence[PlaneRef | None] | None = None
    expected_digest: bytes | None = None
    expected_gid: bytes | None = None  # recorded by a grit-manifest.json
    # layout expressions by placement word (§5.3); usually one mapping per
    # file or ggml type, shared by its tensors and never mutated
    layouts: Mapping[int, str] = field(default_factory=lambda: NO_LAYOUTS)
    # a tuple: most tensors have none, and one empty tuple serves them all
    notes: tuple[str, ...] = ()
    declared: dict[str, Any] | None = None  # the declared quantisation that applies

    @property
    def grade_id(self) -> int | None:
        return self.desc.grade_id if self.desc is not None else None

    def refs(self) -> list[PlaneRef | None]:
        """Its planes then its payload (None where absent)."""
        return [*(self.planes or ()), self.payload]
