/*
 * maint/site_checks.h: what a run that deletes checks about the table's surroundings before it
 * deletes anything (internal; the orphan sweep and expiry share it; issue #16).
 *
 *  - Newer commits (a stale pointer): the catalog's pointer is not the newest commit of the
 *    table when the table's own metadata folders hold metadata of the same table that took the
 *    pointer as its base and was itself taken as a base (or is what a version hint names). A
 *    copied or restored catalog, or one the table was registered in at an older file, points
 *    there; a run from it would delete the newer commits' metadata, manifests and data.
 *  - Enclosing tables: a place the run deletes in (the sweep's listing location, expiry's
 *    roots) that lies inside a folder another table writes into (table A located at B/data).
 *
 * Read-only: listings of metadata folders, reads of metadata files and version hints, link
 * resolution. Nothing here creates, writes or deletes (the dry-run test checks the object).
 */
#ifndef ICM_MAINT_SITE_CHECKS_H
#define ICM_MAINT_SITE_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

#include "icemaint/fileio.h"
#include "icemaint/catalog.h"
#include "util/util.h"

/* The table a run works on, as the checks see it. Borrowed pointers, valid for the call. */
typedef struct icm__site {
    icm_table *t;
    icm_fileio *io;
    const char *uuid;          /* this table's table-uuid; NULL in old v1 tables */
    char *const *md_dirs;      /* its metadata folders (icm__table_metadata_dirs) */
    size_t n_md_dirs;
    const char *md_location;   /* the catalog's pointer: the metadata file the run works from */
    const char *run;           /* "sweep" or "expiry", for messages */
    const char *run_a;         /* the same with its article: "a sweep", "an expiry" */
    bool refuse_foreign;       /* refuse when another table's metadata whose places meet
                                  list_root lies in the metadata folders (the sweep) */
    const char *list_root;     /* the sweep's listing location; NULL for expiry */
    bool copy;                 /* a dry run of a copy's metadata (it names the original's
                                  location, whose history is not its own; a real run is refused
                                  by icm_table_check_own_metadata): newer commits not looked for */
} icm__site;

/* What a look at a metadata file that might be another table's (or a newer commit of this
 * one) found. */
typedef struct icm__peeked {
    char *uuid;     /* table-uuid; NULL when none */
    char *roots[5]; /* ICM__MD_PLACES_ROOT_NAMES (spec/metadata_places.h): location,
                       write.data.path, write.metadata.path, write.object-storage.path,
                       write.folder-storage.path; NULL when unset */
    bool readable;  /* parsed, strictly or as plain JSON */
    bool gone;      /* no such file (any more) */
} icm__peeked;

void icm__peeked_dispose(icm__peeked *m);

/* table-uuid and roots of the metadata file `loc`, and (when `log` is not NULL) copies of the
 * files its metadata-log names. Strict parsing first; plain JSON as a fallback (a placeholder
 * file Java would reject still names its table). m->readable is false when neither works; an
 * unreadable file is looked at again three times (a writer may be publishing it in place).
 * *m and *log are disposed first. Returns 0 or ICM_ENOMEM. */
int icm__site_peek(const icm__site *s, const char *loc, icm__peeked *m, icm__ptrvec *log);

/* Look once only (no second look while unreadable). Same contract otherwise. */
int icm__site_peek_once(const icm__site *s, const char *loc, icm__peeked *m, icm__ptrvec *log);

/* Whether metadata at `loc` with table-uuid `uuid` is this table's: both uuids known, they
 * compare equal; a missing uuid (old v1 metadata) counts only inside this table's own metadata
 * folders, and only when this table's uuid is missing too or theirs is. */
bool icm__site_same_table(const icm__site *s, const char *loc, const char *uuid);

/* ---- newer commits ---- */

typedef struct icm__newer_commits {
    const icm__site *site;
    icm__ptrvec files;   /* the same-table metadata files looked at (site_checks.c: noted) */
    icm__ptrvec hinted;  /* the files the version hints name (char *) */
    char *real_pointer;  /* where the pointer really is; NULL: not looked up or unknown */
    bool real_pointer_done;
    char *unreadable_loc; /* the first metadata file there that could not be read (and is not
                             a write in progress) */
    char *foreign_loc;   /* the first other table's metadata file in the metadata folders whose
                            places meet the sweep's listing location */
    icm__peeked foreign; /* what it says */
} icm__newer_commits;

void icm__newer_commits_init(icm__newer_commits *nc, const icm__site *s);
void icm__newer_commits_dispose(icm__newer_commits *nc);

/* Note a readable metadata file of this table found elsewhere (the sweep's listing), with the
 * files its metadata-log names (`log`, taken over: emptied). Returns 0 or ICM_ENOMEM. */
int icm__newer_commits_note(icm__newer_commits *nc, const char *loc, icm__ptrvec *log);

/* List the table's metadata folders (each distinct folder once, whatever the run lists) and
 * note every metadata file of this table there that may be newer than the pointer (see
 * site_checks.c: its name is numbered apart from the pointer's, carries a higher version, or
 * it was modified no earlier than the pointer), and the files the version hints there name.
 * Then decide: refuse (ICM_EREFUSED, message naming the newer file) when the table went past
 * the pointer through an accepted commit. Returns 0, ICM_EREFUSED, the listing's codes,
 * ICM_ENOMEM. */
int icm__newer_commits_check(icm__newer_commits *nc);

/* ---- enclosing tables ---- */

/* Refuse (ICM_EREFUSED) when `place` (a folder the run deletes in, named `what` in the
 * message: "the listing location", "the table's folder") or where it really is (`real_place`,
 * NULL when unknown or the same) lies inside another table: a folder enclosing it, up to the
 * filesystem root or bucket, whose `metadata/` folder holds table metadata of another table
 * (or metadata that cannot be read), when the place is at or below a folder that table writes
 * into. The table's own location and metadata folders are passed over. Returns 0,
 * ICM_EREFUSED, ICM_ENOMEM. */
int icm__site_check_enclosing(const icm__site *s, const char *place, const char *real_place,
                              const char *what);

/* Where `location` really is (icm_fileio_resolve), or *out NULL when nothing is there.
 * Returns 0 or the io's code. */
int icm__site_resolve(const icm__site *s, const char *location, char **out);

#endif /* ICM_MAINT_SITE_CHECKS_H */
