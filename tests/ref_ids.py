"""Independent references for §3.1 (descriptor bytes), §6 (FNV-1a, gid,
digest, Crockford base32) and §7.3 (size equations), written from the
spec text and the FNV specification (draft-eastlake-fnv; offset bases and
primes as published there), sharing no code with grit_scan."""

import struct
from fractions import Fraction
from types import SimpleNamespace

# draft-eastlake-fnv §2.1 / §2.2: offset bases and primes
FNV64_OFFSET = 14695981039346656037  # 0xcbf29ce484222325
FNV64_PRIME = 2**40 + 2**8 + 0xB3  # 0x100000001b3
FNV128_OFFSET = 144066263297769815596495629667062367629  # 0x6c62272e07bb014262b821756295c58d
FNV128_PRIME = 2**88 + 2**8 + 0x3B  # 0x0000000001000000000000000000013b

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # crockford.com/base32.html


def fnv1a(data, bits, h=None):
    """FNV-1a: for each octet, xor then multiply, mod 2^bits."""
    offset, prime = {64: (FNV64_OFFSET, FNV64_PRIME), 128: (FNV128_OFFSET, FNV128_PRIME)}[bits]
    h = offset if h is None else h
    for b in bytes(data):
        h = ((h ^ b) * prime) % (1 << bits)
    return h


def crockford26(value):
    """§6.4: 128 bits zero-extended on the left to 130, 26 symbols, MSB first."""
    return "".join(CROCKFORD[(value >> (5 * (25 - i))) & 31] for i in range(26))


def desc_fields(raw):
    """§3.1 grit_desc_t, little-endian, field by field."""
    names = ("magic hdr_bytes version n_levels flags elem scale0 scale1 zp_fmt group_axis k0 k1 "
             "sp_n sp_m sp_meta_fmt sp_order container frame_rsvd note placement_data "
             "placement_scale placement_meta grade_id").split()
    return SimpleNamespace(**dict(zip(names, struct.unpack("<IBBBBHHHHhHHBBBBBBIQQQQ", raw))))


def gid(grade, raw, shape):
    """§6.3."""
    msg = (grade.encode() + b"\x00" + raw[0:28] + raw[32:64] + struct.pack("<I", len(shape))
           + b"".join(struct.pack("<q", s) for s in shape))
    return fnv1a(msg, 128)


def digest(planes):
    """§6.5 as RECONSTRUCTION §2 pins it: all four planes, length-prefixed."""
    return fnv1a(b"".join(struct.pack("<Q", len(p)) + p for p in planes), 128)


def plane_sizes(d, shape):
    """§7.3 step 4, in exact arithmetic (ceil of a rational)."""
    def width(f):
        return (f & 31) + 1 if f else 0

    def cw(f, pad8):
        return 8 if pad8 and width(f) <= 8 else width(f)

    def ceil8(bits):
        return -(-Fraction(bits) // 8)

    sparse, has_zp, l1 = d.flags & 0x04, d.flags & 0x01, d.flags & 0x20
    numel = 1
    for s in shape:
        numel *= s
    assert shape[d.group_axis] % d.k0 == 0
    nnz = Fraction(numel * d.sp_n, d.sp_m) if sparse else numel
    n0 = Fraction(numel, d.k0)
    n1 = (1 if d.k1 == 0 else n0 / d.k1) if d.n_levels == 2 else 0
    metabits = {1: 2, 2: 4}.get(d.sp_meta_fmt, 0)
    aux = (ceil8(Fraction(numel, d.sp_m) * d.sp_n * metabits) if sparse
           else ceil8(n0 * cw(d.zp_fmt, True)) if has_zp else 0)
    return [int(ceil8(nnz * cw(d.elem, d.container == 1))), int(ceil8(n0 * cw(d.scale0, True))),
            int(ceil8(n1 * (2 if l1 else 1) * width(d.scale1))), int(aux)]
