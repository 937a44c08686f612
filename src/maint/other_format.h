/*
 * maint/other_format.h: folders another table format manages (internal).
 *
 * Delta Lake UniForm (and Apache XTable over Delta or Hudi) writes Iceberg metadata beside the
 * other format's own log, over the same data files. The other format is the writer: its log
 * (`_delta_log/`, Hudi's `.hoodie/` timeline) may name a file Iceberg's metadata does not name
 * yet (the Iceberg conversion is asynchronous and lags or fails) or no longer names (the other
 * format's time travel still reads it). Both logs are hidden names, which the sweep never
 * reads. So neither the orphan sweep nor expiry deletes anything in such a folder: the other
 * format's own cleaner (Delta's VACUUM, Hudi's cleaner) must remove its files.
 *
 * An icemaint trash (maint/trash.h) is kept the same way: its files are another table's trashed
 * files, each the undo of a delete, and they keep their old modification times, so a sweep of a
 * folder that holds a trash would take them for old orphans. A trash is told by its layout,
 * `<trash>/<table-uuid>/journal/<name>.jsonl` (a table-uuid is a UUID: the trash takes no
 * other), so a trash placed well when it was opened and swept since (a table's
 * write.data.path moved onto it, a table made around it, the same folder reached through a bind
 * mount) is refused by the sweep itself (adversary round 4, findings 1 and 3). Read-only.
 */
#ifndef ICM_MAINT_OTHER_FORMAT_H
#define ICM_MAINT_OTHER_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "icemaint/fileio.h"
#include "icemaint/metadata.h"

/* The formats known, by the name of the folder that marks them. */
typedef enum icm__other_format {
    ICM__OTHER_FORMAT_NONE = -1,
    ICM__OTHER_FORMAT_DELTA = 0, /* `_delta_log/` */
    ICM__OTHER_FORMAT_HUDI = 1,  /* `.hoodie/` */
    ICM__OTHER_FORMAT_TRASH = 2  /* `<table-uuid>/journal/<journal>.jsonl`: an icemaint trash */
} icm__other_format;

/* Whether `s[0, n)` is a UUID in its 8-4-4-4-12 hex form (either case). */
bool icm__other_format_uuid_shaped(const char *s, size_t n);

/* Refuse (ICM_EREFUSED, naming `folder`) when the folder `folder` holds a `_delta_log/` or a
 * `.hoodie/` with a file in it: one listing of each, stopping at its first file (a missing
 * folder lists nothing; a folder the io cannot list, ICM_EUNSUPPORTED, counts as none). A
 * folder named like a UUID is also looked at for a trash journal (`journal/<journal>.jsonl`): the
 * refusal then names its parent, the trash. Returns 0, ICM_EREFUSED, ICM_ENOMEM or the
 * listing's error. */
int icm__other_format_check_folder(icm_fileio *io, const char *folder);

/* icm__other_format_check_folder for `top` and for every folder from it down to `bottom`,
 * which lies at or below `top` (NULL, or not below it: `top` only). */
int icm__other_format_check_down(icm_fileio *io, const char *top, const char *bottom);

/* Refuse (ICM_EREFUSED, naming the trash) when `location` or a folder above it, up to the
 * store's root, is a trash's table folder (named like a UUID, holding a journal): a listing
 * there would take trashed files for orphans. One stopping listing per such folder, none for
 * the rest. Returns 0, ICM_EREFUSED, ICM_ENOMEM or the listing's error. */
int icm__other_format_check_trash_above(icm_fileio *io, const char *location);

/* The trash holding `location` (a file or a folder): the folder above the nearest of
 * `location` and the folders above it, up to the store's root, that is a trash's table folder
 * (named like a UUID, holding a journal), as icm__other_format_check_trash_above tells it.
 * *trash: that trash's name (icm__free), or NULL when there is none. Where icemaint makes a
 * table reference a file (add-files, register-table): a trashed file is deleted by `trash
 * expire` and moved away by `trash restore`, which see no table's references. Returns 0,
 * ICM_ENOMEM or a listing's error. */
int icm__other_format_trash_holding(icm_fileio *io, const char *location, char **trash);

/* Refuse (ICM_EREFUSED, naming `location` and the trash) when icm__other_format_trash_holding
 * finds a trash holding `location`, or the place a symbolic link on its way leads to (the
 * location icm_fileio_resolve gives; a location it cannot resolve is looked at by its name
 * only). On this machine's disk also by where the file lies on its file system (adversary
 * round 7, finding 3: a bind mount of a trash's folder names a trashed file with no trash
 * above its name): unless the mount holding the file shows a whole file system mounted
 * nowhere else, the mount table's ROOT gives the file's path on its file system, and each
 * folder above it named like a table-uuid is looked at (`journal/<journal>`, opendir) through
 * a mount whose path to the file stats to the file. Refused too (ICM_EREFUSED, "cannot be
 * told"): such a folder that no mount shows, with the file in its `files/`; and any local file
 * that exists when the mount table cannot be read or no mount in it holds the file. `undone` says what the caller does not do
 * ("added", "registered"). Returns 0, ICM_EREFUSED, ICM_ENOMEM, a listing's error, or ICM_EIO
 * (a journal folder seen through a mount cannot be read: the last error names it). */
int icm__other_format_refuse_trashed(icm_fileio *io, const char *location, const char *undone);

/* When the folder `folder` is a trash's table folder (named like a UUID, holding a journal):
 * refuse (ICM_EREFUSED) naming the trash, the folder above; `hint` ends the message as for
 * icm__other_format_refuse. One stopping listing of `folder/journal`, none for a folder not
 * named like a UUID. Returns 0, ICM_EREFUSED, ICM_ENOMEM or the listing's error. */
int icm__other_format_check_trash_folder(icm_fileio *io, const char *folder, const char *hint);

/* Each of the table's roots (location, write.data.path, write.metadata.path): expiry's
 * check before it commits and deletes. */
int icm__other_format_check_roots(icm_fileio *io, const icm_table_metadata *md);

/* Whether a component of the relative path `rest` (a listed file's part below the listing
 * location; its last component, the file's name, is not looked at) is `_delta_log` or
 * `.hoodie`, or `rest` ends in a trash journal (`<table-uuid>/journal/<name>.jsonl`):
 * which one, and in *offset where that component (the table-uuid's, for a trash) starts in
 * `rest` (the folder holding it, the trash, is the part before). A scan of the name, no I/O. */
icm__other_format icm__other_format_in_path(const char *rest, size_t *offset);

/* The refusal for `format` found in the folder `folder`; `hint` ends the message (NULL:
 * "(no override)"). */
int icm__other_format_refuse(icm__other_format format, const char *folder, const char *hint);

#endif /* ICM_MAINT_OTHER_FORMAT_H */
