/*
 * maint/pathset.c: the compact path set (pathset.h): 128-bit hashes of locations in one
 * open-addressing table.
 *
 * Pure computation: no storage access.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xxhash.h>

#include "maint/pathset.h"
#include "util/location.h"
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
