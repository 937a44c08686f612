/*
 * io/sigv4.c: AWS Signature Version 4 on OpenSSL's EVP SHA-256 and HMAC (implements
 * io/sigv4.h).
 *
 * The canonical request is built from exactly what the caller sends: the path and the query
 * string arrive already encoded and canonical (the S3 back end builds them once, for the URL and
 * for the signature alike), so nothing here re-encodes or normalises them; S3 signs the path as
 * sent. Headers are signed lower-cased, with their values trimmed and inner runs of blanks
 * collapsed to one space, sorted by name (AWS "Create a canonical request"). The signing key
 * is the HMAC chain "AWS4"+secret -> date -> region -> service -> "aws4_request".
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "icemaint/errors.h"
#include "io/sigv4.h"
#include "util/util.h"

#define SIGNED_MAX 24 /* headers signed per request: the callers sign a handful */

static const char HEX[] = "0123456789abcdef";

static void hex_of(const unsigned char *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = HEX[d[i] >> 4];
        out[2 * i + 1] = HEX[d[i] & 15];
    }
    out[2 * n] = '\0';
}

void icm__sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[32];
    unsigned int md_len = 0;
    if (EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) != 1 || md_len != 32) {
        /* EVP_Digest fails only without memory for its context: an empty digest then signs
         * nothing that a server would accept, which the request's answer reports. */
        out[0] = '\0';
        return;
    }
    hex_of(md, 32, out);
}

int icm__sigv4_encode(icm__buf *b, const char *s, size_t len, bool keep_slash)
{
    static const char UHEX[] = "0123456789ABCDEF";
    if (icm__buf_grow(b, len * 3) != 0)
        return ICM_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                          c == '~' || (keep_slash && c == '/');
        if (unreserved) {
            b->data[b->len++] = (char)c;
        } else {
            b->data[b->len++] = '%';
            b->data[b->len++] = UHEX[c >> 4];
            b->data[b->len++] = UHEX[c & 15];
        }
    }
    b->data[b->len] = '\0';
    return 0;
}

/* One header as signed: its name lower-cased and its value trimmed, both in `text`. */
typedef struct signed_header {
    char *name;
    char *value;
} signed_header;

static int cmp_signed_header(const void *a, const void *b)
{
    return strcmp(((const signed_header *)a)->name, ((const signed_header *)b)->name);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Copy name (lower-cased) and value (trimmed, blank runs collapsed) into new strings. */
static int signed_header_make(signed_header *h, const char *name, const char *value)
{
    size_t nl = strlen(name);
    h->name = icm__malloc(nl + 1);
    h->value = icm__malloc(strlen(value) + 1);
    if (h->name == NULL || h->value == NULL) {
        icm__free(h->name);
        icm__free(h->value);
        h->name = h->value = NULL;
        return icm__error_oom();
    }
    for (size_t i = 0; i <= nl; i++) {
        char c = name[i];
        h->name[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    size_t o = 0;
    const char *p = value;
    while (is_blank(*p))
        p++;
    while (*p != '\0') {
        if (is_blank(*p)) {
            while (is_blank(*p))
                p++;
            if (*p != '\0')
                h->value[o++] = ' ';
            continue;
        }
        h->value[o++] = *p++;
    }
    h->value[o] = '\0';
    return 0;
}

static bool hmac(const void *key, size_t key_len, const char *msg, size_t msg_len,
                 unsigned char out[32])
{
    unsigned int out_len = 0;
    return HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, msg_len, out,
                &out_len) != NULL &&
           out_len == 32;
}

/* A header value or name may not carry a line break (it would smuggle another header). */
static bool header_text_ok(const char *s)
{
    return strpbrk(s, "\r\n") == NULL;
}

int icm__sigv4_sign(const icm__sigv4_request *req, const icm__sigv4_credentials *creds,
                    icm__sigv4_signed *out, icm__http_header hdrs[4], size_t *n_hdrs)
{
    *n_hdrs = 0;
    memset(out, 0, sizeof *out);
    if (req->n_headers + 4 > SIGNED_MAX)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "SigV4: %zu headers to sign (at most %d)", req->n_headers,
                              SIGNED_MAX - 4);
    if (strlen(req->payload_sha256_hex) >= sizeof out->content_sha256)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "SigV4: the payload hash is not a hex SHA-256");
    time_t t = (time_t)req->time_s;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 1970)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "SigV4: the clock reads %lld s, not a date to sign with",
                              (long long)req->time_s);
    strftime(out->amz_date, sizeof out->amz_date, "%Y%m%dT%H%M%SZ", &tm);
    char date[9];
    memcpy(date, out->amz_date, 8);
    date[8] = '\0';
    strcpy(out->content_sha256, req->payload_sha256_hex);

    bool token = creds->session_token != NULL && creds->session_token[0] != '\0';
    signed_header sh[SIGNED_MAX];
    size_t n = 0;
    int rc = 0;
    struct {
        const char *name, *value;
    } extra[4] = {{"host", req->host},
                  {"x-amz-content-sha256", out->content_sha256},
                  {"x-amz-date", out->amz_date},
                  {"x-amz-security-token", token ? creds->session_token : NULL}};
    for (size_t i = 0; i < 4 && rc == 0; i++)
        if (extra[i].value != NULL)
            rc = signed_header_make(&sh[n++], extra[i].name, extra[i].value);
    for (size_t i = 0; i < req->n_headers && rc == 0; i++) {
        const icm__http_header *h = &req->headers[i];
        if (!header_text_ok(h->name) || !header_text_ok(h->value) || h->name[0] == '\0') {
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                "SigV4: header \"%s\" has an empty name or a line break",
                                h->name);
            break;
        }
        rc = signed_header_make(&sh[n++], h->name, h->value);
        if (rc == 0)
            for (size_t j = 0; j + 1 < n; j++)
                if (strcmp(sh[j].name, sh[n - 1].name) == 0)
                    rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                        "SigV4: header %s given twice", sh[n - 1].name);
    }
    if (rc != 0)
        goto done;
    if (!header_text_ok(req->host) || (token && !header_text_ok(creds->session_token))) {
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                            "SigV4: the host or session token has a line break");
        goto done;
    }
    qsort(sh, n, sizeof sh[0], cmp_signed_header);

    icm__buf signed_names = ICM__BUF_INIT;
    icm__buf creq = ICM__BUF_INIT;
    icm__buf_printf(&creq, "%s\n%s\n%s\n", req->method, req->canonical_uri,
                    req->canonical_query != NULL ? req->canonical_query : "");
    for (size_t i = 0; i < n; i++) {
        icm__buf_printf(&creq, "%s:%s\n", sh[i].name, sh[i].value);
        icm__buf_printf(&signed_names, "%s%s", i > 0 ? ";" : "", sh[i].name);
    }
    icm__buf_printf(&creq, "\n%s\n%s", signed_names.data != NULL ? signed_names.data : "",
                    req->payload_sha256_hex);
    char creq_hash[65];
    char scope[160];
    int scope_len = snprintf(scope, sizeof scope, "%s/%s/%s/aws4_request", date, req->region,
                             req->service);
    if (creq.oom || signed_names.oom) {
        rc = icm__error_oom();
    } else if (scope_len < 0 || (size_t)scope_len >= sizeof scope) {
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                            "SigV4: region \"%s\" or service \"%s\" is too long", req->region,
                            req->service);
    } else {
        icm__sha256_hex(creq.data, creq.len, creq_hash);
        char sts[256];
        int sts_len = snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", out->amz_date,
                               scope, creq_hash);
        size_t secret_len = strlen(creds->secret_access_key);
        char *k0 = icm__malloc(secret_len + 5);
        unsigned char k[32], sig[32];
        if (k0 == NULL) {
            rc = icm__error_oom();
        } else {
            memcpy(k0, "AWS4", 4);
            memcpy(k0 + 4, creds->secret_access_key, secret_len + 1);
            bool ok = hmac(k0, secret_len + 4, date, 8, k) &&
                      hmac(k, 32, req->region, strlen(req->region), k) &&
                      hmac(k, 32, req->service, strlen(req->service), k) &&
                      hmac(k, 32, "aws4_request", 12, k) &&
                      hmac(k, 32, sts, (size_t)sts_len, sig);
            OPENSSL_cleanse(k0, secret_len + 4);
            OPENSSL_cleanse(k, sizeof k);
            icm__free(k0);
            if (!ok) {
                rc = icm__error_set(ICM_ERRCLASS_S3, ICM_ENOMEM, NULL,
                                    "SigV4: OpenSSL's HMAC failed");
            } else {
                char sig_hex[65];
                hex_of(sig, 32, sig_hex);
                int a = snprintf(out->authorization, sizeof out->authorization,
                                 "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                 "Signature=%s",
                                 creds->access_key_id, scope, signed_names.data, sig_hex);
                if (a < 0 || (size_t)a >= sizeof out->authorization)
                    rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                        "SigV4: the Authorization header would exceed %zu "
                                        "bytes",
                                        sizeof out->authorization - 1);
            }
        }
    }
    icm__buf_dispose(&creq);
    icm__buf_dispose(&signed_names);
    if (rc == 0) {
        hdrs[(*n_hdrs)++] = (icm__http_header){"Authorization", out->authorization};
        hdrs[(*n_hdrs)++] = (icm__http_header){"X-Amz-Date", out->amz_date};
        hdrs[(*n_hdrs)++] = (icm__http_header){"x-amz-content-sha256", out->content_sha256};
        if (token)
            hdrs[(*n_hdrs)++] = (icm__http_header){"X-Amz-Security-Token",
                                                   creds->session_token};
    } else {
        memset(out->authorization, 0, sizeof out->authorization);
    }
done:
    for (size_t i = 0; i < n; i++) {
        icm__free(sh[i].name);
        icm__free(sh[i].value);
    }
    return rc;
}
