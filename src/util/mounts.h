/*
 * util/mounts.h: which file is which on local disk, across the paths a mount gives it
 * (internal).
 *
 * A bind mount (or one NFS export, one volume, mounted twice) shows one folder at two paths.
 * realpath() does not cross a mount, so two spellings that name one file can each be their own
 * real path. Two checks tell what names cannot:
 *  - identity: a file or folder is its device and inode (stat); icm__identity_above walks up a
 *    path comparing each folder with another by identity (the trash's open and the sweep's
 *    other-table guard compare folders so);
 *  - the mount table (/proc/self/mountinfo, this process's mount namespace): where mounts
 *    are, and whether the file system holding a place is mounted at more than one place.
 * Reads only (stat and one file); never writes.
 */
#ifndef ICM_UTIL_MOUNTS_H
#define ICM_UTIL_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A local file's identity: its device and inode. */
typedef struct icm__file_id {
    uint64_t dev;
    uint64_t ino;
} icm__file_id;

/* stat() (`follow`: links followed) or lstat() of the local path `path`. false with errno set
 * when it fails. */
bool icm__file_id_of(const char *path, bool follow, icm__file_id *out);

/* Whether the folder `above` is the local path `real` or a folder above it, by identity: the
 * same folder seen at two paths (a bind mount) is one folder here, where its paths differ.
 * On true, *rest (may be NULL) points into `real` at the part below that folder ("" for
 * `real` itself). One stat per folder of `real` (a missing one is passed over). False when
 * `above` cannot be stat'ed. */
bool icm__identity_above(const char *real, const char *above, const char **rest);

/* Whether one of two local folders is (below) the other once links are resolved: by their
 * real paths, or by the identity of each one's folders. False when either cannot be
 * resolved. */
bool icm__local_nested(const char *a, const char *b);

/* One mount of the mount table. */
typedef struct icm__mount {
    char *point;     /* where it is mounted (octal escapes decoded), an absolute path */
    char *root;      /* the folder of its file system shown there (mountinfo's ROOT, decoded):
                      * "/" for a whole file system, the folder for a bind mount of one */
    unsigned major;  /* the device of the file system mounted (mountinfo's major:minor) */
    unsigned minor;
} icm__mount;

typedef struct icm__mounts {
    icm__mount *m;   /* in the table's order: a later mount at one point is on top */
    size_t n;
} icm__mounts;

#define ICM__MOUNTINFO "/proc/self/mountinfo"

/* Read the mount table from `file` (NULL: ICM__MOUNTINFO) into *ms (zero it first). Returns 0;
 * ICM_EIO (it cannot be read: the last error names the file and why); ICM_EINVALID (a line
 * without a mount point or device: the last error names the line); ICM_ENOMEM. On an error
 * nothing needs disposing. */
int icm__mounts_read(icm__mounts *ms, const char *file);
void icm__mounts_dispose(icm__mounts *ms);

/* The mount that holds the absolute local path `real` (links resolved by the caller): the one
 * mounted at the longest prefix of it, the last in the table among equals (the one on top);
 * SIZE_MAX when none does (not a path of this namespace). */
size_t icm__mounts_holding(const icm__mounts *ms, const char *real);

/* Whether the file system of mount `i` is mounted at another place too (another mount with
 * its device): then its files have other paths than the ones below m[i].point. */
bool icm__mounts_device_shared(const icm__mounts *ms, size_t i);

/* Whether mounts `i` and `j` show one file system (one device). */
bool icm__mounts_same_device(const icm__mounts *ms, size_t i, size_t j);

/* The path on its file system of the place the absolute local path `real` (links resolved,
 * at or below m[i].point) names through mount `i`: m[i].root joined with the part of `real`
 * below m[i].point (`/srv/share/x` for `/mnt/two/x` when `/srv/share` is mounted at
 * `/mnt/two`). *out (icm__free): that path, or NULL when `real` is not at or below the mount
 * point or the mount's root is not a path (a namespace file's `net:[...]`). Returns 0 or
 * ICM_ENOMEM. No I/O. */
int icm__mounts_fs_path(char **out, const icm__mounts *ms, size_t i, const char *real);

/* The inverse, through mount `j`: the local path naming the place `fs_path` (a path on the
 * file system of mount `j`, as icm__mounts_fs_path gives) through mount `j`, when it lies at
 * or below m[j].root (m[j].point joined with the part below the root). *out (icm__free): that
 * path, or NULL when mount `j` does not show `fs_path`. The path names the place only where
 * no other mount covers it (on top at m[j].point, or below it): a caller that needs to know
 * compares identities (icm__file_id_of). Returns 0 or ICM_ENOMEM. No I/O. */
int icm__mounts_spelling(char **out, const icm__mounts *ms, size_t j, const char *fs_path);

#endif /* ICM_UTIL_MOUNTS_H */
