/*
 * cli/cmd_orphans.c: `icemaint remove-orphan-files TABLE [options]`: find the files under a
 * table's location that nothing references and that are older than the file-retention window,
 * and delete them (or, with --dry-run, only report them). The rules and safety checks are the
 * library's (icemaint/orphans.h); this file parses options and prints the result.
 *
 * Output: a summary and one row per orphan on stdout, warnings and progress (only on a
 * terminal) on stderr; --json prints the contract's document (`orphans`, `counts`, `bytes`,
 * `listed`, `referenced`, `older_than_ms`, `dry_run`, plus details, among them `already_gone`,
 * `newly_referenced` and `delete_stopped`); --plan-out writes the same document to a file;
 * --log-out journals each delete as it happens (deletes.c). A refusal by a safety check (the
 * table lease held by another run among them) exits with 5, a failed delete with 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog_ref.h"
#include "cli.h"
#include "icemaint/escape.h"
#include "icemaint/orphans.h"
#include "timeparse.h"

/* Longer than the 4095 bytes C11 promises every compiler takes; GCC and Clang take any. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char orphans_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] remove-orphan-files TABLE [OPTIONS]\n"
    "\n"
    "Delete files under the table location that no snapshot, manifest or metadata file of\n"
    "the table references and that are older than the cutoff (default: 3 days). The keep set\n"
    "is built from the table's current metadata, loaded right before the sweep.\n"
    "\n"
    "TABLE is ns.table (through the catalog) or a table directory in filesystem (Hadoop)\n"
    "layout; a metadata JSON file allows only --dry-run (it may not be the current one).\n"
    "\n"
    "Options:\n"
    "  --older-than TIME         cutoff: a duration back from now (3d, 36h, 90m, 30s), an\n"
    "                            ISO-8601 instant with a zone, a date (UTC) or epoch ms\n"
    "  --location URI            list only below this location (inside the table)\n"
    "  --dry-run                 report the orphans, delete nothing\n"
    "  --plan-out FILE           also write the JSON document to FILE (a plan for apply)\n"
    "  --prefix-mismatch MODE    files referenced only under another scheme or authority:\n"
    "                            error (refuse, default), ignore (keep), delete\n"
    "  --equal-schemes LIST      NAMES=CANONICAL[;...], e.g. 'wasb=abfs' (s3a, s3n: s3)\n"
    "  --equal-authorities LIST  the same for authorities (bucket or host names)\n"
    "  --exclude-location URI    leave this folder alone (repeatable)\n"
    "  --file-list FILE          candidates from FILE (path<TAB>size<TAB>mtime_ms lines)\n"
    "  --inventory MANIFEST      candidates from an S3 Inventory (CSV) manifest.json\n"
    "  --max-inventory-age DUR   refuse an older report (default 7d)\n"
    "  --shard I/N               sweep key range I of N only (I: 0..N-1; docs/SHARDS.md);\n"
    "                            each shard still lists every name of the location for its\n"
    "                            guards (memory divides by N, listing does not)\n"
    "  --max-concurrent-deletes N  delete with N threads (default 1)\n"
    "  --force                   accept a cutoff less than 24 hours ago\n"
    "  --log-out FILE            journal each file acted on (JSON lines: path, kind,\n"
    "                            size_bytes, outcome, error; then a summary), flushed per\n"
    "                            batch; opened first (a bad path deletes nothing)\n"
    "  --no-lock                 do not take the table lease (see below)\n"
    "  --settle DURATION         wait this long after planning before the reload that\n"
    "                            precedes the first delete (default 2s; 0s: none), so a\n"
    "                            writer that copies a file in and commits it meanwhile keeps it\n"
    "  --no-verify               delete even when referenced files are not listed\n"
    "  --max-delete, --max-delete-bytes, --max-delete-percent N|B|P  refuse (exit 5)\n"
    "                            over N files, B bytes (10g), P% of those listed (by the\n"
    "                            shard)\n"
    "  --trash URI               move, not delete (see icemaint trash --help)\n"
    "  --table-id ID             instead of TABLE (for scripts, and maintain's steps): the\n"
    "                            catalog table as a JSON array of its namespace levels and\n"
    "                            name, [\"ns\",\"sub\",\"t\"]; never a path, never split at dots\n"
    "  --counts-only             with --json: leave out the per-file lists (orphans;\n"
    "                            warnings: warning_count instead), keep every count, byte\n"
    "                            total and metadata field (for maintain, and scripts that\n"
    "                            need a report of constant size)\n"
    "  --json                    one JSON document: {orphans: [{path, size_bytes, mtime_ms,\n"
    "                            kind, state}], counts, bytes, listed, referenced, shard,\n"
    "                            ...}; kind: data, delete, manifest, manifest_list,\n"
    "                            metadata, other, checksum (Hadoop's .NAME.crc, deleted with\n"
    "                            its file); state: planned, deleted, already_gone, failed\n"
    "  -h, --help                print this help\n"
    "\n"
    "Deletes start after the settle time, in batches, each after a reload of the table\n"
    "(files a commit made meanwhile references are kept). A real run takes the table lease\n"
    "(<location>/metadata/.icemaint-lease); a second run is refused.\n"
    "\n"
    "Refusals (exit 5, nothing deleted): a table copy (--path-map); the lease is held\n"
    "(--no-lock); gc.enabled not true; a cutoff under 24 h ago or in the future (--force);\n"
    "a location outside the table; an unreadable manifest list or manifest; files matching\n"
    "referenced ones only up to scheme or authority (--prefix-mismatch); another table's\n"
    "metadata, or an unreadable *.metadata.json older than the cutoff, under the location\n"
    "(--exclude-location; a younger one is a write in flight); a listing naming none of\n"
    "the referenced files (--path-map?); the catalog's own files (SQLite database,\n"
    "-journal/-wal/-shm, .pyiceberg.yaml; never deleted) or another catalog table under the\n"
    "location (--exclude-location); a referenced file not listed; a --max-delete* limit.\n";
#pragma GCC diagnostic pop

typedef struct orphan_args {
    const char *table;
    const char *table_id; /* --table-id: the table by its catalog levels and name */
    const char *older_than;
    const char *location;
    const char *plan_out;
    const char *prefix_mismatch;
    const char *file_list;
    const char *max_deletes;
    const char *log_out;
    const char *settle;
    const char *inventory;
    const char *max_inventory_age;
    const char *shard;        /* --shard I/N as given */
    unsigned shard_index, shard_count;
    char *equal_schemes;      /* repeated options joined with ';' (malloc'd) */
    char *equal_authorities;
    const char **excludes;    /* malloc'd array of borrowed argv strings */
    size_t n_excludes;
    char **owned;             /* absolute copies of relative location arguments (icm_free) */
    size_t n_owned;
    bool dry_run;
    bool force;
    bool no_lock;
    bool counts_only; /* --counts-only */
    bool no_verify;
    icm_cli_limits_args limits;
} orphan_args;

static void args_dispose(orphan_args *a)
{
    free(a->equal_schemes);
    free(a->equal_authorities);
    free((void *)a->excludes);
    for (size_t i = 0; i < a->n_owned; i++)
        icm_free(a->owned[i]);
    free(a->owned);
}

/* A relative local --location / --exclude-location names a place below the working directory:
 * made absolute (icm_location_canonical) like every location icemaint works on (issue #16);
 * absolute values and URIs stay as given. Returns an exit code (errors reported). */
static int absolute_arg(orphan_args *a, const char **value)
{
    char *path = NULL;
    bool relative = *value != NULL && icm_location_local_path(&path, *value) && path[0] != '/';
    icm_free(path);
    if (!relative)
        return ICM_EXIT_OK;
    char **grown = realloc(a->owned, (a->n_owned + 1) * sizeof *grown);
    if (grown == NULL)
        return icm_cli_oom();
    a->owned = grown;
    char *canon = NULL;
    int rc = icm_location_canonical(&canon, *value);
    if (rc != 0)
        return icm_cli_error(*value, "%s", icm_error_last()->message);
    a->owned[a->n_owned++] = canon;
    *value = canon;
    return ICM_EXIT_OK;
}

static int absolute_args(orphan_args *a)
{
    int rc = absolute_arg(a, &a->location);
    for (size_t i = 0; rc == ICM_EXIT_OK && i < a->n_excludes; i++)
        rc = absolute_arg(a, &a->excludes[i]);
    return rc;
}

/* Append `value` to a ';'-joined list. Returns false on allocation failure. */
static bool join_list(char **list, const char *value)
{
    size_t old = *list != NULL ? strlen(*list) : 0;
    char *grown = realloc(*list, old + strlen(value) + 2);
    if (grown == NULL)
        return false;
    if (old > 0)
        grown[old++] = ';';
    strcpy(grown + old, value);
    *list = grown;
    return true;
}

/* Append to the array of --exclude-location values. Returns false on allocation failure. */
static bool push_exclude(orphan_args *a, const char *v)
{
    const char **grown = realloc((void *)a->excludes, (a->n_excludes + 1) * sizeof *grown);
    if (grown == NULL)
        return false;
    grown[a->n_excludes++] = v;
    a->excludes = grown;
    return true;
}

/* One option with a value that may repeat; returns 1 taken, 0 not this option, -1 usage or
 * allocation failure (reported), like icm_cli_opt_value. */
static int take_repeatable(int argc, char **argv, int *i, orphan_args *a)
{
    const char *v = NULL;
    int m;
    bool stored;
    if ((m = icm_cli_opt_value(argc, argv, i, "--equal-schemes", &v)) > 0)
        stored = join_list(&a->equal_schemes, v);
    else if (m == 0 && (m = icm_cli_opt_value(argc, argv, i, "--equal-authorities", &v)) > 0)
        stored = join_list(&a->equal_authorities, v);
    else if (m == 0 && (m = icm_cli_opt_value(argc, argv, i, "--exclude-location", &v)) > 0)
        stored = push_exclude(a, v);
    else
        return m;
    if (!stored) {
        icm_cli_oom();
        return -1;
    }
    return 1;
}

static int take_single(int argc, char **argv, int *i, orphan_args *a)
{
    static const char *const names[] = {"--older-than", "--location", "--plan-out",
                                        "--prefix-mismatch", "--file-list",
                                        "--max-concurrent-deletes", "--log-out", "--settle",
                                        "--inventory", "--max-inventory-age", "--shard",
                                        "--table-id"};
    const char **slots[] = {&a->older_than, &a->location, &a->plan_out, &a->prefix_mismatch,
                            &a->file_list, &a->max_deletes, &a->log_out, &a->settle,
                            &a->inventory, &a->max_inventory_age, &a->shard, &a->table_id};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int m = icm_cli_opt_value(argc, argv, i, names[k], slots[k]);
        if (m != 0)
            return m;
    }
    return 0;
}

static int parse_args(int argc, char **argv, orphan_args *a)
{
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        if (!after_dashdash && strcmp(argv[i], "--dry-run") == 0) {
            a->dry_run = true;
            continue;
        }
        if (!after_dashdash && strcmp(argv[i], "--force") == 0) {
            a->force = true;
            continue;
        }
        if (!after_dashdash && strcmp(argv[i], "--counts-only") == 0) {
            a->counts_only = true;
            continue;
        }
        if (!after_dashdash && strcmp(argv[i], "--no-lock") == 0) {
            a->no_lock = true;
            continue;
        }
        if (!after_dashdash && strcmp(argv[i], "--no-verify") == 0) {
            a->no_verify = true;
            continue;
        }
        int m = after_dashdash ? 0 : take_single(argc, argv, &i, a);
        if (m == 0 && !after_dashdash)
            m = take_repeatable(argc, argv, &i, a);
        if (m == 0 && !after_dashdash)
            m = icm_cli_limits_take(argc, argv, &i, &a->limits);
        if (m < 0)
            return ICM_EXIT_USAGE;
        if (m > 0)
            continue;
        int rc = icm_cli_take_table("remove-orphan-files", argv, i, &after_dashdash, &a->table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    if (a->table_id != NULL)
        return a->table == NULL ? ICM_EXIT_OK
                                : icm_cli_usage(a->table, "give TABLE or --table-id, not "
                                                          "both");
    return icm_cli_need_table("remove-orphan-files", a->table);
}

bool icm_cli_parse_shard(const char *text, unsigned *index, unsigned *count)
{
    const char *slash = strchr(text, '/');
    char digits[24];
    int64_t i = -1, n = 0;
    size_t len = slash != NULL ? (size_t)(slash - text) : 0;
    if (slash != NULL && len > 0 && len < sizeof digits) {
        memcpy(digits, text, len);
        digits[len] = '\0';
        if (!icm_cli_parse_int64(digits, &i) || !icm_cli_parse_int64(slash + 1, &n))
            i = -1;
    }
    if (i < 0 || n < 1 || n > ICM_CLI_SHARDS_MAX || i >= n)
        return false;
    *index = (unsigned)i;
    *count = (unsigned)n;
    return true;
}

json_t *icm_cli_json_shard(unsigned index, unsigned count)
{
    if (count <= 1)
        return json_null();
    char shard[48];
    snprintf(shard, sizeof shard, "%u/%u", index, count);
    return json_string(shard);
}

/* --shard I/N (icm_cli_parse_shard). Returns an exit code. */
static int parse_shard(orphan_args *a)
{
    a->shard_index = 0;
    a->shard_count = 1;
    if (a->shard == NULL || icm_cli_parse_shard(a->shard, &a->shard_index, &a->shard_count))
        return ICM_EXIT_OK;
    return icm_cli_usage(a->shard, "--shard: expected I/N with 0 <= I < N (I is 0-based; "
                                   "N at most %u)", ICM_CLI_SHARDS_MAX);
}

/* Options from the arguments; a usage error is reported. */
static int build_options(const orphan_args *a, icm_orphan_options *o)
{
    int64_t now = 0;
    {
        /* one "now" for the cutoff and the library's 24-hour check */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    o->now_ms = now;
    if (a->older_than != NULL) {
        const char *why = NULL;
        if (icm_cli_parse_time(a->older_than, now, &o->older_than_ms, &why) != 0)
            return icm_cli_usage(a->older_than, "--older-than: %s",
                                 why != NULL ? why : "not a time");
        o->has_older_than = true;
    }
    if (a->prefix_mismatch != NULL &&
        icm_prefix_mismatch_parse(&o->prefix_mismatch, a->prefix_mismatch) != 0)
        return icm_cli_usage(a->prefix_mismatch, "--prefix-mismatch: use error, ignore or "
                                                 "delete");
    if (a->max_deletes != NULL) {
        int64_t n = 0;
        if (!icm_cli_parse_int64(a->max_deletes, &n) || n <= 0 || n > 1024)
            return icm_cli_usage(a->max_deletes,
                                 "max_concurrent_deletes should have value > 0 (at most "
                                 "1024), value: %s", a->max_deletes);
        o->max_concurrent_deletes = (unsigned)n;
    }
    o->settle_ms = ICM_ORPHAN_DEFAULT_SETTLE_MS;
    if (a->settle != NULL) {
        const char *why = NULL;
        if (icm_cli_parse_duration(a->settle, &o->settle_ms, &why) != 0)
            return icm_cli_usage(a->settle, "--settle: %s", why != NULL ? why : "not a duration");
    }
    o->location = a->location;
    o->dry_run = a->dry_run;
    o->force = a->force;
    o->no_verify = a->no_verify;
    o->equal_schemes = a->equal_schemes;
    o->equal_authorities = a->equal_authorities;
    o->exclude_locations = a->excludes;
    o->exclude_location_count = a->n_excludes;
    o->file_list = a->file_list;
    if (a->inventory != NULL && a->file_list != NULL)
        return icm_cli_usage(a->inventory, "--inventory and --file-list are two listings: give "
                                           "one");
    if (a->max_inventory_age != NULL && a->inventory == NULL)
        return icm_cli_usage(a->max_inventory_age, "--max-inventory-age needs --inventory");
    o->inventory = a->inventory;
    if (a->max_inventory_age != NULL) {
        const char *why = NULL;
        if (icm_cli_parse_duration(a->max_inventory_age, &o->max_inventory_age_ms, &why) != 0 ||
            o->max_inventory_age_ms <= 0)
            return icm_cli_usage(a->max_inventory_age, "--max-inventory-age: %s",
                                 why != NULL ? why : "not a positive duration");
    }
    o->shard_index = a->shard_index;
    o->shard_count = a->shard_count;
    o->trash = a->limits.trash;
    return icm_cli_limits_build(&a->limits, &o->limits);
}

static void progress_tty(size_t done, size_t total, void *payload)
{
    (void)payload;
    fprintf(stderr, "\rdeleting orphan files: %zu / %zu", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static const char *state_name(icm_orphan_state s)
{
    switch (s) {
    case ICM_ORPHAN_DELETED:
        return "deleted";
    case ICM_ORPHAN_FAILED:
        return "failed";
    case ICM_ORPHAN_ALREADY_GONE:
        return "already_gone";
    case ICM_ORPHAN_KEPT:
        return "kept";
    case ICM_ORPHAN_PLANNED:
        break;
    }
    return "planned";
}

static json_t *result_json(const orphan_args *a, const icm_orphan_result *r, icm_table *t,
                           bool *ok)
{
    json_t *doc = json_object(), *arr = json_array(), *counts = json_object(),
           *bytes = json_object(), *warnings = json_array();
    if (doc == NULL || arr == NULL || counts == NULL || bytes == NULL || warnings == NULL)
        *ok = false;
    for (size_t i = 0; i < r->orphan_count && *ok; i++) {
        const icm_orphan_file *f = &r->orphans[i];
        json_t *o = json_object();
        icm_cli_json_set(o, "path", icm_cli_json_str(f->path), ok);
        icm_cli_json_set(o, "size_bytes", icm_cli_json_int(f->size_bytes), ok);
        icm_cli_json_set(o, "mtime_ms", icm_cli_json_int(f->mtime_ms), ok);
        icm_cli_json_set(o, "kind", icm_cli_json_str(icm_orphan_kind_name(f->kind)), ok);
        icm_cli_json_set(o, "state", icm_cli_json_str(state_name(f->state)), ok);
        if (f->state == ICM_ORPHAN_FAILED || f->state == ICM_ORPHAN_KEPT)
            icm_cli_json_set(o, "error", icm_cli_json_str(f->error_message), ok);
        icm_cli_json_push(arr, o, ok);
    }
    for (int k = 0; k < ICM_ORPHAN_KIND_COUNT; k++) {
        const char *name = icm_orphan_kind_name((icm_orphan_kind)k);
        icm_cli_json_set(counts, name, icm_cli_json_int((int64_t)r->counts[k]), ok);
        icm_cli_json_set(bytes, name, icm_cli_json_int(r->bytes[k]), ok);
    }
    for (size_t i = 0; i < r->warning_count; i++)
        icm_cli_json_push(warnings, icm_cli_json_str(r->warnings[i]), ok);
    icm_cli_plan_header(doc, "remove-orphan-files", t, r->now_ms, ok);
    /* "I/N" (0-based I): the plan covers only that range (null: the whole location) */
    if (a->shard_count > 1)
        icm_cli_json_set(doc, "shard", icm_cli_json_shard(a->shard_index, a->shard_count), ok);
    icm_cli_json_set(doc, "location", icm_cli_json_str(r->location), ok);
    icm_cli_json_set(doc, "orphans", arr, ok);
    icm_cli_json_set(doc, "counts", counts, ok);
    icm_cli_json_set(doc, "bytes", bytes, ok);
    icm_cli_json_set(doc, "total", icm_cli_json_int((int64_t)r->total), ok);
    icm_cli_json_set(doc, "total_bytes", icm_cli_json_int(r->total_bytes), ok);
    icm_cli_json_set(doc, "listed", icm_cli_json_int((int64_t)r->listed), ok);
    icm_cli_json_set(doc, "referenced", icm_cli_json_int((int64_t)r->referenced), ok);
    icm_cli_json_set(doc, "keep_set_bytes", icm_cli_json_int((int64_t)r->keep_set_bytes), ok);
    icm_cli_json_set(doc, "referenced_listed",
                     icm_cli_json_int((int64_t)r->referenced_listed), ok);
    icm_cli_json_set(doc, "hidden", icm_cli_json_int((int64_t)r->hidden), ok);
    icm_cli_json_set(doc, "excluded", icm_cli_json_int((int64_t)r->excluded), ok);
    icm_cli_json_set(doc, "too_recent", icm_cli_json_int((int64_t)r->too_recent), ok);
    icm_cli_json_set(doc, "conflicts", icm_cli_json_int((int64_t)r->conflicts), ok);
    icm_cli_json_set(doc, "deleted", icm_cli_json_int((int64_t)r->deleted), ok);
    icm_cli_json_set(doc, "failed", icm_cli_json_int((int64_t)r->failed), ok);
    icm_cli_json_set(doc, "already_gone", icm_cli_json_int((int64_t)r->already_gone), ok);
    icm_cli_json_set(doc, "kept", icm_cli_json_int((int64_t)r->kept), ok);
    icm_cli_json_set(doc, "newly_referenced", icm_cli_json_int((int64_t)r->newly_referenced),
                     ok);
    icm_cli_json_set(doc, "delete_stopped", json_boolean(r->delete_stopped), ok);
    icm_cli_json_set(doc, "older_than_ms", icm_cli_json_int(r->older_than_ms), ok);
    icm_cli_json_set(doc, "dry_run", json_boolean(r->dry_run), ok);
    icm_cli_json_set(doc, "warnings", warnings, ok);
    return doc;
}

/* --counts-only: the report without its per-file lists, every count, byte total and metadata
 * field kept, so its size does not grow with the number of files (maintain reads one per
 * step of each table). A shallow copy: the lists are dropped from it, not from `doc`. */
static json_t *counts_only_json(json_t *doc)
{
    json_t *c = json_copy(doc);
    if (c == NULL)
        return NULL;
    bool ok = true;
    icm_cli_json_set(c, "warning_count",
                     icm_cli_json_int((int64_t)json_array_size(json_object_get(doc, "warnings"))),
                     &ok);
    json_object_del(c, "orphans");
    json_object_del(c, "warnings");
    if (!ok) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* The cells of orphan row `f` but its path (plain ASCII: escaping leaves them as they are); a
 * file moved into a trash is "trashed" (the JSON keeps the library's state, "deleted"). */
static void row_cells(const icm_orphan_file *f, bool trash, const char *cells[4], char *size,
                      size_t size_len, char *mtime, size_t mtime_len)
{
    cells[0] = icm_orphan_kind_name(f->kind);
    cells[1] = icm_cli_format_int64(f->size_bytes, size, size_len);
    cells[2] = icm_cli_format_time(f->mtime_ms, mtime, mtime_len);
    cells[3] = trash && f->state == ICM_ORPHAN_DELETED ? "trashed" : state_name(f->state);
    for (size_t c = 0; c < 4; c++)
        if (cells[c] == NULL)
            cells[c] = "-";
}

/* Append `cell` to line[*at], padded to `width` plus the two blanks between columns unless
 * it is the row's last cell. */
static void put_cell(char *line, size_t *at, const char *cell, size_t len, size_t width,
                     bool last)
{
    memcpy(line + *at, cell, len);
    *at += len;
    if (last)
        return;
    memset(line + *at, ' ', width - len + 2);
    *at += width - len + 2;
}

/* The rows of the orphans as one aligned table, in the layout of icm_cli_grid (each column as
 * wide as its widest cell, two blanks between columns, no padding after a row's last non-empty
 * cell, a trailing column empty in every row left out), printed as it goes: a first pass
 * measures the columns, the second escapes and prints each row, so a sweep of millions of
 * orphans keeps no copy of its report (the grid kept five strings a row). Returns false when
 * memory ran out (then nothing was printed). */
static bool print_rows(const icm_orphan_result *r, bool trash)
{
    static const char *const headers[] = {"KIND", "SIZE_BYTES", "MODIFIED", "STATE", "PATH"};
    size_t width[5] = {0}, longest_path = strlen(headers[4]);
    bool any_path = false;
    for (size_t c = 0; c < 5; c++)
        width[c] = strlen(headers[c]);
    for (size_t i = 0; i < r->orphan_count; i++) {
        const icm_orphan_file *f = &r->orphans[i];
        char size[32], mtime[64];
        const char *cells[4];
        row_cells(f, trash, cells, size, sizeof size, mtime, sizeof mtime);
        for (size_t c = 0; c < 4; c++) {
            size_t len = strlen(cells[c]);
            if (len > width[c])
                width[c] = len;
        }
        const char *path = f->path != NULL ? f->path : "-";
        size_t len = strlen(path);
        any_path = any_path || len > 0;
        if (len > longest_path)
            longest_path = len;
    }
    size_t ncols = any_path || r->orphan_count == 0 ? 5 : 4;
    size_t line_cap = ICM_ESCAPE_TEXT_MAX(longest_path) + 2;
    for (size_t c = 0; c < 4; c++)
        line_cap += width[c] + 2;
    char *line = malloc(line_cap);
    if (line == NULL)
        return false;
    size_t at = 0;
    for (size_t c = 0; c < ncols; c++)
        put_cell(line, &at, headers[c], strlen(headers[c]), width[c], c + 1 == ncols);
    line[at++] = '\n';
    fwrite(line, 1, at, stdout);
    for (size_t i = 0; i < r->orphan_count; i++) {
        const icm_orphan_file *f = &r->orphans[i];
        char size[32], mtime[64];
        const char *cells[4];
        row_cells(f, trash, cells, size, sizeof size, mtime, sizeof mtime);
        const char *path = f->path != NULL ? f->path : "-";
        at = 0;
        bool path_shown = ncols == 5 && path[0] != '\0';
        for (size_t c = 0; c < 4; c++)
            put_cell(line, &at, cells[c], strlen(cells[c]), width[c], !path_shown && c == 3);
        if (path_shown) {
            size_t room = line_cap - at;
            at += icm_escape_text(line + at, room, path, strlen(path));
        }
        line[at++] = '\n';
        fwrite(line, 1, at, stdout);
    }
    free(line);
    return true;
}

/* The text report; false when its rows could not be printed (out of memory). */
static bool print_human(const icm_orphan_result *r, const char *trash)
{
    char when[64];
    icm_cli_format_time(r->older_than_ms, when, sizeof when);
    bool ok = r->orphan_count == 0 || print_rows(r, trash != NULL);
    size_t n = r->dry_run ? r->total : r->deleted;
    const char *verb = trash == NULL ? (r->dry_run ? "dry run: would delete" : "deleted")
                                     : (r->dry_run ? "dry run: would move" : "moved");
    icm_cli_line(stdout, "%s %zu orphan file%s (%" PRId64 " bytes) older than %s under %s%s%s",
                 verb, n, n == 1 ? "" : "s", r->total_bytes, when,
                 r->location != NULL ? r->location : "", trash != NULL ? " to the trash " : "",
                 trash != NULL ? trash : "");
    if (r->counts[ICM_ORPHAN_CHECKSUM] > 0)
        icm_cli_line(stdout, "(%zu of them Hadoop checksum file%s beside the others)",
                     r->counts[ICM_ORPHAN_CHECKSUM],
                     r->counts[ICM_ORPHAN_CHECKSUM] == 1 ? "" : "s");
    printf("listed %zu files: %zu referenced, %zu too recent, %zu hidden, %zu excluded, "
           "%zu conflicting; the table references %zu locations\n",
           r->listed, r->referenced_listed, r->too_recent, r->hidden, r->excluded, r->conflicts,
           r->referenced);
    if (!r->dry_run && r->already_gone > 0)
        printf("%zu orphan file%s already gone when %s turn came (not counted as deleted)\n",
               r->already_gone, r->already_gone == 1 ? " was" : "s were",
               r->already_gone == 1 ? "its" : "their");
    if (r->kept > 0) /* (each warning says why: a link, a change, a lookalike reference) */
        printf("%zu orphan file%s %s (the warnings say why)\n", r->kept,
               r->kept == 1 ? "" : "s", r->dry_run ? "would be kept" : "kept");
    if (r->newly_referenced > 0)
        printf("%zu file%s kept: a commit during the sweep references %s\n",
               r->newly_referenced, r->newly_referenced == 1 ? "" : "s",
               r->newly_referenced == 1 ? "it" : "them");
    return ok;
}

/* Failed deletes: one error line each on stderr, exit code 1 when any; kept files (the last
 * check found a link or a change: the sweep did what it safely could) a warning line each. */
static int report_failures(const icm_cli *cli, const icm_orphan_result *r)
{
    for (size_t i = 0; i < r->orphan_count; i++) {
        const icm_orphan_file *f = &r->orphans[i];
        if (f->state != ICM_ORPHAN_FAILED && f->state != ICM_ORPHAN_KEPT)
            continue;
        bool kept = f->state == ICM_ORPHAN_KEPT;
        const char *why = f->error_message != NULL ? f->error_message
                          : kept                   ? "kept"
                                                   : "delete failed";
        bool says_so = strncmp(why, "not deleted", 11) == 0;
        icm_cli_file_line(kept ? cli : NULL, kept, f->path, says_so ? "" : "not deleted: ", why);
    }
    return r->failed > 0 ? ICM_EXIT_ERROR : ICM_EXIT_OK;
}

static void print_warnings(icm_cli *cli, const orphan_args *a, const icm_orphan_result *r)
{
    for (size_t i = 0; i < r->warning_count; i++)
        icm_cli_warn(cli, "%s", r->warnings[i]);
    /* A shard whose range gave nothing is normal (the last shards, when the table has fewer
     * sampled keys than N: docs/SHARDS.md): said once, as a note, not as the warning below,
     * which would send the operator of every idle shard to check a location that is fine. */
    if (r->listed == 0 && a->shard_count > 1) {
        if (cli->verbosity >= 0)
            fprintf(stderr, "icemaint: %s: shard %u/%u: its key range is empty, nothing to sweep "
                            "in it (normal when the table has fewer keys than shards; if every "
                            "shard says so, the location or %s may be wrong)\n",
                    r->location != NULL ? r->location : "", a->shard_index, a->shard_count,
                    a->file_list   ? "the file list"
                    : a->inventory ? "the inventory report"
                                   : "--location");
        return;
    }
    /* Safe (nothing to delete), but usually a mistyped --location or an empty file list. */
    if (r->listed == 0)
        icm_cli_warn(cli, "%s: %s gave no files below it; check the location%s",
                     r->location != NULL ? r->location : "",
                     a->file_list   ? "the file list"
                     : a->inventory ? "the inventory report"
                                    : "the listing",
                     a->file_list   ? " and the file list"
                     : a->inventory ? " and the inventory report"
                                    : "");
}

/* The report, after the deletes: building it cannot fail on any name (strings are byte
 * strings, escaped when written), only on memory or a failed write, and then the message says
 * what was deleted (README "Output"). */
static int output(icm_cli *cli, const orphan_args *a, icm_cli_plan_file *plan, icm_table *t,
                  const icm_orphan_result *r)
{
    print_warnings(cli, a, r);
    int rc = ICM_EXIT_OK;
    size_t deleted = r->dry_run ? 0 : r->deleted;
    if (cli->json || a->plan_out != NULL) {
        bool ok = true;
        json_t *doc = result_json(a, r, t, &ok);
        if (!ok) {
            json_decref(doc);
            return icm_cli_report_lost(deleted, "orphan file", "out of memory");
        }
        if (a->plan_out != NULL)
            rc = icm_cli_plan_write(plan, doc);
        /* The report goes to stdout even when the plan file failed: files may be gone. */
        json_t *out = !cli->json ? NULL
                      : a->counts_only ? counts_only_json(doc) : json_incref(doc);
        bool written = !cli->json || (out != NULL && icm_cli_json_emit(out));
        json_decref(doc);
        if (!written)
            return icm_cli_report_lost(deleted, "orphan file", "cannot write to stdout");
    }
    if (!cli->json && !print_human(r, a->limits.trash))
        rc = icm_cli_report_lost(deleted, "orphan file", "out of memory");
    else if (!icm_cli_stdout_ok())
        rc = icm_cli_report_lost(deleted, "orphan file", "cannot write to stdout");
    int frc = report_failures(cli, r);
    return rc != ICM_EXIT_OK ? rc : frc;
}

/* The files the configured catalog lives in (its .pyiceberg.yaml and SQLite database), which
 * the sweep never plans, also for a table named by its directory (issue #16, class 2). */
static int catalog_files(icm_cli *cli, char ***out, size_t *n)
{
    icm_catalog_config_options co = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    co.name = cli->catalog;
    co.config_file = cli->config;
    co.uri = cli->uri;
    co.warehouse = cli->warehouse;
    int rc = icm_catalog_config_own_files(out, n, &co);
    return rc == 0 ? ICM_EXIT_OK : icm_cli_fail(cli, rc);
}

/* The deletes stopped early: what stopped them (the library's error), and what was left. */
static int report_stopped(icm_cli *cli, int lrc, const icm_orphan_result *r,
                          const icm_cli_journal *j)
{
    const char *why;
    int rc = icm_cli_journal_broken(j, &why)
                 ? icm_cli_error(j->path, "--log-out: cannot write the journal (%s); the "
                                          "deletes stopped", why)
                 : icm_cli_fail(cli, lrc);
    size_t left = 0;
    for (size_t i = 0; i < r->orphan_count; i++)
        left += r->orphans[i].state == ICM_ORPHAN_PLANNED;
    fprintf(stderr, "icemaint: the sweep stopped deleting: %zu orphan file%s deleted, %zu "
                    "already gone, %zu not deleted\n",
            r->deleted, r->deleted == 1 ? "" : "s", r->already_gone, left);
    return rc;
}

/* The sweep itself, between the lease and the report. Returns an exit code. */
static int sweep(icm_cli *cli, const orphan_args *a, icm_orphan_options *o, icm_table *t,
                 icm_cli_plan_file *plan, icm_cli_journal *j)
{
    icm_orphan_result *r = NULL;
    int lrc = icm_orphan_sweep(&r, t, o);
    if (r == NULL) /* stopped before any delete */
        return icm_cli_journal_finish(j, icm_table_get_identifier(t), false,
                                      icm_cli_fail(cli, lrc), "none");
    int rc = lrc != 0 ? report_stopped(cli, lrc, r, j) : ICM_EXIT_OK;
    int orc = output(cli, a, plan, t, r);
    if (rc == ICM_EXIT_OK)
        rc = orc;
    const char *report = "none";
    rc = icm_cli_report_written(rc, r->dry_run ? 0 : r->deleted, "orphan file", &report);
    rc = icm_cli_journal_finish(j, icm_table_get_identifier(t), !r->delete_stopped, rc, report);
    icm_orphan_result_free(r);
    return rc;
}

static int run_orphans(icm_cli *cli, int argc, char **argv)
{
    orphan_args a;
    memset(&a, 0, sizeof a);
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    int rc = parse_args(argc, argv, &a);
    if (rc == ICM_EXIT_OK)
        rc = absolute_args(&a);
    if (rc == ICM_EXIT_OK)
        rc = parse_shard(&a);
    if (rc == ICM_EXIT_OK)
        rc = build_options(&a, &o);
    if (rc != ICM_EXIT_OK) {
        args_dispose(&a);
        return rc;
    }
    if (!a.dry_run && cli->verbosity >= 0 && isatty(STDERR_FILENO))
        o.progress = progress_tty;
    icm_cli_plan_file plan = {NULL, NULL, NULL};
    icm_cli_journal journal;
    memset(&journal, 0, sizeof journal);
    if (a.log_out != NULL &&
        (rc = icm_cli_journal_open(&journal, a.log_out, "remove-orphan-files")) != ICM_EXIT_OK) {
        args_dispose(&a);
        return rc;
    }
    if (a.plan_out != NULL && (rc = icm_cli_plan_open(&plan, a.plan_out)) != ICM_EXIT_OK) {
        icm_cli_journal_close(&journal);
        args_dispose(&a);
        return rc;
    }
    o.on_delete = icm_cli_journal_on_delete;
    o.on_delete_payload = a.log_out != NULL ? &journal : NULL;
    char **own = NULL;
    size_t n_own = 0;
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_lease *lease = NULL;
    rc = catalog_files(cli, &own, &n_own);
    o.catalog_files = (const char *const *)own;
    o.catalog_file_count = n_own;
    if (rc == ICM_EXIT_OK)
        rc = a.table_id != NULL ? icm_cli_table_load_id(cli, a.table_id, &cat, &t)
                                : icm_cli_table_load(cli, a.table, &cat, &t);
    if (rc == ICM_EXIT_OK && a.plan_out != NULL)
        rc = icm_cli_plan_check_table(&plan, t);
    if (rc == ICM_EXIT_OK)
        rc = icm_cli_journal_check_table(&journal, t);
    if (rc == ICM_EXIT_OK && !a.dry_run && !a.no_lock && !icm_table_is_read_only(t))
        rc = icm_cli_lease_take(cli, t, "remove-orphan-files", &lease);
    o.lease = lease;
    if (rc == ICM_EXIT_OK)
        rc = sweep(cli, &a, &o, t, &plan, &journal);
    icm_cli_lease_drop(lease);
    icm_cli_journal_close(&journal); /* (a no-op once finished) */
    icm_cli_plan_discard(&plan); /* a failed or refused sweep leaves no plan behind */
    icm_table_free(t);
    icm_catalog_free(cat);
    icm_catalog_own_files_free(own, n_own);
    args_dispose(&a);
    return rc;
}

const icm_cli_command icm_cli_cmd_remove_orphan_files = {
    "remove-orphan-files",
    "delete files no snapshot references, older than a cutoff (--dry-run to report only)",
    orphans_help,
    run_orphans,
};
