/*
 * maint/link_guard.c: "no symbolic link between the table root and a file it deletes"
 * (link_guard.h). Names are compared after resolving: the real path of a file's folder must
 * be the real path of its root followed by exactly the segments the name has below that root.
 * A folder reached through a link (`data/alias -> .`, `data/bl -> /other/data`, a folder
 * swapped for a link) resolves elsewhere and its files are kept. Only reads storage.
 */
#include <stdio.h>
#include <string.h>

#include "maint/link_guard.h"
#include "util/location.h"
#include "util/util.h"

#define LINK_KEPT "reached through a symbolic link; kept"

int icm__link_guard_init(icm__link_guard *g, icm_fileio *io, const char *const *roots,
                         size_t n_roots)
{
    memset(g, 0, sizeof *g);
    g->io = io;
    for (size_t i = 0; i < n_roots && i < ICM__LINK_GUARD_MAX_ROOTS; i++) {
        g->n_roots++;
        if (icm__location_local_part(roots[i]) == NULL)
            continue; /* an object store: no links */
        if (icm__location_fs_path(roots[i], &g->root[i]) != 0)
            return ICM_ENOMEM;
        g->real_rc[i] = icm_fileio_resolve(&g->real[i], io, g->root[i]);
        if (g->real_rc[i] == ICM_ENOMEM)
            return ICM_ENOMEM;
    }
    icm_error_clear();
    return 0;
}

void icm__link_guard_dispose(icm__link_guard *g)
{
    for (size_t i = 0; i < ICM__LINK_GUARD_MAX_ROOTS; i++) {
        icm__free(g->root[i]);
        icm__free(g->real[i]);
    }
    memset(g, 0, sizeof *g);
}

void icm__link_cache_dispose(icm__link_cache *c)
{
    icm__free(c->dir);
    c->dir = NULL;
}

/* The root `dir` lies under (the longest, so a write.data.path inside the table location wins),
 * with *rest the part below it; -1 when none. */
static int root_of(const icm__link_guard *g, const char *dir, const char **rest)
{
    int best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < g->n_roots; i++) {
        const char *r;
        if (g->root[i] != NULL && icm__location_strip_prefix(dir, g->root[i], &r) &&
            (best < 0 || strlen(g->root[i]) > best_len)) {
            best = (int)i;
            best_len = strlen(g->root[i]);
            *rest = r;
        }
    }
    return best;
}

/* Does the real path `real` name `root_real` + "/" + `rest` ("" rest: the root itself)? */
static bool is_real_place(const char *real, const char *root_real, const char *rest)
{
    size_t n = strlen(root_real);
    while (n > 1 && root_real[n - 1] == '/')
        n--;
    if (strncmp(real, root_real, n) != 0)
        return false;
    if (rest[0] == '\0')
        return real[n] == '\0';
    if (!(n == 1 && root_real[0] == '/')) {
        if (real[n] != '/')
            return false;
        n++;
    }
    return strcmp(real + n, rest) == 0;
}

/* The verdict for files in folder `dir` (normalised local path); `why` gets the reason. */
static int judge_folder(const icm__link_guard *g, const char *dir, char *why, size_t why_len)
{
    const char *rest = "";
    int i = root_of(g, dir, &rest);
    if (i < 0) {
        snprintf(why, why_len, "outside the table location, write.data.path and "
                               "write.metadata.path; kept");
        return ICM_EREFUSED;
    }
    if (g->real[i] == NULL) {
        snprintf(why, why_len, "its table root %s cannot be resolved; kept", g->root[i]);
        return g->real_rc[i] == ICM_ENOTFOUND ? ICM_ENOTFOUND : g->real_rc[i];
    }
    char *real = NULL;
    int rc = icm_fileio_resolve(&real, g->io, dir);
    if (rc == ICM_ENOTFOUND || rc == ICM_ENOMEM) {
        snprintf(why, why_len, "its folder is gone");
        return rc;
    }
    if (rc != 0) {
        snprintf(why, why_len, "its folder cannot be resolved (%s); kept",
                 icm_error_last()->message);
        return rc;
    }
    bool same = is_real_place(real, g->real[i], rest);
    icm__free(real);
    if (same)
        return 0;
    snprintf(why, why_len, LINK_KEPT " (its folder is not where its name says below %s)",
             g->root[i]);
    return ICM_EREFUSED;
}

/* The folder part of a normalised local path, cut in place ("/" for a file at the root). */
static char *folder_of(char *path)
{
    char *slash = strrchr(path, '/');
    if (slash == NULL)
        return NULL;
    if (slash == path)
        slash[1] = '\0';
    else
        *slash = '\0';
    return path;
}

/* The folder of local `location` (new string in *dir), or an answer for the file without
 * one: 1 for a location that is not local (no links), ICM_EREFUSED, ICM_ENOMEM. */
static int folder_of_location(const char *location, char **dir)
{
    *dir = NULL;
    if (icm__location_local_part(location) == NULL)
        return 1; /* an object store: no links */
    if (icm__location_fs_path(location, dir) != 0)
        return ICM_ENOMEM;
    if (folder_of(*dir) == NULL) {
        icm__free(*dir);
        *dir = NULL;
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, location,
                              "not deleted: not an absolute path; kept");
    }
    return 0;
}

int icm__link_guard_check(const icm__link_guard *g, icm__link_cache *c, const char *location)
{
    char *dir = NULL;
    int rc = folder_of_location(location, &dir);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if (c->dir == NULL || strcmp(c->dir, dir) != 0) {
        icm__free(c->dir);
        c->dir = dir;
        c->verdict = judge_folder(g, dir, c->why, sizeof c->why);
        if (c->verdict == ICM_ENOMEM) {
            c->dir = NULL;
            icm__free(dir);
            return ICM_ENOMEM;
        }
    } else {
        icm__free(dir);
    }
    if (c->verdict == 0)
        return 0;
    return icm__error_set(ICM_ERRCLASS_MAINT, c->verdict, location, "not deleted: %s", c->why);
}

/* Room for folder number k in the memo's arrays. */
static int memo_room(icm__link_memo *m, size_t k)
{
    if (k < m->cap)
        return 0;
    size_t cap = m->cap != 0 ? 2 * m->cap : 256;
    int *v = icm__reallocarray(m->verdict, cap, sizeof *v);
    if (v == NULL)
        return ICM_ENOMEM;
    m->verdict = v;
    char **w = icm__reallocarray(m->why, cap, sizeof *w);
    if (w == NULL)
        return ICM_ENOMEM;
    m->why = w;
    m->cap = cap;
    return 0;
}

int icm__link_guard_check_memo(const icm__link_guard *g, icm__link_memo *m, const char *location)
{
    char *dir = NULL;
    int rc = folder_of_location(location, &dir);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    size_t len = strlen(dir), k = 0;
    bool known = icm__strset_contains(&m->dirs, dir, len);
    if (!known && icm__strset_count(&m->dirs) >= ICM__LINK_MEMO_MAX_DIRS) {
        icm__free(dir); /* remembered enough: the one-folder cache for the rest */
        return icm__link_guard_check(g, &m->overflow, location);
    }
    bool added = false;
    if (memo_room(m, icm__strset_count(&m->dirs)) != 0 ||
        icm__strset_add_numbered(&m->dirs, dir, len, &added, &k) != 0) {
        icm__free(dir);
        return ICM_ENOMEM;
    }
    if (added || m->verdict[k] == ICM_ENOMEM) {
        /* (a folder whose judging ran out of memory is judged again next time) */
        char why[sizeof ((icm__link_cache *)NULL)->why];
        int verdict = judge_folder(g, dir, why, sizeof why);
        char *copy = verdict != 0 && verdict != ICM_ENOMEM ? icm__strdup(why) : NULL;
        if (added)
            m->why[k] = NULL;
        if (verdict == ICM_ENOMEM || (verdict != 0 && copy == NULL)) {
            m->verdict[k] = ICM_ENOMEM;
            icm__free(dir);
            return ICM_ENOMEM;
        }
        icm__free(m->why[k]);
        m->why[k] = copy;
        m->verdict[k] = verdict;
    }
    icm__free(dir);
    if (m->verdict[k] == 0)
        return 0;
    return icm__error_set(ICM_ERRCLASS_MAINT, m->verdict[k], location, "not deleted: %s",
                          m->why[k]);
}

void icm__link_memo_dispose(icm__link_memo *m)
{
    size_t n = icm__strset_count(&m->dirs);
    for (size_t k = 0; k < n && k < m->cap; k++)
        icm__free(m->why[k]);
    icm__free(m->why);
    icm__free(m->verdict);
    icm__strset_dispose(&m->dirs);
    icm__link_cache_dispose(&m->overflow);
    memset(m, 0, sizeof *m);
}
