/*
 * maint/md_mark.h: which metadata a delete phase's plan is up to date with, to tell at each
 * re-check whether the table's metadata is new since. Internal.
 *
 * "New" is by name AND content: a pointer that names the same file whose document changed (a
 * filesystem-layout version file rewritten in place, adversary round 17, F3) is new metadata
 * too, and what it references is read again. The content is compared by digest
 * (icm__table_metadata_digest), not by a few fields a rewrite could keep.
 */
#ifndef ICM_MAINT_MD_MARK_H
#define ICM_MAINT_MD_MARK_H

#include <stdbool.h>
#include <stdint.h>

#include "icemaint/metadata.h"

typedef struct icm__md_mark {
    char *location;  /* owned; NULL: nothing marked yet */
    uint64_t digest;
} icm__md_mark;

/* Mark `md`, read from `location`. Returns 0 or ICM_ENOMEM (the mark is then unchanged). */
int icm__md_mark_set(icm__md_mark *m, const char *location, const icm_table_metadata *md);

/* Whether `md` at `location` is the marked metadata; false when it cannot be told. */
bool icm__md_mark_same(const icm__md_mark *m, const char *location,
                       const icm_table_metadata *md);

void icm__md_mark_dispose(icm__md_mark *m);

#endif /* ICM_MAINT_MD_MARK_H */
