/*
 * io/fileio_internal.h: what the library's own callers of the FileIO wrappers may ask beyond
 * the public API (internal).
 */
#ifndef ICM_IO_FILEIO_INTERNAL_H
#define ICM_IO_FILEIO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "icemaint/sys/fileio.h"

/* Whether the last icm_fileio_delete on this thread found nothing to delete: the back end said
 * so with icm_fileio_note_missing (the source of icm_fileio_delete_existing). False when the
 * back end cannot tell. */
bool icm__fileio_delete_found_nothing(void);

/* The rules of a path-map FileIO (icm_fileio_pathmap_new): their count (0 when `io` is not a
 * path map), and rule `i`'s FROM and TO (borrowed; they live as long as `io`). */
size_t icm__fileio_pathmap_n_rules(const icm_fileio *io);
void icm__fileio_pathmap_rule(const icm_fileio *io, size_t i, const char **from,
                              const char **to);
/* Whether `io` is a resolving FileIO (icm_fileio_resolving_new, icm_fileio_for_table). */
bool icm__fileio_is_resolving(const icm_fileio *io);

/* The back end a path map wraps (borrowed), or NULL when `io` is not a path map. */
icm_fileio *icm__fileio_pathmap_inner(const icm_fileio *io);

/*
 * Whether deleting `location` through `io` unlinks a file of this machine's file system: a
 * name of the local form, or what the back end's `is_local` slot says (wrappers ask what they
 * wrap: a path map with the mapped name, so `--path-map s3://b/t=/copy` makes those names
 * local). The delete engine deletes such a file alone, right after its own check (the link
 * check, the sweep's re-stat), and batches only object-store keys. A back end without the
 * slot, or one that cannot tell: true, the careful answer.
 */
bool icm__fileio_deletes_locally(icm_fileio *io, const char *location);
/* Whether `location` is a file of this machine's file system through `io`: the back end's
 * `is_local` slot first (the in-memory store's local-form names are keys, not files), else
 * the local form. For checks that look at the machine's disk itself (its mount table). */
bool icm__fileio_on_this_disk(icm_fileio *io, const char *location);

/*
 * Whether the store behind `io` honours create-new in the folder `dir` (io/create_new_probe.c):
 * a fresh probe object `<dir>/icemaint-create-new-probe-<uuid>` is created twice (the second
 * must be ICM_EEXISTS), then deleted. Returns 0 with *honoured; or the failing create's code
 * (its message in the last error) with *failed_step "first create" / "second create";
 * ICM_ENOMEM; icm__uuid4's ICM_EIO.
 */
int icm__fileio_create_new_honoured(icm_fileio *io, const char *dir, bool *honoured,
                                    const char **failed_step);

/*
 * Move the object `from` to `to` on the same store, never replacing an object at `to`
 * (io/move.c): a local file is renamed (RENAME_NOREPLACE; parent folders made as needed; a
 * target on another file system is refused, never copied); an S3 key is copied server side
 * (CopyObject) and deleted only once the copy is confirmed (icm__fileio_s3_move). Wrappers
 * that pick or rename (resolving, path map) are looked through; both names must end at the
 * same local or S3 back end. `size_bytes` is the object's size when known (-1: S3 asks).
 * Returns 0 (moved); ICM_ENOTFOUND (`from` is missing: nothing done); ICM_EEXISTS (`to`
 * exists: nothing done); ICM_EUNSUPPORTED (another store or file system, a back end that
 * cannot move, an S3 object over 5 GiB); ICM_EIO, ICM_EAUTH, ICM_ENET, ICM_ETIMEOUT (S3:
 * then the source is still there unless the copy was confirmed and only its delete failed,
 * which the message says), ICM_ENOMEM.
 */
int icm__fileio_move(icm_fileio *io, const char *from, const char *to, int64_t size_bytes);
/*
 * icm__fileio_move with `flags` and *copy_sent (may be NULL): set when an S3 CopyObject was
 * sent, so `to` may hold a copy even when the move failed (its answer lost, its HEAD failed).
 * ICM__MOVE_RESUME: `to` may hold the copy an earlier attempt of this same move made. On S3,
 * an object at `to` with the source's size and ETag is taken as that copy (no second copy is
 * made; it is confirmed by HEAD and the source deleted), any other object there is
 * ICM_EEXISTS, and an absent one is copied to as usual. No effect on local disk (a rename
 * either happened or did not).
 */
#define ICM__MOVE_RESUME 1u
int icm__fileio_move_ex(icm_fileio *io, const char *from, const char *to, int64_t size_bytes,
                        unsigned flags, bool *copy_sent);
/*
 * After `file` was moved or deleted: remove its parent folders, deepest first, while each is
 * empty and lies strictly below the folder `stop` (which stays), on local disk (wrappers looked
 * through as icm__fileio_move does); elsewhere folders are no objects and nothing is done.
 * rmdir(2) only: it never removes a file, nor follows a link. Best effort, never an error (a
 * folder left is only a folder); a move that finds the folder it made gone makes it again.
 */
void icm__fileio_prune_empty_folders(icm_fileio *io, const char *file, const char *stop);
/* Whether `a` and `b` end at one back end that icm__fileio_move can move on. Returns 0 with
 * *out; or why a name cannot be resolved (its back end cannot be built). */
int icm__fileio_same_store(bool *out, icm_fileio *io, const char *a, const char *b);
/* Whether `io` is the local back end itself (icm_fileio_local_new), no wrapper. */
bool icm__fileio_is_local_backend(const icm_fileio *io);
/* The S3 half of icm__fileio_move (io/s3/s3.c): `io` an S3 back end, both names its own.
 * HEAD `from` (missing: ICM_ENOTFOUND; over 5 GiB: ICM_EUNSUPPORTED, CopyObject's limit),
 * HEAD `to` (present: ICM_EEXISTS), CopyObject (PUT with x-amz-copy-source) whose answer must
 * be a 200 with a CopyObjectResult and no <Error> (S3 may answer 200 and fail in the body),
 * HEAD `to` again (the size must match), then DELETE `from`;
 * `flags` and *copy_sent as icm__fileio_move_ex. */
int icm__fileio_s3_move(icm_fileio *io, const char *from, const char *to, int64_t size_bytes,
                        unsigned flags, bool *copy_sent);

#endif /* ICM_IO_FILEIO_INTERNAL_H */
