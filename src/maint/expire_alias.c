/*
 * maint/expire_alias.c: one file, two names — expiry keeps a planned file that a retained
 * snapshot reaches under another name (expire_internal.h, "Second names").
 *
 * The keep set compares names, and the link guard (link_guard.h) looks only at the name being
 * deleted. A symbolic link gives a local file more names: with `data/lnk -> real`, a retained
 * snapshot naming `data/lnk/f` reads the file an expired one names `data/real/f`; so does one
 * naming `data/lnk/../f` with `lnk -> real/sub`, `t/d2/real/f` with `t/d2 -> data`,
 * `data/a.parquet` with `a.parquet -> b.parquet`, or `/outside/x/f` with `/outside/x ->
 * t/data`. The rule: a planned local file whose real path (every link resolved, as the kernel
 * resolves it) is the real path of a local file a retained snapshot references is kept.
 *
 * Which retained references are resolved (the hot path stays free of system calls per file):
 *  - once per plan, the table's local roots are surveyed (link_survey.h, shared with the
 *    orphan sweep): resolved, and walked without
 *    following links, looking for a symbolic link anywhere below them;
 *  - a link below a root (or a root reached through a link when the table has several local
 *    roots, which may then overlap; or a walk that could not finish) means any reference may
 *    be a second name: every retained local reference is resolved ("link mode");
 *  - otherwise only a reference that is not plainly below a root — named outside the table,
 *    or with a `.`/`..` segment or doubled slash below it — can lead to a file of the table
 *    under another name (through links outside the table, or the root's own), and only those
 *    are resolved. A plainly named reference below a root is then its own real name (the root
 *    resolved), exactly like a candidate below the same root, so the keep set by name decides.
 * Candidates are resolved only when some retained reference was resolved. Object-store
 * locations have no links: a table without a local root costs nothing here. An object-store
 * location a path map puts on local disk is local (its references are resolved through the
 * map).
 *
 * What a retained reference that cannot be resolved (a permission error, a link loop; a
 * missing one names no file and aliases nothing) means is unknown: every local candidate is
 * kept. A candidate that cannot be resolved is kept.
 *
 * Only reads storage (realpath through icm_fileio_resolve, and readdir for the survey): it is
 * part of the plan, which a dry run runs as is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "maint/expire_internal.h"
#include "util/location.h"
#include "util/mounts.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* the survey (link_survey.h)                                                                  */

int icm__expire_alias_init(icm__expire_alias *a, icm_fileio *io, const char *const *roots,
                           size_t n_roots)
{
    memset(a, 0, sizeof *a);
    a->io = io;
    icm__link_survey s;
    if (icm__link_survey_init(&s, io, roots, n_roots) != 0)
        return icm__error_oom();
    a->active = s.active;
    a->links = s.links;
    a->mapped = s.mapped;
    a->n_roots = s.n_roots;
    for (size_t i = 0; i < ICM__EXPIRE_ALIAS_MAX_ROOTS; i++) {
        a->root[i] = s.root[i]; /* taken */
        a->root_path[i] = s.root_path[i];
        a->root_len[i] = s.root_len[i];
        a->root_path_len[i] = s.root_path_len[i];
    }
    return 0;
}

void icm__expire_alias_dispose(icm__expire_alias *a)
{
    for (size_t i = 0; i < ICM__EXPIRE_ALIAS_MAX_ROOTS; i++) {
        icm__free(a->root[i]);
        icm__free(a->root_path[i]);
    }
    for (size_t i = 0; i < a->n_noted; i++)
        icm__free(a->noted[i]);
    icm__free(a->noted);
    icm__pathset_free(a->noted_set);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------------------------------------------ */
/* which retained references are resolved                                                      */

/* A local location: no scheme, or `file:`. */
static bool is_local(const char *loc, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = loc[i];
        if (c == ':')
            return i == 4 && strncasecmp(loc, "file", 4) == 0;
        bool scheme_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
        if (!scheme_char)
            return true;
    }
    return true;
}

/* `rest` (starting with '/') has no `..` segment, so the kernel finds it below the root as the
 * name says (no link lies below the root; `.` segments and doubled slashes lead nowhere else,
 * and the keep set's keys resolve them as the kernel does). `last`: its last slash. Called for
 * every retained entry a manifest decodes, so only its folders are searched for dots. */
static bool plain_rest(const char *rest, size_t len, const char *last)
{
    if (rest + len - last == 3 && last[1] == '.' && last[2] == '.')
        return false;
    for (const char *dot = memchr(rest, '.', (size_t)(last - rest)); dot != NULL;
         dot = memchr(dot + 1, '.', (size_t)(last - dot - 1))) {
        if (dot[-1] == '/' && dot[1] == '.' && (dot + 2 == last || dot[2] == '/'))
            return false;
    }
    return true;
}

bool icm__expire_alias_wants_named(const icm__expire_alias *a, const char *location, size_t len,
                                   const char *name)
{
    if (!a->active)
        return false;
    if (!a->links) {
        const char *last = name != NULL && name > location && name <= location + len &&
                                   name[-1] == '/'
                               ? name - 1
                               : memrchr(location, '/', len);
        for (size_t i = 0; last != NULL && i < a->n_roots; i++) {
            for (size_t k = 0; k < 2; k++) {
                const char *root = k == 0 ? a->root[i] : a->root_path[i];
                size_t n = k == 0 ? a->root_len[i] : a->root_path_len[i];
                if (n > 0 && location + n <= last && location[n] == '/' &&
                    memcmp(location, root, n) == 0 && plain_rest(location + n, len - n, last))
                    return false;
            }
        }
    }
    return a->mapped || is_local(location, len);
}

bool icm__expire_alias_wants(const icm__expire_alias *a, const char *location, size_t len)
{
    return icm__expire_alias_wants_named(a, location, len, NULL);
}

int icm__expire_alias_note(icm__expire_alias *a, const char *location)
{
    if (!icm__expire_alias_wants(a, location, strlen(location)))
        return 0;
    bool added = false;
    int rc = a->noted_set == NULL ? icm__pathset_new(&a->noted_set, 0) : 0;
    if (rc == 0)
        rc = icm__pathset_add(a->noted_set, location, &added);
    if (rc != 0 || !added)
        return rc;
    if (a->n_noted == a->cap_noted) {
        size_t cap = a->cap_noted ? a->cap_noted * 2 : 16;
        char **grown = icm__reallocarray(a->noted, cap, sizeof *grown);
        if (grown == NULL)
            return icm__error_oom();
        a->noted = grown;
        a->cap_noted = cap;
    }
    if ((a->noted[a->n_noted] = icm__strdup(location)) == NULL)
        return icm__error_oom();
    a->n_noted++;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the check                                                                                   */

typedef struct identity {
    char *real;   /* where a retained reference really is */
    size_t noted; /* its index in a->noted */
    icm__file_id id; /* its device and inode (a local file that exists); else id.ino 0 */
} identity;

static int by_real(const void *x, const void *y)
{
    return strcmp(((const identity *)x)->real, ((const identity *)y)->real);
}

static int by_id(const void *x, const void *y)
{
    const icm__file_id *a = &((const identity *)x)->id, *b = &((const identity *)y)->id;
    return a->dev != b->dev ? (a->dev > b->dev) - (a->dev < b->dev)
                            : (a->ino > b->ino) - (a->ino < b->ino);
}

/* The device and inode of the local file at location `real` (every link resolved); false
 * when it has none to tell (not local, gone, or no memory: then nothing matches it). */
static bool file_id(const char *real, icm__file_id *out)
{
    char *path = NULL;
    bool ok = icm__location_local_part(real) != NULL && icm__location_fs_path(real, &path) == 0 &&
              icm__file_id_of(path, true, out);
    icm__free(path);
    return ok;
}

static void identities_free(identity *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        icm__free(ids[i].real);
    icm__free(ids);
}

/* Resolve every noted reference (once per check: the references are few, or the table has
 * links). *unknown: the index of one that could not be resolved, else SIZE_MAX. */
static int resolve_noted(icm__expire_alias *a, identity **out, size_t *n_out, size_t *unknown)
{
    *out = NULL;
    *n_out = 0;
    *unknown = SIZE_MAX;
    identity *ids = icm__calloc(a->n_noted ? a->n_noted : 1, sizeof *ids);
    if (ids == NULL)
        return icm__error_oom();
    size_t n = 0;
    for (size_t i = 0; i < a->n_noted; i++) {
        char *real = NULL;
        int rc = icm_fileio_resolve(&real, a->io, a->noted[i]);
        if (rc == ICM_ENOMEM) {
            identities_free(ids, n);
            return rc;
        }
        if (rc == 0) {
            ids[n] = (identity){real, i, {0, 0}};
            if (!file_id(real, &ids[n].id))
                ids[n].id = (icm__file_id){0, 0};
            n++;
        } else if (rc != ICM_ENOTFOUND && *unknown == SIZE_MAX) {
            *unknown = i; /* a missing one names no file: it aliases nothing */
        }
    }
    icm_error_clear();
    qsort(ids, n, sizeof *ids, by_real);
    *out = ids;
    *n_out = n;
    return 0;
}

static int keep_one(icm_expire_result *r, const char *path, const char *message, bool *kept)
{
    *kept = true;
    return icm__expire_add_problem(r, ICM_EXPIRE_PROBLEM_THROUGH_LINK, path, ICM_EREFUSED,
                                   message);
}

int icm__expire_alias_check(icm__expire_alias *a, const icm_expire_file *files, size_t n,
                            bool *kept, icm_expire_result *r)
{
    memset(kept, 0, n * sizeof *kept);
    if (!a->active || a->n_noted == 0 || n == 0)
        return 0;
    identity *ids = NULL;
    size_t n_ids = 0, unknown = SIZE_MAX;
    int rc = resolve_noted(a, &ids, &n_ids, &unknown);
    /* The same references by identity: one folder mounted at two paths (a bind mount, or a
     * file system mounted twice) gives a file two real paths but one device and inode
     * (adversary round 8, finding 3; the sweep's rule, orphans_mounts.c). */
    identity *by_ids = rc == 0 ? icm__calloc(n_ids ? n_ids : 1, sizeof *by_ids) : NULL;
    if (rc == 0 && by_ids == NULL)
        rc = icm__error_oom();
    if (rc == 0) {
        memcpy(by_ids, ids, n_ids * sizeof *ids);
        qsort(by_ids, n_ids, sizeof *by_ids, by_id);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *path = files[i].path;
        if (path == NULL || files[i].state != ICM_EXPIRE_FILE_PLANNED)
            continue;
        int local = icm__link_survey_on_local_disk(a->io, path);
        if (local == ICM_ENOMEM) {
            rc = local;
            break;
        }
        if (!local)
            continue;
        char *msg = NULL;
        if (unknown != SIZE_MAX) {
            msg = icm__sprintf("not deleted: where the file %s, which a retained snapshot "
                               "references, really is cannot be told, so it may be this file "
                               "under another name (through a symbolic link); kept",
                               a->noted[unknown]);
        } else {
            char *real = NULL;
            int rrc = icm_fileio_resolve(&real, a->io, path);
            if (rrc == ICM_ENOMEM) {
                rc = rrc;
                break;
            }
            if (rrc == ICM_ENOTFOUND) {
                icm_error_clear();
                continue; /* no file by that name: deleting it deletes nothing */
            }
            if (rrc != 0) {
                msg = icm__sprintf("not deleted: where it really is cannot be told (%s), so a "
                                   "retained snapshot may reference it under another name; "
                                   "kept",
                                   icm_error_last()->message);
            } else {
                identity key = {real, 0, {0, 0}};
                const identity *hit = bsearch(&key, ids, n_ids, sizeof *ids, by_real);
                if (hit != NULL)
                    msg = icm__sprintf("not deleted: a retained snapshot references this file "
                                       "under another name, %s (through a symbolic link); kept",
                                       a->noted[hit->noted]);
                else if (file_id(real, &key.id) && key.id.ino != 0 &&
                         (hit = bsearch(&key, by_ids, n_ids, sizeof *ids, by_id)) != NULL)
                    msg = icm__sprintf("not deleted: a retained snapshot references this file "
                                       "under another name, %s (the same file: another mount "
                                       "of its folder, or a hard link); kept",
                                       a->noted[hit->noted]);
            }
            icm__free(real);
            icm_error_clear();
            if (rrc == 0 && msg == NULL)
                continue;
        }
        rc = msg == NULL ? icm__error_oom() : keep_one(r, path, msg, &kept[i]);
        icm__free(msg);
    }
    icm__free(by_ids); /* (its strings are ids') */
    identities_free(ids, n_ids);
    return rc;
}
