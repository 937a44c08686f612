/*
 * maint/link_guard.h: the last check of the delete phase before a local file goes (internal).
 *
 * Listing and planning work on names. A symbolic link inside the table can make a name lead
 * somewhere else: `T/data/alias/x` with `alias -> .` is the live `T/data/x`; `T/data/bl/y`
 * with `bl -> /other/table/data` is another table's file; a folder swapped for a link while a
 * sweep settles sends its deletes out of the table. The rule (README, "What the maintenance
 * commands touch"): a local file is deleted only if the folder it lies in is, by its real path
 * (every link resolved), exactly the folder its name says below the real path of the table root
 * it lies under. The root itself may be reached through a link (linked warehouses); no
 * component below it may be one. Object-store locations have no links and always pass.
 *
 * Cost: one icm_fileio_resolve (realpath) per folder, not per file: a check cache remembers the
 * verdict for the last folder seen, and the delete phases meet files in folder runs. A cache
 * belongs to one thread; the guard itself is read-only after init and shared by all.
 *
 * What is left open: the check and the unlink are two system calls; a folder swapped for a
 * link between them (microseconds, against the settle time before) is not caught.
 */
#ifndef ICM_MAINT_LINK_GUARD_H
#define ICM_MAINT_LINK_GUARD_H

#include <stddef.h>

#include "icemaint/fileio.h"
#include "util/strset.h"

#define ICM__LINK_GUARD_MAX_ROOTS 3

typedef struct icm__link_guard {
    icm_fileio *io;
    size_t n_roots;
    char *root[ICM__LINK_GUARD_MAX_ROOTS]; /* normalised local path; NULL: not a local root */
    char *real[ICM__LINK_GUARD_MAX_ROOTS]; /* its resolved form; NULL when it did not resolve */
    int real_rc[ICM__LINK_GUARD_MAX_ROOTS]; /* why it did not (ICM_ENOTFOUND: root missing) */
} icm__link_guard;

/* One thread's memory of the last folder checked. Zero-initialise; dispose when done. */
typedef struct icm__link_cache {
    char *dir;   /* normalised local path of the folder */
    int verdict; /* icm__link_guard_check's answer for files in it */
    char why[160];
} icm__link_cache;

/* Resolve the roots (`roots`: the table's roots as icm__table_roots gives them) once.
 * Returns 0 or ICM_ENOMEM; a root that does not resolve is remembered, not an error. */
int icm__link_guard_init(icm__link_guard *g, icm_fileio *io, const char *const *roots,
                         size_t n_roots);
void icm__link_guard_dispose(icm__link_guard *g);
void icm__link_cache_dispose(icm__link_cache *c);

/*
 * May `location` be deleted as far as links go?
 * @return 0: yes (also for any non-local location); ICM_EREFUSED: its folder is reached
 *  through a symbolic link below the table root, or it lies under no root (kept; the last
 *  error says which); ICM_ENOTFOUND: its folder is gone, so the file is too (delete nothing,
 *  count it already gone); another negative code: the folder could not be resolved (kept; the
 *  last error says why); ICM_ENOMEM.
 */
int icm__link_guard_check(const icm__link_guard *g, icm__link_cache *c, const char *location);

/*
 * A planner's memory of every folder it judged, for a report made once over a whole plan (the
 * dry run's: its orphans come in listing order, which is rarely folder order, so the one-folder
 * cache would resolve a folder per file). One resolve per distinct folder: at most
 * ICM__LINK_MEMO_MAX_DIRS folders are remembered (then the one-folder cache takes over for
 * the rest). Never used by a delete phase: the check right before a delete is
 * icm__link_guard_check with its one-folder cache, made at that time, so a folder swapped for
 * a link after planning is still caught there. Zero-initialise; dispose when done.
 */
#define ICM__LINK_MEMO_MAX_DIRS ((size_t)1 << 19)

typedef struct icm__link_memo {
    icm__strset dirs;        /* the folders judged, numbered in order */
    int *verdict;            /* verdict[k]: icm__link_guard_check's answer for folder k */
    char **why;              /* why[k]: its reason when the verdict is not 0, else NULL */
    size_t cap;              /* of verdict and why */
    icm__link_cache overflow; /* for the folders past ICM__LINK_MEMO_MAX_DIRS */
} icm__link_memo;

/* icm__link_guard_check through the memo: the same answers and last error. */
int icm__link_guard_check_memo(const icm__link_guard *g, icm__link_memo *m, const char *location);
void icm__link_memo_dispose(icm__link_memo *m);

#endif /* ICM_MAINT_LINK_GUARD_H */
