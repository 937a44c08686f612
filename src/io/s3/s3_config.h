/*
 * io/s3/s3_config.h: where an S3 back end sends its requests and with which credentials
 * (internal).
 *
 * Configuration is resolved once, when the back end is built, from (highest first) the
 * FileIO's properties (PyIceberg's names, and Java S3FileIO's where they differ), the AWS
 * environment variables, and the shared config file's profile, as the AWS SDKs do.
 * Credentials come from a provider chain in the SDKs' order; a provider whose credentials
 * expire is asked again before they do, so a long run never signs with expired keys.
 */
#ifndef ICM_IO_S3_CONFIG_H
#define ICM_IO_S3_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "icemaint/common.h"
#include "io/http.h"

typedef enum icm__s3_addressing {
    ICM__S3_ADDRESSING_VIRTUAL = 0, /* https://bucket.host/key */
    ICM__S3_ADDRESSING_PATH = 1     /* https://host/bucket/key */
} icm__s3_addressing;

typedef struct icm__s3_config {
    /* Endpoint: scheme://host[:port] without a trailing slash, never NULL once resolved
     * (`s3.endpoint`, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url
     * (services s3 block first), else https://s3.<region>.amazonaws.com). */
    char *endpoint;
    bool endpoint_is_custom;   /* anything but the AWS default */
    char *region;              /* `s3.region`, `client.region`, AWS_REGION, AWS_DEFAULT_REGION,
                                  the profile's region, else us-east-1 */
    icm__s3_addressing addressing; /* path when `s3.path-style-access` is true, or when an
                                      endpoint is custom and `s3.force-virtual-addressing` is
                                      not true (PyIceberg), or for a bucket with dots */
    char *profile;             /* `s3.profile-name`, `client.profile-name`, AWS_PROFILE,
                                  "default" */
    bool anonymous;            /* `s3.anonymous`: unsigned requests */
    int64_t connect_timeout_ms; /* `s3.connect-timeout` (seconds, as PyIceberg) */
    int64_t request_timeout_ms; /* `s3.request-timeout` (seconds) */
    unsigned max_attempts;     /* `s3.retry.max-attempts`, AWS_MAX_ATTEMPTS; default 10 */
    int64_t retry_total_ms;    /* `s3.retry.total-timeout-ms`; default 120,000 */
    unsigned max_in_flight;    /* `s3.max-in-flight`; default 32 */
    unsigned check_max_in_flight; /* `s3.check.max-in-flight` (icemaint's own): the checks'
                                     HEADs and first-byte reads at once; default 64 */
    unsigned delete_batch_size; /* `s3.delete.batch-size` (Java), 1..1000, default 1000 */
    char *ca_bundle;           /* `s3.ssl.ca-bundle`, AWS_CA_BUNDLE; NULL: the system's */
} icm__s3_config;

/* Resolve the configuration into *out from props (borrowed) and the environment. Returns 0;
 * ICM_EINVALID naming the property or file and what is wrong (a bad number, an endpoint that is
 * not http(s)://host[:port], an unreadable profile file that was named explicitly); ICM_ENOMEM.
 * On failure *out holds nothing to free. */
int icm__s3_config_resolve(icm__s3_config *out, const icm_property *props, size_t n_props);
void icm__s3_config_clear(icm__s3_config *cfg);

/* One set of credentials (strings owned by the struct). expires_at_ms 0: never expires. */
typedef struct icm__aws_credentials {
    char *access_key_id;
    char *secret_access_key;
    char *session_token;       /* NULL when none */
    int64_t expires_at_ms;
    const char *source;        /* static: "properties", "environment", "profile" (the
                                  config's `profile`), "web identity", "container",
                                  "instance metadata" */
} icm__aws_credentials;

void icm__aws_credentials_clear(icm__aws_credentials *c);

typedef struct icm__aws_creds_provider icm__aws_creds_provider;

/*
 * The SDKs' chain, first that has credentials: the properties (`s3.access-key-id` /
 * `s3.secret-access-key` / `s3.session-token` / `s3.session-token-expires-at-ms`, then the
 * `client.*` names); AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN; the shared
 * credentials file then config file for cfg->profile (AWS_SHARED_CREDENTIALS_FILE,
 * AWS_CONFIG_FILE); web identity (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN through STS
 * AssumeRoleWithWebIdentity); container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI or
 * _RELATIVE_URI with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE)); IMDSv2 (unless
 * AWS_EC2_METADATA_DISABLED=true). A profile that asks for what is not supported
 * (credential_process, sso_*, role_arn with source_profile) is an error naming it, never
 * silently skipped. `http` (borrowed; outlives the provider) carries the STS, container and
 * IMDS requests. Returns 0, ICM_EINVALID, ICM_EUNSUPPORTED (such a profile), ICM_ENOMEM.
 * Nothing is fetched yet.
 */
int icm__aws_creds_provider_new(icm__aws_creds_provider **out, const icm__s3_config *cfg,
                                const icm_property *props, size_t n_props, icm__http *http);
void icm__aws_creds_provider_free(icm__aws_creds_provider *p);

/*
 * Current credentials, copied into *out (clear it after use). Thread-safe. Fetches them the
 * first time, and again when they expire within 5 minutes (one thread refreshes; the others
 * keep using the still-valid old ones, or wait when they have expired). Returns 0; ICM_EAUTH
 * when no provider has credentials (the message lists what was tried) or a provider refused;
 * ICM_ENET / ICM_ETIMEOUT from a provider's endpoint; ICM_ENOMEM.
 */
int icm__aws_creds_get(icm__aws_creds_provider *p, icm__aws_credentials *out);
/* The same; *waited (NULL: not asked) true when this call fetched credentials or waited for
 * another thread's fetch (time passed that the caller may not allow: the delete engine's
 * checks before a delete). */
int icm__aws_creds_get_ex(icm__aws_creds_provider *p, icm__aws_credentials *out, bool *waited);

/*
 * Renew credentials that came from the properties through `refresher` (borrowed; it outlives
 * the provider): a REST catalog's vended credentials. The properties' credentials are used
 * until they are due (5 minutes before `s3.session-token-expires-at-ms`, or when S3 says they
 * expired); then the refresher's properties give the next ones, by the same rules, on the
 * same schedule, one refresh at a time. A refresh that fails while the credentials in use are
 * still valid is tried again later (at least 30 s later) and the request goes on with them;
 * once they have expired, get fails with ICM_EAUTH "the vended S3 credentials for <what>
 * expired at <time> and could not be renewed: <why>" (the refresher's http_status and
 * remote_code kept). Call before the first get. Returns false (and changes nothing) when the
 * provider's credentials do not come from the properties: they are then not the catalog's.
 */
typedef struct icm__fileio_refresher icm__fileio_refresher;
bool icm__aws_creds_provider_set_refresher(icm__aws_creds_provider *p,
                                           const icm__fileio_refresher *refresher);

/* The server said the credentials expired (ExpiredToken): fetch new ones on the next get. */
void icm__aws_creds_invalidate(icm__aws_creds_provider *p);

#endif /* ICM_IO_S3_CONFIG_H */
