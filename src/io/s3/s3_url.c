/*
 * io/s3/s3_url.c: S3 locations and the URLs of requests (see s3_internal.h).
 *
 * A key is bytes: it is encoded segment by segment with SigV4's strict encoder, `/` kept, and
 * nothing else is interpreted (`a/../b`, `./`, `//` and `%2F` stay what they are; the HTTP
 * client sends the path as is). The query is sorted and encoded once, here, and the same text
 * goes into the URL and into the signature, whatever curl would do with a query it signs.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "icemaint/errors.h"
#include "io/s3/s3_internal.h"
#include "io/sigv4.h"

int icm__s3_location_parse(const char *location, icm__s3_location *out)
{
    memset(out, 0, sizeof *out);
    size_t scheme_len;
    if (strncasecmp(location, "s3://", 5) == 0)
        scheme_len = 2;
    else if (strncasecmp(location, "s3a://", 6) == 0 || strncasecmp(location, "s3n://", 6) == 0)
        scheme_len = 3;
    else
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EUNSUPPORTED, location,
                              "not an S3 location (s3://bucket/key)");
    const char *bucket = location + scheme_len + 3;
    size_t bl = strcspn(bucket, "/");
    if (bl == 0 || bl > 255)
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, location,
                              "S3 location without a bucket name (s3://bucket/key)");
    for (size_t i = 0; i < bl; i++) {
        char c = bucket[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, location,
                                  "S3 bucket name \"%.*s\" has a character S3 does not allow",
                                  (int)bl, bucket);
    }
    out->bucket = bucket;
    out->bucket_len = bl;
    if (bucket[bl] == '/') {
        out->key = bucket + bl + 1;
        out->key_len = strlen(out->key);
        out->base_len = (size_t)(out->key - location);
    } else {
        out->key = bucket + bl;
        out->key_len = 0;
        out->base_len = (size_t)(out->key - location); /* no slash: callers add it */
    }
    return 0;
}

static int cmp_param(const void *a, const void *b)
{
    const icm__s3_param *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : strcmp(x->value, y->value);
}

/* Split `scheme://host[:port]` (no path) into scheme length and authority. */
static bool endpoint_split(const char *endpoint, const char **authority, size_t *scheme_len)
{
    if (strncasecmp(endpoint, "https://", 8) == 0)
        *scheme_len = 5;
    else if (strncasecmp(endpoint, "http://", 7) == 0)
        *scheme_len = 4;
    else
        return false;
    *authority = endpoint + *scheme_len + 3;
    size_t al = strlen(*authority);
    while (al > 0 && (*authority)[al - 1] == '/')
        al--;
    return al > 0 && memchr(*authority, '/', al) == NULL && memchr(*authority, '?', al) == NULL &&
           memchr(*authority, '@', al) == NULL;
}

int icm__s3_url_build(icm__s3_url *out, const char *endpoint, icm__s3_addressing addressing,
                      const char *bucket, size_t bucket_len, const char *key, size_t key_len,
                      const icm__s3_param *params, size_t n_params)
{
    memset(out, 0, sizeof *out);
    const char *authority;
    size_t scheme_len;
    if (!endpoint_split(endpoint, &authority, &scheme_len))
        return icm__error_set(ICM_ERRCLASS_S3, ICM_EINVALID, endpoint,
                              "S3 endpoint is not http(s)://host[:port]");
    size_t auth_len = strlen(authority);
    while (auth_len > 0 && authority[auth_len - 1] == '/')
        auth_len--;
    /* curl leaves the scheme's default port out of the Host header it sends; the signed Host
     * must be the same text. */
    const char *default_port = scheme_len == 5 ? ":443" : ":80";
    size_t dpl = strlen(default_port);
    bool port_is_default =
        auth_len > dpl && memcmp(authority + auth_len - dpl, default_port, dpl) == 0;
    size_t host_len = port_is_default ? auth_len - dpl : auth_len;
    bool virtual_host = addressing == ICM__S3_ADDRESSING_VIRTUAL &&
                        memchr(bucket, '.', bucket_len) == NULL &&
                        memchr(bucket, '_', bucket_len) == NULL;
    for (size_t i = 0; virtual_host && i < bucket_len; i++)
        if (bucket[i] >= 'A' && bucket[i] <= 'Z')
            virtual_host = false; /* not a DNS label: only path style can name it */

    icm__buf host = ICM__BUF_INIT, path = ICM__BUF_INIT, query = ICM__BUF_INIT,
             url = ICM__BUF_INIT;
    if (virtual_host) {
        icm__buf_put(&host, bucket, bucket_len);
        icm__buf_putc(&host, '.');
    }
    icm__buf_put(&host, authority, host_len);
    icm__buf_putc(&path, '/');
    if (!virtual_host) {
        icm__buf_put(&path, bucket, bucket_len);
        if (key_len > 0)
            icm__buf_putc(&path, '/');
    }
    int rc = icm__sigv4_encode(&path, key, key_len, true);
    icm__s3_param *sorted = NULL;
    if (rc == 0 && n_params > 0) {
        sorted = icm__calloc(n_params, sizeof *sorted);
        if (sorted == NULL) {
            rc = ICM_ENOMEM;
        } else {
            memcpy(sorted, params, n_params * sizeof *sorted);
            qsort(sorted, n_params, sizeof *sorted, cmp_param);
        }
    }
    for (size_t i = 0; rc == 0 && i < n_params; i++) {
        if (i > 0)
            icm__buf_putc(&query, '&');
        rc = icm__sigv4_encode(&query, sorted[i].name, strlen(sorted[i].name), false);
        if (rc == 0)
            icm__buf_putc(&query, '=');
        if (rc == 0)
            rc = icm__sigv4_encode(&query, sorted[i].value, strlen(sorted[i].value), false);
    }
    icm__free(sorted);
    if (rc == 0) {
        icm__buf_put(&url, endpoint, scheme_len + 3);
        icm__buf_put(&url, host.data, host.len);
        icm__buf_put(&url, path.data, path.len);
        if (query.len > 0) {
            icm__buf_putc(&url, '?');
            icm__buf_put(&url, query.data, query.len);
        }
        if (query.data == NULL)
            icm__buf_put(&query, "", 0);
    }
    if (rc != 0 || host.oom || path.oom || query.oom || url.oom) {
        icm__buf_dispose(&host);
        icm__buf_dispose(&path);
        icm__buf_dispose(&query);
        icm__buf_dispose(&url);
        return icm__error_oom();
    }
    out->host = icm__buf_detach(&host, NULL);
    out->canonical_uri = icm__buf_detach(&path, NULL);
    out->canonical_query = icm__buf_detach(&query, NULL);
    out->url = icm__buf_detach(&url, NULL);
    return 0;
}

void icm__s3_url_clear(icm__s3_url *u)
{
    icm__free(u->url);
    icm__free(u->host);
    icm__free(u->canonical_uri);
    icm__free(u->canonical_query);
    memset(u, 0, sizeof *u);
}
