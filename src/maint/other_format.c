/*
 * maint/other_format.c: folders another table format manages (other_format.h). Reads only:
 * a stopping listing of `<folder>/_delta_log` and `<folder>/.hoodie` per folder looked at.
 */
#include <string.h>

#include "maint/keepset.h"
#include "maint/other_format.h"
#include "util/location.h"
#include "util/util.h"

typedef struct format_info {
    const char *marker;  /* the folder that marks it */
    const char *what;    /* what that folder is */
    const char *name;    /* the format */
    const char *cleaner; /* what removes its files */
} format_info;

static const format_info formats[] = {
    {"_delta_log", "a Delta Lake log", "Delta Lake", "Delta Lake's own VACUUM"},
    {".hoodie", "an Apache Hudi timeline", "Hudi", "Hudi's own cleaner"},
};

int icm__other_format_refuse(icm__other_format format, const char *folder, const char *hint)
{
    const format_info *f = &formats[format];
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, folder,
                          "the folder %s holds %s (%s/): %s manages the files here, and its "
                          "log may name a file the Iceberg metadata does not (its own time "
                          "travel, or Iceberg metadata that lags behind it); nothing is "
                          "deleted: %s must remove that format's files %s",
                          folder, f->what, f->marker, f->name, f->cleaner,
                          hint != NULL ? hint : "(no override)");
}

/* Listing callback: the first file found stops the listing. */
static int on_any_file(const icm_file_info *info, void *payload)
{
    (void)info;
    *(bool *)payload = true;
    return ICM_EUSER;
}

/* Whether `folder/marker` holds a file. */
static int holds(icm_fileio *io, const char *folder, const char *marker, bool *out)
{
    *out = false;
    char *dir = icm__location_join(folder, marker);
    if (dir == NULL)
        return ICM_ENOMEM;
    int rc = icm_fileio_list_flags(io, dir, ICM_LIST_STAT_OPTIONAL, on_any_file, out);
    icm__free(dir);
    if (rc == ICM_EUSER && *out)
        return 0;
    if (rc == ICM_EUNSUPPORTED) { /* a place the io cannot reach: neither can its deletes */
        icm_error_clear();
        return 0;
    }
    return rc;
}

int icm__other_format_check_folder(icm_fileio *io, const char *folder)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        bool found;
        int rc = holds(io, folder, formats[i].marker, &found);
        if (rc != 0)
            return rc;
        if (found)
            return icm__other_format_refuse((icm__other_format)i, folder, NULL);
    }
    return 0;
}

int icm__other_format_check_down(icm_fileio *io, const char *top, const char *bottom)
{
    int rc = icm__other_format_check_folder(io, top);
    const char *rest;
    if (rc != 0 || bottom == NULL || !icm__location_strip_prefix(bottom, top, &rest))
        return rc;
    /* each folder below top on the way to bottom, bottom last */
    size_t n = strlen(rest);
    for (size_t k = 1; rc == 0 && k <= n; k++) {
        if ((rest[k] != '/' && rest[k] != '\0') || rest[k - 1] == '/')
            continue;
        char *part = icm__strndup(rest, k);
        char *folder = part != NULL ? icm__location_join(top, part) : NULL;
        rc = folder != NULL ? icm__other_format_check_folder(io, folder) : ICM_ENOMEM;
        icm__free(folder);
        icm__free(part);
    }
    return rc;
}

int icm__other_format_check_roots(icm_fileio *io, const icm_table_metadata *md)
{
    const char *roots[3];
    size_t n = icm__table_roots(md, roots);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = icm__other_format_check_folder(io, roots[i]);
    return rc;
}

icm__other_format icm__other_format_in_path(const char *rest, size_t *offset)
{
    const char *s = rest;
    for (;;) {
        const char *slash = strchr(s, '/');
        if (slash == NULL)
            return ICM__OTHER_FORMAT_NONE; /* the file's own name */
        size_t n = (size_t)(slash - s);
        if (n > 0 && (s[0] == '_' || s[0] == '.')) {
            for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
                if (strlen(formats[i].marker) == n && memcmp(s, formats[i].marker, n) == 0) {
                    *offset = (size_t)(s - rest);
                    return (icm__other_format)i;
                }
            }
        }
        s = slash + 1;
    }
}
