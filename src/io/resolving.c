/*
 * io/resolving.c: a FileIO that picks the back end by each location's URI scheme, builds it
 * lazily from properties, and the process-wide registry of scheme constructors.
 *
 * A resolving FileIO holds a copy of its properties (PyIceberg's names: `s3.endpoint`,
 * `s3.region`, ...; a per-table one made by icm_fileio_for_table has the base's overlaid by the
 * table's) and the back ends it built so far, one per constructor (so `s3`, `s3a` and `s3n`,
 * registered with one constructor, share one back end). A back end is built the first time a
 * location needs it, under the FileIO's mutex, and lives until the FileIO is freed; calls go to
 * it through the public wrappers, without the mutex, so the resolving FileIO is as thread-safe
 * as its back ends.
 *
 * Constructors: the registry (icm_fileio_register_scheme; a fixed table under a mutex, so
 * registering never allocates) first, then the built-ins: local files, S3 (`s3`, `s3a`, `s3n`,
 * one constructor), and the in-memory store for `mem` in builds with the testing back ends. The
 * other object-store schemes are known by name so that their error says which back end is
 * missing.
 */
#include <pthread.h>
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "icemaint/testing/fileio.h"
#include "io/fileio_internal.h"
#include "io/fileio_refresh.h"
#include "io/probe.h"
#include "util/location.h"
#include "util/util.h"

#define MAX_SCHEMES 32
#define MAX_SCHEME_LEN 31

/* ---- the registry -------------------------------------------------------------------------- */

typedef struct registration {
    char scheme[MAX_SCHEME_LEN + 1];
    icm_fileio_factory factory;
    void *payload;
} registration;

static pthread_mutex_t g_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static registration g_registry[MAX_SCHEMES];
static size_t g_n_registered;

/* A scheme as registered and compared: 1 to MAX_SCHEME_LEN characters of RFC 3986's scheme
 * syntax (a letter, then letters, digits, `+`, `-`, `.`), lower-cased into buf. */
static bool scheme_normalise(const char *s, size_t len, char buf[MAX_SCHEME_LEN + 1])
{
    if (len == 0 || len > MAX_SCHEME_LEN)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        bool other = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
        if (!alpha && (i == 0 || !other))
            return false;
        buf[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    buf[len] = '\0';
    return true;
}

int icm_fileio_register_scheme(const char *scheme, icm_fileio_factory factory, void *payload)
{
    char key[MAX_SCHEME_LEN + 1];
    if (scheme == NULL || !scheme_normalise(scheme, strlen(scheme), key))
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                              "register scheme: \"%s\" is not a URI scheme (a letter, then "
                              "letters, digits, '+', '-' or '.'; at most %d)",
                              scheme != NULL ? scheme : "(null)", MAX_SCHEME_LEN);
    int rc = 0;
    pthread_mutex_lock(&g_registry_lock);
    size_t i = 0;
    while (i < g_n_registered && strcmp(g_registry[i].scheme, key) != 0)
        i++;
    if (factory == NULL) {
        if (i < g_n_registered)
            g_registry[i] = g_registry[--g_n_registered];
    } else if (i < g_n_registered) {
        g_registry[i].factory = factory;
        g_registry[i].payload = payload;
    } else if (g_n_registered == MAX_SCHEMES) {
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                            "register scheme %s: %d schemes are registered already", key,
                            MAX_SCHEMES);
    } else {
        registration *r = &g_registry[g_n_registered++];
        memcpy(r->scheme, key, sizeof key);
        r->factory = factory;
        r->payload = payload;
    }
    pthread_mutex_unlock(&g_registry_lock);
    return rc;
}

/* ---- built-in constructors ------------------------------------------------------------------ */

static int local_factory(icm_fileio **out, const icm_property *props, size_t n, void *payload)
{
    (void)props;
    (void)n;
    (void)payload;
    return icm_fileio_local_new(out);
}

/* One constructor for s3, s3a and s3n, so the three schemes share one back end (one connection
 * pool, one in-flight limit, one set of credentials). */
static int s3_factory(icm_fileio **out, const icm_property *props, size_t n, void *payload)
{
    (void)payload;
    return icm_fileio_s3_new(out, props, n);
}

#ifdef ICM_TESTING_FILEIO
static int mem_factory(icm_fileio **out, const icm_property *props, size_t n, void *payload)
{
    (void)props;
    (void)n;
    (void)payload;
    return icm_fileio_mem_new(out);
}
#endif

/* Schemes whose back end is known by name (what a missing one is called), and the built-in
 * constructor where this build has one. */
static const struct known_scheme {
    const char *scheme;
    const char *back_end;
    icm_fileio_factory builtin;
} KNOWN[] = {
    {"file", "local", local_factory},
    {"s3", "S3", s3_factory},
    {"s3a", "S3", s3_factory},
    {"s3n", "S3", s3_factory},
    {"gs", "GCS", NULL},
    {"abfs", "ADLS", NULL},
    {"abfss", "ADLS", NULL},
    {"wasb", "Azure Blob", NULL},
    {"wasbs", "Azure Blob", NULL},
#ifdef ICM_TESTING_FILEIO
    {"mem", "in-memory", mem_factory},
#else
    {"mem", "in-memory (testing)", NULL},
#endif
};

/* The constructor for `location`'s scheme: a registered one, else a built-in one; a location
 * the local back end takes (a path, `file:`) has the scheme `file`. ICM_EUNSUPPORTED naming
 * what is missing. */
static int factory_for(const char *location, icm_fileio_factory *factory, void **payload)
{
    char key[MAX_SCHEME_LEN + 1] = "file";
    if (icm__location_local_part(location) == NULL) {
        const char *colon = strchr(location, ':');
        if (colon == NULL || !scheme_normalise(location, (size_t)(colon - location), key))
            return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, location,
                                  "no FileIO back end for this location (no URI scheme the "
                                  "resolving FileIO knows)");
    }
    *factory = NULL;
    *payload = NULL;
    pthread_mutex_lock(&g_registry_lock);
    for (size_t i = 0; i < g_n_registered; i++) {
        if (strcmp(g_registry[i].scheme, key) == 0) {
            *factory = g_registry[i].factory;
            *payload = g_registry[i].payload;
        }
    }
    pthread_mutex_unlock(&g_registry_lock);
    if (*factory != NULL)
        return 0;
    for (size_t i = 0; i < ICM__ARRAY_LEN(KNOWN); i++) {
        if (strcmp(KNOWN[i].scheme, key) != 0)
            continue;
        if (KNOWN[i].builtin != NULL) {
            *factory = KNOWN[i].builtin;
            return 0;
        }
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, location,
                              "no %s back end in this build (scheme %s); register one with "
                              "icm_fileio_register_scheme",
                              KNOWN[i].back_end, key);
    }
    return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, location,
                          "no FileIO back end for the URI scheme %s", key);
}

/* ---- the resolving FileIO ------------------------------------------------------------------- */

typedef struct built {
    icm_fileio_factory factory;
    void *payload;
    icm_fileio *io;
} built;

typedef struct resolving_fileio {
    icm_fileio base;
    pthread_mutex_t lock;
    icm_property *props; /* keys unique; strings owned */
    size_t n_props;
    built *built;
    size_t n_built;
    size_t cap_built;
    /* Renews the table's storage credentials (icm__fileio_for_table_refreshing): handed to
     * the built-in S3 back end; refresh NULL when none. Released after the back ends. */
    icm__fileio_refresher refresher;
} resolving_fileio;

static const icm_fileio_methods resolving_methods;

/* The back end for `location` (borrowed: it lives as long as r), built on first use. */
static int backend_for(resolving_fileio *r, const char *location, icm_fileio **out)
{
    icm_fileio_factory factory = NULL;
    void *payload = NULL;
    int rc = factory_for(location, &factory, &payload);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&r->lock);
    *out = NULL;
    for (size_t i = 0; i < r->n_built && *out == NULL; i++)
        if (r->built[i].factory == factory && r->built[i].payload == payload)
            *out = r->built[i].io;
    if (*out == NULL && r->n_built == r->cap_built) {
        size_t cap = r->cap_built != 0 ? r->cap_built * 2 : 4;
        built *b = icm__reallocarray(r->built, cap, sizeof *b);
        if (b == NULL) {
            rc = ICM_ENOMEM;
        } else {
            r->built = b;
            r->cap_built = cap;
        }
    }
    if (*out == NULL && rc == 0) {
        icm_fileio *io = NULL;
        if (factory == s3_factory && r->refresher.refresh != NULL)
            rc = icm__fileio_s3_new_refreshing(&io, r->props, r->n_props, &r->refresher);
        else
            rc = factory(&io, r->props, r->n_props, payload);
        if (rc == 0 && io == NULL)
            rc = icm__error_set(ICM_ERRCLASS_IO, ICM_ERROR, location,
                                "a FileIO constructor returned success and no back end");
        if (rc == 0) {
            r->built[r->n_built++] = (built){factory, payload, io};
            *out = io;
        } else if (icm_error_last()->location[0] == '\0') {
            icm__error_set_location(location);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

#define RESOLVE(io, location, b)                                                               \
    icm_fileio *b = NULL;                                                                      \
    int rc_ = backend_for((resolving_fileio *)(io), (location), &b);                           \
    if (rc_ < 0)                                                                               \
        return rc_

static int rs_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    RESOLVE(io, location, b);
    return icm_fileio_read(out, out_len, b, location);
}

static int rs_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                         size_t len, size_t *out_read)
{
    RESOLVE(io, location, b);
    return icm_fileio_read_range(out_read, b, location, offset, buf, len);
}

static int rs_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    RESOLVE(io, location, b);
    return icm_fileio_create_new(b, location, data, len);
}

static int rs_write_replace(icm_fileio *io, const char *location, const void *data, size_t len)
{
    RESOLVE(io, location, b);
    return icm_fileio_write_replace(b, location, data, len);
}

static int rs_remove(icm_fileio *io, const char *location)
{
    RESOLVE(io, location, b);
    return icm_fileio_delete(b, location); /* passes the missing note on */
}

static int rs_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    RESOLVE(io, location, b);
    return icm_fileio_stat(out, b, location);
}

static int rs_list_flags(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                         void *payload)
{
    RESOLVE(io, prefix, b);
    return icm_fileio_list_flags(b, prefix, flags, cb, payload);
}

static int rs_list_range(icm_fileio *io, const char *prefix, const icm_fileio_list_options *opts,
                         icm_list_cb cb, void *payload)
{
    RESOLVE(io, prefix, b);
    return icm_fileio_list_opts(b, prefix, opts, cb, payload);
}

static int rs_resolve(icm_fileio *io, const char *location, char **out)
{
    RESOLVE(io, location, b);
    return icm_fileio_resolve(out, b, location);
}

static int rs_checksum_of(icm_fileio *io, const char *location, char **out, icm_file_info *info)
{
    RESOLVE(io, location, b);
    return icm_fileio_checksum_of(out, info, b, location);
}

/* Items grouped by back end, one inner batch per back end; an item whose back end cannot be
 * had fails alone. */
static int rs_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                           icm_fileio_delete_result *results)
{
    resolving_fileio *r = (resolving_fileio *)io;
    icm_fileio **to = icm__calloc(n, sizeof *to);
    const char **group = icm__calloc(n, sizeof *group);
    size_t *group_idx = icm__calloc(n, sizeof *group_idx);
    icm_fileio_delete_result *group_res = icm__calloc(n, sizeof *group_res);
    int rc = to != NULL && group != NULL && group_idx != NULL && group_res != NULL ? 0
                                                                                   : ICM_ENOMEM;
    if (group_res != NULL)
        ICM_FILEIO_DELETE_RESULTS_INIT(group_res, n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int brc = backend_for(r, locations[i], &to[i]);
        if (brc == ICM_ENOMEM)
            rc = brc;
        else if (brc < 0)
            icm_fileio_delete_result_fail(&results[i], brc, false);
    }
    for (size_t first = 0; rc == 0 && first < n; first++) {
        icm_fileio *b = to[first];
        if (b == NULL)
            continue;
        size_t k = 0;
        for (size_t i = first; i < n; i++) {
            if (to[i] != b)
                continue;
            group[k] = locations[i];
            group_idx[k++] = i;
            to[i] = NULL; /* done */
        }
        (void)icm_fileio_delete_batch(group_res, b, group, k); /* a result per item either way */
        for (size_t j = 0; j < k; j++)
            results[group_idx[j]] = group_res[j];
    }
    icm__free(to);
    icm__free(group);
    icm__free(group_idx);
    icm__free(group_res);
    return rc;
}

static void free_props(icm_property *props, size_t n)
{
    icm__fileio_props_free(props, n);
}

void icm__fileio_props_free(icm_property *props, size_t n)
{
    for (size_t i = 0; props != NULL && i < n; i++) {
        icm__free((char *)(uintptr_t)props[i].key);
        icm__free((char *)(uintptr_t)props[i].value);
    }
    icm__free(props);
}

static void refresher_release(icm__fileio_refresher *f)
{
    if (f->free_payload != NULL)
        f->free_payload(f->payload);
    memset(f, 0, sizeof *f);
}

static void rs_free(icm_fileio *io)
{
    resolving_fileio *r = (resolving_fileio *)io;
    for (size_t i = 0; i < r->n_built; i++)
        icm_fileio_free(r->built[i].io);
    icm__free(r->built);
    refresher_release(&r->refresher); /* after the back ends that borrowed it */
    free_props(r->props, r->n_props);
    pthread_mutex_destroy(&r->lock);
    icm__free(r);
}

/* What the back end of the location's scheme says (a back end that cannot be built: the
 * careful answer). */
static int rs_is_local(icm_fileio *io, const char *location)
{
    RESOLVE(io, location, b);
    return icm__fileio_deletes_locally(b, location);
}

static const icm_fileio_methods resolving_methods = {
    ICM_FILEIO_METHODS_VERSION,
    "resolving",
    rs_read,
    rs_read_range,
    rs_create_new,
    rs_write_replace,
    rs_remove,
    rs_stat,
    NULL, /* list: list_flags instead */
    rs_free,
    rs_list_flags,
    rs_resolve,
    rs_checksum_of,
    rs_delete_batch,
    rs_list_range,
    rs_is_local,
};

/* Append (key, value) to props, replacing the value of an equal key (later sources win). */
static int put_prop(icm_property *props, size_t *n, const icm_property *p)
{
    if (p->key == NULL || p->key[0] == '\0' || p->value == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                              "FileIO property with an empty key or a NULL value");
    char *value = icm__strdup(p->value);
    if (value == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(props[i].key, p->key) == 0) {
            icm__free((char *)(uintptr_t)props[i].value);
            props[i].value = value;
            return 0;
        }
    }
    char *key = icm__strdup(p->key);
    if (key == NULL) {
        icm__free(value);
        return ICM_ENOMEM;
    }
    props[(*n)++] = (icm_property){key, value};
    return 0;
}

/* A new resolving FileIO with the properties of `a` overlaid by those of `b`. */
static int resolving_make(icm_fileio **out, const icm_property *a, size_t na,
                          const icm_property *b, size_t nb)
{
    *out = NULL;
    if ((a == NULL && na > 0) || (b == NULL && nb > 0))
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                              "resolving FileIO: NULL properties");
    size_t total;
    if (icm__add_overflow(na, nb, &total))
        return icm__error_oom();
    resolving_fileio *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return ICM_ENOMEM;
    r->props = total > 0 ? icm__calloc(total, sizeof *r->props) : NULL;
    int rc = total > 0 && r->props == NULL ? ICM_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < na + nb; i++)
        rc = put_prop(r->props, &r->n_props, i < na ? &a[i] : &b[i - na]);
    if (rc == 0 && pthread_mutex_init(&r->lock, NULL) != 0)
        rc = icm__error_set(ICM_ERRCLASS_OS, ICM_ERROR, NULL, "cannot create mutex");
    if (rc != 0) {
        free_props(r->props, r->n_props);
        icm__free(r);
        return rc;
    }
    r->base.methods = &resolving_methods;
    *out = &r->base;
    return 0;
}

int icm_fileio_resolving_new(icm_fileio **out, const icm_property *props, size_t n_props)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "NULL output");
    return resolving_make(out, props, n_props, NULL, 0);
}

int icm_fileio_for_table(icm_fileio **out, const icm_fileio *base,
                         const icm_property *table_props, size_t n_table_props)
{
    return icm__fileio_for_table_refreshing(out, base, table_props, n_table_props, NULL);
}

int icm__fileio_for_table_refreshing(icm_fileio **out, const icm_fileio *base,
                                     const icm_property *table_props, size_t n_table_props,
                                     const icm__fileio_refresher *refresher)
{
    icm__fileio_refresher taken = {0};
    if (refresher != NULL)
        taken = *refresher;
    if (out != NULL)
        *out = NULL;
    if (out == NULL || base == NULL || base->methods != &resolving_methods) {
        refresher_release(&taken);
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                              "FileIO for a table: NULL output, or the base is not a "
                              "resolving FileIO");
    }
    const resolving_fileio *r = (const resolving_fileio *)base;
    int rc = resolving_make(out, r->props, r->n_props, table_props, n_table_props);
    if (rc != 0) {
        refresher_release(&taken);
        return rc;
    }
    ((resolving_fileio *)*out)->refresher = taken;
    return 0;
}

int icm__fileio_resolving_backend(icm_fileio *io, const char *location, icm_fileio **out)
{
    *out = NULL;
    return backend_for((resolving_fileio *)io, location, out);
}

bool icm__fileio_is_resolving(const icm_fileio *io)
{
    return io != NULL && io->methods == &resolving_methods;
}

const char *icm_fileio_property(const icm_property *props, size_t n, const char *key)
{
    const char *found = NULL;
    for (size_t i = 0; props != NULL && key != NULL && i < n; i++)
        if (props[i].key != NULL && strcmp(props[i].key, key) == 0)
            found = props[i].value; /* the last one wins, as in a merge */
    return found;
}
