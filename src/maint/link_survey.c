/*
 * maint/link_survey.c: where a symbolic link may give a table's local files second names: the
 * survey of a table's roots that expiry's second-name rule (expire_alias.c) and the orphan
 * sweep's keep set (orphans_refs.c) share (link_survey.h).
 *
 * A symbolic link below a root makes any name of the table a possible second name of another
 * file; with none there, a name plainly below a root is its own real name. The survey tells the
 * two apart once per operation: each local root is resolved, and walked without following
 * links, looking for a symbolic link anywhere below it. What cannot be told (a root that cannot
 * be resolved or walked, a walk too long, roots that lie in each other through links where
 * their names do not) counts as a link: the caller then resolves every name, which costs time,
 * never a file.
 *
 * Only reads storage (realpath through icm_fileio_resolve, readdir and stat): it is part of
 * plans, which a dry run runs as is.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maint/link_survey.h"
#include "util/location.h"
#include "util/util.h"

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

int icm__link_survey_on_local_disk(icm_fileio *io, const char *location)
{
    if (icm__location_local_part(location) != NULL)
        return 1;
    char *mapped = NULL;
    if (icm_fileio_pathmap_apply(&mapped, io, location) != 0) {
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
    if (icm_fileio_pathmap_apply(&mapped, io, root) == 0) {
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

int icm__link_survey_init(icm__link_survey *a, icm_fileio *io, const char *const *roots,
                          size_t n_roots)
{
    memset(a, 0, sizeof *a);
    char *reals[ICM__LINK_SURVEY_MAX_ROOTS] = {NULL, NULL, NULL};
    int rc = 0;
    for (size_t i = 0; i < n_roots && rc == 0 && a->n_roots < ICM__LINK_SURVEY_MAX_ROOTS; i++) {
        int local = icm__link_survey_on_local_disk(io, roots[i]);
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
        int rrc = icm_fileio_resolve(&real, io, roots[i]);
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
    for (size_t i = 0; i < ICM__LINK_SURVEY_MAX_ROOTS; i++)
        icm__free(reals[i]);
    icm_error_clear();
    if (rc != 0) {
        icm__link_survey_dispose(a);
        return icm__error_oom();
    }
    return 0;
}

void icm__link_survey_dispose(icm__link_survey *a)
{
    for (size_t i = 0; i < ICM__LINK_SURVEY_MAX_ROOTS; i++) {
        icm__free(a->root[i]);
        icm__free(a->root_path[i]);
    }
    memset(a, 0, sizeof *a);
}
