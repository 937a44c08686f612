/*
 * cli/strset.c: a set of strings (file and manifest paths), each with a size_t value, using
 * open addressing and FNV-1a hashing, so `files --all` lists each file and reads each manifest
 * once, however many snapshots share them, without sorting or holding duplicates. The value
 * lets a later duplicate find the row of the first one.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct icm_cli_strset_slot {
    char *key;    /* NULL: empty slot */
    size_t value;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

static bool strset_grow(icm_cli_strset *set)
{
    size_t cap = set->cap ? set->cap * 2 : 256;
    struct icm_cli_strset_slot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < set->cap; i++) {
        if (set->slots[i].key == NULL)
            continue;
        size_t j = (size_t)fnv1a(set->slots[i].key) & (cap - 1);
        while (slots[j].key != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = set->slots[i];
    }
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return true;
}

int icm_cli_strset_add(icm_cli_strset *set, const char *s, size_t value, size_t *existing)
{
    /* keep the load factor at most 1/2 so probe runs stay short */
    if ((set->count + 1) * 2 > set->cap && !strset_grow(set))
        return -1;
    size_t j = (size_t)fnv1a(s) & (set->cap - 1);
    while (set->slots[j].key != NULL) {
        if (strcmp(set->slots[j].key, s) == 0) {
            if (existing != NULL)
                *existing = set->slots[j].value;
            return 0;
        }
        j = (j + 1) & (set->cap - 1);
    }
    set->slots[j].key = strdup(s);
    if (set->slots[j].key == NULL)
        return -1;
    set->slots[j].value = value;
    set->count++;
    return 1;
}

void icm_cli_strset_dispose(icm_cli_strset *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slots[i].key);
    free(set->slots);
    set->slots = NULL;
    set->cap = set->count = 0;
}
