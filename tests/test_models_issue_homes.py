"""An issue about a quantised tensor is reported on the shard that holds it.

A convention that refuses a module names the logical tensor (``mod.weight``)
even where the file stores it under other names (compressed-tensors'
``weight_packed``, GPTQ's ``qweight``): the issue goes with the tensor, to
the shard holding its data plane, not to the model's first shard.  The
expected shard is read from the producer's own headers, with ``json``."""

import json
import struct
from collections import defaultdict
from pathlib import Path

import grit_scan

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "producers"


def _holders(root: Path) -> dict[str, str]:
    """Tensor name -> the shard whose header lists it."""
    out = {}
    for f in sorted(root.glob("*.safetensors")):
        with f.open("rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            for k in json.loads(fh.read(n)):
                out[k] = f.name
    return out


def test_a_refused_module_is_reported_where_its_data_is():
    # compressed-tensors nvfp4a16 (llm-compressor), 7 shards, modules straddling them
    root = FIX / "ct" / "nvfp4a16-sharded"
    holders = _holders(root)
    rep = grit_scan.scan([str(root)])
    got: dict[str, list[str]] = defaultdict(list)
    for a in rep.artifacts:
        for iss in a.issues:
            if iss.code.value == "not_representable":
                got[Path(a.path).name].append(iss.tensor or "")
    want: dict[str, list[str]] = defaultdict(list)
    for name in sorted(n for v in got.values() for n in v):
        assert name.endswith(".weight") and name not in holders  # a logical name
        want[holders[name[: -len(".weight")] + ".weight_packed"]].append(name)
    assert len(want) >= 5  # spread over the shards, as the data is
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
    # and each shard's quantised tensors are the ones its issues name
    for a in rep.artifacts:
        named = sorted(q.name for q in a.quantized)
        assert sorted(got.get(Path(a.path).name, [])) == named, a.path


def test_the_model_finding_lists_the_tensors_of_every_shard():
    """The refusals of the shards become one finding on the model, whose
    ``tensors`` are every shard's (a shard that refused several listed none)."""
    root = FIX / "ct" / "nvfp4a16-sharded"
    packed = sorted(n[: -len("_packed")] for n in _holders(root) if n.endswith(".weight_packed"))
    rep = grit_scan.scan([str(root)])
    (nr,) = [f for f in rep.findings if f.kind == "not_representable"]
    assert nr.path.endswith("model.safetensors.index.json")
    assert nr.detail["count"] == len(packed) == 14
    assert sorted(nr.detail["tensors"]) == packed
    assert len(nr.detail["files"]) == 6
