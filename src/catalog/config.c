/*
 * catalog/config.c: catalog configuration as PyIceberg users have it (pyiceberg/utils/config.py
 * and catalog/__init__.py load_catalog): the first `.pyiceberg.yaml` found (explicit file, else
 * $PYICEBERG_HOME, home, current directory), then PYICEBERG_* environment variables, then
 * explicit overrides; and opening the catalog those properties describe.
 *
 * The configuration is kept as a flat list of (key path, value) entries with lower-cased keys:
 * ("catalog", "prod", "uri") = "sqlite:///x.db", ("default-catalog") = "prod".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef ICM_WITH_YAML
#include <yaml.h>
#endif

#include "catalog/catalog_internal.h"
#include "catalog/sql/store.h"
#include "util/util.h"

extern char **environ;

#define MAX_DEPTH 3 /* PyIceberg splits environment keys into at most 3 parts */

typedef struct cfg_entry {
    char *path[MAX_DEPTH]; /* lower-case keys; unused levels NULL */
    char *value;
} cfg_entry;

typedef struct cfg {
    cfg_entry *items;
    size_t len, cap;
    char *file; /* the YAML file read, or NULL */
} cfg;

static void cfg_dispose(cfg *c)
{
    for (size_t i = 0; i < c->len; i++) {
        for (int d = 0; d < MAX_DEPTH; d++)
            icm__free(c->items[i].path[d]);
        icm__free(c->items[i].value);
    }
    icm__free(c->items);
    icm__free(c->file);
    memset(c, 0, sizeof *c);
}

static char *lower_dup(const char *s, size_t n)
{
    char *d = icm__strndup(s, n);
    for (char *p = d; p != NULL && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static bool same_path(const cfg_entry *e, char *const *path)
{
    for (int d = 0; d < MAX_DEPTH; d++) {
        if ((e->path[d] == NULL) != (path[d] == NULL))
            return false;
        if (e->path[d] != NULL && strcmp(e->path[d], path[d]) != 0)
            return false;
    }
    return true;
}

/* Set path = value, replacing an entry with the same path. Takes the path strings. */
static int cfg_set(cfg *c, char **path, const char *value)
{
    char *v = icm__strdup(value);
    if (v == NULL)
        goto oom;
    for (size_t i = 0; i < c->len; i++) {
        if (same_path(&c->items[i], path)) {
            icm__free(c->items[i].value);
            c->items[i].value = v;
            for (int d = 0; d < MAX_DEPTH; d++)
                icm__free(path[d]);
            return 0;
        }
    }
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        cfg_entry *items = icm__reallocarray(c->items, cap, sizeof *items);
        if (items == NULL)
            goto oom;
        c->items = items;
        c->cap = cap;
    }
    cfg_entry *e = &c->items[c->len++];
    for (int d = 0; d < MAX_DEPTH; d++)
        e->path[d] = path[d];
    e->value = v;
    return 0;
oom:
    icm__free(v);
    for (int d = 0; d < MAX_DEPTH; d++)
        icm__free(path[d]);
    return ICM_ENOMEM;
}

static const char *cfg_get(const cfg *c, const char *a, const char *b, const char *k)
{
    for (size_t i = 0; i < c->len; i++) {
        const cfg_entry *e = &c->items[i];
        if (e->path[0] != NULL && strcmp(e->path[0], a) == 0 &&
            ((b == NULL && e->path[1] == NULL) ||
             (b != NULL && e->path[1] != NULL && strcmp(e->path[1], b) == 0)) &&
            ((k == NULL && e->path[2] == NULL) ||
             (k != NULL && e->path[2] != NULL && strcmp(e->path[2], k) == 0)))
            return e->value;
    }
    return NULL;
}

/* ---- YAML ---- */

#ifdef ICM_WITH_YAML

typedef struct yaml_walk {
    cfg *c;
    const char *file;
    yaml_document_t *doc;
    int nesting; /* current mapping nesting, bounded so a hostile file cannot exhaust the stack */
} yaml_walk;

#define MAX_YAML_NESTING 32

static int yaml_shape_error(const yaml_walk *w, const yaml_node_t *node, const char *what)
{
    int rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, w->file, "%s (line %lu)", what,
                            (unsigned long)node->start_mark.line + 1);
    icm__error_set_position((int64_t)node->start_mark.line + 1,
                            (int64_t)node->start_mark.column + 1, -1);
    return rc;
}

/* Record every scalar below `node` under `prefix` (depth keys so far); levels below the third
 * are joined with '.' into the third key. */
static int walk_mapping(yaml_walk *w, yaml_node_t *node, char **prefix, int depth);

static int walk_node(yaml_walk *w, yaml_node_t *node, char **prefix, int depth)
{
    if (node->type == YAML_SCALAR_NODE) {
        if (depth == 0)
            return yaml_shape_error(w, node, "configuration must be a mapping");
        char *path[MAX_DEPTH] = {NULL, NULL, NULL};
        for (int d = 0; d < depth && d < MAX_DEPTH; d++) {
            path[d] = icm__strdup(prefix[d]);
            if (path[d] == NULL) {
                for (int k = 0; k < d; k++)
                    icm__free(path[k]);
                return ICM_ENOMEM;
            }
        }
        return cfg_set(w->c, path, (const char *)node->data.scalar.value);
    }
    if (node->type == YAML_SEQUENCE_NODE)
        return 0; /* no catalog setting is a list; PyIceberg would keep it, we ignore it */
    if (w->nesting >= MAX_YAML_NESTING)
        return yaml_shape_error(w, node, "mappings nested too deeply");
    w->nesting++;
    int rc = walk_mapping(w, node, prefix, depth);
    w->nesting--;
    return rc;
}

static int walk_mapping(yaml_walk *w, yaml_node_t *node, char **prefix, int depth)
{
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = yaml_document_get_node(w->doc, p->key);
        yaml_node_t *value = yaml_document_get_node(w->doc, p->value);
        if (key == NULL || value == NULL || key->type != YAML_SCALAR_NODE)
            return yaml_shape_error(w, node, "mapping keys must be plain scalars");
        char *k = lower_dup((const char *)key->data.scalar.value, key->data.scalar.length);
        if (k == NULL)
            return ICM_ENOMEM;
        int rc;
        if (depth < MAX_DEPTH) {
            prefix[depth] = k;
            rc = walk_node(w, value, prefix, depth + 1);
        } else {
            char *joined = icm__sprintf("%s.%s", prefix[MAX_DEPTH - 1], k);
            char *saved = prefix[MAX_DEPTH - 1];
            prefix[MAX_DEPTH - 1] = joined;
            rc = joined != NULL ? walk_node(w, value, prefix, depth) : ICM_ENOMEM;
            prefix[MAX_DEPTH - 1] = saved;
            icm__free(joined);
        }
        icm__free(k);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int load_yaml(cfg *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return icm__error_set_errno(ICM_ERRCLASS_CATALOG, icm__errno_to_code(errno), errno, path,
                                    "cannot open configuration file");
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = 0;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return icm__error_oom();
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, path, "YAML: %s (line %lu)",
                            parser.problem != NULL ? parser.problem : "syntax error",
                            (unsigned long)parser.problem_mark.line + 1);
        yaml_parser_delete(&parser);
        fclose(f);
        return rc;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root != NULL) {
        yaml_walk w = {c, path, &doc, 0};
        char *prefix[MAX_DEPTH] = {NULL, NULL, NULL};
        rc = walk_node(&w, root, prefix, 0);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc == 0) {
        c->file = icm__strdup(path);
        rc = c->file != NULL ? 0 : ICM_ENOMEM;
    }
    return rc;
}
#else
/* Built with ICM_WITH_YAML=OFF: a configuration file is refused rather than skipped, because
 * skipping it would silently pick another catalog than the one the user configured. */
static int load_yaml(cfg *c, const char *path)
{
    (void)c;
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, path,
                          "cannot read the catalog configuration file: icemaint was built "
                          "without YAML support (ICM_WITH_YAML=OFF)");
}
#endif

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* PyIceberg's search: $PYICEBERG_HOME, then home, then the current directory. */
static int find_and_load(cfg *c, const icm_catalog_config_options *o)
{
    if (o->config_file != NULL) {
        if (!is_file(o->config_file))
            return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, o->config_file,
                                  "configuration file does not exist");
        return load_yaml(c, o->config_file);
    }
    if (o->ignore_environment)
        return 0;
    char cwd[4096];
    const char *dirs[] = {getenv("PYICEBERG_HOME"), getenv("HOME"),
                          getcwd(cwd, sizeof cwd) != NULL ? cwd : NULL};
    for (size_t i = 0; i < ICM__ARRAY_LEN(dirs); i++) {
        if (dirs[i] == NULL || dirs[i][0] == '\0')
            continue;
        char *path = icm__sprintf("%s/.pyiceberg.yaml", dirs[i]);
        if (path == NULL)
            return ICM_ENOMEM;
        int rc = is_file(path) ? load_yaml(c, path) : 1;
        icm__free(path);
        if (rc <= 0)
            return rc; /* loaded (0) or failed */
    }
    return 0;
}

/* PyIceberg's part normalisation: "__" (left in the last part by the split) → '.', then
 * '_' → '-'; in place. */
static void normalise_env_part(char *part)
{
    char *w = part;
    for (const char *r = part; *r; r++) {
        if (r[0] == '_' && r[1] == '_') {
            *w++ = '.';
            r++;
        } else {
            *w++ = *r == '_' ? '-' : *r;
        }
    }
    *w = '\0';
}

/* PYICEBERG_A__B__C=v → path (a, b, c); split at most twice, as PyIceberg does. */
static int apply_env_var(cfg *c, const char *entry)
{
    static const char prefix[] = "pyiceberg_";
    const char *eq = strchr(entry, '=');
    size_t plen = sizeof prefix - 1;
    if (eq == NULL || (size_t)(eq - entry) <= plen || strncasecmp(entry, prefix, plen) != 0)
        return 0;
    char *key = lower_dup(entry + plen, (size_t)(eq - entry) - plen);
    if (key == NULL)
        return ICM_ENOMEM;
    char *path[MAX_DEPTH] = {NULL, NULL, NULL};
    const char *start = key;
    int rc = 0;
    for (int d = 0; d < MAX_DEPTH && start != NULL && rc == 0; d++) {
        const char *sep = d < MAX_DEPTH - 1 ? strstr(start, "__") : NULL;
        size_t n = sep != NULL ? (size_t)(sep - start) : strlen(start);
        path[d] = icm__strndup(start, n);
        if (path[d] == NULL) {
            rc = ICM_ENOMEM;
            break;
        }
        normalise_env_part(path[d]);
        start = sep != NULL ? sep + 2 : NULL;
    }
    icm__free(key);
    if (rc != 0) {
        for (int d = 0; d < MAX_DEPTH; d++)
            icm__free(path[d]);
        return rc;
    }
    return cfg_set(c, path, eq + 1);
}

static int apply_environment(cfg *c)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        int rc = apply_env_var(c, *e);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- resolve ---- */

static const char *prop_of(const icm_property *p, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].key, key) == 0)
            return p[i].value;
    return NULL;
}

void icm_catalog_properties_free(icm_property *props, size_t n)
{
    if (props == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        icm__free((char *)props[i].key);
        icm__free((char *)props[i].value);
    }
    icm__free(props);
}

static int push_prop(icm__ptrvec *keys, icm__ptrvec *values, const char *k, const char *v)
{
    for (size_t i = 0; i < keys->len; i++) {
        if (strcmp(keys->items[i], k) == 0) {
            char *nv = icm__strdup(v);
            if (nv == NULL)
                return ICM_ENOMEM;
            icm__free(values->items[i]);
            values->items[i] = nv;
            return 0;
        }
    }
    char *kk = icm__strdup(k), *vv = icm__strdup(v);
    if (kk == NULL || vv == NULL || icm__ptrvec_push(keys, kk) != 0) {
        icm__free(kk);
        icm__free(vv);
        return ICM_ENOMEM;
    }
    if (icm__ptrvec_push(values, vv) != 0) {
        keys->len--;
        icm__free(kk);
        icm__free(vv);
        return ICM_ENOMEM;
    }
    return 0;
}

/* icm_catalog_config_resolve, also telling which YAML file was read (*out_file: new string, or
 * NULL when none; may be NULL when not wanted). */
/* Every catalog's `uri` the configuration holds (YAML and environment), new strings. */
static int collect_uris(const cfg *c, icm__ptrvec *out)
{
    for (size_t i = 0; i < c->len; i++) {
        const cfg_entry *e = &c->items[i];
        if (e->path[0] == NULL || strcmp(e->path[0], "catalog") != 0 || e->path[1] == NULL ||
            e->path[2] == NULL || strcmp(e->path[2], "uri") != 0 || e->value == NULL)
            continue;
        char *copy = icm__strdup(e->value);
        if (copy == NULL || icm__ptrvec_push(out, copy) != 0) {
            icm__free(copy);
            return ICM_ENOMEM;
        }
    }
    return 0;
}

/* The chosen catalog's properties; with out_file the YAML file read, and with out_uris every
 * catalog's uri the configuration names. */
static int resolve_config(const icm_catalog_config_options *opts, char **out_name,
                          icm_property **out_props, size_t *out_n, char **out_file,
                          icm__ptrvec *out_uris)
{
    static const icm_catalog_config_options defaults = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    const icm_catalog_config_options *o = opts != NULL ? opts : &defaults;
    *out_name = NULL;
    *out_props = NULL;
    *out_n = 0;
    if (o->version > ICM_CATALOG_CONFIG_OPTIONS_VERSION) /* 0 is taken as 1 */
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL,
                              "icm_catalog_config_options: unknown version %u (use "
                              "ICM_CATALOG_CONFIG_OPTIONS_INIT)",
                              o->version);
    cfg c = {NULL, 0, 0, NULL};
    icm__ptrvec keys = ICM__PTRVEC_INIT, values = ICM__PTRVEC_INIT;
    char *name = NULL;
    int rc = find_and_load(&c, o);
    if (rc == 0 && !o->ignore_environment)
        rc = apply_environment(&c);
    if (rc == 0 && out_uris != NULL)
        rc = collect_uris(&c, out_uris);
    if (rc != 0)
        goto done;
    const char *dflt = cfg_get(&c, "default-catalog", NULL, NULL);
    const char *chosen = o->name != NULL ? o->name : (dflt != NULL && dflt[0] ? dflt : "default");
    /* The lookup is case-insensitive; the catalog keeps the name as given (PyIceberg passes it
     * unchanged to the catalog, so it is what the catalog_name column holds). */
    char *lookup = lower_dup(chosen, strlen(chosen));
    name = icm__strdup(chosen);
    if (name == NULL || lookup == NULL) {
        icm__free(lookup);
        rc = ICM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < c.len && rc == 0; i++) {
        const cfg_entry *e = &c.items[i];
        if (e->path[0] != NULL && strcmp(e->path[0], "catalog") == 0 && e->path[1] != NULL &&
            strcmp(e->path[1], lookup) == 0 && e->path[2] != NULL)
            rc = push_prop(&keys, &values, e->path[2], e->value);
    }
    icm__free(lookup);
    /* Explicit values win, but (PyIceberg's merge_config) an empty one does not override. */
    if (rc == 0 && o->uri != NULL && o->uri[0] != '\0')
        rc = push_prop(&keys, &values, "uri", o->uri);
    if (rc == 0 && o->warehouse != NULL && o->warehouse[0] != '\0')
        rc = push_prop(&keys, &values, "warehouse", o->warehouse);
    if (rc != 0)
        goto done;
    icm_property *props = icm__calloc(keys.len ? keys.len : 1, sizeof *props);
    if (props == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < keys.len; i++) {
        props[i].key = keys.items[i];
        props[i].value = values.items[i];
    }
    *out_props = props;
    *out_n = keys.len;
    keys.len = values.len = 0; /* moved into props */
    *out_name = name;
    name = NULL;
    if (out_file != NULL) {
        *out_file = c.file; /* moved */
        c.file = NULL;
    }
done:
    icm__ptrvec_dispose(&keys, icm__free);
    icm__ptrvec_dispose(&values, icm__free);
    icm__free(name);
    cfg_dispose(&c);
    return rc;
}

int icm_catalog_config_resolve(char **out_name, icm_property **out_props,
                               size_t *out_n, const icm_catalog_config_options *opts)
{
    return resolve_config(opts, out_name, out_props, out_n, NULL, NULL);
}

static int push_copy(icm__ptrvec *files, const char *f)
{
    for (size_t i = 0; i < files->len; i++)
        if (strcmp(files->items[i], f) == 0)
            return 0;
    char *copy = icm__strdup(f);
    if (copy == NULL || icm__ptrvec_push(files, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

/* Append `name` (and, when `sqlite`, its -journal, -wal and -shm). */
static int push_with_companions(icm__ptrvec *files, const char *name, bool sqlite)
{
    static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < (sqlite ? 4u : 1u); i++) {
        char *f = icm__sprintf("%s%s", name, suffixes[i]);
        rc = f != NULL ? push_copy(files, f) : ICM_ENOMEM;
        icm__free(f);
    }
    return rc;
}

/* Where `path` really is when links lead elsewhere (new string), or NULL: the file itself, or
 * (when it does not exist, as a -wal between checkpoints) its folder. */
static char *real_path_of(const char *path)
{
    char *real = realpath(path, NULL);
    if (real != NULL)
        return real;
    const char *slash = strrchr(path, '/');
    if (slash == NULL || slash == path)
        return NULL;
    char *dir = icm__strndup(path, (size_t)(slash - path));
    char *real_dir = dir != NULL ? realpath(dir, NULL) : NULL;
    char *joined = real_dir != NULL ? icm__sprintf("%s%s", real_dir, slash) : NULL;
    free(real_dir);
    icm__free(dir);
    if (joined == NULL)
        return NULL;
    real = strdup(joined); /* free()-able like realpath's */
    icm__free(joined);
    return real;
}

/* Append the canonical form of `path` and, when links lead elsewhere, its real path (each
 * with -journal, -wal and -shm when `sqlite`): a file reached through a link is protected
 * under both names (issue #16: the real catalog.yaml behind --config link.yaml was swept). */
static int push_own_file(icm__ptrvec *files, const char *path, bool sqlite)
{
    char *canon = NULL;
    int rc = icm_location_canonical(&canon, path);
    if (rc == 0)
        rc = push_with_companions(files, canon, sqlite);
    char *real = rc == 0 ? real_path_of(canon) : NULL;
    if (real != NULL)
        rc = push_with_companions(files, real, sqlite);
    free(real);
    icm__free(canon);
    return rc;
}

/* The SQLite database of every catalog the configuration names (the chosen one's uri first,
 * overrides applied), each with its companions. */
static int push_databases(icm__ptrvec *files, const char *chosen_uri, const icm__ptrvec *uris)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i <= uris->len; i++) {
        char *db = NULL;
        rc = icm__sqlite_path_from_uri(i == 0 ? chosen_uri : uris->items[i - 1], &db);
        if (rc == 0 && db != NULL)
            rc = push_own_file(files, db, true);
        icm__free(db);
    }
    return rc;
}

int icm_catalog_config_own_files(char ***out, size_t *out_n,
                                 const icm_catalog_config_options *opts)
{
    *out = NULL;
    *out_n = 0;
    char *name = NULL, *file = NULL;
    icm_property *props = NULL;
    size_t n = 0;
    icm__ptrvec files = ICM__PTRVEC_INIT, uris = ICM__PTRVEC_INIT;
    int rc = resolve_config(opts, &name, &props, &n, &file, &uris);
    if (rc == 0 && file != NULL)
        rc = push_own_file(&files, file, false);
    if (rc == 0)
        rc = push_databases(&files, prop_of(props, n, "uri"), &uris);
    if (rc == 0) {
        *out = (char **)files.items;
        *out_n = files.len;
        files.items = NULL;
        files.len = 0;
    }
    icm__ptrvec_dispose(&files, icm__free);
    icm__ptrvec_dispose(&uris, icm__free);
    icm__free(file);
    icm__free(name);
    icm_catalog_properties_free(props, n);
    return rc;
}

void icm_catalog_own_files_free(char **files, size_t n)
{
    for (size_t i = 0; files != NULL && i < n; i++)
        icm__free(files[i]);
    icm__free(files);
}

/* ---- open ---- */

static const char *prop(const icm_property *p, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].key, key) == 0)
            return p[i].value;
    return NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
    return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_http(const char *uri)
{
    return uri != NULL && (strncasecmp(uri, "http://", 7) == 0 ||
                           strncasecmp(uri, "https://", 8) == 0);
}

/* PyIceberg's rule: `type` when given, else a uri starting with http(s) is a REST catalog. */
static bool is_rest(const icm_property *p, size_t n)
{
    const char *type = prop(p, n, "type");
    if (type != NULL && type[0] != '\0')
        return strcasecmp(type, "rest") == 0;
    return is_http(prop(p, n, "uri"));
}

/* `file`: the configuration file read (NULL: none was found or named), for the message when
 * it holds no entry for the catalog. */
static int open_resolved(icm_catalog **out, const char *name, const icm_property *p, size_t n,
                         icm_fileio *io, const char *file)
{
    const char *type = prop(p, n, "type");
    const char *uri = prop(p, n, "uri");
    const char *warehouse = prop(p, n, "warehouse");
    if (type != NULL && type[0] != '\0') {
        if (strcasecmp(type, "sql") == 0)
            return icm_catalog_open_sql(out, name, uri, warehouse, io, p, n);
        if (strcasecmp(type, "in-memory") == 0)
            return icm_catalog_open_sql(out, name, uri != NULL ? uri : "sqlite:///:memory:",
                                        warehouse, io, p, n);
        if (strcasecmp(type, "hadoop") == 0 || strcasecmp(type, "filesystem") == 0)
            return icm_catalog_open_hadoop(out, name, warehouse, io);
        if (strcasecmp(type, "rest") == 0)
            return icm_catalog_open_rest(out, name, io, p, n);
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, name,
                              "catalog type '%s' is not supported (sql, in-memory, hadoop, "
                              "rest)",
                              type);
    }
    if (starts_with(uri, "sqlite") || starts_with(uri, "postgres"))
        return icm_catalog_open_sql(out, name, uri, warehouse, io, p, n);
    if (is_http(uri))
        return icm_catalog_open_rest(out, name, io, p, n);
    char shown[512];
    if (uri != NULL && uri[0] != '\0') {
        icm__redact_uri(uri, shown, sizeof shown);
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, shown,
                              "cannot use a catalog with this uri (supported: sqlite, "
                              "postgresql, http(s) for REST; or type: hadoop with a "
                              "warehouse)");
    }
    if (warehouse != NULL && warehouse[0] != '\0')
        return icm_catalog_open_hadoop(out, name, warehouse, io);
    char upper[128];
    size_t i = 0;
    for (; name[i] != '\0' && i + 1 < sizeof upper; i++)
        upper[i] = (char)toupper((unsigned char)name[i]);
    upper[i] = '\0';
    if (file != NULL)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, file,
                              "no configuration for catalog '%s' in this file: set "
                              "catalog.%s.uri (or its warehouse) here, "
                              "PYICEBERG_CATALOG__%s__URI, or pass --uri / --warehouse",
                              name, name, upper);
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ENOTFOUND, name,
                          "no configuration for catalog '%s': set catalog.%s.uri in "
                          ".pyiceberg.yaml ($PYICEBERG_HOME, ~ or the current directory; none "
                          "was found), PYICEBERG_CATALOG__%s__URI, or pass --uri / --warehouse",
                          name, name, upper);
}

int icm_catalog_open_config(icm_catalog **out, const icm_catalog_config_options *opts)
{
    *out = NULL;
    char *name = NULL, *file = NULL;
    icm_property *props = NULL;
    size_t n = 0;
    icm_fileio *owned = NULL;
    icm_fileio *io = opts != NULL ? opts->io : NULL;
    int rc = resolve_config(opts, &name, &props, &n, &file, NULL);
    if (rc == 0 && io == NULL) {
        /* A REST catalog's tables live where their metadata says (often an object store),
         * with credentials the catalog vends per table: a resolving FileIO from the same
         * properties, from which each table's FileIO is derived. */
        rc = is_rest(props, n) ? icm_fileio_resolving_new(&owned, props, n)
                               : icm_fileio_local_new(&owned);
        io = owned;
    }
    if (rc == 0)
        rc = open_resolved(out, name, props, n, io, file);
    if (rc == 0 && owned != NULL) {
        (*out)->owned_io = owned;
        owned = NULL;
    }
    icm_fileio_free(owned);
    icm_catalog_properties_free(props, n);
    icm__free(name);
    icm__free(file);
    return rc;
}
