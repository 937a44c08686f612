/*
 * io/s3/s3_xml.c: the XML documents of S3's answers (ListBucketResult, DeleteResult, Error) on
 * expat, the escaping of what we send, and S3's two time formats (see s3_internal.h).
 *
 * Parsing is strict where a mistake could lose data: a listing page that is not a complete
 * ListBucketResult is an error (a 200 with broken XML happens, and "empty" would hide
 * objects from the sweep's view of the store, or worse, from the keep set's), and keys are
 * url-decoded only when the page says EncodingType=url (servers that ignore encoding-type send
 * raw keys, in which `%` and `+` are themselves). Element names are matched without their
 * namespace prefix; the documents are small (a page is at most 1,000 keys), so each is parsed
 * whole.
 */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "icemaint/errors.h"
#include "io/s3/s3_internal.h"

#define MAX_DEPTH 8
#define MAX_TEXT (64 * 1024) /* no field of these documents is longer (keys: 1,024 bytes) */

typedef struct xml_walk {
    XML_Parser parser;
    const char *path[MAX_DEPTH]; /* names of the open elements (static strings we know, or "?") */
    int depth;
    icm__buf text;     /* character data of the innermost element */
    bool too_deep;
    bool oom;
    bool bad;          /* the document is not what was expected */
    void (*on_end)(struct xml_walk *w);
    void *doc;
} xml_walk;

/* The names we care about; anything else is "?" (kept so the depth stays right). */
static const char *const NAMES[] = {
    "ListBucketResult", "Contents", "Key", "Size", "LastModified", "IsTruncated",
    "NextContinuationToken", "EncodingType", "DeleteResult", "Deleted", "Error", "Code",
    "Message", "RequestId", "BucketName"};

static const char *local_name(const char *name)
{
    const char *colon = strrchr(name, ':');
    const char *n = colon != NULL ? colon + 1 : name;
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (strcmp(NAMES[i], n) == 0)
            return NAMES[i];
    return "?";
}

static bool at(const xml_walk *w, int depth, const char *a, const char *b, const char *c)
{
    const char *want[3] = {a, b, c};
    if (w->depth != depth)
        return false;
    for (int i = 0; i < depth && i < 3; i++)
        if (want[i] != NULL && strcmp(w->path[i], want[i]) != 0)
            return false;
    return true;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    xml_walk *w = ud;
    if (w->depth >= MAX_DEPTH) {
        w->too_deep = true;
        XML_StopParser(w->parser, XML_FALSE);
        return;
    }
    w->path[w->depth++] = local_name(name);
    icm__buf_clear(&w->text);
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    (void)name;
    xml_walk *w = ud;
    if (w->text.data == NULL && icm__buf_put(&w->text, "", 0) != 0) {
        w->oom = true;
        XML_StopParser(w->parser, XML_FALSE);
        return;
    }
    w->on_end(w);
    if (w->oom || w->bad) {
        XML_StopParser(w->parser, XML_FALSE);
        return;
    }
    w->depth--;
    icm__buf_clear(&w->text);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    xml_walk *w = ud;
    if (w->text.len + (size_t)len > MAX_TEXT) {
        w->bad = true;
        XML_StopParser(w->parser, XML_FALSE);
        return;
    }
    if (icm__buf_put(&w->text, s, (size_t)len) != 0) {
        w->oom = true;
        XML_StopParser(w->parser, XML_FALSE);
    }
}

/* Parse `xml` with on_end collecting into doc. Returns 0, ICM_EIO (not well-formed, or `bad`),
 * ICM_ENOMEM. `root` is the document element the caller expects. */
static int walk(const char *xml, size_t len, void (*cb)(xml_walk *), void *doc, const char *what)
{
    xml_walk w;
    memset(&w, 0, sizeof w);
    w.text = (icm__buf)ICM__BUF_INIT;
    w.on_end = cb;
    w.doc = doc;
    XML_Memory_Handling_Suite mem = {icm__malloc, icm__realloc, icm__free};
    w.parser = XML_ParserCreate_MM("UTF-8", &mem, NULL);
    if (w.parser == NULL)
        return icm__error_oom();
    XML_SetUserData(w.parser, &w);
    XML_SetElementHandler(w.parser, on_start, on_end);
    XML_SetCharacterDataHandler(w.parser, on_text);
    /* Documents from a server are never allowed to pull in anything: no external entities,
     * and expat's own limits on entity expansion apply. */
    XML_SetParamEntityParsing(w.parser, XML_PARAM_ENTITY_PARSING_NEVER);
    enum XML_Status st = XML_STATUS_OK;
    const size_t chunk = 1u << 30;
    size_t off = 0;
    do {
        size_t n = len - off > chunk ? chunk : len - off;
        st = XML_Parse(w.parser, xml + off, (int)n, off + n == len);
        off += n;
    } while (st == XML_STATUS_OK && off < len);
    if (len == 0)
        st = XML_Parse(w.parser, "", 0, 1);
    int rc = 0;
    if (w.oom || (st != XML_STATUS_OK && XML_GetErrorCode(w.parser) == XML_ERROR_NO_MEMORY)) {
        rc = icm__error_oom();
    } else if (st != XML_STATUS_OK || w.bad || w.too_deep) {
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                            "S3 answered with a broken %s document (%s at line %lu)", what,
                            w.bad || w.too_deep ? "unexpected content"
                                                : XML_ErrorString(XML_GetErrorCode(w.parser)),
                            (unsigned long)XML_GetCurrentLineNumber(w.parser));
    }
    XML_ParserFree(w.parser);
    icm__buf_dispose(&w.text);
    return rc;
}

/* ---- decoding and numbers ------------------------------------------------------------------- */

static bool parse_int64(const char *s, int64_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    int64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (INT64_MAX - (*s - '0')) / 10)
            return false;
        v = v * 10 + (*s - '0');
    }
    if (*s != '\0')
        return false;
    *out = v;
    return true;
}

/* Fixed-width digits of s[0..n) into *out. */
static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int64_t tm_to_ms(int year, int mon, int day, int h, int m, int sec, int ms)
{
    if (year < 1970 || year > 9999 || mon < 1 || mon > 12 || day < 1 || day > 31 || h > 23 ||
        m > 59 || sec > 60)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || tm.tm_mday != day) /* 31 April and the like roll over: refuse */
        return -1;
    return (int64_t)t * 1000 + ms;
}

int64_t icm__s3_parse_iso8601_ms(const char *s)
{
    int y, mo, d, h, mi, se, ms = 0;
    if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &se))
        return -1;
    const char *p = s + 19;
    if (*p == '.') {
        p++;
        int nd = 0, v = 0;
        while (*p >= '0' && *p <= '9') {
            if (nd < 3)
                v = v * 10 + (*p - '0');
            nd++;
            p++;
        }
        if (nd == 0)
            return -1;
        for (int i = nd; i < 3; i++)
            v *= 10;
        ms = v;
    }
    if (strcmp(p, "Z") != 0 && strcmp(p, "z") != 0 && strcmp(p, "+00:00") != 0 &&
        strcmp(p, "-00:00") != 0)
        return -1;
    return tm_to_ms(y, mo, d, h, mi, se, ms);
}

int64_t icm__s3_parse_http_date_ms(const char *s)
{
    static const char MONTHS[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7; the form S3 sends) */
    int d, y, h, mi, se;
    if (strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || !digits(s + 5, 2, &d) ||
        s[7] != ' ' || s[11] != ' ' || !digits(s + 12, 4, &y) || s[16] != ' ' ||
        !digits(s + 17, 2, &h) || s[19] != ':' || !digits(s + 20, 2, &mi) || s[22] != ':' ||
        !digits(s + 23, 2, &se) || strcmp(s + 25, " GMT") != 0)
        return -1;
    int mo = 0;
    for (int i = 0; i < 12; i++)
        if (memcmp(s + 8, MONTHS + 3 * i, 3) == 0)
            mo = i + 1;
    if (mo == 0)
        return -1;
    return tm_to_ms(y, mo, d, h, mi, se, 0);
}

/* ---- ListBucketResult ----------------------------------------------------------------------- */

typedef struct list_doc {
    icm__s3_list_page *page;
    size_t cap;
    icm__s3_list_entry cur;
    bool cur_has_key;
    bool root_seen;
    char *encoding;
    char *truncated;
} list_doc;

static char *take_text(xml_walk *w, size_t *len)
{
    size_t l = w->text.len;
    char *s = icm__buf_detach(&w->text, len);
    if (s == NULL && l == 0)
        s = icm__strdup("");
    if (s == NULL)
        w->oom = true;
    return s;
}

static void list_on_end(xml_walk *w)
{
    list_doc *d = w->doc;
    icm__s3_list_page *p = d->page;
    if (w->depth == 1) {
        if (strcmp(w->path[0], "ListBucketResult") != 0)
            w->bad = true;
        d->root_seen = true;
    } else if (at(w, 2, "ListBucketResult", "Contents", NULL)) {
        if (!d->cur_has_key) {
            w->bad = true;
            return;
        }
        if (p->n_entries == d->cap) {
            size_t cap = d->cap != 0 ? d->cap * 2 : 64;
            icm__s3_list_entry *e = icm__reallocarray(p->entries, cap, sizeof *e);
            if (e == NULL) {
                w->oom = true;
                return;
            }
            p->entries = e;
            d->cap = cap;
        }
        p->entries[p->n_entries++] = d->cur;
        memset(&d->cur, 0, sizeof d->cur);
        d->cur.size_bytes = d->cur.mtime_ms = -1;
        d->cur_has_key = false;
    } else if (at(w, 3, "ListBucketResult", "Contents", "Key")) {
        if (d->cur_has_key) {
            w->bad = true;
            return;
        }
        d->cur.key = take_text(w, &d->cur.key_len);
        d->cur_has_key = d->cur.key != NULL;
    } else if (at(w, 3, "ListBucketResult", "Contents", "Size")) {
        if (!parse_int64(w->text.data, &d->cur.size_bytes))
            d->cur.size_bytes = -1;
    } else if (at(w, 3, "ListBucketResult", "Contents", "LastModified")) {
        d->cur.mtime_ms = icm__s3_parse_iso8601_ms(w->text.data);
    } else if (at(w, 2, "ListBucketResult", "IsTruncated", NULL)) {
        icm__free(d->truncated);
        d->truncated = take_text(w, NULL);
    } else if (at(w, 2, "ListBucketResult", "NextContinuationToken", NULL)) {
        icm__free(p->next_token);
        p->next_token = take_text(w, NULL);
    } else if (at(w, 2, "ListBucketResult", "EncodingType", NULL)) {
        icm__free(d->encoding);
        d->encoding = take_text(w, NULL);
    }
}

void icm__s3_list_page_clear(icm__s3_list_page *page)
{
    for (size_t i = 0; i < page->n_entries; i++)
        icm__free(page->entries[i].key);
    icm__free(page->entries);
    icm__free(page->next_token);
    memset(page, 0, sizeof *page);
}

int icm__s3_list_parse(const char *xml, size_t len, icm__s3_list_page *page)
{
    memset(page, 0, sizeof *page);
    list_doc d;
    memset(&d, 0, sizeof d);
    d.page = page;
    d.cur.size_bytes = d.cur.mtime_ms = -1;
    int rc = walk(xml, len, list_on_end, &d, "ListBucketResult");
    icm__free(d.cur.key);
    if (rc == 0 && !d.root_seen)
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                            "S3 answered a listing without a ListBucketResult");
    if (rc == 0) {
        if (d.truncated == NULL ||
            (strcmp(d.truncated, "true") != 0 && strcmp(d.truncated, "false") != 0))
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                                "S3 listing page without IsTruncated true or false");
        else
            page->is_truncated = strcmp(d.truncated, "true") == 0;
    }
    if (rc == 0 && page->is_truncated && (page->next_token == NULL || page->next_token[0] == 0))
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                            "S3 listing page is truncated but has no NextContinuationToken");
    /* An empty <EncodingType/> (versitygw 1.8 sends one while ignoring encoding-type) says
     * nothing was encoded, as an absent one does. */
    if (rc == 0 && d.encoding != NULL && d.encoding[0] != '\0') {
        if (strcmp(d.encoding, "url") != 0) {
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                                "S3 listing in EncodingType \"%s\" (only url is known)",
                                d.encoding);
        } else {
            page->url_encoded = true;
            for (size_t i = 0; i < page->n_entries && rc == 0; i++)
                if (!icm__url_form_decode(page->entries[i].key, &page->entries[i].key_len))
                    rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                                        "S3 listing: key \"%s\" is not url-encoded",
                                        page->entries[i].key);
        }
    }
    for (size_t i = 0; i < page->n_entries && rc == 0; i++)
        if (memchr(page->entries[i].key, '\0', page->entries[i].key_len) != NULL ||
            page->entries[i].key_len == 0)
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                                "S3 listing: an empty key or a key with a NUL byte");
    icm__free(d.encoding);
    icm__free(d.truncated);
    if (rc != 0)
        icm__s3_list_page_clear(page);
    return rc;
}

/* ---- DeleteResult --------------------------------------------------------------------------- */

typedef struct delete_doc {
    icm__s3_delete_result *r;
    size_t cap;
    icm__s3_delete_error cur;
    bool root_seen;
} delete_doc;

static void delete_on_end(xml_walk *w)
{
    delete_doc *d = w->doc;
    if (w->depth == 1) {
        if (strcmp(w->path[0], "DeleteResult") != 0)
            w->bad = true;
        d->root_seen = true;
    } else if (at(w, 2, "DeleteResult", "Deleted", NULL)) {
        d->r->n_deleted++;
    } else if (at(w, 2, "DeleteResult", "Error", NULL)) {
        if (d->cur.key == NULL || d->cur.code == NULL) {
            w->bad = true;
            return;
        }
        if (d->r->n_errors == d->cap) {
            size_t cap = d->cap != 0 ? d->cap * 2 : 16;
            icm__s3_delete_error *e = icm__reallocarray(d->r->errors, cap, sizeof *e);
            if (e == NULL) {
                w->oom = true;
                return;
            }
            d->r->errors = e;
            d->cap = cap;
        }
        d->r->errors[d->r->n_errors++] = d->cur;
        memset(&d->cur, 0, sizeof d->cur);
    } else if (w->depth == 3 && strcmp(w->path[0], "DeleteResult") == 0 &&
               strcmp(w->path[1], "Error") == 0) {
        char **field = NULL;
        if (strcmp(w->path[2], "Key") == 0)
            field = &d->cur.key;
        else if (strcmp(w->path[2], "Code") == 0)
            field = &d->cur.code;
        else if (strcmp(w->path[2], "Message") == 0)
            field = &d->cur.message;
        if (field != NULL) {
            if (*field != NULL) {
                w->bad = true;
                return;
            }
            *field = take_text(w, NULL);
        }
    }
}

static void delete_error_clear(icm__s3_delete_error *e)
{
    icm__free(e->key);
    icm__free(e->code);
    icm__free(e->message);
    memset(e, 0, sizeof *e);
}

void icm__s3_delete_result_clear(icm__s3_delete_result *r)
{
    for (size_t i = 0; i < r->n_errors; i++)
        delete_error_clear(&r->errors[i]);
    icm__free(r->errors);
    memset(r, 0, sizeof *r);
}

int icm__s3_delete_parse(const char *xml, size_t len, icm__s3_delete_result *out)
{
    memset(out, 0, sizeof *out);
    delete_doc d;
    memset(&d, 0, sizeof d);
    d.r = out;
    int rc = walk(xml, len, delete_on_end, &d, "DeleteResult");
    delete_error_clear(&d.cur);
    if (rc == 0 && !d.root_seen)
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                            "S3 answered DeleteObjects without a DeleteResult");
    if (rc != 0)
        icm__s3_delete_result_clear(out);
    return rc;
}

/* ---- Error ---------------------------------------------------------------------------------- */

static void copy_field(char *dst, size_t cap, const icm__buf *text)
{
    size_t n = text->len < cap - 1 ? text->len : cap - 1;
    if (n > 0)
        memcpy(dst, text->data, n);
    dst[n] = '\0';
    /* one line: a server's message is shown in ours */
    for (size_t i = 0; i < n; i++)
        if (dst[i] == '\n' || dst[i] == '\r' || dst[i] == '\t')
            dst[i] = ' ';
}

static void error_on_end(xml_walk *w)
{
    icm__s3_error_doc *e = w->doc;
    if (w->depth != 2 || strcmp(w->path[0], "Error") != 0)
        return;
    if (strcmp(w->path[1], "Code") == 0)
        copy_field(e->code, sizeof e->code, &w->text);
    else if (strcmp(w->path[1], "Message") == 0)
        copy_field(e->message, sizeof e->message, &w->text);
    else if (strcmp(w->path[1], "RequestId") == 0)
        copy_field(e->request_id, sizeof e->request_id, &w->text);
    else if (strcmp(w->path[1], "BucketName") == 0)
        copy_field(e->bucket, sizeof e->bucket, &w->text);
}

void icm__s3_error_parse(const char *xml, size_t len, icm__s3_error_doc *out)
{
    memset(out, 0, sizeof *out);
    if (xml == NULL || len == 0)
        return;
    icm__error_saved *saved = icm__error_save();
    if (walk(xml, len, error_on_end, out, "Error") != 0)
        memset(out, 0, sizeof *out); /* not an error document: the status says it all */
    icm__error_restore(saved);
}

/* ---- what we send --------------------------------------------------------------------------- */

bool icm__s3_xml_sendable(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return false;
    }
    return icm__utf8_valid(s, len);
}

int icm__s3_xml_escape(icm__buf *b, const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        case '\t': rep = "&#9;"; break;
        case '\n': rep = "&#10;"; break;
        case '\r': rep = "&#13;"; break;
        default: break;
        }
        if (rep != NULL) {
            icm__buf_put(b, s + start, i - start);
            icm__buf_puts(b, rep);
            start = i + 1;
        }
    }
    icm__buf_put(b, s + start, len - start);
    return b->oom ? ICM_ENOMEM : 0;
}
