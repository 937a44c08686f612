/*
 * cli/cli.h: internal interface shared by the files of the icemaint command-line tool: exit
 * codes, the parsed global options, the command table, error reporting, table references, the
 * output helpers (aligned text tables and JSON documents) and a string set.
 *
 * The CLI is an application on top of libicemaint's public API. It uses libc allocation
 * directly (an allocation failure is reported like any other error: one line, exit code 1).
 */
#ifndef ICM_CLI_CLI_H
#define ICM_CLI_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "icemaint/catalog.h"
#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "icemaint/maint.h"
#include "icemaint/metadata.h"

#if defined(__GNUC__) || defined(__clang__)
#define ICM_CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ICM_CLI_PRINTF(f, a)
#endif

/* Process exit codes; pinned by the CLI contract (README "Exit codes"). */
enum {
    ICM_EXIT_OK = 0,
    ICM_EXIT_ERROR = 1,          /* the one-line message says which file and what */
    ICM_EXIT_USAGE = 2,          /* bad command line */
    ICM_EXIT_COMMIT_FAILED = 3,  /* conflict: nothing of ours left behind */
    ICM_EXIT_COMMIT_UNKNOWN = 4, /* outcome unknown: our files kept */
    ICM_EXIT_REFUSED = 5,        /* refused by a safety check */
    ICM_EXIT_PROBLEMS = 6        /* `check` found problems (the report names them) */
};

/* Global options (before the command; --json also after it). */
typedef struct icm_cli {
    icm_path_map *path_maps; /* --path-map rules, in command-line order; strings owned */
    size_t n_path_maps;
    const char *catalog;     /* --catalog NAME (catalogs issue; stored only) */
    const char *config;      /* --config FILE */
    const char *uri;         /* --uri URI */
    const char *warehouse;   /* --warehouse URI */
    bool json;               /* --json: exactly one JSON document on stdout */
    int verbosity;           /* -1 quiet, 0 normal, 1+ verbose */
    icm_fileio *io;          /* built on first use by icm_cli_fileio() */
} icm_cli;

/* One sub-command. `run` gets the command's own arguments (argv[0] = command name) with
 * `--json` already taken out, and returns a process exit code. */
typedef struct icm_cli_command {
    const char *name;
    const char *summary; /* one line for `icemaint --help` */
    const char *help;    /* full text for `icemaint COMMAND --help` */
    int (*run)(icm_cli *cli, int argc, char **argv);
} icm_cli_command;

/* Commands (cmd_*.c). */
extern const icm_cli_command icm_cli_cmd_inspect;
extern const icm_cli_command icm_cli_cmd_snapshots;
extern const icm_cli_command icm_cli_cmd_manifests;
extern const icm_cli_command icm_cli_cmd_files;
extern const icm_cli_command icm_cli_cmd_expire_snapshots;   /* cmd_expire.c */
extern const icm_cli_command icm_cli_cmd_remove_orphan_files; /* cmd_orphans.c */
extern const icm_cli_command icm_cli_cmd_check;
extern const icm_cli_command icm_cli_cmd_apply;              /* cmd_apply.c */
extern const icm_cli_command icm_cli_cmd_health;             /* cmd_health.c */
extern const icm_cli_command icm_cli_cmd_maintain;           /* cmd_maintain.c */
extern const icm_cli_command icm_cli_cmd_trash;              /* cmd_trash.c */

/* ---- errors (main.c) ---- */

/* Report the library's last error as `icemaint: <location>: <message>` (plus code and class
 * with -v) and return the exit code for `rc` (3, 4, 5 for commit/refusal codes, else 1). */
int icm_cli_fail(const icm_cli *cli, int rc);
/* Report a usage problem with `arg` on one line and return ICM_EXIT_USAGE. */
int icm_cli_usage(const char *arg, const char *fmt, ...) ICM_CLI_PRINTF(2, 3);
/* Report an error found by the CLI itself (not the library) and return ICM_EXIT_ERROR. */
int icm_cli_error(const char *where, const char *fmt, ...) ICM_CLI_PRINTF(2, 3);
/* Out of memory in the CLI itself: message, then ICM_EXIT_ERROR. */
int icm_cli_oom(void);

/* ---- option parsing helpers (main.c) ---- */

/* If argv[*i] is option `name` (`--name VALUE` or `--name=VALUE`), store the value, advance *i
 * past it and return 1. Return 0 when it is another argument, or -1 (after a usage message)
 * when the value is missing. */
int icm_cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value);
/* Parse a signed 64-bit decimal (a snapshot id). Returns false on junk or overflow. */
bool icm_cli_parse_int64(const char *text, int64_t *out);
/* Append the snapshot id `text` (a --snapshot-id value) to the malloc'd array *ids of *n.
 * Returns an exit code (a usage error for a non-integer; the error is reported). */
int icm_cli_push_snapshot_id(int64_t **ids, size_t *n, const char *text);
/* Names gathered from a catalog listing: pass icm_cli_names_add as the callback of
 * icm_catalog_list_tables / icm_catalog_list_namespaces with an icm_cli_names (zeroed) as its
 * payload. Each name is a malloc'd copy, in the catalog's order; on out of memory the callback
 * returns ICM_ENOMEM and sets `oom`. icm_cli_names_free frees the names and the array. */
typedef struct icm_cli_names {
    char **names;
    size_t len, cap;
    bool oom;
} icm_cli_names;
int icm_cli_names_add(const char *name, void *payload);
void icm_cli_names_free(icm_cli_names *l);
/* Take argv[*i] as the command's single TABLE argument (`--` ends options). Returns an exit
 * code: ICM_EXIT_OK when stored, ICM_EXIT_USAGE (reported) for an unknown option or a second
 * positional argument. */
int icm_cli_take_table(const char *cmd, char **argv, int i, bool *after_dashdash,
                       const char **table);
/* After parsing: a usage error when TABLE is missing. */
int icm_cli_need_table(const char *cmd, const char *table);

/* ---- table references (table_ref.c) ---- */

/* The FileIO for every storage access: a resolving FileIO (local files; S3 for s3/s3a/s3n)
 * built from the configured catalog entry's properties (none when no catalog is configured),
 * behind the --path-map rules. Built once.
 * Returns NULL after reporting the error. */
icm_fileio *icm_cli_fileio(icm_cli *cli);

typedef struct icm_cli_table {
    char *metadata_location;  /* the metadata file that was read (malloc'd) */
    icm_table_metadata *md;
    /* Where the table's files are read: the CLI's FileIO, or for a catalog table the table's
     * own (a REST catalog vends credentials per table; table/table.c). Borrowed. */
    icm_fileio *io;
    icm_catalog *catalog;     /* a catalog table's catalog and handle, kept while io is used */
    icm_table *table;
} icm_cli_table;

/* Resolve TABLE (a metadata JSON file or a table directory in filesystem layout) and read its
 * current metadata. Returns an exit code; on failure the error was already reported. */
int icm_cli_table_open(icm_cli *cli, const char *ref, icm_cli_table *out);
/* For a command whose only argument is TABLE: parse argv (icm_cli_take_table,
 * icm_cli_need_table) and open it (icm_cli_table_open). Returns an exit code. */
int icm_cli_table_open_args(icm_cli *cli, const char *cmd, int argc, char **argv,
                            icm_cli_table *out);
/* The name the table's metadata uses for `ref`: a location at or below a --path-map TO is
 * rewritten to its FROM (icm_fileio_pathmap_unapply), anything else is copied. Tables and
 * files named by where they really are must be opened and recorded under their original names,
 * or commits would write local paths into the metadata and the orphan sweep's keep set would
 * miss the table's own metadata files. *out is malloc'd. Returns an exit code. */
int icm_cli_original_name(icm_cli *cli, const char *ref, char **out);
/* The name a TABLE argument is opened under: a catalog name as it is; a path made absolute
 * and canonical (icm_location_canonical: working directory, `.`/`..`, `file:` forms), then
 * through icm_cli_original_name. *out is malloc'd. Returns an exit code (errors reported). */
int icm_cli_table_name(icm_cli *cli, const char *ref, char **out);
void icm_cli_table_close(icm_cli_table *t);

/* The snapshot a command works on: `--snapshot-id` text when given (a usage error when not a
 * number, an error when the metadata has no such snapshot), else the current snapshot; *out is
 * NULL when the table has no current snapshot. Returns an exit code (errors reported). */
int icm_cli_pick_snapshot(const icm_cli_table *t, const char *id_text,
                          const icm_snapshot **out);

/* ---- output (output.c) ---- */

/* Any byte string as printable text (icm_escape_text: control characters, backslashes and
 * bytes that are not UTF-8 escaped), malloc'd; NULL when out of memory. */
char *icm_cli_escape_text(const char *s);
/* Print one line on `out`: the printf-formatted text (fmt without the newline), escaped as
 * icm_escape_text does, then a newline. Every line naming a file goes through this, so a name
 * never splits a line or writes raw bytes to a terminal. */
void icm_cli_line(FILE *out, const char *fmt, ...) ICM_CLI_PRINTF(2, 3);
void icm_cli_vline(FILE *out, const char *fmt, va_list ap) ICM_CLI_PRINTF(2, 0);

/* Print "warning: <text>" on stderr as one printable line (icm_cli_line), unless -q
 * (then stderr carries only errors). Every warning of every command goes through this. */
void icm_cli_warn(const icm_cli *cli, const char *fmt, ...) ICM_CLI_PRINTF(2, 3);
/* The warnings of the table's last commit (icm_table_commit_warning: metadata files that fell
 * out of the metadata-log and were kept), each through icm_cli_warn. */
void icm_cli_commit_warnings(const icm_cli *cli, const icm_table *t);
/* "icemaint: <location>: <message><suffix>" (an error) or "warning: <location>: ..." (a
 * warning) on stderr, for a message from the library (printable already: errors.h), so only
 * `location` (any bytes) is escaped here and the message is not escaped twice. A warning is
 * hidden by -q. */
void icm_cli_file_line(const icm_cli *cli, bool warning, const char *location,
                       const char *message, const char *suffix);
/* Whether everything printed on stdout so far reached it (flushes stdout). */
bool icm_cli_stdout_ok(void);
/* After a command deleted files, its report could not be printed (`why`): say so on stderr,
 * with how many `what`s were deleted (the deletes are not undone and must not be hidden), and
 * return ICM_EXIT_ERROR (README "Output": the exit code is 1 and the message says the run went
 * through). */
int icm_cli_report_lost(size_t deleted, const char *what, const char *why);

/* An aligned text table built row by row; cells are copied, escaped as icm_escape_text does. */
typedef struct icm_cli_grid icm_cli_grid;
icm_cli_grid *icm_cli_grid_new(size_t ncols, const char *const *headers);
/* Append a row of ncols cells (NULL cells print as "-"). Returns false on allocation failure. */
bool icm_cli_grid_add(icm_cli_grid *g, const char *const *cells);
/* Replace the cell of data row `row` (0 = first row after the headers), column `col`. Returns
 * false on allocation failure (the old text stays). */
bool icm_cli_grid_set(icm_cli_grid *g, size_t row, size_t col, const char *text);
void icm_cli_grid_print(const icm_cli_grid *g, FILE *out);
void icm_cli_grid_free(icm_cli_grid *g);

/* Format epoch milliseconds as ISO-8601 UTC ("2024-05-01T12:00:00.123Z") into buf. */
const char *icm_cli_format_time(int64_t ms, char *buf, size_t buf_size);
/* Format an int64 into buf. */
const char *icm_cli_format_int64(int64_t v, char *buf, size_t buf_size);
/* Format a double with the fewest digits (up to 17) that read back as the same value
 * (2.131, not 2.1309999999999998), for Prometheus samples. buf: at least 32 bytes. */
const char *icm_cli_format_double(double v, char *buf, size_t buf_size);

/* JSON builders that tolerate NULL (a missing string becomes JSON null) and record allocation
 * failures in *ok instead of failing one by one. Strings are byte strings: build every string
 * value with icm_cli_json_str (never json_string, which refuses names that are not UTF-8) and
 * write documents with icm_cli_json_write / icm_cli_json_print (never json_dump*, which
 * refuses them too). */
void icm_cli_json_set(json_t *obj, const char *key, json_t *value_new, bool *ok);
json_t *icm_cli_json_str(const char *s);  /* any bytes, stored as is; NULL -> json null */
json_t *icm_cli_json_int(int64_t v);
/* Append to an array (steals value_new). */
void icm_cli_json_push(json_t *arr, json_t *value_new, bool *ok);
/* Write `doc` on `out` followed by a newline: indented two spaces when `pretty` (the --json
 * layout), else on one line (`{"a": 1, "b": [2, 3]}`: a JSON-lines record). Strings go through
 * icm_escape_json: valid UTF-8 as is, each byte that is not UTF-8 as `\udcXY` (lossless; README
 * "Output"). Cannot fail on any value; returns false only when writing (or, for a string over
 * 1 KiB, memory) failed. */
bool icm_cli_json_write(FILE *out, const json_t *doc, bool pretty);
/* Report that a JSON document could not be built (allocation failure or a non-UTF-8 string);
 * returns ICM_EXIT_ERROR. */
int icm_cli_json_failed(void);
/* Print `doc` (stolen) as one JSON document and a newline on stdout; with !ok (a builder
 * failed) report icm_cli_json_failed() instead. Returns an exit code. */
int icm_cli_json_print(json_t *doc, bool ok);
/* The same without a message: false when stdout failed (a command that deleted files says so
 * with icm_cli_report_lost). */
bool icm_cli_json_emit(json_t *doc);

/* ---- files the commands write besides stdout (out_file.c) ---- */

/* The folder of a path ("." for a bare name; new string, NULL when out of memory) and its last
 * segment (borrowed). */
char *icm_cli_dir_of(const char *path);
const char *icm_cli_base_of(const char *path);
/* An existing `path` may only be written when `is_earlier` says it is an earlier output of
 * `option` (described as `earlier` in the refusal): a folder is exit 1, another file exit 5
 * (refused). A missing path is fine. Returns an exit code. */
int icm_cli_out_file_check_existing(const char *option, const char *path,
                                    bool (*is_earlier)(const char *path), const char *earlier);
/* Refuse (exit 5) a `path` inside the table's location, write.data.path or
 * write.metadata.path, after following links (the final one too when `follow`: a file that is
 * appended through a link) and path maps; exit 1 when its folder cannot be resolved. */
int icm_cli_out_file_check_table(const char *option, const char *path, bool follow,
                                 icm_table *t);

/* --metrics FILE (maintain, health): Prometheus text for node_exporter's textfile collector,
 * recognised by its first line (`# HELP icemaint_`): an existing FILE is replaced only when it
 * is an earlier metrics file; any other file is refused (exit 5), as for --plan-out. Checked
 * before the first table is touched, and again right before the rename. */
int icm_cli_metrics_check_existing(const char *path);
/* A new temporary file beside `path` (mkstemp: an existing file is never opened); *tmp is its
 * name (malloc'd). The caller writes a HELP line first. NULL (reported, *rc set) on failure. */
FILE *icm_cli_metrics_create(const char *path, char **tmp, int *rc);
/* Flush, sync and close f, then rename tmp over path (unless path became another file
 * meanwhile); tmp is removed on failure and freed. Returns an exit code (reported). */
int icm_cli_metrics_publish(FILE *f, char *tmp, const char *path);

/* ---- --plan-out FILE (plan_file.c) ---- */

/* Written to a temporary file beside `path`, renamed over it only once complete: a failed or
 * refused run leaves an existing file untouched. */
typedef struct icm_cli_plan_file {
    char *path;
    char *tmp;
    FILE *f;
} icm_cli_plan_file;
/* Before the command does anything: the temporary file. Returns an exit code. */
int icm_cli_plan_open(icm_cli_plan_file *p, const char *path);
/* Once the table is loaded: refuse (exit 5) a path inside the table's locations. */
int icm_cli_plan_check_table(icm_cli_plan_file *p, icm_table *t);
/* Write the document and put it in place; the plan is finished either way. Exit code. */
int icm_cli_plan_write(icm_cli_plan_file *p, json_t *doc);
/* No plan after all: remove the temporary file (idempotent; a zeroed struct is fine). */
void icm_cli_plan_discard(icm_cli_plan_file *p);

/* The plan format (`icemaint apply`): a --plan-out document carries, besides the command's
 * report, `plan_version` (ICM_CLI_PLAN_VERSION), `command`, `table` (the name it was opened
 * by), `table_uuid`, `planned_from` (the metadata file the plan was made from), `created_ms`,
 * `shard` (null: the whole table) and `older_than_ms`; its files are `orphans` (a sweep's,
 * with its `location`) or `released` (an expiry's), each with `path`, `size_bytes`, `mtime_ms`
 * as storage showed them. */
#define ICM_CLI_PLAN_VERSION 1
/* Add the plan's header members to `doc` (a builder failure is recorded in *ok). */
void icm_cli_plan_header(json_t *doc, const char *command, icm_table *t, int64_t made_ms,
                         bool *ok);
typedef struct icm_cli_plan_entry {
    const char *path;   /* borrowed from the plan's document */
    int64_t size_bytes;
    int64_t mtime_ms;
    const char *kind;   /* NULL when absent */
} icm_cli_plan_entry;
/* Most shards of a sweep. Each shard plans every range of the run for its verdict
 * (docs/SHARDS.md), a fixed cost per range of about 2 ms besides the listing, so N shards cost
 * N^2 such steps: ten thousand keeps one shard's share near 20 s; more would only leave shards
 * idle and hold a deleting shard's lease for hours (adversary round 13, F6). */
#define ICM_CLI_SHARDS_MAX 10000u
/* `I/N` with 0 <= I < N <= ICM_CLI_SHARDS_MAX, both decimal (--shard, a plan's `shard`):
 * false for anything else (*index, *count untouched). */
bool icm_cli_parse_shard(const char *text, unsigned *index, unsigned *count);
/* A shard as reports and plans write it: null for the whole table (count 1), else "I/N" in
 * plain decimal (what icm_cli_parse_shard read, whatever its spelling). New reference. */
json_t *icm_cli_json_shard(unsigned index, unsigned count);

typedef struct icm_cli_plan {
    json_t *doc;
    const char *command, *table, *table_uuid, *planned_from, *location;
    int64_t created_ms;
    int64_t older_than_ms; /* the files' cutoff: a sweep's own; an expiry plan's created_ms */
    unsigned shard_index, shard_count; /* a sweep plan's `shard` I/N (0/1: the whole table) */
    icm_cli_plan_entry *files;
    size_t n_files;
} icm_cli_plan;
/* Read and check a plan file: a one-line error naming the file and what is wrong (exit 1)
 * for anything but a well-formed plan of this version. Free with icm_cli_plan_free (also
 * after a failure). */
int icm_cli_plan_read(const char *path, icm_cli_plan *p);
void icm_cli_plan_free(icm_cli_plan *p);
/* Whether icm_cli_json_print wrote a document to stdout in this process. */
bool icm_cli_json_printed(void);
/* A command that writes its document in pieces (cmd_check.c) says it has begun one, so no
 * error document follows a part of it. */
void icm_cli_json_mark_printed(void);

/* ---- around the delete phase of expire-snapshots and remove-orphan-files (deletes.c) ---- */

/* The `--log-out FILE` journal: JSON lines, one per file acted on, then a summary. */
typedef struct icm_cli_journal {
    const char *path;     /* borrowed (argv) */
    const char *command;
    const char *plan;     /* apply: the plan file, recorded in every line (borrowed) */
    FILE *f;              /* NULL: no journal */
    int fd;
    bool created;         /* this run created the file */
    bool broken;          /* a line could not be written (the deletes were stopped) */
    int broken_errno;
    size_t deleted, already_gone, failed;
    int64_t bytes_deleted;
} icm_cli_journal;
/* Before the command does anything: open FILE for appending (created if missing). Exit code. */
/* An existing FILE must be an earlier journal (else exit 5). */
int icm_cli_journal_open(icm_cli_journal *j, const char *path, const char *command);
/* Once the table is loaded: refuse (exit 5) a journal inside the table's locations (a file
 * this run created is removed). A no-op without a journal. Exit code. */
int icm_cli_journal_check_table(icm_cli_journal *j, icm_table *t);
/* The library's icm_delete_cb (payload: the journal, or NULL): one line per file, flushed and
 * fsync'ed at each batch end; -1 when the journal cannot be written (the deletes stop). */
int icm_cli_journal_on_delete(const icm_delete_event *ev, void *payload);
/* A file line for a file the delete phase did not act on (apply: a planned file kept, no
 * longer an orphan, or skipped), with `outcome` and `reason`; no-op without a journal. False
 * when the line could not be written (the journal is broken then). */
bool icm_cli_journal_note(icm_cli_journal *j, const char *path, int64_t size_bytes,
                          const char *outcome, const char *reason);
/* Whether a journal line failed; *why is its error text. */
bool icm_cli_journal_broken(const icm_cli_journal *j, const char **why);
/* The summary line, then close. `report`: "printed", "failed" or "none". Returns exit_code, or
 * ICM_EXIT_ERROR (reported) when it was 0 and the summary could not be written. */
int icm_cli_journal_finish(icm_cli_journal *j, const char *table, bool complete, int exit_code,
                           const char *report);
/* Close without a summary (nothing was deleted: the command stopped before). */
void icm_cli_journal_close(icm_cli_journal *j);

/* The table lease for a run that deletes; a refusal is reported (exit 5). Exit code. */
int icm_cli_lease_take(icm_cli *cli, icm_table *t, const char *command, icm_lease **out);
/* Release and free (NULL is fine); a failure is a warning: the lease expires on its own. */
void icm_cli_lease_drop(icm_lease *lease);

/* After the report was printed: whether it reached stdout (*report "printed" or "failed", for
 * the journal's summary). A stdout closed from the start is said here (icm_cli_report_lost,
 * with the `deleted` `what`s; exit code 1 if it was 0); other failures the report's own code
 * has said. Returns the exit code. */
int icm_cli_report_written(int rc, size_t deleted, const char *what, const char **report);
/* Whether the process started with stdout closed (main.c puts /dev/null there, so no file the
 * command opens can take descriptor 1 and receive the report). */
bool icm_cli_stdout_closed(void);

/* ---- guard rails: --max-delete, --max-delete-bytes, --max-delete-percent (limits.c) ---- */

/* The options' texts as given (borrowed argv strings; NULL = not given). */
typedef struct icm_cli_limits_args {
    const char *files;
    const char *bytes;
    const char *percent;
    const char *trash;       /* --trash URI: move instead of delete (icemaint/trash.h) */
} icm_cli_limits_args;
/* If argv[*i] is one of the three options or --trash, store its value: 1 taken, 0 not one of
 * them, -1 usage (reported), like icm_cli_opt_value. */
int icm_cli_limits_take(int argc, char **argv, int *i, icm_cli_limits_args *a);
/* Parse them into *out (ICM_DELETE_LIMITS_NONE for those not given). Exit code (usage errors
 * reported). */
int icm_cli_limits_build(const icm_cli_limits_args *a, icm_delete_limits *out);
/* Whether any bound is set. */
bool icm_cli_limits_set(const icm_delete_limits *l);

#endif /* ICM_CLI_CLI_H */
