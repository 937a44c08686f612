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

int icm__cut_sample_cuts(const icm__cut_sample *s, size_t n_ranges, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (n_ranges < 2 || s->len < 2 * n_ranges) {
        if (n_ranges < 2 || s->len < 4)
            return 0;
        n_ranges = s->len / 2;
    }
    const char **sorted = icm__calloc(s->len, sizeof *sorted);
    char **cuts = icm__calloc(n_ranges - 1, sizeof *cuts);
    if (sorted == NULL || cuts == NULL) {
        icm__free(sorted);
        icm__free(cuts);
        return ICM_ENOMEM;
    }
    memcpy(sorted, s->keys, s->len * sizeof *sorted);
    qsort(sorted, s->len, sizeof *sorted, cmp_key);
    size_t n = 0;
    for (size_t k = 1; k < n_ranges; k++) {
        const char *at = sorted[k * s->len / n_ranges];
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
