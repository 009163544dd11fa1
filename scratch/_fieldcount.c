/* scratch._fieldcount: count the values of one top-level key over the lines of an NDJSON
 * buffer, for exact count-by answers without starting DuckDB.
 *
 * count(buffer, key) -> (dict{bytes: int}, missing) or None
 *
 * Each line (split at \n) must be one JSON object: the lines are known to be valid JSON (the
 * caller checks the index found no bad line). For each line the value of the top-level member
 * named `key` (raw bytes of the name, no escapes) is taken as the exact text it has in the
 * line (the last one when a name repeats, as json.loads keeps the last), and the texts are
 * counted; `missing` counts lines without that member. None when a line is not an object, is
 * blank, or has a top-level name holding a backslash escape (the name cannot be compared as
 * bytes): the caller counts another way.
 *
 * Lines without a backslash and without the bytes "key" anywhere cannot have the member: they
 * are counted missing after two memchr/memmem passes. After a match, the rest of a line
 * without another "key" or a backslash is skipped (valid JSON: no later member can repeat the
 * name). Everything else is a structural scan.
 * The scan runs without the GIL; the buffer is held for the call.
 */
#define _GNU_SOURCE /* memmem */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;
    Py_ssize_t n;
    uint64_t h;
    Py_ssize_t count;
} slot_t;

typedef struct {
    slot_t *slots;
    size_t cap;  /* a power of two */
    size_t used;
} table_t;

static uint64_t hash_bytes(const char *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h | 1;  /* 0 marks an empty slot */
}

static int table_grow(table_t *t) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    slot_t *slots = calloc(cap, sizeof(slot_t));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        slot_t *s = &t->slots[i];
        if (!s->h)
            continue;
        size_t j = s->h & (cap - 1);
        while (slots[j].h)
            j = (j + 1) & (cap - 1);
        slots[j] = *s;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static int table_add(table_t *t, const char *p, Py_ssize_t n) {
    if ((t->used + 1) * 2 > t->cap && table_grow(t) < 0)
        return -1;
    uint64_t h = hash_bytes(p, n);
    size_t j = h & (t->cap - 1);
    for (;;) {
        slot_t *s = &t->slots[j];
        if (!s->h) {
            s->p = p;
            s->n = n;
            s->h = h;
            s->count = 1;
            t->used++;
            return 0;
        }
        if (s->h == h && s->n == n && memcmp(s->p, p, (size_t)n) == 0) {
            s->count++;
            return 0;
        }
        j = (j + 1) & (t->cap - 1);
    }
}

static inline const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* p at the opening quote; returns the position after the closing quote (NULL: unterminated);
   *escaped tells whether a backslash was met */
static inline const char *skip_string(const char *p, const char *end, int *escaped) {
    p++;
    while (p < end) {
        char c = *p;
        if (c == '"')
            return p + 1;
        if (c == '\\') {
            *escaped = 1;
            p += 2;
            continue;
        }
        p++;
    }
    return NULL;
}

/* p at the first byte of a value; returns the position after it (NULL: malformed) */
static const char *skip_value(const char *p, const char *end) {
    if (p >= end)
        return NULL;
    int esc = 0;
    char c = *p;
    if (c == '"')
        return skip_string(p, end, &esc);
    if (c == '{' || c == '[') {
        Py_ssize_t depth = 0;
        while (p < end) {
            c = *p;
            if (c == '"') {
                p = skip_string(p, end, &esc);
                if (!p)
                    return NULL;
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                depth--;
                if (depth == 0)
                    return p + 1;
            }
            p++;
        }
        return NULL;
    }
    /* a number or a literal: up to the next delimiter */
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\r' && *p != '\n')
        p++;
    return p;
}

/* one line: 1 found (value span set), 0 missing, -1 cannot say */
static int scan_line(const char *p, const char *end, const char *key, Py_ssize_t klen,
                     const char *pattern, size_t plen, int slashes, const char **vp,
                     Py_ssize_t *vn) {
    int found = 0;
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return -1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return 0;
    for (;;) {
        if (p >= end || *p != '"')
            return -1;
        int esc = 0;
        const char *name = p + 1;
        const char *after = skip_string(p, end, &esc);
        if (!after || esc)
            return -1;
        Py_ssize_t nlen = (after - 1) - name;
        p = skip_ws(after, end);
        if (p >= end || *p != ':')
            return -1;
        p = skip_ws(p + 1, end);
        const char *v = p;
        p = skip_value(p, end);
        if (!p || p == v)
            return -1;
        if (nlen == klen && memcmp(name, key, (size_t)klen) == 0) {
            *vp = v;
            *vn = p - v;
            found = 1;
            /* the line is valid JSON: with no other "key" and no escape after this member,
               no later member can repeat the name */
            if (!slashes && !memmem(p, (size_t)(end - p), pattern, plen))
                return 1;
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}') {
            p = skip_ws(p + 1, end);
            return p == end ? found : -1;
        }
        return -1;
    }
}

static PyObject *fieldcount_count(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, keybuf;
    if (!PyArg_ParseTuple(args, "y*y*", &buf, &keybuf))
        return NULL;
    const char *data = buf.buf;
    const char *end = data + buf.len;
    const char *key = keybuf.buf;
    Py_ssize_t klen = keybuf.len;
    /* the pattern "key": the quoted name */
    char *pattern = malloc((size_t)klen + 2);
    if (!pattern) {
        PyBuffer_Release(&buf);
        PyBuffer_Release(&keybuf);
        return PyErr_NoMemory();
    }
    pattern[0] = '"';
    memcpy(pattern + 1, key, (size_t)klen);
    pattern[klen + 1] = '"';
    size_t plen = (size_t)klen + 2;
    table_t t = {NULL, 0, 0};
    Py_ssize_t missing = 0;
    int status = 0;  /* 0 ok, 1 cannot say, -1 no memory */
    int key_escaped = memchr(key, '\\', (size_t)klen) != NULL || memchr(key, '"', (size_t)klen);

    Py_BEGIN_ALLOW_THREADS
    if (key_escaped)
        status = 1;
    const char *line = data;
    while (status == 0 && line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *stop = nl ? nl : end;
        if (stop == line && !nl)
            break;  /* after the last line's \n */
        if (skip_ws(line, stop) == stop) {
            status = 1;  /* a blank line */
            break;
        }
        int slashes = memchr(line, '\\', (size_t)(stop - line)) != NULL;
        const char *hit = memmem(line, (size_t)(stop - line), pattern, plen);
        if (!hit && !slashes) {
            missing++;
        } else {
            const char *vp = NULL;
            Py_ssize_t vn = 0;
            int r = scan_line(line, stop, key, klen, pattern, plen, slashes, &vp, &vn);
            if (r < 0)
                status = 1;
            else if (r == 0)
                missing++;
            else if (table_add(&t, vp, vn) < 0)
                status = -1;
        }
        line = nl ? nl + 1 : end;
    }
    Py_END_ALLOW_THREADS

    free(pattern);
    PyObject *result = NULL;
    if (status == 0) {
        PyObject *counts = PyDict_New();
        int ok = counts != NULL;
        for (size_t i = 0; ok && i < t.cap; i++) {
            slot_t *s = &t.slots[i];
            if (!s->h)
                continue;
            PyObject *k = PyBytes_FromStringAndSize(s->p, s->n);
            PyObject *v = PyLong_FromSsize_t(s->count);
            ok = k && v && PyDict_SetItem(counts, k, v) == 0;
            Py_XDECREF(k);
            Py_XDECREF(v);
        }
        if (ok)
            result = Py_BuildValue("(On)", counts, missing);
        Py_XDECREF(counts);
    } else if (status == 1) {
        result = Py_NewRef(Py_None);
    } else {
        PyErr_NoMemory();
    }
    free(t.slots);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&keybuf);
    return result;
}

static PyMethodDef methods[] = {
    {"count", fieldcount_count, METH_VARARGS,
     "count(buffer, key) -> ({value text: count}, missing) or None"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fieldcount",
                                    "Count one top-level key's values over NDJSON lines.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fieldcount(void) { return PyModule_Create(&module); }
