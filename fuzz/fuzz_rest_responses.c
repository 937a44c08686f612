/*
 * fuzz/fuzz_rest_responses.c: the parsers of what an Iceberg REST server answers
 * (catalog/rest/rest_parse.c) on arbitrary bytes. The first byte picks the parser: 'C'
 * CatalogConfig, 'L' LoadTableResult (then the table configuration for its location), 'E' an
 * error body (Iceberg's or OAuth's shape, or anything else), 'T' an OAuth token answer, 'N' /
 * 'I' a namespace / table listing page, 'M' a CommitTableResponse, 'K' a
 * LoadCredentialsResponse (then the entry for a table location picked from it: one whose
 * prefix the location starts with, no shorter than any other such).
 *
 * A parser either succeeds with a complete result or fails with ICM_EINVALID,
 * ICM_EUNSUPPORTED or ICM_ENOMEM leaving nothing to free; the error parser never fails but
 * for memory. A token is printable ASCII without spaces (it goes into a header). Listing
 * names are never empty. Seeds: the checked-in corpus.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/rest/rest_internal.h"
#include "icemaint/common.h"
#include "icemaint/errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_failure(int rc)
{
    if (rc != ICM_EINVALID && rc != ICM_EUNSUPPORTED && rc != ICM_ENOMEM)
        abort();
}

static int count_name(const char *name, void *payload)
{
    if (name == NULL || name[0] == '\0')
        abort();
    (*(size_t *)payload)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    const char *url = "http://fuzz/v1/x";
    switch (data[0]) {
    case 'C': {
        icm__rest_config c;
        int rc = icm__rest_parse_config(body, len, url, &c);
        if (rc != 0) {
            check_failure(rc);
            if (c.endpoints != NULL || c.defaults.items != NULL || c.overrides.items != NULL)
                abort();
            return 0;
        }
        for (size_t i = 0; i < c.n_endpoints; i++)
            if (c.endpoints[i] == NULL)
                abort();
        icm__rest_config_dispose(&c);
        return 0;
    }
    case 'L': {
        icm__rest_load l;
        int rc = icm__rest_parse_load(body, len, url, &l);
        if (rc != 0) {
            check_failure(rc);
            if (l.metadata != NULL || l.metadata_location != NULL || l.creds != NULL)
                abort();
            return 0;
        }
        if (l.metadata == NULL)
            abort();
        icm__rest_props cfg = {0};
        rc = icm__rest_table_config(&l, icm_table_metadata_location(l.metadata), &cfg);
        if (rc != 0 && rc != ICM_ENOMEM)
            abort();
        for (size_t i = 0; i < cfg.len; i++)
            if (cfg.items[i].key == NULL || cfg.items[i].value == NULL)
                abort();
        icm__rest_props_dispose(&cfg);
        icm__rest_load_dispose(&l);
        return 0;
    }
    case 'E': {
        icm__rest_error e;
        int rc = icm__rest_parse_error(body, len, &e);
        if (rc != 0) {
            if (rc != ICM_ENOMEM)
                abort();
            return 0;
        }
        if (e.message == NULL || e.type == NULL || e.code < 0 || e.code >= 1000)
            abort();
        icm__rest_error_dispose(&e);
        return 0;
    }
    case 'T': {
        char *token = NULL;
        int64_t expires = 0;
        int rc = icm__rest_parse_token(body, len, url, &token, &expires);
        if (rc != 0) {
            check_failure(rc);
            if (token != NULL)
                abort();
            return 0;
        }
        if (token == NULL || token[0] == '\0' || expires < -1)
            abort();
        for (const char *p = token; *p; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                abort();
        icm_free(token);
        return 0;
    }
    case 'N':
    case 'I': {
        size_t n = 0;
        char *next = NULL;
        int rc = icm__rest_parse_list(body, len, url, data[0] == 'I', count_name, &n, &next);
        if (rc != 0) {
            check_failure(rc);
            if (next != NULL || (n != 0 && rc != ICM_ENOMEM))
                abort(); /* a page is checked whole before its first name */
            return 0;
        }
        if (next != NULL && next[0] == '\0')
            abort();
        icm_free(next);
        return 0;
    }
    case 'M': {
        char *loc = NULL;
        int rc = icm__rest_parse_commit(body, len, url, &loc);
        if (rc != 0) {
            check_failure(rc);
            if (loc != NULL)
                abort();
            return 0;
        }
        if (loc == NULL || loc[0] == '\0')
            abort();
        icm_free(loc);
        return 0;
    }
    case 'K': {
        icm__rest_credentials c;
        int rc = icm__rest_parse_credentials(body, len, url, &c);
        if (rc != 0) {
            check_failure(rc);
            if (c.creds != NULL || c.n_creds != 0)
                abort();
            return 0;
        }
        const char *location = "s3://bucket/wh/db/t";
        const icm__rest_storage_credential *best =
            icm__rest_pick_credential(c.creds, c.n_creds, location);
        for (size_t i = 0; i < c.n_creds; i++) {
            const icm__rest_storage_credential *e = &c.creds[i];
            if (e->prefix == NULL)
                abort();
            for (size_t k = 0; k < e->config.len; k++)
                if (e->config.items[k].key == NULL || e->config.items[k].value == NULL)
                    abort();
            bool matches = strncmp(location, e->prefix, strlen(e->prefix)) == 0;
            if (matches && (best == NULL || strlen(e->prefix) > strlen(best->prefix)))
                abort();
        }
        if (best != NULL && strncmp(location, best->prefix, strlen(best->prefix)) != 0)
            abort();
        icm__rest_credentials_dispose(&c);
        return 0;
    }
    default:
        return 0;
    }
}
