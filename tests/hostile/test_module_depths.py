"""Modules of many depths (found at stop 40): a sharded model whose every
module is one dot deeper than the one before, each with an FP8 scale layout
no convention knows, gives one note per module naming the module, and each
note goes to the shard of the first tensor under its module
(``parsers/models._first_under``).  That search split every name once per
distinct depth among the modules: 2,000 such modules (8 MB of headers) took
86 s at 388909a and 4,000 would have taken over ten minutes.  It now sorts
the names once when the modules have many depths (``_first_in_order``),
and the tests below hold its cost to the input's size and its answers to
the notes' shards.  CPU time of the scan process, not wall-clock time
(run_scan.py), compared as a ratio between two sizes."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from limits import run_limited

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "run_scan.py")


def _module(i: int) -> str:
    return "m" + ".x" * i + ".down_proj"


def _deep_modules(d: Path, n: int) -> None:
    """Two shards of n modules, module i of i + 2 components before its
    parts: an F8 weight and a scale of 3 values, which fits no layout."""
    d.mkdir()
    for k in range(2):
        header: dict[str, object] = {}
        off = 0
        for i in range(k * n // 2, (k + 1) * n // 2):
            header[_module(i) + ".weight"] = {"dtype": "F8_E4M3", "shape": [4, 8],
                                              "data_offsets": [off, off + 32]}
            header[_module(i) + ".weight_scale"] = {"dtype": "F32", "shape": [3],
                                                    "data_offsets": [off + 32, off + 44]}
            off += 44
        raw = json.dumps(header).encode()
        (d / f"model-0000{k + 1}-of-00002.safetensors").write_bytes(
            struct.pack("<Q", len(raw)) + raw + bytes(off))


def _scan(d: Path) -> tuple[dict, float]:
    p = run_limited([RUNNER, str(d)], cwd=HERE)
    assert p.returncode == 3, p.stderr[-2000:]  # one warning: unsupported_convention
    res = json.loads(p.stdout.strip().splitlines()[-1])
    return res["report"], float(res["cpu_seconds"])


def test_each_module_s_note_is_on_the_shard_holding_it(tmp_path: Path) -> None:
    n = 40
    _deep_modules(tmp_path / "m", n)
    rep, _ = _scan(tmp_path / "m")
    [finding] = rep["findings"]
    assert finding["kind"] == "unsupported_convention" and finding["detail"]["count"] == n
    for k, art in enumerate(rep["artifacts"]):
        layouts = [note.split(": ", 1)[0] for note in art["notes"]
                   if "match no per-tensor" in note]
        assert layouts == [_module(i) + ".weight"
                           for i in range(k * n // 2, (k + 1) * n // 2)], (k, layouts)


def test_cost_grows_with_the_headers_not_with_their_depths(tmp_path: Path) -> None:
    # four times the modules, each twice as deep on average: about 16 times
    # the header bytes.  The sort costs about that (a name compared with
    # another costs up to its length); a pass a depth cost 64 times or more
    # (with a pass a depth, as at 388909a: 0.41 s and 17.9 s of CPU here)
    _deep_modules(tmp_path / "small", 300)
    _deep_modules(tmp_path / "large", 1200)
    _, small = _scan(tmp_path / "small")
    _, large = _scan(tmp_path / "large")
    assert large < 24 * small + 1.0, (small, large)
