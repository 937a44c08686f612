/*
 * cli/cmd_txn.c: the commands that commit one transaction (include/icemaint/transaction.h):
 *   add-files TABLE FILE...            register existing Parquet files (never deleted)
 *   delete-files TABLE PATH...         remove live data/delete files from the table
 *   set-properties TABLE k=v... [--unset KEY]...
 *   create-branch|create-tag TABLE NAME [--snapshot-id ID] [--max-ref-age D]
 *                                      [--max-snapshot-age D] [--min-snapshots-to-keep N]
 *   remove-ref TABLE NAME
 *   rollback TABLE SNAPSHOT_ID
 * Each queues its operations, commits with the table's retry policy and reports the outcome:
 * exit 3 when the commit failed (the transaction's own files were deleted), 4 when its outcome
 * is unknown (nothing deleted; the message names the metadata file and snapshot to look for).
 * Output: one line on stdout, or with --json {command, table, metadata_location, snapshot_id,
 * attempts}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_ref.h"
#include "cli.h"
#include "cmd_txn.h"
#include "icemaint/transaction.h"
#include "timeparse.h"

#define TABLE_FORMS                                                                          \
    "TABLE is ns.table (through the configured catalog) or a table directory in filesystem\n" \
    "(Hadoop) layout; a metadata JSON file is read-only and refused.\n"

#define OUTCOMES                                                                             \
    "Exit codes: 0 committed, 1 error (nothing committed; files this command wrote were\n"    \
    "deleted), 2 usage, 3 commit failed after retries (conflict; its files were deleted),\n"  \
    "4 commit outcome unknown (nothing deleted: reload the table and check whether the\n"     \
    "metadata file named in the message became current), 5 refused by a safety check\n"      \
    "(nothing committed; the message names it: e.g. a file in an icemaint trash).\n"

/* What a command parsed: TABLE, positional arguments after it, and the ref options. */
typedef struct txn_args {
    const char *table;
    const char **pos;
    int n_pos;
    const char *snapshot_id;
    const char *max_ref_age, *max_snapshot_age, *min_snapshots;
    const char **unset;
    int n_unset;
} txn_args;

typedef struct txn_command {
    const char *name;
    int min_pos, max_pos;      /* positional arguments after TABLE (max -1: any number) */
    bool ref_options;          /* --snapshot-id and retention options */
    bool unset_option;         /* --unset KEY */
    const char *pos_name;      /* for messages */
} txn_command;

static void free_args(txn_args *a)
{
    free(a->pos);
    free(a->unset);
}

/* Parse options and positional arguments; returns an exit code (errors reported). */
static int parse_args(const txn_command *c, int argc, char **argv, txn_args *a)
{
    memset(a, 0, sizeof *a);
    a->pos = calloc((size_t)argc, sizeof *a->pos);
    a->unset = calloc((size_t)argc, sizeof *a->unset);
    if (a->pos == NULL || a->unset == NULL)
        return icm_cli_oom();
    bool dashdash = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!dashdash && strcmp(arg, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && arg[0] == '-' && arg[1] != '\0') {
            const char *v = NULL;
            int m = 0;
            if (c->ref_options &&
                ((m = icm_cli_opt_value(argc, argv, &i, "--snapshot-id", &a->snapshot_id)) ||
                 (m = icm_cli_opt_value(argc, argv, &i, "--max-ref-age", &a->max_ref_age)) ||
                 (m = icm_cli_opt_value(argc, argv, &i, "--max-snapshot-age",
                                        &a->max_snapshot_age)) ||
                 (m = icm_cli_opt_value(argc, argv, &i, "--min-snapshots-to-keep",
                                        &a->min_snapshots))))
                ;
            else if (c->unset_option && (m = icm_cli_opt_value(argc, argv, &i, "--unset", &v)) > 0)
                a->unset[a->n_unset++] = v;
            if (m < 0)
                return ICM_EXIT_USAGE;
            if (m == 0)
                return icm_cli_usage(arg, "unknown option for '%s'", c->name);
            continue;
        }
        if (a->table == NULL) {
            a->table = arg;
        } else if (c->max_pos >= 0 && a->n_pos == c->max_pos) {
            return icm_cli_usage(arg, "unexpected argument: '%s' takes TABLE %s", c->name,
                                 c->pos_name);
        } else {
            a->pos[a->n_pos++] = arg;
        }
    }
    if (a->table == NULL)
        return icm_cli_usage(c->name, "TABLE is missing");
    if (a->n_pos < c->min_pos && a->n_unset == 0)
        return icm_cli_usage(c->name, "%s missing", c->pos_name);
    return ICM_EXIT_OK;
}

/* Open TABLE for committing and start a transaction. */
static int begin(icm_cli *cli, const char *ref, icm_catalog **cat, icm_table **t, icm_txn **txn)
{
    int rc = icm_cli_table_load(cli, ref, cat, t);
    if (rc != ICM_EXIT_OK)
        return rc;
    int lrc = icm_txn_new(txn, *t);
    return lrc == 0 ? ICM_EXIT_OK : icm_cli_fail(cli, lrc);
}

static void end(icm_catalog *cat, icm_table *t, icm_txn *txn)
{
    icm_txn_free(txn); /* after a commit attempt this deletes nothing more */
    icm_table_free(t);
    icm_catalog_free(cat);
}

/* Commit and report. */
static int commit_and_report(icm_cli *cli, const char *cmd, const char *ref, icm_table *t,
                             icm_txn *txn, const char *what)
{
    int rc = icm_txn_commit(txn);
    icm_cli_commit_warnings(cli, t);
    if (rc != 0)
        return icm_cli_fail(cli, rc);
    int64_t id = 0;
    bool has_id = icm_txn_snapshot_id(&id, txn);
    const char *loc = icm_table_get_metadata_location(t);
    if (cli->json) {
        bool ok = true;
        json_t *doc = json_object();
        if (doc == NULL)
            return icm_cli_oom();
        icm_cli_json_set(doc, "command", icm_cli_json_str(cmd), &ok);
        icm_cli_json_set(doc, "table", icm_cli_json_str(ref), &ok);
        icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(loc), &ok);
        icm_cli_json_set(doc, "snapshot_id", has_id ? icm_cli_json_int(id) : json_null(), &ok);
        icm_cli_json_set(doc, "attempts", icm_cli_json_int(icm_txn_attempts(txn)), &ok);
        return icm_cli_json_print(doc, ok);
    }
    /* the result goes to stdout whatever -q says (-q: only errors on stderr) */
    if (has_id)
        icm_cli_line(stdout, "%s: committed snapshot %" PRId64 " (%s); metadata %s", ref, id,
                     what, loc);
    else
        icm_cli_line(stdout, "%s: committed (%s); metadata %s", ref, what, loc);
    return ICM_EXIT_OK;
}

/* ---- the commands ---- */

/* `loc` + `rest`, with the trailing slashes of `loc` dropped (malloc'd; NULL on failure). */
static char *join_below(const char *loc, const char *rest)
{
    size_t m = strlen(loc);
    while (m > 1 && loc[m - 1] == '/')
        m--;
    size_t len = m + strlen(rest) + 1;
    char *out = malloc(len);
    if (out != NULL)
        snprintf(out, len, "%.*s%s", (int)m, loc, rest);
    return out;
}

/* The part of local path `path` below local path `dir` (from its '/'), or NULL. */
static const char *below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/' ? path + n : NULL;
}

/*
 * The name `file` gets when it is named through links (NULL: it keeps its name; malloc'd):
 *  - named outside the table location but really below it: the table location's spelling of
 *    where it is (a file added or deleted through a linked parent folder is named as a listing
 *    of the table location names it);
 *  - added by a name inside the table location that passes a symbolic link below it
 *    (`T/data/alias/x` with `alias -> .`): where it really is, under the table location's
 *    spelling when that is inside the table, else its real path. Otherwise a table would hold
 *    a second name of a file, and expiring the snapshots that hold that name would delete the
 *    file the other name keeps (README, "What the maintenance commands touch").
 * A file to delete named inside the table keeps its name: it is matched as the metadata names
 * it. Unresolvable names keep theirs too (add-files reports a missing file itself).
 */
static char *link_free_name(icm_table *t, const char *file, bool adding)
{
    const char *loc = icm_table_metadata_location(icm_table_get_metadata(t));
    icm_fileio *io = icm_table_get_fileio(t);
    char *a = NULL, *b = NULL, *out = NULL;
    if (loc == NULL)
        return NULL;
    const char *named_rest = NULL;
    if (icm_location_local_path(&a, file) && icm_location_local_path(&b, loc))
        named_rest = below(a, b);
    bool named_inside = named_rest != NULL;
    char *named_tail = named_inside ? strdup(named_rest) : NULL;
    icm_free(a);
    icm_free(b);
    a = b = NULL;
    if ((!named_inside || adding) && icm_fileio_resolve(&a, io, file) == 0 &&
        icm_fileio_resolve(&b, io, loc) == 0) {
        const char *rest = below(a, b);
        if (!named_inside && rest != NULL)
            out = join_below(loc, rest);
        else if (named_inside && rest == NULL)
            out = strdup(a); /* a link inside the table leads out of it */
        else if (named_inside && named_tail != NULL && strcmp(rest, named_tail) != 0)
            out = join_below(loc, rest);
    }
    free(named_tail);
    icm_free(a);
    icm_free(b);
    icm_error_clear();
    return out;
}

/*
 * The name a file gets in the table (issue #16, class 1: nothing relative or dotted is
 * recorded). An added file is made absolute and canonical (icm_location_canonical: readers
 * would resolve a relative name against their own working directory), named without the
 * symbolic links on its way below the table location (link_free_name), and a path under a --path-map TO
 * becomes the name the metadata uses. A file to delete is matched as the metadata names it, so
 * only a relative one is made absolute. *out is malloc'd.
 */
static int table_file_name(icm_cli *cli, icm_table *t, const char *arg, bool adding, char **out)
{
    *out = NULL;
    char *path = NULL, *canon = NULL;
    bool local = icm_location_local_path(&path, arg);
    if (!local && path == NULL && icm_error_last()->code == ICM_ENOMEM)
        return icm_cli_oom();
    bool make_canonical = local && (adding || path[0] != '/');
    icm_free(path);
    if (make_canonical) {
        int lrc = icm_location_canonical(&canon, arg);
        if (lrc != 0)
            return icm_cli_fail(cli, lrc);
    }
    /* A file named through links goes by a name without them (link_free_name). */
    char *respelled = local ? link_free_name(t, canon != NULL ? canon : arg, adding) : NULL;
    const char *name = respelled != NULL ? respelled : canon != NULL ? canon : arg;
    int rc = icm_cli_original_name(cli, name, out);
    free(respelled);
    icm_free(canon);
    return rc;
}

/* add-files and delete-files: one transaction applying `op` to each named file. Added files
 * are named by absolute locations; deleted ones as given (after --path-map). */
typedef int (*file_op)(icm_txn *txn, const char *location);

static int run_file_command(icm_cli *cli, const txn_command *cmd, int argc, char **argv,
                            file_op op, bool absolute, const char *verb)
{
    txn_args a;
    int rc = parse_args(cmd, argc, argv, &a);
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_txn *txn = NULL;
    if (rc == ICM_EXIT_OK)
        rc = begin(cli, a.table, &cat, &t, &txn);
    for (int i = 0; rc == ICM_EXIT_OK && i < a.n_pos; i++) {
        char *name = NULL;
        rc = table_file_name(cli, t, a.pos[i], absolute, &name);
        if (rc != ICM_EXIT_OK)
            break;
        int lrc = op(txn, name);
        free(name);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
    }
    char what[64];
    snprintf(what, sizeof what, "%d file%s %s", a.n_pos, a.n_pos == 1 ? "" : "s", verb);
    if (rc == ICM_EXIT_OK)
        rc = commit_and_report(cli, cmd->name, a.table, t, txn, what);
    end(cat, t, txn);
    free_args(&a);
    return rc;
}

static const txn_command add_files_cmd = {"add-files", 1, -1, false, false, "FILE..."};

static int run_add_files(icm_cli *cli, int argc, char **argv)
{
    return run_file_command(cli, &add_files_cmd, argc, argv, icm_txn_add_parquet_file, true,
                            "added");
}

static const txn_command delete_files_cmd = {"delete-files", 1, -1, false, false, "PATH..."};

static int run_delete_files(icm_cli *cli, int argc, char **argv)
{
    return run_file_command(cli, &delete_files_cmd, argc, argv, icm_txn_delete_file, false,
                            "removed");
}

static const txn_command set_properties_cmd = {"set-properties", 1, -1, false, true,
                                               "KEY=VALUE..."};

/* Check each KEY=VALUE before anything is opened: a value of the wrong type for a property
 * Iceberg types (icm_table_property_check) is a usage error (exit 2) naming the property and
 * the type; a name a typing slip from a known one gets a warning (it is set all the same:
 * tables carry properties of their own). */
static int check_property_args(icm_cli *cli, const txn_args *a)
{
    for (int i = 0; i < a->n_pos + a->n_unset; i++) {
        const char *arg = i < a->n_pos ? a->pos[i] : a->unset[i - a->n_pos];
        const char *eq = i < a->n_pos ? strchr(arg, '=') : NULL;
        if (i < a->n_pos && (eq == NULL || eq == arg))
            return icm_cli_usage(arg, "expected KEY=VALUE");
        char *key = eq != NULL ? strndup(arg, (size_t)(eq - arg)) : strdup(arg);
        if (key == NULL)
            return icm_cli_oom();
        const char *closest = NULL;
        int rc = icm_table_property_check(&closest, key, eq != NULL ? eq + 1 : NULL);
        if (rc != 0) {
            rc = icm_cli_usage(key, "%s", icm_error_last()->message);
            free(key);
            return rc;
        }
        if (closest != NULL)
            icm_cli_warn(cli, "unknown table property %s (did you mean %s?)", key, closest);
        free(key);
    }
    return ICM_EXIT_OK;
}

static int run_set_properties(icm_cli *cli, int argc, char **argv)
{
    txn_args a;
    int rc = parse_args(&set_properties_cmd, argc, argv, &a);
    if (rc == ICM_EXIT_OK)
        rc = check_property_args(cli, &a);
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_txn *txn = NULL;
    if (rc == ICM_EXIT_OK)
        rc = begin(cli, a.table, &cat, &t, &txn);
    for (int i = 0; rc == ICM_EXIT_OK && i < a.n_pos; i++) {
        const char *eq = strchr(a.pos[i], '=');
        char *key = strndup(a.pos[i], (size_t)(eq - a.pos[i]));
        int lrc = key != NULL ? icm_txn_set_property(txn, key, eq + 1) : ICM_ENOMEM;
        free(key);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
    }
    /* Removing a property the table does not have changes nothing: it is said, not
     * committed (a commit would write a new metadata file for nothing). */
    int removed = 0;
    const icm_table_metadata *md = t != NULL ? icm_table_get_metadata(t) : NULL;
    for (int i = 0; rc == ICM_EXIT_OK && i < a.n_unset; i++) {
        if (icm_table_metadata_property(md, a.unset[i]) == NULL) {
            icm_cli_warn(cli, "%s: property %s is not set: nothing to remove", a.table,
                         a.unset[i]);
            continue;
        }
        int lrc = icm_txn_set_property(txn, a.unset[i], NULL);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
        removed++;
    }
    if (rc == ICM_EXIT_OK && a.n_pos == 0 && removed == 0) {
        const char *loc = icm_table_get_metadata_location(t);
        if (cli->json) {
            bool ok = true;
            json_t *doc = json_object();
            if (doc == NULL) {
                rc = icm_cli_oom();
            } else {
                icm_cli_json_set(doc, "command", icm_cli_json_str("set-properties"), &ok);
                icm_cli_json_set(doc, "table", icm_cli_json_str(a.table), &ok);
                icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(loc), &ok);
                icm_cli_json_set(doc, "committed", json_false(), &ok);
                rc = icm_cli_json_print(doc, ok);
            }
        } else {
            icm_cli_line(stdout, "%s: nothing to commit (no property to set, none of those to "
                                 "remove is set); metadata %s", a.table, loc);
        }
    } else if (rc == ICM_EXIT_OK) {
        char what[64];
        snprintf(what, sizeof what, "%d propert%s set, %d removed", a.n_pos,
                 a.n_pos == 1 ? "y" : "ies", removed);
        rc = commit_and_report(cli, "set-properties", a.table, t, txn, what);
    }
    end(cat, t, txn);
    free_args(&a);
    return rc;
}

static int parse_age(const char *opt, const char *text, bool *has, int64_t *out)
{
    if (text == NULL)
        return ICM_EXIT_OK;
    const char *why = NULL;
    if (icm_cli_parse_duration(text, out, &why) != 0 || *out <= 0)
        return icm_cli_usage(opt, "needs a positive duration such as 7d or 36h (%s)",
                             why != NULL ? why : "zero");
    *has = true;
    return ICM_EXIT_OK;
}

static int parse_retention(const txn_args *a, icm_ref_retention *r, bool *any)
{
    memset(r, 0, sizeof *r);
    int rc = parse_age("--max-ref-age", a->max_ref_age, &r->has_max_ref_age_ms,
                       &r->max_ref_age_ms);
    if (rc == ICM_EXIT_OK)
        rc = parse_age("--max-snapshot-age", a->max_snapshot_age, &r->has_max_snapshot_age_ms,
                       &r->max_snapshot_age_ms);
    if (rc == ICM_EXIT_OK && a->min_snapshots != NULL) {
        int64_t n = 0;
        if (!icm_cli_parse_int64(a->min_snapshots, &n) || n < 1 || n > INT32_MAX)
            return icm_cli_usage("--min-snapshots-to-keep", "needs a whole number >= 1, not '%s'",
                                 a->min_snapshots);
        r->has_min_snapshots_to_keep = true;
        r->min_snapshots_to_keep = (int32_t)n;
    }
    *any = r->has_max_ref_age_ms || r->has_max_snapshot_age_ms || r->has_min_snapshots_to_keep;
    return rc;
}

static const txn_command create_branch_cmd = {"create-branch", 1, 1, true, false, "NAME"};
static const txn_command create_tag_cmd = {"create-tag", 1, 1, true, false, "NAME"};

static int run_create_ref(icm_cli *cli, int argc, char **argv, icm_ref_type type)
{
    const txn_command *c = type == ICM_REF_TAG ? &create_tag_cmd : &create_branch_cmd;
    txn_args a;
    int rc = parse_args(c, argc, argv, &a);
    int64_t id = 0;
    if (rc == ICM_EXIT_OK && a.snapshot_id != NULL && !icm_cli_parse_int64(a.snapshot_id, &id))
        rc = icm_cli_usage(a.snapshot_id, "--snapshot-id needs a snapshot id (an integer)");
    icm_ref_retention r;
    bool any = false;
    if (rc == ICM_EXIT_OK)
        rc = parse_retention(&a, &r, &any);
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_txn *txn = NULL;
    if (rc == ICM_EXIT_OK)
        rc = begin(cli, a.table, &cat, &t, &txn);
    if (rc == ICM_EXIT_OK) {
        int lrc = icm_txn_set_ref(txn, a.pos[0], type,
                                  a.snapshot_id != NULL ? ICM_TXN_REF_SNAPSHOT_ID : 0u, id,
                                  any ? &r : NULL);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
    }
    char what[300];
    snprintf(what, sizeof what, "%s %s created", type == ICM_REF_TAG ? "tag" : "branch",
             a.n_pos > 0 ? a.pos[0] : "");
    if (rc == ICM_EXIT_OK)
        rc = commit_and_report(cli, c->name, a.table, t, txn, what);
    end(cat, t, txn);
    free_args(&a);
    return rc;
}

static int run_create_branch(icm_cli *cli, int argc, char **argv)
{
    return run_create_ref(cli, argc, argv, ICM_REF_BRANCH);
}

static int run_create_tag(icm_cli *cli, int argc, char **argv)
{
    return run_create_ref(cli, argc, argv, ICM_REF_TAG);
}

static const txn_command remove_ref_cmd = {"remove-ref", 1, 1, false, false, "NAME"};

static int run_remove_ref(icm_cli *cli, int argc, char **argv)
{
    txn_args a;
    int rc = parse_args(&remove_ref_cmd, argc, argv, &a);
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_txn *txn = NULL;
    if (rc == ICM_EXIT_OK)
        rc = begin(cli, a.table, &cat, &t, &txn);
    if (rc == ICM_EXIT_OK) {
        int lrc = icm_txn_remove_ref(txn, a.pos[0]);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
    }
    char what[300];
    snprintf(what, sizeof what, "ref %s removed", a.n_pos > 0 ? a.pos[0] : "");
    if (rc == ICM_EXIT_OK)
        rc = commit_and_report(cli, "remove-ref", a.table, t, txn, what);
    end(cat, t, txn);
    free_args(&a);
    return rc;
}

static const txn_command rollback_cmd = {"rollback", 1, 1, false, false, "SNAPSHOT_ID"};

static int run_rollback(icm_cli *cli, int argc, char **argv)
{
    txn_args a;
    int rc = parse_args(&rollback_cmd, argc, argv, &a);
    int64_t id = 0;
    if (rc == ICM_EXIT_OK && !icm_cli_parse_int64(a.pos[0], &id))
        rc = icm_cli_usage(a.pos[0], "SNAPSHOT_ID must be a snapshot id (an integer)");
    icm_catalog *cat = NULL;
    icm_table *t = NULL;
    icm_txn *txn = NULL;
    if (rc == ICM_EXIT_OK)
        rc = begin(cli, a.table, &cat, &t, &txn);
    if (rc == ICM_EXIT_OK) {
        int lrc = icm_txn_set_current_snapshot(txn, id, true);
        if (lrc != 0)
            rc = icm_cli_fail(cli, lrc);
    }
    char what[64];
    snprintf(what, sizeof what, "rolled back to %" PRId64, id);
    if (rc == ICM_EXIT_OK)
        rc = commit_and_report(cli, "rollback", a.table, t, txn, what);
    end(cat, t, txn);
    free_args(&a);
    return rc;
}

const icm_cli_command icm_cli_cmd_add_files = {
    "add-files", "register existing Parquet files as new data files (one append)",
    "Usage: icemaint [GLOBAL OPTIONS] add-files TABLE FILE... [--json]\n"
    "\n"
    "Append existing Parquet files to the table in one snapshot: the record count is read\n"
    "from each file's footer and the size from storage. The files stay where they are and are\n"
    "never deleted by this command. A file already live in the table is refused, and so is a\n"
    "file whose schema does not fit the table's current schema (PyIceberg's add_files rule;\n"
    "the error names the file and the column); nothing is committed then. So is a file\n"
    "inside an icemaint trash (<trash>/<table-uuid>/files/, beside its journal/), named\n"
    "directly or through a link: `trash expire` deletes it and `trash restore` moves it\n"
    "away; restore it first (`icemaint trash restore`) and add it from there. When the\n"
    "table has no schema.name-mapping.default, one is set from the current schema so files\n"
    "without Iceberg field ids are read by column name (as PyIceberg's add_files).\n"
    "Unpartitioned tables only.\n"
    "\n" TABLE_FORMS "\n" OUTCOMES,
    run_add_files};

const icm_cli_command icm_cli_cmd_delete_files = {
    "delete-files", "remove live data or delete files from the table (one snapshot)",
    "Usage: icemaint [GLOBAL OPTIONS] delete-files TABLE PATH... [--json]\n"
    "\n"
    "Commit a `delete` snapshot without the given data or delete files. Each PATH must be a\n"
    "live file of the current snapshot (/p and file:/p name the same file). The files\n"
    "themselves are not deleted: older snapshots still reference them until they expire.\n"
    "\n" TABLE_FORMS "\n" OUTCOMES,
    run_delete_files};

const icm_cli_command icm_cli_cmd_set_properties = {
    "set-properties", "set (or --unset) table properties",
    "Usage: icemaint [GLOBAL OPTIONS] set-properties TABLE KEY=VALUE... [--unset KEY]...\n"
    "\n"
    "Set table properties (the value is everything after the first '='); --unset KEY removes\n"
    "a property (repeatable). A value Iceberg cannot read for a property it types (an integer\n"
    "such as history.expire.min-snapshots-to-keep, a boolean such as gc.enabled: true or\n"
    "false) is refused, exit 2; a name a typing slip from a known one is set with a warning\n"
    "naming the one meant. Removing only properties that are not set commits nothing.\n"
    "\n" TABLE_FORMS "\n" OUTCOMES,
    run_set_properties};

#define REF_OPTIONS                                                                          \
    "Options:\n"                                                                              \
    "  --snapshot-id ID            the snapshot to point at (default: the current one)\n"     \
    "  --max-ref-age DURATION      max-ref-age-ms: expire the ref itself after this (7d)\n"

const icm_cli_command icm_cli_cmd_create_branch = {
    "create-branch", "create a branch (with retention settings)",
    "Usage: icemaint [GLOBAL OPTIONS] create-branch TABLE NAME [OPTIONS]\n"
    "\n"
    "Create branch NAME; refused when a ref of that name exists.\n"
    "\n" REF_OPTIONS
    "  --max-snapshot-age DURATION max-snapshot-age-ms of the branch (2d)\n"
    "  --min-snapshots-to-keep N   min-snapshots-to-keep of the branch\n"
    "\n" TABLE_FORMS "\n" OUTCOMES,
    run_create_branch};

const icm_cli_command icm_cli_cmd_create_tag = {
    "create-tag", "create a tag (with max-ref-age)",
    "Usage: icemaint [GLOBAL OPTIONS] create-tag TABLE NAME [OPTIONS]\n"
    "\n"
    "Create tag NAME; refused when a ref of that name exists. Tags take no\n"
    "--max-snapshot-age or --min-snapshots-to-keep.\n"
    "\n" REF_OPTIONS "\n" TABLE_FORMS "\n" OUTCOMES,
    run_create_tag};

const icm_cli_command icm_cli_cmd_remove_ref = {
    "remove-ref", "remove a branch or tag (never main)",
    "Usage: icemaint [GLOBAL OPTIONS] remove-ref TABLE NAME [--json]\n"
    "\n"
    "Remove branch or tag NAME. The main branch cannot be removed. Snapshots only that ref\n"
    "kept become eligible for expiry.\n"
    "\n" TABLE_FORMS "\n" OUTCOMES,
    run_remove_ref};

const icm_cli_command icm_cli_cmd_rollback = {
    "rollback", "make an ancestor snapshot current again",
    "Usage: icemaint [GLOBAL OPTIONS] rollback TABLE SNAPSHOT_ID [--json]\n"
    "\n"
    "Point branch main (the current snapshot) at SNAPSHOT_ID, which must be an ancestor of\n"
    "the current snapshot. Later snapshots stay in the metadata until they expire.\n"
    "\n" TABLE_FORMS "\n" OUTCOMES,
    run_rollback};
