/*
 * spec/json_parse.c: a strict RFC 8259 JSON reader that builds jansson values.
 *
 * Why not json_loadb(): jansson 2.14's loader crashes (and leaks) when one of its allocations
 * fails in the middle of a document, which the allocation-failure tests found. jansson's value
 * constructors, on the other hand, report failure cleanly, so this reader does the lexing itself
 * and only calls those. It also gives us the rules icemaint wants for metadata:
 *  - integers are exact int64 (a larger integer is an error, never rounded to a double);
 *  - strings must be valid UTF-8 and may not contain U+0000 (jansson's default, too);
 *  - duplicate object keys are an error (readers disagree on which one wins);
 *  - nesting deeper than ICM__JSON_MAX_DEPTH is an error (bounded recursion on any input).
 * Errors are one line with the 1-based line and byte column, also stored as the error position;
 * a number that cannot be held also names the object member it is the value of (a retention
 * field such as "max-ref-age-ms" at 2^63 is refused naming the field, as Java's parser does).
 *
 * icm__json_parse_lenient relaxes those rules to read what other readers accept (Java's
 * Jackson, Python's json and pydantic): it is only used to learn where another table's files
 * go when its metadata fails the strict reader, so that accepting more keeps more files.
 */
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/metadata_internal.h"

#define ICM__JSON_MAX_DEPTH 512

typedef struct reader {
    const char *start, *p, *end;
    const char *line_start;
    int64_t line;
    const char *location;
    const char *member; /* key of the object member whose value is being read, or NULL */
    icm__buf scratch;   /* decoded string bytes, reused */
    int lenient;        /* STRICT, or LENIENT_FIRST / LENIENT_LAST (which duplicate key wins) */
    bool duplicates;    /* (lenient) a duplicate key was met */
} reader;

enum { STRICT, LENIENT_FIRST, LENIENT_LAST };

#define REPLACEMENT_CHAR 0xFFFDu

static int syntax_error(reader *r, const char *what)
{
    int64_t column = (int64_t)(r->p - r->line_start) + 1;
    icm__error_set(ICM_ERRCLASS_JSON, ICM_EINVALID, r->location,
                   "not valid JSON: %s (line %lld, column %lld)", what, (long long)r->line,
                   (long long)column);
    icm__error_set_position(r->line, column, (int64_t)(r->p - r->start));
    return ICM_EINVALID;
}

/* A number that cannot be held: the syntax error, naming the member it is the value of. */
static int number_error(reader *r, const char *what)
{
    if (r->member == NULL)
        return syntax_error(r, what);
    char text[160];
    snprintf(text, sizeof text, "%s for \"%.100s\"", what, r->member);
    return syntax_error(r, text);
}

static void skip_ws(reader *r)
{
    while (r->p < r->end) {
        char c = *r->p;
        if (c == '\n') {
            r->line++;
            r->line_start = r->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        r->p++;
    }
}

static int parse_value(reader *r, int depth, json_t **out);

static int hex4(reader *r, uint32_t *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++) {
        if (r->p >= r->end)
            return syntax_error(r, "unterminated \\u escape");
        char c = *r->p;
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (uint32_t)(c - 'A' + 10);
        else
            return syntax_error(r, "invalid \\u escape");
        *out = (*out << 4) | d;
        r->p++;
    }
    return 0;
}

static void put_utf8(icm__buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    icm__buf_put(b, u, n);
}

/* A \uXXXX escape (after the 'u'), joining surrogate pairs. */
static int unicode_escape(reader *r)
{
    uint32_t cp, lo;
    int rc = hex4(r, &cp);
    if (rc != 0)
        return rc;
    if (r->lenient != STRICT && (cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))) {
        put_utf8(&r->scratch, REPLACEMENT_CHAR); /* (Python keeps a lone surrogate) */
        return 0;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return syntax_error(r, "lone low surrogate in \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        bool paired = r->end - r->p >= 2 && r->p[0] == '\\' && r->p[1] == 'u';
        const char *at = r->p;
        if (paired) {
            r->p += 2;
            if ((rc = hex4(r, &lo)) != 0)
                return rc;
            paired = lo >= 0xDC00 && lo <= 0xDFFF;
        }
        if (!paired && r->lenient != STRICT) {
            r->p = at; /* a lone high surrogate; what follows is read on its own */
            put_utf8(&r->scratch, REPLACEMENT_CHAR);
            return 0;
        }
        if (!paired)
            return syntax_error(r, "high surrogate not followed by a low one");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp == 0)
        return syntax_error(r, "\\u0000 is not allowed in strings");
    put_utf8(&r->scratch, cp);
    return 0;
}

/* Decode the string at r->p (on the opening quote) into r->scratch. */
static int read_string(reader *r)
{
    icm__buf_clear(&r->scratch);
    r->p++;
    for (;;) {
        const char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20 &&
               (unsigned char)*r->p < 0x80)
            r->p++;
        icm__buf_put(&r->scratch, run, (size_t)(r->p - run));
        if (r->p >= r->end)
            return syntax_error(r, "unterminated string");
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            return r->scratch.oom ? ICM_ENOMEM : 0;
        }
        if (c < 0x20 && r->lenient != STRICT) {
            /* kept as is; NUL (no C string holds it) as U+FFFD */
            if (c == 0)
                put_utf8(&r->scratch, REPLACEMENT_CHAR);
            else
                icm__buf_putc(&r->scratch, (char)c);
            r->p++;
            continue;
        }
        if (c < 0x20)
            return syntax_error(r, "control character in string");
        if (c >= 0x80) {
            size_t n = icm__utf8_char_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
            if (n == 0 && r->lenient != STRICT)
                n = 1; /* a byte that is not UTF-8: kept as is */
            if (n == 0)
                return syntax_error(r, "invalid UTF-8 in string");
            icm__buf_put(&r->scratch, r->p, n);
            r->p += n;
            continue;
        }
        /* backslash */
        if (r->end - r->p < 2)
            return syntax_error(r, "unterminated string");
        char e = r->p[1];
        r->p += 2;
        const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
        const char *hit = NULL;
        for (const char *m = map; *m; m += 2)
            if (*m == e)
                hit = m;
        if (hit != NULL) {
            icm__buf_putc(&r->scratch, hit[1]);
        } else if (e == 'u') {
            int rc = unicode_escape(r);
            if (rc != 0)
                return rc;
        } else {
            r->p--;
            return syntax_error(r, "invalid escape in string");
        }
    }
}

static int parse_string(reader *r, json_t **out)
{
    int rc = read_string(r);
    if (rc != 0)
        return rc;
    *out = json_stringn_nocheck(r->scratch.data ? r->scratch.data : "", r->scratch.len);
    return *out != NULL ? 0 : icm__error_oom();
}

static bool is_digit(const reader *r)
{
    return r->p < r->end && *r->p >= '0' && *r->p <= '9';
}

static int parse_number(reader *r, json_t **out)
{
    const char *s = r->p;
    bool real = false;
    if (*r->p == '-')
        r->p++;
    if (!is_digit(r))
        return syntax_error(r, "invalid number");
    if (*r->p == '0') {
        r->p++;
        if (is_digit(r))
            return syntax_error(r, "leading zero in number");
    } else {
        while (is_digit(r))
            r->p++;
    }
    if (r->p < r->end && *r->p == '.') {
        real = true;
        r->p++;
        if (!is_digit(r))
            return syntax_error(r, "invalid number");
        while (is_digit(r))
            r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        real = true;
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (!is_digit(r))
            return syntax_error(r, "invalid number");
        while (is_digit(r))
            r->p++;
    }
    if (!real) {
        /* exact int64: accumulate negatively so INT64_MIN fits */
        bool neg = *s == '-';
        long long v = 0;
        bool fits = true;
        for (const char *q = neg ? s + 1 : s; fits && q < r->p; q++) {
            int d = *q - '0';
            if (v < (LLONG_MIN + d) / 10)
                fits = false;
            else
                v = v * 10 - d;
        }
        if (fits && !neg) {
            if (v == LLONG_MIN)
                fits = false;
            else
                v = -v;
        }
        if (fits) {
            *out = json_integer((json_int_t)v);
            return *out != NULL ? 0 : icm__error_oom();
        }
        if (r->lenient == STRICT) {
            r->p = s;
            return number_error(r, "integer out of the 64-bit range");
        }
        /* lenient: read as a real number below */
    }
    /* strtod needs a NUL-terminated copy in the C locale's notation */
    icm__buf_clear(&r->scratch);
    if (icm__buf_put(&r->scratch, s, (size_t)(r->p - s)) != 0)
        return ICM_ENOMEM;
    const char *point = localeconv()->decimal_point;
    char *dot = strchr(r->scratch.data, '.');
    if (dot != NULL && point != NULL && point[0] != '\0' && point[1] == '\0')
        *dot = point[0];
    double d = strtod(r->scratch.data, NULL);
    if (isinf(d) && r->lenient != STRICT) {
        *out = json_null(); /* jansson holds no infinity; the value is not looked at */
        return *out != NULL ? 0 : icm__error_oom();
    }
    if (isinf(d)) {
        r->p = s;
        return number_error(r, "real number out of range");
    }
    *out = json_real(d);
    return *out != NULL ? 0 : icm__error_oom();
}

static int parse_literal(reader *r, const char *word, json_t *(*make)(void), json_t **out)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return syntax_error(r, "invalid literal");
    r->p += n;
    *out = make();
    return *out != NULL ? 0 : icm__error_oom();
}

static json_t *make_true(void)
{
    return json_true();
}

static json_t *make_false(void)
{
    return json_false();
}

static json_t *make_null(void)
{
    return json_null();
}

static int parse_array(reader *r, int depth, json_t *arr)
{
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        json_t *v = NULL;
        int rc = parse_value(r, depth + 1, &v);
        if (rc != 0)
            return rc;
        if (json_array_append_new(arr, v) != 0)
            return icm__error_oom();
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return 0;
        }
        return syntax_error(r, "expected ',' or ']'");
    }
}

static int parse_object(reader *r, int depth, json_t *obj)
{
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        skip_ws(r);
        if (r->p >= r->end || *r->p != '"')
            return syntax_error(r, "expected a string key");
        const char *key_at = r->p;
        int rc = read_string(r);
        if (rc != 0)
            return rc;
        /* keys cannot contain NUL (\u0000 is refused), so the scratch copy is a C string */
        char *key = icm__strndup(r->scratch.data ? r->scratch.data : "", r->scratch.len);
        if (key == NULL)
            return ICM_ENOMEM;
        bool duplicate = json_object_get(obj, key) != NULL;
        if (duplicate && r->lenient == STRICT) {
            r->p = key_at;
            icm__free(key);
            return syntax_error(r, "duplicate object key");
        }
        r->duplicates = r->duplicates || duplicate;
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':') {
            icm__free(key);
            return syntax_error(r, "expected ':'");
        }
        r->p++;
        json_t *v = NULL;
        const char *outer = r->member;
        r->member = key;
        rc = parse_value(r, depth + 1, &v);
        r->member = outer;
        if (rc == 0 && duplicate && r->lenient == LENIENT_FIRST)
            json_decref(v); /* the first value stays */
        else if (rc == 0 && json_object_set_new_nocheck(obj, key, v) != 0)
            rc = icm__error_oom();
        icm__free(key);
        if (rc != 0)
            return rc;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return 0;
        }
        return syntax_error(r, "expected ',' or '}'");
    }
}

static int parse_container(reader *r, int depth, json_t **out, bool is_object)
{
    if (depth >= ICM__JSON_MAX_DEPTH)
        return syntax_error(r, "nested too deeply");
    json_t *c = is_object ? json_object() : json_array();
    if (c == NULL)
        return icm__error_oom();
    int rc = is_object ? parse_object(r, depth, c) : parse_array(r, depth, c);
    if (rc != 0) {
        json_decref(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int parse_value(reader *r, int depth, json_t **out)
{
    *out = NULL;
    skip_ws(r);
    if (r->p >= r->end)
        return syntax_error(r, "unexpected end of input");
    switch (*r->p) {
    case '{': return parse_container(r, depth, out, true);
    case '[': return parse_container(r, depth, out, false);
    case '"': return parse_string(r, out);
    case 't': return parse_literal(r, "true", make_true, out);
    case 'f': return parse_literal(r, "false", make_false, out);
    case 'n': return parse_literal(r, "null", make_null, out);
    case 'N':
        if (r->lenient != STRICT)
            return parse_literal(r, "NaN", make_null, out); /* jansson holds no NaN */
        return syntax_error(r, "unexpected character");
    case 'I':
        if (r->lenient != STRICT)
            return parse_literal(r, "Infinity", make_null, out);
        return syntax_error(r, "unexpected character");
    case '-':
        if (r->lenient != STRICT && r->end - r->p > 1 && r->p[1] == 'I')
            return parse_literal(r, "-Infinity", make_null, out);
        return parse_number(r, out);
    default:
        if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))
            return parse_number(r, out);
        return syntax_error(r, "unexpected character");
    }
}

static int parse_document(const char *text, size_t len, const char *location, int lenient,
                          json_t **out, bool *duplicates)
{
    reader r = {text, text, text + len, text, 1, location, NULL, ICM__BUF_INIT, lenient, false};
    *out = NULL;
    if (lenient != STRICT && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        r.p = r.line_start = text + 3; /* a UTF-8 byte order mark (Jackson skips it) */
    json_t *v = NULL;
    int rc = parse_value(&r, 0, &v);
    if (rc == 0) {
        skip_ws(&r);
        if (r.p != r.end)
            rc = syntax_error(&r, "end of input expected after the document");
    }
    icm__buf_dispose(&r.scratch);
    if (rc != 0) {
        json_decref(v);
        return rc;
    }
    *out = v;
    if (duplicates != NULL)
        *duplicates = r.duplicates;
    return 0;
}

int icm__json_parse(const char *text, size_t len, const char *location, json_t **out)
{
    return parse_document(text, len, location, STRICT, out, NULL);
}

int icm__json_parse_lenient(const char *text, size_t len, const char *location, bool last_wins,
                            json_t **out, bool *duplicates)
{
    bool dummy = false;
    return parse_document(text, len, location, last_wins ? LENIENT_LAST : LENIENT_FIRST, out,
                          duplicates != NULL ? duplicates : &dummy);
}
