/*
 * test_rest_credentials.c: vended storage credentials renewed while a table's FileIO works
 * (io/fileio_refresh.h, the S3 credential provider's vended source in io/s3/s3_creds.c, the
 * REST catalog's icm__rest_load_storage_config, catalog/storage_refresh.c).
 *
 * The provider, on a clock of the test's own: credentials from the table's properties serve
 * until they are due (5 minutes before s3.session-token-expires-at-ms), then the refresher's
 * properties give the next ones; a refresher that fails while the credentials are still valid
 * is no error and is asked again 30 s later, not on every request; once they have expired the
 * request fails with one line naming the table, the expiry and the refresher's reason (its
 * HTTP status kept, no secret in it); a refresher that recovers renews them; 16 threads that
 * find them expired cost one refresh; S3's ExpiredToken on credentials without an expiry
 * renews them too; the refresher is only taken for credentials that came from the
 * properties.
 *
 * The REST catalog, against a scripted server on 127.0.0.1: the credentials endpoint when
 * /v1/config lists it (the longest matching prefix wins), a load with the delegation header
 * when the server lists no endpoints (the spec's default set has no credentials endpoint) or
 * lists endpoints without it; a refusal and a list without a matching prefix are errors naming
 * the URL; eight threads renewing at once each get their answer, and a token refused once is
 * renewed once. End to end: a table loaded from the catalog reads an object from S3 (the same
 * server) signed with the vended key, then, after those credentials expired, with the renewed
 * one, after exactly one credentials request; with the endpoint refusing, the read fails with
 * the message.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "aws_testenv.h"
#include "catalog/rest/rest_internal.h"
#include "icemaint/catalog.h"
#include "icemaint/sys/catalog.h"
#include "icemaint/sys/fileio.h"
#include "io/fileio_refresh.h"
#include "io/s3/s3_config_internal.h"
#include "rest_server.h"
#include "testutil.h"
#include "util/util.h"

/* ---- the provider with a refresher, on the test's clock ---- */

#define MIN_MS ((int64_t)60 * 1000)
#define T0 ((int64_t)1800000000000)

typedef struct fake {
    pthread_mutex_t mu;
    int64_t now;
    int calls;
    bool fail;              /* answer as a catalog that refuses (HTTP 503) */
    int64_t next_expiry;    /* of the credentials the next refresh hands out; 0: none */
    unsigned block_until;   /* hold the refresh until this many threads wait (0: do not) */
    icm__aws_creds_provider *p;
} fake;

static int64_t fake_now(void *payload)
{
    fake *f = payload;
    pthread_mutex_lock(&f->mu);
    int64_t now = f->now;
    pthread_mutex_unlock(&f->mu);
    return now;
}

static void fake_set_now(fake *f, int64_t now)
{
    pthread_mutex_lock(&f->mu);
    f->now = now;
    pthread_mutex_unlock(&f->mu);
}

static icm_property prop(const char *k, const char *v)
{
    return (icm_property){icm__strdup(k), icm__strdup(v)};
}

static int fake_refresh(void *payload, icm_property **out, size_t *n_out)
{
    fake *f = payload;
    for (int i = 0; f->block_until > 0 && i < 5000; i++) {
        if (icm__aws_creds_provider_waiting(f->p) >= f->block_until)
            break;
        usleep(1000);
    }
    pthread_mutex_lock(&f->mu);
    int n = ++f->calls;
    bool fail = f->fail;
    int64_t expiry = f->next_expiry;
    pthread_mutex_unlock(&f->mu);
    if (fail) {
        int rc = icm__error_set(ICM_ERRCLASS_REST, ICM_EIO,
                                "http://catalog/v1/namespaces/ns/tables/t/credentials",
                                "load credentials: HTTP 503 ServiceUnavailableException: down");
        icm__error_set_http_status(503);
        return rc;
    }
    char key[32], secret[32], token[32], exp[32];
    snprintf(key, sizeof key, "AKRENEWED%d", n);
    snprintf(secret, sizeof secret, "SECRETRENEWED%d", n);
    snprintf(token, sizeof token, "TOKENRENEWED%d", n);
    snprintf(exp, sizeof exp, "%lld", (long long)expiry);
    icm_property *props = icm__calloc(5, sizeof *props);
    size_t k = 0;
    props[k++] = prop("s3.endpoint", "http://ignored.example");
    props[k++] = prop("s3.access-key-id", key);
    props[k++] = prop("s3.secret-access-key", secret);
    props[k++] = prop("s3.session-token", token);
    if (expiry != 0)
        props[k++] = prop("s3.session-token-expires-at-ms", exp);
    *out = props;
    *n_out = k;
    return 0;
}

static const icm__fileio_refresher *fake_refresher(fake *f)
{
    static icm__fileio_refresher r;
    r = (icm__fileio_refresher){fake_refresh, NULL, f, "table ns.t of catalog 'c'"};
    return &r;
}

/* A provider over the table's properties: key AKVENDED, expiring at `expiry` (0: no expiry
 * property), renewed through f. */
static icm__aws_creds_provider *vended_provider(fake *f, int64_t expiry)
{
    char exp[32];
    snprintf(exp, sizeof exp, "%lld", (long long)expiry);
    icm_property props[] = {{"s3.access-key-id", "AKVENDED"},
                            {"s3.secret-access-key", "SECRETVENDED"},
                            {"s3.session-token", "TOKENVENDED"},
                            {"s3.session-token-expires-at-ms", exp}};
    size_t n = expiry != 0 ? 4 : 3;
    icm__s3_config cfg;
    icmt_ok(icm__s3_config_resolve(&cfg, props, n));
    icm__aws_creds_provider *p = NULL;
    icmt_ok(icm__aws_creds_provider_new(&p, &cfg, props, n, NULL));
    icm__s3_config_clear(&cfg);
    pthread_mutex_init(&f->mu, NULL);
    f->p = p;
    icm__aws_creds_provider_set_clock(p, fake_now, f);
    assert_true(icm__aws_creds_provider_set_refresher(p, fake_refresher(f)));
    return p;
}

static void fake_done(fake *f)
{
    icm__aws_creds_provider_free(f->p);
    pthread_mutex_destroy(&f->mu);
}

/* get succeeds with this key id. */
static void expect_key(icm__aws_creds_provider *p, const char *key)
{
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_get(p, &c));
    assert_string_equal(c.access_key_id, key);
    icm__aws_credentials_clear(&c);
}

static void test_due_credentials_are_renewed(void **state)
{
    (void)state;
    fake f = {.now = T0, .next_expiry = T0 + 70 * MIN_MS};
    icm__aws_creds_provider *p = vended_provider(&f, T0 + 10 * MIN_MS);
    expect_key(p, "AKVENDED");
    fake_set_now(&f, T0 + 4 * MIN_MS); /* not due before 5 minutes ahead of expiry */
    expect_key(p, "AKVENDED");
    assert_int_equal(f.calls, 0);
    fake_set_now(&f, T0 + 5 * MIN_MS + 1);
    expect_key(p, "AKRENEWED1");
    assert_int_equal(f.calls, 1);
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_get(p, &c));
    assert_string_equal(c.secret_access_key, "SECRETRENEWED1");
    assert_string_equal(c.session_token, "TOKENRENEWED1");
    assert_int_equal(c.expires_at_ms, T0 + 70 * MIN_MS);
    icm__aws_credentials_clear(&c);
    assert_int_equal(f.calls, 1); /* the renewed ones are not due */
    fake_done(&f);
}

static void test_failed_renewal_before_expiry_then_after(void **state)
{
    (void)state;
    fake f = {.now = T0, .fail = true, .next_expiry = T0 + 70 * MIN_MS};
    icm__aws_creds_provider *p = vended_provider(&f, T0 + 10 * MIN_MS);
    expect_key(p, "AKVENDED");
    fake_set_now(&f, T0 + 6 * MIN_MS);
    expect_key(p, "AKVENDED"); /* the refresh failed: no error, the old ones serve */
    assert_int_equal(f.calls, 1);
    expect_key(p, "AKVENDED"); /* and it is not asked again on every request */
    fake_set_now(&f, T0 + 6 * MIN_MS + 29 * 1000);
    expect_key(p, "AKVENDED");
    assert_int_equal(f.calls, 1);
    fake_set_now(&f, T0 + 6 * MIN_MS + 31 * 1000);
    expect_key(p, "AKVENDED");
    assert_int_equal(f.calls, 2);

    fake_set_now(&f, T0 + 10 * MIN_MS); /* expired, and the catalog still refuses */
    icm__aws_credentials c;
    assert_int_equal(icm__aws_creds_get(p, &c), ICM_EAUTH);
    assert_null(c.access_key_id);
    const icm_error *e = icm_error_last();
    assert_non_null(strstr(e->message, "the vended S3 credentials for table ns.t of catalog 'c' "
                                       "expired at 2027-01-15T08:10:00Z and could not be "
                                       "renewed: load credentials: HTTP 503"));
    assert_null(strchr(e->message, '\n'));
    assert_null(strstr(e->message, "SECRET"));
    assert_null(strstr(e->message, "TOKEN"));
    assert_int_equal(e->http_status, 503);
    assert_string_equal(e->location, "http://catalog/v1/namespaces/ns/tables/t/credentials");
    assert_int_equal(f.calls, 3);

    pthread_mutex_lock(&f.mu);
    f.fail = false; /* the catalog is back */
    pthread_mutex_unlock(&f.mu);
    expect_key(p, "AKRENEWED4");
    fake_done(&f);
}

typedef struct getter {
    icm__aws_creds_provider *p;
    int rc;
    char key[32];
} getter;

static void *get_thread(void *arg)
{
    getter *g = arg;
    icm__aws_credentials c;
    g->rc = icm__aws_creds_get(g->p, &c);
    if (g->rc == 0)
        snprintf(g->key, sizeof g->key, "%s", c.access_key_id);
    icm__aws_credentials_clear(&c);
    return NULL;
}

static void test_threads_share_one_renewal(void **state)
{
    (void)state;
    enum { N = 16 };
    fake f = {.now = T0, .next_expiry = T0 + 70 * MIN_MS};
    icm__aws_creds_provider *p = vended_provider(&f, T0 + 10 * MIN_MS);
    expect_key(p, "AKVENDED");
    fake_set_now(&f, T0 + 11 * MIN_MS); /* expired: nobody may sign with them */
    f.block_until = N - 1;              /* the refresh waits for the other 15 to queue */
    pthread_t th[N];
    getter g[N];
    for (int i = 0; i < N; i++) {
        g[i] = (getter){p, -1, ""};
        assert_int_equal(pthread_create(&th[i], NULL, get_thread, &g[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(g[i].rc, 0);
        assert_string_equal(g[i].key, "AKRENEWED1");
    }
    assert_int_equal(f.calls, 1);
    fake_done(&f);
}

static void test_threads_keep_valid_credentials_while_one_renews(void **state)
{
    (void)state;
    enum { N = 8 };
    fake f = {.now = T0, .next_expiry = T0 + 70 * MIN_MS};
    icm__aws_creds_provider *p = vended_provider(&f, T0 + 10 * MIN_MS);
    expect_key(p, "AKVENDED");
    fake_set_now(&f, T0 + 7 * MIN_MS); /* due but still valid */
    pthread_t th[N];
    getter g[N];
    for (int i = 0; i < N; i++) {
        g[i] = (getter){p, -1, ""};
        assert_int_equal(pthread_create(&th[i], NULL, get_thread, &g[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(g[i].rc, 0);
        assert_true(strcmp(g[i].key, "AKVENDED") == 0 || strcmp(g[i].key, "AKRENEWED1") == 0);
    }
    assert_int_equal(f.calls, 1);
    assert_int_equal(icm__aws_creds_provider_waiting(p), 0);
    expect_key(p, "AKRENEWED1");
    fake_done(&f);
}

static void test_expired_token_renews_credentials_without_expiry(void **state)
{
    (void)state;
    fake f = {.now = T0, .next_expiry = 0};
    icm__aws_creds_provider *p = vended_provider(&f, 0);
    expect_key(p, "AKVENDED");
    fake_set_now(&f, T0 + 1000 * MIN_MS);
    expect_key(p, "AKVENDED"); /* no expiry: never due */
    assert_int_equal(f.calls, 0);
    icm__aws_creds_invalidate(p); /* S3 answered ExpiredToken */
    expect_key(p, "AKRENEWED1");
    assert_int_equal(f.calls, 1);
    fake_done(&f);
}

static void test_expired_at_load_renewed_at_once(void **state)
{
    (void)state;
    fake f = {.now = T0, .next_expiry = T0 + 70 * MIN_MS};
    icm__aws_creds_provider *p = vended_provider(&f, T0 - 1);
    expect_key(p, "AKRENEWED1");
    assert_int_equal(f.calls, 1);
    fake_done(&f);
}

/* A refresher renews the catalog's credentials only: keys from the environment stay as
 * they are (and are not the catalog's to replace). */
static void test_refresher_only_for_property_credentials(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRETENV", 1);
    icm__s3_config cfg;
    icmt_ok(icm__s3_config_resolve(&cfg, NULL, 0));
    icm__aws_creds_provider *p = NULL;
    icmt_ok(icm__aws_creds_provider_new(&p, &cfg, NULL, 0, NULL));
    icm__s3_config_clear(&cfg);
    fake f = {.now = T0};
    assert_false(icm__aws_creds_provider_set_refresher(p, fake_refresher(&f)));
    assert_string_equal(icm__aws_creds_provider_source(p), "environment");
    expect_key(p, "AKENV");
    icm__aws_creds_provider_free(p);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
}

/* ---- the REST catalog ---- */

#define UUID "9c12d441-03fe-4693-9a96-a0705ddf69c1"

static char *load_result(const char *location, const char *extra)
{
    return icmt_sprintf(
        "{\"metadata-location\":\"%s/metadata/00001-x.metadata.json\",\"metadata\":"
        "{\"format-version\":2,\"table-uuid\":\"" UUID "\",\"location\":\"%s\","
        "\"last-sequence-number\":0,\"last-updated-ms\":1700000000000,\"last-column-id\":1,"
        "\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,"
        "\"fields\":[{\"id\":1,\"name\":\"x\",\"required\":false,\"type\":\"long\"}]}],"
        "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"last-partition-id\":999,\"default-sort-order-id\":0,"
        "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{},"
        "\"snapshots\":[],\"refs\":{},\"snapshot-log\":[],\"metadata-log\":[]}%s}",
        location, location, extra);
}

/* One storage credential with key id `key`, expiring at `expiry` ms. */
static char *cred_json(const char *prefix, const char *key, long long expiry)
{
    return icmt_sprintf("{\"prefix\":\"%s\",\"config\":{\"s3.access-key-id\":\"%s\","
                        "\"s3.secret-access-key\":\"SECRET-%s\",\"s3.session-token\":"
                        "\"TOKEN-%s\",\"s3.session-token-expires-at-ms\":\"%lld\"}}",
                        prefix, key, key, key, expiry);
}

#define LOC "s3://bkt/wh/ns/t"
#define TABLE_PATH "/v1/namespaces/ns/tables/t"
#define CREDS_PATH TABLE_PATH "/credentials"
#define EP_LOAD "\"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}\""
#define EP_CREDS "\"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials\""

/* Three credentials: the bucket's, the table's (longest), another table's. */
static char *three_creds(void)
{
    char *a = cred_json("s3://bkt", "AKBUCKET", 1), *b = cred_json(LOC, "AKTABLE", 2);
    char *c = cred_json("s3://bkt/wh/ns/t2", "AKOTHER", 3);
    char *r = icmt_sprintf("[%s,%s,%s]", a, b, c);
    free(a);
    free(b);
    free(c);
    return r;
}

typedef struct env {
    server *s;
    icm_fileio *io;
    char *uri;
    void *aws;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    awst_setup(&e->aws);
    e->s = server_start();
    e->uri = icmt_sprintf("http://127.0.0.1:%d", e->s->port);
    icm_property props[] = {{"s3.endpoint", e->uri}, {"s3.region", "us-east-1"},
                            {"s3.retry.max-attempts", "1"}};
    icmt_ok(icm_fileio_resolving_new(&e->io, props, 3));
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    server_stop(e->s);
    icm_fileio_free(e->io);
    free(e->uri);
    awst_teardown(&e->aws);
    free(e);
    return 0;
}

static icm_catalog *open_cat(env *e, const char *config_body)
{
    route1(e->s, "GET", "/v1/config", 200, config_body);
    icm_property props[] = {{"uri", e->uri}, {"rest.client.max-retries", "0"}};
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_rest(&cat, "rest_test", e->io, props, 2));
    assert_true(icm__catalog_is_rest(cat));
    return cat;
}

static const char *const NS[] = {"ns"};
static const icm_table_ident ID = {"ns", "t", NS, 1};

static const char *get(const icm_property *props, size_t n, const char *key)
{
    return icm_fileio_property(props, n, key);
}

static void test_credentials_endpoint_when_listed(void **state)
{
    env *e = *state;
    icm_catalog *cat = open_cat(e, "{\"defaults\":{},\"overrides\":{},\"endpoints\":[" EP_LOAD
                                   "," EP_CREDS "]}");
    char *creds = three_creds();
    char *body = icmt_sprintf("{\"storage-credentials\":%s}", creds);
    route1(e->s, "GET", CREDS_PATH, 200, body);
    icm_property *props = NULL;
    size_t n = 0;
    icmt_ok(icm__rest_load_storage_config(cat, &ID, LOC, &props, &n));
    assert_string_equal(get(props, n, "s3.access-key-id"), "AKTABLE");
    assert_string_equal(get(props, n, "s3.session-token-expires-at-ms"), "2");
    assert_int_equal(count(e->s, "GET", CREDS_PATH), 1);
    assert_int_equal(count(e->s, "GET", TABLE_PATH), 0);
    icm__fileio_props_free(props, n);

    /* no entry for the table's location: an error naming the request */
    char *other = cred_json("s3://elsewhere", "AKX", 1);
    char *body2 = icmt_sprintf("{\"storage-credentials\":[%s]}", other);
    route1(e->s, "GET", CREDS_PATH, 200, body2);
    assert_int_equal(icm__rest_load_storage_config(cat, &ID, LOC, &props, &n), ICM_EAUTH);
    assert_null(props);
    assert_non_null(strstr(icm_error_last()->message, "none of the 1 storage credentials"));
    assert_non_null(strstr(icm_error_last()->location, CREDS_PATH));

    /* a refusal: the status and the server's error, no retry of a 403 */
    route1(e->s, "GET", CREDS_PATH, 403,
           "{\"error\":{\"message\":\"no access\",\"type\":\"ForbiddenException\",\"code\":403}}");
    assert_int_equal(icm__rest_load_storage_config(cat, &ID, LOC, &props, &n), ICM_EAUTH);
    assert_int_equal(icm_error_last()->http_status, 403);
    assert_non_null(strstr(icm_error_last()->message, "load credentials: HTTP 403"));
    assert_int_equal(count(e->s, "GET", CREDS_PATH), 3);
    assert_int_equal(count(e->s, "GET", TABLE_PATH), 0);

    /* not the spec's shape */
    route1(e->s, "GET", CREDS_PATH, 200, "{\"credentials\":[]}");
    assert_int_equal(icm__rest_load_storage_config(cat, &ID, LOC, &props, &n), ICM_EINVALID);
    icm_catalog_free(cat);
    free(other);
    free(body2);
    free(creds);
    free(body);
}

/* A server that lists no endpoints offers the spec's default set, which has no credentials
 * endpoint; one that lists endpoints without it does not offer it either: a load, with the
 * delegation header, renews the credentials. */
static void test_reload_when_endpoint_not_offered(void **state)
{
    env *e = *state;
    const char *configs[] = {
        "{\"defaults\":{},\"overrides\":{}}",
        "{\"defaults\":{},\"overrides\":{},\"endpoints\":[" EP_LOAD "]}",
    };
    char *creds = three_creds();
    char *extra = icmt_sprintf(",\"config\":{\"s3.access-key-id\":\"AKCONFIG\","
                               "\"s3.secret-access-key\":\"SECRET-AKCONFIG\","
                               "\"client.region\":\"eu-west-1\"},\"storage-credentials\":%s",
                               creds);
    char *load = load_result(LOC, extra);
    for (size_t k = 0; k < 2; k++) {
        icm_catalog *cat = open_cat(e, configs[k]);
        route1(e->s, "GET", TABLE_PATH, 200, load);
        route1(e->s, "GET", CREDS_PATH, 500, "{}");
        int before = count(e->s, "GET", TABLE_PATH);
        icm_property *props = NULL;
        size_t n = 0;
        icmt_ok(icm__rest_load_storage_config(cat, &ID, LOC, &props, &n));
        assert_string_equal(get(props, n, "s3.access-key-id"), "AKTABLE");
        assert_string_equal(get(props, n, "client.region"), "eu-west-1");
        icm__fileio_props_free(props, n);
        assert_int_equal(count(e->s, "GET", TABLE_PATH), before + 1);
        assert_int_equal(count(e->s, "GET", CREDS_PATH), 0);
        pthread_mutex_lock(&e->s->mu);
        const req *last = &e->s->reqs[e->s->n_reqs - 1];
        assert_string_equal(last->path, TABLE_PATH);
        assert_string_equal(header(last, "X-Iceberg-Access-Delegation"), "vended-credentials");
        pthread_mutex_unlock(&e->s->mu);
        icm_catalog_free(cat);
    }
    free(creds);
    free(extra);
    free(load);
}

typedef struct storage_caller {
    icm_catalog *cat;
    int rc;
    char key[32];
} storage_caller;

static void *storage_config_thread(void *arg)
{
    storage_caller *c = arg;
    icm_property *props = NULL;
    size_t n = 0;
    c->rc = icm__rest_load_storage_config(c->cat, &ID, LOC, &props, &n);
    const char *key = c->rc == 0 ? icm_fileio_property(props, n, "s3.access-key-id") : NULL;
    snprintf(c->key, sizeof c->key, "%s", key != NULL ? key : "");
    icm__fileio_props_free(props, n);
    return NULL;
}

/* Renewals come from storage threads, several tables' at once: each gets its answer, and a
 * bearer token refused once (401) is renewed once, not by every thread that holds it. */
static void test_renewals_from_many_threads(void **state)
{
    env *e = *state;
    enum { N = 8 };
    route1(e->s, "POST", "/v1/oauth/tokens", 200,
           "{\"access_token\":\"tok\",\"token_type\":\"bearer\",\"expires_in\":3600}");
    route1(e->s, "GET", "/v1/config", 200,
           "{\"defaults\":{},\"overrides\":{},\"endpoints\":[" EP_LOAD "," EP_CREDS "]}");
    icm_property props[] = {{"uri", e->uri}, {"credential", "client:secret"}};
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_rest(&cat, "rest_test", e->io, props, 2));
    assert_int_equal(count(e->s, "POST", "/v1/oauth/tokens"), 1);
    char *creds = three_creds();
    char *body = icmt_sprintf("{\"storage-credentials\":%s}", creds);
    step steps[] = {{401, NULL, "{\"error\":{\"message\":\"expired\",\"type\":"
                                "\"NotAuthorizedException\",\"code\":401}}", ANSWER},
                    {200, NULL, body, ANSWER}};
    route_set(e->s, "GET", CREDS_PATH, steps, 2);
    pthread_t th[N];
    storage_caller c[N];
    for (int i = 0; i < N; i++) {
        c[i] = (storage_caller){cat, -1, ""};
        assert_int_equal(pthread_create(&th[i], NULL, storage_config_thread, &c[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(c[i].rc, 0);
        assert_string_equal(c[i].key, "AKTABLE");
    }
    assert_int_equal(count(e->s, "GET", CREDS_PATH), N + 1);
    assert_int_equal(count(e->s, "POST", "/v1/oauth/tokens"), 2);
    icm_catalog_free(cat);
    free(creds);
    free(body);
}

/* A table of a catalog that offers the credentials endpoint, loaded with vended keys (AKFIRST,
 * TOKENFIRST) that expire `ttl_ms` from now, the credentials endpoint answering `creds_status`
 * with `creds_body`, and the object LOC/data/f.parquet ("hello") on the same server playing S3. */
typedef struct vended_table {
    icm_catalog *cat;
    icm_table *t;
    icm_fileio *io;     /* the table's */
    long long soon;     /* when the first keys expire (ms since epoch) */
    char *first, *load; /* the load answer's config and body */
} vended_table;

static vended_table vended_table_load(env *e, long long ttl_ms, int creds_status,
                                      const char *creds_body)
{
    vended_table v = {NULL, NULL, NULL, 0, NULL, NULL};
    v.cat = open_cat(e, "{\"defaults\":{},\"overrides\":{},\"endpoints\":[" EP_LOAD "," EP_CREDS
                        "]}");
    v.soon = (long long)icm__now_ms() + ttl_ms;
    v.first = icmt_sprintf(",\"config\":{\"s3.access-key-id\":\"AKFIRST\","
                           "\"s3.secret-access-key\":\"SECRETFIRST\","
                           "\"s3.session-token\":\"TOKENFIRST\","
                           "\"s3.session-token-expires-at-ms\":\"%lld\"}",
                           v.soon);
    v.load = load_result(LOC, v.first);
    route1(e->s, "GET", TABLE_PATH, 200, v.load);
    route1(e->s, "GET", CREDS_PATH, creds_status, creds_body);
    route1(e->s, "GET", "/bkt/wh/ns/t/data/f.parquet", 200, "hello");
    icmt_ok(icm_table_load(&v.t, v.cat, "ns.t"));
    v.io = icm_table_get_fileio(v.t);
    return v;
}

static void vended_table_free(vended_table *v)
{
    icm_table_free(v->t);
    icm_catalog_free(v->cat);
    free(v->first);
    free(v->load);
}

/* The whole way: a table's FileIO signs its S3 requests (the same server plays S3) with the
 * vended key, and after that key expired with the one the credentials endpoint renewed it
 * with, after exactly one credentials request. */
static void test_table_fileio_renews_through_catalog(void **state)
{
    env *e = *state;
    char *renewed = cred_json(LOC, "AKSECOND", (long long)icm__now_ms() + 3600 * 1000);
    char *creds = icmt_sprintf("{\"storage-credentials\":[%s]}", renewed);
    vended_table v = vended_table_load(e, 1500, 200, creds);
    icm_fileio *io = v.io;
    long long soon = v.soon;
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, LOC "/data/f.parquet"));
    assert_int_equal(len, 5);
    icm_free(data);
    pthread_mutex_lock(&e->s->mu);
    const req *r1 = &e->s->reqs[e->s->n_reqs - 1];
    assert_non_null(strstr(header(r1, "Authorization"), "Credential=AKFIRST/"));
    assert_string_equal(header(r1, "X-Amz-Security-Token"), "TOKENFIRST");
    pthread_mutex_unlock(&e->s->mu);
    assert_int_equal(count(e->s, "GET", CREDS_PATH), 0);

    while (icm__now_ms() <= soon)
        usleep(50 * 1000);
    icmt_ok(icm_fileio_read(&data, &len, io, LOC "/data/f.parquet"));
    icm_free(data);
    pthread_mutex_lock(&e->s->mu);
    const req *r2 = &e->s->reqs[e->s->n_reqs - 1];
    assert_string_equal(r2->path, "/bkt/wh/ns/t/data/f.parquet");
    assert_non_null(strstr(header(r2, "Authorization"), "Credential=AKSECOND/"));
    assert_string_equal(header(r2, "X-Amz-Security-Token"), "TOKEN-AKSECOND");
    pthread_mutex_unlock(&e->s->mu);
    assert_int_equal(count(e->s, "GET", CREDS_PATH), 1);
    icmt_ok(icm_fileio_read(&data, &len, io, LOC "/data/f.parquet"));
    icm_free(data);
    assert_int_equal(count(e->s, "GET", CREDS_PATH), 1);
    assert_int_equal(count(e->s, "GET", TABLE_PATH), 1);

    vended_table_free(&v);
    free(renewed);
    free(creds);
}

/* The credentials endpoint refuses once the vended ones have expired: the read fails with one
 * line naming the table, that the credentials expired, and the catalog's answer. */
static void test_table_fileio_fails_when_renewal_refused(void **state)
{
    env *e = *state;
    vended_table v = vended_table_load(e, 1000, 403,
                                       "{\"error\":{\"message\":\"grant revoked\","
                                       "\"type\":\"ForbiddenException\",\"code\":403}}");
    icm_fileio *io = v.io;
    long long soon = v.soon;
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&data, &len, io, LOC "/data/f.parquet"));
    icm_free(data);
    while (icm__now_ms() <= soon)
        usleep(50 * 1000);
    int objects = count(e->s, "GET", "/bkt/wh/ns/t/data/f.parquet");
    assert_int_equal(icm_fileio_read(&data, &len, io, LOC "/data/f.parquet"), ICM_EAUTH);
    const icm_error *err = icm_error_last();
    assert_non_null(strstr(err->message, "the vended S3 credentials for table ns.t of catalog "
                                         "'rest_test' expired at "));
    assert_non_null(strstr(err->message, "and could not be renewed: load credentials: HTTP 403 "
                                         "ForbiddenException: grant revoked"));
    assert_null(strchr(err->message, '\n'));
    assert_null(strstr(err->message, "SECRET"));
    assert_null(strstr(err->message, "TOKENFIRST"));
    assert_int_equal(err->http_status, 403);
    /* nothing was sent to S3 with the expired credentials */
    assert_int_equal(count(e->s, "GET", "/bkt/wh/ns/t/data/f.parquet"), objects);
    vended_table_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_due_credentials_are_renewed, awst_setup,
                                        awst_teardown),
        cmocka_unit_test_setup_teardown(test_failed_renewal_before_expiry_then_after,
                                        awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_one_renewal, awst_setup,
                                        awst_teardown),
        cmocka_unit_test_setup_teardown(test_threads_keep_valid_credentials_while_one_renews,
                                        awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_expired_token_renews_credentials_without_expiry,
                                        awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_expired_at_load_renewed_at_once, awst_setup,
                                        awst_teardown),
        cmocka_unit_test_setup_teardown(test_refresher_only_for_property_credentials,
                                        awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_credentials_endpoint_when_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_when_endpoint_not_offered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renewals_from_many_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_fileio_renews_through_catalog, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_table_fileio_fails_when_renewal_refused, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
