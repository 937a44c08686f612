/*
 * maint/table_files.c: a table's own locations and metadata documents (keepset.h), shared by
 * expiry and the orphan sweep: gc.enabled, the table's roots and metadata folders, the metadata
 * documents it names, and finding table metadata in a folder.
 *
 * Read-only by construction: the only storage call here is listing a folder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "maint/keepset.h"
#include "util/location.h"
#include "util/util.h"

/* ---- the table's own locations and documents ---- */

bool icm__gc_enabled(const icm_table_metadata *md, const char **value)
{
    const char *v = icm_table_metadata_property(md, "gc.enabled");
    if (value != NULL)
        *value = v;
    return v == NULL || strcasecmp(v, "true") == 0;
}

size_t icm__table_roots(const icm_table_metadata *md, const char *out[3])
{
    const char *cand[3] = {icm_table_metadata_location(md),
                           icm_table_metadata_property(md, "write.data.path"),
                           icm_table_metadata_property(md, "write.metadata.path")};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (cand[i] != NULL && cand[i][0] != '\0')
            out[n++] = cand[i];
    return n;
}

int icm__table_metadata_dirs(const icm_table_metadata *md, const char *md_location,
                             char *out[3], size_t *n)
{
    *n = 0;
    const char *loc = icm_table_metadata_location(md);
    const char *md_path = icm_table_metadata_property(md, "write.metadata.path");
    const char *slash = md_location != NULL ? strrchr(md_location, '/') : NULL;
    bool ok = true;
    if (loc != NULL)
        ok = (out[(*n)++] = icm__location_join(loc, "metadata")) != NULL;
    if (ok && md_path != NULL && md_path[0] != '\0')
        ok = (out[(*n)++] = icm__strdup(md_path)) != NULL;
    if (ok && slash != NULL)
        ok = (out[(*n)++] = icm__strndup(md_location, (size_t)(slash - md_location))) != NULL;
    if (ok)
        return 0;
    for (size_t i = 0; i < *n; i++)
        icm__free(out[i]);
    *n = 0;
    return ICM_ENOMEM;
}

/*
 * A relative metadata-log entry (an older icemaint recorded the table path as typed): relative
 * to a working directory nobody knows now, but every such entry named a metadata file of this
 * table, so its file name in each of the table's metadata folders is kept too. An entry with
 * no file name cannot be placed: ICM_EREFUSED, rather than guess what it keeps.
 */
static int relative_log_entry(const char *entry, char *const *dirs, size_t ndirs,
                              int (*cb)(const char *location, void *payload), void *payload)
{
    const char *name = strrchr(entry, '/') != NULL ? strrchr(entry, '/') + 1 : entry;
    const char *colon = strchr(name, ':'); /* `file:v1.metadata.json` */
    if (name == entry && colon != NULL)
        name = colon + 1;
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, entry,
                              "metadata-log entry is a relative location that names no file, "
                              "so which metadata file it keeps cannot be told; nothing is "
                              "deleted (rewrite the entry as an absolute location)");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ndirs; i++) {
        char *kept = icm__location_join(dirs[i], name);
        rc = kept != NULL ? cb(kept, payload) : ICM_ENOMEM;
        icm__free(kept);
    }
    return rc;
}

int icm__table_metadata_docs(const icm_table_metadata *md, const char *md_location,
                             int (*cb)(const char *location, void *payload), void *payload)
{
    int rc = md_location != NULL ? cb(md_location, payload) : 0;
    const char *file = icm_table_metadata_file(md);
    if (rc == 0 && file != NULL)
        rc = cb(file, payload);
    char *dirs[3];
    size_t ndirs = 0;
    if (rc == 0)
        rc = icm__table_metadata_dirs(md, md_location, dirs, &ndirs);
    /* A relative pointer (a catalog row an older icemaint registered as typed) or file name:
     * kept as a relative log entry is. */
    const char *current[2] = {md_location, file};
    for (size_t i = 0; i < 2; i++)
        if (rc == 0 && current[i] != NULL && !icm__location_is_absolute(current[i]))
            rc = relative_log_entry(current[i], dirs, ndirs, cb, payload);
    size_t nlog = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; rc == 0 && i < nlog; i++) {
        const char *entry = icm_table_metadata_metadata_log_at(md, i)->metadata_file;
        rc = cb(entry, payload);
        if (rc == 0 && !icm__location_is_absolute(entry))
            rc = relative_log_entry(entry, dirs, ndirs, cb, payload);
    }
    static const char *const hints[] = {"version-hint.text", "version-hint.txt"};
    for (size_t i = 0; i < ndirs; i++) {
        for (size_t h = 0; rc == 0 && h < 2; h++) {
            char *hint = icm__location_join(dirs[i], hints[h]);
            rc = hint != NULL ? cb(hint, payload) : ICM_ENOMEM;
            icm__free(hint);
        }
        icm__free(dirs[i]);
    }
    return rc;
}

/* ---- table metadata in a folder (expiry's nested tables, the sweep's enclosing tables) ---- */

bool icm__table_metadata_file_name(const char *location, bool *document)
{
    const char *slash = strrchr(location, '/');
    const char *name = slash != NULL ? slash + 1 : location;
    /* (`.gz.metadata.json` ends like the plain form; `.metadata.json.gz` is Java's legacy
     * name for a gzip'd document with no version hint beside it) */
    bool doc = (icm__str_ends_with(name, ".metadata.json") && strlen(name) > 14) ||
               (icm__str_ends_with(name, ".metadata.json.gz") && strlen(name) > 17);
    if (document != NULL)
        *document = doc;
    return doc || strcmp(name, "version-hint.text") == 0 ||
           strcmp(name, "version-hint.txt") == 0;
}

typedef struct md_search {
    const char *md_dir;
    bool want_document;
    icm__table_md_found *found;
} md_search;

/* Listing callback: note table metadata files directly in the folder (a table's metadata
 * folder holds them there; a file deeper down is another table's, in a folder that merely is
 * named `metadata`, such as a namespace); stop (ICM_EUSER) at the first one, or with
 * want_document at the first metadata document. */
static int on_table_metadata_file(const icm_file_info *f, void *payload)
{
    md_search *s = payload;
    const char *rest;
    if (!icm__location_strip_prefix(f->location, s->md_dir, &rest) || strchr(rest, '/') != NULL)
        return 0;
    bool document;
    if (!icm__table_metadata_file_name(f->location, &document))
        return 0;
    s->found->any = true;
    if (!s->want_document)
        return ICM_EUSER;
    if (!document)
        return 0;
    if ((s->found->document = icm__strdup(f->location)) == NULL)
        return ICM_ENOMEM;
    return ICM_EUSER;
}

int icm__find_table_metadata(icm_fileio *io, const char *md_dir, bool want_document,
                             icm__table_md_found *out)
{
    out->any = false;
    out->document = NULL;
    md_search s = {md_dir, want_document, out};
    int rc = icm_fileio_list_flags(io, md_dir, ICM_LIST_STAT_OPTIONAL, on_table_metadata_file,
                                   &s);
    if (rc == ICM_EUSER)
        return 0;
    if (rc != 0) {
        icm__free(out->document);
        out->document = NULL;
    }
    return rc;
}
