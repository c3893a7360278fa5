"""The reader budgets: every limit on what one input may cost, in one place.

A scan's memory and time must stay in proportion to the bytes it reads (issue
16: "no input may cost more than it weighs").  Each constant below is a
``Budget``: its name, its value and why that value covers every real
checkpoint.  A reader that hits one records an issue naming the budget and
the file (``exceeded``); nothing allocates first and checks afterwards.
docs/reliability.md lists every budget; tests/test_reliability.py holds the
table to this module (``python -m grit_scan.parsers.budgets`` prints it).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from .. import names


class Budget(NamedTuple):
    """One reader limit: its name, value, unit and why it covers real
    checkpoints (a NamedTuple, not a frozen dataclass: every scan imports this module: start-up)."""

    name: str
    value: int
    unit: str
    why: str

    def __int__(self) -> int:
        return self.value

    def exceeded(self, what: str, got: int | None = None) -> str:
        """The message for an input over this budget."""
        seen = f" ({got:,})" if got is not None else ""
        return (f"{what}{seen} exceeds the {self.name} budget of {self.value:,} {self.unit} "
                "(docs/reliability.md); not read further")


HEADER_BYTES = Budget(
    "header_bytes", 100_000_000, "bytes",
    "the safetensors reference's own header limit (safetensors/lib.rs N_LEN)")
JSON_ITEMS = Budget(
    "json_items", 4_000_000, "items",
    "JSON values in one safetensors header, counted before parsing; 100k tensors use ~1M")
TENSORS_PER_FILE = Budget(
    "tensors_per_file", 100_000, "tensors",
    "per safetensors or GGUF file, and per __grit__ table; real shards hold hundreds, the "
    "largest GGUF (DeepSeek V3) about 1,100")
GGUF_KV_ENTRIES = Budget(
    "gguf_kv_entries", 65_536, "entries",
    "GGUF key-value pairs; llama.cpp writes about 40, GRIT-native files one desc/shape/digest "
    "triple per tensor")
GGUF_ARRAY_ELEMENTS = Budget(
    "gguf_array_elements", 1 << 24, "elements",
    "elements in one GGUF array (arrays are skipped, not kept); the largest vocabularies hold "
    "about 260k tokens")
GGUF_RANK = Budget("gguf_rank", 4, "dimensions", "ggml's GGML_MAX_DIMS")
SAFETENSORS_RANK = Budget(
    "safetensors_rank", 8, "dimensions",
    "safetensors sets no limit; torch checkpoints use at most 5 (conv3d), so 8 is generous")
GRIT_SHAPE_RANK = Budget(
    "grit_shape_rank", 8, "dimensions",
    "a GRIT logical shape (__grit__ and grit.shape.*); the descriptor addresses rank 1-4 rows")
EXTENT = Budget(
    "extent", (1 << 63) - 1, "",
    "one shape extent and the element count: GRIT §6.4 hashes shapes as int64")
INDEX_ENTRIES = Budget(
    "index_entries", 500_000, "entries",
    "weight_map entries in one safetensors index; the largest real index has about 100k")
CONFIG_BYTES = Budget(
    "config_bytes", 4 << 20, "bytes",
    "config.json, quantize_config.json and hf_quant_config.json; real ones are under 1 MiB")
JSON_FILE_BYTES = Budget(
    "json_file_bytes", 64 << 20, "bytes",
    "a safetensors index or grit-manifest.json")
JSON_FILE_ITEMS = Budget(
    "json_file_items", 2_000_000, "items",
    "JSON values in one config, index or manifest, counted before parsing (memory stays "
    "under 20x the file's bytes)")
IGNORE_PATTERNS = Budget(
    "ignore_patterns", 4096, "patterns",
    "entries of ignore / exclude_modules / modules_to_not_convert kept from one config")
PATTERN_CHARS = Budget(
    "pattern_chars", names.MAX_PATTERN_CHARS, "characters",
    "one ignore pattern; a re: pattern with a nested quantifier, an alternation inside a "
    "quantifier or a backreference is refused (no linear-time regex engine is a runtime "
    "dependency)")
PATTERN_OPEN_REPEATS = Budget(
    "pattern_open_repeats", names.MAX_OPEN_REPEATS, "quantifiers",
    "unbounded quantifiers in one re: pattern, so matching is at most quadratic in the name")
PATTERN_WORK = Budget(
    "pattern_work", names.PATTERN_UNITS_PER_NAME, "units a name",
    "matching a config's ignore patterns against one file's module names, plus "
    f"{names.PATTERN_UNITS_FIXED:,} a file: a re: pattern with two unbounded repeats costs "
    "1 + (length/16)^2 units a name, any other 1 + length/64, so a real model's names fit "
    "dozens of patterns; names past it are not matched, and the finding says so")
NAME_CHARS = Budget(
    "name_chars", names.MAX_NAME_CHARS, "characters",
    "a module name matched against ignore patterns; longer names are never matched")
NAME_MAP_LAYERS = Budget(
    "name_map_layers", 1, "layer",
    "gguf's tensor-name map is built for one layer and a name's layer number is substituted, "
    "so its cost never depends on num_hidden_layers")
WALK_DEPTH = Budget(
    "walk_depth", 256, "directories",
    "nesting below a scanned root (the walk is iterative; deeper directories are listed as "
    "skipped)")
DEEP_SPARSE_RATIO = Budget(
    "deep_sparse_ratio", 16, "x the bytes the file has allocated",
    "--deep does not read a file (over 64 MiB) whose apparent size exceeds its allocated "
    "blocks this many times: a sparse file would be read as terabytes of zeros")
DEEP_READ_FACTOR = Budget(
    "deep_read_factor", 2, "x the tensor bytes its header records (plus 64 MiB)",
    "what --deep reads from one file: digests read each plane once and probes sample rows, "
    "so a real checkpoint stays far below it")
CONFIG_FILE_BYTES = Budget(
    "config_file_bytes", 1 << 20, "bytes",
    "a grit.toml or pyproject.toml read for settings (a regular file only); real ones are a "
    "few KB")
CONFIG_DEPTH = Budget(
    "config_depth", 32, "levels",
    "tables and arrays nested in a config file; pyproject.toml files nest about 4 deep")
CONFIG_PATTERNS = Budget(
    "config_patterns", 1_000, "entries",
    "select, ignore, fail-on and per-path-ignores entries (globs and their kinds) in one "
    "config file; every finding is matched against each glob")
ALL: tuple[Budget, ...] = (
    HEADER_BYTES, JSON_ITEMS, TENSORS_PER_FILE, GGUF_KV_ENTRIES, GGUF_ARRAY_ELEMENTS, GGUF_RANK,
    SAFETENSORS_RANK, GRIT_SHAPE_RANK, EXTENT, INDEX_ENTRIES, CONFIG_BYTES, JSON_FILE_BYTES,
    JSON_FILE_ITEMS, IGNORE_PATTERNS, PATTERN_CHARS, PATTERN_OPEN_REPEATS, PATTERN_WORK,
    NAME_CHARS,
    NAME_MAP_LAYERS, WALK_DEPTH, DEEP_SPARSE_RATIO, DEEP_READ_FACTOR, CONFIG_FILE_BYTES,
    CONFIG_DEPTH, CONFIG_PATTERNS)


def json_items(text: str, limit: int | None = None) -> int:
    """An upper bound on the values a JSON text builds, without parsing it:
    every value after the first in a container follows a comma, and every
    container opens with a bracket.  With ``limit``, a text too short to
    hold more than ``limit`` values (each value takes a character) is not
    counted: its length + 1 bounds it (three passes over a header saved)."""
    if limit is not None and len(text) < limit:
        return len(text) + 1
    return text.count(",") + text.count("[") + text.count("{") + 1


def shape_problem(shape: object, rank: Budget) -> str | None:
    """Why ``shape`` is not a list of at most ``rank`` int64 extents whose
    product fits int64, or None.  The rank is tested before anything is
    multiplied and the product is bounded at every step, so a hostile shape
    costs at most ``rank`` multiplications of small integers."""
    if type(shape) is not list:
        return f"shape {shape!r:.80} is not a list"
    if len(shape) > rank.value:
        return rank.exceeded("shape rank", len(shape))
    n = 1
    for d in shape:
        if type(d) is not int or d < 0:
            return f"shape {shape!r:.200} is not a list of non-negative integers"
        if d > EXTENT.value:
            return EXTENT.exceeded(f"shape extent {d}")
        n *= d
        if n > EXTENT.value:
            return EXTENT.exceeded(f"shape {shape}'s element count")
    return None


def table() -> str:
    """The markdown table docs/reliability.md carries."""
    rows = ["| budget | value | unit | why |", "|---|---|---|---|"]
    rows += [f"| `{b.name}` | {b.value:,} | {b.unit} | {b.why} |" for b in ALL]
    return "\n".join(rows)


if __name__ == "__main__":  # pragma: no cover - docs helper
    sys.stdout.write(table() + "\n")
