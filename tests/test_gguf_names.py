"""The shipped tensor-name table (parsers/gguf_names.json) against gguf-py's
own ``get_tensor_name_map``: the table is the fast path of role mapping
(no ``import gguf``), gguf's function the plain one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import grit_scan
from grit_scan.parsers import gguf_names, roles

ROOT = Path(__file__).resolve().parent.parent
TABLE = json.loads(gguf_names.TABLE.read_text(encoding="utf-8"))
CURRENT = TABLE["sources"] == gguf_names.installed_sources()
needs_current = pytest.mark.skipif(
    not CURRENT, reason="the installed gguf is not the one gguf_names.json was made from "
    "(regenerate: python -m grit_scan.parsers.gguf_names)")

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
    assert len(set(gguf_names.installed_sources() or {})) == 2
    got = subprocess.run([sys.executable, "-c", _GGUF_MAPS], capture_output=True, text=True,
                         check=True).stdout
    theirs = json.loads(got)
    assert sorted(TABLE["archs"]) == sorted(theirs)
    assert len(theirs) > 100
    for arch, want in theirs.items():
        shipped = gguf_names.name_map(arch)
        assert isinstance(shipped, gguf_names.TableMap), arch
        assert {k: v[1] for k, v in shipped.mapping.items()} == want, arch


@needs_current
def test_llama_names_the_gguf_way() -> None:
    """Spot values from gguf-py's tensor_mapping.py for LLAMA (layer 0)."""
    m = gguf_names.name_map("llama")
    assert isinstance(m, gguf_names.TableMap)
    assert m.get_name("model.layers.0.self_attn.q_proj") == "blk.0.attn_q"
    assert m.get_name("model.layers.0.mlp.down_proj") == "blk.0.ffn_down"
    assert m.get_name("model.embed_tokens") == "token_embd"
    assert m.get_name("model.layers.1.self_attn.q_proj") is None  # one layer only
    assert gguf_names.name_map("no-such-architecture") is False


def test_another_gguf_is_asked_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sources other than the table's: the table answers nothing, and roles
    come from gguf's own map (the plain path), the same roles."""
    monkeypatch.setattr(gguf_names, "installed_sources", lambda: {"constants.py": 1})
    assert gguf_names.name_map("llama") is None
    roles._name_map.cache_clear()
    try:
        role = roles.role_function("llama", 32)
        assert role("model.layers.7.self_attn.q_proj.weight") == "blk.7.attn_q.weight"
        assert "gguf.tensor_mapping" in sys.modules
    finally:
        roles._name_map.cache_clear()


def test_a_broken_table_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "gguf_names.json"
    bad.write_text("{not json")
    monkeypatch.setattr(gguf_names, "TABLE", bad)
    assert gguf_names.name_map("llama") is None


def _scan_json(path: Path, table: bool) -> str:
    """``grit scan --json`` of ``path`` in a child, with the table or with
    gguf asked (the table's recorded sources made not to match)."""
    code = ("import sys\n"
            "from grit_scan.parsers import gguf_names\n"
            + ("" if table else "gguf_names.installed_sources = lambda: None\n")
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
def test_a_safetensors_scan_imports_no_gguf(tmp_path: Path) -> None:
    code = ("import sys\nfrom grit_scan.cli import main\n"
            "sys.argv = ['grit', 'scan', '--json', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('GGUF' if 'gguf' in sys.modules else 'NONE', file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code, str(ROOT / "fixtures" / "sample" /
                                                        "llama-mxfp4")],
                       capture_output=True, text=True, cwd=ROOT)
    assert '"role": "blk.0.attn_q.weight"' in p.stdout
    assert p.stderr.strip().endswith("NONE")


def test_table_is_package_data() -> None:
    """An install without the table would still be right (gguf is asked),
    only slower: the table ships with the package."""
    assert gguf_names.TABLE.parent == Path(grit_scan.__file__).parent / "parsers"
    assert '"parsers/gguf_names.json"' in (ROOT / "pyproject.toml").read_text()
