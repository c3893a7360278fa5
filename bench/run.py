"""Performance comparisons, each against a baseline run in the same process.

    python bench/run.py [--quick] [--keep DIR]

Inputs are built deterministically in a temporary directory (nothing is
downloaded).  One line per comparison, with the ratio and the goal:

1. level-1 scan of a GGUF with a 150,000-token vocabulary, 150,000 merges
   and a few hundred quantised tensors, against gguf.GGUFReader opening it
   (goal: >= 100x faster);
2. scan of a tree of 500 safetensors shards x 400 tensors, against the floor
   of a bare loop that reads each header's length and json.loads it (goal:
   within 2x of the floor);
3. FNV-1a-128 digest throughput against a plain C byte loop compiled and run
   in this benchmark (goal: >= 0.8x);
4. --deep decode throughput on MXFP4, Q4_K and Q8_0 against gguf.quants.dequantize
   on the same bytes (goal: >= 1x) — bench/codec.py;
5. peak resident memory of `grit scan --deep` on a 2 GB checkpoint, in a
   child process (goal: < 300 MB).
Ratios, not absolute times: these machines are noisy.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def best(fn, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def line(name: str, ours: float, base: float, goal: str, unit: str = "s") -> None:
    ratio = base / ours if ours else float("inf")
    print(f"{name:<44} grit {ours:9.4f}{unit}  baseline {base:9.4f}{unit}  "
          f"ratio {ratio:8.2f}x  (goal {goal})", flush=True)


# ---------------------------------------------------------------- 1. GGUF vocab

def build_vocab_gguf(path: str, n_tokens: int, n_tensors: int) -> None:
    import gguf

    w = gguf.GGUFWriter(path, arch="llama")
    rng = np.random.default_rng(0)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"tok{i}_{rng.integers(1 << 30)}" for i in range(n_tokens)])
    w.add_token_merges([f"a{i} b{i}" for i in range(n_tokens)])
    w.add_token_types([1] * n_tokens)
    w.add_uint32("general.file_type", 15)
    for i in range(n_tensors):
        raw = rng.integers(0, 256, size=(2, 144), dtype=np.uint8)
        w.add_tensor(f"blk.{i // 4}.t{i % 4}.weight", raw, raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def bench_gguf(tmp: str, quick: bool) -> None:
    import gguf

    from grit_scan.api import scan

    path = os.path.join(tmp, "vocab.gguf")
    build_vocab_gguf(path, 20_000 if quick else 150_000, 300)
    ours = best(lambda: scan([path]), 3)
    theirs = best(lambda: gguf.GGUFReader(path), 1)
    line("1. GGUF 150k vocab: scan vs GGUFReader", ours, theirs, ">= 100x")


# ---------------------------------------------------------------- 2. shard tree

def build_tree(root: str, shards: int, per: int) -> None:
    from grit_scan.writers import Raw, write_safetensors

    for s in range(shards):
        t = {f"model.layers.{s}.mlp.t{i}.weight": Raw("BF16", [4, 4], bytes(32))
             for i in range(per)}
        write_safetensors(os.path.join(root, f"model-{s:05d}-of-{shards:05d}.safetensors"), t)


def floor_loop(root: str) -> None:
    for name in sorted(os.listdir(root)):
        with open(os.path.join(root, name), "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            json.loads(f.read(n))


def bench_tree(tmp: str, quick: bool) -> None:
    from grit_scan.api import scan

    root = os.path.join(tmp, "tree")
    os.makedirs(root)
    build_tree(root, 50 if quick else 500, 400)
    for _ in range(2):  # warm the page cache for both
        floor_loop(root)
    base = best(lambda: floor_loop(root), 3)
    ours = best(lambda: scan([root]), 3)
    line("2. 500 shards x 400 tensors: scan vs floor", ours, base, "within 2x (ratio >= 0.5)")


# ---------------------------------------------------------------- 3. digests

C_LOOP = r"""
#include <stdint.h>
#include <stddef.h>
typedef unsigned __int128 u128;
void fnv128(const unsigned char *p, size_t n, unsigned char *out) {
    u128 h = ((u128)0x6c62272e07bb0142ULL << 64) | 0x62b821756295c58dULL;
    u128 prime = ((u128)0x0000000001000000ULL << 64) | 0x000000000000013bULL;
    for (size_t i = 0; i < n; i++) { h ^= p[i]; h *= prime; }
    for (int i = 15; i >= 0; i--) { out[i] = (unsigned char)h; h >>= 8; }
}
"""


def bench_digest(tmp: str, quick: bool) -> None:
    from grit_scan.codec import fnv

    src = os.path.join(tmp, "loop.c")
    lib = os.path.join(tmp, "loop.so")
    with open(src, "w") as f:
        f.write(C_LOOP)
    if shutil.which("cc") is None:
        print("3. digest: no C compiler to build the baseline; skipped")
        return
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src], check=True)
    so = ctypes.CDLL(lib)
    data = os.urandom((32 if quick else 256) << 20)
    out = ctypes.create_string_buffer(16)
    base = best(lambda: so.fnv128(data, ctypes.c_size_t(len(data)), out), 3)
    ours = best(lambda: fnv.fnv1a128(data), 3)
    assert bytes(out.raw) == fnv.fnv1a128(data), "the two loops disagree"
    mb = len(data) / 1e6
    print(f"   digest throughput: grit {mb / ours:8.0f} MB/s, plain C {mb / base:8.0f} MB/s "
          f"(compiled helper: {fnv.compiled_backend()})")
    line("3. FNV-1a-128 digest vs plain C loop", ours, base, ">= 0.8x")


# ---------------------------------------------------------------- 5. --deep RSS

def _plane(chunk: bytes, n: int):
    """n bytes of a repeated random chunk, in pieces."""
    while n:
        k = min(n, len(chunk))
        yield chunk[:k]
        n -= k


def build_big(path: str, gb: float) -> None:
    """A GRIT-annotated safetensors checkpoint of ``gb`` GB, MXFP4 tensors of
    64 MiB each with recorded digests (so --deep must stream every byte),
    written piece by piece (the generator stays small too)."""
    from grit_scan.codec.descriptor import from_grade
    from grit_scan.codec.fingerprint import digest_stream
    from grit_scan.codec.grade import GRADE_MXFP4

    rows, cols = 4096, 32768  # 64 MiB data + 4 MiB scales per tensor
    per = rows * cols // 2 + rows * cols // 32
    n = max(1, int(gb * 1e9) // per)
    d = from_grade(GRADE_MXFP4, group_axis=1)
    rng = np.random.default_rng(0)
    chunk = rng.integers(0, 256, size=1 << 24, dtype=np.uint8).tobytes()
    scales = rng.integers(110, 140, size=1 << 22, dtype=np.uint8).tobytes()
    dig = digest_stream([(rows * cols // 2, _plane(chunk, rows * cols // 2)),
                         (rows * cols // 32, _plane(scales, rows * cols // 32)),
                         (0, iter(())), (0, iter(()))]).hex()
    tensors, header = {}, {}
    off = 0
    for i in range(n):
        name = f"model.layers.{i}.mlp.w.weight"
        header[f"{name}.grit_data"] = {"dtype": "U8", "shape": [rows * cols // 2],
                                       "data_offsets": [off, off + rows * cols // 2]}
        off += rows * cols // 2
        header[f"{name}.grit_scale0"] = {"dtype": "U8", "shape": [rows * cols // 32],
                                         "data_offsets": [off, off + rows * cols // 32]}
        off += rows * cols // 32
        tensors[name] = {"desc": d.hex(), "shape": [rows, cols], "digest": dig,
                         "planes": {"data": f"{name}.grit_data", "scale0": f"{name}.grit_scale0"}}
    header["__metadata__"] = {"__grit__": json.dumps({"grit": 1, "tensors": tensors})}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _ in range(n):
            for piece in _plane(chunk, rows * cols // 2):
                f.write(piece)
            for piece in _plane(scales, rows * cols // 32):
                f.write(piece)


def bench_rss(tmp: str, quick: bool) -> None:
    path = os.path.join(tmp, "big.safetensors")
    build_big(path, 0.2 if quick else 2.0)
    # VmHWM is this process's own peak (ru_maxrss would include the parent's
    # high-water mark, inherited across fork/exec on Linux)
    hwm = ("print('RSS',[int(l.split()[1])/1024 for l in open('/proc/self/status') "
           "if l.startswith('VmHWM:')][0])")
    code = ("import sys,io,contextlib,json;from grit_scan.cli import main;"
            "b=io.StringIO();\nwith contextlib.redirect_stdout(b): "
            "rc=main(['scan','--deep','--json',sys.argv[1]])\n"
            "r=json.loads(b.getvalue());print('KINDS',sorted({f['kind'] for f in r['findings']}))\n"
            + hwm)
    base_code = "import numpy,gguf,grit_scan.cli\n" + hwm
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True)
    secs = time.perf_counter() - t
    out = p.stdout.strip().splitlines()
    rss = float(out[-1].split()[1])
    print(f"   findings of the --deep scan: {out[-2]}")
    b = subprocess.run([sys.executable, "-c", base_code], capture_output=True, text=True)
    base = float(b.stdout.split()[1])
    size = os.path.getsize(path) / 1e9
    print(f"5. --deep peak RSS on a {size:.1f} GB checkpoint: {rss:.0f} MB "
          f"(imports alone {base:.0f} MB; {size * 1e3 / secs:.0f} MB/s) (goal < 300 MB)",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller inputs, for a smoke run")
    ap.add_argument("--keep", help="build inputs here and keep them")
    ap.add_argument("--only", help="comma-separated comparison numbers")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="grit-bench-")
    os.makedirs(tmp, exist_ok=True)
    only = set(a.only.split(",")) if a.only else {"1", "2", "3", "4", "5"}
    try:
        if "1" in only:
            bench_gguf(tmp, a.quick)
        if "2" in only:
            bench_tree(tmp, a.quick)
        if "3" in only:
            bench_digest(tmp, a.quick)
        if "4" in only:
            print("4. --deep decode vs gguf.quants.dequantize (bench/codec.py):", flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, "codec.py")] +
                           (["--blocks", "16384"] if a.quick else []), check=True)
        if "5" in only:
            bench_rss(tmp, a.quick)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
