"""grit_scan.parsers.gguf_constants loads gguf-py's constants module without
the gguf package (whose __init__ imports numpy and every other module): the
table and enums must be gguf's own, and a GGUF scan must not need the rest
of the package."""

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
    assert ggml_types.GGML_QUANT_SIZES == gguf.GGML_QUANT_SIZES


def test_alone_and_with_the_package_give_the_same_module_contents():
    alone = gguf_constants._load_alone()
    assert alone.__name__ == gguf_constants.PRIVATE_NAME
    assert alone.GGML_QUANT_SIZES == gguf.constants.GGML_QUANT_SIZES
    assert alone.Keys.General.FILE_TYPE == gguf.constants.Keys.General.FILE_TYPE


def test_a_gguf_scan_does_not_import_the_gguf_package(tmp_path):
    """In a fresh interpreter: scanning a GGUF file loads gguf's constants
    only; the package (and its writer, reader, quants, vocab) stays out, and
    a later ``import gguf`` still works and is unaffected."""
    w = gguf.GGUFWriter(str(tmp_path / "m.gguf"), "llama")
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    import numpy as np

    w.add_tensor("blk.0.attn_q.weight", np.zeros((1, 144), np.uint8),
                 raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    code = textwrap.dedent(f"""
        import sys
        from grit_scan import scan
        r = scan([{str(tmp_path / "m.gguf")!r}])
        a = r.artifacts[0]
        print(a.metadata["file_type_name"], [q.convention for q in a.quantized])
        print(sorted(m for m in sys.modules if m == "gguf" or m.startswith("gguf.")))
        import gguf
        print(gguf.GGMLQuantizationType.Q4_K.value, hasattr(gguf, "GGUFWriter"))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["Q4_K_M ['ggml:Q4_K']", "[]", "12 True"]
