/*
 * maint/places.h: where a place really is, and the places of another catalog table (internal).
 *
 * Another table's folders are compared with this table's by name and by identity (issue #16:
 * a `write.data.path` spelled through a symbolic link or with `..`, or a table location spelled
 * through a link, names a folder inside this table's location that its name does not show).
 * The other table's places are resolved once per run (icm__other_places_init, once per other
 * table), never per file.
 */
#ifndef ICM_MAINT_PLACES_H
#define ICM_MAINT_PLACES_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog/catalog_internal.h"
#include "icemaint/fileio.h"
#include "util/mounts.h"

/*
 * Where `location` really is (new string, icm__free), for comparing places by identity:
 * symbolic links and `..` resolved through `io` (icm_fileio_resolve). When its tail does not
 * exist (a folder not written yet), the real place of its longest existing prefix with the rest
 * appended (dot segments of that rest resolved by name). *out is NULL with 0 when `io` has no
 * such place to resolve (an object store the back end does not hold, a relative name): then
 * only names are compared. Returns 0; ICM_ENOMEM; or the resolve's error (permission, I/O, a
 * link loop: where the place is cannot be told; the last error says why, *out NULL).
 */
int icm__place_real(icm_fileio *io, const char *location, char **out);

/* Length of the part of `loc` a walk up its folders stays within: its filesystem root (`/`,
 * `file:///`) or its bucket (`s3://b`); 0 when there is none (relative, no authority). */
size_t icm__place_floor(const char *loc);

/* Whether `a` is `b` or lies below it (`strict`: strictly below), by name, or by where both
 * really are (`real_a`, `real_b` from icm__place_real; NULL: unknown), or, both local, by
 * identity (icm__place_identity_below with `ms`). */
bool icm__place_within(const char *a, const char *real_a, const char *b, const char *real_b,
                       bool strict, const icm__mounts *ms);
/* Whether the local place `real_a` is the folder `real_b` or lies below it by identity (device
 * and inode of each folder of real_a against real_b's: a bind mount shows one folder at two
 * paths, which realpath does not tell; util/mounts.h); *rest as icm__identity_above. False
 * when either is not local. With the mount table `ms` (NULL: none read), nothing is stat'ed
 * when the file system holding real_b is mounted at one place only: then no other path leads
 * to that folder but a link, which real paths resolve. */
bool icm__place_identity_below(const char *real_a, const char *real_b, const char **rest,
                               const icm__mounts *ms);

/* One place of another table. */
typedef struct icm__other_place {
    const char *what; /* "metadata file", "location", "write.data.path", ... (static) */
    char *name;       /* as the table's metadata spells it (a default folder: joined below its
                         location) */
    char *real;       /* icm__place_real(name); NULL when unknown */
    char *unresolved; /* why icm__place_real failed (permission, I/O, link loop): where the
                         place really is cannot be told; NULL otherwise */
    bool file;        /* the pointer (a file), not a folder */
    bool written;     /* a folder the table writes its files into: its write paths (also Java's
                         legacy write.object-storage.path and write.folder-storage.path), and
                         `<location>/data` and `<location>/metadata` */
} icm__other_place;

#define ICM__OTHER_PLACES_MAX (1 + ICM__OTHER_TABLE_N_ROOTS + 2 + 1)

typedef struct icm__other_places {
    icm__other_place p[ICM__OTHER_PLACES_MAX];
    size_t n;
} icm__other_places;

/* Every place of `t` (its pointer, each root it names, `<location>/data` and
 * `<location>/metadata`), each resolved once through `io` (one that cannot be resolved has
 * `unresolved` set: the callers keep to the safe side). A table whose metadata could not be
 * read (t->unreadable) has one more place, "data" (its location, else its pointer), whose
 * `unresolved` is why: where its files go cannot be told. Returns 0 or ICM_ENOMEM (then
 * nothing needs disposing). */
int icm__other_places_init(icm__other_places *ps, icm_fileio *io, const icm__other_table *t);
void icm__other_places_dispose(icm__other_places *ps);

#endif /* ICM_MAINT_PLACES_H */
