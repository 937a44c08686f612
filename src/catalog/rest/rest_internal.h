/*
 * catalog/rest/rest_internal.h: the Iceberg REST catalog back end (internal): the parsers of
 * what a REST server answers (rest_parse.c; pure functions of the bytes, so the fuzz target
 * reaches them), and the shapes they fill.
 *
 * Every parser takes the response body as received (not necessarily NUL-terminated), checks
 * it against the OpenAPI shapes (open-api/rest-catalog-open-api.yaml) and either fills its
 * output completely or returns an error with nothing to free. `url` names the request in
 * messages; it never carries a query string (which may hold credentials).
 */
#ifndef ICM_CATALOG_REST_INTERNAL_H
#define ICM_CATALOG_REST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/catalog.h"
#include "icemaint/sys/catalog.h"

/* A growable list of owned properties (keys and values are icm__ strings). Putting an
 * existing key replaces its value (later sources win, as in every merge here). */
typedef struct icm__rest_props {
    icm_property *items;
    size_t len, cap;
} icm__rest_props;

int icm__rest_props_put(icm__rest_props *p, const char *key, const char *value);
const char *icm__rest_props_get(const icm__rest_props *p, const char *key);
void icm__rest_props_dispose(icm__rest_props *p);

/* GET /v1/config: CatalogConfig. `endpoints_given` false when the server sent none (then
 * the spec's default set applies). */
typedef struct icm__rest_config {
    icm__rest_props defaults, overrides;
    char **endpoints; /* "GET /v1/{prefix}/namespaces", ... */
    size_t n_endpoints;
    bool endpoints_given;
} icm__rest_config;

int icm__rest_parse_config(const char *body, size_t len, const char *url,
                           icm__rest_config *out);
void icm__rest_config_dispose(icm__rest_config *c);

/* One entry of `storage-credentials`. */
typedef struct icm__rest_storage_credential {
    char *prefix;
    icm__rest_props config;
} icm__rest_storage_credential;

/* LoadTableResult (load, create, register). `metadata` is parsed by the metadata parser
 * with `metadata_location` as its file; NULL location only for a staged create. */
typedef struct icm__rest_load {
    char *metadata_location;
    icm_table_metadata *metadata;
    icm__rest_props config;
    icm__rest_storage_credential *creds;
    size_t n_creds;
} icm__rest_load;

int icm__rest_parse_load(const char *body, size_t len, const char *url, icm__rest_load *out);
void icm__rest_load_dispose(icm__rest_load *l);

/*
 * The table's FileIO configuration from a LoadTableResult, the spec's precedence: the
 * `storage-credentials` entry with the longest prefix that `table_location` starts with wins
 * over `config`, which wins over what the caller already has (the catalog's properties).
 * Appended to *out (config first, then the chosen credential, so a later key wins).
 */
int icm__rest_table_config(const icm__rest_load *l, const char *table_location,
                           icm__rest_props *out);

/* LoadCredentialsResponse (GET .../tables/{table}/credentials): its required
 * `storage-credentials` list (possibly empty). */
typedef struct icm__rest_credentials {
    icm__rest_storage_credential *creds;
    size_t n_creds;
} icm__rest_credentials;

int icm__rest_parse_credentials(const char *body, size_t len, const char *url,
                                icm__rest_credentials *out);
void icm__rest_credentials_dispose(icm__rest_credentials *c);

/* The entry whose prefix is the longest that `location` starts with (the spec's rule for
 * `storage-credentials`, for loads and the credentials endpoint alike); NULL when none
 * matches or `location` is NULL. Borrowed from `creds`. */
const icm__rest_storage_credential *
icm__rest_pick_credential(const icm__rest_storage_credential *creds, size_t n,
                          const char *location);

/* An error answer: IcebergErrorResponse `{"error":{"message","type","code"}}`, the OAuth
 * shape `{"error":"invalid_client","error_description":"..."}`, or (a proxy's page, an empty
 * body) the start of the raw text. Never fails for want of shape; only ICM_ENOMEM. Strings
 * are "" when absent. */
typedef struct icm__rest_error {
    char *message;
    char *type;
    int code; /* the body's `code`, 0 when none */
} icm__rest_error;

int icm__rest_parse_error(const char *body, size_t len, icm__rest_error *out);
void icm__rest_error_dispose(icm__rest_error *e);

/* OAuthTokenResponse: access_token (printable ASCII: it goes into a header), expires_in
 * seconds (*out_expires_in_s -1 when absent). The message never contains the token. */
int icm__rest_parse_token(const char *body, size_t len, const char *url, char **out_token,
                          int64_t *out_expires_in_s);

/* ListNamespacesResponse (`tables` false: each namespace's last level to cb) or
 * ListTablesResponse (`tables` true: each identifier's name), and `next-page-token` (new
 * string, NULL when none or empty). cb's non-zero value stops and is returned. */
int icm__rest_parse_list(const char *body, size_t len, const char *url, bool tables,
                         icm_name_cb cb, void *payload, char **out_next);

/* CommitTableResponse: its metadata-location (new string). ICM_EINVALID when the body is not
 * that shape (the caller decides what an unreadable success means). */
int icm__rest_parse_commit(const char *body, size_t len, const char *url, char **out_location);

/* ---- the catalog (rest_catalog.c) ---- */

/* Whether `cat` is a REST catalog (icm_catalog_open_rest). */
bool icm__catalog_is_rest(const icm_catalog *cat);

/*
 * The storage configuration of table `id` again, for the files under `location` (the table
 * location), when the vended credentials its FileIO was built with are due: the credentials
 * endpoint (GET .../tables/{table}/credentials, its `storage-credentials` entry with the
 * longest prefix `location` starts with) when the server's /v1/config lists that endpoint
 * (it is not in the spec's default set), else a load of the table (with the delegation
 * header), whose configuration is then the same as a load's (icm__rest_table_config).
 * *out / *n_out: new properties (icm__fileio_props_free). Thread-safe: runs on the thread of
 * whichever storage request needs the credentials, concurrently with other calls on the
 * catalog. Returns 0; ICM_EAUTH (no credential entry matches `location`), the request's codes
 * (icm__rest_fail: the URL, the status and the server's error); ICM_EINVALID (an answer not
 * of the spec's shape); ICM_ENET, ICM_ETIMEOUT; ICM_ENOMEM.
 */
int icm__rest_load_storage_config(icm_catalog *cat, const icm_table_ident *id,
                                  const char *location, icm_property **out, size_t *n_out);

#endif /* ICM_CATALOG_REST_INTERNAL_H */
