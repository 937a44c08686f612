/*
 * io/sigv4.h: AWS Signature Version 4 (internal), for S3 requests, STS and (later) REST
 * catalogs with `rest.sigv4-enabled`.
 *
 * Written by hand on OpenSSL (EVP digests and HMAC) rather than libcurl's CURLOPT_AWS_SIGV4:
 * Debian 12's curl 7.88 signs the query as written, signs `?delete` without `=`, adds no
 * x-amz-content-sha256 and re-canonicalises differently in later versions, so the one
 * canonicaliser here builds both the URL that is sent and the string that is signed, and
 * signing is the same whatever curl the library runs on. S3's rule: the canonical URI is the
 * path as sent, neither normalised nor encoded twice.
 */
#ifndef ICM_IO_SIGV4_H
#define ICM_IO_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "io/http.h"
#include "util/util.h"

/* Append `s[0..len)` to b, percent-encoded as SigV4 and S3 want: unreserved characters
 * (A-Z a-z 0-9 - . _ ~) as they are, every other byte as %XX with upper-case hex; `/` kept
 * when keep_slash (a key in a path), encoded otherwise (a query value). Returns 0 or
 * ICM_ENOMEM. */
int icm__sigv4_encode(icm__buf *b, const char *s, size_t len, bool keep_slash);

typedef struct icm__sigv4_credentials {
    const char *access_key_id;
    const char *secret_access_key;
    const char *session_token; /* NULL or "": none (else sent as X-Amz-Security-Token) */
} icm__sigv4_credentials;

typedef struct icm__sigv4_request {
    const char *method;
    const char *host;           /* the Host header's value (with :port when not default) */
    const char *canonical_uri;  /* the path as sent, already encoded */
    const char *canonical_query; /* sorted, encoded `k=v&k2=v2` ("" when none); also sent */
    const icm__http_header *headers; /* the other headers to send and sign (x-amz-*, ...) */
    size_t n_headers;
    const char *payload_sha256_hex; /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *region;
    const char *service;        /* "s3", "sts", "execute-api", "glue" */
    int64_t time_s;             /* seconds since the epoch (the clock, skew-corrected) */
} icm__sigv4_request;

/* What signing adds to a request. `authorization` has room for the longest credential scope
 * and signed-header list the callers build (they sign a handful of headers). */
typedef struct icm__sigv4_signed {
    char authorization[1024];
    char amz_date[17];          /* YYYYMMDD'T'HHMMSS'Z' */
    char content_sha256[65];    /* as given in the request */
} icm__sigv4_signed;

/*
 * Sign `req`: fill *out, and write into hdrs[0..*n_hdrs) the headers to add to the request
 * (Authorization, X-Amz-Date, x-amz-content-sha256 and, with a session token,
 * X-Amz-Security-Token), pointing into *out and creds. hdrs must have room for 4.
 * Returns 0; ICM_EINVALID when the request does not fit (the message says what);
 * ICM_ENOMEM.
 */
int icm__sigv4_sign(const icm__sigv4_request *req, const icm__sigv4_credentials *creds,
                    icm__sigv4_signed *out, icm__http_header hdrs[4], size_t *n_hdrs);

/* Hex SHA-256 of data (65 bytes with the NUL). */
void icm__sha256_hex(const void *data, size_t len, char out[65]);

#endif /* ICM_IO_SIGV4_H */
