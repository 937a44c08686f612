/*
 * io/local.c: the local-filesystem FileIO back end.
 *
 * Writes are atomic for readers: data goes to a temp file in the target's directory, which is
 * fsync'ed and then published under the final name (rename for write-replace; renameat2
 * RENAME_NOREPLACE, or link()+unlink() where the filesystem lacks it, for create-new, so an
 * existing file is never replaced). The directory is fsync'ed after publishing so the new name
 * survives a power loss. Listing walks the tree depth-first with one open DIR per level and
 * never follows symlinked directories, so it can neither loop nor escape the prefix; with
 * ICM_LIST_STAT_OPTIONAL it trusts readdir's d_type for directories and regular files and
 * stats only the rest (symlinks, unknown types).
 *
 * The back end holds no state: every method is safe to call from several threads at once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "icemaint/sys/fileio.h"
#include "util/location.h"
#include "util/util.h"

/* Errors from system calls carry errno; ICM_ERRCLASS_OS says they came from the OS. */
static int os_error(int err, const char *location, const char *what)
{
    return icm__error_set_errno(ICM_ERRCLASS_OS, icm__errno_to_code(err), err, location, "%s",
                                what);
}

/* Filesystem path of a local location; ICM_EUNSUPPORTED for object-store URIs. */
static int to_path(const char *location, char **path)
{
    *path = NULL;
    if (icm__location_local_part(location) == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EUNSUPPORTED, location,
                              "not a local file location (the local FileIO handles `/p`, "
                              "`file:/p`, `file:///p` and relative paths)");
    return icm__location_fs_path(location, path);
}

static int64_t mtime_ms_of(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* ---- reading ---- */

/* Read fd to its end into a new NUL-terminated buffer; `hint` is the expected size. The buffer
 * has room for one byte more than the hint plus the NUL, so the read that finds the end of a
 * file of the expected size needs no bigger buffer (growing would copy the whole file). */
static int read_all(int fd, size_t hint, const char *location, char **out, size_t *out_len)
{
    size_t cap = hint + 2, len = 0;
    char *buf = icm__malloc(cap);
    if (buf == NULL)
        return ICM_ENOMEM;
    for (;;) {
        if (len + 1 == cap) { /* the file grew since fstat, or hint was 0 */
            size_t ncap;
            if (icm__mul_overflow(cap, 2, &ncap)) {
                icm__free(buf);
                return icm__error_oom();
            }
            char *nb = icm__realloc(buf, ncap);
            if (nb == NULL) {
                icm__free(buf);
                return ICM_ENOMEM;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            icm__free(buf);
            return os_error(err, location, "cannot read");
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return 0;
}

/* Open a regular file for reading; a directory is ICM_EIO (EISDIR), not a file. */
static int open_for_read(const char *path, const char *location, int *fd_out, struct stat *st)
{
    /* O_NONBLOCK: opening a FIFO named by hostile metadata must not hang; such objects are
     * refused below anyway (a table file is always a regular file, and /dev/zero never ends). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return os_error(errno, location, "cannot open for reading");
    if (fstat(fd, st) != 0) {
        int err = errno;
        close(fd);
        return os_error(err, location, "cannot stat");
    }
    if (S_ISDIR(st->st_mode)) {
        close(fd);
        return os_error(EISDIR, location, "cannot read a directory");
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "not a regular file (a device, FIFO or socket); refusing to read it");
    }
    *fd_out = fd;
    return 0;
}

static int local_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    (void)io;
    char *path;
    int rc = to_path(location, &path);
    if (rc < 0)
        return rc;
    int fd = -1;
    struct stat st;
    rc = open_for_read(path, location, &fd, &st);
    if (rc == 0) {
        size_t hint = st.st_size > 0 ? (size_t)st.st_size : 0;
        rc = read_all(fd, hint, location, out, out_len);
        close(fd);
    }
    icm__free(path);
    return rc;
}

static int local_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                            size_t len, size_t *out_read)
{
    (void)io;
    char *path;
    int rc = to_path(location, &path);
    if (rc < 0)
        return rc;
    int fd = -1;
    struct stat st;
    rc = open_for_read(path, location, &fd, &st);
    icm__free(path);
    if (rc < 0)
        return rc;
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(offset + (int64_t)got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = os_error(errno, location, "cannot read");
            break;
        }
        if (n == 0)
            break; /* end of file */
        got += (size_t)n;
    }
    close(fd);
    if (rc == 0)
        *out_read = got;
    return rc;
}

/* ---- writing ---- */

/* Directory part of a normalised path: "a/b" -> "a", "/a" -> "/", "a" -> ".". */
static char *parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return icm__strdup(".");
    if (slash == path)
        return icm__strdup("/");
    return icm__strndup(path, (size_t)(slash - path));
}

/* fsync a directory so that names created or renamed in it are durable. Filesystems that
 * cannot sync directories report EINVAL; there is nothing more we can do there. */
static int fsync_dir(const char *dir, const char *location)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return os_error(errno, location, "cannot open parent directory to sync it");
    int rc = 0;
    if (fsync(fd) != 0 && errno != EINVAL)
        rc = os_error(errno, location, "cannot sync parent directory");
    close(fd);
    return rc;
}

/* mkdir -p, syncing the parent of every directory created so the new entry is durable. */
static int make_dirs(const char *dir, const char *location)
{
    int err = mkdir(dir, 0777) == 0 ? 0 : errno;
    if (err == EEXIST)
        return 0; /* already there (maybe another writer just created it) */
    char *parent = parent_dir(dir);
    if (parent == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    if (err == ENOENT && strcmp(parent, dir) != 0) {
        /* The parent is missing too: create it, then retry this level. */
        rc = make_dirs(parent, location);
        err = (rc == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST) ? errno : 0;
    }
    if (rc == 0 && err != 0)
        rc = os_error(err, location, "cannot create parent directory");
    if (rc == 0)
        rc = fsync_dir(parent, location);
    icm__free(parent);
    return rc;
}

static int write_all(int fd, const void *data, size_t len, const char *location)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return os_error(errno, location, "cannot write temp file");
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Temp names must be unique across threads and processes sharing the directory: pid, a
 * process-wide counter and the clock. O_EXCL catches the rest. */
static atomic_uint_fast64_t g_tmp_counter;

static char *temp_name(const char *dir, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t n = atomic_fetch_add(&g_tmp_counter, 1);
    /* The base name is cut to keep the temp name under NAME_MAX; it only aids debugging. */
    return icm__sprintf("%s/.%.64s.icm-tmp-%ld-%llu-%ld", dir, base, (long)getpid(),
                        (unsigned long long)n, (long)ts.tv_nsec);
}

/* Create, fill and fsync a temp file next to `path`; *tmp_out names it. */
static int write_temp(const char *dir, const char *path, const char *location, const void *data,
                      size_t len, char **tmp_out)
{
    *tmp_out = NULL;
    char *tmp = NULL;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        icm__free(tmp);
        tmp = temp_name(dir, path);
        if (tmp == NULL)
            return ICM_ENOMEM;
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == ENOENT && attempt == 0) {
            int rc = make_dirs(dir, location);
            if (rc < 0) {
                icm__free(tmp);
                return rc;
            }
        } else if (fd < 0 && errno != EEXIST) {
            int rc = os_error(errno, location, "cannot create temp file");
            icm__free(tmp);
            return rc;
        }
    }
    if (fd < 0) {
        icm__free(tmp);
        return os_error(EEXIST, location, "cannot find a free temp file name");
    }
    int rc = write_all(fd, data, len, location);
    if (rc == 0 && fsync(fd) != 0)
        rc = os_error(errno, location, "cannot sync temp file");
    if (close(fd) != 0 && rc == 0)
        rc = os_error(errno, location, "cannot close temp file");
    if (rc < 0) {
        unlink(tmp);
        icm__free(tmp);
        return rc;
    }
    *tmp_out = tmp;
    return 0;
}

/* Publish tmp as path without ever replacing an existing file. */
static int publish_no_replace(const char *tmp, const char *path, const char *location)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    int err = errno;
    if (err != EINVAL && err != ENOSYS && err != ENOTSUP) {
        unlink(tmp);
        return err == EEXIST ? icm__error_set(ICM_ERRCLASS_IO, ICM_EEXISTS, location,
                                              "already exists; not overwritten")
                             : os_error(err, location, "cannot publish temp file");
    }
    /* No RENAME_NOREPLACE on this filesystem: link() fails with EEXIST just the same. */
    if (link(tmp, path) != 0) {
        err = errno;
        unlink(tmp);
        return err == EEXIST ? icm__error_set(ICM_ERRCLASS_IO, ICM_EEXISTS, location,
                                              "already exists; not overwritten")
                             : os_error(err, location, "cannot publish temp file");
    }
    unlink(tmp);
    return 0;
}

static int publish_replace(const char *tmp, const char *path, const char *location)
{
    if (rename(tmp, path) == 0)
        return 0;
    int err = errno;
    unlink(tmp);
    return os_error(err, location, "cannot replace file");
}

static int local_write(const char *location, const void *data, size_t len, bool replace)
{
    char *path = NULL, *dir = NULL, *tmp = NULL;
    int rc = to_path(location, &path);
    if (rc < 0)
        goto done;
    dir = parent_dir(path);
    if (dir == NULL) {
        rc = ICM_ENOMEM;
        goto done;
    }
    rc = write_temp(dir, path, location, data, len, &tmp);
    if (rc < 0)
        goto done;
    rc = replace ? publish_replace(tmp, path, location)
                 : publish_no_replace(tmp, path, location);
    if (rc == 0)
        rc = fsync_dir(dir, location);
done:
    icm__free(tmp);
    icm__free(dir);
    icm__free(path);
    return rc;
}

static int local_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    (void)io;
    return local_write(location, data, len, false);
}

static int local_write_replace(icm_fileio *io, const char *location, const void *data,
                               size_t len)
{
    (void)io;
    return local_write(location, data, len, true);
}

/* ---- delete and stat ---- */

/* Whether `path` is a Hadoop checksum file: a regular file (not a link, not a folder) that
 * starts with Hadoop's "crc\0" header; its size and mtime in *info. A table may reference a
 * file of any name, `.x.crc` included (add-files takes what it is given); only a real checksum
 * file is reported as the companion of `x`. */
static bool is_hadoop_crc(const char *path, icm_file_info *info)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    char head[4];
    bool yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
               read(fd, head, sizeof head) == (ssize_t)sizeof head &&
               memcmp(head, "crc", sizeof head) == 0; /* 'c' 'r' 'c' '\0' */
    close(fd);
    if (yes) {
        info->size_bytes = (int64_t)st.st_size;
        info->mtime_ms = mtime_ms_of(&st);
    }
    return yes;
}

/* Hadoop's checksummed local file system (what Java Iceberg writes local tables through)
 * keeps `.name.crc` beside `name` and deletes both. One open() of a name that is usually
 * absent: the planners call this only for files they plan to delete. */
static int local_checksum_of(icm_fileio *io, const char *location, char **out,
                             icm_file_info *info)
{
    (void)io;
    bool oom;
    char *crc = icm__location_checksum_name(location, &oom);
    char *path = NULL;
    int rc = crc == NULL ? (oom ? ICM_ENOMEM : 0) : to_path(crc, &path);
    if (rc == 0 && path != NULL && is_hadoop_crc(path, info)) {
        *out = crc;
        crc = NULL;
    }
    if (rc == ICM_EUNSUPPORTED) { /* not a local location: no companion here */
        icm_error_clear();
        rc = 0;
    }
    icm__free(path);
    icm__free(crc);
    return rc;
}

/* Unlink one location; *gone when it was not there. Deletes are not fsync'ed: a delete undone
 * by a crash only leaves an orphan behind. */
static int unlink_location(const char *location, bool *gone)
{
    *gone = false;
    char *path;
    int rc = to_path(location, &path);
    if (rc < 0)
        return rc;
    if (unlink(path) != 0) {
        int err = errno;
        /* ENOTDIR: a parent is a file, so this file cannot exist either. */
        if (err == ENOENT || err == ENOTDIR)
            *gone = true;
        else
            rc = os_error(err, location,
                          err == EISDIR ? "cannot delete: is a directory" : "cannot delete");
    }
    icm__free(path);
    return rc;
}

static int local_remove(icm_fileio *io, const char *location)
{
    (void)io;
    bool gone;
    int rc = unlink_location(location, &gone);
    if (gone)
        icm_fileio_note_missing();
    return rc;
}

/* One unlink per item: a local filesystem has no multi-object delete. Its errors (EACCES, a
 * directory, a read-only filesystem, a location it cannot handle) do not go away by retrying. */
static int local_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                              icm_fileio_delete_result *results)
{
    (void)io;
    for (size_t i = 0; i < n; i++) {
        bool gone;
        int rc = unlink_location(locations[i], &gone);
        icm_fileio_delete_result *r = &results[i];
        if (rc < 0) {
            icm_fileio_delete_result_fail(r, rc, false);
            continue;
        }
        r->status = gone ? ICM_FILEIO_ALREADY_GONE : ICM_FILEIO_DELETED;
        r->code = 0;
        r->retryable = false;
        r->message[0] = '\0';
    }
    return 0;
}

static int local_resolve(icm_fileio *io, const char *location, char **out)
{
    (void)io;
    char *path;
    int rc = to_path(location, &path);
    if (rc < 0)
        return rc;
    char *real = realpath(path, NULL); /* libc's allocation: copied into ours below */
    if (real == NULL)
        rc = os_error(errno, location, "cannot resolve symbolic links");
    else if ((*out = icm__strdup(real)) == NULL)
        rc = ICM_ENOMEM;
    free(real);
    icm__free(path);
    return rc;
}

static int local_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    (void)io;
    char *path;
    int rc = to_path(location, &path);
    if (rc < 0)
        return rc;
    struct stat st;
    if (stat(path, &st) != 0)
        rc = os_error(errno, location, "cannot stat");
    else if (S_ISDIR(st.st_mode))
        rc = os_error(EISDIR, location, "cannot stat: is a directory, not a file");
    icm__free(path);
    if (rc < 0)
        return rc;
    out->location = location;
    out->size_bytes = (int64_t)st.st_size;
    out->mtime_ms = mtime_ms_of(&st);
    return 0;
}

/* ---- listing ---- */

/* One open directory of the walk and the length of its location in the walker's buffer. */
typedef struct walk_frame {
    DIR *dir;
    size_t loc_len;
} walk_frame;

typedef struct walker {
    walk_frame *frames;
    size_t depth;
    size_t cap;
    icm__buf loc; /* location of the current entry, in the form of the listed prefix */
} walker;

static int walker_push(walker *w, DIR *dir)
{
    if (w->depth == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        walk_frame *f = icm__reallocarray(w->frames, cap, sizeof *f);
        if (f == NULL) {
            closedir(dir);
            return ICM_ENOMEM;
        }
        w->frames = f;
        w->cap = cap;
    }
    w->frames[w->depth].dir = dir;
    w->frames[w->depth].loc_len = w->loc.len;
    w->depth++;
    return 0;
}

static void walker_pop(walker *w)
{
    w->depth--;
    closedir(w->frames[w->depth].dir);
}

static void walker_dispose(walker *w)
{
    while (w->depth > 0)
        walker_pop(w);
    icm__free(w->frames);
    icm__buf_dispose(&w->loc);
}

/* Open a directory for the walk. `at`/`name` as for openat. Sets *dir NULL when it vanished. */
static int open_dir(int at, const char *name, int flags, const char *location, DIR **dir)
{
    *dir = NULL;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
    if (fd < 0) {
        /* Gone meanwhile, or (for the prefix itself) not a directory: nothing to list. */
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return os_error(errno, location, "cannot open directory for listing");
    }
    *dir = fdopendir(fd);
    if (*dir == NULL) {
        int err = errno;
        close(fd);
        return os_error(err, location, "cannot open directory for listing");
    }
    return 0;
}

/* Set loc to the frame's location + "/" + name. */
static int walker_set_entry(walker *w, const walk_frame *f, const char *name)
{
    w->loc.len = f->loc_len;
    w->loc.data[w->loc.len] = '\0';
    if (w->loc.len == 0 || w->loc.data[w->loc.len - 1] != '/') {
        int rc = icm__buf_putc(&w->loc, '/');
        if (rc < 0)
            return rc;
    }
    return icm__buf_puts(&w->loc, name);
}

/* Descend into the directory `name` of the current frame. O_NOFOLLOW: a directory that was
 * swapped for a symlink since it was seen is not followed either. */
static int walk_descend(walker *w, int at, const char *name)
{
    DIR *sub;
    int rc = open_dir(at, name, O_NOFOLLOW, w->loc.data, &sub);
    return (rc < 0 || sub == NULL) ? rc : walker_push(w, sub);
}

/* Handle one directory entry: descend into a directory, report a file, skip anything else.
 * Returns 0 to go on, or the callback's / an error's value to stop. */
static int walk_entry(walker *w, const struct dirent *ent, unsigned flags, icm_list_cb cb,
                      void *payload)
{
    walk_frame *f = &w->frames[w->depth - 1];
    int at = dirfd(f->dir);
    const char *name = ent->d_name;
    int rc = walker_set_entry(w, f, name);
    if (rc < 0)
        return rc;
    /* When size and mtime are optional, the type readdir gives spares the stat for the two
     * kinds a table holds: directories and regular files (the stat is most of a listing's
     * cost). Symlinks and filesystems that leave d_type unknown take the stat path below. */
    if ((flags & ICM_LIST_STAT_OPTIONAL) != 0 && ent->d_type == DT_DIR)
        return walk_descend(w, at, name);
    if ((flags & ICM_LIST_STAT_OPTIONAL) != 0 && ent->d_type == DT_REG) {
        icm_file_info unknown = {sizeof(icm_file_info), w->loc.data, -1, -1};
        return cb(&unknown, payload);
    }
    struct stat st;
    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : os_error(errno, w->loc.data, "cannot stat while listing");
    if (S_ISDIR(st.st_mode))
        return walk_descend(w, at, name);
    /* A symlink counts as the file it points to; links to directories are not followed (no
     * loops, no escaping the prefix) and dangling links are skipped. */
    if (S_ISLNK(st.st_mode) && fstatat(at, name, &st, 0) != 0)
        return 0;
    if (!S_ISREG(st.st_mode))
        return 0;
    icm_file_info info = {sizeof(icm_file_info), w->loc.data, (int64_t)st.st_size,
                          mtime_ms_of(&st)};
    return cb(&info, payload);
}

static int local_list(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                      void *payload)
{
    (void)io;
    char *path;
    int rc = to_path(prefix, &path);
    if (rc < 0)
        return rc;
    walker w = {NULL, 0, 0, ICM__BUF_INIT};
    DIR *root;
    /* The prefix itself may be a symlink (e.g. a table folder linked elsewhere): follow it. */
    rc = open_dir(AT_FDCWD, path, 0, prefix, &root);
    icm__free(path);
    if (rc < 0 || root == NULL)
        return rc;
    rc = icm__buf_put(&w.loc, prefix, icm__location_trim_len(prefix));
    if (rc == 0)
        rc = walker_push(&w, root);
    else
        closedir(root);
    while (rc == 0 && w.depth > 0) {
        walk_frame *f = &w.frames[w.depth - 1];
        errno = 0;
        struct dirent *ent = readdir(f->dir);
        if (ent == NULL) {
            if (errno != 0) {
                w.loc.len = f->loc_len;
                w.loc.data[w.loc.len] = '\0';
                rc = os_error(errno, w.loc.data, "cannot read directory");
            }
            walker_pop(&w);
            continue;
        }
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        rc = walk_entry(&w, ent, flags, cb, payload);
    }
    walker_dispose(&w);
    return rc;
}

static void local_free(icm_fileio *io)
{
    icm__free(io);
}

/* Every file this back end deletes is an unlink on this machine. */
static int local_is_local(icm_fileio *io, const char *location)
{
    (void)io;
    (void)location;
    return 1;
}

static const icm_fileio_methods local_methods = {
    ICM_FILEIO_METHODS_VERSION,
    "local",
    local_read,
    local_read_range,
    local_create_new,
    local_write_replace,
    local_remove,
    local_stat,
    NULL, /* list: list_flags instead */
    local_free,
    local_list,
    local_resolve,
    local_checksum_of,
    local_delete_batch,
    NULL, /* list_range: readdir order is no order; the wrapper applies a range */
    local_is_local,
};

int icm_fileio_local_new(icm_fileio **out)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "NULL output");
    *out = icm__malloc(sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    (*out)->methods = &local_methods;
    return 0;
}
