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
#include "io/fileio_internal.h"
#include "util/location.h"
#include "util/util.h"

/* How two places may relate: the same, `a` strictly below `b`, or either (one holds the
 * other, or they are the same). */
typedef enum { PLACE_SAME, PLACE_INSIDE, PLACE_OVERLAP } place_relation;

static bool names_relate(const char *a, const char *b, place_relation rel)
{
    switch (rel) {
    case PLACE_SAME:
        return icm__location_equal(a, b);
    case PLACE_INSIDE:
        return icm__location_is_inside(a, b);
    case PLACE_OVERLAP:
        break;
    }
    return icm__location_equal(a, b) || icm__location_is_inside(a, b) ||
           icm__location_is_inside(b, a);
}

/* Where `location` really is (new string), or *out NULL when nothing is there (with
 * `foreign_ok`, also when the back end holds no such name: `s3://` over local disk). */
static int real_place(icm_fileio *io, const char *location, bool foreign_ok, char **out)
{
    int rc = icm_fileio_resolve(out, io, location);
    if (rc == ICM_ENOTFOUND ||
        (foreign_ok && (rc == ICM_EUNSUPPORTED || rc == ICM_EINVALID))) {
        icm_error_clear();
        *out = NULL;
        return 0;
    }
    return rc;
}

/* Whether `a` and `b` relate as `rel` says: by name when the names say so, else by where both
 * really are on `io`. A missing place is nowhere. */
static int places_relate(icm_fileio *io, const char *a, const char *b, place_relation rel,
                         bool foreign_ok, bool *out)
{
    *out = names_relate(a, b, rel);
    if (*out)
        return 0;
    char *real_a = NULL, *real_b = NULL;
    int rc = real_place(io, a, foreign_ok, &real_a);
    if (rc == 0)
        rc = real_place(io, b, foreign_ok, &real_b);
    if (rc == 0 && real_a != NULL && real_b != NULL)
        *out = names_relate(real_a, real_b, rel);
    icm_free(real_a);
    icm_free(real_b);
    return rc;
}

static int same_or_inside(icm_fileio *io, const char *a, const char *b, bool inside, bool *out)
{
    return places_relate(io, a, b, inside ? PLACE_INSIDE : PLACE_SAME, false, out);
}

int icm__places_same(icm_fileio *io, const char *a, const char *b, bool *out)
{
    return places_relate(io, a, b, PLACE_SAME, false, out);
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
    int rc = icm_fileio_pathmap_apply(&mapped, io, loc);
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

/* Whether `a` and `b` share any place, on the back end under the path map. */
static int places_overlap(icm_fileio *inner, const char *a, const char *b, bool *out)
{
    return places_relate(inner, a, b, PLACE_OVERLAP, true, out);
}

/* The table's roots as its metadata names them: the location, write.data.path and
 * write.metadata.path (unset ones left out). Returns how many. */
enum { N_ROOT_KINDS = 3 };
static const char *const root_names[N_ROOT_KINDS] = {"location", "write.data.path",
                                                     "write.metadata.path"};

static size_t table_roots(const icm_table_metadata *md, const char *roots[N_ROOT_KINDS],
                          const char *kinds[N_ROOT_KINDS])
{
    size_t n = 0;
    for (size_t k = 0; k < N_ROOT_KINDS; k++) {
        const char *root = k == 0 ? icm_table_metadata_location(md)
                                  : icm_table_metadata_property(md, root_names[k]);
        if (root != NULL && root[0] != '\0') {
            roots[n] = root;
            kinds[n++] = root_names[k];
        }
    }
    return n;
}

/* `kind`/`root` NULL: the TO lies outside the copy's own mapped roots. */
static int refuse_shared_place(const char *shown, bool registering, const char *what,
                               const char *from, const char *to, const char *kind,
                               const char *root)
{
    char *why = root != NULL ? icm__sprintf("shares a place with the original's %s %s", kind,
                                            root)
                             : icm__strdup("lies outside the copy's own places (where the "
                                           "path map sends its location and write paths)");
    if (why == NULL)
        return ICM_ENOMEM;
    int rc = icm__error_set(
        ICM_ERRCLASS_CATALOG, ICM_EREFUSED, shown,
        "the path map moves the table location (the table is worked on as a copy) but sends "
        "%s %s to %s, which %s: maintaining %s could delete or write the original's files "
        "(own-metadata check, copy places); map every place of the copy to where the copy "
        "keeps it, apart from the original%s",
        what, from, to, why, registering ? "a table registered with it" : "it",
        registering ? ", or use --force to register it anyway" : "");
    icm__free(why);
    return rc;
}

/* The copy's places never meet the original's. Each root of the table maps (by the rule that
 * covers it) to a place of the copy; every such place, and the TO of every rule whose FROM lies
 * below a root (which sends part of the copy elsewhere), must share no place with any of the
 * original's roots, and such a TO must lie within one of the copy's mapped roots. A rule like
 * `ORIG/data=ORIG/data` next to `ORIG=COPY` would otherwise send the copy's data names back
 * to the original's files, and the copy's sweep or expiry would delete them. */
static int check_copy_places(icm_fileio *io, const char *const *roots, const char *const *kinds,
                             size_t n_roots, const char *shown, bool registering)
{
    icm_fileio *inner = icm__fileio_pathmap_inner(io);
    char *mapped[N_ROOT_KINDS] = {NULL, NULL, NULL};
    int rc = 0;
    bool overlap = false;
    for (size_t r = 0; r < n_roots && rc == 0; r++)
        rc = icm_fileio_pathmap_apply(&mapped[r], io, roots[r]);
    for (size_t r = 0; r < n_roots && rc == 0; r++)
        for (size_t o = 0; o < n_roots && rc == 0; o++)
            if ((rc = places_overlap(inner, mapped[r], roots[o], &overlap)) == 0 && overlap)
                rc = refuse_shared_place(shown, registering, kinds[r], roots[r], mapped[r],
                                         kinds[o], roots[o]);
    size_t n_rules = icm__fileio_pathmap_n_rules(io);
    for (size_t i = 0; i < n_rules && rc == 0; i++) {
        const char *from, *to;
        icm__fileio_pathmap_rule(io, i, &from, &to);
        bool below_root = false;
        for (size_t r = 0; r < n_roots && !below_root; r++)
            below_root = icm__location_is_inside(from, roots[r]);
        if (!below_root)
            continue;
        for (size_t o = 0; o < n_roots && rc == 0; o++)
            if ((rc = places_overlap(inner, to, roots[o], &overlap)) == 0 && overlap)
                rc = refuse_shared_place(shown, registering, "the names below", from, to,
                                         kinds[o], roots[o]);
        bool within_copy = false;
        for (size_t r = 0; r < n_roots && !within_copy; r++)
            within_copy = icm__location_equal(to, mapped[r]) ||
                          icm__location_is_inside(to, mapped[r]);
        if (rc == 0 && !within_copy)
            rc = refuse_shared_place(shown, registering, "the names below", from, to, NULL,
                                     NULL);
    }
    for (size_t r = 0; r < n_roots; r++)
        icm_free(mapped[r]);
    return rc;
}

/*
 * The roots of a copy (the copy check). A path map that moves the table's location makes the
 * table a copy, but the map rewrites only names below its rules: a `write.data.path` or
 * `write.metadata.path` outside the location still names the original's folders, so the
 * sweep of that folder, expiry and metadata retention would delete the original's files, and
 * commits would write into its metadata folder. So while the location is moved, each of
 * those roots must lie inside the location (by name: the location's rule then moves it too)
 * or be moved by a rule of its own, and the copy's places must not meet the original's
 * (check_copy_places). A location no rule moves is the table itself: no check.
 */
static int check_copy_roots(icm_fileio *io, const icm_table_metadata *md, const char *shown,
                            bool registering)
{
    const char *location = icm_table_metadata_location(md);
    bool moved = false;
    int rc = moved_by_path_map(io, location, &moved);
    if (rc != 0 || !moved)
        return rc;
    const char *roots[N_ROOT_KINDS], *kinds[N_ROOT_KINDS];
    size_t n_roots = table_roots(md, roots, kinds);
    for (size_t i = 1; i < n_roots; i++) {
        const char *root = roots[i];
        if (icm__location_equal(root, location) || icm__location_is_inside(root, location))
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
                location, kinds[i], root, registering ? "a table registered with it" : "it",
                root, registering ? ", or --force to register it anyway" : "");
    }
    return check_copy_places(io, roots, kinds, n_roots, shown, registering);
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
