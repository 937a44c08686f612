/*
 * catalog/rest/rest_client.h: the REST catalog's handle and its one way of sending a request
 * (internal): authentication (static bearer token, OAuth2 client credentials with refresh,
 * SigV4), the `header.*` headers, and the retry rules of the Iceberg REST clients.
 */
#ifndef ICM_CATALOG_REST_CLIENT_H
#define ICM_CATALOG_REST_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>

#include "catalog/rest/rest_internal.h"
#include "io/http.h"
#include "io/s3/s3_config.h"

typedef struct icm__rest {
    icm_catalog base;
    icm__http *http;
    char *uri;              /* the catalog's base URI, no trailing '/' */
    char *shown_uri;        /* the same for messages (a password in it shown as ***) */
    char *prefix;           /* the `prefix` property, NULL when none (no empty segment) */
    char *ns_sep;           /* namespace separator as put in URLs ("%1F" by default) */
    icm__rest_props client; /* the properties as configured */
    icm__rest_props props;  /* defaults < client < overrides (GET /v1/config) */
    icm__rest_config server;
    unsigned max_retries;   /* `rest.client.max-retries` (Java's name), default 5 */
    /* header.* (names and values owned) */
    icm__http_header *headers;
    size_t n_headers;
    /* authentication; requests come from several threads (table FileIOs renewing vended
     * credentials), so the token and its renewal are guarded by token_lock once the catalog
     * is open */
    pthread_mutex_t token_lock;
    char *token;                /* the bearer token now in use; NULL: none */
    int64_t token_refresh_at_ms; /* renew from then on; 0: never (a static token) */
    char *client_id;            /* `credential` before its first ':'; NULL when none */
    char *client_secret;        /* the rest (the whole value without a ':'); NULL: no OAuth */
    char *oauth_uri;            /* `oauth2-server-uri`, else {uri}/v1/oauth/tokens */
    /* SigV4 (`rest.sigv4-enabled`) */
    bool sigv4;
    char *signing_region, *signing_name;
    icm__s3_config aws_cfg;
    icm__aws_creds_provider *aws;
    /* statistics, for tests and verbose output */
    _Atomic unsigned long n_requests;
} icm__rest;

/* One request. `url` is absolute and encoded. A `commit` POST changes a table: it is
 * re-sent only after a 429, or a 503 with Retry-After (the server did not act on it), and
 * after a 401/419 once with a new token (it was refused before being applied); every other
 * request is also re-sent after an I/O error or 408/500/502/503/504 when it is a GET. */
typedef struct icm__rest_call {
    const char *method;
    const char *url;
    const char *body;
    size_t body_len;
    const char *content_type; /* NULL: application/json when there is a body */
    bool commit;
    bool vended;              /* X-Iceberg-Access-Delegation: vended-credentials */
} icm__rest_call;

/*
 * Send `call` and wait for its final response (after the re-sends above). Returns 0 when a
 * response arrived, whatever its status (resp filled: clear it); ICM_ENET / ICM_ETIMEOUT with
 * resp->request_sent telling whether the request may have reached the server; ICM_EAUTH /
 * the token endpoint's codes when no token could be had (nothing was sent); ICM_ENOMEM.
 * *retries counts the re-sends after 429/503/5xx/I/O errors (not the one after a 401).
 */
int icm__rest_send(icm__rest *r, const icm__rest_call *call, icm__http_response *resp,
                   unsigned *retries);

/* Set the last error for a response that is not a success: "<what>: HTTP <status> <type>:
 * <message>" naming the URL (without its query), with http_status and the Iceberg error
 * `type` as remote_code. `code` 0: by status (400 EINVALID, 401/403/419 EAUTH, 404
 * ENOTFOUND, 406/501 EUNSUPPORTED, 409 EEXISTS, 408/504 ETIMEOUT, else EIO). */
int icm__rest_fail(const icm__rest *r, const char *what, const char *url,
                   const icm__http_response *resp, int code);

/* `url` without its query string, a password shown as *** (new string; NULL on ENOMEM). */
char *icm__rest_shown_url(const char *url);

/* Set up authentication from r->props (after the config merge: the token endpoint and
 * credential may come from the server's defaults). Returns 0, ICM_EINVALID, ICM_ENOMEM. */
int icm__rest_auth_init(icm__rest *r, const icm__rest_props *props);
void icm__rest_auth_dispose(icm__rest *r);

#endif /* ICM_CATALOG_REST_CLIENT_H */
