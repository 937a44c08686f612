/*
 * io/s3/s3_creds.c: the AWS credential provider chain and its cache (s3_config.h).
 *
 * The chain is chosen once, when the provider is built, in the SDKs' order: the properties,
 * the environment, the profile in the shared files, then the providers that fetch over HTTP
 * (web identity, container, instance metadata: chosen and checked in s3_creds_http.c, fetched
 * in s3_creds_fetch.c). The static sources are read then; the fetching one is asked on the first
 * get and again before its credentials expire.
 *
 * Refresh: credentials are fetched again once they are within ICM__AWS_CREDS_REFRESH_BEFORE_MS
 * of expiring. One thread fetches (without the lock held); the others keep using the old
 * credentials while those are still valid, and wait on the condition variable when they are
 * not. A failed refresh while the old credentials are still valid is not an error (the next
 * try comes ICM__AWS_CREDS_MIN_REFRESH_INTERVAL_MS later); a failed one after they expired is
 * returned to the fetching thread and to every thread that waited for it, so N threads cost
 * one request, not N.
 *
 * Vended credentials (a REST catalog's, in the table's properties, with a refresher from whoever
 * built the FileIO: io/fileio_refresh.h) are the properties' credentials first; once they are
 * due, the refresher is asked for the table's storage properties again and the credentials are
 * taken from those, by the same rules and through the same refresh machinery as the fetching
 * sources. A refresher that fails after the credentials expired gives one message naming the
 * table, when they expired and why they could not be renewed.
 *
 * Secrets never enter a message: errors name the source, the file and line, or the variable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/fileio_refresh.h"
#include "io/s3/aws_ini.h"
#include "io/s3/s3_config_internal.h"
#include "io/s3/s3_creds_http.h"
#include "util/util.h"

typedef enum source_kind {
    SRC_NONE = 0,   /* nothing configured: get fails listing what was tried */
    SRC_STATIC,     /* properties, environment or profile: `fixed` */
    SRC_WEB_IDENTITY,
    SRC_CONTAINER,
    SRC_IMDS,
    SRC_VENDED,     /* the properties' credentials, renewed through `refresher` */
    SRC_CUSTOM      /* test hook */
} source_kind;

struct icm__aws_creds_provider {
    pthread_mutex_t mu;
    pthread_cond_t cv;

    source_kind kind;
    const char *source;         /* static name of the chosen source */
    icm__aws_credentials fixed; /* SRC_STATIC */
    const char *fixed_expiry_origin; /* where fixed.expires_at_ms came from, for messages */
    icm__aws_http_source http_src; /* SRC_WEB_IDENTITY, SRC_CONTAINER, SRC_IMDS */
    icm__http *http;
    const icm__fileio_refresher *refresher; /* SRC_VENDED (borrowed) */
    bool fixed_handed_out; /* SRC_VENDED: `fixed` was used once; touched by the fetching
                              thread only */
    icm__aws_creds_fetch_fn custom;
    void *custom_payload;
    char *tried; /* what the chain looked at, for the "no credentials" message */

    int64_t (*now_ms)(void *);
    void *now_payload;

    /* Guarded by mu. */
    icm__aws_credentials cur;
    bool have;
    bool invalidated;
    bool refreshing;
    unsigned waiting;      /* threads in pthread_cond_wait (test hook) */
    int64_t refresh_at_ms; /* refresh once the clock reaches this (have) */
    uint64_t fail_gen;     /* bumped by each failed refresh a waiter must see */
    int fail_code;
    icm_error_class fail_class;
    int fail_status;
    char fail_remote[128];
    char fail_location[512];
    char fail_message[1024];
};

static int64_t default_now(void *payload)
{
    (void)payload;
    return icm__now_ms();
}

void icm__aws_credentials_clear(icm__aws_credentials *c)
{
    if (c == NULL)
        return;
    /* The secret does not linger in freed memory. */
    if (c->secret_access_key != NULL)
        explicit_bzero(c->secret_access_key, strlen(c->secret_access_key));
    if (c->session_token != NULL)
        explicit_bzero(c->session_token, strlen(c->session_token));
    icm__free(c->access_key_id);
    icm__free(c->secret_access_key);
    icm__free(c->session_token);
    memset(c, 0, sizeof *c);
}

static int creds_copy(icm__aws_credentials *dst, const icm__aws_credentials *src)
{
    memset(dst, 0, sizeof *dst);
    dst->access_key_id = icm__strdup(src->access_key_id);
    dst->secret_access_key = icm__strdup(src->secret_access_key);
    dst->session_token = src->session_token != NULL ? icm__strdup(src->session_token) : NULL;
    dst->expires_at_ms = src->expires_at_ms;
    dst->source = src->source;
    if (dst->access_key_id == NULL || dst->secret_access_key == NULL ||
        (src->session_token != NULL && dst->session_token == NULL)) {
        icm__aws_credentials_clear(dst);
        return icm__error_oom();
    }
    return 0;
}

static int creds_set(icm__aws_credentials *c, const char *key_id, const char *secret,
                     const char *token, const char *source)
{
    icm__aws_credentials tmp = {(char *)key_id, (char *)secret, (char *)token, 0, source};
    return creds_copy(c, &tmp);
}

/* "2026-12-02T03:04:05Z" for messages. */
static void format_time(char *buf, size_t cap, int64_t ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, cap, "%lld ms", (long long)ms);
}

/* ---- the static sources ---- */

/* Each credential field as PyIceberg reads it: the s3.* name, else the client.* one; into
 * *dst, with *expiry_origin the property the expiry time came from (NULL: none). */
static int creds_from_props(icm__aws_credentials *dst, const char **expiry_origin,
                            const icm_property *props, size_t n, bool *found)
{
    *found = false;
    const char *kname = "s3.access-key-id", *sname = "s3.secret-access-key";
    const char *key = icm__s3_prop(props, n, kname);
    if (key == NULL)
        key = icm__s3_prop(props, n, kname = "client.access-key-id");
    const char *secret = icm__s3_prop(props, n, sname);
    if (secret == NULL)
        secret = icm__s3_prop(props, n, sname = "client.secret-access-key");
    const char *token = icm__s3_prop(props, n, "s3.session-token");
    if (token == NULL)
        token = icm__s3_prop(props, n, "client.session-token");
    const char *exp = icm__s3_prop(props, n, "s3.session-token-expires-at-ms");
    if (key == NULL && secret == NULL) {
        if (token != NULL || exp != NULL)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "a session token is in the properties without "
                                  "s3.access-key-id and s3.secret-access-key");
        return 0;
    }
    if (secret == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s is set but s3.secret-access-key (or "
                              "client.secret-access-key) is not",
                              kname);
    if (key == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s is set but s3.access-key-id (or client.access-key-id) is not",
                              sname);
    int64_t expires = 0;
    if (exp != NULL) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(exp, &end, 10);
        if (end == exp || *end != '\0' || errno == ERANGE || v <= 0 || exp[0] == '+')
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "s3.session-token-expires-at-ms: \"%.64s\" is not a time in "
                                  "ms since the epoch",
                                  exp);
        expires = v;
        *expiry_origin = "s3.session-token-expires-at-ms";
    }
    int rc = creds_set(dst, key, secret, token, "properties");
    if (rc != 0)
        return rc;
    dst->expires_at_ms = expires;
    *found = true;
    return 0;
}

static int from_properties(icm__aws_creds_provider *p, const icm_property *props, size_t n,
                           bool *found)
{
    return creds_from_props(&p->fixed, &p->fixed_expiry_origin, props, n, found);
}

static int from_environment(icm__aws_creds_provider *p, bool *found)
{
    *found = false;
    const char *key = icm__s3_env("AWS_ACCESS_KEY_ID");
    const char *secret = icm__s3_env("AWS_SECRET_ACCESS_KEY");
    if (key == NULL && secret == NULL)
        return 0;
    if (secret == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    if (key == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
    int64_t expires = 0;
    const char *exp = icm__s3_env("AWS_CREDENTIAL_EXPIRATION");
    if (exp != NULL) {
        if (!icm__aws_parse_time(exp, &expires))
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "AWS_CREDENTIAL_EXPIRATION: \"%.64s\" is not an ISO-8601 "
                                  "time",
                                  exp);
        p->fixed_expiry_origin = "AWS_CREDENTIAL_EXPIRATION";
    }
    int rc = creds_set(&p->fixed, key, secret, icm__s3_env("AWS_SESSION_TOKEN"), "environment");
    if (rc != 0)
        return rc;
    p->fixed.expires_at_ms = expires;
    *found = true;
    return 0;
}

/* A profile key the chain does not implement: an error naming it, never skipped (the SDKs
 * would use it, so skipping it would sign with another identity than the user's). */
static int unsupported_in(const icm__aws_ini *ini, const icm__aws_ini_section *s,
                          const char *profile)
{
    for (size_t i = 0; s != NULL && i < s->n_entries; i++) {
        const icm__aws_ini_entry *e = &s->entries[i];
        if (e->parent != NULL)
            continue;
        if (strcmp(e->key, "credential_process") == 0 || strncmp(e->key, "sso_", 4) == 0)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, ini->path,
                                  "%s:%u: profile \"%s\" uses %s: not supported yet", ini->path,
                                  e->line, profile, e->key);
    }
    const icm__aws_ini_entry *role = icm__aws_ini_get(s, NULL, "role_arn");
    if (role == NULL)
        return 0;
    const icm__aws_ini_entry *src = icm__aws_ini_get(s, NULL, "source_profile");
    if (src == NULL)
        src = icm__aws_ini_get(s, NULL, "credential_source");
    if (src != NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, ini->path,
                              "%s:%u: profile \"%s\" uses role_arn with %s (assuming a role): "
                              "not supported yet",
                              ini->path, role->line, profile, src->key);
    if (icm__aws_ini_get(s, NULL, "web_identity_token_file") == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, ini->path,
                              "%s:%u: profile \"%s\" has role_arn without source_profile, "
                              "credential_source or web_identity_token_file",
                              ini->path, role->line, profile);
    return 0;
}

/* The keys of one section; *found false when it has neither key. */
static int keys_in(icm__aws_creds_provider *p, const icm__aws_ini *ini,
                   const icm__aws_ini_section *s, const char *profile, bool *found)
{
    *found = false;
    const icm__aws_ini_entry *key = icm__aws_ini_get(s, NULL, "aws_access_key_id");
    const icm__aws_ini_entry *secret = icm__aws_ini_get(s, NULL, "aws_secret_access_key");
    const icm__aws_ini_entry *token = icm__aws_ini_get(s, NULL, "aws_session_token");
    if (key != NULL && key->value[0] == '\0')
        key = NULL;
    if (secret != NULL && secret->value[0] == '\0')
        secret = NULL;
    if (token != NULL && token->value[0] == '\0')
        token = NULL;
    if (key == NULL && secret == NULL)
        return 0;
    if (key == NULL || secret == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, ini->path,
                              "%s:%u: profile \"%s\" has %s but no %s", ini->path,
                              (key != NULL ? key : secret)->line, profile,
                              key != NULL ? "aws_access_key_id" : "aws_secret_access_key",
                              key != NULL ? "aws_secret_access_key" : "aws_access_key_id");
    int rc = creds_set(&p->fixed, key->value, secret->value,
                       token != NULL ? token->value : NULL, "profile");
    if (rc == 0)
        *found = true;
    return rc;
}

static int load_file(icm__aws_ini *ini, bool credentials, char **path_out)
{
    bool explicit_path = false;
    memset(ini, 0, sizeof *ini);
    int rc = credentials ? icm__aws_credentials_path(path_out, &explicit_path)
                         : icm__aws_config_path(path_out, &explicit_path);
    if (rc != 0 || *path_out == NULL)
        return rc;
    return icm__aws_ini_load(ini, *path_out, explicit_path,
                             credentials ? "AWS_SHARED_CREDENTIALS_FILE" : "AWS_CONFIG_FILE");
}

static int from_profile(icm__aws_creds_provider *p, const icm__s3_config *cfg, icm__buf *tried,
                        bool *found)
{
    *found = false;
    const char *profile = cfg->profile != NULL ? cfg->profile : "default";
    icm__aws_ini creds, config;
    char *creds_path = NULL, *config_path = NULL;
    int rc = load_file(&creds, true, &creds_path);
    if (rc == 0)
        rc = load_file(&config, false, &config_path);
    else
        memset(&config, 0, sizeof config);
    if (rc != 0)
        goto done;
    /* The credentials file names profiles plainly ([name]); the config file as
     * [profile name] (and [default]). */
    const icm__aws_ini_section *cs = icm__aws_ini_find(&creds, profile);
    const icm__aws_ini_section *ps = icm__aws_ini_config_profile(&config, profile);
    icm__buf_printf(tried, ", profile \"%s\" in %s and %s", profile,
                    creds_path != NULL ? creds_path : "(no home directory)",
                    config_path != NULL ? config_path : "(no home directory)");
    if (cs == NULL && ps == NULL) {
        if (strcmp(profile, "default") != 0)
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                "profile \"%s\" is in neither %s nor %s", profile,
                                creds_path != NULL ? creds_path : "the credentials file",
                                config_path != NULL ? config_path : "the config file");
        goto done;
    }
    if ((rc = unsupported_in(&creds, cs, profile)) != 0 ||
        (rc = unsupported_in(&config, ps, profile)) != 0)
        goto done;
    /* role_arn with web_identity_token_file: web identity configured by the profile, which
     * the SDKs prefer to the profile's keys. */
    const icm__aws_ini_section *wsec = icm__aws_ini_get(cs, NULL, "role_arn") != NULL ? cs : ps;
    const icm__aws_ini_entry *role = icm__aws_ini_get(wsec, NULL, "role_arn");
    if (role != NULL) {
        const icm__aws_ini_entry *tf = icm__aws_ini_get(wsec, NULL, "web_identity_token_file");
        const icm__aws_ini_entry *sn = icm__aws_ini_get(wsec, NULL, "role_session_name");
        rc = icm__aws_web_identity_init(&p->http_src, cfg, role->value, tf->value,
                                        sn != NULL ? sn->value : NULL);
        if (rc == 0) {
            p->kind = SRC_WEB_IDENTITY;
            p->source = "web identity";
            *found = true;
        }
        goto done;
    }
    rc = keys_in(p, &creds, cs, profile, found);
    if (rc == 0 && !*found)
        rc = keys_in(p, &config, ps, profile, found);
done:
    icm__aws_ini_clear(&creds);
    icm__aws_ini_clear(&config);
    icm__free(creds_path);
    icm__free(config_path);
    return rc;
}

/* Properties asking for credentials the chain does not make: refused, never ignored (signing
 * with the base identity instead of the role, or instead of the catalog's remote signer, is
 * acting as someone the user did not choose). */
static int unsupported_properties(const icm_property *props, size_t n)
{
    static const char *const role_keys[] = {"s3.role-arn", "client.role-arn",
                                            "client.assume-role.arn"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(role_keys); i++)
        if (icm__s3_prop(props, n, role_keys[i]) != NULL)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, NULL,
                                  "%s: assuming a role is not supported yet", role_keys[i]);
    const char *remote = icm__s3_prop(props, n, "s3.remote-signing-enabled");
    bool on = false;
    int rc;
    if (remote != NULL &&
        (rc = icm__s3_parse_bool(remote, "s3.remote-signing-enabled", &on)) != 0)
        return rc;
    if (on)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, NULL,
                              "s3.remote-signing-enabled: remote signing is not supported yet");
    if (icm__s3_prop(props, n, "s3.signer") != NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, NULL,
                              "s3.signer: remote signing is not supported yet");
    return 0;
}

static icm__aws_creds_provider *provider_alloc(void)
{
    icm__aws_creds_provider *p = icm__calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        icm__free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        icm__free(p);
        return NULL;
    }
    p->now_ms = default_now;
    p->source = "none";
    return p;
}

int icm__aws_creds_provider_new(icm__aws_creds_provider **out, const icm__s3_config *cfg,
                                const icm_property *props, size_t n_props, icm__http *http)
{
    *out = NULL;
    icm__aws_creds_provider *p = provider_alloc();
    if (p == NULL)
        return icm__error_oom();
    p->http = http;
    icm__buf tried = ICM__BUF_INIT;
    bool found = false;
    int rc = unsupported_properties(props, n_props);
    if (rc == 0)
        rc = from_properties(p, props, n_props, &found);
    if (rc == 0 && found) {
        p->kind = SRC_STATIC;
        p->source = "properties";
        goto done;
    }
    icm__buf_puts(&tried, "the properties (s3.access-key-id, client.access-key-id)");
    if (rc == 0)
        rc = from_environment(p, &found);
    if (rc == 0 && found) {
        p->kind = SRC_STATIC;
        p->source = "environment";
        goto done;
    }
    icm__buf_puts(&tried, ", the environment (AWS_ACCESS_KEY_ID)");
    if (rc == 0)
        rc = from_profile(p, cfg, &tried, &found);
    if (rc == 0 && found) {
        if (p->kind == SRC_NONE) {
            p->kind = SRC_STATIC;
            p->source = "profile";
        }
        goto done;
    }
    if (rc == 0) {
        icm__aws_http_kind kind;
        rc = icm__aws_http_source_init(&p->http_src, cfg, &kind, &tried);
        if (rc == 0) {
            switch (kind) {
            case ICM__AWS_HTTP_WEB_IDENTITY:
                p->kind = SRC_WEB_IDENTITY;
                p->source = "web identity";
                break;
            case ICM__AWS_HTTP_CONTAINER:
                p->kind = SRC_CONTAINER;
                p->source = "container";
                break;
            case ICM__AWS_HTTP_IMDS:
                p->kind = SRC_IMDS;
                p->source = "instance metadata";
                break;
            case ICM__AWS_HTTP_NONE:
                break;
            }
        }
    }
done:
    if (rc == 0 && tried.oom)
        rc = icm__error_oom();
    if (rc == 0 && http == NULL &&
        (p->kind == SRC_WEB_IDENTITY || p->kind == SRC_CONTAINER || p->kind == SRC_IMDS))
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                            "credentials from %s need an HTTP client, and none was given",
                            p->source);
    if (rc == 0) {
        p->tried = icm__buf_detach(&tried, NULL);
        if (p->tried == NULL)
            p->tried = icm__strdup("nothing");
        if (p->tried == NULL)
            rc = icm__error_oom();
    }
    icm__buf_dispose(&tried);
    if (rc != 0) {
        icm__aws_creds_provider_free(p);
        return rc;
    }
    if (p->kind == SRC_STATIC)
        p->fixed.source = p->source;
    *out = p;
    return 0;
}

int icm__aws_creds_provider_new_custom(icm__aws_creds_provider **out, icm__aws_creds_fetch_fn fetch,
                                       void *payload)
{
    *out = NULL;
    icm__aws_creds_provider *p = provider_alloc();
    if (p == NULL)
        return icm__error_oom();
    p->kind = SRC_CUSTOM;
    p->source = "test source";
    p->custom = fetch;
    p->custom_payload = payload;
    p->tried = icm__strdup("a test source");
    if (p->tried == NULL) {
        icm__aws_creds_provider_free(p);
        return icm__error_oom();
    }
    *out = p;
    return 0;
}

void icm__aws_creds_provider_set_clock(icm__aws_creds_provider *p,
                                       int64_t (*now_ms)(void *payload), void *payload)
{
    p->now_ms = now_ms != NULL ? now_ms : default_now;
    p->now_payload = payload;
}

unsigned icm__aws_creds_provider_waiting(icm__aws_creds_provider *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned n = p->waiting;
    pthread_mutex_unlock(&p->mu);
    return n;
}

const char *icm__aws_creds_provider_source(const icm__aws_creds_provider *p)
{
    return p->source;
}

void icm__aws_creds_provider_free(icm__aws_creds_provider *p)
{
    if (p == NULL)
        return;
    icm__aws_credentials_clear(&p->fixed);
    icm__aws_credentials_clear(&p->cur);
    icm__aws_http_source_clear(&p->http_src);
    icm__free(p->tried);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    icm__free(p);
}

/* Free properties that carry secrets: the values do not linger in freed memory. */
static void props_free_secret(icm_property *props, size_t n)
{
    for (size_t i = 0; props != NULL && i < n; i++)
        if (props[i].value != NULL)
            explicit_bzero((char *)(uintptr_t)props[i].value, strlen(props[i].value));
    icm__fileio_props_free(props, n);
}

/* SRC_VENDED after the first credentials: the table's storage properties again, from the
 * refresher, and the credentials in them (by the properties' rules). */
static int renew_vended(icm__aws_creds_provider *p, icm__aws_credentials *out)
{
    icm_property *props = NULL;
    size_t n = 0;
    int rc = p->refresher->refresh(p->refresher->payload, &props, &n);
    if (rc != 0)
        return rc;
    bool found = false;
    const char *origin = NULL;
    rc = creds_from_props(out, &origin, props, n, &found);
    props_free_secret(props, n);
    if (rc == 0 && !found)
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                            "the renewed storage configuration of %s has no S3 credentials "
                            "(s3.access-key-id, s3.secret-access-key)",
                            p->refresher->what);
    if (rc == 0)
        out->source = p->source;
    return rc;
}

/* One fetch from the chosen source, without the lock. */
static int fetch(icm__aws_creds_provider *p, int64_t now, icm__aws_credentials *out)
{
    memset(out, 0, sizeof *out);
    switch (p->kind) {
    case SRC_VENDED:
        /* The credentials the table was loaded with serve until they are due; every later
         * fetch (due, or refused by S3 as expired) asks the refresher. */
        if (!p->fixed_handed_out &&
            (p->fixed.expires_at_ms == 0 || now < p->fixed.expires_at_ms)) {
            p->fixed_handed_out = true;
            return creds_copy(out, &p->fixed);
        }
        p->fixed_handed_out = true;
        return renew_vended(p, out);
    case SRC_STATIC:
        if (p->fixed.expires_at_ms != 0 && p->fixed.expires_at_ms <= now) {
            char when[64];
            format_time(when, sizeof when, p->fixed.expires_at_ms);
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                                  "the AWS credentials from the %s expired at %s (%s), and "
                                  "that source cannot renew them",
                                  p->source, when, p->fixed_expiry_origin);
        }
        return creds_copy(out, &p->fixed);
    case SRC_CUSTOM: {
        int rc = p->custom(p->custom_payload, out);
        if (rc == 0)
            out->source = p->source;
        return rc;
    }
    case SRC_WEB_IDENTITY:
    case SRC_CONTAINER:
    case SRC_IMDS:
        return icm__aws_http_source_fetch(&p->http_src, p->http, p->tried, out);
    case SRC_NONE:
        break;
    }
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL, "no AWS credentials: tried %s",
                          p->tried);
}

static void remember_failure(icm__aws_creds_provider *p)
{
    const icm_error *e = icm__error_last();
    p->fail_code = e->code != 0 ? e->code : ICM_EAUTH;
    p->fail_class = e->klass;
    p->fail_status = e->http_status;
    snprintf(p->fail_remote, sizeof p->fail_remote, "%s", e->remote_code);
    snprintf(p->fail_location, sizeof p->fail_location, "%s", e->location);
    snprintf(p->fail_message, sizeof p->fail_message, "%s", e->message);
    p->fail_gen++;
}

static int replay_failure(const icm__aws_creds_provider *p)
{
    int rc = icm__error_set(p->fail_class, p->fail_code,
                            p->fail_location[0] != '\0' ? p->fail_location : NULL, "%s",
                            p->fail_message);
    if (p->fail_status != 0)
        icm__error_set_http_status(p->fail_status);
    if (p->fail_remote[0] != '\0')
        icm__error_set_remote_code(p->fail_remote);
    return rc;
}

/* Vended credentials expired (or S3 refused them as expired) and the refresher failed: one
 * message naming the table, the expiry and the refresher's reason (its status and remote
 * code kept): ICM_EAUTH, whatever the refresher's code was. Called with the lock held. */
static int vended_expired(icm__aws_creds_provider *p)
{
    const icm_error *e = icm__error_last();
    char why[768], remote[128], location[512];
    snprintf(why, sizeof why, "%s", e->message);
    snprintf(remote, sizeof remote, "%s", e->remote_code);
    snprintf(location, sizeof location, "%s", e->location);
    int status = e->http_status;
    int64_t expired_at = p->have ? p->cur.expires_at_ms : p->fixed.expires_at_ms;
    char when[80] = "";
    if (expired_at != 0) {
        char t[64];
        format_time(t, sizeof t, expired_at);
        snprintf(when, sizeof when, "expired at %s", t);
    } else {
        snprintf(when, sizeof when, "were refused by S3 as expired");
    }
    int rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, location[0] != '\0' ? location : NULL,
                            "the vended S3 credentials for %s %s and could not be renewed: %s",
                            p->refresher->what, when, why);
    if (status != 0)
        icm__error_set_http_status(status);
    if (remote[0] != '\0')
        icm__error_set_remote_code(remote);
    return rc;
}

int icm__aws_creds_get(icm__aws_creds_provider *p, icm__aws_credentials *out)
{
    return icm__aws_creds_get_ex(p, out, NULL);
}

int icm__aws_creds_get_ex(icm__aws_creds_provider *p, icm__aws_credentials *out, bool *waited)
{
    memset(out, 0, sizeof *out);
    if (waited != NULL)
        *waited = false;
    pthread_mutex_lock(&p->mu);
    int rc;
    for (;;) {
        int64_t now = p->now_ms(p->now_payload);
        bool usable = p->have && !p->invalidated &&
                      (p->cur.expires_at_ms == 0 || now < p->cur.expires_at_ms);
        if (usable && (p->cur.expires_at_ms == 0 || now < p->refresh_at_ms)) {
            rc = creds_copy(out, &p->cur);
            break;
        }
        if (p->refreshing) {
            if (usable) {
                rc = creds_copy(out, &p->cur); /* another thread is renewing them */
                break;
            }
            uint64_t gen = p->fail_gen;
            p->waiting++;
            if (waited != NULL)
                *waited = true;
            pthread_cond_wait(&p->cv, &p->mu);
            p->waiting--;
            if (p->fail_gen != gen) {
                rc = replay_failure(p);
                break;
            }
            continue;
        }
        p->refreshing = true;
        /* (a first look at credentials given as properties takes no time) */
        if (waited != NULL && (p->have || p->kind != SRC_STATIC))
            *waited = true;
        pthread_mutex_unlock(&p->mu);
        icm__aws_credentials fresh;
        rc = fetch(p, now, &fresh);
        pthread_mutex_lock(&p->mu);
        p->refreshing = false;
        now = p->now_ms(p->now_payload);
        if (rc == 0 && fresh.expires_at_ms != 0 && fresh.expires_at_ms <= now) {
            char when[64];
            format_time(when, sizeof when, fresh.expires_at_ms);
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                                "the AWS credentials from the %s had already expired (at %s) "
                                "when they arrived",
                                p->source, when);
            icm__aws_credentials_clear(&fresh);
        }
        if (rc == 0) {
            icm__aws_credentials_clear(&p->cur);
            p->cur = fresh;
            p->have = true;
            p->invalidated = false;
            if (fresh.expires_at_ms != 0) {
                int64_t at = fresh.expires_at_ms - ICM__AWS_CREDS_REFRESH_BEFORE_MS;
                int64_t soonest = now + ICM__AWS_CREDS_MIN_REFRESH_INTERVAL_MS;
                if (at < soonest)
                    at = soonest < fresh.expires_at_ms ? soonest : fresh.expires_at_ms;
                p->refresh_at_ms = at;
            }
            pthread_cond_broadcast(&p->cv);
            rc = creds_copy(out, &p->cur);
            break;
        }
        usable = p->have && !p->invalidated &&
                 (p->cur.expires_at_ms == 0 || now < p->cur.expires_at_ms);
        if (usable && rc != ICM_ENOMEM) {
            /* An early refresh failed; the old credentials are still good. Try again later,
             * not on every request. */
            int64_t soonest = now + ICM__AWS_CREDS_MIN_REFRESH_INTERVAL_MS;
            p->refresh_at_ms = soonest < p->cur.expires_at_ms ? soonest : p->cur.expires_at_ms;
            pthread_cond_broadcast(&p->cv);
            rc = creds_copy(out, &p->cur);
            break;
        }
        if (p->kind == SRC_VENDED && rc != ICM_ENOMEM)
            rc = vended_expired(p);
        remember_failure(p);
        pthread_cond_broadcast(&p->cv);
        break;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

bool icm__aws_creds_provider_set_refresher(icm__aws_creds_provider *p,
                                           const icm__fileio_refresher *refresher)
{
    if (p == NULL || refresher == NULL || refresher->refresh == NULL || p->kind != SRC_STATIC ||
        strcmp(p->source, "properties") != 0)
        return false;
    p->kind = SRC_VENDED;
    p->source = "catalog";
    p->fixed.source = p->source;
    p->refresher = refresher;
    return true;
}

void icm__aws_creds_invalidate(icm__aws_creds_provider *p)
{
    pthread_mutex_lock(&p->mu);
    p->invalidated = true;
    pthread_mutex_unlock(&p->mu);
}
