/*
 * maint/other_format.c: folders another table format manages, and icemaint trashes
 * (other_format.h). Reads only: a stopping listing of `<folder>/_delta_log` and
 * `<folder>/.hoodie` per folder looked at, and of `<folder>/journal` when the folder is named
 * like a UUID.
 */
#include <ctype.h>
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

bool icm__other_format_uuid_shaped(const char *s, size_t n)
{
    if (n != 36)
        return false;
    for (size_t i = 0; i < n; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    return true;
}

/* Whether `name[0, n)` is a trash journal's name as its readers take it (trash.c): not hidden,
 * ending in `.jsonl` (icemaint writes `<ms>-<run-uuid>-<n>.jsonl`). */
static bool journal_named(const char *name, size_t n)
{
    static const char suffix[] = ".jsonl";
    const size_t sn = sizeof suffix - 1;
    return n > sn && name[0] != '.' && memcmp(name + n - sn, suffix, sn) == 0;
}

static int refuse_trash(const char *folder, const char *hint)
{
    return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, folder,
                          "the folder %s holds an icemaint trash (<table-uuid>/journal/): its "
                          "files are trashed files, each the undo of a delete, that `icemaint "
                          "trash restore` may bring back, and they keep their old modification "
                          "times; nothing is deleted: keep every trash outside the folders a "
                          "sweep lists %s",
                          folder, hint != NULL ? hint : "(no override)");
}

int icm__other_format_refuse(icm__other_format format, const char *folder, const char *hint)
{
    if (format == ICM__OTHER_FORMAT_TRASH)
        return refuse_trash(folder, hint);
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

/* Listing callback: the first trash journal found stops the listing. */
static int on_journal(const icm_file_info *info, void *payload)
{
    const char *slash = strrchr(info->location, '/');
    const char *name = slash != NULL ? slash + 1 : info->location;
    if (!journal_named(name, strlen(name)))
        return 0;
    *(bool *)payload = true;
    return ICM_EUSER;
}

/* Whether the folder `folder` is a trash's table folder: named like a UUID and holding
 * `journal/<a journal>`. *trash_len: the length of the trash's name (the folder above), 0 when
 * it is not one. One stopping listing of `folder/journal`, and none for a folder not named
 * like a UUID. */
static int trash_folder_of(icm_fileio *io, const char *folder, size_t *trash_len)
{
    *trash_len = 0;
    size_t len = icm__location_trim_len(folder);
    size_t start = len;
    while (start > 0 && folder[start - 1] != '/')
        start--;
    if (start == 0 || !icm__other_format_uuid_shaped(folder + start, len - start))
        return 0;
    char *dir = icm__location_join(folder, "journal");
    if (dir == NULL)
        return ICM_ENOMEM;
    bool found = false;
    int rc = icm_fileio_list_flags(io, dir, ICM_LIST_STAT_OPTIONAL, on_journal, &found);
    icm__free(dir);
    if (rc == ICM_EUNSUPPORTED) { /* a place the io cannot reach: neither can its deletes */
        icm_error_clear();
        return 0;
    }
    if (rc != ICM_EUSER || !found)
        return rc;
    icm_error_clear();
    size_t up = start - 1;
    while (up > 0 && folder[up - 1] == '/')
        up--;
    *trash_len = up;
    return 0;
}

int icm__other_format_check_trash_folder(icm_fileio *io, const char *folder, const char *hint)
{
    size_t up;
    int rc = trash_folder_of(io, folder, &up);
    if (rc != 0 || up == 0)
        return rc;
    char *trash = icm__strndup(folder, up);
    rc = trash != NULL ? refuse_trash(trash, hint) : ICM_ENOMEM;
    icm__free(trash);
    return rc;
}

int icm__other_format_trash_holding(icm_fileio *io, const char *location, char **trash)
{
    *trash = NULL;
    char *folder = icm__strdup(location);
    if (folder == NULL)
        return ICM_ENOMEM;
    size_t floor = icm__location_root_end(folder);
    size_t up = 0;
    int rc = 0;
    for (size_t len = icm__location_trim_len(folder); rc == 0 && up == 0 && len > floor + 1;) {
        folder[len] = '\0';
        rc = trash_folder_of(io, folder, &up);
        while (len > floor && folder[len - 1] != '/')
            len--;
        while (len > floor + 1 && folder[len - 1] == '/')
            len--;
    }
    if (rc == 0 && up > 0 && (*trash = icm__strndup(folder, up)) == NULL)
        rc = ICM_ENOMEM;
    icm__free(folder);
    return rc;
}

int icm__other_format_refuse_trashed(icm_fileio *io, const char *location, const char *undone)
{
    char *trash = NULL, *real = NULL;
    int rc = icm__other_format_trash_holding(io, location, &trash);
    /* and where it really is, when a symbolic link leads there (a missing file is the
     * caller's to report) */
    if (rc == 0 && trash == NULL) {
        int res = icm_fileio_resolve(&real, io, location);
        if (res == ICM_ENOMEM)
            rc = res;
        else if (res != 0)
            icm_error_clear();
        else if (!icm__location_equal(real, location))
            rc = icm__other_format_trash_holding(io, real, &trash);
    }
    icm_free(real);
    if (rc == 0 && trash != NULL)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                            "the file lies in the icemaint trash %s: a trashed file, which "
                            "`icemaint trash expire` deletes and `icemaint trash restore` moves "
                            "back where it was, whatever table references it; nothing is %s: "
                            "bring it back with `icemaint trash restore %s --table <its table "
                            "location>` and take it from there",
                            trash, undone, trash);
    icm__free(trash);
    return rc;
}

int icm__other_format_check_trash_above(icm_fileio *io, const char *location)
{
    char *trash;
    int rc = icm__other_format_trash_holding(io, location, &trash);
    if (rc == 0 && trash != NULL)
        rc = refuse_trash(trash, NULL);
    icm__free(trash);
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
    return icm__other_format_check_trash_folder(io, folder, NULL);
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
        /* `<table-uuid>/journal/<journal>` ending the path: a trash */
        static const char journal[] = "/journal/";
        const size_t jn = sizeof journal - 1;
        if (strncmp(slash, journal, jn) == 0 && strchr(slash + jn, '/') == NULL &&
            icm__other_format_uuid_shaped(s, (size_t)(slash - s)) &&
            journal_named(slash + jn, strlen(slash + jn))) {
            *offset = (size_t)(s - rest);
            return ICM__OTHER_FORMAT_TRASH;
        }
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
