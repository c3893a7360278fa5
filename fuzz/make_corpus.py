"""Seed corpus for fuzz_readers.py from the committed fixtures (first byte
0 = safetensors, 1 = GGUF; files are cut to 64 KiB)."""

import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    n = 0
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            kind = 0 if f.endswith(".safetensors") else 1 if f.endswith(".gguf") else None
            if kind is None:
                continue
            with open(os.path.join(dirpath, f), "rb") as fh:
                data = fh.read(65536)
            with open(os.path.join(out, f"seed-{n:03d}"), "wb") as o:
                o.write(bytes([kind]) + data)
            n += 1
    print(f"{n} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus")
