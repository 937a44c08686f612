/*
 * maint/verify_twins.c: is a file about to be deleted the twin of a file a retained entry
 * names (verify.h, "twins")?
 *
 * The entries collected record the candidate's size. Each entry also records its file's format
 * and record count, which one damaged path leaves as they were, so the candidate is ruled out
 * as an entry's file when it is not of that format (Parquet: no readable footer; Avro, ORC and
 * Puffin: not their magic bytes) or when its Parquet row count is not the entry's. Otherwise
 * the two files' bytes are compared: one identical file settles it, since whatever entry the
 * candidate's content belonged to, that content is still in the table. Files are compared
 * block by block up to the first difference, so two unrelated files of one size cost a block
 * each. What cannot be read counts against deleting.
 *
 * Only reads storage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maint/verify.h"
#include "parquet/parquet.h"
#include "util/util.h"

#define BLOCK_BYTES ((size_t)1 << 20)
/* Files compared with one candidate at most: a table of many files of one size and row count
 * (small files of a fixed shape) would otherwise cost a comparison with each. One left
 * uncompared keeps the candidate (it may have been that file's), as a difference does. */
#define TWINS_COMPARED_MAX 16

/* The first entry in by_size recording `size_bytes` (r->n when none). */
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

/* What is known of the candidate, each read at most once. */
typedef struct candidate {
    const char *location;
    int64_t size_bytes;
    bool gone;            /* missing: deleting it is a no-op */
    bool rows_read;
    int rows_rc;          /* the footer read's code: 0, ICM_EINVALID (not Parquet), other */
    int64_t rows;         /* rows_rc 0: its row count */
    bool head_read;
    int head_rc;
    uint8_t head[4];
    uint8_t *a, *b;       /* comparison blocks */
} candidate;

typedef enum verdict { NOT_ITS_FILE, SAME_BYTES, DIFFERENT, UNREADABLE } verdict;

static int read_rows(candidate *c, icm_fileio *io)
{
    c->rows_read = true;
    c->rows_rc = icm__parquet_read_num_rows(io, c->location, &c->rows);
    if (c->rows_rc == ICM_ENOMEM)
        return ICM_ENOMEM;
    c->gone = c->rows_rc == ICM_ENOTFOUND;
    icm_error_clear();
    return 0;
}

static int read_head(candidate *c, icm_fileio *io)
{
    c->head_read = true;
    size_t got = 0;
    c->head_rc = icm_fileio_read_range(&got, io, c->location, 0, c->head, sizeof c->head);
    if (c->head_rc == ICM_ENOMEM)
        return ICM_ENOMEM;
    c->gone = c->head_rc == ICM_ENOTFOUND;
    if (c->head_rc == 0 && got < sizeof c->head)
        c->head_rc = ICM_EINVALID; /* (shorter than any magic: not of the format) */
    icm_error_clear();
    return 0;
}

/* The magic bytes a file of this format starts with (NULL: none known). */
static const char *magic_of(icm_file_format format, size_t *len)
{
    switch (format) {
    case ICM_FILE_FORMAT_AVRO: *len = 4; return "Obj\x01";
    case ICM_FILE_FORMAT_ORC: *len = 3; return "ORC";
    case ICM_FILE_FORMAT_PUFFIN: *len = 4; return "PFA1";
    default: *len = 0; return NULL;
    }
}

/* Whether the candidate can be the file `ref` describes, by its format and row count. */
static int could_be(candidate *c, icm_fileio *io, const icm__reached *ref, bool *could)
{
    *could = true;
    int rc = 0;
    size_t magic_len;
    const char *magic = magic_of(ref->file_format, &magic_len);
    if (ref->file_format == ICM_FILE_FORMAT_PARQUET) {
        if (!c->rows_read && (rc = read_rows(c, io)) != 0)
            return rc;
        if (c->rows_rc == ICM_EINVALID) /* not a Parquet file */
            *could = false;
        else if (c->rows_rc == 0 && ref->record_count >= 0)
            *could = c->rows == ref->record_count;
    } else if (magic != NULL) {
        if (!c->head_read && (rc = read_head(c, io)) != 0)
            return rc;
        if (c->head_rc == ICM_EINVALID || (c->head_rc == 0 && memcmp(c->head, magic, magic_len)))
            *could = false;
    }
    return 0;
}

/* Compare the candidate's bytes with the file `other` block by block. */
static int compare_bytes(candidate *c, icm_fileio *io, const char *other, verdict *out)
{
    if (c->a == NULL && ((c->a = icm__malloc(BLOCK_BYTES)) == NULL ||
                         (c->b = icm__malloc(BLOCK_BYTES)) == NULL))
        return ICM_ENOMEM;
    *out = SAME_BYTES;
    for (int64_t at = 0; *out == SAME_BYTES && at < c->size_bytes; at += (int64_t)BLOCK_BYTES) {
        size_t want = c->size_bytes - at < (int64_t)BLOCK_BYTES ? (size_t)(c->size_bytes - at)
                                                                 : BLOCK_BYTES;
        size_t got_a = 0, got_b = 0;
        int rc = icm_fileio_read_range(&got_a, io, c->location, at, c->a, want);
        int rc_b = rc == 0 ? icm_fileio_read_range(&got_b, io, other, at, c->b, want) : 0;
        if (rc == ICM_ENOMEM || rc_b == ICM_ENOMEM)
            return ICM_ENOMEM;
        c->gone = rc == ICM_ENOTFOUND;
        if (rc != 0 || rc_b != 0 || got_a != want || got_b != want)
            *out = UNREADABLE;
        else if (memcmp(c->a, c->b, want) != 0)
            *out = DIFFERENT;
    }
    icm_error_clear();
    return 0;
}

/* Whether `ref` is another group than `first` (format or record count). */
static bool other_group(const icm__reached *first, const icm__reached *ref)
{
    return ref->size_bytes != first->size_bytes || ref->file_format != first->file_format ||
           ref->record_count != first->record_count;
}

static int say_why(const candidate *c, const char *snapshot_word, const icm__reached *ref,
                   verdict v, size_t more, char **why)
{
    char counted[64] = "", others[96] = "";
    if (ref->file_format == ICM_FILE_FORMAT_PARQUET && c->rows_rc == 0 && ref->record_count >= 0)
        snprintf(counted, sizeof counted, " and row count (%lld)", (long long)c->rows);
    if (more > 0)
        snprintf(others, sizeof others, " (as do %zu more files of the table, not compared)",
                 more);
    *why = icm__sprintf("not deleted: %s %lld references %s, a file of the table with this "
                        "file's size (%lld bytes)%s, %s%s: a damaged manifest entry may have "
                        "renamed this file's reference onto that file, so the table may still "
                        "need this one; kept",
                        snapshot_word, (long long)ref->snapshot_id, ref->location,
                        (long long)c->size_bytes, counted,
                        v == DIFFERENT ? "whose bytes differ"
                                       : "and the two could not be compared",
                        others);
    return *why != NULL ? 0 : ICM_ENOMEM;
}

int icm__verify_twin_of(const icm__verify_refs *twins, icm_fileio *io, const char *snapshot_word,
                        const char *location, int64_t size_bytes, char **why)
{
    *why = NULL;
    if (twins->by_size == NULL || size_bytes <= 0)
        return 0; /* (none, or not sealed; an empty file's twin has its bytes) */
    candidate c;
    memset(&c, 0, sizeof c);
    c.location = location;
    c.size_bytes = size_bytes;
    const icm__reached *stands = NULL; /* the first entry whose file it may be */
    verdict held = NOT_ITS_FILE;
    size_t compared = 0, more = 0;
    bool same = false;
    int rc = 0;
    size_t i = first_of_size(twins, size_bytes);
    /* Group by group (one format and record count): a group it cannot be the file of is
     * passed over whole; in the others, files are compared until one has its bytes. */
    while (rc == 0 && !same && !c.gone && i < twins->n &&
           twins->by_size[i]->size_bytes == size_bytes) {
        const icm__reached *first = twins->by_size[i];
        size_t end = i + 1;
        while (end < twins->n && !other_group(first, twins->by_size[end]))
            end++;
        bool could;
        rc = could_be(&c, io, first, &could);
        for (; rc == 0 && could && !c.gone && i < end; i++) {
            const icm__reached *ref = twins->by_size[i];
            if (strcmp(ref->location, c.location) == 0)
                continue;
            if (compared == TWINS_COMPARED_MAX) {
                more++;
                continue;
            }
            verdict v;
            compared++;
            if ((rc = compare_bytes(&c, io, ref->location, &v)) != 0 || c.gone)
                break;
            if (v == SAME_BYTES) {
                same = true;
                break;
            }
            if (stands == NULL) {
                stands = ref;
                held = v;
            }
        }
        i = end;
    }
    if (rc == 0 && !same && !c.gone && stands != NULL)
        rc = say_why(&c, snapshot_word, stands, held, more, why);
    icm__free(c.a);
    icm__free(c.b);
    return rc;
}
