/*
 * catalog/rest/rest_client.c: sending a request to an Iceberg REST catalog: authentication,
 * headers, SigV4 and the retry rules, and turning an error answer into icm_error.
 *
 * Authentication (spec §OAuth2, PyIceberg and Java's rest/auth):
 *  - `token`: sent as `Authorization: Bearer <token>`;
 *  - `credential` (`client_id:client_secret`, split at the first ':'; no ':' = the secret
 *    alone): OAuth2 client credentials, a form POST to `oauth2-server-uri`, else to the
 *    deprecated `{uri}/v1/oauth/tokens` (Java and PyIceberg warn about that fallback; the
 *    library prints nothing, so it is only used, and documented here), with `scope`
 *    (default `catalog`) and the optional `audience` and `resource`. The token is renewed
 *    before it expires (at 90 % of `expires_in`, one hour assumed when the answer has none,
 *    as Java assumes), and once after a 401 or 419, re-sending the refused request once: a
 *    request refused for its token was not applied. Java renews by token exchange; a new
 *    client-credentials grant (Java's fallback with token-exchange disabled) needs nothing the
 *    server may not offer.
 *  - `rest.sigv4-enabled`: every request is signed with SigV4 (`rest.signing-region`,
 *    `rest.signing-name`, default `execute-api`) over the hex SHA-256 of its body, with
 *    credentials from `rest.access-key-id` / `rest.secret-access-key` / `rest.session-token`
 *    (Java's names) or `client.*`, else the AWS chain (environment, profile, web identity,
 *    container, instance metadata). A bearer token is then sent as Original-Authorization,
 *    signed too, as Java does. The canonical path of a service other than S3 is the path as
 *    sent encoded once more (AWS's rule for every service but S3).
 * No token, secret or credential is ever put into a message.
 *
 * Retries (the Iceberg clients' rules, §7.7 of the reference): a request the server never
 * acted on (429, or 503 with Retry-After) may be re-sent whatever its method, honouring
 * Retry-After; a GET also after an I/O error once the request was sent (a refused connection
 * fails at once), 408, 500, 502, 503 or 504, with exponential
 * back-off (1 s, 2 s, 4 s ..., at most 64 s, up to `rest.client.max-retries`, default 5).
 * A commit POST is never re-sent after anything else: its outcome is then unknown.
 *
 * Threads: the HTTP client and the configuration are shared read-only; the token is read,
 * renewed and dropped under token_lock, each request sending a copy, so that table FileIOs
 * renewing their vended credentials on storage threads may call in while the caller's thread
 * uses the catalog. Renewals are serialised: N threads finding the token due cost one.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "catalog/catalog_internal.h"
#include "catalog/rest/rest_client.h"
#include "io/sigv4.h"
#include "util/util.h"

#define TOKEN_DEFAULT_LIFETIME_S 3600 /* Java's token-expires-in-ms default */
#define RETRY_WAIT_CAP_MS 64000
#define MAX_HEADERS 48

/* ---- messages ---- */

char *icm__rest_shown_url(const char *url)
{
    size_t n = strcspn(url, "?#");
    char *plain = icm__strndup(url, n);
    if (plain == NULL)
        return NULL;
    size_t size = n + 8;
    char *shown = icm__malloc(size);
    if (shown != NULL)
        icm__redact_uri(plain, shown, size);
    icm__free(plain);
    return shown;
}

static int code_for_status(int status)
{
    switch (status) {
    case 400:
        return ICM_EINVALID;
    case 401:
    case 403:
    case 419:
        return ICM_EAUTH;
    case 404:
        return ICM_ENOTFOUND;
    case 406:
    case 501:
        return ICM_EUNSUPPORTED;
    case 409:
        return ICM_EEXISTS;
    case 408:
    case 504:
        return ICM_ETIMEOUT;
    default:
        return ICM_EIO;
    }
}

int icm__rest_fail(const icm__rest *r, const char *what, const char *url,
                   const icm__http_response *resp, int code)
{
    (void)r;
    icm__rest_error e;
    if (icm__rest_parse_error(resp->body, resp->body_len, &e) != 0)
        return icm__error_oom();
    char *shown = icm__rest_shown_url(url);
    if (shown == NULL) {
        icm__rest_error_dispose(&e);
        return icm__error_oom();
    }
    int rc = icm__error_set(ICM_ERRCLASS_REST, code != 0 ? code : code_for_status(resp->status),
                            shown, "%s: HTTP %d%s%s%s%s", what, resp->status,
                            e.type[0] != '\0' ? " " : "", e.type, e.message[0] != '\0' ? ": " : "",
                            e.message);
    icm__error_set_http_status(resp->status);
    if (e.type[0] != '\0')
        icm__error_set_remote_code(e.type);
    icm__rest_error_dispose(&e);
    icm__free(shown);
    return rc;
}

/* ---- authentication ---- */

static bool prop_true(const icm__rest_props *p, const char *key)
{
    const char *v = icm__rest_props_get(p, key);
    return v != NULL && strcasecmp(v, "true") == 0;
}

void icm__rest_auth_dispose(icm__rest *r)
{
    icm__free(r->token);
    icm__free(r->client_id);
    icm__free(r->client_secret);
    icm__free(r->oauth_uri);
    icm__free(r->signing_region);
    icm__free(r->signing_name);
    icm__aws_creds_provider_free(r->aws);
    icm__s3_config_clear(&r->aws_cfg);
    r->token = r->client_id = r->client_secret = r->oauth_uri = NULL;
    r->signing_region = r->signing_name = NULL;
    r->aws = NULL;
}

/* The AWS credentials of SigV4 for REST: Java's rest.* names (as client.*), then client.*
 * and the chain. The catalog's s3.* keys are the storage's, never the catalog's. */
static int sigv4_init(icm__rest *r, const icm__rest_props *props)
{
    static const char *const pass[][2] = {
        {"rest.access-key-id", "client.access-key-id"},
        {"rest.secret-access-key", "client.secret-access-key"},
        {"rest.session-token", "client.session-token"},
        {"client.access-key-id", NULL},
        {"client.secret-access-key", NULL},
        {"client.session-token", NULL},
        {"client.region", NULL},
        {"client.profile-name", NULL},
    };
    icm__rest_props aws = {0};
    int rc = 0;
    /* client.* first, then the rest.* ones over them */
    for (size_t i = 3; rc == 0 && i < ICM__ARRAY_LEN(pass); i++) {
        const char *v = icm__rest_props_get(props, pass[i][0]);
        if (v != NULL)
            rc = icm__rest_props_put(&aws, pass[i][0], v);
    }
    for (size_t i = 0; rc == 0 && i < 3; i++) {
        const char *v = icm__rest_props_get(props, pass[i][0]);
        if (v != NULL)
            rc = icm__rest_props_put(&aws, pass[i][1], v);
    }
    const char *region = icm__rest_props_get(props, "rest.signing-region");
    if (rc == 0 && region != NULL)
        rc = icm__rest_props_put(&aws, "client.region", region);
    if (rc == 0)
        rc = icm__s3_config_resolve(&r->aws_cfg, aws.items, aws.len);
    if (rc == 0)
        rc = icm__aws_creds_provider_new(&r->aws, &r->aws_cfg, aws.items, aws.len, r->http);
    const char *name = icm__rest_props_get(props, "rest.signing-name");
    if (rc == 0) {
        r->signing_region = icm__strdup(region != NULL ? region : r->aws_cfg.region);
        r->signing_name = icm__strdup(name != NULL && name[0] ? name : "execute-api");
        if (r->signing_region == NULL || r->signing_name == NULL)
            rc = ICM_ENOMEM;
    }
    icm__rest_props_dispose(&aws);
    if (rc == 0)
        r->sigv4 = true;
    return rc;
}

int icm__rest_auth_init(icm__rest *r, const icm__rest_props *props)
{
    icm__rest_auth_dispose(r);
    r->sigv4 = false;
    r->token_refresh_at_ms = 0;
    const char *token = icm__rest_props_get(props, "token");
    const char *credential = icm__rest_props_get(props, "credential");
    const char *server = icm__rest_props_get(props, "oauth2-server-uri");
    if (token != NULL && token[0] != '\0' && (r->token = icm__strdup(token)) == NULL)
        return ICM_ENOMEM;
    if (credential != NULL && credential[0] != '\0') {
        const char *colon = strchr(credential, ':');
        r->client_id = colon != NULL ? icm__strndup(credential, (size_t)(colon - credential))
                                     : NULL;
        r->client_secret = icm__strdup(colon != NULL ? colon + 1 : credential);
        r->oauth_uri = server != NULL && server[0] != '\0'
                           ? icm__strdup(server)
                           : icm__sprintf("%s/v1/oauth/tokens", r->uri);
        if ((colon != NULL && r->client_id == NULL) || r->client_secret == NULL ||
            r->oauth_uri == NULL)
            return ICM_ENOMEM;
        /* A token given with the credential is used until it would expire (assumed to be
         * an hour, its real lifetime unknown here), then renewed with the credential. */
        if (r->token != NULL)
            r->token_refresh_at_ms = icm__now_ms() + TOKEN_DEFAULT_LIFETIME_S * 900;
    }
    if (prop_true(props, "rest.sigv4-enabled"))
        return sigv4_init(r, props);
    return 0;
}

/* Append `key=value` to a form body, both percent-encoded strictly. */
static void form_put(icm__buf *b, const char *key, const char *value)
{
    if (b->len > 0)
        icm__buf_putc(b, '&');
    icm__sigv4_encode(b, key, strlen(key), false);
    icm__buf_putc(b, '=');
    icm__sigv4_encode(b, value, strlen(value), false);
}

static int send_once(icm__rest *r, const icm__rest_call *call, const char *bearer,
                     icm__http_response *resp);

/* OAuth2 client credentials: a new token into r->token. */
static int fetch_token(icm__rest *r)
{
    icm__buf form = ICM__BUF_INIT;
    form_put(&form, "grant_type", "client_credentials");
    if (r->client_id != NULL)
        form_put(&form, "client_id", r->client_id);
    form_put(&form, "client_secret", r->client_secret);
    const char *scope = icm__rest_props_get(&r->props, "scope");
    form_put(&form, "scope", scope != NULL && scope[0] != '\0' ? scope : "catalog");
    const char *audience = icm__rest_props_get(&r->props, "audience");
    const char *resource = icm__rest_props_get(&r->props, "resource");
    if (audience != NULL && audience[0] != '\0')
        form_put(&form, "audience", audience);
    if (resource != NULL && resource[0] != '\0')
        form_put(&form, "resource", resource);
    if (form.oom) {
        icm__buf_dispose(&form);
        return icm__error_oom();
    }
    icm__rest_call call = {"POST", r->oauth_uri, form.data, form.len,
                           "application/x-www-form-urlencoded", false, false};
    icm__http_response resp;
    int rc = send_once(r, &call, NULL, &resp);
    icm__buf_dispose(&form);
    if (rc == 0 && resp.status != 200) {
        rc = icm__rest_fail(r, "OAuth2 token request refused", r->oauth_uri, &resp,
                            resp.status >= 500 ? ICM_EIO : ICM_EAUTH);
    } else if (rc == 0) {
        char *shown = icm__rest_shown_url(r->oauth_uri);
        char *token = NULL;
        int64_t expires_in = -1;
        rc = shown != NULL ? icm__rest_parse_token(resp.body, resp.body_len, shown, &token,
                                                   &expires_in)
                           : ICM_ENOMEM;
        icm__free(shown);
        if (rc == 0) {
            icm__free(r->token);
            r->token = token;
            int64_t life_s = expires_in >= 0 ? expires_in : TOKEN_DEFAULT_LIFETIME_S;
            r->token_refresh_at_ms = icm__now_ms() + life_s * 900; /* at 90 % */
        }
    }
    icm__http_response_clear(&resp);
    return rc;
}

/* The token to send (a copy in *out, NULL when none): one that is due (or none yet, with a
 * credential) is fetched first, by one thread at a time. */
static int current_token(icm__rest *r, char **out)
{
    *out = NULL;
    pthread_mutex_lock(&r->token_lock);
    int rc = 0;
    if (r->client_secret != NULL &&
        (r->token == NULL || icm__now_ms() >= r->token_refresh_at_ms))
        rc = fetch_token(r);
    if (rc == 0 && r->token != NULL && (*out = icm__strdup(r->token)) == NULL)
        rc = icm__error_oom();
    pthread_mutex_unlock(&r->token_lock);
    return rc;
}

/* The server refused `sent` (401/419): drop it, unless another thread renewed it already. */
static void drop_token(icm__rest *r, const char *sent)
{
    pthread_mutex_lock(&r->token_lock);
    if (r->token != NULL && sent != NULL && strcmp(r->token, sent) == 0) {
        icm__free(r->token);
        r->token = NULL;
    }
    pthread_mutex_unlock(&r->token_lock);
}

/* ---- one request ---- */

/* scheme://host[:port]/path?query → host (with a non-default port) and path / query. */
static int split_url(const char *url, char **host, const char **path, const char **query)
{
    const char *p = strstr(url, "://");
    if (p == NULL)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, NULL, "not a URL");
    bool https = strncasecmp(url, "https", 5) == 0;
    p += 3;
    size_t n = strcspn(p, "/?#");
    const char *at = memchr(p, '@', n); /* user:password@ is no part of the Host */
    if (at != NULL) {
        n -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    size_t hn = n;
    if (hn > 3 && !https && strncmp(p + hn - 3, ":80", 3) == 0)
        hn -= 3;
    else if (hn > 4 && https && strncmp(p + hn - 4, ":443", 4) == 0)
        hn -= 4;
    *host = icm__strndup(p, hn);
    if (*host == NULL)
        return ICM_ENOMEM;
    const char *rest = p + n;
    *path = rest[0] == '/' ? rest : "/";
    const char *q = strchr(rest, '?');
    *query = q != NULL ? q + 1 : "";
    return 0;
}

static int send_once(icm__rest *r, const icm__rest_call *call, const char *bearer,
                     icm__http_response *resp)
{
    memset(resp, 0, sizeof *resp);
    icm__http_header hdrs[MAX_HEADERS + 8];
    size_t n = 0;
    char *auth = bearer != NULL ? icm__sprintf("Bearer %s", bearer) : NULL;
    if (bearer != NULL && auth == NULL)
        return icm__error_oom();
    if (call->body != NULL)
        hdrs[n++] = (icm__http_header){"Content-Type", call->content_type != NULL
                                                           ? call->content_type
                                                           : "application/json"};
    hdrs[n++] = (icm__http_header){"Accept", "application/json"};
    hdrs[n++] = (icm__http_header){"User-Agent", "icemaint"};
    bool delegation_set = false;
    for (size_t i = 0; i < r->n_headers && n < MAX_HEADERS; i++) {
        hdrs[n++] = r->headers[i];
        delegation_set |= strcasecmp(r->headers[i].name, "X-Iceberg-Access-Delegation") == 0;
    }
    if (call->vended && !delegation_set)
        hdrs[n++] = (icm__http_header){"X-Iceberg-Access-Delegation", "vended-credentials"};
    int rc = 0;
    icm__sigv4_signed sig;
    icm__aws_credentials creds = {0};
    char *host = NULL;
    char *canonical_uri = NULL;
    if (r->sigv4) {
        if (auth != NULL)
            hdrs[n++] = (icm__http_header){"Original-Authorization", auth};
        const char *path = NULL, *query = NULL;
        char payload[65];
        icm__sha256_hex(call->body != NULL ? call->body : "", call->body_len, payload);
        rc = split_url(call->url, &host, &path, &query);
        icm__buf cu = ICM__BUF_INIT;
        if (rc == 0) {
            size_t plen = strcspn(path, "?#");
            icm__sigv4_encode(&cu, path, plen, true);
            canonical_uri = icm__buf_detach(&cu, NULL);
            if (canonical_uri == NULL)
                rc = ICM_ENOMEM;
        }
        if (rc == 0)
            rc = icm__aws_creds_get(r->aws, &creds);
        if (rc == 0) {
            icm__sigv4_request sreq = {call->method, host, canonical_uri, query, hdrs, n, payload,
                                       r->signing_region, r->signing_name, (int64_t)time(NULL)};
            icm__sigv4_credentials sc = {creds.access_key_id, creds.secret_access_key,
                                         creds.session_token};
            size_t n_sig = 0;
            rc = icm__sigv4_sign(&sreq, &sc, &sig, hdrs + n, &n_sig);
            n += n_sig;
        }
    } else if (auth != NULL) {
        hdrs[n++] = (icm__http_header){"Authorization", auth};
    }
    if (rc == 0) {
        /* A request that changes something never rides a reused connection (http.h): libcurl
         * would send it again by itself after a dead keep-alive connection. */
        bool once = strcmp(call->method, "GET") != 0 && strcmp(call->method, "HEAD") != 0;
        icm__http_request req = {call->method, call->url, hdrs, n, call->body, call->body_len,
                                 NULL, 0, 0, once};
        r->n_requests++;
        rc = icm__http_send(r->http, &req, resp);
    }
    icm__aws_credentials_clear(&creds);
    icm__free(canonical_uri);
    icm__free(host);
    icm__free(auth);
    return rc;
}

/* Retry-After in ms (seconds or an HTTP-date); -1 when absent or unreadable. */
static int64_t retry_after_ms(const icm__http_response *resp)
{
    char *v = NULL;
    if (icm__http_response_header(resp, "Retry-After", &v) != 0 || v == NULL)
        return -1;
    int64_t ms = -1;
    char *end = NULL;
    long long s = strtoll(v, &end, 10);
    if (end != v && *end == '\0' && s >= 0)
        ms = s > RETRY_WAIT_CAP_MS / 1000 ? RETRY_WAIT_CAP_MS : (int64_t)s * 1000;
    else {
        time_t t = curl_getdate(v, NULL);
        if (t != (time_t)-1) {
            int64_t d = (int64_t)t * 1000 - icm__now_ms();
            ms = d < 0 ? 0 : d > RETRY_WAIT_CAP_MS ? RETRY_WAIT_CAP_MS : d;
        }
    }
    icm__free(v);
    return ms;
}

static void sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static bool is_get(const icm__rest_call *call)
{
    return strcmp(call->method, "GET") == 0 || strcmp(call->method, "HEAD") == 0;
}

int icm__rest_send(icm__rest *r, const icm__rest_call *call, icm__http_response *resp,
                   unsigned *retries)
{
    memset(resp, 0, sizeof *resp);
    if (retries != NULL)
        *retries = 0;
    bool reauthed = false;
    unsigned attempt = 0;
    for (;;) {
        char *token = NULL;
        int rc = current_token(r, &token);
        if (rc != 0)
            return rc;
        rc = send_once(r, call, token, resp);
        bool refused = rc == 0 && (resp->status == 401 || resp->status == 419) && !reauthed &&
                       r->client_secret != NULL;
        if (refused)
            drop_token(r, token);
        icm__free(token);
        bool again = false;
        int64_t wait = -1;
        if (rc == ICM_ENET || rc == ICM_ETIMEOUT) {
            /* A POST's fate after an I/O error is the caller's to tell; a connection that was
             * never made (refused, no such host) is not worth waiting for, as in Java. */
            again = is_get(call) && resp->request_sent;
        } else if (rc != 0) {
            return rc;
        } else if (refused) {
            /* Refused for its token, so not applied as the spec has it: renew once and send
             * it again. It counts as a re-send all the same: a gateway in front of the
             * catalog may have passed the first copy on before refusing it (adversary round
             * 17, F1), so for a commit every answer but success is open from here on. */
            reauthed = true;
            icm__http_response_clear(resp);
            if (retries != NULL)
                *retries = ++attempt;
            continue;
        } else if (resp->status == 429 ||
                   (resp->status == 503 && (wait = retry_after_ms(resp)) >= 0)) {
            again = true;
            if (resp->status == 429)
                wait = retry_after_ms(resp);
        } else if (is_get(call) && (resp->status == 408 || resp->status == 500 ||
                                    resp->status == 502 || resp->status == 503 ||
                                    resp->status == 504)) {
            again = true;
        }
        if (!again || attempt >= r->max_retries)
            return rc;
        if (wait < 0) {
            int64_t base = (int64_t)1000 << (attempt < 6 ? attempt : 6);
            wait = base > RETRY_WAIT_CAP_MS ? RETRY_WAIT_CAP_MS : base;
            wait += (int64_t)(rand() % 100) * wait / 1000; /* up to 10 % jitter */
        }
        attempt++;
        if (retries != NULL)
            *retries = attempt;
        icm__http_response_clear(resp);
        icm_error_clear();
        sleep_ms(wait);
    }
}
