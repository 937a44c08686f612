/*
 * maint/list_cuts.c: a deterministic sample of referenced keys and its quantiles, the cuts of a
 * listing split into ranges (see list_cuts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "maint/list_cuts.h"
#include "util/util.h"

static bool qualifies(uint64_t hash, unsigned level)
{
    return level == 0 || (level < 64 && (hash & ((UINT64_C(1) << level) - 1)) == 0);
}

bool icm__cut_sample_wants(const icm__cut_sample *s, uint64_t hash)
{
    return qualifies(hash, s->level);
}

void icm__cut_sample_dispose(icm__cut_sample *s)
{
    for (size_t i = 0; i < s->len; i++)
        icm__free(s->keys[i]);
    icm__free(s->keys);
    icm__free(s->hashes);
    memset(s, 0, sizeof *s);
}

/* Raise the level until fewer than the maximum keys qualify, dropping the others. */
static void thin(icm__cut_sample *s)
{
    while (s->len >= ICM__CUT_SAMPLE_MAX && s->level < 63) {
        s->level++;
        size_t kept = 0;
        for (size_t i = 0; i < s->len; i++) {
            if (qualifies(s->hashes[i], s->level)) {
                s->keys[kept] = s->keys[i];
                s->hashes[kept++] = s->hashes[i];
            } else {
                icm__free(s->keys[i]);
            }
        }
        s->len = kept;
    }
}

int icm__cut_sample_offer(icm__cut_sample *s, uint64_t hash, const char *location)
{
    if (!qualifies(hash, s->level))
        return 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->hashes[i] == hash)
            return 0; /* kept already (a file reached again) */
    if (s->keys == NULL) {
        s->keys = icm__calloc(ICM__CUT_SAMPLE_MAX, sizeof *s->keys);
        s->hashes = icm__calloc(ICM__CUT_SAMPLE_MAX, sizeof *s->hashes);
        if (s->keys == NULL || s->hashes == NULL) {
            icm__free(s->keys);
            icm__free(s->hashes);
            s->keys = NULL;
            s->hashes = NULL;
            return ICM_ENOMEM;
        }
    }
    char *copy = icm__strdup(location);
    if (copy == NULL)
        return ICM_ENOMEM;
    s->keys[s->len] = copy;
    s->hashes[s->len++] = hash;
    thin(s);
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void icm__cuts_free(char **cuts, size_t n)
{
    for (size_t i = 0; cuts != NULL && i < n; i++)
        icm__free(cuts[i]);
    icm__free(cuts);
}

/* The sample's keys K with after < K < upto (NULL: no bound), sorted: *out a new array of
 * borrowed strings (NULL when none). Returns 0 or ICM_ENOMEM. */
static int sorted_between(const icm__cut_sample *s, const char *after, const char *upto,
                          const char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (s->len == 0)
        return 0;
    const char **sorted = icm__calloc(s->len, sizeof *sorted);
    if (sorted == NULL)
        return ICM_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < s->len; i++)
        if ((after == NULL || strcmp(s->keys[i], after) > 0) &&
            (upto == NULL || strcmp(s->keys[i], upto) < 0))
            sorted[n++] = s->keys[i];
    qsort(sorted, n, sizeof *sorted, cmp_key);
    *out = sorted;
    *n_out = n;
    return 0;
}

int icm__cut_sample_shard(const icm__cut_sample *s, size_t index, size_t count, char **after,
                          char **upto, bool *empty)
{
    *after = NULL;
    *upto = NULL;
    *empty = false;
    const char **sorted;
    size_t len;
    int rc = sorted_between(s, NULL, NULL, &sorted, &len);
    if (rc != 0)
        return rc;
    size_t m = count < len ? count : len;
    if (m == 0)
        m = 1;
    if (index >= m) {
        *empty = true;
    } else {
        /* Range k holds the sample's keys k * len / m .. (k + 1) * len / m - 1: at least
         * one each, as len >= m (the keys are distinct). */
        if (index > 0 && (*after = icm__strdup(sorted[index * len / m - 1])) == NULL)
            rc = ICM_ENOMEM;
        if (rc == 0 && index + 1 < m &&
            (*upto = icm__strdup(sorted[(index + 1) * len / m - 1])) == NULL)
            rc = ICM_ENOMEM;
    }
    icm__free(sorted);
    if (rc != 0) {
        icm__free(*after);
        icm__free(*upto);
        *after = *upto = NULL;
    }
    return rc;
}

int icm__cut_sample_cuts(const icm__cut_sample *s, size_t n_ranges, char ***out, size_t *n_out)
{
    return icm__cut_sample_cuts_between(s, n_ranges, NULL, NULL, out, n_out);
}

int icm__cut_sample_cuts_between(const icm__cut_sample *s, size_t n_ranges, const char *after,
                                 const char *upto, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    const char **sorted;
    size_t len;
    int rc = sorted_between(s, after, upto, &sorted, &len);
    if (rc != 0)
        return rc;
    if (n_ranges < 2 || len < 2 * n_ranges) {
        if (n_ranges < 2 || len < 4) {
            icm__free(sorted);
            return 0;
        }
        n_ranges = len / 2;
    }
    char **cuts = icm__calloc(n_ranges - 1, sizeof *cuts);
    if (cuts == NULL) {
        icm__free(sorted);
        return ICM_ENOMEM;
    }
    size_t n = 0;
    for (size_t k = 1; k < n_ranges; k++) {
        const char *at = sorted[k * len / n_ranges];
        if (n > 0 && strcmp(cuts[n - 1], at) >= 0)
            continue; /* the sample's keys are distinct, but keep the cuts strictly so */
        if ((cuts[n] = icm__strdup(at)) == NULL) {
            icm__free(sorted);
            icm__cuts_free(cuts, n);
            return ICM_ENOMEM;
        }
        n++;
    }
    icm__free(sorted);
    *out = cuts;
    *n_out = n;
    return 0;
}
