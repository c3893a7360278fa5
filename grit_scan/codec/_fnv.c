/* FNV-1a 64 and 128 (GRIT v1 §6.1) over any buffer, releasing the GIL.
 *
 * The pure-Python loops in grit_scan/codec/fnv.py are the reference; this
 * module is the fast path and tests/test_fnv_compiled.py asserts the two
 * agree.  Built by the package build when a C compiler is available
 * (setup.py marks it optional); without it everything still works, slower.
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

/* fnv1a128_update(state: bytes[16] big-endian, data: buffer) -> bytes[16] */
static PyObject *fnv1a128_update(PyObject *self, PyObject *args) {
    Py_buffer st, buf;
    if (!PyArg_ParseTuple(args, "y*y*", &st, &buf)) return NULL;
    if (st.len != 16) {
        PyBuffer_Release(&st); PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "state must be 16 bytes");
        return NULL;
    }
    u128 h = load_be128((const unsigned char *)st.buf);
    const unsigned char *p = (const unsigned char *)buf.buf;
    Py_ssize_t n = buf.len;
    Py_BEGIN_ALLOW_THREADS
    /* prime = 2^88 + 0x13b, as one u128 multiply: GCC then keeps the low
     * 64-bit chain (xor, mul) at its latency floor; the hand-written
     * (h << 88) + h * 0x13b put an extra add on it (~15% slower, issue 15). */
    const u128 prime = ((u128)1 << 88) | 0x13b;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= prime;
    }
    Py_END_ALLOW_THREADS
    unsigned char out[16];
    store_be128(h, out);
    PyBuffer_Release(&st); PyBuffer_Release(&buf);
    return PyBytes_FromStringAndSize((const char *)out, 16);
}

/* fnv1a128_update2(state_a, data_a, state_b, data_b) -> (state_a, state_b)
 * Two independent FNV-1a-128 streams over buffers of equal length, byte by
 * byte in one loop.  One stream is bound by the latency of its xor-multiply
 * chain (about 4 cycles a byte); two interleaved chains keep the multiplier
 * busy and hash about twice the bytes per cycle on one core (issue 15).
 * Each state is exactly what fnv1a128_update would give for its stream. */
static PyObject *fnv1a128_update2(PyObject *self, PyObject *args) {
    Py_buffer sa, a, sb, b;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &sa, &a, &sb, &b)) return NULL;
    PyObject *res = NULL;
    if (sa.len != 16 || sb.len != 16) {
        PyErr_SetString(PyExc_ValueError, "states must be 16 bytes");
    } else if (a.len != b.len) {
        PyErr_SetString(PyExc_ValueError, "the two buffers must have the same length");
    } else {
        u128 x = load_be128((const unsigned char *)sa.buf);
        u128 y = load_be128((const unsigned char *)sb.buf);
        const unsigned char *p = (const unsigned char *)a.buf, *q = (const unsigned char *)b.buf;
        Py_ssize_t n = a.len;
        const u128 prime = ((u128)1 << 88) | 0x13b;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            x ^= p[i];
            y ^= q[i];
            x *= prime;
            y *= prime;
        }
        Py_END_ALLOW_THREADS
        unsigned char ox[16], oy[16];
        store_be128(x, ox);
        store_be128(y, oy);
        res = Py_BuildValue("y#y#", (const char *)ox, (Py_ssize_t)16, (const char *)oy,
                            (Py_ssize_t)16);
    }
    PyBuffer_Release(&sa); PyBuffer_Release(&a);
    PyBuffer_Release(&sb); PyBuffer_Release(&b);
    return res;
}

/* fnv1a64_update(state: int, data: buffer) -> int */
static PyObject *fnv1a64_update(PyObject *self, PyObject *args) {
    unsigned long long h;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "Ky*", &h, &buf)) return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    Py_ssize_t n = buf.len;
    uint64_t v = (uint64_t)h;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) { v ^= p[i]; v *= P64; }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return PyLong_FromUnsignedLongLong(v);
}

/* group_modules(names: list[str], one: dict[str, str], dotted: dict,
 *               tails: tuple[str, ...], split) -> dict
 * Stored tensor names grouped into modules, as parsers/conventions.py
 * ``_group`` does in Python (the reference this is tested against):
 * {module: (suffix, position, suffix, position, ...)} in listing order.  A
 * name with text before its last dot splits in C when its last component
 * settles it: a key of ``one`` splits at that dot (module = the text
 * before, suffix = one[last]); a component that is no key of ``dotted``
 * (no dot suffix ends in it) splits at the first of ``tails`` the name ends
 * with and is longer than (module = the rest), else not at all (the name
 * is its module, suffix "").  Any other name is split by calling
 * ``split(name)``, which must return a pair.  One pass, no Python frame per
 * name (issue 15: 400,000 names a model). */
#define GM_SEEN 8

typedef struct { PyObject *last, *hit; int known; } gmseen_t;

static void gm_release(gmseen_t *seen, PyObject *prev_mod) {
    for (int j = 0; j < GM_SEEN; j++) {
        Py_XDECREF(seen[j].last);
        Py_XDECREF(seen[j].hit);
    }
    Py_XDECREF(prev_mod);
}

static PyObject *group_modules(PyObject *self, PyObject *args) {
    PyObject *names, *one, *dotted, *tails, *split;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O:group_modules", &PyList_Type, &names, &PyDict_Type,
                          &one, &PyDict_Type, &dotted, &PyTuple_Type, &tails, &split))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tails); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(tails, i))) {
            PyErr_SetString(PyExc_TypeError, "tails must be strings");
            return NULL;
        }
    }
    PyObject *modules = PyDict_New();
    if (modules == NULL) return NULL;
    /* Recently seen last components and what ``one`` and ``dotted`` said of
     * them (a model repeats a handful), and the previous name's module (a
     * module's parts are usually listed together): found again by comparing
     * characters, without a new str, its hash and a lookup (issue 15).  The
     * entries hold strong references; ``one`` and ``dotted`` are not changed
     * here (``split``, Python code, is only asked after them). */
    gmseen_t seen[GM_SEEN];
    memset(seen, 0, sizeof seen);
    int next_seen = 0;
    PyObject *prev_mod = NULL;
    for (Py_ssize_t g = 0; g < PyList_GET_SIZE(names); g++) {
        PyObject *name = PyList_GET_ITEM(names, g);  /* borrowed */
        Py_INCREF(name);  /* ``split`` may run Python code that changes the list */
        PyObject *mod = NULL, *suf = NULL;  /* new references */
        if (PyUnicode_Check(name)) {
            Py_ssize_t len = PyUnicode_GET_LENGTH(name);
            Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, len, -1);
            if (dot == -2) goto fail_name;
            if (dot > 0) {
                PyObject *hit = NULL;  /* borrowed */
                int known = -2;
                for (int j = 0; j < GM_SEEN && seen[j].last != NULL; j++) {
                    if (PyUnicode_GET_LENGTH(seen[j].last) == len - dot - 1
                            && PyUnicode_Tailmatch(name, seen[j].last, dot + 1, len, 1) == 1) {
                        hit = seen[j].hit;
                        known = seen[j].known;
                        break;
                    }
                }
                if (known == -2) {
                    PyObject *last = PyUnicode_Substring(name, dot + 1, len);
                    if (last == NULL) goto fail_name;
                    hit = PyDict_GetItemWithError(one, last);  /* borrowed */
                    known = 1;
                    if (hit == NULL && !PyErr_Occurred()) known = PyDict_Contains(dotted, last);
                    if (PyErr_Occurred() || known < 0) {
                        Py_DECREF(last);
                        goto fail_name;
                    }
                    Py_XDECREF(seen[next_seen].last);
                    Py_XDECREF(seen[next_seen].hit);
                    Py_XINCREF(hit);
                    seen[next_seen].last = last;  /* takes the reference */
                    seen[next_seen].hit = hit;
                    seen[next_seen].known = known;
                    next_seen = (next_seen + 1) % GM_SEEN;
                }
                if (hit != NULL) {
                    if (prev_mod != NULL && PyUnicode_GET_LENGTH(prev_mod) == dot
                            && PyUnicode_Tailmatch(name, prev_mod, 0, dot, -1) == 1) {
                        mod = prev_mod;
                        Py_INCREF(mod);
                    } else {
                        mod = PyUnicode_Substring(name, 0, dot);
                        if (mod == NULL) goto fail_name;
                    }
                    suf = hit;
                    Py_INCREF(suf);
                } else if (PyErr_Occurred() || known < 0) {
                    goto fail_name;
                } else if (!known) {
                    /* no dot suffix can match: the first tail, or none */
                    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tails) && mod == NULL; i++) {
                        PyObject *tail = PyTuple_GET_ITEM(tails, i);
                        Py_ssize_t tl = PyUnicode_GET_LENGTH(tail);
                        if (len <= tl) continue;
                        Py_ssize_t at = PyUnicode_Tailmatch(name, tail, len - tl, len, 1);
                        if (at < 0) goto fail_name;
                        if (at) {
                            mod = PyUnicode_Substring(name, 0, len - tl);
                            if (mod == NULL) goto fail_name;
                            suf = tail;
                            Py_INCREF(suf);
                        }
                    }
                    if (mod == NULL) {
                        mod = name;
                        Py_INCREF(mod);
                        suf = PyUnicode_New(0, 0);
                        if (suf == NULL) goto fail_name;
                    }
                }
            }
        }
        if (mod == NULL) {
            PyObject *pair = PyObject_CallOneArg(split, name);
            if (pair == NULL) goto fail_name;
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                Py_DECREF(pair);
                PyErr_SetString(PyExc_TypeError, "split must return a (module, suffix) pair");
                goto fail_name;
            }
            mod = PyTuple_GET_ITEM(pair, 0);
            suf = PyTuple_GET_ITEM(pair, 1);
            Py_INCREF(mod);
            Py_INCREF(suf);
            Py_DECREF(pair);
        }
        Py_DECREF(name);
        PyObject *pos = PyLong_FromSsize_t(g);
        if (pos == NULL) { Py_DECREF(mod); Py_DECREF(suf); goto fail; }
        PyObject *got = PyDict_GetItemWithError(modules, mod);  /* borrowed */
        PyObject *val;
        if (got == NULL && PyErr_Occurred()) {
            Py_DECREF(mod); Py_DECREF(suf); Py_DECREF(pos);
            goto fail;
        }
        Py_ssize_t k = got == NULL ? 0 : PyTuple_GET_SIZE(got);
        val = PyTuple_New(k + 2);
        if (val == NULL) { Py_DECREF(mod); Py_DECREF(suf); Py_DECREF(pos); goto fail; }
        for (Py_ssize_t i = 0; i < k; i++) {
            PyObject *item = PyTuple_GET_ITEM(got, i);
            Py_INCREF(item);
            PyTuple_SET_ITEM(val, i, item);
        }
        PyTuple_SET_ITEM(val, k, suf);      /* steals */
        PyTuple_SET_ITEM(val, k + 1, pos);  /* steals */
        int rc = PyDict_SetItem(modules, mod, val);
        Py_DECREF(val);
        Py_XSETREF(prev_mod, mod);  /* takes the reference */
        if (rc < 0) goto fail;
        continue;
    fail_name:
        Py_XDECREF(mod);
        Py_XDECREF(suf);
        Py_DECREF(name);
        goto fail;
    }
    gm_release(seen, prev_mod);
    return modules;
fail:
    gm_release(seen, prev_mod);
    Py_DECREF(modules);
    return NULL;
}

/* skip_strings(data: buffer, pos: int, count: int, limit: int) -> (pos, done)
 * Walks GGUF strings (u64 length + bytes) from pos without decoding them,
 * stopping at the end of the buffer, at ``count`` strings, or at a length
 * that would pass ``limit`` (the caller then reports the hostile length). */
static PyObject *skip_strings(PyObject *self, PyObject *args) {
    Py_buffer buf;
    unsigned long long pos, count, limit;
    if (!PyArg_ParseTuple(args, "y*KKK", &buf, &pos, &count, &limit)) return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    unsigned long long n = (unsigned long long)buf.len, done = 0;
    Py_BEGIN_ALLOW_THREADS
    while (done < count && pos + 8 <= n) {
        uint64_t len;
        memcpy(&len, p + pos, 8);  /* GGUF is little-endian; so are the hosts we build for */
        if (len > limit || len > n - pos - 8) break;
        pos += 8 + len;
        done++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return Py_BuildValue("KK", pos, done);
}

/* One GGUF tensor-info entry accepted by the walk below (pass 1). */
typedef struct {
    Py_ssize_t start;            /* offset of the entry in the buffer */
    Py_ssize_t name;             /* offset of its name bytes */
    uint32_t name_len, n_dims, type;
    Py_ssize_t dims;             /* index of its first dimension in the dims array */
    uint64_t offset, nbytes;
} info_t;

/* ``v`` (a new reference, stolen) or the equal object ``memo`` already
 * holds: a checkpoint repeats a handful of shapes and byte lengths, and
 * each is one object for all its tensors (issue 15: memory per stored
 * tensor).  A new reference, or NULL with an exception set. */
static PyObject *shared(PyObject *memo, PyObject *v) {
    if (v == NULL) return NULL;
    PyObject *got = PyDict_SetDefault(memo, v, v);  /* borrowed */
    Py_XINCREF(got);
    Py_DECREF(v);
    return got;
}

/* gguf_tensor_infos(data, pos, count, alignment, max_rank, max_name, blocks,
 *                   seen, memo, names, shapes, types, offsets, nbytes)
 *   -> (pos, done)
 * Walks up to ``count`` GGUF tensor-info entries (name, n_dims, ne[n_dims],
 * type, offset) from ``pos`` and appends each to the column lists: the
 * decoded name (also added to the set ``seen``), its logical shape (ne
 * reversed, a tuple shared through ``memo`` with every equal shape), its
 * ggml type, its data offset and its byte length (elements / block
 * elements * block bytes, an int shared through ``memo``).  ``blocks`` holds
 * (block elements, block bytes) as two little-endian u32 per type code, 0
 * for an unknown type.  The walk stops before the first entry it does not
 * accept whole: one that runs past the buffer, a name of ``max_name`` bytes
 * or more, not UTF-8 or already in ``seen``, a rank outside 1..max_rank, a
 * dimension or element count past INT64_MAX, an unknown type, ne[0] not a
 * multiple of the block, an offset not a multiple of ``alignment``, or a
 * length past 2^64.  The caller reads that entry with the per-entry reader,
 * which names the problem (gguf_reader.py; the pure-Python walk there is the
 * reference this function is tested against).  Pass 1 walks the bytes with
 * the GIL released; pass 2 builds the objects. */
static PyObject *gguf_tensor_infos(PyObject *self, PyObject *args) {
    Py_buffer buf;
    unsigned long long pos, count, alignment, max_rank, max_name;
    const char *blocks;
    Py_ssize_t blocks_len;
    PyObject *seen, *memo, *names, *shapes, *types, *offsets, *nbytes;
    if (!PyArg_ParseTuple(args, "y*KKKKKy#O!O!O!O!O!O!O!", &buf, &pos, &count, &alignment,
                          &max_rank, &max_name, &blocks, &blocks_len, &PySet_Type, &seen,
                          &PyDict_Type, &memo, &PyList_Type, &names, &PyList_Type, &shapes,
                          &PyList_Type, &types, &PyList_Type, &offsets, &PyList_Type, &nbytes))
        return NULL;
    const unsigned char *p = (const unsigned char *)buf.buf;
    const uint64_t n = (uint64_t)buf.len, n_types = (uint64_t)blocks_len / 8;
    const u128 i64_max = ((u128)1 << 63) - 1;
    info_t *ents = NULL;
    uint64_t *dv = NULL;
    Py_ssize_t n_ents = 0, cap = 0, n_dv = 0, cap_dv = 0;
    int oom = 0;
    if (alignment == 0 || pos > n) count = 0;  /* the caller never passes these */
    Py_BEGIN_ALLOW_THREADS
    while ((uint64_t)n_ents < count) {
        uint64_t q = pos, len, nd, d, off;
        uint32_t t;
        if (n - q < 8) break;
        memcpy(&len, p + q, 8);  /* GGUF is little-endian; so are the hosts we build for */
        q += 8;
        if (len >= max_name || n - q < len + 4) break;
        uint64_t name = q;
        q += len;
        uint32_t nd32;
        memcpy(&nd32, p + q, 4);
        nd = nd32;
        q += 4;
        if (nd < 1 || nd > max_rank || (n - q) / 8 < nd || n - q - 8 * nd < 12) break;
        if (n_dv + (Py_ssize_t)nd > cap_dv) {
            Py_ssize_t c = cap_dv ? cap_dv * 2 : 1024;
            while (c < n_dv + (Py_ssize_t)nd) c *= 2;
            uint64_t *g = realloc(dv, (size_t)c * sizeof *dv);
            if (g == NULL) { oom = 1; break; }
            dv = g;
            cap_dv = c;
        }
        u128 numel = 1;
        int bad = 0;
        for (uint64_t k = 0; k < nd; k++) {
            memcpy(&d, p + q + 8 * k, 8);
            numel *= d;  /* both <= INT64_MAX here, so the product fits */
            if ((u128)d > i64_max || numel > i64_max) { bad = 1; break; }
            dv[n_dv + (Py_ssize_t)(nd - 1 - k)] = d;  /* logical order: ne reversed */
        }
        if (bad) break;
        q += 8 * nd;
        memcpy(&t, p + q, 4);
        memcpy(&off, p + q + 4, 8);
        if (t >= n_types) break;
        uint32_t bs0, bs1;
        memcpy(&bs0, blocks + 8 * (uint64_t)t, 4);
        memcpy(&bs1, blocks + 8 * (uint64_t)t + 4, 4);
        if (bs0 == 0 || dv[n_dv + (Py_ssize_t)nd - 1] % bs0 || off % alignment) break;
        u128 size = numel / bs0 * bs1;
        if (size >> 64) break;
        if (n_ents == cap) {
            Py_ssize_t c = cap ? cap * 2 : 1024;
            info_t *g = realloc(ents, (size_t)c * sizeof *ents);
            if (g == NULL) { oom = 1; break; }
            ents = g;
            cap = c;
        }
        info_t *e = &ents[n_ents++];
        e->start = (Py_ssize_t)pos;
        e->name = (Py_ssize_t)name;
        e->name_len = (uint32_t)len;
        e->n_dims = (uint32_t)nd;
        e->type = t;
        e->dims = n_dv;
        e->offset = off;
        e->nbytes = (uint64_t)size;
        n_dv += (Py_ssize_t)nd;
        pos = q + 12;
    }
    Py_END_ALLOW_THREADS
    PyObject *res = NULL;
    if (oom) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t i;
    for (i = 0; i < n_ents; i++) {
        info_t *e = &ents[i];
        PyObject *s = PyUnicode_DecodeUTF8((const char *)p + e->name, e->name_len, NULL);
        if (s == NULL) {  /* not UTF-8: the per-entry reader says so */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto done;
            PyErr_Clear();
            break;
        }
        /* one set lookup, not two: a name already there leaves the size as it was */
        Py_ssize_t before = PySet_GET_SIZE(seen);
        if (PySet_Add(seen, s) < 0) { Py_DECREF(s); goto done; }
        if (PySet_GET_SIZE(seen) == before) {  /* a duplicate: the per-entry reader says so */
            Py_DECREF(s);
            break;
        }
        int rc0 = PyList_Append(names, s);
        Py_DECREF(s);
        if (rc0 < 0) goto done;
        PyObject *shape = PyTuple_New(e->n_dims);
        if (shape == NULL) goto done;
        for (uint32_t k = 0; k < e->n_dims; k++) {
            PyObject *d = PyLong_FromUnsignedLongLong(dv[e->dims + k]);
            if (d == NULL) { Py_DECREF(shape); goto done; }
            PyTuple_SET_ITEM(shape, k, d);
        }
        PyObject *sh = shared(memo, shape), *nb = shared(memo, PyLong_FromUnsignedLongLong(e->nbytes));
        PyObject *ty = PyLong_FromUnsignedLong(e->type), *o = PyLong_FromUnsignedLongLong(e->offset);
        int rc = (sh == NULL || nb == NULL || ty == NULL || o == NULL
                  || PyList_Append(shapes, sh) < 0 || PyList_Append(types, ty) < 0
                  || PyList_Append(offsets, o) < 0 || PyList_Append(nbytes, nb) < 0);
        Py_XDECREF(sh); Py_XDECREF(nb); Py_XDECREF(ty); Py_XDECREF(o);
        if (rc) goto done;
    }
    res = Py_BuildValue("Kn", (unsigned long long)(i < n_ents ? (uint64_t)ents[i].start : pos),
                        i);
done:
    free(ents);
    free(dv);
    PyBuffer_Release(&buf);
    return res;
}

/* gguf_packed_starts(offsets, nbytes, alignment, data_offset, size) -> list | None
 * The absolute start (data_offset + offset) of each tensor when the tensors
 * are packed in order as ggml writes them (the first at 0, each where the
 * one before it ends, padded to ``alignment``) and the last ends inside the
 * file of ``size`` bytes; None otherwise (and for any value past 2^64), when
 * the caller lays them out one by one and reports what is out of place
 * (gguf_reader.py; its pure-Python _packed_starts_py is the reference). */
static PyObject *gguf_packed_starts(PyObject *self, PyObject *args) {
    PyObject *offsets, *nbytes;
    unsigned long long alignment, data_offset, size;
    if (!PyArg_ParseTuple(args, "O!O!KKK", &PyList_Type, &offsets, &PyList_Type, &nbytes,
                          &alignment, &data_offset, &size))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(offsets);
    if (PyList_GET_SIZE(nbytes) != n || alignment == 0) {
        PyErr_SetString(PyExc_ValueError, "offsets and nbytes differ in length, or alignment 0");
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    u128 expect = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long o = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(offsets, i));
        unsigned long long nb = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(nbytes, i));
        if (PyErr_Occurred()) {  /* negative, past 2^64 or not an int: one by one */
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)
                    && !PyErr_ExceptionMatches(PyExc_TypeError)) {
                Py_DECREF(out);
                return NULL;
            }
            PyErr_Clear();
            goto not_packed;
        }
        u128 start = (u128)data_offset + o;
        if ((u128)o != expect || start + nb > (u128)size) goto not_packed;
        expect = (u128)o + ((u128)nb + alignment - 1) / alignment * alignment;
        PyObject *v = PyLong_FromUnsignedLongLong((unsigned long long)start);
        if (v == NULL) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
not_packed:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* ===== safetensors header columns (issue 15) ===============================
 *
 * st_header_columns(data, dtype_names, dtype_bits, data_start, region,
 *                   max_tensors, max_items, max_rank)
 *   -> (names, dtypes, dims, ranks, starts, nbytes, metadata) | None
 *
 * A restricted scanner for the plain shape of a safetensors header: a JSON
 * object whose values are objects with exactly the keys "dtype" (a string),
 * "shape" (an array of at most ``max_rank`` integers) and "data_offsets"
 * (an array of two integers), in any order, plus at most one "__metadata__"
 * object of string -> string.  Strings hold no backslash and no control
 * character; integers are plain digits ("0" or no leading zero).  It
 * checks what safetensors_reader._fast_path checks (dtype in
 * ``dtype_names``, dimensions below 2^63, offsets below 2^62, element
 * count below 2^55, bytes == elements * bits / 8 exactly, offsets sorted
 * by (start, end) tiling [0, region), no name twice) and returns that
 * path's columns: the names (str, text order), each dtype as the value
 * ``dtype_names`` maps it to, the dimensions flat, the ranks, the absolute
 * starts (data_start + start) and the byte lengths; the int64 columns as
 * native-endian bytes for array('q').frombytes.
 *
 * None for anything else, including a JSON text whose ',' '[' '{' count
 * (budgets.json_items) passes ``max_items``, more than ``max_tensors``
 * tensors, no tensor at all, any key twice at any level: the caller then
 * parses the text as before, which gives every message, issue and budget
 * error (tests/test_st_columns.py holds the two to the same Header).  The
 * walk is one pass over the bytes with no recursion (the shape is two
 * levels deep) and never reads past the buffer. */

typedef struct {
    const unsigned char *p;
    Py_ssize_t n, i;
} stcur_t;

static inline void st_ws(stcur_t *c) {
    while (c->i < c->n) {
        unsigned char ch = c->p[c->i];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') break;
        c->i++;
    }
}

/* Consume ``ch`` (after whitespace); 0 when the next byte is something else. */
static inline int st_eat(stcur_t *c, unsigned char ch) {
    st_ws(c);
    if (c->i < c->n && c->p[c->i] == ch) { c->i++; return 1; }
    return 0;
}

/* A string with no escape and no control character: its bytes are
 * p[*start, *start + *len).  0 for anything else.  Eight bytes at a time
 * while none of them is '"', '\\' or below 0x20 (the usual zero-byte and
 * less-than tests on a word; a hit may be a false one, and the byte loop
 * then decides): names are most of a header's bytes (issue 15). */
static inline int st_string(stcur_t *c, Py_ssize_t *start, Py_ssize_t *len) {
    if (!st_eat(c, '"')) return 0;
    const unsigned char *p = c->p;
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    Py_ssize_t s = c->i, i = s, n = c->n;
    while (n - i >= 8) {
        uint64_t w, q, b;
        memcpy(&w, p + i, 8);
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) & highs) break;
        i += 8;
    }
    for (; i < n; i++) {
        unsigned char ch = p[i];
        if (ch == '"') {
            *start = s;
            *len = i - s;
            c->i = i + 1;
            return 1;
        }
        if (ch == '\\' || ch < 0x20) return 0;
    }
    return 0;
}

/* A non-negative integer in plain digits, at most ``limit``.  A following
 * digit (a leading zero), '.', 'e' or '-' is refused by the caller, which
 * wants ',' or ']' next.  Up to 19 digits fit 64 bits (10^19 < 2^64); the
 * limits are below 10^19, so a 20th digit is over them. */
static inline int st_uint(stcur_t *c, uint64_t limit, uint64_t *out) {
    st_ws(c);
    Py_ssize_t i = c->i, n = c->n;
    if (i >= n || c->p[i] < '0' || c->p[i] > '9') return 0;
    uint64_t v = 0;
    if (c->p[i] == '0') {
        i++;
    } else {
        Py_ssize_t first = i;
        while (i < n && c->p[i] >= '0' && c->p[i] <= '9') {
            if (i - first == 19) return 0;
            v = v * 10 + (uint64_t)(c->p[i] - '0');
            i++;
        }
        if (v > limit) return 0;
    }
    c->i = i;
    *out = v;
    return 1;
}

/* The bytes p[0, len) are the literal ``lit`` (a constant-length compare). */
#define ST_IS(p, len, lit) ((len) == sizeof(lit) - 1 && memcmp((p), lit, sizeof(lit) - 1) == 0)

typedef struct {
    Py_ssize_t at, len;   /* the dtype's bytes in the buffer */
    PyObject *name;       /* borrowed from dtype_names */
    uint64_t bits;
} stdtype_t;

#define ST_DTYPE_CACHE 64

typedef struct { int64_t s, e; } stspan_t;

static int st_span_cmp(const void *a, const void *b) {
    const stspan_t *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->e != y->e) return x->e < y->e ? -1 : 1;
    return 0;
}

/* Grow ``*arr`` (of ``size``-byte items) to hold ``need``; 0 on no memory. */
static int st_reserve(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap) return 1;
    Py_ssize_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *g = realloc(*arr, (size_t)c * size);
    if (g == NULL) return 0;
    *arr = g;
    *cap = c;
    return 1;
}

/* budgets.json_items(text) > max_items, counted over the UTF-8 bytes of
 * the text: ',', '[' and '{' are ASCII, so bytes count as characters (a
 * UTF-8 sequence never holds an ASCII byte).  The count is at most one more
 * than the length, so only a text that long is counted. */
static int json_items_over(const unsigned char *p, Py_ssize_t n, Py_ssize_t max_items) {
    if (n < max_items) return 0;
    Py_ssize_t items = 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned char ch = p[k];
        items += (ch == ',') + (ch == '[') + (ch == '{');
    }
    return items > max_items;
}

/* The refusal and error exits of st_header_columns: -1 a Python error is
 * set (no memory), 0 the text is not the plain shape (None). */
#define ST_REFUSE do { rc = 0; goto out; } while (0)
#define ST_FAIL do { rc = -1; goto out; } while (0)

static PyObject *st_header_columns(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *dtype_names, *dtype_bits;
    long long data_start, region;
    Py_ssize_t max_tensors, max_items, max_rank;
    if (!PyArg_ParseTuple(args, "y*O!O!LLnnn", &buf, &PyDict_Type, &dtype_names,
                          &PyDict_Type, &dtype_bits, &data_start, &region, &max_tensors,
                          &max_items, &max_rank))
        return NULL;
    stcur_t c = {(const unsigned char *)buf.buf, buf.len, 0};
    const uint64_t DIM_MAX = ((uint64_t)1 << 63) - 1, OFF_MAX = ((uint64_t)1 << 62) - 1;
    const uint64_t NUMEL_LIMIT = (uint64_t)1 << 55;
    int rc = 0;
    PyObject *names = NULL, *dtypes = NULL, *seen = NULL, *meta = NULL, *res = NULL;
    int64_t *sv = NULL, *ev = NULL, *dims = NULL;  /* start, end per tensor; every dimension */
    unsigned char *ranks = NULL;
    Py_ssize_t cap_s = 0, cap_e = 0, cap_d = 0, cap_r = 0, n_t = 0, n_d = 0;
    stdtype_t cache[ST_DTYPE_CACHE];
    int n_cache = 0;
    stspan_t *spans = NULL;

    if (json_items_over(c.p, c.n, max_items)) ST_REFUSE;
    if (data_start < 0 || region < 0) ST_REFUSE;
    if (max_rank > 64) max_rank = 64;  /* refusing more is always safe: ranks fit a byte */
    if ((names = PyList_New(0)) == NULL || (dtypes = PyList_New(0)) == NULL
            || (seen = PySet_New(NULL)) == NULL || (meta = PyDict_New()) == NULL)
        ST_FAIL;
    if (!st_eat(&c, '{')) ST_REFUSE;
    int have_meta = 0;
    for (;;) {
        Py_ssize_t ks, kl;
        if (!st_string(&c, &ks, &kl) || !st_eat(&c, ':')) ST_REFUSE;
        if (ST_IS(c.p + ks, kl, "__metadata__")) {
            if (have_meta || !st_eat(&c, '{')) ST_REFUSE;
            have_meta = 1;
            if (!st_eat(&c, '}')) {
                for (;;) {
                    Py_ssize_t ms, ml, vs, vl;
                    if (!st_string(&c, &ms, &ml) || !st_eat(&c, ':')
                            || !st_string(&c, &vs, &vl))
                        ST_REFUSE;
                    PyObject *k = PyUnicode_DecodeUTF8((const char *)c.p + ms, ml, NULL);
                    PyObject *v = k ? PyUnicode_DecodeUTF8((const char *)c.p + vs, vl, NULL)
                                    : NULL;
                    if (v == NULL) {
                        Py_XDECREF(k);
                        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) ST_FAIL;
                        PyErr_Clear();
                        ST_REFUSE;
                    }
                    Py_ssize_t before = PyDict_GET_SIZE(meta);
                    int bad = PyDict_SetItem(meta, k, v);
                    Py_DECREF(k);
                    Py_DECREF(v);
                    if (bad < 0) ST_FAIL;
                    if (PyDict_GET_SIZE(meta) == before) ST_REFUSE;  /* a key twice */
                    if (st_eat(&c, '}')) break;
                    if (!st_eat(&c, ',')) ST_REFUSE;
                }
            }
        } else {
            if (n_t >= max_tensors) ST_REFUSE;
            PyObject *name = PyUnicode_DecodeUTF8((const char *)c.p + ks, kl, NULL);
            if (name == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) ST_FAIL;
                PyErr_Clear();
                ST_REFUSE;
            }
            /* one set lookup: a name already there leaves the size as it was */
            Py_ssize_t before = PySet_GET_SIZE(seen);
            int bad = PySet_Add(seen, name) < 0 || PyList_Append(names, name) < 0;
            Py_DECREF(name);
            if (bad) ST_FAIL;
            if (PySet_GET_SIZE(seen) == before) ST_REFUSE;
            if (!st_reserve((void **)&sv, &cap_s, n_t + 1, sizeof *sv)
                    || !st_reserve((void **)&ev, &cap_e, n_t + 1, sizeof *ev)
                    || !st_reserve((void **)&ranks, &cap_r, n_t + 1, 1)
                    || !st_reserve((void **)&dims, &cap_d, n_d + max_rank, sizeof *dims)) {
                PyErr_NoMemory();
                ST_FAIL;
            }
            /* the entry: each of the three keys once, in any order */
            if (!st_eat(&c, '{')) ST_REFUSE;
            int got = 0;  /* bits: 1 dtype, 2 shape, 4 data_offsets */
            uint64_t bits = 0, numel = 1, start = 0, end = 0;
            Py_ssize_t rank = 0;
            int zero = 0;
            for (int f = 0; f < 3; f++) {
                Py_ssize_t fs, fl;
                if (f && !st_eat(&c, ',')) ST_REFUSE;
                if (!st_string(&c, &fs, &fl) || !st_eat(&c, ':')) ST_REFUSE;
                if (ST_IS(c.p + fs, fl, "dtype") && !(got & 1)) {
                    got |= 1;
                    Py_ssize_t vs, vl;
                    if (!st_string(&c, &vs, &vl)) ST_REFUSE;
                    int hit = -1;
                    for (int k = 0; k < n_cache; k++)
                        if (cache[k].len == vl && memcmp(c.p + cache[k].at, c.p + vs, vl) == 0) {
                            hit = k;
                            break;
                        }
                    PyObject *dname;
                    if (hit >= 0) {
                        dname = cache[hit].name;
                        bits = cache[hit].bits;
                    } else {
                        PyObject *s = PyUnicode_DecodeUTF8((const char *)c.p + vs, vl, NULL);
                        if (s == NULL) {
                            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) ST_FAIL;
                            PyErr_Clear();
                            ST_REFUSE;
                        }
                        dname = PyDict_GetItemWithError(dtype_names, s);  /* borrowed */
                        PyObject *w = dname ? PyDict_GetItemWithError(dtype_bits, s) : NULL;
                        Py_DECREF(s);
                        if (w == NULL || !PyUnicode_CheckExact(dname) || !PyLong_CheckExact(w)) {
                            if (PyErr_Occurred()) ST_FAIL;
                            ST_REFUSE;  /* an unknown dtype: the per-entry path names it */
                        }
                        long wb = PyLong_AsLong(w);
                        if (wb < 1 || wb > 64) {
                            if (PyErr_Occurred()) PyErr_Clear();
                            ST_REFUSE;
                        }
                        bits = (uint64_t)wb;
                        if (n_cache < ST_DTYPE_CACHE)
                            cache[n_cache++] = (stdtype_t){vs, vl, dname, bits};
                    }
                    if (PyList_Append(dtypes, dname) < 0) ST_FAIL;
                } else if (ST_IS(c.p + fs, fl, "shape") && !(got & 2)) {
                    got |= 2;
                    if (!st_eat(&c, '[')) ST_REFUSE;
                    if (!st_eat(&c, ']')) {
                        for (;;) {
                            uint64_t d;
                            if (rank >= max_rank || !st_uint(&c, DIM_MAX, &d)) ST_REFUSE;
                            dims[n_d + rank++] = (int64_t)d;
                            if (d == 0) zero = 1;
                            else if (numel < NUMEL_LIMIT) {
                                /* < 2^55 times < 2^63: fits 128 bits; saturate at the limit */
                                u128 m = (u128)numel * d;
                                numel = m >= NUMEL_LIMIT ? NUMEL_LIMIT : (uint64_t)m;
                            }
                            if (st_eat(&c, ']')) break;
                            if (!st_eat(&c, ',')) ST_REFUSE;
                        }
                    }
                } else if (ST_IS(c.p + fs, fl, "data_offsets") && !(got & 4)) {
                    got |= 4;
                    if (!st_eat(&c, '[') || !st_uint(&c, OFF_MAX, &start) || !st_eat(&c, ',')
                            || !st_uint(&c, OFF_MAX, &end) || !st_eat(&c, ']'))
                        ST_REFUSE;
                } else {
                    ST_REFUSE;  /* another key, or one of the three twice */
                }
            }
            if (!st_eat(&c, '}')) ST_REFUSE;
            if (zero) numel = 0;
            if (numel >= NUMEL_LIMIT) ST_REFUSE;
            uint64_t nbits = numel * bits;  /* < 2^55 * 64 */
            if (nbits % 8 || end < start || end - start != nbits / 8) ST_REFUSE;
            sv[n_t] = (int64_t)start;
            ev[n_t] = (int64_t)end;
            ranks[n_t] = (unsigned char)rank;
            n_d += rank;
            n_t++;
        }
        if (st_eat(&c, '}')) break;
        if (!st_eat(&c, ',')) ST_REFUSE;
    }
    st_ws(&c);
    if (c.i != c.n || n_t == 0) ST_REFUSE;  /* trailing bytes; no tensor (today's path) */
    /* the offsets tile [0, region): in text order (how writers lay them
     * out), or else after sorting by (start, end) as _fast_path does */
    int tiled = sv[0] == 0 && ev[n_t - 1] == region;
    for (Py_ssize_t k = 1; tiled && k < n_t; k++)
        if (sv[k] != ev[k - 1]) tiled = 0;
    if (!tiled) {
        spans = malloc((size_t)n_t * sizeof *spans);
        if (spans == NULL) { PyErr_NoMemory(); ST_FAIL; }
        for (Py_ssize_t k = 0; k < n_t; k++) spans[k] = (stspan_t){sv[k], ev[k]};
        qsort(spans, (size_t)n_t, sizeof *spans, st_span_cmp);
        if (spans[0].s != 0 || spans[n_t - 1].e != region) ST_REFUSE;
        for (Py_ssize_t k = 1; k < n_t; k++)
            if (spans[k].s != spans[k - 1].e) ST_REFUSE;
    }
    /* the columns, in place: starts made absolute, ends become byte lengths
     * (start < 2^62 and data_start < 2^63 - 2^62, checked: no overflow) */
    if (data_start >= ((int64_t)1 << 62)) ST_REFUSE;
    for (Py_ssize_t k = 0; k < n_t; k++) {
        ev[k] -= sv[k];
        sv[k] += data_start;
    }
    rc = 1;
out:
    if (rc == 1) {
        PyObject *rk = PyList_New(n_t), *db = NULL, *sb = NULL, *nb = NULL;
        int ok = rk != NULL;
        for (Py_ssize_t k = 0; ok && k < n_t; k++) {
            PyObject *r = PyLong_FromLong(ranks[k]);  /* small ints: shared objects */
            if (r == NULL) ok = 0;
            else PyList_SET_ITEM(rk, k, r);
        }
        if (ok) {
            db = PyBytes_FromStringAndSize((const char *)dims, n_d * 8);
            sb = PyBytes_FromStringAndSize((const char *)sv, n_t * 8);
            nb = PyBytes_FromStringAndSize((const char *)ev, n_t * 8);
        }
        if (rk && db && sb && nb)
            res = PyTuple_Pack(7, names, dtypes, db, rk, sb, nb, meta);
        Py_XDECREF(rk); Py_XDECREF(db); Py_XDECREF(sb); Py_XDECREF(nb);
    } else if (rc == 0) {
        res = Py_None;
        Py_INCREF(res);
    }
    Py_XDECREF(names); Py_XDECREF(dtypes); Py_XDECREF(seen); Py_XDECREF(meta);
    free(sv); free(ev); free(dims); free(ranks); free(spans);
    PyBuffer_Release(&buf);
    return res;
}

#undef ST_REFUSE
#undef ST_FAIL
#undef ST_IS

/* ===== end of safetensors header columns ================================== */

/* shape_tuples(dims, ranks) -> list[tuple[int, ...]]
 * Each tensor's shape from a table's flat int64 dimensions (``dims``, any
 * buffer of native int64) and its one-byte ranks (``ranks``, any buffer of
 * uint8), equal shapes one shared tuple: artifact.TensorTable.shapes, whose
 * Python loop is the reference (tests/test_shape_tuples.py).  ValueError
 * when the ranks ask for more dimensions than there are, or leave some
 * over.  A model repeats a handful of shapes: one dict lookup a tensor and
 * no Python frame (issue 15: 400,000 tensors a model). */
static PyObject *shape_tuples(PyObject *self, PyObject *args) {
    Py_buffer db, rb;
    if (!PyArg_ParseTuple(args, "y*y*:shape_tuples", &db, &rb)) return NULL;
    PyObject *out = NULL, *seen = NULL;
    if (db.len % 8) {
        PyErr_SetString(PyExc_ValueError, "dims: not a whole number of int64");
        goto done;
    }
    const unsigned char *rk = (const unsigned char *)rb.buf;
    Py_ssize_t n_t = rb.len, n_d = db.len / 8, at = 0;
    int64_t *dims = NULL;
    if (n_d) {
        dims = malloc((size_t)n_d * sizeof *dims);
        if (dims == NULL) { PyErr_NoMemory(); goto done; }
        memcpy(dims, db.buf, (size_t)n_d * sizeof *dims);  /* aligned reads */
    }
    out = PyList_New(n_t);
    seen = PyDict_New();
    if (out == NULL || seen == NULL) goto fail;
    for (Py_ssize_t k = 0; k < n_t; k++) {
        Py_ssize_t r = rk[k];
        if (r > n_d - at) {
            PyErr_SetString(PyExc_ValueError, "ranks ask for more dimensions than there are");
            goto fail;
        }
        PyObject *t = PyTuple_New(r);
        if (t == NULL) goto fail;
        for (Py_ssize_t j = 0; j < r; j++) {
            PyObject *v = PyLong_FromLongLong(dims[at + j]);
            if (v == NULL) { Py_DECREF(t); goto fail; }
            PyTuple_SET_ITEM(t, j, v);
        }
        at += r;
        PyObject *got = PyDict_SetDefault(seen, t, t);  /* borrowed */
        if (got == NULL) { Py_DECREF(t); goto fail; }
        Py_INCREF(got);
        Py_DECREF(t);
        PyList_SET_ITEM(out, k, got);
    }
    if (at != n_d) {
        PyErr_SetString(PyExc_ValueError, "dimensions left over after the last rank");
        goto fail;
    }
    goto ok;
fail:
    Py_CLEAR(out);
ok:
    free(dims);
done:
    Py_XDECREF(seen);
    PyBuffer_Release(&db);
    PyBuffer_Release(&rb);
    return out;
}

/* ===== safetensors index JSON (issue 15) ===================================
 *
 * index_json(data, max_items) -> dict | None
 *
 * json.loads for the plain shape of a sharded model's
 * model.safetensors.index.json: a JSON object whose "weight_map" member
 * (if any) is an object of string -> string, and whose other members are
 * strings, integers, true, false, null, and objects and arrays of those
 * nested at most IX_DEPTH deep.  Strings hold no backslash and no control
 * character (st_string's rule); integers are '-'? and plain digits ("0"
 * or no leading zero), at most 18 of them (they fit int64); no fraction,
 * no exponent; the text is UTF-8 with JSON whitespace only.  For such a
 * text the result equals json.loads(text): the same keys in the same
 * order, equal values of the same types (a key given twice keeps its first
 * place and its last value, as PyDict_SetItem in json's own scanner does).
 * Each distinct weight_map value is one str object, where json.loads
 * builds one per entry (400,000 entries naming 500 shards).
 *
 * None for anything else, and for a text whose budgets.json_items count
 * passes ``max_items`` (counted before anything is built): the caller then
 * decodes and parses the text as before, which gives every message and
 * budget error (tests/test_index_scanner.py holds the two to the same
 * value).  The walk never reads past the buffer; its recursion is bounded
 * by IX_DEPTH.  Every function below returns a new reference, or NULL:
 * with an exception set on an error (no memory), without one when the
 * text is not the plain shape (a refusal). */

#define IX_DEPTH 32
#define IX_CACHE 2048  /* slots of the weight_map value cache; a power of two */

/* p[s, s + len) as a str; NULL without an exception when it is not UTF-8. */
static PyObject *ix_decode(const unsigned char *p, Py_ssize_t s, Py_ssize_t len) {
    PyObject *v = PyUnicode_DecodeUTF8((const char *)p + s, len, NULL);
    if (v == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) PyErr_Clear();
    return v;
}

/* A string (st_string's rule) as a str. */
static PyObject *ix_string(stcur_t *c) {
    Py_ssize_t s, l;
    if (!st_string(c, &s, &l)) return NULL;
    return ix_decode(c->p, s, l);
}

/* An integer: '-'? then "0", or a digit 1-9 and more digits, at most 18
 * digits in all (below 10^18 < 2^63, so PyLong_FromLongLong is exact;
 * longer ones go to json.loads, which also applies int's digit limit).  A
 * digit after "0", '.', 'e' or 'E' is refused by the caller, which wants
 * ',', '}' or ']' next. */
static PyObject *ix_int(stcur_t *c) {
    Py_ssize_t i = c->i, n = c->n;
    int neg = i < n && c->p[i] == '-';
    i += neg;
    if (i >= n || c->p[i] < '0' || c->p[i] > '9') return NULL;
    long long v = 0;
    if (c->p[i] == '0') {
        i++;
    } else {
        Py_ssize_t first = i;
        while (i < n && c->p[i] >= '0' && c->p[i] <= '9') {
            if (i - first == 18) return NULL;
            v = v * 10 + (c->p[i] - '0');
            i++;
        }
    }
    c->i = i;
    return PyLong_FromLongLong(neg ? -v : v);
}

/* The literal ``lit`` next in the text (a constant-length compare). */
#define IX_LIT(c, lit) ((c)->n - (c)->i >= (Py_ssize_t)sizeof(lit) - 1 \
                        && memcmp((c)->p + (c)->i, lit, sizeof(lit) - 1) == 0 \
                        && ((c)->i += sizeof(lit) - 1, 1))

/* Short object keys seen before ("desc", "shape", "gid" in each of a
 * manifest's 25,000 entries): one str each, found by their bytes
 * (compared in full) without decoding them again.  The slots hold
 * references, released by ix_keys_release. */
#define IX_KEYS 64
#define IX_KEY_LEN 16

typedef struct {
    Py_ssize_t len;
    unsigned char bytes[IX_KEY_LEN];
    PyObject *str;
} ixkey_t;

static PyObject *ix_key(stcur_t *c, ixkey_t *keys) {
    Py_ssize_t s, l;
    if (!st_string(c, &s, &l)) return NULL;
    if (keys == NULL || l > IX_KEY_LEN) return ix_decode(c->p, s, l);
    uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)l;
    for (Py_ssize_t j = 0; j < l; j++) h = (h ^ c->p[s + j]) * 0x100000001b3ULL;
    ixkey_t *slot = &keys[h & (IX_KEYS - 1)];
    if (slot->str != NULL && slot->len == l && memcmp(slot->bytes, c->p + s, (size_t)l) == 0) {
        Py_INCREF(slot->str);
        return slot->str;
    }
    PyObject *k = ix_decode(c->p, s, l);
    if (k == NULL) return NULL;
    Py_XSETREF(slot->str, k);
    Py_INCREF(k);
    slot->len = l;
    memcpy(slot->bytes, c->p + s, (size_t)l);
    return k;
}

static void ix_keys_release(ixkey_t *keys) {
    if (keys == NULL) return;
    for (int i = 0; i < IX_KEYS; i++) Py_XDECREF(keys[i].str);
}

/* Any value of the shape: a string, an integer, a literal, or an object or
 * array of those at ``depth`` < IX_DEPTH; object keys through ``keys``. */
static PyObject *ix_value(stcur_t *c, int depth, ixkey_t *keys) {
    st_ws(c);
    if (c->i >= c->n) return NULL;
    unsigned char ch = c->p[c->i];
    if (ch == '"') return ix_string(c);
    if (ch == 't') { if (IX_LIT(c, "true")) Py_RETURN_TRUE; return NULL; }
    if (ch == 'f') { if (IX_LIT(c, "false")) Py_RETURN_FALSE; return NULL; }
    if (ch == 'n') { if (IX_LIT(c, "null")) Py_RETURN_NONE; return NULL; }
    if (ch != '{' && ch != '[') return ix_int(c);
    if (depth >= IX_DEPTH) return NULL;
    c->i++;
    int obj = ch == '{';
    unsigned char close = obj ? '}' : ']';
    PyObject *out = obj ? PyDict_New() : PyList_New(0);
    if (out == NULL || st_eat(c, close)) return out;
    for (;;) {
        PyObject *k = NULL, *v;
        if (obj) {
            if ((k = ix_key(c, keys)) == NULL) break;
            if (!st_eat(c, ':')) { Py_DECREF(k); break; }
        }
        if ((v = ix_value(c, depth + 1, keys)) == NULL) { Py_XDECREF(k); break; }
        int bad = obj ? PyDict_SetItem(out, k, v) : PyList_Append(out, v);
        Py_XDECREF(k);
        Py_DECREF(v);
        if (bad < 0) break;
        if (st_eat(c, close)) return out;
        if (!st_eat(c, ',')) break;
    }
    Py_DECREF(out);
    return NULL;
}

#undef IX_LIT

typedef struct {
    Py_ssize_t at, len;  /* the value's bytes in the buffer */
    PyObject *str;       /* borrowed from the memo dict; NULL: an empty slot */
} ixslot_t;

/* A weight_map: an object of string -> string, each distinct value one
 * str.  ``memo`` (str -> itself) makes them one; ``cache``, indexed by a
 * hash of the value's bytes, finds the str of bytes seen before without
 * decoding them again.  A slot's bytes are compared in full, so a
 * collision only costs a decode (the cache is never trusted on the hash). */
static PyObject *ix_weight_map(stcur_t *c, PyObject *memo, ixslot_t *cache) {
    if (!st_eat(c, '{')) return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL || st_eat(c, '}')) return out;
    for (;;) {
        Py_ssize_t s, l;
        PyObject *k = ix_string(c), *v;
        if (k == NULL) break;
        if (!st_eat(c, ':') || !st_string(c, &s, &l)) { Py_DECREF(k); break; }
        uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)l;
        Py_ssize_t j = 0;
        for (;; j += 8) {  /* multiply-xorshift over the bytes, eight at a time */
            uint64_t w = 0;
            memcpy(&w, c->p + s + j, l - j < 8 ? (size_t)(l - j) : 8);
            h = (h ^ w) * 0xff51afd7ed558ccdULL;
            h ^= h >> 32;
            if (l - j <= 8) break;
        }
        ixslot_t *slot = &cache[h & (IX_CACHE - 1)];
        if (slot->str != NULL && slot->len == l && memcmp(c->p + slot->at, c->p + s, l) == 0) {
            v = slot->str;
            Py_INCREF(v);
        } else {
            if ((v = shared(memo, ix_decode(c->p, s, l))) == NULL) { Py_DECREF(k); break; }
            *slot = (ixslot_t){s, l, v};  /* the memo keeps it alive */
        }
        int bad = PyDict_SetItem(out, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (bad < 0) break;
        if (st_eat(c, '}')) return out;
        if (!st_eat(c, ',')) break;
    }
    Py_DECREF(out);
    return NULL;
}

static PyObject *index_json(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t max_items;
    if (!PyArg_ParseTuple(args, "y*n:index_json", &buf, &max_items)) return NULL;
    stcur_t c = {(const unsigned char *)buf.buf, buf.len, 0};
    PyObject *top = NULL, *memo = NULL;
    ixslot_t *cache = NULL;
    ixkey_t *keys = NULL;
    if (json_items_over(c.p, c.n, max_items) || !st_eat(&c, '{')) goto out;
    if ((top = PyDict_New()) == NULL || (memo = PyDict_New()) == NULL) goto drop;
    if ((cache = calloc(IX_CACHE, sizeof *cache)) == NULL
            || (keys = calloc(IX_KEYS, sizeof *keys)) == NULL) {
        PyErr_NoMemory();
        goto drop;
    }
    if (!st_eat(&c, '}')) {
        for (;;) {
            Py_ssize_t s, l;
            if (!st_string(&c, &s, &l)) goto drop;
            PyObject *k = ix_decode(c.p, s, l), *v;
            if (k == NULL) goto drop;
            if (!st_eat(&c, ':')) { Py_DECREF(k); goto drop; }
            if (l == 10 && memcmp(c.p + s, "weight_map", 10) == 0)
                v = ix_weight_map(&c, memo, cache);
            else
                v = ix_value(&c, 1, keys);
            if (v == NULL) { Py_DECREF(k); goto drop; }
            int bad = PyDict_SetItem(top, k, v);
            Py_DECREF(k);
            Py_DECREF(v);
            if (bad < 0) goto drop;
            if (st_eat(&c, '}')) break;
            if (!st_eat(&c, ',')) goto drop;
        }
    }
    st_ws(&c);
    if (c.i == c.n) goto out;  /* else trailing bytes */
drop:
    Py_CLEAR(top);
out:
    Py_XDECREF(memo);
    free(cache);
    ix_keys_release(keys);
    free(keys);
    PyBuffer_Release(&buf);
    if (top == NULL && !PyErr_Occurred()) Py_RETURN_NONE;
    return top;
}

#undef IX_DEPTH
#undef IX_CACHE
#undef IX_KEYS
#undef IX_KEY_LEN

/* ===== end of safetensors index JSON ====================================== */

/* ===== first layer numbers (parsers/roles.py, issue 15) ====================
 *
 * first_numbers(names) -> (zeroed, digits, tails) | None
 *
 * For each str of the list ``names``, the first match of the regular
 * expression (?<=\.)\d+(?=\.|$) as re.search finds it: a run of decimal
 * digits (\d of a str pattern is Py_UNICODE_ISDECIMAL) just after a '.',
 * ending the string, before a '.', or before a last "\n" ($ without
 * MULTILINE).  Such a run is always the whole run of digits it starts (a
 * shorter one would end before a digit).  zeroed[i] is names[i] with that
 * run replaced by "0", digits[i] the run, tails[i] the text after it.
 * None when a name has no match (the caller then maps names one at a
 * time); tests/test_qlist.py holds it to re.search with hypothesis. */

/* The str "0" (created once, kept for the process). */
static PyObject *_zero_str(void) {
    static PyObject *zero = NULL;
    if (zero == NULL) zero = PyUnicode_InternFromString("0");
    return zero;
}

/* The first match of first_numbers' expression in the str ``s`` that
 * starts at or after position ``from`` (at least 1: a match needs the '.'
 * before it): [*i, *j), or 0 when there is none. */
static int fn_find(PyObject *s, Py_ssize_t from, Py_ssize_t *i, Py_ssize_t *j) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t p = from > 1 ? from : 1; p < len; p++) {
        if (PyUnicode_READ(kind, data, p - 1) != '.'
                || !Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, p)))
            continue;
        Py_ssize_t e = p;
        while (e < len && Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, e))) e++;
        if (e == len || PyUnicode_READ(kind, data, e) == '.'
                || (e == len - 1 && PyUnicode_READ(kind, data, e) == '\n')) {
            *i = p;
            *j = e;
            return 1;
        }
        p = e;  /* no match starts inside the run: the next '.' is past it */
    }
    return 0;
}

static PyObject *first_numbers(PyObject *self, PyObject *args) {
    PyObject *names;
    if (!PyArg_ParseTuple(args, "O!:first_numbers", &PyList_Type, &names)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(names);
    PyObject *zeroed = PyList_New(n), *digits = PyList_New(n), *tails = PyList_New(n);
    PyObject *zero = PyUnicode_FromString("0");
    if (zeroed == NULL || digits == NULL || tails == NULL || zero == NULL) goto fail;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *s = PyList_GET_ITEM(names, k);
        if (!PyUnicode_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "first_numbers: names must be str");
            goto fail;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(s), i = -1, j = 0;
        if (!fn_find(s, 1, &i, &j)) i = -1;
        if (i < 0) {
            Py_DECREF(zeroed); Py_DECREF(digits); Py_DECREF(tails); Py_DECREF(zero);
            Py_RETURN_NONE;
        }
        PyObject *head = PyUnicode_Substring(s, 0, i);
        PyObject *run = PyUnicode_Substring(s, i, j);
        PyObject *tail = PyUnicode_Substring(s, j, len);
        PyObject *h0 = head ? PyUnicode_Concat(head, zero) : NULL;
        PyObject *z = (h0 && tail) ? PyUnicode_Concat(h0, tail) : NULL;
        Py_XDECREF(head);
        Py_XDECREF(h0);
        if (run == NULL || tail == NULL || z == NULL) {
            Py_XDECREF(run); Py_XDECREF(tail); Py_XDECREF(z);
            goto fail;
        }
        PyList_SET_ITEM(zeroed, k, z);
        PyList_SET_ITEM(digits, k, run);
        PyList_SET_ITEM(tails, k, tail);
    }
    Py_DECREF(zero);
    return Py_BuildValue("(NNN)", zeroed, digits, tails);
fail:
    Py_XDECREF(zeroed); Py_XDECREF(digits); Py_XDECREF(tails); Py_XDECREF(zero);
    return NULL;
}

/* replay_modules(order, sig, fast, used) -> (kinds: bytes, vals: bytes)
 *
 * The replay loop of parsers/conventions.py ``infer`` for the modules whose
 * plan is known and replayed from columns (issue 15: 200,000 modules a
 * model).  ``order`` is a list of (module, (suffix, position, suffix,
 * position, ...)) taken from its end; ``sig`` the native int64 signature
 * number of each position; ``fast`` maps a module's signature
 * ((suffixes), (sig[position], ...)) to (kind, (part, ...)); ``used`` the
 * bytearray of consumed positions.  While the last module's signature is a
 * key of ``fast`` and its parts' positions run one after the other from g0,
 * the module is taken off ``order``, ``used[g0 + part]`` is set for each
 * part, and (kind, g0) is added to the result: native C ints and int64s, in
 * the order the modules were taken.  Any other module (or an entry of
 * another shape) is left on ``order`` for the Python loop, which does the
 * same for such modules when this helper is missing (tests/
 * test_compiled_helpers.py holds the two to each other). */

#define RM_CACHE 256  /* slots of replay_modules' signature cache; a power of two */
#define RM_PARTS 8    /* the most parts a cached signature has */

typedef struct {
    Py_ssize_t parts;
    PyObject *suf[RM_PARTS];  /* borrowed: identity only */
    long long num[RM_PARTS];
    Py_ssize_t g[RM_PARTS];   /* the probing module's positions (not compared) */
    PyObject *hit;            /* borrowed from ``fast``; NULL: an empty slot */
} rmslot_t;

/* Take the module at g0 for ``hit`` (kind, (part, ...)): mark its consumed
 * parts in ``used`` and add (kind, g0) to the result.  0 (nothing done, no
 * exception) when ``hit`` is not of that shape or a part falls outside
 * ``used``: the module is left for Python.  With an exception set (no
 * memory) the caller fails. */
static int rm_take(PyObject *hit, Py_ssize_t g0, PyObject *used, int **kinds, Py_ssize_t *kcap,
                   long long **vals, Py_ssize_t *vcap, Py_ssize_t *done) {
    if (!PyTuple_CheckExact(hit) || PyTuple_GET_SIZE(hit) != 2) return 0;
    PyObject *kobj = PyTuple_GET_ITEM(hit, 0), *parts_used = PyTuple_GET_ITEM(hit, 1);
    if (!PyLong_CheckExact(kobj) || !PyTuple_CheckExact(parts_used)) return 0;
    int overflow = 0;
    long kind = PyLong_AsLongAndOverflow(kobj, &overflow);
    if (overflow || kind < 0 || kind > INT_MAX) {
        PyErr_Clear();
        return 0;
    }
    Py_ssize_t size = PyByteArray_GET_SIZE(used), nu = PyTuple_GET_SIZE(parts_used);
    for (Py_ssize_t u = 0; u < nu; u++) {
        PyObject *po = PyTuple_GET_ITEM(parts_used, u);
        Py_ssize_t k = PyLong_CheckExact(po) ? PyLong_AsSsize_t(po) : -1;
        if (k < 0 || g0 + k >= size) {
            PyErr_Clear();
            return 0;
        }
    }
    char *mark = PyByteArray_AS_STRING(used);
    for (Py_ssize_t u = 0; u < nu; u++)
        mark[g0 + PyLong_AsSsize_t(PyTuple_GET_ITEM(parts_used, u))] = 1;
    if (!st_reserve((void **)kinds, kcap, *done + 1, sizeof(int))
            || !st_reserve((void **)vals, vcap, *done + 1, sizeof(long long))) {
        PyErr_NoMemory();
        return 0;
    }
    (*kinds)[*done] = (int)kind;
    (*vals)[*done] = (long long)g0;
    (*done)++;
    return 1;
}

static PyObject *replay_modules(PyObject *self, PyObject *args) {
    PyObject *order, *fast, *used;
    Py_buffer sig;
    if (!PyArg_ParseTuple(args, "O!y*O!O!:replay_modules", &PyList_Type, &order, &sig,
                          &PyDict_Type, &fast, &PyByteArray_Type, &used))
        return NULL;
    Py_ssize_t nsig = sig.len / (Py_ssize_t)sizeof(long long);
    const long long *sigs = (const long long *)sig.buf;
    int *kinds = NULL;
    long long *vals = NULL;
    Py_ssize_t kcap = 0, vcap = 0, done = 0, n = PyList_GET_SIZE(order), i = n;
    PyObject *result = NULL;
    /* Signatures seen in this call, by the identity of their suffix objects
     * and their numbers: a hit needs no key built (the suffixes, from one
     * table, are shared objects; the entries of ``order`` hold them alive
     * and ``fast`` does not change during the call) */
    rmslot_t *cache = calloc(RM_CACHE, sizeof *cache);
    if (cache == NULL) { PyErr_NoMemory(); goto fail; }
    while (i > 0) {
        PyObject *item = PyList_GET_ITEM(order, i - 1);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) break;
        PyObject *flat = PyTuple_GET_ITEM(item, 1);
        if (!PyTuple_CheckExact(flat)) break;
        Py_ssize_t m = PyTuple_GET_SIZE(flat), parts = m / 2;
        if (m == 0 || m % 2) break;
        rmslot_t probe = {0};
        rmslot_t *slot = NULL;
        if (parts <= RM_PARTS) {
            uint64_t h = (uint64_t)parts;
            int ok_probe = 1;
            for (Py_ssize_t j = 0; j < parts; j++) {
                PyObject *pos = PyTuple_GET_ITEM(flat, 2 * j + 1);
                Py_ssize_t g = PyLong_CheckExact(pos) ? PyLong_AsSsize_t(pos) : -1;
                if (g < 0 || g >= nsig) { PyErr_Clear(); ok_probe = 0; break; }
                probe.suf[j] = PyTuple_GET_ITEM(flat, 2 * j);
                probe.num[j] = sigs[g];
                probe.g[j] = g;
                h = (h ^ ((uint64_t)(uintptr_t)probe.suf[j] >> 4)) * 0x9e3779b97f4a7c15ULL;
                h = (h ^ (uint64_t)probe.num[j]) * 0xff51afd7ed558ccdULL;
            }
            if (ok_probe) {
                probe.parts = parts;
                slot = &cache[(h >> 40) & (RM_CACHE - 1)];
                if (slot->hit != NULL && slot->parts == parts
                        && memcmp(slot->suf, probe.suf, (size_t)parts * sizeof(PyObject *)) == 0
                        && memcmp(slot->num, probe.num, (size_t)parts * sizeof(long long)) == 0) {
                    if (probe.g[parts - 1] - probe.g[0] != parts - 1) break;
                    if (!rm_take(slot->hit, probe.g[0], used, &kinds, &kcap, &vals, &vcap,
                                 &done)) {
                        if (PyErr_Occurred()) goto fail;
                        break;
                    }
                    i--;
                    continue;
                }
            }
        }
        PyObject *sufs = PyTuple_New(parts), *nums = PyTuple_New(parts);
        if (sufs == NULL || nums == NULL) {
            Py_XDECREF(sufs); Py_XDECREF(nums);
            goto fail;
        }
        Py_ssize_t g0 = -1, glast = -1;
        int ok = 1;
        for (Py_ssize_t j = 0; j < parts && ok; j++) {
            PyObject *suf = PyTuple_GET_ITEM(flat, 2 * j), *pos = PyTuple_GET_ITEM(flat, 2 * j + 1);
            Py_INCREF(suf);
            PyTuple_SET_ITEM(sufs, j, suf);
            Py_ssize_t g = PyLong_CheckExact(pos) ? PyLong_AsSsize_t(pos) : -1;
            if (g < 0 || g >= nsig) {
                PyErr_Clear();  /* an overflowing position: the Python loop's */
                ok = 0;
                break;
            }
            if (j == 0) g0 = g;
            glast = g;
            PyObject *num = PyLong_FromLongLong(sigs[g]);
            if (num == NULL) {
                Py_DECREF(sufs); Py_DECREF(nums);
                goto fail;
            }
            PyTuple_SET_ITEM(nums, j, num);
        }
        if (!ok) {
            Py_DECREF(sufs); Py_DECREF(nums);
            break;
        }
        PyObject *key = PyTuple_Pack(2, sufs, nums);
        Py_DECREF(sufs);
        Py_DECREF(nums);
        if (key == NULL) goto fail;
        PyObject *hit = PyDict_GetItemWithError(fast, key);  /* borrowed */
        Py_DECREF(key);
        if (hit == NULL) {
            if (PyErr_Occurred()) goto fail;
            break;
        }
        if (glast - g0 != parts - 1) break;
        if (!rm_take(hit, g0, used, &kinds, &kcap, &vals, &vcap, &done)) {
            if (PyErr_Occurred()) goto fail;
            break;
        }
        if (slot != NULL) {
            probe.hit = hit;
            *slot = probe;
        }
        i--;
    }
    if (PyList_SetSlice(order, i, n, NULL) < 0) goto fail;
    result = Py_BuildValue("(NN)",
        PyBytes_FromStringAndSize(done ? (const char *)kinds : "", done * (Py_ssize_t)sizeof(int)),
        PyBytes_FromStringAndSize(done ? (const char *)vals : "",
                                  done * (Py_ssize_t)sizeof(long long)));
fail:
    free(cache);
    free(kinds);
    free(vals);
    PyBuffer_Release(&sig);
    return result;
}

/* distribute(kinds, vals, parts, run, run_size) -> [(file, kinds, vals), ...] | None
 *
 * parsers/models.py ``_distribute``'s grouping of a model's replayed
 * tensors by the file holding each one's data plane (issue 15: 200,000
 * modules over 500 shards).  ``kinds`` holds native C ints and ``vals``
 * native int64s (a QList's columns), ``parts`` an int64 per kind (the data
 * plane's part), ``run`` the file number of each position, ``run_size``
 * bytes each (2: uint16, 8: int64).  Tensor i's file is run[vals[i] +
 * parts[kinds[i]]].  The result lists each file that has tensors, in
 * ascending order, with its tensors' kinds and vals (bytes of the same
 * types) in listing order: a stable counting sort.  None when a kind, a
 * position or a file number is out of range, or the buffers do not fit
 * their types: the caller then groups them in Python (tests/
 * test_compiled_helpers.py holds the two to each other). */

static PyObject *distribute(PyObject *self, PyObject *args) {
    Py_buffer kb, vb, pb, rb;
    Py_ssize_t run_size;
    if (!PyArg_ParseTuple(args, "y*y*y*y*n:distribute", &kb, &vb, &pb, &rb, &run_size))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *file_of = NULL, *count = NULL, *fill = NULL;
    Py_ssize_t n = kb.len / (Py_ssize_t)sizeof(int), nparts = pb.len / 8;
    Py_ssize_t nrun = (run_size == 2 || run_size == 8) ? rb.len / run_size : -1;
    const int *kinds = (const int *)kb.buf;
    const long long *vals = (const long long *)vb.buf, *parts = (const long long *)pb.buf;
    if (nrun < 0 || kb.len % (Py_ssize_t)sizeof(int) || vb.len != n * 8 || pb.len % 8)
        goto none;
    Py_ssize_t nfiles = 0;
    file_of = malloc((size_t)(n ? n : 1) * sizeof *file_of);
    if (file_of == NULL) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        int k = kinds[i];
        if (k < 0 || k >= nparts) goto none;
        long long g = vals[i], p = parts[k];
        if (g < 0 || p < 0 || g >= nrun || p >= nrun - g) goto none;
        long long f = run_size == 2 ? (long long)((const uint16_t *)rb.buf)[g + p]
                                    : ((const long long *)rb.buf)[g + p];
        if (f < 0 || f > PY_SSIZE_T_MAX / 2) goto none;
        file_of[i] = (Py_ssize_t)f;
        if (f + 1 > nfiles) nfiles = (Py_ssize_t)f + 1;
    }
    count = calloc((size_t)(nfiles ? nfiles : 1), sizeof *count);
    fill = calloc((size_t)(nfiles ? nfiles : 1), sizeof *fill);
    if (count == NULL || fill == NULL) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) count[file_of[i]]++;
    result = PyList_New(0);
    if (result == NULL) goto done;
    /* one (kinds, vals) pair of bytes per file with tensors, filled in order */
    PyObject **kout = calloc((size_t)(nfiles ? nfiles : 1), sizeof *kout);
    PyObject **vout = calloc((size_t)(nfiles ? nfiles : 1), sizeof *vout);
    if (kout == NULL || vout == NULL) {
        free(kout); free(vout);
        PyErr_NoMemory();
        Py_CLEAR(result);
        goto done;
    }
    int failed = 0;
    for (Py_ssize_t f = 0; f < nfiles && !failed; f++) {
        if (!count[f]) continue;
        kout[f] = PyBytes_FromStringAndSize(NULL, count[f] * (Py_ssize_t)sizeof(int));
        vout[f] = PyBytes_FromStringAndSize(NULL, count[f] * 8);
        if (kout[f] == NULL || vout[f] == NULL) failed = 1;
    }
    if (!failed) {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t f = file_of[i], at = fill[f]++;
            ((int *)PyBytes_AS_STRING(kout[f]))[at] = kinds[i];
            ((long long *)PyBytes_AS_STRING(vout[f]))[at] = vals[i];
        }
        for (Py_ssize_t f = 0; f < nfiles && !failed; f++) {
            if (!count[f]) continue;
            PyObject *item = Py_BuildValue("(nOO)", f, kout[f], vout[f]);
            if (item == NULL || PyList_Append(result, item) < 0) failed = 1;
            Py_XDECREF(item);
        }
    }
    for (Py_ssize_t f = 0; f < nfiles; f++) {
        Py_XDECREF(kout[f]);
        Py_XDECREF(vout[f]);
    }
    free(kout);
    free(vout);
    if (failed) Py_CLEAR(result);
    goto done;
none:
    result = Py_None;
    Py_INCREF(result);
done:
    free(file_of);
    free(count);
    free(fill);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&pb);
    PyBuffer_Release(&rb);
    return result;
}

/* first_sights(dtypes: list, shapes: list) -> bytes | None
 *
 * parsers/conventions.py ``infer``'s signature numbers: for each position
 * i, the first position holding a (dtype, shape) pair equal to
 * (dtypes[i], shapes[i]), as native int64s (issue 15: 400,000 tensors).
 * Pairs are compared as Python compares (str, tuple) keys of a dict; a
 * small cache by the identity of the two objects (a header's equal shapes
 * and dtypes are shared objects) skips building the key.  None when the
 * lists differ in length or hold anything but str dtypes and tuple shapes:
 * the caller then numbers them in Python (tests/test_compiled_helpers.py). */

#define FS_CACHE 64  /* a power of two */

static PyObject *first_sights(PyObject *self, PyObject *args) {
    PyObject *dtypes, *shapes;
    if (!PyArg_ParseTuple(args, "O!O!:first_sights", &PyList_Type, &dtypes, &PyList_Type,
                          &shapes))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(dtypes);
    if (PyList_GET_SIZE(shapes) != n) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyList_GET_ITEM(shapes, i);
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(dtypes, i)) || !PyTuple_CheckExact(s))
            Py_RETURN_NONE;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(s); j++)
            if (!PyLong_CheckExact(PyTuple_GET_ITEM(s, j))) Py_RETURN_NONE;
    }
    /* From here comparisons run no Python code: the lists cannot change. */
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 8), *seen = PyDict_New();
    struct { PyObject *d, *s; long long first; } cache[FS_CACHE];
    memset(cache, 0, sizeof cache);
    if (out == NULL || seen == NULL) goto fail;
    long long *o = (long long *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyList_GET_ITEM(dtypes, i), *s = PyList_GET_ITEM(shapes, i);
        uint64_t h = ((uint64_t)(uintptr_t)d >> 4) * 0x9e3779b97f4a7c15ULL
                     ^ ((uint64_t)(uintptr_t)s >> 4);
        h *= 0xff51afd7ed558ccdULL;
        int at = (int)((h >> 40) & (FS_CACHE - 1));
        if (cache[at].d == d && cache[at].s == s) {
            o[i] = cache[at].first;
            continue;
        }
        PyObject *key = PyTuple_Pack(2, d, s);
        if (key == NULL) goto fail;
        PyObject *got = PyDict_GetItemWithError(seen, key);  /* borrowed */
        long long first = (long long)i;
        if (got != NULL) {
            first = PyLong_AsLongLong(got);
        } else if (PyErr_Occurred()) {
            Py_DECREF(key);
            goto fail;
        } else {
            PyObject *v = PyLong_FromSsize_t(i);
            int bad = v == NULL || PyDict_SetItem(seen, key, v) < 0;
            Py_XDECREF(v);
            if (bad) { Py_DECREF(key); goto fail; }
        }
        Py_DECREF(key);
        o[i] = first;
        cache[at].d = d;
        cache[at].s = s;
        cache[at].first = first;
    }
    Py_DECREF(seen);
    return out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(seen);
    return NULL;
}

#undef FS_CACHE

/* map_roles(bases, table, around_zero, suffix) -> (roles, again) | None
 *
 * parsers/roles.py ``_Mapped.many`` for a list of module base names (issue
 * 15: a role per quantised module of a 400,000-tensor tree).  For each
 * base: its first number (first_numbers' match) zeroed is looked up with
 * ``around_zero`` (a callable: str -> (head, tail) or None), at most once
 * per distinct zeroed name in a call; the role is head + the number + tail.
 * Without a pair the role is ``suffix`` appended to the base (None when
 * ``suffix`` is None).  ``again`` lists the positions ``_Mapped.many``
 * then maps one at a time: a base ``table`` (a dict) holds, and one without
 * a pair whose text after the first number has another number.  None when
 * a base is not a str, holds a line break, or has no number: the caller
 * then maps them in Python (tests/test_qlist.py holds both paths of
 * ``_Mapped.many`` to one name at a time). */

#define MR_CACHE 32

static PyObject *map_roles(PyObject *self, PyObject *args) {
    PyObject *bases, *table, *around, *suffix;
    if (!PyArg_ParseTuple(args, "O!O!OO:map_roles", &PyList_Type, &bases, &PyDict_Type, &table,
                          &around, &suffix))
        return NULL;
    if (suffix != Py_None && !PyUnicode_CheckExact(suffix)) {
        PyErr_SetString(PyExc_TypeError, "map_roles: suffix must be a str or None");
        return NULL;
    }
    PyObject *zero = _zero_str();
    if (zero == NULL) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(bases);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *b = PyList_GET_ITEM(bases, k);
        Py_ssize_t i, j;
        if (!PyUnicode_CheckExact(b)
                || PyUnicode_FindChar(b, '\n', 0, PyUnicode_GET_LENGTH(b), 1) != -1
                || !fn_find(b, 1, &i, &j))
            Py_RETURN_NONE;
    }
    /* the bases are exact strs: nothing below changes the list, except
     * ``around_zero``, which is called with new strs only; the bases are
     * held while it runs */
    PyObject *out = PyList_New(n), *again = PyList_New(0), *bases_copy = PyList_GetSlice(bases, 0, n);
    struct { PyObject *zeroed, *pair; } cache[MR_CACHE];
    memset(cache, 0, sizeof cache);
    int next = 0;
    if (out == NULL || again == NULL || bases_copy == NULL) goto fail;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *b = PyList_GET_ITEM(bases_copy, k);
        Py_ssize_t len = PyUnicode_GET_LENGTH(b), i = 0, j = 0;
        fn_find(b, 1, &i, &j);
        int kind = PyUnicode_KIND(b);
        const char *data = PyUnicode_DATA(b);
        Py_ssize_t zlen = i + 1 + (len - j);
        PyObject *pair = NULL;  /* borrowed from the cache */
        for (int c = 0; c < MR_CACHE && cache[c].zeroed != NULL; c++) {
            PyObject *z = cache[c].zeroed;
            if (PyUnicode_GET_LENGTH(z) != zlen || PyUnicode_KIND(z) != kind) continue;
            const char *zd = PyUnicode_DATA(z);
            if (memcmp(zd, data, (size_t)(i * kind)) == 0
                    && PyUnicode_READ(kind, zd, i) == '0'
                    && memcmp(zd + (i + 1) * kind, data + j * kind, (size_t)((len - j) * kind)) == 0) {
                pair = cache[c].pair;
                break;
            }
        }
        if (pair == NULL) {
            PyObject *head = PyUnicode_Substring(b, 0, i), *tail = PyUnicode_Substring(b, j, len);
            PyObject *h0 = head ? PyUnicode_Concat(head, zero) : NULL;
            PyObject *z = (h0 && tail) ? PyUnicode_Concat(h0, tail) : NULL;
            Py_XDECREF(head);
            Py_XDECREF(tail);
            Py_XDECREF(h0);
            if (z == NULL) goto fail;
            PyObject *got = PyObject_CallOneArg(around, z);
            if (got == NULL) { Py_DECREF(z); goto fail; }
            if (got != Py_None && !(PyTuple_CheckExact(got) && PyTuple_GET_SIZE(got) == 2
                                    && PyUnicode_CheckExact(PyTuple_GET_ITEM(got, 0))
                                    && PyUnicode_CheckExact(PyTuple_GET_ITEM(got, 1)))) {
                Py_DECREF(z);
                Py_DECREF(got);
                Py_CLEAR(out);  /* not a pair: mapped in Python */
                break;
            }
            Py_XDECREF(cache[next].zeroed);
            Py_XDECREF(cache[next].pair);
            cache[next].zeroed = z;    /* takes the references */
            cache[next].pair = got;
            pair = got;
            next = (next + 1) % MR_CACHE;
        }
        PyObject *role;
        int more = 0;
        if (pair == Py_None) {
            if (suffix == Py_None) {
                role = Py_None;
                Py_INCREF(role);
            } else if ((role = PyUnicode_Concat(b, suffix)) == NULL) {
                goto fail;
            }
            Py_ssize_t i2, j2;
            more = fn_find(b, j + 1, &i2, &j2);
        } else {
            PyObject *digits = PyUnicode_Substring(b, i, j);
            PyObject *hd = digits ? PyUnicode_Concat(PyTuple_GET_ITEM(pair, 0), digits) : NULL;
            role = hd ? PyUnicode_Concat(hd, PyTuple_GET_ITEM(pair, 1)) : NULL;
            Py_XDECREF(digits);
            Py_XDECREF(hd);
            if (role == NULL) goto fail;
        }
        PyList_SET_ITEM(out, k, role);
        int held = PyDict_Contains(table, b);
        if (held < 0) goto fail;
        if (held || more) {
            PyObject *at = PyLong_FromSsize_t(k);
            int bad = at == NULL || PyList_Append(again, at) < 0;
            Py_XDECREF(at);
            if (bad) goto fail;
        }
    }
    for (int c = 0; c < MR_CACHE; c++) {
        Py_XDECREF(cache[c].zeroed);
        Py_XDECREF(cache[c].pair);
    }
    Py_DECREF(bases_copy);
    if (out == NULL) {
        Py_DECREF(again);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(NN)", out, again);
fail:
    for (int c = 0; c < MR_CACHE; c++) {
        Py_XDECREF(cache[c].zeroed);
        Py_XDECREF(cache[c].pair);
    }
    Py_XDECREF(out);
    Py_XDECREF(again);
    Py_XDECREF(bases_copy);
    return NULL;
}

#undef MR_CACHE

/* positions_of(names, dtypes, ranks, dtype_set, suffix, rank) -> list[int] | None
 *
 * The positions i where ranks[i] == rank, dtypes[i] is in ``dtype_set``
 * and names[i] ends with ``suffix``: rules/kinds/partial_quantization.py's
 * candidates, one C pass over a file's columns (issue 15: 400,000
 * tensors).  ``ranks`` is a buffer of one byte per tensor.  None when the
 * columns differ in length or hold anything but strs: the caller then
 * selects them in Python (tests/test_compiled_helpers.py). */

static PyObject *positions_of(PyObject *self, PyObject *args) {
    PyObject *names, *dtypes, *dset, *suffix;
    Py_buffer ranks;
    int rank;
    if (!PyArg_ParseTuple(args, "O!O!y*OUi:positions_of", &PyList_Type, &names, &PyList_Type,
                          &dtypes, &ranks, &dset, &suffix, &rank))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = PyList_GET_SIZE(names);
    if (!PyAnySet_Check(dset)) {
        PyErr_SetString(PyExc_TypeError, "positions_of: dtype_set must be a set");
        goto done;
    }
    if (PyList_GET_SIZE(dtypes) != n || ranks.len != n) {
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(names, i))
                || !PyUnicode_CheckExact(PyList_GET_ITEM(dtypes, i))) {
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
    }
    /* exact strs: set lookups and tail matches run no Python code */
    out = PyList_New(0);
    if (out == NULL) goto done;
    const unsigned char *r = ranks.buf;
    PyObject *last_dtype = NULL;
    int last_in = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (r[i] != rank) continue;
        PyObject *dt = PyList_GET_ITEM(dtypes, i);
        if (dt != last_dtype) {  /* a file's dtypes are a few shared objects */
            last_in = PySet_Contains(dset, dt);
            if (last_in < 0) { Py_CLEAR(out); goto done; }
            last_dtype = dt;
        }
        if (!last_in) continue;
        PyObject *name = PyList_GET_ITEM(names, i);
        Py_ssize_t len = PyUnicode_GET_LENGTH(name);
        Py_ssize_t hit = PyUnicode_Tailmatch(name, suffix, 0, len, 1);
        if (hit < 0) { Py_CLEAR(out); goto done; }
        if (!hit) continue;
        PyObject *at = PyLong_FromSsize_t(i);
        int bad = at == NULL || PyList_Append(out, at) < 0;
        Py_XDECREF(at);
        if (bad) { Py_CLEAR(out); goto done; }
    }
done:
    PyBuffer_Release(&ranks);
    return out;
}

static PyMethodDef methods[] = {
    {"group_modules", group_modules, METH_VARARGS,
     "stored tensor names grouped into modules (parsers/conventions.py)"},
    {"fnv1a128_update", fnv1a128_update, METH_VARARGS, "FNV-1a-128 continuing from a state"},
    {"fnv1a128_update2", fnv1a128_update2, METH_VARARGS,
     "two FNV-1a-128 streams over equal-length buffers, interleaved"},
    {"fnv1a64_update", fnv1a64_update, METH_VARARGS, "FNV-1a-64 continuing from a state"},
    {"skip_strings", skip_strings, METH_VARARGS, "walk GGUF strings without decoding"},
    {"gguf_tensor_infos", gguf_tensor_infos, METH_VARARGS,
     "walk GGUF tensor-info entries into column lists"},
    {"gguf_packed_starts", gguf_packed_starts, METH_VARARGS,
     "absolute tensor starts when the tensors are packed in order"},
    {"st_header_columns", st_header_columns, METH_VARARGS,
     "a plain safetensors header's tensor columns, or None"},
    {"shape_tuples", shape_tuples, METH_VARARGS,
     "each tensor's shape tuple from flat int64 dims and uint8 ranks, equal ones shared"},
    {"index_json", index_json, METH_VARARGS,
     "json.loads of a plain safetensors index, or None"},
    {"replay_modules", replay_modules, METH_VARARGS,
     "the modules of known plans taken off the end of a list (parsers/conventions.py)"},
    {"distribute", distribute, METH_VARARGS,
     "replayed tensors grouped by the file of their data plane (parsers/models.py)"},
    {"first_sights", first_sights, METH_VARARGS,
     "the first position of each (dtype, shape) pair (parsers/conventions.py)"},
    {"map_roles", map_roles, METH_VARARGS,
     "roles of module names through a layer-0 map (parsers/roles.py)"},
    {"positions_of", positions_of, METH_VARARGS,
     "positions of a rank, dtypes and name suffix (rules/kinds/partial_quantization.py)"},
    {"first_numbers", first_numbers, METH_VARARGS,
     "each name's first number after a dot (roles), zeroed, as digits, and what follows"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fnv", "FNV-1a, GGUF string skipping and tensor infos, JSON scanners in C", -1, methods
};

PyMODINIT_FUNC PyInit__fnv(void) { return PyModule_Create(&module); }
