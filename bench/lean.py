"""What a stripped pure-Python scan of a sharded tree costs, against the
same floor as bench/conventions.py: a reference for how near grit can get,
not a tool.

    python bench/lean.py TREE [TREE ...] [--repeat N]

Each TREE is a directory of safetensors shards and
``model.safetensors.index.json`` (bench/conventions.py ``--keep DIR``
writes them).  Three whole processes are timed, alternately, best of
--repeat each:

- floor: bench/conventions.py's floor (each shard's 8-byte length and
  ``json.loads`` of its header, ``json.load`` of the index);
- lean reader: each header decoded by msgspec into typed entries, its
  spans checked against shape x dtype and its offsets against the data
  region, the index decoded and its names checked against the headers';
- lean scan: the lean reader, then every name grouped into its module
  (split at the last dot), and one JSON record (name, module, shape,
  dtype) written to /dev/null for each module holding a part of a code
  dtype (integer, FP8, FP4).

The lean scan reports nothing and runs no rule: grit does everything it
does and more (configs, every convention, roles, issues per shard, the
rules, the report), so its ratio is a floor under grit's, not a target.
Run it with the interpreter grit-scan is installed in (msgspec).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from models import FLOOR  # noqa: E402  (bench/conventions.py's floor: the same process)

_LEAN = r'''
import gc, json, math, os, struct, sys
gc.disable()
from itertools import chain, repeat
from operator import attrgetter, mul, sub
import msgspec

class Entry(msgspec.Struct, gc=False):
    dtype: str = ""
    shape: list[int] = []
    data_offsets: tuple[int, int] = (-1, -1)

BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16,
        "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "F64": 64,
        "I64": 64, "U64": 64, "F4": 4}
CODES = {"U8", "I8", "I32", "U32", "F8_E4M3", "F8_E5M2", "F4"}
root, scan = sys.argv[1], sys.argv[2] == "scan"
decode = msgspec.json.Decoder(dict[str, Entry]).decode
with open(os.path.join(root, "model.safetensors.index.json"), "rb") as f:
    weight_map = msgspec.json.decode(f.read())["weight_map"]
D, S, O = attrgetter("dtype"), attrgetter("shape"), attrgetter("data_offsets")
names, dtypes, shapes, bad = [], [], [], 0
for shard in sorted(set(weight_map.values())):
    fd = os.open(os.path.join(root, shard), os.O_RDONLY)
    (n,) = struct.unpack("<Q", os.pread(fd, 8, 0))
    header = decode(os.pread(fd, n, 8))
    region = os.fstat(fd).st_size - 8 - n
    os.close(fd)
    header.pop("__metadata__", None)
    entries = list(header.values())
    dts = list(map(D, entries))
    offs = list(chain.from_iterable(map(O, entries)))
    start, end = offs[0::2], offs[1::2]
    ok = (list(map(mul, map(math.prod, map(S, entries)), map(BITS.__getitem__, dts)))
          == list(map(mul, map(sub, end, start), repeat(8))))
    bad += not (ok and start[0] == 0 and end[-1] == region and start[1:] == end[:-1])
    names += header
    if scan:
        dtypes += dts
        shapes += map(S, entries)
if set(names) != weight_map.keys():
    bad += 1
if scan:
    modules = {}
    for (mod, _, _), g in zip(map(str.rpartition, names, repeat(".")), range(len(names))):
        got = modules.get(mod)
        modules[mod] = (g,) if got is None else got + (g,)
    enc = json.encoder.encode_basestring_ascii
    out = open(os.devnull, "w")
    batch = []
    for mod, parts in modules.items():
        coded = [g for g in parts if dtypes[g] in CODES]
        if coded:
            g = coded[0]
            batch.append('{"name": %s, "module": %s, "shape": %s, "dtype": "%s"}' % (
                enc(names[g]), enc(mod), shapes[g], dtypes[g]))
            if len(batch) == 1024:
                out.write(",\n".join(batch))
                batch.clear()
    out.write(",\n".join(batch))
    out.close()
print(bad)
sys.stdout.flush()
os._exit(0)
'''

def _timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    took = time.perf_counter() - t
    if done.returncode or done.stdout.strip() not in ("", "0"):
        sys.exit(f"{' '.join(cmd[:3])}: exit {done.returncode}, {done.stdout}{done.stderr}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    py = sys.executable
    print(f"# python {sys.version.split()[0]}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| tree | floor s | lean reader / floor | lean scan / floor |")
    print("|---|---|---|---|")
    for tree in a.trees:
        runs = {"floor": [py, "-c", FLOOR, tree], "reader": [py, "-c", _LEAN, tree, "read"],
                "scan": [py, "-c", _LEAN, tree, "scan"]}
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(a.repeat + 1):  # the first round warms the page cache
            for k, cmd in runs.items():
                best[k] = min(best[k], _timed(cmd))
        f = best["floor"]
        print(f"| {os.path.basename(tree.rstrip('/'))} | {f:.2f} | {best['reader'] / f:.2f}x "
              f"| {best['scan'] / f:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
