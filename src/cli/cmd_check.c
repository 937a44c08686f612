/*
 * cli/cmd_check.c: `icemaint check TABLE [--snapshot-id ID | --all]`: does every file a snapshot
 * needs exist with the size the metadata records (icm_check_table, icemaint/check.h)? The
 * default is the current snapshot (what a reader of the table needs now), as for `files` and
 * `manifests`; --snapshot-id checks the named snapshots (repeatable) and --all every snapshot
 * of the metadata (what time travel and the maintenance commands rely on).
 *
 * Output: per snapshot a line with the files checked and, indented below it, one line per
 * problem; then a summary. --json: {metadata_location, metadata_problems, snapshots:
 * [{snapshot_id, files_checked, problems: [{path, kind, problem, expected_size_bytes,
 * actual_size_bytes, message}]}], files_checked, problem_count, ok}; a size not recorded or not
 * found is null, and a missing file's actual_size_bytes is the string "missing".
 * Exit codes: 0 clean, 6 problems found (contract: `check` found problems), 1/2 errors.
 * Never deletes or writes anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "icemaint/check.h"

static const char check_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] check TABLE [--snapshot-id ID]... [--all] [--json]\n"
    "\n"
    "Check that every file a snapshot needs exists with the size the metadata records: its\n"
    "manifest list, the manifests it lists (manifest_length), their live data files, delete\n"
    "files and deletion-vector Puffin files (file_size_in_bytes), and its statistics and\n"
    "partition statistics files; and that the table's metadata file exists. A manifest list\n"
    "or manifest that exists but cannot be read is a problem too. Files are looked for\n"
    "through --path-map and reported by the names the metadata gives them. Reads only:\n"
    "nothing is deleted or written.\n"
    "\n"
    "Default: the current snapshot. A snapshot that is not checked can still be damaged:\n"
    "use --all before relying on time travel or older branches and tags.\n"
    "\n"
    "TABLE is ns.table (through the configured catalog), a table directory in filesystem\n"
    "(Hadoop) layout, or a metadata JSON file.\n"
    "\n"
    "Options:\n"
    "  --snapshot-id ID  check this snapshot (repeatable)\n"
    "  --all             check every snapshot of the metadata\n"
    "  --json            one JSON document: {metadata_location, metadata_problems,\n"
    "                    snapshots: [{snapshot_id, files_checked, problems: [{path, kind,\n"
    "                    problem, expected_size_bytes, actual_size_bytes, message}]}],\n"
    "                    files_checked, problem_count, ok}; problem is missing, wrong_size\n"
    "                    or unreadable; actual_size_bytes is \"missing\" for a missing file\n"
    "  -h, --help        print this help\n"
    "\n"
    "Exit codes: 0 every file is there, 6 problems found (the report names them), 1 error,\n"
    "2 usage.\n";

typedef struct check_args {
    const char *table;
    int64_t *ids;
    size_t n_ids;
    bool all;
} check_args;

static int add_id(check_args *a, const char *text)
{
    return icm_cli_push_snapshot_id(&a->ids, &a->n_ids, text);
}

static int parse_args(check_args *a, int argc, char **argv)
{
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        if (!after_dashdash && strcmp(argv[i], "--all") == 0) {
            a->all = true;
            continue;
        }
        const char *v = NULL;
        int m = after_dashdash ? 0 : icm_cli_opt_value(argc, argv, &i, "--snapshot-id", &v);
        if (m < 0)
            return ICM_EXIT_USAGE;
        int rc = m > 0 ? add_id(a, v) : icm_cli_take_table("check", argv, i, &after_dashdash,
                                                           &a->table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    if (a->all && a->n_ids > 0)
        return icm_cli_usage("--all", "cannot be combined with --snapshot-id");
    return icm_cli_need_table("check", a->table);
}

/* ---- JSON ---- */

static json_t *size_json(int64_t size)
{
    return size >= 0 ? icm_cli_json_int(size) : json_null();
}

static json_t *problems_json(const icm_check_problem *const *problems, size_t n, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL)
        *ok = false;
    for (size_t i = 0; arr != NULL && i < n; i++) {
        const icm_check_problem *p = problems[i];
        json_t *o = json_object();
        if (o == NULL) {
            *ok = false;
            break;
        }
        icm_cli_json_set(o, "path", icm_cli_json_str(p->path), ok);
        icm_cli_json_set(o, "kind", icm_cli_json_str(icm_check_file_kind_name(p->kind)), ok);
        icm_cli_json_set(o, "problem", icm_cli_json_str(icm_check_problem_kind_name(p->problem)),
                         ok);
        icm_cli_json_set(o, "expected_size_bytes", size_json(p->expected_size_bytes), ok);
        icm_cli_json_set(o, "actual_size_bytes",
                         p->problem == ICM_CHECK_MISSING ? icm_cli_json_str("missing")
                                                         : size_json(p->actual_size_bytes),
                         ok);
        icm_cli_json_set(o, "message", icm_cli_json_str(p->message), ok);
        icm_cli_json_push(arr, o, ok);
    }
    return arr;
}

static json_t *snapshot_json(const icm_check_snapshot *s, bool *ok)
{
    json_t *o = json_object();
    if (o == NULL) {
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(o, "snapshot_id", icm_cli_json_int(s->snapshot_id), ok);
    icm_cli_json_set(o, "files_checked", icm_cli_json_int((int64_t)s->files_checked), ok);
    icm_cli_json_set(o, "problems", problems_json(s->problems, s->problem_count, ok), ok);
    return o;
}

/* Write one value (stolen) as a piece of the document, with the lossless escape
 * (icm_cli_json_write; it ends the piece with a newline); false on a write or build failure. */
static bool dump_piece(json_t *value, bool ok)
{
    bool done = ok && value != NULL && icm_cli_json_write(stdout, value, true);
    json_decref(value);
    return done;
}

/*
 * The document is written a snapshot at a time: a table whose every file is missing has a
 * problem per snapshot and file, and one document object holding them all would need memory
 * in proportion (tens of GB for 2,000 snapshots of 50,000 files). Every piece is built and
 * escaped by the same JSON builders as any other document.
 */
static int print_json(const icm_check_result *r)
{
    bool ok = true;
    const icm_check_problem *md = r->metadata_problem;
    json_t *loc = icm_cli_json_str(r->metadata_location);
    json_t *mdp = problems_json(&md, md != NULL, &ok);
    ok = ok && loc != NULL && mdp != NULL;
    if (!ok) {
        json_decref(loc);
        json_decref(mdp);
        return icm_cli_json_failed();
    }
    icm_cli_json_mark_printed();
    bool written = fputs("{\n\"metadata_location\": ", stdout) >= 0 && dump_piece(loc, true) &&
                   fputs(", \"metadata_problems\": ", stdout) >= 0 && dump_piece(mdp, true) &&
                   fputs(", \"snapshots\": [\n", stdout) >= 0;
    for (size_t i = 0; written && i < r->snapshot_count; i++) {
        json_t *o = snapshot_json(&r->snapshots[i], &ok);
        written = (i == 0 || fputs(", ", stdout) >= 0) && dump_piece(o, ok);
    }
    if (!ok)
        return icm_cli_json_failed();
    written = written &&
              printf("], \"files_checked\": %zu, \"problem_count\": %zu, \"ok\": %s\n}\n",
                     r->files_checked, r->total_problems,
                     r->total_problems == 0 ? "true" : "false") >= 0;
    if (!written)
        return icm_cli_error("stdout", "cannot write the JSON document");
    return ICM_EXIT_OK;
}

/* ---- text ---- */

static void print_problems(const icm_check_problem *const *problems, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("  %-10s %-20s %s: %s\n", icm_check_problem_kind_name(problems[i]->problem),
               icm_check_file_kind_name(problems[i]->kind), problems[i]->path,
               problems[i]->message);
}

static void print_human(const icm_check_result *r)
{
    const icm_check_problem *md = r->metadata_problem;
    if (r->metadata_location != NULL)
        printf("metadata %s: %s\n", r->metadata_location, md != NULL ? "PROBLEM" : "ok");
    print_problems(&md, md != NULL);
    size_t bad = 0;
    for (size_t i = 0; i < r->snapshot_count; i++) {
        const icm_check_snapshot *s = &r->snapshots[i];
        bad += s->problem_count > 0;
        printf("snapshot %lld: %zu file%s checked, ", (long long)s->snapshot_id,
               s->files_checked, s->files_checked == 1 ? "" : "s");
        if (s->problem_count == 0)
            printf("ok\n");
        else
            printf("%zu problem%s\n", s->problem_count, s->problem_count == 1 ? "" : "s");
        print_problems(s->problems, s->problem_count);
    }
    if (r->snapshot_count == 0)
        printf("no snapshot to check (the table has no current snapshot)\n");
    printf("%zu distinct files checked; %zu problem%s (%zu of %zu snapshots affected)\n",
           r->files_checked, r->total_problems, r->total_problems == 1 ? "" : "s", bad,
           r->snapshot_count);
}

/* ---- run ---- */

static int run_check(icm_cli *cli, int argc, char **argv)
{
    check_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    icm_cli_table t;
    memset(&t, 0, sizeof t);
    if (rc == ICM_EXIT_OK)
        rc = icm_cli_table_open(cli, a.table, &t);
    icm_fileio *io = rc == ICM_EXIT_OK ? t.io : NULL;
    if (rc == ICM_EXIT_OK && io == NULL)
        rc = ICM_EXIT_ERROR;
    icm_check_result *r = NULL;
    if (rc == ICM_EXIT_OK) {
        icm_check_options o = ICM_CHECK_OPTIONS_INIT;
        o.all = a.all;
        o.snapshot_ids = a.ids;
        o.snapshot_id_count = a.n_ids;
        int lrc = icm_check_table(&r, io, t.md, t.metadata_location, &o);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
    }
    if (rc == ICM_EXIT_OK && r->own_metadata_warning != NULL)
        icm_cli_warn(cli, "%s", r->own_metadata_warning);
    if (rc == ICM_EXIT_OK) {
        if (cli->json)
            rc = print_json(r);
        else
            print_human(r);
        if (rc == ICM_EXIT_OK && r->total_problems > 0)
            rc = ICM_EXIT_PROBLEMS;
    }
    icm_check_result_free(r);
    icm_cli_table_close(&t);
    free(a.ids);
    return rc;
}

const icm_cli_command icm_cli_cmd_check = {
    "check",
    "check that every file a snapshot needs exists with its recorded size",
    check_help,
    run_check,
};
