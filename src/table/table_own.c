/*
 * table/table_own.c: the own-metadata check (icm_table_check_own_metadata): a run that deletes
 * or commits works only on a table whose current metadata file is its own.
 *
 * Table metadata names its `location` absolutely, so a copy of a table folder (`cp -a db/t
 * backup`) carries metadata that still names the original. Maintaining the copy then plans
 * with the copy's keep set and lists, deletes and records under the original's location: the
 * original loses its newer metadata, manifests and data files. The rule: the current metadata
 * file must lie inside the table's own metadata folders (`<location>/metadata`, and
 * `write.metadata.path` when set), and a table opened by its directory must be opened at its
 * `location`. Both compare where the places really are (icm_fileio_resolve: symbolic links
 * resolved, the FileIO's --path-map rules applied), so a table reached through a link, or a
 * copy worked on under `--path-map LOCATION=COPY` (the documented way), passes; a copy named
 * directly, or registered in a catalog, does not. A copy's `write.data.path` and
 * `write.metadata.path` outside its location must be mapped too (check_copy_roots).
 *
 * Read-only: the only storage call is icm_fileio_resolve (a stat), so the planners may call it.
 */
#include <string.h>

#include "catalog/catalog_internal.h"
#include "util/location.h"
#include "util/util.h"

/* Where `location` really is (new string), or *out NULL when nothing is there. */
static int real_place(icm_fileio *io, const char *location, char **out)
{
    int rc = icm_fileio_resolve(io, location, out);
    if (rc == ICM_ENOTFOUND) {
        icm_error_clear();
        return 0;
    }
    return rc;
}

/* Whether `a` and `b` are the same place (`inside`: `a` lies strictly below `b`): by name when
 * the names say so, else by where both really are. A missing place is nowhere. */
static int same_or_inside(icm_fileio *io, const char *a, const char *b, bool inside, bool *out)
{
    *out = inside ? icm__location_is_inside(a, b) : icm__location_equal(a, b);
    if (*out)
        return 0;
    char *real_a = NULL, *real_b = NULL;
    int rc = real_place(io, a, &real_a);
    if (rc == 0)
        rc = real_place(io, b, &real_b);
    if (rc == 0 && real_a != NULL && real_b != NULL)
        *out = inside ? icm__location_is_inside(real_a, real_b)
                      : icm__location_equal(real_a, real_b);
    icm_free(real_a);
    icm_free(real_b);
    return rc;
}

/* The folder a copy of the table would be (new string): the parent of the `metadata` folder
 * holding `file`, else the file's folder. For the message's --path-map suggestion. */
static char *copy_folder_of(const char *file)
{
    const char *slash = strrchr(file, '/');
    if (slash == NULL)
        return icm__strdup(".");
    size_t n = (size_t)(slash - file);
    if (n >= 9 && strncmp(file + n - 9, "/metadata", 9) == 0)
        n -= 9;
    return icm__strndup(file, n > 0 ? n : 1);
}

/* What to do instead (new string): register-table's --force, or the path map that works on
 * the copy `file` seems to lie in. NULL when memory runs out. */
static char *remedy_for(const char *file, const char *location, bool registering)
{
    if (registering)
        return icm__strdup("use --force to register it anyway");
    char *copy = copy_folder_of(file);
    char *remedy = copy != NULL ? icm__sprintf("use --path-map %s=%s to work on the copy",
                                               location, copy)
                                : NULL;
    icm__free(copy);
    return remedy;
}

static int refuse_foreign_file(const char *shown, const char *file, const char *location,
                               const char *metadata_path, bool registering)
{
    char *remedy = remedy_for(file, location, registering);
    if (remedy == NULL)
        return ICM_ENOMEM;
    int rc = icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EREFUSED, shown,
                            "the metadata file %s lies outside the table location %s%s%s: it "
                            "may belong to a copy of the table, and maintaining %s would delete "
                            "or record files of the original (own-metadata check); %s",
                            file, location,
                            metadata_path != NULL ? " and its write.metadata.path " : "",
                            metadata_path != NULL ? metadata_path : "",
                            registering ? "a table registered with it" : "it", remedy);
    icm__free(remedy);
    return rc;
}

static int refuse_foreign_dir(const char *dir, const char *location)
{
    return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EREFUSED, dir,
                          "this table directory is not the table location %s its metadata "
                          "names: it may be a copy of the table, and maintaining it would "
                          "delete or record files of the original (own-metadata check); use "
                          "--path-map %s=%s to work on the copy",
                          location, location, dir);
}

/* Whether `file` lies inside `<location>/metadata` or `metadata_path` (NULL: unset). */
static int in_own_metadata_folders(icm_fileio *io, const char *file, const char *location,
                                   const char *metadata_path, bool *out)
{
    *out = false;
    char *md_dir = icm__location_join(location, "metadata");
    if (md_dir == NULL)
        return ICM_ENOMEM;
    int rc = same_or_inside(io, file, md_dir, true, out);
    icm__free(md_dir);
    if (rc == 0 && !*out && metadata_path != NULL)
        rc = same_or_inside(io, file, metadata_path, true, out);
    return rc;
}

/* Whether io is a path map with a rule that moves `loc` elsewhere (io not a path map: no). */
static int moved_by_path_map(icm_fileio *io, const char *loc, bool *out)
{
    *out = false;
    char *mapped = NULL;
    int rc = icm_fileio_pathmap_apply(io, loc, &mapped);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0) {
        icm_error_clear(); /* not a path map: nothing is moved */
        return 0;
    }
    *out = strcmp(mapped, loc) != 0;
    icm_free(mapped);
    return 0;
}

/*
 * The roots of a copy (the copy check). A path map that moves the table's location makes the
 * table a copy, but the map rewrites only names below its rules: a `write.data.path` or
 * `write.metadata.path` outside the location still names the original's folders, so the
 * sweep of that folder, expiry and metadata retention would delete the original's files, and
 * commits would write into its metadata folder. So while the location is moved, each of
 * those roots must lie inside the location (by name: the location's rule then moves it too)
 * or be moved by a rule of its own. A location no rule moves is the table itself: no check.
 */
static int check_copy_roots(icm_fileio *io, const icm_table_metadata *md, const char *shown,
                            bool registering)
{
    const char *location = icm_table_metadata_location(md);
    bool moved = false;
    int rc = moved_by_path_map(io, location, &moved);
    if (rc != 0 || !moved)
        return rc;
    static const char *const props[] = {"write.data.path", "write.metadata.path"};
    for (size_t i = 0; i < sizeof props / sizeof props[0]; i++) {
        const char *root = icm_table_metadata_property(md, props[i]);
        if (root == NULL || root[0] == '\0' || icm__location_equal(root, location) ||
            icm__location_is_inside(root, location))
            continue;
        if ((rc = moved_by_path_map(io, root, &moved)) != 0)
            return rc;
        if (!moved)
            return icm__error_set(
                ICM_ERRCLASS_CATALOG, ICM_EREFUSED, shown,
                "the path map moves the table location %s (the table is worked on as a "
                "copy) but not its %s %s, which lies outside the location: that place is "
                "the original's, and maintaining %s would delete or write files there "
                "(own-metadata check, copy roots); use --path-map %s=<where the copy keeps "
                "it> as well%s",
                location, props[i], root, registering ? "a table registered with it" : "it",
                root, registering ? ", or --force to register it anyway" : "");
    }
    return 0;
}

int icm__table_check_own(icm_fileio *io, const icm_table_metadata *md, const char *md_location,
                         const char *table_dir, const char *shown, bool registering)
{
    const char *location = icm_table_metadata_location(md);
    if (location == NULL || location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EINVALID, md_location,
                              "the metadata names no table location");
    const char *metadata_path = icm_table_metadata_property(md, "write.metadata.path");
    if (metadata_path != NULL && metadata_path[0] == '\0')
        metadata_path = NULL;
    bool ok = false;
    int rc = in_own_metadata_folders(io, md_location, location, metadata_path, &ok);
    if (rc != 0)
        return rc;
    if (!ok)
        return refuse_foreign_file(shown, md_location, location, metadata_path, registering);
    if (table_dir != NULL && (rc = same_or_inside(io, table_dir, location, false, &ok)) == 0 &&
        !ok)
        rc = refuse_foreign_dir(table_dir, location);
    if (rc == 0)
        rc = check_copy_roots(io, md, shown, registering);
    return rc;
}
