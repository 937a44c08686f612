/*
 * maint/keepset.h: which files a set of snapshots reaches, for snapshot expiry, the orphan sweep
 * and integrity checks (internal).
 *
 * Two pieces:
 *  - icm__pathset (pathset.h, pathset.c): a compact set of locations, stored as hashes.
 *  - the reachability walk (icm__reach_walk; reach_walk.c, with list_row_guess.c): for chosen
 *    snapshots of a metadata object, every manifest list, manifest, live (ADDED or EXISTING) entry of data and delete manifests, and
 *    statistics / partition-statistics file of those snapshots, each handed to a callback with
 *    its kind and size. v1 snapshots with embedded `manifests` are handled. Every unique
 *    manifest is read once however many snapshots share it. DELETED entries reach nothing.
 *    For deletion vectors the Puffin file is `file_path`; `referenced_data_file` names a data
 *    file the vector applies to and is never reported as reached on its own (that data file is
 *    reached through its own live entry, or it is not reached at all).
 *    Files that cannot be read are recorded in an icm__reach_report, never skipped silently:
 *    callers decide what an unreadable file means for what they may delete (see reach_walk.c).
 *    A walk can also remember the manifests it reached (icm__reach_walk_collect) and read
 *    their entries later (icm__reach_entries) without reading the manifest lists again: expiry
 *    opens retained manifests only when some data or delete file may become unreachable.
 *
 * Everything here only READS storage: no function in keepset.c, pathset.c, reach_walk.c,
 * list_row_guess.c or table_files.c references a FileIO call that creates, writes or deletes
 * (checked by tests/unit/test_expire_dryrun.c and test_orphans_dryrun.c with nm).
 */
#ifndef ICM_MAINT_KEEPSET_H
#define ICM_MAINT_KEEPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "icemaint/fileio.h"
#include "icemaint/manifest.h"
#include "icemaint/metadata.h"
#include "maint/pathset.h"
#include "manifest/bulk_reader.h"

/* ---- what a walk reaches ---- */

/* One reached file. Strings are borrowed for the duration of the callback. */
typedef struct icm__reached {
    const char *location;
    icm__file_kind kind;
    int64_t size_bytes;   /* -1 when unknown (a manifest list read whole: its bytes) */
    int64_t snapshot_id;  /* the snapshot through which it was first reached */
    /* What a data or delete file's entry says of it besides its size (expiry's verification
     * tells by them whether a planned file may be what a retained entry stands for,
     * verify_twins.c): -1, ICM_FILE_FORMAT_OTHER and 0 when unknown (any other kind, or a
     * walk that decodes less). */
    int64_t record_count;
    icm_file_format file_format;
    uint64_t bounds;      /* digest of lower_bounds and upper_bounds (a walk with `described`;
                             0: none given, or not decoded) */
    /* The snapshot that added the file, as its entry says (an entry keeps it through merges
     * and rewrites; a null one inherited from the manifest, spec "Snapshot ID
     * Inheritance"). INT64_MIN: unknown, or not an entry's file. */
    int64_t added_snapshot_id;
    /* The entry's bounds maps' Avro bytes, when the walk's keep_bounds chose it (else empty;
     * borrowed for the callback, as `location`). */
    icm_raw lower_bounds, upper_bounds;
    /* The entry's partition tuple (a walk with `described`; shape 0: unknown). */
    icm__partition_key partition;
    /* A deletion vector's entry, read `described`: the data file it applies to (borrowed as
     * `location`; NULL: unknown) and where its blob lies in the Puffin file, offset and length
     * in bytes (spec fields 143, 144, 145; 0, 0: unknown). Expiry's twin check finds the blob
     * such an entry names in a planned Puffin file's footer (verify_twins.c). */
    const char *referenced_data_file;
    int64_t content_offset, content_size_bytes;
} icm__reached;

/* Return 0 to go on; anything else stops the walk and is returned by icm__reach_walk. */
typedef int (*icm__reach_cb)(const icm__reached *file, void *payload);

/* A manifest list or manifest that could not be read. */
typedef struct icm__reach_failure {
    char *location;
    bool is_manifest_list;
    int code;          /* the icm error code */
    char *message;     /* the last error's one-line message */
} icm__reach_failure;

typedef struct icm__reach_report {
    icm__reach_failure *failures;
    size_t failure_count;
    size_t manifest_lists_read;
    size_t manifests_read;     /* unique manifests whose entries were read */
    size_t entries_read;       /* manifest entries decoded (all statuses) */
} icm__reach_report;

void icm__reach_report_dispose(icm__reach_report *report);
/* True when any manifest list (lists_only) or any list or manifest failed. */
bool icm__reach_report_has_failure(const icm__reach_report *report, bool lists_only);

typedef struct icm__reach_options {
    /* Snapshot ids to walk; NULL = every snapshot of the metadata. Unknown ids are ignored. */
    const int64_t *snapshot_ids;
    size_t snapshot_id_count;
    /* false: report manifests but do not open them (no entries). */
    bool read_entries;
    /* Manifests in this set are reported but their entries are not read (their live entries
     * are known to be reached another way). May be NULL. */
    const icm__pathset *skip_entries_of;
    /* Report statistics and partition-statistics files of the walked snapshots. */
    bool statistics;
    /* NULL, or called once before the first callback with the number of live entries (ADDED
     * and EXISTING) the manifest lists announce for the manifests whose entries will be read,
     * with the callback's payload: a hint for sizing (a claim of the lists, 0 where absent). */
    void (*expect_entries)(size_t live_entries, void *payload);
    /* Also decode what tells one file's entry from another's: the reached files then carry
     * their entries' bounds digest (record count and file format come with every walk that
     * reads entries). Costs the decoding of the metrics. */
    bool described;
    /* NULL, or which live entries (by recorded size) also hand over their bounds' bytes
     * (icm__reached.lower_bounds); implies `described`. Called from the decoding threads, so
     * keep_bounds_ctx must not change during the walk. */
    icm__keep_bounds_fn keep_bounds;
    const void *keep_bounds_ctx;
} icm__reach_options;

/*
 * Walk the chosen snapshots. Read failures of manifest lists and manifests go to *report
 * (which the caller disposes) and the walk goes on; *report is zeroed first.
 * Returns 0; the callback's non-zero value; ICM_ENOMEM.
 */
int icm__reach_walk(icm_fileio *io, const icm_table_metadata *md, const icm__reach_options *opts,
                    icm__reach_cb cb, void *payload, icm__reach_report *report);

/*
 * icm__reach_walk that also appends every unique manifest it reaches to *collect (which the
 * caller disposes with icm__manifest_refs_dispose), for a later icm__reach_entries.
 */
int icm__reach_walk_collect(icm_fileio *io, const icm_table_metadata *md,
                            const icm__reach_options *opts, icm__manifest_refs *collect,
                            icm__reach_cb cb, void *payload, icm__reach_report *report);

/*
 * Read the entries of remembered manifests and report their live files (as a walk with
 * read_entries would). Read failures go to *report (zeroed first). Returns 0; the callback's
 * non-zero value; ICM_ENOMEM.
 */
int icm__reach_entries(icm_fileio *io, int format_version, const icm__manifest_refs *refs,
                       icm__reach_cb cb, void *payload, icm__reach_report *report);
/* icm__reach_entries handing the callback only the locations of the live entries `filter`
 * passes (with `filter_ctx`; see icm__entry_filter): kind and size are not decoded, every
 * entry reports ICM__FILE_DATA and -1. The report still counts every entry read. */
int icm__reach_entries_filtered(icm_fileio *io, int format_version,
                                const icm__manifest_refs *refs, icm__entry_filter filter,
                                const void *filter_ctx, icm__reach_cb cb, void *payload,
                                icm__reach_report *report);

/*
 * The keep set: every file the chosen snapshots reach (all of the kinds above) added to `set`.
 * Returns 0 or ICM_ENOMEM; read failures in *report.
 */
int icm__keepset_build(icm_fileio *io, const icm_table_metadata *md,
                       const icm__reach_options *opts, icm__pathset *set,
                       icm__reach_report *report);

/* ---- extending a keep set with newer metadata (the delete phase's re-check) ---- */

/* What a keep set already accounts for, so that newer metadata is read only where it differs:
 * manifest lists whose manifests were all delivered, and manifests whose live entries were. Both
 * keyed as icm__pathset_add keys locations. */
typedef struct icm__refs_seen {
    icm__pathset *lists;
    icm__pathset *manifests;
} icm__refs_seen;

/* Empty sets. Returns 0 or ICM_ENOMEM (then nothing is left allocated). */
int icm__refs_seen_init(icm__refs_seen *seen);
void icm__refs_seen_dispose(icm__refs_seen *seen);
/* Note a file a walk that read every entry delivered: lists and manifests join the sets, other
 * kinds are ignored. Returns 0 or ICM_ENOMEM. */
int icm__refs_seen_note(icm__refs_seen *seen, const icm__reached *file);
/* Note a file of a walk that read no entries (names only): lists join `lists`; a manifest's
 * entries were not read, so it stays out. Returns 0 or ICM_ENOMEM. */
int icm__refs_seen_note_list(icm__refs_seen *seen, const icm__reached *file);

/*
 * Everything `md` (read from `md_location`) references that `seen` does not already account
 * for, each location handed to `cb` (more may be handed over, never less): the manifest list of
 * every snapshot whose list is not in seen->lists (and every v1 snapshot with embedded
 * manifests), their manifests, the live entries of those manifests not in seen->manifests,
 * every statistics and partition-statistics file of md, and md's metadata documents
 * (icm__table_metadata_docs). Lists and manifests read join `seen`. Read failures go to *report
 * (zeroed first; the caller decides what they mean: the delete phase stops).
 * Returns 0, ICM_ENOMEM or cb's non-zero value.
 */
int icm__reach_extend(icm_fileio *io, const icm_table_metadata *md, const char *md_location,
                      icm__refs_seen *seen, int (*cb)(const char *location, void *payload),
                      void *payload, icm__reach_report *report);

/* ---- the table's own locations and documents (shared by expiry and the orphan sweep) ---- */

/* Whether the table lets maintenance delete its files, read as Java reads `gc.enabled`
 * (PropertyUtil.propertyAsBoolean: Boolean.parseBoolean, default true): enabled when the
 * property is absent or a case-insensitive "true"; ANY other value ("false", "no", "0", "off",
 * " false", "") disables GC (issue #16 round 8: the sweep read only "false" as disabled, and
 * expiry refused other spellings as invalid). *value (may be NULL): the property, NULL when
 * unset, for the refusal's message. Expiry, its re-check and the sweep all ask this. */
bool icm__gc_enabled(const icm_table_metadata *md, const char **value);

/* The table's roots: `location`, `write.data.path`, `write.metadata.path` (those set and not
 * empty), borrowed from md, in that order. Returns how many (at most 3). Nothing outside them
 * is ever deleted. */
size_t icm__table_roots(const icm_table_metadata *md, const char *out[3]);

/* The table's metadata folders: `<location>/metadata`, `write.metadata.path` when set, and the
 * folder of `md_location` (may be NULL). New strings in out[0..*n) (icm__free each). Returns 0
 * or ICM_ENOMEM (then nothing is left allocated). */
int icm__table_metadata_dirs(const icm_table_metadata *md, const char *md_location,
                             char *out[3], size_t *n);

/* Whether the file name of `location` is one a table's `metadata/` folder holds: a version hint
 * (`version-hint.text`, `version-hint.txt`) or a metadata document (`*.metadata.json`,
 * `*.metadata.json.gz`, then
 * *document is set; `document` may be NULL). */
bool icm__table_metadata_file_name(const char *location, bool *document);

/* What a listing of the folder `md_dir` (through `io`, recursive, stopping early) finds of a
 * table's metadata directly in it (not in its sub-folders: a folder merely named `metadata`,
 * such as a namespace, holds other tables below): `any` when it holds a file
 * icm__table_metadata_file_name accepts; with
 * `want_document`, the listing goes on past version hints to the first `*.metadata.json`,
 * whose location `document` then is (new string, icm__free; NULL when there is none). A missing
 * folder finds nothing. Expiry's hold on nested tables and the sweep's enclosing-table check
 * share it. Returns 0, or the listing's code (ICM_ENOMEM, ICM_EIO, ICM_EAUTH, ...; the last
 * error names the folder). */
typedef struct icm__table_md_found {
    bool any;
    char *document;
} icm__table_md_found;
int icm__find_table_metadata(icm_fileio *io, const char *md_dir, bool want_document,
                             icm__table_md_found *out);

/* The table's metadata documents: `md_location` (may be NULL), the file md was read from, every
 * metadata-log entry, and `version-hint.text` / `.txt` in each metadata folder — each handed to
 * cb. A relative metadata-log entry, or a relative `md_location` (older icemaint versions
 * recorded the table path as typed, in logs and in catalog rows), is also handed over as its
 * file name in each metadata folder. These are never data; expiry
 * keeps them and the orphan sweep counts them as referenced.
 * Returns 0, ICM_ENOMEM, ICM_EREFUSED (a relative entry that names no file) or the callback's
 * non-zero value. */
int icm__table_metadata_docs(const icm_table_metadata *md, const char *md_location,
                             int (*cb)(const char *location, void *payload), void *payload);

#endif /* ICM_MAINT_KEEPSET_H */
