/*
 * manifest/bulk_reader.h: the manifest bulk reader: the manifest lists and manifests of one
 * table read many at a time, for planning (internal). The reachability walk (maint/reach_walk.c)
 * reads through it for snapshot expiry and the orphan sweep alike; nothing else in the planners
 * touches the manifest readers' internals.
 *
 * What it gives over reading files one by one, each with the same results and errors:
 *  - a schema cache: one writer schema text is parsed once for the whole read
 *    (icm__manifest_bulk);
 *  - a row filter: rows of a manifest list the caller has already handled are skipped without
 *    decoding, by path or by their bytes (icm__list_row_filter, icm__manifest_bulk_read_list);
 *  - views: a manifest's entries decoded only as far as reachability needs (path, format, size,
 *    or the path alone), straight from the block (icm__manifest_ahead);
 *  - inflate-ahead: files read, and their Avro blocks decompressed, on a second thread a few
 *    files ahead of the caller (icm__lists_ahead, icm__manifest_ahead).
 *
 * Both rings work on a sequence known in advance, in order, at most a few files ahead of the
 * caller (util/ahead.h), so memory does not grow with the number of files. Files are started in
 * the caller's order, by the helper thread or, when it would otherwise wait, by the caller
 * itself, so two may be read at once. The caller takes file 0, 1, 2, ... in order (get), and
 * hands each back (release) before taking the next. When no thread can be started, each file is
 * read on the calling thread when it is taken: the same results, without the overlap.
 *
 *  - Manifest lists (icm__lists_ahead): each list's bytes, with its Avro blocks decompressed
 *    ahead (icm__avro_inflate_ahead); the caller decodes the rows itself
 *    (icm__manifest_bulk_read_list), since which rows it needs depends on the lists before.
 *  - Manifests (icm__manifest_ahead): each manifest's live entries (ADDED and EXISTING: a
 *    DELETED entry protects nothing), as the keep-set walk reports them.
 *
 * Read-only: the only storage calls are reads.
 */
#ifndef ICM_MANIFEST_BULK_READER_H
#define ICM_MANIFEST_BULK_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "avro/avro.h"
#include "icemaint/fileio.h"
#include "icemaint/manifest.h"

/* ---- what the planners read ---- */

/* Kinds of reachable files, in the order expiry deletes them. Values match icm_expire_file_kind
 * (include/icemaint/expire.h). */
typedef enum icm__file_kind {
    ICM__FILE_DATA = 0,
    ICM__FILE_POSITION_DELETES,
    ICM__FILE_EQUALITY_DELETES,
    ICM__FILE_DELETION_VECTOR,
    ICM__FILE_MANIFEST,
    ICM__FILE_MANIFEST_LIST,
    ICM__FILE_STATISTICS,
    ICM__FILE_PARTITION_STATISTICS,
    ICM__FILE_KIND_COUNT
} icm__file_kind;

/* Manifests remembered by a walk (icm__reach_walk_collect), so that their entries can be read
 * later (icm__reach_entries) without reading the manifest lists again. */
typedef struct icm__manifest_ref {
    icm_manifest_file mf;   /* manifest_path owned; partitions and key_metadata cleared */
    bool embedded_v1;       /* from a v1 snapshot's `manifests`: read with v1 inheritance */
    int64_t snapshot_id;    /* the snapshot that first reached it */
} icm__manifest_ref;

typedef struct icm__manifest_refs {
    icm__manifest_ref *items;
    size_t len, cap;
} icm__manifest_refs;

void icm__manifest_refs_dispose(icm__manifest_refs *refs);

/* A test a manifest entry's location (`len` bytes with no NUL byte among them, the manifest
 * readers refuse such paths; NOT NUL-terminated: it is read in place, so nothing past `len` may
 * be read) must pass to reach the callback, run on the thread decoding the manifest (so it only
 * reads memory nobody changes meanwhile). It may let through locations the callback does not
 * want, never hold back one it does. */
typedef bool (*icm__entry_filter)(const char *location, size_t len, const void *ctx);

/* Whether a manifest-list row with this manifest_path (as written, not NUL-terminated) may be
 * skipped without decoding it. */
typedef bool (*icm__manifest_path_filter)(const uint8_t *path, size_t len, void *payload);
/* The rows of a manifest list that need no decoding, for a reader of many lists in turn. */
typedef struct icm__list_row_filter {
    /* Claims a row by its path: the row is skipped (only its Avro structure is checked). */
    icm__manifest_path_filter seen_path;
    /* Optional: at a row's first byte, with `avail` bytes and at most `max_rows` rows left in
     * its block, how many bytes there are rows the filter knows it claims without looking (rows
     * byte for byte equal to rows it claimed or saw delivered, under the same writer schema:
     * decoding is a function of the bytes read, so they are the same rows), *rows their number;
     * 0 for none. They are then skipped unread. `schema` names the writer schema for the whole
     * read of many lists: it is only called when the schema is a cached one (a schema cache's
     * schemas live as long as the cache). */
    size_t (*same_rows)(const uint8_t *row, size_t avail, size_t max_rows, const void *schema,
                        void *payload, size_t *rows);
    /* Optional: the bytes (borrowed for the call) of the row just claimed, or just delivered
     * (after the row callback returned 0); schema as for same_rows, NULL when not cached. */
    void (*row_end)(const uint8_t *row, size_t len, const void *schema, void *payload);
    void *payload;
} icm__list_row_filter;

/* ---- one bulk read ---- */

/* The files of one table read for one plan: its FileIO, its format version (the fallback for
 * files whose header has none) and the schema cache every read shares. */
typedef struct icm__manifest_bulk {
    icm_fileio *io;
    int format_version;
    icm__avro_schema_cache *schemas;
} icm__manifest_bulk;

/* An empty cache for `io` (borrowed) and `format_version`. Returns 0 or ICM_ENOMEM (then
 * nothing is held). */
int icm__manifest_bulk_init(icm__manifest_bulk *b, icm_fileio *io, int format_version);
void icm__manifest_bulk_dispose(icm__manifest_bulk *b);

/* Files done ahead at most (tests read these). With a few, the helper sat idle whenever the
 * caller took long over one file (it had filled the window); 16 measured 3-8% faster than 8
 * lists and 4 manifests, for a few MiB more held at once (a list's blocks inflated ahead are
 * capped by ICM__AVRO_INFLATE_AHEAD_BYTES). */
#define ICM__LISTS_AHEAD_WINDOW 16
#define ICM__MANIFESTS_AHEAD_WINDOW 16

/* ---- manifest lists ---- */

/* A manifest list read ahead: its bytes, or why they could not be read. */
typedef struct icm__ahead_list {
    const char *data;
    size_t len;
    const icm__avro_inflated *inflated; /* blocks decompressed ahead (maybe not all) */
    int rc;                             /* 0, or the read's error code */
} icm__ahead_list;

typedef struct icm__lists_ahead icm__lists_ahead;

/* Start reading locations[0..n) (borrowed) through b's FileIO (b is borrowed until
 * icm__lists_ahead_finish). Returns 0 or ICM_ENOMEM. */
int icm__lists_ahead_start(icm__lists_ahead **out, const icm__manifest_bulk *b,
                           const char *const *locations, size_t n);
/* List i: the one after the last released (waits for it). Borrowed until release(a, i). */
const icm__ahead_list *icm__lists_ahead_get(icm__lists_ahead *a, size_t i);
/* When list i (taken, not released) has rc != 0: make its read's error details the calling
 * thread's last error. */
void icm__lists_ahead_raise(icm__lists_ahead *a, size_t i);
void icm__lists_ahead_release(icm__lists_ahead *a, size_t i);

/* A list's buffers, taken from the ring: its bytes and the blocks inflated ahead (owned). */
typedef struct icm__list_hold {
    char *data;
    size_t len;
    icm__avro_inflated inflated;
    size_t last_block; /* where the last contains() found its bytes (a hint) */
} icm__list_hold;
/* Take list i's buffers (taken, not released, rc == 0): *out owns them from now on, and they
 * stay where they are, so pointers into them stay valid; release(a, i) is still due. */
void icm__lists_ahead_take(icm__lists_ahead *a, size_t i, icm__list_hold *out);
/* Whether [p, p + len) lies within the held bytes or one held block. */
bool icm__list_hold_contains(icm__list_hold *h, const uint8_t *p, size_t len);
/* Free what is held (the hold is then empty). NULL is fine. */
void icm__list_hold_dispose(icm__list_hold *h);
/* Stop, join, free. NULL is fine. */
void icm__lists_ahead_finish(icm__lists_ahead *a);

/* ---- manifests ---- */

/* What an entry's partition tuple says, for telling two entries' files apart (expiry's twin
 * check, verify_twins.c). `shape` digests the manifest's partition spec id and the tuple's
 * type as compared; 0: unknown (no spec id, a field of a type not compared, or not decoded).
 * `values` digests the values by field id, each in one form whoever wrote it: int and long as a
 * long, a decimal's two's complement without redundant sign bytes, null apart from every value;
 * float and double fields not at all (PyIceberg 0.12 writes a carried double rounded to
 * float32: adversary round 16, F1). The entries of one file carry its tuple: a file copied into
 * a later manifest keeps it (spec "Manifests"). The low bit of `shape` says some value is
 * null (icm__partition_key_has_null): a writer that infers an added file's tuple from its
 * statistics records null where it has none (PyIceberg's add_files under metrics none or
 * counts: adversary round 20, D2). */
typedef struct icm__partition_key {
    uint64_t shape, values;
} icm__partition_key;

/* Whether two entries' partition tuples tell their files apart: both known, of one spec and
 * type, with other values. */
static inline bool icm__partition_keys_differ(icm__partition_key a, icm__partition_key b)
{
    return a.shape != 0 && (a.shape | 1) == (b.shape | 1) && a.values != b.values;
}

/* Whether some value of the tuple is null (a known tuple). */
static inline bool icm__partition_key_has_null(icm__partition_key k)
{
    return k.shape != 0 && (k.shape & 1) != 0;
}

/* One entry of a decoded manifest. Read described (icm__manifest_ahead_start_described), also
 * what tells one commit's entry of a file from another's (the walk's judgement of a
 * snapshot's entries, reach_walk.c): who wrote it and what it says of the file; otherwise
 * those fields are absent (false, -1, 0). */
typedef struct icm__ahead_entry {
    size_t location_offset;  /* into icm__ahead_manifest.locations (NUL-terminated) */
    int64_t size_bytes;
    icm__file_kind kind;
    bool added;              /* status ADDED (else EXISTING, or DELETED in `deleted`) */
    bool has_snapshot_id, has_file_sequence_number; /* as written (none inherited) */
    int64_t snapshot_id;     /* the commit that added it (DELETED: that deleted it) */
    int64_t file_sequence_number;
    int64_t record_count;    /* -1: absent */
    icm_file_format file_format; /* ICM_FILE_FORMAT_OTHER: another, or not decoded */
    uint64_t bounds;         /* icm__bounds_digest (0: no bound given, or not decoded) */
    icm__partition_key partition; /* (shape 0: not decoded) */
    /* Read with keep_bounds (icm__manifest_ahead_start_bounded) and kept: the bounds maps'
     * bytes, lower then upper, right after the location's NUL; else 0, 0. */
    uint32_t lower_bounds_len, upper_bounds_len;
    /* Read described, of a deletion vector: its referenced data file (NUL-terminated, right
     * after the bounds' bytes), and where its blob lies in the Puffin file (-1: absent). */
    bool has_referenced_data_file;
    int64_t content_offset, content_size_in_bytes;
} icm__ahead_entry;

/* A digest of an entry's lower_bounds and upper_bounds (the maps' Avro bytes, without the
 * union branch), for telling two entries' files apart; 0 when neither map gives a bound.
 * Writers list a map's pairs in any order, so the digest is over the pairs as a set (spec:
 * map<int, bytes> is an array of {key, value} records, in blocks); a map of another shape is
 * digested as its bytes. Never fails. */
uint64_t icm__bounds_digest(icm_raw lower_bounds, icm_raw upper_bounds);

/* The pairs of one bounds map (its Avro bytes as above), in the order written. */
typedef struct icm__bounds_iter {
    const uint8_t *p, *end;
    int64_t left;   /* pairs left in the current block */
    bool done, bad; /* bad: the bytes are not the spec's shape (stops there) */
} icm__bounds_iter;
void icm__bounds_iter_init(icm__bounds_iter *it, icm_raw map);
/* The next pair (the value borrowed from the map): false at the end, or at bytes that do not
 * parse (it->bad). An absent map (no bytes) has no pairs. */
bool icm__bounds_next(icm__bounds_iter *it, int32_t *key, const uint8_t **value, size_t *len);

/* A decoded manifest: its live entries in manifest order, up to the first read error, and,
 * read without a filter, its DELETED entries. */
typedef struct icm__ahead_manifest {
    const char *locations;
    const icm__ahead_entry *entries;
    size_t count;
    const icm__ahead_entry *deleted;
    size_t deleted_count;
    size_t entries_read; /* entries decoded, every status */
    int rc;              /* 0, or why the manifest could not be read (whole or in part) */
} icm__ahead_manifest;

typedef struct icm__manifest_ahead icm__manifest_ahead;

/*
 * Start decoding refs[0..n) (borrowed, as are `b`, whose schema cache the decoding threads use
 * until icm__manifest_ahead_finish, and `filter_ctx`). b's format version is the table's, for
 * manifests without one in their header (v1 embedded manifests always read as v1). `filter`
 * (NULL: none) decides which live entries are kept (icm__entry_filter); with a filter only
 * locations are decoded: every entry has kind ICM__FILE_DATA and size -1. Returns 0 or
 * ICM_ENOMEM.
 */
int icm__manifest_ahead_start(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                              const icm__manifest_ref *refs, size_t n, icm__entry_filter filter,
                              const void *filter_ctx);
/* icm__manifest_ahead_start without a filter, each entry also described: its snapshot id, file
 * sequence number, record count, a digest of its bounds and its partition key. Returns 0 or ICM_ENOMEM. */
int icm__manifest_ahead_start_described(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                                        const icm__manifest_ref *refs, size_t n);
/* Which live entries keep their bounds' bytes, by the size their entry records; called from the
 * decoding threads (so `ctx` must be read-only meanwhile). */
typedef bool (*icm__keep_bounds_fn)(int64_t size_bytes, const void *ctx);
/* icm__manifest_ahead_start_described, the live entries `keep` chooses also keeping their
 * bounds maps' bytes (icm__ahead_entry.lower_bounds_len). Returns 0 or ICM_ENOMEM. */
int icm__manifest_ahead_start_bounded(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                                      const icm__manifest_ref *refs, size_t n,
                                      icm__keep_bounds_fn keep, const void *keep_ctx);
/* Manifest i: the one after the last released (waits until it is decoded). Borrowed until
 * icm__manifest_ahead_release(a, i). */
const icm__ahead_manifest *icm__manifest_ahead_get(icm__manifest_ahead *a, size_t i);
/* When manifest i (taken, not yet released) has rc != 0: make its failure's details the calling
 * thread's last error (after the caller's own calls, which may have changed it meanwhile). */
void icm__manifest_ahead_raise(icm__manifest_ahead *a, size_t i);
void icm__manifest_ahead_release(icm__manifest_ahead *a, size_t i);
/* Stop decoding (a manifest being decoded is finished first), join and free. NULL is fine. */
void icm__manifest_ahead_finish(icm__manifest_ahead *a);

/* Decode the manifest list `location` from buffers taken from a lists-ahead ring (borrowed),
 * with b's schema cache and format version: cb sees, in order, the rows `f` (NULL: none) does
 * not claim (icm__list_row_filter). Same results and errors as icm_manifest_list_read. */
int icm__manifest_bulk_read_list(const icm__manifest_bulk *b, const icm__list_hold *h,
                                 const char *location, const icm__list_row_filter *f,
                                 icm_manifest_file_cb cb, void *payload);

#endif /* ICM_MANIFEST_BULK_READER_H */
