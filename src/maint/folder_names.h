/*
 * maint/folder_names.h: the names a local folder holds, read once for a run of files in it
 * (internal).
 *
 * The sweep's planner asks storage about each orphan: is `.NAME.crc` beside it (its checksum
 * companion), what are its first bytes (the catalog-store look). On local disk each question is
 * an open(); most of them of a name that is not there (companions are rare), and all of them
 * of files in the same few folders. One directory read answers "is NAME not in this folder"
 * for a whole run of files: a name absent from the folder is a file whose open would fail with
 * ENOENT, so the question is not asked; a name present is asked of storage exactly as before
 * (its content, its kind, a link's target are storage's to tell). So the answers, and the
 * companions and refusals they lead to, are the same as one open each.
 *
 * Only where reading the folder directly is what the table's FileIO does: the local back end,
 * or a resolving FileIO that sends the location to it (never a path map, a fault injector or
 * another registered back end: those are always asked). A folder is read only for a run of at
 * least ICM__FOLDER_RUN_MIN files, and only up to ICM__FOLDER_ENTRIES_PER_FILE entries per
 * file of the run (then it is "unknown" and every file is asked): a huge folder with few
 * orphans costs a bounded read, never more than the opens it would replace.
 * Answers are as of the read: a file made after it is as one made after the open would be.
 * Read-only.
 */
#ifndef ICM_MAINT_FOLDER_NAMES_H
#define ICM_MAINT_FOLDER_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "icemaint/sys/fileio.h"
#include "util/strset.h"

#define ICM__FOLDER_RUN_MIN 4
#define ICM__FOLDER_ENTRIES_PER_FILE 32

typedef enum icm__folder_answer {
    ICM__NAME_UNKNOWN = 0, /* ask storage */
    ICM__NAME_ABSENT,      /* not in its folder (or no such folder): an open would not find it */
    ICM__NAME_PRESENT      /* in its folder: ask storage */
} icm__folder_answer;

typedef struct icm__folder_names {
    icm_fileio *io;
    const icm_fileio_methods *local; /* the local back end's (to know it when it is used) */
    char *dir;                       /* the folder last read (file-system path), or NULL */
    int state;                       /* of dir: an icm__folder_answer for every name in it
                                        (ABSENT: no folder), or PRESENT: `names` holds them */
    icm__strset names;
} icm__folder_names;

/* Returns 0 or ICM_ENOMEM. */
int icm__folder_names_init(icm__folder_names *f, icm_fileio *io);
void icm__folder_names_dispose(icm__folder_names *f);

/*
 * Whether the file `location` is in its folder, per a read of that folder; `run` is how many
 * files of that folder the caller will ask about in a row (from this one on), which decides
 * whether and how far the folder is read when it is not the one last read.
 * Returns 0 (*answer set; UNKNOWN for anything that cannot be told this way) or ICM_ENOMEM.
 */
int icm__folder_names_ask(icm__folder_names *f, const char *location, size_t run,
                          icm__folder_answer *answer);

/* Whether locations a and b lie in the same folder by name (the part before the last '/'). */
bool icm__folder_names_same_folder(const char *a, const char *b);

#endif /* ICM_MAINT_FOLDER_NAMES_H */
