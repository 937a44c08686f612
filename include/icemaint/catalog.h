/*
 * icemaint/catalog.h: catalogs (where a table's current metadata file is recorded) and table
 * handles, with the one commit path every maintenance operation goes through.
 *
 * Catalog kinds:
 *  - SQL: the schema of Java's JdbcCatalog and PyIceberg's SqlCatalog (tables `iceberg_tables`
 *    and `iceberg_namespace_properties`, schema V0 or V1), on SQLite or PostgreSQL, keyed by
 *    catalog name so several catalogs can share one database;
 *  - filesystem ("hadoop"): `<warehouse>/<ns...>/<table>/metadata/v<N>.metadata.json` plus
 *    `version-hint.text`; also usable on a single table directory (icm_table_open_dir);
 *  - static: a bare metadata file, read-only (icm_table_open_static).
 *
 * Identifiers are dotted text: "ns.table", "ns1.ns2.table" (the last dot separates the table
 * name; the namespace is stored dotted, as Java and PyIceberg store it). Back ends receive
 * them as namespace levels and a name (icm_table_load_levels gives levels directly).
 *
 * Commit outcome (the reason this module exists; docs/semantics.md#commit-outcomes):
 * icm_table_commit() returns
 *  - 0 when the new metadata file is the table's current metadata (or provably became part of
 *    its history);
 *  - ICM_ECOMMIT_FAILED only when the change provably did NOT apply and never will (the
 *    compare-and-swap matched no row, the version file already existed, the statement never
 *    reached the server). The caller may delete the files it wrote for this commit and retry;
 *  - ICM_ECOMMIT_UNKNOWN when the outcome is open (connection lost after the statement was sent,
 *    server error during the swap, ...). The caller must NOT delete anything it wrote: the table
 *    may already reference it.
 *
 * Thread safety: a catalog or table handle is used by one thread at a time. Separate handles
 * (also on the same database or table directory, also in other processes) may commit
 * concurrently: exactly one commit per base version wins.
 *
 * Back-end authors: the vtable is in icemaint/sys/catalog.h.
 */
#ifndef ICEMAINT_CATALOG_H
#define ICEMAINT_CATALOG_H

#include "common.h"
#include "fileio.h"
#include "metadata.h"
#include "update.h"

ICM_BEGIN_DECL

typedef struct icm_catalog icm_catalog;
typedef struct icm_table icm_table;

/** Name callback for listings: return 0 to go on; a non-zero value stops the listing and is
 *  returned by the listing call. `name` is borrowed for the duration of the call. */
typedef int (*icm_name_cb)(const char *name, void *payload);

/* ====================================================================================== */
/* Catalogs                                                                                */
/* ====================================================================================== */

/**
 * Open a SQL catalog (JdbcCatalog / SqlCatalog schema).
 *
 * @param[out] out    new catalog (icm_catalog_free)
 * @param name        catalog name: the `catalog_name` column value of every row it reads/writes
 * @param uri         SQLAlchemy-style URI: `sqlite:///relative/path.db`, `sqlite:////abs.db`,
 *                    `sqlite:///:memory:`, `postgresql://user:pw@host:port/db` (also
 *                    `postgresql+psycopg2://...`, `postgresql+psycopg://...`; query options such
 *                    as `?sslmode=disable` are passed to libpq)
 * @param warehouse   base location for new tables (`<warehouse>/<ns>/<table>`); may be NULL
 *                    (then icm_catalog_create_table needs an explicit location). A relative
 *                    or dotted one is made absolute once, here (icm_location_canonical); an
 *                    absolute one keeps its form
 * @param io          FileIO used to write and delete metadata files; borrowed, must outlive
 *                    the catalog
 * @param properties  further catalog properties (may be NULL when n == 0): `init_catalog_tables`
 *                    ("true" default: create missing tables with the V1 schema)
 * The schema version of an existing database is detected (V1 when `iceberg_tables` has the
 * column `iceberg_type`, else V0) and never migrated.
 * @return 0; ICM_EINVALID (bad URI, io NULL); ICM_EUNSUPPORTED (database kind, or a
 *         postgresql:// URI in a library built with ICM_WITH_POSTGRES=OFF); ICM_ENET /
 *         ICM_EAUTH (cannot connect); ICM_EIO (SQLite cannot open); ICM_ENOTFOUND (tables
 *         absent and init_catalog_tables=false; or no SQLite database file at that path: the
 *         message names it absolute, "no such catalog database"); ICM_ENOMEM. SQL errors carry
 *         the SQLSTATE (PostgreSQL) in icm_error_last()->remote_code.
 * A SQLite database file is never created here (a mistyped path must not become a new, empty
 * catalog that later commands silently use): create it first (PyIceberg, or
 * icm_catalog_sqlite_create).
 */
ICM_EXTERN(int) icm_catalog_open_sql(icm_catalog **out, const char *name, const char *uri,
                                     const char *warehouse, icm_fileio *io,
                                     const icm_property *properties, size_t n_properties);

/**
 * Create the empty SQLite database file a `sqlite:///...` URI names, when it is missing (an
 * existing one is left as it is), for a program that sets up a new catalog (tests, tools);
 * icemaint's CLI never calls it. icm_catalog_open_sql then creates the catalog's tables.
 * @return 0; ICM_EINVALID (not a SQLite file URI: another scheme, or `:memory:`); ICM_EIO
 *         (SQLite cannot create it); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_catalog_sqlite_create(const char *uri);

/**
 * Open a filesystem ("hadoop") catalog over `warehouse`: namespaces are directories and a table
 * is `<warehouse>/<ns1>/<ns2>/<table>/metadata/v<N>.metadata.json`.
 * Commits need a FileIO whose create_new is an atomic no-replace publish (local, mem); the
 * table property `write.metadata.path` is refused, as in Java.
 * Namespaces (directories) can be listed and created only when the warehouse is local.
 * A relative or dotted warehouse (`wh`, `./wh`, `a/../wh`, `file:wh`) is made absolute once,
 * here (icm_location_canonical), so no table directory, metadata file or metadata-log entry
 * of the catalog depends on the working directory; an absolute one keeps its form.
 * @param io borrowed, must outlive the catalog.
 * @return 0; ICM_EINVALID (empty warehouse, io NULL); the codes of icm_location_canonical;
 *         ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_catalog_open_hadoop(icm_catalog **out, const char *name,
                                        const char *warehouse, icm_fileio *io);

/**
 * Open an Iceberg REST catalog, configured by PyIceberg's property names (all copied):
 *  - `uri` (required, http:// or https://), `warehouse` (sent as `GET /v1/config?warehouse=`),
 *    `prefix` (normally the server's), `header.<Name>` (added to every request);
 *  - `token` (a static bearer token), `credential` (`client_id:client_secret`, split at the
 *    first ':'; without one the secret alone) for OAuth2 client credentials against
 *    `oauth2-server-uri` (else the deprecated `{uri}/v1/oauth/tokens`), with `scope`
 *    (default `catalog`), `audience`, `resource`; the token is renewed before it expires and
 *    once after a 401/419;
 *  - `rest.sigv4-enabled`, `rest.signing-region`, `rest.signing-name` (default
 *    `execute-api`), credentials from `rest.access-key-id` / `rest.secret-access-key` /
 *    `rest.session-token`, `client.*`, else the AWS chain;
 *  - TLS: `ssl.cabundle` (a PEM file; `false` turns verification off, as PyIceberg's
 *    requests `verify`), `ssl.client.cert` and `ssl.client.key` (mutual TLS) (in
 *    .pyiceberg.yaml the nested `ssl: {cabundle: ..., client: {cert: ..., key: ...}}`);
 *  - `rest.client.max-retries` (Java's name; default 5): re-sends of a request the server did
 *    not act on (429; 503 with Retry-After) and of a GET after an I/O error or 5xx.
 * `GET {uri}/v1/config` is sent here; the catalog's properties are then the server's
 * `defaults` < these < the server's `overrides` (which may set `prefix` and move `uri`).
 * Tables load with `X-Iceberg-Access-Delegation: vended-credentials`, and their FileIO is
 * built from the answer's `config` and `storage-credentials` (table/table.c). Commits send
 * requirements and updates (icm_table_commit_changes); the outcome mapping is documented in
 * src/catalog/rest/rest_catalog.c (409 FAILED; 400/401/403/404 not applied; 5xx, timeouts,
 * a connection lost after the send and an unreadable 200 UNKNOWN).
 * @param io FileIO for metadata files the catalog is asked to read (register-table); a
 *        table's own FileIO is derived from it when it is a resolving FileIO
 *        (icm_fileio_for_table); borrowed, must outlive the catalog.
 * @return 0; ICM_EINVALID (no http(s) uri, a bad property, an answer that is not the spec's
 *         shape); ICM_EAUTH (the server or the token endpoint refused: the message has the
 *         server's error, never the secret); ICM_ENET / ICM_ETIMEOUT; other statuses as
 *         their codes with icm_error_last()->http_status and remote_code (the Iceberg error
 *         `type`); ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_catalog_open_rest(icm_catalog **out, const char *name, icm_fileio *io,
                                      const icm_property *properties, size_t n_properties);

/** Options for icm_catalog_open_config(); zero-initialise (or ICM_CATALOG_CONFIG_OPTIONS_INIT)
 *  and set what you need. All strings are copied. */
typedef struct icm_catalog_config_options {
    unsigned int version;     /**< ICM_CATALOG_CONFIG_OPTIONS_VERSION (0 is accepted as 1; a
                                   later one is ICM_EINVALID) */
    const char *name;         /**< catalog name; NULL = `default-catalog` of the config, else
                                   "default" */
    const char *config_file;  /**< explicit YAML file; NULL = search `$PYICEBERG_HOME`, `~`, cwd
                                   for `.pyiceberg.yaml` (the first found wins) */
    const char *uri;          /**< overrides `uri` (like PyIceberg's --uri) */
    const char *warehouse;    /**< overrides `warehouse` */
    icm_fileio *io;           /**< borrowed FileIO; NULL = a local FileIO owned by the catalog */
    bool ignore_environment;  /**< true = do not read PYICEBERG_* variables nor $HOME (tests) */
} icm_catalog_config_options;

#define ICM_CATALOG_CONFIG_OPTIONS_VERSION 1
#define ICM_CATALOG_CONFIG_OPTIONS_INIT {ICM_CATALOG_CONFIG_OPTIONS_VERSION, NULL, NULL, NULL, \
                                         NULL, NULL, false}

/** Set `opts` to the defaults of `version` (as ICM_CATALOG_CONFIG_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_catalog_config_options_init(icm_catalog_config_options *opts,
                                                unsigned version);

/**
 * Resolve a catalog's properties as PyIceberg does and collect them (no catalog is opened):
 *  1. the YAML file (explicit, else the first `.pyiceberg.yaml` found in `$PYICEBERG_HOME`,
 *     home, current directory), keys lower-cased: `catalog: {<name>: {k: v}}`,
 *     `default-catalog: <name>`;
 *  2. environment variables `PYICEBERG_<A>__<B>__<C>` override the file: lower-cased, split at
 *     `__` into at most 3 parts, `_` inside a part becomes `-` (`PYICEBERG_CATALOG__PROD__URI`
 *     sets catalog.prod.uri; `PYICEBERG_DEFAULT_CATALOG` sets default-catalog);
 *  3. `opts->uri` / `opts->warehouse` override both (an empty value does not override).
 * @param[out] out_name  catalog name chosen (icm_free)
 * @param[out] out_props, out_n  new array (icm_catalog_properties_free)
 * @return 0; ICM_ENOTFOUND (explicit config_file missing); ICM_EINVALID (YAML syntax or shape:
 *         the message names file and line); ICM_EUNSUPPORTED (a YAML file to read, explicit or
 *         found, in a library built with ICM_WITH_YAML=OFF: refused, never skipped);
 *         ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_catalog_config_resolve(char **out_name,
                                           icm_property **out_props, size_t *out_n,
                                           const icm_catalog_config_options *opts);

/** Free an array from icm_catalog_config_resolve (keys and values too). NULL is ok. */
ICM_EXTERN(void) icm_catalog_properties_free(icm_property *props, size_t n);

/**
 * The local files the catalogs that this configuration names live in, found without opening
 * them (nothing is created): the YAML file that was read, and for the `sqlite://` uri of EVERY
 * catalog it names (YAML and PYICEBERG_CATALOG__* variables, not only the chosen one, whose
 * uri has the overrides applied) the database file with its `-journal`, `-wal` and `-shm`
 * (whether they exist or not). Each is absolute and canonical (icm_location_canonical) and,
 * when links lead elsewhere, also given by its real path (realpath; of its folder for a file
 * that does not exist). The orphan sweep never plans these and refuses a listing location
 * that holds one (icm_orphan_options.catalog_files): a second catalog's database beside the
 * first, or the real file behind a linked configuration, is the catalog's own too
 * (docs/semantics.md#sweep-keep-set, #sweep-refusals).
 * @param opts as for icm_catalog_config_resolve (NULL = defaults)
 * @param[out] out, out_n new array (icm_catalog_own_files_free); empty when no configuration
 *        file was found and the uri names no SQLite file
 * @return 0; the codes of icm_catalog_config_resolve; ICM_EINVALID (a malformed sqlite uri
 *         of any catalog named: where its database lies cannot be told); the codes of
 *         icm_location_canonical; ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_catalog_config_own_files(char ***out,
                                             size_t *out_n, const icm_catalog_config_options *opts);

/** Free an array from icm_catalog_config_own_files. NULL is ok. */
ICM_EXTERN(void) icm_catalog_own_files_free(char **files, size_t n);

/**
 * Open the catalog that the PyIceberg-style configuration names (icm_catalog_config_resolve).
 * Kind: `type: sql` or a `uri` starting with `sqlite`/`postgresql` → SQL; `type: hadoop` (or
 * `filesystem`) with `warehouse` → filesystem catalog; `type: rest` or a `uri` starting with
 * `http://` / `https://` → REST catalog (icm_catalog_open_rest; with no `opts->io` its FileIO
 * is a resolving FileIO built from the same properties, so tables get their vended
 * credentials).
 * @return 0; ICM_ENOTFOUND (no configuration for that catalog name: the message says which
 *         files and variables were consulted); ICM_EUNSUPPORTED (glue, hive, ...);
 *         ICM_EINVALID; the codes of icm_catalog_open_sql / _hadoop.
 */
ICM_EXTERN(int) icm_catalog_open_config(icm_catalog **out,
                                        const icm_catalog_config_options *opts);

/** Close a catalog (and the FileIO it owns, if any). NULL is ok. */
ICM_EXTERN(void) icm_catalog_free(icm_catalog *cat);

/** Catalog name (borrowed). */
ICM_EXTERN(const char *) icm_catalog_name(const icm_catalog *cat);
/** Back-end kind: "sql", "hadoop", "rest". */
ICM_EXTERN(const char *) icm_catalog_kind(const icm_catalog *cat);
/** FileIO the catalog uses (borrowed). */
ICM_EXTERN(icm_fileio *) icm_catalog_fileio(const icm_catalog *cat);

/**
 * Current metadata location of a table.
 * @param[out] out new string (icm_free)
 * @return 0; ICM_ENOTFOUND (no such table); ICM_EINVALID (bad identifier); I/O or SQL codes.
 */
ICM_EXTERN(int) icm_catalog_load_table_location(char **out, icm_catalog *cat,
                                                const char *identifier);

/** Create a namespace (dotted). SQL: inserts the reserved property `exists=true`, as Java and
 *  PyIceberg do. @return 0; ICM_EEXISTS; ICM_EINVALID; I/O or SQL codes. */
ICM_EXTERN(int) icm_catalog_create_namespace(icm_catalog *cat, const char *ns);

/** True when the namespace exists (SQL: a property row or a table row has it, or a child of it).
 *  @return 0 and *out set; I/O or SQL codes. */
ICM_EXTERN(int) icm_catalog_namespace_exists(bool *out, icm_catalog *cat, const char *ns);

/**
 * List namespaces, each once, sorted: the children of `parent` (its direct sub-namespaces,
 * given dotted in full), or the top-level namespaces when `parent` is NULL or "".
 * @return 0; ICM_ENOTFOUND (parent given and missing); the callback's value; I/O or SQL codes.
 */
ICM_EXTERN(int) icm_catalog_list_namespaces(icm_catalog *cat, const char *parent,
                                            icm_name_cb cb, void *payload);

/** List table names (without namespace), sorted. @return 0; ICM_ENOTFOUND (no such namespace);
 *  the callback's value; I/O or SQL codes. */
ICM_EXTERN(int) icm_catalog_list_tables(icm_catalog *cat, const char *ns, icm_name_cb cb,
                                        void *payload);

/** What a new table looks like. JSON texts are the spec's `schema` and `partition-spec`
 *  objects (field ids as in the schema). */
typedef struct icm_create_table_options {
    unsigned int version;             /**< ICM_CREATE_TABLE_OPTIONS_VERSION */
    const char *schema_json;          /**< required: a spec "schema" object (type struct) */
    const char *partition_spec_json;  /**< NULL = unpartitioned; else a spec partition spec
                                           object ({"spec-id":0,"fields":[...]}) or its fields
                                           array */
    const char *location;             /**< NULL = `<warehouse>/<ns>/<table>` (PyIceberg's rule;
                                           filesystem catalog: the table directory); a relative
                                           or dotted one is recorded absolute
                                           (icm_location_canonical) */
    const icm_property *properties;   /**< table properties (copied) */
    size_t n_properties;
} icm_create_table_options;

#define ICM_CREATE_TABLE_OPTIONS_VERSION 1
/** No schema yet: set schema_json. */
#define ICM_CREATE_TABLE_OPTIONS_INIT {ICM_CREATE_TABLE_OPTIONS_VERSION, NULL, NULL, NULL, NULL, 0}

/** Set `opts` to the defaults of `version` (as ICM_CREATE_TABLE_OPTIONS_INIT).
 *  @return 0; ICM_EINVALID (NULL opts, or a version this library does not know). */
ICM_EXTERN(int) icm_create_table_options_init(icm_create_table_options *opts, unsigned version);

/**
 * Create a table: builds format v2 metadata (fresh table-uuid, no snapshots, unsorted sort
 * order 0, last-column-id / last-partition-id from the inputs), writes its first metadata file
 * with create-new (SQL: `<location>/metadata/00000-<uuid>.metadata.json`; filesystem:
 * `v1.metadata.json`) and records it. The namespace must exist (SQL).
 * @param[out] out_location new string (icm_free) naming the first metadata file; may be NULL
 * @return 0; ICM_EEXISTS (table exists; the file written is removed again); ICM_ENOTFOUND
 *         (namespace missing); ICM_EINVALID (an unknown opts->version, bad schema/spec
 *         JSON, no location and no warehouse); I/O or SQL codes.
 */
ICM_EXTERN(int) icm_catalog_create_table(char **out_location, icm_catalog *cat,
                                         const char *identifier,
                                         const icm_create_table_options *opts);

/**
 * Register an existing metadata file as a table (the file is read and validated first). The
 * location is recorded absolute (icm_location_canonical for a relative or dotted one; an
 * absolute one keeps its form).
 * Refused (ICM_EREFUSED, naming the other table) when a table of this catalog already has
 * this metadata file as its current one, or this metadata's table location: two tables
 * sharing files lose data at the first expiry or orphan sweep of either (each one's keep set
 * misses the other's files). ICM_REGISTER_ALLOW_SHARED (the CLI's --force) skips that check.
 * Refused (ICM_EREFUSED) too when the metadata file does not lie inside its own
 * `<location>/metadata` or `write.metadata.path`, compared by where they really are (the
 * catalog FileIO's links and path map): it belongs to a copy of a table folder, and
 * maintaining the registered table would delete and record the original's files (the
 * own-metadata check, icm_table_check_own_metadata). ICM_REGISTER_ALLOW_FOREIGN (also set by
 * the CLI's --force) skips that check.
 * Refused (ICM_EREFUSED, naming the trash) when the metadata file lies inside an icemaint
 * trash (`<trash>/<table-uuid>/files/` beside `journal/<name>.jsonl`; by its name, where
 * a link leads, and on local disk through any mount of its folder, a bind mount too; where
 * that cannot be told, the mount table unreadable, refused as well): `icm_trash_expire` would
 * delete it. No flag skips that check.
 * @return 0; ICM_EEXISTS; ICM_EREFUSED; ICM_ENOTFOUND (namespace or file missing);
 *         ICM_EINVALID (not table metadata); ICM_EUNSUPPORTED (filesystem catalog, as in
 *         Java); I/O or SQL codes.
 */
ICM_EXTERN(int) icm_catalog_register_table(icm_catalog *cat, const char *identifier,
                                           const char *metadata_location);

/** Flags of icm_catalog_register_table_flags. */
#define ICM_REGISTER_ALLOW_SHARED 1u /**< register even when another table uses the file */
/** register even when the metadata file lies outside its own `<location>/metadata` and
 *  `write.metadata.path` (a copy's metadata file; icm_table_check_own_metadata) */
#define ICM_REGISTER_ALLOW_FOREIGN 2u

/** icm_catalog_register_table with flags (0 = the same checks). Same return codes. */
ICM_EXTERN(int) icm_catalog_register_table_flags(icm_catalog *cat, const char *identifier,
                                                 const char *metadata_location,
                                                 unsigned flags);

/**
 * Drop a table from the catalog without deleting any file ("no purge").
 * SQL: deletes the row. Filesystem: unsupported without purge (the directory IS the table).
 * @return 0; ICM_ENOTFOUND; ICM_EUNSUPPORTED; I/O or SQL codes.
 */
ICM_EXTERN(int) icm_catalog_drop_table(icm_catalog *cat, const char *identifier);

/* ====================================================================================== */
/* Tables                                                                                  */
/* ====================================================================================== */

/**
 * Load a table through a catalog: current metadata location, then the metadata file.
 * @param[out] out  new table (icm_table_free); borrows `cat`, which must outlive it
 * @param identifier "ns.table"
 * @return 0; ICM_ENOTFOUND (no such table, or its metadata file is missing); ICM_EINVALID;
 *         I/O, SQL and metadata parse codes.
 */
ICM_EXTERN(int) icm_table_load(icm_table **out, icm_catalog *cat, const char *identifier);

/**
 * icm_table_load with the identifier as namespace levels and a name, as the REST API names
 * tables (a level may contain a dot: it is passed to the back end as one level;
 * icm_table_get_identifier gives the levels and name joined with '.').
 * @return the codes of icm_table_load; ICM_EINVALID (no level, an empty level or name).
 */
ICM_EXTERN(int) icm_table_load_levels(icm_table **out, icm_catalog *cat,
                                      const char *const *ns_levels, size_t n_levels,
                                      const char *name);

/**
 * Open a metadata file as a read-only ("static") table: icm_table_commit() refuses with
 * ICM_EREADONLY. @param io borrowed, must outlive the table.
 * Spelling: `metadata_location` is made absolute and canonical once, here
 * (icm_location_canonical: working directory, `.`/`..`, `file:` forms); when its folder is,
 * through symbolic links, the metadata's own `<location>/metadata` spelled differently, the
 * table records the metadata's spelling (icm_table_get_metadata_location), which is the one a
 * listing of the table location gives.
 * @return 0; ICM_ENOTFOUND; the codes of icm_location_canonical; metadata read/parse codes.
 */
ICM_EXTERN(int) icm_table_open_static(icm_table **out, icm_fileio *io,
                                      const char *metadata_location);

/**
 * Open a table directory with the filesystem (Hadoop) layout: the current version is found as
 * Java finds it (version-hint.text, else the highest v<N>, then probing v<N+1>...). Commits
 * publish v<N+1>.metadata.json without replacement. @param io borrowed.
 * Spelling: `table_dir` is made absolute and canonical once, here
 * (icm_location_canonical), so a relative `t`, `./t`, `a/../t` or `file:` form never reaches a
 * metadata file or metadata-log entry; when it is, through symbolic links, the folder the
 * metadata's `location` names, the table is opened under `location`'s spelling (the one a
 * listing of the table location gives), and icm_table_get_identifier() returns it.
 * @return 0; ICM_ENOTFOUND (no v<N> metadata file); ICM_EINVALID (empty table_dir); the codes
 *         of icm_location_canonical; metadata read/parse codes.
 */
ICM_EXTERN(int) icm_table_open_dir(icm_table **out, icm_fileio *io, const char *table_dir);

/** Reload the current metadata (another writer may have committed). On failure the table
 *  keeps its previous state. The metadata file is read again even when the pointer has not
 *  moved (a file rewritten in place must not leave the table stale). Static tables re-read
 *  the same file.
 *  @return 0; the codes of icm_table_load. */
ICM_EXTERN(int) icm_table_refresh(icm_table *t);

/**
 * Commit `new_md` as the table's next metadata, with the table's current metadata as the base
 * of a compare-and-swap.
 *
 * On a copy of `new_md`: the base file is appended to `metadata-log` (with the base's
 * last-updated-ms, as Java does), the log is trimmed to `write.metadata.previous-versions-max`
 * (default 100) and `last-updated-ms` is set to now. `new_md` must therefore be derived from
 * the base without those two edits. The new metadata file is written with create-new at
 * `<location>/metadata/<NNNNN>-<uuid>.metadata.json` (NNNNN = base number + 1, Java's rule;
 * under `write.metadata.path` when set; `.gz.metadata.json` and gzip content when
 * `write.metadata.compression-codec=gzip`), or for filesystem tables as v<N+1>, then the
 * catalog pointer is swapped.
 *
 * Outcomes:
 *  - 0 without any write when `new_md` serialises exactly like the current metadata (nothing
 *    to commit, as in Java);
 *  - 0: committed; `t` now holds the new metadata (or, when reconciling found that another
 *    commit already followed ours, that newer metadata). Then, when the new metadata has
 *    `write.metadata.delete-after-commit.enabled=true`, the metadata files of log entries that
 *    fell out of the log are deleted, but only this table's own old metadata (Java deletes
 *    them unconditionally; a file of another table must never go): a file dropped from the
 *    log is deleted only when ALL hold:
 *    (1) it lies directly in one of the table's metadata folders (`<location>/metadata`,
 *    `write.metadata.path`, the new current metadata file's folder), compared where they
 *    really are (links, `..`); (2) it is named `*.metadata.json` or `*.metadata.json.gz`;
 *    (3) it parses as table metadata with this table's table-uuid (neither having one: only
 *    in `<location>/metadata`); (4) it is neither the current metadata file nor a
 *    metadata-log entry of another table of the catalog (every table of a SQL catalog's
 *    database; a catalog that cannot list its tables keeps the file; a table opened by its
 *    directory has no other table to ask); (5) the new metadata (current file or log) does
 *    not name it. Names are compared by name and by where they really are. A file failing a
 *    condition, or one that could not be checked, is kept and a warning says why
 *    (icm_table_commit_warning); the commit's result is 0 either way. A file already gone is
 *    no error. Only the dropped files are read, and the catalog is listed only when one is
 *    left to delete (table/retention.c).
 *  - ICM_ECOMMIT_FAILED: provably not applied (CAS matched 0 rows; version file exists;
 *    statement never sent). The new metadata file is deleted. `t` is unchanged (refresh it).
 *  - ICM_ECOMMIT_UNKNOWN: the swap's outcome was open; the file is kept and the table is
 *    reloaded to reconcile: our file current or in the current metadata-log → 0 (success);
 *    the current lineage shows that a different file succeeded our base → ICM_ECOMMIT_FAILED
 *    (our swap can never apply; the file is deleted); otherwise ICM_ECOMMIT_UNKNOWN.
 *  - ICM_EREFUSED before anything is written: the own-metadata check
 *    (icm_table_check_own_metadata) failed: the table is a copy whose metadata names another
 *    location. ICM_EREADONLY: a static table. ICM_EINVALID: unknown compression codec, or
 *    `write.metadata.path` on a filesystem table. ICM_EUNSUPPORTED: a filesystem table whose
 *    current file is not named v<N> (a hint naming another file). ICM_EIO/ICM_ENOMEM before
 *    anything was swapped: nothing changed and no file of this commit is left.
 * A caller that gets ICM_ECOMMIT_FAILED refreshes, re-applies its change and commits again.
 * The last error's message names the table and says which case happened.
 */
ICM_EXTERN(int) icm_table_commit(icm_table *t, const icm_table_metadata *new_md);

/**
 * Commit a change given as requirements and updates (icemaint/update.h), the form every
 * commit of icemaint takes: the requirements are checked against the table's current
 * metadata (the base), the updates applied to it (icm_table_changes_apply), and the result
 * committed as icm_table_commit() commits `new_md` (metadata-log, last-updated-ms, retention,
 * the same outcomes). `t` is not refreshed first: a caller that retries refreshes it and
 * builds its changes again on the new base.
 * A catalog that takes requirements and updates itself (REST; the version 2 `commit_changes`
 * slot of icemaint/sys/catalog.h) gets them as they are, after the own-metadata check: 0 (the
 * table then reloads what the catalog has now) or ICM_ECOMMIT_FAILED as it answers; nothing of
 * the commit was written here, so nothing is deleted here, and metadata-log and retention are
 * the catalog's. When its answer is ICM_ECOMMIT_UNKNOWN the table is reloaded (at once, after
 * 250 ms and after 1 s more) and the change looked for (icm_table_changes_seen: the table's
 * uuid must be the same): shown → 0, `t` holds the reloaded metadata,
 * icm_table_last_commit_reconciled() is true and a commit warning says the answer was lost
 * and found; not shown → ICM_ECOMMIT_UNKNOWN (a request still on its way may apply it later,
 * so it is never taken for rejected).
 * @return the codes of icm_table_commit(); also ICM_ECOMMIT_FAILED when a requirement fails
 *         (nothing written; the message names it: "commit failed: requirement failed:
 *         assert-ref-snapshot-id: ref main is at snapshot 5, expected 3"), and the codes of
 *         icm_table_changes_apply (ICM_EINVALID, ICM_EREFUSED; nothing written).
 */
ICM_EXTERN(int) icm_table_commit_changes(icm_table *t, const icm_table_changes *changes);

/** The warnings of the last icm_table_commit() on `t`: each metadata file that fell out of the
 *  metadata-log and was kept, and why (one line each, naming the file as it is spelled: escape
 *  it for display, icm_escape_text). Borrowed,
 *  valid until the next commit or icm_table_free(). A caller shows them (the CLI prints
 *  `warning: ...` lines); the library prints nothing. icm_table_commit_warning() is NULL for
 *  i >= the count. */
ICM_EXTERN(size_t) icm_table_commit_warning_count(const icm_table *t);
ICM_EXTERN(const char *) icm_table_commit_warning(const icm_table *t, size_t i);

/** Whether the last commit on `t` (icm_table_commit, icm_table_commit_changes) returned 0
 *  only because its answer was lost (ICM_ECOMMIT_UNKNOWN) and reloading the table then showed
 *  it (our metadata file current or in the metadata-log; through a catalog that commits
 *  itself, the change's effect, icm_table_changes_seen). A caller that deletes files after a
 *  commit should delete nothing after such a one (icm_expire_snapshots does not): through a
 *  catalog, the effect may be another writer's. false for NULL and before any commit. */
ICM_EXTERN(bool) icm_table_last_commit_reconciled(const icm_table *t);

/** The metadata file the last commit on `t` made current, as the catalog answered it (a
 *  catalog that commits itself names it in its answer; the pointer-swap commit wrote it);
 *  NULL before any commit and after one that failed. Borrowed, valid until the next commit or
 *  icm_table_free(). A reload after the commit may show a later file (another writer's
 *  commit), an earlier one (a lagging replica) or another table's: callers that delete after a
 *  commit delete only when the reload follows this file (icm_table_metadata_follows). */
ICM_EXTERN(const char *) icm_table_last_commit_location(const icm_table *t);

/** Free a table handle. NULL is ok. */
ICM_EXTERN(void) icm_table_free(icm_table *t);

/** Current parsed metadata (borrowed; replaced by refresh/commit). */
ICM_EXTERN(const icm_table_metadata *) icm_table_get_metadata(const icm_table *t);
/** Current metadata file location (borrowed; replaced by refresh/commit). */
ICM_EXTERN(const char *) icm_table_get_metadata_location(const icm_table *t);
/** "ns.table" for catalog tables; the directory or metadata file for the others. */
ICM_EXTERN(const char *) icm_table_get_identifier(const icm_table *t);
/** The FileIO the table uses (borrowed). */
ICM_EXTERN(icm_fileio *) icm_table_get_fileio(const icm_table *t);
/** The catalog (borrowed); NULL for static tables. */
ICM_EXTERN(icm_catalog *) icm_table_get_catalog(const icm_table *t);
/** True for static tables (commits refused). */
ICM_EXTERN(bool) icm_table_is_read_only(const icm_table *t);

/**
 * The own-metadata check, which every run that deletes or commits passes first
 * (icm_table_commit, and the orphan sweep and snapshot expiry unless they are dry runs, again
 * after each reload that finds new metadata). Table metadata names its `location` absolutely,
 * so the metadata of a copied table folder (`cp -a db/t backup`) names the original, and
 * maintaining the copy would list, delete and record under the original's location with the
 * copy's keep set: the original loses files. So: the current metadata file must lie inside
 * `<location>/metadata` or `write.metadata.path`, and a table opened by its directory
 * (icm_table_open_dir) must be opened at its `location`. Places are compared by where they
 * really are (icm_fileio_resolve: symbolic links resolved, the FileIO's path map applied), so
 * a table reached through a link passes, and so does a copy worked on through a path map
 * `LOCATION=COPY` (the documented way to maintain a copy). While the path map moves the
 * location, a `write.data.path` or `write.metadata.path` outside it must be mapped by a rule
 * too (it still names the original's folder). Read-only use (reading metadata,
 * manifests, dry runs) never needs it.
 * @return 0; ICM_EREFUSED (the message names the metadata file, the table location and the
 *         --path-map that would work on the copy, or the unmapped root, its property and
 *         the --path-map for it); ICM_EINVALID (the metadata names no
 *         location); the I/O codes of icm_fileio_resolve; ICM_ENOMEM.
 */
ICM_EXTERN(int) icm_table_check_own_metadata(const icm_table *t);

ICM_END_DECL

#endif /* ICEMAINT_CATALOG_H */
