/*
 * catalog/catalog_internal.h: helpers shared by the catalog back ends, the table handle and the
 * configuration loader (identifier parsing, uuids, building a new table's metadata, the
 * single-table filesystem catalog behind icm_table_open_dir). Not installed.
 */
#ifndef ICM_CATALOG_INTERNAL_H
#define ICM_CATALOG_INTERNAL_H

#include "icemaint/catalog.h"
#include "icemaint/sys/catalog.h"

/* Split "a.b.tbl" into ns "a.b" and name "tbl" (new strings). ICM_EINVALID when there is no
 * namespace, or a part is empty. */
int icm__ident_parse(const char *identifier, char **out_ns, char **out_name);

/* An identifier with its own storage: `id` points into it (levels split from ns at its dots).
 * icm__ident_make copies ns and name; "" ns gives no levels. Returns 0 or ICM_ENOMEM. */
typedef struct icm__ident {
    char *ns, *name;
    char **levels;
    size_t n_levels;
    icm_table_ident id;
} icm__ident;
int icm__ident_make(icm__ident *out, const char *ns, const char *name);
void icm__ident_dispose(icm__ident *ident);
/* From namespace levels as given (a level may hold a dot; ns is them joined with '.'). */
int icm__ident_make_levels(icm__ident *out, const char *const *levels, size_t n,
                           const char *name);
/* icm__ident_parse into an icm__ident. */
int icm__ident_parse_levels(const char *identifier, icm__ident *out);

/* Version 2 slots of a back end's methods, NULL when it has not got them (an older struct). */
#define ICM__CATALOG_V2(cat, slot)                                                             \
    ((cat)->methods->version >= 2 ? (cat)->methods->slot : NULL)

/* load_table through the version 2 slot when the back end has it (metadata and configuration
 * too), else the version 1 slot (location only). */
int icm__catalog_load_info(icm_catalog *cat, const icm_table_ident *id,
                           icm_catalog_table_info *out);
/* Only the location (new string). */
int icm__catalog_load_location(icm_catalog *cat, const icm_table_ident *id, char **out);

/* Build the metadata of a new format-v2 table (no snapshots) at `location`. */
int icm__metadata_build_new(icm_table_metadata **out, const char *location,
                            const icm_create_table_options *opts);

/* Serialise `md` as the catalog's metadata file content: gzip when the new metadata's
 * `write.metadata.compression-codec` is gzip. *out_gzip tells which (the file name differs). */
int icm__metadata_serialise(const icm_table_metadata *md, char **out, size_t *out_len,
                            bool *out_gzip);

/* Version number Java's metastore catalogs read from a metadata file name: the digits before
 * the first '-' of `<NNNNN>-<uuid>.metadata.json`; -1 when the name has none. */
int64_t icm__metadata_file_version(const char *location);

/* Filesystem catalog over exactly one table directory (icm_table_open_dir). The identifier
 * passed to its methods is ignored. */
int icm__hadoop_open_table_dir(icm_catalog **out, icm_fileio *io, const char *table_dir);

/* The table directory a single-table filesystem catalog was opened on (borrowed). */
const char *icm__hadoop_table_dir(const icm_catalog *cat);

/* A version 2 paged listing (list_namespaces_page, list_tables_page). */
typedef int (*icm__catalog_page_fn)(icm_catalog *cat, const char *const *levels,
                                    size_t n_levels, const char *page_token, icm_name_cb cb,
                                    void *payload, char **next_page_token);

/* Every page of one listing of the namespace `levels` (n_levels 0: the top level), page tokens
 * followed until the back end gives none. Returns 0, the back end's codes or cb's. */
int icm__catalog_pages(icm_catalog *cat, icm__catalog_page_fn fn, const char *const *levels,
                       size_t n_levels, icm_name_cb cb, void *payload);

/* One table of a catalog: its identifier (namespace levels as the catalog lists them, a level
 * may hold a dot; id->ns is them joined with '.') and current metadata location, all borrowed
 * for the call. When the catalog lists the table but could not give its metadata location
 * (a 403 for a principal that may list but not load it, a 5xx, a timeout, a 404 while a fresh
 * listing still names it), `pointer` is NULL and `why` says so in one line (with the load's
 * error): where its files lie cannot be told. Return 0 to go on. */
typedef int (*icm__catalog_table_cb)(const icm_table_ident *id, const char *pointer,
                                     const char *why, void *payload);

/* Call cb for every table of `cat` (catalog_tables.c); none for a back end without listing
 * methods. A back end with the version 2 paged listings is walked level by level, so a
 * namespace level holding a dot is one level (joining and splitting on '.' would list another
 * namespace's tables, or none, in its place). A listed table is passed over only when it is
 * proven gone: its load says "not found" and a fresh listing of its namespace no longer names
 * it (a 404 alone may hide a table from a principal; adversary round 20, H4). Cost: one load
 * per table, and one more listing per table whose load said "not found". Returns 0, the
 * listing's codes, ICM_ENOMEM or the callback's non-zero value. */
int icm__catalog_each_table(icm_catalog *cat, icm__catalog_table_cb cb, void *payload);

/* Another table a catalog's store holds a pointer for: its catalog name (a SQL database
 * holds the tables of every catalog_name it is shared by), dotted namespace, name, current
 * metadata file, the folders its files go to (location, write.data.path,
 * write.metadata.path, and Java's legacy data paths write.object-storage.path and
 * write.folder-storage.path, which its LocationProviders still honour; NULL when unset), and
 * that metadata itself (for its metadata-log). Borrowed.
 *
 * Metadata the strict reader rejects (a ref to a snapshot no longer there, a property value
 * that is not a string, a duplicate key: other tools read it) is read leniently for its places
 * (spec/metadata_places.h): md is NULL, `lenient` is set, roots and log come from its JSON.
 * When even that fails (not JSON at all, unreadable, no location), `unreadable` says why in one
 * line naming the metadata file, and roots[0] is the folder above the pointer's `metadata/`
 * folder when the pointer lies in one (the default layout), else NULL: where the table's
 * files go cannot be told, and the callers keep to the safe side (maint/places.c). A missing
 * metadata file (md_rc ICM_ENOTFOUND: no reader can read that table), or one on a back end the
 * FileIO does not serve (ICM_EUNSUPPORTED: nor can it delete there), is neither: the table is
 * judged by its pointer and that default location. A table the catalog lists but could not
 * load (icm__catalog_table_cb) has no pointer: `pointer` and every root are NULL, md_rc is
 * ICM_ERROR (never ICM_ENOTFOUND: a listed table is not known to be gone) and `unreadable`
 * says why; the callers keep to the safe side without asking where its places are. */
#define ICM__OTHER_TABLE_N_ROOTS 5
typedef struct icm__other_table {
    const char *catalog_name;
    const char *ns;
    const char *name;
    const icm_table_ident *id; /* its levels, when the catalog listed it (NULL: a SQL row) */
    const char *pointer;          /* NULL: listed, but not loaded (unreadable says why) */
    const char *roots[ICM__OTHER_TABLE_N_ROOTS];
    const icm_table_metadata *md; /* its current metadata; NULL when it could not be read */
    int md_rc;                    /* why not (icm_table_metadata_read's code); 0 when read */
    bool lenient;                 /* md NULL, but roots and log read from its JSON */
    const char *const *log;       /* (lenient) its metadata-log's files, n_log of them */
    size_t n_log;
    const char *unreadable;       /* why its places cannot be told; NULL when they can */
} icm__other_table;

/* t's name for messages (new string; NULL: ICM_ENOMEM): ns.name, a level or the name holding a
 * dot between backquotes (n.`b.t`, which is not n.b.t); a SQL row's namespace as it is. */
char *icm__other_table_name(const icm__other_table *t);

/* The names of icm__other_table.roots (the metadata's own property names), for messages. */
#define ICM__OTHER_TABLE_ROOT_NAMES                                                            \
    {"location", "write.data.path", "write.metadata.path", "write.object-storage.path",        \
     "write.folder-storage.path"}

typedef int (*icm__other_table_cb)(const icm__other_table *t, void *payload);

/* Call cb for every table with a pointer that `cat`'s store knows of except `self` ("ns.name"
 * in `cat`; NULL = none): for a SQL catalog every row of its database, whatever the
 * catalog_name (issue #16: a table of another catalog in the same database is still a
 * table); for another back end its own tables (icm__catalog_each_table; one it lists but
 * could not load is passed with pointer NULL and `unreadable` saying why). `self` is split at
 * its dots into namespace levels and a name, and only a table with exactly those parts is
 * skipped (never one whose parts only joined with '.' are `self`: namespace `a` with table
 * `b.t` is not `a.b.t`). Costs one metadata read per table. Returns 0, the listing's codes,
 * ICM_ENOMEM or cb's non-zero value. */
int icm__catalog_each_other_table(icm_catalog *cat, const char *self, icm__other_table_cb cb,
                                  void *payload);

/* icm__catalog_each_other_table for the table `t` of a catalog (its own parts as `self`: a
 * level holding a dot stays whole when it was opened by levels), which also skips a table
 * named like `t` only when it is `t` by what it is: its table-uuid (its metadata file when
 * either has none), read from its metadata; a table whose name is `t`'s only joined with '.'
 * must have both. A table named like `t` that cannot be read or loaded is another table. Used
 * by the orphan sweep's guard, expiry's foreign-file hold and metadata retention after a
 * commit, so all three see the same tables. Returns the codes of
 * icm__catalog_each_other_table. */
int icm__catalog_each_other_table_of(icm_table *t, icm__other_table_cb cb, void *payload);

/* The parts `t` was opened by in its catalog (its namespace levels, a level holding a dot kept
 * whole, and its name); NULL for a table named by its directory or its metadata file. Borrowed
 * from `t`. (table/table.c) */
const icm_table_ident *icm__table_ident(const icm_table *t);

/* Call cb for every table with a pointer in the SQLite database file `db` (every
 * catalog_name; metadata read through `io`): a database another catalog of the configuration
 * uses. Nothing is done for a file that is missing or not a SQLite database, or a database
 * without iceberg_tables. Returns 0, the store's codes, ICM_ENOMEM or cb's non-zero value. */
int icm__database_each_table(icm_fileio *io, const char *db, icm__other_table_cb cb,
                             void *payload);

/* register-table's check: ICM_EREFUSED (naming the table) when a table of `cat` already has
 * `metadata_location` as its pointer or md's location as its location. Returns 0, that, or
 * icm__catalog_each_table's codes. */
int icm__catalog_check_unshared(icm_catalog *cat, const char *metadata_location,
                                const icm_table_metadata *md);

/* The own-metadata check (table/table_own.c, icm_table_check_own_metadata): `md_location`
 * must lie inside md's `<location>/metadata` or `write.metadata.path`, and `table_dir` (NULL:
 * not a directory table) must be md's location, by where they really are (io's links and path
 * map); while io's path map moves the location, a write.data.path / write.metadata.path
 * outside it must be mapped too. `shown` names the table in the message, whose remedy is a
 * --path-map to work on the copy, or with `registering` register-table's --force. Returns 0;
 * ICM_EREFUSED; ICM_EINVALID (no location); icm_fileio_resolve's I/O codes; ICM_ENOMEM. */
int icm__table_check_own(icm_fileio *io, const icm_table_metadata *md, const char *md_location,
                         const char *table_dir, const char *shown, bool registering);

/* Whether `a` and `b` name the same place: by name (icm__location_equal), else by where both
 * really are on `io` (icm_fileio_resolve: symbolic links, `..` and the path map resolved); a
 * missing place is nowhere (false). table_own.c's comparison, for metadata retention.
 * Returns 0, ICM_ENOMEM or icm_fileio_resolve's other codes (then *out is false). */
int icm__places_same(icm_fileio *io, const char *a, const char *b, bool *out);

/* Last path segment (after the final '/'); the whole string when there is none. */
const char *icm__basename(const char *location);

/* `uri` for messages, with the password of `scheme://user:password@host` shown as "***". */
void icm__redact_uri(const char *uri, char *buf, size_t size);

#endif
