/*
 * io/s3/s3_config_internal.h: what s3_config.c and the credential providers (s3_creds*.c) share,
 * and the test hooks of the credential chain (internal to the S3 back end and its tests).
 */
#ifndef ICM_IO_S3_CONFIG_INTERNAL_H
#define ICM_IO_S3_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/s3/s3_config.h"

/* Credentials are refreshed this long before they expire (the SDKs' advisory window). */
#define ICM__AWS_CREDS_REFRESH_BEFORE_MS ((int64_t)5 * 60 * 1000)
/* After a refresh (or a failed one while the old credentials are still valid), the next one
 * waits at least this long unless the credentials expire first: a provider that hands out
 * credentials already inside the window is not asked on every request. */
#define ICM__AWS_CREDS_MIN_REFRESH_INTERVAL_MS ((int64_t)30 * 1000)

/* Property `key`'s value (the last one, as in a merge); NULL when absent or empty. */
const char *icm__s3_prop(const icm_property *props, size_t n, const char *key);
/* Environment variable `name`; NULL when unset or empty. */
const char *icm__s3_env(const char *name);

/* `value` as a boolean: "true" or "false", any case. ICM_EINVALID naming `origin` otherwise. */
int icm__s3_parse_bool(const char *value, const char *origin, bool *out);

/* Validate an endpoint URL "http(s)://host[:port]" (one trailing slash allowed) and return it
 * normalised (scheme lower-case, no trailing slash) in *out (icm__free). ICM_EINVALID naming
 * `origin` and what is wrong; ICM_ENOMEM. */
int icm__s3_parse_endpoint(const char *value, const char *origin, char **out);

/* An ISO-8601 UTC time ("2026-12-02T03:04:05Z", optional fraction, "+00:00" accepted) as ms
 * since the epoch. Returns false when it is not one. */
bool icm__aws_parse_time(const char *s, int64_t *ms_out);

/* Credentials parsed from an endpoint's answer (the parsers are fuzzed on their own):
 * - the container and instance metadata JSON {"AccessKeyId", "SecretAccessKey", "Token",
 *   "Expiration"} (instance metadata also "Code": "Success");
 * - STS AssumeRoleWithWebIdentity's XML <Credentials> (an <ErrorResponse> is returned as
 *   ICM_EAUTH carrying its <Code> in remote_code).
 * `what` names the source in messages. `source` is stored in out->source. Returns 0;
 * ICM_EINVALID (malformed answer; the message never quotes a secret); ICM_EAUTH; ICM_ENOMEM.
 * On failure *out holds nothing to free. */
int icm__aws_creds_from_json(icm__aws_credentials *out, const char *body, size_t len,
                             const char *what, const char *source);
int icm__aws_creds_from_sts_xml(icm__aws_credentials *out, const char *body, size_t len,
                                const char *what, const char *source);

/* ---- test hooks ---- */

/* The clock the provider compares expiry times with (default icm__now_ms). Set before use. */
void icm__aws_creds_provider_set_clock(icm__aws_creds_provider *p,
                                       int64_t (*now_ms)(void *payload), void *payload);

/* A provider whose only source is `fetch` (called without the provider's lock held, by one
 * thread at a time), for tests of the refresh and locking rules. `source` is static. */
typedef int (*icm__aws_creds_fetch_fn)(void *payload, icm__aws_credentials *out);
int icm__aws_creds_provider_new_custom(icm__aws_creds_provider **out, icm__aws_creds_fetch_fn fetch,
                                       void *payload);

/* How many threads are waiting in get() for another thread's fetch. */
unsigned icm__aws_creds_provider_waiting(icm__aws_creds_provider *p);

/* Which source the chain chose when it was built ("properties", "environment",
 * "profile <name>", "web identity", "container", "instance metadata", or "none"): static. */
const char *icm__aws_creds_provider_source(const icm__aws_creds_provider *p);

#endif /* ICM_IO_S3_CONFIG_INTERNAL_H */
