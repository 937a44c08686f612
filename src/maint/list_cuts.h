/*
 * maint/list_cuts.h: where to cut a listing into key ranges of about equal size (internal).
 *
 * An object store lists a prefix as a chain of pages, one round trip each; cut into N ranges
 * listed at once (io/list_ahead.h) it lists about N times as fast. Good cuts are quantiles of
 * the keys the listing will show. The sweep knows most of them before it lists: the files the
 * table references lie among its orphans, partition by partition. So the referenced keys are
 * sampled while the keep set is built, and the cuts are quantiles of the sample.
 *
 * The sample is a function of the SET of keys offered, not of their order or repetitions: a
 * key is kept while its hash has `level` low zero bits, and the level rises (dropping the keys
 * that no longer qualify) whenever ICM__CUT_SAMPLE_MAX keys are kept. So every process that
 * reads the same metadata computes the same cuts (the sharded sweep of issue #21 relies on it).
 * Cuts only decide how the work is split: any strictly increasing cuts give every listed file
 * exactly once, so a poor sample costs speed, never a file.
 */
#ifndef ICM_MAINT_LIST_CUTS_H
#define ICM_MAINT_LIST_CUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ICM__CUT_SAMPLE_MAX 4096

typedef struct icm__cut_sample {
    char **keys;       /* kept locations (owned) */
    uint64_t *hashes;  /* their hashes */
    size_t len;
    unsigned level;    /* keep hashes whose low `level` bits are zero */
} icm__cut_sample;

/* An empty sample is all zero. */
void icm__cut_sample_dispose(icm__cut_sample *s);

/* Whether a location with this hash would be kept now (a caller that builds the location
 * string only for the sample asks first). */
bool icm__cut_sample_wants(const icm__cut_sample *s, uint64_t hash);

/* Offer `location` (borrowed; copied when kept) whose well-mixed 64-bit hash is `hash` (equal
 * locations have equal hashes). Returns 0 or ICM_ENOMEM (the sample is then unchanged). */
int icm__cut_sample_offer(icm__cut_sample *s, uint64_t hash, const char *location);

/* Up to n_ranges - 1 cuts at the sample's quantiles: *out a new array (icm__cuts_free) of new
 * strings, strictly increasing in byte order; none (NULL, 0) when the sample is too small to
 * split (fewer than two keys per range). Returns 0 or ICM_ENOMEM. */
int icm__cut_sample_cuts(const icm__cut_sample *s, size_t n_ranges, char ***out, size_t *n_out);

void icm__cuts_free(char **cuts, size_t n);

/*
 * The key range of shard `index` of `count` (a sharded sweep, docs/semantics.md#sharded-sweep):
 * the sample's keys sorted, m = min(count, keys) ranges (1 when the sample is empty), range
 * k holding the sample's keys k * keys / m .. (k + 1) * keys / m - 1 (at least one each): the
 * keys K with sorted[k * keys / m - 1] < K <= sorted[(k + 1) * keys / m - 1] (the first range
 * has no lower bound, the last no upper one). Shards m..count-1 get no range
 * (*empty): fewer referenced keys than shards leave the last shards idle, deterministically.
 * *after and *upto are new strings (icm__free) or NULL for no bound. Since the sample is a
 * function of the set of keys offered, every process that offers the same keys gets the same
 * ranges, whatever the order. Returns 0 or ICM_ENOMEM.
 */
int icm__cut_sample_shard(const icm__cut_sample *s, size_t index, size_t count, char **after,
                          char **upto, bool *empty);

/* icm__cut_sample_cuts restricted to the sample's keys K with after < K < upto (NULL: no
 * bound): cuts that split one shard's range for a parallel listing. */
int icm__cut_sample_cuts_between(const icm__cut_sample *s, size_t n_ranges, const char *after,
                                 const char *upto, char ***out, size_t *n_out);

#endif /* ICM_MAINT_LIST_CUTS_H */
