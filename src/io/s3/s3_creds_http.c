/*
 * io/s3/s3_creds_http.c: which HTTP credential source the environment configures, and its
 * settings checked (s3_creds_http.h). The fetching itself is in s3_creds_fetch.c.
 *
 * The rules are the SDKs': web identity needs both AWS_WEB_IDENTITY_TOKEN_FILE and
 * AWS_ROLE_ARN (one without the other is an error here, where the SDKs skip it silently);
 * container credentials come from http://169.254.170.2 + AWS_CONTAINER_CREDENTIALS_RELATIVE_URI,
 * or AWS_CONTAINER_CREDENTIALS_FULL_URI, which over plain http may only name a loopback
 * address or the ECS / EKS Pod Identity addresses (169.254.170.2, 169.254.170.23,
 * fd00:ec2::23) so that a token is never sent in clear text to another host; instance
 * metadata is last unless AWS_EC2_METADATA_DISABLED=true.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "io/s3/s3_config_internal.h"
#include "io/s3/s3_creds_http.h"

#define CONTAINER_HOST "http://169.254.170.2"
#define IMDS_ENDPOINT "http://169.254.169.254"
#define IMDS_ENDPOINT_IPV6 "http://[fd00:ec2::254]"

void icm__aws_http_source_clear(icm__aws_http_source *src)
{
    if (src == NULL)
        return;
    icm__free(src->sts_endpoint);
    icm__free(src->role_arn);
    icm__free(src->token_file);
    icm__free(src->session_name);
    icm__free(src->container_url);
    if (src->auth_token != NULL)
        explicit_bzero(src->auth_token, strlen(src->auth_token));
    icm__free(src->auth_token);
    icm__free(src->auth_token_file);
    icm__free(src->imds_endpoint);
    memset(src, 0, sizeof *src);
}

/* STS's role session name: 2 to 64 of [A-Za-z0-9_+=,.@-]. */
static bool session_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 2 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && strchr("_+=,.@-", s[i]) == NULL)
            return false;
    return true;
}

int icm__aws_web_identity_init(icm__aws_http_source *src, const icm__s3_config *cfg,
                               const char *role_arn, const char *token_file,
                               const char *session_name)
{
    memset(src, 0, sizeof *src);
    int rc = 0;
    bool ignore = false;
    const char *ign = icm__s3_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    if (ign != NULL &&
        (rc = icm__s3_parse_bool(ign, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", &ignore)) != 0)
        return rc;
    const char *ep = NULL, *origin = NULL;
    if (!ignore) {
        if ((ep = icm__s3_env(origin = "AWS_ENDPOINT_URL_STS")) == NULL)
            ep = icm__s3_env(origin = "AWS_ENDPOINT_URL");
    }
    if (session_name == NULL)
        session_name = icm__s3_env("AWS_ROLE_SESSION_NAME");
    if (session_name != NULL && !session_name_ok(session_name))
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "the role session name \"%.80s\" is not 2 to 64 of letters, "
                              "digits and _+=,.@-",
                              session_name);
    const char *region = cfg != NULL && cfg->region != NULL ? cfg->region : "us-east-1";
    if (ep != NULL)
        rc = icm__s3_parse_endpoint(ep, origin, &src->sts_endpoint);
    else if ((src->sts_endpoint =
                  icm__sprintf("https://sts.%s.%s", region,
                               strncmp(region, "cn-", 3) == 0 ? "amazonaws.com.cn"
                                                              : "amazonaws.com")) == NULL)
        rc = icm__error_oom();
    if (rc != 0)
        goto fail;
    src->role_arn = icm__strdup(role_arn);
    src->token_file = icm__strdup(token_file);
    src->session_name = session_name != NULL
                            ? icm__strdup(session_name)
                            : icm__sprintf("icemaint-%lld", (long long)icm__now_ms());
    if (src->role_arn == NULL || src->token_file == NULL || src->session_name == NULL) {
        rc = icm__error_oom();
        goto fail;
    }
    src->kind = ICM__AWS_HTTP_WEB_IDENTITY;
    return 0;
fail:
    icm__aws_http_source_clear(src);
    return rc;
}

/* Whether plain http may carry the container token to `host` (as written in the URL,
 * brackets removed for IPv6). */
static bool container_host_allowed(const char *host, size_t n)
{
    static const char *const allowed[] = {"169.254.170.2", "169.254.170.23", "fd00:ec2::23",
                                          "localhost", "::1"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(allowed); i++)
        if (strlen(allowed[i]) == n && strncasecmp(host, allowed[i], n) == 0)
            return true;
    /* 127.0.0.0/8 */
    if (n >= 4 && strncmp(host, "127.", 4) == 0) {
        for (size_t i = 4; i < n; i++)
            if (!isdigit((unsigned char)host[i]) && host[i] != '.')
                return false;
        return true;
    }
    return false;
}

static int container_url(const char *full, char **out)
{
    *out = NULL;
    const char *rest = NULL;
    bool https = false;
    if (strncasecmp(full, "http://", 7) == 0)
        rest = full + 7;
    else if (strncasecmp(full, "https://", 8) == 0) {
        rest = full + 8;
        https = true;
    }
    if (rest == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_CONTAINER_CREDENTIALS_FULL_URI: not an http:// or https:// "
                              "URL");
    if (strpbrk(rest, "@ \t\r\n") != NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_CONTAINER_CREDENTIALS_FULL_URI: user information or white "
                              "space in the URL");
    const char *host = rest, *he;
    if (*host == '[') {
        he = strchr(host, ']');
        if (he == NULL)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "AWS_CONTAINER_CREDENTIALS_FULL_URI: an IPv6 host without ]");
        host++;
    } else {
        he = host + strcspn(host, ":/?#");
    }
    if (he == host)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_CONTAINER_CREDENTIALS_FULL_URI: no host");
    if (!https && !container_host_allowed(host, (size_t)(he - host)))
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_CONTAINER_CREDENTIALS_FULL_URI: over http the host must be "
                              "a loopback address, 169.254.170.2, 169.254.170.23 or "
                              "[fd00:ec2::23], not \"%.*s\"",
                              (int)(he - host > 200 ? 200 : he - host), host);
    *out = icm__strdup(full);
    return *out != NULL ? 0 : icm__error_oom();
}

static int container_init(icm__aws_http_source *src, const char *rel, const char *full)
{
    int rc;
    if (rel != NULL) {
        if (rel[0] != '/' || strpbrk(rel, " \t\r\n") != NULL)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: a path starting "
                                  "with / and without white space is expected");
        src->container_url = icm__sprintf("%s%s", CONTAINER_HOST, rel);
        if (src->container_url == NULL)
            return icm__error_oom();
    } else if ((rc = container_url(full, &src->container_url)) != 0) {
        return rc;
    }
    const char *tf = icm__s3_env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *tok = icm__s3_env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    if (tf != NULL) {
        if ((src->auth_token_file = icm__strdup(tf)) == NULL)
            return icm__error_oom();
    } else if (tok != NULL) {
        if (strpbrk(tok, "\r\n") != NULL)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "AWS_CONTAINER_AUTHORIZATION_TOKEN: a line break in the "
                                  "token");
        if ((src->auth_token = icm__strdup(tok)) == NULL)
            return icm__error_oom();
    }
    src->kind = ICM__AWS_HTTP_CONTAINER;
    return 0;
}

int icm__aws_http_source_init(icm__aws_http_source *src, const icm__s3_config *cfg,
                              icm__aws_http_kind *kind, icm__buf *tried)
{
    memset(src, 0, sizeof *src);
    *kind = ICM__AWS_HTTP_NONE;
    int rc = 0;
    const char *tf = icm__s3_env("AWS_WEB_IDENTITY_TOKEN_FILE");
    const char *role = icm__s3_env("AWS_ROLE_ARN");
    if (tf != NULL && role == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not");
    if (tf == NULL && role != NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not");
    if (tf != NULL) {
        rc = icm__aws_web_identity_init(src, cfg, role, tf, NULL);
        goto done;
    }
    icm__buf_puts(tried, ", web identity (AWS_WEB_IDENTITY_TOKEN_FILE)");

    const char *rel = icm__s3_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char *full = icm__s3_env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    if (rel != NULL || full != NULL) {
        rc = container_init(src, rel, full);
        goto done;
    }
    icm__buf_puts(tried, ", container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, "
                         "AWS_CONTAINER_CREDENTIALS_FULL_URI)");

    bool disabled = false;
    const char *dis = icm__s3_env("AWS_EC2_METADATA_DISABLED");
    if (dis != NULL && (rc = icm__s3_parse_bool(dis, "AWS_EC2_METADATA_DISABLED", &disabled)) != 0)
        goto done;
    if (disabled) {
        icm__buf_puts(tried, ", instance metadata (disabled by AWS_EC2_METADATA_DISABLED)");
        goto done;
    }
    const char *ep = icm__s3_env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    const char *mode = icm__s3_env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
    if (ep != NULL) {
        rc = icm__s3_parse_endpoint(ep, "AWS_EC2_METADATA_SERVICE_ENDPOINT", &src->imds_endpoint);
    } else if (mode != NULL && strcasecmp(mode, "ipv6") != 0 && strcasecmp(mode, "ipv4") != 0) {
        rc = icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                            "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE: \"%.32s\" is not IPv4 or "
                            "IPv6",
                            mode);
    } else {
        src->imds_endpoint = icm__strdup(mode != NULL && strcasecmp(mode, "ipv6") == 0
                                             ? IMDS_ENDPOINT_IPV6
                                             : IMDS_ENDPOINT);
        if (src->imds_endpoint == NULL)
            rc = icm__error_oom();
    }
    if (rc == 0)
        src->kind = ICM__AWS_HTTP_IMDS;
done:
    if (rc != 0) {
        icm__aws_http_source_clear(src);
        return rc;
    }
    *kind = src->kind;
    return 0;
}
