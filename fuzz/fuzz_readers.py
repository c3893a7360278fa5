"""atheris harness for the two binary readers (safetensors and GGUF).

    pip install atheris
    python fuzz/fuzz_readers.py -max_total_time=600 -rss_limit_mb=512 fuzz/corpus

The input's first byte picks the reader; the rest is the file.  The only
acceptable outcomes are an Artifact (parsed or with an UNPARSEABLE issue):
any other exception is a crash that atheris reports with the input that
caused it.  Seed the corpus with `python fuzz/make_corpus.py fuzz/corpus`.
"""

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports():
    from grit_scan.artifact import Artifact
    from grit_scan.parsers import readers

TMP = tempfile.mkdtemp(prefix="grit-fuzz-")
PATHS = {0: os.path.join(TMP, "x.safetensors"), 1: os.path.join(TMP, "x.gguf")}


def one(data: bytes) -> None:
    if not data:
        return
    which = data[0] & 1
    path = PATHS[which]
    with open(path, "wb") as f:
        f.write(data[1:])
    art = (readers.read_safetensors if which == 0 else readers.read_gguf)(path, "x")
    assert isinstance(art, Artifact)
    if not art.parsed:
        assert art.issues


if __name__ == "__main__":
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()
