/* FNV-1a 64 and 128 (GRIT v1 §6.1) over a range of any buffer, releasing
 * the GIL.  This is all the compiled helper does.
 *
 * The pure-Python loops in grit_scan/codec/fnv.py are the reference, and
 * tests/test_fnv_compiled.py holds this module to an independent FNV-1a
 * (the published FNV test vectors and the definition of §6.1).  Built by
 * the package build when a C compiler is available; without it everything
 * still works, slower.  grit_scan/codec/fnv.py is its only importer (an
 * import-linter contract), and _fnv.pyi types it for mypy.
 *
 * Every numeric argument is checked before a byte is read: a state out of
 * range, a negative or oversized position or length, or a range past the
 * end of the buffer raises (ValueError or OverflowError), never reads out
 * of bounds.  Multi-byte values are assembled byte by byte (no misaligned
 * loads).  .ci/sanitize.sh builds this file with ASan and UBSan and runs
 * the helper's tests and a fuzz pass against it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t P64 = 0x100000001b3ULL;

static u128 load_be128(const unsigned char *b) {
    u128 v = 0;
    for (int i = 0; i < 16; i++) v = (v << 8) | b[i];
    return v;
}

static void store_be128(u128 v, unsigned char *b) {
    for (int i = 15; i >= 0; i--) { b[i] = (unsigned char)(v & 0xff); v >>= 8; }
}

/* pos and n select buf[pos : pos + n]; 0 when they do, else -1 with
 * ValueError set.  Written so that no sum can overflow. */
static int check_range(const Py_buffer *buf, Py_ssize_t pos, Py_ssize_t n, const char *what) {
    if (pos < 0 || n < 0) {
        PyErr_Format(PyExc_ValueError, "%s: position and length must be >= 0", what);
        return -1;
    }
    if (pos > buf->len || n > buf->len - pos) {
        PyErr_Format(PyExc_ValueError, "%s: range [%zd, +%zd) runs past the %zd-byte buffer",
                     what, pos, n, buf->len);
        return -1;
    }
    return 0;
}

/* A 16-byte big-endian state from a buffer; -1 with ValueError otherwise. */
static int state128(const Py_buffer *st, u128 *out) {
    if (st->len != 16) {
        PyErr_SetString(PyExc_ValueError, "an FNV-1a-128 state is 16 bytes");
        return -1;
    }
    *out = load_be128((const unsigned char *)st->buf);
    return 0;
}

/* prime = 2^88 + 0x13b, as one u128 multiply: GCC then keeps the low
 * 64-bit chain (xor, mul) at its latency floor; the hand-written
 * (h << 88) + h * 0x13b put an extra add on it (about 15% slower). */
#define PRIME128 (((u128)1 << 88) | 0x13b)

/* fnv1a128_update(state: bytes[16], data: buffer, pos: int, n: int) -> bytes[16]
 * The state after hashing data[pos : pos + n], continuing from ``state``. */
static PyObject *fnv1a128_update(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer st, buf;
    Py_ssize_t pos, n;
    if (!PyArg_ParseTuple(args, "y*y*nn", &st, &buf, &pos, &n)) return NULL;
    PyObject *res = NULL;
    u128 h;
    if (state128(&st, &h) == 0 && check_range(&buf, pos, n, "fnv1a128_update") == 0) {
        const unsigned char *p = (const unsigned char *)buf.buf + pos;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            h ^= p[i];
            h *= PRIME128;
        }
        Py_END_ALLOW_THREADS
        unsigned char out[16];
        store_be128(h, out);
        res = PyBytes_FromStringAndSize((const char *)out, 16);
    }
    PyBuffer_Release(&st);
    PyBuffer_Release(&buf);
    return res;
}

/* fnv1a128_update2(state_a, data_a, pos_a, state_b, data_b, pos_b, n)
 *     -> (state_a, state_b)
 * Two independent FNV-1a-128 streams, data_a[pos_a : pos_a + n] and
 * data_b[pos_b : pos_b + n], byte by byte in one loop.  One stream is bound
 * by the latency of its xor-multiply chain (about 4 cycles a byte); two
 * interleaved chains keep the multiplier busy and hash about twice the
 * bytes per cycle on one core.  Each state is exactly what fnv1a128_update
 * gives for its stream. */
static PyObject *fnv1a128_update2(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer sa, a, sb, b;
    Py_ssize_t pa, pb, n;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*nn", &sa, &a, &pa, &sb, &b, &pb, &n)) return NULL;
    PyObject *res = NULL;
    u128 x, y;
    if (state128(&sa, &x) == 0 && state128(&sb, &y) == 0
            && check_range(&a, pa, n, "fnv1a128_update2 (first stream)") == 0
            && check_range(&b, pb, n, "fnv1a128_update2 (second stream)") == 0) {
        const unsigned char *p = (const unsigned char *)a.buf + pa;
        const unsigned char *q = (const unsigned char *)b.buf + pb;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            x ^= p[i];
            y ^= q[i];
            x *= PRIME128;
            y *= PRIME128;
        }
        Py_END_ALLOW_THREADS
        unsigned char ox[16], oy[16];
        store_be128(x, ox);
        store_be128(y, oy);
        res = Py_BuildValue("y#y#", (const char *)ox, (Py_ssize_t)16, (const char *)oy,
                            (Py_ssize_t)16);
    }
    PyBuffer_Release(&sa);
    PyBuffer_Release(&a);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&b);
    return res;
}

/* fnv1a64_update(state: int, data: buffer, pos: int, n: int) -> int
 * ``state`` must be in [0, 2^64): anything else raises OverflowError. */
static PyObject *fnv1a64_update(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *state;
    Py_buffer buf;
    Py_ssize_t pos, n;
    if (!PyArg_ParseTuple(args, "O!y*nn", &PyLong_Type, &state, &buf, &pos, &n)) return NULL;
    unsigned long long h = PyLong_AsUnsignedLongLong(state);
    if (h == (unsigned long long)-1 && PyErr_Occurred()) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    if (check_range(&buf, pos, n, "fnv1a64_update") != 0) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)buf.buf + pos;
    uint64_t v = (uint64_t)h;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        v ^= p[i];
        v *= P64;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return PyLong_FromUnsignedLongLong(v);
}

static PyMethodDef methods[] = {
    {"fnv1a128_update", fnv1a128_update, METH_VARARGS,
     "FNV-1a-128 of data[pos:pos+n], continuing from a 16-byte big-endian state"},
    {"fnv1a128_update2", fnv1a128_update2, METH_VARARGS,
     "two FNV-1a-128 streams of n bytes each, interleaved in one loop"},
    {"fnv1a64_update", fnv1a64_update, METH_VARARGS,
     "FNV-1a-64 of data[pos:pos+n], continuing from a state in [0, 2**64)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fnv", "FNV-1a digest loops (GRIT v1 §6.1)", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fnv(void) { return PyModule_Create(&module); }
