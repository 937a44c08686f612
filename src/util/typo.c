/*
 * util/typo.c: typing-slip distances between names (typo.h).
 */
#include <string.h>

#include "util/typo.h"

#define NAME_MAX_LEN 63

size_t icm__typo_distance(const char *a, const char *b, size_t cap)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > NAME_MAX_LEN || m > NAME_MAX_LEN || (n > m ? n - m : m - n) > cap)
        return cap + 1;
    size_t rows[3][NAME_MAX_LEN + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        size_t row_min = cur[0];
        for (size_t j = 1; j <= m; j++) {
            size_t d = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
            if (d < row_min)
                row_min = d;
        }
        if (row_min > cap)
            return cap + 1; /* every later row is at least as far */
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[m] <= cap ? prev[m] : cap + 1;
}

const char *icm__typo_nearest(const char *key, const char *const *names, size_t n,
                              size_t max_slips)
{
    const char *nearest = NULL;
    size_t best = max_slips + 1;
    for (size_t i = 0; i < n; i++) {
        size_t cap = strlen(names[i]) / 3;
        if (cap > max_slips)
            cap = max_slips;
        if (cap >= best)
            cap = best - 1;
        size_t d = icm__typo_distance(key, names[i], cap);
        if (d <= cap) {
            best = d;
            nearest = names[i];
        }
    }
    return nearest;
}
