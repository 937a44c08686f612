/*
 * maint/trash.h: the trash of the delete phase (internal; the layout, the journal and the rules
 * are icemaint/trash.h's). A run that was given a trash opens it once before anything is
 * committed or deleted (icm__trash_open checks every rule then), and the delete engine
 * (delete_engine.h) hands each batch of files that passed their checks to icm__trash_move_batch
 * instead of deleting them: every guard of a delete guards a move the same way.
 */
#ifndef ICM_MAINT_TRASH_H
#define ICM_MAINT_TRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/catalog.h"
#include "icemaint/fileio.h"
#include "icemaint/trash.h"

typedef struct icm__trash icm__trash;

/*
 * Open the trash `uri` for the table with `table_location` and `table_uuid`, through `io` (the
 * table's FileIO; borrowed, it must outlive the trash). Checks, in this order, and refuses
 * (ICM_EREFUSED, naming the trash and the rule) a table without a uuid, a trash inside the
 * table location or holding it, a trash on another store than the table (ICM_EREFUSED too: a
 * move there would be a copy), a local trash that is no existing folder or lies on another
 * file system than the table location; then, unless `check_only` (a dry run: nothing is
 * written), that it can be written (a probe object created and deleted below it). Returns 0,
 * those codes, the probe's failure (ICM_EAUTH, ICM_EIO, ...), ICM_ENOMEM.
 */
int icm__trash_open(icm__trash **out, icm_fileio *io, const char *uri,
                    const char *table_location, const char *table_uuid, bool check_only);
void icm__trash_free(icm__trash *t);

/*
 * Refuse (ICM_EREFUSED, naming the table and the folder) a trash that lies inside, or holds,
 * one of `table`'s own roots (its location, write.data.path, write.metadata.path, Java's legacy
 * write.object-storage.path and write.folder-storage.path) and, for a table of a catalog, one
 * of any other table of the catalog: that folder's orphan sweep would delete the trashed files,
 * whose rename kept their old modification time. Compared by spelling and, on local disk, by
 * real path (a link into such a folder). Walks icm__catalog_each_other_table_of (one metadata
 * read per table). Returns 0, ICM_EREFUSED, the walk's codes, ICM_ENOMEM.
 */
int icm__trash_check_catalog(icm__trash *trash, icm_table *table);

/*
 * Move `n` files (each passed its checks right before) into the trash, results[i] for
 * paths[i] in the delete engine's terms: DELETED (moved), ALREADY_GONE (it was not there),
 * FAILED (not moved: code, message, retryable). A file outside the table location is FAILED
 * ICM_EREFUSED. The journal records of the files about to move are written first; when that
 * fails, none moves. Thread-safe (the engine's threads call it at once).
 */
void icm__trash_move_batch(icm__trash *t, const char *const *paths, size_t n,
                           icm_fileio_delete_result *results);

/* One parsed journal record, owning its strings. A record with `"event": "restored"` says the
 * file trashed at trashed_at_ms was put back at restored_at_ms (`restored`); a record without
 * `event` (every journal before it) or with `"event": "trashed"` says it was trashed
 * (restored_at_ms -1). */
typedef struct icm__trash_record {
    char *table_uuid, *table_location, *original, *trash;
    int64_t size_bytes, mtime_ms, trashed_at_ms;
    bool restored;
    int64_t restored_at_ms;
} icm__trash_record;

/* When the record's event happened: restored_at_ms for a restore, else trashed_at_ms. */
static inline int64_t icm__trash_record_ms(const icm__trash_record *rec)
{
    return rec->restored ? rec->restored_at_ms : rec->trashed_at_ms;
}

/*
 * Parse a journal object's text (`name` for messages): one JSON object per line, blank lines
 * ignored, every field of icemaint/trash.h present with its type ("version" 1; strings
 * non-empty and without NUL; numbers integers, trashed_at_ms >= 0; optional "event"
 * "trashed" or "restored", the latter with "restored_at_ms" >= 0). Appends to *recs / *n
 * (grown with icm__realloc; *cap its room). A last line with neither its newline nor its
 * closing brace is a write cut short (its file never moved: records precede the move) and is
 * skipped.
 * Returns 0; ICM_EINVALID naming the line (what was appended before stays); ICM_ENOMEM.
 */
int icm__trash_journal_parse(const char *text, size_t len, const char *name,
                             icm__trash_record **recs, size_t *n, size_t *cap);
void icm__trash_records_free(icm__trash_record *recs, size_t n);

#endif /* ICM_MAINT_TRASH_H */
