/*
 * util/strset.h: an exact set of byte strings (internal).
 *
 * For deduplicating by the bytes themselves where a hash collision must never merge two strings:
 * the reachability walk asks "have I handled this manifest already?" once per manifest-list row
 * (millions of times for a long history) and a wrong "yes" would skip a manifest's files. Lookups
 * hash with XXH3-64 and confirm with memcmp; strings are copied into one arena.
 */
#ifndef ICM_UTIL_STRSET_H
#define ICM_UTIL_STRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct icm__strset_slot {
    uint64_t hash;
    size_t off;    /* into arena; SIZE_MAX = empty slot */
    size_t len;
    size_t number; /* 0, 1, ...: the order in which the strings were first added */
} icm__strset_slot;

typedef struct icm__strset {
    icm__strset_slot *slots;
    size_t cap;   /* power of two, or 0 before the first insert */
    size_t count;
    char *arena;
    size_t arena_len, arena_cap;
} icm__strset;

#define ICM__STRSET_INIT {NULL, 0, 0, NULL, 0, 0}

/* Add s[0..len). *added (may be NULL) tells whether it was new. Returns 0 or ICM_ENOMEM (then
 * the set is unchanged). */
int icm__strset_add(icm__strset *set, const void *s, size_t len, bool *added);
/* icm__strset_add that also tells where the string's bytes are in set->arena (*off) and its
 * number (*number, as icm__strset_add_numbered); either may be NULL, both are set whether the
 * string was new or not. */
int icm__strset_put(icm__strset *set, const void *s, size_t len, bool *added, size_t *off,
                    size_t *number);
/* icm__strset_add that also tells the string's number (*number, may be NULL; set whether the
 * string was new or not): strings are numbered 0, 1, 2, ... in the order they were first
 * added, so a caller can keep what it knows about each string in an array beside the set. */
int icm__strset_add_numbered(icm__strset *set, const void *s, size_t len, bool *added,
                             size_t *number);
bool icm__strset_contains(const icm__strset *set, const void *s, size_t len);
/* icm__strset_contains; when true, *off (may be NULL) is where the string's bytes are in
 * set->arena (stable for the set's life: the arena only grows) and *number (may be NULL) its
 * number. */
bool icm__strset_lookup(const icm__strset *set, const void *s, size_t len, size_t *off,
                        size_t *number);
size_t icm__strset_count(const icm__strset *set);
void icm__strset_dispose(icm__strset *set);

#endif /* ICM_UTIL_STRSET_H */
