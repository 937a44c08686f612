/*
 * maint/expire_site.c: expiry's checks on the table's surroundings before it commits
 * (site_checks.h; issue #16): a stale pointer (newer commits of the table in its metadata
 * folders) and a root of the table lying inside another table's folders. Either would make
 * the files expiry deletes after its commit another commit's or another table's live files,
 * so the run is refused before anything is committed or deleted, dry runs included (what they
 * would plan is those files).
 *
 * Read-only: listings of the metadata folders and of the `metadata/` folders enclosing the
 * roots, reads of the metadata files that may be newer than the pointer.
 */
#include <string.h>

#include "maint/expire_internal.h"
#include "maint/keepset.h"
#include "maint/site_checks.h"

/* One look at the surroundings of the metadata t holds now; *newer_refused: the refusal (if
 * any) is the newer-commits one. */
static int check_site_once(icm_table *t, bool *newer_refused)
{
    const icm_table_metadata *md = icm_table_get_metadata(t);
    const char *md_location = icm_table_get_metadata_location(t);
    char *md_dirs[3] = {NULL, NULL, NULL};
    size_t n_md_dirs = 0;
    int rc = icm__table_metadata_dirs(md, md_location, md_dirs, &n_md_dirs);
    if (rc != 0)
        return rc;
    /* A copy's metadata names the original's location (a real run is refused before this:
     * icm_table_check_own_metadata); its dry run is not judged by the original's history. */
    int own = icm_table_check_own_metadata(t);
    if (own == ICM_ENOMEM) {
        for (size_t i = 0; i < n_md_dirs; i++)
            icm__free(md_dirs[i]);
        return own;
    }
    if (own != 0)
        icm_error_clear();
    icm__site s = {.t = t, .io = icm_table_get_fileio(t), .uuid = icm_table_metadata_uuid(md),
                   .md_dirs = md_dirs, .n_md_dirs = n_md_dirs, .md_location = md_location,
                   .run = "expiry", .run_a = "an expiry", .copy = own == ICM_EREFUSED};
    icm__newer_commits nc;
    icm__newer_commits_init(&nc, &s);
    rc = icm__newer_commits_check(&nc);
    *newer_refused = rc == ICM_EREFUSED;
    icm__newer_commits_dispose(&nc);
    const char *roots[3];
    size_t n_roots = icm__table_roots(md, roots);
    for (size_t i = 0; i < n_roots && rc == 0; i++) {
        char *real = NULL;
        rc = icm__site_resolve(&s, roots[i], &real);
        if (rc != 0 && rc != ICM_ENOMEM) {
            icm_error_clear(); /* a place the io cannot resolve: walked by its name */
            rc = 0;
        }
        if (rc == 0)
            rc = icm__site_check_enclosing(&s, roots[i], real, "the table's folder");
        icm__free(real);
    }
    for (size_t i = 0; i < n_md_dirs; i++)
        icm__free(md_dirs[i]);
    return rc;
}

/* How many times newer commits past a pointer that moved meanwhile are looked at again. */
#define SITE_LOOKS 5

/*
 * Newer commits past the pointer t was loaded from are a stale catalog only when the catalog
 * still points there: a writer that committed twice since this run loaded the table (one
 * commit built on another, both past the loaded pointer) shows the same files. So a refusal
 * for newer commits reloads the table, and when its pointer moved, looks again at the new
 * one (at most SITE_LOOKS times, a writer committing all the while); a pointer that stays
 * where it was keeps the refusal. The reloaded table is the one the run goes on with, so its
 * own-metadata check runs again (own_check: the run is not a dry run).
 */
int icm__expire_check_site(icm_table *t, bool own_check)
{
    for (int look = 1;; look++) {
        bool newer = false;
        int rc = check_site_once(t, &newer);
        if (rc != ICM_EREFUSED || !newer || look == SITE_LOOKS)
            return rc;
        icm__error_saved *refusal = icm__error_save();
        char *loaded = icm__strdup(icm_table_get_metadata_location(t));
        if (refusal == NULL || loaded == NULL) {
            icm__error_restore(refusal);
            icm__free(loaded);
            return ICM_ENOMEM;
        }
        int rrc = icm_table_refresh(t);
        bool moved = rrc == 0 && strcmp(loaded, icm_table_get_metadata_location(t)) != 0;
        icm__free(loaded);
        if (rrc == ICM_ENOMEM) {
            icm__error_restore(refusal);
            return rrc;
        }
        if (!moved) {
            icm__error_restore(refusal); /* the catalog stays behind its table: stale */
            return ICM_EREFUSED;
        }
        icm__error_restore(refusal);
        icm_error_clear();
        if (own_check && (rc = icm_table_check_own_metadata(t)) != 0)
            return rc;
    }
}
