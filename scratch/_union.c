/* The key walk of scratch.index.schema.Union: the C half of Union._walk_py (``walk``), and the
 * same walk straight from the items' canonical text (``scan_items``, below).
 *
 * walk(obj, level, depth, nkeys, max_depth, max_keys, names, json_type)
 *     -> (visits, nkeys, more_keys)
 *
 * Adds the keys of the dict ``obj`` (and of its dict values, down to ``max_depth``) to the
 * key tree ``level``: a dict of key -> [count, {type name: count}, max length, children].
 * A key that is not a string (YAML's 1, null) is counted under its ``str``. A key not in the
 * tree is added while fewer than ``max_keys`` keys were added (``nkeys`` so
 * far); past that it is counted in ``more_keys`` instead. A value's type name is
 * ``names[type(value)]``, else ``json_type(value)``. ``visits`` is the number of keys looked
 * at (the sum of the lengths of the dicts walked). Same results, in the same order, as the
 * pure-Python twin; a test holds both to it on the corpus.
 *
 * Every step is a dict or list operation on objects the caller owns, with the GIL held (the
 * values are Python objects): the gain over the twin is the interpreter's dispatch.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_jsonescape.h"

typedef struct {
    Py_ssize_t visits;
    Py_ssize_t nkeys;
    Py_ssize_t more;
    long max_depth;
    Py_ssize_t max_keys;
    PyObject *names;
    PyObject *json_type;
} Walk;

/* level[...][slot] += by (an int) */
static int bump(PyObject *entry, Py_ssize_t slot) {
    PyObject *old = PyList_GET_ITEM(entry, slot);
    Py_ssize_t n = PyLong_AsSsize_t(old);
    if (n == -1 && PyErr_Occurred()) return -1;
    PyObject *now = PyLong_FromSsize_t(n + 1);
    if (now == NULL) return -1;
    PyList_SET_ITEM(entry, slot, now);
    Py_DECREF(old);
    return 0;
}

static PyObject *new_entry(void) {
    PyObject *zero = PyLong_FromLong(0), *minus = PyLong_FromLong(-1);
    PyObject *types = PyDict_New(), *children = PyDict_New();
    PyObject *entry = NULL;
    if (zero && minus && types && children) entry = PyList_New(4);
    if (entry == NULL) {
        Py_XDECREF(zero);
        Py_XDECREF(minus);
        Py_XDECREF(types);
        Py_XDECREF(children);
        return NULL;
    }
    PyList_SET_ITEM(entry, 0, zero);
    PyList_SET_ITEM(entry, 1, types);
    PyList_SET_ITEM(entry, 2, minus);
    PyList_SET_ITEM(entry, 3, children);
    return entry;
}

static int count_type(PyObject *types, PyObject *name) {
    PyObject *got = PyDict_GetItemWithError(types, name); /* borrowed */
    Py_ssize_t n = 0;
    if (got != NULL) {
        n = PyLong_AsSsize_t(got);
        if (n == -1 && PyErr_Occurred()) return -1;
    } else if (PyErr_Occurred()) {
        return -1;
    }
    PyObject *now = PyLong_FromSsize_t(n + 1);
    if (now == NULL) return -1;
    int r = PyDict_SetItem(types, name, now);
    Py_DECREF(now);
    return r;
}

/* The entry of ``key`` in the key tree ``level`` (borrowed) in ``*entry``: added when new
 * while fewer than ``max_keys`` keys were added (``*nkeys``); past that NULL, the key counted
 * in ``*more``. -1 on a Python error, or an entry that is not [count, {}, length, {}]. */
static int key_entry(PyObject *level, PyObject *key, Py_ssize_t *nkeys, Py_ssize_t max_keys,
                     Py_ssize_t *more, PyObject **entry) {
    PyObject *e = PyDict_GetItemWithError(level, key); /* borrowed */
    *entry = NULL;
    if (e == NULL) {
        if (PyErr_Occurred()) return -1;
        if (*nkeys >= max_keys) {
            (*more)++;
            return 0;
        }
        (*nkeys)++;
        e = new_entry();
        int r = e == NULL ? -1 : PyDict_SetItem(level, key, e);
        Py_XDECREF(e); /* the tree holds it */
        if (r < 0) return -1;
    }
    if (!PyList_CheckExact(e) || PyList_GET_SIZE(e) != 4
            || !PyDict_CheckExact(PyList_GET_ITEM(e, 1))
            || !PyDict_CheckExact(PyList_GET_ITEM(e, 3))) {
        PyErr_SetString(PyExc_TypeError, "a key tree entry is not [count, {}, length, {}]");
        return -1;
    }
    *entry = e;
    return 0;
}

static int walk(Walk *w, PyObject *obj, PyObject *level, long depth);

/* one key ``k`` of a walked dict, its value ``v`` */
static int visit(Walk *w, PyObject *level, long depth, PyObject *k, PyObject *v) {
    int deeper = depth < w->max_depth;
    {
        /* a YAML key (1, null) is counted under its text */
        PyObject *key = PyUnicode_CheckExact(k) ? (Py_INCREF(k), k) : PyObject_Str(k);
        if (key == NULL) return -1;
        PyObject *entry;
        int r = key_entry(level, key, &w->nkeys, w->max_keys, &w->more, &entry);
        Py_DECREF(key);
        if (r < 0) return -1;
        if (entry == NULL) return 0; /* past the key cap */
        Py_INCREF(entry); /* held across the calls below, which may run Python code */
        int failed = bump(entry, 0) < 0;
        if (!failed) {
            PyObject *name = PyDict_GetItemWithError(w->names, (PyObject *)Py_TYPE(v));
            PyObject *made = NULL;
            if (name == NULL && !PyErr_Occurred()) name = made = PyObject_CallOneArg(w->json_type, v);
            failed = name == NULL || count_type(PyList_GET_ITEM(entry, 1), name) < 0;
            Py_XDECREF(made);
        }
        if (!failed && (PyUnicode_CheckExact(v) || PyList_CheckExact(v) || PyDict_CheckExact(v))) {
            Py_ssize_t n = PyObject_Length(v);
            Py_ssize_t most = PyLong_AsSsize_t(PyList_GET_ITEM(entry, 2));
            if (n < 0 || (most == -1 && PyErr_Occurred())) {
                failed = 1;
            } else {
                if (n > most) {
                    PyObject *now = PyLong_FromSsize_t(n);
                    if (now == NULL) {
                        failed = 1;
                    } else {
                        PyObject *old = PyList_GET_ITEM(entry, 2);
                        PyList_SET_ITEM(entry, 2, now);
                        Py_DECREF(old);
                    }
                }
                if (!failed && PyDict_CheckExact(v) && deeper && n)
                    failed = walk(w, v, PyList_GET_ITEM(entry, 3), depth + 1) < 0;
            }
        }
        Py_DECREF(entry);
        return failed ? -1 : 0;
    }
}

static int walk(Walk *w, PyObject *obj, PyObject *level, long depth) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    w->visits += PyDict_GET_SIZE(obj);
    while (PyDict_Next(obj, &pos, &k, &v)) {
        /* held: json_type is Python code, which might change ``obj`` */
        Py_INCREF(k);
        Py_INCREF(v);
        int r = visit(w, level, depth, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (r < 0) return -1;
    }
    return 0;
}

static PyObject *union_walk(PyObject *self, PyObject *args) {
    PyObject *obj, *level;
    long depth;
    Walk w = {0};
    if (!PyArg_ParseTuple(args, "O!O!lnlnO!O:walk", &PyDict_Type, &obj, &PyDict_Type, &level,
                          &depth, &w.nkeys, &w.max_depth, &w.max_keys, &PyDict_Type, &w.names,
                          &w.json_type))
        return NULL;
    if (walk(&w, obj, level, depth) < 0) return NULL;
    return Py_BuildValue("nnn", w.visits, w.nkeys, w.more);
}

/* ---- the same walk, from the items' text ----------------------------------------------
 *
 * scan_items(text, first, cur, union, limits, members, wanted, loads)
 *     -> (starts, after, count, projections, samples), or None
 *
 * ``text`` is a batch of the items of one array in the canonical layout, as
 * scratch.index.textitems cuts it (it may start on the "\n" after the previous batch's ","),
 * already validated as strict JSON in UTF-8 by the re-indent pass, no object repeating a key
 * and no integer of 19 or more digits (the pass's flags); ``first`` is the index of its first
 * item in the array, ``cur`` its first item's line. One pass over the text gives what parsing
 * each item with orjson and handing it to Union.add, the start-line count, offer_sample and a
 * tally gave, without making the items:
 *
 * - ``union``, a scratch.index.schema.Union: its count, scanned, visits, stride, count_hint,
 *   nkeys, more_keys, types and tree are carried on exactly as Union.add carries them (the
 *   same tree, counts and order; ``limits`` is (max_depth, max_keys, budget));
 * - ``starts``: each item's start line, as native unsigned 32-bit integers; ``after``: the
 *   line after the last item (textitems._text_starts);
 * - ``projections`` (None when ``members`` is empty): per item, the object holding only the
 *   members named by ``members`` (a tuple of paths of one or two keys, as str: ("kind",),
 *   ("metadata", "name")), each value parsed by ``loads``; for a two-key path, the first
 *   key's object holding only the wanted second keys; None for an item that is not an object;
 * - ``samples``: [(index, item parsed by ``loads``)] for the items whose index is in ``wanted``.
 *
 * None when the text holds what the walk does not decide and orjson might refuse or read
 * otherwise: a number that may overflow a double, a lone surrogate escape, anything but the
 * grammar above. The caller then parses the
 * items with orjson (a test holds both ways to the same results on the corpus).
 */

enum { K_STR, K_INT, K_NUM, K_BOOL, K_NULL, K_OBJ, K_ARR, K_N };
static PyObject *kind_names[K_N];

#define MAX_MEMBERS 16

typedef struct {
    const unsigned char *s;
    size_t n, p, nl; /* the text, where the walk is, newlines passed */
    int bail;        /* the walk leaves this text to orjson */
    Py_ssize_t visits, nkeys, more, max_keys;
    long max_depth;
    Py_ssize_t nmembers;
    PyObject *paths[MAX_MEMBERS];       /* the member paths (tuples of str) */
    const char *first[MAX_MEMBERS];     /* their first key, UTF-8 */
    Py_ssize_t first_len[MAX_MEMBERS];
    const char *second[MAX_MEMBERS];    /* their second key, or NULL */
    Py_ssize_t second_len[MAX_MEMBERS];
    PyObject *loads;
} Text;

#define TONES 0x0101010101010101ULL
#define THIGHS 0x8080808080808080ULL
#define HAS_ZERO(x) (((x) - TONES) & ~(x) & THIGHS)

static inline void skip_ws(Text *t) {
    const unsigned char *s = t->s;
    size_t p = t->p, n = t->n;
    while (p < n) {
        unsigned char c = s[p];
        if (c == '\n') {
            t->nl++;
            p++;
            /* the canonical layout's indentation, 8 spaces at a time */
            uint64_t w;
            while (p + 8 <= n && (memcpy(&w, s + p, 8), w == 0x2020202020202020ULL)) p += 8;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else {
            break;
        }
    }
    t->p = p;
}

static inline int hex4(const unsigned char *s, size_t p, size_t n, unsigned *out) {
    unsigned v = 0;
    if (p + 4 > n) return 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s[p + i];
        unsigned d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* The string at t->p (its '"'): t->p after it; its length in code points once its escapes
 * are read (with ``want_len``), whether it has an escape. A lone surrogate escape bails. */
static void scan_string(Text *t, int want_len, Py_ssize_t *len, int *escaped) {
    const unsigned char *s = t->s;
    size_t n = t->n, p = t->p + 1, start = p;
    Py_ssize_t cont = 0, fewer = 0; /* continuation bytes; bytes of escapes past their one */
    int esc = 0;
    for (;;) {
        while (p + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + p, 8);
            if (HAS_ZERO(w ^ (0x22 * TONES)) | HAS_ZERO(w ^ (0x5C * TONES))) break;
            if (want_len) cont += __builtin_popcountll(w & ~(w << 1) & THIGHS);
            p += 8;
        }
        if (p >= n) { t->bail = 1; t->p = n; return; }
        unsigned char c = s[p];
        if (c == '"') break;
        if (c != '\\') {
            if ((c & 0xC0) == 0x80) cont++;
            p++;
            continue;
        }
        esc = 1;
        if (p + 1 >= n) { t->bail = 1; t->p = n; return; }
        if (s[p + 1] != 'u') {
            p += 2;
            fewer += 1;
            continue;
        }
        unsigned u, lo;
        if (!hex4(s, p + 2, n, &u)) { t->bail = 1; t->p = n; return; }
        if (u >= 0xDC00 && u <= 0xDFFF) { t->bail = 1; t->p = n; return; } /* lone low */
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (!(p + 12 <= n && s[p + 6] == '\\' && s[p + 7] == 'u' && hex4(s, p + 8, n, &lo)
                  && lo >= 0xDC00 && lo <= 0xDFFF)) {
                t->bail = 1; t->p = n; return; /* a high surrogate without its low one */
            }
            p += 12;
            fewer += 11;
        } else {
            p += 6;
            fewer += 5;
        }
    }
    *len = (Py_ssize_t)(p - start) - cont - fewer;
    *escaped = esc;
    t->p = p + 1;
}

static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* The number at t->p: K_INT or K_NUM, t->p after it. One that may not fit a double (orjson
 * refuses those) or an integer of 19 or more digits (orjson reads some as floats) bails. */
static int scan_number(Text *t) {
    const unsigned char *s = t->s;
    size_t n = t->n, p = t->p;
    if (p < n && s[p] == '-') p++;
    size_t int_start = p;
    while (p < n && is_digit(s[p])) p++;
    size_t int_digits = p - int_start;
    if (int_digits == 0) { t->bail = 1; return K_NUM; }
    int is_float = 0;
    long zeros = 0; /* leading zeros of the fraction when the integer part is 0 */
    int nonzero = !(int_digits == 1 && s[int_start] == '0');
    if (p < n && s[p] == '.') {
        is_float = 1;
        p++;
        size_t frac = p;
        while (p < n && is_digit(s[p])) p++;
        if (!nonzero) {
            size_t q = frac;
            while (q < p && s[q] == '0') q++;
            if (q < p) nonzero = 1;
            zeros = (long)(q - frac);
        }
    }
    long exp = 0;
    if (p < n && (s[p] == 'e' || s[p] == 'E')) {
        is_float = 1;
        p++;
        int neg = 0;
        if (p < n && (s[p] == '+' || s[p] == '-')) neg = s[p++] == '-';
        size_t e0 = p;
        while (p < n && is_digit(s[p])) {
            if (exp < 100000) exp = exp * 10 + (s[p] - '0');
            p++;
        }
        if (p == e0) { t->bail = 1; return K_NUM; }
        if (neg) exp = -exp;
    }
    t->p = p;
    if (!is_float) {
        if (int_digits > 18) t->bail = 1;
        return K_INT;
    }
    if (nonzero) {
        /* the value is below 10 ** mag: up to 10 ** 308 it fits a double (the largest is
         * 1.8e308; from 1e308 on, which the walk does not decide, orjson may refuse it) */
        long mag = (int_digits == 1 && s[int_start] == '0') ? exp - zeros
                                                            : (long)int_digits + exp;
        if (mag > 308) t->bail = 1;
    }
    return K_NUM;
}

static inline int scan_word(Text *t, const char *word, size_t len) {
    if (t->p + len > t->n || memcmp(t->s + t->p, word, len) != 0) {
        t->bail = 1;
        return 0;
    }
    t->p += len;
    return 1;
}

/* Past the value at t->p, without recursion: its kind and its length (a string's code
 * points with ``want_len``, an array's items, an object's members). */
static int skip_value(Text *t, int want_len, Py_ssize_t *len) {
    const unsigned char *s = t->s;
    int esc;
    *len = 0;
    if (t->p >= t->n) { t->bail = 1; return K_NULL; }
    unsigned char c = s[t->p];
    switch (c) {
    case '"':
        scan_string(t, want_len, len, &esc);
        return K_STR;
    case 't':
        scan_word(t, "true", 4);
        return K_BOOL;
    case 'f':
        scan_word(t, "false", 5);
        return K_BOOL;
    case 'n':
        scan_word(t, "null", 4);
        return K_NULL;
    case '{':
    case '[':
        break;
    default:
        if (c == '-' || is_digit(c)) return scan_number(t);
        t->bail = 1;
        return K_NULL;
    }
    int kind = c == '{' ? K_OBJ : K_ARR;
    t->p++;
    skip_ws(t);
    if (t->p < t->n && (s[t->p] == '}' || s[t->p] == ']')) {
        t->p++;
        return kind;
    }
    Py_ssize_t count = 1, ignored;
    long depth = 1;
    while (!t->bail) {
        if (t->p >= t->n) { t->bail = 1; break; }
        c = s[t->p];
        switch (c) {
        case '"':
            scan_string(t, 0, &ignored, &esc);
            break;
        case '{':
        case '[':
            depth++;
            t->p++;
            break;
        case '}':
        case ']':
            t->p++;
            if (--depth == 0) {
                *len = count;
                return kind;
            }
            break;
        case ',':
            if (depth == 1) count++;
            t->p++;
            break;
        case ':':
            t->p++;
            break;
        case ' ':
        case '\n':
        case '\t':
        case '\r':
            skip_ws(t);
            break;
        case 't':
            scan_word(t, "true", 4);
            break;
        case 'f':
            scan_word(t, "false", 5);
            break;
        case 'n':
            scan_word(t, "null", 4);
            break;
        default:
            if (c == '-' || is_digit(c)) scan_number(t);
            else t->bail = 1;
        }
    }
    return kind;
}

/* text[a:b] parsed by loads */
static PyObject *load_range(Text *t, size_t a, size_t b) {
    PyObject *raw = PyBytes_FromStringAndSize((const char *)t->s + a, (Py_ssize_t)(b - a));
    if (raw == NULL) return NULL;
    PyObject *v = PyObject_CallOneArg(t->loads, raw);
    Py_DECREF(raw);
    return v;
}

static int set_max_length(PyObject *entry, Py_ssize_t n) {
    Py_ssize_t most = PyLong_AsSsize_t(PyList_GET_ITEM(entry, 2));
    if (most == -1 && PyErr_Occurred()) return -1;
    if (n <= most) return 0;
    PyObject *now = PyLong_FromSsize_t(n);
    if (now == NULL) return -1;
    PyObject *old = PyList_GET_ITEM(entry, 2);
    PyList_SET_ITEM(entry, 2, now);
    Py_DECREF(old);
    return 0;
}

/* The object at t->p. ``level``: the key tree level of its keys (NULL: not walked for the
 * union), ``depth`` theirs. ``mdepth``: which key of the member paths its keys are (0, 1;
 * -1: none), ``only``: at mdepth 1, the paths to look at (a bit each); ``proj``: where found
 * members go. Its member count in ``len``. -1 on a Python error. */
static int walk_object(Text *t, PyObject *level, long depth, int mdepth, unsigned only,
                       PyObject *proj, Py_ssize_t *len) {
    const unsigned char *s = t->s;
    Py_ssize_t count = 0;
    t->p++; /* '{' */
    skip_ws(t);
    if (t->p < t->n && s[t->p] == '}') {
        t->p++;
        *len = 0;
        return 0;
    }
    for (;;) {
        if (t->p >= t->n || s[t->p] != '"') { t->bail = 1; return 0; }
        size_t k0 = t->p + 1;
        Py_ssize_t klen;
        int esc;
        scan_string(t, 0, &klen, &esc);
        if (t->bail) return 0;
        size_t k1 = t->p - 1; /* its closing '"' */
        skip_ws(t);
        if (t->p >= t->n || s[t->p] != ':') { t->bail = 1; return 0; }
        t->p++;
        skip_ws(t);
        if (t->p >= t->n) { t->bail = 1; return 0; }
        count++;
        /* the key's text (its escapes read, where keys are compared) */
        const unsigned char *kt = s + k0;
        size_t kl = k1 - k0;
        unsigned char small[256], *decoded = NULL;
        if (esc && (level != NULL || mdepth >= 0)) {
            decoded = kl <= sizeof small ? small : malloc(kl);
            if (decoded == NULL) { PyErr_NoMemory(); return -1; }
            kl = json_unescape(s + k0, kl, decoded);
            kt = decoded;
        }
        /* the union's entry for this key (NULL: not walked, or past the key cap) */
        PyObject *entry = NULL;
        int failed = 0;
        if (level != NULL) {
            PyObject *key = PyUnicode_DecodeUTF8((const char *)kt, (Py_ssize_t)kl, NULL);
            failed = key == NULL
                || key_entry(level, key, &t->nkeys, t->max_keys, &t->more, &entry) < 0;
            Py_XDECREF(key);
        }
        /* the member paths this key starts or ends */
        int whole = -1;     /* a path ending here: the value is parsed whole */
        unsigned inner = 0; /* paths going on into the value */
        if (!failed && mdepth >= 0) {
            for (Py_ssize_t m = 0; m < t->nmembers; m++) {
                if (mdepth == 1 && !(only & (1u << m))) continue;
                const char *want = mdepth == 0 ? t->first[m] : t->second[m];
                Py_ssize_t wl = mdepth == 0 ? t->first_len[m] : t->second_len[m];
                if (want == NULL || (size_t)wl != kl || memcmp(want, kt, kl) != 0) continue;
                if (mdepth == 0 && t->second[m] != NULL) inner |= 1u << m;
                else if (whole < 0) whole = (int)m;
            }
        }
        if (decoded != small) free(decoded);
        if (failed) return -1;
        size_t v0 = t->p;
        Py_ssize_t vlen = 0;
        int kind;
        PyObject *child_level = entry != NULL && depth < t->max_depth
            ? PyList_GET_ITEM(entry, 3) : NULL;
        PyObject *sub = NULL; /* the projection of this value, for paths going on */
        if (s[v0] == '{' && (child_level != NULL || (inner && whole < 0))) {
            if (inner && whole < 0) {
                sub = PyDict_New();
                if (sub == NULL) return -1;
            }
            kind = K_OBJ;
            Py_INCREF(entry == NULL ? Py_None : entry);
            int r = walk_object(t, child_level, depth + 1, sub != NULL ? 1 : -1, inner, sub,
                                &vlen);
            Py_DECREF(entry == NULL ? Py_None : entry);
            if (r < 0) { Py_XDECREF(sub); return -1; }
        } else {
            kind = skip_value(t, entry != NULL, &vlen);
        }
        if (t->bail) { Py_XDECREF(sub); return 0; }
        if (entry != NULL) {
            if (bump(entry, 0) < 0 || count_type(PyList_GET_ITEM(entry, 1), kind_names[kind]) < 0
                    || ((kind == K_STR || kind == K_ARR || kind == K_OBJ)
                        && set_max_length(entry, vlen) < 0)) {
                Py_XDECREF(sub);
                return -1;
            }
        }
        if (whole >= 0 || sub != NULL) {
            PyObject *name = PyTuple_GET_ITEM(t->paths[whole >= 0 ? whole : __builtin_ctz(inner)],
                                              mdepth);
            PyObject *v = sub != NULL ? sub : load_range(t, v0, t->p);
            if (v == NULL) return -1;
            int r = PyDict_SetItem(proj, name, v);
            Py_DECREF(v);
            if (r < 0) return -1;
        }
        skip_ws(t);
        if (t->p < t->n && s[t->p] == ',') {
            t->p++;
            skip_ws(t);
            continue;
        }
        if (t->p < t->n && s[t->p] == '}') {
            t->p++;
            break;
        }
        t->bail = 1;
        return 0;
    }
    if (level != NULL) t->visits += count;
    *len = count;
    return 0;
}

static int get_size(PyObject *obj, const char *name, Py_ssize_t *out) {
    PyObject *v = PyObject_GetAttrString(obj, name);
    if (v == NULL) return -1;
    *out = v == Py_None ? 0 : PyLong_AsSsize_t(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int put_size(PyObject *obj, const char *name, Py_ssize_t value) {
    PyObject *v = PyLong_FromSsize_t(value);
    if (v == NULL) return -1;
    int r = PyObject_SetAttrString(obj, name, v);
    Py_DECREF(v);
    return r;
}

static PyObject *scan_items(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t first;
    unsigned long long cur;
    PyObject *u, *members, *wanted, *loads;
    Py_ssize_t budget;
    Text t = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nKO(lnn)O!O!O:scan_items", &view, &first, &cur, &u,
                          &t.max_depth, &t.max_keys, &budget, &PyTuple_Type, &members,
                          &PyTuple_Type, &wanted, &loads))
        return NULL;
    PyObject *types = NULL, *tree = NULL, *starts = NULL, *projections = NULL,
             *samples = NULL, *result = NULL;
    uint32_t *lines = NULL;
    Py_ssize_t count, scanned, stride, hint;
    t.s = (const unsigned char *)view.buf;
    t.n = (size_t)view.len;
    t.loads = loads;
    t.nmembers = PyTuple_GET_SIZE(members);
    if (t.nmembers > MAX_MEMBERS) {
        PyErr_SetString(PyExc_ValueError, "too many member paths");
        goto done;
    }
    for (Py_ssize_t m = 0; m < t.nmembers; m++) {
        PyObject *path = PyTuple_GET_ITEM(members, m);
        Py_ssize_t k = PyTuple_Check(path) ? PyTuple_GET_SIZE(path) : 0;
        if (k < 1 || k > 2) {
            PyErr_SetString(PyExc_ValueError, "a member path is a tuple of one or two keys");
            goto done;
        }
        t.paths[m] = path;
        t.first[m] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(path, 0), &t.first_len[m]);
        if (t.first[m] == NULL) goto done;
        if (k == 2) {
            t.second[m] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(path, 1), &t.second_len[m]);
            if (t.second[m] == NULL) goto done;
        }
    }
    if (get_size(u, "count", &count) < 0 || get_size(u, "scanned", &scanned) < 0
            || get_size(u, "visits", &t.visits) < 0 || get_size(u, "stride", &stride) < 0
            || get_size(u, "count_hint", &hint) < 0 || get_size(u, "nkeys", &t.nkeys) < 0
            || get_size(u, "more_keys", &t.more) < 0)
        goto done;
    types = PyObject_GetAttrString(u, "types");
    tree = PyObject_GetAttrString(u, "tree");
    if (types == NULL || tree == NULL) goto done;
    if (!PyDict_CheckExact(types) || !PyDict_CheckExact(tree)) {
        PyErr_SetString(PyExc_TypeError, "the union's types and tree are dicts");
        goto done;
    }
    samples = PyList_New(0);
    if (samples == NULL) goto done;
    if (t.nmembers) {
        projections = PyList_New(0);
        if (projections == NULL) goto done;
    }
    size_t listed = 0, cap = 1024;
    lines = malloc(cap * sizeof(uint32_t));
    if (lines == NULL) { PyErr_NoMemory(); goto done; }
    int lead = t.n > 0 && t.s[0] == '\n';
    skip_ws(&t);
    Py_ssize_t k = 0;
    while (t.p < t.n && !t.bail) {
        if (listed == cap) {
            uint32_t *grown = realloc(lines, 2 * cap * sizeof(uint32_t));
            if (grown == NULL) { PyErr_NoMemory(); goto done; }
            lines = grown;
            cap *= 2;
        }
        lines[listed++] = (uint32_t)(cur + t.nl - (size_t)lead);
        Py_ssize_t index = first + k, i = count;
        /* Union.add: past the budget, every stride-th item only */
        int walked = 1;
        count++;
        if (t.visits >= budget) {
            if (stride == 1) {
                Py_ssize_t h = hint ? hint : 10 * i;
                stride = h / (i > 1 ? i : 1);
                if (stride < 2) stride = 2;
            }
            if (i % stride) walked = 0;
        }
        size_t v0 = t.p;
        unsigned char c = t.s[v0];
        int kind;
        Py_ssize_t vlen;
        PyObject *proj = NULL;
        if (c == '{' && (walked || t.nmembers)) {
            if (t.nmembers) {
                proj = PyDict_New();
                if (proj == NULL) goto done;
            }
            kind = K_OBJ;
            if (walk_object(&t, walked ? tree : NULL, 1, t.nmembers ? 0 : -1, 0, proj,
                            &vlen) < 0) {
                Py_XDECREF(proj);
                goto done;
            }
        } else {
            kind = skip_value(&t, 0, &vlen);
        }
        if (t.bail) { Py_XDECREF(proj); break; }
        if (walked) {
            scanned++;
            if (count_type(types, kind_names[kind]) < 0) { Py_XDECREF(proj); goto done; }
        }
        if (projections != NULL) {
            int r = PyList_Append(projections, proj != NULL ? proj : Py_None);
            Py_XDECREF(proj);
            if (r < 0) goto done;
        }
        for (Py_ssize_t w = 0; w < PyTuple_GET_SIZE(wanted); w++) {
            Py_ssize_t want = PyLong_AsSsize_t(PyTuple_GET_ITEM(wanted, w));
            if (want == -1 && PyErr_Occurred()) goto done;
            if (want != index) continue;
            PyObject *item = load_range(&t, v0, t.p);
            PyObject *pair = item == NULL ? NULL : Py_BuildValue("nN", index, item);
            if (pair == NULL || PyList_Append(samples, pair) < 0) { Py_XDECREF(pair); goto done; }
            Py_DECREF(pair);
            break;
        }
        k++;
        skip_ws(&t);
        if (t.p < t.n) {
            if (t.s[t.p] != ',') { t.bail = 1; break; }
            t.p++;
            skip_ws(&t);
        }
    }
    if (t.bail) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (put_size(u, "count", count) < 0 || put_size(u, "scanned", scanned) < 0
            || put_size(u, "visits", t.visits) < 0 || put_size(u, "stride", stride) < 0
            || put_size(u, "nkeys", t.nkeys) < 0 || put_size(u, "more_keys", t.more) < 0)
        goto done;
    starts = PyBytes_FromStringAndSize((const char *)lines, (Py_ssize_t)(listed * sizeof(uint32_t)));
    if (starts == NULL) goto done;
    result = Py_BuildValue("OKnOO", starts, cur + t.nl - (size_t)lead + 1, k,
                           projections != NULL ? projections : Py_None, samples);
done:
    free(lines);
    Py_XDECREF(types);
    Py_XDECREF(tree);
    Py_XDECREF(starts);
    Py_XDECREF(projections);
    Py_XDECREF(samples);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", union_walk, METH_VARARGS,
     "walk(obj, level, depth, nkeys, max_depth, max_keys, names, json_type) -> "
     "(visits, nkeys, more_keys)"},
    {"scan_items", scan_items, METH_VARARGS,
     "scan_items(text, first, cur, union, limits, members, wanted, loads) -> (starts, after, "
     "count, projections, samples) or None: the same walk from the items' canonical text."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_union",
                                    "The key walk of scratch.index.schema.Union.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__union(void) {
    static const char *names[K_N] = {"string", "integer", "number", "boolean", "null", "object",
                                     "array"};
    for (int k = 0; k < K_N; k++) {
        if (kind_names[k] == NULL) kind_names[k] = PyUnicode_InternFromString(names[k]);
        if (kind_names[k] == NULL) return NULL;
    }
    return PyModule_Create(&module);
}
