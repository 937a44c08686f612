/*
 * io/move.c: moving one object to another name on the same store, never replacing one
 * (implements icm__fileio_move, io/fileio_internal.h). The trash (maint/trash.c) is its caller.
 *
 * The FileIOs that only pick or rename are looked through as io/probe.c does (a resolving
 * FileIO picks the back end by scheme, a path map renames): both names must end at the same
 * back end. There, a local file is renamed (renameat2 RENAME_NOREPLACE, or link + unlink
 * where the file system lacks it: both refuse an existing target atomically), and an S3 key is
 * copied server side and deleted once the copy is confirmed (io/s3/s3.c). No other back end
 * can move (ICM_EUNSUPPORTED): a copy through read and write would hold whole files in memory
 * and is no move, so the trash refuses such a store up front instead.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "icemaint/errors.h"
#include "io/fileio_internal.h"
#include "io/probe.h"
#include "util/util.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Wrappers looked through at most (a path map over a resolving FileIO is two). */
#define MAX_DEPTH 8
/* Times a move makes its target's folders and renames when the folder vanished in between. */
#define MAKE_DIRS_ATTEMPTS 3

/* Refusal of a folder that is a symbolic link: no folder is made, nothing moved, through it. */
static int link_refused(const char *path, const char *location)
{
    return icm__error_set(ICM_ERRCLASS_IO, ICM_EREFUSED, location,
                          "%s is a symbolic link; no folder is made and nothing is moved "
                          "through it",
                          path);
}

/* mkdir -p of the folder `path` (absolute). The folder, and the existing one it is made
 * below, must be real folders, not symbolic links (one found, or raced in after a mkdir, is
 * ICM_EREFUSED): a link there would carry the move out of the trash or the table location. */
static int make_dirs(char *path, const char *location)
{
    struct stat st;
    if (lstat(path, &st) == 0)
        return S_ISDIR(st.st_mode)   ? 0
               : S_ISLNK(st.st_mode) ? link_refused(path, location)
                                     : icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, location,
                                                      "%s is not a folder", path);
    char *slash = strrchr(path, '/');
    if (slash != NULL && slash != path) {
        *slash = '\0';
        int rc = make_dirs(path, location);
        *slash = '/';
        if (rc != 0)
            return rc;
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return icm__error_set_errno(ICM_ERRCLASS_IO, icm__errno_to_code(errno), errno, location,
                                    "cannot create folder %s", path);
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return link_refused(path, location);
    return 0;
}

static void sync_dir_of(const char *path)
{
    char *dir = icm__strdup(path);
    char *slash = dir != NULL ? strrchr(dir, '/') : NULL;
    if (slash == NULL) {
        icm__free(dir);
        return;
    }
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* best effort: the rename itself is atomic either way */
        close(fd);
    }
    icm__free(dir);
}

/* rename(2) that never replaces: renameat2 with RENAME_NOREPLACE, else link + unlink. */
static int rename_no_replace(const char *src, const char *dst)
{
    if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return -1;
    if (link(src, dst) != 0)
        return -1;
    if (unlink(src) != 0) {
        int err = errno;
        (void)unlink(dst);
        errno = err;
        return -1;
    }
    return 0;
}

static int local_move(const char *from, const char *to)
{
    char *src = NULL, *dst = NULL;
    if (!icm_location_local_path(&src, from) || !icm_location_local_path(&dst, to)) {
        icm__free(src);
        return icm__error_last()->code == ICM_ENOMEM
                   ? ICM_ENOMEM
                   : icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, from,
                                    "cannot move to %s: not two local files", to);
    }
    struct stat st;
    int rc = 0;
    if (lstat(src, &st) != 0) {
        rc = errno == ENOENT ? icm__error_set(ICM_ERRCLASS_IO, ICM_ENOTFOUND, from, "no such file")
                             : icm__error_set_errno(ICM_ERRCLASS_IO, ICM_EIO, errno, from,
                                                    "cannot stat");
    } else if (S_ISDIR(st.st_mode)) {
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, from, "is a folder, not a file");
    }
    char *slash = rc == 0 ? strrchr(dst, '/') : NULL;
    /* A folder made here can be removed before the rename by a `trash expire` pruning the
     * folders it emptied (icm__fileio_prune_empty_folders): made again, a few times. */
    int err = 0;
    for (int attempt = 0; rc == 0 && attempt < MAKE_DIRS_ATTEMPTS; attempt++) {
        if (slash != NULL && slash != dst) {
            *slash = '\0';
            rc = make_dirs(dst, to);
            *slash = '/';
        }
        err = rc == 0 && rename_no_replace(src, dst) != 0 ? errno : 0;
        if (err != ENOENT || lstat(src, &st) != 0)
            break;
    }
    if (rc == 0 && err != 0) {
        if (err == EEXIST)
            rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EEXISTS, to, "exists; not replaced");
        else if (err == ENOENT && lstat(src, &st) != 0)
            rc = icm__error_set(ICM_ERRCLASS_IO, ICM_ENOTFOUND, from, "no such file");
        else if (err == EXDEV)
            rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, from,
                                "cannot move to %s: another file system (a move across file "
                                "systems would be a copy; refused)",
                                to);
        else
            rc = icm__error_set_errno(ICM_ERRCLASS_IO, icm__errno_to_code(err), err, from,
                                      "cannot move to %s", to);
    }
    if (rc == 0) {
        sync_dir_of(dst);
        sync_dir_of(src);
    }
    icm__free(src);
    icm__free(dst);
    return rc;
}

/* The back end behind `io` for `location` and the name it knows it by (*name: new string). */
static int leaf_of(icm_fileio *io, const char *location, icm_fileio **leaf, char **name)
{
    *leaf = NULL;
    *name = icm__strdup(location);
    if (*name == NULL)
        return icm__error_oom();
    for (int depth = 0; depth < MAX_DEPTH; depth++) {
        icm_fileio *inner = NULL;
        if (icm__fileio_is_resolving(io)) {
            int rc = icm__fileio_resolving_backend(io, *name, &inner);
            if (rc != 0)
                return rc;
        } else if ((inner = icm__fileio_pathmap_inner(io)) != NULL) {
            char *m = NULL;
            int rc = icm_fileio_pathmap_apply(&m, io, *name);
            if (rc != 0)
                return rc;
            icm__free(*name);
            *name = m;
        } else {
            *leaf = io;
            return 0;
        }
        io = inner;
    }
    return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, location,
                          "too many FileIO wrappers to move through");
}

bool icm__fileio_is_local_backend(const icm_fileio *io)
{
    return io != NULL && io->methods != NULL && io->methods->name != NULL &&
           strcmp(io->methods->name, "local") == 0;
}

int icm__fileio_move(icm_fileio *io, const char *from, const char *to, int64_t size_bytes)
{
    return icm__fileio_move_ex(io, from, to, size_bytes, 0, NULL);
}

int icm__fileio_move_ex(icm_fileio *io, const char *from, const char *to, int64_t size_bytes,
                        unsigned flags, bool *copy_sent)
{
    if (copy_sent != NULL)
        *copy_sent = false;
    if (io == NULL || from == NULL || to == NULL || *from == '\0' || *to == '\0')
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, from, "move: NULL argument");
    icm_fileio *a = NULL, *b = NULL;
    char *na = NULL, *nb = NULL;
    int rc = leaf_of(io, from, &a, &na);
    if (rc == 0)
        rc = leaf_of(io, to, &b, &nb);
    if (rc == 0 && a != b)
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, from,
                            "cannot move to %s: another store", to);
    if (rc == 0) {
        if (icm__fileio_is_s3(a))
            rc = icm__fileio_s3_move(a, na, nb, size_bytes, flags, copy_sent);
        else if (icm__fileio_is_local_backend(a))
            rc = local_move(na, nb);
        else
            rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, from,
                                "the %s back end cannot move files",
                                a->methods != NULL && a->methods->name != NULL
                                    ? a->methods->name
                                    : "(unnamed)");
    }
    icm__free(na);
    icm__free(nb);
    return rc;
}

/* No `.` or `..` segment and no empty one: the folders named are the folders walked. */
static bool plain_path(const char *p)
{
    for (const char *seg = p; *seg != '\0';) {
        const char *end = strchr(seg, '/');
        size_t n = end != NULL ? (size_t)(end - seg) : strlen(seg);
        if ((n == 0 && seg != p) || (n == 1 && seg[0] == '.') ||
            (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return false;
        if (end == NULL)
            break;
        seg = end + 1;
    }
    return true;
}

void icm__fileio_prune_empty_folders(icm_fileio *io, const char *file, const char *stop)
{
    icm_fileio *a = NULL, *b = NULL;
    char *na = NULL, *nb = NULL, *path = NULL, *top = NULL;
    int rc = leaf_of(io, file, &a, &na);
    if (rc == 0)
        rc = leaf_of(io, stop, &b, &nb);
    if (rc == 0 && a == b && icm__fileio_is_local_backend(a) &&
        icm_location_local_path(&path, na) && icm_location_local_path(&top, nb) &&
        plain_path(path)) {
        size_t top_len = strlen(top);
        while (top_len > 1 && top[top_len - 1] == '/')
            top[--top_len] = '\0';
        /* each parent strictly below `top`, deepest first, while rmdir(2) removes it: it
         * removes only an empty folder, and a link is no folder to it (ENOTDIR) */
        for (char *slash = strrchr(path, '/'); slash != NULL; slash = strrchr(path, '/')) {
            *slash = '\0';
            size_t len = (size_t)(slash - path);
            if (len <= top_len || strncmp(path, top, top_len) != 0 || path[top_len] != '/' ||
                rmdir(path) != 0)
                break;
        }
    }
    icm_error_clear(); /* best effort: a folder left is only a folder */
    icm__free(na);
    icm__free(nb);
    icm__free(path);
    icm__free(top);
}

int icm__fileio_same_store(bool *out, icm_fileio *io, const char *a, const char *b)
{
    *out = false;
    icm_fileio *la = NULL, *lb = NULL;
    char *na = NULL, *nb = NULL;
    int rc = leaf_of(io, a, &la, &na);
    if (rc == 0)
        rc = leaf_of(io, b, &lb, &nb);
    if (rc == 0)
        *out = la == lb && (icm__fileio_is_s3(la) || icm__fileio_is_local_backend(la));
    icm__free(na);
    icm__free(nb);
    return rc;
}
