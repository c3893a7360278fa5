"""Remote and sweep benchmarks (ratios in one run; docs/performance.md).

    .venv/bin/python bench/remote.py [--models 1000] [--latency 0.1] [--rounds 2]
                                     [--only shards,gguf,sweep,remote-sweep]

1. safetensors over HTTP: a 100-shard repository on the loopback Hub;
   requests per file and bytes fetched against header bytes.
2. GGUF with a 150k-token vocabulary over HTTP: bytes fetched / header bytes.
3. grit sweep of N small local models: a 2-worker dask LocalCluster against
   --jobs 2 locally (wall-time ratio).
4. grit sweep of N remote models (hf://, each a config, two shards and their
   index) on a loopback Hub that adds --latency to every response: --jobs 4
   against the latency floor (requests per model x latency x N / 4, the
   requests counted by the server in the same run), and a 2-worker dask
   LocalCluster against --jobs 2.  Whole processes, run interleaved
   (jobs 4, jobs 2, dask, jobs 4, ...), best of --rounds each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from remote_loopback import Loopback, sharded_model  # noqa: E402

import grit_scan  # noqa: E402
from grit_scan.parsers.remote import SPECULATIVE  # noqa: E402


def shards(tmp: Path, n: int = 100) -> None:
    d = tmp / "shards"
    # headers from ~15 kB to ~110 kB
    heads = sharded_model(d, n, [150 + 40 * k for k in range(25)], config=False)
    srv = Loopback(repos={"b/shards": str(d)}).start()
    os.environ["HF_ENDPOINT"] = srv.url
    t0 = time.perf_counter()
    grit_scan.scan(["hf://b/shards"], jobs=1)
    took = time.perf_counter() - t0
    hits = [h for h in srv.data_hits() if ".safetensors?" in h.path]
    fetched = sum(h.sent for h in hits)
    print(f"safetensors, {n} shards over HTTP: {len(hits) / n:.2f} data requests per file "
          f"(bound 2); fetched {fetched:,} B, header bytes {heads:,} B; "
          f"fetched / (1.1 x header + {SPECULATIVE:,} B per file) = "
          f"{fetched / (1.1 * heads + n * SPECULATIVE):.3f} (bound 1); {len(srv.hits)} requests "
          f"in all, {took:.2f} s")
    srv.stop()


def gguf_vocab(tmp: Path, n: int = 150_000) -> None:
    import gguf
    import numpy as np

    d = tmp / "gguf"
    d.mkdir()
    w = gguf.GGUFWriter(str(d / "model.gguf"), "llama")
    w.add_token_list([f"token-{i:07d}" for i in range(n)])
    w.add_token_scores([float(i) for i in range(n)])
    w.add_token_types([1] * n)
    w.add_token_merges([f"t{i} x{i}" for i in range(n)])
    for i in range(4):
        w.add_tensor(f"blk.{i}.attn_q.weight", np.zeros((256, 4096), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    srv = Loopback(repos={"b/gguf": str(d)}).start()
    os.environ["HF_ENDPOINT"] = srv.url
    t0 = time.perf_counter()
    rep = grit_scan.scan(["hf://b/gguf"], jobs=1)
    took = time.perf_counter() - t0
    hb = rep.artifacts[0].metadata["header_bytes"]
    hits = srv.data_hits()
    fetched = sum(h.sent for h in hits)
    print(f"GGUF, {n:,}-token vocabulary over HTTP: header {hb:,} B, fetched {fetched:,} B in "
          f"{len(hits)} requests; ratio {fetched / hb:.3f} (bound 1.2); file "
          f"{rep.artifacts[0].size:,} B; {took:.2f} s")
    srv.stop()


def sweep(tmp: Path, n: int) -> None:  # noqa: C901
    from distributed import LocalCluster

    src = ROOT / "fixtures" / "sample" / "llama-mxfp4"
    lst = []
    for i in range(n):
        d = tmp / "models" / f"m{i:04d}"
        shutil.copytree(src, d)
        lst.append(str(d))
    (tmp / "targets.txt").write_text("\n".join(lst))
    base = [sys.executable, "-m", "grit_scan", "sweep", "--from", str(tmp / "targets.txt")]

    def run(extra: list[str], out: str) -> float:
        t0 = time.perf_counter()
        # exit 1: the sample model is broken on purpose (a structural finding)
        subprocess.run(base + ["--out", str(tmp / out)] + extra,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        took = time.perf_counter() - t0
        assert len((tmp / out).read_text().splitlines()) == n, out
        return took

    local = run(["--jobs", "2"], "local.jsonl")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        dask = run(["--dask", cluster.scheduler_address], "dask.jsonl")

    def rows(name: str) -> dict[str, object]:
        return {json.loads(x)["target"]: json.loads(x)
                for x in (tmp / name).read_text().splitlines()}

    same = rows("local.jsonl") == rows("dask.jsonl")
    print(f"sweep of {n} models: --jobs 2 {local:.1f} s, 2-worker LocalCluster {dask:.1f} s; "
          f"ratio {dask / local:.2f} (goal 1.3); reports identical: {same}")


def remote_model(d: Path, shards_per_model: int = 2, tensors: int = 40) -> None:
    """A small sharded model: config.json, its shards' headers (sparse files)
    and model.safetensors.index.json."""
    sharded_model(d, shards_per_model, [tensors],
                  name=lambda s, i: f"model.layers.{s * tensors + i}.mlp.down_proj.weight")


def remote_sweep(tmp: Path, n: int, latency: float, rounds: int) -> None:
    from distributed import LocalCluster

    remote_model(tmp / "remote-model")
    repos = {f"b/m{i:04d}": str(tmp / "remote-model") for i in range(n)}
    (tmp / "remote.txt").write_text("\n".join(f"hf://{r}" for r in repos) + "\n")
    srv = Loopback(repos=repos, latency=latency).start()
    env = {**os.environ, "HF_ENDPOINT": srv.url, "HF_HUB_OFFLINE": "0"}
    env.pop("HF_TOKEN", None)
    os.environ["HF_ENDPOINT"] = srv.url  # the LocalCluster's workers inherit it
    base = [sys.executable, "-m", "grit_scan", "sweep", "--from", str(tmp / "remote.txt")]
    outs: dict[str, list[str]] = {}

    def run(name: str, extra: list[str]) -> tuple[float, int]:
        out = tmp / f"remote-{name}.jsonl"
        out.unlink(missing_ok=True)
        srv.reset()
        t0 = time.perf_counter()
        subprocess.run(base + ["--out", str(out)] + extra, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        took = time.perf_counter() - t0
        lines = out.read_text().splitlines()
        outs[name] = sorted(lines)
        assert len(lines) == n and not any('"error"' in x for x in lines), name
        return took, len(srv.hits)

    times: dict[str, list[float]] = {"jobs4": [], "jobs2": [], "dask2": []}
    requests = 0
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        for _ in range(rounds):
            took, requests = run("jobs4", ["--jobs", "4"])
            times["jobs4"].append(took)
            times["jobs2"].append(run("jobs2", ["--jobs", "2"])[0])
            times["dask2"].append(run("dask2", ["--dask", cluster.scheduler_address])[0])
    srv.stop()
    per_model = requests / n
    floor = per_model * latency * n / 4
    j4, j2, d2 = (min(times[k]) for k in ("jobs4", "jobs2", "dask2"))
    same = outs["jobs4"] == outs["jobs2"] == outs["dask2"]
    load = os.getloadavg()[0]
    print(f"remote sweep of {n} models (hf://, config + 2 shards + index) at {latency * 1000:.0f} "
          f"ms a response, best of {rounds}, load {load:.1f}: {per_model:.2f} requests per model; "
          f"--jobs 4 {j4:.1f} s against the floor {floor:.1f} s: ratio {j4 / floor:.2f} "
          f"(goal 1.5); 2-worker LocalCluster {d2:.1f} s / --jobs 2 {j2:.1f} s: ratio "
          f"{d2 / j2:.2f} (goal 1.3); results identical: {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1,
                    help="seconds the loopback Hub adds to every response (remote sweep)")
    ap.add_argument("--rounds", type=int, default=2, help="best of N (remote sweep)")
    ap.add_argument("--only", default="shards,gguf,sweep,remote-sweep")
    args = ap.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        if "shards" in only:
            shards(tmp)
        if "gguf" in only:
            gguf_vocab(tmp)
        if "remote-sweep" in only:
            remote_sweep(tmp, args.models, args.latency, args.rounds)
        if "sweep" in only:
            sweep(tmp, args.models)


if __name__ == "__main__":
    main()
