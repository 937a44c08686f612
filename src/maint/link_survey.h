/*
 * maint/link_survey.h: the survey of a table's local roots for symbolic links (internal),
 * shared by expiry's second names (expire_internal.h) and the orphan sweep's keep set
 * (orphans_refs.c).
 *
 * A symbolic link gives a local file more names than one. Whether any lies below a table's
 * roots decides how much a plan must resolve: with one there ("link mode") any name of the
 * table may be a second name, so every local reference is resolved; with none, a name plainly
 * below a root is its own real name (the root resolved), and names decide. Object-store roots
 * have no links: a table without a local root costs nothing.
 */
#ifndef ICM_MAINT_LINK_SURVEY_H
#define ICM_MAINT_LINK_SURVEY_H

#include <stdbool.h>
#include <stddef.h>

#include "icemaint/fileio.h"

#define ICM__LINK_SURVEY_MAX_ROOTS 3

typedef struct icm__link_survey {
    bool active;  /* some root is local (or a path map puts it on local disk) */
    bool links;   /* link mode: a symbolic link lies below a local root, a root is reached
                     through a link while several local roots may then overlap, or a root
                     could not be resolved or walked (then it may) */
    bool mapped;  /* a path map puts an object-store root on disk (its files' names are URIs) */
    size_t n_roots;
    char *root[ICM__LINK_SURVEY_MAX_ROOTS];       /* a local root as spelled */
    char *root_path[ICM__LINK_SURVEY_MAX_ROOTS];  /* its file system path */
    size_t root_len[ICM__LINK_SURVEY_MAX_ROOTS];  /* (without trailing slashes) */
    size_t root_path_len[ICM__LINK_SURVEY_MAX_ROOTS]; /* 0: spelled like root */
} icm__link_survey;

/* Survey `roots` (icm__table_roots: at most ICM__LINK_SURVEY_MAX_ROOTS are looked at) through
 * `io`: resolved, and each walked once (a root inside another by name is covered by the other's
 * walk) without following links, at most a million folders. Reads only. Returns 0 or
 * ICM_ENOMEM (then *s is disposed); what cannot be told sets s->links. */
int icm__link_survey_init(icm__link_survey *s, icm_fileio *io, const char *const *roots,
                          size_t n_roots);
void icm__link_survey_dispose(icm__link_survey *s);

/* Whether `location` is a file of this machine's file system: a local name, or one io's path
 * map puts there. 1, 0 or ICM_ENOMEM. */
int icm__link_survey_on_local_disk(icm_fileio *io, const char *location);

#endif /* ICM_MAINT_LINK_SURVEY_H */
