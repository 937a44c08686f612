/*
 * catalog/catalog.c: the generic catalog layer: handle basics, identifier parsing, namespace and
 * table listings (filtered, de-duplicated, sorted here so every back end behaves alike), table
 * creation and registration, and writing a new metadata file with Java's naming rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_internal.h"
#include "maint/other_format.h"
#include "util/location.h"
#include "util/util.h"

int icm_catalog_init_base(icm_catalog *cat, const icm_catalog_methods *methods,
                          const char *name, icm_fileio *io)
{
    if (io == NULL) {
        cat->methods = methods;
        cat->name = NULL;
        cat->owned_io = NULL;
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, name,
                              "a catalog needs a FileIO");
    }
    cat->methods = methods;
    cat->io = io;
    cat->owned_io = NULL;
    cat->name = icm__strdup(name != NULL ? name : "default");
    return cat->name != NULL ? 0 : ICM_ENOMEM;
}

void icm_catalog_free(icm_catalog *cat)
{
    if (cat == NULL)
        return;
    /* The back end frees its struct (which embeds *cat), so keep what we release ourselves. */
    char *name = cat->name;
    icm_fileio *owned = cat->owned_io;
    cat->methods->free(cat);
    icm__free(name);
    icm_fileio_free(owned);
}

const char *icm_catalog_name(const icm_catalog *cat)
{
    return cat->name;
}

const char *icm_catalog_kind(const icm_catalog *cat)
{
    return cat->methods->kind;
}

icm_fileio *icm_catalog_fileio(const icm_catalog *cat)
{
    return cat->io;
}

/* ---- small string helpers ---- */

/* The URI for messages: the password of `scheme://user:password@host` becomes "***". */
void icm__redact_uri(const char *uri, char *buf, size_t size)
{
    const char *start = strstr(uri, "://");
    const char *at = start != NULL ? strchr(start + 3, '@') : NULL;
    const char *colon = at != NULL ? memchr(start + 3, ':', (size_t)(at - start - 3)) : NULL;
    if (colon == NULL)
        snprintf(buf, size, "%s", uri);
    else
        snprintf(buf, size, "%.*s:***%s", (int)(colon - uri), uri, at);
}

const char *icm__basename(const char *location)
{
    const char *slash = strrchr(location, '/');
    return slash != NULL ? slash + 1 : location;
}

int icm__ident_parse(const char *identifier, char **out_ns, char **out_name)
{
    *out_ns = NULL;
    *out_name = NULL;
    const char *dot = identifier != NULL ? strrchr(identifier, '.') : NULL;
    if (dot == NULL || dot == identifier || dot[1] == '\0' || identifier[0] == '.' ||
        strstr(identifier, "..") != NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, identifier,
                              "table identifier must be NAMESPACE.TABLE (dotted, no empty part)");
    *out_ns = icm__strndup(identifier, (size_t)(dot - identifier));
    *out_name = icm__strdup(dot + 1);
    if (*out_ns == NULL || *out_name == NULL) {
        icm__free(*out_ns);
        icm__free(*out_name);
        *out_ns = *out_name = NULL;
        return ICM_ENOMEM;
    }
    return 0;
}

void icm__ident_dispose(icm__ident *ident)
{
    for (size_t i = 0; i < ident->n_levels; i++)
        icm__free(ident->levels[i]);
    icm__free(ident->levels);
    icm__free(ident->ns);
    icm__free(ident->name);
    memset(ident, 0, sizeof *ident);
}

int icm__ident_make(icm__ident *out, const char *ns, const char *name)
{
    memset(out, 0, sizeof *out);
    out->ns = icm__strdup(ns);
    out->name = icm__strdup(name);
    size_t n = ns[0] != '\0' ? 1 : 0;
    for (const char *p = ns; *p != '\0'; p++)
        n += *p == '.';
    out->levels = icm__calloc(n ? n : 1, sizeof *out->levels);
    bool ok = out->ns != NULL && out->name != NULL && out->levels != NULL;
    for (const char *p = ns; ok && out->n_levels < n; out->n_levels++) {
        const char *dot = strchr(p, '.');
        size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);
        ok = (out->levels[out->n_levels] = icm__strndup(p, len)) != NULL;
        p += len + (dot != NULL);
    }
    if (!ok) {
        icm__ident_dispose(out);
        return ICM_ENOMEM;
    }
    out->id.ns = out->ns;
    out->id.name = out->name;
    out->id.levels = (const char *const *)out->levels;
    out->id.n_levels = n;
    return 0;
}

int icm__ident_make_levels(icm__ident *out, const char *const *levels, size_t n,
                           const char *name)
{
    memset(out, 0, sizeof *out);
    icm__buf b = ICM__BUF_INIT;
    for (size_t i = 0; i < n; i++)
        (void)icm__buf_printf(&b, "%s%s", i > 0 ? "." : "", levels[i]);
    (void)icm__buf_putc(&b, '\0');
    out->ns = icm__buf_detach(&b, NULL);
    out->name = icm__strdup(name);
    out->levels = icm__calloc(n ? n : 1, sizeof *out->levels);
    bool ok = out->ns != NULL && out->name != NULL && out->levels != NULL;
    for (; ok && out->n_levels < n; out->n_levels++)
        ok = (out->levels[out->n_levels] = icm__strdup(levels[out->n_levels])) != NULL;
    if (!ok) {
        icm__ident_dispose(out);
        return icm__error_oom();
    }
    out->id.ns = out->ns;
    out->id.name = out->name;
    out->id.levels = (const char *const *)out->levels;
    out->id.n_levels = n;
    return 0;
}

int icm__ident_parse_levels(const char *identifier, icm__ident *out)
{
    memset(out, 0, sizeof *out);
    char *ns = NULL, *name = NULL;
    int rc = icm__ident_parse(identifier, &ns, &name);
    if (rc == 0)
        rc = icm__ident_make(out, ns, name);
    icm__free(ns);
    icm__free(name);
    return rc;
}

/* A back end without this method (a version 2 back end may leave version 1 slots empty). */
static int no_method(const icm_catalog *cat, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, cat->name,
                          "catalog kind '%s' cannot %s", cat->methods->kind, what);
}

void icm_catalog_table_info_dispose(icm_catalog_table_info *info)
{
    if (info == NULL)
        return;
    icm__free(info->metadata_location);
    icm_table_metadata_free(info->metadata);
    for (size_t i = 0; i < info->n_config; i++) {
        icm__free((char *)info->config[i].key);
        icm__free((char *)info->config[i].value);
    }
    icm__free(info->config);
    memset(info, 0, sizeof *info);
}

static int check_namespace(const char *ns)
{
    if (ns == NULL || ns[0] == '\0' || ns[0] == '.' || ns[strlen(ns) - 1] == '.' ||
        strstr(ns, "..") != NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, ns != NULL ? ns : "",
                              "namespace must be non-empty dotted names");
    return 0;
}


int64_t icm__metadata_file_version(const char *location)
{
    const char *name = icm__basename(location);
    const char *dash = strchr(name, '-');
    if (dash == NULL || dash == name)
        return -1;
    int64_t v = 0;
    for (const char *p = name; p < dash; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

/* ---- writing metadata files ---- */

/* true = gzip, false = none; ICM_EINVALID for other codecs (Java knows only these two). */
static int metadata_codec(const icm_table_metadata *md, bool *out_gzip)
{
    const char *codec = icm_table_metadata_property(md, "write.metadata.compression-codec");
    *out_gzip = false;
    if (codec == NULL || codec[0] == '\0' || strcasecmp(codec, "none") == 0)
        return 0;
    if (strcasecmp(codec, "gzip") == 0) {
        *out_gzip = true;
        return 0;
    }
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, icm_table_metadata_file(md),
                          "unknown write.metadata.compression-codec '%s' (none or gzip)", codec);
}

int icm__metadata_serialise(const icm_table_metadata *md, char **out, size_t *out_len,
                            bool *out_gzip)
{
    int rc = metadata_codec(md, out_gzip);
    if (rc != 0)
        return rc;
    return *out_gzip ? icm_table_metadata_to_json_gzip(out, out_len, md)
                     : icm_table_metadata_to_json(out, out_len, md);
}

/* Directory new metadata files go to: `write.metadata.path`, else `<location>/metadata`. */
static char *metadata_dir(const icm_table_metadata *md)
{
    const char *custom = icm_table_metadata_property(md, "write.metadata.path");
    if (custom != NULL && custom[0] != '\0') {
        size_t n = strlen(custom);
        while (n > 1 && custom[n - 1] == '/')
            n--;
        return icm__strndup(custom, n);
    }
    return icm__location_join(icm_table_metadata_location(md), "metadata");
}

int icm_catalog_write_metadata_file(char **out_location, icm_fileio *io,
                                    const char *base_location, const icm_table_metadata *md)
{
    *out_location = NULL;
    char *content = NULL, *dir = NULL, *loc = NULL;
    size_t len = 0;
    bool gzip = false;
    char uuid[37];
    int rc = icm__metadata_serialise(md, &content, &len, &gzip);
    if (rc != 0)
        goto done;
    rc = icm__uuid4(uuid);
    if (rc != 0)
        goto done;
    dir = metadata_dir(md);
    if (dir == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    /* Java: parseVersion(base) + 1, where a name without a number counts as -1. */
    int64_t version = base_location != NULL ? icm__metadata_file_version(base_location) + 1 : 0;
    loc = icm__sprintf("%s/%05lld-%s%s", dir, (long long)version, uuid,
                       gzip ? ".gz.metadata.json" : ".metadata.json");
    if (loc == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    rc = icm_fileio_create_new(io, loc, content, len);
    if (rc != 0)
        goto done;
    *out_location = loc;
    loc = NULL;
done:
    icm_free(content);
    icm__free(dir);
    icm__free(loc);
    return rc;
}

/* ---- listings ---- */

typedef struct name_set {
    icm__ptrvec names;
    const char *parent; /* NULL: top level */
    int rc;
} name_set;

static int add_unique(icm__ptrvec *v, const char *s, size_t n)
{
    for (size_t i = 0; i < v->len; i++) {
        const char *have = v->items[i];
        if (strlen(have) == n && memcmp(have, s, n) == 0)
            return 0;
    }
    char *copy = icm__strndup(s, n);
    if (copy == NULL)
        return ICM_ENOMEM;
    int rc = icm__ptrvec_push(v, copy);
    if (rc != 0)
        icm__free(copy);
    return rc;
}

/* Keep `name` truncated to one level below the parent (PyIceberg's list_namespaces rule). */
static int collect_namespace(const char *name, void *payload)
{
    name_set *set = payload;
    const char *rest = name;
    if (set->parent != NULL) {
        size_t pn = strlen(set->parent);
        if (strncmp(name, set->parent, pn) != 0 || name[pn] != '.')
            return 0;
        rest = name + pn + 1;
    }
    const char *dot = strchr(rest, '.');
    size_t n = (size_t)((dot != NULL ? dot : rest + strlen(rest)) - name);
    return add_unique(&set->names, name, n);
}

static int collect_name(const char *name, void *payload)
{
    name_set *set = payload;
    return add_unique(&set->names, name, strlen(name));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit_sorted(icm__ptrvec *v, icm_name_cb cb, void *payload)
{
    if (v->len > 1)
        qsort(v->items, v->len, sizeof v->items[0], cmp_str);
    for (size_t i = 0; i < v->len; i++) {
        int rc = cb(v->items[i], payload);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A child of `parent` (dotted; NULL top level) as the full dotted namespace. */
typedef struct child_set {
    icm__ptrvec *names;
    const char *parent;
} child_set;

static int collect_child(const char *child, void *payload)
{
    child_set *cs = payload;
    char *full = cs->parent != NULL ? icm__sprintf("%s.%s", cs->parent, child)
                                    : icm__strdup(child);
    if (full == NULL)
        return ICM_ENOMEM;
    int rc = add_unique(cs->names, full, strlen(full));
    icm__free(full);
    return rc;
}

typedef icm__catalog_page_fn page_fn;

int icm__catalog_pages(icm_catalog *cat, icm__catalog_page_fn fn, const char *const *levels,
                       size_t n_levels, icm_name_cb cb, void *payload)
{
    char *token = NULL;
    int rc = 0;
    for (unsigned pages = 0; rc == 0; pages++) {
        char *next = NULL;
        rc = fn(cat, levels, n_levels, token, cb, payload, &next);
        icm_free(token);
        token = next;
        if (rc != 0 || token == NULL)
            break;
        if (pages > 1000000) /* a back end that never ends its pages */
            rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EIO, cat->name,
                                "listing did not end after a million pages");
    }
    icm_free(token);
    return rc;
}

/* Every page of a version 2 listing of `ns` (dotted; NULL top level). */
static int list_pages(icm_catalog *cat, page_fn fn, const char *ns, icm_name_cb cb,
                      void *payload)
{
    icm__ident at = {0};
    int rc = icm__ident_make(&at, ns != NULL ? ns : "", "");
    if (rc == 0)
        rc = icm__catalog_pages(cat, fn, at.id.levels, at.id.n_levels, cb, payload);
    icm__ident_dispose(&at);
    return rc;
}

typedef struct exists_probe {
    const char *ns;
    bool found;
} exists_probe;

static int probe_namespace(const char *name, void *payload)
{
    exists_probe *p = payload;
    size_t n = strlen(p->ns);
    if (strncmp(name, p->ns, n) == 0 && (name[n] == '\0' || name[n] == '.')) {
        p->found = true;
        return 1; /* stop early */
    }
    return 0;
}

int icm_catalog_namespace_exists(bool *out, icm_catalog *cat, const char *ns)
{
    *out = false;
    int rc = check_namespace(ns);
    if (rc != 0)
        return rc;
    exists_probe p = {ns, false};
    page_fn pages = ICM__CATALOG_V2(cat, list_namespaces_page);
    if (pages != NULL && cat->methods->list_all_namespaces == NULL) {
        /* a child of its parent (a namespace's levels never hold an empty one) */
        const char *dot = strrchr(ns, '.');
        char *parent = dot != NULL ? icm__strndup(ns, (size_t)(dot - ns)) : NULL;
        if (dot != NULL && parent == NULL)
            return ICM_ENOMEM;
        icm__ptrvec names = ICM__PTRVEC_INIT;
        child_set cs = {&names, parent};
        rc = list_pages(cat, pages, parent, collect_child, &cs);
        for (size_t i = 0; rc == 0 && i < names.len && !p.found; i++)
            p.found = strcmp(names.items[i], ns) == 0;
        icm__ptrvec_dispose(&names, icm__free);
        icm__free(parent);
        if (rc == ICM_ENOTFOUND) { /* the parent is missing: so is ns */
            icm_error_clear();
            rc = 0;
        }
        if (rc != 0)
            return rc;
        *out = p.found;
        return 0;
    }
    if (cat->methods->list_all_namespaces == NULL)
        return no_method(cat, "list namespaces");
    rc = cat->methods->list_all_namespaces(cat, probe_namespace, &p);
    if (rc < 0)
        return rc;
    *out = p.found;
    return 0;
}

static int require_namespace(icm_catalog *cat, const char *ns)
{
    bool exists = false;
    int rc = icm_catalog_namespace_exists(&exists, cat, ns);
    if (rc != 0)
        return rc;
    if (!exists)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, ns,
                              "namespace does not exist in catalog '%s'", cat->name);
    return 0;
}

int icm_catalog_list_namespaces(icm_catalog *cat, const char *parent, icm_name_cb cb,
                                void *payload)
{
    if (parent != NULL && parent[0] == '\0')
        parent = NULL;
    if (parent != NULL) {
        int rc = require_namespace(cat, parent);
        if (rc != 0)
            return rc;
    }
    name_set set = {ICM__PTRVEC_INIT, parent, 0};
    page_fn pages = ICM__CATALOG_V2(cat, list_namespaces_page);
    child_set cs = {&set.names, parent};
    int rc = pages != NULL ? list_pages(cat, pages, parent, collect_child, &cs)
             : cat->methods->list_all_namespaces != NULL
                 ? cat->methods->list_all_namespaces(cat, collect_namespace, &set)
                 : no_method(cat, "list namespaces");
    if (rc == 0)
        rc = emit_sorted(&set.names, cb, payload);
    icm__ptrvec_dispose(&set.names, icm__free);
    return rc;
}

int icm_catalog_list_tables(icm_catalog *cat, const char *ns, icm_name_cb cb, void *payload)
{
    int rc = check_namespace(ns);
    if (rc == 0)
        rc = require_namespace(cat, ns);
    if (rc != 0)
        return rc;
    name_set set = {ICM__PTRVEC_INIT, NULL, 0};
    page_fn pages = ICM__CATALOG_V2(cat, list_tables_page);
    rc = pages != NULL                       ? list_pages(cat, pages, ns, collect_name, &set)
         : cat->methods->list_tables != NULL ? cat->methods->list_tables(cat, ns, collect_name, &set)
                                             : no_method(cat, "list tables");
    if (rc == 0)
        rc = emit_sorted(&set.names, cb, payload);
    icm__ptrvec_dispose(&set.names, icm__free);
    return rc;
}

int icm_catalog_create_namespace(icm_catalog *cat, const char *ns)
{
    int rc = check_namespace(ns);
    if (rc != 0)
        return rc;
    bool exists = false;
    rc = icm_catalog_namespace_exists(&exists, cat, ns);
    if (rc != 0)
        return rc;
    if (exists)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EEXISTS, ns,
                              "namespace already exists in catalog '%s'", cat->name);
    return cat->methods->create_namespace != NULL ? cat->methods->create_namespace(cat, ns)
                                                  : no_method(cat, "create namespaces");
}

/* ---- tables ---- */

int icm__catalog_load_info(icm_catalog *cat, const icm_table_ident *id,
                            icm_catalog_table_info *out)
{
    memset(out, 0, sizeof *out);
    int (*info)(icm_catalog *, const icm_table_ident *, icm_catalog_table_info *) =
        ICM__CATALOG_V2(cat, load_table_info);
    if (info != NULL) {
        int rc = info(cat, id, out);
        if (rc == 0 && out->metadata_location == NULL) {
            icm_catalog_table_info_dispose(out);
            rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, id->name,
                                "the catalog gave no metadata location for the table");
        }
        return rc;
    }
    if (cat->methods->load_table == NULL)
        return no_method(cat, "load tables");
    return cat->methods->load_table(cat, id, &out->metadata_location);
}

int icm__catalog_load_location(icm_catalog *cat, const icm_table_ident *id, char **out)
{
    *out = NULL;
    icm_catalog_table_info info;
    int rc = icm__catalog_load_info(cat, id, &info);
    if (rc == 0) {
        *out = info.metadata_location;
        info.metadata_location = NULL;
        icm_catalog_table_info_dispose(&info);
    }
    return rc;
}

int icm_catalog_load_table_location(char **out, icm_catalog *cat, const char *identifier)
{
    *out = NULL;
    icm__ident ident;
    int rc = icm__ident_parse_levels(identifier, &ident);
    if (rc != 0)
        return rc;
    rc = icm__catalog_load_location(cat, &ident.id, out);
    icm__ident_dispose(&ident);
    return rc;
}

int icm_catalog_create_table(char **out_location, icm_catalog *cat,
                             const char *identifier, const icm_create_table_options *opts)
{
    if (out_location != NULL)
        *out_location = NULL;
    if (opts != NULL && opts->version != ICM_CREATE_TABLE_OPTIONS_VERSION)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, identifier,
                              "icm_create_table_options: unknown version %u (use "
                              "ICM_CREATE_TABLE_OPTIONS_INIT)",
                              opts->version);
    if (opts == NULL || opts->schema_json == NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, identifier,
                              "create table needs a schema");
    char *ns = NULL, *name = NULL, *location = NULL, *written = NULL;
    icm_table_metadata *md = NULL;
    icm__ident ident = {0};
    int rc = icm__ident_parse(identifier, &ns, &name);
    if (rc == 0)
        rc = icm__ident_make(&ident, ns, name);
    if (rc != 0) {
        icm__free(ns);
        icm__free(name);
        return rc;
    }
    icm_table_ident id = ident.id;
    if (strcmp(cat->methods->kind, "hadoop") != 0) {
        rc = require_namespace(cat, ns);
        if (rc != 0)
            goto done;
    }
    if (opts->location != NULL) {
        /* recorded absolute (issue #16, class 1); an absolute one keeps its form */
        char *canon = NULL;
        rc = icm__location_canonical_keep_form(opts->location, &canon);
        size_t n = canon != NULL ? strlen(canon) : 0;
        while (n > 1 && canon[n - 1] == '/')
            n--;
        location = rc == 0 ? icm__strndup(canon, n) : NULL;
        if (rc == 0 && location == NULL)
            rc = ICM_ENOMEM;
        icm__free(canon);
    } else {
        rc = cat->methods->default_table_location != NULL
                 ? cat->methods->default_table_location(cat, &id, &location)
                 : no_method(cat, "choose a table location");
    }
    if (rc != 0)
        goto done;
    rc = icm__metadata_build_new(&md, location, opts);
    if (rc != 0)
        goto done;
    rc = cat->methods->create_table != NULL ? cat->methods->create_table(cat, &id, md, &written)
                                            : no_method(cat, "create tables");
    if (rc == 0 && out_location != NULL) {
        *out_location = written;
        written = NULL;
    }
done:
    icm_table_metadata_free(md);
    icm__free(written);
    icm__free(location);
    icm__ident_dispose(&ident);
    icm__free(ns);
    icm__free(name);
    return rc;
}

int icm_catalog_register_table_flags(icm_catalog *cat, const char *identifier,
                                     const char *metadata_location, unsigned flags)
{
    char *ns = NULL, *name = NULL, *canon = NULL;
    icm_table_metadata *md = NULL;
    icm__ident ident = {0};
    int rc = icm__ident_parse(identifier, &ns, &name);
    if (rc == 0)
        rc = icm__ident_make(&ident, ns, name);
    if (rc != 0) {
        icm__free(ns);
        icm__free(name);
        return rc;
    }
    icm_table_ident id = ident.id;
    rc = require_namespace(cat, ns);
    /* The pointer is recorded absolute (issue #16, class 1): a relative one would name
     * another file from another working directory. */
    if (rc == 0)
        rc = icm__location_canonical_keep_form(metadata_location, &canon);
    if (rc != 0)
        goto done;
    /* Refuse to record something that is not table metadata: every reader would fail on it. */
    rc = icm_table_metadata_read(&md, cat->io, canon);
    /* (a filesystem catalog refuses registration itself, as Java's does) */
    if (rc == 0 && (flags & ICM_REGISTER_ALLOW_SHARED) == 0 &&
        strcmp(cat->methods->kind, "hadoop") != 0)
        rc = icm__catalog_check_unshared(cat, canon, md);
    /* A copy's metadata file names the original's location: maintaining the table it would
     * register deletes and records the original's files (table/table_own.c). */
    if (rc == 0 && (flags & ICM_REGISTER_ALLOW_FOREIGN) == 0)
        rc = icm__table_check_own(cat->io, md, canon, NULL, identifier, true);
    /* a trashed metadata file (the sweep trashes unreferenced ones): `trash expire` and
     * `trash restore` see no table that references it (adversary round 5, finding 1) */
    if (rc == 0)
        rc = icm__other_format_refuse_trashed(cat->io, canon, "registered");
    if (rc == 0)
        rc = cat->methods->register_table != NULL
                 ? cat->methods->register_table(cat, &id, canon)
                 : no_method(cat, "register tables");
done:
    icm_table_metadata_free(md);
    icm__free(canon);
    icm__ident_dispose(&ident);
    icm__free(ns);
    icm__free(name);
    return rc;
}

int icm_catalog_register_table(icm_catalog *cat, const char *identifier,
                               const char *metadata_location)
{
    return icm_catalog_register_table_flags(cat, identifier, metadata_location, 0);
}

int icm_catalog_drop_table(icm_catalog *cat, const char *identifier)
{
    char *ns = NULL, *name = NULL;
    icm__ident ident = {0};
    int rc = icm__ident_parse(identifier, &ns, &name);
    if (rc == 0)
        rc = icm__ident_make(&ident, ns, name);
    if (rc != 0) {
        icm__free(ns);
        icm__free(name);
        return rc;
    }
    icm_table_ident id = ident.id;
    rc = cat->methods->drop_table != NULL ? cat->methods->drop_table(cat, &id)
                                          : no_method(cat, "drop tables");
    icm__ident_dispose(&ident);
    icm__free(ns);
    icm__free(name);
    return rc;
}
