/*
 * maint/verify.h: do the files some snapshots reference exist (with the sizes the metadata
 * records)? The walk shared by expiry's verification before it deletes (expire_verify.c) and by
 * `icemaint check` (check.c) (internal).
 *
 * Why (issue #16 class 4): Avro deflate blocks carry no checksum, so one flipped bit in a
 * retained manifest can change a live file's path. The real file then looks unreferenced and a
 * maintenance run deletes it, after which restoring the manifest no longer helps. A path that
 * names no file is the visible trace of such damage: before deleting, the callers check that
 * every file the retained snapshots reference exists, and delete nothing when one does not.
 *
 * How: the keep-set walk (keepset.h) hands over every file the chosen snapshots reach: manifest
 * lists, manifests, live data and delete files, deletion-vector Puffin files, statistics and
 * partition-statistics files, each with the snapshot through which it was first reached and
 * the size its referrer records (manifest_length, file_size_in_bytes; a manifest list has
 * none). Each is stat'ed once through the FileIO (so a path map applies: the file is looked
 * for where it really is, and reported by the name the metadata gives it). Manifest lists and
 * manifests that cannot be read are issues too, except when they are missing (the stat says so
 * already).
 *
 * Only reads storage: no function here references a FileIO call that creates, writes or
 * deletes (tests/unit/test_verify.c checks the object file with nm).
 */
#ifndef ICM_MAINT_VERIFY_H
#define ICM_MAINT_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "maint/keepset.h"
#include "util/strset.h"
#include "util/util.h"

typedef enum icm__verify_what {
    ICM__VERIFY_MISSING = 0,    /* no such file */
    ICM__VERIFY_SIZE = 1,       /* its size differs from the one the metadata records */
    ICM__VERIFY_UNREADABLE = 2, /* a stat failed otherwise, or a manifest list / manifest
                                   exists but cannot be read (code and message say why) */
    ICM__VERIFY_LOOKALIKE = 3   /* a data or delete file outside the roots bearing the name
                                   or the recorded size of a file about to be deleted
                                   (icm__verify_lookalikes): not stat'ed, not a refusal. The
                                   caller keeps the files it may stand for: one damaged entry
                                   may have moved a live file's reference out of the table,
                                   onto another table's file of that name and size (adversary
                                   round 10) or onto any outside file of its size (round 11) */
} icm__verify_what;

/* One problem. Strings are borrowed for the duration of the callback. */
typedef struct icm__verify_issue {
    icm__verify_what what;
    const char *location;          /* as the metadata names it */
    icm__file_kind kind;
    int64_t expected_size_bytes;   /* -1 when the metadata records none */
    int64_t actual_size_bytes;     /* -1 when missing or unknown */
    int64_t snapshot_id;           /* a snapshot that references it (0 for a list or
                                      manifest that could not be read: the walk's failure
                                      records name none) */
    int code;                      /* UNREADABLE: the icm error code; else 0 */
    const char *message;           /* UNREADABLE: why; else "" */
} icm__verify_issue;

/* Return 0 to go on; anything else stops the walk and is returned by icm__verify_walk. */
typedef int (*icm__verify_cb)(const icm__verify_issue *issue, void *payload);

/*
 * What files about to be deleted look like from outside the table: their names (last
 * segments) and their sizes. A reference outside the table's places bearing either may be a
 * live file's entry damaged out of the table (its folder's name changed, or its whole path
 * changed onto another file of its size), so the file it may stand for is kept. Names and
 * sizes, not contents: a file's bytes cannot be compared with an entry, and its footer can be
 * made to agree.
 */
typedef struct icm__verify_lookalikes {
    icm__strset names;
    int64_t *sizes;     /* ascending, distinct after icm__verify_lookalikes_seal */
    size_t size_count, size_cap;
} icm__verify_lookalikes;

#define ICM__VERIFY_LOOKALIKES_INIT {ICM__STRSET_INIT, NULL, 0, 0}

/* Add a file about to be deleted (size_bytes < 0: its name only). Returns 0 or ICM_ENOMEM. */
int icm__verify_lookalikes_add(icm__verify_lookalikes *l, const char *location,
                               int64_t size_bytes);
/* Sort the sizes (before the first icm__verify_lookalike). */
void icm__verify_lookalikes_seal(icm__verify_lookalikes *l);
/* Whether a reference (its location and recorded size) bears the name or size of one added. */
bool icm__verify_lookalike(const icm__verify_lookalikes *l, const char *location,
                           int64_t size_bytes);
/* Whether a file about to be deleted has this size (sealed). */
bool icm__verify_lookalikes_has_size(const icm__verify_lookalikes *l, int64_t size_bytes);
void icm__verify_lookalikes_dispose(icm__verify_lookalikes *l);

/*
 * The lookalike references found (each a reached file outside the table: its location, the
 * size it records and a snapshot that references it), indexed by name and by size, so that
 * each file about to be deleted finds the reference it may stand for in O(log n): a table
 * whose files all lie outside it (add_files, Spark's `snapshot`) may have many.
 */
typedef struct icm__verify_refs {
    icm__reached *items;          /* locations owned */
    size_t n, cap;
    const icm__reached **by_name; /* sealed: by last segment */
    const icm__reached **by_size; /* sealed: by recorded size, then file format, record
                                     count, bounds, partition, adding snapshot and location */
    size_t *group_end; /* sealed: by by_size index, the end of the run of references that say
                          the same of their files (all but the location) */
} icm__verify_refs;

#define ICM__VERIFY_REFS_INIT {NULL, 0, 0, NULL, NULL, NULL}

/* Add a reference (location, referenced data file and the bounds' bytes, if any, copied).
 * Returns 0 or ICM_ENOMEM. */
int icm__verify_refs_add(icm__verify_refs *r, const icm__reached *ref);
/* Build the indexes (after the last add). Returns 0 or ICM_ENOMEM. */
int icm__verify_refs_seal(icm__verify_refs *r);
/* Whether the file at `location` of size `size_bytes` about to be deleted may be what a
 * reference stands for: one with its name, else one recording its size (whatever its entry
 * says: a file deleted and added again from its path has a retained entry none of its expired
 * entries describes, adversary round 18, F1). Then *why is a new message saying so ("not
 * deleted: <snapshot_word> ID references REF, outside <outside_of>, ...; kept"), else NULL.
 * Returns 0 or ICM_ENOMEM. */
int icm__verify_refs_stood_for(const icm__verify_refs *r, const char *snapshot_word,
                               const char *outside_of, const char *location,
                               int64_t size_bytes, char **why);
void icm__verify_refs_dispose(icm__verify_refs *r);
/* Whether `location` lies outside every root by location key (util/location_id.h: the keep
 * sets' identity; root_keys are the roots' icm__location_key), so that a spelling the guards
 * do not call inside (`/t/./f`, `/t/x/../f`) but the keep set takes for a file of the table is
 * not a lookalike. Returns 0 or ICM_ENOMEM. */
int icm__verify_outside_keys(const char *location, char *const *root_keys, size_t n,
                            bool *outside);

/* Whether the file `location` reaches once every link on its way is resolved (the kernel's
 * `..` follows a link first) lies outside every root (resolved too, else as written): a path
 * that is in the table by location key may still lead readers out of it. A location that
 * cannot be resolved (missing) is not outside: its stat reports it. Returns 0 or ICM_ENOMEM. */
int icm__verify_really_outside(icm_fileio *io, const char *location,
                               const char *const *roots, size_t n, bool *outside);

typedef struct icm__verify_options {
    /* Snapshots to verify; NULL = every snapshot of the metadata. */
    const int64_t *snapshot_ids;
    size_t snapshot_id_count;
    /* Also the data and delete files (every manifest's entries are read); false: manifest
     * lists, manifests and statistics files only. */
    bool read_entries;
    /* Compare sizes with the metadata's where it records one. */
    bool sizes;
    /* Verify only files inside these locations (segment boundaries); 0 roots = every file. */
    const char *const *roots;
    size_t root_count;
    /* NULL (no memory: a file reached twice is stat'ed twice), or files found fine by earlier
     * walks (keys of location and expected size): not stat'ed again, and files found fine now
     * are added. Lets several walks over snapshots that share files stat each file once. */
    icm__pathset *verified;
    /* NULL, or the files about to be deleted: a data or delete file outside the roots that
     * looks like one of them is reported (ICM__VERIFY_LOOKALIKE). */
    const struct icm__verify_lookalikes *lookalikes;
    /* NULL, or where the data and delete files inside the roots that record the size of a file
     * about to be deleted (a lookalike's size) are collected, with their entries' facts and
     * bounds' bytes (the walk then decodes the metrics): their twins are judged after the walk
     * (icm__verify_twin_of). Needs lookalikes. */
    struct icm__verify_refs *twins;
} icm__verify_options;

/* What a walk (or a verifier since its last icm__verifier_forget_issues) looked at. */
typedef struct icm__verify_counts {
    size_t checked;   /* distinct files verified (found fine earlier included) */
    size_t issues;    /* distinct files with an issue */
} icm__verify_counts;

/*
 * The verifier the walk uses, for callers that walk themselves (check.c reads each manifest's
 * entries once for many snapshots). icm__verifier_check judges one reached file (outside the
 * roots: ignored; found fine before: counted, not stat'ed; else stat'ed, and an issue goes to
 * the callback once until icm__verifier_forget_issues). Options are borrowed (roots, the
 * verified set) for the verifier's life; snapshot_ids and read_entries are not used.
 * icm__verifier_report_unreadable turns a walk report's read failures into issues (a missing
 * file excepted: its stat reports it).
 * A file on an object store (one the FileIO does not delete locally) is queued and stat'ed
 * with the others queued, many at a time, when the queue fills, when a local file comes, or at
 * icm__verifier_flush, which icm__verifier_report_unreadable calls first: so after a walk,
 * call report_unreadable (or flush) before reading the counts or forgetting the issues. Files
 * are judged in the order reached either way.
 * Return 0; the callback's non-zero value; ICM_ENOMEM.
 */
typedef struct icm__verifier icm__verifier;
int icm__verifier_new(icm__verifier **out, icm_fileio *io, const icm__verify_options *opts,
                      icm__verify_cb cb, void *payload);
void icm__verifier_free(icm__verifier *v);
int icm__verifier_check(icm__verifier *v, const icm__reached *file);
int icm__verifier_report_unreadable(icm__verifier *v, const icm__reach_report *report);
int icm__verifier_flush(icm__verifier *v);
/* Issues may be reported again from now on; the counts start again from 0. */
void icm__verifier_forget_issues(icm__verifier *v);
icm__verify_counts icm__verifier_counts(const icm__verifier *v);
/* The callback's payload from now on. */
void icm__verifier_set_payload(icm__verifier *v, void *payload);

/* Append "PATH (KIND, snapshot ID[, wrong size | , cannot be checked])" to `b`, after ", "
 * unless it is the first (how refusals name an issue; b's oom flag records a failure). */
void icm__verify_issue_name(icm__buf *b, const icm__verify_issue *issue, bool first);

/*
 * Verify the chosen snapshots of `md`: every issue to `cb` (one per file and walk, with the
 * first snapshot that reached it), in walk order, then the manifest lists and manifests that
 * could not be read. *counts (may be NULL) is set.
 * Returns 0; the callback's non-zero value; ICM_ENOMEM.
 */
int icm__verify_walk(icm_fileio *io, const icm_table_metadata *md,
                     const icm__verify_options *opts, icm__verify_cb cb, void *payload,
                     icm__verify_counts *counts);

/* ---- the table's schemas (verify_footer.c) ----
 *
 * The table's schemas, parsed once (icm__verify_schemas_load; one that does not parse is
 * left out), for the columns of files matched by name.
 */
typedef struct icm__verify_schemas {
    struct icm__verify_schema {
        int32_t id;
        struct icm__schema *schema;
    } *items;
    size_t n;
    bool loaded;
} icm__verify_schemas;

#define ICM__VERIFY_SCHEMAS_INIT {NULL, 0, false}

/* Parse md's schemas into s, once (later calls return at once). Returns 0 or ICM_ENOMEM. */
int icm__verify_schemas_load(icm__verify_schemas *s, const icm_table_metadata *md);
/* The schema an entry's metrics were computed under, known only as the schema of the snapshot
 * that added its file while md has that snapshot and s that schema (schema ids say nothing
 * of removed ones: a writer reuses an id, adversary round 19, L1); else NULL. */
const struct icm__verify_schema *icm__verify_schemas_of_adder(const icm__verify_schemas *s,
                                                               const icm_table_metadata *md,
                                                               int64_t added_snapshot_id);
void icm__verify_schemas_dispose(icm__verify_schemas *s);

/* The table a twin check judges planned files against: its metadata (md NULL: unknown, then
 * no column is matched by name) and its schemas, parsed when first needed (the caller
 * disposes of them). */
typedef struct icm__verify_table {
    const icm_table_metadata *md;
    icm__verify_schemas schemas;
} icm__verify_table;

/* ---- twins (verify_twins.c) ----
 *
 * A damaged entry whose path changed onto another file of the table that has its recorded
 * size (a failed write's leftover: adversary round 12, F2) passes every stat, since the file it
 * names is there with the right size. Its trace is the live file it no longer names, which
 * looks unreferenced, so expiry plans it for deletion when an expired snapshot names it. One
 * damaged path leaves the rest of the entry as it was: the planned file's own (expired) entry
 * and the damaged one then agree on size, record count, file format and bounds (not on the
 * snapshot that added the file: a file published from an audit branch, or added again, has
 * entries of two commits, adversary round 14 F1). So a planned
 * file whose entry agrees so with a retained entry inside the table is that entry's twin and
 * is kept, unless every such entry names a file of its bytes (deleting it then loses no
 * content a reader gets: the same rows written twice). One that names other bytes keeps it,
 * even beside an identical copy (adversary round 13, F2). A file deleted and added again from
 * its path by another commit has an entry with that commit's metrics (none, counts,
 * truncate(N), full), which none of its expired entries may share (adversary round 19, L2):
 * an entry that agrees with one of them on what the metrics do not change (file format,
 * record count, partition tuple: one with a null value compares with none, since add_files
 * infers it from the metrics, round 20, D2) stands for the file too when the file's own
 * Parquet footer fits it (row count, values within its bounds, columns by field id and by
 * name; a file of another format, or a Parquet file whose footer cannot be read, fits; one
 * that is no Parquet file does not). A file whose entry tells it
 * apart (another count, values outside the entry's bounds) goes as before.
 */

/* What a planned file's own entry says of it (NULL: unknown, then any entry of its size may
 * stand for it). A Puffin file is said by its format alone: its entries describe its blobs,
 * and its footer says which (verify_twins.c reads it). */
typedef struct icm__verify_twin_facts {
    int64_t record_count;          /* -1: unknown */
    uint64_t bounds;               /* 0: none given */
    icm_file_format file_format;   /* ICM_FILE_FORMAT_OTHER: another, or unknown */
    icm__partition_key partition;  /* shape 0: unknown */
    /* A Puffin file's: the blob its own entry names (offset and size in bytes: 0, 0 unknown;
     * records: -1 unknown; referenced: icm__verify_referenced_digest of its data file, 0
     * unknown). Its footer is trusted to say which blobs it holds only when it lists this
     * one (verify_twins.c). */
    struct icm__verify_own_blob {
        int64_t offset_bytes, size_bytes, records;
        uint64_t referenced;
    } own_blob;
    /* The snapshot that added the file as this entry says (INT64_MIN: unknown): an entry of
     * that commit with another description is another file's (one commit adds a path once),
     * never the file added again. */
    int64_t added_snapshot_id;
} icm__verify_twin_facts;

#define ICM__VERIFY_NO_BLOB {0, 0, -1, 0}

/* A digest of a data file's location by identity (util/location_id.h: the keep sets' key),
 * never 0, into *out. Returns 0 or ICM_ENOMEM. */
int icm__verify_referenced_digest(const char *location, uint64_t *out);

/* Whether an entry with the facts of `ref` may describe the file whose own entry says `facts`
 * (NULL: unknown, then yes): the same file format; for a Puffin file nothing more (its entries
 * describe its blobs); else the record count where both know it, the partition tuple
 * (icm__partition_keys_differ) and the bounds digest exactly. One damaged path leaves all of
 * these as they were. */
bool icm__verify_facts_agree(const icm__reached *ref, const icm__verify_twin_facts *facts);

/* Whether the files `a` and `b` hold the same `size_bytes` bytes (read block by block up to
 * the first difference; false when either cannot be read). Returns 0 or ICM_ENOMEM. */
int icm__verify_same_bytes(icm_fileio *io, const char *a, const char *b, int64_t size_bytes,
                           bool *same);

/* Whether a collected reference (sealed) records this size. */
bool icm__verify_refs_have_size(const icm__verify_refs *twins, int64_t size_bytes);

/*
 * Whether the file at `location` (of `size_bytes`) about to be deleted may be the file a
 * collected reference (icm__verify_options.twins, sealed) stands for: some reference records
 * its size and agrees with one of `facts` (n_facts descriptions of the file, one per distinct
 * description among its own entries; 0: unknown, then any reference of its size agrees)
 * (icm__verify_facts_agree), or with one of them on file format, record count and partition
 * tuple while the file's Parquet footer fits the reference's entry (above), and names a file
 * whose bytes differ, cannot be read, or is past the 16 compared for one file. For a
 * deletion vector's Puffin file (facts[0] of format PUFFIN), a reference that names a blob
 * (content offset and size) agrees only when the file's footer lists that blob (offset,
 * length, data file by location identity, cardinality where both say), and then the blob's
 * bytes are compared; a footer that cannot be read keeps the file. Then *why is a new
 * message saying so ("not deleted: <snapshot_word> ID references REF, ..."), else NULL. A file
 * missing now is no twin (it is gone already). Reads the files block by block up to the first
 * difference. Returns 0 or ICM_ENOMEM.
 */
int icm__verify_twin_of(const icm__verify_refs *twins, icm_fileio *io, icm__verify_table *table,
                        const char *snapshot_word, const char *location, int64_t size_bytes,
                        const icm__verify_twin_facts *facts, size_t n_facts, char **why);

/* ---- footers (verify_footer.c) ----
 *
 * Whether a Parquet file's footer agrees with a manifest entry: the same row count (where the
 * entry records one: record_count >= 0) and no row group value outside the entry's bounds
 * (`lower_bounds`, `upper_bounds`: the maps' Avro bytes, icm__bounds_next), comparing only
 * columns whose two forms compare without doubt (see verify_footer.c). *agrees is false with a
 * reason in `why` ("it has N rows, the entry records M", "row group G holds a value of field F
 * below the entry's lower bound").
 */
struct icm__parquet_stats;
struct icm__schema;
/* The file's comparable leaves by field id: each leaf's own, else (a top-level column written
 * without ids) the id `schema` (may be NULL) gives its name. *out is new
 * (icm__verify_footer_ids_free). Returns 0 or ICM_ENOMEM. */
typedef struct icm__footer_ids icm__footer_ids;
int icm__verify_footer_ids(const struct icm__parquet_stats *stats,
                           const struct icm__schema *schema, icm__footer_ids **out);
void icm__verify_footer_ids_free(icm__footer_ids *ids);
/* The file's comparable top-level leaves by the id `schema` gives their names, their own
 * field ids ignored (nested leaves left out): how a writer that adds a file maps its
 * statistics (PyIceberg's add_files, by the table's current names; adversary round 20, D1).
 * *out is new (icm__verify_footer_ids_free). Returns 0 or ICM_ENOMEM. */
int icm__verify_footer_names(const struct icm__parquet_stats *stats,
                             const struct icm__schema *schema, icm__footer_ids **out);
/* Whether the schema given icm__verify_footer_ids can change its index: some comparable
 * top-level leaf has no field id (a file written without ids, matched by name). */
bool icm__verify_footer_names_matter(const struct icm__parquet_stats *stats);
/* Whether some comparable top-level leaf has a field id (icm__verify_footer_names may then
 * index it otherwise than icm__verify_footer_ids). */
bool icm__verify_footer_ids_matter(const struct icm__parquet_stats *stats);

/* As icm__verify_footer_agrees, judged as the file an entry names, whose writer took the
 * entry's bounds from its columns: besides, every bound whose column the file has finds a
 * value stated on its side in some row group (a column null in every row, or written
 * without statistics, gave the entry no bound: adversary round 24, D1), and with
 * some_compared some bound is compared with a value at all (a fit on the row count alone,
 * no column shared with the bounds, says nothing: round 23, D1). */
void icm__verify_footer_agrees_as_named(const struct icm__parquet_stats *stats,
                                        const icm__footer_ids *ids, int64_t record_count,
                                        icm_raw lower_bounds, icm_raw upper_bounds,
                                        bool some_compared, char *why, size_t why_size,
                                        bool *agrees);
/* Whether the file's footer fits the entry in some way the table's `schemas` (may be NULL)
 * leave: by its field ids, or by ids or by names under any of them, as the file the entry
 * names (icm__verify_footer_agrees_as_named, some bound compared). How the file an entry
 * names is judged when the schema its statistics were mapped by is gone (a healthy entry's
 * file fits in one of these ways); `why` gets the last way's reason. Returns 0 or
 * ICM_ENOMEM. */
int icm__verify_footer_fits_some_way(const struct icm__parquet_stats *stats,
                                     const icm__verify_schemas *schemas, int64_t record_count,
                                     icm_raw lower_bounds, icm_raw upper_bounds, char *why,
                                     size_t why_size, bool *fits);
/* Whether the file's footer fits the entry under some mapping of the entry's bound field ids
 * onto distinct leaves of the file: the row count agrees and each bound's id can be given a
 * leaf of its own that can store a value of its form (its width, by Iceberg's single-value
 * serialization of the types the leaf may store, promotions included) and whose values lie
 * within it (compared as a long or a double on a promoted leaf; a leaf whose values do not
 * compare may hold any bound of its form; ids of the spec's reserved metadata columns need
 * none). How a file is described when the schema its statistics were mapped by is gone (a
 * writer that maps them by name under a schema since removed may have given any column any
 * id; adversary round 23, F1; round 24, F1: any bound on a leaf of another width, or on a
 * decimal, let most dead files fit): the true mapping is one of these. Over 256 ids, 1,024
 * leaves or 4M value comparisons the mapping is not searched and the row count alone
 * decides. Returns 0 or ICM_ENOMEM. */
int icm__verify_footer_fits_any_mapping(const struct icm__parquet_stats *stats,
                                        int64_t record_count, icm_raw lower_bounds,
                                        icm_raw upper_bounds, bool *fits);
/* `ids`: icm__verify_footer_ids of `stats`. */
void icm__verify_footer_agrees(const struct icm__parquet_stats *stats, const icm__footer_ids *ids,
                               int64_t record_count, icm_raw lower_bounds, icm_raw upper_bounds,
                               char *why, size_t why_size, bool *agrees);

#endif /* ICM_MAINT_VERIFY_H */
