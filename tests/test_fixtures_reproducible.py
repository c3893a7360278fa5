"""The committed fixtures are exactly what fixtures/make_fixtures.py writes."""

import filecmp
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generator_reproduces_the_committed_fixtures(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "fixtures" / "make_fixtures.py"), "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=300)
    for sub in ("conventions", "broken", "sample"):
        for dirpath, _, files in os.walk(tmp_path / sub):
            for f in files:
                new = Path(dirpath) / f
                old = ROOT / "fixtures" / new.relative_to(tmp_path)
                assert old.exists(), old
                assert filecmp.cmp(new, old, shallow=False), old


def test_fixtures_stay_small():
    corpus = ("producers", "producers-pending")  # real producers' files, waiting or not
    ours = [p for p in (ROOT / "fixtures").rglob("*")
            if p.is_file() and not set(corpus) & set(p.relative_to(ROOT / "fixtures").parts)]
    assert sum(p.stat().st_size for p in ours) < 5 * 1024 * 1024
    # the real producers' corpus has a budget of its own: 25 MB for the
    # first corpus, raised to 45 MB for the AWQ GEMV/GEMM, optimum-quanto,
    # torchao, MLX, bitsandbytes 4-bit, FineGrainedFP8, HQQ and FP8-scheme
    # checkpoints added beside it (about 42 MB in all)
    theirs = [p for sub in corpus for p in (ROOT / "fixtures" / sub).rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in theirs) <= 45 * 1024 * 1024
