/*
 * maint/folder_names.c: the names a local folder holds, read once for a run of files in it
 * (folder_names.h). Only reads storage.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "io/fileio_internal.h"
#include "io/probe.h"
#include "maint/folder_names.h"
#include "util/location.h"
#include "util/util.h"

int icm__folder_names_init(icm__folder_names *f, icm_fileio *io)
{
    memset(f, 0, sizeof *f);
    f->io = io;
    icm_fileio *local = NULL;
    if (icm_fileio_local_new(&local) != 0)
        return ICM_ENOMEM;
    f->local = local->methods;
    icm_fileio_free(local);
    return 0;
}

void icm__folder_names_dispose(icm__folder_names *f)
{
    icm__free(f->dir);
    icm__strset_dispose(&f->names);
    memset(f, 0, sizeof *f);
}

bool icm__folder_names_same_folder(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    return sa != NULL && sb != NULL && sa - a == sb - b && memcmp(a, b, (size_t)(sa - a)) == 0;
}

/* Whether the table's FileIO opens `location` as the local back end does: at its file-system
 * path, with no rewriting. */
static bool read_directly(const icm__folder_names *f, const char *location)
{
    if (icm__location_local_part(location) == NULL || f->io == NULL)
        return false;
    if (f->io->methods == f->local)
        return true;
    if (!icm__fileio_is_resolving(f->io))
        return false;
    icm_fileio *backend = NULL;
    if (icm__fileio_resolving_backend(f->io, location, &backend) != 0) {
        icm_error_clear();
        return false;
    }
    return backend != NULL && backend->methods == f->local;
}

/* Read folder `dir` (taken) for a run of `run` files. Returns 0 or ICM_ENOMEM. */
static int read_folder(icm__folder_names *f, char *dir, size_t run)
{
    icm__free(f->dir);
    icm__strset_dispose(&f->names);
    f->dir = dir;
    f->state = ICM__NAME_UNKNOWN;
    if (run < ICM__FOLDER_RUN_MIN)
        return 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        /* no such folder: no file in it (an open would say ENOENT or ENOTDIR too) */
        if (errno == ENOENT || errno == ENOTDIR)
            f->state = ICM__NAME_ABSENT;
        return 0;
    }
    size_t budget = run * ICM__FOLDER_ENTRIES_PER_FILE, seen = 0;
    int rc = 0;
    bool whole = false;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (e == NULL) {
            whole = errno == 0;
            break;
        }
        if (++seen > budget)
            break; /* too big a folder for this run: each file is asked */
        if ((rc = icm__strset_add(&f->names, e->d_name, strlen(e->d_name), NULL)) != 0)
            break;
    }
    closedir(d);
    if (rc == 0 && whole)
        f->state = ICM__NAME_PRESENT;
    else
        icm__strset_dispose(&f->names);
    return rc;
}

int icm__folder_names_ask(icm__folder_names *f, const char *location, size_t run,
                          icm__folder_answer *answer)
{
    *answer = ICM__NAME_UNKNOWN;
    if (!read_directly(f, location))
        return 0;
    char *path = NULL;
    if (icm__location_fs_path(location, &path) != 0)
        return ICM_ENOMEM;
    char *slash = strrchr(path, '/');
    if (slash == NULL || slash == path || slash[1] == '\0') {
        icm__free(path); /* a file at the root, or no name: asked */
        return 0;
    }
    *slash = '\0';
    const char *name = slash + 1;
    int rc = 0;
    if (f->dir == NULL || strcmp(f->dir, path) != 0) {
        char *dir = icm__strdup(path);
        if (dir == NULL) {
            icm__free(path);
            return ICM_ENOMEM;
        }
        rc = read_folder(f, dir, run);
    }
    if (rc == 0 && f->state == ICM__NAME_ABSENT)
        *answer = ICM__NAME_ABSENT;
    else if (rc == 0 && f->state == ICM__NAME_PRESENT)
        *answer = icm__strset_contains(&f->names, name, strlen(name)) ? ICM__NAME_PRESENT
                                                                        : ICM__NAME_ABSENT;
    icm__free(path);
    return rc;
}
