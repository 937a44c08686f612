/*
 * maint/verify_twins.c: is a data or delete file about to be deleted the twin of a file a
 * retained entry names (verify.h, "twins")?
 *
 * The references collected record the planned file's size; those whose entries also agree
 * with one of the planned file's own entries (file format, bounds, and record count where
 * both know it) may stand for it, and so may those of an entry written with other metrics
 * (the file added again from its path: adversary round 19, L2) that agree on its format,
 * record count and partition and that the file's own Parquet footer fits (read once, only
 * then). They are sorted so that each such group lies together: a group that disagrees is
 * passed over whole; each group is judged once, its verdict kept for the comparisons. In a
 * group that agrees, the planned file's bytes are compared with each reference's file block
 * by block up to the first difference. Any one whose bytes
 * differ keeps the file: that reference may be the damaged one, and a file of identical bytes
 * elsewhere does not make it whole (adversary round 13, F2). Deleted only when every agreeing
 * reference names a file of the same bytes (the content a reader gets is this file's), or the
 * file is gone. At most TWINS_COMPARED_MAX files are compared for one planned file: one left
 * uncompared keeps it too. What cannot be read counts against deleting.
 *
 * A deletion vector's Puffin file holds many blobs, and its entries say where theirs lies
 * (content_offset, content_size_in_bytes), which data file it applies to and how many rows it
 * deletes: a damaged entry that names another Puffin file of the planned one's size still says
 * so of a blob of the planned file (one damaged field: its path). So a retained Puffin entry
 * stands for a planned Puffin file only when the planned file's footer lists a blob at that
 * offset, of that length, for that data file (by location identity) and of that cardinality
 * (where both say); then the files are compared as any others (adversary round 17, F1: a
 * sibling file holding the same vector bytes at that place for another data file is another
 * file). The footer is trusted to say so only when it lists the blob of the planned file's
 * own (expired) entry: a writer that spells footers otherwise than entries, or a damaged
 * footer, leaves every Puffin entry of its size standing for it (round 17, F2). A footer
 * that cannot be read keeps the file (round 15, F3: a DV replaced by one of its size was kept
 * until the sweep). A file that several references name is compared once.
 *
 * Only reads storage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maint/verify.h"
#include "parquet/parquet.h"
#include "puffin/puffin.h"
#include "spec/schema.h"
#include "util/location_id.h"
#include "util/util.h"

#define BLOCK_BYTES ((size_t)1 << 20)
#define TWINS_COMPARED_MAX 16

/* The first reference in by_size recording `size_bytes` (r->n when none). */
static size_t first_of_size(const icm__verify_refs *r, int64_t size_bytes)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->by_size[mid]->size_bytes < size_bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool icm__verify_refs_have_size(const icm__verify_refs *twins, int64_t size_bytes)
{
    if (twins->by_size == NULL)
        return false;
    size_t i = first_of_size(twins, size_bytes);
    return i < twins->n && twins->by_size[i]->size_bytes == size_bytes;
}

bool icm__verify_facts_agree(const icm__reached *ref, const icm__verify_twin_facts *facts)
{
    if (facts == NULL)
        return true;
    if (ref->file_format != facts->file_format)
        return false;
    /* (a Puffin file's entries each describe one of its blobs, a deletion vector of one data
     * file with its own record count, partition and bounds: only format and size are the
     * file's; adversary round 15, F1, F2) */
    if (facts->file_format == ICM_FILE_FORMAT_PUFFIN)
        return true;
    if (ref->record_count >= 0 && facts->record_count >= 0 &&
        ref->record_count != facts->record_count)
        return false;
    /* (Not the adding snapshot: one file has entries of two commits when it is published
     * from an audit branch or added again after a delete, and the damaged entry may be the
     * other commit's: adversary round 14, F1. So a file replaced by one of its size, count
     * and bounds is held too: round 13, F3, open.) */
    /* (the partition tuple: a damaged path leaves it as it was; two files written by one
     * commit into two partitions are told apart by it: adversary round 14, F5) */
    if (icm__partition_keys_differ(ref->partition, facts->partition))
        return false;
    /* (bounds exactly: entries of one file carry the same metrics, copied from its first
     * entry; one with bounds and one without are two files' entries) */
    return ref->bounds == facts->bounds;
}

typedef enum verdict {
    SAME_BYTES,
    DIFFERENT,
    UNREADABLE,
    GONE,
    NOT_COMPARED,
    NO_FOOTER /* the planned Puffin file's footer cannot be read */
} verdict;

/* Compare the `size_bytes` bytes of `location` and `other` block by block (a, b: blocks).
 * GONE: `location` is missing. Returns 0 or ICM_ENOMEM. */
static int compare_bytes(icm_fileio *io, const char *location, const char *other,
                         int64_t size_bytes, uint8_t *a, uint8_t *b, verdict *out)
{
    *out = SAME_BYTES;
    for (int64_t at = 0; *out == SAME_BYTES && at < size_bytes; at += (int64_t)BLOCK_BYTES) {
        size_t want = size_bytes - at < (int64_t)BLOCK_BYTES ? (size_t)(size_bytes - at)
                                                               : BLOCK_BYTES;
        size_t got_a = 0, got_b = 0;
        int rc = icm_fileio_read_range(&got_a, io, location, at, a, want);
        int rc_b = rc == 0 ? icm_fileio_read_range(&got_b, io, other, at, b, want) : 0;
        if (rc == ICM_ENOMEM || rc_b == ICM_ENOMEM)
            return ICM_ENOMEM;
        if (rc == ICM_ENOTFOUND)
            *out = GONE;
        else if (rc != 0 || rc_b != 0 || got_a != want || got_b != want)
            *out = UNREADABLE;
        else if (memcmp(a, b, want) != 0)
            *out = DIFFERENT;
    }
    icm_error_clear();
    return 0;
}

int icm__verify_same_bytes(icm_fileio *io, const char *a, const char *b, int64_t size_bytes,
                           bool *same)
{
    *same = false;
    uint8_t *x = icm__malloc(BLOCK_BYTES), *y = icm__malloc(BLOCK_BYTES);
    verdict v = DIFFERENT;
    int rc = x != NULL && y != NULL ? compare_bytes(io, a, b, size_bytes, x, y, &v) : ICM_ENOMEM;
    *same = rc == 0 && v == SAME_BYTES;
    icm__free(x);
    icm__free(y);
    return rc;
}

/* The planned Puffin file's footer, read when the first reference names a blob. */
typedef struct planned_footer {
    bool read;
    int rc; /* 0; ICM_ENOTFOUND (the file is gone); another: it could not be read */
    bool trusted; /* it lists the blob of the file's own entry */
    icm__puffin_footer footer;
} planned_footer;

/* Whether the footer lists a blob at `offset`, of `size` bytes, of `records` (cardinality;
 * -1: unknown) for the data file whose digest is `referenced` (0: unknown), where both say.
 * Returns 0 or ICM_ENOMEM. */
static int lists_blob(const icm__puffin_footer *f, int64_t offset, int64_t size,
                      int64_t records, uint64_t referenced, bool *out)
{
    *out = false;
    const icm__puffin_blob *b = icm__puffin_footer_find(f, offset);
    for (; b != NULL && b < f->blobs + f->count && b->offset_bytes == offset; b++) {
        if (b->length_bytes != size ||
            (b->cardinality >= 0 && records >= 0 && b->cardinality != records))
            continue;
        uint64_t theirs = 0;
        int rc = b->referenced_data_file != NULL && referenced != 0
                     ? icm__verify_referenced_digest(b->referenced_data_file, &theirs)
                     : 0;
        if (rc != 0)
            return rc;
        if (theirs == referenced || theirs == 0 || referenced == 0) {
            *out = true;
            return 0;
        }
    }
    return 0;
}

static int say_why(const char *snapshot_word, const icm__reached *ref, int64_t size_bytes,
                   bool blob, bool by_content, verdict v, size_t more, char **why)
{
    char counted[64] = "", added[64] = "", others[96] = "", names[160] = "";
    if (ref->record_count >= 0)
        snprintf(counted, sizeof counted, ", %lld records", (long long)ref->record_count);
    if (ref->added_snapshot_id != INT64_MIN)
        snprintf(added, sizeof added, ", added by snapshot %lld",
                 (long long)ref->added_snapshot_id);
    if (more > 0)
        snprintf(others, sizeof others, " (as do %zu more files of the table, not compared)",
                 more);
    if (blob)
        snprintf(names, sizeof names, " and names a blob this file holds (%lld bytes at %lld)",
                 (long long)ref->content_size_bytes, (long long)ref->content_offset);
    *why = icm__sprintf("not deleted: %s %lld references %s, a file of the table whose entry "
                        "%s (%lld bytes%s%s%s)%s, %s%s: a damaged manifest "
                        "entry may have renamed this file's reference onto that file, so the "
                        "table may still need this one; kept",
                        snapshot_word, (long long)ref->snapshot_id, ref->location,
                        by_content ? "describes this file's content, though unlike this file's "
                                     "own entries (the file may have been added again from its "
                                     "path with other metrics)"
                                   : "agrees with this file's",
                        (long long)size_bytes, counted, ref->bounds != 0 ? ", bounds" : "", added,
                        names,
                        v == DIFFERENT       ? "whose bytes differ"
                        : v == NOT_COMPARED ? "not compared (too many files of that size)"
                        : v == NO_FOOTER    ? "and this file's Puffin footer cannot be read"
                                            : "and the two could not be compared",
                        others);
    return *why != NULL ? 0 : ICM_ENOMEM;
}

/* What the judging of one planned file keeps between its references. */
typedef struct judging {
    icm_fileio *io;
    const char *location;
    int64_t size_bytes;
    const icm__verify_twin_facts *facts; /* n_facts descriptions (0: unknown) */
    size_t n_facts;
    bool puffin; /* the planned file is a deletion vector's Puffin file */
    planned_footer pf;
    /* The planned Parquet file's own footer, read when an entry of another description may
     * describe its content (content_read; stats NULL: it could not be read, content_gone:
     * the file is missing, content_other: it is no Parquet file). */
    bool content_read, content_gone, content_other;
    icm__parquet_stats *stats;
    icm__footer_ids *ids; /* its leaves indexed under ids_schema (fits_under) */
    const icm__schema *ids_schema;
    bool ids_names_only;
    icm__verify_table *table; /* NULL: the schemas are not known */
    uint8_t *a, *b;
    /* the files compared and their verdicts: one file that several references name is
     * compared once (all the blobs of a retained Puffin file name it) */
    const char *compared_location[TWINS_COMPARED_MAX];
    verdict compared_verdict[TWINS_COMPARED_MAX];
    size_t compared, more;
} judging;

/* Read the planned Puffin file's footer, and trust it when it lists its own entry's blob (a
 * writer that spells a footer otherwise than its entries, or a footer damaged, says nothing
 * of which blobs the file holds). Returns 0 or ICM_ENOMEM. */
static int read_planned_footer(judging *j)
{
    j->pf.read = true;
    j->pf.rc = icm__puffin_read_footer(j->io, j->location, j->size_bytes, &j->pf.footer);
    if (j->pf.rc == ICM_ENOMEM)
        return ICM_ENOMEM;
    icm_error_clear();
    const struct icm__verify_own_blob *own = &j->facts[0].own_blob;
    if (j->pf.rc != 0 || own->offset_bytes <= 0 || own->size_bytes <= 0)
        return 0;
    return lists_blob(&j->pf.footer, own->offset_bytes, own->size_bytes, own->records,
                      own->referenced, &j->pf.trusted);
}

/* Judge one reference that agrees: *v as the comparison found (NOT_COMPARED: past the
 * limit), *skip when it cannot stand for the planned file (a Puffin entry naming no blob of
 * it, by a footer trusted), *blob when it names one. Returns 0 or ICM_ENOMEM. */
static int judge(judging *j, const icm__reached *ref, verdict *v, bool *skip, bool *blob)
{
    *v = NOT_COMPARED;
    *skip = *blob = false;
    bool by_blob = j->puffin && ref->content_size_bytes > 0;
    int rc = by_blob && !j->pf.read ? read_planned_footer(j) : 0;
    if (rc != 0)
        return rc;
    if (by_blob && j->pf.rc == ICM_ENOTFOUND) {
        *v = GONE;
        return 0;
    }
    if (by_blob && j->pf.rc != 0) {
        *v = NO_FOOTER;
        return 0;
    }
    if (by_blob && j->pf.trusted) {
        bool listed = false;
        uint64_t referenced = 0;
        if (ref->referenced_data_file != NULL)
            rc = icm__verify_referenced_digest(ref->referenced_data_file, &referenced);
        if (rc == 0)
            rc = lists_blob(&j->pf.footer, ref->content_offset, ref->content_size_bytes,
                            ref->record_count, referenced, &listed);
        if (rc != 0 || !listed) {
            *skip = true;
            return rc;
        }
        *blob = true;
    }
    for (size_t k = 0; k < j->compared; k++)
        if (strcmp(j->compared_location[k], ref->location) == 0) {
            *v = j->compared_verdict[k];
            return 0;
        }
    if (j->compared == TWINS_COMPARED_MAX) {
        j->more++;
        return 0;
    }
    if (j->a == NULL &&
        ((j->a = icm__malloc(BLOCK_BYTES)) == NULL || (j->b = icm__malloc(BLOCK_BYTES)) == NULL))
        return ICM_ENOMEM;
    /* (the whole files, also for a blob: a file that holds the same bytes there but names
     * another data file in its footer is another file, adversary round 17, F1) */
    rc = compare_bytes(j->io, j->location, ref->location, j->size_bytes, j->a, j->b, v);
    j->compared_location[j->compared] = ref->location;
    j->compared_verdict[j->compared++] = *v;
    return rc;
}

/* Whether the planned file's footer (read) fits the entry `ref` with its leaves indexed under
 * `schema` (icm__verify_footer_ids, or names_only: icm__verify_footer_names). Returns 0 or
 * ICM_ENOMEM. */
static int fits_under(judging *j, const icm__reached *ref, const icm__schema *schema,
                      bool names_only, bool *fits)
{
    /* (the index is made again only for another schema or way: many groups of one size are
     * judged under the same) */
    if (j->ids == NULL || j->ids_schema != schema || j->ids_names_only != names_only) {
        icm__verify_footer_ids_free(j->ids);
        j->ids = NULL;
        int rc = names_only ? icm__verify_footer_names(j->stats, schema, &j->ids)
                            : icm__verify_footer_ids(j->stats, schema, &j->ids);
        if (rc != 0)
            return rc;
        j->ids_schema = schema;
        j->ids_names_only = names_only;
    }
    char reason[160];
    icm__verify_footer_agrees(j->stats, j->ids, ref->record_count, ref->lower_bounds,
                              ref->upper_bounds, reason, sizeof reason, fits);
    return 0;
}

/* Whether the file the entry `ref` names fits it in some way the table's schemas leave
 * (icm__verify_footer_fits_some_way; one that cannot be read as Parquet does not). Returns 0
 * or ICM_ENOMEM. */
static int named_fits(judging *j, const icm__reached *ref, bool *out)
{
    *out = false;
    icm__parquet_stats *stats = NULL;
    int64_t size = -1;
    int rc = icm__parquet_read_stats(j->io, ref->location, &stats, &size);
    if (rc == ICM_ENOMEM)
        return rc;
    icm_error_clear();
    rc = 0;
    char reason[160];
    if (stats != NULL)
        rc = icm__verify_footer_fits_some_way(stats, j->table != NULL ? &j->table->schemas : NULL,
                                              ref->record_count, ref->lower_bounds,
                                              ref->upper_bounds, reason, sizeof reason, out);
    icm__parquet_stats_free(stats);
    return rc;
}

/* Whether the planned file's own content fits the entry `ref` (its Parquet footer: the row
 * count and every row group's values within the entry's bounds, columns by field id; one
 * without ids is not compared, so it fits). A file of another format fits (its content is
 * not read), and so does one whose footer could not be read (what cannot be read counts
 * against deleting); one that is no Parquet file (no magic) is no file a Parquet entry
 * describes. *gone: the file is missing. Returns 0 or ICM_ENOMEM. */
static int content_fits(judging *j, const icm__reached *ref, bool *fits, bool *gone)
{
    *fits = true;
    *gone = false;
    if (j->facts[0].file_format != ICM_FILE_FORMAT_PARQUET)
        return 0;
    int rc = 0;
    if (!j->content_read) {
        j->content_read = true;
        int64_t size = -1;
        rc = icm__parquet_read_stats(j->io, j->location, &j->stats, &size);
        if (rc == ICM_ENOMEM)
            return rc;
        j->content_gone = rc == ICM_ENOTFOUND;
        icm_error_clear();
        /* (one the reader refuses is still a Parquet file when its magic is there: past one of
         * the reader's limits, adversary round 20, D3, it cannot be judged) */
        bool parquet = true;
        if (rc == ICM_EINVALID &&
            (rc = icm__parquet_has_magic(j->io, j->location, j->size_bytes, &parquet)) ==
                ICM_ENOMEM)
            return rc;
        icm_error_clear();
        j->content_other = rc == 0 && !parquet;
        rc = 0;
    }
    *gone = j->content_gone;
    *fits = !j->content_other;
    if (j->stats == NULL)
        return 0;
    /* The schema its metrics were computed under: the adding snapshot's, when known. Then a
     * column without a field id is matched by its name; else it is not compared. */
    const struct icm__verify_schema *adder = NULL;
    bool names = icm__verify_footer_names_matter(j->stats),
         ids = icm__verify_footer_ids_matter(j->stats);
    icm__verify_table *t = j->table;
    if (t != NULL && t->md != NULL && (names || ids) &&
        (rc = icm__verify_schemas_load(&t->schemas, t->md)) == 0)
        adder = icm__verify_schemas_of_adder(&t->schemas, t->md, ref->added_snapshot_id);
    if (rc == 0)
        rc = fits_under(j, ref, adder != NULL ? adder->schema : NULL, false, fits);
    /* A writer that adds a file may have mapped its statistics by the table's names, not by
     * its field ids (PyIceberg's add_files: after two columns swapped names, each bound is
     * the other's; adversary round 20, D1): by name under the adding snapshot's schema, else
     * under each of the table's (the one it used may be gone: kept if any says so). */
    if (adder != NULL && ids && !*fits && rc == 0)
        rc = fits_under(j, ref, adder->schema, true, fits);
    for (size_t k = 0; t != NULL && adder == NULL && ids && !*fits && rc == 0 &&
                       k < t->schemas.n;
         k++)
        rc = fits_under(j, ref, t->schemas.items[k].schema, true, fits);
    /* The schema the writer mapped the names by may be gone with its snapshot, removed by an
     * earlier run (adversary round 22, D1): then the file fits when it does under some
     * mapping of the bounds' ids onto its columns (that schema's is one; round 23, F1: by its
     * row count alone, a dead file of that count was held for as long as the entry lived),
     * and the entry stands for it when the file it names does not fit it (by ids, or by
     * names under a schema left), which a healthy entry's file does. */
    if (adder == NULL && ids && !*fits && rc == 0 &&
        (rc = icm__verify_footer_fits_any_mapping(j->stats, ref->record_count,
                                                  ref->lower_bounds, ref->upper_bounds,
                                                  fits)) == 0 &&
        *fits) {
        bool theirs = true;
        rc = named_fits(j, ref, &theirs);
        *fits = rc == 0 && !theirs;
    }
    return rc;
}

/* Whether the group of references whose first is `ref` may stand for the planned file:
 * its entry agrees with one of the file's own (icm__verify_facts_agree), or (*by_content)
 * it may be the entry of the file added again from its path by another commit, under other
 * metrics (none, counts, truncate(N), full: adversary round 19, L2): a description that
 * changes with the metrics then says nothing, so what does not (file format, record count,
 * partition tuple) must agree with one of the file's own and the file's content must fit the
 * entry (content_fits). A tuple with a null value on either side is not compared: a writer
 * that adds a file infers it from the metrics (PyIceberg's add_files records null under
 * metrics none: adversary round 20, D2; round 21, D1: the file's own tuple may hold a null
 * too). An entry added by the commit that added one of the file's own is not the file added
 * again (one commit adds a path once): two files of one commit in two partitions stay apart
 * (round 14, F5; round 21, H1). *gone: the file is missing. Returns 0 or ICM_ENOMEM. */
static int group_agrees(judging *j, const icm__reached *ref, bool *agrees, bool *by_content,
                        bool *gone)
{
    *agrees = j->n_facts == 0;
    *by_content = *gone = false;
    for (size_t k = 0; !*agrees && k < j->n_facts; k++)
        *agrees = icm__verify_facts_agree(ref, &j->facts[k]);
    if (*agrees || j->puffin)
        return 0;
    bool alike = false;
    for (size_t k = 0; k < j->n_facts; k++) {
        const icm__verify_twin_facts *f = &j->facts[k];
        if (ref->added_snapshot_id != INT64_MIN && ref->added_snapshot_id == f->added_snapshot_id)
            return 0; /* (one commit's entry of another description: another file's) */
        alike = alike ||
                (ref->file_format == f->file_format &&
                 (ref->record_count < 0 || f->record_count < 0 ||
                  ref->record_count == f->record_count) &&
                 (!icm__partition_keys_differ(ref->partition, f->partition) ||
                  icm__partition_key_has_null(ref->partition) ||
                  icm__partition_key_has_null(f->partition)));
    }
    if (!alike)
        return 0;
    int rc = content_fits(j, ref, agrees, gone);
    *by_content = *agrees;
    return rc;
}

/* The groups of references that agree (group_agrees), each judged once. */
typedef struct agreeing {
    struct agreeing_group {
        size_t start; /* by_size index */
        bool by_content;
    } *groups;
    size_t n, cap;
    size_t files; /* the distinct files other than the planned one they name, counted up to
                     TWINS_COMPARED_MAX + 1 (a file two groups name counts twice, which can
                     only keep) */
} agreeing;

/* The agreeing groups of the planned file's size (from by_size index i), until more than
 * TWINS_COMPARED_MAX files are counted (a Puffin file's: all, its footer passes over some).
 * Returns 0 or ICM_ENOMEM. */
static int find_agreeing(judging *j, const icm__verify_refs *twins, size_t i, agreeing *a,
                         bool *gone)
{
    int rc = 0;
    while (rc == 0 && !*gone && (j->puffin || a->files <= TWINS_COMPARED_MAX) && i < twins->n &&
           twins->by_size[i]->size_bytes == j->size_bytes) {
        size_t end = twins->group_end[i];
        bool agrees = false, by_content = false;
        rc = group_agrees(j, twins->by_size[i], &agrees, &by_content, gone);
        if (rc == 0 && agrees && a->n == a->cap) {
            size_t cap = a->cap ? 2 * a->cap : 8;
            struct agreeing_group *grown = icm__reallocarray(a->groups, cap, sizeof *grown);
            if (grown == NULL)
                return ICM_ENOMEM;
            a->groups = grown;
            a->cap = cap;
        }
        if (rc == 0 && agrees)
            a->groups[a->n++] = (struct agreeing_group){i, by_content};
        for (size_t k = i; rc == 0 && agrees && k < end; k++) {
            const icm__reached *ref = twins->by_size[k];
            if (strcmp(ref->location, j->location) == 0 ||
                (k > i && strcmp(twins->by_size[k - 1]->location, ref->location) == 0))
                continue;
            a->files++;
        }
        i = end;
    }
    return rc;
}

int icm__verify_twin_of(const icm__verify_refs *twins, icm_fileio *io, icm__verify_table *table,
                        const char *snapshot_word, const char *location, int64_t size_bytes,
                        const icm__verify_twin_facts *facts, size_t n_facts, char **why)
{
    *why = NULL;
    if (twins->by_size == NULL || size_bytes <= 0)
        return 0; /* (none, or not sealed; an empty file's twin has its bytes) */
    judging j;
    memset(&j, 0, sizeof j);
    j.io = io;
    j.table = table;
    j.location = location;
    j.size_bytes = size_bytes;
    j.facts = facts;
    j.n_facts = facts != NULL ? n_facts : 0;
    j.puffin = j.n_facts > 0 && facts[0].file_format == ICM_FILE_FORMAT_PUFFIN;
    const icm__reached *stands = NULL; /* the first reference whose bytes are not this file's */
    verdict held = DIFFERENT;
    bool held_blob = false, held_by_content = false, gone = false;
    agreeing a = {NULL, 0, 0, 0};
    int rc = find_agreeing(&j, twins, first_of_size(twins, size_bytes), &a, &gone);
    if (rc == 0 && !gone && a.files > TWINS_COMPARED_MAX && !j.puffin) {
        /* (more than are compared: kept whatever they hold, unless the file is gone; a Puffin
         * file's references are passed over by its footer, so its count says nothing) */
        icm_file_info info = ICM_FILE_INFO_INIT;
        rc = icm_fileio_stat(&info, io, location) == 0 ? 0 : icm_error_last()->code;
        gone = rc == ICM_ENOTFOUND;
        rc = rc == ICM_ENOMEM ? rc : 0;
        icm_error_clear();
        for (size_t g = 0; stands == NULL && g < a.n; g++) {
            size_t i = a.groups[g].start, end = twins->group_end[i];
            for (; stands == NULL && i < end; i++)
                if (strcmp(twins->by_size[i]->location, location) != 0) {
                    stands = twins->by_size[i];
                    held_by_content = a.groups[g].by_content;
                }
        }
        held = NOT_COMPARED;
        j.more = 1; /* (the count stopped past the limit: not said) */
        a.n = 0; /* (nothing to compare) */
    }
    for (size_t g = 0; rc == 0 && !gone && g < a.n; g++) {
        size_t i = a.groups[g].start, end = twins->group_end[i];
        bool by_content = a.groups[g].by_content;
        for (; rc == 0 && !gone && i < end; i++) {
            const icm__reached *ref = twins->by_size[i];
            if (strcmp(ref->location, location) == 0)
                continue;
            verdict v;
            bool skip, blob;
            if ((rc = judge(&j, ref, &v, &skip, &blob)) != 0 || skip)
                continue;
            gone = v == GONE;
            if (!gone && v != SAME_BYTES && stands == NULL) {
                stands = ref;
                held = v;
                held_blob = blob;
                held_by_content = by_content;
            }
        }
    }
    icm__free(a.groups);
    icm__free(j.a);
    icm__free(j.b);
    icm__puffin_footer_dispose(&j.pf.footer);
    icm__parquet_stats_free(j.stats);
    icm__verify_footer_ids_free(j.ids);
    if (rc == 0 && !gone && stands != NULL)
        rc = say_why(snapshot_word, stands, size_bytes, held_blob, held_by_content, held,
                     held == NOT_COMPARED ? j.more - 1 : j.more, why);
    return rc;
}
