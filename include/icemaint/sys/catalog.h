/*
 * icemaint/sys/catalog.h: the catalog back-end vtable, for authors of catalog back ends
 * (SQLite VFS style: a back end embeds `struct icm_catalog` first in its own struct).
 *
 * The generic layer (icemaint/catalog.h) parses identifiers into levels, and for pointer-swap
 * back ends (SQL, filesystem) checks a commit's requirements and applies its updates to the
 * base (icemaint/update.h), builds the metadata to commit (metadata-log, last-updated-ms),
 * reconciles unknown outcomes by reloading, deletes files on proven failure and applies the
 * metadata retention properties: such a back end only records and swaps the pointer to the
 * current metadata file and writes that file where its layout wants it. A back end that takes
 * requirements and updates itself (REST) sets `commit_changes` instead (version 2).
 */
#ifndef ICEMAINT_SYS_CATALOG_H
#define ICEMAINT_SYS_CATALOG_H

#include "../catalog.h"

ICM_BEGIN_DECL

/** A parsed identifier, all borrowed: the namespace as `levels` (n_levels of them; a level
 *  may contain a dot), the same levels joined with '.' in `ns` (the form Java's JdbcCatalog
 *  and PyIceberg's SqlCatalog store), and `name` the table name. The public dotted API is
 *  parsed into levels at its dots (the last dot separates the table name). A single-table
 *  filesystem catalog (icm_table_open_dir) gets "" and no levels. */
typedef struct icm_table_ident {
    const char *ns;
    const char *name;
    /* ---- version 2 ---- */
    const char *const *levels;
    size_t n_levels;
} icm_table_ident;

/** What load_table_info gives (version 2). Owned by the caller after the call: release with
 *  icm_catalog_table_info_dispose. */
typedef struct icm_catalog_table_info {
    char *metadata_location;           /**< current metadata file (new string) */
    icm_table_metadata *metadata;      /**< that metadata when the catalog has it already
                                            (REST's LoadTableResult); NULL = read the file */
    icm_property *config;              /**< the table's configuration (FileIO properties,
                                            credentials); keys and values owned */
    size_t n_config;
} icm_catalog_table_info;

/** Free what an icm_catalog_table_info holds (the struct itself is the caller's). */
ICM_EXTERN(void) icm_catalog_table_info_dispose(icm_catalog_table_info *info);


/**
 * Back-end methods. Slots are only ever appended; `version` says which exist. Every method
 * returns 0 or a negative icm code and sets the last error. Names passed to callbacks are
 * borrowed for the duration of the call.
 */
typedef struct icm_catalog_methods {
    int version;        /**< ICM_CATALOG_METHODS_VERSION */
    const char *kind;   /**< "sql", "hadoop", ... */
    /** Current metadata location (new string). ICM_ENOTFOUND when the table does not exist. */
    int (*load_table)(icm_catalog *cat, const icm_table_ident *id, char **out_location);
    /**
     * Write `md` as the next metadata file after `base_location` and swap the pointer.
     * Return 0 (swapped), ICM_ECOMMIT_FAILED (provably not applied), ICM_ECOMMIT_UNKNOWN
     * (outcome open), or another negative code when nothing was swapped and nothing is pending
     * (e.g. the write failed). Always set *out_file to the location of the metadata file this
     * call created and left in place (NULL when none): the generic layer deletes it on FAILED,
     * keeps it on UNKNOWN and adopts it on success. A back end must never report a file it did
     * not create (Hadoop: a v<N+1> someone else published).
     */
    int (*commit)(icm_catalog *cat, const icm_table_ident *id, const char *base_location,
                  const icm_table_metadata *md, char **out_file);
    /** Write the first metadata file of a new table and record it; ICM_EEXISTS when the table
     *  exists (then leave no file behind). *out_location: the new file (new string). */
    int (*create_table)(icm_catalog *cat, const icm_table_ident *id,
                        const icm_table_metadata *md, char **out_location);
    /** Record an existing metadata file as a new table; ICM_EEXISTS, ICM_EUNSUPPORTED. */
    int (*register_table)(icm_catalog *cat, const icm_table_ident *id, const char *location);
    /** Forget a table without deleting files; ICM_ENOTFOUND, ICM_EUNSUPPORTED. */
    int (*drop_table)(icm_catalog *cat, const icm_table_ident *id);
    /** Create a namespace; ICM_EEXISTS when it exists. */
    int (*create_namespace)(icm_catalog *cat, const char *ns);
    /** Call cb with every namespace known to the catalog, dotted in full, at any level (the
     *  generic layer filters, de-duplicates and sorts). */
    int (*list_all_namespaces)(icm_catalog *cat, icm_name_cb cb, void *payload);
    /** Call cb with the name of every table in exactly `ns` (any order). */
    int (*list_tables)(icm_catalog *cat, const char *ns, icm_name_cb cb, void *payload);
    /** Location for a new table without an explicit one (new string); ICM_EINVALID when the
     *  catalog has no warehouse. */
    int (*default_table_location)(icm_catalog *cat, const icm_table_ident *id, char **out);
    /** Release the back end's struct (the generic fields are released by the caller). */
    void (*free)(icm_catalog *cat);

    /* ---- version 2 (each may be NULL: the generic layer then uses the version 1 slot) ---- */

    /** load_table with what a REST catalog returns: the location, the metadata when the
     *  catalog has it, the table's configuration. ICM_ENOTFOUND when the table does not
     *  exist. On failure *out holds nothing. */
    int (*load_table_info)(icm_catalog *cat, const icm_table_ident *id,
                           icm_catalog_table_info *out);
    /**
     * Commit requirements + updates (icemaint/update.h) the way a REST catalog does: the
     * catalog checks the requirements against the table's current state and applies the
     * updates itself (and records metadata-log, last-updated-ms and retention as it does).
     * `base_location` is the metadata the changes were decided on (a catalog that can,
     * compares it too). Return 0 with *out_location the new current metadata file (new
     * string), ICM_ECOMMIT_FAILED (definitively not applied: a requirement failed, a
     * conflict), ICM_ECOMMIT_UNKNOWN (outcome open: the caller deletes nothing), or another
     * negative code when nothing was applied. NULL: a pointer-swap catalog; the generic layer
     * checks, applies and writes, then calls `commit` to compare-and-swap (one shared
     * function for every pointer-swap back end, icm_table_commit_changes).
     */
    int (*commit_changes)(icm_catalog *cat, const icm_table_ident *id, const char *base_location,
                          const icm_table_changes *changes, char **out_location);
    /** One page of the direct children of `parent` (levels; n_parent 0 = top level), each as
     *  its last level. page_token NULL = the first page. ICM_ENOTFOUND when parent does not
     *  exist. NULL: the generic layer filters list_all_namespaces. */
    int (*list_namespaces_page)(icm_catalog *cat, const char *const *parent, size_t n_parent,
                                const char *page_token, icm_name_cb cb, void *payload,
                                char **next_page_token);
    /** One page of the table names in exactly namespace `ns` (levels). NULL: list_tables. */
    int (*list_tables_page)(icm_catalog *cat, const char *const *ns, size_t n_ns,
                            const char *page_token, icm_name_cb cb, void *payload,
                            char **next_page_token);
} icm_catalog_methods;

/** Version 2 appended load_table_info, commit_changes and the paged listings, and the levels
 *  of icm_table_ident; a version 1 back end (its struct ends at `free`) still works. */
#define ICM_CATALOG_METHODS_VERSION 2

/** Every back end's handle starts with this struct. Fill it with icm_catalog_init_base(). */
struct icm_catalog {
    const icm_catalog_methods *methods;
    char *name;             /**< owned by the generic layer */
    icm_fileio *io;         /**< borrowed (or owned_io) */
    icm_fileio *owned_io;   /**< freed by icm_catalog_free; NULL when borrowed */
};

/** Set the generic fields (copies name; `io` borrowed). On failure the back end still frees
 *  itself with icm_catalog_free(). @return 0, ICM_EINVALID (io NULL), ICM_ENOMEM. */
ICM_EXTERN(int) icm_catalog_init_base(icm_catalog *cat, const icm_catalog_methods *methods,
                                      const char *name, icm_fileio *io);

/**
 * Helper for back ends: write `md` with create-new as the next metadata file after
 * `base_location` (NULL for a new table): `<dir>/<NNNNN>-<uuid>.metadata.json` where dir is
 * `write.metadata.path` or `<location>/metadata`, NNNNN the base's number + 1 (0 when the base
 * name carries none), `.gz.metadata.json` + gzip when `write.metadata.compression-codec=gzip`.
 * @param[out] out_location new string (icm_free)
 * @return 0; ICM_EINVALID (unknown codec); ICM_EEXISTS; ICM_EIO; ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_catalog_write_metadata_file(char **out_location, icm_fileio *io,
                                                const char *base_location,
                                                const icm_table_metadata *md);

ICM_END_DECL

#endif /* ICEMAINT_SYS_CATALOG_H */
