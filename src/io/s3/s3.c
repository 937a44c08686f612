/*
 * io/s3/s3.c: the S3 FileIO back end (icm_fileio_s3_new; the resolving FileIO's built-in for
 * `s3`, `s3a` and `s3n`).
 *
 * Every storage call is one or more signed HTTP requests through s3_call(), which owns what all
 * of them share: the URL and canonical query built once (s3_url.c), x-amz-content-sha256 on
 * every request, SigV4 with the clock corrected by what the server's Date said when it
 * complained of skew, credentials from the provider chain (refreshed when S3 says they
 * expired), the bucket's region when S3 says it is not the configured one, the in-flight limit (AIMD: halved by SlowDown), and retries with full-jitter
 * backoff within the configured attempts and total time, for idempotent requests. A
 * create-new is a conditional PUT, retried by its own rules (s3_create_new): whenever an
 * attempt may have written the object, a later 412 is settled by reading the object back and
 * comparing it with what we sent, never taken for someone else's object on trust.
 *
 * Listings are ListObjectsV2 pages (list-type=2, encoding-type=url) of the location's key plus
 * `/`, started after opts->start_after and stopped at opts->end_before, each key reported with
 * the size and LastModified the page carries, so a sweep needs no HEAD per object. Keys are
 * exact bytes throughout: strict encoding, the path sent as is, listings decoded only when the
 * server says it encoded them. Deletes in batches are DeleteObjects (Quiet, Content-MD5 always),
 * and a key S3 names in an <Error> is that item's failure; every other key of the batch is gone.
 *
 * Many small independent reads (the checks' HEADs and 16-byte ranged GETs, io/probe.h) go out
 * as a batch from the calling thread: libcurl multi with up to s3.check.max-in-flight transfers
 * (a limiter of the batch's own halves it on SlowDown), each item driven through the same
 * attempts as s3_call (call_begin, call_after_attempt, call_end), so signing, credentials,
 * retries and errors are the single request's.
 *
 * All state shared between threads is either read-only after construction (configuration), or
 * thread-safe by itself (the HTTP client, the credential provider, the limiter, the clock
 * offset): manifest readers and the delete engine call in from many threads at once.
 */
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "icemaint/errors.h"
#include "icemaint/sys/fileio.h"
#include "io/fileio_internal.h"
#include "io/fileio_refresh.h"
#include "io/http.h"
#include "io/probe.h"
#include "io/s3/s3_config.h"
#include "io/s3/s3_internal.h"
#include "io/sigv4.h"
#include "util/util.h"

typedef struct s3_fileio {
    icm_fileio base;
    icm__s3_config cfg;
    icm__http *http;
    icm__aws_creds_provider *creds; /* NULL: anonymous (unsigned requests) */
    icm__s3_limiter limiter;
    _Atomic int64_t skew_ms; /* the server's clock minus ours, learnt from RequestTimeTooSkewed */
    /* Buckets S3 said live in another region than the configured one (x-amz-bucket-region on
     * a PermanentRedirect or AuthorizationHeaderMalformed): their region and, on AWS's own
     * endpoints, that region's endpoint. Only ever appended to, under region_lock; the strings
     * live until the back end is freed. */
    pthread_mutex_t region_lock;
    struct bucket_region {
        char *bucket, *region, *endpoint;
    } *regions;
    size_t n_regions, cap_regions;
    /* An endpoint no connection could be made to on any attempt of a request (its host does
     * not resolve, or it refused every connection): a wrong endpoint, so the requests that
     * follow within UNREACHABLE_MEMORY_MS fail at once with the same message instead of each
     * going through its attempts (a check of 10,000 files would otherwise wait 10,000 times).
     * Under region_lock. */
    char *unreachable_endpoint;
    char unreachable_why[512];
    int64_t unreachable_until_ms;
} s3_fileio;

/* How many attempts a request gets when the endpoint's host name does not resolve: one more
 * than none, for a resolver that failed once; a name that is not there stays not there. */
#define RESOLVE_ATTEMPTS 2u
/* How long an unreachable endpoint is remembered (see s3_fileio). */
#define UNREACHABLE_MEMORY_MS INT64_C(60000)

static const icm_fileio_methods s3_methods;

/* The most this back end corrects its clock by to match a store's (RequestTimeTooSkewed): an
 * hour, well inside the sweep's minimum window of 24 h. */
#define MAX_CLOCK_CORRECTION_MS INT64_C(3600000)

static const char EMPTY_SHA256[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/* ---- one request, with signing and retries ------------------------------------------------- */

typedef struct s3_op {
    const char *what;     /* "GET", "create-new PUT", ... for messages */
    const char *location; /* named in errors */
    const char *method;
    const icm__s3_location *loc;
    bool bucket_only; /* the bucket's URL (listing, DeleteObjects), not the key's */
    const icm__s3_param *params;
    size_t n_params;
    const icm__http_header *headers; /* signed too */
    size_t n_headers;
    const void *body;
    size_t body_len;
    void *sink;
    size_t sink_cap;
    /* May the request be sent again after it may have reached the server? */
    bool idempotent;
    /* On a 2xx: check the body (parse it); ICM_EIO means a broken answer, retried like a 5xx
     * for idempotent requests (S3 documents 200s with broken XML). */
    int (*check)(const icm__http_response *resp, void *ctx);
    void *check_ctx;
    /* NULL, or where to keep the limiter generation of the last attempt */
    uint64_t *generation;
    /* A delete the caller checked right before it and retries itself, checking again
     * (DeleteObjects, DELETE: the delete engine): never sent again here after a wait, in which
     * a writer may have put a new object at the key (adversary round 16, F3). */
    bool checked_by_caller;
} s3_op;

static void sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Code of an error answer (from the XML body; HEAD has none) and its request id. */
static void answer_details(const icm__http_response *resp, icm__s3_error_doc *doc)
{
    icm__s3_error_parse(resp->body, resp->body_len, doc);
    if (doc->request_id[0] == '\0') {
        char *rid = NULL;
        if (icm__http_response_header(resp, "x-amz-request-id", &rid) == 0 && rid != NULL) {
            snprintf(doc->request_id, sizeof doc->request_id, "%s", rid);
            icm__free(rid);
        }
    }
}

static bool is_auth_code(const char *code)
{
    static const char *const AUTH[] = {"AccessDenied", "SignatureDoesNotMatch",
                                       "InvalidAccessKeyId", "ExpiredToken", "InvalidToken",
                                       "AllAccessDisabled", "AuthorizationHeaderMalformed",
                                       "InvalidSecurity", "TokenRefreshRequired",
                                       /* versitygw's answer for an unknown access key (a 404) */
                                       "XAdminUserNotFound"};
    for (size_t i = 0; i < sizeof AUTH / sizeof AUTH[0]; i++)
        if (strcmp(code, AUTH[i]) == 0)
            return true;
    return false;
}

/* Set the last error for an HTTP answer that is a failure and return its icm code. */
static int answer_error(const s3_op *op, const icm__http_response *resp)
{
    icm__s3_error_doc doc;
    answer_details(resp, &doc);
    int st = resp->status;
    int code = ICM_EIO;
    char what[160] = "";
    if (strcmp(doc.code, "NoSuchBucket") == 0) {
        code = ICM_ENOTFOUND;
        snprintf(what, sizeof what, "bucket %.*s does not exist", (int)op->loc->bucket_len,
                 op->loc->bucket);
    } else if (strcmp(doc.code, "NoSuchKey") == 0 ||
               (st == 404 && doc.code[0] == '\0' && strcmp(op->method, "HEAD") == 0)) {
        /* Missing only when S3 says so: NoSuchKey, or a bodiless 404 to a HEAD (which carries
         * no error document). A 404 with another code, or a GET's 404 without one, is not "the
         * object is gone": read as that, a refusal would pass for a file already deleted. */
        code = ICM_ENOTFOUND;
        snprintf(what, sizeof what, "no such object");
    } else if (is_auth_code(doc.code) || st == 401 || st == 403) {
        code = ICM_EAUTH;
        snprintf(what, sizeof what, "access refused");
    } else if (st == 404 && doc.code[0] == '\0') {
        snprintf(what, sizeof what, "HTTP 404 without an S3 error code (is the endpoint an S3 "
                                    "server?)");
    } else if (st == 412) {
        code = ICM_EEXISTS;
        snprintf(what, sizeof what, "the object exists");
    } else if (strcmp(doc.code, "InvalidBucketName") == 0) {
        code = ICM_EINVALID;
        snprintf(what, sizeof what, "invalid bucket name");
    } else {
        snprintf(what, sizeof what, "failed");
    }
    char rid[128] = "";
    if (doc.request_id[0] != '\0')
        snprintf(rid, sizeof rid, "; request id %s", doc.request_id);
    int rc = icm__error_set(ICM_ERRCLASS_S3, code, op->location, "S3 %s: %s%s%s%s%s%s%s",
                            op->what, what, doc.code[0] != '\0' ? " (" : "", doc.code,
                            doc.message[0] != '\0' ? ": " : "", doc.message,
                            doc.code[0] != '\0' ? ")" : "", rid);
    icm__error_set_http_status(st);
    if (doc.code[0] != '\0')
        icm__error_set_remote_code(doc.code);
    return rc;
}

/* The Date header of an answer as ms since the epoch, or -1. */
static int64_t answer_date_ms(const icm__http_response *resp)
{
    char *date = NULL;
    if (icm__http_response_header(resp, "Date", &date) != 0 || date == NULL)
        return -1;
    int64_t t = icm__s3_parse_http_date_ms(date);
    icm__free(date);
    return t;
}

/* The endpoint and region to use for `bucket` (borrowed: they live as long as s). */
static void bucket_region(s3_fileio *s, const icm__s3_location *loc, const char **endpoint,
                          const char **region)
{
    *endpoint = s->cfg.endpoint;
    *region = s->cfg.region;
    pthread_mutex_lock(&s->region_lock);
    for (size_t i = 0; i < s->n_regions; i++) {
        const struct bucket_region *r = &s->regions[i];
        if (strlen(r->bucket) == loc->bucket_len &&
            memcmp(r->bucket, loc->bucket, loc->bucket_len) == 0) {
            *endpoint = r->endpoint;
            *region = r->region;
        }
    }
    pthread_mutex_unlock(&s->region_lock);
}

/* S3 answered that the bucket lives in `region` (not `used`): remember it. Returns whether the
 * request should go again (a region we have not tried, that looks like one). */
static bool bucket_moved(s3_fileio *s, const icm__s3_location *loc, const char *region,
                         const char *used)
{
    size_t rl = strlen(region);
    if (rl == 0 || rl > 32 || strcmp(region, used) == 0)
        return false;
    for (size_t i = 0; i < rl; i++)
        if (!((region[i] >= 'a' && region[i] <= 'z') || (region[i] >= '0' && region[i] <= '9') ||
              region[i] == '-'))
            return false;
    struct bucket_region r = {icm__strndup(loc->bucket, loc->bucket_len), icm__strdup(region),
                              NULL};
    /* AWS's own endpoint is per region; a custom endpoint stays (only the signature's region
     * changes) */
    r.endpoint = s->cfg.endpoint_is_custom
                     ? icm__strdup(s->cfg.endpoint)
                     : icm__sprintf("https://s3.%s.%s", region,
                                    strncmp(region, "cn-", 3) == 0 ? "amazonaws.com.cn"
                                                                   : "amazonaws.com");
    bool added = false;
    pthread_mutex_lock(&s->region_lock);
    if (r.bucket != NULL && r.region != NULL && r.endpoint != NULL) {
        if (s->n_regions == s->cap_regions) {
            size_t cap = s->cap_regions != 0 ? s->cap_regions * 2 : 4;
            struct bucket_region *a = icm__reallocarray(s->regions, cap, sizeof *a);
            if (a != NULL) {
                s->regions = a;
                s->cap_regions = cap;
            }
        }
        if (s->n_regions < s->cap_regions) {
            s->regions[s->n_regions++] = r;
            added = true;
        }
    }
    pthread_mutex_unlock(&s->region_lock);
    if (!added) {
        icm__free(r.bucket);
        icm__free(r.region);
        icm__free(r.endpoint);
    }
    return added;
}

/* One attempt's request, signed: what the HTTP request points into (the credentials, the
 * signature, the headers) lives here until the attempt is over. */
typedef struct signed_request {
    icm__aws_credentials creds;
    icm__sigv4_signed sig;
    icm__http_header hdrs[24];
    icm__http_request req;
} signed_request;

static void signed_request_clear(signed_request *r)
{
    icm__aws_credentials_clear(&r->creds);
    memset(&r->sig, 0, sizeof r->sig);
}

/* Sign op for one attempt with the current credentials (renewed before they expire) and
 * clock, into *out (clear it afterwards, also on failure). */
static int sign_request(s3_fileio *s, const s3_op *op, const icm__s3_url *url,
                        const char *region, const char *payload_hash, signed_request *out)
{
    memset(out, 0, sizeof *out);
    icm__http_header *hdrs = out->hdrs;
    size_t n = 0;
    if (op->n_headers + 5 > sizeof out->hdrs / sizeof out->hdrs[0])
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, op->location,
                              "S3 %s: too many headers", op->what);
    for (size_t i = 0; i < op->n_headers; i++)
        hdrs[n++] = op->headers[i];
    int rc = 0;
    if (s->creds != NULL) {
        bool waited = false;
        rc = icm__aws_creds_get_ex(s->creds, &out->creds, &waited);
        if (rc != 0) {
            if (icm_error_last()->location[0] == '\0')
                icm__error_set_location(op->location);
            return rc;
        }
        if (waited && op->checked_by_caller) {
            /* Renewing took as long as the credentials' source (a catalog) took: the delete
             * engine's checks may be stale now, so the delete goes back to it unsent, to be
             * checked again (adversary round 18, F1); it is sent with the new credentials. */
            return icm__error_set(ICM_ERRCLASS_S3, ICM_ETIMEOUT, op->location,
                                  "S3 %s: not sent: the credentials were renewed first, so it "
                                  "goes back to be checked again",
                                  op->what);
        }
        icm__sigv4_request sreq = {op->method,
                                   url->host,
                                   url->canonical_uri,
                                   url->canonical_query,
                                   op->headers,
                                   op->n_headers,
                                   payload_hash,
                                   region,
                                   "s3",
                                   (icm__now_ms() + atomic_load(&s->skew_ms)) / 1000};
        icm__sigv4_credentials sc = {out->creds.access_key_id, out->creds.secret_access_key,
                                     out->creds.session_token};
        size_t n_sig = 0;
        rc = icm__sigv4_sign(&sreq, &sc, &out->sig, hdrs + n, &n_sig);
        n += n_sig;
    } else {
        hdrs[n++] = (icm__http_header){"x-amz-content-sha256", payload_hash};
    }
    out->req = (icm__http_request){op->method, url->url, hdrs,          n,
                                   op->body,   op->body_len, op->sink, op->sink_cap, 0, false};
    return rc;
}

/* A transport failure of op's attempt, named by the object and by where it was sent (a wrong
 * endpoint is the usual cause of a connection that fails). */
static void name_transport_failure(const s3_op *op, const icm__s3_url *url, int rc)
{
    char why[256];
    snprintf(why, sizeof why, "%s", icm_error_last()->message);
    icm__error_set(ICM_ERRCLASS_S3, rc, op->location, "S3 %s to %s: %s", op->what, url->host,
                   why);
}

/* Send op once: sign with the current credentials and clock, and wait for its answer;
 * *expires_at_ms: when the credentials it was signed with expire (0: never, or unsigned). */
static int send_once(s3_fileio *s, const s3_op *op, const icm__s3_url *url, const char *region,
                     const char *payload_hash, icm__http_response *resp, int64_t *expires_at_ms)
{
    signed_request r;
    int rc = sign_request(s, op, url, region, payload_hash, &r);
    *expires_at_ms = r.creds.expires_at_ms;
    if (rc == 0) {
        rc = icm__http_send(s->http, &r.req, resp);
        if (rc != 0 && rc != ICM_ENOMEM)
            name_transport_failure(op, url, rc);
    }
    signed_request_clear(&r);
    return rc;
}

/* ICM_EUNREACHABLE with the remembered message when `endpoint` could not be reached moments
 * ago (s3_fileio), else 0. */
static int check_reachable(s3_fileio *s, const char *endpoint, const s3_op *op)
{
    char why[sizeof s->unreachable_why];
    why[0] = '\0';
    pthread_mutex_lock(&s->region_lock);
    if (s->unreachable_endpoint != NULL && strcmp(s->unreachable_endpoint, endpoint) == 0 &&
        icm__now_ms() < s->unreachable_until_ms)
        memcpy(why, s->unreachable_why, sizeof why);
    pthread_mutex_unlock(&s->region_lock);
    return why[0] == '\0' ? 0
                          : icm__error_set(ICM_ERRCLASS_S3, ICM_EUNREACHABLE, op->location, "%s",
                                           why);
}

/* Every attempt of op found no connection to `endpoint` (the last error says why): a
 * configuration error, ICM_EUNREACHABLE naming the endpoint and the reason, remembered. */
static int endpoint_unreachable(s3_fileio *s, const char *endpoint, const s3_op *op,
                                unsigned attempts, int64_t started)
{
    /* curl's reason is what follows the transport's prefix ("Could not resolve host: h",
     * "Couldn't connect to server"). */
    const char *last = icm_error_last()->message;
    const char *reason = strstr(last, "HTTP request failed: ");
    reason = reason != NULL ? reason + strlen("HTTP request failed: ") : last;
    char why[sizeof s->unreachable_why];
    snprintf(why, sizeof why,
             "cannot reach the S3 endpoint %s: %s (%u attempt%s over %.1f s); is s3.endpoint "
             "(or AWS_ENDPOINT_URL_S3) right?",
             endpoint, reason, attempts, attempts == 1 ? "" : "s",
             (double)(icm__now_ms() - started) / 1000.0);
    pthread_mutex_lock(&s->region_lock);
    char *copy = icm__strdup(endpoint);
    if (copy != NULL) { /* (without memory it is simply not remembered) */
        icm__free(s->unreachable_endpoint);
        s->unreachable_endpoint = copy;
        memcpy(s->unreachable_why, why, sizeof why);
        s->unreachable_until_ms = icm__now_ms() + UNREACHABLE_MEMORY_MS;
    }
    pthread_mutex_unlock(&s->region_lock);
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNREACHABLE, op->location, "%s", why);
}

/* One request through its attempts: what s3_call and the batches of probes (below) share. */
typedef struct call_state {
    const s3_op *op;
    icm__s3_url url;
    const char *endpoint, *region; /* borrowed from s (configuration, bucket_region) */
    char payload_hash[65];
    unsigned max_attempts;
    unsigned attempt;            /* attempts made so far (the one under way included) */
    int64_t started, deadline;
    bool never_connected;        /* no attempt so far made a connection */
    int64_t signed_expiry_ms;    /* the attempt's credentials expire then (0: never, unsigned) */
} call_state;

/* Ready c for op's first attempt. Returns 0 (then call_end must follow), or what stops it at
 * once: an endpoint found unreachable moments ago, the URL's ICM_EINVALID/ICM_ENOMEM. */
static int call_begin(s3_fileio *s, const s3_op *op, call_state *c)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    bucket_region(s, op->loc, &c->endpoint, &c->region);
    int rc = check_reachable(s, c->endpoint, op);
    if (rc != 0)
        return rc;
    rc = icm__s3_url_build(&c->url, c->endpoint, s->cfg.addressing, op->loc->bucket,
                           op->loc->bucket_len, op->bucket_only ? "" : op->loc->key,
                           op->bucket_only ? 0 : op->loc->key_len, op->params, op->n_params);
    if (rc != 0)
        return rc;
    if (op->body_len > 0)
        icm__sha256_hex(op->body, op->body_len, c->payload_hash);
    else
        memcpy(c->payload_hash, EMPTY_SHA256, sizeof c->payload_hash);
    c->max_attempts = s->cfg.max_attempts > 0 ? s->cfg.max_attempts : 1;
    c->started = icm__now_ms();
    c->deadline = c->started + (s->cfg.retry_total_ms > 0 ? s->cfg.retry_total_ms : 0);
    c->never_connected = true;
    return 0;
}

/*
 * The attempt c->attempt ended with *rc and *resp (its slot of `lim`, taken as `gen`, is given
 * back here). Returns true when another attempt is to be made after *wait_ms; false when *rc
 * and *resp are the request's outcome (then call_end). The rules: a request that never left
 * may always go again, one that may have reached the server only when idempotent; 5xx,
 * RequestTimeout, throttling and dropped connections after a full-jitter backoff, within the
 * attempts and the total time; an expired token after the credentials are dropped, a skewed
 * clock after it is corrected (at once); a bucket in another region signed for that region.
 */
static bool call_after_attempt(s3_fileio *s, call_state *c, icm__s3_limiter *lim, uint64_t gen,
                               int *rcp, icm__http_response *resp, int64_t *wait_ms)
{
    const s3_op *op = c->op;
    int rc = *rcp;
    *wait_ms = 0;
    bool unconnected = rc != 0 && resp->connect_failed;
    c->never_connected = c->never_connected && unconnected;
    icm__s3_retry cls = ICM__S3_NO_RETRY;
    bool throttled = false; /* also for a request the caller retries itself */
    icm__s3_error_doc doc;
    memset(&doc, 0, sizeof doc);
    if (rc != 0) {
        cls = icm__s3_retry_classify(0, "", rc);
        /* A request that never left may always go again; one that may have reached the
         * server only when it is idempotent. */
        if (!op->idempotent && resp->request_sent)
            cls = ICM__S3_NO_RETRY;
    } else if (resp->status >= 200 && resp->status < 300) {
        if (op->check != NULL) {
            rc = op->check(resp, op->check_ctx);
            if (rc == ICM_EIO && op->idempotent) {
                if (icm_error_last()->location[0] == '\0')
                    icm__error_set_location(op->location);
                icm__error_set_http_status(resp->status);
                cls = ICM__S3_RETRY_TRANSIENT;
            }
        }
    } else {
        answer_details(resp, &doc);
        cls = icm__s3_retry_classify(resp->status, doc.code, 0);
        throttled = cls == ICM__S3_RETRY_THROTTLED;
        /* A HEAD's answer has no body, so S3's ExpiredToken reaches it as a bare 400: when
         * the credentials it was signed with had expired by the time the answer came (they
         * are renewed at their expiry, and the request was in flight across it), that is
         * what it was; another attempt with renewed credentials (the read changes nothing). */
        if (cls == ICM__S3_NO_RETRY && resp->status == 400 && doc.code[0] == '\0' &&
            strcmp(op->method, "HEAD") == 0 && c->signed_expiry_ms != 0 &&
            c->signed_expiry_ms <= icm__now_ms())
            cls = ICM__S3_RETRY_EXPIRED;
        /* A request S3 refused before acting on it (its signature's clock or token) may
         * go again whatever it is; 409 ConditionalRequestConflict means a concurrent
         * write won a race and ours was not applied. Anything else that may have been
         * applied goes back to the caller. */
        if (!op->idempotent && cls != ICM__S3_RETRY_SKEWED && cls != ICM__S3_RETRY_EXPIRED)
            cls = strcmp(doc.code, "ConditionalRequestConflict") == 0 ? ICM__S3_RETRY_TRANSIENT
                                                                      : ICM__S3_NO_RETRY;
    }
    icm__s3_limiter_release(lim, gen, throttled);
    *rcp = rc;
    if (rc == 0 && (resp->status == 301 || resp->status == 400)) {
        /* The bucket is in another region (PermanentRedirect, or
         * AuthorizationHeaderMalformed naming the region): S3 acted on nothing, so any
         * request may go again, signed for that region (never by following a redirect). */
        char *moved = NULL;
        if (icm__http_response_header(resp, "x-amz-bucket-region", &moved) == 0 &&
            moved != NULL && bucket_moved(s, op->loc, moved, c->region)) {
            icm__free(moved);
            icm__s3_url_clear(&c->url);
            bucket_region(s, op->loc, &c->endpoint, &c->region);
            rc = icm__s3_url_build(&c->url, c->endpoint, s->cfg.addressing, op->loc->bucket,
                                   op->loc->bucket_len, op->bucket_only ? "" : op->loc->key,
                                   op->bucket_only ? 0 : op->loc->key_len, op->params,
                                   op->n_params);
            if (rc != 0) {
                icm__http_response_clear(resp);
                *rcp = rc;
                return false;
            }
            return c->attempt < c->max_attempts;
        }
        icm__free(moved);
    }
    if (cls == ICM__S3_NO_RETRY || rc == ICM_ENOMEM)
        return false;
    if (unconnected && resp->resolve_failed && c->attempt >= RESOLVE_ATTEMPTS)
        return false;
    /* A delete of the delete engine's goes again only through the engine, after its
     * reload and its checks ran again: never from here, not even at once after the
     * credentials were renewed (a renewal can take as long as the catalog does: a writer's
     * commit meanwhile named the file again, adversary round 18, F1). The credentials are
     * dropped and the clock corrected below first, so that send is signed right. */
    bool give_back = op->checked_by_caller;
    if (give_back && cls != ICM__S3_RETRY_EXPIRED && cls != ICM__S3_RETRY_SKEWED)
        return false;
    int64_t wait = 0;
    if (cls == ICM__S3_RETRY_EXPIRED) {
        if (s->creds != NULL)
            icm__aws_creds_invalidate(s->creds);
    } else if (cls == ICM__S3_RETRY_SKEWED) {
        int64_t server = answer_date_ms(resp);
        if (server < 0)
            return false; /* nothing to correct the clock with: report the refusal */
        int64_t skew = server - icm__now_ms();
        if (skew > MAX_CLOCK_CORRECTION_MS || skew < -MAX_CLOCK_CORRECTION_MS) {
            /* Signing with a clock that far off would work, but object ages would not:
             * the sweep compares LastModified (the store's clock) with a cutoff on ours,
             * and a store hours or days behind makes a file being written look old. */
            icm__http_response_clear(resp);
            *rcp = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, op->location,
                                  "S3 %s: the store's clock is %.1f h %s this machine's "
                                  "(RequestTimeTooSkewed); icemaint signs with the store's "
                                  "time only within %d min, since object ages would be off "
                                  "by as much: fix the clock of one of them",
                                  op->what, (double)(skew < 0 ? -skew : skew) / 3600000.0,
                                  skew < 0 ? "behind" : "ahead of",
                                  (int)(MAX_CLOCK_CORRECTION_MS / 60000));
            icm__error_set_remote_code("RequestTimeTooSkewed");
            return false;
        }
        atomic_store(&s->skew_ms, skew);
    } else {
        wait = icm__s3_backoff_ms(c->attempt, ICM__S3_BACKOFF_BASE_MS, ICM__S3_BACKOFF_CAP_MS,
                                  icm__s3_random());
    }
    if (give_back || c->attempt >= c->max_attempts || icm__now_ms() + wait > c->deadline)
        return false;
    *wait_ms = wait;
    return true;
}

/* The request is over with rc: free c, and say in the error how long a connection was tried
 * (s3.retry.max-attempts / s3.retry.total-timeout-ms bound it). Returns the final code. */
static int call_end(s3_fileio *s, call_state *c, int rc)
{
    icm__s3_url_clear(&c->url);
    if (rc == ICM_ENET && c->never_connected) {
        rc = endpoint_unreachable(s, c->endpoint, c->op, c->attempt, c->started);
    } else if ((rc == ICM_ENET || rc == ICM_ETIMEOUT) && c->attempt > 1) {
        char why[400];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        icm__error_set(ICM_ERRCLASS_S3, rc, c->op->location, "%s (%u attempts over %.1f s)",
                       why, c->attempt, (double)(icm__now_ms() - c->started) / 1000.0);
    }
    return rc;
}

/*
 * Send op, retrying what may be retried. Returns 0 with *resp the final answer (any status;
 * 2xx answers passed op->check); a negative code with the last error set: the transport's
 * (resp->request_sent says whether the last attempt may have reached the server), op->check's,
 * the credentials', ICM_ENOMEM.
 */
static int s3_call(s3_fileio *s, const s3_op *op, icm__http_response *resp)
{
    memset(resp, 0, sizeof *resp);
    call_state c;
    int rc = call_begin(s, op, &c);
    if (rc != 0) {
        icm__s3_url_clear(&c.url);
        return rc;
    }
    for (;;) {
        c.attempt++;
        icm__http_response_clear(resp);
        uint64_t gen = icm__s3_limiter_acquire(&s->limiter);
        if (op->generation != NULL)
            *op->generation = gen;
        rc = send_once(s, op, &c.url, c.region, c.payload_hash, resp, &c.signed_expiry_ms);
        int64_t wait = 0;
        if (!call_after_attempt(s, &c, &s->limiter, gen, &rc, resp, &wait))
            break;
        sleep_ms(wait);
    }
    return call_end(s, &c, rc);
}

/* ---- location helpers ----------------------------------------------------------------------- */

static int parse_object(const char *location, icm__s3_location *loc)
{
    int rc = icm__s3_location_parse(location, loc);
    if (rc == 0 && loc->key_len == 0)
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, location,
                            "S3 location names a bucket, not an object (s3://bucket/key)");
    return rc;
}

static void md5_of(const void *data, size_t len, unsigned char md[16])
{
    unsigned int n = 0;
    if (EVP_Digest(data, len, md, &n, EVP_md5(), NULL) != 1)
        memset(md, 0, 16);
}

static void base64_of(const unsigned char *d, size_t n, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, d, (int)n);
}

/* ---- reads ---------------------------------------------------------------------------------- */

static int s3_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = parse_object(location, &loc);
    if (rc != 0)
        return rc;
    s3_op op = {"GET", location, "GET", &loc, false, NULL, 0, NULL, 0, NULL, 0, NULL, 0,
                true, NULL, NULL, NULL, false};
    icm__http_response resp;
    rc = s3_call(s, &op, &resp);
    if (rc == 0 && resp.status != 200)
        rc = answer_error(&op, &resp);
    if (rc == 0) {
        *out = resp.body;
        *out_len = resp.body_len;
        resp.body = NULL;
    }
    icm__http_response_clear(&resp);
    return rc;
}

/* The first byte of `Content-Range: bytes first-last/total`, or -1. */
static int64_t content_range_first(const icm__http_response *resp)
{
    char *cr = NULL;
    if (icm__http_response_header(resp, "Content-Range", &cr) != 0 || cr == NULL)
        return -1;
    int64_t first = -1;
    if (strncmp(cr, "bytes ", 6) == 0) {
        const char *p = cr + 6;
        if (*p >= '0' && *p <= '9') {
            first = 0;
            while (*p >= '0' && *p <= '9' && first < INT64_MAX / 10)
                first = first * 10 + (*p++ - '0');
            if (*p != '-')
                first = -1;
        }
    }
    icm__free(cr);
    return first;
}

/* What a ranged GET's outcome (rc, resp: s3_call's) means: *out_read bytes at `offset` are in
 * the sink. Returns 0 or the failure (the last error set). */
static int range_answer(const s3_op *op, int rc, const icm__http_response *resp, int64_t offset,
                        size_t *out_read)
{
    *out_read = 0;
    if (rc != 0)
        return rc;
    if (resp->status == 416)
        return 0; /* the range starts at or past the end */
    if (resp->status == 206) {
        /* Bytes of another offset in the caller's buffer would be silently wrong data. */
        if (content_range_first(resp) != offset)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, op->location,
                                  "S3 ranged GET: the answer is not the range asked for "
                                  "(bytes from %lld)",
                                  (long long)offset);
        *out_read = resp->body_len;
        return 0;
    }
    if (resp->status == 200) {
        /* a server that ignored Range sent the object from its start */
        if (offset != 0)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, op->location,
                                  "S3 ranged GET: the server ignored the Range header");
        *out_read = resp->body_len;
        return 0;
    }
    return answer_error(op, resp);
}

/* The Range header of `len` (> 0) bytes at `offset` (len cut at INT64_MAX). */
static void range_header(int64_t offset, size_t len, char range[64])
{
    if ((uint64_t)len - 1 > (uint64_t)(INT64_MAX - offset))
        len = (size_t)(INT64_MAX - offset) + 1;
    snprintf(range, 64, "bytes=%lld-%lld", (long long)offset,
             (long long)(offset + (int64_t)(len - 1)));
}

static int s3_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                         size_t len, size_t *out_read)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = parse_object(location, &loc);
    if (rc != 0)
        return rc;
    *out_read = 0;
    if (len == 0)
        return 0;
    char range[64];
    range_header(offset, len, range);
    icm__http_header h[] = {{"Range", range}};
    s3_op op = {"ranged GET", location, "GET", &loc, false, NULL, 0, h, 1, NULL, 0, buf, len,
                true, NULL, NULL, NULL, false};
    icm__http_response resp;
    rc = s3_call(s, &op, &resp);
    rc = range_answer(&op, rc, &resp, offset, out_read);
    icm__http_response_clear(&resp);
    return rc;
}

/* What a HEAD's outcome (rc, resp: s3_call's) means: the size and mtime into *out. Returns 0
 * or the failure (the last error set). */
static int stat_answer(const s3_op *op, int rc, const icm__http_response *resp,
                       icm_file_info *out)
{
    if (rc == 0 && resp->status != 200)
        rc = answer_error(op, resp);
    if (rc != 0)
        return rc;
    char *cl = NULL, *lm = NULL;
    rc = icm__http_response_header(resp, "Content-Length", &cl);
    if (rc == 0)
        rc = icm__http_response_header(resp, "Last-Modified", &lm);
    int64_t size = -1;
    if (rc == 0 && cl != NULL) {
        char *end = NULL;
        long long v = strtoll(cl, &end, 10);
        if (end != cl && *end == '\0' && v >= 0)
            size = v;
    }
    if (rc == 0 && size < 0)
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, op->location,
                            "S3 HEAD: the answer has no usable Content-Length");
    if (rc == 0) {
        out->location = op->location;
        out->size_bytes = size;
        out->mtime_ms = lm != NULL ? icm__s3_parse_http_date_ms(lm) : -1;
    }
    icm__free(cl);
    icm__free(lm);
    return rc;
}

static int s3_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = parse_object(location, &loc);
    if (rc != 0)
        return rc;
    s3_op op = {"HEAD", location, "HEAD", &loc, false, NULL, 0, NULL, 0, NULL, 0, NULL, 0,
                true, NULL, NULL, NULL, false};
    icm__http_response resp;
    rc = s3_call(s, &op, &resp);
    rc = stat_answer(&op, rc, &resp, out);
    icm__http_response_clear(&resp);
    return rc;
}

/* ---- many HEADs or first-byte reads at once (io/probe.h) ------------------------------------ */

/* One item of a probe batch: its request, and where it is in its attempts. */
typedef struct probe_state {
    icm__probe *p;
    icm__s3_location loc;
    s3_op op;
    char range[64];
    icm__http_header range_hdr;
    call_state c;
    bool begun;  /* call_begin ran (c holds its URL until the item is done) */
    bool done;   /* the item has its result */
    int64_t due_ms; /* waiting for another attempt: when it may go */
} probe_state;

/* A request in flight: its signed headers, its item, its slot of the batch's limiter. */
typedef struct probe_flight {
    signed_request sr;
    size_t item;
    uint64_t gen;
} probe_flight;

typedef struct probe_batch {
    s3_fileio *s;
    icm__probe_kind kind;
    probe_state *st;
    size_t n, n_done;
    size_t next;         /* the first item never started */
    size_t *waiting;     /* items waiting for another attempt (unordered) */
    size_t n_waiting;
    probe_flight *flights;
    size_t *free_flights;
    size_t n_free_flights;
    icm__http_batch *http;
    icm__s3_limiter limiter;
} probe_batch;

/* Item i is over with rc (call_end's) and resp: its result, as s3_stat / s3_read_range give. */
static void probe_finish(probe_batch *b, size_t i, int rc, icm__http_response *resp)
{
    probe_state *ps = &b->st[i];
    icm__probe *p = ps->p;
    if (b->kind == ICM__PROBE_STAT) {
        icm_file_info info = {sizeof(icm_file_info), p->location, 0, -1};
        rc = stat_answer(&ps->op, rc, resp, &info);
        if (rc == 0)
            p->info = info;
    } else {
        rc = range_answer(&ps->op, rc, resp, 0, &p->n_read);
    }
    if (resp != NULL)
        icm__http_response_clear(resp);
    p->rc = rc;
    p->error = NULL;
    if (rc != 0 && rc != ICM_ENOTFOUND && rc != ICM_ENOMEM)
        p->error = icm__error_save();
    icm_error_clear();
    ps->done = true;
    b->n_done++;
}

/* Attempt c.attempt of item i ended with rc and resp (its limiter slot `gen` not yet given
 * back): wait for another attempt, or finish the item. */
static void probe_attempt_over(probe_batch *b, size_t i, uint64_t gen, int rc,
                               icm__http_response *resp)
{
    probe_state *ps = &b->st[i];
    int64_t wait = 0;
    if (call_after_attempt(b->s, &ps->c, &b->limiter, gen, &rc, resp, &wait)) {
        icm__http_response_clear(resp);
        ps->due_ms = icm__now_ms() + wait;
        b->waiting[b->n_waiting++] = i;
        return;
    }
    rc = call_end(b->s, &ps->c, rc);
    probe_finish(b, i, rc, resp);
}

/* Start item i's next attempt in a free flight (there is one, and a slot of the limiter). */
static void probe_start(probe_batch *b, size_t i)
{
    probe_state *ps = &b->st[i];
    uint64_t gen = 0;
    (void)icm__s3_limiter_try_acquire(&b->limiter, &gen); /* (the caller saw room) */
    ps->c.attempt++;
    size_t fi = b->free_flights[--b->n_free_flights];
    probe_flight *f = &b->flights[fi];
    f->item = i;
    f->gen = gen;
    int rc = sign_request(b->s, &ps->op, &ps->c.url, ps->c.region, ps->c.payload_hash, &f->sr);
    ps->c.signed_expiry_ms = f->sr.creds.expires_at_ms;
    if (rc == 0)
        rc = icm__http_batch_start(b->http, &f->sr.req, f);
    if (rc == 0)
        return;
    /* Not sent (the credentials, memory): an attempt that never left, as send_once's. */
    signed_request_clear(&f->sr);
    b->free_flights[b->n_free_flights++] = fi;
    icm__http_response none;
    memset(&none, 0, sizeof none);
    probe_attempt_over(b, i, gen, rc, &none);
}

/* The next item to send now: one whose wait is over first, else the next never started (its
 * call begun; an item that cannot even begin is finished here). SIZE_MAX: none now. */
static size_t probe_pick(probe_batch *b, int64_t now)
{
    for (size_t k = 0; k < b->n_waiting; k++) {
        size_t i = b->waiting[k];
        if (b->st[i].due_ms <= now) {
            b->waiting[k] = b->waiting[--b->n_waiting];
            return i;
        }
    }
    while (b->next < b->n) {
        size_t i = b->next++;
        probe_state *ps = &b->st[i];
        if (ps->begun)
            continue; /* (finished before it started: a location that is no object) */
        ps->begun = true;
        int rc = call_begin(b->s, &ps->op, &ps->c);
        if (rc == 0)
            return i;
        icm__s3_url_clear(&ps->c.url);
        probe_finish(b, i, rc, NULL);
    }
    return SIZE_MAX;
}

/* How long to wait for a transfer before a waiting item is due (ms, at most 1 s). */
static int64_t probe_wait_ms(const probe_batch *b, int64_t now)
{
    int64_t wait = 1000;
    for (size_t k = 0; k < b->n_waiting; k++) {
        int64_t left = b->st[b->waiting[k]].due_ms - now;
        if (left < wait)
            wait = left > 0 ? left : 0;
    }
    return wait;
}

/* Drive every item to its result. Returns 0, or libcurl's own failure (ICM_ENOMEM, ICM_ENET):
 * then the items not done yet get that code. */
static int probe_run(probe_batch *b)
{
    int rc = 0;
    while (b->n_done < b->n && rc == 0) {
        int64_t now = icm__now_ms();
        while (b->n_free_flights > 0 &&
               icm__http_batch_running(b->http) < icm__s3_limiter_limit(&b->limiter)) {
            size_t i = probe_pick(b, now);
            if (i == SIZE_MAX)
                break;
            probe_start(b, i);
        }
        if (b->n_done == b->n)
            break;
        int64_t wait = probe_wait_ms(b, icm__now_ms());
        if (icm__http_batch_running(b->http) == 0) {
            sleep_ms(wait); /* only waits for a retry are left */
            continue;
        }
        icm__http_done d;
        rc = icm__http_batch_next(b->http, wait, &d);
        if (rc != 0 || d.tag == NULL)
            continue;
        probe_flight *f = d.tag;
        probe_state *ps = &b->st[f->item];
        if (d.rc != 0 && d.rc != ICM_ENOMEM)
            name_transport_failure(&ps->op, &ps->c.url, d.rc);
        uint64_t gen = f->gen;
        size_t i = f->item;
        signed_request_clear(&f->sr);
        b->free_flights[b->n_free_flights++] = (size_t)(f - b->flights);
        probe_attempt_over(b, i, gen, d.rc, &d.resp);
    }
    return rc;
}

bool icm__fileio_is_s3(const icm_fileio *io)
{
    return io != NULL && io->methods == &s3_methods;
}

int icm__fileio_s3_probe_many(icm_fileio *io, icm__probe_kind kind, icm__probe *items,
                              size_t n)
{
    s3_fileio *s = (s3_fileio *)io;
    if (n == 0)
        return 0;
    size_t max = s->cfg.check_max_in_flight > 0 ? s->cfg.check_max_in_flight : 64;
    if (max > n)
        max = n;
    probe_batch b;
    memset(&b, 0, sizeof b);
    b.s = s;
    b.kind = kind;
    b.n = n;
    b.st = icm__calloc(n, sizeof *b.st);
    b.waiting = icm__calloc(n, sizeof *b.waiting);
    b.flights = icm__calloc(max, sizeof *b.flights);
    b.free_flights = icm__calloc(max, sizeof *b.free_flights);
    int rc = b.st != NULL && b.waiting != NULL && b.flights != NULL && b.free_flights != NULL
                 ? icm__http_batch_new(s->http, (unsigned)max, &b.http)
                 : icm__error_oom();
    if (rc != 0) {
        icm__free(b.st);
        icm__free(b.waiting);
        icm__free(b.flights);
        icm__free(b.free_flights);
        return rc;
    }
    icm__s3_limiter_init(&b.limiter, (unsigned)max);
    for (size_t f = 0; f < max; f++)
        b.free_flights[b.n_free_flights++] = max - 1 - f;
    for (size_t i = 0; i < n; i++) {
        probe_state *ps = &b.st[i];
        icm__probe *p = &items[i];
        ps->p = p;
        p->rc = ICM_ERROR;
        p->n_read = 0;
        p->error = NULL;
        int prc = parse_object(p->location, &ps->loc);
        if (prc == 0 && kind == ICM__PROBE_FIRST_BYTES && p->len == 0) {
            p->rc = 0; /* nothing to read: no request, as s3_read_range */
            ps->begun = ps->done = true;
            b.n_done++;
            continue;
        }
        if (prc != 0) {
            ps->begun = true;
            probe_finish(&b, i, prc, NULL);
            continue;
        }
        if (kind == ICM__PROBE_STAT) {
            ps->op = (s3_op){"HEAD", p->location, "HEAD", &ps->loc, false, NULL, 0, NULL, 0,
                             NULL, 0, NULL, 0, true, NULL, NULL, NULL, false};
        } else {
            range_header(0, p->len, ps->range);
            ps->range_hdr = (icm__http_header){"Range", ps->range};
            ps->op = (s3_op){"ranged GET", p->location, "GET", &ps->loc, false, NULL, 0,
                             &ps->range_hdr, 1, NULL, 0, p->buf, p->len, true, NULL, NULL,
                             NULL, false};
        }
    }
    rc = probe_run(&b);
    if (rc != 0) {
        /* libcurl itself failed: what is still running or waiting gets its code */
        for (size_t i = 0; i < n; i++) {
            probe_state *ps = &b.st[i];
            if (ps->done)
                continue;
            icm__s3_url_clear(&ps->c.url);
            ps->p->rc = rc;
            ps->p->error = rc != ICM_ENOMEM ? icm__error_save() : NULL;
        }
        rc = rc == ICM_ENOMEM ? rc : 0; /* (each item has its result) */
    }
    icm__http_batch_free(b.http);
    for (size_t f = 0; f < max; f++)
        signed_request_clear(&b.flights[f].sr);
    icm__s3_limiter_destroy(&b.limiter);
    icm__free(b.st);
    icm__free(b.waiting);
    icm__free(b.flights);
    icm__free(b.free_flights);
    return rc;
}

/* ---- writes --------------------------------------------------------------------------------- */

static int put_object(s3_fileio *s, const char *location, const icm__s3_location *loc,
                      const void *data, size_t len, bool create_new, icm__http_response *resp)
{
    unsigned char md[16];
    char md5_b64[32];
    md5_of(data, len, md);
    base64_of(md, 16, md5_b64);
    icm__http_header h[] = {{"Content-MD5", md5_b64}, {"If-None-Match", "*"}};
    s3_op op = {create_new ? "create-new PUT" : "PUT", location, "PUT", loc, false, NULL, 0,
                h, create_new ? 2 : 1, data, len, NULL, 0, !create_new, NULL, NULL, NULL, false};
    return s3_call(s, &op, resp);
}

/* Whether `location` holds exactly data[0..len): 1 yes, 0 no (another object is there), or a
 * negative code when it cannot tell (missing now, or unreadable). The ETag of a single PUT
 * without SSE-KMS is the MD5 of its bytes; when it is not ours the bytes themselves decide
 * (an encrypted bucket's ETag is something else). */
static int holds_exactly(s3_fileio *s, const char *location, const icm__s3_location *loc,
                         const void *data, size_t len)
{
    s3_op op = {"HEAD", location, "HEAD", loc, false, NULL, 0, NULL, 0, NULL, 0, NULL, 0, true,
                NULL, NULL, NULL, false};
    icm__http_response resp;
    int rc = s3_call(s, &op, &resp);
    if (rc == 0 && resp.status != 200)
        rc = answer_error(&op, &resp);
    if (rc != 0) {
        icm__http_response_clear(&resp);
        return rc;
    }
    char *etag = NULL, *cl = NULL;
    int res = icm__http_response_header(&resp, "ETag", &etag);
    if (res == 0)
        res = icm__http_response_header(&resp, "Content-Length", &cl);
    icm__http_response_clear(&resp);
    if (res == 0) {
        unsigned char md[16];
        char hex[33];
        md5_of(data, len, md);
        for (int i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", md[i]);
        const char *e = etag != NULL ? etag : "";
        size_t el = strlen(e);
        if (el == 34 && e[0] == '"' && e[33] == '"' && strncasecmp(e + 1, hex, 32) == 0)
            res = 1;
        else if (cl != NULL && strtoll(cl, NULL, 10) != (long long)len)
            res = 0;
        else
            res = -1; /* compare the bytes */
    }
    icm__free(etag);
    icm__free(cl);
    if (res != -1)
        return res;
    char *body = icm__malloc(len + 1);
    if (body == NULL)
        return icm__error_oom();
    s3_op get = {"GET", location, "GET", loc, false, NULL, 0, NULL, 0, NULL, 0, body, len + 1,
                 true, NULL, NULL, NULL, false};
    rc = s3_call(s, &get, &resp);
    if (rc == 0 && resp.status != 200)
        rc = answer_error(&get, &resp);
    if (rc == 0)
        res = resp.body_len == len && memcmp(body, data, len) == 0 ? 1 : 0;
    else if (rc == ICM_EIO && icm_error_last()->http_status == 0)
        res = 0; /* longer than ours: the sink overflowed */
    else
        res = rc;
    icm__http_response_clear(&resp);
    icm__free(body);
    return res;
}

static int outcome_unknown(const char *location, const char *why)
{
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EOUTCOME_UNKNOWN, location,
                          "S3 create-new PUT: %s; the object may or may not be ours", why);
}

/*
 * create-new: a conditional PUT, sent again only in a way that cannot turn our own object into
 * someone else's. An attempt whose answer is lost or is a server error (5xx, SlowDown) may have
 * written the object; the next attempt then either succeeds (ours now), or gets 412, which the
 * object's bytes settle: not ours is ICM_EEXISTS, ours is success (an earlier attempt of ours
 * wrote it). When the attempts run out, the object is read back the same way, and what cannot
 * be settled is ICM_EOUTCOME_UNKNOWN. A 412 to the first attempt with exactly our bytes is
 * unknown too: libcurl resends a request by itself when a kept-alive connection turns out
 * closed before any answer, so even a first 412 may answer a copy of our own PUT.
 */
static int s3_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = parse_object(location, &loc);
    if (rc != 0)
        return rc;
    unsigned max_attempts = s->cfg.max_attempts > 0 ? s->cfg.max_attempts : 1;
    int64_t deadline = icm__now_ms() + (s->cfg.retry_total_ms > 0 ? s->cfg.retry_total_ms : 0);
    const char *why = NULL; /* set once an attempt may have written the object */
    for (unsigned attempt = 1;; attempt++) {
        icm__http_response resp;
        rc = put_object(s, location, &loc, data, len, true, &resp);
        bool retry = false;
        if (rc != 0) {
            if (rc == ICM_ENOMEM) {
                /* No memory to retry or to read back: unknown once any attempt may have
                 * written the object (this one too: the answer may be what failed). */
                bool sent = resp.request_sent;
                icm__http_response_clear(&resp);
                return !sent && why == NULL
                           ? rc
                           : outcome_unknown(location, "out of memory after the request was sent");
            }
            if (!resp.request_sent && why == NULL) {
                icm__http_response_clear(&resp);
                return rc; /* nothing of ours reached the server */
            }
            if (resp.request_sent)
                why = "the answer was lost";
            retry = resp.request_sent && (rc == ICM_ENET || rc == ICM_ETIMEOUT);
        } else if (resp.status >= 200 && resp.status < 300) {
            icm__http_response_clear(&resp);
            return 0;
        } else if (resp.status == 412) {
            icm__http_response_clear(&resp);
            int m = holds_exactly(s, location, &loc, data, len);
            if (m == 0) {
                rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EEXISTS, location,
                                    "S3 create-new PUT: the object exists");
                icm__error_set_http_status(412);
                icm__error_set_remote_code("PreconditionFailed");
                return rc;
            }
            if (m == 1 && why != NULL)
                return 0; /* an earlier attempt of ours wrote it */
            return outcome_unknown(location, m == 1 ? "S3 answered 412, and the object there "
                                                      "has exactly our bytes"
                                                    : "S3 answered 412 and the object cannot "
                                                      "be read back");
        } else {
            icm__s3_error_doc doc;
            answer_details(&resp, &doc);
            icm__s3_retry cls = icm__s3_retry_classify(resp.status, doc.code, 0);
            if (resp.status < 500 && cls == ICM__S3_NO_RETRY && why == NULL) {
                /* refused (403, 400, ...): nothing was written */
                rc = answer_error(&(s3_op){"create-new PUT", location, "PUT", &loc, false, NULL,
                                           0, NULL, 0, NULL, 0, NULL, 0, false, NULL, NULL,
                                           NULL, false},
                                  &resp);
                icm__http_response_clear(&resp);
                return rc;
            }
            if (resp.status >= 500 || cls != ICM__S3_NO_RETRY)
                why = "S3 answered with a server error after receiving it";
            retry = cls != ICM__S3_NO_RETRY;
        }
        icm__http_response_clear(&resp);
        int64_t wait = icm__s3_backoff_ms(attempt, ICM__S3_BACKOFF_BASE_MS,
                                          ICM__S3_BACKOFF_CAP_MS, icm__s3_random());
        if (!retry || attempt >= max_attempts || icm__now_ms() + wait > deadline)
            break;
        sleep_ms(wait);
    }
    /* the attempts ran out after one that may have written: what is there settles it */
    int m = holds_exactly(s, location, &loc, data, len);
    if (m == 1)
        return 0;
    if (m == 0)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EEXISTS, location,
                              "S3 create-new PUT: %s, and another object is there", why);
    return outcome_unknown(location, why);
}

static int s3_write_replace(icm_fileio *io, const char *location, const void *data, size_t len)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = parse_object(location, &loc);
    if (rc != 0)
        return rc;
    icm__http_response resp;
    rc = put_object(s, location, &loc, data, len, false, &resp);
    if (rc == 0 && (resp.status < 200 || resp.status >= 300))
        rc = answer_error(&(s3_op){"PUT", location, "PUT", &loc, false, NULL, 0, NULL, 0, NULL,
                                   0, NULL, 0, true, NULL, NULL, NULL, false},
                          &resp);
    icm__http_response_clear(&resp);
    return rc;
}

/* One DELETE; `checked_by_caller`: a delete of the delete engine's (s3_op). */
static int remove_key(icm_fileio *io, const char *location, bool checked_by_caller)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = parse_object(location, &loc);
    if (rc != 0)
        return rc;
    s3_op op = {"DELETE", location, "DELETE", &loc, false, NULL, 0, NULL, 0, NULL, 0, NULL, 0,
                true, NULL, NULL, NULL, checked_by_caller};
    icm__http_response resp;
    rc = s3_call(s, &op, &resp);
    if (rc == 0) {
        int answer = resp.status == 404 ? answer_error(&op, &resp) : 0;
        if (answer == ICM_ENOTFOUND) {
            /* S3 answers 204 whether or not the key existed (then we cannot tell); a server
             * that says NoSuchKey or NoSuchBucket told us it was not there. */
            icm_error_clear();
            icm_fileio_note_missing();
        } else if (answer != 0) {
            rc = answer; /* a 404 that is not "no such key" (an unknown user, no S3 at all) */
        } else if (resp.status < 200 || resp.status >= 300) {
            rc = answer_error(&op, &resp);
        }
    }
    icm__http_response_clear(&resp);
    return rc;
}

static int s3_remove(icm_fileio *io, const char *location)
{
    return remove_key(io, location, false);
}

/* ---- move: CopyObject, then DELETE (icm__fileio_s3_move, io/fileio_internal.h) -------------- */

/* CopyObject copies at most this many bytes in one request; larger objects need a multipart
 * copy (UploadPartCopy), which this back end does not make. */
#define COPY_OBJECT_MAX_BYTES (INT64_C(5) * 1024 * 1024 * 1024)

/* x-amz-copy-source: "/bucket/key", the key percent-encoded except for '/' (S3 decodes it). */
static char *copy_source(const icm__s3_location *loc)
{
    icm__buf b = ICM__BUF_INIT;
    icm__buf_putc(&b, '/');
    icm__buf_put(&b, loc->bucket, loc->bucket_len);
    icm__buf_putc(&b, '/');
    for (size_t i = 0; i < loc->key_len; i++) {
        unsigned char c = (unsigned char)loc->key[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~' || c == '/')
            icm__buf_putc(&b, (char)c);
        else
            icm__buf_printf(&b, "%%%02X", c);
    }
    if (b.oom) {
        icm__buf_dispose(&b);
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

/* A CopyObject answer is only a success when its body is a CopyObjectResult: S3 may answer
 * 200 and then report the failure in an <Error> body (the copy runs after the status went
 * out). Anything else is a broken answer (ICM_EIO), retried as a 5xx (the copy is idempotent:
 * the same source to the same target). */
static int check_copy_result(const icm__http_response *resp, void *ctx)
{
    (void)ctx;
    icm__s3_error_doc doc;
    icm__s3_error_parse(resp->body, resp->body_len, &doc);
    /* over body_len, not up to a NUL: a NUL must not hide an <Error> after it */
    bool has_result = resp->body != NULL &&
                      memmem(resp->body, resp->body_len, "<CopyObjectResult", 17) != NULL;
    bool has_error = resp->body != NULL && memmem(resp->body, resp->body_len, "<Error>", 7) != NULL;
    if (doc.code[0] != '\0' || !has_result || has_error)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, NULL,
                              "S3 CopyObject: a 200 without a CopyObjectResult%s%s%s",
                              doc.code[0] != '\0' ? " (error " : "", doc.code,
                              doc.code[0] != '\0' ? " in the body)" : "");
    return 0;
}

/* HEAD `location` as s3_stat does, and its ETag (new string in *etag; NULL when the answer
 * has none). */
static int head_with_etag(icm_fileio *io, const char *location, const icm__s3_location *loc,
                          icm_file_info *out, char **etag)
{
    *etag = NULL;
    s3_op op = {"HEAD", location, "HEAD", loc, false, NULL, 0, NULL, 0, NULL, 0, NULL, 0,
                true, NULL, NULL, NULL, false};
    icm__http_response resp;
    int rc = s3_call((s3_fileio *)io, &op, &resp);
    rc = stat_answer(&op, rc, &resp, out);
    if (rc == 0)
        rc = icm__http_response_header(&resp, "ETag", etag);
    icm__http_response_clear(&resp);
    return rc;
}

/*
 * After a CopyObject whose answer was lost or failed (a reset after the request went, a 5xx
 * after the copy ran): whether the target holds the source's object anyway, i.e. the copy
 * landed. Only an exact match counts: the target's size is the source's and its ETag is the
 * source's (a server-side copy of a single-part object keeps the ETag); without a source ETag
 * nothing is assumed. Without this, every retry of the file would pick the next free name in
 * the trash and leave one more full copy behind. Returns 1 (landed), 0 (the target is absent
 * or another object), -1 (its HEAD failed: unknown; `why` gets the HEAD's message). The last
 * error is left as it was.
 */
static int copy_landed(icm_fileio *io, const char *to, const icm__s3_location *dst,
                       int64_t size_bytes, const char *src_etag, char *why, size_t why_len)
{
    icm__error_saved *saved = icm__error_save();
    icm_file_info there = ICM_FILE_INFO_INIT;
    char *etag = NULL;
    int rc = head_with_etag(io, to, dst, &there, &etag);
    int landed = rc == 0 ? src_etag != NULL && *src_etag != '\0' &&
                               there.size_bytes == size_bytes && etag != NULL &&
                               strcmp(etag, src_etag) == 0
                         : rc == ICM_ENOTFOUND ? 0
                                               : -1;
    if (landed < 0)
        snprintf(why, why_len, "%s", icm_error_last()->message);
    icm__free(etag);
    icm__error_restore(saved);
    return landed;
}

/*
 * With ICM__MOVE_RESUME: whether `to` holds this move's own copy from an earlier attempt
 * (*have: its size and ETag are the source's). Absent: 0 with *have false (copy now). Another
 * object there: ICM_EEXISTS, naming what differs; a failed HEAD: its code.
 */
static int earlier_copy(icm_fileio *io, const char *from, const char *to,
                        const icm__s3_location *dst, const icm_file_info *info,
                        const char *src_etag, bool *have)
{
    *have = false;
    icm_file_info there = ICM_FILE_INFO_INIT;
    char *etag = NULL;
    int rc = head_with_etag(io, to, dst, &there, &etag);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        rc = 0;
    } else if (rc == 0) {
        bool same_tag = src_etag != NULL && *src_etag != '\0' && etag != NULL &&
                        strcmp(etag, src_etag) == 0;
        *have = there.size_bytes == info->size_bytes && same_tag;
        if (!*have)
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EEXISTS, to,
                                "exists, and is not the copy of %s an earlier attempt made "
                                "(%" PRId64 " bytes, the source %" PRId64 "; ETag %s); not "
                                "replaced, and the source is not deleted",
                                from, there.size_bytes, info->size_bytes,
                                same_tag ? "the same" : "differs or is missing");
    } else if (rc != ICM_ENOMEM) {
        char why[512];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        icm__error_set(ICM_ERRCLASS_S3, rc, from,
                       "S3 move: the source is not deleted: cannot check %s, which may hold "
                       "the copy an earlier attempt made (%s)",
                       to, why);
    }
    icm__free(etag);
    return rc;
}

/* The move once the source is known to exist (`info`, `src_etag`): copy, check, delete. */
static int move_after_head(icm_fileio *io, const char *from, const char *to,
                           const icm__s3_location *src, const icm__s3_location *dst,
                           const icm_file_info *info, const char *src_etag, unsigned flags,
                           bool *copy_sent)
{
    int rc;
    if (info->size_bytes > COPY_OBJECT_MAX_BYTES)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, from,
                              "S3 move: %" PRId64 " bytes is more than CopyObject copies in "
                              "one request (5 GiB); a multipart copy is not made, so the "
                              "object stays",
                              info->size_bytes);
    icm_file_info there = ICM_FILE_INFO_INIT;
    bool have = false;
    if ((flags & ICM__MOVE_RESUME) != 0) {
        rc = earlier_copy(io, from, to, dst, info, src_etag, &have);
        if (rc != 0)
            return rc;
    } else {
        rc = s3_stat(io, to, &there);
        if (rc == 0)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EEXISTS, to, "exists; not replaced");
        if (rc != ICM_ENOTFOUND)
            return rc;
        icm_error_clear();
    }
    if (!have) {
        char *source = copy_source(src);
        if (source == NULL)
            return icm__error_oom();
        /* If-None-Match: never over an object created since the HEAD above, where the
         * server honours it on a copy (AWS S3 does: 412, read as "exists"); one that ignores
         * it leaves that race open (README "The trash"). */
        icm__http_header h[] = {{"x-amz-copy-source", source},
                                {"x-amz-metadata-directive", "COPY"},
                                {"If-None-Match", "*"}};
        s3_op op = {"CopyObject", to, "PUT", dst, false, NULL, 0, h, 3, NULL, 0, NULL, 0,
                    true, check_copy_result, NULL, NULL, false};
        icm__http_response resp;
        *copy_sent = true;
        rc = s3_call((s3_fileio *)io, &op, &resp);
        if (rc == 0 && resp.status != 200)
            rc = answer_error(&op, &resp);
        icm__http_response_clear(&resp);
        icm__free(source);
        char why[512] = "";
        int landed = rc != 0 && rc != ICM_ENOMEM
                         ? copy_landed(io, to, dst, info->size_bytes, src_etag, why, sizeof why)
                         : 0;
        if (landed > 0) {
            icm_error_clear();
            rc = 0;
        } else if (landed < 0) {
            char copy_err[512];
            snprintf(copy_err, sizeof copy_err, "%s", icm_error_last()->message);
            icm__error_set(ICM_ERRCLASS_S3, rc, from,
                           "S3 move: the source is not deleted: CopyObject to %s failed, and "
                           "a HEAD of it could not tell whether the copy landed (%s; the HEAD: "
                           "%s)",
                           to, copy_err, why);
        }
        if (rc != 0) {
            if (icm_error_last()->location[0] == '\0')
                icm__error_set_location(from);
            return rc; /* the source was not deleted */
        }
    }
    /* The copy is confirmed; its size must be the source's before the source goes. */
    rc = s3_stat(io, to, &there);
    if (rc == 0 && there.size_bytes != info->size_bytes)
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, to,
                            "S3 move: the copy has %" PRId64 " bytes, the source %" PRId64
                            "; the source is not deleted",
                            there.size_bytes, info->size_bytes);
    if (rc != 0)
        return rc;
    rc = remove_key(io, from, true);
    if (rc != 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        icm__error_set(ICM_ERRCLASS_S3, rc, from,
                       "S3 move: copied to %s, but the source could not be deleted: %s", to,
                       why);
    }
    return rc;
}

int icm__fileio_s3_move(icm_fileio *io, const char *from, const char *to, int64_t size_bytes,
                        unsigned flags, bool *copy_sent)
{
    bool sent = false;
    if (copy_sent == NULL)
        copy_sent = &sent;
    *copy_sent = false;
    icm__s3_location src, dst;
    int rc = parse_object(from, &src);
    if (rc == 0)
        rc = parse_object(to, &dst);
    if (rc != 0)
        return rc;
    icm_file_info info = ICM_FILE_INFO_INIT;
    char *src_etag = NULL;
    if ((rc = head_with_etag(io, from, &src, &info, &src_etag)) != 0)
        return rc; /* ICM_ENOTFOUND: nothing to move */
    (void)size_bytes; /* the HEAD's size decides: it is the object's now */
    rc = move_after_head(io, from, to, &src, &dst, &info, src_etag, flags, copy_sent);
    icm__free(src_etag);
    return rc;
}

/* ---- listing -------------------------------------------------------------------------------- */

static int check_list_page(const icm__http_response *resp, void *ctx)
{
    icm__s3_list_page *page = ctx;
    icm__s3_list_page_clear(page);
    return icm__s3_list_parse(resp->body, resp->body_len, page);
}

static int s3_list_range(icm_fileio *io, const char *prefix, const icm_fileio_list_options *opts,
                         icm_list_cb cb, void *payload)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location loc;
    int rc = icm__s3_location_parse(prefix, &loc);
    if (rc != 0)
        return rc;
    /* base: "scheme://bucket/" as the prefix spells it; key prefix: the key and "/" */
    icm__buf base = ICM__BUF_INIT, key_prefix = ICM__BUF_INIT, where = ICM__BUF_INIT;
    icm__buf_put(&base, prefix, (size_t)(loc.bucket + loc.bucket_len - prefix));
    icm__buf_putc(&base, '/');
    icm__buf_put(&key_prefix, loc.key, loc.key_len);
    if (loc.key_len > 0 && loc.key[loc.key_len - 1] != '/')
        icm__buf_putc(&key_prefix, '/');
    if (key_prefix.data == NULL)
        icm__buf_put(&key_prefix, "", 0);
    if (base.oom || key_prefix.oom) {
        rc = icm__error_oom();
        goto out;
    }
    const char *start_after_key = NULL;
    if (opts->start_after != NULL) {
        if (strncmp(opts->start_after, base.data, base.len) == 0) {
            if (strcmp(opts->start_after + base.len, key_prefix.data) > 0)
                start_after_key = opts->start_after + base.len;
        } else if (strcmp(opts->start_after, base.data) > 0) {
            goto out; /* every location of the bucket sorts before it */
        }
    }
    if (opts->end_before != NULL && strcmp(opts->end_before, base.data) <= 0)
        goto out;
    char *token = NULL;
    icm__s3_list_page page;
    memset(&page, 0, sizeof page);
    bool done = false;
    while (!done && rc == 0) {
        icm__s3_param params[4] = {{"list-type", "2"},
                                   {"prefix", key_prefix.data},
                                   {"encoding-type", "url"},
                                   {NULL, NULL}};
        size_t np = 3;
        if (token != NULL)
            params[np++] = (icm__s3_param){"continuation-token", token};
        else if (start_after_key != NULL)
            params[np++] = (icm__s3_param){"start-after", start_after_key};
        s3_op op = {"ListObjectsV2", prefix, "GET", &loc, true, params, np, NULL, 0, NULL, 0,
                    NULL, 0, true, check_list_page, &page, NULL, false};
        icm__http_response resp;
        rc = s3_call(s, &op, &resp);
        if (rc == 0 && resp.status != 200)
            rc = answer_error(&op, &resp);
        icm__http_response_clear(&resp);
        for (size_t i = 0; i < page.n_entries && rc == 0; i++) {
            const icm__s3_list_entry *e = &page.entries[i];
            if (e->key_len < key_prefix.len ||
                memcmp(e->key, key_prefix.data, key_prefix.len) != 0) {
                /* A key outside the prefix must never reach a sweep as if it were inside. */
                rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, prefix,
                                    "S3 listing returned key \"%s\", which is not under the "
                                    "prefix",
                                    e->key);
                break;
            }
            if (e->key[e->key_len - 1] == '/')
                continue; /* a folder marker (zero-byte `dir/` object), not a file */
            icm__buf_clear(&where);
            icm__buf_put(&where, base.data, base.len);
            icm__buf_put(&where, e->key, e->key_len);
            if (where.oom) {
                rc = icm__error_oom();
                break;
            }
            if (opts->end_before != NULL && strcmp(where.data, opts->end_before) >= 0) {
                done = true;
                break;
            }
            icm_file_info info = {sizeof(icm_file_info), where.data, e->size_bytes, e->mtime_ms};
            int crc = cb(&info, payload);
            if (crc != 0) {
                rc = crc;
                break;
            }
        }
        if (rc == 0 && !done) {
            icm__free(token);
            token = NULL;
            if (page.is_truncated) {
                token = page.next_token;
                page.next_token = NULL;
            } else {
                done = true;
            }
        }
        icm__s3_list_page_clear(&page);
    }
    icm__free(token);
out:
    icm__buf_dispose(&base);
    icm__buf_dispose(&key_prefix);
    icm__buf_dispose(&where);
    return rc;
}

static int s3_list_flags(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                         void *payload)
{
    icm_fileio_list_options opts = ICM_FILEIO_LIST_OPTIONS_INIT;
    opts.flags = flags;
    return s3_list_range(io, prefix, &opts, cb, payload);
}

static int s3_list(icm_fileio *io, const char *prefix, icm_list_cb cb, void *payload)
{
    return s3_list_flags(io, prefix, 0, cb, payload);
}

/* ---- deletes in batches --------------------------------------------------------------------- */

static bool per_key_retryable(const char *code)
{
    return strcmp(code, "InternalError") == 0 || strcmp(code, "SlowDown") == 0 ||
           strcmp(code, "ServiceUnavailable") == 0;
}

static void fail_item(icm_fileio_delete_result *r, int code, bool retryable)
{
    icm_fileio_delete_result_fail(r, code, retryable);
}

static int check_delete_result(const icm__http_response *resp, void *ctx)
{
    icm__s3_delete_result *dr = ctx;
    icm__s3_delete_result_clear(dr);
    return icm__s3_delete_parse(resp->body, resp->body_len, dr);
}

/* One DeleteObjects request for the items idx[0..n) (all in loc's bucket, all sendable). */
static void delete_objects(s3_fileio *s, const char *const *locations, const size_t *idx,
                           size_t n, const icm__s3_location *loc, const size_t *key_off,
                           icm_fileio_delete_result *results)
{
    icm__buf body = ICM__BUF_INIT;
    icm__buf_puts(&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Delete xmlns=\""
                         "http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>");
    for (size_t i = 0; i < n; i++) {
        const char *key = locations[idx[i]] + key_off[idx[i]];
        icm__buf_puts(&body, "<Object><Key>");
        icm__s3_xml_escape(&body, key, strlen(key));
        icm__buf_puts(&body, "</Key></Object>");
    }
    icm__buf_puts(&body, "</Delete>");
    if (body.oom) {
        icm__buf_dispose(&body);
        icm__error_oom();
        for (size_t i = 0; i < n; i++)
            fail_item(&results[idx[i]], ICM_ENOMEM, true);
        return;
    }
    unsigned char md[16];
    char md5_b64[32];
    md5_of(body.data, body.len, md);
    base64_of(md, 16, md5_b64);
    icm__http_header h[] = {{"Content-MD5", md5_b64}, {"Content-Type", "application/xml"}};
    icm__s3_param q[] = {{"delete", ""}};
    icm__s3_delete_result dr;
    memset(&dr, 0, sizeof dr);
    /* the bucket's location, for messages about the request as a whole */
    char where[300];
    snprintf(where, sizeof where, "s3://%.*s", (int)loc->bucket_len, loc->bucket);
    uint64_t generation = 0;
    s3_op op = {"DeleteObjects", where, "POST", loc, true, q, 1, h, 2, body.data, body.len,
                NULL, 0, true, check_delete_result, &dr, &generation, true};
    icm__http_response resp;
    int rc = s3_call(s, &op, &resp);
    if (rc == 0 && resp.status != 200)
        rc = answer_error(&op, &resp);
    if (rc != 0) {
        icm__s3_error_doc doc;
        memset(&doc, 0, sizeof doc);
        answer_details(&resp, &doc);
        icm__s3_retry cls = icm__s3_retry_classify(resp.status, doc.code, rc);
        /* a 200 whose DeleteResult stayed broken through every attempt may pass later */
        bool broken_answer = resp.status >= 200 && resp.status < 300;
        bool retryable = cls != ICM__S3_NO_RETRY || rc == ICM_ENOMEM || broken_answer;
        for (size_t i = 0; i < n; i++)
            fail_item(&results[idx[i]], rc, retryable);
    } else {
        bool *failed = icm__calloc(n > 0 ? n : 1, sizeof *failed);
        bool stray = false;
        /* per-key SlowDown is the store pushing back as a 503 would: fewer in flight */
        for (size_t e = 0; e < dr.n_errors; e++)
            if (icm__s3_retry_classify(503, dr.errors[e].code, 0) == ICM__S3_RETRY_THROTTLED) {
                icm__s3_limiter_throttled(&s->limiter, generation);
                break;
            }
        for (size_t e = 0; e < dr.n_errors && failed != NULL; e++) {
            const icm__s3_delete_error *err = &dr.errors[e];
            bool matched = false;
            for (size_t i = 0; i < n; i++) {
                size_t k = idx[i];
                if (failed[i] || strcmp(locations[k] + key_off[k], err->key) != 0)
                    continue;
                matched = true;
                failed[i] = true;
                if (strcmp(err->code, "NoSuchKey") == 0) {
                    results[k].status = ICM_FILEIO_ALREADY_GONE;
                    results[k].code = 0;
                    results[k].retryable = false;
                    results[k].message[0] = '\0';
                    continue;
                }
                int code = strcmp(err->code, "AccessDenied") == 0 ? ICM_EAUTH : ICM_EIO;
                icm__error_set(ICM_ERRCLASS_S3, code, locations[k], "S3 DeleteObjects: %s%s%s",
                               err->code, err->message != NULL ? ": " : "",
                               err->message != NULL ? err->message : "");
                icm__error_set_http_status(200);
                icm__error_set_remote_code(err->code);
                fail_item(&results[k], code, per_key_retryable(err->code));
            }
            if (!matched)
                stray = true;
        }
        for (size_t i = 0; i < n; i++) {
            size_t k = idx[i];
            if (failed != NULL && failed[i])
                continue;
            if (failed == NULL) {
                icm__error_oom();
                fail_item(&results[k], ICM_ENOMEM, true);
            } else if (stray) {
                /* S3 named a key we did not send: which of ours failed is unknown, so none
                 * counts as deleted (deleting again is harmless). */
                icm__error_set(ICM_ERRCLASS_S3, ICM_EIO, locations[k],
                               "S3 DeleteObjects reported an error for a key that was not in "
                               "the request");
                fail_item(&results[k], ICM_EIO, true);
            } else {
                results[k].status = ICM_FILEIO_DELETED;
                results[k].code = 0;
                results[k].retryable = false;
                results[k].message[0] = '\0';
            }
        }
        icm__free(failed);
    }
    icm__s3_delete_result_clear(&dr);
    icm__http_response_clear(&resp);
    icm__buf_dispose(&body);
}

static int s3_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                           icm_fileio_delete_result *results)
{
    s3_fileio *s = (s3_fileio *)io;
    icm__s3_location *locs = icm__calloc(n, sizeof *locs);
    size_t *key_off = icm__calloc(n, sizeof *key_off);
    size_t *idx = icm__calloc(n, sizeof *idx);
    bool *todo = icm__calloc(n, sizeof *todo);
    if (locs == NULL || key_off == NULL || idx == NULL || todo == NULL) {
        icm__free(locs);
        icm__free(key_off);
        icm__free(idx);
        icm__free(todo);
        return icm__error_oom();
    }
    for (size_t i = 0; i < n; i++) {
        int rc = parse_object(locations[i], &locs[i]);
        if (rc != 0) {
            fail_item(&results[i], rc, false);
            continue;
        }
        key_off[i] = (size_t)(locs[i].key - locations[i]);
        if (!icm__s3_xml_sendable(locs[i].key, locs[i].key_len)) {
            /* XML 1.0 cannot carry this key: delete it alone */
            rc = remove_key(io, locations[i], true);
            if (rc == 0) {
                results[i].status = ICM_FILEIO_DELETED;
                results[i].code = 0;
                results[i].message[0] = '\0';
            } else {
                const icm_error *e = icm_error_last();
                fail_item(&results[i], rc,
                          icm__s3_retry_classify(e->http_status, e->remote_code, rc) !=
                              ICM__S3_NO_RETRY);
            }
            continue;
        }
        todo[i] = true;
    }
    size_t batch = s->cfg.delete_batch_size > 0 && s->cfg.delete_batch_size <= 1000
                       ? s->cfg.delete_batch_size
                       : 1000;
    for (size_t first = 0; first < n; first++) {
        if (!todo[first])
            continue;
        /* this bucket's items, in requests of up to `batch` keys */
        size_t m = 0;
        for (size_t i = first; i < n; i++) {
            if (!todo[i] || locs[i].bucket_len != locs[first].bucket_len ||
                memcmp(locs[i].bucket, locs[first].bucket, locs[i].bucket_len) != 0)
                continue;
            todo[i] = false;
            idx[m++] = i;
            if (m == batch) {
                delete_objects(s, locations, idx, m, &locs[first], key_off, results);
                m = 0;
            }
        }
        if (m > 0)
            delete_objects(s, locations, idx, m, &locs[first], key_off, results);
    }
    icm__free(locs);
    icm__free(key_off);
    icm__free(idx);
    icm__free(todo);
    return 0;
}

static int s3_is_local(icm_fileio *io, const char *location)
{
    (void)io;
    (void)location;
    return 0;
}

/* ---- construction --------------------------------------------------------------------------- */

static void s3_free(icm_fileio *io)
{
    s3_fileio *s = (s3_fileio *)io;
    if (s == NULL)
        return;
    icm__aws_creds_provider_free(s->creds);
    icm__http_free(s->http);
    icm__s3_limiter_destroy(&s->limiter);
    icm__s3_config_clear(&s->cfg);
    for (size_t i = 0; i < s->n_regions; i++) {
        icm__free(s->regions[i].bucket);
        icm__free(s->regions[i].region);
        icm__free(s->regions[i].endpoint);
    }
    icm__free(s->regions);
    icm__free(s->unreachable_endpoint);
    pthread_mutex_destroy(&s->region_lock);
    icm__free(s);
}

static const icm_fileio_methods s3_methods = {
    5,                   /* version */
    "s3",                /* name */
    s3_read,             /* read */
    s3_read_range,       /* read_range */
    s3_create_new,       /* create_new */
    s3_write_replace,    /* write_replace */
    s3_remove,           /* remove */
    s3_stat,             /* stat */
    s3_list,             /* list */
    s3_free,             /* free */
    s3_list_flags,       /* list_flags */
    NULL,                /* resolve: no links */
    NULL,                /* checksum_of: no companions */
    s3_delete_batch,     /* delete_batch */
    s3_list_range,       /* list_range */
    s3_is_local,         /* is_local */
};

int icm_fileio_s3_new(icm_fileio **out, const icm_property *props, size_t n_props)
{
    return icm__fileio_s3_new_refreshing(out, props, n_props, NULL);
}

int icm__fileio_s3_new_refreshing(icm_fileio **out, const icm_property *props, size_t n_props,
                                  const icm__fileio_refresher *refresher)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "icm_fileio_s3_new: NULL output");
    *out = NULL;
    if (props == NULL && n_props > 0)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "icm_fileio_s3_new: NULL properties");
    s3_fileio *s = icm__calloc(1, sizeof *s);
    if (s == NULL)
        return icm__error_oom();
    s->base.methods = &s3_methods;
    int rc = icm__s3_config_resolve(&s->cfg, props, n_props);
    if (rc != 0) {
        icm__free(s);
        return rc;
    }
    icm__s3_limiter_init(&s->limiter, s->cfg.max_in_flight > 0 ? s->cfg.max_in_flight : 32);
    pthread_mutex_init(&s->region_lock, NULL);
    atomic_init(&s->skew_ms, 0);
    icm__http_options ho = {s->cfg.connect_timeout_ms, s->cfg.request_timeout_ms,
                            s->cfg.max_in_flight, s->cfg.ca_bundle, true, NULL, NULL};
    rc = icm__http_new(&s->http, &ho);
    if (rc == 0 && !s->cfg.anonymous)
        rc = icm__aws_creds_provider_new(&s->creds, &s->cfg, props, n_props, s->http);
    if (rc == 0 && s->creds != NULL && refresher != NULL)
        (void)icm__aws_creds_provider_set_refresher(s->creds, refresher); /* vended ones only */
    if (rc != 0) {
        s3_free(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}
