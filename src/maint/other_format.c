/*
 * maint/other_format.c: folders another table format manages, and icemaint trashes
 * (other_format.h). Reads only: a stopping listing of `<folder>/_delta_log` and
 * `<folder>/.hoodie` per folder looked at, and of `<folder>/journal` when the folder is named
 * like a UUID.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/fileio_internal.h"
#include "maint/keepset.h"
#include "maint/other_format.h"
#include "util/location.h"
#include "util/mounts.h"
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

/* ---- a trashed file reached through another mount of its folder (adversary round 7,
 * finding 3) ----
 *
 * A bind mount of a trash's folder (or of the file system holding it, shown from a folder)
 * names a trashed file by a path with no `<table-uuid>/journal` above it, and realpath() does
 * not cross a mount. The mount table says where each mount's folder lies on its file system
 * (mountinfo's ROOT): the file's path there is walked up instead of its name, each folder
 * named like a table-uuid looked at through a mount that shows it (one whose path to the file
 * stats to the file itself). A folder that no mount here shows cannot be looked at: when it is
 * named like a table-uuid and the file lies in its `files/`, the trash's layout, the file is
 * refused as one that cannot be told; any other hidden folder (a container's volume, a
 * kubelet's pod folder) is not a trash's. */

/* Whether the local folder `folder` holds `journal/<a journal>`: 0 with *found, or ICM_EIO
 * (it cannot be read: the last error names it) or ICM_ENOMEM. */
static int local_journal(const char *folder, bool *found)
{
    *found = false;
    char *dir = icm__location_join(folder, "journal");
    if (dir == NULL)
        return ICM_ENOMEM;
    DIR *d = opendir(dir);
    int rc = 0;
    if (d == NULL) {
        if (errno != ENOENT && errno != ENOTDIR)
            rc = icm__error_set_errno(ICM_ERRCLASS_MAINT, ICM_EIO, errno, dir,
                                      "cannot read it to tell whether %s is a trash's table "
                                      "folder",
                                      folder);
        icm__free(dir);
        return rc;
    }
    const struct dirent *e;
    while (!*found && (e = readdir(d)) != NULL)
        *found = journal_named(e->d_name, strlen(e->d_name));
    closedir(d);
    icm__free(dir);
    return 0;
}

typedef struct mount_walk {
    icm__mounts ms;
    size_t holder;  /* the mount holding the file's real path */
    bool *reaches;  /* per mount: its path to the file stats to the file */
    char *fs_path;  /* the file's path on its file system */
} mount_walk;

/* The path through a mount that reaches the file of the folder `fs_folder` (a folder above
 * the file on its file system): *out (icm__free), NULL when no such mount shows it. */
static int shown_at(const mount_walk *w, const char *fs_folder, char **out)
{
    *out = NULL;
    for (size_t j = 0; j < w->ms.n && *out == NULL; j++)
        if (w->reaches[j] && icm__mounts_spelling(out, &w->ms, j, fs_folder) != 0)
            return ICM_ENOMEM;
    return 0;
}

static int refuse_mounted_trash(const mount_walk *w, const char *location, const char *folder,
                                const char *undone)
{
    /* the trash: the folder above the table-uuid's, where a mount shows it */
    char *up = icm__strndup(folder, (size_t)(strrchr(folder, '/') - folder));
    char *shown = NULL;
    if (up == NULL || shown_at(w, up[0] != '\0' ? up : "/", &shown) != 0) {
        icm__free(up);
        return ICM_ENOMEM;
    }
    char *trash = shown != NULL ? shown
                                : icm__sprintf("%s (a folder of the file system mounted at %s, "
                                               "which no mount here shows)",
                                               up, w->ms.m[w->holder].point);
    icm__free(up);
    if (trash == NULL)
        return ICM_ENOMEM;
    int rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                            "the file lies in the icemaint trash %s, reached through another "
                            "mount of its folder (a bind mount, or its file system mounted "
                            "twice; it is %s on its file system): a trashed file, which "
                            "`icemaint trash expire` deletes and `icemaint trash restore` moves "
                            "back where it was, whatever table references it; nothing is %s: "
                            "bring it back with `icemaint trash restore` on that trash and take "
                            "it from there",
                            trash, w->fs_path, undone);
    icm__free(trash);
    return rc;
}

/* Walk up the file's path on its file system (w->fs_path) for a trash's table folder. */
static int walk_fs_path(const mount_walk *w, const char *location, const char *undone)
{
    char *folder = icm__strdup(w->fs_path);
    if (folder == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    char *slash;
    while (rc == 0 && (slash = strrchr(folder, '/')) != NULL && slash != folder) {
        /* the rest of the file's path below `folder` */
        const char *next = w->fs_path + (slash - folder) + 1;
        *slash = '\0';
        const char *name = strrchr(folder, '/') + 1;
        if (!icm__other_format_uuid_shaped(name, strlen(name)))
            continue;
        char *shown = NULL;
        if ((rc = shown_at(w, folder, &shown)) != 0)
            break;
        if (shown != NULL) {
            bool found = false;
            rc = local_journal(shown, &found);
            icm__free(shown);
            if (rc == 0 && found)
                rc = refuse_mounted_trash(w, location, folder, undone);
        } else if (strncmp(next, "files/", 6) == 0) {
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                                "the file is reached through a mount that shows a folder of "
                                "its file system (mounted at %s; the file is %s there), below "
                                "%s, named like an icemaint trash's table folder holding "
                                "files/, which no mount here shows: whether it is a trashed "
                                "file, which `icemaint trash expire` deletes whatever table "
                                "references it, cannot be told; nothing is %s (name it where "
                                "that folder is mounted, or copy it out first)",
                                w->ms.m[w->holder].point, w->fs_path, folder, undone);
        }
    }
    icm__free(folder);
    return rc;
}

/* The identity rule for the file `location`, whose real place is the local path `path`. */
static int refuse_trashed_by_mounts(const char *location, const char *path, const char *undone)
{
    icm__file_id file;
    if (!icm__file_id_of(path, true, &file))
        return 0; /* gone: the caller reports a missing file */
    mount_walk w = {{NULL, 0}, SIZE_MAX, NULL, NULL};
    int rc = icm__mounts_read(&w.ms, NULL);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        char why[600];
        const icm_error *e = icm_error_last();
        const char *table = e->location != NULL && e->location[0] != '\0' ? e->location
                                                                       : ICM__MOUNTINFO;
        snprintf(why, sizeof why, "%s: %s", table, e->message);
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                              "%s; whether the file is a trashed file reached through another "
                              "mount of its folder (a bind mount of an icemaint trash, which "
                              "`icemaint trash expire` empties) cannot be told; nothing is %s "
                              "(run where %s can be read)",
                              why, undone, ICM__MOUNTINFO);
    }
    w.holder = icm__mounts_holding(&w.ms, path);
    if (w.holder == SIZE_MAX) {
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                            "no mount of the mount table %s holds %s (a changed root?): where "
                            "the file lies on its file system, and so whether it is a trashed "
                            "file reached through another mount of its folder, cannot be told; "
                            "nothing is %s",
                            ICM__MOUNTINFO, path, undone);
        goto done;
    }
    const icm__mount *h = &w.ms.m[w.holder];
    if (strcmp(h->root, "/") == 0 && !icm__mounts_device_shared(&w.ms, w.holder))
        goto done; /* one mount of a whole file system: the file's name says it all */
    rc = icm__mounts_fs_path(&w.fs_path, &w.ms, w.holder, path);
    if (rc != 0 || w.fs_path == NULL)
        goto done; /* (a ROOT that is no folder: a namespace file's) */
    w.reaches = icm__calloc(w.ms.n, sizeof *w.reaches);
    if (w.reaches == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    for (size_t j = 0; rc == 0 && j < w.ms.n; j++) {
        char *spelled = NULL;
        if (!icm__mounts_same_device(&w.ms, w.holder, j))
            continue;
        rc = icm__mounts_spelling(&spelled, &w.ms, j, w.fs_path);
        icm__file_id id;
        w.reaches[j] = spelled != NULL &&
                       (j == w.holder || (icm__file_id_of(spelled, true, &id) &&
                                          id.dev == file.dev && id.ino == file.ino));
        icm__free(spelled);
    }
    if (rc == 0)
        rc = walk_fs_path(&w, location, undone);
done:
    icm__free(w.reaches);
    icm__free(w.fs_path);
    icm__mounts_dispose(&w.ms);
    return rc;
}

int icm__other_format_refuse_trashed(icm_fileio *io, const char *location, const char *undone)
{
    char *trash = NULL, *real = NULL;
    int rc = icm__other_format_trash_holding(io, location, &trash);
    /* and where it really is, when a symbolic link leads there (a missing file is the
     * caller's to report) */
    bool resolved = false;
    if (rc == 0 && trash == NULL) {
        int res = icm_fileio_resolve(&real, io, location);
        if (res == ICM_ENOMEM)
            rc = res;
        else if (res != 0)
            icm_error_clear();
        else {
            resolved = true;
            if (!icm__location_equal(real, location))
                rc = icm__other_format_trash_holding(io, real, &trash);
        }
    }
    if (rc == 0 && trash != NULL)
        rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                            "the file lies in the icemaint trash %s: a trashed file, which "
                            "`icemaint trash expire` deletes and `icemaint trash restore` moves "
                            "back where it was, whatever table references it; nothing is %s: "
                            "bring it back with `icemaint trash restore %s --table` and the "
                            "location of the table it was swept from (its journal names it, "
                            "as table_location), and take it from there",
                            trash, undone, trash);
    /* and through every other mount of its folder, on local disk */
    if (rc == 0 && resolved && icm__fileio_on_this_disk(io, location) &&
        icm__location_local_part(real) != NULL) {
        char *path = NULL;
        rc = icm__location_fs_path(real, &path);
        if (rc == 0)
            rc = refuse_trashed_by_mounts(location, path, undone);
        icm__free(path);
    }
    icm_free(real);
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
