/*
 * manifest/bulk_reader.c: the manifest bulk reader (see bulk_reader.h): the shared schema cache,
 * manifest lists and manifests read ahead, each on the ordered job ring of util/ahead.h, and
 * the decoding of a list read ahead with a row filter.
 */
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

#include "io/prefetch.h"
#include "manifest/bulk_reader.h"
#include "manifest/manifest_internal.h"
#include "util/ahead.h"
#include "util/util.h"

#define LISTS_AHEAD_WINDOW ICM__LISTS_AHEAD_WINDOW
#define MANIFESTS_AHEAD_WINDOW ICM__MANIFESTS_AHEAD_WINDOW

/* A failed read's error details for the calling thread: the saved ones (taken). A job whose
 * details could not be saved failed with ICM_ENOMEM (see save_error): that is its error. */
static void raise_saved(icm__error_saved **saved)
{
    if (*saved != NULL) {
        icm__error_restore(*saved);
        *saved = NULL;
    } else {
        icm__error_oom();
    }
}

/* Keep a failed job's error details for the calling thread. Without memory for them the job
 * fails with ICM_ENOMEM, like any other allocation failure: a single-threaded read would report
 * the details, so a result without them is not the same result. */
static int save_error(icm__error_saved **saved, int rc)
{
    *saved = icm__error_save();
    return *saved != NULL ? rc : ICM_ENOMEM;
}

/* ------------------------------------------------------------------------------------------ */
/* one bulk read                                                                               */

int icm__manifest_bulk_init(icm__manifest_bulk *b, icm_fileio *io, int format_version)
{
    b->io = io;
    b->format_version = format_version;
    return icm__avro_schema_cache_new(&b->schemas);
}

void icm__manifest_bulk_dispose(icm__manifest_bulk *b)
{
    icm__avro_schema_cache_free(b->schemas);
    b->schemas = NULL;
}

void icm__manifest_refs_dispose(icm__manifest_refs *refs)
{
    if (refs == NULL)
        return;
    for (size_t i = 0; i < refs->len; i++)
        icm__free((char *)refs->items[i].mf.manifest_path);
    icm__free(refs->items);
    memset(refs, 0, sizeof *refs);
}

int icm__manifest_bulk_read_list(const icm__manifest_bulk *b, const icm__list_hold *h,
                                 const char *location, const icm__list_row_filter *f,
                                 icm_manifest_file_cb cb, void *payload)
{
    icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    lo.format_version = b->format_version;
    return icm__manifest_list_read_data(h->data, h->len, &h->inflated, location, &lo,
                                        b->schemas, f, cb, payload);
}

/* ------------------------------------------------------------------------------------------ */
/* manifest lists                                                                              */

typedef struct list_slot {
    icm__ahead_list pub;
    char *data;
    icm__avro_inflated inflated;
    icm__error_saved *err;
} list_slot;

struct icm__lists_ahead {
    const icm__manifest_bulk *bulk;
    const char *const *locations;
    list_slot slots[LISTS_AHEAD_WINDOW];
    icm__ahead *ring;
    icm__prefetch *prefetch; /* object-store lists: fetched many at a time; NULL: read here */
};

static void list_slot_clear(list_slot *s)
{
    icm_free(s->data);
    icm__avro_inflated_dispose(&s->inflated);
    icm__free(s->err);
    memset(s, 0, sizeof *s);
}

static void read_list(void *ctx, size_t i, void *slot)
{
    icm__lists_ahead *a = ctx;
    list_slot *s = slot;
    size_t len = 0;
    int rc = a->prefetch != NULL ? icm__prefetch_take(a->prefetch, i, &s->data, &len)
                                 : icm_fileio_read(&s->data, &len, a->bulk->io, a->locations[i]);
    if (rc < 0) {
        rc = save_error(&s->err, rc);
    } else {
        rc = 0;
        icm__avro_inflate_ahead(s->data, len, &s->inflated);
    }
    s->pub = (icm__ahead_list){s->data, len, &s->inflated, rc};
}

int icm__lists_ahead_start(icm__lists_ahead **out, const icm__manifest_bulk *b,
                           const char *const *locations, size_t n)
{
    *out = NULL;
    icm__lists_ahead *a = icm__calloc(1, sizeof *a);
    if (a == NULL)
        return ICM_ENOMEM;
    a->bulk = b;
    a->locations = locations;
    int rc = 0;
    if (n > 0 && icm__prefetch_worthwhile(b->io, locations[0]))
        rc = icm__prefetch_start(&a->prefetch, b->io, locations, n, ICM__PREFETCH_IN_FLIGHT,
                                 ICM__PREFETCH_WINDOW);
    if (rc == 0)
        rc = icm__ahead_start(&a->ring, n, LISTS_AHEAD_WINDOW, a->slots, sizeof a->slots[0],
                              read_list, a);
    if (rc != 0) {
        icm__prefetch_finish(a->prefetch);
        icm__free(a);
        return rc;
    }
    *out = a;
    return 0;
}

const icm__ahead_list *icm__lists_ahead_get(icm__lists_ahead *a, size_t i)
{
    return &((list_slot *)icm__ahead_get(a->ring, i))->pub;
}

void icm__lists_ahead_raise(icm__lists_ahead *a, size_t i)
{
    list_slot *s = &a->slots[i % LISTS_AHEAD_WINDOW];
    if (s->pub.rc != 0)
        raise_saved(&s->err);
}

void icm__lists_ahead_release(icm__lists_ahead *a, size_t i)
{
    list_slot_clear(&a->slots[i % LISTS_AHEAD_WINDOW]);
    icm__ahead_release(a->ring, i);
}

void icm__lists_ahead_take(icm__lists_ahead *a, size_t i, icm__list_hold *out)
{
    list_slot *s = &a->slots[i % LISTS_AHEAD_WINDOW];
    *out = (icm__list_hold){s->data, s->pub.len, s->inflated, 0};
    s->data = NULL;
    memset(&s->inflated, 0, sizeof s->inflated);
    s->pub.data = NULL;
    s->pub.inflated = NULL;
}

/* (Addresses are compared as integers: p may lie in none of the buffers.) */
static bool within(const void *base, size_t n, const uint8_t *p, size_t len)
{
    uintptr_t b = (uintptr_t)base, q = (uintptr_t)p;
    return base != NULL && q >= b && q - b <= n && len <= n - (q - b);
}

bool icm__list_hold_contains(icm__list_hold *h, const uint8_t *p, size_t len)
{
    const icm__avro_inflated *x = &h->inflated;
    if (h->last_block < x->n && within(x->blocks[h->last_block].data,
                                       x->blocks[h->last_block].len, p, len))
        return true;
    for (size_t k = 0; k < x->n; k++) {
        if (within(x->blocks[k].data, x->blocks[k].len, p, len)) {
            h->last_block = k;
            return true;
        }
    }
    return within(h->data, h->len, p, len);
}

void icm__list_hold_dispose(icm__list_hold *h)
{
    if (h == NULL)
        return;
    icm_free(h->data);
    icm__avro_inflated_dispose(&h->inflated);
    memset(h, 0, sizeof *h);
}

void icm__lists_ahead_finish(icm__lists_ahead *a)
{
    if (a == NULL)
        return;
    icm__ahead_finish(a->ring);
    icm__prefetch_finish(a->prefetch);
    for (size_t k = 0; k < LISTS_AHEAD_WINDOW; k++)
        list_slot_clear(&a->slots[k]);
    icm__free(a);
}

/* ------------------------------------------------------------------------------------------ */
/* manifests                                                                                   */

typedef struct manifest_slot {
    icm__ahead_manifest pub;
    const struct icm__manifest_ahead *owner;
    char *locations;
    size_t locations_len;
    size_t locations_cap;
    icm__ahead_entry *entries;
    size_t entries_cap;
    icm__ahead_entry *deleted;
    size_t deleted_cap;
    icm__error_saved *err; /* the decoding thread's last error when pub.rc != 0 */
    size_t by_status[3];   /* entries read, by status (EXISTING, ADDED, DELETED) */
} manifest_slot;

struct icm__manifest_ahead {
    const icm__manifest_bulk *bulk;
    const icm__manifest_ref *refs;
    icm__entry_filter filter;
    const void *filter_ctx;
    bool described;          /* icm__manifest_ahead_start_described */
    icm__keep_bounds_fn keep_bounds; /* icm__manifest_ahead_start_bounded (NULL: none) */
    const void *keep_bounds_ctx;
    manifest_slot slots[MANIFESTS_AHEAD_WINDOW];
    icm__ahead *ring;
    const char **paths;      /* refs' manifest paths, for the prefetcher */
    icm__prefetch *prefetch; /* object-store manifests: fetched many at a time; NULL: read
                                by the decoding thread */
};

/* The record count comes just before the size in `data_file`, so decoding it costs a varint
 * already stepped over: expiry's verification compares it (maint/verify_twins.c). */
static const uint64_t ENTRY_FIELDS = ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
                                     ICM_MANIFEST_FIELD_FILE_SIZE | ICM_MANIFEST_FIELD_RECORD_COUNT;
static const uint64_t DESCRIBED_FIELDS =
    ICM_MANIFEST_FIELD_SNAPSHOT_ID | ICM_MANIFEST_FIELD_SEQUENCE_NUMBERS |
    ICM_MANIFEST_FIELD_METRICS | ICM_MANIFEST_FIELD_PARTITION |
    ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE | ICM_MANIFEST_FIELD_CONTENT_OFFSET;

/* The kind of a live manifest entry. A position-delete file in Puffin format is a deletion
 * vector (spec v3 "Deletion Vectors"). */
static icm__file_kind entry_kind(const icm__entry_view *f)
{
    switch (f->content) {
    case ICM_FILE_CONTENT_POSITION_DELETES:
        return f->file_format == ICM_FILE_FORMAT_PUFFIN ? ICM__FILE_DELETION_VECTOR
                                                        : ICM__FILE_POSITION_DELETES;
    case ICM_FILE_CONTENT_EQUALITY_DELETES:
        return ICM__FILE_EQUALITY_DELETES;
    default:
        return ICM__FILE_DATA;
    }
}

static int grow(void **items, size_t *cap, size_t need, size_t size)
{
    size_t want = *cap ? *cap : 64;
    while (want < need)
        if (icm__mul_overflow(want, 2, &want))
            return icm__error_oom();
    void *grown = icm__reallocarray(*items, want, size);
    if (grown == NULL)
        return ICM_ENOMEM;
    *items = grown;
    *cap = want;
    return 0;
}

/* One zigzag varint of a bounds map, without the decoder's error reporting: a map that does not
 * parse is the caller's to judge (bounds_digest digests its bytes instead). */
static bool bounds_varint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p == end)
            return false;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
            return true;
        }
    }
    return false;
}

void icm__bounds_iter_init(icm__bounds_iter *it, icm_raw map)
{
    it->p = map.data;
    it->end = map.len > 0 ? map.data + map.len : map.data;
    it->left = 0;
    it->bad = false;
    it->done = map.len == 0; /* absent */
}

bool icm__bounds_next(icm__bounds_iter *it, int32_t *key, const uint8_t **value, size_t *len)
{
    while (!it->done && !it->bad && it->left == 0) {
        int64_t count, size_bytes;
        if (!bounds_varint(&it->p, it->end, &count) || count == INT64_MIN ||
            (count < 0 && !bounds_varint(&it->p, it->end, &size_bytes))) {
            it->bad = true;
        } else if (count == 0) {
            it->done = true;
            it->bad = it->p != it->end; /* bytes after the end block */
        } else {
            it->left = count < 0 ? -count : count;
        }
    }
    if (it->done || it->bad)
        return false;
    int64_t k, n;
    if (!bounds_varint(&it->p, it->end, &k) || k < INT32_MIN || k > INT32_MAX ||
        !bounds_varint(&it->p, it->end, &n) || n < 0 || (uint64_t)n > (uint64_t)(it->end - it->p)) {
        it->bad = true;
        return false;
    }
    *key = (int32_t)k;
    *value = it->p;
    *len = (size_t)n;
    it->p += n;
    it->left--;
    return true;
}

/* The digest of one bounds map, independent of the order of its pairs: the sum of one hash per
 * pair. False when the bytes are not the spec's shape. *pairs counts the pairs. */
static bool bounds_map_digest(icm_raw map, uint64_t seed, uint64_t *sum, uint64_t *pairs)
{
    icm__bounds_iter it;
    icm__bounds_iter_init(&it, map);
    int32_t key;
    const uint8_t *value;
    size_t len;
    *sum = 0;
    *pairs = 0;
    while (icm__bounds_next(&it, &key, &value, &len)) {
        *sum += XXH3_64bits_withSeed(value, len,
                                     seed ^ ((uint64_t)(int64_t)key * 0x9E3779B97F4A7C15u));
        ++*pairs;
    }
    return !it.bad;
}

uint64_t icm__bounds_digest(icm_raw lower_bounds, icm_raw upper_bounds)
{
    uint64_t lower, upper, lower_pairs, upper_pairs;
    bool parsed = bounds_map_digest(lower_bounds, 1, &lower, &lower_pairs) &&
                  bounds_map_digest(upper_bounds, 2, &upper, &upper_pairs);
    uint64_t h;
    if (parsed) {
        if (lower_pairs == 0 && upper_pairs == 0)
            return 0;
        uint64_t words[4] = {lower, lower_pairs, upper, upper_pairs};
        h = XXH3_64bits(words, sizeof words);
    } else {
        h = XXH3_64bits_withSeed(upper_bounds.data, upper_bounds.len,
                                 XXH3_64bits(lower_bounds.data, lower_bounds.len));
    }
    return h ? h : 1;
}

/* Decoding callback: keep the live entries, and without a filter the DELETED ones apart (a
 * DELETED entry protects nothing, but says which commit removed the file). For deletion
 * vectors the vector's own file is file_path (referenced_data_file is not a reached file). */
static int on_entry(const icm__entry_view *e, void *payload)
{
    manifest_slot *s = payload;
    s->pub.entries_read++;
    if ((unsigned)e->status < 3)
        s->by_status[e->status]++;
    bool paths_only = s->owner->filter != NULL; /* (nothing else was decoded) */
    bool deleted = e->status == ICM_ENTRY_DELETED;
    if (deleted && paths_only)
        return 0;
    /* The filter judges the path where it lies in the block: a path it drops is not kept. */
    if (paths_only && !s->owner->filter(e->file_path, e->file_path_len, s->owner->filter_ctx))
        return 0;
    size_t len = e->file_path_len + 1;
    /* bounds kept for the verification (bounded by what a 32-bit length says; a map that
     * long is no bound anyone compares) */
    bool keep = !deleted && s->owner->keep_bounds != NULL && e->lower_bounds.len <= UINT32_MAX &&
                e->upper_bounds.len <= UINT32_MAX &&
                s->owner->keep_bounds(e->file_size_in_bytes, s->owner->keep_bounds_ctx);
    if (keep)
        len += e->lower_bounds.len + e->upper_bounds.len;
    /* a deletion vector's data file, for the twin check's Puffin footer evidence (bounded as
     * the bounds are) */
    bool dv = !deleted && s->owner->described && !paths_only &&
              entry_kind(e) == ICM__FILE_DELETION_VECTOR && e->referenced_data_file != NULL &&
              e->referenced_data_file_len < UINT32_MAX;
    if (dv)
        len += e->referenced_data_file_len + 1;
    size_t *n = deleted ? &s->pub.deleted_count : &s->pub.count;
    icm__ahead_entry **items = deleted ? &s->deleted : &s->entries;
    size_t *cap = deleted ? &s->deleted_cap : &s->entries_cap;
    int rc = 0;
    if (s->locations_cap - s->locations_len < len)
        rc = grow((void **)&s->locations, &s->locations_cap, s->locations_len + len, 1);
    if (rc == 0 && *n == *cap)
        rc = grow((void **)items, cap, *n + 1, sizeof **items);
    if (rc != 0)
        return rc;
    /* The path as a C string (the view's is not one). */
    char *path = s->locations + s->locations_len;
    memcpy(path, e->file_path, e->file_path_len);
    path[e->file_path_len] = '\0';
    if (keep && e->lower_bounds.len > 0)
        memcpy(path + e->file_path_len + 1, e->lower_bounds.data, e->lower_bounds.len);
    if (keep && e->upper_bounds.len > 0)
        memcpy(path + e->file_path_len + 1 + e->lower_bounds.len, e->upper_bounds.data,
               e->upper_bounds.len);
    if (dv) {
        char *ref = path + e->file_path_len + 1 +
                    (keep ? e->lower_bounds.len + e->upper_bounds.len : 0);
        memcpy(ref, e->referenced_data_file, e->referenced_data_file_len);
        ref[e->referenced_data_file_len] = '\0';
    }
    (*items)[(*n)++] = (icm__ahead_entry){
        .location_offset = s->locations_len,
        .size_bytes = paths_only ? -1 : e->file_size_in_bytes,
        .kind = paths_only ? ICM__FILE_DATA : entry_kind(e),
        .added = e->status == ICM_ENTRY_ADDED,
        .has_snapshot_id = e->has_snapshot_id,
        .has_file_sequence_number = e->has_file_sequence_number,
        .snapshot_id = e->snapshot_id,
        .file_sequence_number = e->file_sequence_number,
        .record_count = e->record_count,
        .file_format = paths_only ? ICM_FILE_FORMAT_OTHER : e->file_format,
        .bounds = s->owner->described ? icm__bounds_digest(e->lower_bounds, e->upper_bounds) : 0,
        .partition = e->partition,
        .lower_bounds_len = keep ? (uint32_t)e->lower_bounds.len : 0,
        .upper_bounds_len = keep ? (uint32_t)e->upper_bounds.len : 0,
        .has_referenced_data_file = dv,
        .content_offset = s->owner->described ? e->content_offset : -1,
        .content_size_in_bytes = s->owner->described ? e->content_size_in_bytes : -1};
    s->locations_len += len;
    return 0;
}

static void decode_manifest(void *ctx, size_t i, void *slot)
{
    icm__manifest_ahead *a = ctx;
    manifest_slot *s = slot;
    s->owner = a;
    s->pub.count = 0;
    s->pub.deleted_count = 0;
    s->pub.entries_read = 0;
    s->locations_len = 0;
    memset(s->by_status, 0, sizeof s->by_status);
    const icm__manifest_ref *r = &a->refs[i];
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    ro.fields = a->filter != NULL ? ICM_MANIFEST_FIELD_FILE_PATH
                : a->described    ? ENTRY_FIELDS | DESCRIBED_FIELDS
                                  : ENTRY_FIELDS;
    ro.format_version = r->embedded_v1 ? 1 : a->bulk->format_version;
    char *data = NULL;
    size_t len = 0;
    int rc = a->prefetch != NULL ? icm__prefetch_take(a->prefetch, i, &data, &len) : 0;
    if (rc == 0)
        rc = icm__manifest_read_views(a->bulk->io, data, len, &r->mf, r->embedded_v1,
                                      r->snapshot_id, &ro, a->bulk->schemas, on_entry, s, &len);
    /* Every manifest read ahead is judged against its list row: one that disagrees is a
     * failed read (icm__manifest_check_list_row). An embedded v1 manifest has no row. */
    if (rc == 0 && !r->embedded_v1)
        rc = icm__manifest_check_list_row(&r->mf, len, s->by_status);
    s->pub.rc = rc != 0 ? save_error(&s->err, rc) : 0;
    s->pub.locations = s->locations != NULL ? s->locations : "";
    s->pub.entries = s->entries;
    s->pub.deleted = s->deleted;
}

static int ahead_start(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                       const icm__manifest_ref *refs, size_t n, icm__entry_filter filter,
                       const void *filter_ctx, bool described, icm__keep_bounds_fn keep,
                       const void *keep_ctx)
{
    *out = NULL;
    icm__manifest_ahead *a = icm__calloc(1, sizeof *a);
    if (a == NULL)
        return ICM_ENOMEM;
    a->bulk = b;
    a->refs = refs;
    a->filter = filter;
    a->filter_ctx = filter_ctx;
    a->described = described;
    a->keep_bounds = keep;
    a->keep_bounds_ctx = keep_ctx;
    int rc = 0;
    if (n > 1 && icm__prefetch_worthwhile(b->io, refs[0].mf.manifest_path)) {
        a->paths = icm__calloc(n, sizeof *a->paths);
        if (a->paths == NULL)
            rc = ICM_ENOMEM;
        for (size_t k = 0; rc == 0 && k < n; k++)
            a->paths[k] = refs[k].mf.manifest_path;
        if (rc == 0)
            rc = icm__prefetch_start(&a->prefetch, b->io, a->paths, n, ICM__PREFETCH_IN_FLIGHT,
                                     ICM__PREFETCH_WINDOW);
    }
    if (rc == 0)
        rc = icm__ahead_start(&a->ring, n, MANIFESTS_AHEAD_WINDOW, a->slots,
                              sizeof a->slots[0], decode_manifest, a);
    if (rc != 0) {
        icm__prefetch_finish(a->prefetch);
        icm__free(a->paths);
        icm__free(a);
        return rc;
    }
    *out = a;
    return 0;
}

int icm__manifest_ahead_start(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                              const icm__manifest_ref *refs, size_t n, icm__entry_filter filter,
                              const void *filter_ctx)
{
    return ahead_start(out, b, refs, n, filter, filter_ctx, false, NULL, NULL);
}

int icm__manifest_ahead_start_described(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                                        const icm__manifest_ref *refs, size_t n)
{
    return ahead_start(out, b, refs, n, NULL, NULL, true, NULL, NULL);
}

int icm__manifest_ahead_start_bounded(icm__manifest_ahead **out, const icm__manifest_bulk *b,
                                      const icm__manifest_ref *refs, size_t n,
                                      icm__keep_bounds_fn keep, const void *keep_ctx)
{
    return ahead_start(out, b, refs, n, NULL, NULL, true, keep, keep_ctx);
}

const icm__ahead_manifest *icm__manifest_ahead_get(icm__manifest_ahead *a, size_t i)
{
    return &((manifest_slot *)icm__ahead_get(a->ring, i))->pub;
}

void icm__manifest_ahead_raise(icm__manifest_ahead *a, size_t i)
{
    manifest_slot *s = &a->slots[i % MANIFESTS_AHEAD_WINDOW];
    if (s->pub.rc != 0)
        raise_saved(&s->err);
}

void icm__manifest_ahead_release(icm__manifest_ahead *a, size_t i)
{
    manifest_slot *s = &a->slots[i % MANIFESTS_AHEAD_WINDOW];
    icm__free(s->err);
    s->err = NULL;
    icm__ahead_release(a->ring, i);
}

void icm__manifest_ahead_finish(icm__manifest_ahead *a)
{
    if (a == NULL)
        return;
    icm__ahead_finish(a->ring);
    icm__prefetch_finish(a->prefetch);
    icm__free(a->paths);
    for (size_t k = 0; k < MANIFESTS_AHEAD_WINDOW; k++) {
        icm__free(a->slots[k].locations);
        icm__free(a->slots[k].entries);
        icm__free(a->slots[k].deleted);
        icm__free(a->slots[k].err);
    }
    icm__free(a);
}
