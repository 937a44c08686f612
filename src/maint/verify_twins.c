/*
 * maint/verify_twins.c: is a data or delete file about to be deleted the twin of a file a
 * retained entry names (verify.h, "twins")?
 *
 * The references collected record the planned file's size; those whose entries also agree
 * with the planned file's own entry (file format, bounds, and record count where both know
 * it) may stand for it. They are sorted so that each such group lies together: a group that
 * disagrees is passed over whole. In a group that agrees, the planned file's bytes are compared
 * with each reference's file block by block up to the first difference. Any one whose bytes
 * differ keeps the file: that reference may be the damaged one, and a file of identical bytes
 * elsewhere does not make it whole (adversary round 13, F2). Deleted only when every agreeing
 * reference names a file of the same bytes (the content a reader gets is this file's), or the
 * file is gone. At most TWINS_COMPARED_MAX files are compared for one planned file: one left
 * uncompared keeps it too. What cannot be read counts against deleting.
 *
 * Only reads storage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maint/verify.h"
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

/* Whether `ref` is another group than `first` (size, format, record count, bounds). */
static bool other_group(const icm__reached *first, const icm__reached *ref)
{
    return ref->size_bytes != first->size_bytes || ref->file_format != first->file_format ||
           ref->record_count != first->record_count || ref->bounds != first->bounds ||
           ref->partition.shape != first->partition.shape ||
           ref->partition.values != first->partition.values ||
           ref->added_snapshot_id != first->added_snapshot_id;
}

/* Whether an entry with these facts may describe the planned file (facts NULL: unknown). */
static bool agrees(const icm__reached *ref, const icm__verify_twin_facts *facts)
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

typedef enum verdict { SAME_BYTES, DIFFERENT, UNREADABLE, GONE, NOT_COMPARED } verdict;

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

static int say_why(const char *snapshot_word, const icm__reached *ref, int64_t size_bytes,
                   verdict v, size_t more, char **why)
{
    char counted[64] = "", added[64] = "", others[96] = "";
    if (ref->record_count >= 0)
        snprintf(counted, sizeof counted, ", %lld records", (long long)ref->record_count);
    if (ref->added_snapshot_id != INT64_MIN)
        snprintf(added, sizeof added, ", added by snapshot %lld",
                 (long long)ref->added_snapshot_id);
    if (more > 0)
        snprintf(others, sizeof others, " (as do %zu more files of the table, not compared)",
                 more);
    *why = icm__sprintf("not deleted: %s %lld references %s, a file of the table whose entry "
                        "agrees with this file's (%lld bytes%s%s%s), %s%s: a damaged manifest "
                        "entry may have renamed this file's reference onto that file, so the "
                        "table may still need this one; kept",
                        snapshot_word, (long long)ref->snapshot_id, ref->location,
                        (long long)size_bytes, counted, ref->bounds != 0 ? ", bounds" : "", added,
                        v == DIFFERENT       ? "whose bytes differ"
                        : v == NOT_COMPARED ? "not compared (too many files of that size)"
                                            : "and the two could not be compared",
                        others);
    return *why != NULL ? 0 : ICM_ENOMEM;
}

int icm__verify_twin_of(const icm__verify_refs *twins, icm_fileio *io, const char *snapshot_word,
                        const char *location, int64_t size_bytes,
                        const icm__verify_twin_facts *facts, char **why)
{
    *why = NULL;
    if (twins->by_size == NULL || size_bytes <= 0)
        return 0; /* (none, or not sealed; an empty file's twin has its bytes) */
    uint8_t *a = NULL, *b = NULL;
    const icm__reached *stands = NULL; /* the first reference whose bytes are not this file's */
    verdict held = DIFFERENT;
    size_t compared = 0, more = 0;
    bool gone = false;
    int rc = 0;
    size_t i = first_of_size(twins, size_bytes);
    while (rc == 0 && !gone && i < twins->n && twins->by_size[i]->size_bytes == size_bytes) {
        const icm__reached *first = twins->by_size[i];
        size_t end = i + 1;
        while (end < twins->n && !other_group(first, twins->by_size[end]))
            end++;
        for (; rc == 0 && !gone && agrees(first, facts) && i < end; i++) {
            const icm__reached *ref = twins->by_size[i];
            if (strcmp(ref->location, location) == 0)
                continue;
            verdict v = NOT_COMPARED;
            if (compared == TWINS_COMPARED_MAX) {
                more++;
            } else {
                if (a == NULL && ((a = icm__malloc(BLOCK_BYTES)) == NULL ||
                                  (b = icm__malloc(BLOCK_BYTES)) == NULL)) {
                    rc = ICM_ENOMEM;
                    break;
                }
                compared++;
                if ((rc = compare_bytes(io, location, ref->location, size_bytes, a, b, &v)) != 0)
                    break;
                gone = v == GONE;
            }
            if (!gone && v != SAME_BYTES && stands == NULL) {
                stands = ref;
                held = v;
            }
        }
        i = end;
    }
    icm__free(a);
    icm__free(b);
    if (rc == 0 && !gone && stands != NULL)
        rc = say_why(snapshot_word, stands, size_bytes, held,
                     held == NOT_COMPARED ? more - 1 : more, why);
    return rc;
}
