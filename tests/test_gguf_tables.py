"""The shipped gguf tables (parsers/gguf_tables.json) against gguf-py's own
objects: the tensor-name maps (``get_tensor_name_map``), the ggml type table
(``GGML_QUANT_SIZES``, ``GGMLQuantizationType``) and the file types
(``LlamaFileType``).  The table is the fast path (no ``import gguf``),
gguf's objects the plain one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import grit_scan
from grit_scan.parsers import gguf_tables, roles

ROOT = Path(__file__).resolve().parent.parent
TABLE = json.loads(Path(gguf_tables.TABLE).read_text(encoding="utf-8"))
CURRENT = TABLE["sources"] == gguf_tables.installed_sources()
needs_current = pytest.mark.skipif(
    not CURRENT, reason="the installed gguf is not the one gguf_tables.json was made from "
    "(regenerate: python -m grit_scan.parsers.gguf_tables)")

# Every architecture in one child that builds each map in a fresh state
# (gguf's TensorNameMap updates a class-level dict with ARCTIC's overrides,
# so that one is built last, where it changes no other map)
_GGUF_MAPS = """
import json
from gguf import constants, tensor_mapping
over = set(tensor_mapping.TensorNameMap.arch_block_mappings_cfg)
archs = sorted(constants.MODEL_ARCH_NAMES, key=lambda a: (a in over, a.value))
out = {}
for a in archs:
    m = tensor_mapping.get_tensor_name_map(a, 1)
    out[constants.MODEL_ARCH_NAMES[a]] = {k: v[1] for k, v in m.mapping.items()}
print(json.dumps(out))
"""


@needs_current
def test_table_is_gguf_own_map_for_every_architecture() -> None:
    assert len(set(gguf_tables.installed_sources() or {})) == 2
    got = subprocess.run([sys.executable, "-c", _GGUF_MAPS], capture_output=True, text=True,
                         check=True).stdout
    theirs = json.loads(got)
    assert sorted(TABLE["archs"]) == sorted(theirs)
    assert len(theirs) > 100
    for arch, want in theirs.items():
        shipped = gguf_tables.name_map(arch)
        assert isinstance(shipped, gguf_tables.TableMap), arch
        assert {k: v[1] for k, v in shipped.mapping.items()} == want, arch


@needs_current
def test_llama_names_the_gguf_way() -> None:
    """Spot values from gguf-py's tensor_mapping.py for LLAMA (layer 0)."""
    m = gguf_tables.name_map("llama")
    assert isinstance(m, gguf_tables.TableMap)
    assert m.get_name("model.layers.0.self_attn.q_proj") == "blk.0.attn_q"
    assert m.get_name("model.layers.0.mlp.down_proj") == "blk.0.ffn_down"
    assert m.get_name("model.embed_tokens") == "token_embd"
    assert m.get_name("model.layers.1.self_attn.q_proj") is None  # one layer only
    assert gguf_tables.name_map("no-such-architecture") is False


@pytest.fixture
def fresh() -> Iterator[None]:
    """The table read again (it is read once a process)."""
    gguf_tables.current.cache_clear()
    roles._name_map.cache_clear()
    yield
    gguf_tables.current.cache_clear()
    roles._name_map.cache_clear()


def test_another_gguf_is_asked_itself(monkeypatch: pytest.MonkeyPatch, fresh: None) -> None:
    """Sources other than the table's: the table answers nothing, and roles
    come from gguf's own map (the plain path), the same roles."""
    monkeypatch.setattr(gguf_tables, "installed_sources", lambda: {"constants.py": 1})
    assert gguf_tables.name_map("llama") is None
    assert gguf_tables.ggml_types() is None
    with pytest.raises(LookupError):
        gguf_tables.file_type_name(15)
    role = roles.role_function("llama", 32)
    assert role("model.layers.7.self_attn.q_proj.weight") == "blk.7.attn_q.weight"
    assert "gguf.tensor_mapping" in sys.modules


def test_a_broken_table_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   fresh: None) -> None:
    bad = tmp_path / "gguf_tables.json"
    bad.write_text("{not json")
    monkeypatch.setattr(gguf_tables, "TABLE", bad)
    assert gguf_tables.name_map("llama") is None and gguf_tables.ggml_types() is None


_GGUF_TYPES = """
import json
from gguf import constants as c
print(json.dumps({"types": {t.value: [t.name, c.GGML_QUANT_SIZES.get(t)]
                            for t in c.GGMLQuantizationType},
                  "files": {t.value: t.name for t in c.LlamaFileType}}))
"""


@needs_current
def test_type_table_is_gguf_own() -> None:
    theirs = json.loads(subprocess.run([sys.executable, "-c", _GGUF_TYPES], capture_output=True,
                                       text=True, check=True).stdout)
    ours = gguf_tables.ggml_types()
    assert ours is not None and len(ours) > 30
    assert {str(k): [n, list(sz) if sz else None] for k, (n, sz) in ours.items()} == \
        theirs["types"]
    for code, name in theirs["files"].items():
        assert gguf_tables.file_type_name(int(code)) == name
    assert gguf_tables.file_type_name(10_000) is None
    # spot values from ggml.h / gguf-py: Q4_K is 256 elements in 144 bytes
    assert ours[12] == ("Q4_K", (256, 144)) and ours[8] == ("Q8_0", (32, 34))
    assert gguf_tables.file_type_name(15) == "MOSTLY_Q4_K_M"


def _scan_json(path: Path, table: bool) -> str:
    """``grit scan --json`` of ``path`` in a child, with the table or with
    gguf asked (the table's recorded sources made not to match)."""
    code = ("import sys\n"
            "from grit_scan.parsers import gguf_tables\n"
            + ("" if table else "gguf_tables.installed_sources = lambda: None\n")
            + "from grit_scan.cli import main\n"
            "sys.argv = ['grit', 'scan', '--json', sys.argv[1]]\n"
            "main()\n")
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       cwd=ROOT)
    assert "Traceback" not in p.stderr
    return p.stdout + f"\nexit {p.returncode}\n"


@needs_current
@pytest.mark.parametrize("tree", ["fixtures/producers/ct", "fixtures/producers/hf-cache",
                                  "fixtures/sample", "fixtures/producers/gguf-quants"])
def test_scan_roles_equal_through_table_and_gguf(tree: str) -> None:
    with_table = _scan_json(ROOT / tree, True)
    assert '"role"' in with_table
    assert with_table == _scan_json(ROOT / tree, False)


@needs_current
@pytest.mark.parametrize("tree,says", [
    ("fixtures/sample/llama-mxfp4", '"role": "blk.0.attn_q.weight"'),  # roles mapped
    ("fixtures/producers/gguf-quants", '"convention": "ggml:Q4_K"'),  # ggml types read
])
def test_a_scan_imports_no_gguf(tree: str, says: str) -> None:
    code = ("import sys\nfrom grit_scan.cli import main\n"
            "sys.argv = ['grit', 'scan', '--json', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('GGUF' if 'gguf' in sys.modules else 'NONE', file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code, str(ROOT / tree)],
                       capture_output=True, text=True, cwd=ROOT)
    assert says in p.stdout
    assert p.stderr.strip().endswith("NONE")


def test_table_is_package_data() -> None:
    """An install without the table would still be right (gguf is asked),
    only slower: the table ships with the package."""
    assert Path(gguf_tables.TABLE).parent == Path(grit_scan.__file__).parent / "parsers"
    assert '"parsers/gguf_tables.json"' in (ROOT / "pyproject.toml").read_text()
