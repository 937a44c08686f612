/*
 * util/escape.c: the one UTF-8 validator of the library (icm__utf8_char_len, used by the JSON
 * parser, metadata edits and the escapes) and the two lossless escapes that make any byte
 * string printable (include/icemaint/escape.h): text for people, JSON with surrogateescape.
 *
 * Both escapes walk the input one unit at a time: a valid UTF-8 character, or one byte that
 * needs an escape. A unit is written only when it fits whole, so truncated output never ends
 * inside an escape or a character.
 */
#include <string.h>

#include "icemaint/escape.h"
#include "util/util.h"

size_t icm__utf8_char_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    if (c < 0x80)
        return avail > 0 ? 1 : 0;
    /* lead byte: sequence length, its payload bits, the smallest code point (no overlongs);
     * 0xC0, 0xC1 and 0xF5-0xFF lead nothing */
    size_t n = (c >= 0xc2 && c <= 0xdf)   ? 2
               : (c >= 0xe0 && c <= 0xef) ? 3
               : (c >= 0xf0 && c <= 0xf4) ? 4
                                          : 0;
    if (n == 0 || avail < n)
        return 0;
    uint32_t cp = c & (0x7fu >> n);
    uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at a terminating NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    return (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) ? 0 : n;
}

bool icm__utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = icm__utf8_char_len(p + i, len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

/* Output with snprintf's contract: `len` counts everything; `buf` receives whole units while
 * they fit (one byte stays for the NUL), `written` of them. */
typedef struct sink {
    char *buf;
    size_t size;
    size_t len;
    size_t written;
    bool full; /* a unit did not fit: nothing more is written */
} sink;

static void put(sink *s, const char *unit, size_t n)
{
    if (!s->full && s->len + n < s->size) {
        memcpy(s->buf + s->len, unit, n);
        s->written = s->len + n;
    } else {
        s->full = true;
    }
    s->len += n;
}

/* A run of printable ASCII bytes, each a unit of its own: as many as fit are written. */
static void put_run(sink *s, const char *run, size_t n)
{
    size_t room = !s->full && s->size > s->len ? s->size - 1 - s->len : 0;
    size_t k = n < room ? n : room;
    if (k > 0) {
        memcpy(s->buf + s->len, run, k);
        s->written = s->len + k;
    }
    if (k < n)
        s->full = true;
    s->len += n;
}

/* Bytes at p (of at most n) that print as themselves: printable ASCII but the backslash (and,
 * in JSON, the quote). */
static size_t plain_run(const unsigned char *p, size_t n, bool json)
{
    size_t k = 0;
    while (k < n && p[k] >= 0x20 && p[k] < 0x7f && p[k] != '\\' && !(json && p[k] == '"'))
        k++;
    return k;
}

/* The NUL after the whole units written; the length of the whole output. */
static size_t finish(sink *s)
{
    if (s->size > 0)
        s->buf[s->written] = '\0';
    return s->len;
}

static const char hex_digits[] = "0123456789abcdef";

static void hex_byte(char out[4], unsigned char c)
{
    out[0] = '\\', out[1] = 'x', out[2] = hex_digits[c >> 4], out[3] = hex_digits[c & 15];
}

/* The text unit of ASCII byte c into out: its escape, or c itself. Returns its length. */
static size_t text_ascii(unsigned char c, char out[4])
{
    const char *named = c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                                           : c == '\t' ? "\\t" : NULL;
    if (named != NULL) {
        memcpy(out, named, 2);
        return 2;
    }
    if (c >= 0x20 && c != 0x7f) {
        out[0] = (char)c;
        return 1;
    }
    hex_byte(out, c);
    return 4;
}

size_t icm_escape_text(char *buf, size_t buf_size, const char *bytes, size_t len)
{
    sink s = {buf, buf_size, 0, 0, false};
    const unsigned char *p = (const unsigned char *)bytes;
    for (size_t i = 0; i < len;) {
        size_t plain = plain_run(p + i, len - i, false);
        if (plain > 0) {
            put_run(&s, (const char *)p + i, plain);
            i += plain;
            continue;
        }
        char unit[8];
        size_t n = p[i] < 0x80 ? 1 : icm__utf8_char_len(p + i, len - i);
        if (n == 1) {
            put(&s, unit, text_ascii(p[i], unit));
        } else if (n == 0) {
            n = 1;
            hex_byte(unit, p[i]); /* not part of valid UTF-8 */
            put(&s, unit, 4);
        } else if (n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) {
            hex_byte(unit, p[i]); /* a C1 control, U+0080-U+009F: both bytes, one unit */
            hex_byte(unit + 4, p[i + 1]);
            put(&s, unit, 8);
        } else {
            put(&s, (const char *)p + i, n);
        }
        i += n;
    }
    return finish(&s);
}

/* The JSON unit of ASCII byte c into out: its escape, or c itself. Control characters without
 * a short form are `\u00XX` with upper-case digits, as jansson writes them (so documents of
 * valid names keep their exact text). Returns its length. */
static size_t json_ascii(unsigned char c, char out[6])
{
    const char *named = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                                    : NULL;
    if (named != NULL) {
        memcpy(out, named, 2);
        return 2;
    }
    if (c >= 0x20) {
        out[0] = (char)c;
        return 1;
    }
    static const char upper[] = "0123456789ABCDEF";
    memcpy(out, "\\u00", 4);
    out[4] = upper[c >> 4], out[5] = upper[c & 15];
    return 6;
}

size_t icm_escape_json(char *buf, size_t buf_size, const char *bytes, size_t len)
{
    sink s = {buf, buf_size, 0, 0, false};
    const unsigned char *p = (const unsigned char *)bytes;
    put(&s, "\"", 1);
    for (size_t i = 0; i < len;) {
        size_t plain = plain_run(p + i, len - i, true);
        if (plain > 0) {
            put_run(&s, (const char *)p + i, plain);
            i += plain;
            continue;
        }
        char unit[6];
        size_t n = p[i] < 0x80 ? 1 : icm__utf8_char_len(p + i, len - i);
        if (n == 1) {
            put(&s, unit, json_ascii(p[i], unit));
        } else if (n == 0) {
            /* not part of valid UTF-8: surrogateescape, byte 0xXY as U+DCXY */
            char esc[6] = {'\\', 'u', 'd', 'c', hex_digits[p[i] >> 4], hex_digits[p[i] & 15]};
            put(&s, esc, 6);
            n = 1;
        } else {
            put(&s, (const char *)p + i, n);
        }
        i += n;
    }
    put(&s, "\"", 1);
    return finish(&s);
}

/* ---- form URL decoding ---- */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool icm__url_form_decode(char *s, size_t *len)
{
    size_t o = 0;
    for (size_t i = 0; i < *len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            int hi = i + 2 < *len ? hex_value(s[i + 1]) : -1;
            int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        s[o++] = c;
    }
    s[o] = '\0';
    *len = o;
    return true;
}
