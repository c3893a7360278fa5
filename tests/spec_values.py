"""Expected values copied verbatim from the GRIT v1 spec and RECONSTRUCTION.md.

Nothing here is computed by the code under test: these are the numbers the
spec prints (Appendix A/B, §6.1, §6.4, §11.2) and the reconstructed tables.
"""

# §6.1 self-checks
FNV64_A = 0xAF63DC4C8601EC8C
FNV128_A = "d228cb696f1a8caf78912b704e4a8964"

# RECONSTRUCTION §1 [V] and Appendix A.1
GRADES = {
    "GRADE_MXFP4": ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)", 0x2370EE9EE454A183),
    "GRADE_MXFP4_RNE": ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2rnemaxabs)", 0x254285E10D6068C8),
    "GRADE_NVF4": ("grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,esr=ratiomaxabs)",
                   0x00FF6F4C2870831E),
    "GRADE_NVF4_RTZ": ("grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,er=rtz,esr=ratiomaxabs)",
                       0x006C3850A3F42DEA),
    "GRADE_Q4KS": ("grit1(e=u4,k0=32,s0=u6,k1=8,s1=binary16,zp=u6,zps=l1,esr=affineminmax)",
                   0x1C600DE02594FB55),
    "GRADE_I8S24": ("grit1(e=s8,k0=32,s0=binary16,sp=2:4:u2:asclsb,esr=ratiomaxabs)",
                    0xBBBB283A2539EBE8),
}

# Appendix A.4 reference descriptors, as printed (32 hex digits per line).
A4 = {
    "GRADE_MXFP4": """47525431400101004320074800000000
                      00002000000000000000000000000000
                      01000000000000100100000000000010
                      000000000000000083a154e49eee7023""",
    "GRADE_Q4KS": """4752543140010221e343e5436f35e543
                     00002000080000000000000000000000
                     01000000000000100100000000000010
                     010000000000001055fb9425e00d601c""",
    "GRADE_NVF4": """4752543140010200432087281f370000
                     00001000000000000000000000000000
                     01000000000000100100000000000010
                     00000000000000001e8370284c6fff00""",
    "GRADE_I8S24": """4752543140010104e7036f3500000000
                      00002000000002040101000000000000
                      01000000000000100100000000000010
                      1100000000000010e8eb39253a28bbbb""",
}
A4_HEX = {k: "".join(v.split()) for k, v in A4.items()}


def plane_sizes_s10(name: str, numel: int) -> list[int]:
    """§10 plane sizes per grade (data, scale0, scale1, aux)."""
    if name == "GRADE_MXFP4":
        return [numel // 2, numel // 32, 0, 0]
    if name == "GRADE_NVF4":
        return [numel // 2, numel // 16, 4, 0]
    if name == "GRADE_Q4KS":  # 148 bytes per 256-element super-block
        sb = numel // 256
        return [128 * sb, 8 * sb, 4 * sb, 8 * sb]
    if name == "GRADE_I8S24":
        return [numel // 2, numel // 16, 0, numel // 8]
    raise KeyError(name)


# Appendix B.1 mxfp4/tie_to_even
B1_PAYLOAD = bytes.fromhex("2042 6476 a8ca ecfe 0000 0000 0000 0000 7f".replace(" ", ""))
B1_PLANE_BYTES = [16, 1, 0, 0]
B1_DIGEST = "9452a02851ba1a1d793b97df51266001"
B1_GID = "42d145a24c0f96ea7e336d82a2ac740d"
B1_GID_BASE32 = "22T52T4K0FJVN7WCVDGAHARX0D"
B1_INPUTS = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.5,
             -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -6.5] + [0.0] * 16
B1_DECODE = [0, 1, 1, 2, 2, 4, 4, 6, -0.0, -1, -1, -2, -2, -4, -4, -6] + [0.0] * 16

# Appendix B.2 i8s24/quad_pattern
B2_GID_BASE32 = "2X7NNMYRJ9K6508JQTR1J37VR9"
B2_GID = "5d3d6b4f6249998a044afac06433ef09"
B2_PLANE_BYTES = [16, 2, 0, 4]

# §11.2 and RECONSTRUCTION §4
MXFP4_DECODE_PROJECTION = (
    "gritdec1(e=e2m1,k0=32,s0=e8m0,ct=dense,po=lsb,dr=rne,ds=satfinite,dt=binary32)"
)
Q4KS_DECODE_PROJECTION = (
    "gritdec1(e=u4,k0=32,s0=u6,k1=8,s1=binary16,zp=u6,zpc=plain,zps=l1,ct=dense,po=lsb,"
    "dr=rne,ds=satfinite,dt=binary32)"
)

# Appendix A.1 format words
FORMAT_WORDS_A1 = {
    "e2m1": 0x2043, "e4m3": 0x2887, "e8m0": 0x4807, "binary16": 0x356F,
    "binary32": 0x371F, "u2": 0x43E1, "u4": 0x43E3, "u6": 0x43E5, "u8": 0x43E7,
    "s4": 0x03E3, "s8": 0x03E7,
}
# RECONSTRUCTION §3 [A] words
FORMAT_WORDS_A = {"e5m2": 0x3467, "e2m3": 0x2085, "e3m2": 0x2065, "bfloat16": 0x350F}

# RECONSTRUCTION §3 aliases [A]
ALIASES = {
    "fp4": "e2m1", "fp4_e2m1": "e2m1", "float4_e2m1fn": "e2m1",
    "fp8_e4m3": "e4m3", "e4m3fn": "e4m3", "float8_e4m3fn": "e4m3",
    "fp8_e5m2": "e5m2", "float8_e5m2": "e5m2", "fp6_e2m3": "e2m3", "fp6_e3m2": "e3m2",
    "ue8m0": "e8m0", "e8m0fnu": "e8m0", "float8_e8m0fnu": "e8m0",
    "fp16": "binary16", "f16": "binary16", "half": "binary16", "float16": "binary16",
    "bf16": "bfloat16", "fp32": "binary32", "f32": "binary32", "float": "binary32",
    "float32": "binary32", "single": "binary32",
    "uint2": "u2", "uint4": "u4", "uint6": "u6", "uint8": "u8",
    "int4": "s4", "i4": "s4", "int8": "s8", "i8": "s8",
}
REJECTED = {
    "e4m3fnuz": "§0.3a", "float8_e4m3fnuz": "§0.3a", "e5m2fnuz": "§0.3a",
    "float8_e5m2fnuz": "§0.3a", "e4m3b11fnuz": "§0.3a", "nf4": "§0.3b", "fp4_nf4": "§0.3b",
}

# A.2: E2M1, codes 0..15
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
        -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

# §10.1 worked tie check (S = 1.0): each input and the code it must get.
TIE_CHECK = [(0.25, 0), (0.75, 2), (1.25, 2), (1.75, 4), (2.5, 4), (3.5, 6), (5.0, 6), (6.5, 7)]
