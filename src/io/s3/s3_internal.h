/*
 * io/s3/s3_internal.h: the pure parts of the S3 back end (internal), split from the requests
 * so that unit tests and fuzzers reach them without a server: location parsing and URL
 * building (s3_url.c), the XML documents S3 answers with (s3_xml.c), and the retry policy
 * (s3_retry.c).
 */
#ifndef ICM_IO_S3_INTERNAL_H
#define ICM_IO_S3_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/s3/s3_config.h"
#include "util/util.h"

/* ---- locations and URLs (s3_url.c) --------------------------------------------------------- */

/* `s3://bucket/key` (also s3a, s3n; the scheme in any case), split in place: pointers into the
 * location. `base_len` is the length of "scheme://bucket/" (what a listed key is appended to
 * for the listing's locations); key_len may be 0 (the bucket itself). */
typedef struct icm__s3_location {
    const char *bucket;
    size_t bucket_len;
    const char *key;
    size_t key_len;
    size_t base_len;
} icm__s3_location;

/* Returns 0; ICM_EUNSUPPORTED (not an s3/s3a/s3n URI); ICM_EINVALID (no bucket, or a bucket
 * name with a character no S3 bucket name has: letters, digits, `.`, `-` and, for legacy
 * buckets, `_` are allowed; anything else, `@` or `?` among them, could not be sent as
 * that bucket). */
int icm__s3_location_parse(const char *location, icm__s3_location *out);

/* One query parameter, raw (not encoded). */
typedef struct icm__s3_param {
    const char *name;
    const char *value; /* "" for a parameter without a value: sent as `name=` */
} icm__s3_param;

/* The parts of one request's URL, each built once and used both to send and to sign. */
typedef struct icm__s3_url {
    char *url;             /* scheme://host[:port]/path?query */
    char *host;            /* Host header: host[:port] as in the URL */
    char *canonical_uri;   /* the path as sent */
    char *canonical_query; /* sorted, strictly encoded; "" when none */
} icm__s3_url;

/*
 * Build the URL of `key` (len key_len; may be empty) in `bucket` for an endpoint
 * `scheme://host[:port]` with this addressing (a bucket with a dot always goes path style:
 * it cannot match a TLS wildcard certificate), and the parameters (sorted here by name, then
 * value; values encoded strictly, `=` always present). Returns 0, ICM_EINVALID (endpoint not
 * http(s)://host[:port]), ICM_ENOMEM.
 */
int icm__s3_url_build(icm__s3_url *out, const char *endpoint, icm__s3_addressing addressing,
                      const char *bucket, size_t bucket_len, const char *key, size_t key_len,
                      const icm__s3_param *params, size_t n_params);
void icm__s3_url_clear(icm__s3_url *u);

/* ---- XML documents (s3_xml.c) -------------------------------------------------------------- */

typedef struct icm__s3_list_entry {
    char *key;     /* decoded when the page echoed EncodingType=url */
    size_t key_len;
    int64_t size_bytes;   /* -1 when absent or not a number */
    int64_t mtime_ms;     /* -1 when absent or not an ISO 8601 UTC time */
} icm__s3_list_entry;

/* One ListObjectsV2 page. */
typedef struct icm__s3_list_page {
    icm__s3_list_entry *entries;
    size_t n_entries;
    bool is_truncated;
    char *next_token;  /* NULL when absent */
    bool url_encoded;  /* EncodingType=url was echoed (keys were decoded) */
} icm__s3_list_page;

/* Parse a ListBucketResult. Returns 0; ICM_EIO when the document is not one (bad XML, another
 * root, a Contents without Key, a key whose url encoding is broken, a truncated page without a
 * NextContinuationToken); ICM_ENOMEM. *page holds nothing to free on failure. */
int icm__s3_list_parse(const char *xml, size_t len, icm__s3_list_page *page);
void icm__s3_list_page_clear(icm__s3_list_page *page);

/* One <Error> of a DeleteResult. */
typedef struct icm__s3_delete_error {
    char *key;
    char *code;
    char *message;
} icm__s3_delete_error;

typedef struct icm__s3_delete_result {
    icm__s3_delete_error *errors;
    size_t n_errors;
    size_t n_deleted; /* <Deleted> elements (Quiet mode sends none) */
} icm__s3_delete_result;

/* Parse a DeleteResult. Returns 0, ICM_EIO (not a DeleteResult, an <Error> without Key or
 * Code), ICM_ENOMEM. */
int icm__s3_delete_parse(const char *xml, size_t len, icm__s3_delete_result *out);
void icm__s3_delete_result_clear(icm__s3_delete_result *r);

/* An error document's fields (all "" when the body is not an <Error> document). */
typedef struct icm__s3_error_doc {
    char code[64];
    char message[256];
    char request_id[96];
    char bucket[64];
} icm__s3_error_doc;

void icm__s3_error_parse(const char *xml, size_t len, icm__s3_error_doc *out);

/* Append `s` XML-escaped (& < > " ' and, as character references so that no parser normalises
 * them, tab, CR and LF). Returns 0, ICM_ENOMEM. Only call with icm__s3_xml_sendable(s). */
int icm__s3_xml_escape(icm__buf *b, const char *s, size_t len);
/* Whether XML 1.0 can carry `s` (valid UTF-8, no control character but tab, CR and LF). */
bool icm__s3_xml_sendable(const char *s, size_t len);

/* ISO 8601 with optional fraction and Z (`2026-11-30T05:46:58.000Z`) and HTTP-date
 * (`Wed, 12 Oct 2009 17:50:00 GMT`), to ms since the epoch UTC; -1 when not one. */
int64_t icm__s3_parse_iso8601_ms(const char *s);
int64_t icm__s3_parse_http_date_ms(const char *s);

/* ---- retries (s3_retry.c) ------------------------------------------------------------------ */

typedef enum icm__s3_retry {
    ICM__S3_NO_RETRY = 0,
    ICM__S3_RETRY_TRANSIENT, /* 5xx, RequestTimeout, a dropped connection, a broken 200 */
    ICM__S3_RETRY_THROTTLED, /* SlowDown and the throttling codes: also lowers concurrency */
    ICM__S3_RETRY_EXPIRED,   /* ExpiredToken: new credentials, then again */
    ICM__S3_RETRY_SKEWED     /* RequestTimeTooSkewed: correct the clock, then again */
} icm__s3_retry;

/* What to do about an answer: `status` (0 when none arrived: `transport` is then the
 * ICM_ENET/ICM_ETIMEOUT of the send) and the error document's `code` ("" when none). */
icm__s3_retry icm__s3_retry_classify(int status, const char *code, int transport);

/* Full-jitter backoff before retry number `retry` (1 for the first retry): uniform in
 * [0, min(cap_ms, base_ms * 2^(retry-1))], with `rand64` a random number. */
int64_t icm__s3_backoff_ms(unsigned retry, int64_t base_ms, int64_t cap_ms, uint64_t rand64);
#define ICM__S3_BACKOFF_BASE_MS 100
#define ICM__S3_BACKOFF_CAP_MS 20000

/* A random number for jitter (thread-safe; not for secrets). */
uint64_t icm__s3_random(void);

/*
 * AIMD on the requests in flight: at most `limit` at once; SlowDown halves the limit (once per
 * generation: the requests that were already in flight when it was lowered do not lower it
 * again), and every `limit` successes in a row add one, up to `max`; never below 1.
 */
typedef struct icm__s3_limiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned limit, max, in_flight, successes;
    uint64_t generation;
} icm__s3_limiter;

void icm__s3_limiter_init(icm__s3_limiter *l, unsigned max);
void icm__s3_limiter_destroy(icm__s3_limiter *l);
/* Wait for a slot; returns the generation to hand back to release. */
uint64_t icm__s3_limiter_acquire(icm__s3_limiter *l);
/* A slot if one is free now (*generation then set), without waiting: for one thread that
 * drives many requests (the probe batches) and must not block on itself. */
bool icm__s3_limiter_try_acquire(icm__s3_limiter *l, uint64_t *generation);
void icm__s3_limiter_release(icm__s3_limiter *l, uint64_t generation, bool throttled);
/* A request of `generation` that already gave its slot back was throttled after all (a
 * DeleteObjects answered 200 with per-key SlowDown errors): lower the limit as release does. */
void icm__s3_limiter_throttled(icm__s3_limiter *l, uint64_t generation);
unsigned icm__s3_limiter_limit(icm__s3_limiter *l);

#endif /* ICM_IO_S3_INTERNAL_H */
