/*
 * maint/trash_journal.c: the trash journal's reader (maint/trash.h; the format is
 * icemaint/trash.h's). The writer (trash.c) writes each string with icm_escape_json, so a
 * location that is not UTF-8 comes as `\udcXY` escapes of its raw bytes, which a general JSON
 * parser refuses (lone surrogates): this reader reads exactly the flat objects the writer
 * writes (string and integer members) and gives those escapes back as the bytes they stand
 * for. Anything else is refused with the journal's name and line; a record is never guessed.
 * Fuzzed by fuzz/fuzz_trash_journal.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "maint/trash.h"
#include "util/util.h"

typedef struct reader {
    const char *p, *end;
    const char *name;
    size_t line;
} reader;

static int bad(const reader *r, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, r->name,
                          "trash journal line %zu: %s", r->line, what);
}

static void skip_ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

static int hex4(reader *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return bad(r, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->p++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return bad(r, "bad \\u escape");
    }
    *out = v;
    return 0;
}

static void put_utf8(icm__buf *b, unsigned cp)
{
    if (cp < 0x80) {
        icm__buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        icm__buf_putc(b, (char)(0xC0 | (cp >> 6)));
        icm__buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        icm__buf_putc(b, (char)(0xE0 | (cp >> 12)));
        icm__buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        icm__buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        icm__buf_putc(b, (char)(0xF0 | (cp >> 18)));
        icm__buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        icm__buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        icm__buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* A JSON string at r->p (the opening quote) into *out (new string). `\udcXY` with XY >= 0x80
 * is the raw byte 0xXY (surrogateescape); a NUL, from any escape, is refused (a location holds
 * none). */
static int read_string(reader *r, char **out)
{
    *out = NULL;
    if (r->p >= r->end || *r->p != '"')
        return bad(r, "expected a string");
    r->p++;
    icm__buf b = ICM__BUF_INIT;
    int rc = 0;
    for (;;) {
        if (r->p >= r->end) {
            rc = bad(r, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)*r->p++;
        if (c == '"')
            break;
        if (c < 0x20) {
            rc = bad(r, "control character in a string");
            break;
        }
        if (c != '\\') {
            icm__buf_putc(&b, (char)c);
            continue;
        }
        if (r->p >= r->end) {
            rc = bad(r, "unterminated escape");
            break;
        }
        char e = *r->p++;
        const char *plain = strchr("\"\\/bfnrt", e);
        if (e != '\0' && plain != NULL) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            icm__buf_putc(&b, map[plain - "\"\\/bfnrt"]);
            continue;
        }
        unsigned cp;
        if (e != 'u' || (rc = hex4(r, &cp)) != 0) {
            if (rc == 0)
                rc = bad(r, "unknown escape");
            break;
        }
        if (cp >= 0xDC80 && cp <= 0xDCFF) {
            icm__buf_putc(&b, (char)(cp & 0xFF)); /* an escaped byte that is not UTF-8 */
        } else if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u') {
                rc = bad(r, "high surrogate not followed by a low one");
                break;
            }
            r->p += 2;
            if ((rc = hex4(r, &lo)) != 0)
                break;
            if (lo < 0xDC00 || lo > 0xDFFF) {
                rc = bad(r, "high surrogate not followed by a low one");
                break;
            }
            put_utf8(&b, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
        } else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
            rc = bad(r, cp == 0 ? "NUL in a string" : "lone low surrogate");
            break;
        } else {
            put_utf8(&b, cp);
        }
    }
    if (rc == 0 && b.oom)
        rc = icm__error_oom();
    if (rc == 0 && b.len == 0)
        rc = bad(r, "empty string");
    if (rc != 0) {
        icm__buf_dispose(&b);
        return rc;
    }
    *out = icm__buf_detach(&b, NULL);
    return *out != NULL ? 0 : icm__error_oom();
}

static int read_int(reader *r, int64_t *out)
{
    bool neg = r->p < r->end && *r->p == '-';
    if (neg)
        r->p++;
    if (r->p >= r->end || *r->p < '0' || *r->p > '9')
        return bad(r, "expected an integer");
    if (*r->p == '0' && r->end - r->p > 1 && r->p[1] >= '0' && r->p[1] <= '9')
        return bad(r, "leading zero");
    uint64_t v = 0;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
        unsigned d = (unsigned)(*r->p++ - '0');
        if (v > (UINT64_C(9223372036854775807) - d) / 10)
            return bad(r, "integer out of range");
        v = v * 10 + d;
    }
    if (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E'))
        return bad(r, "expected an integer");
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

static void record_clear(icm__trash_record *rec)
{
    icm__free(rec->table_uuid);
    icm__free(rec->table_location);
    icm__free(rec->original);
    icm__free(rec->trash);
    memset(rec, 0, sizeof *rec);
}

/* One line's object, r->p..r->end being the line. */
static int read_record(reader *r, icm__trash_record *rec)
{
    memset(rec, 0, sizeof *rec);
    enum { F_VERSION = 1, F_UUID = 2, F_LOC = 4, F_ORIG = 8, F_TRASH = 16, F_SIZE = 32,
           F_MTIME = 64, F_AT = 128, F_ALL = 255, F_EVENT = 256, F_RESTORED_AT = 512 };
    unsigned seen = 0;
    int rc = 0;
    skip_ws(r);
    if (r->p >= r->end || *r->p++ != '{')
        return bad(r, "expected an object");
    skip_ws(r);
    bool first = true;
    while (rc == 0) {
        if (r->p < r->end && *r->p == '}' && first) {
            r->p++;
            break;
        }
        char *key = NULL;
        if ((rc = read_string(r, &key)) != 0)
            break;
        skip_ws(r);
        if (r->p >= r->end || *r->p++ != ':') {
            icm__free(key);
            rc = bad(r, "expected ':'");
            break;
        }
        skip_ws(r);
        static const char *const str_keys[] = {"table_uuid", "table_location", "original",
                                               "trash"};
        static const char *const int_keys[] = {"version", "size_bytes", "mtime_ms",
                                               "trashed_at_ms"};
        char **str_slot[] = {&rec->table_uuid, &rec->table_location, &rec->original,
                             &rec->trash};
        int64_t version = 0;
        int64_t *int_slot[] = {&version, &rec->size_bytes, &rec->mtime_ms, &rec->trashed_at_ms};
        static const unsigned str_bit[] = {F_UUID, F_LOC, F_ORIG, F_TRASH};
        static const unsigned int_bit[] = {F_VERSION, F_SIZE, F_MTIME, F_AT};
        bool known = false;
        if (strcmp(key, "event") == 0) {
            char *event = NULL;
            known = true;
            if (seen & F_EVENT)
                rc = bad(r, "a member twice");
            else if ((rc = read_string(r, &event)) == 0 && strcmp(event, "restored") != 0 &&
                     strcmp(event, "trashed") != 0)
                rc = bad(r, "unknown event (this icemaint reads \"trashed\" and \"restored\")");
            if (rc == 0) {
                seen |= F_EVENT;
                rec->restored = strcmp(event, "restored") == 0;
            }
            icm__free(event);
        } else if (strcmp(key, "restored_at_ms") == 0) {
            known = true;
            if (seen & F_RESTORED_AT)
                rc = bad(r, "a member twice");
            else if ((rc = read_int(r, &rec->restored_at_ms)) == 0)
                seen |= F_RESTORED_AT;
        }
        for (size_t k = 0; k < 4 && rc == 0 && !known; k++) {
            if (strcmp(key, str_keys[k]) == 0) {
                known = true;
                if (seen & str_bit[k])
                    rc = bad(r, "a member twice");
                else if ((rc = read_string(r, str_slot[k])) == 0)
                    seen |= str_bit[k];
            } else if (strcmp(key, int_keys[k]) == 0) {
                known = true;
                if (seen & int_bit[k])
                    rc = bad(r, "a member twice");
                else if ((rc = read_int(r, int_slot[k])) == 0)
                    seen |= int_bit[k];
                if (rc == 0 && k == 0 && version != 1)
                    rc = bad(r, "unknown version (this icemaint reads version 1)");
            }
        }
        icm__free(key);
        if (rc == 0 && !known) {
            /* a member a later version adds: a string or an integer, skipped */
            if (r->p < r->end && *r->p == '"') {
                char *skip = NULL;
                rc = read_string(r, &skip);
                icm__free(skip);
            } else {
                int64_t skip;
                rc = read_int(r, &skip);
            }
        }
        if (rc != 0)
            break;
        first = false;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_ws(r);
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            break;
        }
        rc = bad(r, "expected ',' or '}'");
    }
    skip_ws(r);
    if (rc == 0 && r->p != r->end)
        rc = bad(r, "text after the object");
    if (rc == 0 && rec->restored != ((seen & F_RESTORED_AT) != 0))
        rc = bad(r, rec->restored ? "a restored record without restored_at_ms"
                                  : "restored_at_ms in a record that is not a restore");
    if (rc == 0 && !rec->restored)
        rec->restored_at_ms = -1;
    if (rc == 0 && (seen & F_ALL) != F_ALL)
        rc = bad(r, "a member is missing (version, table_uuid, table_location, original, "
                    "trash, size_bytes, mtime_ms, trashed_at_ms)");
    if (rc == 0 && (rec->trashed_at_ms < 0 || rec->size_bytes < -1 || rec->mtime_ms < -1 ||
                    (rec->restored && rec->restored_at_ms < 0)))
        rc = bad(r, "a negative time or size");
    if (rc != 0)
        record_clear(rec);
    return rc;
}

/* Whether [p, end) ends with '}' once trailing blanks are left out. */
static bool ends_with_brace(const char *p, const char *end)
{
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    return end > p && end[-1] == '}';
}

int icm__trash_journal_parse(const char *text, size_t len, const char *name,
                             icm__trash_record **recs, size_t *n, size_t *cap)
{
    reader r = {text, text, name != NULL ? name : "", 0};
    const char *end = text + len;
    while (r.p < end) {
        r.line++;
        const char *nl = memchr(r.p, '\n', (size_t)(end - r.p));
        r.end = nl != NULL ? nl : end;
        const char *q = r.p;
        while (q < r.end && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < r.end) {
            if (*n == *cap) {
                size_t want = *cap > 0 ? *cap * 2 : 16;
                icm__trash_record *grown = icm__reallocarray(*recs, want, sizeof *grown);
                if (grown == NULL)
                    return icm__error_oom();
                *recs = grown;
                *cap = want;
            }
            int rc = read_record(&r, &(*recs)[*n]);
            /* A last line without its newline or its closing brace is a write cut short (a
             * crash, a full disk): records are written before their files move, so its file
             * never moved; it is skipped, and the rest of the trash stays usable. (A whole
             * line that is no record is refused as ever.) */
            if (rc != 0 && nl == NULL && !ends_with_brace(q, r.end)) {
                icm_error_clear();
                break;
            }
            if (rc != 0)
                return rc;
            (*n)++;
        }
        r.p = nl != NULL ? nl + 1 : end;
    }
    return 0;
}

void icm__trash_records_free(icm__trash_record *recs, size_t n)
{
    for (size_t i = 0; recs != NULL && i < n; i++)
        record_clear(&recs[i]);
    icm__free(recs);
}
