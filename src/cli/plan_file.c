/*
 * cli/plan_file.c: --plan-out FILE for expire-snapshots and remove-orphan-files.
 *
 * The plan file must never cost the user a file. It is opened before the command does anything
 * (so a path that cannot be written stops the command first) as a new hidden temporary file
 * beside FILE; FILE itself is only replaced, by rename, once the report is written. A failed or
 * refused run removes the temporary file and leaves an existing FILE as it was. An existing
 * FILE is replaced only when it is an earlier plan (a JSON object with `dry_run`): anything
 * else (a catalog database, another table's file, a data file added from elsewhere) is refused.
 * FILE may not lie inside the table's location, `write.data.path` or `write.metadata.path`
 * either, after following symbolic links and path maps. Both rules are cli/out_file.c's, which
 * the `--log-out` journal shares.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Whether the file at `path` (links followed) is an earlier plan: a JSON object whose
 * `dry_run` is true or false, as every plan icemaint writes. */
static bool is_earlier_plan(const char *path)
{
    json_t *doc = json_load_file(path, 0, NULL);
    bool yes = json_is_boolean(json_object_get(doc, "dry_run"));
    json_decref(doc);
    return yes;
}

int icm_cli_plan_open(icm_cli_plan_file *p, const char *path)
{
    memset(p, 0, sizeof *p);
    const char *base = icm_cli_base_of(path);
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return icm_cli_usage("--plan-out", "needs a file name, not '%s'", path);
    /* rename() cannot replace a folder: found only after the run, its files would be gone with
     * no plan. Anything else already there, a link included, is replaced only when it reads as
     * an earlier plan (a link to a folder does not; a replaced link is replaced itself). */
    int rc = icm_cli_out_file_check_existing("--plan-out", path, is_earlier_plan,
                                             "an earlier plan (a JSON report with dry_run)");
    if (rc != ICM_EXIT_OK)
        return rc;
    char *dir = icm_cli_dir_of(path);
    if (dir == NULL)
        return icm_cli_oom();
    size_t n = strlen(dir) + strlen(base) + 32;
    p->tmp = malloc(n);
    p->path = strdup(path);
    if (p->tmp == NULL || p->path == NULL) {
        free(dir);
        icm_cli_plan_discard(p);
        return icm_cli_oom();
    }
    snprintf(p->tmp, n, "%s/.%s.icm-plan-XXXXXX", dir, base);
    free(dir);
    int fd = mkstemp(p->tmp);
    if (fd >= 0) { /* mkstemp makes it 0600: give the plan a new file's usual mode */
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask);
    }
    if (fd < 0 || (p->f = fdopen(fd, "w")) == NULL) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(p->tmp);
        }
        free(p->tmp);
        p->tmp = NULL;
        icm_cli_plan_discard(p);
        return icm_cli_error(path, "cannot write the plan file: %s", strerror(err));
    }
    return ICM_EXIT_OK;
}

int icm_cli_plan_check_table(icm_cli_plan_file *p, icm_table *t)
{
    /* The link itself is replaced by the rename, so the name is checked, not its target. */
    return icm_cli_out_file_check_table("--plan-out", p->path, false, t);
}

int icm_cli_plan_write(icm_cli_plan_file *p, json_t *doc)
{
    int err = 0;
    if (!icm_cli_json_write(p->f, doc, true) ||
        fflush(p->f) != 0 || fsync(fileno(p->f)) != 0)
        err = errno != 0 ? errno : EIO;
    if (fclose(p->f) != 0 && err == 0)
        err = errno;
    p->f = NULL;
    if (err == 0 && rename(p->tmp, p->path) != 0)
        err = errno;
    int rc = err == 0 ? ICM_EXIT_OK
                      : icm_cli_error(p->path, "cannot write the plan file: %s", strerror(err));
    if (err != 0)
        unlink(p->tmp);
    free(p->tmp);
    p->tmp = NULL;
    free(p->path);
    p->path = NULL;
    return rc;
}

void icm_cli_plan_discard(icm_cli_plan_file *p)
{
    if (p->f != NULL)
        fclose(p->f);
    if (p->tmp != NULL)
        unlink(p->tmp);
    free(p->tmp);
    free(p->path);
    memset(p, 0, sizeof *p);
}

/* ---- the plan format (`icemaint apply`) ---- */

void icm_cli_plan_header(json_t *doc, const char *command, icm_table *t, int64_t made_ms,
                         bool *ok)
{
    const icm_table_metadata *md = icm_table_get_metadata(t);
    icm_cli_json_set(doc, "plan_version", icm_cli_json_int(ICM_CLI_PLAN_VERSION), ok);
    icm_cli_json_set(doc, "command", icm_cli_json_str(command), ok);
    icm_cli_json_set(doc, "table", icm_cli_json_str(icm_table_get_identifier(t)), ok);
    icm_cli_json_set(doc, "table_uuid", icm_cli_json_str(icm_table_metadata_uuid(md)), ok);
    icm_cli_json_set(doc, "planned_from", icm_cli_json_str(icm_table_get_metadata_location(t)),
                     ok);
    icm_cli_json_set(doc, "created_ms", icm_cli_json_int(made_ms), ok);
    icm_cli_json_set(doc, "shard", json_null(), ok);
}

/* A member of the plan object: `what` names the expected shape in the error. */
static int plan_bad(const char *path, const char *fmt, ...) ICM_CLI_PRINTF(2, 3);
static int plan_bad(const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return icm_cli_error(path, "not a plan icemaint can apply: %s", msg);
}

static bool get_int(json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return false;
    *out = (int64_t)json_integer_value(v);
    return true;
}

/* The files of a plan: its `orphans` (a sweep's) or `released` (an expiry's) array, each an
 * object with a non-empty `path`, and `size_bytes` and `mtime_ms` (whole numbers, 0 or more:
 * apply deletes a file only while storage still shows exactly them). */
static int read_files(const char *path, icm_cli_plan *p, const char *key)
{
    json_t *arr = json_object_get(p->doc, key);
    if (!json_is_array(arr))
        return plan_bad(path, "`%s` is missing or not an array%s", key,
                        strcmp(key, "released") == 0
                            ? " (an expiry plans files for apply only with --cleanup none or "
                              "--dry-run)"
                            : "");
    size_t n = json_array_size(arr);
    p->files = calloc(n > 0 ? n : 1, sizeof *p->files);
    if (p->files == NULL)
        return icm_cli_oom();
    for (size_t i = 0; i < n; i++) {
        json_t *f = json_array_get(arr, i);
        icm_cli_plan_entry *e = &p->files[i];
        e->path = json_string_value(json_object_get(f, "path"));
        if (!json_is_object(f) || e->path == NULL || e->path[0] == '\0' ||
            strlen(e->path) != json_string_length(json_object_get(f, "path")) ||
            !get_int(f, "size_bytes", &e->size_bytes) || e->size_bytes < 0 ||
            !get_int(f, "mtime_ms", &e->mtime_ms) || e->mtime_ms < 0)
            return plan_bad(path, "%s[%zu] needs a path (text, no NUL byte), size_bytes and "
                                  "mtime_ms (whole numbers, 0 or more)", key, i);
        e->kind = json_string_value(json_object_get(f, "kind"));
    }
    p->n_files = n;
    return ICM_EXIT_OK;
}

int icm_cli_plan_read(const char *path, icm_cli_plan *p)
{
    memset(p, 0, sizeof *p);
    json_error_t jerr;
    p->doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (p->doc == NULL)
        return json_error_code(&jerr) == json_error_cannot_open_file
                   ? icm_cli_error(path, "cannot read the plan: %s", jerr.text)
                   : plan_bad(path, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    if (!json_is_object(p->doc))
        return plan_bad(path, "not a JSON object");
    int64_t version = 0;
    if (!get_int(p->doc, "plan_version", &version))
        return plan_bad(path, "no plan_version (a report of an icemaint older than `apply`, "
                              "or not a plan)");
    if (version != ICM_CLI_PLAN_VERSION)
        return plan_bad(path, "plan_version %lld; this icemaint reads version %d",
                        (long long)version, ICM_CLI_PLAN_VERSION);
    p->command = json_string_value(json_object_get(p->doc, "command"));
    p->table = json_string_value(json_object_get(p->doc, "table"));
    p->table_uuid = json_string_value(json_object_get(p->doc, "table_uuid"));
    p->planned_from = json_string_value(json_object_get(p->doc, "planned_from"));
    p->location = json_string_value(json_object_get(p->doc, "location"));
    json_t *shard = json_object_get(p->doc, "shard");
    if (p->command == NULL || (strcmp(p->command, "remove-orphan-files") != 0 &&
                               strcmp(p->command, "expire-snapshots") != 0))
        return plan_bad(path, "`command` is neither remove-orphan-files nor expire-snapshots");
    if (p->table_uuid == NULL || p->table_uuid[0] == '\0')
        return plan_bad(path, "no table_uuid (a plan of a table without a uuid cannot be "
                              "matched to its table)");
    if (p->table == NULL || p->planned_from == NULL)
        return plan_bad(path, "`table` and `planned_from` must be text");
    if (!get_int(p->doc, "created_ms", &p->created_ms) || p->created_ms <= 0)
        return plan_bad(path, "`created_ms` must be a positive whole number (epoch ms)");
    bool sweep = strcmp(p->command, "remove-orphan-files") == 0;
    /* A sweep's cutoff is its own; an expiry's `older_than_ms` is its snapshots' cutoff, and
     * its files' is the time the plan was made (each existed, released, by then). */
    p->older_than_ms = p->created_ms;
    if (sweep && (!get_int(p->doc, "older_than_ms", &p->older_than_ms) ||
                  p->older_than_ms <= 0 || p->older_than_ms > p->created_ms))
        return plan_bad(path, "`older_than_ms` must be a whole number of epoch ms, not after "
                              "created_ms");
    /* A shard's plan (--shard I/N) is applied as shard I/N: its listing and keep set are the
     * range's, and every check of the other ranges runs as in the planning run. */
    p->shard_index = 0;
    p->shard_count = 1;
    if (shard != NULL && !json_is_null(shard) &&
        (!json_is_string(shard) ||
         !icm_cli_parse_shard(json_string_value(shard), &p->shard_index, &p->shard_count)))
        return plan_bad(path, "`shard` must be null or I/N with 0 <= I < N (I is 0-based; N at "
                              "most %u)", ICM_CLI_SHARDS_MAX);
    if (!sweep && p->shard_count > 1)
        return plan_bad(path, "`shard` %s: an expire-snapshots plan is never sharded",
                        json_string_value(shard));
    if (sweep && (p->location == NULL || p->location[0] == '\0'))
        return plan_bad(path, "a remove-orphan-files plan needs its `location`");
    return read_files(path, p, sweep ? "orphans" : "released");
}

void icm_cli_plan_free(icm_cli_plan *p)
{
    free(p->files);
    json_decref(p->doc);
    memset(p, 0, sizeof *p);
}
