/*
 * io/http.c: the HTTP client over libcurl (implements io/http.h).
 *
 * A client owns up to `max_connections` easy handles, handed out one per request from a free
 * list under a mutex (a request waits on a condition variable when all are busy), and one
 * CURLSH that they all use for the connection cache, DNS cache and TLS sessions, so keep-alive
 * connections are reused across threads. Each request resets its handle and sets every option
 * anew: nothing of an earlier request leaks into the next. libcurl is initialised once per
 * process (pthread_once) and never cleaned up by the library, since other code in the process
 * may use it too.
 *
 * What is sent is exactly the request: the URL byte for byte (CURLOPT_PATH_AS_IS), the listed
 * headers, and Host and Content-Length; curl's own `Expect: 100-continue` and the form
 * Content-Type it would add to a body are removed (the signer never sees them, so removing
 * them costs nothing). No signal handler is installed (CURLOPT_NOSIGNAL: the library is used
 * from several threads). Error bodies are always captured into resp->body, also when a sink
 * was given for the 2xx body of a ranged read, so the caller can read S3's <Error>.
 *
 * A batch (icm__http_batch) is one curl multi handle with easy handles of its own, on the same
 * shared caches: one thread moves all its transfers on (curl_multi_perform / _poll) and takes
 * their results one at a time, each exactly as icm__http_send would have given it (the same
 * transfer_prepare / transfer_result code).
 */
#include <curl/curl.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "icemaint/errors.h"
#include "io/http.h"
#include "util/util.h"

/* Largest body kept when it is not the sink's: error documents and listings are small; a
 * whole-object GET is bounded by memory only. */
#define ERROR_BODY_MAX (1u << 20)

struct icm__http {
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t lock; /* guards free_handles / n_free */
    pthread_cond_t handle_free;
    CURL **handles;     /* every handle made so far (n_made of max) */
    CURL **free_handles;
    size_t n_made, n_free, max;
    int64_t connect_timeout_ms, request_timeout_ms;
    char *ca_bundle;
    char *client_cert, *client_key;
    bool verify_tls;
};

/* ---- process-wide initialisation ----------------------------------------------------------- */

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init_rc = CURLE_FAILED_INIT;

static void curl_init_once(void)
{
    g_curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- share locks ---------------------------------------------------------------------------- */

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *userp)
{
    (void)handle;
    (void)access;
    icm__http *h = userp;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&h->share_locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *userp)
{
    (void)handle;
    icm__http *h = userp;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&h->share_locks[data]);
}

/* ---- client --------------------------------------------------------------------------------- */

int icm__http_new(icm__http **out, const icm__http_options *opts)
{
    *out = NULL;
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_init_rc != CURLE_OK)
        return icm__error_set(ICM_ERRCLASS_HTTP, ICM_EINVALID, NULL,
                              "HTTP client: libcurl failed to initialise (%s)",
                              curl_easy_strerror(g_curl_init_rc));
    icm__http *h = icm__calloc(1, sizeof *h);
    if (h == NULL)
        return icm__error_oom();
    h->max = opts != NULL && opts->max_connections > 0 ? opts->max_connections : 32;
    h->connect_timeout_ms =
        opts != NULL && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
    h->request_timeout_ms =
        opts != NULL && opts->request_timeout_ms > 0 ? opts->request_timeout_ms : 60000;
    h->verify_tls = opts == NULL || opts->verify_tls;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&h->share_locks[i], NULL);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->handle_free, NULL);
    h->handles = icm__calloc(h->max, sizeof *h->handles);
    h->free_handles = icm__calloc(h->max, sizeof *h->free_handles);
    if (h->handles == NULL || h->free_handles == NULL ||
        (opts != NULL && opts->ca_bundle != NULL &&
         (h->ca_bundle = icm__strdup(opts->ca_bundle)) == NULL) ||
        (opts != NULL && opts->client_cert != NULL &&
         (h->client_cert = icm__strdup(opts->client_cert)) == NULL) ||
        (opts != NULL && opts->client_key != NULL &&
         (h->client_key = icm__strdup(opts->client_key)) == NULL)) {
        icm__http_free(h);
        return icm__error_oom();
    }
    h->share = curl_share_init();
    if (h->share == NULL) {
        icm__http_free(h);
        return icm__error_oom();
    }
    CURLSHcode sc = curl_share_setopt(h->share, CURLSHOPT_USERDATA, h);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    if (sc != CURLSHE_OK) {
        icm__http_free(h);
        return icm__error_set(ICM_ERRCLASS_HTTP, ICM_EINVALID, NULL,
                              "HTTP client: libcurl refused to share its caches (%s)",
                              curl_share_strerror(sc));
    }
    *out = h;
    return 0;
}

void icm__http_free(icm__http *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->n_made; i++)
        curl_easy_cleanup(h->handles[i]);
    if (h->share != NULL)
        curl_share_cleanup(h->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&h->share_locks[i]);
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->handle_free);
    icm__free(h->handles);
    icm__free(h->free_handles);
    icm__free(h->ca_bundle);
    icm__free(h->client_cert);
    icm__free(h->client_key);
    icm__free(h);
}

/* A handle for one request: a free one, a new one while fewer than max exist, else wait. */
static int handle_take(icm__http *h, CURL **out)
{
    int rc = 0;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        if (h->n_free > 0) {
            *out = h->free_handles[--h->n_free];
            break;
        }
        if (h->n_made < h->max) {
            CURL *c = curl_easy_init();
            if (c == NULL) {
                rc = icm__error_oom();
                break;
            }
            h->handles[h->n_made++] = c;
            *out = c;
            break;
        }
        pthread_cond_wait(&h->handle_free, &h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}

static void handle_give_back(icm__http *h, CURL *c)
{
    pthread_mutex_lock(&h->lock);
    h->free_handles[h->n_free++] = c;
    pthread_cond_signal(&h->handle_free);
    pthread_mutex_unlock(&h->lock);
}

/* ---- one request ---------------------------------------------------------------------------- */

typedef struct transfer {
    CURL *curl;
    const icm__http_request *req; /* NULL: a batch slot not in use */
    icm__buf body;
    icm__buf headers;
    size_t sink_len;
    bool sink_overflow;
    bool oom;
    struct curl_slist *header_list;
    void *tag; /* a batch's transfer: the caller's tag */
} transfer;

static bool status_is_2xx(CURL *c)
{
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status >= 200 && status < 300;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    transfer *t = userp;
    size_t n = size * nmemb;
    if (t->req->sink != NULL && status_is_2xx(t->curl)) {
        if (n > t->req->sink_cap - t->sink_len) {
            t->sink_overflow = true;
            return 0; /* aborts the transfer: never a silent partial copy */
        }
        memcpy((char *)t->req->sink + t->sink_len, data, n);
        t->sink_len += n;
        return n;
    }
    if (t->req->sink != NULL && t->body.len + n > ERROR_BODY_MAX)
        return n; /* an error body this long: its start says enough */
    if (icm__buf_put(&t->body, data, n) != 0) {
        t->oom = true;
        return 0;
    }
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
    transfer *t = userp;
    size_t n = size * nmemb;
    /* A new status line starts the next response (after a 100 Continue or a redirect we do
     * not follow): keep only the final response's headers. */
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0)
        icm__buf_clear(&t->headers);
    if (icm__buf_put(&t->headers, data, n) != 0) {
        t->oom = true;
        return 0;
    }
    return n;
}

/* The URL without its query string, for messages: a query may carry credentials. */
static void url_for_message(const char *url, char *buf, size_t cap)
{
    size_t n = strcspn(url, "?");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, url, n);
    buf[n] = '\0';
}

static int transport_error(CURLcode cc, const char *url, const char *detail)
{
    char shown[512];
    url_for_message(url, shown, sizeof shown);
    int code = cc == CURLE_OPERATION_TIMEDOUT ? ICM_ETIMEOUT : ICM_ENET;
    return icm__error_set(ICM_ERRCLASS_HTTP, code, shown, "HTTP request failed: %s%s%s",
                          curl_easy_strerror(cc), detail[0] != '\0' ? ": " : "", detail);
}

/* Whether curl may have written part of the request to the network. Errors that happen before
 * a connection exists prove nothing was sent; after that, a request byte count says it was. */
static bool request_was_sent(CURL *c, CURLcode cc)
{
    switch (cc) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return false;
    default:
        break;
    }
    long sent = 0;
    if (curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK)
        return true; /* cannot tell: the careful answer */
    /* A timeout while connecting also leaves the count at 0: nothing left this machine. */
    return sent > 0 || cc != CURLE_OPERATION_TIMEDOUT;
}

static CURLcode setopts(icm__http *h, transfer *t, struct curl_slist **hl)
{
    CURL *c = t->curl;
    const icm__http_request *req = t->req;
    CURLcode cc = CURLE_OK;
#define SET(opt, val)                                                                          \
    do {                                                                                       \
        if (cc == CURLE_OK)                                                                    \
            cc = curl_easy_setopt(c, opt, val);                                                \
    } while (0)
    SET(CURLOPT_SHARE, h->share);
    SET(CURLOPT_URL, req->url);
    SET(CURLOPT_PATH_AS_IS, 1L);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_FRESH_CONNECT, req->fresh_connection ? 1L : 0L);
    SET(CURLOPT_FORBID_REUSE, req->fresh_connection ? 1L : 0L);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_CONNECTTIMEOUT_MS, (long)h->connect_timeout_ms);
    SET(CURLOPT_TIMEOUT_MS, (long)(req->timeout_ms > 0 ? req->timeout_ms : h->request_timeout_ms));
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, t);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
    SET(CURLOPT_SSL_VERIFYPEER, h->verify_tls ? 1L : 0L);
    SET(CURLOPT_SSL_VERIFYHOST, h->verify_tls ? 2L : 0L);
    if (h->ca_bundle != NULL)
        SET(CURLOPT_CAINFO, h->ca_bundle);
    if (h->client_cert != NULL)
        SET(CURLOPT_SSLCERT, h->client_cert);
    if (h->client_key != NULL)
        SET(CURLOPT_SSLKEY, h->client_key);
    const char *m = req->method;
    bool has_body = req->body != NULL || req->body_len > 0;
    if (strcmp(m, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (strcmp(m, "GET") == 0 && !has_body) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        if (has_body || strcmp(m, "PUT") == 0 || strcmp(m, "POST") == 0) {
            /* POSTFIELDS sends the bytes as they are with a Content-Length; the method is set
             * below. An empty PUT still needs `Content-Length: 0`. */
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
            SET(CURLOPT_POSTFIELDS, req->body != NULL ? (const char *)req->body : "");
        }
        SET(CURLOPT_CUSTOMREQUEST, m);
    }
    bool has_content_type = false;
    for (size_t i = 0; i < req->n_headers && cc == CURLE_OK; i++) {
        const icm__http_header *hd = &req->headers[i];
        if (strcasecmp(hd->name, "Content-Type") == 0)
            has_content_type = true;
        char *line = icm__sprintf(hd->value[0] != '\0' ? "%s: %s" : "%s;", hd->name, hd->value);
        struct curl_slist *n = line != NULL ? curl_slist_append(*hl, line) : NULL;
        icm__free(line);
        if (n == NULL)
            return CURLE_OUT_OF_MEMORY;
        *hl = n;
    }
    const char *removals[] = {"Expect:", has_content_type ? NULL : "Content-Type:", "Accept:"};
    for (size_t i = 0; i < sizeof removals / sizeof removals[0] && cc == CURLE_OK; i++) {
        if (removals[i] == NULL)
            continue;
        struct curl_slist *n = curl_slist_append(*hl, removals[i]);
        if (n == NULL)
            return CURLE_OUT_OF_MEMORY;
        *hl = n;
    }
    SET(CURLOPT_HTTPHEADER, *hl);
#undef SET
    return cc;
}

/* Set up t (whose curl and req are set) for its request: reset the handle, every option anew.
 * Returns 0, ICM_ENOMEM, ICM_EINVALID (libcurl refused an option). */
static int transfer_prepare(icm__http *h, transfer *t)
{
    curl_easy_reset(t->curl);
    CURLcode cc = setopts(h, t, &t->header_list);
    if (cc == CURLE_OUT_OF_MEMORY)
        return icm__error_oom();
    if (cc != CURLE_OK) {
        char shown[512];
        url_for_message(t->req->url, shown, sizeof shown);
        return icm__error_set(ICM_ERRCLASS_HTTP, ICM_EINVALID, shown,
                              "HTTP request: libcurl refused an option (%s)",
                              curl_easy_strerror(cc));
    }
    return 0;
}

/* What a finished transfer (curl's code cc) made: *resp and the code icm__http_send returns. */
static int transfer_result(transfer *t, CURLcode cc, icm__http_response *resp)
{
    const icm__http_request *req = t->req;
    int rc = 0;
    long status = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    /* Whatever goes wrong from here on, the request may have reached the server: a failure
     * while taking in the answer (memory, a body too long) must not read as "not sent", or
     * a caller would take an applied write for one that never left. */
    resp->request_sent = cc == CURLE_OK || status != 0 || request_was_sent(t->curl, cc);
    if (t->oom) {
        rc = icm__error_oom();
    } else if (t->sink_overflow) {
        char shown[512];
        url_for_message(req->url, shown, sizeof shown);
        rc = icm__error_set(ICM_ERRCLASS_HTTP, ICM_EIO, shown,
                            "HTTP response body is longer than the %zu bytes asked for",
                            req->sink_cap);
    } else if (cc != CURLE_OK) {
        rc = transport_error(cc, req->url, "");
        resp->resolve_failed =
            cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_RESOLVE_PROXY;
        resp->connect_failed = resp->resolve_failed || cc == CURLE_COULDNT_CONNECT;
    } else {
        resp->status = (int)status;
        resp->body_len = req->sink != NULL && status >= 200 && status < 300 ? t->sink_len
                                                                             : t->body.len;
        if (!(req->sink != NULL && status >= 200 && status < 300)) {
            if (t->body.data == NULL && icm__buf_put(&t->body, "", 0) != 0)
                rc = icm__error_oom();
            else
                resp->body = icm__buf_detach(&t->body, NULL);
        }
        if (rc == 0) {
            if (t->headers.data == NULL && icm__buf_put(&t->headers, "", 0) != 0)
                rc = icm__error_oom();
            else
                resp->headers = icm__buf_detach(&t->headers, NULL);
        }
    }
    return rc;
}

/* Drop what t holds of its request (the handle's pointers into it too), and on failure keep
 * only what resp says about the connection. */
static void transfer_finish(transfer *t, int rc, icm__http_response *resp)
{
    curl_slist_free_all(t->header_list);
    t->header_list = NULL;
    icm__buf_dispose(&t->body);
    icm__buf_dispose(&t->headers);
    curl_easy_reset(t->curl);
    if (rc != 0) {
        bool sent = resp->request_sent, connect = resp->connect_failed,
             resolve = resp->resolve_failed;
        icm__http_response_clear(resp);
        resp->request_sent = sent;
        resp->connect_failed = connect;
        resp->resolve_failed = resolve;
    }
}

static void transfer_init(transfer *t, CURL *curl, const icm__http_request *req)
{
    *t = (transfer){curl, req, ICM__BUF_INIT, ICM__BUF_INIT, 0, false, false, NULL, NULL};
}

int icm__http_send(icm__http *h, const icm__http_request *req, icm__http_response *resp)
{
    memset(resp, 0, sizeof *resp);
    CURL *curl = NULL;
    int rc = handle_take(h, &curl);
    if (rc != 0)
        return rc;
    transfer t;
    transfer_init(&t, curl, req);
    rc = transfer_prepare(h, &t);
    if (rc == 0)
        rc = transfer_result(&t, curl_easy_perform(t.curl), resp);
    /* (the handle's pointers into this request are dropped before another thread takes it) */
    transfer_finish(&t, rc, resp);
    handle_give_back(h, t.curl);
    return rc;
}

/* ---- many requests from one thread ---------------------------------------------------------- */

struct icm__http_batch {
    icm__http *h;
    CURLM *multi;
    transfer *slots;   /* max of them; slot i's handle is made on first use */
    size_t *free_slots;
    size_t n_free, max, running;
};

int icm__http_batch_new(icm__http *h, unsigned max_in_flight, icm__http_batch **out)
{
    *out = NULL;
    icm__http_batch *b = icm__calloc(1, sizeof *b);
    if (b == NULL)
        return icm__error_oom();
    b->h = h;
    b->max = max_in_flight > 0 ? max_in_flight : 1;
    b->slots = icm__calloc(b->max, sizeof *b->slots);
    b->free_slots = icm__calloc(b->max, sizeof *b->free_slots);
    b->multi = curl_multi_init();
    if (b->slots == NULL || b->free_slots == NULL || b->multi == NULL) {
        icm__http_batch_free(b);
        return icm__error_oom();
    }
    for (size_t i = 0; i < b->max; i++)
        b->free_slots[b->n_free++] = b->max - 1 - i;
    /* Connections come from the client's shared cache; libcurl closes the oldest idle one
     * whenever the cache holds more than the multi's limit (by default 4 per transfer added
     * so far, which a batch that starts small would stay under): room for every request in
     * flight here and in the client's blocking sends, so that kept-alive connections are
     * reused, not closed and opened again. */
    CURLMcode mc = curl_multi_setopt(b->multi, CURLMOPT_MAXCONNECTS, (long)(b->max + h->max));
    if (mc != CURLM_OK) {
        icm__http_batch_free(b);
        return icm__error_set(ICM_ERRCLASS_HTTP, ICM_EINVALID, NULL,
                              "HTTP client: libcurl refused a multi option (%s)",
                              curl_multi_strerror(mc));
    }
    *out = b;
    return 0;
}

void icm__http_batch_free(icm__http_batch *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; b->slots != NULL && i < b->max; i++) {
        transfer *t = &b->slots[i];
        if (t->curl == NULL)
            continue;
        if (t->req != NULL) { /* still running: abandoned */
            curl_multi_remove_handle(b->multi, t->curl);
            icm__http_response none;
            memset(&none, 0, sizeof none);
            transfer_finish(t, ICM_ERROR, &none);
        }
        curl_easy_cleanup(t->curl);
    }
    if (b->multi != NULL)
        curl_multi_cleanup(b->multi);
    icm__free(b->slots);
    icm__free(b->free_slots);
    icm__free(b);
}

size_t icm__http_batch_running(const icm__http_batch *b)
{
    return b->running;
}

int icm__http_batch_start(icm__http_batch *b, const icm__http_request *req, void *tag)
{
    if (b->n_free == 0)
        return icm__error_set(ICM_ERRCLASS_HTTP, ICM_EINVALID, req->url,
                              "HTTP batch: %zu requests are in flight already", b->max);
    size_t i = b->free_slots[b->n_free - 1];
    transfer *t = &b->slots[i];
    CURL *curl = t->curl;
    if (curl == NULL && (curl = curl_easy_init()) == NULL)
        return icm__error_oom();
    transfer_init(t, curl, req);
    int rc = transfer_prepare(b->h, t);
    CURLcode cc = CURLE_OK;
    if (rc == 0)
        cc = curl_easy_setopt(curl, CURLOPT_PRIVATE, (void *)t);
    if (rc == 0 && cc == CURLE_OK) {
        CURLMcode mc = curl_multi_add_handle(b->multi, curl);
        if (mc != CURLM_OK)
            rc = mc == CURLM_OUT_OF_MEMORY
                     ? icm__error_oom()
                     : icm__error_set(ICM_ERRCLASS_HTTP, ICM_EINVALID, NULL,
                                      "HTTP batch: libcurl refused a transfer (%s)",
                                      curl_multi_strerror(mc));
    } else if (rc == 0) {
        rc = icm__error_oom();
    }
    if (rc != 0) {
        icm__http_response none;
        memset(&none, 0, sizeof none);
        transfer_finish(t, rc, &none);
        t->req = NULL;
        return rc;
    }
    t->tag = tag;
    b->n_free--;
    b->running++;
    return 0;
}

int icm__http_batch_next(icm__http_batch *b, int64_t timeout_ms, icm__http_done *done)
{
    memset(done, 0, sizeof *done);
    int64_t until = icm__now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        int still = 0;
        CURLMcode mc = curl_multi_perform(b->multi, &still);
        if (mc != CURLM_OK && mc != CURLM_CALL_MULTI_PERFORM)
            return mc == CURLM_OUT_OF_MEMORY
                       ? icm__error_oom()
                       : icm__error_set(ICM_ERRCLASS_HTTP, ICM_ENET, NULL,
                                        "HTTP batch: libcurl failed (%s)",
                                        curl_multi_strerror(mc));
        int queued = 0;
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(b->multi, &queued)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            char *priv = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
            transfer *t = (transfer *)(void *)priv;
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(b->multi, msg->easy_handle);
            done->tag = t->tag;
            done->rc = transfer_result(t, cc, &done->resp);
            transfer_finish(t, done->rc, &done->resp);
            t->tag = NULL;
            t->req = NULL;
            b->free_slots[b->n_free++] = (size_t)(t - b->slots);
            b->running--;
            return 0;
        }
        int64_t left = until - icm__now_ms();
        if (b->running == 0 || left <= 0)
            return 0;
        mc = curl_multi_poll(b->multi, NULL, 0, (int)(left < 1000 ? left : 1000), NULL);
        if (mc != CURLM_OK)
            return icm__error_set(ICM_ERRCLASS_HTTP, ICM_ENET, NULL,
                                  "HTTP batch: libcurl failed to wait (%s)",
                                  curl_multi_strerror(mc));
    }
}

int icm__http_response_header(const icm__http_response *resp, const char *name, char **out)
{
    *out = NULL;
    if (resp->headers == NULL)
        return 0;
    size_t nl = strlen(name);
    const char *p = resp->headers;
    const char *found = NULL;
    size_t found_len = 0;
    while (*p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t line_len = eol != NULL ? (size_t)(eol - p) : strlen(p);
        if (line_len > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl + 1;
            const char *end = p + line_len;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            while (end > v && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
                end--;
            found = v;
            found_len = (size_t)(end - v);
            break;
        }
        if (eol == NULL)
            break;
        p = eol + 1;
    }
    if (found == NULL)
        return 0;
    *out = icm__strndup(found, found_len);
    return *out != NULL ? 0 : icm__error_oom();
}

void icm__http_response_clear(icm__http_response *resp)
{
    icm__free(resp->body);
    icm__free(resp->headers);
    memset(resp, 0, sizeof *resp);
}
