"""In-process mutation fuzzer: scan + every renderer (text, JSON, SARIF).

    python fuzz/mutate_scan.py --seed 1 --count 500000 --out fuzz/out-1

Seeds are the heads of the committed fixtures (safetensors headers cut to
their header, GGUF files cut to 4 KiB) plus the hostile-suite builders'
shapes.  Each input is one seed with 1-4 random mutations (bit flips,
interesting integers at random offsets, byte runs inserted or deleted,
splices of two seeds, JSON-aware token swaps in safetensors headers).  It is
written to a file, scanned with ``grit_scan.scan`` and rendered as JSON,
SARIF and github for every input and as text (concise, full, grouped) for
every new report shape and every 8th input (``render_all``), each through
the CLI's own dispatch into a real UTF-8 byte stream (``utf8_stream``: strict,
as a CI runner's stdout, where a lone surrogate in a name is an error that a
string buffer would accept); the JSON and SARIF text is parsed back.  Any exception that
escapes is "unhandled": the input is saved under ``--out`` and counted.  The
last line printed is a JSON summary {"seed", "count", "unhandled", "seconds"}
that docs/reliability.md records.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import struct
import sys
import tempfile
import time
import traceback

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from grit_scan import api  # noqa: E402
from grit_scan.report.formats import OutputFormat, RenderOptions, render  # noqa: E402
from grit_scan.report.report import Report  # noqa: E402

INTERESTING = [0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 63, 64, 127, 128, 255, 256, 4096, 65535,
               65536, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63,
               (1 << 64) - 1]
TEXT_EVERY = 8
JSON_TOKENS = [b'"dtype"', b'"shape"', b'"data_offsets"', b'"__metadata__"', b'"__grit__"',
               b"[]", b"{}", b"0", b"-1", b"18446744073709551615", b"1e999", b"null",
               b'"F32"', b'"U8"', b'"I8"', b"[1,2]", b"\\u005f", b",", b":", b'"', b"\\"]


def seeds() -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, "fixtures"))):
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                head = fh.read(1 << 16)
            if f.endswith(".safetensors") and len(head) >= 8:
                (n,) = struct.unpack("<Q", head[:8])
                if n <= 16384:
                    out.append((".safetensors", head[: 8 + n] + head[8 + n: 8 + n + 256]))
            elif f.endswith(".gguf"):
                out.append((".gguf", head[:4096]))
    return out


def mutate(rng: random.Random, data: bytes, pool: list[tuple[str, bytes]]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        if not b:
            b += rng.randbytes(8)
        pos = rng.randrange(len(b))
        if op == 0:
            b[pos] ^= 1 << rng.randrange(8)
        elif op == 1:
            w = rng.choice((1, 2, 4, 8))
            v = rng.choice(INTERESTING) & ((1 << (8 * w)) - 1)
            b[pos:pos + w] = v.to_bytes(w, "little")
        elif op == 2:
            del b[pos:pos + rng.randint(1, 64)]
        elif op == 3:
            b[pos:pos] = rng.randbytes(rng.randint(1, 16))
        elif op == 4:
            other = rng.choice(pool)[1]
            cut = rng.randrange(len(other) or 1)
            b = b[:pos] + other[cut:cut + rng.randint(1, 512)]
        elif op == 5:
            b[pos:pos + rng.randint(0, 4)] = rng.choice(JSON_TOKENS)
        else:
            chunk = b[pos:pos + rng.randint(1, 32)]
            b[pos:pos] = chunk * rng.randint(1, 8)
    return bytes(b)


def utf8_stream() -> io.TextIOWrapper:
    """A text stream over bytes, strict UTF-8: what stdout is on a UTF-8 CI
    runner (an unencodable character raises, as it would there)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n",
                            write_through=True)


def render_to_bytes(rep: Report, fmt: OutputFormat) -> bytes:
    """``fmt`` written through a strict UTF-8 stream; the bytes, checked to
    decode as UTF-8."""
    stream = utf8_stream()
    render(rep, fmt, stream, RenderOptions(color=False))
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    raw.decode("utf-8")
    return bytes(raw)


def render_all(rep: Report, i: int, shapes: set[tuple[object, ...]]) -> bool:
    """JSON, SARIF and github for every input (the documents parsed back);
    text (rich costs ~9 ms a report, 90% of the loop) for every report of a
    shape not seen before (its finding kinds and counts, artifacts and
    skips) and for every TEXT_EVERY-th input.  True when the text renderer
    ran."""
    for fmt in (OutputFormat.JSON, OutputFormat.SARIF):
        json.loads(render_to_bytes(rep, fmt))
    render_to_bytes(rep, OutputFormat.GITHUB)
    shape = (tuple(sorted((f.kind.value, f.code) for f in rep.findings)),
             tuple((a.format.value, a.parsed) for a in rep.artifacts), len(rep.skipped))
    if shape in shapes and i % TEXT_EVERY:
        return False
    if len(shapes) < 100_000:
        shapes.add(shape)
    for fmt in (OutputFormat.CONCISE, OutputFormat.FULL, OutputFormat.GROUPED):
        render_to_bytes(rep, fmt)
    return True


def arguments(count: int, out: str) -> argparse.Namespace:
    """--seed, --count and --out, the options of this and the other mutation fuzzers."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=count)
    ap.add_argument("--out", default=out)
    return ap.parse_args()


def main() -> None:
    args = arguments(100_000, "fuzz/out")
    rng = random.Random(args.seed)
    pool = seeds()
    os.makedirs(args.out, exist_ok=True)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    work = tempfile.mkdtemp(prefix="grit-mfuzz-", dir=shm)
    shapes: set[tuple[object, ...]] = set()
    texts = 0
    unhandled = 0
    t0 = time.time()
    for i in range(args.count):
        ext, base = rng.choice(pool)
        data = mutate(rng, base, pool)
        path = os.path.join(work, "x" + ext)
        with open(path, "wb") as f:
            f.write(data)
        try:
            texts += render_all(api.scan([path], jobs=1), i, shapes)
        except Exception:  # noqa: BLE001 - counting escapes is the point
            unhandled += 1
            with open(os.path.join(args.out, f"crash-{args.seed}-{i}{ext}"), "wb") as f:
                f.write(data)
            with open(os.path.join(args.out, f"crash-{args.seed}-{i}.txt"), "w") as f:
                f.write(traceback.format_exc())
        if i and i % 50_000 == 0:
            print(json.dumps({"seed": args.seed, "done": i, "unhandled": unhandled,
                              "seconds": round(time.time() - t0)}), flush=True)
    print(json.dumps({"seed": args.seed, "count": args.count, "unhandled": unhandled,
                      "seeds": len(pool), "text_rendered": texts,
                      "seconds": round(time.time() - t0)}), flush=True)


if __name__ == "__main__":
    main()
