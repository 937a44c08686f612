/*
 * test_aws_creds.c: the AWS credential chain's static sources, its cache and refresh rules,
 * and the parsers of the credential endpoints' answers (io/s3/s3_config.h,
 * io/s3/s3_config_internal.h).
 *
 * The chain: properties (s3.* then client.*, field by field as PyIceberg) beat the environment,
 * which beats the shared credentials file, which beats the config file; [default] never fills
 * in a named profile; [profile x] in the credentials file is not profile x; a half key pair is
 * ICM_EINVALID naming both halves and never quoting the secret; credential_process, sso_* and
 * role_arn + source_profile are ICM_EUNSUPPORTED naming the profile and the key, and so are
 * the properties asking for a role or a remote signer; with nothing found, ICM_EAUTH lists what
 * was tried. The cache (a fake clock, a counting source): one
 * fetch until 5 minutes before expiry, then one refresh; an early refresh that fails keeps the
 * old credentials, one after expiry fails; invalidate forces a fetch; under 8 threads a cold
 * start fetches once, a refresh in progress does not block threads while the old credentials
 * are valid, and a failed refresh is reported to every waiting thread after one fetch.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aws_testenv.h"
#include "io/s3/s3_config_internal.h"
#include "testutil.h"
#include "util/util.h"

#define P(k, v) {(k), (v)}
#define MIN_MS ((int64_t)60 * 1000)

/* A provider built the way the back end builds it (config resolved first), no HTTP client:
 * the tests here never reach a fetching source. */
static int chain_new(icm__aws_creds_provider **out, const icm_property *props, size_t n)
{
    icm__s3_config cfg;
    int rc = icm__s3_config_resolve(&cfg, props, n);
    if (rc != 0)
        return rc;
    rc = icm__aws_creds_provider_new(out, &cfg, props, n, NULL);
    icm__s3_config_clear(&cfg);
    return rc;
}

/* The chain's credentials: key id, secret, token (NULL: none), source. */
static void expect_creds(const icm_property *props, size_t n, const char *key,
                         const char *secret, const char *token, const char *source)
{
    icm__aws_creds_provider *p = NULL;
    icmt_ok(chain_new(&p, props, n));
    assert_string_equal(icm__aws_creds_provider_source(p), source);
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_get(p, &c));
    assert_string_equal(c.access_key_id, key);
    assert_string_equal(c.secret_access_key, secret);
    if (token == NULL)
        assert_null(c.session_token);
    else
        assert_string_equal(c.session_token, token);
    assert_string_equal(c.source, source);
    assert_int_equal(c.expires_at_ms, 0);
    icm__aws_credentials_clear(&c);
    icm__aws_creds_provider_free(p);
}

static void expect_new_fails(const icm_property *props, size_t n, int code, const char *msg)
{
    icm__aws_creds_provider *p = (icm__aws_creds_provider *)1;
    assert_int_equal(chain_new(&p, props, n), code);
    assert_null(p);
    if (strcmp(icm_error_last()->message, msg) != 0) {
        print_error("message \"%s\", expected \"%s\"\n", icm_error_last()->message, msg);
        fail();
    }
}

static void test_properties_beat_environment(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    setenv("AWS_SESSION_TOKEN", "envtoken", 1);
    icm_property s3[] = {P("client.access-key-id", "CLIENTKEY"),
                         P("client.secret-access-key", "clientsecret"),
                         P("s3.access-key-id", "S3KEY"), P("s3.secret-access-key", "s3secret"),
                         P("s3.session-token", "s3token")};
    expect_creds(s3, 5, "S3KEY", "s3secret", "s3token", "properties");
    /* client.* when s3.* is absent; the environment's token is not mixed in. */
    expect_creds(s3, 2, "CLIENTKEY", "clientsecret", NULL, "properties");
    /* Field by field, as PyIceberg reads them. */
    icm_property mixed[] = {P("s3.access-key-id", "S3KEY"),
                            P("client.secret-access-key", "clientsecret"),
                            P("client.session-token", "clienttoken")};
    expect_creds(mixed, 3, "S3KEY", "clientsecret", "clienttoken", "properties");
    expect_creds(NULL, 0, "ENVKEY", "envsecret", "envtoken", "environment");
}

static void test_half_pairs(void **state)
{
    (void)state;
    icm_property k[] = {P("s3.access-key-id", "AKIA")};
    expect_new_fails(k, 1, ICM_EINVALID,
                     "s3.access-key-id is set but s3.secret-access-key (or "
                     "client.secret-access-key) is not");
    icm_property s[] = {P("client.secret-access-key", "topsecret")};
    expect_new_fails(s, 1, ICM_EINVALID,
                     "client.secret-access-key is set but s3.access-key-id (or "
                     "client.access-key-id) is not");
    icm_property t[] = {P("s3.session-token", "tok")};
    expect_new_fails(t, 1, ICM_EINVALID,
                     "a session token is in the properties without s3.access-key-id and "
                     "s3.secret-access-key");
    icm_property e[] = {P("s3.access-key-id", "AKIA"), P("s3.secret-access-key", "x"),
                        P("s3.session-token-expires-at-ms", "soon")};
    expect_new_fails(e, 3, ICM_EINVALID,
                     "s3.session-token-expires-at-ms: \"soon\" is not a time in ms since the "
                     "epoch");
    setenv("AWS_ACCESS_KEY_ID", "AKIA", 1);
    expect_new_fails(NULL, 0, ICM_EINVALID,
                     "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    unsetenv("AWS_ACCESS_KEY_ID");
    setenv("AWS_SECRET_ACCESS_KEY", "topsecret", 1);
    expect_new_fails(NULL, 0, ICM_EINVALID,
                     "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
    awst_msg_lacks("topsecret");
}

/* Properties asking for a role or a remote signer are refused, with keys or without. */
static void test_unsupported_properties(void **state)
{
    (void)state;
    static const struct {
        const char *key, *value, *msg;
    } cases[] = {
        {"s3.role-arn", "arn:aws:iam::1:role/r",
         "s3.role-arn: assuming a role is not supported yet"},
        {"client.role-arn", "arn:aws:iam::1:role/r",
         "client.role-arn: assuming a role is not supported yet"},
        {"client.assume-role.arn", "arn:aws:iam::1:role/r",
         "client.assume-role.arn: assuming a role is not supported yet"},
        {"s3.remote-signing-enabled", "true",
         "s3.remote-signing-enabled: remote signing is not supported yet"},
        {"s3.remote-signing-enabled", "on",
         "s3.remote-signing-enabled: \"on\" is not true or false"},
        {"s3.signer", "S3V4RestSigner", "s3.signer: remote signing is not supported yet"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        icm_property p[] = {P("s3.access-key-id", "AKIA"), P("s3.secret-access-key", "x"),
                            P(cases[i].key, cases[i].value)};
        expect_new_fails(p, 3, strcmp(cases[i].value, "on") == 0 ? ICM_EINVALID
                                                                  : ICM_EUNSUPPORTED,
                         cases[i].msg);
    }
    icm_property off[] = {P("s3.access-key-id", "AKIA"), P("s3.secret-access-key", "x"),
                          P("s3.remote-signing-enabled", "false"), P("s3.role-arn", "")};
    expect_creds(off, 4, "AKIA", "x", NULL, "properties");
}

static void test_environment_beats_files(void **state)
{
    awst_env *t = *state;
    free(awst_write(t, ".aws/credentials",
                    "[default]\naws_access_key_id = FILEKEY\n"
                    "aws_secret_access_key = filesecret\n"));
    expect_creds(NULL, 0, "FILEKEY", "filesecret", NULL, "profile");
    setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    expect_creds(NULL, 0, "ENVKEY", "envsecret", NULL, "environment");
    /* An expiring environment pair (AWS_CREDENTIAL_EXPIRATION). */
    setenv("AWS_CREDENTIAL_EXPIRATION", "2999-01-02T03:04:05Z", 1);
    icm__aws_creds_provider *p = NULL;
    icmt_ok(chain_new(&p, NULL, 0));
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_get(p, &c));
    assert_int_equal(c.expires_at_ms, 32472241445000LL);
    icm__aws_credentials_clear(&c);
    icm__aws_creds_provider_free(p);
    setenv("AWS_CREDENTIAL_EXPIRATION", "tomorrow", 1);
    expect_new_fails(NULL, 0, ICM_EINVALID,
                     "AWS_CREDENTIAL_EXPIRATION: \"tomorrow\" is not an ISO-8601 time");
}

static void test_profile_files(void **state)
{
    awst_env *t = *state;
    free(awst_write(t, ".aws/credentials",
                    "[default]\n"
                    "aws_access_key_id = CREDDEFAULT\n"
                    "aws_secret_access_key = creddefaultsecret\n"
                    "[both]\n"
                    "aws_access_key_id = CREDBOTH\n"
                    "aws_secret_access_key = credbothsecret\n"
                    "aws_session_token = credbothtoken\n"
                    "[profile prefixed]\n"
                    "aws_access_key_id = NOTPREFIXED\n"
                    "aws_secret_access_key = notprefixedsecret\n"));
    free(awst_write(t, ".aws/config",
                    "[default]\n"
                    "aws_access_key_id = CONFDEFAULT\n"
                    "aws_secret_access_key = confdefaultsecret\n"
                    "[profile both]\n"
                    "aws_access_key_id = CONFBOTH\n"
                    "aws_secret_access_key = confbothsecret\n"
                    "[profile conf]\n"
                    "; keys only in the config file\n"
                    "aws_access_key_id = CONFONLY\n"
                    "aws_secret_access_key = confonlysecret\n"
                    "[profile empty]\n"
                    "region = eu-west-1\n"
                    "[prefixed]\n"
                    "region = eu-west-1\n"));
    /* The credentials file beats the config file for the same profile. */
    expect_creds(NULL, 0, "CREDDEFAULT", "creddefaultsecret", NULL, "profile");
    setenv("AWS_PROFILE", "both", 1);
    expect_creds(NULL, 0, "CREDBOTH", "credbothsecret", "credbothtoken", "profile");
    icm_property conf[] = {P("s3.profile-name", "conf")};
    expect_creds(conf, 1, "CONFONLY", "confonlysecret", NULL, "profile");
    /* [default] does not fill in a named profile: "empty" has no keys, so the chain goes on
     * (instance metadata disabled here) and finds nothing. */
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    icm_property empty[] = {P("s3.profile-name", "empty")};
    icm__aws_creds_provider *p = NULL;
    icmt_ok(chain_new(&p, empty, 1));
    icm__aws_credentials c;
    assert_int_equal(icm__aws_creds_get(p, &c), ICM_EAUTH);
    assert_null(c.access_key_id);
    char *want = icmt_sprintf(
        "no AWS credentials: tried the properties (s3.access-key-id, client.access-key-id), "
        "the environment (AWS_ACCESS_KEY_ID), profile \"empty\" in %s/.aws/credentials and "
        "%s/.aws/config, web identity (AWS_WEB_IDENTITY_TOKEN_FILE), container credentials "
        "(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, AWS_CONTAINER_CREDENTIALS_FULL_URI), "
        "instance metadata (disabled by AWS_EC2_METADATA_DISABLED)",
        t->dir, t->dir);
    assert_string_equal(icm_error_last()->message, want);
    free(want);
    /* Asking again fails the same way (and fetches again: nothing is cached). */
    assert_int_equal(icm__aws_creds_get(p, &c), ICM_EAUTH);
    icm__aws_creds_provider_free(p);
    /* [profile prefixed] in the credentials file, and [prefixed] in the config file, are
     * not profile "prefixed"; a named profile that is nowhere is an error. */
    icm_property pre[] = {P("s3.profile-name", "prefixed")};
    want = icmt_sprintf("profile \"prefixed\" is in neither %s/.aws/credentials nor "
                        "%s/.aws/config", t->dir, t->dir);
    expect_new_fails(pre, 1, ICM_EINVALID, want);
    free(want);
    /* AWS_SHARED_CREDENTIALS_FILE is read instead of ~/.aws/credentials (a leading ~/ is
     * the home directory, as the SDKs expand it). */
    free(awst_write(t, "alt-credentials",
                    "[default]\naws_access_key_id = ALTKEY\naws_secret_access_key = alts\n"));
    unsetenv("AWS_PROFILE");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "~/alt-credentials", 1);
    expect_creds(NULL, 0, "ALTKEY", "alts", NULL, "profile");
    unsetenv("AWS_SHARED_CREDENTIALS_FILE");
    icm_property gone[] = {P("s3.profile-name", "gone")};
    want = icmt_sprintf("profile \"gone\" is in neither %s/.aws/credentials nor %s/.aws/config",
                        t->dir, t->dir);
    expect_new_fails(gone, 1, ICM_EINVALID, want);
    free(want);
}

static void test_profile_errors(void **state)
{
    awst_env *t = *state;
    free(awst_write(t, ".aws/credentials",
                    "[half]\n"
                    "aws_access_key_id = AKIA\n"
                    "[halfsecret]\n"
                    "aws_secret_access_key = topsecret\n"));
    free(awst_write(t, ".aws/config",
                    "[profile proc]\n"
                    "credential_process = /bin/get-creds\n"
                    "[profile sso]\n"
                    "region = eu-west-1\n"
                    "sso_start_url = https://example.awsapps.com/start\n"
                    "[profile assume]\n"
                    "aws_access_key_id = AKIA\n"
                    "aws_secret_access_key = topsecret\n"
                    "role_arn = arn:aws:iam::123456789012:role/r\n"
                    "source_profile = base\n"
                    "[profile assume2]\n"
                    "role_arn = arn:aws:iam::123456789012:role/r\n"
                    "credential_source = Ec2InstanceMetadata\n"
                    "[profile lonely]\n"
                    "role_arn = arn:aws:iam::123456789012:role/r\n"));
    char *cred = icmt_sprintf("%s/.aws/credentials", t->dir);
    char *conf = icmt_sprintf("%s/.aws/config", t->dir);
    char *want;
    icm_property half[] = {P("s3.profile-name", "half")};
    want = icmt_sprintf("%s:2: profile \"half\" has aws_access_key_id but no "
                        "aws_secret_access_key", cred);
    expect_new_fails(half, 1, ICM_EINVALID, want);
    free(want);
    icm_property halfs[] = {P("s3.profile-name", "halfsecret")};
    want = icmt_sprintf("%s:4: profile \"halfsecret\" has aws_secret_access_key but no "
                        "aws_access_key_id", cred);
    expect_new_fails(halfs, 1, ICM_EINVALID, want);
    awst_msg_lacks("topsecret");
    free(want);
    icm_property proc[] = {P("s3.profile-name", "proc")};
    want = icmt_sprintf("%s:2: profile \"proc\" uses credential_process: not supported yet",
                        conf);
    expect_new_fails(proc, 1, ICM_EUNSUPPORTED, want);
    free(want);
    icm_property sso[] = {P("s3.profile-name", "sso")};
    want = icmt_sprintf("%s:5: profile \"sso\" uses sso_start_url: not supported yet", conf);
    expect_new_fails(sso, 1, ICM_EUNSUPPORTED, want);
    free(want);
    /* Even with keys of its own: the SDKs would assume the role, so the keys are not used. */
    icm_property as[] = {P("s3.profile-name", "assume")};
    want = icmt_sprintf("%s:9: profile \"assume\" uses role_arn with source_profile (assuming a "
                        "role): not supported yet", conf);
    expect_new_fails(as, 1, ICM_EUNSUPPORTED, want);
    awst_msg_lacks("topsecret");
    free(want);
    icm_property as2[] = {P("s3.profile-name", "assume2")};
    want = icmt_sprintf("%s:12: profile \"assume2\" uses role_arn with credential_source "
                        "(assuming a role): not supported yet", conf);
    expect_new_fails(as2, 1, ICM_EUNSUPPORTED, want);
    free(want);
    icm_property lonely[] = {P("s3.profile-name", "lonely")};
    want = icmt_sprintf("%s:15: profile \"lonely\" has role_arn without source_profile, "
                        "credential_source or web_identity_token_file", conf);
    expect_new_fails(lonely, 1, ICM_EINVALID, want);
    free(want);
    /* A profile the chain never reaches does not matter: the environment's keys come first. */
    setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    expect_creds(proc, 1, "ENVKEY", "envsecret", NULL, "environment");
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    /* An explicitly named credentials file must exist. */
    char *missing = awst_path(t, "no-such-credentials");
    setenv("AWS_SHARED_CREDENTIALS_FILE", missing, 1);
    want = icmt_sprintf("%s: cannot open the file AWS_SHARED_CREDENTIALS_FILE names", missing);
    icm__aws_creds_provider *p = NULL;
    assert_int_equal(chain_new(&p, NULL, 0), ICM_EINVALID);
    awst_msg_has(want);
    free(want);
    free(missing);
    free(cred);
    free(conf);
}

/* A source that fetches over HTTP needs the client. */
static void test_needs_http(void **state)
{
    (void)state;
    expect_new_fails(NULL, 0, ICM_EINVALID,
                     "credentials from instance metadata need an HTTP client, and none was "
                     "given");
}

static void test_expiring_properties(void **state)
{
    (void)state;
    char exp[32];
    int64_t later = icm__now_ms() + 3600 * 1000;
    snprintf(exp, sizeof exp, "%lld", (long long)later);
    icm_property p[] = {P("s3.access-key-id", "AKIA"), P("s3.secret-access-key", "x"),
                        P("s3.session-token", "t"), P("s3.session-token-expires-at-ms", exp)};
    icm__aws_creds_provider *pr = NULL;
    icmt_ok(chain_new(&pr, p, 4));
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_get(pr, &c));
    assert_int_equal(c.expires_at_ms, later);
    icm__aws_credentials_clear(&c);
    icm__aws_creds_provider_free(pr);
    p[3].value = "1700000000000";
    icmt_ok(chain_new(&pr, p, 4));
    assert_int_equal(icm__aws_creds_get(pr, &c), ICM_EAUTH);
    assert_string_equal(icm_error_last()->message,
                        "the AWS credentials from the properties expired at "
                        "2023-11-14T22:13:20Z (s3.session-token-expires-at-ms), and that source "
                        "cannot renew them");
    icm__aws_creds_provider_free(pr);
}

/* ---- the cache, with a fake clock and a counting source ---- */

typedef struct fake_source {
    _Atomic int64_t now;
    atomic_int fetches;
    atomic_int fail;        /* non-zero: fetch fails with this code */
    int64_t lifetime_ms;    /* credentials expire this long after the fetch (0: never) */
    atomic_int in_fetch;    /* a fetch is running */
    atomic_int release;     /* a blocked fetch may return */
    atomic_int block;       /* fetches wait for release */
} fake_source;

static int64_t fake_now(void *payload)
{
    return atomic_load(&((fake_source *)payload)->now);
}

static int fake_fetch(void *payload, icm__aws_credentials *out)
{
    fake_source *f = payload;
    int n = atomic_fetch_add(&f->fetches, 1) + 1;
    atomic_store(&f->in_fetch, 1);
    while (atomic_load(&f->block) && !atomic_load(&f->release))
        usleep(1000);
    atomic_store(&f->in_fetch, 0);
    int code = atomic_load(&f->fail);
    if (code != 0)
        return icm__error_set(ICM_ERRCLASS_S3, code, "http://fake", "fake source refused (%d)",
                              n);
    char key[32];
    snprintf(key, sizeof key, "KEY%d", n);
    out->access_key_id = icm__strdup(key);
    out->secret_access_key = icm__strdup("secret");
    out->session_token = icm__strdup("token");
    out->expires_at_ms = f->lifetime_ms != 0 ? atomic_load(&f->now) + f->lifetime_ms : 0;
    return 0;
}

static icm__aws_creds_provider *fake_provider(fake_source *f)
{
    icm__aws_creds_provider *p = NULL;
    icmt_ok(icm__aws_creds_provider_new_custom(&p, fake_fetch, f));
    icm__aws_creds_provider_set_clock(p, fake_now, f);
    return p;
}

/* get() succeeds with key "KEY<n>". */
static void expect_key(icm__aws_creds_provider *p, int n)
{
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_get(p, &c));
    char key[32];
    snprintf(key, sizeof key, "KEY%d", n);
    assert_string_equal(c.access_key_id, key);
    icm__aws_credentials_clear(&c);
}

static void test_refresh_timing(void **state)
{
    (void)state;
    fake_source f = {.now = 1000000000, .lifetime_ms = 60 * MIN_MS};
    icm__aws_creds_provider *p = fake_provider(&f);
    const int64_t t0 = 1000000000, exp = t0 + 60 * MIN_MS;
    expect_key(p, 1);
    expect_key(p, 1);
    assert_int_equal(f.fetches, 1);
    /* 5 minutes and 1 ms before expiry: still cached. */
    f.now = exp - 5 * MIN_MS - 1;
    expect_key(p, 1);
    assert_int_equal(f.fetches, 1);
    /* Exactly 5 minutes before: refreshed, once. */
    f.now = exp - 5 * MIN_MS;
    expect_key(p, 2);
    expect_key(p, 2);
    assert_int_equal(f.fetches, 2);
    /* An early refresh that fails keeps the old credentials, and is not tried again on every
     * request but 30 s later. */
    int64_t exp2 = f.now + 60 * MIN_MS;
    f.now = exp2 - 4 * MIN_MS;
    f.fail = ICM_ENET;
    expect_key(p, 2);
    assert_int_equal(f.fetches, 3);
    f.now += 29 * 1000;
    expect_key(p, 2);
    assert_int_equal(f.fetches, 3);
    f.now += 1000;
    expect_key(p, 2);
    assert_int_equal(f.fetches, 4);
    /* Once they have expired, the failure is the caller's. */
    f.now = exp2;
    icm__aws_credentials c;
    assert_int_equal(icm__aws_creds_get(p, &c), ICM_ENET);
    assert_string_equal(icm_error_last()->message, "fake source refused (5)");
    assert_null(c.access_key_id);
    f.fail = 0;
    expect_key(p, 6);
    /* invalidate(): the server said they expired; the next get fetches. */
    icm__aws_creds_invalidate(p);
    expect_key(p, 7);
    assert_int_equal(f.fetches, 7);
    icm__aws_creds_provider_free(p);

    /* A source handing out credentials already inside the window is asked at most every
     * 30 s, not on each get; and credentials that arrive expired are refused. */
    fake_source g = {.now = t0, .lifetime_ms = 2 * MIN_MS};
    p = fake_provider(&g);
    expect_key(p, 1);
    g.now += 29 * 1000;
    expect_key(p, 1);
    g.now += 1000;
    expect_key(p, 2);
    assert_int_equal(g.fetches, 2);
    icm__aws_creds_provider_free(p);
    fake_source h = {.now = t0, .lifetime_ms = -1};
    p = fake_provider(&h);
    assert_int_equal(icm__aws_creds_get(p, &c), ICM_EAUTH);
    awst_msg_has("the AWS credentials from the test source had already expired");
    icm__aws_creds_provider_free(p);

    /* Credentials that never expire are fetched once. */
    fake_source n = {.now = t0, .lifetime_ms = 0};
    p = fake_provider(&n);
    expect_key(p, 1);
    n.now += (int64_t)365 * 24 * 60 * MIN_MS;
    expect_key(p, 1);
    assert_int_equal(n.fetches, 1);
    icm__aws_creds_provider_free(p);
}

typedef struct worker {
    icm__aws_creds_provider *p;
    int rc;
    char key[32];
    char msg[256];
} worker;

static void *worker_run(void *arg)
{
    worker *w = arg;
    icm__aws_credentials c;
    w->rc = icm__aws_creds_get(w->p, &c);
    if (w->rc == 0)
        snprintf(w->key, sizeof w->key, "%s", c.access_key_id);
    else
        snprintf(w->msg, sizeof w->msg, "%s", icm_error_last()->message);
    icm__aws_credentials_clear(&c);
    return NULL;
}

#define N_THREADS 8

static void run_workers(icm__aws_creds_provider *p, worker *w)
{
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].p = p;
        assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
}

static void test_threads(void **state)
{
    (void)state;
    worker w[N_THREADS];
    /* Cold start: one thread fetches, the others wait for it. */
    fake_source f = {.now = 1000000000, .lifetime_ms = 60 * MIN_MS, .block = 1};
    icm__aws_creds_provider *p = fake_provider(&f);
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].p = p;
        assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
    }
    while (icm__aws_creds_provider_waiting(p) < N_THREADS - 1)
        usleep(1000);
    atomic_store(&f.release, 1);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&f.fetches), 1);
    for (int i = 0; i < N_THREADS; i++) {
        assert_int_equal(w[i].rc, 0);
        assert_string_equal(w[i].key, "KEY1");
    }

    /* A refresh in progress does not block: while it is held, the others get the old
     * credentials straight away. */
    atomic_store(&f.release, 0);
    atomic_store(&f.now, 1000000000 + 56 * MIN_MS);
    worker refresher = {.p = p};
    pthread_t rt;
    assert_int_equal(pthread_create(&rt, NULL, worker_run, &refresher), 0);
    while (!atomic_load(&f.in_fetch))
        usleep(1000);
    run_workers(p, w); /* would hang here if they waited for the held fetch */
    for (int i = 0; i < N_THREADS; i++) {
        assert_int_equal(w[i].rc, 0);
        assert_string_equal(w[i].key, "KEY1");
    }
    atomic_store(&f.release, 1);
    pthread_join(rt, NULL);
    assert_int_equal(refresher.rc, 0);
    assert_string_equal(refresher.key, "KEY2");
    assert_int_equal(atomic_load(&f.fetches), 2);

    /* Expired and the refresh fails: one fetch, every waiting thread gets its error. */
    atomic_store(&f.release, 0);
    atomic_store(&f.fail, ICM_ETIMEOUT);
    atomic_store(&f.now, 1000000000 + 200 * MIN_MS);
    for (int i = 0; i < N_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].p = p;
        assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
    }
    while (icm__aws_creds_provider_waiting(p) < N_THREADS - 1)
        usleep(1000);
    atomic_store(&f.release, 1);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&f.fetches), 3);
    for (int i = 0; i < N_THREADS; i++) {
        assert_int_equal(w[i].rc, ICM_ETIMEOUT);
        assert_string_equal(w[i].msg, "fake source refused (3)");
    }
    icm__aws_creds_provider_free(p);

    /* Many threads, many gets, the clock moving: every get succeeds, and the source is asked
     * about once per refresh window (TSan checks the locking). */
    fake_source g = {.now = 1000000000, .lifetime_ms = 10 * MIN_MS};
    p = fake_provider(&g);
    for (int round = 0; round < 20; round++) {
        atomic_fetch_add(&g.now, MIN_MS);
        run_workers(p, w);
        for (int i = 0; i < N_THREADS; i++)
            assert_int_equal(w[i].rc, 0);
    }
    /* Lifetime 10 min, refreshed 5 min before: a fetch every 5 minutes of the 20. */
    assert_int_equal(atomic_load(&g.fetches), 4);
    icm__aws_creds_provider_free(p);
}

/* ---- the parsers ---- */

static void test_parse_time(void **state)
{
    (void)state;
    int64_t ms = 0;
    assert_true(icm__aws_parse_time("2026-12-02T03:04:05Z", &ms));
    assert_int_equal(ms, 1796180645000LL);
    assert_true(icm__aws_parse_time("2026-12-02T03:04:05.123Z", &ms));
    assert_int_equal(ms, 1796180645123LL);
    assert_true(icm__aws_parse_time("2026-12-02T03:04:05.1+00:00", &ms));
    assert_int_equal(ms, 1796180645100LL);
    static const char *const bad[] = {"", "2026-12-02", "2026-12-02T03:04:05",
                                      "2026-02-30T00:00:00Z", "2026-12-02T03:04:05+01:00",
                                      "2026-13-02T03:04:05Z", "2026-12-02T03:04:05.Z",
                                      "2026-12-02T03:04:05Zjunk", "  2026-12-02T03:04:05Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(icm__aws_parse_time(bad[i], &ms));
}

static void test_parse_json(void **state)
{
    (void)state;
    icm__aws_credentials c;
    static const char ok[] = "{\"Code\":\"Success\",\"LastUpdated\":\"2026-12-02T02:00:00Z\","
                             "\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\"ASIAX\","
                             "\"SecretAccessKey\":\"s/e+c\",\"Token\":\"tok==\","
                             "\"Expiration\":\"2026-12-02T03:04:05Z\"}";
    icmt_ok(icm__aws_creds_from_json(&c, ok, sizeof ok - 1, "instance metadata", "imds"));
    assert_string_equal(c.access_key_id, "ASIAX");
    assert_string_equal(c.secret_access_key, "s/e+c");
    assert_string_equal(c.session_token, "tok==");
    assert_int_equal(c.expires_at_ms, 1796180645000LL);
    assert_string_equal(c.source, "imds");
    icm__aws_credentials_clear(&c);
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"not json", "container: the answer is not a JSON object"},
        {"[1]", "container: the answer is not a JSON object"},
        {"{\"Code\":\"AssumeRoleUnauthorizedAccess\"}",
         "container: the answer's Code is \"AssumeRoleUnauthorizedAccess\", not Success"},
        {"{\"SecretAccessKey\":\"hush\",\"Token\":\"t\",\"Expiration\":\"2026-12-02T03:04:05Z\"}",
         "container: the answer has no valid AccessKeyId (malformed credentials)"},
        {"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"hu\\nsh\",\"Token\":\"t\","
         "\"Expiration\":\"2026-12-02T03:04:05Z\"}",
         "container: the answer has no valid SecretAccessKey (malformed credentials)"},
        {"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"hush\",\"Token\":7,"
         "\"Expiration\":\"2026-12-02T03:04:05Z\"}",
         "container: the answer has no valid Token (malformed credentials)"},
        {"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"hush\",\"Token\":\"\","
         "\"Expiration\":\"2026-12-02T03:04:05Z\"}",
         "container: the answer has no valid Token (malformed credentials)"},
        {"{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"hush\",\"Token\":\"t\"}",
         "container: the answer has no valid Expiration (malformed credentials)"},
        {"{\"AccessKeyId\":\"A\",\"AccessKeyId\":\"B\",\"SecretAccessKey\":\"hush\"}",
         "container: the answer is not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = icm__aws_creds_from_json(&c, bad[i].body, strlen(bad[i].body), "container",
                                          "container");
        assert_int_equal(rc, ICM_EAUTH);
        assert_null(c.access_key_id);
        if (strcmp(icm_error_last()->message, bad[i].msg) != 0) {
            print_error("case %zu: \"%s\"\n", i, icm_error_last()->message);
            fail();
        }
        awst_msg_lacks("hush");
    }
}

static void test_parse_sts(void **state)
{
    (void)state;
    static const char ok[] =
        "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
        "  <AssumeRoleWithWebIdentityResult>\n"
        "    <SubjectFromWebIdentityToken>system:serviceaccount:a:b</SubjectFromWebIdentityToken>\n"
        "    <Credentials>\n"
        "      <AccessKeyId>ASIASTS</AccessKeyId>\n"
        "      <SecretAccessKey>\n   sts/secret+  \n</SecretAccessKey>\n"
        "      <SessionToken>FwoG&amp;token</SessionToken>\n"
        "      <Expiration>2026-12-02T03:04:05Z</Expiration>\n"
        "    </Credentials>\n"
        "    <AssumedRoleUser><AccessKeyId>NOTTHIS</AccessKeyId></AssumedRoleUser>\n"
        "  </AssumeRoleWithWebIdentityResult>\n"
        "  <ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata>\n"
        "</AssumeRoleWithWebIdentityResponse>\n";
    icm__aws_credentials c;
    icmt_ok(icm__aws_creds_from_sts_xml(&c, ok, sizeof ok - 1, "sts", "web identity"));
    assert_string_equal(c.access_key_id, "ASIASTS");
    assert_string_equal(c.secret_access_key, "sts/secret+");
    assert_string_equal(c.session_token, "FwoG&token");
    assert_int_equal(c.expires_at_ms, 1796180645000LL);
    icm__aws_credentials_clear(&c);

    static const char err[] =
        "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
        "<Type>Sender</Type><Code>InvalidIdentityToken</Code>"
        "<Message>Incorrect token audience</Message></Error>"
        "<RequestId>r-2</RequestId></ErrorResponse>";
    assert_int_equal(icm__aws_creds_from_sts_xml(&c, err, sizeof err - 1, "sts", "w"),
                     ICM_EAUTH);
    assert_string_equal(icm_error_last()->message,
                        "sts refused: InvalidIdentityToken: Incorrect token audience");
    assert_string_equal(icm_error_last()->remote_code, "InvalidIdentityToken");

    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"", "sts: the answer is not an AssumeRoleWithWebIdentity response"},
        {"<Other/>", "sts: the answer is not an AssumeRoleWithWebIdentity response"},
        {"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
         "<AccessKeyId>A</AccessKeyId><AccessKeyId>B</AccessKeyId>"
         "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
         "sts: the answer is not an AssumeRoleWithWebIdentity response"},
        {"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
         "<AccessKeyId>A</AccessKeyId><SecretAccessKey>hush</SecretAccessKey>"
         "<Expiration>2026-12-02T03:04:05Z</Expiration>"
         "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
         "sts: the answer has no valid SessionToken (malformed credentials)"},
        {"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
         "<AccessKeyId>A</AccessKeyId><SecretAccessKey>hush</SecretAccessKey>"
         "<SessionToken>t</SessionToken>"
         "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
         "sts: the answer has no valid Expiration (malformed credentials)"},
        {"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
         "<AccessKeyId>A</AccessKeyId><SecretAccessKey>hush</SecretAccessKey>"
         "<SessionToken>t</SessionToken><Expiration>2026-12-02T03:04:05Z</Expiration>"
         "</Credentials></AssumeRoleWithWebIdentityResult>",
         "sts: the answer is not an AssumeRoleWithWebIdentity response"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = icm__aws_creds_from_sts_xml(&c, bad[i].body, strlen(bad[i].body), "sts", "w");
        assert_int_equal(rc, ICM_EAUTH);
        assert_null(c.access_key_id);
        if (strcmp(icm_error_last()->message, bad[i].msg) != 0) {
            print_error("case %zu: \"%s\"\n", i, icm_error_last()->message);
            fail();
        }
        awst_msg_lacks("hush");
    }
}

static void test_nomem(void **state)
{
    awst_env *t = *state;
    free(awst_write(t, ".aws/credentials",
                    "[default]\naws_access_key_id = K\naws_secret_access_key = S\n"));
    for (long i = 0;; i++) {
        icm__aws_creds_provider *p = NULL;
        icm__aws_credentials c;
        memset(&c, 0, sizeof c);
        icmt_nomem_arm(i);
        int rc = chain_new(&p, NULL, 0);
        if (rc == 0)
            rc = icm__aws_creds_get(p, &c);
        long n = icmt_nomem_disarm();
        icm__aws_creds_provider_free(p);
        if (rc == 0) {
            assert_string_equal(c.access_key_id, "K");
            icm__aws_credentials_clear(&c);
            assert_true(i >= n);
            break;
        }
        assert_int_equal(rc, ICM_ENOMEM);
        assert_null(c.access_key_id);
    }
}

/* Allocation failures in the parsers: ICM_ENOMEM and nothing to free, or the same answer. */
static void test_parse_nomem(void **state)
{
    (void)state;
    static const char json[] = "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\","
                               "\"Token\":\"T\",\"Expiration\":\"2026-12-02T03:04:05Z\"}";
    static const char xml[] =
        "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
        "<AccessKeyId>A</AccessKeyId><SecretAccessKey>S</SecretAccessKey>"
        "<SessionToken>T</SessionToken><Expiration>2026-12-02T03:04:05Z</Expiration>"
        "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
    for (int which = 0; which < 2; which++) {
        for (long i = 0;; i++) {
            icm__aws_credentials c;
            icmt_nomem_arm(i);
            int rc = which == 0
                         ? icm__aws_creds_from_json(&c, json, sizeof json - 1, "j", "j")
                         : icm__aws_creds_from_sts_xml(&c, xml, sizeof xml - 1, "x", "x");
            long n = icmt_nomem_disarm();
            if (rc == 0) {
                assert_string_equal(c.access_key_id, "A");
                assert_string_equal(c.secret_access_key, "S");
                assert_string_equal(c.session_token, "T");
                icm__aws_credentials_clear(&c);
                assert_true(i >= n);
                break;
            }
            assert_int_equal(rc, ICM_ENOMEM);
            assert_null(c.access_key_id);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_properties_beat_environment, awst_setup,
                                        awst_teardown),
        cmocka_unit_test_setup_teardown(test_half_pairs, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_unsupported_properties, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_environment_beats_files, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_profile_files, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_profile_errors, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_needs_http, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_expiring_properties, awst_setup, awst_teardown),
        cmocka_unit_test(test_refresh_timing),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_parse_json),
        cmocka_unit_test(test_parse_sts),
        cmocka_unit_test(test_parse_nomem),
        cmocka_unit_test_setup_teardown(test_nomem, awst_setup, awst_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
