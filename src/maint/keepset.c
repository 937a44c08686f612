/*
 * maint/keepset.c: the compact path set and the reachability walk (see keepset.h).
 *
 * Read-only by construction: the only storage calls here are manifest-list and manifest reads.
 *
 * Unreadable files. A walk never stops at a manifest list or manifest it cannot read; it records
 * the failure and goes on, so a caller sees every problem at once. What a failure means is the
 * caller's decision. Expiry's rule (expire_plan.c): a retained manifest list that cannot be read
 * hides which manifests and files it keeps, so no manifest, data file or delete file may be
 * deleted; a retained manifest that cannot be read hides which files it keeps, so no data or
 * delete file may be deleted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include <xxhash.h>

#include "icemaint/manifest.h"
#include "maint/keepset.h"
#include "maint/manifest_ahead.h"
#include "manifest/manifest_internal.h"
#include "util/location.h"
#include "util/strset.h"
#include "util/util.h"

/* ------------------------------------------------------------------------------------------ */
/* path set                                                                                    */

/* Open addressing with linear probing. The table grows when it would be more than 3/4 full,
 * to exactly twice the entries, so it is always at least half full: at most 2 slots of 16
 * bytes, 32 bytes, per path (a power-of-two table could sit at 1/4 full, 64 bytes per path).
 *
 * A hash's home slot is floor(low64 * cap / 2^64) ("fastrange"): no division, and home slots
 * rise with the hash, so the table stays (almost) sorted by hash. Growing then walks the old
 * table in order and fills the new one front to back: sequential memory instead of a cache miss
 * per entry. Tables of several MiB ask for transparent huge pages, which saves a TLB miss on
 * most look-ups (a hint only: the kernel may ignore it). */
struct icm__pathset {
    XXH128_hash_t *slots; /* {0,0} = empty */
    size_t cap;
    size_t count;
};

#define PATHSET_MIN_CAP 64
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/* The top bits of a slot's high word are its marks (icm__pathset_mark_hash); every hash is
 * made with them clear (126 bits of hash are plenty: see keepset.h on collisions), and
 * comparisons leave them out. */
#define MARK_SHIFT 62
#define MARK_MASK ((uint64_t)ICM__PATHSET_MARKS_ALL << MARK_SHIFT)

static bool slot_empty(XXH128_hash_t h)
{
    return h.low64 == 0 && h.high64 == 0;
}

/* A hash as the set stores it: marks clear, and never the all-zero "empty" value (moved to
 * low 1, which can only merge two keys: keep more, never lose one). */
static XXH128_hash_t settle_hash(XXH128_hash_t h)
{
    h.high64 &= ~MARK_MASK;
    if (slot_empty(h))
        h.low64 = 1;
    return h;
}

static bool same_hash(XXH128_hash_t slot, XXH128_hash_t h)
{
    return slot.low64 == h.low64 && (slot.high64 & ~MARK_MASK) == h.high64;
}

/* Hash of the normalised location. The all-zero hash marks empty slots, so a real zero hash is
 * moved to 1: that can only merge two keys (keep more), never lose one. */
static int hash_location(const char *location, XXH128_hash_t *out)
{
    /* Most keys are a run of the location's bytes: hashed where they lie. */
    const char *span;
    size_t span_len;
    if (icm__location_key_span(location, &span, &span_len)) {
        *out = settle_hash(XXH3_128bits(span, span_len));
        return 0;
    }
    /* `/t/./d/f` and `/t/d/f` are one file. Keys of usual lengths are built on the stack: this
     * runs once per manifest entry. */
    char stack[512];
    size_t len = strlen(location);
    char *key = len < sizeof stack ? stack : icm__malloc(len + 1);
    if (key == NULL)
        return ICM_ENOMEM;
    size_t n = icm__location_key_write(location, key);
    *out = settle_hash(XXH3_128bits(key, n));
    if (key != stack)
        icm__free(key);
    return 0;
}

/* floor(h * cap / 2^64): the home slot, in [0, cap). */
static size_t home_slot(uint64_t h, size_t cap)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    return (size_t)(((u128)h * (uint64_t)cap) >> 64);
#else
    uint64_t c = (uint64_t)cap, hl = h & 0xffffffffu, hh = h >> 32;
    uint64_t cl = c & 0xffffffffu, ch = c >> 32;
    uint64_t mid = (hl * cl >> 32) + (hh * cl & 0xffffffffu) + (hl * ch & 0xffffffffu);
    return (size_t)(hh * ch + (hh * cl >> 32) + (hl * ch >> 32) + (mid >> 32));
#endif
}

/* Slot of h: where it is, or the empty slot where it would go. */
static size_t probe(const XXH128_hash_t *slots, size_t cap, XXH128_hash_t h)
{
    size_t i = home_slot(h.low64, cap);
    while (!slot_empty(slots[i]) && !same_hash(slots[i], h))
        i = i + 1 == cap ? 0 : i + 1;
    return i;
}

static bool too_full(size_t count, size_t cap)
{
    return count * 4 > cap * 3;
}

/* Zeroed slots. Big tables are offered huge pages; with the default allocator their pages are
 * fresh and untouched here (icm__calloc), so the advice holds from the first touch on. */
static XXH128_hash_t *alloc_slots(size_t cap)
{
    XXH128_hash_t *slots = icm__calloc(cap, sizeof *slots);
#ifdef MADV_HUGEPAGE
    size_t bytes = cap * sizeof *slots; /* icm__calloc checked the product */
    if (slots != NULL && bytes >= 2 * HUGE_PAGE_BYTES) {
        uintptr_t lo = ((uintptr_t)slots + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
        uintptr_t hi = ((uintptr_t)slots + bytes) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: failure is harmless */
    }
#endif
    return slots;
}

int icm__pathset_new(icm__pathset **out, size_t expected)
{
    *out = NULL;
    size_t cap = PATHSET_MIN_CAP;
    if (expected > cap / 2 && expected < SIZE_MAX / 4)
        cap = expected * 2;
    icm__pathset *s = icm__calloc(1, sizeof *s);
    XXH128_hash_t *slots = s != NULL ? alloc_slots(cap) : NULL;
    if (s == NULL || slots == NULL) {
        icm__free(s);
        icm__free(slots);
        return ICM_ENOMEM;
    }
    s->slots = slots;
    s->cap = cap;
    *out = s;
    return 0;
}

void icm__pathset_free(icm__pathset *set)
{
    if (set == NULL)
        return;
    icm__free(set->slots);
    icm__free(set);
}

/*
 * Grow to twice the entries (load 1/2 after, 3/4 at most before the next growth). The old
 * table is walked in slot order, which is hash order except for the run that wrapped around
 * from the end to the front; re-inserting in that order writes the new table front to back.
 * Where the wrapped run starts (the first empty slot) is where the walk starts, so it is
 * inserted last, at the end where it belongs.
 */
static int grow(icm__pathset *s, size_t count)
{
    size_t cap;
    if (icm__mul_overflow(count, 2, &cap))
        return icm__error_oom();
    XXH128_hash_t *slots = alloc_slots(cap);
    if (slots == NULL)
        return ICM_ENOMEM;
    size_t start = 0;
    while (start < s->cap && !slot_empty(s->slots[start]))
        start++;
    for (size_t k = 0; k < s->cap; k++) {
        size_t i = start + k < s->cap ? start + k : start + k - s->cap;
        if (!slot_empty(s->slots[i]))
            slots[probe(slots, cap, s->slots[i])] = s->slots[i];
    }
    icm__free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

static int add_hash(icm__pathset *set, XXH128_hash_t h, bool *added);

int icm__pathset_reserve(icm__pathset *set, size_t n)
{
    /* grow() sizes for its argument at load 1/2; asking it for 2/3 of n leaves n at load 3/4,
     * the most too_full() allows: at most 21.4 bytes per path once n are in. */
    if (!too_full(n, set->cap))
        return 0;
    return grow(set, n - n / 3);
}

int icm__pathset_add(icm__pathset *set, const char *location, bool *added)
{
    if (added != NULL)
        *added = false;
    XXH128_hash_t h;
    int rc = hash_location(location, &h);
    return rc != 0 ? rc : add_hash(set, h, added);
}

int icm__pathset_contains(const icm__pathset *set, const char *location, bool *out)
{
    *out = true;
    XXH128_hash_t h;
    int rc = hash_location(location, &h);
    if (rc != 0)
        return rc;
    *out = !slot_empty(set->slots[probe(set->slots, set->cap, h)]);
    return 0;
}

/* Hash of a caller-built key, settled as in hash_location. */
static XXH128_hash_t hash_key(const void *key, size_t len)
{
    return settle_hash(XXH3_128bits(key, len));
}

/* Insert h; *added (may be NULL) tells whether it was new. */
static int add_hash(icm__pathset *set, XXH128_hash_t h, bool *added)
{
    if (added != NULL)
        *added = false;
    int rc;
    if (too_full(set->count + 1, set->cap) && (rc = grow(set, set->count + 1)) != 0)
        return rc;
    size_t i = probe(set->slots, set->cap, h);
    if (slot_empty(set->slots[i])) {
        set->slots[i] = h;
        set->count++;
        if (added != NULL)
            *added = true;
    }
    return 0;
}

int icm__pathset_add_key(icm__pathset *set, const void *key, size_t len, bool *added)
{
    return add_hash(set, hash_key(key, len), added);
}

int icm__pathset_location_hash(const char *location, icm__pathset_hash *out)
{
    XXH128_hash_t h;
    int rc = hash_location(location, &h);
    *out = (icm__pathset_hash){h.low64, h.high64};
    return rc;
}

icm__pathset_hash icm__pathset_hash_key(const void *key, size_t len)
{
    XXH128_hash_t h = hash_key(key, len);
    return (icm__pathset_hash){h.low64, h.high64};
}

void icm__pathset_prefetch(const icm__pathset *set, icm__pathset_hash h)
{
#if defined(__GNUC__)
    __builtin_prefetch(&set->slots[home_slot(h.low, set->cap)], 1, 3);
#else
    (void)set;
    (void)h;
#endif
}

int icm__pathset_add_hash(icm__pathset *set, icm__pathset_hash h, bool *added)
{
    XXH128_hash_t x = {h.low, h.high};
    return add_hash(set, settle_hash(x), added);
}

bool icm__pathset_contains_hash(const icm__pathset *set, icm__pathset_hash h)
{
    XXH128_hash_t x = {h.low, h.high};
    return !slot_empty(set->slots[probe(set->slots, set->cap, settle_hash(x))]);
}

bool icm__pathset_mark_hash(icm__pathset *set, icm__pathset_hash h, unsigned marks)
{
    XXH128_hash_t x = {h.low, h.high};
    XXH128_hash_t *slot = &set->slots[probe(set->slots, set->cap, settle_hash(x))];
    if (slot_empty(*slot))
        return false;
    slot->high64 |= (uint64_t)(marks & ICM__PATHSET_MARKS_ALL) << MARK_SHIFT;
    return true;
}

unsigned icm__pathset_marks_hash(const icm__pathset *set, icm__pathset_hash h)
{
    XXH128_hash_t x = {h.low, h.high};
    XXH128_hash_t slot = set->slots[probe(set->slots, set->cap, settle_hash(x))];
    return (unsigned)(slot.high64 >> MARK_SHIFT) & ICM__PATHSET_MARKS_ALL;
}

size_t icm__pathset_count_marks(const icm__pathset *set, unsigned mask, unsigned want)
{
    size_t n = 0;
    for (size_t i = 0; i < set->cap; i++) {
        const XXH128_hash_t *slot = &set->slots[i];
        unsigned marks = (unsigned)(slot->high64 >> MARK_SHIFT) & ICM__PATHSET_MARKS_ALL;
        n += !slot_empty(*slot) && (marks & mask) == want;
    }
    return n;
}

bool icm__pathset_contains_key(const icm__pathset *set, const void *key, size_t len)
{
    return !slot_empty(set->slots[probe(set->slots, set->cap, hash_key(key, len))]);
}

void icm__pathset_clear(icm__pathset *set)
{
    memset(set->slots, 0, set->cap * sizeof *set->slots);
    set->count = 0;
}

size_t icm__pathset_count(const icm__pathset *set)
{
    return set->count;
}

size_t icm__pathset_memory_bytes(const icm__pathset *set)
{
    return set->cap * sizeof(XXH128_hash_t) + sizeof *set;
}

/* ------------------------------------------------------------------------------------------ */
/* report                                                                                      */

void icm__reach_report_dispose(icm__reach_report *report)
{
    if (report == NULL)
        return;
    for (size_t i = 0; i < report->failure_count; i++) {
        icm__free(report->failures[i].location);
        icm__free(report->failures[i].message);
    }
    icm__free(report->failures);
    memset(report, 0, sizeof *report);
}

bool icm__reach_report_has_failure(const icm__reach_report *report, bool lists_only)
{
    for (size_t i = 0; i < report->failure_count; i++)
        if (!lists_only || report->failures[i].is_manifest_list)
            return true;
    return false;
}

/* Record that `location` could not be read, with `message` (the read's last error). */
static int record_failure(icm__reach_report *report, const char *location, bool is_list, int code,
                          const char *message)
{
    icm__reach_failure *grown = icm__reallocarray(report->failures, report->failure_count + 1,
                                                  sizeof *grown);
    if (grown == NULL)
        return ICM_ENOMEM;
    report->failures = grown;
    icm__reach_failure *f = &grown[report->failure_count];
    f->location = icm__strdup(location);
    f->message = icm__strdup(message);
    f->is_manifest_list = is_list;
    f->code = code;
    if (f->location == NULL || f->message == NULL) {
        icm__free(f->location);
        icm__free(f->message);
        return ICM_ENOMEM;
    }
    report->failure_count++;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* walk                                                                                        */

/*
 * A walk runs in two passes. The first decodes the chosen snapshots' manifest lists on this
 * thread, while a second thread reads and inflates the next few lists ahead, and writes down,
 * in order, what the walk reaches and reads: a file reached, a manifest list that could not be
 * read, or "the entries of the next manifest to read". The second pass goes through those
 * notes in order and hands each reached file to the callback, while the manifests whose
 * entries are wanted are decoded ahead on a second thread (manifest_ahead.h). The callback sees
 * exactly the files, in exactly the order, and the report gets exactly the failures, in the
 * order, that reading everything on one thread in a single pass gives. Files are read in a
 * fixed order: the lists in walk order, then the manifests in walk order.
 */
typedef enum note_kind {
    NOTE_REACHED,      /* location was reached as `kind` */
    NOTE_LIST_FAILURE, /* the manifest list `location` could not be read */
    NOTE_ENTRIES       /* the live entries of the next manifest in walk.to_read */
} note_kind;

typedef struct note {
    note_kind what;
    icm__file_kind kind;
    int code;           /* NOTE_LIST_FAILURE */
    int64_t size_bytes;
    int64_t snapshot_id;
    char *location;     /* NOTE_REACHED, NOTE_LIST_FAILURE */
    char *message;      /* NOTE_LIST_FAILURE */
} note;

/*
 * The previous manifest list's rows, in order, as spans of the seen_written arena. Writers list
 * a snapshot's new manifests first and then the previous list's manifests in their order
 * (Java's FastAppend and MergeAppend do), so a row is usually the one after the last row
 * matched: one byte comparison with it, no hashing, tells that the row was seen (a match is a
 * member of the set by construction). Anything else falls back to the set lookup, so a list in
 * any order gives the same answers. Without memory for the spans there is simply no guess.
 *
 * Each span also keeps where its row's bytes are, when the list's writer schema is a cached one
 * and the bytes lie in the list's own buffers (its file bytes and the blocks inflated ahead:
 * icm__list_hold), which are kept until the list after it has been compared with them. Writers
 * copy a kept manifest's row unchanged from list to list, so the expected row is usually byte
 * for byte the one before: under the same schema it is the same row (Avro decoding is a
 * function of the bytes read), so it is claimed with one comparison of its bytes and skipped
 * without decoding any of it. Nothing is copied: a row in a block the reader inflated itself
 * (past the read-ahead budget) simply has no bytes to compare with.
 */
typedef struct row_span {
    size_t off, len;    /* the path in the seen_written arena */
    const uint8_t *raw; /* the row's bytes in the list's held buffers; NULL = none */
    size_t raw_len;
} row_span;

/* A list's buffers, owned, with the writer schema of its rows' bytes. */
typedef struct row_bytes {
    icm__list_hold hold;
    const void *schema; /* the list's writer schema (icm__list_row_filter), NULL = unknown */
} row_bytes;

typedef struct row_order {
    row_span *prev, *cur;
    size_t prev_len, prev_cap, cur_len, cur_cap;
    size_t next;                    /* index into prev of the row expected next */
    row_bytes prev_raw, cur_raw;    /* the buffers holding each list's rows */
    bool open;                      /* cur's last span awaits its row's bytes */
} row_order;

/* A new list begins: its rows are compared with the list just read, whose buffers are kept
 * until the next one begins; `hold` is the new list's (taken; NULL for none). */
static void rows_begin_list(row_order *o, icm__list_hold *hold)
{
    row_span *t = o->prev;
    size_t tcap = o->prev_cap;
    o->prev = o->cur;
    o->prev_cap = o->cur_cap;
    o->prev_len = o->cur_len;
    o->cur = t;
    o->cur_cap = tcap;
    o->cur_len = 0;
    o->next = 0;
    icm__list_hold_dispose(&o->prev_raw.hold);
    o->prev_raw = o->cur_raw;
    memset(&o->cur_raw, 0, sizeof o->cur_raw);
    if (hold != NULL) {
        o->cur_raw.hold = *hold;
        memset(hold, 0, sizeof *hold);
    }
    o->open = false;
}

/* Room for `n` more spans in cur. */
static bool rows_reserve(row_order *o, size_t n)
{
    if (n <= o->cur_cap - o->cur_len)
        return true;
    size_t cap = o->cur_cap ? o->cur_cap : 256;
    while (cap - o->cur_len < n)
        cap *= 2;
    row_span *grown = icm__reallocarray(o->cur, cap, sizeof *grown);
    if (grown == NULL)
        return false;
    o->cur = grown;
    o->cur_cap = cap;
    return true;
}

static void rows_note(row_order *o, size_t off, size_t len)
{
    o->open = false;
    if (!rows_reserve(o, 1))
        return; /* (only the guess for the next list is lost) */
    o->cur[o->cur_len++] = (row_span){off, len, NULL, 0};
    o->open = true;
}

/* Whether [p, p + len) lies in the current list's held buffers. */
static bool rows_held(row_order *o, const uint8_t *p, size_t len)
{
    return icm__list_hold_contains(&o->cur_raw.hold, p, len);
}

/* The bytes of the row just noted (a row claimed or delivered). */
static void rows_note_bytes(row_order *o, const uint8_t *row, size_t len, const void *schema)
{
    if (!o->open)
        return;
    o->open = false;
    row_bytes *rb = &o->cur_raw;
    if (schema == NULL || (rb->schema != NULL && rb->schema != schema))
        return; /* (one list has one schema; never compare bytes across two) */
    if (len == 0 || !rows_held(o, row, len))
        return;
    rb->schema = schema;
    o->cur[o->cur_len - 1].raw = row;
    o->cur[o->cur_len - 1].raw_len = len;
}

/* Whether the row is the previous list's next row, or the one after (a row removed). */
static bool rows_guess(row_order *o, const char *arena, const uint8_t *path, size_t len)
{
    for (size_t k = o->next; k < o->next + 2 && k < o->prev_len; k++) {
        const row_span *r = &o->prev[k];
        if (r->len == len && memcmp(arena + r->off, path, len) == 0) {
            o->next = k + 1;
            rows_note(o, r->off, len);
            return true;
        }
    }
    return false;
}

/* A row claimed by the set, not by a guess: when it is one of the next few rows of the previous
 * list, the guesses go on from there. A list that dropped or moved more than one row before
 * its run of kept rows (a rewritten manifest and the one it replaced, say) is then guessed
 * again from its second row, instead of never. */
#define ROWS_RESYNC_WINDOW 64
static void rows_resync(row_order *o, size_t off)
{
    size_t end = o->prev_len - o->next > ROWS_RESYNC_WINDOW ? o->next + ROWS_RESYNC_WINDOW
                                                              : o->prev_len;
    for (size_t k = o->next; k < end; k++) {
        if (o->prev[k].off == off) {
            o->next = k + 1;
            return;
        }
    }
}

/* How many bytes at `row` are rows byte for byte equal to the previous list's rows from the
 * one expected next (or the one after: a row removed), under the same writer schema; *rows
 * their number (at most max_rows, those left in the block). They are noted as this list's rows,
 * with their bytes where `row` lies in the list's held buffers. 0 when the first is not such a
 * row. */
static size_t rows_guess_bytes(row_order *o, const uint8_t *row, size_t avail, size_t max_rows,
                               const void *schema, size_t *rows)
{
    *rows = 0;
    if (schema != o->prev_raw.schema)
        return 0;
    size_t k = o->next;
    for (; k < o->next + 2 && k < o->prev_len; k++) {
        const row_span *r = &o->prev[k];
        if (r->raw_len > 0 && r->raw_len <= avail && memcmp(r->raw, row, r->raw_len) == 0)
            break;
    }
    if (k >= o->next + 2 || k >= o->prev_len)
        return 0;
    /* The rows after it, while they lie one after another (one block's rows do) and fit:
     * usually all of them are equal too (a list is the one before with new rows first), which
     * one comparison of the whole span tells; else row by row, up to the first that differs. */
    size_t first = k, bytes = o->prev[k].raw_len, span = bytes;
    for (k++; k < o->prev_len && k - first < max_rows; k++) {
        const row_span *r = &o->prev[k];
        if (r->raw_len == 0 || r->raw != o->prev[k - 1].raw + o->prev[k - 1].raw_len ||
            r->raw_len > avail - span)
            break;
        span += r->raw_len;
    }
    size_t last = k; /* rows [first, last) lie one after another and fit */
    if (span > bytes && memcmp(o->prev[first + 1].raw, row + bytes, span - bytes) == 0) {
        bytes = span;
    } else {
        for (k = first + 1; k < last; k++) {
            const row_span *r = &o->prev[k];
            if (memcmp(r->raw, row + bytes, r->raw_len) != 0)
                break;
            bytes += r->raw_len;
        }
    }
    size_t n = k - first;
    if (!rows_reserve(o, n))
        return 0; /* (the rows are read as they are without the guess) */
    row_bytes *cur = &o->cur_raw;
    bool held = (cur->schema == NULL || cur->schema == schema) && rows_held(o, row, bytes);
    const uint8_t *at = row;
    for (size_t j = first; j < k; j++) {
        row_span sp = o->prev[j];
        if (held) {
            sp.raw = at;
            at += sp.raw_len;
        } else {
            sp.raw = NULL;
            sp.raw_len = 0;
        }
        o->cur[o->cur_len++] = sp;
    }
    if (held)
        cur->schema = schema;
    o->open = false;
    o->next = k;
    *rows = n;
    return bytes;
}

static void rows_dispose(row_order *o)
{
    icm__free(o->prev);
    icm__free(o->cur);
    icm__list_hold_dispose(&o->prev_raw.hold);
    icm__list_hold_dispose(&o->cur_raw.hold);
}

typedef struct walk {
    icm_fileio *io;
    const icm_table_metadata *md;
    const icm__reach_options *opts;
    icm__reach_cb cb;
    void *payload;
    icm__reach_report *report;
    /* Each unique manifest is handled once. A long history lists the same manifest in many
     * manifest lists, so the common case is one exact lookup of the path as written; only a
     * new spelling is normalised and looked up by its key (`file:/m` and `/m` are one
     * manifest). Both sets are exact: a hash collision can never skip a manifest. */
    icm__strset seen_written;
    icm__strset seen_keys;
    row_order rows;                  /* guesses seen_written's answer from the list before */
    icm__avro_schema_cache *schemas; /* one writer's schema is parsed once, not per file */
    int format_version;           /* of the table: the fallback for files without a header */
    icm__manifest_refs *collect;  /* NULL, or where unique manifests are remembered */
    int64_t snapshot_id;          /* the snapshot being walked */
    int stop_rc;                  /* a callback's stop value or ENOMEM: ends the walk */
    note *notes;                  /* the first pass's notes, in walk order */
    size_t n_notes, notes_cap;
    icm__manifest_refs to_read;   /* manifests whose entries the second pass reads, in order */
} walk;

/* Hand a reached file to the callback. */
static int deliver(walk *w, const char *location, icm__file_kind kind, int64_t size_bytes)
{
    icm__reached r = {location, kind, size_bytes, w->snapshot_id};
    int rc = w->cb(&r, w->payload);
    if (rc != 0)
        w->stop_rc = rc;
    return rc;
}

static note *add_note(walk *w, note_kind what)
{
    if (w->n_notes == w->notes_cap) {
        size_t cap = w->notes_cap ? w->notes_cap * 2 : 64;
        note *grown = icm__reallocarray(w->notes, cap, sizeof *grown);
        if (grown == NULL) {
            w->stop_rc = ICM_ENOMEM;
            return NULL;
        }
        w->notes = grown;
        w->notes_cap = cap;
    }
    note *n = &w->notes[w->n_notes++];
    memset(n, 0, sizeof *n);
    n->what = what;
    n->snapshot_id = w->snapshot_id;
    return n;
}

/* First pass: note a reached file for the second pass. */
static int emit(walk *w, const char *location, icm__file_kind kind, int64_t size_bytes)
{
    note *n = add_note(w, NOTE_REACHED);
    if (n == NULL || (n->location = icm__strdup(location)) == NULL) {
        w->stop_rc = ICM_ENOMEM;
        return ICM_ENOMEM;
    }
    n->kind = kind;
    n->size_bytes = size_bytes;
    return 0;
}

static void notes_dispose(walk *w)
{
    for (size_t i = 0; i < w->n_notes; i++) {
        icm__free(w->notes[i].location);
        icm__free(w->notes[i].message);
    }
    icm__free(w->notes);
    w->notes = NULL;
    w->n_notes = w->notes_cap = 0;
}

/* What a read's result means for the walk: a stop (already set) or ENOMEM ends it (returns
 * false, *rc the walk's result); 0 needs nothing; any other failure is to be recorded (returns
 * true). */
static bool read_failed(walk *w, int *rc)
{
    if (w->stop_rc != 0) {
        *rc = w->stop_rc;
        return false;
    }
    if (*rc == ICM_ENOMEM)
        w->stop_rc = *rc;
    return *rc != 0 && *rc != ICM_ENOMEM;
}

/* After a manifest read: record a failure with the calling thread's last error. */
static int settle_manifest(walk *w, int rc, const char *location)
{
    if (!read_failed(w, &rc))
        return rc;
    int rrc = record_failure(w->report, location, false, rc, icm_error_last()->message);
    if (rrc != 0)
        w->stop_rc = rrc;
    return rrc;
}

/* After a manifest-list read (first pass): note a failure, to be recorded in its place by the
 * second pass. */
static int settle_list(walk *w, int rc, const char *location)
{
    if (!read_failed(w, &rc))
        return rc;
    note *n = add_note(w, NOTE_LIST_FAILURE);
    if (n == NULL || (n->location = icm__strdup(location)) == NULL ||
        (n->message = icm__strdup(icm_error_last()->message)) == NULL) {
        w->stop_rc = ICM_ENOMEM;
        return ICM_ENOMEM;
    }
    n->code = rc;
    return 0;
}

/* Whether this manifest's entries are to be read. */
static int wants_entries(walk *w, const char *path, bool *out)
{
    *out = w->opts->read_entries;
    if (!*out || w->opts->skip_entries_of == NULL)
        return 0;
    bool skip;
    int rc = icm__pathset_contains(w->opts->skip_entries_of, path, &skip);
    if (rc != 0)
        return rc;
    *out = !skip;
    return 0;
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

/* Append a copy of a manifest's list entry (or, for an embedded v1 manifest, just its path),
 * without the raw spans that point into the reader's buffers. */
static int remember(walk *w, icm__manifest_refs *refs, const icm_manifest_file *mf,
                    const char *path)
{
    if (refs->len == refs->cap) {
        size_t cap = refs->cap ? refs->cap * 2 : 64;
        icm__manifest_ref *grown = icm__reallocarray(refs->items, cap, sizeof *grown);
        if (grown == NULL)
            return ICM_ENOMEM;
        refs->items = grown;
        refs->cap = cap;
    }
    icm__manifest_ref *r = &refs->items[refs->len];
    memset(r, 0, sizeof *r);
    if (mf != NULL)
        r->mf = *mf;
    r->mf.partitions = (icm_raw){NULL, 0};
    r->mf.key_metadata = (icm_raw){NULL, 0};
    char *copy = icm__strdup(path);
    if (copy == NULL)
        return ICM_ENOMEM;
    r->mf.manifest_path = copy;
    r->mf.manifest_path_len = strlen(copy);
    r->embedded_v1 = mf == NULL;
    r->snapshot_id = w->snapshot_id;
    refs->len++;
    return 0;
}

/* Report a manifest once (mf NULL for an embedded v1 manifest) and, on its first sighting,
 * note that its entries are to be read when they are wanted. */
static int sight_manifest(walk *w, const icm_manifest_file *mf, const char *path,
                          int64_t size_bytes)
{
    bool first = false, new_spelling = false, read = false;
    size_t plen = strlen(path), off;
    int rc = icm__strset_put(&w->seen_written, path, plen, &new_spelling, &off);
    if (rc == 0)
        rows_note(&w->rows, off, plen);
    if (rc == 0 && new_spelling) {
        char *key = NULL;
        rc = icm__location_key(path, &key);
        if (rc == 0)
            rc = icm__strset_add(&w->seen_keys, key, strlen(key), &first);
        icm__free(key);
    }
    if (rc == 0 && first && w->collect != NULL)
        rc = remember(w, w->collect, mf, path);
    if (rc == 0 && first)
        rc = emit(w, path, ICM__FILE_MANIFEST, size_bytes);
    if (rc == 0 && first)
        rc = wants_entries(w, path, &read);
    if (rc == 0 && read) {
        rc = remember(w, &w->to_read, mf, path);
        if (rc == 0 && add_note(w, NOTE_ENTRIES) == NULL)
            rc = ICM_ENOMEM;
    }
    if (rc != 0)
        w->stop_rc = rc;
    return rc;
}

static int on_manifest_file(const icm_manifest_file *mf, void *payload)
{
    return sight_manifest(payload, mf, mf->manifest_path, mf->manifest_length);
}

/* Row filter of the manifest-list reads: a path already handled in the same spelling needs no
 * decoding (on_manifest_file would ignore it). */
static bool seen_as_written(const uint8_t *path, size_t len, void *payload)
{
    walk *w = payload;
    if (rows_guess(&w->rows, w->seen_written.arena, path, len))
        return true;
    size_t off;
    if (!icm__strset_lookup(&w->seen_written, path, len, &off))
        return false;
    rows_resync(&w->rows, off);
    rows_note(&w->rows, off, len);
    return true;
}

/* Rows byte for byte those expected from the list before are claimed unread. */
static size_t seen_as_bytes(const uint8_t *row, size_t avail, size_t max_rows,
                            const void *schema, void *payload, size_t *rows)
{
    return rows_guess_bytes(&((walk *)payload)->rows, row, avail, max_rows, schema, rows);
}

static void row_read(const uint8_t *row, size_t len, const void *schema, void *payload)
{
    rows_note_bytes(&((walk *)payload)->rows, row, len, schema);
}

/* Manifest list i of the walk (read ahead by `lists`): its rows, in order. */
static int walk_manifest_list(walk *w, const icm_snapshot *s, icm__lists_ahead *lists, size_t i)
{
    const icm__ahead_list *l = icm__lists_ahead_get(lists, i);
    /* A list read whole has its size in hand (metadata records none for lists). */
    int rc = emit(w, s->manifest_list, ICM__FILE_MANIFEST_LIST,
                  l->rc == 0 && l->len <= INT64_MAX ? (int64_t)l->len : -1);
    if (rc != 0) {
        icm__lists_ahead_release(lists, i);
        return rc;
    }
    icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    lo.format_version = w->format_version;
    icm__list_row_filter f = {seen_as_written, seen_as_bytes, row_read, w};
    rc = l->rc;
    if (rc != 0) {
        rows_begin_list(&w->rows, NULL);
        icm__lists_ahead_raise(lists, i);
    } else {
        /* The list's buffers stay with the walk until the next list has been compared with
         * its rows (row_order). */
        icm__list_hold hold;
        icm__lists_ahead_take(lists, i, &hold);
        rows_begin_list(&w->rows, &hold);
        const icm__list_hold *h = &w->rows.cur_raw.hold;
        rc = icm__manifest_list_read_data(h->data, h->len, &h->inflated, s->manifest_list, &lo,
                                          w->schemas, &f, on_manifest_file, w);
    }
    w->report->manifest_lists_read++;
    rc = settle_list(w, rc, s->manifest_list);
    icm__lists_ahead_release(lists, i);
    return rc;
}

/* v1 snapshots may list their manifests inline instead of in a manifest list. */
static int walk_embedded(walk *w, const icm_snapshot *s)
{
    rows_begin_list(&w->rows, NULL);
    for (size_t k = 0; k < s->manifest_count; k++) {
        int rc = sight_manifest(w, NULL, s->manifests[k], -1);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Second pass, one manifest: its live entries to the callback, then its read failure, if any,
 * to the report (as a single pass reports them: entries decoded before the failure first). */
static int deliver_entries(walk *w, icm__manifest_ahead *ahead, size_t i)
{
    const icm__manifest_ref *r = &w->to_read.items[i];
    const icm__ahead_manifest *m = icm__manifest_ahead_get(ahead, i);
    w->snapshot_id = r->snapshot_id;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < m->count; k++)
        rc = deliver(w, m->locations + m->entries[k].location_offset, m->entries[k].kind,
                     m->entries[k].size_bytes);
    w->report->entries_read += m->entries_read;
    w->report->manifests_read++;
    if (rc == 0 && m->rc != 0)
        icm__manifest_ahead_raise(ahead, i);
    if (rc == 0)
        rc = settle_manifest(w, m->rc, r->mf.manifest_path);
    icm__manifest_ahead_release(ahead, i);
    return rc;
}

/* The live entries the manifest lists announce for these manifests (0 where not given). */
static size_t announced_entries(const icm__manifest_refs *refs)
{
    size_t n = 0;
    for (size_t i = 0; i < refs->len; i++) {
        const icm_manifest_file *mf = &refs->items[i].mf;
        if (mf->has_added_files_count && mf->added_files_count > 0)
            n += (size_t)mf->added_files_count;
        if (mf->has_existing_files_count && mf->existing_files_count > 0)
            n += (size_t)mf->existing_files_count;
        if (n > ((size_t)1 << 40) / 2)
            break; /* (two int32 counts per manifest never overflow from here) */
    }
    return n;
}

/* Second pass: the notes in order, with the manifests decoded ahead. */
static int deliver_notes(walk *w)
{
    icm__manifest_ahead *ahead = NULL;
    int rc = icm__manifest_ahead_start(&ahead, w->io, w->format_version, w->schemas,
                                       w->to_read.items, w->to_read.len, NULL, NULL);
    size_t next = 0;
    for (size_t i = 0; rc == 0 && i < w->n_notes; i++) {
        const note *n = &w->notes[i];
        w->snapshot_id = n->snapshot_id;
        switch (n->what) {
        case NOTE_REACHED:
            rc = deliver(w, n->location, n->kind, n->size_bytes);
            break;
        case NOTE_LIST_FAILURE:
            rc = record_failure(w->report, n->location, true, n->code, n->message);
            break;
        case NOTE_ENTRIES:
            rc = deliver_entries(w, ahead, next++);
            break;
        }
    }
    icm__manifest_ahead_finish(ahead);
    return rc;
}

/* A sorted copy of the chosen ids makes `chosen` cheap for large explicit sets. */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bool chosen_sorted(const int64_t *ids, size_t n, int64_t id)
{
    return ids == NULL || bsearch(&id, ids, n, sizeof *ids, cmp_i64) != NULL;
}

static int walk_statistics(walk *w)
{
    size_t n = icm_table_metadata_statistics_count(w->md);
    for (size_t i = 0; i < n; i++) {
        const icm_statistics_file *f = icm_table_metadata_statistics_at(w->md, i);
        if (!chosen_sorted(w->opts->snapshot_ids, w->opts->snapshot_id_count, f->snapshot_id))
            continue;
        w->snapshot_id = f->snapshot_id;
        int rc = deliver(w, f->path,
                         f->partition_statistics ? ICM__FILE_PARTITION_STATISTICS
                                                 : ICM__FILE_STATISTICS,
                         f->file_size_in_bytes);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icm__reach_walk(icm_fileio *io, const icm_table_metadata *md, const icm__reach_options *opts,
                    icm__reach_cb cb, void *payload, icm__reach_report *report)
{
    return icm__reach_walk_collect(io, md, opts, NULL, cb, payload, report);
}

int icm__reach_walk_collect(icm_fileio *io, const icm_table_metadata *md,
                            const icm__reach_options *opts, icm__manifest_refs *collect,
                            icm__reach_cb cb, void *payload, icm__reach_report *report)
{
    memset(report, 0, sizeof *report);
    int64_t *ids = NULL;
    icm__reach_options local = *opts;
    if (opts->snapshot_ids != NULL) {
        ids = icm__calloc(opts->snapshot_id_count ? opts->snapshot_id_count : 1, sizeof *ids);
        if (ids == NULL)
            return ICM_ENOMEM;
        memcpy(ids, opts->snapshot_ids, opts->snapshot_id_count * sizeof *ids);
        qsort(ids, opts->snapshot_id_count, sizeof *ids, cmp_i64);
        local.snapshot_ids = ids;
    }
    walk w;
    memset(&w, 0, sizeof w);
    w.io = io;
    w.md = md;
    w.opts = &local;
    w.cb = cb;
    w.payload = payload;
    w.report = report;
    w.format_version = icm_table_metadata_format_version(md);
    w.collect = collect;
    int rc = icm__avro_schema_cache_new(&w.schemas);
    /* The chosen snapshots' manifest lists, in walk order, are read ahead. */
    size_t n = icm_table_metadata_snapshot_count(md), n_lists = 0;
    const char **lists = rc == 0 ? icm__calloc(n ? n : 1, sizeof *lists) : NULL;
    if (rc == 0 && lists == NULL)
        rc = ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (s->manifest_list != NULL && chosen_sorted(ids, local.snapshot_id_count, s->snapshot_id))
            lists[n_lists++] = s->manifest_list;
    }
    icm__lists_ahead *ahead = NULL;
    if (rc == 0)
        rc = icm__lists_ahead_start(&ahead, io, lists, n_lists);
    for (size_t i = 0, k = 0; rc == 0 && i < n; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        if (!chosen_sorted(ids, local.snapshot_id_count, s->snapshot_id))
            continue;
        w.snapshot_id = s->snapshot_id;
        rc = s->manifest_list != NULL ? walk_manifest_list(&w, s, ahead, k++)
                                      : walk_embedded(&w, s);
    }
    icm__lists_ahead_finish(ahead);
    icm__free(lists);
    if (rc == 0 && local.expect_entries != NULL)
        local.expect_entries(announced_entries(&w.to_read), payload);
    if (rc == 0)
        rc = deliver_notes(&w);
    if (rc == 0 && local.statistics)
        rc = walk_statistics(&w);
    notes_dispose(&w);
    icm__manifest_refs_dispose(&w.to_read);
    icm__strset_dispose(&w.seen_written);
    icm__strset_dispose(&w.seen_keys);
    rows_dispose(&w.rows);
    icm__avro_schema_cache_free(w.schemas);
    icm__free(ids);
    return rc;
}

int icm__reach_entries(icm_fileio *io, int format_version, const icm__manifest_refs *refs,
                       icm__reach_cb cb, void *payload, icm__reach_report *report)
{
    return icm__reach_entries_filtered(io, format_version, refs, NULL, NULL, cb, payload,
                                       report);
}

int icm__reach_entries_filtered(icm_fileio *io, int format_version,
                                const icm__manifest_refs *refs, icm__entry_filter filter,
                                const void *filter_ctx, icm__reach_cb cb, void *payload,
                                icm__reach_report *report)
{
    memset(report, 0, sizeof *report);
    icm__reach_options none = {NULL, 0, true, NULL, false, NULL};
    walk w;
    memset(&w, 0, sizeof w);
    w.io = io;
    w.opts = &none;
    w.cb = cb;
    w.payload = payload;
    w.report = report;
    w.format_version = format_version;
    w.to_read = *refs; /* borrowed: never disposed here */
    icm__manifest_ahead *ahead = NULL;
    int rc = icm__avro_schema_cache_new(&w.schemas);
    if (rc == 0)
        rc = icm__manifest_ahead_start(&ahead, io, format_version, w.schemas, refs->items,
                                       refs->len, filter, filter_ctx);
    for (size_t i = 0; rc == 0 && i < refs->len; i++)
        rc = deliver_entries(&w, ahead, i);
    icm__manifest_ahead_finish(ahead);
    icm__avro_schema_cache_free(w.schemas);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* keep set                                                                                    */

static int add_to_set(const icm__reached *file, void *payload)
{
    return icm__pathset_add(payload, file->location, NULL);
}

int icm__keepset_build(icm_fileio *io, const icm_table_metadata *md,
                       const icm__reach_options *opts, icm__pathset *set,
                       icm__reach_report *report)
{
    return icm__reach_walk(io, md, opts, add_to_set, set, report);
}

/* ---- the table's own locations and documents ---- */

bool icm__gc_enabled(const icm_table_metadata *md, const char **value)
{
    const char *v = icm_table_metadata_property(md, "gc.enabled");
    if (value != NULL)
        *value = v;
    return v == NULL || strcasecmp(v, "true") == 0;
}

size_t icm__table_roots(const icm_table_metadata *md, const char *out[3])
{
    const char *cand[3] = {icm_table_metadata_location(md),
                           icm_table_metadata_property(md, "write.data.path"),
                           icm_table_metadata_property(md, "write.metadata.path")};
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (cand[i] != NULL && cand[i][0] != '\0')
            out[n++] = cand[i];
    return n;
}

int icm__table_metadata_dirs(const icm_table_metadata *md, const char *md_location,
                             char *out[3], size_t *n)
{
    *n = 0;
    const char *loc = icm_table_metadata_location(md);
    const char *md_path = icm_table_metadata_property(md, "write.metadata.path");
    const char *slash = md_location != NULL ? strrchr(md_location, '/') : NULL;
    bool ok = true;
    if (loc != NULL)
        ok = (out[(*n)++] = icm__location_join(loc, "metadata")) != NULL;
    if (ok && md_path != NULL && md_path[0] != '\0')
        ok = (out[(*n)++] = icm__strdup(md_path)) != NULL;
    if (ok && slash != NULL)
        ok = (out[(*n)++] = icm__strndup(md_location, (size_t)(slash - md_location))) != NULL;
    if (ok)
        return 0;
    for (size_t i = 0; i < *n; i++)
        icm__free(out[i]);
    *n = 0;
    return ICM_ENOMEM;
}

/*
 * A relative metadata-log entry (an older icemaint recorded the table path as typed): relative
 * to a working directory nobody knows now, but every such entry named a metadata file of this
 * table, so its file name in each of the table's metadata folders is kept too. An entry with
 * no file name cannot be placed: ICM_EREFUSED, rather than guess what it keeps.
 */
static int relative_log_entry(const char *entry, char *const *dirs, size_t ndirs,
                              int (*cb)(const char *location, void *payload), void *payload)
{
    const char *name = strrchr(entry, '/') != NULL ? strrchr(entry, '/') + 1 : entry;
    const char *colon = strchr(name, ':'); /* `file:v1.metadata.json` */
    if (name == entry && colon != NULL)
        name = colon + 1;
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EREFUSED, entry,
                              "metadata-log entry is a relative location that names no file, "
                              "so which metadata file it keeps cannot be told; nothing is "
                              "deleted (rewrite the entry as an absolute location)");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ndirs; i++) {
        char *kept = icm__location_join(dirs[i], name);
        rc = kept != NULL ? cb(kept, payload) : ICM_ENOMEM;
        icm__free(kept);
    }
    return rc;
}

int icm__table_metadata_docs(const icm_table_metadata *md, const char *md_location,
                             int (*cb)(const char *location, void *payload), void *payload)
{
    int rc = md_location != NULL ? cb(md_location, payload) : 0;
    const char *file = icm_table_metadata_file(md);
    if (rc == 0 && file != NULL)
        rc = cb(file, payload);
    char *dirs[3];
    size_t ndirs = 0;
    if (rc == 0)
        rc = icm__table_metadata_dirs(md, md_location, dirs, &ndirs);
    /* A relative pointer (a catalog row an older icemaint registered as typed) or file name:
     * kept as a relative log entry is. */
    const char *current[2] = {md_location, file};
    for (size_t i = 0; i < 2; i++)
        if (rc == 0 && current[i] != NULL && !icm__location_is_absolute(current[i]))
            rc = relative_log_entry(current[i], dirs, ndirs, cb, payload);
    size_t nlog = icm_table_metadata_metadata_log_count(md);
    for (size_t i = 0; rc == 0 && i < nlog; i++) {
        const char *entry = icm_table_metadata_metadata_log_at(md, i)->metadata_file;
        rc = cb(entry, payload);
        if (rc == 0 && !icm__location_is_absolute(entry))
            rc = relative_log_entry(entry, dirs, ndirs, cb, payload);
    }
    static const char *const hints[] = {"version-hint.text", "version-hint.txt"};
    for (size_t i = 0; i < ndirs; i++) {
        for (size_t h = 0; rc == 0 && h < 2; h++) {
            char *hint = icm__location_join(dirs[i], hints[h]);
            rc = hint != NULL ? cb(hint, payload) : ICM_ENOMEM;
            icm__free(hint);
        }
        icm__free(dirs[i]);
    }
    return rc;
}

/* ---- extending a keep set with newer metadata ---- */

int icm__refs_seen_init(icm__refs_seen *seen)
{
    seen->lists = seen->manifests = NULL;
    int rc = icm__pathset_new(&seen->lists, 0);
    if (rc == 0)
        rc = icm__pathset_new(&seen->manifests, 0);
    if (rc != 0)
        icm__refs_seen_dispose(seen);
    return rc;
}

void icm__refs_seen_dispose(icm__refs_seen *seen)
{
    icm__pathset_free(seen->lists);
    icm__pathset_free(seen->manifests);
    seen->lists = seen->manifests = NULL;
}

int icm__refs_seen_note(icm__refs_seen *seen, const icm__reached *file)
{
    if (file->kind == ICM__FILE_MANIFEST_LIST)
        return icm__pathset_add(seen->lists, file->location, NULL);
    if (file->kind == ICM__FILE_MANIFEST)
        return icm__pathset_add(seen->manifests, file->location, NULL);
    return 0;
}

int icm__refs_seen_note_list(icm__refs_seen *seen, const icm__reached *file)
{
    if (file->kind == ICM__FILE_MANIFEST_LIST)
        return icm__pathset_add(seen->lists, file->location, NULL);
    return 0;
}

typedef struct extend_walk {
    icm__refs_seen *seen;
    int (*cb)(const char *location, void *payload);
    void *payload;
} extend_walk;

static int on_extended(const icm__reached *file, void *payload)
{
    extend_walk *x = payload;
    int rc = icm__refs_seen_note(x->seen, file);
    return rc != 0 ? rc : x->cb(file->location, x->payload);
}

/* Ids of md's snapshots whose manifest list `seen` does not hold (embedded v1 manifests are
 * always walked: their manifests are looked up one by one). */
static int unseen_snapshots(const icm_table_metadata *md, const icm__refs_seen *seen,
                            int64_t **out, size_t *n)
{
    size_t total = icm_table_metadata_snapshot_count(md);
    *n = 0;
    *out = icm__calloc(total ? total : 1, sizeof **out);
    if (*out == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < total; i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        bool known = false;
        int rc = s->manifest_list != NULL
                     ? icm__pathset_contains(seen->lists, s->manifest_list, &known)
                     : 0;
        if (rc != 0)
            return rc;
        if (!known)
            (*out)[(*n)++] = s->snapshot_id;
    }
    return 0;
}

int icm__reach_extend(icm_fileio *io, const icm_table_metadata *md, const char *md_location,
                      icm__refs_seen *seen, int (*cb)(const char *location, void *payload),
                      void *payload, icm__reach_report *report)
{
    memset(report, 0, sizeof *report);
    int64_t *ids = NULL;
    size_t n_ids = 0;
    int rc = unseen_snapshots(md, seen, &ids, &n_ids);
    if (rc == 0 && n_ids > 0) {
        icm__reach_options ro = {ids, n_ids, true, seen->manifests, false, NULL};
        extend_walk x = {seen, cb, payload};
        rc = icm__reach_walk(io, md, &ro, on_extended, &x, report);
    }
    icm__free(ids);
    size_t ns = icm_table_metadata_statistics_count(md);
    for (size_t i = 0; rc == 0 && i < ns; i++)
        rc = cb(icm_table_metadata_statistics_at(md, i)->path, payload);
    if (rc == 0)
        rc = icm__table_metadata_docs(md, md_location, cb, payload);
    return rc;
}

/* ---- table metadata in a folder (expiry's nested tables, the sweep's enclosing tables) ---- */

bool icm__table_metadata_file_name(const char *location, bool *document)
{
    const char *slash = strrchr(location, '/');
    const char *name = slash != NULL ? slash + 1 : location;
    /* (`.gz.metadata.json` ends like the plain form; `.metadata.json.gz` is Java's legacy
     * name for a gzip'd document with no version hint beside it) */
    bool doc = (icm__str_ends_with(name, ".metadata.json") && strlen(name) > 14) ||
               (icm__str_ends_with(name, ".metadata.json.gz") && strlen(name) > 17);
    if (document != NULL)
        *document = doc;
    return doc || strcmp(name, "version-hint.text") == 0 ||
           strcmp(name, "version-hint.txt") == 0;
}

typedef struct md_search {
    const char *md_dir;
    bool want_document;
    icm__table_md_found *found;
} md_search;

/* Listing callback: note table metadata files directly in the folder (a table's metadata
 * folder holds them there; a file deeper down is another table's, in a folder that merely is
 * named `metadata`, such as a namespace); stop (ICM_EUSER) at the first one, or with
 * want_document at the first metadata document. */
static int on_table_metadata_file(const icm_file_info *f, void *payload)
{
    md_search *s = payload;
    const char *rest;
    if (!icm__location_strip_prefix(f->location, s->md_dir, &rest) || strchr(rest, '/') != NULL)
        return 0;
    bool document;
    if (!icm__table_metadata_file_name(f->location, &document))
        return 0;
    s->found->any = true;
    if (!s->want_document)
        return ICM_EUSER;
    if (!document)
        return 0;
    if ((s->found->document = icm__strdup(f->location)) == NULL)
        return ICM_ENOMEM;
    return ICM_EUSER;
}

int icm__find_table_metadata(icm_fileio *io, const char *md_dir, bool want_document,
                             icm__table_md_found *out)
{
    out->any = false;
    out->document = NULL;
    md_search s = {md_dir, want_document, out};
    int rc = icm_fileio_list_flags(io, md_dir, ICM_LIST_STAT_OPTIONAL, on_table_metadata_file,
                                   &s);
    if (rc == ICM_EUSER)
        return 0;
    if (rc != 0) {
        icm__free(out->document);
        out->document = NULL;
    }
    return rc;
}
