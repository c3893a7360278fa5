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
    assert ggml_types.GGML_QUANT_SIZES == gguf.GGML_QUANT_SIZES


def test_alone_and_with_the_package_give_the_same_module_contents():
    alone = gguf_constants._load_alone("constants")
    assert alone.__name__ == gguf_constants.PRIVATE_PACKAGE + ".constants"
    assert alone.GGML_QUANT_SIZES == gguf.constants.GGML_QUANT_SIZES
    assert alone.Keys.General.FILE_TYPE == gguf.constants.Keys.General.FILE_TYPE


def test_tensor_name_maps_alone_are_gguf_s():
    """The private tensor_mapping uses the private constants, and its maps
    give gguf's names, for every architecture gguf knows."""
    alone = gguf_constants._load_alone("tensor_mapping")
    assert alone.__name__ == gguf_constants.PRIVATE_PACKAGE + ".tensor_mapping"
    assert alone.MODEL_ARCH is gguf_constants._load_alone("constants").MODEL_ARCH
    archs = list(gguf.MODEL_ARCH)
    assert len(archs) > 50
    for arch in archs:
        ours = alone.get_tensor_name_map(alone.MODEL_ARCH(arch.value), 2)
        theirs = gguf.get_tensor_name_map(arch, 2)
        assert {k: v[1] for k, v in ours.mapping.items()} == {
            k: v[1] for k, v in theirs.mapping.items()}, arch.name


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


def test_roles_do_not_import_the_gguf_package(tmp_path):
    """In a fresh interpreter: the roles of a llama safetensors model come
    from gguf's tensor-name map without importing the package, and are the
    names gguf's own map gives."""
    from grit_scan.writers import Raw, write_safetensors

    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    write_safetensors(tmp_path / "model.safetensors", {
        "model.layers.3.self_attn.q_proj.weight": Raw("F8_E4M3", [4, 32], bytes(128)),
        "model.layers.3.self_attn.q_proj.weight_scale": Raw("F32", [4, 1], bytes(16))})
    code = textwrap.dedent(f"""
        import sys
        from grit_scan import scan
        r = scan([{str(tmp_path)!r}])
        print([q.role for a in r.artifacts for q in a.quantized])
        print(sorted(m for m in sys.modules if m == "gguf" or m.startswith("gguf.")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    want = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 4).get_name(
        "model.layers.3.self_attn.q_proj")
    assert want == "blk.3.attn_q"
    assert out == [repr([want + ".weight"]), "[]"]
