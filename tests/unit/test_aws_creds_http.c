/*
 * test_aws_creds_http.c: the credential sources that fetch over HTTP (io/s3/s3_creds_fetch.c),
 * against fake endpoints served by a thread of this test on 127.0.0.1.
 *
 * Web identity: the exact AssumeRoleWithWebIdentity form POSTed (role, session name, token
 * from the file, which is read again at each refresh), the XML answer's credentials, and an
 * STS refusal as ICM_EAUTH with its code and status and without the token. Container: the URL,
 * the Authorization header from the token file or variable, the JSON answer, a 403, and which
 * FULL_URI hosts plain http may reach. IMDSv2: the token PUT with its TTL header, then the role
 * and its credentials with the token header, in that order; credentials refreshed before they
 * expire; an IMDS that refuses the token PUT (no IMDSv1 fall-back: no GET is sent), one
 * without a role, and one not listening, each "no AWS credentials" listing what was tried.
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
#include "io/http.h"
#include "io/s3/s3_config_internal.h"
#include "io/s3/s3_creds_http.h"
#include "testutil.h"
#include "util/util.h"

/* ---- a fake HTTP endpoint ---- */

#define MAX_REQS 16
#define MAX_ROUTES 8

typedef struct fake_req {
    char method[16];
    char path[512];
    char headers[4096]; /* the raw header lines */
    char body[8192];
} fake_req;

typedef struct fake_route {
    const char *method, *path;
    int status;
    const char *body;
} fake_route;

typedef struct fake_server {
    int fd;
    int port;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t mu;
    fake_req reqs[MAX_REQS];
    int n_reqs;
    fake_route routes[MAX_ROUTES];
    int n_routes;
} fake_server;

static void fake_route_set(fake_server *s, const char *method, const char *path, int status,
                           const char *body)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_routes; i++)
        if (strcmp(s->routes[i].method, method) == 0 && strcmp(s->routes[i].path, path) == 0) {
            s->routes[i].status = status;
            s->routes[i].body = body;
            pthread_mutex_unlock(&s->mu);
            return;
        }
    assert_true(s->n_routes < MAX_ROUTES);
    s->routes[s->n_routes++] = (fake_route){method, path, status, body};
    pthread_mutex_unlock(&s->mu);
}

static void serve_one(fake_server *s, int c)
{
    char buf[16384];
    size_t len = 0;
    char *end = NULL;
    while (len < sizeof buf - 1) {
        ssize_t n = read(c, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            return;
        len += (size_t)n;
        buf[len] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")) != NULL)
            break;
    }
    if (end == NULL)
        return;
    size_t head = (size_t)(end - buf) + 4;
    size_t clen = 0;
    const char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl != NULL && cl < end)
        clen = strtoul(cl + 17, NULL, 10);
    while (len < head + clen && len < sizeof buf - 1) {
        ssize_t n = read(c, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            return;
        len += (size_t)n;
    }
    buf[len] = '\0';
    fake_req r;
    memset(&r, 0, sizeof r);
    sscanf(buf, "%15s %511s", r.method, r.path);
    const char *hl = strstr(buf, "\r\n");
    snprintf(r.headers, sizeof r.headers, "%.*s", (int)(end - hl), hl);
    snprintf(r.body, sizeof r.body, "%.*s", (int)clen, buf + head);
    int status = 404;
    const char *body = "";
    pthread_mutex_lock(&s->mu);
    if (s->n_reqs < MAX_REQS)
        s->reqs[s->n_reqs++] = r;
    for (int i = 0; i < s->n_routes; i++)
        if (strcmp(s->routes[i].method, r.method) == 0 &&
            strcmp(s->routes[i].path, r.path) == 0) {
            status = s->routes[i].status;
            body = s->routes[i].body;
        }
    pthread_mutex_unlock(&s->mu);
    char out[16384];
    int n = snprintf(out, sizeof out,
                     "HTTP/1.1 %d Fake\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                     status, strlen(body), body);
    if (write(c, out, (size_t)n) < 0)
        return;
}

static void *serve(void *arg)
{
    fake_server *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd pfd = {s->fd, POLLIN, 0};
        if (poll(&pfd, 1, 20) <= 0)
            continue;
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        serve_one(s, c);
        close(c);
    }
    return NULL;
}

static fake_server *fake_start(void)
{
    fake_server *s = calloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->fd, 16), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
    return s;
}

static void fake_stop(fake_server *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->fd);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static int fake_count(fake_server *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->n_reqs;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Request i (a copy). */
static fake_req fake_get(fake_server *s, int i)
{
    pthread_mutex_lock(&s->mu);
    assert_true(i < s->n_reqs);
    fake_req r = s->reqs[i];
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* The value of header `name` in r (static buffer), or NULL. */
static const char *header_of(const fake_req *r, const char *name)
{
    static char value[1024];
    char pat[128];
    snprintf(pat, sizeof pat, "\r\n%s:", name);
    const char *h = strcasestr(r->headers, pat);
    if (h == NULL)
        return NULL;
    h += strlen(pat);
    while (*h == ' ')
        h++;
    size_t n = strcspn(h, "\r\n");
    snprintf(value, sizeof value, "%.*s", (int)n, h);
    return value;
}

static char *url_of(const fake_server *s, const char *path)
{
    return icmt_sprintf("http://127.0.0.1:%d%s", s->port, path);
}

/* ---- the chain against it ---- */

typedef struct chain {
    icm__http *http;
    icm__aws_creds_provider *p;
} chain;

static int chain_new(chain *c, const icm_property *props, size_t n)
{
    memset(c, 0, sizeof *c);
    icm__http_options o;
    memset(&o, 0, sizeof o);
    o.verify_tls = true;
    icmt_ok(icm__http_new(&c->http, &o));
    icm__s3_config cfg;
    int rc = icm__s3_config_resolve(&cfg, props, n);
    if (rc == 0)
        rc = icm__aws_creds_provider_new(&c->p, &cfg, props, n, c->http);
    icm__s3_config_clear(&cfg);
    return rc;
}

static void chain_free(chain *c)
{
    icm__aws_creds_provider_free(c->p);
    icm__http_free(c->http);
}

static const char STS_OK[] =
    "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
    "<AssumeRoleWithWebIdentityResult><Credentials>"
    "<AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>websecret</SecretAccessKey>"
    "<SessionToken>webtoken</SessionToken><Expiration>2999-01-02T03:04:05Z</Expiration>"
    "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
#define EXP_2999 32472241445000LL

static void test_web_identity(void **state)
{
    awst_env *t = *state;
    fake_server *s = fake_start();
    fake_route_set(s, "POST", "/", 200, STS_OK);
    char *tok = awst_write(t, "token", "eyJ.first+token/x=\n");
    char *ep = url_of(s, "");
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tok, 1);
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/eks-role", 1);
    setenv("AWS_ROLE_SESSION_NAME", "icm-test", 1);
    setenv("AWS_ENDPOINT_URL_STS", ep, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    chain c;
    icmt_ok(chain_new(&c, NULL, 0));
    assert_string_equal(icm__aws_creds_provider_source(c.p), "web identity");
    icm__aws_credentials cr;
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    assert_string_equal(cr.access_key_id, "ASIAWEB");
    assert_string_equal(cr.secret_access_key, "websecret");
    assert_string_equal(cr.session_token, "webtoken");
    assert_int_equal(cr.expires_at_ms, EXP_2999);
    assert_string_equal(cr.source, "web identity");
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 1);
    fake_req r = fake_get(s, 0);
    assert_string_equal(r.method, "POST");
    assert_string_equal(r.path, "/");
    assert_string_equal(header_of(&r, "Content-Type"),
                        "application/x-www-form-urlencoded; charset=utf-8");
    assert_null(header_of(&r, "Authorization")); /* STS needs no signature for this */
    assert_string_equal(r.body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15"
                                "&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Feks-role"
                                "&RoleSessionName=icm-test"
                                "&WebIdentityToken=eyJ.first%2Btoken%2Fx%3D");
    /* Cached; then the token file is rotated and the next fetch sends the new token. */
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 1);
    free(awst_write(t, "token", "second"));
    icm__aws_creds_invalidate(c.p);
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 2);
    r = fake_get(s, 1);
    assert_non_null(strstr(r.body, "&WebIdentityToken=second"));

    /* STS refuses: ICM_EAUTH with its code and the status; the token is never quoted. */
    fake_route_set(s, "POST", "/", 400,
                   "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
                   "<Message>No OpenIDConnect provider found</Message></Error></ErrorResponse>");
    icm__aws_creds_invalidate(c.p);
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    assert_string_equal(icm_error_last()->message,
                        "web identity: STS AssumeRoleWithWebIdentity refused: "
                        "InvalidIdentityToken: No OpenIDConnect provider found");
    assert_string_equal(icm_error_last()->remote_code, "InvalidIdentityToken");
    assert_int_equal(icm_error_last()->http_status, 400);
    awst_msg_lacks("second");
    /* A server error is the endpoint's trouble, not a refusal. */
    fake_route_set(s, "POST", "/", 503, "busy");
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_ENET);
    assert_int_equal(icm_error_last()->http_status, 503);
    chain_free(&c);

    /* The token file gone: ICM_EAUTH naming it. */
    unlink(tok);
    icmt_ok(chain_new(&c, NULL, 0));
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    char *want = icmt_sprintf("%s: cannot open the web identity token file", tok);
    awst_msg_has(want);
    free(want);
    chain_free(&c);

    /* Half a configuration is an error, not a silent skip. */
    unsetenv("AWS_ROLE_ARN");
    assert_int_equal(chain_new(&c, NULL, 0), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not");
    chain_free(&c);
    unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");

    /* The same from a profile: role_arn + web_identity_token_file (+ role_session_name). */
    free(awst_write(t, "token", "from-profile"));
    fake_route_set(s, "POST", "/", 200, STS_OK);
    char *conf = icmt_sprintf("[profile wi]\nrole_arn = arn:aws:iam::1:role/p\n"
                              "web_identity_token_file = %s\nrole_session_name = prof\n",
                              tok);
    free(awst_write(t, ".aws/config", conf));
    free(conf);
    unsetenv("AWS_ROLE_SESSION_NAME");
    icm_property prof[] = {{"s3.profile-name", "wi"}};
    icmt_ok(chain_new(&c, prof, 1));
    assert_string_equal(icm__aws_creds_provider_source(c.p), "web identity");
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    assert_string_equal(cr.access_key_id, "ASIAWEB");
    icm__aws_credentials_clear(&cr);
    r = fake_get(s, fake_count(s) - 1);
    assert_string_equal(r.body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15"
                                "&RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fp"
                                "&RoleSessionName=prof&WebIdentityToken=from-profile");
    chain_free(&c);
    free(tok);
    free(ep);
    fake_stop(s);
}

static const char CONTAINER_OK[] =
    "{\"AccessKeyId\":\"ASIACONT\",\"SecretAccessKey\":\"contsecret\","
    "\"Token\":\"conttoken\",\"Expiration\":\"2999-01-02T03:04:05Z\","
    "\"RoleArn\":\"arn:aws:iam::1:role/task\"}";

static void test_container(void **state)
{
    awst_env *t = *state;
    fake_server *s = fake_start();
    fake_route_set(s, "GET", "/v2/credentials/abc", 200, CONTAINER_OK);
    char *full = url_of(s, "/v2/credentials/abc");
    char *tokf = awst_write(t, "eks-token", "eks pod identity token\n");
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", full, 1);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokf, 1);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored when the file is set", 1);
    chain c;
    icmt_ok(chain_new(&c, NULL, 0));
    assert_string_equal(icm__aws_creds_provider_source(c.p), "container");
    icm__aws_credentials cr;
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    assert_string_equal(cr.access_key_id, "ASIACONT");
    assert_string_equal(cr.secret_access_key, "contsecret");
    assert_string_equal(cr.session_token, "conttoken");
    assert_int_equal(cr.expires_at_ms, EXP_2999);
    assert_string_equal(cr.source, "container");
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 1);
    fake_req r = fake_get(s, 0);
    assert_string_equal(r.method, "GET");
    assert_string_equal(r.path, "/v2/credentials/abc");
    assert_string_equal(header_of(&r, "Authorization"), "eks pod identity token");
    chain_free(&c);

    /* The token from the variable when there is no file. */
    unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Basic ecs-token", 1);
    icmt_ok(chain_new(&c, NULL, 0));
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    icm__aws_credentials_clear(&cr);
    r = fake_get(s, 1);
    assert_string_equal(header_of(&r, "Authorization"), "Basic ecs-token");
    /* Refused. */
    fake_route_set(s, "GET", "/v2/credentials/abc", 403, "{\"code\":\"AccessDenied\"}");
    icm__aws_creds_invalidate(c.p);
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    assert_string_equal(icm_error_last()->message,
                        "the container credentials endpoint answered HTTP 403");
    assert_int_equal(icm_error_last()->http_status, 403);
    awst_msg_lacks("ecs-token");
    chain_free(&c);
    unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");

    /* Which FULL_URI hosts plain http may reach. */
    static const char *const ok[] = {"http://127.0.0.1:1/x", "http://localhost/x",
                                     "http://169.254.170.2/v2", "http://169.254.170.23/v1",
                                     "http://[fd00:ec2::23]/v1", "http://[::1]:8/x",
                                     "https://creds.example.com/x"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", ok[i], 1);
        icmt_ok(chain_new(&c, NULL, 0));
        assert_string_equal(icm__aws_creds_provider_source(c.p), "container");
        chain_free(&c);
    }
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://creds.example.com/x", 1);
    assert_int_equal(chain_new(&c, NULL, 0), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI: over http the host must be a "
                        "loopback address, 169.254.170.2, 169.254.170.23 or [fd00:ec2::23], not "
                        "\"creds.example.com\"");
    chain_free(&c);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1.evil.com/x", 1);
    assert_int_equal(chain_new(&c, NULL, 0), ICM_EINVALID);
    chain_free(&c);
    unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "v2/credentials", 1);
    assert_int_equal(chain_new(&c, NULL, 0), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: a path starting with / and "
                        "without white space is expected");
    chain_free(&c);
    free(full);
    free(tokf);
    fake_stop(s);
}

static const char IMDS_CREDS[] =
    "{\"Code\":\"Success\",\"LastUpdated\":\"2026-12-02T01:00:00Z\",\"Type\":\"AWS-HMAC\","
    "\"AccessKeyId\":\"ASIAIMDS\",\"SecretAccessKey\":\"imdssecret\",\"Token\":\"imdstok\","
    "\"Expiration\":\"2999-01-02T03:04:05Z\"}";
#define ROLE_PATH "/latest/meta-data/iam/security-credentials/"

static int64_t fixed_clock(void *payload)
{
    return *(const int64_t *)payload;
}

static void test_imds(void **state)
{
    (void)state;
    fake_server *s = fake_start();
    fake_route_set(s, "PUT", "/latest/api/token", 200, "AQAEAIMDSTOKEN==");
    fake_route_set(s, "GET", ROLE_PATH, 200, "ec2-role\n");
    fake_route_set(s, "GET", ROLE_PATH "ec2-role", 200, IMDS_CREDS);
    char *ep = url_of(s, "");
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
    chain c;
    icmt_ok(chain_new(&c, NULL, 0));
    assert_string_equal(icm__aws_creds_provider_source(c.p), "instance metadata");
    int64_t now = icm__now_ms();
    icm__aws_creds_provider_set_clock(c.p, fixed_clock, &now);
    icm__aws_credentials cr;
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    assert_string_equal(cr.access_key_id, "ASIAIMDS");
    assert_string_equal(cr.secret_access_key, "imdssecret");
    assert_string_equal(cr.session_token, "imdstok");
    assert_int_equal(cr.expires_at_ms, EXP_2999);
    assert_string_equal(cr.source, "instance metadata");
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 3);
    fake_req r = fake_get(s, 0);
    assert_string_equal(r.method, "PUT");
    assert_string_equal(r.path, "/latest/api/token");
    assert_string_equal(header_of(&r, "X-aws-ec2-metadata-token-ttl-seconds"), "21600");
    r = fake_get(s, 1);
    assert_string_equal(r.method, "GET");
    assert_string_equal(r.path, ROLE_PATH);
    assert_string_equal(header_of(&r, "X-aws-ec2-metadata-token"), "AQAEAIMDSTOKEN==");
    r = fake_get(s, 2);
    assert_string_equal(r.method, "GET");
    assert_string_equal(r.path, ROLE_PATH "ec2-role");
    assert_string_equal(header_of(&r, "X-aws-ec2-metadata-token"), "AQAEAIMDSTOKEN==");
    /* Cached until 5 minutes before they expire; then fetched again (token, role, creds). */
    now = EXP_2999 - 5 * 60 * 1000 - 1;
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 3);
    now += 1;
    icmt_ok(icm__aws_creds_get(c.p, &cr));
    icm__aws_credentials_clear(&cr);
    assert_int_equal(fake_count(s), 6);
    chain_free(&c);

    /* An instance without a role. */
    fake_route_set(s, "GET", ROLE_PATH, 404, "");
    icmt_ok(chain_new(&c, NULL, 0));
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    awst_msg_has("no AWS credentials: tried the properties");
    char *want = icmt_sprintf("instance metadata at %s (no IAM role is attached to the "
                              "instance)",
                              ep);
    awst_msg_has(want);
    free(want);
    chain_free(&c);

    /* An IMDS that refuses the session token: no IMDSv1 fall-back, no GET is sent. */
    fake_route_set(s, "PUT", "/latest/api/token", 403, "");
    int before = fake_count(s);
    icmt_ok(chain_new(&c, NULL, 0));
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    assert_int_equal(icm_error_last()->http_status, 403);
    want = icmt_sprintf("instance metadata at %s (refused an IMDSv2 session token: HTTP 403)",
                        ep);
    awst_msg_has(want);
    free(want);
    assert_int_equal(fake_count(s), before + 1);
    assert_string_equal(fake_get(s, before).method, "PUT");
    chain_free(&c);
    /* One that does not offer tokens at all (IMDSv1 only). */
    fake_route_set(s, "PUT", "/latest/api/token", 405, "");
    icmt_ok(chain_new(&c, NULL, 0));
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    awst_msg_has("(gave no IMDSv2 session token: HTTP 405; IMDSv1 is not used)");
    chain_free(&c);
    free(ep);
    fake_stop(s);

    /* Disabled: never contacted. */
    setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
    icmt_ok(chain_new(&c, NULL, 0));
    assert_string_equal(icm__aws_creds_provider_source(c.p), "none");
    chain_free(&c);
    setenv("AWS_EC2_METADATA_DISABLED", "1", 1);
    assert_int_equal(chain_new(&c, NULL, 0), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "AWS_EC2_METADATA_DISABLED: \"1\" is not true or false");
    chain_free(&c);
}

static void test_imds_not_listening(void **state)
{
    (void)state;
    /* A port nothing listens on: the answer comes fast, as "no credentials". */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    char *ep = icmt_sprintf("http://127.0.0.1:%d", ntohs(a.sin_port));
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
    chain c;
    icmt_ok(chain_new(&c, NULL, 0));
    icm__aws_credentials cr;
    int64_t t0 = icm__now_ms();
    assert_int_equal(icm__aws_creds_get(c.p, &cr), ICM_EAUTH);
    assert_true(icm__now_ms() - t0 < 3000);
    char *want = icmt_sprintf("instance metadata at %s (not reachable: ", ep);
    awst_msg_has(want);
    awst_msg_has("no AWS credentials: tried the properties (s3.access-key-id, "
                 "client.access-key-id), the environment (AWS_ACCESS_KEY_ID), profile "
                 "\"default\" in ");
    free(want);
    chain_free(&c);
    free(ep);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "169.254.169.254", 1);
    assert_int_equal(chain_new(&c, NULL, 0), ICM_EINVALID);
    awst_msg_has("AWS_EC2_METADATA_SERVICE_ENDPOINT: \"169.254.169.254\" is not "
                 "http(s)://host[:port]");
    chain_free(&c);
}

/* Eight threads asking a cold provider at once: one IMDS round (token, role, credentials). */
typedef struct getter {
    icm__aws_creds_provider *p;
    int rc;
    char key[32];
} getter;

static void *getter_run(void *arg)
{
    getter *g = arg;
    icm__aws_credentials c;
    g->rc = icm__aws_creds_get(g->p, &c);
    if (g->rc == 0)
        snprintf(g->key, sizeof g->key, "%s", c.access_key_id);
    icm__aws_credentials_clear(&c);
    return NULL;
}

static void test_imds_threads(void **state)
{
    (void)state;
    fake_server *s = fake_start();
    fake_route_set(s, "PUT", "/latest/api/token", 200, "tok");
    fake_route_set(s, "GET", ROLE_PATH, 200, "r");
    fake_route_set(s, "GET", ROLE_PATH "r", 200, IMDS_CREDS);
    char *ep = url_of(s, "");
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
    chain c;
    icmt_ok(chain_new(&c, NULL, 0));
    getter g[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        g[i] = (getter){.p = c.p};
        assert_int_equal(pthread_create(&th[i], NULL, getter_run, &g[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(g[i].rc, 0);
        assert_string_equal(g[i].key, "ASIAIMDS");
    }
    assert_int_equal(fake_count(s), 3);
    chain_free(&c);
    free(ep);
    fake_stop(s);
}

/* Where each source sends its requests, without sending them. */
static void test_source_settings(void **state)
{
    (void)state;
    icm__s3_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.region = "eu-west-1";
    icm__aws_http_source src;
    icm__aws_http_kind kind;
    icm__buf tried = ICM__BUF_INIT;

    setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/42", 1);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1/ignored", 1);
    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_int_equal(kind, ICM__AWS_HTTP_CONTAINER);
    assert_string_equal(src.container_url, "http://169.254.170.2/v2/credentials/42");
    assert_null(src.auth_token);
    icm__aws_http_source_clear(&src);
    unsetenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");

    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_int_equal(kind, ICM__AWS_HTTP_IMDS);
    assert_string_equal(src.imds_endpoint, "http://169.254.169.254");
    icm__aws_http_source_clear(&src);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "IPv6", 1);
    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_string_equal(src.imds_endpoint, "http://[fd00:ec2::254]");
    icm__aws_http_source_clear(&src);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "IPv5", 1);
    assert_int_equal(icm__aws_http_source_init(&src, &cfg, &kind, &tried), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE: \"IPv5\" is not IPv4 or IPv6");
    unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");

    /* STS: the region's endpoint; AWS_ENDPOINT_URL_STS, then AWS_ENDPOINT_URL, unless told to
     * ignore configured endpoints. */
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/t", 1);
    setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r", 1);
    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_int_equal(kind, ICM__AWS_HTTP_WEB_IDENTITY);
    assert_string_equal(src.sts_endpoint, "https://sts.eu-west-1.amazonaws.com");
    assert_string_equal(src.token_file, "/t");
    assert_int_equal(strncmp(src.session_name, "icemaint-", 9), 0);
    icm__aws_http_source_clear(&src);
    setenv("AWS_ENDPOINT_URL", "http://all:1", 1);
    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_string_equal(src.sts_endpoint, "http://all:1");
    icm__aws_http_source_clear(&src);
    setenv("AWS_ENDPOINT_URL_STS", "http://sts:2/", 1);
    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_string_equal(src.sts_endpoint, "http://sts:2");
    icm__aws_http_source_clear(&src);
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
    icmt_ok(icm__aws_http_source_init(&src, &cfg, &kind, &tried));
    assert_string_equal(src.sts_endpoint, "https://sts.eu-west-1.amazonaws.com");
    icm__aws_http_source_clear(&src);
    unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    setenv("AWS_ENDPOINT_URL_STS", "sts.example.com", 1);
    assert_int_equal(icm__aws_http_source_init(&src, &cfg, &kind, &tried), ICM_EINVALID);
    awst_msg_has("AWS_ENDPOINT_URL_STS: \"sts.example.com\" is not http(s)://host[:port]");
    unsetenv("AWS_ENDPOINT_URL_STS");
    setenv("AWS_ROLE_SESSION_NAME", "has space", 1);
    assert_int_equal(icm__aws_http_source_init(&src, &cfg, &kind, &tried), ICM_EINVALID);
    assert_string_equal(icm_error_last()->message,
                        "the role session name \"has space\" is not 2 to 64 of letters, digits "
                        "and _+=,.@-");
    icm__buf_dispose(&tried);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_web_identity, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_container, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_imds, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_imds_not_listening, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_imds_threads, awst_setup, awst_teardown),
        cmocka_unit_test_setup_teardown(test_source_settings, awst_setup, awst_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
