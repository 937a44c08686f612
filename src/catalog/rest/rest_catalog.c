/*
 * catalog/rest/rest_catalog.c: the Iceberg REST catalog back end (OpenAPI
 * open-api/rest-catalog-open-api.yaml), configured as PyIceberg configures one.
 *
 * Opening: `GET {uri}/v1/config[?warehouse=]` first; the catalog's properties are then the
 * server's `defaults`, overlaid by the client's own, overlaid by the server's `overrides`
 * (which may move `uri` and set `prefix`). Paths are `{uri}/v1/{prefix}/...`, the prefix
 * inserted verbatim and left out (no empty segment) when there is none. A namespace in a path
 * or a `parent` query is its levels, each percent-encoded strictly, joined with the advertised
 * `namespace-separator` (default %1F); a table name is encoded the same way, so `.`, `/`,
 * space and 0x1F inside a name stay inside it. The `endpoints` the server lists are honoured:
 * register and commit are refused, naming the endpoint, when a server that lists endpoints
 * does not list them (a server that lists none gets the spec's default set).
 *
 * Loads send `X-Iceberg-Access-Delegation: vended-credentials` (PyIceberg's default; a
 * `header.X-Iceberg-Access-Delegation` property replaces it) and never `snapshots=refs`: a
 * maintenance tool that saw only the snapshots of refs would plan deletes against a partial
 * history. The load's `config` and `storage-credentials` become the table's FileIO
 * configuration (icm_catalog_table_info.config; table/table.c builds its FileIO from it).
 * Vended credentials that expire are renewed by that FileIO while it works
 * (icm__rest_load_storage_config): through the credentials endpoint when the server lists
 * it, else by loading the table again. Requests may come from several threads at once (the
 * storage requests that need new credentials run on many): the client's only mutable state,
 * the token, is guarded in rest_client.c.
 *
 * Commits (commit_changes) send the requirements and updates as they are, with the
 * identifier, in one POST, and report exactly what the answer proves (§7.6 of the
 * reference, and Java's ErrorHandlers.CommitErrorHandler):
 *  - 200 with a readable CommitTableResponse: committed (its metadata-location);
 *  - 409: ICM_ECOMMIT_FAILED (a requirement failed: not applied), unless the POST was sent
 *    more than once, when the 409 may answer our own earlier, applied attempt: UNKNOWN;
 *  - 400 (ICM_EINVALID), 401/403/419 (ICM_EAUTH), 404 (ICM_ENOTFOUND): refused, not applied,
 *    the cleanable failures of Java's CleanableFailure (BadRequest, NotAuthorized, Forbidden,
 *    NoSuchTable): the caller may delete the files it wrote for the commit;
 *  - everything else (500, 502, 503, 504, any other status, a timeout or a connection lost
 *    after the request went out, a 200 whose body cannot be read): ICM_ECOMMIT_UNKNOWN; the
 *    caller deletes nothing.
 * A transport failure before any byte was sent is not applied (ICM_ENET). The POST is re-sent
 * only after 429, or 503 with Retry-After (the server did not act on it), and once after a
 * 401/419 with a renewed token (rest_client.c). The base `commit` slot is NULL: a REST
 * catalog writes its metadata files itself, and icemaint never writes one for it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/catalog_internal.h"
#include "catalog/rest/rest_client.h"
#include "io/sigv4.h"
#include "spec/metadata_internal.h"
#include "util/util.h"

static icm__rest *as_rest(icm_catalog *cat)
{
    return (icm__rest *)cat;
}

/* ---- URLs ---- */

/* `{uri}/v1/` plus `{prefix}/` when there is one. */
static void put_base(icm__buf *b, const icm__rest *r)
{
    icm__buf_puts(b, r->uri);
    icm__buf_puts(b, "/v1/");
    if (r->prefix != NULL) {
        icm__buf_puts(b, r->prefix);
        icm__buf_putc(b, '/');
    }
}

static void put_encoded(icm__buf *b, const char *s)
{
    icm__sigv4_encode(b, s, strlen(s), false);
}

static void put_namespace(icm__buf *b, const icm__rest *r, const char *const *levels, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            icm__buf_puts(b, r->ns_sep);
        put_encoded(b, levels[i]);
    }
}

/* `.../namespaces/{ns}/tables/{name}` (new string; NULL on ENOMEM). */
static char *table_url(const icm__rest *r, const icm_table_ident *id, const char *tail)
{
    icm__buf b = ICM__BUF_INIT;
    put_base(&b, r);
    icm__buf_puts(&b, "namespaces/");
    put_namespace(&b, r, id->levels, id->n_levels);
    icm__buf_puts(&b, "/tables/");
    put_encoded(&b, id->name);
    if (tail != NULL)
        icm__buf_puts(&b, tail);
    if (b.oom) {
        icm__buf_dispose(&b);
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

/* `.../namespaces[/{ns}]<tail>` (new string). */
static char *namespace_url(const icm__rest *r, const char *const *levels, size_t n,
                           const char *tail)
{
    icm__buf b = ICM__BUF_INIT;
    put_base(&b, r);
    icm__buf_puts(&b, "namespaces");
    if (n > 0) {
        icm__buf_putc(&b, '/');
        put_namespace(&b, r, levels, n);
    }
    if (tail != NULL)
        icm__buf_puts(&b, tail);
    if (b.oom) {
        icm__buf_dispose(&b);
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

/* ---- endpoints ---- */

/* Whether the server's `endpoints` list names `method path`. */
static bool endpoint_listed(const icm__rest *r, const char *method, const char *path)
{
    size_t ml = strlen(method);
    for (size_t i = 0; i < r->server.n_endpoints; i++) {
        const char *e = r->server.endpoints[i];
        while (*e == ' ')
            e++;
        if (strncasecmp(e, method, ml) != 0 || e[ml] != ' ')
            continue;
        e += ml;
        while (*e == ' ')
            e++;
        size_t el = strlen(e);
        while (el > 0 && e[el - 1] == ' ')
            el--;
        if (el == strlen(path) && strncmp(e, path, el) == 0)
            return true;
    }
    return false;
}

/* For the endpoints of the spec's default set, which a server that lists none offers: every
 * endpoint used here except the credentials endpoint (endpoint_listed alone). */
static bool has_endpoint(const icm__rest *r, const char *method, const char *path)
{
    return !r->server.endpoints_given || endpoint_listed(r, method, path);
}

static int require_endpoint(const icm__rest *r, const char *method, const char *path,
                            const char *what)
{
    if (has_endpoint(r, method, path))
        return 0;
    return icm__error_set(ICM_ERRCLASS_REST, ICM_EUNSUPPORTED, r->shown_uri,
                          "REST catalog '%s' cannot %s: the server does not offer %s %s "
                          "(GET /v1/config lists the endpoints it supports)",
                          r->base.name, what, method, path);
}

/* ---- JSON bodies ---- */

static json_t *identifier_json(const icm_table_ident *id)
{
    json_t *ns = json_array();
    json_t *obj = json_object();
    if (ns == NULL || obj == NULL) {
        json_decref(ns);
        json_decref(obj);
        return NULL;
    }
    for (size_t i = 0; i < id->n_levels; i++)
        if (json_array_append_new(ns, json_string(id->levels[i])) != 0) {
            json_decref(ns);
            json_decref(obj);
            return NULL;
        }
    if (json_object_set_new(obj, "namespace", ns) != 0 ||
        json_object_set_new(obj, "name", json_string(id->name)) != 0) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* Names go into JSON bodies, which hold UTF-8 only (checked first, so that a body that
 * cannot be built afterwards means out of memory). */
static int check_utf8(const char *s, const char *what)
{
    if (s != NULL && !icm__utf8_valid(s, strlen(s)))
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, NULL,
                              "the %s is not UTF-8: a REST catalog cannot be sent it", what);
    return 0;
}

static int check_ident_utf8(const icm_table_ident *id)
{
    int rc = check_utf8(id->name, "table name");
    for (size_t i = 0; rc == 0 && i < id->n_levels; i++)
        rc = check_utf8(id->levels[i], "namespace");
    return rc;
}

/* Serialise and release `doc` (NULL: out of memory while building it). */
static int dump_json(json_t *doc, char **out, size_t *out_len)
{
    *out = NULL;
    char *text = doc != NULL ? icm__json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (text == NULL)
        return icm__error_oom();
    *out = text;
    *out_len = strlen(text);
    return 0;
}

/* ---- loading ---- */

/* The catalog properties a table's FileIO must see beyond the client's own (which its base
 * FileIO already has): what the server's defaults and overrides added or changed, as
 * PyIceberg hands its merged properties to the FileIO. */
static int server_fileio_props(const icm__rest *r, icm__rest_props *out)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->props.len; i++) {
        const icm_property *p = &r->props.items[i];
        const char *mine = icm__rest_props_get(&r->client, p->key);
        if (mine == NULL || strcmp(mine, p->value) != 0)
            rc = icm__rest_props_put(out, p->key, p->value);
    }
    return rc;
}

static int get_load(icm__rest *r, const icm_table_ident *id, icm__rest_load *out)
{
    memset(out, 0, sizeof *out);
    char *url = table_url(r, id, NULL);
    char *shown = url != NULL ? icm__rest_shown_url(url) : NULL;
    if (shown == NULL) {
        icm__free(url);
        return icm__error_oom();
    }
    icm__rest_call call = {"GET", url, NULL, 0, NULL, false, true};
    icm__http_response resp;
    int rc = icm__rest_send(r, &call, &resp, NULL);
    if (rc == 0 && resp.status == 200)
        rc = icm__rest_parse_load(resp.body, resp.body_len, shown, out);
    else if (rc == 0)
        rc = icm__rest_fail(r, "load table", url, &resp, 0);
    icm__http_response_clear(&resp);
    icm__free(shown);
    icm__free(url);
    return rc;
}

/* Move a load's result into what the generic layer takes. */
static int take_info(icm__rest *r, icm__rest_load *l, const char *url_for_msg,
                     icm_catalog_table_info *out)
{
    if (l->metadata_location == NULL)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, url_for_msg,
                              "the catalog gave no metadata-location (a staged table?)");
    icm__rest_props cfg = {0};
    int rc = server_fileio_props(r, &cfg);
    if (rc == 0)
        rc = icm__rest_table_config(l, icm_table_metadata_location(l->metadata), &cfg);
    if (rc != 0) {
        icm__rest_props_dispose(&cfg);
        return rc;
    }
    out->metadata_location = l->metadata_location;
    out->metadata = l->metadata;
    out->config = cfg.items;
    out->n_config = cfg.len;
    l->metadata_location = NULL;
    l->metadata = NULL;
    return 0;
}

static int rest_load_table_info(icm_catalog *cat, const icm_table_ident *id,
                                icm_catalog_table_info *out)
{
    memset(out, 0, sizeof *out);
    icm__rest *r = as_rest(cat);
    icm__rest_load l;
    int rc = get_load(r, id, &l);
    if (rc == 0)
        rc = take_info(r, &l, r->shown_uri, out);
    icm__rest_load_dispose(&l);
    return rc;
}

/* ---- renewing vended credentials ---- */

#define CREDENTIALS_ENDPOINT "/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"

/* GET .../credentials: the entry for `location` (LoadCredentialsResponse). */
static int load_credentials(icm__rest *r, const icm_table_ident *id, const char *location,
                            icm__rest_props *out)
{
    char *url = table_url(r, id, "/credentials");
    char *shown = url != NULL ? icm__rest_shown_url(url) : NULL;
    if (shown == NULL) {
        icm__free(url);
        return icm__error_oom();
    }
    icm__rest_call call = {"GET", url, NULL, 0, NULL, false, false};
    icm__http_response resp;
    icm__rest_credentials creds;
    memset(&creds, 0, sizeof creds);
    int rc = icm__rest_send(r, &call, &resp, NULL);
    if (rc == 0 && resp.status == 200)
        rc = icm__rest_parse_credentials(resp.body, resp.body_len, shown, &creds);
    else if (rc == 0)
        rc = icm__rest_fail(r, "load credentials", url, &resp, 0);
    icm__http_response_clear(&resp);
    const icm__rest_storage_credential *best =
        rc == 0 ? icm__rest_pick_credential(creds.creds, creds.n_creds, location) : NULL;
    if (rc == 0 && best == NULL)
        rc = icm__error_set(ICM_ERRCLASS_REST, ICM_EAUTH, shown,
                            "load credentials: none of the %zu storage credentials the "
                            "catalog returned has a prefix of the table location %s",
                            creds.n_creds, location);
    for (size_t i = 0; rc == 0 && i < best->config.len; i++)
        rc = icm__rest_props_put(out, best->config.items[i].key, best->config.items[i].value);
    icm__rest_credentials_dispose(&creds);
    icm__free(shown);
    icm__free(url);
    return rc;
}

int icm__rest_load_storage_config(icm_catalog *cat, const icm_table_ident *id,
                                  const char *location, icm_property **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    icm__rest *r = as_rest(cat);
    icm__rest_props cfg = {0};
    int rc;
    if (endpoint_listed(r, "GET", CREDENTIALS_ENDPOINT)) {
        rc = load_credentials(r, id, location, &cfg);
    } else {
        /* The spec's default set has no credentials endpoint: a load vends them too. */
        icm__rest_load l;
        rc = get_load(r, id, &l);
        if (rc == 0)
            rc = server_fileio_props(r, &cfg);
        if (rc == 0)
            rc = icm__rest_table_config(&l, location, &cfg);
        icm__rest_load_dispose(&l);
    }
    if (rc != 0) {
        icm__rest_props_dispose(&cfg);
        return rc;
    }
    *out = cfg.items;
    *n_out = cfg.len;
    return 0;
}

static int rest_load_table(icm_catalog *cat, const icm_table_ident *id, char **out_location)
{
    *out_location = NULL;
    icm_catalog_table_info info;
    int rc = rest_load_table_info(cat, id, &info);
    if (rc == 0) {
        *out_location = info.metadata_location;
        info.metadata_location = NULL;
        icm_catalog_table_info_dispose(&info);
    }
    return rc;
}

/* ---- commit ---- */

static int commit_body(const icm_table_ident *id, const icm_table_changes *changes, char **out,
                       size_t *out_len)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = check_ident_utf8(id);
    if (rc == 0)
        rc = icm_table_changes_to_json(&text, &len, changes);
    if (rc != 0)
        return rc;
    json_t *doc = NULL;
    rc = icm__json_parse(text, len, NULL, &doc);
    icm_free(text);
    if (rc != 0)
        return rc;
    /* identifier first, then requirements and updates in the order they were added */
    json_t *body = json_object();
    json_t *ident = identifier_json(id);
    if (body == NULL)
        json_decref(ident);
    /* (json_object_set_new takes the value, also when it fails) */
    if (body == NULL || ident == NULL || json_object_set_new(body, "identifier", ident) != 0 ||
        json_object_update(body, doc) != 0) {
        json_decref(body);
        json_decref(doc);
        return icm__error_oom();
    }
    json_decref(doc);
    return dump_json(body, out, out_len);
}

static int commit_unknown(const char *shown, const char *why)
{
    return icm__error_set(ICM_ERRCLASS_REST, ICM_ECOMMIT_UNKNOWN, shown,
                          "commit outcome unknown: %s; nothing of this commit may be deleted "
                          "until a reload shows whether it landed",
                          why);
}

static int rest_commit_changes(icm_catalog *cat, const icm_table_ident *id,
                               const char *base_location, const icm_table_changes *changes,
                               char **out_location)
{
    (void)base_location; /* the requirements carry what the change was decided on */
    *out_location = NULL;
    icm__rest *r = as_rest(cat);
    int rc = require_endpoint(r, "POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
                              "commit changes");
    if (rc != 0)
        return rc;
    char *body = NULL, *url = NULL, *shown = NULL;
    size_t body_len = 0;
    rc = commit_body(id, changes, &body, &body_len);
    if (rc != 0)
        return rc;
    url = table_url(r, id, NULL);
    shown = url != NULL ? icm__rest_shown_url(url) : NULL;
    if (shown == NULL) {
        rc = icm__error_oom();
        goto done;
    }
    icm__rest_call call = {"POST", url, body, body_len, NULL, true, false};
    icm__http_response resp;
    unsigned retries = 0;
    rc = icm__rest_send(r, &call, &resp, &retries);
    if (rc != 0) {
        /* Any failure once a copy of the request may have reached the catalog (this attempt
         * sent, or an earlier one answered 429/503 and was sent again) leaves the outcome
         * open, out of memory while taking in the answer too: the caller would clean up after
         * a "not applied" code. Only a request that provably never left stands as it is. */
        if (resp.request_sent || retries > 0) {
            char *why = icm__strdup(icm_error_last()->message);
            rc = commit_unknown(shown, why != NULL ? why : "the request failed after it was "
                                                          "sent");
            icm__free(why);
        }
    } else if (rc == 0) {
        int st = resp.status;
        if (st == 200) {
            rc = icm__rest_parse_commit(resp.body, resp.body_len, shown, out_location);
            if (rc == ICM_ENOMEM)
                rc = commit_unknown(shown, "out of memory reading the answer");
            else if (rc != 0)
                rc = commit_unknown(shown, "the server answered 200 with a body that is not "
                                           "a CommitTableResponse");
        } else if (st == 409 && retries == 0) {
            rc = icm__rest_fail(r, "commit failed (a requirement did not hold; not applied)",
                                url, &resp, ICM_ECOMMIT_FAILED);
        } else if (st == 409) {
            rc = icm__rest_fail(r, "commit outcome unknown: 409 after the request was sent "
                                   "again (it may answer our own earlier attempt)",
                                url, &resp, ICM_ECOMMIT_UNKNOWN);
        } else if (retries > 0) {
            /* an earlier copy answered 503 (may have been partly processed) or 429 */
            rc = icm__rest_fail(r, "commit outcome unknown: the request was sent again",
                                url, &resp, ICM_ECOMMIT_UNKNOWN);
        } else if (st == 400 || st == 401 || st == 403 || st == 404 || st == 419) {
            rc = icm__rest_fail(r, "commit refused (not applied)", url, &resp, 0);
        } else {
            rc = icm__rest_fail(r, "commit outcome unknown", url, &resp, ICM_ECOMMIT_UNKNOWN);
        }
    }
    icm__http_response_clear(&resp);
done:
    icm__free(shown);
    icm__free(url);
    icm_free(body);
    return rc;
}

/* ---- namespaces and tables ---- */

/* Split a dotted namespace into levels (a level holding a dot cannot be named this way: the
 * version 1 slots are dotted). *levels points into *buf. */
static int split_dotted(const char *ns, char **buf, char ***levels, size_t *n)
{
    *buf = icm__strdup(ns);
    size_t count = 1;
    for (const char *p = ns; *p; p++)
        count += *p == '.';
    *levels = icm__calloc(count, sizeof **levels);
    if (*buf == NULL || *levels == NULL) {
        icm__free(*buf);
        icm__free(*levels);
        return icm__error_oom();
    }
    size_t k = 0;
    char *s = *buf;
    (*levels)[k++] = s;
    for (char *p = s; *p; p++)
        if (*p == '.') {
            *p = '\0';
            (*levels)[k++] = p + 1;
        }
    *n = k;
    return 0;
}

static int rest_create_namespace(icm_catalog *cat, const char *ns)
{
    icm__rest *r = as_rest(cat);
    char *buf = NULL, **levels = NULL;
    size_t n = 0;
    int rc = check_utf8(ns, "namespace");
    if (rc == 0)
        rc = split_dotted(ns, &buf, &levels, &n);
    if (rc != 0)
        return rc;
    json_t *body = json_object(), *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, json_string(levels[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    if (body == NULL)
        json_decref(arr);
    else if (arr == NULL || json_object_set_new(body, "namespace", arr) != 0 ||
             json_object_set_new(body, "properties", json_object()) != 0) {
        json_decref(body);
        body = NULL;
    }
    char *text = NULL, *url = NULL;
    size_t len = 0;
    rc = dump_json(body, &text, &len);
    if (rc == 0 && (url = namespace_url(r, NULL, 0, NULL)) == NULL)
        rc = icm__error_oom();
    if (rc == 0) {
        icm__rest_call call = {"POST", url, text, len, NULL, false, false};
        icm__http_response resp;
        rc = icm__rest_send(r, &call, &resp, NULL);
        if (rc == 0 && resp.status != 200)
            rc = icm__rest_fail(r, "create namespace", url, &resp, 0);
        icm__http_response_clear(&resp);
    }
    icm__free(url);
    icm_free(text);
    icm__free(levels);
    icm__free(buf);
    return rc;
}

/* GET a listing page into cb. */
static int list_page(icm__rest *r, char *base_url, bool tables, const char *parent_q,
                     const char *page_token, icm_name_cb cb, void *payload, char **next)
{
    *next = NULL;
    icm__buf b = ICM__BUF_INIT;
    icm__buf_puts(&b, base_url);
    char sep = '?';
    /* query keys in sorted order: the URL is also SigV4's canonical query */
    if (page_token != NULL) {
        icm__buf_printf(&b, "%cpageToken=", sep);
        put_encoded(&b, page_token);
        sep = '&';
    }
    if (parent_q != NULL) {
        icm__buf_printf(&b, "%cparent=%s", sep, parent_q);
        sep = '&';
    }
    if (b.oom) {
        icm__buf_dispose(&b);
        return icm__error_oom();
    }
    char *url = icm__buf_detach(&b, NULL);
    char *shown = icm__rest_shown_url(url);
    int rc = shown != NULL ? 0 : icm__error_oom();
    if (rc == 0) {
        icm__rest_call call = {"GET", url, NULL, 0, NULL, false, false};
        icm__http_response resp;
        rc = icm__rest_send(r, &call, &resp, NULL);
        if (rc == 0 && resp.status == 200)
            rc = icm__rest_parse_list(resp.body, resp.body_len, shown, tables, cb, payload,
                                      next);
        else if (rc == 0)
            rc = icm__rest_fail(r, tables ? "list tables" : "list namespaces", url, &resp, 0);
        icm__http_response_clear(&resp);
    }
    icm__free(shown);
    icm__free(url);
    return rc;
}

static int rest_list_namespaces_page(icm_catalog *cat, const char *const *parent,
                                     size_t n_parent, const char *page_token, icm_name_cb cb,
                                     void *payload, char **next_page_token)
{
    icm__rest *r = as_rest(cat);
    *next_page_token = NULL;
    char *url = namespace_url(r, NULL, 0, NULL);
    icm__buf q = ICM__BUF_INIT;
    put_namespace(&q, r, parent, n_parent);
    if (url == NULL || q.oom) {
        icm__free(url);
        icm__buf_dispose(&q);
        return icm__error_oom();
    }
    int rc = list_page(r, url, false, n_parent > 0 ? q.data : NULL, page_token, cb, payload,
                       next_page_token);
    icm__buf_dispose(&q);
    icm__free(url);
    return rc;
}

static int rest_list_tables_page(icm_catalog *cat, const char *const *ns, size_t n_ns,
                                 const char *page_token, icm_name_cb cb, void *payload,
                                 char **next_page_token)
{
    icm__rest *r = as_rest(cat);
    *next_page_token = NULL;
    char *url = namespace_url(r, ns, n_ns, "/tables");
    if (url == NULL)
        return icm__error_oom();
    int rc = list_page(r, url, true, NULL, page_token, cb, payload, next_page_token);
    icm__free(url);
    return rc;
}

/* Collect names into a vector (copies). */
static int collect(const char *name, void *payload)
{
    icm__ptrvec *v = payload;
    char *copy = icm__strdup(name);
    if (copy == NULL || icm__ptrvec_push(v, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

typedef int (*page_fn)(icm_catalog *, const char *const *, size_t, const char *, icm_name_cb,
                       void *, char **);

/* Every page of one listing into `names`. */
static int all_pages(icm_catalog *cat, page_fn fn, const char *const *levels, size_t n,
                     icm__ptrvec *names)
{
    char *token = NULL;
    int rc = 0;
    for (unsigned pages = 0; rc == 0; pages++) {
        char *next = NULL;
        rc = fn(cat, levels, n, token, collect, names, &next);
        icm__free(token);
        token = next;
        if (rc != 0 || token == NULL)
            break;
        if (pages > 100000)
            rc = icm__error_set(ICM_ERRCLASS_REST, ICM_EIO, as_rest(cat)->shown_uri,
                                "listing did not end after 100,000 pages");
    }
    icm__free(token);
    return rc;
}

#define MAX_NAMESPACE_DEPTH 64

/* Every namespace below `levels` (n of them), depth first, dotted in full to cb. */
static int walk_namespaces(icm_catalog *cat, const char **levels, size_t n, icm_name_cb cb,
                           void *payload)
{
    if (n >= MAX_NAMESPACE_DEPTH)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, as_rest(cat)->shown_uri,
                              "namespaces nested deeper than %d levels", MAX_NAMESPACE_DEPTH);
    icm__ptrvec children = ICM__PTRVEC_INIT;
    int rc = all_pages(cat, rest_list_namespaces_page, levels, n, &children);
    for (size_t i = 0; rc == 0 && i < children.len; i++) {
        levels[n] = children.items[i];
        icm__buf dotted = ICM__BUF_INIT;
        for (size_t k = 0; k <= n; k++) {
            if (k > 0)
                icm__buf_putc(&dotted, '.');
            icm__buf_puts(&dotted, levels[k]);
        }
        rc = dotted.oom ? icm__error_oom() : cb(dotted.data, payload);
        icm__buf_dispose(&dotted);
        if (rc == 0)
            rc = walk_namespaces(cat, levels, n + 1, cb, payload);
    }
    icm__ptrvec_dispose(&children, icm__free);
    return rc;
}

static int rest_list_all_namespaces(icm_catalog *cat, icm_name_cb cb, void *payload)
{
    const char *levels[MAX_NAMESPACE_DEPTH];
    return walk_namespaces(cat, levels, 0, cb, payload);
}

static int rest_list_tables(icm_catalog *cat, const char *ns, icm_name_cb cb, void *payload)
{
    char *buf = NULL, **levels = NULL;
    size_t n = 0;
    int rc = split_dotted(ns, &buf, &levels, &n);
    if (rc != 0)
        return rc;
    icm__ptrvec names = ICM__PTRVEC_INIT;
    rc = all_pages(cat, rest_list_tables_page, (const char *const *)levels, n, &names);
    for (size_t i = 0; rc == 0 && i < names.len; i++)
        rc = cb(names.items[i], payload);
    icm__ptrvec_dispose(&names, icm__free);
    icm__free(levels);
    icm__free(buf);
    return rc;
}

/* ---- create, register, drop ---- */

static json_t *by_id(json_t *arr, const char *id_key, json_t *want)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        if (json_equal(json_object_get(e, id_key), want))
            return e;
    }
    return NULL;
}

static int rest_create_table(icm_catalog *cat, const icm_table_ident *id,
                             const icm_table_metadata *md, char **out_location)
{
    *out_location = NULL;
    icm__rest *r = as_rest(cat);
    int rc = check_ident_utf8(id);
    if (rc != 0)
        return rc;
    json_t *doc = icm__table_metadata_json(md);
    json_t *schema = by_id(json_object_get(doc, "schemas"), "schema-id",
                           json_object_get(doc, "current-schema-id"));
    json_t *spec = by_id(json_object_get(doc, "partition-specs"), "spec-id",
                         json_object_get(doc, "default-spec-id"));
    json_t *order = by_id(json_object_get(doc, "sort-orders"), "order-id",
                          json_object_get(doc, "default-sort-order-id"));
    json_t *props = json_object_get(doc, "properties");
    json_t *body = json_object();
    if (body == NULL || schema == NULL ||
        json_object_set_new(body, "name", json_string(id->name)) != 0 ||
        json_object_set(body, "location", json_object_get(doc, "location")) != 0 ||
        json_object_set(body, "schema", schema) != 0 ||
        (spec != NULL && json_object_set(body, "partition-spec", spec) != 0) ||
        (order != NULL && json_object_set(body, "write-order", order) != 0) ||
        json_object_set_new(body, "stage-create", json_false()) != 0 ||
        (props != NULL && json_object_set(body, "properties", props) != 0)) {
        json_decref(body);
        body = NULL;
    }
    char *text = NULL, *url = NULL;
    size_t len = 0;
    rc = dump_json(body, &text, &len);
    if (rc == 0 && (url = namespace_url(r, id->levels, id->n_levels, "/tables")) == NULL)
        rc = icm__error_oom();
    if (rc == 0) {
        icm__rest_call call = {"POST", url, text, len, NULL, false, false};
        icm__http_response resp;
        rc = icm__rest_send(r, &call, &resp, NULL);
        if (rc == 0 && resp.status == 200) {
            icm__rest_load l;
            memset(&l, 0, sizeof l);
            char *shown = icm__rest_shown_url(url);
            rc = shown != NULL ? icm__rest_parse_load(resp.body, resp.body_len, shown, &l)
                               : icm__error_oom();
            if (rc == 0 && l.metadata_location == NULL)
                rc = icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, shown,
                                    "the created table has no metadata-location");
            if (rc == 0) {
                *out_location = l.metadata_location;
                l.metadata_location = NULL;
            }
            icm__rest_load_dispose(&l);
            icm__free(shown);
        } else if (rc == 0) {
            rc = icm__rest_fail(r, "create table", url, &resp, 0);
        }
        icm__http_response_clear(&resp);
    }
    icm__free(url);
    icm_free(text);
    return rc;
}

static int rest_register_table(icm_catalog *cat, const icm_table_ident *id, const char *location)
{
    icm__rest *r = as_rest(cat);
    int rc = require_endpoint(r, "POST", "/v1/{prefix}/namespaces/{namespace}/register",
                              "register tables");
    if (rc == 0)
        rc = check_ident_utf8(id);
    if (rc == 0)
        rc = check_utf8(location, "metadata location");
    if (rc != 0)
        return rc;
    json_t *body = json_object();
    if (body != NULL && (json_object_set_new(body, "name", json_string(id->name)) != 0 ||
                         json_object_set_new(body, "metadata-location", json_string(location)) !=
                             0)) {
        json_decref(body);
        body = NULL;
    }
    char *text = NULL, *url = NULL;
    size_t len = 0;
    rc = dump_json(body, &text, &len);
    if (rc == 0 && (url = namespace_url(r, id->levels, id->n_levels, "/register")) == NULL)
        rc = icm__error_oom();
    if (rc == 0) {
        icm__rest_call call = {"POST", url, text, len, NULL, false, false};
        icm__http_response resp;
        rc = icm__rest_send(r, &call, &resp, NULL);
        if (rc == 0 && resp.status != 200)
            rc = icm__rest_fail(r, "register table", url, &resp, 0);
        icm__http_response_clear(&resp);
    }
    icm__free(url);
    icm_free(text);
    return rc;
}

static int rest_drop_table(icm_catalog *cat, const icm_table_ident *id)
{
    icm__rest *r = as_rest(cat);
    char *url = table_url(r, id, "?purgeRequested=false");
    if (url == NULL)
        return icm__error_oom();
    icm__rest_call call = {"DELETE", url, NULL, 0, NULL, false, false};
    icm__http_response resp;
    int rc = icm__rest_send(r, &call, &resp, NULL);
    if (rc == 0 && resp.status != 204 && resp.status != 200)
        rc = icm__rest_fail(r, "drop table", url, &resp, 0);
    icm__http_response_clear(&resp);
    icm__free(url);
    return rc;
}

static int rest_default_table_location(icm_catalog *cat, const icm_table_ident *id, char **out)
{
    icm__rest *r = as_rest(cat);
    const char *wh = icm__rest_props_get(&r->props, "warehouse");
    if (wh == NULL || strstr(wh, "://") == NULL)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, id->name,
                              "REST catalog '%s' has no warehouse location to put a new table "
                              "in; give the table a location",
                              cat->name);
    icm__buf b = ICM__BUF_INIT;
    icm__buf_puts(&b, wh);
    while (b.len > 0 && b.data[b.len - 1] == '/')
        b.data[--b.len] = '\0';
    for (size_t i = 0; i < id->n_levels; i++)
        icm__buf_printf(&b, "/%s", id->levels[i]);
    icm__buf_printf(&b, "/%s", id->name);
    if (b.oom) {
        icm__buf_dispose(&b);
        return icm__error_oom();
    }
    *out = icm__buf_detach(&b, NULL);
    return 0;
}

/* ---- open and free ---- */

static void free_headers(icm__rest *r)
{
    for (size_t i = 0; i < r->n_headers; i++) {
        icm__free((char *)(uintptr_t)r->headers[i].name);
        icm__free((char *)(uintptr_t)r->headers[i].value);
    }
    icm__free(r->headers);
    r->headers = NULL;
    r->n_headers = 0;
}

static void rest_free(icm_catalog *cat)
{
    icm__rest *r = as_rest(cat);
    icm__rest_auth_dispose(r);
    icm__http_free(r->http);
    free_headers(r);
    icm__free(r->uri);
    icm__free(r->shown_uri);
    icm__free(r->prefix);
    icm__free(r->ns_sep);
    icm__rest_props_dispose(&r->client);
    icm__rest_props_dispose(&r->props);
    icm__rest_config_dispose(&r->server);
    pthread_mutex_destroy(&r->token_lock);
    icm__free(r);
}

static const icm_catalog_methods rest_methods;

bool icm__catalog_is_rest(const icm_catalog *cat)
{
    return cat != NULL && cat->methods == &rest_methods;
}

static const icm_catalog_methods rest_methods = {
    ICM_CATALOG_METHODS_VERSION,
    "rest",
    rest_load_table,
    NULL, /* commit: the server writes metadata files; changes go through commit_changes */
    rest_create_table,
    rest_register_table,
    rest_drop_table,
    rest_create_namespace,
    rest_list_all_namespaces,
    rest_list_tables,
    rest_default_table_location,
    rest_free,
    rest_load_table_info,
    rest_commit_changes,
    rest_list_namespaces_page,
    rest_list_tables_page,
};

static int set_uri(icm__rest *r, const char *uri)
{
    if (uri == NULL || (strncasecmp(uri, "http://", 7) != 0 && strncasecmp(uri, "https://", 8)
                                                                   != 0))
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, r->base.name,
                              "REST catalog '%s' needs a uri starting with http:// or https://",
                              r->base.name);
    size_t n = strlen(uri);
    while (n > 0 && uri[n - 1] == '/')
        n--;
    char *u = icm__strndup(uri, n);
    char *shown = u != NULL ? icm__rest_shown_url(u) : NULL;
    if (shown == NULL) {
        icm__free(u);
        return icm__error_oom();
    }
    icm__free(r->uri);
    icm__free(r->shown_uri);
    r->uri = u;
    r->shown_uri = shown;
    return 0;
}

static int fetch_config(icm__rest *r)
{
    icm__buf b = ICM__BUF_INIT;
    icm__buf_printf(&b, "%s/v1/config", r->uri);
    const char *wh = icm__rest_props_get(&r->client, "warehouse");
    if (wh != NULL && wh[0] != '\0') {
        icm__buf_puts(&b, "?warehouse=");
        put_encoded(&b, wh);
    }
    if (b.oom) {
        icm__buf_dispose(&b);
        return icm__error_oom();
    }
    char *url = icm__buf_detach(&b, NULL);
    char *shown = icm__rest_shown_url(url);
    int rc = shown != NULL ? 0 : icm__error_oom();
    if (rc == 0) {
        icm__rest_call call = {"GET", url, NULL, 0, NULL, false, false};
        icm__http_response resp;
        rc = icm__rest_send(r, &call, &resp, NULL);
        if (rc == 0 && resp.status == 200)
            rc = icm__rest_parse_config(resp.body, resp.body_len, shown, &r->server);
        else if (rc == 0)
            rc = icm__rest_fail(r, "get catalog configuration", url, &resp, 0);
        icm__http_response_clear(&resp);
    }
    icm__free(shown);
    icm__free(url);
    return rc;
}

/* defaults < client < overrides */
static int merge_props(icm__rest *r)
{
    const icm__rest_props *layers[] = {&r->server.defaults, &r->client, &r->server.overrides};
    int rc = 0;
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; rc == 0 && i < layers[k]->len; i++)
            rc = icm__rest_props_put(&r->props, layers[k]->items[i].key,
                                     layers[k]->items[i].value);
    return rc;
}

/* `header.<Name>` properties become request headers. */
static int collect_headers(icm__rest *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->props.len; i++)
        n += strncasecmp(r->props.items[i].key, "header.", 7) == 0 &&
             r->props.items[i].key[7] != '\0';
    if (n == 0)
        return 0;
    if (n > 32)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, r->base.name,
                              "more than 32 header.* properties");
    r->headers = icm__calloc(n, sizeof *r->headers);
    if (r->headers == NULL)
        return icm__error_oom();
    for (size_t i = 0; i < r->props.len; i++) {
        const icm_property *p = &r->props.items[i];
        if (strncasecmp(p->key, "header.", 7) != 0 || p->key[7] == '\0')
            continue;
        if (strpbrk(p->key + 7, "\r\n: ") != NULL || strpbrk(p->value, "\r\n") != NULL)
            return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, r->base.name,
                                  "property %s: a header name or value with a line break, "
                                  "colon or space",
                                  p->key);
        char *name = icm__strdup(p->key + 7), *value = icm__strdup(p->value);
        if (name == NULL || value == NULL) {
            icm__free(name);
            icm__free(value);
            return icm__error_oom();
        }
        r->headers[r->n_headers++] = (icm__http_header){name, value};
    }
    return 0;
}

/* `namespace-separator` is given URL-encoded (default %1F); it goes into URLs encoded
 * strictly, whatever form it was written in. */
static int set_separator(icm__rest *r)
{
    const char *sep = icm__rest_props_get(&r->props, "namespace-separator");
    if (sep == NULL || sep[0] == '\0')
        sep = "%1F";
    char raw[64];
    size_t n = 0;
    for (const char *p = sep; *p && n + 1 < sizeof raw; p++) {
        unsigned v;
        if (p[0] == '%' && sscanf(p + 1, "%2x", &v) == 1 && p[1] && p[2]) {
            raw[n++] = (char)v;
            p += 2;
        } else {
            raw[n++] = *p;
        }
    }
    raw[n] = '\0';
    if (n == 0 || memchr(raw, '\0', n) != NULL)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, r->shown_uri,
                              "namespace-separator '%s' is not usable", sep);
    icm__buf b = ICM__BUF_INIT;
    icm__sigv4_encode(&b, raw, n, false);
    if (b.oom) {
        icm__buf_dispose(&b);
        return icm__error_oom();
    }
    r->ns_sep = icm__buf_detach(&b, NULL);
    return 0;
}

static int http_init(icm__rest *r)
{
    const char *ca = icm__rest_props_get(&r->client, "ssl.cabundle");
    const char *cert = icm__rest_props_get(&r->client, "ssl.client.cert");
    const char *key = icm__rest_props_get(&r->client, "ssl.client.key");
    icm__http_options ho = {0};
    ho.max_connections = 8;
    ho.verify_tls = true;
    /* PyIceberg hands ssl.cabundle to requests' `verify`: false turns checking off */
    if (ca != NULL && strcasecmp(ca, "false") == 0)
        ho.verify_tls = false;
    else if (ca != NULL && ca[0] != '\0' && strcasecmp(ca, "true") != 0)
        ho.ca_bundle = ca;
    ho.client_cert = cert != NULL && cert[0] != '\0' ? cert : NULL;
    ho.client_key = key != NULL && key[0] != '\0' ? key : NULL;
    return icm__http_new(&r->http, &ho);
}

int icm_catalog_open_rest(icm_catalog **out, const char *name, icm_fileio *io,
                          const icm_property *properties, size_t n_properties)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, name, "NULL output");
    *out = NULL;
    if (properties == NULL && n_properties > 0)
        return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, name, "NULL properties");
    icm__rest *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return icm__error_oom();
    if (pthread_mutex_init(&r->token_lock, NULL) != 0) {
        icm__free(r);
        return icm__error_set(ICM_ERRCLASS_OS, ICM_ERROR, name, "cannot create a mutex");
    }
    int rc = icm_catalog_init_base(&r->base, &rest_methods, name, io);
    for (size_t i = 0; rc == 0 && i < n_properties; i++)
        if (properties[i].key != NULL && properties[i].value != NULL)
            rc = icm__rest_props_put(&r->client, properties[i].key, properties[i].value);
    r->max_retries = 5;
    const char *mr = icm__rest_props_get(&r->client, "rest.client.max-retries");
    if (rc == 0 && mr != NULL) {
        char *end = NULL;
        long v = strtol(mr, &end, 10);
        if (end == mr || *end != '\0' || v < 0 || v > 100)
            rc = icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, name,
                                "rest.client.max-retries must be 0 to 100, not '%s'", mr);
        else
            r->max_retries = (unsigned)v;
    }
    if (rc == 0)
        rc = set_uri(r, icm__rest_props_get(&r->client, "uri"));
    if (rc == 0)
        rc = http_init(r);
    /* The config request already needs the client's authentication and headers. */
    if (rc == 0)
        rc = merge_props(r); /* the client's alone for now */
    if (rc == 0)
        rc = collect_headers(r);
    if (rc == 0)
        rc = icm__rest_auth_init(r, &r->client);
    if (rc == 0)
        rc = fetch_config(r);
    if (rc == 0) {
        icm__rest_props_dispose(&r->props);
        free_headers(r);
        rc = merge_props(r);
    }
    const char *uri = rc == 0 ? icm__rest_props_get(&r->props, "uri") : NULL;
    if (rc == 0 && uri != NULL && strcmp(uri, r->uri) != 0)
        rc = set_uri(r, uri); /* the server's overrides moved it */
    if (rc == 0)
        rc = collect_headers(r);
    const char *prefix = rc == 0 ? icm__rest_props_get(&r->props, "prefix") : NULL;
    if (prefix != NULL && prefix[0] != '\0' && (r->prefix = icm__strdup(prefix)) == NULL)
        rc = icm__error_oom();
    if (rc == 0)
        rc = set_separator(r);
    /* Authentication again from the merged properties (the server's defaults and overrides
     * may set the token endpoint, scope or credential); a token already fetched is kept while
     * the credential and its endpoint are the same. */
    if (rc == 0) {
        char *token = r->token, *secret = r->client_secret, *endpoint = r->oauth_uri;
        int64_t refresh_at = r->token_refresh_at_ms;
        r->token = r->client_secret = r->oauth_uri = NULL;
        rc = icm__rest_auth_init(r, &r->props);
        bool same = rc == 0 && token != NULL && r->token == NULL && secret != NULL &&
                    r->client_secret != NULL && strcmp(secret, r->client_secret) == 0 &&
                    strcmp(endpoint, r->oauth_uri) == 0;
        if (same) {
            r->token = token;
            r->token_refresh_at_ms = refresh_at;
            token = NULL;
        }
        icm__free(token);
        icm__free(secret);
        icm__free(endpoint);
    }
    if (rc != 0) {
        icm_catalog_free(&r->base);
        return rc;
    }
    *out = &r->base;
    return 0;
}
