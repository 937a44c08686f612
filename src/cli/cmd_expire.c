/*
 * cli/cmd_expire.c: `icemaint expire-snapshots TABLE`: remove old snapshots from the table's
 * metadata (committed through its catalog or table directory), then delete the files only
 * those snapshots reached (icm_expire_snapshots). `--dry-run` decides and plans the same way
 * and changes nothing.
 *
 * Output (contract "Output"): a human summary on stdout (the cutoff and retain-last applied,
 * snapshots expired and kept, why each kept one is kept, files and bytes per kind), or with
 * --json one document {expired, retained, retained_reasons, removed_refs, deleted_files,
 * deleted_manifests, deleted_statistics_files, counts, bytes, total_deleted, total_bytes,
 * dry_run, cleanup, now_ms, older_than_ms, cutoff_ms, retain_last, metadata_location (absent on
 * a dry run), commit_reconciled (the commit's answer was lost and a reload showed it applied:
 * nothing was deleted), problems, already_gone, newly_referenced, delete_stopped, and after the deletes
 * not_deleted: the planned files with their state already_gone, kept or planned}. The reasons
 * are the library's (icm_expire_result.kept), decided where the decision is made; this file
 * only prints them. --plan-out FILE writes that same document to FILE; --log-out journals each
 * delete as it happens (deletes.c). Exit codes: 1 error (also a malformed history.expire.*
 * property or per-ref retention field: the message names it), 3 commit conflict, 4 commit
 * outcome unknown (nothing was deleted), 5 refused (gc.enabled not true, the table lease held
 * by another run, or a referenced file missing).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog_ref.h"
#include "cli.h"
#include "icemaint/expire.h"
#include "timeparse.h"

/* Longer than the 4095 bytes C11 promises every compiler takes; GCC and Clang take any. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char expire_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] expire-snapshots TABLE [OPTIONS]\n"
    "\n"
    "Remove snapshots from the table's metadata and delete the files that only they reached.\n"
    "The new metadata is committed first; files are deleted only after the commit succeeded\n"
    "(data and delete files, then manifests, then manifest lists, then statistics files).\n"
    "A file still reached by any retained snapshot (of any branch or tag) is never deleted.\n"
    "\n"
    "Which snapshots go (Iceberg's retention rules): never the current snapshot, never one a\n"
    "retained branch or tag points at, never so many that fewer than --retain-last remain; of\n"
    "the rest, those older than --older-than. Per-ref retention (min-snapshots-to-keep,\n"
    "max-snapshot-age-ms, max-ref-age-ms) and the table properties history.expire.* apply\n"
    "(malformed: exit 1). The report says why each kept snapshot stays (retained_reasons).\n"
    "\n"
    "TABLE is ns.table (through the configured catalog), a table directory in filesystem\n"
    "(Hadoop) layout, or a metadata JSON file (read-only: only --dry-run works).\n"
    "\n"
    "Options:\n"
    "  --older-than TIME           cutoff: a duration back from now (2w, 5d, 36h, 90m, 30s),\n"
    "                              an ISO-8601 instant with a zone (2026-11-01T00:00:00Z,\n"
    "                              ...+02:00), a date (2026-11-01, UTC) or epoch milliseconds\n"
    "                              (default: now - history.expire.max-snapshot-age-ms, 5 days)\n"
    "  --retain-last N             keep at least N snapshots when expiring by age (N >= 1;\n"
    "                              default: the table property\n"
    "                              history.expire.min-snapshots-to-keep, 1); snapshots named\n"
    "                              with --snapshot-id go regardless\n"
    "  --snapshot-id ID            expire this snapshot regardless of age (repeatable); refused\n"
    "                              when a retained branch or tag points at it\n"
    "  --cleanup all|metadata|none which files to delete: everything (default), only\n"
    "                              manifests, lists and statistics files, or nothing\n"
    "  --clean-expired-metadata    also remove partition specs and schemas no retained\n"
    "                              snapshot uses\n"
    "  --dry-run                   plan only: commit nothing, delete nothing\n"
    "  --plan-out FILE             write the JSON report to FILE (--cleanup none, --dry-run:\n"
    "                              a plan for apply, the released files' size and mtime)\n"
    "  --max-delete, --max-delete-bytes N|B (10g)  refuse (exit 5) a larger expiry before\n"
    "                              its commit: nothing committed, nothing deleted\n"
    "  --trash URI                 move, not delete (icemaint trash --help)\n"
    "  --max-concurrent-deletes N  delete with N threads (N > 0; default 1)\n"
    "  --log-out FILE              journal each file acted on (JSON lines: path, kind,\n"
    "                              size_bytes, outcome, error; then a summary), flushed per\n"
    "                              batch; opened first, so a bad path changes nothing\n"
    "  --no-lock                   do not take the table lease\n"
    "  --no-verify                 delete even when files retained snapshots need are gone\n"
    "  --table-id ID               instead of TABLE (for scripts, and maintain's steps): the\n"
    "                              catalog table as a JSON array of its namespace levels and\n"
    "                              name, [\"ns\",\"sub\",\"t\"]; never a path, not split at dots\n"
    "  --counts-only               with --json: leave out the per-file lists (deleted_*,\n"
    "                              not_deleted, problems: problem_count instead), keep every\n"
    "                              count, byte total and metadata field (for maintain, and\n"
    "                              scripts that need a report of constant size)\n"
    "  --json                      print the JSON report on stdout (deleted_* per kind,\n"
    "                              already_gone, newly_referenced, not_deleted, ...)\n"
    "  -h, --help                  print this help\n"
    "\n"
    "Deletes go in batches; before each the table is reloaded, and files a commit made\n"
    "meanwhile references are kept; a file already gone counts as already_gone. A real run\n"
    "takes the table lease (.icemaint-lease by the metadata); a second run is refused (exit\n"
    "5) naming its holder until it ends or the lease expires.\n"
    "\n"
    "Warnings (stderr, unless -q): an unreadable manifest list or manifest of an expired\n"
    "snapshot (kept, with the files only it names), a file outside the table's locations\n"
    "(kept), a cutoff in the future.\n"
    "\n"
    "Exit codes: 0 done, 1 error, 2 usage, 3 commit conflict (nothing changed), 4 commit\n"
    "outcome unknown (nothing deleted; reload to see whether it applied), 5 refused\n"
    "(gc.enabled not true, another run holds the table lease, a --snapshot-id that is current\n"
    "or a branch or tag points at, or a referenced file missing).\n";
#pragma GCC diagnostic pop

typedef struct expire_args {
    const char *table;
    const char *table_id; /* --table-id: the table by its catalog levels and name */
    const char *older_than;
    const char *plan_out;
    const char *log_out;
    bool no_lock;
    bool counts_only; /* --counts-only */
    icm_cli_limits_args limits;
    int64_t *ids;
    size_t n_ids;
    icm_expire_options opts;
} expire_args;

/* ---- parsing ---- */

static int parse_count(const char *opt, const char *text, int64_t min, int64_t max,
                       int64_t *out)
{
    if (!icm_cli_parse_int64(text, out) || *out < min || *out > max)
        return icm_cli_usage(opt, "needs a whole number from %lld to %lld, not '%s'",
                             (long long)min, (long long)max, text);
    return ICM_EXIT_OK;
}

static int add_id(expire_args *a, const char *text)
{
    return icm_cli_push_snapshot_id(&a->ids, &a->n_ids, text);
}

/* One option at argv[*i]: returns ICM_EXIT_OK when handled, -1 when it is not an option of
 * ours, or an exit code after a usage error. */
static int parse_option(expire_args *a, int argc, char **argv, int *i)
{
    const char *v = NULL;
    int got;
    int64_t n = 0;
    if ((got = icm_cli_opt_value(argc, argv, i, "--older-than", &v)) != 0) {
        a->older_than = v;
        return got < 0 ? ICM_EXIT_USAGE : ICM_EXIT_OK;
    }
    if ((got = icm_cli_opt_value(argc, argv, i, "--retain-last", &v)) != 0) {
        int rc = got < 0 ? ICM_EXIT_USAGE : parse_count("--retain-last", v, 1, INT32_MAX, &n);
        a->opts.decide.retain_last = (int32_t)n;
        return rc;
    }
    if ((got = icm_cli_opt_value(argc, argv, i, "--snapshot-id", &v)) != 0)
        return got < 0 ? ICM_EXIT_USAGE : add_id(a, v);
    if ((got = icm_cli_opt_value(argc, argv, i, "--cleanup", &v)) != 0) {
        if (got < 0)
            return ICM_EXIT_USAGE;
        if (icm_expire_cleanup_parse(&a->opts.cleanup, v) != 0)
            return icm_cli_usage(v, "--cleanup takes all, metadata or none");
        return ICM_EXIT_OK;
    }
    if ((got = icm_cli_opt_value(argc, argv, i, "--table-id", &v)) != 0) {
        a->table_id = v;
        return got < 0 ? ICM_EXIT_USAGE : ICM_EXIT_OK;
    }
    if ((got = icm_cli_opt_value(argc, argv, i, "--plan-out", &v)) != 0) {
        a->plan_out = v;
        return got < 0 ? ICM_EXIT_USAGE : ICM_EXIT_OK;
    }
    if ((got = icm_cli_opt_value(argc, argv, i, "--log-out", &v)) != 0) {
        a->log_out = v;
        return got < 0 ? ICM_EXIT_USAGE : ICM_EXIT_OK;
    }
    if (strcmp(argv[*i], "--counts-only") == 0) {
        a->counts_only = true;
        return ICM_EXIT_OK;
    }
    if (strcmp(argv[*i], "--no-lock") == 0) {
        a->no_lock = true;
        return ICM_EXIT_OK;
    }
    if ((got = icm_cli_opt_value(argc, argv, i, "--max-concurrent-deletes", &v)) != 0) {
        int rc = got < 0 ? ICM_EXIT_USAGE
                         : parse_count("--max-concurrent-deletes", v, 1, 64, &n);
        a->opts.max_concurrent_deletes = (unsigned)n;
        return rc;
    }
    if (strcmp(argv[*i], "--clean-expired-metadata") == 0) {
        a->opts.clean_expired_metadata = true;
        return ICM_EXIT_OK;
    }
    if (strcmp(argv[*i], "--dry-run") == 0) {
        a->opts.dry_run = true;
        return ICM_EXIT_OK;
    }
    if (strcmp(argv[*i], "--no-verify") == 0) {
        a->opts.no_verify = true;
        return ICM_EXIT_OK;
    }
    if ((got = icm_cli_limits_take(argc, argv, i, &a->limits)) != 0)
        return got < 0 ? ICM_EXIT_USAGE : ICM_EXIT_OK;
    return -1;
}

static int parse_args(expire_args *a, int argc, char **argv)
{
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        int rc = after_dashdash ? -1 : parse_option(a, argc, argv, &i);
        if (rc == -1)
            rc = icm_cli_take_table("expire-snapshots", argv, i, &after_dashdash, &a->table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    if (a->table_id != NULL && a->table != NULL)
        return icm_cli_usage(a->table, "give TABLE or --table-id, not both");
    int rc = a->table_id != NULL ? ICM_EXIT_OK
                                 : icm_cli_need_table("expire-snapshots", a->table);
    if (rc != ICM_EXIT_OK)
        return rc;
    int64_t now = a->opts.decide.now_ms;
    if (a->older_than != NULL) {
        const char *why = NULL;
        if (icm_cli_parse_time(a->older_than, now, &a->opts.decide.older_than_ms, &why) != 0)
            return icm_cli_usage(a->older_than, "--older-than: %s", why ? why : "bad time");
        a->opts.decide.has_older_than = true;
    }
    a->opts.decide.snapshot_ids = a->ids;
    a->opts.decide.snapshot_id_count = a->n_ids;
    if (a->limits.percent != NULL)
        return icm_cli_usage(a->limits.percent, "--max-delete-percent is for "
                                                "remove-orphan-files and apply (an expiry "
                                                "lists no files to take a percentage of)");
    a->opts.trash = a->limits.trash;
    return icm_cli_limits_build(&a->limits, &a->opts.limits);
}

/* ---- JSON report ---- */

static json_t *ids_json(const int64_t *ids, size_t n, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    for (size_t i = 0; arr != NULL && i < n; i++)
        icm_cli_json_push(arr, icm_cli_json_int(ids[i]), ok);
    return arr;
}

static const char *file_state_name(icm_expire_file_state s)
{
    switch (s) {
    case ICM_EXPIRE_FILE_DELETED:
        return "deleted";
    case ICM_EXPIRE_FILE_FAILED:
        return "failed";
    case ICM_EXPIRE_FILE_ALREADY_GONE:
        return "already_gone";
    case ICM_EXPIRE_FILE_KEPT:
        return "kept";
    case ICM_EXPIRE_FILE_PLANNED:
        break;
    }
    return "planned";
}

/* Files in state `want` (PLANNED on a dry run, DELETED after the deletes); with `others`, the
 * rest instead (with their state), except failed ones, which are listed under problems. */
static json_t *files_json(const icm_expire_file *files, size_t n, icm_expire_file_state want,
                          bool others, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    for (size_t i = 0; arr != NULL && i < n; i++) {
        if (files[i].state == ICM_EXPIRE_FILE_FAILED || (files[i].state == want) == others)
            continue;
        json_t *o = json_object();
        if (o == NULL) {
            *ok = false;
            break;
        }
        icm_cli_json_set(o, "path", icm_cli_json_str(files[i].path), ok);
        icm_cli_json_set(o, "kind", icm_cli_json_str(icm_expire_file_kind_name(files[i].kind)),
                         ok);
        icm_cli_json_set(o, "size_bytes",
                         files[i].size_bytes >= 0 ? icm_cli_json_int(files[i].size_bytes)
                                                  : json_null(),
                         ok);
        if (others)
            icm_cli_json_set(o, "state", icm_cli_json_str(file_state_name(files[i].state)), ok);
        icm_cli_json_push(arr, o, ok);
    }
    return arr;
}

static json_t *per_kind_json(const icm_expire_result *r, bool bytes, bool *ok)
{
    json_t *o = json_object();
    if (o == NULL)
        *ok = false;
    for (int k = 0; o != NULL && k < ICM_EXPIRE_FILE_KIND_COUNT; k++)
        icm_cli_json_set(o, icm_expire_file_kind_name((icm_expire_file_kind)k),
                         icm_cli_json_int(bytes ? r->bytes[k] : (int64_t)r->counts[k]), ok);
    return o;
}

static const char *problem_name(icm_expire_problem_kind kind)
{
    switch (kind) {
    case ICM_EXPIRE_PROBLEM_UNREADABLE:
        return "unreadable";
    case ICM_EXPIRE_PROBLEM_OUTSIDE_TABLE:
        return "outside_table";
    case ICM_EXPIRE_PROBLEM_DELETE_FAILED:
        return "delete_failed";
    case ICM_EXPIRE_PROBLEM_REFRESH_FAILED:
        return "refresh_failed";
    case ICM_EXPIRE_PROBLEM_DELETES_STOPPED:
        return "deletes_stopped";
    case ICM_EXPIRE_PROBLEM_MISSING:
        return "missing";
    case ICM_EXPIRE_PROBLEM_OTHER_TABLE:
        return "other_table";
    case ICM_EXPIRE_PROBLEM_THROUGH_LINK:
        return "through_link";
    case ICM_EXPIRE_PROBLEM_LIVE_CONTENT:
        return "live_content";
    }
    return "other";
}

static json_t *problems_json(const icm_expire_result *r, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    for (size_t i = 0; arr != NULL && i < r->problem_count; i++) {
        json_t *o = json_object();
        if (o == NULL) {
            *ok = false;
            break;
        }
        icm_cli_json_set(o, "kind", icm_cli_json_str(problem_name(r->problems[i].kind)), ok);
        icm_cli_json_set(o, "path", icm_cli_json_str(r->problems[i].location), ok);
        icm_cli_json_set(o, "code", icm_cli_json_str(icm_error_code_name(r->problems[i].code)),
                         ok);
        icm_cli_json_set(o, "message", icm_cli_json_str(r->problems[i].message), ok);
        icm_cli_json_push(arr, o, ok);
    }
    return arr;
}

/* {snapshot_id, reasons: [{reason, ref (when the reason names one)}]} for one kept snapshot. */
static json_t *kept_json(const icm_expire_kept *kept, bool *ok)
{
    json_t *o = json_object(), *reasons = json_array();
    if (o == NULL || reasons == NULL) {
        json_decref(o);
        json_decref(reasons);
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(o, "snapshot_id", icm_cli_json_int(kept->snapshot_id), ok);
    for (size_t i = 0; i < kept->reason_count; i++) {
        json_t *why = json_object();
        if (why == NULL) {
            *ok = false;
            break;
        }
        icm_cli_json_set(why, "reason",
                         icm_cli_json_str(icm_expire_keep_reason_name(kept->reasons[i].kind)), ok);
        if (kept->reasons[i].ref != NULL)
            icm_cli_json_set(why, "ref", icm_cli_json_str(kept->reasons[i].ref), ok);
        icm_cli_json_push(reasons, why, ok);
    }
    icm_cli_json_set(o, "reasons", reasons, ok);
    return o;
}

/* retained_reasons: one entry per id of `retained`, in the same order. */
static json_t *kept_list_json(const icm_expire_result *r, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    for (size_t i = 0; arr != NULL && r->kept != NULL && i < r->retained_count; i++)
        icm_cli_json_push(arr, kept_json(&r->kept[i], ok), ok);
    return arr;
}

static json_t *refs_json(const icm_expire_result *r, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    for (size_t i = 0; arr != NULL && i < r->removed_ref_count; i++)
        icm_cli_json_push(arr, icm_cli_json_str(r->removed_refs[i]), ok);
    return arr;
}

static json_t *report_json(const icm_expire_result *r, bool *ok)
{
    json_t *doc = json_object();
    if (doc == NULL) {
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(doc, "dry_run", json_boolean(r->dry_run), ok);
    icm_cli_json_set(doc, "cleanup", icm_cli_json_str(icm_expire_cleanup_name(r->cleanup)), ok);
    icm_cli_json_set(doc, "now_ms", icm_cli_json_int(r->now_ms), ok);
    icm_cli_json_set(doc, "older_than_ms", icm_cli_json_int(r->older_than_ms), ok);
    icm_cli_json_set(doc, "cutoff_ms", icm_cli_json_int(r->older_than_ms), ok);
    icm_cli_json_set(doc, "retain_last", icm_cli_json_int(r->retain_last), ok);
    icm_cli_json_set(doc, "expired", ids_json(r->expired_ids, r->expired_count, ok), ok);
    icm_cli_json_set(doc, "retained", ids_json(r->retained_ids, r->retained_count, ok), ok);
    icm_cli_json_set(doc, "retained_reasons", kept_list_json(r, ok), ok);
    icm_cli_json_set(doc, "removed_refs", refs_json(r, ok), ok);
    icm_expire_file_state want = r->delete_phase ? ICM_EXPIRE_FILE_DELETED : ICM_EXPIRE_FILE_PLANNED;
    icm_cli_json_set(doc, "deleted_files",
                     files_json(r->deleted_files, r->deleted_file_count, want, false, ok), ok);
    icm_cli_json_set(doc, "deleted_manifests",
                     files_json(r->deleted_manifests, r->deleted_manifest_count, want, false, ok),
                     ok);
    icm_cli_json_set(doc, "deleted_statistics_files",
                     files_json(r->deleted_statistics_files, r->deleted_statistics_file_count,
                                want, false, ok),
                     ok);
    icm_cli_json_set(doc, "deleted_checksum_files",
                     files_json(r->deleted_checksum_files, r->deleted_checksum_file_count, want,
                                false, ok),
                     ok);
    if (r->delete_phase) {
        /* planned but not deleted: already gone, kept (a commit during the deletes references
         * them) or not reached (the deletes stopped) */
        json_t *rest = files_json(r->deleted_files, r->deleted_file_count, want, true, ok);
        json_t *more[] = {
            files_json(r->deleted_manifests, r->deleted_manifest_count, want, true, ok),
            files_json(r->deleted_statistics_files, r->deleted_statistics_file_count, want, true,
                       ok),
            files_json(r->deleted_checksum_files, r->deleted_checksum_file_count, want, true, ok),
        };
        for (size_t k = 0; k < 3; k++) {
            if (rest != NULL && json_array_extend(rest, more[k]) != 0)
                *ok = false;
            json_decref(more[k]);
        }
        icm_cli_json_set(doc, "not_deleted", rest, ok);
    }
    icm_cli_json_set(doc, "already_gone", icm_cli_json_int((int64_t)r->already_gone), ok);
    icm_cli_json_set(doc, "newly_referenced", icm_cli_json_int((int64_t)r->newly_referenced),
                     ok);
    icm_cli_json_set(doc, "delete_stopped", json_boolean(r->delete_stopped), ok);
    icm_cli_json_set(doc, "counts", per_kind_json(r, false, ok), ok);
    icm_cli_json_set(doc, "bytes", per_kind_json(r, true, ok), ok);
    icm_cli_json_set(doc, "total_deleted", icm_cli_json_int((int64_t)r->total), ok);
    icm_cli_json_set(doc, "total_bytes", icm_cli_json_int(r->total_bytes), ok);
    icm_cli_json_set(doc, "removed_partition_specs",
                     icm_cli_json_int((int64_t)r->removed_spec_count), ok);
    icm_cli_json_set(doc, "removed_schemas", icm_cli_json_int((int64_t)r->removed_schema_count),
                     ok);
    if (r->metadata_location != NULL)
        icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(r->metadata_location), ok);
    icm_cli_json_set(doc, "commit_reconciled", json_boolean(r->commit_reconciled), ok);
    icm_cli_json_set(doc, "problems", problems_json(r, ok), ok);
    return doc;
}

/* ---- human report ---- */

static void print_ids(const char *label, const int64_t *ids, size_t n)
{
    printf("%s %zu snapshot%s", label, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 20; i++)
        printf("%s%lld", i ? ", " : ": ", (long long)ids[i]);
    if (n > 20)
        printf(", ... (%zu more)", n - 20);
    putchar('\n');
}

/* One reason as the text report says it, on `out`. */
static void print_reason(FILE *out, const icm_expire_reason *why)
{
    const char *ref = why->ref != NULL ? why->ref : "";
    switch (why->kind) {
    case ICM_EXPIRE_KEEP_CURRENT:
        fputs("current", out);
        break;
    case ICM_EXPIRE_KEEP_REF:
        fprintf(out, "ref %s", ref);
        break;
    case ICM_EXPIRE_KEEP_RETAIN_LAST:
        if (why->ref != NULL)
            fprintf(out, "retain-last (branch %s)", ref);
        else
            fputs("retain-last (table)", out);
        break;
    case ICM_EXPIRE_KEEP_MIN_SNAPSHOTS_TO_KEEP:
        fprintf(out, "min-snapshots-to-keep of branch %s", ref);
        break;
    case ICM_EXPIRE_KEEP_NEWER_THAN_CUTOFF:
        fputs("newer than the cutoff", out);
        break;
    case ICM_EXPIRE_KEEP_MAX_SNAPSHOT_AGE:
        fprintf(out, "max-snapshot-age-ms of branch %s", ref);
        break;
    default:
        fputs(icm_expire_keep_reason_name(why->kind), out);
    }
}

/* "  ID: reason, reason" for one kept snapshot, as one printable line (ref names are any
 * bytes: icm_cli_line escapes them). */
static void print_kept(const icm_expire_kept *kept)
{
    char *line = NULL;
    size_t len = 0;
    FILE *text = open_memstream(&line, &len);
    if (text != NULL) {
        fprintf(text, "  %lld:", (long long)kept->snapshot_id);
        for (size_t k = 0; k < kept->reason_count; k++) {
            fputs(k ? ", " : " ", text);
            print_reason(text, &kept->reasons[k]);
        }
    }
    if (text != NULL && fclose(text) == 0)
        icm_cli_line(stdout, "%s", line);
    else
        printf("  %lld: (out of memory; --json lists its reasons)\n",
               (long long)kept->snapshot_id);
    free(line);
}

/* The reasons of the first kept snapshots (as many as the kept line lists). */
static void print_reasons(const icm_expire_result *r)
{
    for (size_t i = 0; r->kept != NULL && i < r->retained_count && i < 20; i++)
        print_kept(&r->kept[i]);
    if (r->kept != NULL && r->retained_count > 20)
        printf("  ... (%zu more; --json lists every reason)\n", r->retained_count - 20);
}

/* "cutoff 2026-11-01T00:00:00Z (1793491200000 ms), retain-last 1". */
static void print_rules(const icm_expire_result *r)
{
    char when[64];
    printf("cutoff %s (%lld ms), retain-last %ld\n",
           icm_cli_format_time(r->older_than_ms, when, sizeof when), (long long)r->older_than_ms,
           (long)r->retain_last);
}

static void print_human(const icm_expire_result *r)
{
    print_rules(r);
    print_ids(r->dry_run ? "would expire" : "expired", r->expired_ids, r->expired_count);
    print_ids("kept", r->retained_ids, r->retained_count);
    print_reasons(r);
    for (size_t i = 0; i < r->removed_ref_count; i++)
        icm_cli_line(stdout, "%s ref %s", r->dry_run ? "would remove" : "removed",
                     r->removed_refs[i]);
    if (r->removed_spec_count + r->removed_schema_count > 0)
        printf("%s %zu partition spec(s), %zu schema(s)\n",
               r->dry_run ? "would remove" : "removed", r->removed_spec_count,
               r->removed_schema_count);
    printf("%s (cleanup %s):\n", r->dry_run ? "files to delete" : "files deleted",
           icm_expire_cleanup_name(r->cleanup));
    for (int k = 0; k < ICM_EXPIRE_FILE_KIND_COUNT; k++)
        if (r->counts[k] > 0)
            printf("  %-22s %8zu files %14lld bytes\n",
                   icm_expire_file_kind_name((icm_expire_file_kind)k), r->counts[k],
                   (long long)r->bytes[k]);
    printf("  %-22s %8zu files %14lld bytes\n", "total", r->total, (long long)r->total_bytes);
    if (r->already_gone > 0)
        printf("%zu planned file%s already gone when %s turn came (not counted as deleted)\n",
               r->already_gone, r->already_gone == 1 ? " was" : "s were",
               r->already_gone == 1 ? "its" : "their");
    if (r->newly_referenced > 0)
        printf("%zu planned file%s kept: a commit during the deletes references %s again\n",
               r->newly_referenced, r->newly_referenced == 1 ? "" : "s",
               r->newly_referenced == 1 ? "it" : "them");
    if (r->metadata_location != NULL)
        icm_cli_line(stdout, "committed %s", r->metadata_location);
    if (r->commit_reconciled)
        printf("no file was deleted: the commit's answer was lost, and only reloading the table "
               "showed it applied; the expired snapshots' files are orphans now "
               "(remove-orphan-files removes them once older than its window)\n");
}

/* Problems go to stderr in both modes: they are what a user must act on. A failed delete is an
 * error, and so is a retained list or manifest that could not be read (its line names a
 * retained snapshot that references it and what was held back); a file that was kept (an
 * unreadable list or manifest of an expired snapshot, a file outside the table, one reached
 * through a symbolic link) is a warning (-q hides it): the expiry did what it could safely do. */
static int report_problems(const icm_cli *cli, const icm_expire_result *r)
{
    bool failed = false;
    for (size_t i = 0; i < r->problem_count; i++) {
        const icm_expire_problem *p = &r->problems[i];
        /* a retained list or manifest that could not be read is an error (exit 1; README) */
        bool warning = p->kind != ICM_EXPIRE_PROBLEM_DELETE_FAILED && i + 1 != r->withheld_by;
        failed = failed || !warning;
        char suffix[32];
        snprintf(suffix, sizeof suffix, " (%s)", problem_name(p->kind));
        icm_cli_file_line(cli, warning, p->location, p->message, suffix);
    }
    /* Cleanup held back because the table could not be read whole: safe, but not what was
     * asked for, so the exit code says so (1) and a script can tell. */
    if (r->withheld_by != 0) {
        failed = true; /* its line above says what was held back */
    } else if (r->withheld_manifests) {
        failed = true;
        fprintf(stderr, "icemaint: a retained manifest list could not be read: no manifest, data "
                        "or delete file was deleted\n");
    } else if (r->withheld_content_files) {
        failed = true;
        fprintf(stderr, "icemaint: a retained manifest could not be read: no data or delete "
                        "file was deleted\n");
    }
    bool withheld = r->withheld_by != 0 || r->withheld_manifests || r->withheld_content_files;
    if (failed && !r->dry_run && withheld)
        /* Files a retained list or manifest hides were kept: they may be live, not orphans.
         * A sweep refuses while that file cannot be read (adversary round 5b, finding 3). */
        fprintf(stderr, "icemaint: the expiry was committed, but the files the unreadable "
                        "manifest list or manifest may still name were kept; repair or restore "
                        "it before any cleanup (remove-orphan-files refuses until then)\n");
    else if (failed && !r->dry_run)
        fprintf(stderr, "icemaint: the expiry was committed, but some files were not "
                        "deleted; they are orphans now (remove-orphan-files can clean them)\n");
    return failed ? ICM_EXIT_ERROR : ICM_EXIT_OK;
}

/* A cutoff after "now" is legal (every snapshot is then old enough by age) but is rarely what
 * was meant: say what it does. */
static void warn_future_cutoff(const icm_cli *cli, const icm_expire_result *r)
{
    if (r->older_than_ms <= r->now_ms)
        return;
    char when[64];
    icm_cli_format_time(r->older_than_ms, when, sizeof when);
    icm_cli_warn(cli, "the cutoff %s is in the future (after now): every snapshot is older than "
                      "it, so only --retain-last (history.expire.min-snapshots-to-keep), refs "
                      "and the current snapshot keep snapshots", when);
}

/* ---- run ---- */

static int64_t wall_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --counts-only: the report without its per-file lists, every count, byte total and metadata
 * field kept, so its size does not grow with the number of files (maintain reads one per
 * step of each table). A shallow copy: the lists are dropped from it, not from `doc`. */
static json_t *counts_only_json(json_t *doc)
{
    static const char *const lists[] = {"deleted_files", "deleted_manifests",
                                        "deleted_statistics_files", "deleted_checksum_files",
                                        "not_deleted", "problems"};
    json_t *c = json_copy(doc);
    if (c == NULL)
        return NULL;
    bool ok = true;
    icm_cli_json_set(c, "problem_count",
                     icm_cli_json_int((int64_t)json_array_size(json_object_get(doc, "problems"))),
                     &ok);
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        json_object_del(c, lists[k]);
    if (!ok) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* What --json prints: the report, or with --counts-only its counts. Steals doc. */
static bool emit_report(json_t *doc, bool counts_only)
{
    if (counts_only && doc != NULL) {
        json_t *c = counts_only_json(doc);
        json_decref(doc);
        doc = c;
    }
    return doc != NULL && icm_cli_json_emit(doc);
}

/* The files an expiry released, as a plan's `released` (cli.h, "The plan format"): each with
 * the size and modification time storage shows now, which `apply` requires unchanged before
 * it deletes the file. A file already gone is left out; one whose time storage does not tell
 * is left out with a warning (apply could not tell it unchanged). */
static json_t *released_json(icm_cli *cli, icm_table *t, const icm_expire_result *rel, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    const icm_expire_file *const vecs[] = {rel->deleted_files, rel->deleted_manifests,
                                           rel->deleted_statistics_files};
    const size_t lens[] = {rel->deleted_file_count, rel->deleted_manifest_count,
                           rel->deleted_statistics_file_count};
    for (size_t k = 0; k < 3 && *ok; k++) {
        for (size_t i = 0; i < lens[k] && *ok; i++) {
            const icm_expire_file *f = &vecs[k][i];
            icm_file_info info = ICM_FILE_INFO_INIT;
            int rc = icm_fileio_stat(&info, icm_table_get_fileio(t), f->path);
            if (rc != 0 || info.mtime_ms < 0) {
                if (rc != ICM_ENOTFOUND)
                    icm_cli_warn(cli, "%s: left out of the plan: %s", f->path,
                                 rc != 0 ? icm_error_last()->message
                                         : "storage gives no modification time");
                icm_error_clear();
                continue;
            }
            json_t *o = json_object();
            icm_cli_json_set(o, "path", icm_cli_json_str(f->path), ok);
            icm_cli_json_set(o, "size_bytes", icm_cli_json_int(info.size_bytes), ok);
            icm_cli_json_set(o, "mtime_ms", icm_cli_json_int(info.mtime_ms), ok);
            icm_cli_json_set(o, "kind", icm_cli_json_str(icm_expire_file_kind_name(f->kind)),
                             ok);
            icm_cli_json_push(arr, o, ok);
        }
    }
    return arr;
}

/* A dry run over a guard rail is not refused (the plan is for review): it says so. */
static void warn_limits(const icm_cli *cli, const expire_args *a, const icm_expire_result *r,
                        icm_table *t)
{
    if (!r->dry_run || !icm_cli_limits_set(&a->opts.limits))
        return;
    if (icm_delete_limits_check(&a->opts.limits, icm_table_get_identifier(t), r->total,
                                r->total_bytes, 0) != 0)
        icm_cli_warn(cli, "a real run would be refused: %s", icm_error_last()->message);
    icm_error_clear();
}

/* The report, after the commit and the deletes: building it cannot fail on any name (strings
 * are byte strings, escaped when written), only on memory or a failed write, and then the
 * message says what was done (README "Output"). */
static int report(icm_cli *cli, const expire_args *a, icm_cli_plan_file *plan, icm_table *t,
                  const icm_expire_result *r, const icm_expire_result *released)
{
    warn_future_cutoff(cli, r);
    warn_limits(cli, a, r, t);
    int rc = ICM_EXIT_OK;
    const char *lost = NULL; /* why the report could not be printed */
    if (cli->json || a->plan_out != NULL) {
        /* One document for the plan file (opened before the expiry ran, plan_file.c) and
         * stdout. The report goes to stdout even when the plan file failed: files may be gone;
         * a failed plan file still decides the exit code. */
        bool ok = true;
        json_t *doc = report_json(r, &ok);
        if (ok && a->plan_out != NULL) {
            icm_cli_plan_header(doc, "expire-snapshots", t, r->now_ms, &ok);
            if (released != NULL)
                icm_cli_json_set(doc, "released", released_json(cli, t, released, &ok), &ok);
        }
        if (!ok) {
            icm_cli_plan_discard(plan);
            lost = "out of memory";
        } else {
            if (a->plan_out != NULL)
                rc = icm_cli_plan_write(plan, doc);
            if (cli->json && !emit_report(json_incref(doc), a->counts_only))
                lost = "cannot write to stdout";
        }
        json_decref(doc);
    }
    if (!cli->json)
        print_human(r); /* -q quiets stderr diagnostics, not the result */
    if (lost == NULL && !icm_cli_stdout_ok())
        lost = "cannot write to stdout";
    if (lost != NULL) {
        if (r->committed)
            icm_cli_line(stderr, "icemaint: the expiry was committed (%s)",
                         r->metadata_location != NULL ? r->metadata_location : "");
        rc = icm_cli_report_lost(r->dry_run ? 0 : r->total, "file", lost);
    }
    int prc = report_problems(cli, r);
    return rc != ICM_EXIT_OK ? rc : prc;
}

/* Count DELETED files (what the journal and a failed report must not hide). */
static size_t count_state(const icm_expire_result *r, icm_expire_file_state st)
{
    size_t n = 0;
    for (size_t i = 0; i < r->deleted_file_count; i++)
        n += r->deleted_files[i].state == st;
    for (size_t i = 0; i < r->deleted_manifest_count; i++)
        n += r->deleted_manifests[i].state == st;
    for (size_t i = 0; i < r->deleted_statistics_file_count; i++)
        n += r->deleted_statistics_files[i].state == st;
    for (size_t i = 0; i < r->deleted_checksum_file_count; i++)
        n += r->deleted_checksum_files[i].state == st;
    return n;
}

/* The library call failed; r may say the commit happened and what was deleted. */
static int report_failure(icm_cli *cli, const expire_args *a, icm_cli_plan_file *plan,
                          const icm_expire_result *r, int lrc, const icm_cli_journal *j)
{
    const char *why;
    int rc = icm_cli_journal_broken(j, &why)
                 ? icm_cli_error(j->path, "--log-out: cannot write the journal (%s); the "
                                          "deletes stopped", why)
                 : icm_cli_fail(cli, lrc);
    icm_cli_plan_discard(plan);
    if (r != NULL && r->committed && r->missing_count > 0)
        /* verification failed: the expired snapshots' files may include live ones the
         * damaged metadata misnames, so they are not orphans to clean */
        icm_cli_line(stderr, "icemaint: the expiry was committed (%s); its files were kept "
                             "because the retained snapshots' references failed "
                             "verification (above): repair or restore the damaged metadata "
                             "before any cleanup (remove-orphan-files refuses until then)",
                     r->metadata_location != NULL ? r->metadata_location : "");
    else if (r != NULL && r->committed)
        icm_cli_line(stderr, "icemaint: the expiry was committed (%s), but cleaning up its "
                             "files stopped; the files left are orphans (remove-orphan-files "
                             "can clean them)",
                     r->metadata_location != NULL ? r->metadata_location : "");
    if (lrc == ICM_ECOMMIT_UNKNOWN)
        fprintf(stderr, "icemaint: nothing was deleted; reload the table (icemaint snapshots "
                        "TABLE) to see whether the expiry applied, then run it again\n");
    if (r != NULL && r->committed && !r->delete_phase && r->missing_count > 0 && !cli->json) {
        /* committed, nothing deleted: which snapshots went (the JSON report below says it) */
        print_ids("expired", r->expired_ids, r->expired_count);
    }
    if (r != NULL && (r->delete_phase || (r->committed && r->missing_count > 0 && cli->json))) {
        /* Files were deleted before the deletes stopped: show them, and why the rest stayed. */
        report_problems(cli, r);
        fprintf(stderr, "icemaint: %zu file%s deleted, %zu already gone, %zu not deleted\n",
                count_state(r, ICM_EXPIRE_FILE_DELETED),
                count_state(r, ICM_EXPIRE_FILE_DELETED) == 1 ? "" : "s", r->already_gone,
                count_state(r, ICM_EXPIRE_FILE_PLANNED));
        if (cli->json) {
            bool ok = true;
            json_t *doc = report_json(r, &ok);
            if (!ok || !emit_report(doc, a->counts_only))
                rc = icm_cli_report_lost(count_state(r, ICM_EXPIRE_FILE_DELETED), "file",
                                         ok ? "cannot write to stdout" : "out of memory");
            if (!ok)
                json_decref(doc);
        } else {
            print_human(r);
        }
    }
    return rc;
}

static int expire(icm_cli *cli, expire_args *a, icm_table *t, icm_cli_plan_file *plan,
                  icm_cli_journal *j)
{
    if (isatty(STDERR_FILENO) && cli->verbosity >= 0)
        icm_cli_line(stderr, "icemaint: %s snapshots of %s ...",
                     a->opts.dry_run ? "planning the expiry of" : "expiring",
                     icm_table_get_identifier(t));
    /* A plan of what an expiry without cleanup releases needs the metadata before it. */
    bool plan_released = a->plan_out != NULL && !a->opts.dry_run &&
                         a->opts.cleanup == ICM_EXPIRE_CLEANUP_NONE;
    icm_table_metadata *before = NULL;
    if (plan_released && icm_table_metadata_copy(&before, icm_table_get_metadata(t)) != 0)
        return icm_cli_fail(cli, ICM_ENOMEM);
    icm_expire_result *r = NULL;
    int lrc = icm_expire_snapshots(&r, t, &a->opts);
    icm_cli_commit_warnings(cli, t); /* its commit's metadata retention */
    icm_expire_result *released = NULL;
    if (lrc == 0 && plan_released && r->committed) {
        /* What the committed expiry released: planned as its cleanup would have (the files
         * only expired snapshots reached), against the metadata committed. */
        lrc = icm_expire_plan_files(&released, icm_table_get_fileio(t), before,
                                    icm_table_get_metadata(t), ICM_EXPIRE_CLEANUP_ALL);
        if (lrc != 0)
            icm_cli_line(stderr, "icemaint: the expiry was committed (%s), but the files it "
                                 "released could not be planned; remove-orphan-files can clean "
                                 "them",
                         r->metadata_location != NULL ? r->metadata_location : "");
    }
    icm_table_metadata_free(before);
    /* The plan's `released`: a dry run's own plan; after an expiry without cleanup, what it
     * released (nothing when nothing was committed: r plans no file then); else none (the
     * files are deleted, or kept on purpose by --cleanup metadata: no plan for apply). */
    const icm_expire_result *rel = a->opts.dry_run ? r
                                   : plan_released ? (released != NULL ? released : r)
                                                   : NULL;
    int rc = lrc != 0 ? report_failure(cli, a, plan, r, lrc, j)
                      : report(cli, a, plan, t, r, rel);
    icm_expire_result_free(released);
    size_t deleted = r != NULL ? count_state(r, ICM_EXPIRE_FILE_DELETED) : 0;
    const char *printed = "none";
    if (lrc == 0 || (r != NULL && r->delete_phase))
        rc = icm_cli_report_written(rc, deleted, "file", &printed);
    rc = icm_cli_journal_finish(j, icm_table_get_identifier(t),
                                lrc == 0 && r != NULL && !r->delete_stopped, rc, printed);
    icm_expire_result_free(r);
    return rc;
}

static int run_expire(icm_cli *cli, int argc, char **argv)
{
    expire_args a;
    memset(&a, 0, sizeof a);
    icm_expire_options init = ICM_EXPIRE_OPTIONS_INIT;
    a.opts = init;
    a.opts.decide.now_ms = wall_clock_ms(); /* "now" is fixed once per operation */
    int rc = parse_args(&a, argc, argv);
    if (rc != ICM_EXIT_OK) {
        free(a.ids);
        return rc;
    }
    icm_cli_journal journal;
    memset(&journal, 0, sizeof journal);
    if (a.log_out != NULL &&
        (rc = icm_cli_journal_open(&journal, a.log_out, "expire-snapshots")) != ICM_EXIT_OK) {
        free(a.ids);
        return rc;
    }
    a.opts.on_delete = icm_cli_journal_on_delete;
    a.opts.on_delete_payload = a.log_out != NULL ? &journal : NULL;
    icm_cli_plan_file plan = {NULL, NULL, NULL};
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_lease *lease = NULL;
    if (a.plan_out != NULL)
        rc = icm_cli_plan_open(&plan, a.plan_out);
    if (rc == ICM_EXIT_OK)
        rc = a.table_id != NULL ? icm_cli_table_load_id(cli, a.table_id, &cat, &t)
                                : icm_cli_table_load(cli, a.table, &cat, &t);
    if (rc == ICM_EXIT_OK && a.plan_out != NULL)
        rc = icm_cli_plan_check_table(&plan, t);
    if (rc == ICM_EXIT_OK)
        rc = icm_cli_journal_check_table(&journal, t);
    if (rc == ICM_EXIT_OK && !a.opts.dry_run && !a.no_lock && !icm_table_is_read_only(t))
        rc = icm_cli_lease_take(cli, t, "expire-snapshots", &lease);
    a.opts.lease = lease;
    if (rc == ICM_EXIT_OK)
        rc = expire(cli, &a, t, &plan, &journal);
    icm_cli_lease_drop(lease);
    icm_cli_journal_close(&journal); /* a no-op once finished */
    icm_cli_plan_discard(&plan);     /* a no-op once written */
    icm_table_free(t);
    icm_catalog_free(cat);
    free(a.ids);
    return rc;
}

const icm_cli_command icm_cli_cmd_expire_snapshots = {
    "expire-snapshots",
    "remove old snapshots, then delete the files only they reached",
    expire_help,
    run_expire,
};
