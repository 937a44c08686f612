/*
 * maint/orphans_twins.c: keep an orphan that a damaged entry inside the table may stand for
 * (icm__orphans_hold_twins, orphans_plan.h).
 *
 * The damage (adversary round 12, F2, the sweep's side): one retained entry's path changed onto
 * another file of the table that has the entry's size (a failed write's leftover). Every check
 * passes: the file the entry names exists with its size. The live file it no longer names is
 * listed, referenced by nothing, and old: an orphan. Expiry tells such a file by its own
 * (expired) entry (verify_twins.c); the sweep's candidates have none, so their size and
 * Parquet footers speak for them instead. An entry describes its file's size, row count and
 * value ranges; a damaged entry still describes the file it stood for and not the one it names
 * now. So a planned orphan is kept when a retained data or delete file entry inside the listed
 * location records its size and the file that entry names has another size (any format: the
 * sweep's presence check looks at existence only), or, for Parquet, when the orphan's footer
 * agrees with that entry (verify_footer.c) and the footer of the file the entry names does not
 * (or it is no readable Parquet file). A file written without field ids is matched to the
 * entry's bounds by its top-level column names, under the schema its entry's bounds were
 * computed with: that of the snapshot that added the file, else (that snapshot expired, or
 * without a schema id) each of the table's schemas, the orphan kept when any of them says so
 * (adversary round 14, F8: matched by the current schema's names, a swap of two columns' names
 * let a live file go). A healthy entry
 * agrees with its own file, so a healthy table holds nothing here; an orphan that merely looks
 * like a retained file (a retried task's duplicate) goes.
 *
 * Costs: nothing unless a planned orphan has the size of a data or delete entry below the
 * listed location (content_sizes, filled by the keep set's walk); then one walk of the
 * snapshots (entries of such a size keep their bounds' bytes; each distinct entry collected
 * once, REFS_PER_SIZE a size and REFS_MAX in all), a stat of each such entry's file, a footer
 * per Parquet orphan, and the footer of an entry's own file only when the orphan fits it; at
 * most FOOTER_READS_MAX reads a run. Only reads storage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/metadata.h"
#include "maint/orphans_internal.h"
#include "maint/orphans_plan.h"
#include "maint/verify.h"
#include "parquet/parquet.h"
#include "spec/metadata_internal.h"
#include "spec/schema.h"
#include "util/util.h"

/* Distinct entries collected per size, and in all (a table of many equal-size small files
 * has thousands): past them an orphan of that size is judged against those collected only,
 * and a warning counts it (docs/semantics.md). Bounds the memory. */
#define REFS_PER_SIZE 256
#define REFS_MAX ((size_t)1 << 16)
/* Files looked at in one sweep (a stat, or a footer: a stat and two ranged reads), one after
 * another (requests, on an object store); past this the rest of the orphans go unjudged, with
 * a warning saying how many (docs/semantics.md). */
#define FOOTER_READS_MAX 1024

/* A retained entry of a planned orphan's size, with what it says of its file. */
typedef struct twin_ref {
    char *location;
    int64_t size_bytes, record_count, snapshot_id;
    uint8_t *bounds; /* lower then upper */
    size_t lower_len, upper_len;
    bool parquet;        /* its entry's file_format */
    bool sized;          /* actual_size looked up */
    int64_t actual_size; /* its own file's (-1: not found or not known) */
    int fit;             /* its own file's footer: 0 not read yet, 1 fits it, -1 not (why) */
    char *why;           /* why its own file does not fit it (NULL until found) */
    bool has_schema;     /* the schema of the snapshot that added its file is known */
    int32_t schema_id;
    bool own_read;                /* its own file's footer read (own: NULL if no Parquet) */
    icm__parquet_stats *own;
    char *unread;                 /* why it could not be read (NULL: it could, or no format) */
} twin_ref;

typedef struct twins {
    plan *p;
    int64_t *sizes; /* the planned orphans' sizes, sorted, unique */
    size_t n_sizes;
    uint32_t *taken; /* by size: the distinct entries collected (at most REFS_PER_SIZE) */
    bool *overflow;  /* by size: an entry was left out (a cap) */
    icm__pathset *seen; /* the entries collected (location key ^ what the entry says) */
    size_t incomplete;  /* orphans of a size with entries left out */
    size_t reads;    /* footers read */
    size_t unjudged; /* orphans of an entry's size left unjudged (FOOTER_READS_MAX reached) */
    twin_ref *refs;
    size_t n, cap;
    const icm_table_metadata *md;
    icm__verify_schemas schemas; /* the table's, parsed when a file's columns need names */
} twins;

static int by_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static const int64_t *size_slot(const twins *t, int64_t size)
{
    return t->n_sizes > 0 ? bsearch(&size, t->sizes, t->n_sizes, sizeof *t->sizes, by_int64)
                          : NULL;
}

static bool has_size(const twins *t, int64_t size)
{
    return size_slot(t, size) != NULL;
}

static bool keep_bounds(int64_t size_bytes, const void *ctx)
{
    return has_size(ctx, size_bytes);
}

static int on_reached(const icm__reached *f, void *payload)
{
    twins *t = payload;
    const char *rest;
    const int64_t *slot = size_slot(t, f->size_bytes);
    if (f->kind > ICM__FILE_EQUALITY_DELETES || slot == NULL ||
        !icm__orphans_below_root(t->p, f->location, &rest))
        return 0;
    /* one entry reached again (a merged manifest carries it forward) counts once (adversary
     * round 14, F3): the key is the path's and what the entry says */
    const icm_snapshot *adder = f->added_snapshot_id != INT64_MIN
                                    ? icm_table_metadata_snapshot_by_id(t->md, f->added_snapshot_id)
                                    : NULL;
    bool has_schema = adder != NULL && adder->has_schema_id;
    int32_t schema_id = has_schema ? adder->schema_id : 0;
    icm__pathset_hash key;
    bool added = false;
    int rc = icm__pathset_location_hash(f->location, &key);
    key.low ^= f->bounds ^ ((uint64_t)f->record_count * UINT64_C(0x9E3779B97F4A7C15));
    key.high ^= has_schema ? ((uint64_t)(uint32_t)schema_id + 1) * UINT64_C(0xC2B2AE3D27D4EB4F)
                           : 0;
    if (rc == 0)
        rc = icm__pathset_add_hash(t->seen, key, &added);
    if (rc != 0 || !added)
        return rc;
    size_t k = (size_t)(slot - t->sizes);
    if (t->taken[k] >= REFS_PER_SIZE || t->n >= REFS_MAX) {
        t->overflow[k] = true;
        return 0;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        twin_ref *grown = icm__reallocarray(t->refs, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        t->refs = grown;
        t->cap = cap;
    }
    twin_ref *r = &t->refs[t->n];
    memset(r, 0, sizeof *r);
    size_t len = f->lower_bounds.len + f->upper_bounds.len;
    r->location = icm__strdup(f->location);
    r->bounds = len > 0 ? icm__malloc(len) : NULL;
    if (r->location == NULL || (len > 0 && r->bounds == NULL)) {
        icm__free(r->location);
        icm__free(r->bounds);
        return ICM_ENOMEM;
    }
    if (f->lower_bounds.len > 0)
        memcpy(r->bounds, f->lower_bounds.data, f->lower_bounds.len);
    if (f->upper_bounds.len > 0)
        memcpy(r->bounds + f->lower_bounds.len, f->upper_bounds.data, f->upper_bounds.len);
    r->lower_len = f->lower_bounds.len;
    r->upper_len = f->upper_bounds.len;
    r->size_bytes = f->size_bytes;
    r->record_count = f->record_count;
    r->snapshot_id = f->snapshot_id;
    r->parquet = f->file_format == ICM_FILE_FORMAT_PARQUET;
    r->has_schema = has_schema;
    r->schema_id = schema_id;
    t->n++;
    t->taken[k]++;
    return 0;
}

/* By size, then location, then what the entry says: one entry reached through many
 * snapshots once, two entries of one path that describe two files both. */
static int ref_order(const void *a, const void *b)
{
    const twin_ref *x = a, *y = b;
    if (x->size_bytes != y->size_bytes)
        return x->size_bytes < y->size_bytes ? -1 : 1;
    int c = strcmp(x->location, y->location);
    if (c == 0 && x->record_count != y->record_count)
        c = x->record_count < y->record_count ? -1 : 1;
    if (c == 0 && x->lower_len + x->upper_len != y->lower_len + y->upper_len)
        c = x->lower_len + x->upper_len < y->lower_len + y->upper_len ? -1 : 1;
    if (c == 0 && x->lower_len != y->lower_len)
        c = x->lower_len < y->lower_len ? -1 : 1;
    if (c == 0 && x->lower_len + x->upper_len > 0)
        c = memcmp(x->bounds, y->bounds, x->lower_len + x->upper_len);
    if (c == 0 && (x->has_schema != y->has_schema || x->schema_id != y->schema_id))
        c = x->has_schema != y->has_schema ? (x->has_schema ? 1 : -1)
                                           : (x->schema_id < y->schema_id ? -1 : 1);
    return c;
}

static void dedupe(twins *t)
{
    qsort(t->refs, t->n, sizeof *t->refs, ref_order);
    size_t kept = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (kept > 0 && ref_order(&t->refs[kept - 1], &t->refs[i]) == 0) {
            icm__free(t->refs[i].location);
            icm__free(t->refs[i].bounds);
            continue; /* (nothing else is set before the judging) */
        }
        t->refs[kept++] = t->refs[i];
    }
    t->n = kept;
}

static icm_raw lower_of(const twin_ref *r)
{
    return (icm_raw){r->bounds, r->lower_len};
}

static icm_raw upper_of(const twin_ref *r)
{
    return (icm_raw){r->bounds != NULL ? r->bounds + r->lower_len : NULL, r->upper_len};
}

/* A file's footer, decoded, and its leaves by field id (stats NULL: no readable Parquet
 * file). */
typedef struct footer {
    icm__parquet_stats *stats;
    icm__footer_ids *ids;
    const icm__schema *ids_of; /* the schema `ids` were made with */
    bool has_ids, names_only;  /* ... and how (icm__verify_footer_names) */
} footer;

#define NO_FOOTER ((footer){NULL, NULL, NULL, false, false})

static void footer_dispose(footer *f)
{
    icm__parquet_stats_free(f->stats);
    icm__verify_footer_ids_free(f->ids);
    *f = NO_FOOTER;
}

/* f's leaves indexed under `schema`, by their own field ids or (names_only) by their names
 * (made again only for another schema or way). Returns 0 or ICM_ENOMEM. */
static int index_under(footer *f, const icm__schema *schema, bool names_only)
{
    if (f->has_ids && f->ids_of == schema && f->names_only == names_only)
        return 0;
    icm__verify_footer_ids_free(f->ids);
    f->ids = NULL;
    f->has_ids = false;
    int rc = names_only ? icm__verify_footer_names(f->stats, schema, &f->ids)
                        : icm__verify_footer_ids(f->stats, schema, &f->ids);
    f->has_ids = rc == 0;
    f->ids_of = schema;
    f->names_only = names_only;
    return rc;
}

/* Whether the file whose footer is `f`, the file the entry `r` names, agrees with it
 * (icm__verify_footer_agrees_as_named; some_compared: some bound compared at all). */
static void agrees_as_named(const footer *f, const twin_ref *r, bool some_compared, char *why,
                            size_t why_size, bool *out)
{
    if (f->stats == NULL) {
        *out = false;
        snprintf(why, why_size, "it is no readable Parquet file");
        return;
    }
    icm__verify_footer_agrees_as_named(f->stats, f->ids, r->record_count, lower_of(r),
                                       upper_of(r), some_compared, why, why_size, out);
}

/* Whether the file whose footer is `f` agrees with the entry `r`. */
static void agrees(const footer *f, const twin_ref *r, char *why, size_t why_size, bool *out)
{
    if (f->stats == NULL) {
        *out = false;
        snprintf(why, why_size, "it is no readable Parquet file");
        return;
    }
    icm__verify_footer_agrees(f->stats, f->ids, r->record_count, lower_of(r), upper_of(r), why,
                              why_size, out);
}

/* Read a footer's statistics; a file that cannot be read as Parquet gives stats NULL (the
 * error cleared; `why`, when not NULL, says why a read failed that was no format error).
 * Returns 0 or ICM_ENOMEM. */
static int read_footer(twins *t, const char *location, footer *out, char *why, size_t why_size)
{
    int64_t size = -1;
    *out = NO_FOOTER;
    t->reads++;
    int rc = icm__parquet_read_stats(t->p->io, location, &out->stats, &size);
    if (rc == ICM_ENOMEM)
        return rc;
    if (rc != 0 && rc != ICM_EINVALID && why != NULL)
        snprintf(why, why_size, "it could not be read: %s", icm_error_last()->message);
    icm_error_clear();
    return 0;
}

/* Whether the file the entry `r` names has the size it records (looked up once). */
static int same_size(twins *t, twin_ref *r, bool *out)
{
    if (!r->sized) {
        icm_file_info info = ICM_FILE_INFO_INIT;
        t->reads++;
        r->sized = true;
        r->actual_size = -1;
        if (icm_fileio_stat(&info, t->p->io, r->location) == 0)
            r->actual_size = info.size_bytes;
        else if (icm_error_last()->code == ICM_ENOMEM)
            return ICM_ENOMEM;
        icm_error_clear();
        if (r->actual_size >= 0 && r->actual_size != r->size_bytes &&
            (r->why = icm__sprintf("it has %lld bytes, the entry records %lld",
                                   (long long)r->actual_size, (long long)r->size_bytes)) == NULL)
            return ICM_ENOMEM;
    }
    /* (a file not found is the presence check's: it refuses the run) */
    *out = r->actual_size < 0 || r->actual_size == r->size_bytes;
    return 0;
}

/* The schemas the entry `r`'s bounds may have been computed under, for files matched by name:
 * its adding snapshot's when the table has it, else every one (first_out, n_out: a range of
 * t->schemas; 0 schemas: none, names match nothing). *certain: the one it was computed under
 * is among them, known only by its adding snapshot's (schema ids say nothing of removed ones:
 * a writer reuses an id, adversary round 19, L1). */
static void schemas_of(const twins *t, const twin_ref *r, size_t *first_out, size_t *n_out,
                       bool *certain)
{
    *first_out = 0;
    *n_out = t->schemas.n;
    *certain = false;
    for (size_t i = 0; r->has_schema && i < t->schemas.n; i++)
        if (t->schemas.items[i].id == r->schema_id) {
            *first_out = i;
            *n_out = 1;
            *certain = true;
            return;
        }
}

/* Whether the Parquet file the entry `r` names fits it under `schema` (index_under; its
 * footer read once; one that cannot be read does not fit, r->why saying why; with
 * by_values, nor one that agrees on its row count alone, no bound compared). Returns 0 or
 * ICM_ENOMEM. */
static int own_fits(twins *t, twin_ref *r, const icm__schema *schema, bool names_only,
                    bool by_values, bool *out)
{
    *out = false;
    char why[160] = "", unread[160] = "";
    footer theirs = NO_FOOTER;
    int rc = 0;
    if (!r->own_read) {
        r->own_read = true;
        rc = read_footer(t, r->location, &theirs, unread, sizeof unread);
        r->own = theirs.stats;
        if (rc == 0 && unread[0] != '\0' && (r->unread = icm__strdup(unread)) == NULL)
            rc = ICM_ENOMEM;
    }
    theirs.stats = r->own;
    if (rc == 0 && theirs.stats != NULL)
        rc = index_under(&theirs, schema, names_only);
    if (rc == 0)
        agrees_as_named(&theirs, r, by_values, why, sizeof why, out);
    icm__verify_footer_ids_free(theirs.ids); /* (the stats stay r's) */
    /* (what cannot be read counts against deleting) */
    if (rc == 0 && !*out && r->why == NULL &&
        (r->why = icm__strdup(r->unread != NULL ? r->unread : why)) == NULL)
        rc = ICM_ENOMEM;
    return rc;
}

/* Keep `orphan`, naming the entry `r` that may stand for it; `rows`: its footer's (-1: not
 * read). */
static int hold(icm_orphan_file *orphan, int64_t size, const twin_ref *r, int64_t rows)
{
    char counted[48] = "";
    if (rows >= 0)
        snprintf(counted, sizeof counted, ", %lld rows, its value ranges", (long long)rows);
    char *message = icm__sprintf(
        "not deleted: snapshot %lld references %s, a file of the table whose entry describes "
        "this file (%lld bytes%s) and not that file (%s): a damaged manifest entry may have "
        "renamed this file's reference onto that file, so the table may still need this one; "
        "kept",
        (long long)r->snapshot_id, r->location, (long long)size, counted,
        r->why != NULL ? r->why : "it does not fit");
    if (message == NULL)
        return ICM_ENOMEM;
    orphan->state = ICM_ORPHAN_KEPT;
    orphan->error_code = ICM_EREFUSED;
    orphan->error_message = message;
    return 0;
}

/* Whether, under `schema` (index_under), the orphan's footer (`mine`) agrees with the entry
 * `r` while the file `r` names does not. Returns 0 or ICM_ENOMEM. */
static int stands_for(twins *t, footer *mine, twin_ref *r, const icm__schema *schema,
                      bool names_only, bool *out)
{
    *out = false;
    char why[160];
    bool describes_orphan = false, fits = true;
    int rc = index_under(mine, schema, names_only);
    if (rc == 0)
        agrees(mine, r, why, sizeof why, &describes_orphan);
    if (rc == 0 && describes_orphan &&
        (rc = own_fits(t, r, schema, names_only, false, &fits)) == 0)
        *out = !fits;
    return rc;
}

/* Whether the entry `r` describes the orphan (`mine`) under some mapping of its bounds' ids
 * onto the orphan's columns (icm__verify_footer_fits_any_mapping) while the file `r` names
 * fits it in no way: by its ids, nor by ids or names under any of the table's schemas.
 * Returns 0 or ICM_ENOMEM. */
static int described_by_any_mapping(twins *t, footer *mine, twin_ref *r, bool *out)
{
    *out = false;
    bool describes = false, fits = false;
    int rc = icm__verify_footer_fits_any_mapping(mine->stats, r->record_count, lower_of(r),
                                                 upper_of(r), &describes);
    /* (read once, r->why saying why when it cannot be; then every way) */
    if (rc == 0 && describes)
        rc = own_fits(t, r, NULL, false, true, &fits);
    char why[160] = "";
    if (rc == 0 && describes && !fits && r->own != NULL)
        rc = icm__verify_footer_fits_some_way(r->own, &t->schemas, r->record_count,
                                              lower_of(r), upper_of(r), why, sizeof why, &fits);
    *out = rc == 0 && describes && !fits;
    return rc;
}

/* Judge one planned orphan against the entries of its size. An entry whose own file has
 * another size than it records describes no file there: the orphan, of the recorded size, is
 * kept on that alone (any format: the sweep's presence check looks for the referenced files,
 * not at their sizes). Otherwise a Parquet orphan's footer is read once, and an
 * entry it fits whose own file does not fit it keeps the orphan: under each schema the entry
 * may have been written with when a file's columns are matched by name, else once. */
static int judge(twins *t, icm_orphan_file *orphan, int64_t size)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->refs[mid].size_bytes < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    const int64_t *slot = size_slot(t, size);
    if (slot != NULL && t->overflow[slot - t->sizes])
        t->incomplete++;
    if (lo == t->n || t->refs[lo].size_bytes != size)
        return 0;
    if (t->reads >= FOOTER_READS_MAX) {
        t->unjudged++;
        return 0;
    }
    footer mine = NO_FOOTER;
    bool read = false, unjudged = false; /* unjudged: a Parquet file the reader refused */
    int rc = 0;
    /* (every entry of its size: the damaged one may sort anywhere, adversary round 14, F2) */
    for (size_t i = lo; rc == 0 && i < t->n && t->refs[i].size_bytes == size; i++) {
        twin_ref *r = &t->refs[i];
        bool sized = true, held = false;
        if ((rc = same_size(t, r, &sized)) != 0)
            break;
        if (!sized) {
            rc = hold(orphan, size, r, -1);
            break;
        }
        if (!r->parquet)
            continue;
        if (!read) {
            read = true;
            if ((rc = read_footer(t, orphan->path, &mine, NULL, 0)) != 0)
                break;
            /* (a Parquet file the reader refuses, past one of its limits, cannot be judged:
             * adversary round 20, D3) */
            if (mine.stats == NULL &&
                (rc = icm__parquet_has_magic(t->p->io, orphan->path, size, &unjudged)) != 0) {
                unjudged = false;
                rc = rc == ICM_ENOMEM ? rc : 0;
                icm_error_clear();
            }
        }
        if (rc == 0 && mine.stats == NULL && unjudged) {
            /* then an entry that fits the file it names stands for nothing else; one that
             * does not may stand for it, unless that file holds the orphan's bytes (a retried
             * task's copy of a file the reader refuses too: round 21, H2) */
            bool fits = true, same = false;
            rc = own_fits(t, r, NULL, false, false, &fits);
            if (rc == 0 && !fits) {
                t->reads++;
                rc = icm__verify_same_bytes(t->p->io, orphan->path, r->location, size, &same);
            }
            if (rc == 0 && !fits && !same) {
                rc = hold(orphan, size, r, -1);
                break;
            }
        }
        if (rc != 0)
            break;
        if (mine.stats == NULL)
            continue; /* (not Parquet: only the sizes speak) */
        /* (the schema matters only to columns matched by name, in either file) */
        bool by_name = icm__verify_footer_names_matter(mine.stats) ||
                       (r->own_read && r->own != NULL && icm__verify_footer_names_matter(r->own));
        if (!by_name) {
            rc = stands_for(t, &mine, r, NULL, false, &held);
            /* (the file it names, read now, may match by name) */
            if (rc == 0 && !held && r->own != NULL && icm__verify_footer_names_matter(r->own))
                by_name = true;
        }
        /* A file with field ids added by a writer that maps its statistics by the table's
         * names (PyIceberg's add_files) has bounds of the column of that name, whatever its
         * ids say: after two columns swapped names, those of the other (adversary round 20,
         * D1). */
        bool renamed = icm__verify_footer_ids_matter(mine.stats);
        if (rc == 0 && (by_name || renamed) && !held &&
            (rc = icm__verify_schemas_load(&t->schemas, t->md)) == 0) {
            size_t first, n;
            bool certain;
            schemas_of(t, r, &first, &n, &certain);
            for (size_t k = first; rc == 0 && !held && k < first + n; k++) {
                const icm__schema *schema = t->schemas.items[k].schema;
                if (by_name)
                    rc = stands_for(t, &mine, r, schema, false, &held);
                if (rc == 0 && !held && renamed)
                    rc = stands_for(t, &mine, r, schema, true, &held);
            }
            if (rc == 0 && n == 0 && by_name) /* (no schema parses: ids alone) */
                rc = stands_for(t, &mine, r, NULL, false, &held);
            /* A file with ids whose adding schema is gone may carry bounds under any names
             * (adversary round 21, D2: the schema add_files used was removed with the expired
             * metadata): it is described when it fits under some mapping of the bounds' ids
             * onto its columns (round 23, F1: by its row count alone, every dead file of that
             * count was), and the entry stands for it when the file it names fits it in no
             * way left (by ids, or by names under a schema left; round 22, D2: by its row
             * count alone, another file of that count passed). */
            if (rc == 0 && !held && renamed && !certain)
                rc = described_by_any_mapping(t, &mine, r, &held);
            /* The schema the entry was written under may be gone (removed with expired
             * metadata: adversary round 18, F2): then the columns matched by name say
             * nothing, and an orphan the entry describes by the rest (its row count, the
             * columns with ids) is kept whatever the file it names holds. */
            if (rc == 0 && !held && !certain && by_name &&
                (rc = index_under(&mine, NULL, false)) == 0) {
                char why[160];
                agrees(&mine, r, why, sizeof why, &held);
                if (held && r->why == NULL &&
                    (r->why = icm__strdup("the schema its entry was written with is gone, so "
                                          "its columns cannot be matched by name")) == NULL)
                    rc = ICM_ENOMEM;
            }
        }
        if (rc == 0 && held) {
            rc = hold(orphan, size, r, mine.stats->schema->num_rows);
            break;
        }
    }
    footer_dispose(&mine);
    return rc;
}

/* The size to judge orphan i by: the listed one, else (a file list's row without one,
 * adversary round 14, F4) the file's own, looked up (-1: unknown). */
static int orphan_size(twins *t, const icm_orphan_file *o, int64_t *out)
{
    *out = o->size_bytes;
    if (*out >= 0)
        return 0;
    icm_file_info info = ICM_FILE_INFO_INIT;
    t->reads++;
    if (icm_fileio_stat(&info, t->p->io, o->path) == 0)
        *out = info.size_bytes;
    else if (icm_error_last()->code == ICM_ENOMEM)
        return ICM_ENOMEM;
    icm_error_clear();
    return 0;
}

static bool size_referenced(const plan *p, int64_t size)
{
    size_t bit = size > 0 ? icm__orphans_size_bit(size) : 0;
    return size > 0 && (p->content_sizes[bit / 64] >> (bit % 64) & 1);
}

int icm__orphans_hold_twins(plan *p, const icm_table_metadata *md)
{
    icm_orphan_result *res = p->r;
    /* (a range planned for its verdict only keeps nothing; and without an entry of a planned
     * orphan's size, nothing to walk for) */
    if (res->orphan_count == 0 || icm__orphan_option_no_verify(p->o) ||
        p->content_sizes == NULL || (p->cross != NULL && p->cross->verdict_only))
        return 0;
    twins t;
    memset(&t, 0, sizeof t);
    t.p = p;
    t.md = md;
    int64_t *sizes = icm__reallocarray(NULL, res->orphan_count, sizeof *sizes);
    t.sizes = icm__reallocarray(NULL, res->orphan_count, sizeof *t.sizes);
    int rc = sizes == NULL || t.sizes == NULL ? ICM_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < res->orphan_count; i++) {
        sizes[i] = -1;
        if (res->orphans[i].state != ICM_ORPHAN_PLANNED)
            continue;
        rc = orphan_size(&t, &res->orphans[i], &sizes[i]);
        if (rc == 0 && size_referenced(p, sizes[i]))
            t.sizes[t.n_sizes++] = sizes[i];
    }
    if (rc == 0 && t.n_sizes > 0) {
        qsort(t.sizes, t.n_sizes, sizeof *t.sizes, by_int64);
        size_t unique = 0;
        for (size_t i = 0; i < t.n_sizes; i++)
            if (unique == 0 || t.sizes[unique - 1] != t.sizes[i])
                t.sizes[unique++] = t.sizes[i];
        t.n_sizes = unique;
        t.taken = icm__calloc(t.n_sizes, sizeof *t.taken);
        t.overflow = icm__calloc(t.n_sizes, sizeof *t.overflow);
        rc = t.taken == NULL || t.overflow == NULL ? ICM_ENOMEM : icm__pathset_new(&t.seen, 0);
    }
    if (rc == 0 && t.n_sizes > 0) {
        icm__reach_options ro = {.read_entries = true, .described = true,
                                 .keep_bounds = keep_bounds, .keep_bounds_ctx = &t};
        icm__reach_report rep;
        rc = icm__reach_walk(p->io, md, &ro, on_reached, &t, &rep);
        icm__reach_report_dispose(&rep);
    }
    if (rc == 0 && t.n > 0) {
        dedupe(&t);
        for (size_t i = 0; rc == 0 && i < res->orphan_count; i++)
            if (res->orphans[i].state == ICM_ORPHAN_PLANNED && sizes[i] > 0)
                rc = judge(&t, &res->orphans[i], sizes[i]);
    }
    if (rc == 0 && t.unjudged > 0)
        rc = icm__orphan_warn(res, "%zu orphans that have the size of a data file the "
                                   "snapshots reference were not compared with its entry (the "
                                   "check for entries damaged onto another file reads at most "
                                   "%d files a run)", t.unjudged, FOOTER_READS_MAX);
    if (rc == 0 && t.incomplete > 0)
        rc = icm__orphan_warn(res, "%zu orphans have the size of more data files the snapshots "
                                   "reference than the check for entries damaged onto another "
                                   "file compares (%d a size, %zu in all): they were compared "
                                   "with those only", t.incomplete, REFS_PER_SIZE, REFS_MAX);
    for (size_t i = 0; i < t.n; i++) {
        icm__free(t.refs[i].location);
        icm__free(t.refs[i].bounds);
        icm__free(t.refs[i].why);
        icm__free(t.refs[i].unread);
        icm__parquet_stats_free(t.refs[i].own);
    }
    icm__verify_schemas_dispose(&t.schemas);
    icm__free(t.refs);
    icm__free(t.sizes);
    icm__free(t.taken);
    icm__free(t.overflow);
    icm__pathset_free(t.seen);
    icm__free(sizes);
    return rc;
}
