/*
 * io/s3/s3_creds_fetch.c: fetching credentials over HTTP (s3_creds_http.h): STS
 * AssumeRoleWithWebIdentity, the container credentials endpoint, and IMDSv2.
 *
 * Web identity POSTs the form (so the token travels in the body, never in a URL that could
 * appear in a message) to STS, which needs no signature for this action. The container
 * endpoint is one GET with the Authorization token. Instance metadata is IMDSv2 only: a
 * session token from PUT /latest/api/token, then the role name, then its credentials; an
 * instance that refuses the token is an error, never a fall-back to IMDSv1, whose unauthenticated
 * GETs are what SSRF attacks use. Its requests have a 1 s budget each, so a machine without
 * instance metadata (a laptop) learns it has no credentials in about a second.
 *
 * No token or secret is ever put into a message; a token read from a file is wiped after use.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/s3/s3_config_internal.h"
#include "io/s3/s3_creds_http.h"
#include "io/sigv4.h"

#define IMDS_TIMEOUT_MS 1000
#define IMDS_TOKEN_TTL_SECONDS "21600"
#define CONTAINER_TIMEOUT_MS 5000
#define STS_TIMEOUT_MS 10000
#define MAX_TOKEN_FILE_BYTES ((size_t)64 << 10)

/* The current error again, its message after `prefix` (the code, status and remote code
 * kept). */
static int prefixed(const char *prefix)
{
    const icm_error *e = icm__error_last();
    char msg[1024], loc[512], remote[128];
    snprintf(msg, sizeof msg, "%s", e->message);
    snprintf(loc, sizeof loc, "%s", e->location);
    snprintf(remote, sizeof remote, "%s", e->remote_code);
    int code = e->code != 0 ? e->code : ICM_ENET, status = e->http_status;
    icm_error_class klass = e->klass;
    icm__error_set(klass, code, loc[0] != '\0' ? loc : NULL, "%s: %s", prefix, msg);
    if (status != 0)
        icm__error_set_http_status(status);
    if (remote[0] != '\0')
        icm__error_set_remote_code(remote);
    return code;
}

/* A status that is not 200: 5xx is the endpoint's trouble (ICM_ENET), the rest a refusal. */
static int bad_status(const char *what, const char *url, int status)
{
    int rc = icm__error_set(ICM_ERRCLASS_S3, status >= 500 ? ICM_ENET : ICM_EAUTH, url,
                            "%s answered HTTP %d", what, status);
    icm__error_set_http_status(status);
    return rc;
}

/* A token file's content, trimmed of surrounding white space (new string; the caller wipes and
 * frees it). A file that cannot be read is ICM_EAUTH: the token is what proves who we are, and
 * it is read at each refresh, long after the configuration was checked. */
static int read_token_file(const char *path, const char *what, char **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return icm__error_set_errno(ICM_ERRCLASS_S3, ICM_EAUTH, errno, path,
                                    "%s: cannot open the %s", path, what);
    icm__buf b = ICM__BUF_INIT;
    int rc = 0;
    for (;;) {
        if (icm__buf_grow(&b, 4096) != 0) {
            rc = icm__error_oom();
            break;
        }
        ssize_t n = read(fd, b.data + b.len, b.cap - b.len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = icm__error_set_errno(ICM_ERRCLASS_S3, ICM_EAUTH, errno, path,
                                      "%s: cannot read the %s", path, what);
            break;
        }
        if (n == 0)
            break;
        b.len += (size_t)n;
        b.data[b.len] = '\0';
        if (b.len > MAX_TOKEN_FILE_BYTES) {
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, path,
                                "%s: the %s is larger than %zu bytes", path, what,
                                MAX_TOKEN_FILE_BYTES);
            break;
        }
    }
    close(fd);
    if (rc == 0) {
        const char *s = b.data != NULL ? b.data : "", *e = s + b.len;
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        bool ok = s < e;
        for (const char *p = s; ok && p < e; p++)
            ok = (unsigned char)*p >= 0x20 && (unsigned char)*p != 0x7f;
        if (!ok)
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, path,
                                "%s: the %s is empty or holds control characters", path,
                                what);
        else if ((*out = icm__strndup(s, (size_t)(e - s))) == NULL)
            rc = icm__error_oom();
    }
    if (b.data != NULL)
        explicit_bzero(b.data, b.cap);
    icm__buf_dispose(&b);
    return rc;
}

static void wipe_free(char *s)
{
    if (s != NULL) {
        explicit_bzero(s, strlen(s));
        icm__free(s);
    }
}

/* ---- web identity ---- */

static int fetch_web_identity(const icm__aws_http_source *src, icm__http *http,
                              icm__aws_credentials *out)
{
    char *token = NULL;
    int rc = read_token_file(src->token_file, "web identity token file", &token);
    if (rc != 0)
        return rc;
    icm__buf body = ICM__BUF_INIT;
    icm__buf_puts(&body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=");
    icm__sigv4_encode(&body, src->role_arn, strlen(src->role_arn), false);
    icm__buf_puts(&body, "&RoleSessionName=");
    icm__sigv4_encode(&body, src->session_name, strlen(src->session_name), false);
    icm__buf_puts(&body, "&WebIdentityToken=");
    icm__sigv4_encode(&body, token, strlen(token), false);
    wipe_free(token);
    char *url = icm__sprintf("%s/", src->sts_endpoint);
    if (body.oom || url == NULL) {
        icm__free(url);
        if (body.data != NULL)
            explicit_bzero(body.data, body.len);
        icm__buf_dispose(&body);
        return icm__error_oom();
    }
    const icm__http_header headers[] = {
        {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
        {"Accept", "application/xml"},
    };
    icm__http_request req = {.method = "POST",
                             .url = url,
                             .headers = headers,
                             .n_headers = ICM__ARRAY_LEN(headers),
                             .body = body.data,
                             .body_len = body.len,
                             .timeout_ms = STS_TIMEOUT_MS};
    icm__http_response resp;
    rc = icm__http_send(http, &req, &resp);
    explicit_bzero(body.data, body.len);
    icm__buf_dispose(&body);
    if (rc != 0) {
        rc = prefixed("web identity: STS AssumeRoleWithWebIdentity");
    } else if (resp.status == 200 || (resp.status >= 400 && resp.status < 500)) {
        rc = icm__aws_creds_from_sts_xml(out, resp.body != NULL ? resp.body : "", resp.body_len,
                                         "web identity: STS AssumeRoleWithWebIdentity",
                                         "web identity");
        if (rc == 0 && resp.status != 200) {
            icm__aws_credentials_clear(out); /* credentials in an error answer: refused */
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, url,
                                "web identity: STS AssumeRoleWithWebIdentity answered HTTP %d",
                                resp.status);
        }
        if (rc != 0) {
            icm__error_set_location(url);
            if (resp.status != 200)
                icm__error_set_http_status(resp.status);
        }
    } else {
        rc = bad_status("web identity: STS AssumeRoleWithWebIdentity", url, resp.status);
    }
    icm__http_response_clear(&resp);
    icm__free(url);
    return rc;
}

/* ---- container ---- */

static int fetch_container(const icm__aws_http_source *src, icm__http *http,
                           icm__aws_credentials *out)
{
    char *token = NULL;
    int rc = 0;
    if (src->auth_token_file != NULL &&
        (rc = read_token_file(src->auth_token_file,
                              "container authorization token file", &token)) != 0)
        return rc;
    const char *auth = token != NULL ? token : src->auth_token;
    icm__http_header headers[2] = {{"Accept", "application/json"}, {"Authorization", auth}};
    icm__http_request req = {.method = "GET",
                             .url = src->container_url,
                             .headers = headers,
                             .n_headers = auth != NULL ? 2 : 1,
                             .timeout_ms = CONTAINER_TIMEOUT_MS};
    icm__http_response resp;
    rc = icm__http_send(http, &req, &resp);
    wipe_free(token);
    if (rc != 0)
        rc = prefixed("container credentials");
    else if (resp.status != 200)
        rc = bad_status("the container credentials endpoint", src->container_url, resp.status);
    else if ((rc = icm__aws_creds_from_json(out, resp.body != NULL ? resp.body : "",
                                            resp.body_len, "container credentials",
                                            "container")) != 0)
        icm__error_set_location(src->container_url);
    icm__http_response_clear(&resp);
    return rc;
}

/* ---- instance metadata (IMDSv2) ---- */

/* The instance has no credentials to give: "no AWS credentials" with the chain's list. */
static int imds_none(const char *tried, const char *endpoint, const char *why)
{
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL,
                          "no AWS credentials: tried %s, instance metadata at %s (%s)", tried,
                          endpoint, why);
}

/* An IAM role name (the first line of the listing): [A-Za-z0-9+=,.@_-], 1 to 64. */
static bool role_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && strchr("+=,.@_-", s[i]) == NULL)
            return false;
    return true;
}

static int fetch_imds(const icm__aws_http_source *src, icm__http *http, const char *tried,
                      icm__aws_credentials *out)
{
    const char *ep = src->imds_endpoint;
    char *url = icm__sprintf("%s/latest/api/token", ep);
    if (url == NULL)
        return icm__error_oom();
    const icm__http_header ttl[] = {{"X-aws-ec2-metadata-token-ttl-seconds",
                                     IMDS_TOKEN_TTL_SECONDS}};
    icm__http_request req = {.method = "PUT",
                             .url = url,
                             .headers = ttl,
                             .n_headers = 1,
                             .timeout_ms = IMDS_TIMEOUT_MS};
    icm__http_response resp;
    int rc = icm__http_send(http, &req, &resp);
    char *token = NULL, *role = NULL;
    if (rc == ICM_ENOMEM) {
        goto done;
    } else if (rc != 0) {
        char why[600];
        snprintf(why, sizeof why, "not reachable: %s", icm__error_last()->message);
        rc = imds_none(tried, ep, why);
        goto done;
    }
    if (resp.status != 200) {
        char why[200];
        snprintf(why, sizeof why,
                 resp.status == 403 ? "refused an IMDSv2 session token: HTTP %d"
                                    : "gave no IMDSv2 session token: HTTP %d; IMDSv1 is not used",
                 resp.status);
        rc = resp.status >= 500 ? bad_status("instance metadata token request", url,
                                             resp.status)
                                : imds_none(tried, ep, why);
        icm__error_set_http_status(resp.status);
        goto done;
    }
    {
        const char *s = resp.body != NULL ? resp.body : "";
        size_t n = resp.body_len;
        while (n > 0 && isspace((unsigned char)s[n - 1]))
            n--;
        bool ok = n > 0 && memchr(s, '\0', n) == NULL;
        for (size_t i = 0; ok && i < n; i++)
            ok = (unsigned char)s[i] > 0x20 && (unsigned char)s[i] < 0x7f;
        if (!ok) {
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, url,
                                "instance metadata: the session token is empty or not "
                                "printable");
            goto done;
        }
        if ((token = icm__strndup(s, n)) == NULL) {
            rc = icm__error_oom();
            goto done;
        }
    }
    if (resp.body != NULL)
        explicit_bzero(resp.body, resp.body_len);
    icm__http_response_clear(&resp);
    icm__free(url);

    url = icm__sprintf("%s/latest/meta-data/iam/security-credentials/", ep);
    if (url == NULL) {
        rc = icm__error_oom();
        goto done_nosend;
    }
    const icm__http_header auth[] = {{"X-aws-ec2-metadata-token", token}};
    req = (icm__http_request){.method = "GET",
                              .url = url,
                              .headers = auth,
                              .n_headers = 1,
                              .timeout_ms = IMDS_TIMEOUT_MS};
    rc = icm__http_send(http, &req, &resp);
    if (rc != 0) {
        rc = prefixed("instance metadata: the IAM role");
        goto done;
    }
    if (resp.status == 404) {
        rc = imds_none(tried, ep, "no IAM role is attached to the instance");
        icm__error_set_http_status(404);
        goto done;
    }
    if (resp.status != 200) {
        rc = bad_status("instance metadata (the IAM role)", url, resp.status);
        goto done;
    }
    {
        const char *s = resp.body != NULL ? resp.body : "";
        size_t n = strcspn(s, "\r\n");
        if (n > resp.body_len)
            n = resp.body_len;
        if (!role_name_ok(s, n)) {
            rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, url,
                                "instance metadata: the IAM role name is missing or malformed");
            goto done;
        }
        if ((role = icm__strndup(s, n)) == NULL) {
            rc = icm__error_oom();
            goto done;
        }
    }
    icm__http_response_clear(&resp);
    icm__free(url);

    url = icm__sprintf("%s/latest/meta-data/iam/security-credentials/%s", ep, role);
    if (url == NULL) {
        rc = icm__error_oom();
        goto done_nosend;
    }
    req.url = url;
    rc = icm__http_send(http, &req, &resp);
    if (rc != 0)
        rc = prefixed("instance metadata: the role's credentials");
    else if (resp.status != 200)
        rc = bad_status("instance metadata (the role's credentials)", url, resp.status);
    else if ((rc = icm__aws_creds_from_json(out, resp.body != NULL ? resp.body : "",
                                            resp.body_len, "instance metadata",
                                            "instance metadata")) != 0)
        icm__error_set_location(url);
done:
    if (resp.body != NULL)
        explicit_bzero(resp.body, resp.body_len);
    icm__http_response_clear(&resp);
done_nosend:
    icm__free(url);
    wipe_free(token);
    icm__free(role);
    return rc;
}

int icm__aws_http_source_fetch(const icm__aws_http_source *src, icm__http *http,
                               const char *tried, icm__aws_credentials *out)
{
    memset(out, 0, sizeof *out);
    switch (src->kind) {
    case ICM__AWS_HTTP_WEB_IDENTITY:
        return fetch_web_identity(src, http, out);
    case ICM__AWS_HTTP_CONTAINER:
        return fetch_container(src, http, out);
    case ICM__AWS_HTTP_IMDS:
        return fetch_imds(src, http, tried, out);
    case ICM__AWS_HTTP_NONE:
        break;
    }
    return icm__error_set(ICM_ERRCLASS_S3, ICM_EAUTH, NULL, "no AWS credentials: tried %s",
                          tried);
}
