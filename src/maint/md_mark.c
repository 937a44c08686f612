/*
 * maint/md_mark.c: the metadata a delete phase's plan is up to date with (md_mark.h).
 */
#include <string.h>

#include "maint/md_mark.h"
#include "spec/metadata_internal.h"

int icm__md_mark_set(icm__md_mark *m, const char *location, const icm_table_metadata *md)
{
    uint64_t digest = 0;
    int rc = icm__table_metadata_digest(md, &digest);
    if (rc != 0)
        return rc;
    char *copy = icm__strdup(location);
    if (copy == NULL)
        return ICM_ENOMEM;
    icm__free(m->location);
    m->location = copy;
    m->digest = digest;
    return 0;
}

bool icm__md_mark_same(const icm__md_mark *m, const char *location,
                       const icm_table_metadata *md)
{
    uint64_t digest = 0;
    return m->location != NULL && strcmp(m->location, location) == 0 &&
           icm__table_metadata_digest(md, &digest) == 0 && digest == m->digest;
}

void icm__md_mark_dispose(icm__md_mark *m)
{
    icm__free(m->location);
    m->location = NULL;
}
