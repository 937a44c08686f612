/*
 * cli/cmd_apply.c: `icemaint apply PLAN [TABLE]`: carry out a reviewed plan (issue #21), the
 * `--plan-out` document of `remove-orphan-files` or of `expire-snapshots --cleanup none`,
 * after re-validating it against the table as it is now.
 *
 * A plan is a claim made some time ago, by a file anyone could have edited since: apply
 * trusts none of it to delete. Its checks of the plan itself (plan_file.c reads it):
 *  - well formed, of this plan version, for a whole table (exit 1 naming the file otherwise);
 *  - made less than --max-plan-age ago (default 7d) and not in the future (exit 5);
 *  - for the table it names (or TABLE) as loaded now: same table-uuid (exit 5).
 * Then the deletes are the orphan sweep's own (icemaint/orphans.h), with the plan's files as
 * the only candidates (a file list in the plan's exact mode, options.exact_file_list) and the
 * plan's cutoff, so every check of a sweep runs on today's table: the keep set built from
 * metadata loaded now (a planned file referenced again is kept), the listing location inside
 * the table, other tables and catalog files under it, the presence check, the guard rails,
 * the settle time and a reload before each batch, the lease, and right before each delete a
 * stat that the file still has exactly the planned size and modification time and is still
 * older than the cutoff; and, since the plan names no other table's metadata, each planned
 * file's folders are looked at for another table's (orphans_nested.c). A file the plan does
 * not name is never a candidate; a planned file whose name cannot be carried in a file list
 * (a tab, a newline) is kept.
 *
 * Why 7 days by default: Java/Spark users know 7 days as the retention of the tools that do
 * this kind of deferred delete (Delta's VACUUM default retention, 168 hours; Iceberg's own
 * snapshot retention default of 5 days is the same order), and a plan reviewed over a
 * weekend is still applicable on Monday; a plan older than that describes a table that has
 * moved on, and a fresh dry run is cheap.
 *
 * Output: one row per planned file with its outcome (deleted, already_gone, kept, failed,
 * not_orphan, skipped; planned on a dry run) and a summary; --json one document; --log-out
 * journals each delete with the plan's name (deletes.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "catalog_ref.h"
#include "cli.h"
#include "icemaint/orphans.h"
#include "timeparse.h"

/* --max-plan-age when not given: 7 days (see the file comment). */
#define DEFAULT_MAX_PLAN_AGE_MS INT64_C(604800000)
/* A plan made this far in "the future" is a clock gone wrong or an edited plan: refused. */
#define PLAN_CLOCK_SKEW_MS INT64_C(300000)

static const char apply_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] apply PLAN [TABLE] [OPTIONS]\n"
    "\n"
    "Delete what a reviewed plan names, after re-validating it against the table as it is\n"
    "now. PLAN is the --plan-out file of remove-orphan-files, or of expire-snapshots with\n"
    "--cleanup none (or --dry-run). TABLE defaults to the table the plan names.\n"
    "\n"
    "Refused (exit 5, nothing deleted): a plan older than --max-plan-age or made in the\n"
    "future; a plan of another table (its table-uuid differs); a plan over a guard rail;\n"
    "and every refusal of remove-orphan-files (see its --help). A plan that is not well\n"
    "formed (not JSON, a missing field, another plan_version) is an error (exit 1).\n"
    "\n"
    "Each planned file is deleted only if it is still an orphan: not referenced by the\n"
    "table's current metadata (loaded now, and again before each batch of deletes), below\n"
    "the plan's location inside the table, not hidden, and still existing with exactly the\n"
    "planned size and modification time, older than the plan's cutoff (an expiry plan's\n"
    "cutoff is the time it was made). Anything else is kept; a file the plan does not name\n"
    "is never deleted.\n"
    "\n"
    "Options:\n"
    "  --dry-run                 report what would be deleted, delete nothing\n"
    "  --max-plan-age DURATION   refuse a plan made longer ago than this (default 7d)\n"
    "  --max-delete N            refuse when more than N planned files are still orphans\n"
    "  --max-delete-bytes B      ... when they hold more than B bytes (10g = 10 x 1024^3)\n"
    "  --max-delete-percent P    ... when they are more than P percent of the files listed\n"
    "  --trash URI               move, not delete (see icemaint trash --help)\n"
    "  --force                   accept a plan whose cutoff is less than 24 hours ago\n"
    "                            (an expiry plan applied within a day of being made)\n"
    "  --log-out FILE            journal each file acted on (JSON lines with the plan's name)\n"
    "  --no-lock                 do not take the table lease\n"
    "  --no-verify               skip the check that the files the table references exist\n"
    "  --settle DURATION         wait this long before the reload that precedes the first\n"
    "                            delete (default 2s)\n"
    "  --max-concurrent-deletes N  delete with N threads (default 1)\n"
    "  --json                    one JSON document: {plan, plan_command, table, table_uuid,\n"
    "                            dry_run, files: [{path, size_bytes, mtime_ms, outcome,\n"
    "                            reason}], deleted (would_delete on a dry run),\n"
    "                            already_gone, kept, not_orphan, skipped, failed,\n"
    "                            bytes_deleted}\n"
    "  -h, --help                print this help\n";

typedef struct apply_args {
    const char *plan;
    const char *table;
    const char *max_plan_age;
    int64_t max_plan_age_ms; /* parsed (DEFAULT_MAX_PLAN_AGE_MS when not given) */
    const char *log_out;
    const char *settle;
    const char *threads;
    icm_cli_limits_args limits;
    bool dry_run;
    bool force;
    bool no_lock;
    bool no_verify;
} apply_args;

static int parse_args(int argc, char **argv, apply_args *a)
{
    static const char *const names[] = {"--max-plan-age", "--log-out", "--settle",
                                        "--max-concurrent-deletes"};
    const char **slots[] = {&a->max_plan_age, &a->log_out, &a->settle, &a->threads};
    struct {
        const char *name;
        bool *flag;
    } flags[] = {{"--dry-run", &a->dry_run}, {"--force", &a->force},
                 {"--no-lock", &a->no_lock}, {"--no-verify", &a->no_verify}};
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        bool taken = false;
        for (size_t k = 0; !after_dashdash && !taken && k < sizeof flags / sizeof flags[0]; k++)
            if (strcmp(argv[i], flags[k].name) == 0)
                taken = *flags[k].flag = true;
        if (taken)
            continue;
        int m = 0;
        for (size_t k = 0; !after_dashdash && m == 0 && k < sizeof names / sizeof names[0]; k++)
            m = icm_cli_opt_value(argc, argv, &i, names[k], slots[k]);
        if (m == 0 && !after_dashdash)
            m = icm_cli_limits_take(argc, argv, &i, &a->limits);
        if (m < 0)
            return ICM_EXIT_USAGE;
        if (m > 0)
            continue;
        if (!after_dashdash && strcmp(argv[i], "--") == 0) {
            after_dashdash = true;
            continue;
        }
        if (!after_dashdash && argv[i][0] == '-' && argv[i][1] != '\0')
            return icm_cli_usage(argv[i], "unknown option for apply");
        if (a->plan == NULL)
            a->plan = argv[i];
        else if (a->table == NULL)
            a->table = argv[i];
        else
            return icm_cli_usage(argv[i], "apply takes PLAN and at most one TABLE");
    }
    if (a->plan == NULL)
        return icm_cli_usage("apply", "missing PLAN (a --plan-out file)");
    a->max_plan_age_ms = DEFAULT_MAX_PLAN_AGE_MS;
    const char *why = NULL;
    if (a->max_plan_age != NULL &&
        icm_cli_parse_duration(a->max_plan_age, &a->max_plan_age_ms, &why) != 0)
        return icm_cli_usage(a->max_plan_age, "--max-plan-age: %s",
                             why != NULL ? why : "not a duration");
    return ICM_EXIT_OK;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The plan's age against --max-plan-age: exit 5 (reported) when too old or from the future. */
static int check_age(const apply_args *a, const icm_cli_plan *p, int64_t now)
{
    int64_t max_age = a->max_plan_age_ms;
    char made[64];
    icm_cli_format_time(p->created_ms, made, sizeof made);
    if (p->created_ms > now + PLAN_CLOCK_SKEW_MS) {
        (void)icm_cli_error(a->plan, "the plan was made at %s, in the future (a clock gone "
                                     "wrong, or an edited plan); nothing is deleted", made);
        return ICM_EXIT_REFUSED;
    }
    if (now - p->created_ms > max_age) {
        (void)icm_cli_error(a->plan, "the plan was made at %s, %" PRId64 " s ago, longer ago "
                                     "than --max-plan-age (%" PRId64 " s): the table has moved "
                                     "on; make a new plan (or raise --max-plan-age); nothing "
                                     "is deleted",
                            made, (now - p->created_ms) / 1000, max_age / 1000);
        return ICM_EXIT_REFUSED;
    }
    return ICM_EXIT_OK;
}

/* The table loaded now must be the plan's: same table-uuid (exit 5 otherwise). */
static int check_table(const apply_args *a, const icm_cli_plan *p, icm_table *t)
{
    const char *uuid = icm_table_metadata_uuid(icm_table_get_metadata(t));
    if (uuid != NULL && strcasecmp(uuid, p->table_uuid) == 0)
        return ICM_EXIT_OK;
    (void)icm_cli_error(a->plan, "the plan is for table-uuid %s, but %s has %s (another table, "
                                 "or the table dropped and created again); nothing is deleted",
                        p->table_uuid, icm_table_get_identifier(t),
                        uuid != NULL ? uuid : "none");
    return ICM_EXIT_REFUSED;
}

/* Whether a planned path can be one line of a file list (path<TAB>size<TAB>mtime). */
static bool listable(const char *path)
{
    return strpbrk(path, "\t\n\r") == NULL;
}

/* The plan's files as a temporary file list (in $TMPDIR; the caller unlinks *tmp_out). */
static int write_file_list(const icm_cli_plan *p, char **tmp_out)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *tmp = malloc(n);
    if (tmp == NULL)
        return icm_cli_oom();
    snprintf(tmp, n, "%s/icemaint-apply-XXXXXX", dir);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return icm_cli_error(dir, "cannot write a temporary file: %s", strerror(err));
    }
    for (size_t i = 0; i < p->n_files; i++)
        if (listable(p->files[i].path))
            fprintf(f, "%s\t%" PRId64 "\t%" PRId64 "\n", p->files[i].path,
                    p->files[i].size_bytes, p->files[i].mtime_ms);
    int err = ferror(f) ? EIO : 0;
    if (fclose(f) != 0 && err == 0)
        err = errno;
    if (err != 0) {
        unlink(tmp);
        free(tmp);
        return icm_cli_error(dir, "cannot write a temporary file: %s", strerror(err));
    }
    *tmp_out = tmp;
    return ICM_EXIT_OK;
}

/* What became of one planned file. */
typedef enum outcome_kind {
    OUT_DELETED,
    OUT_ALREADY_GONE,
    OUT_KEPT,       /* the last check before its delete: changed, or reached through a link */
    OUT_FAILED,
    OUT_NOT_ORPHAN, /* not a candidate of today's sweep (see outcome_of) */
    OUT_SKIPPED,    /* its name cannot be a file-list line */
    OUT_PLANNED,    /* dry run: would be deleted */
    OUT_COUNT
} outcome_kind;

static const char *const outcome_names[OUT_COUNT] = {
    "deleted", "already_gone", "kept", "failed", "not_orphan", "skipped", "planned"};

typedef struct outcome {
    outcome_kind kind;
    const char *reason; /* NULL when none */
} outcome;

static outcome outcome_of(const icm_cli_plan_entry *e, const icm_orphan_file *f)
{
    if (!listable(e->path))
        return (outcome){OUT_SKIPPED, "the name holds a tab or a line break; apply keeps it"};
    if (f == NULL)
        return (outcome){OUT_NOT_ORPHAN, "no longer a candidate: referenced by the table now, "
                                         "not below the plan's location, hidden, not older "
                                         "than the cutoff as planned, or in another table's "
                                         "folder (see the warnings)"};
    switch (f->state) {
    case ICM_ORPHAN_DELETED:
        return (outcome){OUT_DELETED, NULL};
    case ICM_ORPHAN_ALREADY_GONE:
        return (outcome){OUT_ALREADY_GONE, NULL};
    case ICM_ORPHAN_KEPT:
        return (outcome){OUT_KEPT, f->error_message};
    case ICM_ORPHAN_FAILED:
        return (outcome){OUT_FAILED, f->error_message};
    case ICM_ORPHAN_PLANNED:
        break;
    }
    return (outcome){OUT_PLANNED, NULL};
}

/* Planned files per outcome, and the bytes deleted. */
typedef struct tally {
    size_t n[OUT_COUNT];
    int64_t bytes_deleted;
} tally;

static void count(tally *t, const outcome *o, const icm_cli_plan_entry *e)
{
    t->n[o->kind]++;
    if (o->kind == OUT_DELETED)
        t->bytes_deleted = icm_delete_limits_add_bytes(t->bytes_deleted, e->size_bytes);
}

/* The sweep's entry for each planned file (NULL: not an orphan any more), matched by path
 * through a JSON object used as a hash map (plan paths are UTF-8: jansson read them). */
static int match(const icm_cli_plan *p, const icm_orphan_result *r,
                 const icm_orphan_file ***out)
{
    json_t *index = json_object();
    const icm_orphan_file **m = calloc(p->n_files > 0 ? p->n_files : 1, sizeof *m);
    bool ok = index != NULL && m != NULL;
    for (size_t i = 0; ok && i < r->orphan_count; i++)
        ok = json_object_set_new_nocheck(index, r->orphans[i].path,
                                         json_integer((json_int_t)i)) == 0;
    for (size_t i = 0; ok && i < p->n_files; i++) {
        json_t *at = json_object_get(index, p->files[i].path);
        m[i] = at != NULL ? &r->orphans[json_integer_value(at)] : NULL;
    }
    json_decref(index);
    if (!ok) {
        free(m);
        return icm_cli_oom();
    }
    *out = m;
    return ICM_EXIT_OK;
}

static json_t *report_json(const apply_args *a, const icm_cli_plan *p, icm_table *t,
                           const icm_orphan_result *r, const icm_orphan_file **m, tally *n,
                           bool *ok)
{
    json_t *doc = json_object(), *files = json_array(), *warnings = json_array();
    if (doc == NULL || files == NULL || warnings == NULL)
        *ok = false;
    for (size_t i = 0; i < p->n_files && *ok; i++) {
        const icm_cli_plan_entry *e = &p->files[i];
        outcome o = outcome_of(e, m[i]);
        count(n, &o, e);
        json_t *f = json_object();
        icm_cli_json_set(f, "path", icm_cli_json_str(e->path), ok);
        icm_cli_json_set(f, "size_bytes", icm_cli_json_int(e->size_bytes), ok);
        icm_cli_json_set(f, "mtime_ms", icm_cli_json_int(e->mtime_ms), ok);
        icm_cli_json_set(f, "outcome", icm_cli_json_str(outcome_names[o.kind]), ok);
        icm_cli_json_set(f, "reason", icm_cli_json_str(o.reason), ok);
        icm_cli_json_push(files, f, ok);
    }
    for (size_t i = 0; i < r->warning_count; i++)
        icm_cli_json_push(warnings, icm_cli_json_str(r->warnings[i]), ok);
    icm_cli_json_set(doc, "plan", icm_cli_json_str(a->plan), ok);
    icm_cli_json_set(doc, "plan_command", icm_cli_json_str(p->command), ok);
    icm_cli_json_set(doc, "table", icm_cli_json_str(icm_table_get_identifier(t)), ok);
    icm_cli_json_set(doc, "table_uuid", icm_cli_json_str(p->table_uuid), ok);
    icm_cli_json_set(doc, "metadata_location",
                     icm_cli_json_str(icm_table_get_metadata_location(t)), ok);
    icm_cli_json_set(doc, "location", icm_cli_json_str(r->location), ok);
    icm_cli_json_set(doc, "older_than_ms", icm_cli_json_int(r->older_than_ms), ok);
    icm_cli_json_set(doc, "shard", icm_cli_json_shard(p->shard_index, p->shard_count), ok);
    icm_cli_json_set(doc, "dry_run", json_boolean(r->dry_run), ok);
    icm_cli_json_set(doc, "files", files, ok);
    icm_cli_json_set(doc, "planned", icm_cli_json_int((int64_t)p->n_files), ok);
    icm_cli_json_set(doc, "would_delete", icm_cli_json_int((int64_t)n->n[OUT_PLANNED]), ok);
    for (int k = OUT_DELETED; k < OUT_COUNT; k++)
        if (k != OUT_PLANNED)
            icm_cli_json_set(doc, outcome_names[k], icm_cli_json_int((int64_t)n->n[k]), ok);
    icm_cli_json_set(doc, "bytes_deleted", icm_cli_json_int(n->bytes_deleted), ok);
    icm_cli_json_set(doc, "delete_stopped", json_boolean(r->delete_stopped), ok);
    icm_cli_json_set(doc, "warnings", warnings, ok);
    return doc;
}

static bool print_human(const icm_cli_plan *p, const icm_orphan_result *r,
                        const icm_orphan_file **m, tally *n)
{
    static const char *const headers[] = {"OUTCOME", "SIZE_BYTES", "PATH"};
    icm_cli_grid *g = icm_cli_grid_new(3, headers);
    bool ok = g != NULL;
    for (size_t i = 0; ok && i < p->n_files; i++) {
        outcome o = outcome_of(&p->files[i], m[i]);
        count(n, &o, &p->files[i]);
        char size[32];
        const char *cells[] = {outcome_names[o.kind], icm_cli_format_int64(p->files[i].size_bytes, size,
                                                            sizeof size),
                               p->files[i].path};
        ok = icm_cli_grid_add(g, cells);
    }
    if (ok && p->n_files > 0)
        icm_cli_grid_print(g, stdout);
    icm_cli_grid_free(g);
    if (!ok)
        return false;
    if (r->dry_run)
        printf("dry run: would delete %zu of %zu planned files; %zu no longer orphans, %zu "
               "kept, %zu skipped\n", n->n[OUT_PLANNED], p->n_files, n->n[OUT_NOT_ORPHAN],
               n->n[OUT_KEPT], n->n[OUT_SKIPPED]);
    else
        printf("deleted %zu of %zu planned files (%" PRId64 " bytes); %zu already gone, %zu "
               "no longer orphans, %zu kept, %zu skipped, %zu failed\n", n->n[OUT_DELETED],
               p->n_files, n->bytes_deleted, n->n[OUT_ALREADY_GONE], n->n[OUT_NOT_ORPHAN],
               n->n[OUT_KEPT], n->n[OUT_SKIPPED], n->n[OUT_FAILED]);
    return true;
}

/* The report after the sweep; failed deletes and kept files on stderr. Exit code. */
static int output(icm_cli *cli, const apply_args *a, const icm_cli_plan *p, icm_table *t,
                  const icm_orphan_result *r, const icm_orphan_file **m)
{
    for (size_t i = 0; i < r->warning_count; i++)
        icm_cli_warn(cli, "%s", r->warnings[i]);
    int rc = ICM_EXIT_OK;
    tally n;
    memset(&n, 0, sizeof n);
    if (cli->json) {
        bool ok = true;
        json_t *doc = report_json(a, p, t, r, m, &n, &ok);
        if (!ok) {
            json_decref(doc);
            rc = icm_cli_report_lost(r->dry_run ? 0 : r->deleted, "planned file",
                                     "out of memory");
        } else if (!icm_cli_json_emit(doc)) {
            rc = icm_cli_report_lost(r->dry_run ? 0 : r->deleted, "planned file",
                                     "cannot write to stdout");
        }
    } else if (!print_human(p, r, m, &n)) {
        rc = icm_cli_report_lost(r->dry_run ? 0 : r->deleted, "planned file", "out of memory");
    } else if (!icm_cli_stdout_ok()) {
        rc = icm_cli_report_lost(r->dry_run ? 0 : r->deleted, "planned file",
                                 "cannot write to stdout");
    }
    for (size_t i = 0; i < p->n_files; i++) {
        const icm_orphan_file *f = m[i];
        if (f == NULL || (f->state != ICM_ORPHAN_FAILED && f->state != ICM_ORPHAN_KEPT))
            continue;
        bool kept = f->state == ICM_ORPHAN_KEPT;
        const char *why = f->error_message != NULL ? f->error_message : "not deleted";
        icm_cli_file_line(kept ? cli : NULL, kept, f->path,
                          strncmp(why, "not deleted", 11) == 0 ? "" : "not deleted: ", why);
    }
    return rc != ICM_EXIT_OK ? rc : r->failed > 0 ? ICM_EXIT_ERROR : ICM_EXIT_OK;
}

/* The sweep's options from the command line, before the plan is read (usage errors first:
 * reported). The plan's own part is plan_options. Exit code. */
static int build_options(const apply_args *a, int64_t now, icm_orphan_options *o)
{
    o->now_ms = now;
    o->exact_file_list = true;
    o->dry_run = a->dry_run;
    o->force = a->force;
    o->no_verify = a->no_verify;
    o->settle_ms = ICM_ORPHAN_DEFAULT_SETTLE_MS;
    const char *why = NULL;
    if (a->settle != NULL && icm_cli_parse_duration(a->settle, &o->settle_ms, &why) != 0)
        return icm_cli_usage(a->settle, "--settle: %s", why != NULL ? why : "not a duration");
    if (a->threads != NULL) {
        int64_t v = 0;
        if (!icm_cli_parse_int64(a->threads, &v) || v <= 0 || v > 1024)
            return icm_cli_usage(a->threads, "--max-concurrent-deletes: expected 1 to 1024");
        o->max_concurrent_deletes = (unsigned)v;
    }
    o->trash = a->limits.trash;
    return icm_cli_limits_build(&a->limits, &o->limits);
}

/* The plan's part of the sweep's options: its cutoff, and a sweep plan's listing location (an
 * expiry's files lie anywhere below the table's). */
static void plan_options(const icm_cli_plan *p, icm_orphan_options *o)
{
    o->has_older_than = true;
    o->older_than_ms = p->older_than_ms;
    o->location = strcmp(p->command, "remove-orphan-files") == 0 ? p->location : NULL;
    o->shard_index = p->shard_index;
    o->shard_count = p->shard_count;
}

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

/* The plan's sweep on the loaded table, then the report. Exit code. */
static int carry_out(icm_cli *cli, const apply_args *a, const icm_cli_plan *p,
                     icm_orphan_options *o, icm_table *t, icm_cli_journal *j)
{
    icm_orphan_result *r = NULL;
    int lrc = icm_orphan_sweep(&r, t, o);
    if (r == NULL) /* refused or failed before any delete */
        return icm_cli_journal_finish(j, icm_table_get_identifier(t), false,
                                      icm_cli_fail(cli, lrc), "none");
    int rc = ICM_EXIT_OK;
    if (lrc != 0) {
        const char *why;
        rc = icm_cli_journal_broken(j, &why)
                 ? icm_cli_error(j->path, "--log-out: cannot write the journal (%s); the "
                                          "deletes stopped", why)
                 : icm_cli_fail(cli, lrc);
    }
    const icm_orphan_file **m = NULL;
    int orc = match(p, r, &m);
    if (orc != ICM_EXIT_OK)
        orc = icm_cli_report_lost(r->dry_run ? 0 : r->deleted, "planned file", "out of memory");
    else
        orc = output(cli, a, p, t, r, m);
    if (rc == ICM_EXIT_OK)
        rc = orc;
    /* The journal also says what became of the planned files apply did not delete. */
    for (size_t i = 0; m != NULL && !r->dry_run && i < p->n_files; i++) {
        outcome out = outcome_of(&p->files[i], m[i]);
        if ((out.kind == OUT_KEPT || out.kind == OUT_NOT_ORPHAN || out.kind == OUT_SKIPPED) &&
            !icm_cli_journal_note(j, p->files[i].path, p->files[i].size_bytes,
                                  outcome_names[out.kind], out.reason))
            break; /* (the summary reports the broken journal) */
    }
    free(m);
    const char *report = "none";
    rc = icm_cli_report_written(rc, r->dry_run ? 0 : r->deleted, "planned file", &report);
    rc = icm_cli_journal_finish(j, icm_table_get_identifier(t), !r->delete_stopped, rc, report);
    icm_orphan_result_free(r);
    return rc;
}

static int run_apply(icm_cli *cli, int argc, char **argv)
{
    apply_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(argc, argv, &a);
    if (rc != ICM_EXIT_OK)
        return rc;
    int64_t now = wall_ms();
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    if ((rc = build_options(&a, now, &o)) != ICM_EXIT_OK)
        return rc;
    icm_cli_plan plan;
    rc = icm_cli_plan_read(a.plan, &plan);
    if (rc == ICM_EXIT_OK)
        rc = check_age(&a, &plan, now);
    if (rc == ICM_EXIT_OK)
        plan_options(&plan, &o);
    char *file_list = NULL;
    icm_cli_journal journal;
    memset(&journal, 0, sizeof journal);
    journal.fd = -1;
    if (rc == ICM_EXIT_OK && a.log_out != NULL &&
        (rc = icm_cli_journal_open(&journal, a.log_out, "apply")) == ICM_EXIT_OK)
        journal.plan = a.plan;
    char **own = NULL;
    size_t n_own = 0;
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_lease *lease = NULL;
    if (rc == ICM_EXIT_OK)
        rc = catalog_files(cli, &own, &n_own);
    if (rc == ICM_EXIT_OK)
        rc = icm_cli_table_load(cli, a.table != NULL ? a.table : plan.table, &cat, &t);
    if (rc == ICM_EXIT_OK)
        rc = check_table(&a, &plan, t);
    if (rc == ICM_EXIT_OK)
        rc = icm_cli_journal_check_table(&journal, t);
    if (rc == ICM_EXIT_OK && !a.dry_run && !a.no_lock && !icm_table_is_read_only(t))
        rc = icm_cli_lease_take(cli, t, "apply", &lease);
    if (rc == ICM_EXIT_OK)
        rc = write_file_list(&plan, &file_list);
    if (rc == ICM_EXIT_OK) {
        o.file_list = file_list;
        o.lease = lease;
        o.catalog_files = (const char *const *)own;
        o.catalog_file_count = n_own;
        o.on_delete = icm_cli_journal_on_delete;
        o.on_delete_payload = a.log_out != NULL ? &journal : NULL;
        rc = carry_out(cli, &a, &plan, &o, t, &journal);
    }
    if (file_list != NULL)
        unlink(file_list);
    free(file_list);
    icm_cli_lease_drop(lease);
    icm_cli_journal_close(&journal);
    icm_table_free(t);
    icm_catalog_free(cat);
    icm_catalog_own_files_free(own, n_own);
    icm_cli_plan_free(&plan);
    return rc;
}

const icm_cli_command icm_cli_cmd_apply = {
    "apply",
    "delete what a reviewed plan names, after re-validating it against the table now",
    apply_help,
    run_apply,
};
