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
 *  - once per plan, the table's local roots are surveyed: resolved, and walked without
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maint/expire_internal.h"
#include "util/location.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* the survey                                                                                  */

/* How many folders the survey walks at most; past that it stops and assumes links. */
#define SURVEY_MAX_FOLDERS 1000000

typedef struct folder_stack {
    char **dir;
    size_t len, cap;
} folder_stack;

static int stack_push(folder_stack *s, char *dir)
{
    if (dir == NULL)
        return ICM_ENOMEM;
    if (s->len == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **grown = icm__reallocarray(s->dir, cap, sizeof *grown);
        if (grown == NULL) {
            icm__free(dir);
            return ICM_ENOMEM;
        }
        s->dir = grown;
        s->cap = cap;
    }
    s->dir[s->len++] = dir;
    return 0;
}

static void stack_dispose(folder_stack *s)
{
    for (size_t i = 0; i < s->len; i++)
        icm__free(s->dir[i]);
    icm__free(s->dir);
    memset(s, 0, sizeof *s);
}

/* What one folder holds: 1 when a symbolic link is among its entries (or it cannot be read
 * whole: then it may be), 0 otherwise; its sub-folders are pushed. ICM_ENOMEM. */
static int survey_folder(const char *path, folder_stack *s)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return errno == ENOENT ? 0 : 1; /* gone: nothing below; unreadable: may hold one */
    int found = 0;
    int fd = dirfd(d);
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (e == NULL) {
            found = errno != 0;
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno == ENOENT)
                    continue; /* went away meanwhile */
                found = 1;
                break;
            }
            type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
        }
        if (type == DT_LNK) {
            found = 1;
            break;
        }
        if (type == DT_DIR) {
            int rc = stack_push(s, icm__sprintf("%s/%s", path, e->d_name));
            if (rc != 0) {
                closedir(d);
                return rc;
            }
        }
    }
    closedir(d);
    return found;
}

/* Is there a symbolic link anywhere below the folder `path` (a file system path)? 1 yes (or it
 * could not be told), 0 no, ICM_ENOMEM. */
static int links_below(const char *path)
{
    folder_stack s = {NULL, 0, 0};
    char *first = icm__strdup(path);
    int rc = stack_push(&s, first);
    size_t walked = 0;
    while (rc == 0 && s.len > 0) {
        char *dir = s.dir[--s.len];
        rc = ++walked > SURVEY_MAX_FOLDERS ? 1 : survey_folder(dir, &s);
        icm__free(dir);
    }
    stack_dispose(&s);
    return rc;
}

/* Whether `location` is a file of this machine's file system: a local name, or one a path map
 * puts there. 1, 0 or ICM_ENOMEM. */
static int on_local_disk(icm_fileio *io, const char *location)
{
    if (icm__location_local_part(location) != NULL)
        return 1;
    char *mapped = NULL;
    if (icm_fileio_pathmap_apply(io, location, &mapped) != 0) {
        bool oom = icm_error_last()->code == ICM_ENOMEM;
        icm_error_clear(); /* not a path map: an object store */
        return oom ? ICM_ENOMEM : 0;
    }
    int local = icm__location_local_part(mapped) != NULL;
    icm__free(mapped);
    return local;
}

/* The file system path where the io keeps local `root` (through a path map's rules). */
static int physical_path(icm_fileio *io, const char *root, char **out)
{
    char *mapped = NULL;
    if (icm_fileio_pathmap_apply(io, root, &mapped) == 0) {
        const char *local = icm__location_local_part(mapped);
        int rc = local != NULL ? icm__location_fs_path(mapped, out) : 1;
        icm__free(mapped);
        return rc;
    }
    icm_error_clear(); /* not a path map: the name is the place */
    return icm__location_fs_path(root, out);
}

/* A root's length without trailing slashes (a root `/` matches nothing plainly: length 1). */
static size_t trimmed_len(const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    return n;
}

/* Whether roots[i] lies below another root by name (whose walk covers it; of two alike, the
 * first is walked). */
static bool inside_another(const char *const *roots, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++) {
        if (j == i || !icm__location_strip_prefix(roots[i], roots[j], NULL))
            continue;
        if (!icm__location_strip_prefix(roots[j], roots[i], NULL) || j < i)
            return true;
    }
    return false;
}

int icm__expire_alias_init(icm__expire_alias *a, icm_fileio *io, const char *const *roots,
                           size_t n_roots)
{
    memset(a, 0, sizeof *a);
    a->io = io;
    char *reals[ICM__EXPIRE_ALIAS_MAX_ROOTS] = {NULL, NULL, NULL};
    int rc = 0;
    for (size_t i = 0; i < n_roots && rc == 0 && a->n_roots < ICM__EXPIRE_ALIAS_MAX_ROOTS; i++) {
        int local = on_local_disk(io, roots[i]);
        if (local == ICM_ENOMEM) {
            rc = local;
            break;
        }
        if (!local)
            continue; /* an object store: no links */
        size_t k = a->n_roots++;
        a->active = true;
        /* an object-store name a path map puts on local disk: its files' names are URIs */
        a->mapped = a->mapped || icm__location_local_part(roots[i]) == NULL;
        if ((a->root[k] = icm__strdup(roots[i])) == NULL ||
            icm__location_fs_path(roots[i], &a->root_path[k]) != 0) {
            rc = ICM_ENOMEM;
            break;
        }
        a->root_len[k] = trimmed_len(a->root[k]);
        a->root_path_len[k] = trimmed_len(a->root_path[k]);
        if (a->root_path_len[k] == a->root_len[k] &&
            memcmp(a->root_path[k], a->root[k], a->root_len[k]) == 0)
            a->root_path_len[k] = 0; /* spelled alike: one comparison is enough */
        char *real = NULL;
        int rrc = icm_fileio_resolve(io, roots[i], &real);
        if (rrc == ICM_ENOMEM) {
            rc = rrc;
            break;
        }
        reals[k] = real;
        bool missing = rrc == ICM_ENOTFOUND;
        if (rrc != 0 && !missing) {
            a->links = true; /* where it is cannot be told */
            continue;
        }
        char *phys = NULL;
        int prc = physical_path(io, roots[i], &phys);
        if (prc == ICM_ENOMEM) {
            rc = prc;
            break;
        }
        if (prc != 0) {
            a->links = true;
            continue;
        }
        /* The io sees the root, but not where the survey looks: the survey cannot tell. */
        struct stat st;
        if (!missing && stat(phys, &st) != 0)
            a->links = true;
        int lrc = a->links || inside_another(roots, n_roots, i) ? 0 : links_below(phys);
        icm__free(phys);
        if (lrc == ICM_ENOMEM) {
            rc = lrc;
            break;
        }
        if (lrc != 0)
            a->links = true;
    }
    /* Roots reached through links may lie in each other where their names do not (or the
     * other way round): then a name below one is no guide to where it is below the other. */
    for (size_t i = 0; rc == 0 && i < a->n_roots; i++)
        for (size_t j = 0; j < a->n_roots; j++)
            if (i != j && reals[i] != NULL && reals[j] != NULL &&
                icm__location_strip_prefix(a->root[i], a->root[j], NULL) !=
                    icm__location_strip_prefix(reals[i], reals[j], NULL))
                a->links = true;
    for (size_t i = 0; i < ICM__EXPIRE_ALIAS_MAX_ROOTS; i++)
        icm__free(reals[i]);
    icm_error_clear();
    if (rc != 0) {
        icm__expire_alias_dispose(a);
        return icm__error_oom();
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
} identity;

static int by_real(const void *x, const void *y)
{
    return strcmp(((const identity *)x)->real, ((const identity *)y)->real);
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
        int rc = icm_fileio_resolve(a->io, a->noted[i], &real);
        if (rc == ICM_ENOMEM) {
            identities_free(ids, n);
            return rc;
        }
        if (rc == 0) {
            ids[n++] = (identity){real, i};
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
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *path = files[i].path;
        if (path == NULL || files[i].state != ICM_EXPIRE_FILE_PLANNED)
            continue;
        int local = on_local_disk(a->io, path);
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
            int rrc = icm_fileio_resolve(a->io, path, &real);
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
                identity key = {real, 0};
                const identity *hit = bsearch(&key, ids, n_ids, sizeof *ids, by_real);
                if (hit != NULL)
                    msg = icm__sprintf("not deleted: a retained snapshot references this file "
                                       "under another name, %s (through a symbolic link); kept",
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
    identities_free(ids, n_ids);
    return rc;
}
