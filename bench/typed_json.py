"""The typed decodes of long headers and indexes (parsers/safetensors_json.py)
against the plain paths they stand in for: the benchmark that fails
without them.

    python bench/typed_json.py TREE [--repeat N] [--goal R]

TREE is a directory of safetensors shards with model.safetensors.index.json
(bench/conventions.py ``--keep DIR`` writes them; its BF16 tree is the one
where reading is most of the scan).  Each round reads every shard's header
(``safetensors_reader.read_header``) and parses the index
(``configs.read_json`` with ``index.json_loads``), in this process, once
with the typed decodes and once with them turned off (the plain paths:
``TYPED_FROM`` and ``TYPED_SHARDS`` out of reach), alternately; best of
--repeat each.  Prints plain / typed and exits 1 when it is below --goal
(1.3x: a typed path that no longer pays for itself is a second parser to
remove).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--goal", type=float, default=1.3)
    a = ap.parse_args()
    from grit_scan.artifact import ArtifactDraft, Format
    from grit_scan.parsers import configs, index
    from grit_scan.parsers import safetensors_reader as sr
    from grit_scan.parsers.fileio import SafeFile

    names = sorted(os.listdir(a.tree))
    shards = [os.path.join(a.tree, n) for n in names if n.endswith(".safetensors")]
    idx = os.path.join(a.tree, "model.safetensors.index.json")
    typed_from, typed_shards = sr.TYPED_FROM, index.TYPED_SHARDS

    def read(typed: bool) -> float:
        sr.TYPED_FROM = typed_from if typed else 1 << 62
        index.TYPED_SHARDS = typed_shards if typed else 0
        gc.collect()
        t = time.perf_counter()
        art = ArtifactDraft(path=idx, abs_path=idx, format=Format.INDEX)
        parsed = configs.read_json(idx, art, loads=index.json_loads(names))
        assert parsed is not None and not art.issues, art.issues
        for path in shards:
            draft = ArtifactDraft(path=path, abs_path=path, format=Format.SAFETENSORS)
            with SafeFile(path) as f:
                hdr = sr.read_header(f, draft)
            assert hdr.table is not None and not draft.issues, draft.issues
        took = time.perf_counter() - t
        del parsed
        return took

    best = {True: float("inf"), False: float("inf")}
    for _ in range(a.repeat + 1):
        for typed in (True, False):
            best[typed] = min(best[typed], read(typed))
    ratio = best[False] / best[True]
    met = ratio >= a.goal
    print(f"headers and index of {len(shards)} shards: typed {best[True]:.3f} s, plain "
          f"{best[False]:.3f} s, plain / typed {ratio:.2f}x (goal >= {a.goal}x) "
          f"{'met' if met else 'NOT met'}")
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
