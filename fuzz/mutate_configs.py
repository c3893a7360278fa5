"""In-process fuzzer of a model directory's JSON files: scan + every renderer.

    python fuzz/mutate_configs.py --seed 1 --count 20000 --out fuzz/out-cfg-1

A pull request can change a checkpoint's ``config.json`` (and
``quantize_config.json``, ``hf_quant_config.json``, the shard index) without
touching a tensor.  Each input here is one committed fixture directory that
has such a file, its tensor files hard-linked (never written), and one of
its JSON files changed by 1-4 structure-aware mutations: a value anywhere
replaced by a hostile one (huge, negative, fractional, NaN-free floats,
empty, long, bidi, lone-surrogate escapes, deep, wide, backtracking
``re:`` patterns), a key dropped, a key the config readers know added with
such a value, ``quant_method`` swapped for another producer's, or the text
cut short.  The directory is scanned with ``grit_scan.scan`` and rendered as
mutate_scan.py renders (JSON and SARIF parsed back, github, text for new
report shapes), through a strict UTF-8 stream.  An exception that escapes
is "unhandled": the directory's mutated file is saved under ``--out`` with
its traceback.

One input in four checks the verdict instead: only keys of ``config.json``
that no config reader looks at are changed (``READ`` lists those it does),
so the findings must be those of the unchanged directory, message for
message; a difference is "changed" (a finding that cries wolf, or one
silenced), saved like a crash.  The last line printed is a JSON summary
{"seed", "count", "unhandled", "verdicts", "changed", "seconds"} that
docs/reliability.md records.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from mutate_scan import arguments, render_all  # noqa: E402

from grit_scan import api  # noqa: E402

JSON_NAMES = ("config.json", "quantize_config.json", "quant_config.json",
              "hf_quant_config.json", "quantization_config.json",
              "model.safetensors.index.json")
# keys the config readers look for (grit_scan/parsers/configs.py, the
# conventions' declared parameters)
KEYS = ("quant_method", "bits", "group_size", "format", "config_groups", "weights",
        "num_bits", "strategy", "block_structure", "ignore", "targets", "type", "symmetric",
        "modules_to_not_convert", "quant_algo", "kv_cache_quant_algo", "quantization",
        "sym", "desc_act", "zero_point", "version", "weight_block_size", "w_bit",
        "q_group_size", "checkpoint_format", "exclude_modules", "quantized_layers",
        "text_config", "quantization_config", "activation_scheme", "fmt", "load_in_4bit",
        "bnb_4bit_quant_type", "bnb_4bit_compute_dtype", "weight_map", "metadata",
        "total_size", "producer", "input_activations", "output_activations",
        "dynamic", "observer", "actorder", "scale_dtype", "zp_dtype", "num_hidden_layers")
# config.json's top-level keys the config readers look at
# (grit_scan/parsers/configs.py); the verdict inputs change only the others
READ = frozenset({"quantization_config", "text_config", "num_hidden_layers", "model_type",
                  "auto_map", "quantization", "architectures", "n_layers"})
METHODS = ("gptq", "awq", "compressed-tensors", "fp8", "modelopt", "bitsandbytes",
           "mxfp4", "quanto", "torchao", "hqq", "auto-round", "mlx", "gguf", "GPTQ", "")


def hostile(rng: random.Random, depth: int = 0) -> Any:
    """One hostile JSON value."""
    pick = rng.randrange(24)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice((True, False))
    if pick == 2:
        return rng.choice((0, -1, 1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 7, 13))
    if pick == 3:
        return rng.choice((2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -2**63, 10**400))
    if pick == 4:
        return rng.choice((0.5, -0.0, 1e308, -1e308, 5e-324, 3.0, 128.0, 1e-9))
    if pick == 5:
        return rng.choice(("", " ", "0", "-1", "4", "int", "float", "fp8", "nvfp4", "mxfp4",
                           "group", "channel", "tensor", "block", "tensor_group", "NVFP4",
                           "FP8", "W4A16", "int4", "nf4", "fp4"))
    if pick == 6:
        return "x" * rng.choice((1000, 100_000))
    if pick == 7:
        return rng.choice(("\u202e\u2066evil", "a\nb", "::error::x", "\x00", "\ud800",
                           "\udcff", "%0A", "${{ secrets.X }}", "\x1b[31mred"))
    if pick == 8:
        return rng.choice(("re:.*", "re:(a+)+$", "re:(", "re:" + "a?" * 40 + "a" * 40,
                           "re:.*proj$", "lm_head", "*", "re:model\\.layers\\.\\d+\\..*"))
    if pick == 9:
        v: Any = 1
        for _ in range(rng.choice((10, 100, 900))):
            v = [v]
        return v
    if pick == 10:
        return list(range(rng.choice((2, 3, 10, 10_000))))
    if pick == 11:
        return {f"k{i}": i for i in range(rng.choice((1, 50, 5000)))}
    if pick == 12:
        return rng.choice(METHODS)
    if pick == 13:
        return [rng.choice((64, 128, 0, -1, 1)) for _ in range(rng.randint(0, 4))]
    if depth < 2 and pick == 14:
        return {rng.choice(KEYS): hostile(rng, depth + 1) for _ in range(rng.randint(1, 4))}
    if depth < 2 and pick == 15:
        return [hostile(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    return rng.choice((None, 4, "4", 128, [128, 128], {"num_bits": 4}))


def nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``doc`` (dict keys and list indexes), the root too."""
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(nodes(v, (*path, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:64]):
            out.extend(nodes(v, (*path, i)))
    return out


def at(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def mutate_doc(rng: random.Random, doc: Any) -> Any:
    for _ in range(rng.randint(1, 4)):
        paths = nodes(doc)
        path = rng.choice(paths)
        op = rng.randrange(5)
        if not path:
            if op == 0:
                doc = hostile(rng)
            continue
        parent = at(doc, path[:-1])
        key = path[-1]
        if op == 0 or op == 1:
            parent[key] = hostile(rng)
        elif op == 2 and isinstance(parent, dict):
            del parent[key]
        elif op == 3:
            target = at(doc, path)
            if isinstance(target, dict):
                target[rng.choice(KEYS)] = hostile(rng)
            else:
                parent[key] = hostile(rng)
        else:
            target = at(doc, path)
            if isinstance(target, dict) and "quant_method" in target:
                target["quant_method"] = rng.choice(METHODS)
            else:
                parent[key] = hostile(rng)
    return doc


def model_dirs() -> list[tuple[str, list[str]]]:
    """(fixture directory, its JSON files this fuzzer changes), those with one."""
    out = []
    for base, dirs, files in os.walk(os.path.join(ROOT, "fixtures")):
        dirs.sort()
        hits = sorted(f for f in files if f in JSON_NAMES)
        if hits and any(f.endswith((".safetensors", ".gguf")) for f in files):
            out.append((base, hits))
    return out


def stage(src: str, dst: str) -> None:
    """``src``'s files in ``dst``: tensor files hard-linked (else copied),
    the rest copied; a symlink (a Hugging Face cache snapshot's, to its
    blob) as the file it resolves to; subdirectories left out."""
    for f in os.listdir(src):
        p = os.path.realpath(os.path.join(src, f))
        if os.path.isfile(p):
            if f.endswith((".safetensors", ".gguf")):
                try:
                    os.link(p, os.path.join(dst, f))
                    continue
                except OSError:
                    pass
            shutil.copyfile(p, os.path.join(dst, f))


def main() -> None:
    args = arguments(10_000, "fuzz/out-cfg")
    rng = random.Random(args.seed)
    pool = model_dirs()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="grit-cfuzz-")
    shapes: set[tuple[object, ...]] = set()
    unhandled = 0
    t0 = time.time()
    verdicts = changed = 0
    seen: dict[str, list[tuple[str, str, str]]] = {}
    for i in range(args.count):
        src, names = rng.choice(pool)
        name = rng.choice(names)
        d = os.path.join(work, f"m{i % 4}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        stage(src, d)
        if "config.json" in names and rng.randrange(4) == 0:
            verdicts += 1
            if not same_verdict(src, d, rng, seen):
                changed += 1
                tag = f"changed-{args.seed}-{i}"
                shutil.copyfile(os.path.join(d, "config.json"),
                                os.path.join(args.out, tag + ".json"))
                with open(os.path.join(args.out, tag + ".txt"), "w") as f:
                    f.write(os.path.relpath(src, ROOT) + "\n")
            continue
        with open(os.path.join(src, name), encoding="utf-8") as f:
            text = f.read()
        try:
            doc = json.loads(text)
            new = json.dumps(mutate_doc(rng, doc))
        except (ValueError, RecursionError):
            new = text
        if rng.randrange(20) == 0:
            new = new[: rng.randrange(len(new) + 1)]
        with open(os.path.join(d, name), "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(new)
        try:
            render_all(api.scan([d], jobs=1), i, shapes)
        except Exception:  # noqa: BLE001 - counting escapes is the point
            unhandled += 1
            tag = f"crash-{args.seed}-{i}"
            with open(os.path.join(args.out, tag + ".json"), "w", encoding="utf-8",
                      errors="surrogatepass") as f:
                f.write(new)
            with open(os.path.join(args.out, tag + ".txt"), "w") as f:
                f.write(f"{os.path.relpath(src, ROOT)}/{name}\n{traceback.format_exc()}")
        if i and i % 2000 == 0:
            print(json.dumps({"seed": args.seed, "done": i, "unhandled": unhandled,
                              "changed": changed, "seconds": round(time.time() - t0)}),
                  flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"seed": args.seed, "count": args.count, "unhandled": unhandled,
                      "verdicts": verdicts, "changed": changed, "dirs": len(pool),
                      "seconds": round(time.time() - t0)}), flush=True)


def _findings(d: str) -> list[tuple[str, str, str]]:
    """The findings of a scan of ``d``, its path taken out of each message."""
    return sorted((f.kind.value, f.code, f.message.replace(d, "DIR"))
                  for f in api.scan([d], jobs=1).findings)


def same_verdict(src: str, d: str, rng: random.Random,
                 seen: dict[str, list[tuple[str, str, str]]]) -> bool:
    """Whether ``d`` (``src`` staged) gives ``src``'s findings once keys of
    its config.json that no reader looks at are changed."""
    if src not in seen:
        seen[src] = _findings(d)
    with open(os.path.join(src, "config.json"), encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        return True
    keys = [k for k in doc if k not in READ] + ["zz_not_read"]
    for _ in range(rng.randint(1, 3)):
        doc[rng.choice(keys)] = hostile(rng)
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8",
              errors="surrogatepass") as f:
        f.write(json.dumps(doc))
    return _findings(d) == seen[src]


if __name__ == "__main__":
    main()
