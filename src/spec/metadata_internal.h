/*
 * spec/metadata_internal.h: what the table-metadata module shares with later modules (commit,
 * expire) and between its own files: the jansson document behind an icm_table_metadata, the
 * typed views derived from it, and the JSON text writer.
 *
 * The JSON document is the source of truth. Views (icm__md_views) are derived from it by
 * icm__md_views_build(), which is also the validator: a document whose views cannot be built is
 * rejected as a whole. Edits build a new document and new views first and swap them in only
 * when both succeeded, so a failed edit (ICM_ENOMEM) leaves the object unchanged.
 */
#ifndef ICM_SPEC_METADATA_INTERNAL_H
#define ICM_SPEC_METADATA_INTERNAL_H

#include <jansson.h>

#include "icemaint/metadata.h"
#include "icemaint/update.h"
#include "util/util.h"

/* Typed views of one document. Every pointer borrows from the document it was built from. */
typedef struct icm__md_views {
    int format_version;
    const char *uuid;
    const char *location;
    int64_t last_sequence_number;
    int64_t last_updated_ms;
    bool has_current_snapshot;
    int64_t current_snapshot_id;
    bool has_next_row_id;
    int64_t next_row_id;

    icm_snapshot *snapshots;
    json_t **snapshot_json;       /* the JSON object of each snapshot (for summaries) */
    size_t snapshot_count;
    size_t *snapshot_order;       /* indices into snapshots, sorted by snapshot_id */
    const char **manifest_strings; /* storage for every v1 snapshot's `manifests` */

    icm_ref *refs;
    size_t ref_count;

    icm_snapshot_log_entry *snapshot_log;
    size_t snapshot_log_count;
    icm_metadata_log_entry *metadata_log;
    size_t metadata_log_count;
    icm_statistics_file *statistics;
    size_t statistics_count;

    const char **property_keys;
    const char **property_values;
    size_t property_count;

    size_t schema_count;
    int32_t current_schema_id;
    size_t spec_count;
    int32_t default_spec_id;
    size_t sort_order_count;
} icm__md_views;

struct icm_table_metadata {
    json_t *doc;        /* owned reference */
    char *file;         /* where it was read from; NULL if unknown */
    icm__md_views v;
    bool has_text_digest; /* parsed from text, and the document not replaced since */
    uint64_t text_digest; /* XXH3-64 of that text (inflated) */
};

/* Route jansson's allocations through icm__malloc/icm__free (idempotent, thread-safe; process-
 * wide, so only for the public icm_allocator_hook_json()). */
void icm__json_hook_allocator(void);

/* json_dumps(doc, flags) as a string of library memory (icm__free), whichever allocator jansson
 * uses; NULL (ICM_ENOMEM set) when out of memory. */
char *icm__json_dumps(const json_t *doc, size_t flags);

/*
 * Validate `doc` as table metadata and build its views into *out (zeroed first). `location`
 * names the file in error messages. Returns 0, ICM_EINVALID, ICM_EUNSUPPORTED or ICM_ENOMEM;
 * on failure *out holds nothing that needs freeing.
 */
int icm__md_views_build(icm__md_views *out, json_t *doc, const char *location);
void icm__md_views_dispose(icm__md_views *v);
/* The snapshot with this id, by binary search in snapshot_order; NULL when there is none. */
const icm_snapshot *icm__md_views_find_snapshot(const icm__md_views *v, int64_t id);

/*
 * A digest of the document's content, to tell whether the metadata at one name changed (a
 * version file rewritten in place): XXH3-64 of the text it was parsed from, or, for a
 * document built or received otherwise (edits, a REST load), of its compact serialisation.
 * Equal digests mean the same document as far as the recheck of a delete phase is concerned;
 * a document parsed from text and the same one built otherwise may differ (reading again is
 * the safe side). Returns 0 or ICM_ENOMEM.
 */
int icm__table_metadata_digest(const icm_table_metadata *md, uint64_t *out);
/* The id of schema i (i < icm_table_metadata_schema_count), as icm_table_metadata_schema_json
 * takes it (a schema without `schema-id` is 0; v1's lone `schema` the current id). */
int32_t icm__table_metadata_schema_id_at(const icm_table_metadata *md, size_t i);

/* A snapshot summary's count `key` (`total-data-files`, ...) as Java's Long.parseLong reads
 * it: false when absent or not an optional sign and decimal digits within int64. */
bool icm__snapshot_summary_count(const icm_table_metadata *md, const icm_snapshot *snap,
                                 const char *key, int64_t *out);

/*
 * Wrap a document in a new metadata object: takes the reference `doc_take` (released on any
 * failure), validates it and copies `file`. Returns 0 or the build error.
 */
int icm__table_metadata_wrap(icm_table_metadata **out, json_t *doc_take, const char *file);

/*
 * Replace md's document by `doc_take` (taken) after building its views; on failure md is
 * unchanged and doc_take released. Used by every edit.
 */
int icm__table_metadata_replace_doc(icm_table_metadata *md, json_t *doc_take);

/*
 * A new metadata object: `base` without the snapshots `ids` (any order; the current one is
 * refused), without the refs named in `drop_refs` (`main` always stays; names not present are
 * ignored) and the refs on removed snapshots, with the snapshot-log, statistics and
 * partition-statistics edited as icm_table_metadata_remove_snapshots does. One new document,
 * sharing every unchanged value with base's. Returns 0, ICM_EREFUSED (current snapshot),
 * ICM_ENOMEM, or the document's validation error.
 */
int icm__table_metadata_without_snapshots(const icm_table_metadata *base, const int64_t *ids,
                                          size_t n, const char *const *drop_refs,
                                          size_t n_drop, icm_table_metadata **out);

/*
 * A new document: `doc` without the snapshots of the sorted ids `sorted` and the refs named in
 * `drop_refs` (`main` always stays), as icm__table_metadata_without_snapshots edits it (no
 * check of the current snapshot). Shares every value it keeps with `doc`. NULL on ENOMEM.
 */
json_t *icm__json_without_snapshots(json_t *doc, const int64_t *sorted, size_t n,
                                    const char *const *drop_refs, size_t n_drop);

/*
 * icm_table_changes_apply of the updates from index `from` on (a transaction applies each
 * operation's updates to its working metadata as it builds them).
 */
int icm__table_changes_apply_range(const icm_table_changes *c, size_t from,
                                   const icm_table_metadata *base, icm_table_metadata **out);
/* The same, applied to `md` itself (its document replaced; on failure md is unchanged). */
int icm__table_changes_apply_in_place(const icm_table_changes *c, size_t from,
                                      icm_table_metadata *md);
/* icm_table_changes_add_snapshot of a snapshot object built in memory (taken). */
int icm__table_changes_add_snapshot_json(icm_table_changes *c, json_t *snapshot_take);

/* The jansson document (borrowed; never modify it: documents share values, and every edit
 * builds a new document, see metadata_edit.c). */
json_t *icm__table_metadata_json(const icm_table_metadata *md);

/*
 * Parse JSON text (not NUL-terminated) into a new jansson value (spec/json_parse.c): exact int64
 * integers, strict UTF-8, no duplicate keys, bounded depth. Returns 0, ICM_EINVALID ("not valid
 * JSON: ...", with line/column/offset in the last error) or ICM_ENOMEM.
 */
int icm__json_parse(const char *text, size_t len, const char *location, json_t **out);

/*
 * Parse JSON text as other readers do (Java's Jackson, Python's json and pydantic): as
 * icm__json_parse, but a duplicate key keeps its first value (`last_wins`: its last, as those
 * readers do) and sets *duplicates (may be NULL); NaN, Infinity, -Infinity and a real out of
 * range read as null, an integer out of the int64 range as a real; a lone surrogate or \u0000
 * escape as U+FFFD (a raw NUL too); other control characters and bytes that are not UTF-8 are
 * kept as they are; a UTF-8 byte order mark at the start is skipped. Only for learning what
 * metadata another tool wrote says (spec/metadata_places.h): never for a table icemaint edits.
 * Returns 0, ICM_EINVALID ("not valid JSON: ...") or ICM_ENOMEM.
 */
int icm__json_parse_lenient(const char *text, size_t len, const char *location, bool last_wins,
                            json_t **out, bool *duplicates);

/*
 * Write `value` as JSON text into `buf`: keys in document order, integers exact, reals in the
 * shortest form that reads back to the same double, 2-space indentation when `pretty`.
 * Returns 0 or ICM_ENOMEM.
 */
int icm__json_write(icm__buf *buf, const json_t *value, bool pretty);

/*
 * Inflate `data` if it starts with the gzip or zstd magic; otherwise *out = NULL. The result
 * is new (icm__free) and NUL-terminated. Returns 0, ICM_EINVALID (corrupt stream, or larger
 * than ICM__METADATA_MAX_BYTES once inflated) or ICM_ENOMEM.
 */
int icm__metadata_inflate(const char *data, size_t len, const char *location, char **out,
                          size_t *out_len);

/* Upper bound on the inflated size of a metadata file: refuse decompression bombs. */
#define ICM__METADATA_MAX_BYTES ((size_t)1 << 30)

/* Whether two table-uuids name one table (case-insensitive; neither having one, as a v1
 * table may, counts as the same). How reloads are told from another table under the name. */
bool icm__same_table_uuid(const char *a, const char *b);

#endif /* ICM_SPEC_METADATA_INTERNAL_H */
