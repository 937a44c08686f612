/*
 * avro/skip_steps.h: running compiled skip programs (icm__avro_skip_steps), inline for the hot
 * decoders (the manifest entry views run one per entry) (internal).
 *
 * Source: Avro 1.11 specification "Binary Encoding". Every length and count is checked against
 * the bytes left, so corrupt input ends in ICM_EINVALID, never an over-read.
 */
#ifndef ICM_AVRO_SKIP_STEPS_H
#define ICM_AVRO_SKIP_STEPS_H

#include <string.h>

#include "avro/avro.h"

/* Skip a value of `node` nested in a skip step (records, arrays, maps, other unions). */
int icm__avro_skip_nested(const icm__avro_schema *s, uint32_t node, icm__avro_cur *c);

/* Skip a varint without decoding it (a skipped value's range does not matter). */
static inline int icm__skip_varint(icm__avro_cur *c)
{
    const uint8_t *p = c->p;
    const uint8_t *lim = c->end - p >= 10 ? p + 10 : c->end;
    while (p < lim && (*p & 0x80))
        p++;
    if (ICM__UNLIKELY(p == lim))
        return icm__avro_corrupt(c, p == c->end ? "truncated varint"
                                                : "varint longer than 10 bytes");
    c->p = p + 1;
    return 0;
}

static inline int icm__skip_len_prefixed(icm__avro_cur *c)
{
    const uint8_t *data;
    size_t len;
    return icm__avro_read_bytes(c, &data, &len);
}

/* Skip `count` consecutive varints by counting their terminating bytes (high bit clear). */
static inline int icm__skip_varint_run(icm__avro_cur *c, uint64_t count)
{
    const uint8_t *p = c->p, *end = c->end;
    /* A word at a time: its terminators are the bytes with the high bit clear. While the word
     * holds fewer terminators than varints remain it is consumed whole; otherwise the run ends
     * just after its count-th terminator. */
    while (count > 0 && end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        /* High bits moved to bit 0 of each byte, summed by one multiply (no popcnt needed). */
        uint64_t ends = 8 - (((w & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull >> 56);
        if (ends < count) {
            count -= ends;
            p += 8;
            continue;
        }
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t t = ~w & 0x8080808080808080ull; /* byte 0 is the lowest */
        for (uint64_t k = 1; k < count; k++)
            t &= t - 1; /* drop the terminators before the last one needed */
        p += ((unsigned)__builtin_ctzll(t) >> 3) + 1;
        count = 0;
#endif
        break; /* (elsewhere the bytes below find it) */
    }
    while (count > 0) {
        if (ICM__UNLIKELY(p >= end)) {
            c->p = p;
            return icm__avro_corrupt(c, "truncated varint");
        }
        count -= (uint64_t)((*p >> 7) ^ 1);
        p++;
    }
    c->p = p;
    return 0;
}

/* Skip the value of one step (its null branch already ruled out by the caller's fast paths). */
static inline int icm__skip_step(const icm__avro_schema *s, const icm__avro_skip_step *step,
                            icm__avro_cur *c)
{
    if (step->varints > 0)
        return icm__skip_varint_run(c, step->varints);
    if (step->null_branch >= 0) {
        int64_t b;
        int rc = icm__avro_read_long(c, &b);
        if (ICM__UNLIKELY(rc < 0))
            return rc;
        if (ICM__UNLIKELY(b != 0 && b != 1))
            return icm__avro_corrupt(c, "union branch index out of range");
        if (b == step->null_branch)
            return 0;
    }
    const icm__avro_node *t = &s->nodes[step->node];
    if (t->varints == 1)
        return icm__skip_varint(c);
    if (t->type == ICM__AVRO_STRING || t->type == ICM__AVRO_BYTES)
        return icm__skip_len_prefixed(c);
    return icm__avro_skip_nested(s, step->node, c);
}

/* How many of the next bytes (up to 8, fewer at the end of the block) are 0x00 before the first
 * other one: one word load where 8 bytes remain. */
static inline size_t icm__zero_prefix(const uint8_t *p, const uint8_t *end)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        return w == 0 ? 8 : (size_t)__builtin_ctzll(w) >> 3; /* byte 0 is the lowest */
    }
#endif
    size_t k = 0;
    while (k < 8 && p + k < end && p[k] == 0)
        k++;
    return k;
}

/* icm__avro_skip_steps (avro.h), inline. */
static inline int icm__avro_run_skip_steps(const icm__avro_schema *s,
                                          const icm__avro_skip_step *steps, size_t n,
                                          icm__avro_cur *c)
{
    size_t i = 0;
    while (i < n) {
        /* An optional value that is null is one byte, its branch index (zigzag: 2 * index):
         * the common case of unset metrics, key metadata and the like. A row of optional
         * values with null first that are all null is a row of 0x00 bytes, passed a word at a
         * time. */
        const icm__avro_skip_step *st = &steps[i];
        if (st->null_run > 1) {
            size_t max = st->null_run < n - i ? st->null_run : n - i;
            size_t k = icm__zero_prefix(c->p, c->end), more = k;
            while (more == 8 && k < max) { /* a longer run: word after word */
                more = icm__zero_prefix(c->p + k, c->end);
                k += more;
            }
            k = k < max ? k : max;
            if (k > 0) {
                c->p += k;
                i += k;
                continue;
            }
        } else if (st->null_branch >= 0 && st->null_branch < 64 && c->p < c->end &&
                   *c->p == (uint8_t)(st->null_branch * 2)) {
            c->p++;
            i++;
            continue;
        }
        int rc = icm__skip_step(s, st, c);
        if (ICM__UNLIKELY(rc < 0))
            return rc;
        i++;
    }
    return 0;
}

#endif /* ICM_AVRO_SKIP_STEPS_H */
