"""GRIT decode through the ggml mappings equals gguf.quants.dequantize bit for
bit on random blocks (random scale bytes included) — an independent
implementation, bit-exact with ggml's C code (research §2)."""

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, quants

from grit_scan.codec.decode import decode
from grit_scan.codec.grade import registry
from grit_scan.parsers.ggml_types import MAPPINGS

T = GGMLQuantizationType
N_BLOCKS = 10_000


def grit_decode(ttype, raw, rows):
    m = MAPPINGS[ttype.value]
    blk, size = GGML_QUANT_SIZES[ttype]
    nblk = raw.shape[1] // size
    shape = [rows, nblk * blk]
    d = m.descriptor(group_axis=1)
    return decode(d, shape, raw.tobytes(), grades=registry([m.grade]), layouts=m.layouts)


def bits_equal(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    same = a.view(np.uint32) == b.view(np.uint32)
    return same | (np.isnan(a) & np.isnan(b))


def random_blocks(ttype, seed):
    blk, size = GGML_QUANT_SIZES[ttype]
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(N_BLOCKS // 10, size * 10), dtype=np.uint8)


@pytest.mark.parametrize("ttype", [T.Q8_0, T.Q4_K])
def test_bit_exact(ttype):
    raw = random_blocks(ttype, 7)
    want = quants.dequantize(raw, ttype)
    got = grit_decode(ttype, raw, raw.shape[0])
    assert got.shape == want.shape
    assert bits_equal(got, want).all()


def test_q8_0_and_q4_k_with_plain_scales():
    # random bytes rarely give ordinary scales: also check finite, typical ones
    for ttype in (T.Q8_0, T.Q4_K):
        raw = random_blocks(ttype, 11)
        blk, size = GGML_QUANT_SIZES[ttype]
        blocks = raw.reshape(-1, size)
        rng = np.random.default_rng(3)
        d = rng.uniform(1e-4, 1e-1, size=(blocks.shape[0], 2)).astype(np.float16)
        blocks[:, :4 if ttype == T.Q4_K else 2] = d.view(np.uint8)[:, :4 if ttype == T.Q4_K else 2]
        want = quants.dequantize(raw, ttype)
        assert np.isfinite(want).all()
        assert bits_equal(grit_decode(ttype, raw, raw.shape[0]), want).all()


def mxfp4_codes(raw):
    """Per element (in ggml's logical order) its E2M1 code: byte j of a block
    holds element j (low nibble) and j + 16 (high nibble)."""
    qs = raw.reshape(-1, 17)[:, 1:]
    return np.concatenate([qs & 0xF, qs >> 4], axis=1).reshape(raw.shape[0], -1)


def test_mxfp4_equal_except_the_two_designed_divergences():
    raw = random_blocks(T.MXFP4, 5)
    want = quants.dequantize(raw, T.MXFP4)
    got = grit_decode(T.MXFP4, raw, raw.shape[0])
    e = raw.reshape(-1, 17)[:, 0]
    ff = np.repeat(e == 0xFF, 32).reshape(got.shape)
    negzero = (mxfp4_codes(raw) == 8) & ~ff
    assert ff.any() and negzero.any()
    other = ~ff & ~negzero
    assert bits_equal(got, want)[other].all()
    # 1. GRIT reads E8M0 0xFF as NaN (§8.2, A.3); ggml as 2^127
    assert np.isnan(got[ff]).all()
    assert not np.isnan(want[ff]).any()
    # 2. E2M1 code 8 is -0.0 in GRIT (A.2, §1.3); ggml's kvalues_fp4[8] is +0
    assert (got[negzero] == 0).all() and (want[negzero] == 0).all()
    assert np.signbit(got[negzero]).all() and not np.signbit(want[negzero]).any()


def test_mxfp4_every_scale_byte():
    raw = np.zeros((256, 17), dtype=np.uint8)
    raw[:, 0] = np.arange(256)
    raw[:, 1:] = np.random.default_rng(1).integers(0, 256, size=(256, 16))
    raw = raw.reshape(1, -1)
    want = quants.dequantize(raw, T.MXFP4)
    got = grit_decode(T.MXFP4, raw, 1)
    eq = (bits_equal(got, want) | ((mxfp4_codes(raw) == 8) & (got == 0) & (want == 0)))
    eq = eq.reshape(256, 32)
    assert eq[:255].all() and not eq[255].any()
