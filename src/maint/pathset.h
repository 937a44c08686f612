/*
 * maint/pathset.h: a compact set of locations, for the keep set and the orphan sweep's R
 * (internal).
 *
 * A location is keyed by the one location identity (icm__location_key, util/location_id.h:
 * `/p`, `file:/p`, `file:///p` and `/q/../p` are one key; object-store keys are exact bytes) and
 * stored as its 128-bit XXH3 hash (126 bits of it: two bits of the slot hold the key's
 * marks) in an open-addressing table that grows to twice its entries when 3/4 full, so it is
 * never less than half full: a referenced file costs at most 32 bytes however long its path.
 * Two different paths with the same hash are treated as the same file: the set then says
 * "referenced" for a file that is not, which can only make a caller KEEP a file, never delete
 * one. With 2^126 hashes that is not expected to happen in the life of the universe.
 */
#ifndef ICM_MAINT_PATHSET_H
#define ICM_MAINT_PATHSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- compact path set ---- */

typedef struct icm__pathset icm__pathset;

/* New empty set sized for about `expected` paths (0 = small). Returns 0 or ICM_ENOMEM. */
int icm__pathset_new(icm__pathset **out, size_t expected);
void icm__pathset_free(icm__pathset *set);
/* Room for `n` paths in all, so adding up to n grows nothing. Returns 0 or ICM_ENOMEM (the set
 * is unchanged). */
int icm__pathset_reserve(icm__pathset *set, size_t n);
/* Add a location. *added (may be NULL) tells whether it was new. Returns 0 or ICM_ENOMEM. */
int icm__pathset_add(icm__pathset *set, const char *location, bool *added);
/* Whether the set holds `location`. Returns 0 or ICM_ENOMEM (then *out is true: a caller that
 * ignores the error still errs on the side of keeping the file). */
int icm__pathset_contains(const icm__pathset *set, const char *location, bool *out);
size_t icm__pathset_count(const icm__pathset *set);
/* Empty the set, keeping its table (memory already in use is used again). */
void icm__pathset_clear(icm__pathset *set);
/* Bytes held by the table (for measurements). */
size_t icm__pathset_memory_bytes(const icm__pathset *set);
/* Raw keys: the same set, but the caller's bytes are hashed as they are (no normalisation).
 * For callers that build their own canonical keys (the orphan sweep keys a path by its origin
 * and path); do not mix with location keys in one set. Returns 0 or ICM_ENOMEM. */
int icm__pathset_add_key(icm__pathset *set, const void *key, size_t len, bool *added);
bool icm__pathset_contains_key(const icm__pathset *set, const void *key, size_t len);
/* A raw key's hash, for a caller that hashes now and adds a little later: a big set's memory
 * is far away, so asking for the slot early (icm__pathset_prefetch) and adding a few keys later
 * (icm__pathset_add_hash) hides the wait. The same set as icm__pathset_add_key. */
typedef struct icm__pathset_hash {
    uint64_t low, high;
} icm__pathset_hash;
icm__pathset_hash icm__pathset_hash_key(const void *key, size_t len);
/* A location's hash as icm__pathset_add and _contains use it (the hash of its
 * icm__location_key), for a caller that looks one location up in several sets: key it once.
 * Returns 0 or ICM_ENOMEM. */
int icm__pathset_location_hash(const char *location, icm__pathset_hash *out);
void icm__pathset_prefetch(const icm__pathset *set, icm__pathset_hash h);
/* Returns 0 or ICM_ENOMEM; *added (may be NULL) tells whether it was new. */
int icm__pathset_add_hash(icm__pathset *set, icm__pathset_hash h, bool *added);
bool icm__pathset_contains_hash(const icm__pathset *set, icm__pathset_hash h);
/* Marks: two bits per key a caller may set and read (they travel with the key when the set
 * grows; a new key has none). The orphan sweep marks which referenced files it expects the
 * listing to show and which the listing showed, so one pass over the set afterwards counts
 * the files it did not show. icm__pathset_mark_hash ORs `marks` into h's slot and tells
 * whether h is in the set; icm__pathset_marks_hash gives h's marks (0 when absent);
 * icm__pathset_count_marks counts the keys whose marks, masked with `mask`, equal `want`. */
#define ICM__PATHSET_MARK_A 1u
#define ICM__PATHSET_MARK_B 2u
#define ICM__PATHSET_MARKS_ALL 3u
bool icm__pathset_mark_hash(icm__pathset *set, icm__pathset_hash h, unsigned marks);
unsigned icm__pathset_marks_hash(const icm__pathset *set, icm__pathset_hash h);
size_t icm__pathset_count_marks(const icm__pathset *set, unsigned mask, unsigned want);

#endif /* ICM_MAINT_PATHSET_H */
