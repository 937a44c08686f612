/*
 * util/bloom.c: a growing Bloom filter over 64-bit hashes (bloom.h).
 *
 * The three bits of a value come from its hash by double hashing (Kirsch and Mitzenmacher,
 * "Less hashing, same performance", 2006): h1 + i * h2, with h2 the hash's halves swapped and
 * made odd, so the hash should be well mixed (XXH3 of the value).
 */
#include <string.h>

#include "util/bloom.h"
#include "util/util.h"

#define BITS_PER_VALUE 16
#define PROBES 3
#define DEFAULT_CAPACITY ((size_t)1 << 12)
#define MAX_BITS ((uint64_t)1 << 40)

void icm__bloom_expect(icm__bloom *b, size_t values)
{
    if (b->n_parts == 0)
        b->first_capacity = values;
}

static int add_part(icm__bloom *b)
{
    if (b->n_parts == ICM__BLOOM_MAX_PARTS)
        return icm__error_oom();
    size_t capacity = b->n_parts > 0 ? 2 * b->parts[b->n_parts - 1].capacity
                      : b->first_capacity > 0 ? b->first_capacity
                                              : DEFAULT_CAPACITY;
    /* Each part a little tighter than the one before, so that the sum of their false
     * positives stays bounded however many there are (Almeida et al., "Scalable Bloom
     * Filters", 2007): 16 bits a value, then 20, 24, ... */
    uint64_t per_value = BITS_PER_VALUE + 4 * (uint64_t)b->n_parts;
    uint64_t nbits = 1024;
    while (nbits < (uint64_t)capacity * per_value && nbits < MAX_BITS)
        nbits *= 2;
    icm__bloom_part *p = &b->parts[b->n_parts];
    p->bits = icm__calloc((size_t)(nbits / 64), sizeof *p->bits);
    if (p->bits == NULL)
        return ICM_ENOMEM;
    p->mask = nbits - 1;
    p->count = 0;
    p->capacity = (size_t)(nbits / per_value);
    b->n_parts++;
    return 0;
}

static uint64_t step_of(uint64_t hash)
{
    return (hash >> 32 | hash << 32) | 1;
}

int icm__bloom_add(icm__bloom *b, uint64_t hash)
{
    if (b->n_parts == 0 || b->parts[b->n_parts - 1].count == b->parts[b->n_parts - 1].capacity) {
        int rc = add_part(b);
        if (rc != 0)
            return rc;
    }
    icm__bloom_part *p = &b->parts[b->n_parts - 1];
    uint64_t step = step_of(hash), at = hash;
    for (int i = 0; i < PROBES; i++, at += step)
        p->bits[(at & p->mask) >> 6] |= (uint64_t)1 << (at & 63);
    p->count++;
    return 0;
}

bool icm__bloom_may_hold(const icm__bloom *b, uint64_t hash)
{
    uint64_t step = step_of(hash);
    for (size_t k = 0; k < b->n_parts; k++) {
        const icm__bloom_part *p = &b->parts[k];
        uint64_t at = hash;
        bool all = true;
        for (int i = 0; all && i < PROBES; i++, at += step)
            all = (p->bits[(at & p->mask) >> 6] >> (at & 63)) & 1;
        if (all)
            return true;
    }
    return false;
}

size_t icm__bloom_memory_bytes(const icm__bloom *b)
{
    size_t bytes = 0;
    for (size_t k = 0; k < b->n_parts; k++)
        bytes += (size_t)((b->parts[k].mask + 1) / 8);
    return bytes;
}

void icm__bloom_dispose(icm__bloom *b)
{
    for (size_t k = 0; k < b->n_parts; k++)
        icm__free(b->parts[k].bits);
    memset(b, 0, sizeof *b);
}
