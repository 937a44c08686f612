/*
 * util/typo.h: how far a name is from a known one, counted in typing slips, for "did you
 * mean" hints on property names (S3 properties, table properties).
 */
#ifndef ICM_UTIL_TYPO_H
#define ICM_UTIL_TYPO_H

#include <stddef.h>

/* The optimal-string-alignment distance between the C strings a and b (insertions,
 * deletions, substitutions and swaps of neighbours, each 1: the usual typing slips), or
 * cap + 1 when it exceeds `cap` or a name is longer than 63 bytes (names are short: the rows
 * live on the stack, nothing is allocated). */
size_t icm__typo_distance(const char *a, const char *b, size_t cap);

/* The name of `names` (n of them) nearest to `key` when it is a slip or a few away: at most
 * `max_slips` and less than a third of the name's length (`s3.acl` is no slip of `s3.xyz`);
 * the first of the nearest; NULL when none is near. */
const char *icm__typo_nearest(const char *key, const char *const *names, size_t n,
                              size_t max_slips);

#endif /* ICM_UTIL_TYPO_H */
