/*
 * io/http.h: one HTTP client for the object-store back ends, the credential providers and
 * (later) the REST catalog (internal).
 *
 * libcurl is the transport: a client holds a bounded pool of easy handles that share one
 * connection cache (keep-alive, TLS sessions, DNS), so any number of threads may send at once
 * and at most `max_connections` requests are in flight. Nothing here signs, retries or reads a
 * status: the caller owns the protocol (S3 maps statuses and error bodies; SigV4 signs before
 * the send). URLs are sent exactly as given (CURLOPT_PATH_AS_IS: `a/../b` is the key
 * `a/../b`, never another object), and no header is added or removed beyond what the request
 * lists, Host and Content-Length (no `Expect: 100-continue` dance for small bodies).
 */
#ifndef ICM_IO_HTTP_H
#define ICM_IO_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct icm__http icm__http;

typedef struct icm__http_options {
    int64_t connect_timeout_ms; /* 0: 10,000 */
    int64_t request_timeout_ms; /* whole request; 0: 60,000 */
    unsigned max_connections;   /* requests in flight at once; 0: 32 */
    const char *ca_bundle;      /* PEM file; NULL: the system's (copied) */
    bool verify_tls;            /* false only when asked for (a test server's own cert) */
    const char *client_cert;    /* PEM client certificate for mutual TLS; NULL: none (copied) */
    const char *client_key;     /* its PEM private key; NULL: in client_cert (copied) */
} icm__http_options;

/* A new client (into *out). Returns 0, ICM_ENOMEM, ICM_EINVALID (libcurl refused an option). */
int icm__http_new(icm__http **out, const icm__http_options *opts);
/* Free a client no request is using. NULL is fine. */
void icm__http_free(icm__http *h);

typedef struct icm__http_header {
    const char *name;
    const char *value;
} icm__http_header;

typedef struct icm__http_request {
    const char *method; /* "GET", "HEAD", "PUT", "POST", "DELETE" */
    const char *url;    /* absolute, already encoded; sent byte for byte */
    const icm__http_header *headers;
    size_t n_headers;
    const void *body; /* sent as is (PUT, POST); NULL with body_len 0: no body */
    size_t body_len;
    /* GET: write the body into this caller buffer instead of a new one (ranged reads); a
     * body longer than sink_cap is an error (ICM_EIO), never a partial silent copy. */
    void *sink;
    size_t sink_cap;
    int64_t timeout_ms; /* 0: the client's request timeout */
    /* Send on a new connection that is closed afterwards. libcurl silently sends a request
     * again when the reused keep-alive connection it went out on turns out dead (no byte
     * came back): harmless for a read, but a commit POST must leave at most once (the first
     * may have been applied: a second would turn its answer into a 409 for our own change). */
    bool fresh_connection;
} icm__http_request;

typedef struct icm__http_response {
    int status;       /* HTTP status; 0 when no response arrived */
    char *body;       /* icm_free; NUL-terminated beyond body_len; NULL when a sink was used */
    size_t body_len;  /* bytes received (into the sink too) */
    char *headers;    /* raw header block of the final response (icm_free) */
    /* Whether any byte of the request may have left this machine: always true once the
     * transfer started and an answer (or part of one) came, also when taking it in then failed
     * (ICM_ENOMEM, ICM_EIO for an overflowing sink); on a transport failure, what libcurl
     * says. false means the server cannot have acted on it; true means it may have (a
     * conditional write or a commit whose answer was lost has an unknown outcome). */
    bool request_sent;
    /* On a transport failure: no connection was made at all because the host name did not
     * resolve (resolve_failed, and then connect_failed too) or the connection was refused or
     * its network unreachable (connect_failed). Nothing was sent; a caller tells a wrong
     * endpoint (every attempt so) from a store that answered. */
    bool connect_failed;
    bool resolve_failed;
} icm__http_response;

/*
 * Send one request and wait for its whole response (blocking; thread-safe; waits for a free
 * connection when max_connections are busy).
 * Returns 0 when a response arrived, whatever its status; ICM_ENET (connection refused, reset,
 * DNS, TLS, a truncated body) or ICM_ETIMEOUT with resp->request_sent set and the last error
 * naming the URL (no query string: it may carry credentials) and curl's reason; ICM_ENOMEM;
 * ICM_EIO when the body overflows the sink (both with request_sent telling whether the request
 * may have been acted on). resp is always initialised (clear it afterwards).
 */
int icm__http_send(icm__http *h, const icm__http_request *req, icm__http_response *resp);

/*
 * Many requests from one thread (libcurl multi): a batch runs up to `max_in_flight` transfers
 * at once on the client's connections (the same keep-alive cache as icm__http_send's), all
 * driven by the thread that calls icm__http_batch_next; nothing here waits for a free handle
 * of the client's. For many small independent requests (HEADs, short ranged GETs), where a
 * thread per request in flight costs more than the requests. One thread at a time per batch.
 */
typedef struct icm__http_batch icm__http_batch;

/* A new batch of `h` (which must outlive it). Returns 0, ICM_ENOMEM, ICM_EINVALID. */
int icm__http_batch_new(icm__http *h, unsigned max_in_flight, icm__http_batch **out);
/* Free the batch; transfers still running are abandoned (their connections closed). NULL is
 * fine. */
void icm__http_batch_free(icm__http_batch *b);

/* Start `req`: it, its URL, headers, body and sink stay valid and untouched until its result
 * comes out of icm__http_batch_next; `tag` comes back with it. Returns 0; ICM_EINVALID when
 * max_in_flight are running already (a caller's mistake) or libcurl refused an option;
 * ICM_ENOMEM (the request was not started). */
int icm__http_batch_start(icm__http_batch *b, const icm__http_request *req, void *tag);
/* Transfers started and not yet returned by icm__http_batch_next. */
size_t icm__http_batch_running(const icm__http_batch *b);

/* One finished transfer: its tag, and rc and resp exactly as icm__http_send would have
 * returned them for it (clear resp afterwards). */
typedef struct icm__http_done {
    void *tag;
    int rc;
    icm__http_response resp;
} icm__http_done;

/*
 * Move the transfers on, waiting up to `timeout_ms` (0: not at all) for one to finish. Returns
 * 0 with done->tag the finished transfer's (done->rc and resp its outcome), or done->tag NULL
 * when none finished in time or none is running (start one with a non-NULL tag to tell);
 * ICM_ENOMEM or ICM_ENET when libcurl itself failed (the running transfers are then lost: free
 * the batch).
 */
int icm__http_batch_next(icm__http_batch *b, int64_t timeout_ms, icm__http_done *done);

/* The value of response header `name` (case-insensitive), trimmed, into a new string
 * (icm_free) in *out; *out NULL when absent. Returns 0 or ICM_ENOMEM. */
int icm__http_response_header(const icm__http_response *resp, const char *name, char **out);

void icm__http_response_clear(icm__http_response *resp);

#endif /* ICM_IO_HTTP_H */
