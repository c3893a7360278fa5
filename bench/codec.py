"""Codec throughput against gguf-py on the same blocks, in the same process.

    python bench/codec.py [--blocks N] [--repeat R]

Prints one line per comparison: elements per second of grit_scan's decode
(or encode) and of gguf.quants.dequantize (or quantize) on identical input,
and their ratio (> 1 means grit_scan is faster).  Inputs are generated from a
fixed seed; nothing is downloaded.  Ratios, not absolute times, are the
result: these machines are noisy.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, quants

from grit_scan.codec.decode import decode
from grit_scan.codec.encode import encode
from grit_scan.codec.grade import GRADE_MXFP4, registry
from grit_scan.parsers.ggml_types import MAPPINGS

T = GGMLQuantizationType


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def blocks(ttype, n_blocks: int, rows: int, seed: int = 0) -> np.ndarray:
    blk, size = GGML_QUANT_SIZES[ttype]
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(rows, n_blocks // rows * size), dtype=np.uint8)
    b = raw.reshape(-1, size)
    if ttype == T.Q4_K:  # ordinary binary16 d and dmin, not random bit patterns
        b[:, :4] = rng.uniform(1e-3, 1e-1, size=(b.shape[0], 2)).astype(np.float16).view(
            np.uint8)
    elif ttype == T.Q8_0:  # an ordinary binary16 d per block
        b[:, :2] = rng.uniform(1e-3, 1e-1, size=(b.shape[0], 1)).astype(np.float16).view(
            np.uint8)
    elif ttype == T.MXFP4:
        b[:, 0] = rng.integers(100, 150, size=b.shape[0])
    return raw


def bench_decode(ttype, n_blocks: int, repeat: int) -> None:
    rows = 64
    raw = blocks(ttype, n_blocks, rows)
    m = MAPPINGS[ttype.value]
    blk, size = GGML_QUANT_SIZES[ttype]
    shape = [rows, raw.shape[1] // size * blk]
    d = m.descriptor(group_axis=1)
    reg = registry([m.grade])
    payload = raw.tobytes()
    ours = best(lambda: decode(d, shape, payload, grades=reg, layouts=m.layouts), repeat)
    theirs = best(lambda: quants.dequantize(raw, ttype), repeat)
    n = shape[0] * shape[1]
    print(f"decode {ttype.name:6s} {n:>10d} elems  grit {n / ours / 1e6:8.1f} Melem/s  "
          f"gguf-py {n / theirs / 1e6:8.1f} Melem/s  ratio {theirs / ours:5.2f}x")


def bench_encode(n_blocks: int, repeat: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, n_blocks // 64 * 32)).astype(np.float32)
    ours = best(lambda: encode(x, GRADE_MXFP4, 1), repeat)
    theirs = best(lambda: quants.quantize(x, T.MXFP4), repeat)
    n = x.size
    print(f"encode MXFP4  {n:>10d} elems  grit {n / ours / 1e6:8.1f} Melem/s  "
          f"gguf-py {n / theirs / 1e6:8.1f} Melem/s  ratio {theirs / ours:5.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=1 << 16)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    bench_decode(T.MXFP4, a.blocks, a.repeat)
    bench_decode(T.Q4_K, a.blocks // 8, a.repeat)
    bench_decode(T.Q8_0, a.blocks, a.repeat)
    bench_encode(a.blocks, a.repeat)
    print("encode Q4_K: gguf-py has no Q4_K quantize to compare against")


if __name__ == "__main__":
    main()
