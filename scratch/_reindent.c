/* Exact re-indentation of JSON text: the C half of scratch.reindent.
 *
 * reindent(data[, limit[, max_depth[, seps]]]) -> (body, lines, flags[, seps]) validates ``data``
 * as strict RFC 8259 JSON in UTF-8 and writes it in the canonical layout (2-space indent, ": "
 * after keys, one scalar or bracket per line, "{}"/"[]" for empty containers, no final newline)
 * with every token copied verbatim:
 * numbers as written, string escapes as written, duplicate keys in order. Only whitespace
 * between tokens changes. ``lines`` is the number of lines of ``body``; ``flags`` bit 0 is set
 * when some integer token has 19 or more digits (it may not fit 64 bits), bit 1 when the body
 * would be longer than ``limit`` bytes (then ``body`` is empty; the input is still validated
 * to its end): deep nesting makes the indentation grow with the square of the depth; bit 2
 * when some object may repeat a key (two keys of one object equal once their escapes are
 * read; for a key with an escape, equal 64-bit hashes of the text it stands for count as
 * equal): only then can the lines of a parsed and re-rendered value differ from the body's;
 * bit 3 (SAME) when the input is ``body`` and one final "\n", byte for byte (the input is
 * already in the layout: storing it is storing the body).
 *
 * Invalid input raises ValueError(message, offset) with the same messages, at the same byte
 * offsets, as the pure-Python version (scratch/reindent.py); a test holds both to it.
 * With ``seps`` true (a last argument; reindent_file takes it too) the result has a fourth
 * item: the offsets in ``body`` of the item separators at depth 1 and at depth 2, each as
 * native uint64 bytes in order, as a pair; None when either depth had more than SEPS_MAX of
 * them (or the body was not written). A separator at depth d is a "," the pass wrote at the
 * end of a line whose next line starts with exactly 2 * d spaces and a non-space: what
 * scratch.index.textitems finds by reading the body again (``separators`` below).
 *
 * With ``max_depth`` > 0 the bracket that opens level max_depth + 1 raises
 * ValueError("nested too deeply", offset): the depth bound of scratch.formats.nesting, checked in
 * the same pass (an error before that bracket is the one raised, as there).
 * Otherwise nesting depth is not limited (an explicit stack, no recursion), and the work runs without the
 * GIL so ingest can parse the document with orjson on the other core meanwhile.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "_jsonescape.h"

/* The body is written straight into a bytes object (no copy at the end). The work runs
 * without the GIL; growing the object takes it back for the reallocation. */
typedef struct {
    PyObject *bytes;
    char *buf;
    size_t len;
    size_t cap;
    int failed; /* out of memory */
    PyThreadState *ts; /* the released thread state, while the GIL is released */
    size_t limit; /* the body may not grow past this: then nothing more is written */
    int over; /* the limit was reached; scanning (validation) goes on */
} Out;

static int out_reserve(Out *o, size_t extra) {
    if (o->len + extra <= o->cap) return 1;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + extra) cap += cap / 2 + 4096;
    if (o->ts != NULL) PyEval_RestoreThread(o->ts);
    int r = _PyBytes_Resize(&o->bytes, (Py_ssize_t)cap);
    if (r == 0) {
        o->buf = PyBytes_AS_STRING(o->bytes);
        o->cap = cap;
    } else {
        PyErr_Clear();
        o->bytes = NULL;
        o->failed = 1;
    }
    if (o->ts != NULL) o->ts = PyEval_SaveThread();
    return r == 0;
}

static inline int out_put(Out *o, const char *s, size_t n) {
    if (o->over) return 1;
    if (o->len + n > o->limit) { o->over = 1; return 1; }
    if (!out_reserve(o, n)) return 0;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 1;
}

/* "\n" followed by 2 * depth spaces */
static inline int out_newline(Out *o, size_t depth) {
    size_t n = 1 + 2 * depth;
    if (o->over) return 1;
    if (o->len + n > o->limit) { o->over = 1; return 1; }
    if (!out_reserve(o, n)) return 0;
    o->buf[o->len] = '\n';
    memset(o->buf + o->len + 1, ' ', 2 * depth);
    o->len += n;
    return 1;
}

typedef struct {
    const unsigned char *s;
    size_t n;
    size_t pos;
    const char *err;
    size_t err_pos;
    int flags;
    size_t lines;
    size_t max_depth; /* 0: any depth; else an opener past this depth fails (DEEP) */
    /* reindent_file: the start of the read-only map ``s`` lies in, and how much of it has been
     * handed back (NULL: ``s`` is a caller's buffer, never released) */
    unsigned char *map;
    size_t released;
    /* with ``seps``: the body offsets of the separators at depth 1 and 2 (see the top) */
    int want_seps;
    int seps_over; /* past SEPS_MAX at a depth, or out of memory: none are answered */
    uint64_t *seps[2];
    size_t nseps[2];
    size_t capseps[2];
    /* SAME: the body so far equals the input at the same offsets up to ``compared`` */
    int differs;
    size_t compared;
} Scan;

#define SAME 8
/* the body is compared with the input this much at a time, as both are written and read
 * (before the input's pages are handed back: see maybe_release) */
#define COMPARE_STEP ((size_t)1 << 20)

/* 8 MB per depth at most: more items than this at depth 1 or 2 are found by reading again */
#define SEPS_MAX ((size_t)1 << 20)

static void seps_free(Scan *sc) {
    for (int d = 0; d < 2; d++) {
        free(sc->seps[d]);
        sc->seps[d] = NULL;
        sc->nseps[d] = sc->capseps[d] = 0;
    }
}

/* the separator at depth ``depth`` (1 or 2) whose "," is at ``at`` in the body */
static inline void seps_add(Scan *sc, size_t depth, size_t at) {
    if (sc->seps_over) return;
    size_t d = depth - 1;
    if (sc->nseps[d] == sc->capseps[d]) {
        size_t cap = sc->capseps[d] ? sc->capseps[d] * 2 : 1024;
        uint64_t *p = sc->nseps[d] >= SEPS_MAX ? NULL : realloc(sc->seps[d], cap * sizeof *p);
        if (p == NULL) {
            sc->seps_over = 1;
            seps_free(sc);
            return;
        }
        sc->seps[d] = p;
        sc->capseps[d] = cap;
    }
    sc->seps[d][sc->nseps[d]++] = (uint64_t)at;
}

/* Pages of the input the scan has passed are dropped from the map (they count as resident
 * otherwise): the scan only moves forward, and errors need offsets only. Never for a
 * caller's buffer (MADV_DONTNEED on heap memory would zero it). */
#define RELEASE_STEP ((size_t)8 << 20)
static inline void maybe_release(Scan *sc) {
    if (sc->map == NULL) return;
    size_t done = (size_t)(sc->s + sc->pos - sc->map);
    if (done < sc->released + 2 * RELEASE_STEP) return;
    size_t upto = (done - RELEASE_STEP) & ~(RELEASE_STEP - 1); /* a step behind, aligned */
    if (upto <= sc->released) return;
    madvise(sc->map + sc->released, upto - sc->released, MADV_DONTNEED);
    sc->released = upto;
}

/* The message of the error raised at the first "[" or "{" that opens level max_depth + 1
 * (brackets of empty containers count, as in scratch.formats.nesting.too_deep). */
static const char DEEP[] = "nested too deeply";

static inline void skip_ws(Scan *sc) {
    const unsigned char *s = sc->s;
    size_t p = sc->pos, n = sc->n;
    uint64_t spaces = 0x2020202020202020ULL, word;
    for (;;) {
        /* indentation comes in long runs of spaces: step over 8 at a time */
        while (p + 8 <= n && (memcpy(&word, s + p, 8), word == spaces)) p += 8;
        if (p < n && (s[p] == ' ' || s[p] == '\n' || s[p] == '\r' || s[p] == '\t')) p++;
        else break;
    }
    sc->pos = p;
}

static inline int fail(Scan *sc, const char *msg, size_t at) {
    sc->err = msg;
    sc->err_pos = at;
    return 0;
}

static inline int is_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline int cont(unsigned char c) { return c >= 0x80 && c <= 0xBF; }

/* Length of the valid UTF-8 sequence at s[p] (lead byte >= 0x80), or 0 if invalid. */
static inline size_t utf8_len(const unsigned char *s, size_t p, size_t n) {
    unsigned char c = s[p];
    if (c >= 0xC2 && c <= 0xDF) {
        return (p + 1 < n && cont(s[p + 1])) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (p + 2 >= n) return 0;
        unsigned char c1 = s[p + 1];
        if (c == 0xE0 && !(c1 >= 0xA0 && c1 <= 0xBF)) return 0;
        if (c == 0xED && !(c1 >= 0x80 && c1 <= 0x9F)) return 0; /* UTF-16 surrogates */
        if (!cont(c1) || !cont(s[p + 2])) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (p + 3 >= n) return 0;
        unsigned char c1 = s[p + 1];
        if (c == 0xF0 && !(c1 >= 0x90 && c1 <= 0xBF)) return 0;
        if (c == 0xF4 && !(c1 >= 0x80 && c1 <= 0x8F)) return 0;
        if (!cont(c1) || !cont(s[p + 2]) || !cont(s[p + 3])) return 0;
        return 4;
    }
    return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Non-zero when one of the 8 bytes in ``w`` is '"', '\\', below 0x20 or 0x80 and above (a
 * byte a string's plain run stops at), zero when none is: a mark (the high bit) on each such
 * byte; a borrow may mark a byte next to a marked one too, which only zero or not ignores. */
static inline uint64_t string_stops(uint64_t w) {
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
    return (((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b) | w) & HIGHS;
}

/* A string token starting at sc->pos (a '"'); copied verbatim to o. */
static int scan_string(Scan *sc, Out *o) {
    const unsigned char *s = sc->s;
    size_t n = sc->n, start = sc->pos, p = start + 1;
    for (;;) {
        /* the common case: a run of plain ASCII, stepped over 8 bytes at a time to the word
         * that holds its end, then byte by byte */
        uint64_t word;
        while (p + 8 <= n && (memcpy(&word, s + p, 8), string_stops(word) == 0)) p += 8;
        while (p < n && s[p] >= 0x20 && s[p] < 0x80 && s[p] != '"' && s[p] != '\\') p++;
        if (p >= n) return fail(sc, "Unterminated string", start);
        unsigned char c = s[p];
        if (c == '"') { p++; break; }
        if (c == '\\') {
            if (p + 1 >= n) return fail(sc, "Unterminated string", start);
            unsigned char e = s[p + 1];
            if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n'
                    || e == 'r' || e == 't') {
                p += 2;
            } else if (e == 'u') {
                if (p + 5 >= n || !is_hex(s[p + 2]) || !is_hex(s[p + 3]) || !is_hex(s[p + 4])
                        || !is_hex(s[p + 5])) {
                    if (p + 5 >= n) {
                        /* too short to be an escape: unterminated unless a quote ends it */
                        size_t q = p + 2;
                        while (q < n && is_hex(s[q])) q++;
                        if (q >= n) return fail(sc, "Unterminated string", start);
                    }
                    return fail(sc, "Invalid \\uXXXX escape", p);
                }
                p += 6;
            } else {
                return fail(sc, "Invalid \\escape", p);
            }
            continue;
        }
        if (c < 0x20) return fail(sc, "Invalid control character in string", p);
        size_t k = utf8_len(s, p, n);
        if (k == 0) return fail(sc, "Invalid UTF-8 in string", p);
        p += k;
    }
    if (!out_put(o, (const char *)s + start, p - start)) return 0;
    sc->pos = p;
    return 1;
}

/* A number token at sc->pos ('-' or a digit): the longest prefix the grammar allows. */
static int scan_number(Scan *sc, Out *o) {
    const unsigned char *s = sc->s;
    size_t n = sc->n, start = sc->pos, p = start;
    if (s[p] == '-') p++;
    if (p >= n || s[p] < '0' || s[p] > '9') return fail(sc, "Expecting value", start);
    size_t digits_start = p;
    if (s[p] == '0') {
        p++;
    } else {
        while (p < n && s[p] >= '0' && s[p] <= '9') p++;
    }
    int integer = 1;
    if (p + 1 < n && s[p] == '.' && s[p + 1] >= '0' && s[p + 1] <= '9') {
        integer = 0;
        p += 2;
        while (p < n && s[p] >= '0' && s[p] <= '9') p++;
    }
    if (p < n && (s[p] == 'e' || s[p] == 'E')) {
        size_t q = p + 1;
        if (q < n && (s[q] == '+' || s[q] == '-')) q++;
        if (q < n && s[q] >= '0' && s[q] <= '9') {
            integer = 0;
            p = q + 1;
            while (p < n && s[p] >= '0' && s[p] <= '9') p++;
        }
    }
    if (integer && p - digits_start >= 19) sc->flags |= 1;
    if (!out_put(o, (const char *)s + start, p - start)) return 0;
    sc->pos = p;
    return 1;
}

static int scan_literal(Scan *sc, Out *o) {
    static const char *words[] = {"true", "false", "null"};
    const unsigned char *s = sc->s;
    for (int i = 0; i < 3; i++) {
        size_t len = strlen(words[i]);
        if (s[sc->pos] == (unsigned char)words[i][0]) {
            if (sc->pos + len <= sc->n && memcmp(s + sc->pos, words[i], len) == 0) {
                if (!out_put(o, words[i], len)) return 0;
                sc->pos += len;
                return 1;
            }
            break;
        }
    }
    return fail(sc, "Expecting value", sc->pos);
}

enum { S_VALUE, S_KEY, S_AFTER };

#define KEY_REPEAT 4

/* The keys of the objects still open, innermost last (each object's from its base). */
typedef struct {
    uint64_t hash; /* of the text the key stands for (its escapes read) */
    size_t at; /* offset of the key's opening quote in the input */
    size_t len; /* of that text */
    int escaped; /* the key holds an escape: equal hashes count as equal keys */
} KeyRef;

static int key_cmp(const void *a, const void *b) {
    const KeyRef *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return 0;
}

static inline int same_key(const unsigned char *s, const KeyRef *a, const KeyRef *b) {
    if (a->hash != b->hash || a->len != b->len) return 0;
    if (a->escaped || b->escaped) return 1;
    return memcmp(s + a->at + 1, s + b->at + 1, a->len) == 0;
}

/* Whether two of the keys ``k[0..m)`` are the same (sorts them when there are many: pairs
 * of hashes are compared up to 32 keys, which is quicker than a sort). */
static int keys_repeat(const unsigned char *s, KeyRef *k, size_t m) {
    if (m < 2) return 0;
    if (m <= 32) {
        for (size_t i = 0; i < m; i++)
            for (size_t j = i + 1; j < m; j++)
                if (same_key(s, &k[i], &k[j])) return 1;
        return 0;
    }
    qsort(k, m, sizeof *k, key_cmp);
    for (size_t i = 0; i < m; i++)
        for (size_t j = i + 1; j < m && k[j].hash == k[i].hash && k[j].len == k[i].len; j++)
            if (same_key(s, &k[i], &k[j])) return 1;
    return 0;
}

/* A 64-bit hash of the n bytes at s, a word at a time (keys here, lines in scan_lines). */
static inline uint64_t mix_hash(const unsigned char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    if (i < n) {
        w = 0;
        memcpy(&w, s + i, n - i);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    }
    h ^= h >> 29;
    h *= 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32);
}

/* The key token s[0..n) (quotes included, already validated): the hash (mix_hash) of the
 * UTF-8 text it stands for (a surrogate pair read as one code point, a lone surrogate as its
 * own three bytes, as Python's json reads them), that text's length, and whether it has
 * escapes. Without escapes that text is the bytes inside the quotes; with them it is spelled
 * out first (never longer than the token). Returns 0 when out of memory. */
static int key_text(const unsigned char *s, size_t n, KeyRef *k) {
    const unsigned char *inner = s + 1;
    size_t end = n - 2;
    if (memchr(inner, '\\', end) == NULL) {
        k->escaped = 0;
        k->len = end;
        k->hash = mix_hash(inner, end);
        return 1;
    }
    unsigned char small[256], *text = end <= sizeof small ? small : malloc(end);
    if (text == NULL) return 0;
    size_t len = json_unescape(inner, end, text);
    k->escaped = 1;
    k->len = len;
    k->hash = mix_hash(text, len);
    if (text != small) free(text);
    return 1;
}

/* The whole document; returns 1 on success (o holds the body), 0 on error (sc->err set or
 * o->failed). The stack holds '{' or '[' per open container. */
/* Is the body written so far still the input? Checked a step at a time, while the input's
 * pages are still mapped; once not, never again (a re-indented input differs in its first
 * lines: the cost is on input that is already in the layout, ~20 ms for 188 MB). */
static inline void maybe_compare(Scan *sc, Out *o) {
    if (sc->differs) return;
    size_t upto = o->len < sc->pos ? o->len : sc->pos;
    if (upto < sc->compared + COMPARE_STEP) return;
    if (o->over || memcmp(o->buf + sc->compared, sc->s + sc->compared, upto - sc->compared))
        sc->differs = 1;
    sc->compared = upto;
}

static int run(Scan *sc, Out *o) {
    const unsigned char *s = sc->s;
    size_t n = sc->n;
    char *stack = NULL;
    size_t *bases = NULL; /* per open container: where its keys start in ``keys`` */
    KeyRef *keys = NULL;
    size_t nkeys = 0, keys_cap = 0;
    size_t depth = 0, stack_cap = 0;
    int state = S_VALUE;
    int ok = 0;
    skip_ws(sc);
    for (;;) {
        if (state == S_VALUE) {
            if (sc->pos >= n) { fail(sc, "Expecting value", sc->pos); goto done; }
            unsigned char c = s[sc->pos];
            if (c == '{' || c == '[') {
                unsigned char close = c == '{' ? '}' : ']';
                if (sc->max_depth && depth >= sc->max_depth) { fail(sc, DEEP, sc->pos); goto done; }
                sc->pos++;
                skip_ws(sc);
                if (sc->pos < n && s[sc->pos] == close) {
                    char pair[2] = {(char)c, (char)close};
                    if (!out_put(o, pair, 2)) goto done;
                    sc->pos++;
                    state = S_AFTER;
                    continue;
                }
                if (depth == stack_cap) {
                    size_t cap = stack_cap ? stack_cap * 2 : 64;
                    char *p = realloc(stack, cap);
                    if (p == NULL) { o->failed = 1; goto done; }
                    stack = p;
                    size_t *b = realloc(bases, cap * sizeof *bases);
                    if (b == NULL) { o->failed = 1; goto done; }
                    bases = b;
                    stack_cap = cap;
                }
                bases[depth] = nkeys;
                stack[depth++] = (char)c;
                char open = (char)c;
                if (!out_put(o, &open, 1) || !out_newline(o, depth)) goto done;
                sc->lines++;
                state = c == '{' ? S_KEY : S_VALUE;
                continue;
            }
            int r;
            if (c == '"') r = scan_string(sc, o);
            else if (c == '-' || (c >= '0' && c <= '9')) r = scan_number(sc, o);
            else if (c == 't' || c == 'f' || c == 'n') r = scan_literal(sc, o);
            else r = fail(sc, "Expecting value", sc->pos);
            if (!r) goto done;
            state = S_AFTER;
        } else if (state == S_KEY) {
            if (sc->pos >= n || s[sc->pos] != '"') {
                fail(sc, "Expecting property name enclosed in double quotes", sc->pos);
                goto done;
            }
            size_t key_at = sc->pos;
            if (!scan_string(sc, o)) goto done;
            if (!(sc->flags & KEY_REPEAT)) {
                if (nkeys == keys_cap) {
                    size_t cap = keys_cap ? keys_cap * 2 : 256;
                    KeyRef *k = realloc(keys, cap * sizeof *keys);
                    if (k == NULL) { o->failed = 1; goto done; }
                    keys = k;
                    keys_cap = cap;
                }
                keys[nkeys].at = key_at;
                if (!key_text(s + key_at, sc->pos - key_at, &keys[nkeys])) {
                    o->failed = 1;
                    goto done;
                }
                nkeys++;
            }
            skip_ws(sc);
            if (sc->pos >= n || s[sc->pos] != ':') {
                fail(sc, "Expecting ':' delimiter", sc->pos);
                goto done;
            }
            sc->pos++;
            if (!out_put(o, ": ", 2)) goto done;
            skip_ws(sc);
            state = S_VALUE;
        } else { /* S_AFTER: a value just ended */
            maybe_compare(sc, o);
            maybe_release(sc);
            skip_ws(sc);
            if (depth == 0) {
                if (sc->pos < n) { fail(sc, "Extra data", sc->pos); goto done; }
                ok = 1;
                goto done;
            }
            char top = stack[depth - 1];
            unsigned char close = top == '{' ? '}' : ']';
            if (sc->pos < n && s[sc->pos] == ',') {
                sc->pos++;
                skip_ws(sc);
                if (depth <= 2 && sc->want_seps && !o->over) seps_add(sc, depth, o->len);
                if (!out_put(o, ",", 1) || !out_newline(o, depth)) goto done;
                sc->lines++;
                state = top == '{' ? S_KEY : S_VALUE;
            } else if (sc->pos < n && s[sc->pos] == close) {
                sc->pos++;
                depth--;
                if (top == '{') {
                    if (!(sc->flags & KEY_REPEAT)
                            && keys_repeat(s, keys + bases[depth], nkeys - bases[depth]))
                        sc->flags |= KEY_REPEAT;
                    nkeys = bases[depth];
                }
                char cl = (char)close;
                if (!out_newline(o, depth) || !out_put(o, &cl, 1)) goto done;
                sc->lines++;
            } else {
                fail(sc, "Expecting ',' delimiter", sc->pos);
                goto done;
            }
        }
    }
done:
    free(stack);
    free(bases);
    free(keys);
    return ok;
}

/* The run over sc's input and the result tuple (or the error raised). */
static PyObject *reindent_scan(Scan *sc, Py_ssize_t limit, Py_buffer *view) {
    /* room for the usual case (input already indented) without a reallocation */
    size_t cap = sc->n + sc->n / 8 + 64;
    size_t max = limit < 0 ? (size_t)-1 : (size_t)limit;
    if (cap > max) cap = max + 1;
    Out o = {PyBytes_FromStringAndSize(NULL, (Py_ssize_t)cap), NULL, 0, cap, 0, NULL, max, 0};
    if (o.bytes == NULL) {
        if (view != NULL) PyBuffer_Release(view);
        return NULL;
    }
    o.buf = PyBytes_AS_STRING(o.bytes);
    o.ts = PyEval_SaveThread();
    int ok = run(sc, &o);
    PyEval_RestoreThread(o.ts);
    o.ts = NULL;
    if (view != NULL) PyBuffer_Release(view);
    if (!ok) {
        seps_free(sc);
        Py_XDECREF(o.bytes);
        if (o.failed) return PyErr_NoMemory();
        PyObject *exc = Py_BuildValue("(sn)", sc->err, (Py_ssize_t)sc->err_pos);
        if (exc != NULL) {
            PyErr_SetObject(PyExc_ValueError, exc);
            Py_DECREF(exc);
        }
        return NULL;
    }
    if (o.over) {
        o.len = 0;
        sc->flags |= 2;
    } else if (!sc->differs && o.len + 1 == sc->n && sc->s[o.len] == '\n'
               && memcmp(o.buf + sc->compared, sc->s + sc->compared, o.len - sc->compared) == 0) {
        sc->flags |= SAME;
    }
    if (_PyBytes_Resize(&o.bytes, (Py_ssize_t)o.len) != 0) {
        seps_free(sc);
        return NULL;
    }
    if (!sc->want_seps) return Py_BuildValue("(Nni)", o.bytes, (Py_ssize_t)sc->lines, sc->flags);
    PyObject *seps;
    if (o.over || sc->seps_over) {
        seps = Py_NewRef(Py_None);
    } else {
        /* a depth with none has no array: "" (y# makes None of NULL) */
        seps = Py_BuildValue("(y#y#)", sc->seps[0] ? (const char *)sc->seps[0] : "",
                             (Py_ssize_t)(sc->nseps[0] * sizeof(uint64_t)),
                             sc->seps[1] ? (const char *)sc->seps[1] : "",
                             (Py_ssize_t)(sc->nseps[1] * sizeof(uint64_t)));
    }
    seps_free(sc);
    if (seps == NULL) {
        Py_DECREF(o.bytes);
        return NULL;
    }
    return Py_BuildValue("(NniN)", o.bytes, (Py_ssize_t)sc->lines, sc->flags, seps);
}

static PyObject *reindent(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t limit = -1, max_depth = 0;
    int want_seps = 0;
    if (!PyArg_ParseTuple(args, "y*|nnp", &view, &limit, &max_depth, &want_seps)) return NULL;
    Scan sc = {.s = (const unsigned char *)view.buf, .n = (size_t)view.len, .lines = 1,
               .max_depth = max_depth > 0 ? (size_t)max_depth : 0, .want_seps = want_seps};
    return reindent_scan(&sc, limit, &view);
}

/* reindent_file(fd, offset, length[, limit[, max_depth[, seps]]]): reindent() of the ``length``
 * bytes of the file ``fd`` from ``offset``, read through a private read-only map whose pages are
 * dropped once passed: the input is never resident as a whole (only the body is). Offsets
 * in errors are from ``offset``. OSError when the file cannot be mapped. */
static PyObject *reindent_file(PyObject *self, PyObject *args) {
    int fd;
    Py_ssize_t offset, length, limit = -1, max_depth = 0;
    int want_seps = 0;
    if (!PyArg_ParseTuple(args, "inn|nnp", &fd, &offset, &length, &limit, &max_depth, &want_seps))
        return NULL;
    if (offset < 0 || length <= 0) {
        PyErr_SetString(PyExc_ValueError, "reindent_file needs offset >= 0 and length > 0");
        return NULL;
    }
    long page = sysconf(_SC_PAGESIZE);
    size_t lead = (size_t)offset % (size_t)(page > 0 ? page : 4096);
    size_t span = lead + (size_t)length;
    void *map = mmap(NULL, span, PROT_READ, MAP_PRIVATE, fd, (off_t)((size_t)offset - lead));
    if (map == MAP_FAILED) return PyErr_SetFromErrno(PyExc_OSError);
    madvise(map, span, MADV_SEQUENTIAL);
    Scan sc = {.s = (const unsigned char *)map + lead, .n = (size_t)length, .lines = 1,
               .max_depth = max_depth > 0 ? (size_t)max_depth : 0, .map = (unsigned char *)map,
               .want_seps = want_seps};
    PyObject *result = reindent_scan(&sc, limit, NULL);
    munmap(map, span);
    return result;
}

/* ---- scan_lines: the line pass of scratch.index.lines ------------------------------------
 *
 * scan_lines(chunk, base, texts) -> (ends, uniq, ids, glued) splits ``chunk`` on "\n" (the
 * terminator kept with its line; the last line may lack one) and returns:
 * - ends: native u64 per line, the absolute offset (``base`` + position) just past the line;
 * - uniq: the distinct line texts in order of first appearance, each a str (strict UTF-8) or,
 *   for a line that is not valid UTF-8, its bytes (the caller decodes those by its own rule);
 * - ids: native u32 per line, the index in ``uniq`` of its text;
 * - glued: 0-based indices i of the lines whose following line does not start at a safe cut
 *   (see scratch.tokens.cuts: after its spaces/tabs the next line starts with "/", a newline
 *   or another whitespace character), the chunk's last line excepted.
 * With ``texts`` false only ends and glued are computed (uniq and ids are empty). Equal lines
 * share one text object, so a caller counts each distinct line once. */


/* Is a line starting at s[p] (after a "\n") not a safe cut? */
static inline int unsafe_start(const unsigned char *s, size_t p, size_t n) {
    while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p >= n) return 0; /* nothing follows in this chunk: the pattern needs a character */
    unsigned char c = s[p];
    if (c == '\n' || c == '\r' || c == '/' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1f))
        return 1;
    if (c == 0xc2) return p + 1 < n && (s[p + 1] == 0x85 || s[p + 1] == 0xa0);
    if (c == 0xe1) return p + 2 < n && s[p + 1] == 0x9a && s[p + 2] == 0x80;
    if (c == 0xe2) {
        if (p + 2 >= n) return 0;
        unsigned char a = s[p + 1], b = s[p + 2];
        if (a == 0x80) return (b >= 0x80 && b <= 0x8a) || b == 0xa8 || b == 0xa9 || b == 0xaf;
        return a == 0x81 && b == 0x9f;
    }
    if (c == 0xe3) return p + 2 < n && s[p + 1] == 0x80 && s[p + 2] == 0x80;
    return 0;
}

typedef struct { size_t start, len; uint32_t id; uint32_t used; uint64_t hash; } Slot;

/* A growing array of size_t, filled without the GIL (malloc, not the Python allocator). */
typedef struct { size_t *v; size_t n, cap; int failed; } Sizes;

static inline void sizes_push(Sizes *a, size_t x) {
    if (a->failed) return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        size_t *v = realloc(a->v, cap * sizeof(size_t));
        if (v == NULL) { a->failed = 1; return; }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
}

/* The scan proper, without the GIL: line ends, and with ``texts`` each line's text id and
 * the distinct texts' (start, length) pairs in order of first appearance; the glued lines.
 * Returns 0 when out of memory. */
static int scan_pass(const unsigned char *s, size_t n, unsigned long long base, int texts,
                     uint64_t *e, uint32_t *id, Sizes *distinct, Sizes *glued) {
    size_t cap = 1024, used = 0;
    Slot *table = NULL;
    if (texts) {
        table = calloc(cap, sizeof(Slot));
        if (!table) return 0;
    }
    size_t p = 0, i = 0;
    while (p < n) {
        const unsigned char *nl = memchr(s + p, '\n', n - p);
        size_t stop = nl ? (size_t)(nl - s) + 1 : n;
        e[i] = base + stop;
        if (nl && stop < n && unsafe_start(s, stop, n)) sizes_push(glued, i);
        if (texts) {
            size_t len = stop - p;
            uint64_t h = mix_hash(s + p, len);
            size_t mask = cap - 1, k = (size_t)h & mask;
            while (table[k].used && !(table[k].hash == h && table[k].len == len
                                      && memcmp(s + table[k].start, s + p, len) == 0))
                k = (k + 1) & mask;
            if (table[k].used) {
                id[i] = table[k].id;
            } else {
                sizes_push(distinct, p);
                sizes_push(distinct, len);
                Slot slot = {p, len, (uint32_t)used, 1, h};
                table[k] = slot;
                id[i] = (uint32_t)used++;
                if (used * 2 > cap) { /* keep the table at most half full */
                    size_t ncap = cap * 4;
                    Slot *nt = calloc(ncap, sizeof(Slot));
                    if (!nt) { free(table); return 0; }
                    for (size_t j = 0; j < cap; j++) {
                        if (!table[j].used) continue;
                        size_t m = (size_t)table[j].hash & (ncap - 1);
                        while (nt[m].used) m = (m + 1) & (ncap - 1);
                        nt[m] = table[j];
                    }
                    free(table);
                    table = nt;
                    cap = ncap;
                }
            }
        }
        i++;
        p = stop;
    }
    free(table);
    return !distinct->failed && !glued->failed;
}

static PyObject *scan_lines(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long base;
    int texts;
    if (!PyArg_ParseTuple(args, "y*Kp", &view, &base, &texts)) return NULL;
    const unsigned char *s = (const unsigned char *)view.buf;
    size_t n = (size_t)view.len;
    PyObject *ends = NULL, *ids = NULL, *uniq = NULL, *glued_list = NULL, *result = NULL;
    Sizes distinct = {NULL, 0, 0, 0}, glued = {NULL, 0, 0, 0};
    size_t lines = 0;
    int ok;
    /* pass 1 (no GIL): count the lines */
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *q = s, *end = s + n;
    while (q < end && (q = memchr(q, '\n', (size_t)(end - q))) != NULL) { lines++; q++; }
    if (n > 0 && s[n - 1] != '\n') lines++;
    Py_END_ALLOW_THREADS
    ends = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(lines * 8));
    ids = PyBytes_FromStringAndSize(NULL, texts ? (Py_ssize_t)(lines * 4) : 0);
    if (!ends || !ids) goto fail;
    uint64_t *e = (uint64_t *)PyBytes_AS_STRING(ends);
    uint32_t *id = (uint32_t *)PyBytes_AS_STRING(ids);
    /* pass 2 (no GIL either, so ingest's line pass runs beside Python work): the lines */
    Py_BEGIN_ALLOW_THREADS
    ok = scan_pass(s, n, base, texts, e, id, &distinct, &glued);
    Py_END_ALLOW_THREADS
    if (!ok) { PyErr_NoMemory(); goto fail; }
    /* the Python objects: one text per distinct line, the glued indices */
    uniq = PyList_New((Py_ssize_t)(distinct.n / 2));
    glued_list = PyList_New((Py_ssize_t)glued.n);
    if (!uniq || !glued_list) goto fail;
    for (size_t k = 0; k < distinct.n / 2; k++) {
        size_t p = distinct.v[2 * k], len = distinct.v[2 * k + 1];
        PyObject *t = PyUnicode_DecodeUTF8((const char *)s + p, (Py_ssize_t)len, NULL);
        if (t == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto fail;
            PyErr_Clear();
            /* not valid UTF-8: its bytes (the caller decodes those by its own rule) */
            t = PyBytes_FromStringAndSize((const char *)s + p, (Py_ssize_t)len);
            if (t == NULL) goto fail;
        }
        PyList_SET_ITEM(uniq, (Py_ssize_t)k, t);
    }
    for (size_t k = 0; k < glued.n; k++) {
        PyObject *x = PyLong_FromSize_t(glued.v[k]);
        if (x == NULL) goto fail;
        PyList_SET_ITEM(glued_list, (Py_ssize_t)k, x);
    }
    result = Py_BuildValue("(OOOO)", ends, uniq, ids, glued_list);
fail:
    free(distinct.v);
    free(glued.v);
    Py_XDECREF(ends);
    Py_XDECREF(ids);
    Py_XDECREF(uniq);
    Py_XDECREF(glued_list);
    PyBuffer_Release(&view);
    return result;
}

/* prefix_sums(ids, counts, start) -> native u64 per line: start plus the running sum of
 * counts[ids[k]] (ids: native u32, counts: native u64 per distinct text). */
static PyObject *prefix_sums(PyObject *self, PyObject *args) {
    Py_buffer iv, cv;
    unsigned long long start;
    if (!PyArg_ParseTuple(args, "y*y*K", &iv, &cv, &start)) return NULL;
    size_t n = (size_t)iv.len / 4, m = (size_t)cv.len / 8;
    const uint32_t *ids = (const uint32_t *)iv.buf;
    const uint64_t *counts = (const uint64_t *)cv.buf;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 8));
    if (out != NULL) {
        uint64_t *o = (uint64_t *)PyBytes_AS_STRING(out), total = start;
        for (size_t k = 0; k < n; k++) {
            if (ids[k] >= m) {
                Py_DECREF(out);
                out = NULL;
                PyErr_SetString(PyExc_IndexError, "text id out of range");
                break;
            }
            total += counts[ids[k]];
            o[k] = total;
        }
    }
    PyBuffer_Release(&iv);
    PyBuffer_Release(&cv);
    return out;
}

/* separators(body, start, end, depth, step) -> (count, cuts): the item separators of an array
 * in canonical text (scratch.index.textitems): a "," ending a line whose next line starts with
 * exactly 2 * depth spaces and then a non-space, its "," in [start, end). ``count`` is how
 * many there are; ``cuts`` the offsets of their "," for the first one and then each one at
 * least ``step`` bytes after the last one listed (step 0: every one). Canonical text has no
 * raw newline inside a string, so every "\n" is a line break; runs without the GIL. */
static PyObject *separators(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start, end, depth, step;
    if (!PyArg_ParseTuple(args, "y*nnnn", &view, &start, &end, &depth, &step)) return NULL;
    const unsigned char *s = (const unsigned char *)view.buf;
    size_t n = (size_t)view.len;
    if (start < 0) start = 0;
    if (end < 0 || (size_t)end > n) end = (Py_ssize_t)n;
    size_t indent = 2 * (size_t)(depth < 0 ? 0 : depth);
    size_t count = 0, listed = 0, cap = 64, *cuts = malloc(cap * sizeof(size_t));
    size_t last = 0;
    int ok = cuts != NULL;
    Py_BEGIN_ALLOW_THREADS
    /* the newline after a "," at end - 1 is at end */
    const unsigned char *p = s + start, *stop = s + ((size_t)end < n ? (size_t)end + 1 : n);
    while (ok && p < stop) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(stop - p));
        if (nl == NULL) break;
        p = nl + 1;
        if (nl == s || nl[-1] != ',' || (size_t)(nl - 1 - s) < (size_t)start) continue;
        size_t q = (size_t)(p - s), k = 0;
        while (q + k < n && k < indent && s[q + k] == ' ') k++;
        if (k != indent || q + k >= n || s[q + k] == ' ') continue;
        size_t at = (size_t)(nl - 1 - s);
        count++;
        if (listed == 0 || step == 0 || at >= last + (size_t)step) {
            if (listed == cap) {
                size_t *grown = realloc(cuts, 2 * cap * sizeof(size_t));
                if (grown == NULL) { ok = 0; break; }
                cuts = grown;
                cap *= 2;
            }
            cuts[listed++] = at;
            last = at;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!ok) { free(cuts); return PyErr_NoMemory(); }
    PyObject *list = PyList_New((Py_ssize_t)listed);
    if (list == NULL) { free(cuts); return NULL; }
    for (size_t k = 0; k < listed; k++) {
        PyObject *x = PyLong_FromSize_t(cuts[k]);
        if (x == NULL) { free(cuts); Py_DECREF(list); return NULL; }
        PyList_SET_ITEM(list, (Py_ssize_t)k, x);
    }
    free(cuts);
    PyObject *result = Py_BuildValue("(nO)", (Py_ssize_t)count, list);
    Py_DECREF(list);
    return result;
}

/* item_starts(text, depth, cur) -> (starts, after): the start line of each item of ``text``
 * (items of an array at ``depth`` in the canonical layout, the text of a batch of them: it may
 * start on the "\n" after the previous batch's ","), counted on from line ``cur``, as native
 * unsigned 32-bit integers (an array('I')'s bytes), and the line after the last item. An item
 * ends at a separator (a "," ending a line whose next line has exactly 2 * depth spaces before
 * a non-space, as separators() finds them); each newline before it adds a line. The twin
 * is textitems._text_starts_py; one pass, without the GIL. */
static PyObject *item_starts(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t depth;
    unsigned long long cur;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nK", &view, &depth, &cur)) return NULL;
    const unsigned char *s = (const unsigned char *)view.buf;
    size_t n = (size_t)view.len;
    size_t indent = 2 * (size_t)(depth < 0 ? 0 : depth);
    size_t listed = 0, cap = 256;
    uint32_t *starts = malloc(cap * sizeof(uint32_t));
    unsigned long long lines = 0;
    int ok = starts != NULL;
    Py_BEGIN_ALLOW_THREADS
    const unsigned char *p = s + (n > 0 && s[0] == '\n' ? 1 : 0), *stop = s + n;
    while (ok && p < stop) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(stop - p));
        if (nl == NULL) break;
        p = nl + 1;
        int cut = 0;
        if (nl > s && nl[-1] == ',') {
            size_t q = (size_t)(p - s), k = 0;
            while (q + k < n && k < indent && s[q + k] == ' ') k++;
            cut = k == indent && q + k < n && s[q + k] != ' ';
        }
        if (!cut) {
            lines++;
            continue;
        }
        if (listed == cap) {
            uint32_t *grown = realloc(starts, 2 * cap * sizeof(uint32_t));
            if (grown == NULL) { ok = 0; break; }
            starts = grown;
            cap *= 2;
        }
        starts[listed++] = (uint32_t)cur;
        cur += lines + 1;
        lines = 0;
    }
    if (ok && listed == cap) {
        uint32_t *grown = realloc(starts, (cap + 1) * sizeof(uint32_t));
        if (grown == NULL) ok = 0; else starts = grown;
    }
    if (ok) starts[listed++] = (uint32_t)cur;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!ok) { free(starts); return PyErr_NoMemory(); }
    PyObject *result = Py_BuildValue("(y#K)", (const char *)starts,
                                     (Py_ssize_t)(listed * sizeof(uint32_t)), cur + lines + 1);
    free(starts);
    return result;
}

static PyMethodDef methods[] = {
    {"separators", separators, METH_VARARGS,
     "separators(body, start, end, depth, step) -> (count, cuts): item separators of canonical "
     "JSON text at one depth."},
    {"item_starts", item_starts, METH_VARARGS,
     "item_starts(text, depth, cur) -> (starts, after): start lines of the items of canonical "
     "JSON text at one depth, as array('I') bytes, and the line after them."},
    {"reindent", reindent, METH_VARARGS,
     "reindent(data[, limit[, max_depth[, seps]]]) -> (body, lines, flags[, seps]): strict JSON "
     "re-indented, tokens verbatim."},
    {"reindent_file", reindent_file, METH_VARARGS,
     "reindent_file(fd, offset, length[, limit[, max_depth[, seps]]]) -> reindent() of part of a "
     "file, read through a map whose passed pages are dropped."},
    {"scan_lines", scan_lines, METH_VARARGS,
     "scan_lines(chunk, base, texts) -> (ends, uniq, ids, glued): the lines of a chunk."},
    {"prefix_sums", prefix_sums, METH_VARARGS,
     "prefix_sums(ids, counts, start) -> running token sums per line (u64)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_reindent", NULL, -1, methods};

PyMODINIT_FUNC PyInit__reindent(void) { return PyModule_Create(&module); }
