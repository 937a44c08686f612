/*
 * io/s3/s3_creds_http.h: the credential sources that fetch over HTTP (internal to the chain in
 * s3_creds.c): STS AssumeRoleWithWebIdentity, the container credentials endpoint (ECS, EKS Pod
 * Identity) and the EC2 instance metadata service (IMDSv2).
 */
#ifndef ICM_IO_S3_CREDS_HTTP_H
#define ICM_IO_S3_CREDS_HTTP_H

#include "io/http.h"
#include "io/s3/s3_config.h"
#include "util/util.h"

typedef enum icm__aws_http_kind {
    ICM__AWS_HTTP_NONE = 0,
    ICM__AWS_HTTP_WEB_IDENTITY,
    ICM__AWS_HTTP_CONTAINER,
    ICM__AWS_HTTP_IMDS
} icm__aws_http_kind;

typedef struct icm__aws_http_source {
    icm__aws_http_kind kind;
    /* Web identity: the STS endpoint ("https://sts.<region>.amazonaws.com" or
     * AWS_ENDPOINT_URL_STS), the role, the token file (read again at each fetch: it is
     * rotated), the session name. */
    char *sts_endpoint;
    char *role_arn;
    char *token_file;
    char *session_name;
    /* Container: the full URL, and the Authorization value or the file holding it (read at
     * each fetch). */
    char *container_url;
    char *auth_token;
    char *auth_token_file;
    /* Instance metadata: the endpoint ("http://169.254.169.254"). */
    char *imds_endpoint;
} icm__aws_http_source;

/* Web identity from a profile's role_arn + web_identity_token_file (+ role_session_name). */
int icm__aws_web_identity_init(icm__aws_http_source *src, const icm__s3_config *cfg,
                               const char *role_arn, const char *token_file,
                               const char *session_name);

/* The first HTTP source the environment configures, in the chain's order: web identity
 * (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN), container (AWS_CONTAINER_CREDENTIALS_*), then
 * instance metadata unless AWS_EC2_METADATA_DISABLED=true (*kind NONE then). What was looked
 * at is appended to `tried` (", web identity (...)"). Returns 0, ICM_EINVALID (a half or bad
 * configuration, naming the variable), ICM_ENOMEM. */
int icm__aws_http_source_init(icm__aws_http_source *src, const icm__s3_config *cfg,
                              icm__aws_http_kind *kind, icm__buf *tried);

/* Fetch credentials from the source through `http` (not NULL). `tried` is the chain's list
 * for a "no credentials" message (instance metadata unreachable or without a role). Returns 0;
 * ICM_EAUTH (refused, no role, malformed answer, a token file that cannot be read);
 * ICM_ENET / ICM_ETIMEOUT; ICM_ENOMEM. */
int icm__aws_http_source_fetch(const icm__aws_http_source *src, icm__http *http,
                               const char *tried, icm__aws_credentials *out);

void icm__aws_http_source_clear(icm__aws_http_source *src);

#endif /* ICM_IO_S3_CREDS_HTTP_H */
