/*
 * catalog/rest/rest_parse.c: what an Iceberg REST server answers, parsed and checked against
 * the OpenAPI shapes: CatalogConfig, LoadTableResult (with its metadata handed to the metadata
 * parser as a JSON value, never re-serialised), the two error shapes (Iceberg's and OAuth's),
 * the OAuth token, the paged listings and CommitTableResponse.
 *
 * JSON is read with the strict parser (exact int64, strict UTF-8, bounded depth; spec/
 * json_parse.c). A server's text goes into messages only through icm__error_set, which
 * escapes it onto one line; an access token never goes into any message.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog/rest/rest_internal.h"
#include "spec/metadata_internal.h"
#include "util/util.h"

/* ---- properties ---- */

int icm__rest_props_put(icm__rest_props *p, const char *key, const char *value)
{
    char *v = icm__strdup(value);
    if (v == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < p->len; i++) {
        if (strcmp(p->items[i].key, key) == 0) {
            icm__free((char *)(uintptr_t)p->items[i].value);
            p->items[i].value = v;
            return 0;
        }
    }
    if (p->len == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        icm_property *items = icm__reallocarray(p->items, cap, sizeof *items);
        if (items == NULL) {
            icm__free(v);
            return ICM_ENOMEM;
        }
        p->items = items;
        p->cap = cap;
    }
    char *k = icm__strdup(key);
    if (k == NULL) {
        icm__free(v);
        return ICM_ENOMEM;
    }
    p->items[p->len++] = (icm_property){k, v};
    return 0;
}

const char *icm__rest_props_get(const icm__rest_props *p, const char *key)
{
    for (size_t i = 0; i < p->len; i++)
        if (strcmp(p->items[i].key, key) == 0)
            return p->items[i].value;
    return NULL;
}

void icm__rest_props_dispose(icm__rest_props *p)
{
    for (size_t i = 0; i < p->len; i++) {
        icm__free((char *)(uintptr_t)p->items[i].key);
        icm__free((char *)(uintptr_t)p->items[i].value);
    }
    icm__free(p->items);
    memset(p, 0, sizeof *p);
}

/* ---- helpers ---- */

static int shape_error(const char *url, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_REST, ICM_EINVALID, url,
                          "REST catalog answered an unexpected shape: %s", what);
}

static int parse_doc(const char *body, size_t len, const char *url, json_t **out)
{
    *out = NULL;
    if (body == NULL || len == 0)
        return shape_error(url, "empty body");
    int rc = icm__json_parse(body, len, url, out);
    if (rc == 0 && !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return shape_error(url, "the body is not a JSON object");
    }
    return rc;
}

/* A string map (the spec's `{type: object, additionalProperties: {type: string}}`); a null
 * or absent member is an empty map. Booleans and integers are taken as their text, as the
 * Java and Python clients tolerate them. */
static int parse_string_map(json_t *obj, const char *url, const char *what, icm__rest_props *out)
{
    if (obj == NULL || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return shape_error(url, what);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        char num[32];
        const char *text = NULL;
        if (json_is_string(v))
            text = json_string_value(v);
        else if (json_is_true(v))
            text = "true";
        else if (json_is_false(v))
            text = "false";
        else if (json_is_integer(v)) {
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            text = num;
        } else if (json_is_null(v))
            continue;
        else
            return shape_error(url, what);
        if (k[0] == '\0' || strlen(text) != (json_is_string(v) ? json_string_length(v)
                                                                : strlen(text)))
            return shape_error(url, what); /* an empty key, or a NUL inside a value */
        int rc = icm__rest_props_put(out, k, text);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A string member: NULL when absent or null; ICM_EINVALID when another type or holding NUL. */
static int opt_string(json_t *obj, const char *key, const char *url, const char **out)
{
    *out = NULL;
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
        char what[96];
        snprintf(what, sizeof what, "`%s` is not a string", key);
        return shape_error(url, what);
    }
    *out = json_string_value(v);
    return 0;
}

/* ---- CatalogConfig ---- */

void icm__rest_config_dispose(icm__rest_config *c)
{
    icm__rest_props_dispose(&c->defaults);
    icm__rest_props_dispose(&c->overrides);
    for (size_t i = 0; i < c->n_endpoints; i++)
        icm__free(c->endpoints[i]);
    icm__free(c->endpoints);
    memset(c, 0, sizeof *c);
}

int icm__rest_parse_config(const char *body, size_t len, const char *url, icm__rest_config *out)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    int rc = parse_doc(body, len, url, &doc);
    if (rc != 0)
        return rc;
    rc = parse_string_map(json_object_get(doc, "defaults"), url, "`defaults` is not a string map",
                          &out->defaults);
    if (rc == 0)
        rc = parse_string_map(json_object_get(doc, "overrides"), url,
                              "`overrides` is not a string map", &out->overrides);
    json_t *eps = json_object_get(doc, "endpoints");
    if (rc == 0 && eps != NULL && !json_is_null(eps)) {
        if (!json_is_array(eps)) {
            rc = shape_error(url, "`endpoints` is not an array");
        } else {
            out->endpoints_given = true;
            size_t n = json_array_size(eps);
            out->endpoints = n > 0 ? icm__calloc(n, sizeof *out->endpoints) : NULL;
            if (n > 0 && out->endpoints == NULL)
                rc = ICM_ENOMEM;
            for (size_t i = 0; rc == 0 && i < n; i++) {
                json_t *e = json_array_get(eps, i);
                if (!json_is_string(e)) {
                    rc = shape_error(url, "an entry of `endpoints` is not a string");
                } else if ((out->endpoints[i] = icm__strdup(json_string_value(e))) == NULL) {
                    rc = ICM_ENOMEM;
                } else {
                    out->n_endpoints = i + 1;
                }
            }
        }
    }
    json_decref(doc);
    if (rc != 0)
        icm__rest_config_dispose(out);
    return rc;
}

/* ---- LoadTableResult ---- */

static void creds_dispose(icm__rest_storage_credential *creds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        icm__free(creds[i].prefix);
        icm__rest_props_dispose(&creds[i].config);
    }
    icm__free(creds);
}

void icm__rest_load_dispose(icm__rest_load *l)
{
    icm__free(l->metadata_location);
    icm_table_metadata_free(l->metadata);
    icm__rest_props_dispose(&l->config);
    creds_dispose(l->creds, l->n_creds);
    memset(l, 0, sizeof *l);
}

/* `storage-credentials` (absent or null: none) into *creds / *n_creds; on failure the
 * entries parsed so far are there for the caller to dispose. */
static int parse_creds(json_t *arr, const char *url, icm__rest_storage_credential **creds,
                       size_t *n_creds)
{
    if (arr == NULL || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return shape_error(url, "`storage-credentials` is not an array");
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    *creds = icm__calloc(n, sizeof **creds);
    if (*creds == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        const char *prefix = NULL;
        if (!json_is_object(e))
            return shape_error(url, "an entry of `storage-credentials` is not an object");
        int rc = opt_string(e, "prefix", url, &prefix);
        if (rc != 0)
            return rc;
        if (prefix == NULL)
            return shape_error(url, "a storage credential has no `prefix`");
        icm__rest_storage_credential *c = &(*creds)[(*n_creds)++];
        if ((c->prefix = icm__strdup(prefix)) == NULL)
            return ICM_ENOMEM;
        json_t *cfg = json_object_get(e, "config");
        if (cfg == NULL || !json_is_object(cfg))
            return shape_error(url, "a storage credential has no `config` object");
        rc = parse_string_map(cfg, url, "a storage credential's `config` is not a string map",
                              &c->config);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__rest_parse_load(const char *body, size_t len, const char *url, icm__rest_load *out)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    int rc = parse_doc(body, len, url, &doc);
    if (rc != 0)
        return rc;
    const char *loc = NULL;
    rc = opt_string(doc, "metadata-location", url, &loc);
    if (rc == 0 && loc != NULL && (out->metadata_location = icm__strdup(loc)) == NULL)
        rc = ICM_ENOMEM;
    json_t *md = json_object_get(doc, "metadata");
    if (rc == 0 && (md == NULL || !json_is_object(md)))
        rc = shape_error(url, "no `metadata` object");
    if (rc == 0) {
        /* The metadata parser takes the value itself (a reference): no second parse. */
        json_incref(md);
        rc = icm__table_metadata_wrap(&out->metadata, md, loc);
    }
    if (rc == 0)
        rc = parse_string_map(json_object_get(doc, "config"), url,
                              "`config` is not a string map", &out->config);
    if (rc == 0)
        rc = parse_creds(json_object_get(doc, "storage-credentials"), url, &out->creds,
                         &out->n_creds);
    json_decref(doc);
    if (rc != 0)
        icm__rest_load_dispose(out);
    return rc;
}

/* ---- LoadCredentialsResponse ---- */

void icm__rest_credentials_dispose(icm__rest_credentials *c)
{
    creds_dispose(c->creds, c->n_creds);
    memset(c, 0, sizeof *c);
}

int icm__rest_parse_credentials(const char *body, size_t len, const char *url,
                                icm__rest_credentials *out)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    int rc = parse_doc(body, len, url, &doc);
    if (rc != 0)
        return rc;
    json_t *arr = json_object_get(doc, "storage-credentials");
    if (arr == NULL || !json_is_array(arr))
        rc = shape_error(url, "no `storage-credentials` array");
    else
        rc = parse_creds(arr, url, &out->creds, &out->n_creds);
    json_decref(doc);
    if (rc != 0)
        icm__rest_credentials_dispose(out);
    return rc;
}

const icm__rest_storage_credential *
icm__rest_pick_credential(const icm__rest_storage_credential *creds, size_t n,
                          const char *location)
{
    const icm__rest_storage_credential *best = NULL;
    for (size_t i = 0; location != NULL && i < n; i++) {
        const icm__rest_storage_credential *c = &creds[i];
        size_t len = strlen(c->prefix);
        if (strncmp(location, c->prefix, len) == 0 &&
            (best == NULL || len > strlen(best->prefix)))
            best = c;
    }
    return best;
}

int icm__rest_table_config(const icm__rest_load *l, const char *table_location,
                           icm__rest_props *out)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < l->config.len; i++)
        rc = icm__rest_props_put(out, l->config.items[i].key, l->config.items[i].value);
    const icm__rest_storage_credential *best =
        icm__rest_pick_credential(l->creds, l->n_creds, table_location);
    for (size_t i = 0; rc == 0 && best != NULL && i < best->config.len; i++)
        rc = icm__rest_props_put(out, best->config.items[i].key, best->config.items[i].value);
    return rc;
}

/* ---- errors ---- */

void icm__rest_error_dispose(icm__rest_error *e)
{
    icm__free(e->message);
    icm__free(e->type);
    memset(e, 0, sizeof *e);
}

/* The first line of a non-JSON body, at most 200 bytes (a proxy's HTML page, plain text). */
static char *raw_excerpt(const char *body, size_t len)
{
    size_t n = 0;
    while (n < len && n < 200 && body[n] != '\n' && body[n] != '\r' && body[n] != '\0')
        n++;
    return icm__strndup(body != NULL ? body : "", n);
}

int icm__rest_parse_error(const char *body, size_t len, icm__rest_error *out)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    const char *message = NULL, *type = NULL;
    if (body != NULL && len > 0 && icm__json_parse(body, len, NULL, &doc) == 0 &&
        json_is_object(doc)) {
        json_t *err = json_object_get(doc, "error");
        if (json_is_object(err)) { /* IcebergErrorResponse */
            json_t *m = json_object_get(err, "message"), *t = json_object_get(err, "type"),
                   *c = json_object_get(err, "code");
            message = json_is_string(m) ? json_string_value(m) : NULL;
            type = json_is_string(t) ? json_string_value(t) : NULL;
            if (json_is_integer(c) && json_integer_value(c) > 0 && json_integer_value(c) < 1000)
                out->code = (int)json_integer_value(c);
        } else if (json_is_string(err)) { /* OAuthError */
            json_t *d = json_object_get(doc, "error_description");
            type = json_string_value(err);
            message = json_is_string(d) ? json_string_value(d) : "";
        }
    }
    icm_error_clear(); /* a body that is not JSON is not an error of its own */
    if (message != NULL || type != NULL) {
        out->message = icm__strdup(message != NULL ? message : "");
        out->type = icm__strdup(type != NULL ? type : "");
    } else {
        out->message = raw_excerpt(body, len);
        out->type = icm__strdup("");
    }
    json_decref(doc);
    if (out->message == NULL || out->type == NULL) {
        icm__rest_error_dispose(out);
        return ICM_ENOMEM;
    }
    return 0;
}

/* ---- OAuth token ---- */

int icm__rest_parse_token(const char *body, size_t len, const char *url, char **out_token,
                          int64_t *out_expires_in_s)
{
    *out_token = NULL;
    *out_expires_in_s = -1;
    json_t *doc = NULL;
    int rc = parse_doc(body, len, url, &doc);
    if (rc != 0)
        return rc;
    json_t *tok = json_object_get(doc, "access_token");
    json_t *type = json_object_get(doc, "token_type");
    json_t *exp = json_object_get(doc, "expires_in");
    const char *t = json_is_string(tok) ? json_string_value(tok) : NULL;
    bool printable = t != NULL && t[0] != '\0' && strlen(t) == json_string_length(tok);
    for (const char *p = t; printable && *p; p++)
        printable = (unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f;
    if (!printable)
        rc = shape_error(url, "the token answer has no usable `access_token`");
    else if (type != NULL && !json_is_string(type))
        rc = shape_error(url, "the token answer's `token_type` is not a string");
    else if (type != NULL && strcasecmp(json_string_value(type), "bearer") != 0 &&
             strcasecmp(json_string_value(type), "n_a") != 0)
        rc = icm__error_set(ICM_ERRCLASS_REST, ICM_EUNSUPPORTED, url,
                            "token type '%s' is not supported (bearer)",
                            json_string_value(type));
    else if (exp != NULL && !json_is_null(exp) &&
             (!json_is_integer(exp) || json_integer_value(exp) < 0))
        rc = shape_error(url, "the token answer's `expires_in` is not a number of seconds");
    if (rc == 0) {
        if (json_is_integer(exp))
            *out_expires_in_s = json_integer_value(exp);
        if ((*out_token = icm__strdup(t)) == NULL)
            rc = ICM_ENOMEM;
    }
    json_decref(doc);
    return rc;
}

/* ---- listings ---- */

static int level_ok(json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0 &&
           strlen(json_string_value(v)) == json_string_length(v);
}

int icm__rest_parse_list(const char *body, size_t len, const char *url, bool tables,
                         icm_name_cb cb, void *payload, char **out_next)
{
    *out_next = NULL;
    json_t *doc = NULL;
    int rc = parse_doc(body, len, url, &doc);
    if (rc != 0)
        return rc;
    const char *member = tables ? "identifiers" : "namespaces";
    json_t *arr = json_object_get(doc, member);
    const char *next = NULL;
    rc = opt_string(doc, "next-page-token", url, &next);
    if (rc == 0 && !json_is_array(arr))
        rc = shape_error(url, tables ? "no `identifiers` array" : "no `namespaces` array");
    /* Check the whole page before the first callback: a page is taken whole or not at all. */
    for (size_t i = 0; rc == 0 && i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        bool ok;
        if (tables) {
            json_t *ns = json_object_get(e, "namespace");
            ok = json_is_object(e) && level_ok(json_object_get(e, "name")) &&
                 json_is_array(ns);
            for (size_t k = 0; ok && k < json_array_size(ns); k++)
                ok = level_ok(json_array_get(ns, k));
        } else {
            ok = json_is_array(e) && json_array_size(e) > 0;
            for (size_t k = 0; ok && k < json_array_size(e); k++)
                ok = level_ok(json_array_get(e, k));
        }
        if (!ok)
            rc = shape_error(url, tables ? "a table identifier is not {namespace, name}"
                                         : "a namespace is not a non-empty array of names");
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        json_t *name = tables ? json_object_get(e, "name")
                              : json_array_get(e, json_array_size(e) - 1);
        rc = cb(json_string_value(name), payload);
    }
    if (rc == 0 && next != NULL && next[0] != '\0' && (*out_next = icm__strdup(next)) == NULL)
        rc = ICM_ENOMEM;
    json_decref(doc);
    return rc;
}

/* ---- CommitTableResponse ---- */

int icm__rest_parse_commit(const char *body, size_t len, const char *url, char **out_location)
{
    *out_location = NULL;
    json_t *doc = NULL;
    int rc = parse_doc(body, len, url, &doc);
    const char *loc = NULL;
    if (rc == 0)
        rc = opt_string(doc, "metadata-location", url, &loc);
    if (rc == 0 && (loc == NULL || loc[0] == '\0'))
        rc = shape_error(url, "no `metadata-location`");
    if (rc == 0 && !json_is_object(json_object_get(doc, "metadata")))
        rc = shape_error(url, "no `metadata` object");
    if (rc == 0 && (*out_location = icm__strdup(loc)) == NULL)
        rc = ICM_ENOMEM;
    json_decref(doc);
    return rc;
}
