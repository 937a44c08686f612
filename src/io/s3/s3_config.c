/*
 * io/s3/s3_config.c: resolving where the S3 back end sends its requests (s3_config.h).
 *
 * Each setting is looked up in the FileIO's properties, then the AWS environment variables,
 * then the shared config file's profile, then a default, the first source that has it
 * winning, as the AWS SDKs and PyIceberg do. Property names are PyIceberg's
 * (pyiceberg/io/__init__.py), with Java S3FileIO's where PyIceberg has none
 * (`s3.path-style-access`, `s3.delete.batch-size`). An empty value counts as absent: a
 * templated catalog entry with an empty field means "not set", not "set to nothing".
 *
 * Every value that is present is checked; a bad one is ICM_EINVALID naming where it came from
 * (the property, the variable, or file:line) and what is wrong, never silently replaced by a
 * default: a typo in an endpoint must not send the table's requests somewhere else.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "icemaint/fileio.h"
#include "io/s3/aws_ini.h"
#include "io/s3/s3_config_internal.h"
#include "util/typo.h"
#include "util/util.h"

#define DEFAULT_REGION "us-east-1"
#define DEFAULT_CONNECT_TIMEOUT_MS ((int64_t)10 * 1000)
#define DEFAULT_REQUEST_TIMEOUT_MS ((int64_t)60 * 1000)
#define DEFAULT_MAX_ATTEMPTS 10u
#define MAX_MAX_ATTEMPTS 100
#define DEFAULT_RETRY_TOTAL_MS ((int64_t)120 * 1000)
#define MAX_RETRY_TOTAL_MS ((int64_t)24 * 3600 * 1000)
#define DEFAULT_MAX_IN_FLIGHT 32u
#define MAX_MAX_IN_FLIGHT 1024
/* The checks' small requests (HEADs, 16-byte reads) at once, from one thread (s3_probe_many):
 * each costs a connection and a few kB, not a thread. */
#define DEFAULT_CHECK_MAX_IN_FLIGHT 64u
#define DEFAULT_DELETE_BATCH_SIZE 1000u
#define MAX_DELETE_BATCH_SIZE 1000 /* DeleteObjects takes at most 1,000 keys */
#define MAX_TIMEOUT_SECONDS 86400.0

const char *icm__s3_prop(const icm_property *props, size_t n, const char *key)
{
    const char *found = NULL;
    for (size_t i = 0; props != NULL && i < n; i++)
        if (props[i].key != NULL && strcmp(props[i].key, key) == 0)
            found = props[i].value; /* the last one wins, as in a merge */
    return found != NULL && *found != '\0' ? found : NULL;
}

const char *icm__s3_env(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? v : NULL;
}

int icm__s3_parse_bool(const char *value, const char *origin, bool *out)
{
    if (strcasecmp(value, "true") == 0)
        *out = true;
    else if (strcasecmp(value, "false") == 0)
        *out = false;
    else
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s: \"%.64s\" is not true or false", origin, value);
    return 0;
}

static bool host_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

int icm__s3_parse_endpoint(const char *value, const char *origin, char **out)
{
    *out = NULL;
    const char *why = NULL;
    const char *rest = NULL;
    const char *scheme = NULL;
    if (strncasecmp(value, "https://", 8) == 0) {
        scheme = "https";
        rest = value + 8;
    } else if (strncasecmp(value, "http://", 7) == 0) {
        scheme = "http";
        rest = value + 7;
    }
    size_t len = rest != NULL ? strlen(rest) : 0;
    if (len > 0 && rest[len - 1] == '/')
        len--;
    if (scheme == NULL) {
        why = "the scheme must be http:// or https://";
    } else if (memchr(rest, '@', len) != NULL) {
        /* Userinfo may hold a password: never echo the value. */
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s: an endpoint is http(s)://host[:port], without user "
                              "information", origin);
    } else if (len == 0) {
        why = "no host";
    } else {
        const char *p = rest, *e = rest + len;
        if (*p == '[') {
            const char *close = memchr(p, ']', len);
            if (close == NULL || close == p + 1) {
                why = "an IPv6 host needs [address]";
            } else {
                for (const char *q = p + 1; q < close && why == NULL; q++)
                    if (!isxdigit((unsigned char)*q) && *q != ':' && *q != '.')
                        why = "a character that is not in an IPv6 address";
                p = close + 1;
            }
        } else {
            const char *h = p;
            while (p < e && host_char(*p))
                p++;
            if (p == h)
                why = "no host";
        }
        if (why == NULL && p < e && *p == ':') {
            p++;
            long port = 0;
            const char *d = p;
            while (p < e && isdigit((unsigned char)*p) && port <= 65535)
                port = port * 10 + (*p++ - '0');
            if (p == d || port < 1 || port > 65535 || (p < e && isdigit((unsigned char)*p)))
                why = "the port must be a number from 1 to 65535";
        }
        if (why == NULL && p < e)
            why = *p == '/' || *p == '?' || *p == '#'
                      ? "an endpoint has no path, query or fragment"
                      : "a character that is not allowed in a host name";
    }
    if (why != NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s: \"%.200s\" is not http(s)://host[:port]: %s", origin, value,
                              why);
    *out = icm__sprintf("%s://%.*s", scheme, (int)len, rest);
    return *out != NULL ? 0 : icm__error_oom();
}

/* ---- where a value came from ----
 * A lookup fills an empty pick and does nothing to a filled one, so a run of lookups written
 * in precedence order leaves the first source that has the value. Each returns whether the
 * pick is filled. */

typedef struct pick {
    const char *value; /* borrowed; NULL: not found */
    char origin[512];  /* "s3.region", "AWS_REGION", "/home/u/.aws/config:3 (region)" */
} pick;

static bool pick_prop(pick *pk, const icm_property *props, size_t n, const char *key)
{
    if (pk->value != NULL)
        return true;
    pk->value = icm__s3_prop(props, n, key);
    if (pk->value != NULL)
        snprintf(pk->origin, sizeof pk->origin, "%s", key);
    return pk->value != NULL;
}

static bool pick_env(pick *pk, const char *name)
{
    if (pk->value != NULL)
        return true;
    pk->value = icm__s3_env(name);
    if (pk->value != NULL)
        snprintf(pk->origin, sizeof pk->origin, "%s", name);
    return pk->value != NULL;
}

static bool pick_ini(pick *pk, const icm__aws_ini *ini, const icm__aws_ini_section *sec,
                     const char *parent, const char *key)
{
    if (pk->value != NULL)
        return true;
    const icm__aws_ini_entry *e = icm__aws_ini_get(sec, parent, key);
    if (e == NULL || e->value[0] == '\0')
        return false;
    pk->value = e->value;
    if (parent != NULL)
        snprintf(pk->origin, sizeof pk->origin, "%s:%u (%s.%s)", ini->path, e->line, parent,
                 key);
    else
        snprintf(pk->origin, sizeof pk->origin, "%s:%u (%s)", ini->path, e->line, key);
    return true;
}

static int parse_int(const pick *pk, long long min, long long max, long long *out)
{
    const char *v = pk->value;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    bool digits = isdigit((unsigned char)v[0]) || (v[0] == '-' && isdigit((unsigned char)v[1]));
    if (!digits || *end != '\0' || errno == ERANGE || x < min || x > max)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s: \"%.64s\" is not a whole number from %lld to %lld",
                              pk->origin, v, min, max);
    *out = x;
    return 0;
}

/* Seconds as PyIceberg takes them (a float), into whole milliseconds (at least 1). */
static int parse_seconds(const pick *pk, int64_t *out_ms)
{
    const char *v = pk->value;
    char *end = NULL;
    errno = 0;
    double s = strtod(v, &end);
    bool number = isdigit((unsigned char)v[0]) || v[0] == '.';
    if (!number || *end != '\0' || errno == ERANGE || !isfinite(s) || s <= 0 ||
        s > MAX_TIMEOUT_SECONDS)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s: \"%.64s\" is not a number of seconds above 0 and at most "
                              "%.0f",
                              pk->origin, v, MAX_TIMEOUT_SECONDS);
    int64_t ms = (int64_t)llround(s * 1000.0);
    *out_ms = ms < 1 ? 1 : ms;
    return 0;
}

static int parse_region(const pick *pk)
{
    size_t n = strlen(pk->value);
    bool ok = n <= 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)pk->value[i]) || pk->value[i] == '-' ||
             pk->value[i] == '_' || pk->value[i] == '.';
    if (!ok)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "%s: \"%.64s\" is not a region name (letters, digits, '-', '_' "
                              "and '.', at most 64)",
                              pk->origin, pk->value);
    return 0;
}

void icm__s3_config_clear(icm__s3_config *cfg)
{
    if (cfg == NULL)
        return;
    icm__free(cfg->endpoint);
    icm__free(cfg->region);
    icm__free(cfg->profile);
    icm__free(cfg->ca_bundle);
    memset(cfg, 0, sizeof *cfg);
}

/* The profile's services block for S3: `services = X` names a [services X] section. */
static int services_section(const icm__aws_ini *ini, const icm__aws_ini_section *psec,
                            const icm__aws_ini_section **out)
{
    *out = NULL;
    const icm__aws_ini_entry *e = icm__aws_ini_get(psec, NULL, "services");
    if (e == NULL || e->value[0] == '\0')
        return 0;
    char *name = icm__sprintf("services %s", e->value);
    if (name == NULL)
        return icm__error_oom();
    *out = icm__aws_ini_find(ini, name);
    icm__free(name);
    if (*out == NULL)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, ini->path,
                              "%s:%u: services = %.64s names no [services %.64s] section",
                              ini->path, e->line, e->value, e->value);
    return 0;
}

static int resolve(icm__s3_config *out, const icm_property *props, size_t n,
                   const icm__aws_ini *ini)
{
    pick pk;

    /* Profile. */
    memset(&pk, 0, sizeof pk);
    pick_prop(&pk, props, n, "s3.profile-name");
    pick_prop(&pk, props, n, "client.profile-name");
    pick_env(&pk, "AWS_PROFILE");
    out->profile = icm__strdup(pk.value != NULL ? pk.value : "default");
    if (out->profile == NULL)
        return icm__error_oom();
    const icm__aws_ini_section *psec = icm__aws_ini_config_profile(ini, out->profile);
    const icm__aws_ini_section *svc = NULL;
    int rc = services_section(ini, psec, &svc);
    if (rc != 0)
        return rc;

    /* Region. */
    memset(&pk, 0, sizeof pk);
    pick_prop(&pk, props, n, "s3.region");
    pick_prop(&pk, props, n, "client.region");
    pick_env(&pk, "AWS_REGION");
    pick_env(&pk, "AWS_DEFAULT_REGION");
    pick_ini(&pk, ini, psec, NULL, "region");
    if (pk.value != NULL && (rc = parse_region(&pk)) != 0)
        return rc;
    out->region = icm__strdup(pk.value != NULL ? pk.value : DEFAULT_REGION);
    if (out->region == NULL)
        return icm__error_oom();

    /* Endpoint: the property always applies; the AWS-configured ones unless told to ignore
     * them (AWS_IGNORE_CONFIGURED_ENDPOINT_URLS, or the profile's
     * ignore_configured_endpoint_urls). */
    bool ignore = false;
    memset(&pk, 0, sizeof pk);
    pick_env(&pk, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    pick_ini(&pk, ini, psec, NULL, "ignore_configured_endpoint_urls");
    if (pk.value != NULL && (rc = icm__s3_parse_bool(pk.value, pk.origin, &ignore)) != 0)
        return rc;
    memset(&pk, 0, sizeof pk);
    if (!pick_prop(&pk, props, n, "s3.endpoint") && !ignore) {
        pick_env(&pk, "AWS_ENDPOINT_URL_S3");
        pick_env(&pk, "AWS_ENDPOINT_URL");
        pick_ini(&pk, ini, svc, "s3", "endpoint_url");
        pick_ini(&pk, ini, psec, NULL, "endpoint_url");
    }
    if (pk.value != NULL) {
        if ((rc = icm__s3_parse_endpoint(pk.value, pk.origin, &out->endpoint)) != 0)
            return rc;
        out->endpoint_is_custom = true;
    } else {
        /* The China partition has its own domain. */
        const char *domain =
            strncmp(out->region, "cn-", 3) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
        out->endpoint = icm__sprintf("https://s3.%s.%s", out->region, domain);
        if (out->endpoint == NULL)
            return icm__error_oom();
    }

    /* Addressing. Java's s3.path-style-access says it outright either way; PyIceberg's
     * s3.force-virtual-addressing overrides its rule "path style for a custom endpoint";
     * the profile's addressing_style (services s3 block, then the profile's own s3 block)
     * comes next. */
    bool path_style = false, force_virtual = false;
    pick ps, fv, st;
    memset(&ps, 0, sizeof ps);
    memset(&fv, 0, sizeof fv);
    memset(&st, 0, sizeof st);
    if (pick_prop(&ps, props, n, "s3.path-style-access") &&
        (rc = icm__s3_parse_bool(ps.value, ps.origin, &path_style)) != 0)
        return rc;
    if (pick_prop(&fv, props, n, "s3.force-virtual-addressing") &&
        (rc = icm__s3_parse_bool(fv.value, fv.origin, &force_virtual)) != 0)
        return rc;
    pick_ini(&st, ini, svc, "s3", "addressing_style");
    pick_ini(&st, ini, psec, "s3", "addressing_style");
    if (path_style && force_virtual)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                              "s3.path-style-access and s3.force-virtual-addressing are both "
                              "true: choose one addressing style");
    icm__s3_addressing style = out->endpoint_is_custom ? ICM__S3_ADDRESSING_PATH
                                                       : ICM__S3_ADDRESSING_VIRTUAL;
    if (st.value != NULL) {
        if (strcasecmp(st.value, "path") == 0)
            style = ICM__S3_ADDRESSING_PATH;
        else if (strcasecmp(st.value, "virtual") == 0)
            style = ICM__S3_ADDRESSING_VIRTUAL;
        else if (strcasecmp(st.value, "auto") != 0)
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, NULL,
                                  "%s: \"%.64s\" is not path, virtual or auto", st.origin,
                                  st.value);
    }
    if (ps.value != NULL)
        style = path_style ? ICM__S3_ADDRESSING_PATH : ICM__S3_ADDRESSING_VIRTUAL;
    else if (force_virtual)
        style = ICM__S3_ADDRESSING_VIRTUAL;
    out->addressing = style;

    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.anonymous") &&
        (rc = icm__s3_parse_bool(pk.value, pk.origin, &out->anonymous)) != 0)
        return rc;

    out->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.connect-timeout") &&
        (rc = parse_seconds(&pk, &out->connect_timeout_ms)) != 0)
        return rc;
    out->request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.request-timeout") &&
        (rc = parse_seconds(&pk, &out->request_timeout_ms)) != 0)
        return rc;

    long long x;
    out->max_attempts = DEFAULT_MAX_ATTEMPTS;
    memset(&pk, 0, sizeof pk);
    pick_prop(&pk, props, n, "s3.retry.max-attempts");
    pick_env(&pk, "AWS_MAX_ATTEMPTS");
    pick_ini(&pk, ini, psec, NULL, "max_attempts");
    if (pk.value != NULL) {
        if ((rc = parse_int(&pk, 1, MAX_MAX_ATTEMPTS, &x)) != 0)
            return rc;
        out->max_attempts = (unsigned)x;
    }
    out->retry_total_ms = DEFAULT_RETRY_TOTAL_MS;
    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.retry.total-timeout-ms")) {
        if ((rc = parse_int(&pk, 1, MAX_RETRY_TOTAL_MS, &x)) != 0)
            return rc;
        out->retry_total_ms = x;
    }
    out->max_in_flight = DEFAULT_MAX_IN_FLIGHT;
    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.max-in-flight")) {
        if ((rc = parse_int(&pk, 1, MAX_MAX_IN_FLIGHT, &x)) != 0)
            return rc;
        out->max_in_flight = (unsigned)x;
    }
    out->check_max_in_flight = DEFAULT_CHECK_MAX_IN_FLIGHT;
    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.check.max-in-flight")) {
        if ((rc = parse_int(&pk, 1, MAX_MAX_IN_FLIGHT, &x)) != 0)
            return rc;
        out->check_max_in_flight = (unsigned)x;
    }
    out->delete_batch_size = DEFAULT_DELETE_BATCH_SIZE;
    memset(&pk, 0, sizeof pk);
    if (pick_prop(&pk, props, n, "s3.delete.batch-size")) {
        if ((rc = parse_int(&pk, 1, MAX_DELETE_BATCH_SIZE, &x)) != 0)
            return rc;
        out->delete_batch_size = (unsigned)x;
    }

    memset(&pk, 0, sizeof pk);
    pick_prop(&pk, props, n, "s3.ssl.ca-bundle");
    pick_env(&pk, "AWS_CA_BUNDLE");
    pick_ini(&pk, ini, psec, NULL, "ca_bundle");
    if (pk.value != NULL) {
        if (access(pk.value, R_OK) != 0)
            return icm__error_set_errno(ICM_ERRCLASS_S3, ICM_EINVALID, errno, pk.value,
                                        "%s: the CA bundle %.256s cannot be read", pk.origin,
                                        pk.value);
        out->ca_bundle = icm__strdup(pk.value);
        if (out->ca_bundle == NULL)
            return icm__error_oom();
    }
    return 0;
}

int icm__s3_config_resolve(icm__s3_config *out, const icm_property *props, size_t n_props)
{
    memset(out, 0, sizeof *out);
    char *path = NULL;
    bool explicit_path = false;
    icm__aws_ini ini;
    memset(&ini, 0, sizeof ini);
    int rc = icm__aws_config_path(&path, &explicit_path);
    if (rc == 0 && path != NULL)
        rc = icm__aws_ini_load(&ini, path, explicit_path, "AWS_CONFIG_FILE");
    if (rc == 0)
        rc = resolve(out, props, n_props, &ini);
    icm__aws_ini_clear(&ini);
    icm__free(path);
    if (rc != 0)
        icm__s3_config_clear(out);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* property names                                                                              */

/*
 * Every `s3.` property a catalog entry or a table's config may carry without being a mistake:
 * the names this back end reads, and the names Java's S3FileIOProperties (Iceberg 1.10) and
 * PyIceberg's pyiceberg/io/__init__.py and io/pyarrow.py (0.10-0.12) define, which a catalog
 * entry shared with those clients may hold. Sorted (bsearch).
 */
static const char *const known_s3_properties[] = {
    "s3.acceleration-enabled",
    "s3.access-grants.enabled",
    "s3.access-grants.fallback-to-iam",
    "s3.access-key-id",
    "s3.acl",
    "s3.analytics-accelerator.enabled",
    "s3.anonymous",
    "s3.check.max-in-flight",
    "s3.checksum-enabled",
    "s3.chunked-encoding-enabled",
    "s3.client-factory-impl",
    "s3.connect-timeout",
    "s3.cross-region-access-enabled",
    "s3.crt.enabled",
    "s3.crt.max-concurrency",
    "s3.delete-enabled",
    "s3.delete.batch-size",
    "s3.delete.num-threads",
    "s3.directory-bucket.list-prefix-as-directory",
    "s3.dualstack-enabled",
    "s3.endpoint",
    "s3.force-virtual-addressing",
    "s3.max-in-flight",
    "s3.multipart.num-threads",
    "s3.multipart.part-size-bytes",
    "s3.multipart.threshold",
    "s3.path-style-access",
    "s3.preload-client-enabled",
    "s3.profile-name",
    "s3.proxy-uri",
    "s3.read.num-threads",
    "s3.region",
    "s3.remote-signing-enabled",
    "s3.request-timeout",
    "s3.resolve-region",
    "s3.retry-strategy-impl",
    "s3.retry.max-attempts",
    "s3.retry.max-wait-ms",
    "s3.retry.min-wait-ms",
    "s3.retry.num-retries",
    "s3.retry.total-timeout-ms",
    "s3.role-arn",
    "s3.role-session-name",
    "s3.secret-access-key",
    "s3.server-side-encryption",
    "s3.session-token",
    "s3.session-token-expires-at-ms",
    "s3.signer",
    "s3.signer.endpoint",
    "s3.signer.uri",
    "s3.sse-kms-key-id",
    "s3.sse.key",
    "s3.sse.md5",
    "s3.sse.type",
    "s3.ssl.ca-bundle",
    "s3.staging-dir",
    "s3.use-arn-region-enabled",
    "s3.write.namespace-tag-enabled",
    "s3.write.storage-class",
    "s3.write.table-tag-enabled",
};

/* Families Java reads every name below of (`s3.write.tags.team=x`, `s3.access-points.bucket`). */
static const char *const known_s3_prefixes[] = {
    "s3.access-points.",
    "s3.analytics-accelerator.",
    "s3.delete.tags.",
    "s3.write.tags.",
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

bool icm_fileio_s3_property_unknown(const char **closest, const char *key)
{
    if (closest != NULL)
        *closest = NULL;
    if (key == NULL || strncmp(key, "s3.", 3) != 0)
        return false;
    if (bsearch(key, known_s3_properties, ICM__ARRAY_LEN(known_s3_properties),
                sizeof known_s3_properties[0], cmp_name) != NULL)
        return false;
    for (size_t i = 0; i < ICM__ARRAY_LEN(known_s3_prefixes); i++)
        if (strncmp(key, known_s3_prefixes[i], strlen(known_s3_prefixes[i])) == 0 &&
            key[strlen(known_s3_prefixes[i])] != '\0')
            return false;
    if (closest == NULL)
        return true;
    /* The names are compared without their common "s3." (its length says nothing). */
    const char *stems[ICM__ARRAY_LEN(known_s3_properties)];
    for (size_t i = 0; i < ICM__ARRAY_LEN(known_s3_properties); i++)
        stems[i] = known_s3_properties[i] + 3;
    const char *stem = icm__typo_nearest(key + 3, stems, ICM__ARRAY_LEN(stems), 3);
    *closest = stem != NULL ? stem - 3 : NULL;
    return true;
}
