/*
 * maint/orphans_nested.c: a reviewed plan's candidates inside another table's folder
 * (options.exact_file_list, `icemaint apply`).
 *
 * A listing sweep sees every `*.metadata.json` below its location, so another table nested
 * in this one (a filesystem-layout table no catalog lists) is refused
 * (icm__orphans_check_other_tables). A plan's file list names only the planned files: a table
 * created inside the location after the plan was made, that took one of the planned orphans as
 * a live file (add-files of an old file keeps its size and mtime), is invisible to the rest of
 * the sweep; so is one a tampered plan names files of. Here, as expiry does for its plan
 * (expire_foreign.c, "Tables no catalog lists"), each candidate's ancestor folders below (and
 * at) the table root holding it are looked at: a folder whose `metadata/` holds
 * `version-hint.text`/`.txt` or a `*.metadata.json`, and is not one of this table's metadata
 * folders, is taken for another table's location, and the candidates in it are taken out of
 * the plan (a warning each; keeping a file is the safe side, a folder that cannot be listed
 * counts as such a table). One listing per distinct folder, stopped at its first table file.
 *
 * An inventory report or a file list (options.inventory, options.file_list) is a snapshot
 * too, trusted only for its data rows as candidates, never as proof that nothing else is
 * there: a table (or a Delta log, a Hudi timeline) made below the location after it was taken,
 * or whose rows it leaves out (a prefix-filtered or tampered report), is not in it. So the same
 * walk looks at each candidate's folders live (icm__orphans_check_snapshot_folders), and what
 * it finds goes through the listing's own checks: a `_delta_log/` or `.hoodie/` refuses
 * (other_format.h), and a table metadata document is judged as a listed one
 * (icm__orphans_check_other_tables: another table's refuses, the table's own is looked at for
 * newer commits); a metadata folder holding only a version hint refuses (which table it is
 * cannot be told), and one that cannot be listed fails the sweep (as a listing error does).
 * These live looks are listings, a few per folder, so the distinct folders of all candidates
 * are gathered first and looked at LIVE_THREADS at a time (on an object store each is a round
 * trip); their verdicts are then taken in the order the candidates name the folders, so the
 * refusal reported is the one a look at one folder after another would have stopped at.
 *
 * Read-only (the dry-run rule of orphans_plan.h).
 */
#include <string.h>

#include "maint/keepset.h"
#include "maint/orphans_plan.h"
#include "maint/other_format.h"
#include "util/location.h"
#include "util/location_id.h"
#include "util/parallel.h"
#include "util/strset.h"
#include "util/util.h"

/* Folders looked at live at once (each look is one to three listings). */
#define LIVE_THREADS 32

typedef struct nested {
    plan *p;
    bool live;          /* a snapshot's candidates: documents found are judged, formats looked
                           for, and what cannot be told refuses (instead of holding) */
    char *roots[3];     /* the table's roots as location keys (NULL: relative) */
    icm__strset looked; /* folders whose verdict is known */
    icm__strset tables; /* of those, the ones that are (or may be) another table's location */
    icm__ptrvec live_dirs; /* live: the folders to look at, in the order first named */
} nested;

static bool is_own_metadata(const plan *p, const char *md_dir)
{
    for (size_t i = 0; i < p->n_md_dirs; i++)
        if (p->md_dirs[i] != NULL && icm__location_equal(md_dir, p->md_dirs[i]))
            return true;
    return false;
}

/* One live look's outcome: its code (its error saved), the document it found. */
typedef struct live_look {
    int rc;
    icm__error_saved *error;
    char *document;
} live_look;

/* A snapshot's candidate folder, looked at live: another format's log refuses; a table
 * metadata document found in its metadata folder is kept for icm__orphans_check_other_tables
 * to judge (the verdict is that check's); table metadata without a document (a version hint
 * only) refuses. Reads the plan only (many run at once). */
static int look_live(const plan *p, const char *folder, live_look *out)
{
    char *md_dir = icm__sprintf("%s/metadata", folder);
    if (md_dir == NULL)
        return ICM_ENOMEM;
    int rc = icm__other_format_check_folder(p->io, folder);
    icm__table_md_found found = {false, NULL};
    if (rc == 0 && !is_own_metadata(p, md_dir))
        rc = icm__find_table_metadata(p->io, md_dir, true, &found);
    if (rc == 0 && found.document != NULL) {
        out->document = found.document;
        found.document = NULL;
    } else if (rc == 0 && found.any) {
        rc = icm__orphan_refuse(md_dir,
                                "table metadata (a version hint) that is not this table's lies "
                                "under %s, which the %s does not show; which table it is cannot "
                                "be told; nothing is deleted (carve that folder out with "
                                "--exclude-location)",
                                p->list_root,
                                p->o->inventory != NULL ? "inventory report" : "file list");
    }
    icm__free(found.document);
    icm__free(md_dir);
    return rc;
}

typedef struct live_looks {
    const plan *p;
    const icm__ptrvec *dirs;
    live_look *out;
} live_looks;

static void look_live_at(void *ctx, size_t i)
{
    live_looks *l = ctx;
    live_look *o = &l->out[i];
    o->rc = look_live(l->p, l->dirs->items[i], o);
    if (o->rc != 0 && o->rc != ICM_ENOMEM)
        o->error = icm__error_save();
}

/* Whether the folder dir[0..len) is another table's location; each folder is looked at once. */
static int folder_is_table(nested *n, const char *dir, size_t len, bool *table)
{
    *table = false;
    if (icm__strset_contains(&n->looked, dir, len)) {
        *table = icm__strset_contains(&n->tables, dir, len);
        return 0;
    }
    char *md_dir = icm__sprintf("%.*s/metadata", (int)len, dir);
    if (md_dir == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    if (n->live) {
        /* looked at later, all at once (icm__orphans_check_snapshot_folders) */
        char *folder = icm__strndup(dir, len);
        if (folder == NULL || icm__ptrvec_push(&n->live_dirs, folder) != 0) {
            icm__free(folder);
            rc = ICM_ENOMEM;
        }
    } else if (!is_own_metadata(n->p, md_dir)) {
        icm__table_md_found found = {false, NULL};
        rc = icm__find_table_metadata(n->p->io, md_dir, false, &found);
        *table = rc != 0 || found.any; /* not listable: taken for a table */
        if (rc != 0 && rc != ICM_ENOMEM) {
            icm_error_clear();
            rc = 0;
        }
    }
    icm__free(md_dir);
    if (rc == 0)
        rc = icm__strset_add(&n->looked, dir, len, NULL);
    if (rc == 0 && *table)
        rc = icm__strset_add(&n->tables, dir, len, NULL);
    return rc;
}

/* Shorten key[0..*len) to its parent folder; false once that lies above the root (root_len
 * bytes). The root itself is looked at too (a table exactly at write.data.path); at the
 * table's location its metadata folder is this table's own and is passed over. */
static bool parent_folder(const char *key, size_t *len, size_t root_len)
{
    size_t l = *len;
    while (l > 0 && key[l - 1] != '/')
        l--;
    if (l > 0)
        l--;
    if (l < root_len)
        return false;
    *len = l;
    return true;
}

/* *why (new string) when `path` lies in another table's folder, else NULL. */
static int holder(nested *n, const char *path, char **why)
{
    *why = NULL;
    char *key = NULL;
    int rc = icm__location_key(path, &key);
    for (size_t i = 0; rc == 0 && *why == NULL && i < n->p->n_roots; i++) {
        const char *root = n->roots[i];
        if (root == NULL || !icm__location_is_inside(key, root))
            continue;
        size_t root_len = strlen(root), len = strlen(key);
        while (rc == 0 && *why == NULL && parent_folder(key, &len, root_len)) {
            bool table;
            rc = folder_is_table(n, key, len, &table);
            if (rc == 0 && table &&
                (*why = icm__sprintf("the folder %.*s has a metadata folder with table "
                                     "metadata that is not this table's (another table may use "
                                     "it)", (int)len, key)) == NULL)
                rc = ICM_ENOMEM;
        }
    }
    icm__free(key);
    return rc;
}

static int nested_init(nested *n, plan *p, bool live)
{
    memset(n, 0, sizeof *n);
    n->p = p;
    n->live = live;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->n_roots; i++)
        if (icm__location_is_absolute(p->roots[i]))
            rc = icm__location_key(p->roots[i], &n->roots[i]);
    return rc;
}

static void nested_dispose(nested *n)
{
    for (size_t i = 0; i < 3; i++)
        icm__free(n->roots[i]);
    icm__strset_dispose(&n->looked);
    icm__strset_dispose(&n->tables);
    icm__ptrvec_dispose(&n->live_dirs, icm__free);
}

int icm__orphans_hold_nested_tables(plan *p)
{
    icm_orphan_result *r = p->r;
    if (r->orphan_count == 0)
        return 0;
    nested n;
    int rc = nested_init(&n, p, false);
    char **why = rc == 0 ? icm__calloc(r->orphan_count, sizeof *why) : NULL;
    if (rc == 0 && why == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++)
        rc = holder(&n, r->orphans[i].path, &why[i]);
    rc = icm__orphans_take_out(p, why, rc);
    nested_dispose(&n);
    return rc;
}

int icm__orphans_check_snapshot_folders(plan *p)
{
    icm_orphan_result *r = p->r;
    if (r->orphan_count == 0)
        return 0;
    nested n;
    size_t documents = p->unreferenced_md.len;
    int rc = nested_init(&n, p, true);
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++) {
        char *why = NULL;
        rc = holder(&n, r->orphans[i].path, &why); /* (live: gathers the folders only) */
        icm__free(why);
    }
    size_t m = n.live_dirs.len;
    live_look *looks = rc == 0 ? icm__calloc(m > 0 ? m : 1, sizeof *looks) : NULL;
    if (rc == 0 && looks == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0) {
        live_looks l = {p, &n.live_dirs, looks};
        icm__parallel_for(m, LIVE_THREADS, look_live_at, &l);
    }
    /* the verdicts in the order the candidates named the folders: the first failure is the
     * one a look at one folder after another would have stopped at */
    for (size_t i = 0; rc == 0 && i < m; i++) {
        if (looks[i].rc != 0) {
            rc = looks[i].rc;
            if (looks[i].error != NULL) {
                icm__error_restore(looks[i].error); /* (frees it) */
                looks[i].error = NULL;
            } else if (rc == ICM_ENOMEM) {
                icm__error_oom();
            }
        } else if (looks[i].document != NULL) {
            if (icm__ptrvec_push(&p->unreferenced_md, looks[i].document) != 0)
                rc = ICM_ENOMEM;
            else
                looks[i].document = NULL;
        }
    }
    for (size_t i = 0; looks != NULL && i < m; i++) {
        icm__free(looks[i].error);
        icm__free(looks[i].document);
    }
    icm__free(looks);
    nested_dispose(&n);
    /* the documents found, judged as a listing's (documents already judged pass again) */
    if (rc == 0 && p->unreferenced_md.len > documents)
        rc = icm__orphans_check_other_tables(p);
    return rc;
}
