/*
 * tests/unit/test_escape.c: the two escapes that make any byte string printable
 * (include/icemaint/escape.h): the text escape for people and the JSON escape with invalid
 * bytes as `\udcXY` (Python's surrogateescape).
 *
 * Every single byte value is checked against the rule written out independently here; both
 * escapes are decoded back by small decoders in this file (written from the documented rule,
 * not from the encoder) for random byte strings, sequences that are not UTF-8 (truncated,
 * overlong, encoded surrogates, above U+10FFFF, stray continuation bytes), NUL and valid text;
 * and truncated output never ends inside an escape or a character.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/escape.h"
#include "testutil.h"

/* ---- independent decoders ---- */

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

/* The bytes a text escape stands for; *len gets their count. Fails the test on anything the
 * rule does not produce (a raw control byte, an unknown escape). */
static char *text_unescape(const char *s, size_t *len)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        assert_true(c >= 0x20 && c != 0x7f); /* printable: no raw control byte */
        if (c != '\\') {
            out[k++] = (char)c;
            continue;
        }
        char e = s[++i];
        if (e == '\\' || e == 'n' || e == 'r' || e == 't') {
            out[k++] = e == '\\' ? '\\' : e == 'n' ? '\n' : e == 'r' ? '\r' : '\t';
        } else {
            assert_int_equal(e, 'x');
            int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
            assert_true(hi >= 0 && lo >= 0);
            out[k++] = (char)(hi * 16 + lo);
            i += 2;
        }
    }
    *len = k;
    return out;
}

static void put_utf8(char *out, size_t *k, unsigned cp)
{
    if (cp < 0x80) {
        out[(*k)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*k)++] = (char)(0xc0 | cp >> 6);
        out[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*k)++] = (char)(0xe0 | cp >> 12);
        out[(*k)++] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* The bytes a JSON string (quotes included) stands for, with U+DC80-U+DCFF as the bytes
 * 0x80-0xFF (os.fsencode's rule). */
static char *json_unescape(const char *s, size_t *len)
{
    size_t n = strlen(s);
    assert_true(n >= 2 && s[0] == '"' && s[n - 1] == '"');
    char *out = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        assert_true(c >= 0x20); /* JSON forbids raw control characters */
        assert_true(c != '"');
        if (c != '\\') {
            out[k++] = (char)c;
            continue;
        }
        char e = s[++i];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *hit = strchr(from, e);
        if (e != 'u') {
            assert_non_null(hit);
            out[k++] = to[hit - from];
            continue;
        }
        unsigned cp = 0;
        for (int d = 1; d <= 4; d++) {
            int v = hex_value(s[i + d]);
            assert_true(v >= 0);
            cp = cp * 16 + (unsigned)v;
        }
        i += 4;
        if (cp >= 0xdc80 && cp <= 0xdcff)
            out[k++] = (char)(cp - 0xdc00); /* an escaped byte */
        else {
            assert_false(cp >= 0xd800 && cp <= 0xdfff); /* no other surrogate is written */
            put_utf8(out, &k, cp);
        }
    }
    *len = k;
    return out;
}

/* ---- helpers ---- */

static char *text_of(const char *bytes, size_t len)
{
    size_t need = icm_escape_text(NULL, 0, bytes, len) + 1;
    assert_true(need <= ICM_ESCAPE_TEXT_MAX(len));
    char *out = malloc(need);
    assert_int_equal(icm_escape_text(out, need, bytes, len), need - 1);
    assert_int_equal(strlen(out), need - 1);
    return out;
}

static char *json_of(const char *bytes, size_t len)
{
    size_t need = icm_escape_json(NULL, 0, bytes, len) + 1;
    assert_true(need <= ICM_ESCAPE_JSON_MAX(len));
    char *out = malloc(need);
    assert_int_equal(icm_escape_json(out, need, bytes, len), need - 1);
    assert_int_equal(strlen(out), need - 1);
    return out;
}

static void assert_round_trip(const char *bytes, size_t len)
{
    size_t n;
    char *t = text_of(bytes, len);
    char *back = text_unescape(t, &n);
    assert_int_equal(n, len);
    assert_memory_equal(back, bytes, len);
    free(back);
    free(t);
    char *j = json_of(bytes, len);
    back = json_unescape(j, &n);
    assert_int_equal(n, len);
    assert_memory_equal(back, bytes, len);
    free(back);
    free(j);
}

static void assert_escapes(const char *bytes, size_t len, const char *text, const char *json)
{
    char *t = text_of(bytes, len);
    assert_string_equal(t, text);
    free(t);
    char *j = json_of(bytes, len);
    assert_string_equal(j, json);
    free(j);
    assert_round_trip(bytes, len);
}

#define ESCAPES(lit, text, json) assert_escapes(lit, sizeof(lit) - 1, text, json)

/* ---- tests ---- */

/* Each byte on its own, against the rule: ASCII printable copied (`\` and, in JSON, `"`
 * escaped), controls named or \xNN / \u00XX, every byte >= 0x80 alone is invalid UTF-8. */
static void test_every_byte_value(void **state)
{
    (void)state;
    for (int b = 0; b < 256; b++) {
        char in[1] = {(char)b};
        char want_text[8], want_json[16];
        if (b == '\\')
            strcpy(want_text, "\\\\");
        else if (b == '\n' || b == '\r' || b == '\t')
            strcpy(want_text, b == '\n' ? "\\n" : b == '\r' ? "\\r" : "\\t");
        else if (b < 0x20 || b >= 0x7f)
            snprintf(want_text, sizeof want_text, "\\x%02x", b);
        else
            snprintf(want_text, sizeof want_text, "%c", b);
        const char *named = b == '"' ? "\\\"" : b == '\\' ? "\\\\" : b == '\b' ? "\\b"
                            : b == '\f' ? "\\f" : b == '\n' ? "\\n" : b == '\r' ? "\\r"
                            : b == '\t' ? "\\t" : NULL;
        if (named != NULL)
            snprintf(want_json, sizeof want_json, "\"%s\"", named);
        else if (b < 0x20)
            snprintf(want_json, sizeof want_json, "\"\\u%04X\"", b);
        else if (b >= 0x80)
            snprintf(want_json, sizeof want_json, "\"\\udc%02x\"", b);
        else
            snprintf(want_json, sizeof want_json, "\"%c\"", b);
        assert_escapes(in, 1, want_text, want_json);
    }
}

/* Valid UTF-8 is copied in both escapes, except the C1 controls (U+0080-U+009F) in text. */
static void test_valid_utf8_is_copied(void **state)
{
    (void)state;
    ESCAPES("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xef\xbf\xbd \xf4\x8f\xbf\xbf",
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xef\xbf\xbd \xf4\x8f\xbf\xbf",
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xef\xbf\xbd \xf4\x8f\xbf\xbf\"");
    ESCAPES("a\xc2\x85z\xc2\xa0", "a\\xc2\\x85z\xc2\xa0", "\"a\xc2\x85z\xc2\xa0\"");
    ESCAPES("data/x=1/part-0.parquet", "data/x=1/part-0.parquet",
            "\"data/x=1/part-0.parquet\"");
    ESCAPES("", "", "\"\"");
}

/* Each byte of anything that is not valid UTF-8 is escaped on its own (the valid bytes
 * around it are not): what Python's decoder with surrogateescape gives. */
static void test_invalid_sequences(void **state)
{
    (void)state;
    /* overlong forms of '/', NUL and U+07FF / U+FFFF */
    ESCAPES("\xc0\xaf", "\\xc0\\xaf", "\"\\udcc0\\udcaf\"");
    ESCAPES("\xc1\xbf", "\\xc1\\xbf", "\"\\udcc1\\udcbf\"");
    ESCAPES("\xe0\x80\xaf", "\\xe0\\x80\\xaf", "\"\\udce0\\udc80\\udcaf\"");
    ESCAPES("\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf", "\"\\udcf0\\udc80\\udc80\\udcaf\"");
    /* encoded surrogates (CESU-8 / WTF-8): never valid */
    ESCAPES("\xed\xa0\x80", "\\xed\\xa0\\x80", "\"\\udced\\udca0\\udc80\"");
    ESCAPES("\xed\xb2\x80", "\\xed\\xb2\\x80", "\"\\udced\\udcb2\\udc80\"");
    /* above U+10FFFF, and lead bytes that lead nothing */
    ESCAPES("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\"\\udcf4\\udc90\\udc80\\udc80\"");
    ESCAPES("\xf5\xff", "\\xf5\\xff", "\"\\udcf5\\udcff\"");
    /* truncated sequences, at the end and before a valid character */
    ESCAPES("a\xe2\x82", "a\\xe2\\x82", "\"a\\udce2\\udc82\"");
    ESCAPES("\xe2\x82" "A", "\\xe2\\x82" "A", "\"\\udce2\\udc82A\"");
    ESCAPES("\xf0\x9d\x84\xc3\xa9", "\\xf0\\x9d\\x84\xc3\xa9", "\"\\udcf0\\udc9d\\udc84\xc3\xa9\"");
    /* stray continuation bytes */
    ESCAPES("\x80\xbf" "b", "\\x80\\xbf" "b", "\"\\udc80\\udcbfb\"");
    /* a name that already holds what looks like an escape stays apart from an escaped byte */
    ESCAPES("\\xff\xff", "\\\\xff\\xff", "\"\\\\xff\\udcff\"");
}

/* NUL is just a byte: escaped, never an end of string (the length is given). */
static void test_nul(void **state)
{
    (void)state;
    ESCAPES("a\0b", "a\\x00b", "\"a\\u0000b\"");
    ESCAPES("\0", "\\x00", "\"\\u0000\"");
}

/* One name, one line: a newline, a carriage return or any control never reaches the output. */
static void test_control_characters_stay_on_one_line(void **state)
{
    (void)state;
    ESCAPES("new\nline\r\ttab\x1b[31m\x7f", "new\\nline\\r\\ttab\\x1b[31m\\x7f",
            "\"new\\nline\\r\\ttab\\u001B[31m\x7f\"");
}

/* Random byte strings (biased toward bytes >= 0x80 and controls) decode back exactly. */
static void test_random_round_trips(void **state)
{
    (void)state;
    srand(16);
    static const unsigned char pool[] = {0x00, 0x0a, 0x1f, '\\', '"', 'a', '/', 0x7f, 0x80,
                                         0xbf, 0xc2, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xa0,
                                         0xf0, 0x9d, 0x84, 0x9e, 0xf4, 0x90, 0xff, 0xc0};
    char buf[64];
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = (size_t)(rand() % (int)sizeof buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)(rand() % 3 == 0 ? rand() % 256 : pool[rand() % (int)sizeof pool]);
        assert_round_trip(buf, len);
    }
}

/* snprintf's contract: the full length is returned whatever the room; the output is a prefix
 * of the full one that ends at a whole unit (never inside an escape or a character). */
static void test_truncation_keeps_whole_units(void **state)
{
    (void)state;
    static const char in[] = "a\n\xc3\xa9\xff\\z\xf0\x9d\x84\x9e";
    size_t len = sizeof in - 1;
    for (int json = 0; json <= 1; json++) {
        char *full = json ? json_of(in, len) : text_of(in, len);
        size_t full_len = strlen(full);
        /* the unit boundaries of the full output */
        const char *ends_text[] = {"", "a", "a\\n", "a\\n\xc3\xa9", "a\\n\xc3\xa9\\xff",
                                   "a\\n\xc3\xa9\\xff\\\\", "a\\n\xc3\xa9\\xff\\\\z", full};
        const char *ends_json[] = {"", "\"", "\"a", "\"a\\n", "\"a\\n\xc3\xa9",
                                   "\"a\\n\xc3\xa9\\udcff", "\"a\\n\xc3\xa9\\udcff\\\\",
                                   "\"a\\n\xc3\xa9\\udcff\\\\z",
                                   "\"a\\n\xc3\xa9\\udcff\\\\z\xf0\x9d\x84\x9e", full};
        const char *const *ends = json ? ends_json : ends_text;
        size_t n_ends = json ? sizeof ends_json / sizeof *ends_json
                             : sizeof ends_text / sizeof *ends_text;
        for (size_t room = 1; room <= full_len + 1; room++) {
            char out[64];
            memset(out, '#', sizeof out);
            size_t got = json ? icm_escape_json(out, room, in, len)
                              : icm_escape_text(out, room, in, len);
            assert_int_equal(got, full_len);
            assert_true(strlen(out) < room);
            /* the longest unit boundary that fits */
            const char *want = "";
            for (size_t e = 0; e < n_ends; e++)
                if (strlen(ends[e]) < room)
                    want = ends[e];
            assert_string_equal(out, want);
        }
        assert_int_equal(json ? icm_escape_json(NULL, 0, in, len)
                              : icm_escape_text(NULL, 0, in, len),
                         full_len);
        free(full);
    }
}

/* A run of plain ASCII is cut after any of its characters (each is a unit of its own). */
static void test_truncation_inside_a_plain_run(void **state)
{
    (void)state;
    static const char in[] = "abcd\xff";
    for (size_t room = 1; room <= 9; room++) {
        char out[16];
        size_t got = icm_escape_text(out, room, in, sizeof in - 1);
        assert_int_equal(got, 8);
        const char *want = room <= 5 ? NULL : room <= 8 ? "abcd" : "abcd\\xff";
        if (want == NULL)
            assert_memory_equal(out, "abcd", room - 1);
        else
            assert_string_equal(out, want);
        assert_int_equal(strlen(out), want == NULL ? room - 1 : strlen(want));
        got = icm_escape_json(out, room, in, sizeof in - 1);
        assert_int_equal(got, 12);
        assert_int_equal(strlen(out), room <= 6 ? room - 1 : 5); /* "abcd then \udcff */
    }
}

/* For valid names the JSON escape writes exactly what jansson writes, so documents of plain
 * names keep their exact text. */
static void test_json_matches_jansson_for_valid_text(void **state)
{
    (void)state;
    const char *names[] = {"s3://b/t/data/x=1/part-00000.parquet", "caf\xc3\xa9 \"q\" \\ /",
                           "ctl \x01\x1f\n\t\b\f\r", "\xf0\x9d\x84\x9e\xe2\x82\xac"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        json_t *s = json_string(names[i]);
        assert_non_null(s);
        char *theirs = json_dumps(s, JSON_ENCODE_ANY);
        char *ours = json_of(names[i], strlen(names[i]));
        assert_string_equal(ours, theirs);
        free(ours);
        free(theirs);
        json_decref(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_value),
        cmocka_unit_test(test_valid_utf8_is_copied),
        cmocka_unit_test(test_invalid_sequences),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_control_characters_stay_on_one_line),
        cmocka_unit_test(test_random_round_trips),
        cmocka_unit_test(test_truncation_keeps_whole_units),
        cmocka_unit_test(test_truncation_inside_a_plain_run),
        cmocka_unit_test(test_json_matches_jansson_for_valid_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
