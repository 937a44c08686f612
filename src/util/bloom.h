/*
 * util/bloom.h: a Bloom filter over 64-bit hashes that grows as it is filled (internal).
 *
 * "May hold" answers are exact for what was added (no false negatives) and wrong for a small
 * share of the rest: a caller uses it to skip work for the great majority of values never
 * added, and confirms a "may hold" another way. A part holds up to its capacity with three bits
 * set a value: the first at 16 bits a value (false positives about 0.5% when full), each next
 * one 4 bits a value more and twice the capacity, so values need not be counted beforehand
 * (icm__bloom_expect sizes the first part) and the false positives of all parts together stay
 * under about 1.5%. Lookups test every part.
 */
#ifndef ICM_UTIL_BLOOM_H
#define ICM_UTIL_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ICM__BLOOM_MAX_PARTS 40

typedef struct icm__bloom_part {
    uint64_t *bits;
    uint64_t mask;      /* bit count - 1 (a power of two) */
    size_t count, capacity;
} icm__bloom_part;

typedef struct icm__bloom {
    icm__bloom_part parts[ICM__BLOOM_MAX_PARTS];
    size_t n_parts;
    size_t first_capacity; /* the first part's; 0: a default */
} icm__bloom;

#define ICM__BLOOM_INIT {{{NULL, 0, 0, 0}}, 0, 0}

/* A well-mixed hash of a 64-bit value (splitmix64's finalizer), for values that are not hashes
 * already (sizes, counts). */
static inline uint64_t icm__bloom_hash_u64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* A hint for the first part: about how many values will be added (before the first add; 0:
 * unknown). */
void icm__bloom_expect(icm__bloom *b, size_t values);
/* Add a hash. Returns 0 or ICM_ENOMEM (then it was not added). */
int icm__bloom_add(icm__bloom *b, uint64_t hash);
/* False: never added. True: added, or (rarely) not. */
bool icm__bloom_may_hold(const icm__bloom *b, uint64_t hash);
/* Bytes held (the parts' bits). */
size_t icm__bloom_memory_bytes(const icm__bloom *b);
void icm__bloom_dispose(icm__bloom *b);

#endif /* ICM_UTIL_BLOOM_H */
