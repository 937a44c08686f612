/*
 * icemaint/trash.h: the trash, where deleting commands move files instead of deleting them
 * (`--trash URI`; the `trash` option of icm_orphan_options and icm_expire_options), and how
 * they come back (icm_trash_restore) or finally go (icm_trash_expire).
 *
 * Layout, below the trash URI T (a local folder, or an s3:// prefix):
 *   T/<table-uuid>/files/<rel>      a trashed file: <table location>/<rel> as it was
 *   T/<table-uuid>/journal/<name>.jsonl  one JSON object per line and trashed file (below)
 * Tables sharing one trash are kept apart by their table-uuid (the metadata's `table-uuid`: a
 * table without one cannot use a trash). A file trashed when T/<uuid>/files/<rel> already
 * holds an earlier one (the same name orphaned twice) goes to `<rel>.trash-2`, `-3`, ...:
 * nothing in the trash is ever replaced. The journal line is written (and, on local disk,
 * fsync'ed) BEFORE the file moves, so every trashed file has its record whatever stops a run;
 * a record whose trash file is absent names a file that did not move (or was restored or
 * expired since). Fields: "version" (1), "table_uuid", "table_location", "original" (the
 * location the file had), "trash" (where it is now), "size_bytes", "mtime_ms" (the original's,
 * -1 unknown), "trashed_at_ms". A restore appends (after the file moved back, up to 1,000
 * records to a new journal object) the record it restored with "event": "restored" and
 * "restored_at_ms" (the time of the move); a line without "event" is a trashing ("event":
 * "trashed" may be written out too).
 *
 * Rules (docs/semantics.md#trash): the trash may neither lie inside the table location (the
 * sweep would list trashed files as orphans) nor hold it; it must be on the same store as the
 * table (local disk: the same file system, a move is a rename; S3: the same back end, a move
 * is CopyObject then DELETE of the source once the copy is confirmed; objects over 5 GiB are
 * refused, not copied in parts) and, on local disk, exist as a folder. These are checked,
 * and a trash that cannot be written is refused, before anything is committed or deleted, as
 * is a trash inside any Iceberg table location (it, or a folder above it up to the store's
 * root, holds metadata/<name>.metadata.json) or, for a catalog's table, inside or holding the
 * location of any other table of that catalog (that table's sweep would delete the trashed
 * files). Restore and expire act only on records naming a file below T/<uuid>/files/ and an
 * original below the table location, where (on local disk) no folder on the way below T/ or
 * below the table location, nor the file, is a symbolic link (such a record is FAILED with
 * ICM_EREFUSED naming the link; nothing moves or is deleted through it).
 * Every guard of the deletes guards the moves the same way: they go through the same delete
 * phase (revalidation, location confinement, lease, on_delete journal, limits, dry run).
 *
 * A failed S3 move whose CopyObject was sent (its answer lost or an error, its confirming HEAD
 * failed too: the copy may be there) keeps its trash name for the run: a retry first HEADs
 * that name and takes an object with the source's size and ETag as the copy (no second copy),
 * copies again only when the name is empty, and fails the file for good when another object
 * is there. After ICM_TRASH_COPY_ATTEMPTS such copies the file fails (not retried): it stays
 * where it was, and the message names it, the trash name and the last error. So a file leaves
 * at most one copy in the trash per run, and its source is deleted only after a HEAD of the
 * copy shows the source's size.
 */

/** CopyObject requests per file and run after which a file the trash could not confirm a
 *  copy of fails (see above). */
#define ICM_TRASH_COPY_ATTEMPTS 3
#ifndef ICEMAINT_TRASH_H
#define ICEMAINT_TRASH_H

#include "common.h"
#include "fileio.h"

ICM_BEGIN_DECL

/** One journal record. Strings are borrowed for the duration of the callback. */
typedef struct icm_trash_entry {
    const char *table_uuid;
    const char *table_location;
    const char *original;      /**< where the file was (and goes back to) */
    const char *trash;         /**< where it is in the trash */
    int64_t size_bytes;        /**< -1 when unknown */
    int64_t mtime_ms;          /**< the original's; -1 when unknown */
    int64_t trashed_at_ms;
} icm_trash_entry;

/** What restore or expire did to one trashed file. */
typedef enum icm_trash_outcome {
    ICM_TRASH_RESTORED = 0,   /**< moved back to `original` */
    ICM_TRASH_EXPIRED = 1,    /**< deleted from the trash */
    ICM_TRASH_WOULD = 2,      /**< dry run: would be restored / expired */
    ICM_TRASH_ABSENT = 3,     /**< its trash file is not there (never moved, or already
                                   restored or expired): nothing done, not an error */
    ICM_TRASH_REFUSED = 4,    /**< restore: a file exists at `original`; it is never
                                   replaced, the trashed one stays */
    ICM_TRASH_FAILED = 5      /**< error_code, error_message */
} icm_trash_outcome;

/** "restored", "expired", "would", "absent", "refused", "failed" (static). */
ICM_EXTERN(const char *) icm_trash_outcome_name(icm_trash_outcome outcome);

typedef struct icm_trash_event {
    const icm_trash_entry *entry;
    icm_trash_outcome outcome;
    int error_code;             /**< REFUSED, FAILED: the icm code; else 0 */
    const char *error_message;  /**< REFUSED, FAILED: one line; else NULL */
} icm_trash_event;

/** Called once per journal record acted on (after the filters), on the calling thread.
 *  Non-zero stops the run (ICM_EUSER). */
typedef int (*icm_trash_cb)(const icm_trash_event *event, void *payload);

/** Options of icm_trash_restore and icm_trash_expire. Initialise with ICM_TRASH_OPTIONS_INIT
 *  or icm_trash_options_init(). */
typedef struct icm_trash_options {
    unsigned version;          /**< ICM_TRASH_OPTIONS_VERSION */
    bool dry_run;              /**< report ICM_TRASH_WOULD; move and delete nothing */
    /** restore (required): the table location whose files are put back. Only records whose
     *  table_location is this location (same location identity) are selected, and a file is
     *  only put back below it: a journal line, its own table_location included, is plain text
     *  anyone with write access to the trash can forge (docs/semantics.md#trash). */
    const char *table;
    /** restore: only files whose original location is one of these, or lies below one (at a
     *  path-segment boundary); NULL / 0 = all. Borrowed. */
    const char *const *paths;
    size_t path_count;
    /** expire: files trashed at least this long ago (ms, >= 0) go. */
    int64_t older_than_ms;
    /** "now" in ms since the epoch; 0 = the clock. */
    int64_t now_ms;
    icm_trash_cb on_file;      /**< NULL = none */
    void *on_file_payload;
} icm_trash_options;

#define ICM_TRASH_OPTIONS_VERSION 1
#define ICM_TRASH_OPTIONS_INIT {ICM_TRASH_OPTIONS_VERSION, false, NULL, NULL, 0, -1, 0, NULL, NULL}

/** Set `opts` to the defaults of `version`.
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_trash_options_init(icm_trash_options *opts, unsigned version);

/** Counts of one restore or expire run, by outcome (index: icm_trash_outcome). */
typedef struct icm_trash_counts {
    size_t by_outcome[6];
    size_t journals_removed;   /**< expire: journal objects deleted (every record in them
                                    older than the window and its file gone); a dry run:
                                    those it would delete */
} icm_trash_counts;

/**
 * Move trashed files back to where they were, newest first when one location was trashed
 * more than once (the older copies are then REFUSED: the location holds the newer one). A
 * file is never moved over an existing one (REFUSED, it stays in the trash). For each trash
 * name, only the records of `table` (and `paths`) that are trashings count, and the newest of
 * them whose size_bytes (on local disk also mtime_ms) match the file at that name is restored:
 * a restore event, or a newer record of another file (a move that failed and went to a
 * `.trash-N` name), hides the name only when no file is there (ABSENT). A file there that no
 * such record describes is REFUSED (named, never moved); a name with no record of `table` is
 * not reported. Restoring puts
 * a file back under the table location; whether the table references it is the table's
 * business (a restored orphan is an orphan again). On local disk the folders below
 * TRASH/<uuid>/files/ a restored file leaves empty are removed (rmdir only).
 * @param out counts (may be NULL)
 * @param io  a FileIO that reaches the trash (and the original locations)
 * @param trash the trash URI as given to --trash
 * @return 0 when every selected record was restored or absent (or would be, dry run);
 *         ICM_EREFUSED when some file was refused and none failed; else the first failure's
 *         code (ICM_EIO, ICM_EAUTH, ICM_ENET, ...); ICM_EINVALID (NULL arguments, an unknown
 *         options version, a journal line that is not a record: the message names the journal
 *         and line; `table` NULL or not a location); ICM_ENOTFOUND (no record matched `table`
 *         and `paths`: nothing was restored); ICM_EUSER (on_file asked to stop); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_trash_restore(icm_trash_counts *out, icm_fileio *io, const char *trash,
                                  const icm_trash_options *opts);

/**
 * Delete the trashed files trashed at least opts->older_than_ms ago: a trash file is deleted
 * only when the newest event the journals record for it (a trashing at trashed_at_ms, a
 * restore at restored_at_ms; a restore wins a tie) is a trashing that old, and every journal
 * holding a record of it was last modified (the store's clock) that long ago too (a writer's
 * clock running behind does not shorten the window), and only while the
 * file there has the recorded size_bytes (on local disk also the recorded mtime_ms): another
 * file there is REFUSED and kept. Then every journal object all of whose records are that old
 * and whose files are gone, when the object itself was last modified at least that long ago.
 * A file absent from the trash counts as gone only once its name's newest record is a day old
 * (a sweep writes a batch's records before it moves the batch), and a file present at a name
 * whose newest record is a restore is not gone (trashed again by a run whose clock is behind).
 * On local disk the folders below TRASH/<uuid>/files/ an expired file leaves empty are removed
 * (rmdir only: never a file, never through a link; TRASH/<uuid>/files/ itself stays).
 * @return 0; ICM_EREFUSED when some file was refused (another file at its name) and none
 *         failed; ICM_EINVALID (older_than_ms negative, and as icm_trash_restore); the first
 *         delete failure's code; ICM_EUSER; ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_trash_expire(icm_trash_counts *out, icm_fileio *io, const char *trash,
                                 const icm_trash_options *opts);

ICM_END_DECL

#endif /* ICEMAINT_TRASH_H */
