/*
 * catalog/hadoop.c: the filesystem ("Hadoop") catalog: a warehouse directory whose namespaces
 * are directories and whose tables are `<ns...>/<table>/metadata/v<N>.metadata.json` plus
 * `version-hint.text`. Also the single-table variant behind icm_table_open_dir.
 *
 * The commit publishes v<N+1> with FileIO create-new, which never replaces an existing file
 * (the local back end publishes with renameat2(RENAME_NOREPLACE) or link(), never rename()),
 * so of several writers racing from the same base exactly one gets v<N+1>; the others get
 * ICM_EEXISTS, a proven failure. No temp file of ours stays in metadata/. The hint is then
 * rewritten best-effort, as Java does (readers probe past a stale hint).
 *
 * On an object store that guarantee is the store's: S3 create-new is a PUT with
 * `If-None-Match: *`, and several S3-compatible stores accept the header and ignore it (the
 * second writer silently replaces the first's version: a lost commit, and its snapshot's files
 * later swept as orphans). So before the first commit (or table creation) at a location that
 * is not on this machine's file system, the catalog proves the store honours create-new: it
 * creates a fresh probe object (icemaint-create-new-probe-<uuid>) in the table's metadata
 * folder, creates it again (that must be ICM_EEXISTS) and deletes it; a store that lets the second create through is refused
 * (ICM_EUNSUPPORTED). There is no property to skip the probe: a wrong "yes" loses commits, and
 * the probe costs three requests per catalog handle.
 *
 * What a failed publish means is read from what the FileIO reported (settle_publish_error),
 * never from the back end's name.
 *
 * Namespace listing and creation need a local warehouse (directories do not exist in object
 * stores); table load and commit only use FileIO.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog/catalog_internal.h"
#include "io/fileio_internal.h" /* icm__fileio_deletes_locally */
#include "util/location.h"
#include "util/util.h"

typedef struct hadoop_catalog {
    icm_catalog base;
    char *warehouse;  /* NULL in single-table mode */
    char *table_dir;  /* single-table mode only */
    bool create_new_proven; /* the object store honoured create-new (probe_create_new) */
} hadoop_catalog;

static hadoop_catalog *as_hadoop(icm_catalog *cat)
{
    return (hadoop_catalog *)cat;
}

/* `<warehouse>/<ns levels as directories>[/<name>]` (new string). */
static char *ns_dir(const hadoop_catalog *h, const char *ns, const char *name)
{
    icm__buf b = ICM__BUF_INIT;
    icm__buf_puts(&b, h->warehouse);
    if (ns != NULL && ns[0] != '\0') {
        icm__buf_putc(&b, '/');
        for (const char *p = ns; *p; p++)
            icm__buf_putc(&b, *p == '.' ? '/' : *p);
    }
    if (name != NULL) {
        icm__buf_putc(&b, '/');
        icm__buf_puts(&b, name);
    }
    if (b.oom || b.data == NULL) {
        icm__buf_dispose(&b);
        icm__error_oom();
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

static char *table_dir(const hadoop_catalog *h, const icm_table_ident *id)
{
    return h->table_dir != NULL ? icm__strdup(h->table_dir) : ns_dir(h, id->ns, id->name);
}

static int hadoop_load_table(icm_catalog *cat, const icm_table_ident *id, char **out)
{
    char *dir = table_dir(as_hadoop(cat), id);
    if (dir == NULL)
        return ICM_ENOMEM;
    int rc = icm_table_metadata_find_current(out, cat->io, dir);
    icm__free(dir);
    return rc;
}

/* N of `v<N>.metadata.json`, `v<N>.gz.metadata.json`, `v<N>.metadata.json.gz`; -1 otherwise. */
static int64_t hadoop_version(const char *location)
{
    const char *name = icm__basename(location);
    if (name[0] != 'v' || name[1] < '0' || name[1] > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    long long n = strtoll(name + 1, &end, 10);
    bool known_suffix = strcmp(end, ".metadata.json") == 0 ||
                        strcmp(end, ".gz.metadata.json") == 0 ||
                        strcmp(end, ".metadata.json.gz") == 0;
    if (errno != 0 || !known_suffix)
        return -1;
    return (int64_t)n;
}

static char *version_file(const char *dir, int64_t n, const char *suffix)
{
    return icm__sprintf("%s/metadata/v%lld%s", dir, (long long)n, suffix);
}

/* Any spelling of version n present but `except` (NULL: none)? Writers with different codecs
 * name version n differently, and a create-new claims one name only: the check before the
 * create finds one published earlier, the check after it one published meanwhile. */
static int version_taken(icm_fileio *io, const char *dir, int64_t n, const char *except,
                         bool *out)
{
    static const char *const suffixes[] = {".metadata.json", ".gz.metadata.json",
                                           ".metadata.json.gz"};
    *out = false;
    for (size_t i = 0; i < ICM__ARRAY_LEN(suffixes) && !*out; i++) {
        char *loc = version_file(dir, n, suffixes[i]);
        if (loc == NULL)
            return ICM_ENOMEM;
        int rc = 0;
        if (except == NULL || strcmp(loc, except) != 0) {
            icm_file_info info = ICM_FILE_INFO_INIT;
            rc = icm_fileio_stat(&info, io, loc);
            if (rc == 0)
                *out = true;
            else if (rc == ICM_ENOTFOUND)
                rc = 0;
        }
        icm__free(loc);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Best effort, like Java: readers probe past a stale or missing hint. */
static void write_hint(icm_fileio *io, const char *dir, int64_t n)
{
    char text[32];
    int len = snprintf(text, sizeof text, "%lld", (long long)n);
    char *loc = icm__sprintf("%s/metadata/version-hint.text", dir);
    icm__error_saved *saved = icm__error_save();
    if (loc != NULL)
        (void)icm_fileio_write_replace(io, loc, text, (size_t)len);
    icm__error_restore(saved);
    icm__free(loc);
}

/* Whether a create-new failure may still have been applied by the store, now or later: the
 * back end said so (ICM_EOUTCOME_UNKNOWN: the conditional write was sent and its answer lost),
 * or the failure is one a back end meets after sending (network, timeout, an HTTP 5xx answer:
 * S3 does not promise a 5xx PUT was not applied). Any other failure is the back end refusing
 * the write (permission, a bad location, the local back end failing before it publishes). */
static bool may_have_landed(int create_rc, int http_status)
{
    return create_rc == ICM_EOUTCOME_UNKNOWN || create_rc == ICM_ENET ||
           create_rc == ICM_ETIMEOUT || http_status >= 500;
}

/* After a create-new error other than EEXISTS: did our content land at `target`? Our bytes
 * there are our commit (the local back end may fail syncing its folder after publishing);
 * anyone else's are a lost race (FAILED). Absent: FAILED when the back end refused the write,
 * UNKNOWN when it may still land (may_have_landed). A read-back that fails leaves it UNKNOWN. */
static int settle_publish_error(icm_fileio *io, int create_rc, const char *target,
                                const char *content, size_t len, bool *out_ours)
{
    *out_ours = false;
    char reason[512];
    snprintf(reason, sizeof reason, "%s", icm_error_last()->message);
    bool maybe_later = may_have_landed(create_rc, icm_error_last()->http_status);
    char *found = NULL;
    size_t found_len = 0;
    int rc = icm_fileio_read(&found, &found_len, io, target);
    if (rc == 0) {
        *out_ours = found_len == len && memcmp(found, content, len) == 0;
        icm_free(found);
        if (*out_ours)
            return 0;
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, target,
                              "commit failed: another writer published this version");
    }
    if (rc == ICM_ENOTFOUND && !maybe_later)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, target,
                              "commit failed: version file not published: %s", reason);
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, target,
                          "commit outcome unknown: publishing the version file failed (%s) "
                          "and its state could not be confirmed",
                          reason);
}

/* A probe step's failure: nothing was published, so the commit did not happen; a lost answer
 * on the probe says nothing about the table and is an I/O error, not an unknown commit. */
static int probe_failed(int rc, const char *where, const char *step)
{
    char reason[512];
    snprintf(reason, sizeof reason, "%s", icm_error_last()->message);
    if (rc == ICM_ENOMEM)
        return rc;
    return icm__error_set(ICM_ERRCLASS_CATALOG, rc == ICM_EAUTH ? ICM_EAUTH : ICM_EIO, where,
                          "nothing committed: checking that the store honours create-new "
                          "(%s) failed: %s", step, reason);
}

/* Prove, once per catalog handle, that the object store holding `dir` honours create-new
 * (file comment). Returns 0, ICM_EUNSUPPORTED (it does not), or the probe's failure. */
static int probe_create_new(hadoop_catalog *h, icm_fileio *io, const char *dir)
{
    if (h->create_new_proven)
        return 0;
    char *md_dir = icm__sprintf("%s/metadata", dir);
    if (md_dir == NULL)
        return ICM_ENOMEM;
    bool honoured = false;
    const char *step = NULL;
    int rc = icm__fileio_create_new_honoured(io, md_dir, &honoured, &step);
    icm__free(md_dir);
    if (rc != 0)
        return step != NULL ? probe_failed(rc, dir, step) : rc;
    if (!honoured)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, dir,
                              "refusing to commit a filesystem-layout table here: this store "
                              "ignores create-new (If-None-Match: *), so two writers could both "
                              "publish the same version and one commit would be lost; use a SQL "
                              "catalog for tables on this store");
    h->create_new_proven = true;
    return 0;
}

/* The probe, where it is needed: tables not on this machine's file system. */
static int require_create_new(icm_catalog *cat, const char *dir)
{
    if (icm__fileio_deletes_locally(cat->io, dir))
        return 0;
    return probe_create_new(as_hadoop(cat), cat->io, dir);
}

static int hadoop_commit(icm_catalog *cat, const icm_table_ident *id, const char *base_location,
                         const icm_table_metadata *md, char **out_file)
{
    *out_file = NULL;
    const char *custom = icm_table_metadata_property(md, "write.metadata.path");
    if (custom != NULL && custom[0] != '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, base_location,
                              "filesystem tables cannot use write.metadata.path (as in Java)");
    int64_t n = hadoop_version(base_location);
    if (n < 0)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, base_location,
                              "current metadata is not a v<N>.metadata.json file; cannot "
                              "commit a new version in filesystem layout");
    char *dir = table_dir(as_hadoop(cat), id);
    char *content = NULL, *target = NULL;
    size_t len = 0;
    bool gzip = false, taken = false, ours = false;
    int rc = dir != NULL ? icm__metadata_serialise(md, &content, &len, &gzip) : ICM_ENOMEM;
    if (rc == 0)
        rc = version_taken(cat->io, dir, n + 1, NULL, &taken);
    if (rc != 0)
        goto done;
    if (taken) {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, dir,
                            "commit failed: version %lld already exists (another commit won)",
                            (long long)(n + 1));
        goto done;
    }
    target = version_file(dir, n + 1, gzip ? ".gz.metadata.json" : ".metadata.json");
    if (target == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    if ((rc = require_create_new(cat, dir)) != 0)
        goto done;
    rc = icm_fileio_create_new(cat->io, target, content, len);
    if (rc == ICM_EEXISTS) {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, target,
                            "commit failed: version %lld already exists (another commit won)",
                            (long long)(n + 1));
        goto done;
    }
    if (rc != 0) {
        rc = settle_publish_error(cat->io, rc, target, content, len, &ours);
        if (rc != 0)
            goto done;
    }
    /* Published: unless a writer with another codec published version n + 1 under its own
     * spelling meanwhile. Readers then take one of the two (`.metadata.json` first), so which
     * commit counts is not ours to say: unknown, and nothing may be deleted on its strength. */
    rc = version_taken(cat->io, dir, n + 1, target, &taken);
    if (rc == 0 && taken)
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, target,
                            "commit outcome unknown: version %lld was also published under "
                            "another file name (a concurrent writer with another metadata "
                            "codec); readers may take either",
                            (long long)(n + 1));
    if (rc != 0) {
        /* Published: whatever failed now (memory too), the commit may count, so its files must
         * be kept: never a code a caller may clean up after. */
        if (rc != ICM_ECOMMIT_UNKNOWN) {
            char why[512]; /* the stat's message, before it is replaced */
            snprintf(why, sizeof why, "%s", icm_error_last()->message);
            rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, target,
                                "commit outcome unknown: version %lld was published, but "
                                "whether another spelling of it exists could not be told: %s",
                                (long long)(n + 1), why);
        }
        goto done;
    }
    write_hint(cat->io, dir, n + 1);
    *out_file = target;
    target = NULL;
done:
    icm_free(content);
    icm__free(target);
    icm__free(dir);
    return rc;
}

static int hadoop_create_table(icm_catalog *cat, const icm_table_ident *id,
                               const icm_table_metadata *md, char **out_location)
{
    hadoop_catalog *h = as_hadoop(cat);
    *out_location = NULL;
    char *dir = table_dir(h, id);
    char *content = NULL, *target = NULL, *current = NULL;
    size_t len = 0;
    bool gzip = false;
    if (dir == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    if (strcmp(icm_table_metadata_location(md), dir) != 0) {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, icm_table_metadata_location(md),
                            "a filesystem catalog table must live at its directory %s", dir);
        goto done;
    }
    rc = icm_table_metadata_find_current(&current, cat->io, dir);
    if (rc == 0) {
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EEXISTS, dir, "table already exists");
        goto done;
    }
    if (rc != ICM_ENOTFOUND)
        goto done;
    rc = icm__metadata_serialise(md, &content, &len, &gzip);
    if (rc == 0)
        rc = require_create_new(cat, dir);
    if (rc != 0)
        goto done;
    target = version_file(dir, 1, gzip ? ".gz.metadata.json" : ".metadata.json");
    rc = target != NULL ? icm_fileio_create_new(cat->io, target, content, len) : ICM_ENOMEM;
    if (rc == ICM_EEXISTS)
        rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EEXISTS, dir, "table already exists");
    if (rc != 0)
        goto done;
    write_hint(cat->io, dir, 1);
    *out_location = target;
    target = NULL;
done:
    icm_free(content);
    icm__free(current);
    icm__free(target);
    icm__free(dir);
    return rc;
}

static int hadoop_unsupported(icm_catalog *cat, const char *what)
{
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EUNSUPPORTED, cat->name,
                          "the filesystem catalog does not support %s", what);
}

static int hadoop_register_table(icm_catalog *cat, const icm_table_ident *id, const char *loc)
{
    (void)id;
    (void)loc;
    return hadoop_unsupported(cat, "register-table (as in Java's HadoopCatalog)");
}

static int hadoop_drop_table(icm_catalog *cat, const icm_table_ident *id)
{
    (void)id;
    return hadoop_unsupported(cat, "dropping a table without purging its directory");
}

/* ---- namespaces: local directories ---- */

static int local_dir(hadoop_catalog *h, const char *location, char **out)
{
    if (h->warehouse == NULL)
        return hadoop_unsupported(&h->base, "namespaces on a single table directory");
    if (!icm_location_local_path(out, location))
        return *out == NULL && icm_error_last()->code == ICM_ENOMEM
                   ? ICM_ENOMEM
                   : hadoop_unsupported(&h->base, "namespaces outside the local filesystem");
    return 0;
}

/* Real directories only: a symlink is never followed, so a link loop cannot make the
 * namespace walk endless. */
static bool is_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A directory is a table when metadata/ holds a hint or a v<N> metadata file. */
static bool is_table_dir(const char *path)
{
    char *meta = icm__sprintf("%s/metadata", path);
    if (meta == NULL)
        return false;
    bool table = false;
    DIR *d = opendir(meta);
    struct dirent *e;
    while (d != NULL && !table && (e = readdir(d)) != NULL)
        table = strcmp(e->d_name, "version-hint.text") == 0 || hadoop_version(e->d_name) >= 0;
    if (d != NULL)
        closedir(d);
    icm__free(meta);
    return table;
}

typedef int (*dir_visit)(const char *child_path, const char *child_name, bool table,
                         void *payload);

/* Visit the sub-directories of `path` (not hidden), telling tables from namespaces. */
static int each_child_dir(const char *path, dir_visit visit, void *payload)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == ENOENT ? 0
                               : icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, path,
                                                      "cannot list directory");
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *child = icm__sprintf("%s/%s", path, e->d_name);
        if (child == NULL) {
            rc = ICM_ENOMEM;
            break;
        }
        if (is_dir(child))
            rc = visit(child, e->d_name, is_table_dir(child), payload);
        icm__free(child);
    }
    closedir(d);
    return rc;
}

typedef struct ns_walk {
    icm_name_cb cb;
    void *payload;
    icm__buf prefix; /* dotted namespace of the directory being walked */
} ns_walk;

static int walk_namespace(const char *child_path, const char *child_name, bool table,
                          void *payload)
{
    if (table)
        return 0; /* tables are not namespaces, and nothing below them is */
    ns_walk *w = payload;
    size_t keep = w->prefix.len;
    if (keep > 0)
        icm__buf_putc(&w->prefix, '.');
    icm__buf_puts(&w->prefix, child_name);
    if (w->prefix.oom)
        return ICM_ENOMEM;
    int rc = w->cb(w->prefix.data, w->payload);
    if (rc == 0)
        rc = each_child_dir(child_path, walk_namespace, w);
    w->prefix.len = keep;
    w->prefix.data[keep] = '\0';
    return rc;
}

static int hadoop_list_all_namespaces(icm_catalog *cat, icm_name_cb cb, void *payload)
{
    char *root = NULL;
    int rc = local_dir(as_hadoop(cat), as_hadoop(cat)->warehouse ? as_hadoop(cat)->warehouse : "",
                       &root);
    if (rc != 0)
        return rc;
    ns_walk w = {cb, payload, ICM__BUF_INIT};
    rc = each_child_dir(root, walk_namespace, &w);
    icm__buf_dispose(&w.prefix);
    icm__free(root);
    return rc;
}

typedef struct table_walk {
    icm_name_cb cb;
    void *payload;
} table_walk;

static int visit_table(const char *child_path, const char *child_name, bool table, void *payload)
{
    (void)child_path;
    table_walk *w = payload;
    return table ? w->cb(child_name, w->payload) : 0;
}

static int hadoop_list_tables(icm_catalog *cat, const char *ns, icm_name_cb cb, void *payload)
{
    hadoop_catalog *h = as_hadoop(cat);
    if (h->warehouse == NULL)
        return hadoop_unsupported(cat, "listing on a single table directory");
    char *loc = ns_dir(h, ns, NULL), *dir = NULL;
    int rc = loc != NULL ? local_dir(h, loc, &dir) : ICM_ENOMEM;
    table_walk w = {cb, payload};
    if (rc == 0)
        rc = each_child_dir(dir, visit_table, &w);
    icm__free(dir);
    icm__free(loc);
    return rc;
}

/* mkdir -p */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int r = mkdir(path, 0777);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, path,
                                        "cannot create directory");
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, path,
                                    "cannot create directory");
    return 0;
}

static int hadoop_create_namespace(icm_catalog *cat, const char *ns)
{
    hadoop_catalog *h = as_hadoop(cat);
    if (h->warehouse == NULL)
        return hadoop_unsupported(cat, "namespaces on a single table directory");
    char *loc = ns_dir(h, ns, NULL), *dir = NULL;
    int rc = loc != NULL ? local_dir(h, loc, &dir) : ICM_ENOMEM;
    if (rc == 0)
        rc = make_dirs(dir);
    icm__free(dir);
    icm__free(loc);
    return rc;
}

static int hadoop_default_table_location(icm_catalog *cat, const icm_table_ident *id, char **out)
{
    *out = table_dir(as_hadoop(cat), id);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

static void hadoop_free(icm_catalog *cat)
{
    hadoop_catalog *h = as_hadoop(cat);
    icm__free(h->warehouse);
    icm__free(h->table_dir);
    icm__free(h);
}

static const icm_catalog_methods hadoop_methods = {
    ICM_CATALOG_METHODS_VERSION,
    "hadoop",
    hadoop_load_table,
    hadoop_commit,
    hadoop_create_table,
    hadoop_register_table,
    hadoop_drop_table,
    hadoop_create_namespace,
    hadoop_list_all_namespaces,
    hadoop_list_tables,
    hadoop_default_table_location,
    hadoop_free,
    /* version 2: a pointer-swap back end. The generic layer checks requirements, applies
     * updates and calls `commit` to swap (icm_table_commit_changes); listings and loads go
     * through the version 1 slots. */
    NULL,
    NULL,
    NULL,
    NULL,
};

static char *strip_slashes(const char *s)
{
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/')
        n--;
    return icm__strndup(s, n);
}

static int hadoop_new(icm_catalog **out, const char *name, const char *warehouse,
                      const char *dir, icm_fileio *io)
{
    *out = NULL;
    hadoop_catalog *h = icm__calloc(1, sizeof *h);
    if (h == NULL)
        return ICM_ENOMEM;
    int rc = icm_catalog_init_base(&h->base, &hadoop_methods, name, io);
    if (rc == 0 && warehouse != NULL) {
        /* Absolute once, here: every table directory, metadata file and metadata-log entry of
         * this catalog is named below it (issue #16, class 1). */
        char *canon = NULL;
        rc = icm__location_canonical_keep_form(warehouse, &canon);
        if (rc == 0) {
            h->warehouse = strip_slashes(canon);
            rc = h->warehouse != NULL ? 0 : ICM_ENOMEM;
        }
        icm__free(canon);
    }
    if (rc == 0 && dir != NULL) {
        h->table_dir = strip_slashes(dir);
        rc = h->table_dir != NULL ? 0 : ICM_ENOMEM;
    }
    if (rc != 0) {
        icm_catalog_free(&h->base);
        return rc;
    }
    *out = &h->base;
    return 0;
}

int icm_catalog_open_hadoop(icm_catalog **out, const char *name, const char *warehouse,
                            icm_fileio *io)
{
    if (warehouse == NULL || warehouse[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, name,
                              "a filesystem catalog needs a warehouse");
    return hadoop_new(out, name, warehouse, NULL, io);
}

int icm__hadoop_open_table_dir(icm_catalog **out, icm_fileio *io, const char *dir)
{
    if (dir == NULL || dir[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, NULL, "empty table directory");
    return hadoop_new(out, dir, NULL, dir, io);
}

const char *icm__hadoop_table_dir(const icm_catalog *cat)
{
    return ((const hadoop_catalog *)cat)->table_dir;
}
