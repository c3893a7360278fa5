"""grit_scan.parsers.gguf_constants loads gguf-py's constants and
tensor_mapping modules without the gguf package (whose __init__ imports
numpy, yaml and every other module): the table, enums and tensor-name maps
must be gguf's own, and neither a GGUF scan nor the roles of a safetensors
model may need the rest of the package."""

import subprocess
import sys
import textwrap

import gguf

from grit_scan.parsers import ggml_types, gguf_constants


def test_the_type_table_and_file_types_are_gguf_s():
    c = gguf_constants.constants()
    assert c.GGML_QUANT_SIZES == gguf.GGML_QUANT_SIZES
    assert {t.name: t.value for t in c.GGMLQuantizationType} == {
        t.name: t.value for t in gguf.GGMLQuantizationType}
    assert {t.name: t.value for t in c.LlamaFileType} == {
        t.name: t.value for t in gguf.LlamaFileType}
    # what a scan reads: the shipped copy (parsers/gguf_tables.py) or gguf's
    assert dict(ggml_types.TYPES) == {t.value: (t.name, gguf.GGML_QUANT_SIZES.get(t))
                                      for t in gguf.GGMLQuantizationType}


def test_tensor_name_maps_are_gguf_s():
    """The map roles use gives gguf's names, for every architecture gguf knows."""
    mapping = gguf_constants.tensor_mapping()
    archs = list(gguf.MODEL_ARCH)
    assert len(archs) > 50
    for arch in archs:
        ours = mapping.get_tensor_name_map(mapping.MODEL_ARCH(arch.value), 2)
        theirs = gguf.get_tensor_name_map(arch, 2)
        assert {k: v[1] for k, v in ours.mapping.items()} == {
            k: v[1] for k, v in theirs.mapping.items()}, arch.name


def test_a_scan_without_gguf_or_roles_does_not_import_the_gguf_package(tmp_path):
    """In a fresh interpreter: a safetensors file with no architecture needs
    neither the type table nor the roles, so gguf (and its numpy and yaml)
    is never imported."""
    from grit_scan.writers import Raw, write_safetensors

    write_safetensors(tmp_path / "model.safetensors",
                      {"w": Raw("BF16", [4, 4], bytes(32))})
    code = textwrap.dedent(f"""
        import sys
        from grit_scan import scan
        scan([{str(tmp_path)!r}])
        print(sorted(m for m in sys.modules if m == "gguf" or m.startswith("gguf.")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["[]"]
