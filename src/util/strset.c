/*
 * util/strset.c: exact byte-string set (see strset.h). Open addressing, linear probing, table
 * at most half full; a slot keeps the full 64-bit hash so most mismatches never touch the arena.
 */
#include <stdint.h>
#include <string.h>

#include <xxhash.h>

#include "util/strset.h"
#include "util/util.h"

#define STRSET_MIN_CAP 64

static size_t find(const icm__strset *set, const void *s, size_t len, uint64_t h)
{
    size_t mask = set->cap - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        const icm__strset_slot *slot = &set->slots[i];
        if (slot->off == SIZE_MAX ||
            (slot->hash == h && slot->len == len &&
             (len == 0 || memcmp(set->arena + slot->off, s, len) == 0)))
            return i;
        i = (i + 1) & mask;
    }
}

static int rehash(icm__strset *set, size_t cap)
{
    icm__strset_slot *slots = icm__reallocarray(NULL, cap, sizeof *slots);
    if (slots == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < cap; i++)
        slots[i].off = SIZE_MAX;
    icm__strset_slot *old = set->slots;
    size_t old_cap = set->cap;
    set->slots = slots;
    set->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].off == SIZE_MAX)
            continue;
        size_t j = (size_t)old[i].hash & (cap - 1);
        while (slots[j].off != SIZE_MAX)
            j = (j + 1) & (cap - 1);
        slots[j] = old[i];
    }
    icm__free(old);
    return 0;
}

static int arena_reserve(icm__strset *set, size_t len)
{
    if (set->arena_cap - set->arena_len >= len)
        return 0;
    size_t want = set->arena_cap ? set->arena_cap : 4096;
    while (want - set->arena_len < len) {
        if (want > SIZE_MAX / 2)
            return icm__error_oom();
        want *= 2;
    }
    char *grown = icm__realloc(set->arena, want);
    if (grown == NULL)
        return ICM_ENOMEM;
    set->arena = grown;
    set->arena_cap = want;
    return 0;
}

/* Find or add s[0..len); *slot_out is its slot (valid until the next insert). */
static int insert(icm__strset *set, const void *s, size_t len, bool *added,
                  const icm__strset_slot **slot_out)
{
    if (added != NULL)
        *added = false;
    uint64_t h = XXH3_64bits(s, len);
    if (set->cap != 0) {
        const icm__strset_slot *hit = &set->slots[find(set, s, len, h)];
        if (hit->off != SIZE_MAX) {
            *slot_out = hit;
            return 0;
        }
    }
    int rc = 0;
    if ((set->count + 1) * 2 > set->cap) {
        if (set->cap > SIZE_MAX / 2 / sizeof *set->slots)
            return icm__error_oom();
        rc = rehash(set, set->cap ? set->cap * 2 : STRSET_MIN_CAP);
    }
    if (rc == 0)
        rc = arena_reserve(set, len);
    if (rc != 0)
        return rc;
    if (len != 0)
        memcpy(set->arena + set->arena_len, s, len);
    icm__strset_slot *slot = &set->slots[find(set, s, len, h)];
    *slot = (icm__strset_slot){h, set->arena_len, len, set->count};
    *slot_out = slot;
    set->arena_len += len;
    set->count++;
    if (added != NULL)
        *added = true;
    return 0;
}

int icm__strset_add(icm__strset *set, const void *s, size_t len, bool *added)
{
    return icm__strset_put(set, s, len, added, NULL, NULL);
}

int icm__strset_put(icm__strset *set, const void *s, size_t len, bool *added, size_t *off,
                    size_t *number)
{
    const icm__strset_slot *slot = NULL;
    int rc = insert(set, s, len, added, &slot);
    if (rc != 0 || slot == NULL)
        return rc != 0 ? rc : ICM_ENOMEM; /* (insert sets slot whenever it returns 0) */
    if (off != NULL)
        *off = slot->off;
    if (number != NULL)
        *number = slot->number;
    return 0;
}

int icm__strset_add_numbered(icm__strset *set, const void *s, size_t len, bool *added,
                             size_t *number)
{
    return icm__strset_put(set, s, len, added, NULL, number);
}

bool icm__strset_lookup(const icm__strset *set, const void *s, size_t len, size_t *off,
                        size_t *number)
{
    if (set->cap == 0)
        return false;
    const icm__strset_slot *slot = &set->slots[find(set, s, len, XXH3_64bits(s, len))];
    if (off != NULL)
        *off = slot->off;
    if (number != NULL)
        *number = slot->number;
    return slot->off != SIZE_MAX;
}

bool icm__strset_contains(const icm__strset *set, const void *s, size_t len)
{
    return icm__strset_lookup(set, s, len, NULL, NULL);
}

size_t icm__strset_count(const icm__strset *set)
{
    return set->count;
}

void icm__strset_dispose(icm__strset *set)
{
    icm__free(set->slots);
    icm__free(set->arena);
    *set = (icm__strset)ICM__STRSET_INIT;
}
