/*
 * maint/orphans_mounts.c: one folder at two paths (adversary round 6, finding 3).
 *
 * A bind mount (or one NFS export, one volume, mounted twice) shows one folder at two paths,
 * and realpath() does not cross a mount: the names of the metadata and the listing's can name
 * one file while neither is a link. Two cases, two rules:
 *  - a mount point inside the listing location (a volume, or another table's folder, mounted
 *    into the table): the listing shows files that are not this table's, under names no
 *    metadata uses. A local sweep refuses when the mount table shows one strictly inside the
 *    listing location (at any depth), naming each, unless it is carved out with
 *    --exclude-location (or lies below a hidden folder, which the listing never reads). A
 *    mount at or above the listing location (a table on an NFS mount or a volume) is normal.
 *    The table is read once before the keep set is built and once after the listing (a mount
 *    made meanwhile). When it cannot be read (no /proc), whether a mount is inside cannot be
 *    told, and the sweep refuses: refusing deletes nothing.
 *  - a file the metadata names through the other mount's path (a writer on a host that mounts
 *    the share elsewhere): its name lies outside the listing location, the listing shows it
 *    under this mount's path. When the file system holding the listing location is mounted at
 *    another place too (the mount table shows its device twice), each local reference named
 *    outside the listing location is stat'ed, once, and its identity (device and inode) kept;
 *    a candidate (lstat) with one of them is kept, with a warning naming the reference. When
 *    the device is mounted once, no other path can reach the listing's files except through a
 *    symbolic link (orphans_refs.c) or a hard link (deleting one name of a hard-linked file
 *    loses no data), so nothing is stat'ed: an ordinary sweep pays one read of the mount table.
 * The same identity rule drops a planned orphan that a commit made during the sweep names
 * through the other mount (icm__orphans_referenced).
 *
 * Read-only (the dry-run rule of orphans_plan.h): the mount table, realpath, stat.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fileio_internal.h"
#include "maint/orphans_plan.h"
#include "util/location.h"
#include "util/mounts.h"

/* Where list_root is on local disk with every link resolved (*real, libc's allocation), or
 * NULL when it is not on local disk or not there (nothing is listed then). */
static int real_local_root(plan *p, char **real)
{
    *real = NULL;
    if (!icm__fileio_on_this_disk(p->io, p->list_root))
        return 0;
    char *path = NULL;
    int rc = icm__orphans_local_file(p->io, p->list_root, &path);
    if (rc != 0 || path == NULL)
        return rc;
    *real = realpath(path, NULL);
    int err = errno;
    if (*real == NULL && err != ENOENT && err != ENOTDIR)
        rc = icm__error_set_errno(ICM_ERRCLASS_MAINT, ICM_EREFUSED, err, p->list_root,
                                  "cannot tell where the listing location %s really is, so "
                                  "whether a file system is mounted inside it; refusing to "
                                  "sweep; nothing is deleted",
                                  path);
    icm__free(path);
    return rc;
}

static int refuse_unreadable_table(const plan *p)
{
    char why[600];
    snprintf(why, sizeof why, "%s", icm_error_last()->message);
    return icm__orphan_refuse(p->list_root,
                  "%s; whether another folder (a volume, another table's folder) is mounted "
                  "inside the listing location cannot be told, and its files would be swept "
                  "as orphans; refusing to sweep; nothing is deleted (run where %s is "
                  "mounted)",
                  why, ICM__MOUNTINFO);
}

int icm__orphans_check_mounts(plan *p, bool before_walk)
{
    char *real = NULL;
    int rc = real_local_root(p, &real);
    if (rc != 0 || real == NULL)
        return rc;
    icm__mounts ms = {NULL, 0};
    rc = icm__mounts_read(&ms, NULL);
    if (rc == ICM_ENOMEM) {
        free(real);
        return rc;
    }
    if (rc != 0) {
        free(real);
        return refuse_unreadable_table(p);
    }
    icm__buf offending = ICM__BUF_INIT;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < ms.n; i++) {
        const char *rel;
        if (!icm__location_strip_prefix(ms.m[i].point, real, &rel) || rel[0] == '\0')
            continue; /* at or above the listing location, or elsewhere */
        char *name = icm__location_join(p->list_root, rel);
        if (name == NULL) {
            rc = ICM_ENOMEM;
            break;
        }
        if (!p->root_hidden && !icm__orphans_hidden_path(p, rel) &&
            !icm__orphan_excluded(p->o, name)) {
            icm__buf_printf(&offending, "%s%s", n == 0 ? "" : ", ", name);
            n++;
            rc = offending.oom ? ICM_ENOMEM : 0;
        }
        icm__free(name);
    }
    if (rc == 0 && n > 0)
        rc = icm__orphan_refuse(p->list_root,
                  "%zu mount point%s inside the listing location: %s; a folder mounted into "
                  "the table (a volume, another table's folder, the share mounted again) "
                  "shows files this table's metadata does not name, which would be swept as "
                  "orphans; refusing to sweep; nothing is deleted (unmount it, or carve it "
                  "out with --exclude-location)",
                  n, n == 1 ? "" : "s", offending.data);
    if (rc == 0 && before_walk) {
        size_t holder = icm__mounts_holding(&ms, real);
        p->by_identity = holder == SIZE_MAX || icm__mounts_device_shared(&ms, holder);
    }
    icm__buf_dispose(&offending);
    icm__mounts_dispose(&ms);
    free(real);
    return rc;
}

int icm__orphans_note_ref_identity(plan *p, const char *location)
{
    const char *rest;
    if (!p->by_identity || icm__orphans_below_root(p, location, &rest))
        return 0;
    if (p->ids_asked == NULL && icm__pathset_new(&p->ids_asked, 0) != 0)
        return ICM_ENOMEM;
    bool added = false;
    int rc = icm__pathset_add(p->ids_asked, location, &added);
    if (rc != 0 || !added)
        return rc; /* asked before: each reference is stat'ed once */
    char *path = NULL;
    rc = icm__orphans_local_file(p->io, location, &path);
    if (rc != 0 || path == NULL)
        return rc; /* not a file of this machine: no mount reaches it */
    icm__file_id id;
    int err = 0;
    if (icm__file_id_of(path, true, &id))
        rc = (p->ref_ids != NULL || icm__pathset_new(&p->ref_ids, 0) == 0)
                 ? icm__pathset_add_key(p->ref_ids, &id, sizeof id, NULL)
                 : ICM_ENOMEM;
    else if ((err = errno) != ENOENT && err != ENOTDIR && p->unidentified_ref == NULL &&
             (p->unidentified_ref = icm__sprintf("%s (%s)", location, strerror(err))) == NULL)
        rc = ICM_ENOMEM; /* (missing: no file of the listing is it; the walk's checks say) */
    icm__free(path);
    return rc;
}

int icm__orphans_same_file_why(plan *p, const char *location, char **why)
{
    *why = NULL;
    if (p->ref_ids == NULL && p->unidentified_ref == NULL)
        return 0;
    char *path = NULL;
    int rc = icm__orphans_local_file(p->io, location, &path);
    if (rc != 0 || path == NULL)
        return rc;
    icm__file_id id;
    if (p->unidentified_ref != NULL) {
        *why = icm__sprintf("the table references %s, which cannot be stat'ed, and the file "
                            "system here is mounted at another place too: it may be this file "
                            "under the other mount's path",
                            p->unidentified_ref);
        rc = *why != NULL ? 0 : ICM_ENOMEM;
    } else if (icm__file_id_of(path, false, &id) &&
               icm__pathset_contains_key(p->ref_ids, &id, sizeof id)) {
        *why = icm__strdup("the table references this very file (same device and inode) "
                           "under a path outside the listing location: another mount of the "
                           "same folder (a bind mount, or the share mounted twice)");
        rc = *why != NULL ? 0 : ICM_ENOMEM;
    } /* else another file, or gone (deleting it then deletes nothing) */
    icm__free(path);
    return rc;
}

int icm__orphans_keep_same_files(plan *p)
{
    icm_orphan_result *r = p->r;
    if (r->orphan_count == 0 ||
        (p->ref_ids == NULL && p->unidentified_ref == NULL))
        return 0;
    char **why = icm__calloc(r->orphan_count, sizeof *why);
    if (why == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->orphan_count; i++)
        rc = icm__orphans_same_file_why(p, r->orphans[i].path, &why[i]);
    return icm__orphans_take_out(p, why, rc);
}

void icm__orphans_mounts_dispose(plan *p)
{
    icm__pathset_free(p->ref_ids);
    p->ref_ids = NULL;
    icm__pathset_free(p->ids_asked);
    p->ids_asked = NULL;
    icm__free(p->unidentified_ref);
    p->unidentified_ref = NULL;
}
