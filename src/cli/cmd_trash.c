/*
 * cli/cmd_trash.c: `icemaint trash restore|expire TRASH`: putting trashed files back, and
 * deleting those trashed long enough ago (icemaint/trash.h; --trash of remove-orphan-files,
 * expire-snapshots and apply put them there).
 *
 * One line per file acted on (`restored ORIGINAL`, `expired TRASHED`, `would restore ...`),
 * refusals and failures on stderr naming the file, then a summary; --json prints one document
 * instead. Exit codes: 0; 5 when a file was refused (restore: a file exists where it was,
 * never replaced, or the file at a trash name is not the one any record of the table
 * describes; expire: another file at a trashed name); 1 on any failure; 2 usage.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "icemaint/trash.h"
#include "timeparse.h"

static const char trash_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] trash restore|expire TRASH [OPTIONS]\n"
    "  icemaint trash restore TRASH --table LOCATION [--path P]... [--dry-run]\n"
    "  icemaint trash expire TRASH --older-than DURATION [--dry-run]\n"
    "\n"
    "TRASH is the URI given to --trash (remove-orphan-files, expire-snapshots, apply).\n"
    "It holds TRASH/<table-uuid>/files/<path below the table location> and a journal,\n"
    "TRASH/<table-uuid>/journal/NAME.jsonl: each file's original location, size, mtime\n"
    "and the time it was trashed.\n"
    "\n"
    "Options:\n"
    "restore: move trashed files back where they were, the newest copy first when a\n"
    "  name was trashed more than once; a file that exists at the original location\n"
    "  is never replaced (that file is refused: exit 5)\n"
    "  --table LOCATION          required: the table location whose files go back;\n"
    "                            only its records are used, and only below it (a\n"
    "                            journal line is plain text: its own location is\n"
    "                            not trusted); no record of it: exit 1\n"
    "  --path P                  only files that were at P or below it (repeatable;\n"
    "                            a relative P is below the --table location)\n"
    "expire: delete the files trashed at least DURATION ago (30d, 12h, ...) by their\n"
    "  record and by the store's clock (their journal's modification time), then the\n"
    "  journals all of whose files are gone (on local disk, restore and expire also\n"
    "  remove the folders below TRASH/<uuid>/files/ they leave empty)\n"
    "  --older-than DURATION     required\n"
    "both:\n"
    "  --dry-run                 say what would be done, move and delete nothing\n"
    "  --json                    one JSON document: {action, dry_run, files:\n"
    "                            [{original, trash, table_uuid, size_bytes,\n"
    "                            trashed_at_ms, outcome, error}], counts{outcome: n},\n"
    "                            journals_removed}; outcome restored, expired, would,\n"
    "                            absent (not in the trash), refused, failed\n"
    "  -h, --help                print this help\n"
    "\n"
    "Only journal records naming a file below TRASH/<uuid>/files/ and an original\n"
    "below their table location (restore: below --table) are acted on. Exit codes: 0 done, 1 error, 2 usage,\n"
    "5 a file was refused (restore: one exists where it was, or the file at a trash\n"
    "name is not the one any record of the table describes; expire: another file at\n"
    "a trashed name).\n";

typedef struct trash_run {
    const icm_cli *cli;
    bool restore;
    bool dry_run;
    json_t *files; /* --json */
    bool ok;
} trash_run;

static int on_file(const icm_trash_event *ev, void *payload)
{
    trash_run *r = payload;
    const icm_trash_entry *e = ev->entry;
    if (r->files != NULL) {
        json_t *f = json_object();
        if (f == NULL) {
            r->ok = false;
            return 0;
        }
        icm_cli_json_set(f, "original", icm_cli_json_str(e->original), &r->ok);
        icm_cli_json_set(f, "trash", icm_cli_json_str(e->trash), &r->ok);
        icm_cli_json_set(f, "table_uuid", icm_cli_json_str(e->table_uuid), &r->ok);
        icm_cli_json_set(f, "size_bytes", icm_cli_json_int(e->size_bytes), &r->ok);
        icm_cli_json_set(f, "trashed_at_ms", icm_cli_json_int(e->trashed_at_ms), &r->ok);
        icm_cli_json_set(f, "outcome",
                         icm_cli_json_str(icm_trash_outcome_name(ev->outcome)), &r->ok);
        icm_cli_json_set(f, "error", icm_cli_json_str(ev->error_message), &r->ok);
        icm_cli_json_push(r->files, f, &r->ok);
        return 0;
    }
    switch (ev->outcome) {
    case ICM_TRASH_RESTORED:
    case ICM_TRASH_EXPIRED:
    case ICM_TRASH_WOULD: {
        const char *what = ev->outcome == ICM_TRASH_RESTORED ? "restored"
                           : ev->outcome == ICM_TRASH_EXPIRED ? "expired"
                           : r->restore                      ? "would restore"
                                                             : "would expire";
        char *name = icm_cli_escape_text(r->restore ? e->original : e->trash);
        if (name == NULL)
            return 1;
        if (r->cli->verbosity >= 0)
            icm_cli_line(stdout, "%s %s", what, name);
        free(name);
        break;
    }
    case ICM_TRASH_ABSENT:
        break;
    case ICM_TRASH_REFUSED:
    case ICM_TRASH_FAILED:
        icm_cli_file_line(r->cli, false, r->restore ? e->original : e->trash,
                          ev->error_message != NULL ? ev->error_message : "failed",
                          ev->outcome == ICM_TRASH_REFUSED ? " (not restored)" : "");
        break;
    }
    return 0;
}

static void free_joined(char **joined, size_t n)
{
    for (size_t k = 0; joined != NULL && k < n; k++)
        free(joined[k]);
    free(joined);
}

static int run_trash(icm_cli *cli, int argc, char **argv)
{
    if (argc < 2)
        return icm_cli_usage("trash", "expected restore or expire");
    bool restore = strcmp(argv[1], "restore") == 0;
    if (!restore && strcmp(argv[1], "expire") != 0)
        return icm_cli_usage(argv[1], "expected restore or expire");
    icm_trash_options o = ICM_TRASH_OPTIONS_INIT;
    const char *trash = NULL, *older_than = NULL, *table = NULL;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    if (paths == NULL)
        return icm_cli_oom();
    size_t n_paths = 0;
    int rc = ICM_EXIT_OK;
    bool after_dashdash = false;
    for (int i = 2; rc == ICM_EXIT_OK && i < argc; i++) {
        const char *path = NULL;
        int m = 0;
        if (!after_dashdash && strcmp(argv[i], "--dry-run") == 0) {
            o.dry_run = true;
            continue;
        }
        if (!after_dashdash && strcmp(argv[i], "--") == 0) {
            after_dashdash = true;
            continue;
        }
        if (!after_dashdash && restore) {
            m = icm_cli_opt_value(argc, argv, &i, "--table", &table);
            if (m == 0 && (m = icm_cli_opt_value(argc, argv, &i, "--path", &path)) > 0)
                paths[n_paths++] = path;
        } else if (!after_dashdash) {
            m = icm_cli_opt_value(argc, argv, &i, "--older-than", &older_than);
        }
        if (m < 0)
            rc = ICM_EXIT_USAGE;
        else if (m > 0)
            continue;
        else if (!after_dashdash && argv[i][0] == '-' && argv[i][1] != '\0')
            rc = icm_cli_usage(argv[i], "unknown option for trash %s", argv[1]);
        else if (trash != NULL)
            rc = icm_cli_usage(argv[i], "one TRASH only");
        else
            trash = argv[i];
    }
    if (rc == ICM_EXIT_OK && trash == NULL)
        rc = icm_cli_usage(argv[1], "expected TRASH (the URI given to --trash)");
    if (rc == ICM_EXIT_OK && restore && table == NULL)
        rc = icm_cli_usage(argv[1],
                           "--table LOCATION is required: the table location whose files are "
                           "put back (a journal line's own location is not trusted)");
    else if (rc == ICM_EXIT_OK && restore && strchr(table, '/') == NULL)
        rc = icm_cli_usage(table,
                           "--table takes the table's location (its folder or URI, as "
                           "`icemaint inspect` shows it: /wh/ns/t, s3://bucket/wh/ns/t), not "
                           "a catalog name");
    /* A --path relative to nothing names a place below the table location. */
    char **joined = NULL;
    if (rc == ICM_EXIT_OK && n_paths > 0 && (joined = calloc(n_paths, sizeof *joined)) == NULL)
        rc = icm_cli_oom();
    for (size_t k = 0; rc == ICM_EXIT_OK && k < n_paths; k++) {
        if (paths[k][0] == '/' || strstr(paths[k], ":/") != NULL || table == NULL)
            continue;
        size_t tl = strlen(table);
        bool slash = tl > 0 && table[tl - 1] == '/';
        const char *rel = paths[k][0] == '.' && paths[k][1] == '/' ? paths[k] + 2 : paths[k];
        size_t len = tl + strlen(rel) + 2;
        if ((joined[k] = malloc(len)) == NULL) {
            rc = icm_cli_oom();
            break;
        }
        snprintf(joined[k], len, "%s%s%s", table, slash ? "" : "/", rel);
        paths[k] = joined[k];
    }
    if (rc == ICM_EXIT_OK && !restore) {
        const char *why = NULL;
        if (older_than == NULL)
            rc = icm_cli_usage(argv[1], "--older-than DURATION is required");
        else if (icm_cli_parse_duration(older_than, &o.older_than_ms, &why) != 0)
            rc = icm_cli_usage(older_than, "--older-than: %s",
                               why != NULL ? why : "not a duration");
    }
    icm_fileio *io = rc == ICM_EXIT_OK ? icm_cli_fileio(cli) : NULL;
    if (rc == ICM_EXIT_OK && io == NULL)
        rc = icm_cli_fail(cli, icm_error_last()->code != 0 ? icm_error_last()->code : ICM_ERROR);
    if (rc != ICM_EXIT_OK) {
        free_joined(joined, n_paths);
        free(paths);
        return rc;
    }
    trash_run r = {cli, restore, o.dry_run, cli->json ? json_array() : NULL, true};
    if (cli->json && r.files == NULL) {
        free_joined(joined, n_paths);
        free(paths);
        return icm_cli_oom();
    }
    o.table = table;
    o.paths = paths;
    o.path_count = n_paths;
    o.on_file = on_file;
    o.on_file_payload = &r;
    icm_trash_counts counts;
    int lrc = restore ? icm_trash_restore(&counts, io, trash, &o)
                      : icm_trash_expire(&counts, io, trash, &o);
    free_joined(joined, n_paths);
    free(paths);
    /* A refusal (a file exists at the original location) or a failure of some files: the
     * files were reported one by one; any other error is the run's. */
    bool per_file = counts.by_outcome[ICM_TRASH_REFUSED] + counts.by_outcome[ICM_TRASH_FAILED] > 0;
    if (lrc != 0 && !per_file) {
        json_decref(r.files);
        return icm_cli_fail(cli, lrc);
    }
    int exit_code = lrc == 0 ? ICM_EXIT_OK
                    : counts.by_outcome[ICM_TRASH_FAILED] > 0 ? ICM_EXIT_ERROR
                                                              : ICM_EXIT_REFUSED;
    if (cli->json) {
        json_t *doc = json_object(), *c = json_object();
        bool ok = r.ok && doc != NULL && c != NULL;
        icm_cli_json_set(doc, "action", icm_cli_json_str(restore ? "restore" : "expire"), &ok);
        icm_cli_json_set(doc, "dry_run", json_boolean(o.dry_run), &ok);
        icm_cli_json_set(doc, "files", r.files, &ok);
        for (unsigned k = 0; k <= ICM_TRASH_FAILED; k++)
            icm_cli_json_set(c, icm_trash_outcome_name((icm_trash_outcome)k),
                             json_integer((json_int_t)counts.by_outcome[k]), &ok);
        icm_cli_json_set(doc, "counts", c, &ok);
        icm_cli_json_set(doc, "journals_removed",
                         json_integer((json_int_t)counts.journals_removed), &ok);
        int prc = icm_cli_json_print(doc, ok);
        return prc != ICM_EXIT_OK ? prc : exit_code;
    }
    if (cli->verbosity >= 0) {
        const size_t *n = counts.by_outcome;
        if (restore)
            icm_cli_line(stdout, "%s %zu file(s); %zu refused, %zu failed, %zu not in the trash",
                         o.dry_run ? "would restore" : "restored",
                         n[o.dry_run ? ICM_TRASH_WOULD : ICM_TRASH_RESTORED],
                         n[ICM_TRASH_REFUSED], n[ICM_TRASH_FAILED], n[ICM_TRASH_ABSENT]);
        else
            icm_cli_line(stdout, "%s %zu file(s); %zu failed; %zu journal(s) removed",
                         o.dry_run ? "would expire" : "expired",
                         n[o.dry_run ? ICM_TRASH_WOULD : ICM_TRASH_EXPIRED],
                         n[ICM_TRASH_FAILED], counts.journals_removed);
    }
    return icm_cli_stdout_ok() ? exit_code : ICM_EXIT_ERROR;
}

const icm_cli_command icm_cli_cmd_trash = {
    "trash",
    "restore trashed files (--trash) or delete those trashed long enough ago",
    trash_help,
    run_trash,
};
