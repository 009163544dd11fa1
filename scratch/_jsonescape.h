/* Reading a JSON string's escapes, for the C accelerators that compare keys by the text they
 * stand for (scratch._reindent's repeated-key check, scratch._union's walk from the text).
 * Static inline functions in a header: each extension is compiled on its own. */

#ifndef SCRATCH_JSONESCAPE_H
#define SCRATCH_JSONESCAPE_H

#include <stddef.h>
#include <stdint.h>

/* The code point ``cp`` as UTF-8 at ``b`` (room for 4 bytes); its length. */
static inline size_t json_put_utf8(unsigned char *b, uint32_t cp) {
    if (cp < 0x80) { b[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12)); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (unsigned char)(0xF0 | (cp >> 18)); b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The four hex digits at ``p`` (already validated) as a number. */
static inline uint32_t json_hex4(const unsigned char *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        v = v * 16 + (uint32_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* The text inside a string's quotes, s[0..n) (its escapes already validated), with its
 * escapes read, as UTF-8 in ``out`` (room for n bytes: never longer): a surrogate pair is one
 * code point, a lone surrogate its own three bytes, as Python's json reads them. Its length. */
static inline size_t json_unescape(const unsigned char *s, size_t n, unsigned char *out) {
    size_t len = 0, p = 0;
    while (p < n) {
        unsigned char c = s[p];
        if (c != '\\') {
            out[len++] = c;
            p++;
            continue;
        }
        unsigned char e = s[p + 1];
        if (e != 'u') {
            out[len++] = e == 'b' ? 8 : e == 'f' ? 12 : e == 'n' ? 10 : e == 'r' ? 13
                         : e == 't' ? 9 : e; /* \" \\ \/ */
            p += 2;
            continue;
        }
        uint32_t cp = json_hex4(s + p + 2);
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && p + 6 <= n && s[p] == '\\' && s[p + 1] == 'u') {
            uint32_t lo = json_hex4(s + p + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
        }
        len += json_put_utf8(out + len, cp);
    }
    return len;
}

#endif
