/*
 * cli/catalog_ref.h: the CLI's access to the configured catalog (cmd_catalog.c): opening it
 * from the global options --catalog/--config/--uri/--warehouse plus PyIceberg's configuration,
 * and loading an `ns.table` TABLE argument through it (its metadata, and its own FileIO).
 */
#ifndef ICM_CLI_CATALOG_REF_H
#define ICM_CLI_CATALOG_REF_H

#include "cli.h"
#include "icemaint/catalog.h"

/* Open the catalog the global options and PyIceberg configuration name (its FileIO is the
 * CLI's, path maps included). Returns an exit code; errors are reported. */
int icm_cli_catalog_open(icm_cli *cli, icm_catalog **out);

/* Load `ns.table` as a commit-capable table through the configured catalog. *out_cat must be
 * freed after *out_table. Returns an exit code; errors are reported. */
int icm_cli_catalog_load_table(icm_cli *cli, const char *identifier, icm_catalog **out_cat,
                               icm_table **out_table);

/* A table handle for TABLE in any of its forms, for commands that commit:
 *  - `ns.table` (a bare dotted name that is not an existing path) → through the catalog;
 *  - a directory (or a remote location not ending in .json) → icm_table_open_dir;
 *  - a metadata file → icm_table_open_static (commits are refused: read-only).
 * Paths go through the CLI's FileIO (path maps included). Free *out_table, then *out_cat (NULL
 * unless a catalog was opened). Returns an exit code; errors are reported. */
int icm_cli_table_load(icm_cli *cli, const char *ref, icm_catalog **out_cat,
                       icm_table **out_table);

/* Load the table a `--table-id ID` option names (ID: a JSON array of strings, the namespace
 * levels then the table name, e.g. ["ns","sub","a.b"]) through the configured catalog only:
 * never a path, never split at dots (table_ref.c). Usage error (exit 2) for a malformed ID.
 * Free *out_table, then *out_cat. Returns an exit code; errors are reported. */
int icm_cli_table_load_id(icm_cli *cli, const char *id, icm_catalog **out_cat,
                          icm_table **out_table);

/* True when TABLE names a catalog table (`db.events`, `a.b.c`) rather than a path: no '/' or
 * ':', a dot, not ending in .json, and no such local file or directory. */
bool icm_cli_is_catalog_name(const char *ref);

extern const icm_cli_command icm_cli_cmd_list_namespaces;
extern const icm_cli_command icm_cli_cmd_list_tables;
extern const icm_cli_command icm_cli_cmd_register_table;

#endif
