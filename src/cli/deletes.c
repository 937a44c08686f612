/*
 * cli/deletes.c: what the two commands that delete (expire-snapshots, remove-orphan-files)
 * share around the library's delete phase (icemaint/maint.h):
 *
 *  - the `--log-out FILE` journal: opened (append, created if missing) before anything is done,
 *    so a bad path stops the command first; like `--plan-out` (cli/out_file.c), an existing
 *    FILE must be an earlier journal and FILE may not lie inside the table's roots (checked
 *    once the table is loaded; a journal this run created is then removed); one JSON line per file acted on, written as the
 *    library reports it, flushed and fsync'ed at the end of every batch; then one summary line.
 *    A line that cannot be written stops the deletes (the library's callback contract), so no
 *    delete goes unrecorded for more than the batch in flight;
 *  - the table lease (`--no-lock` skips it; dry runs take none), released on every path;
 *  - the final report's own failure (stdout closed or full): it never hides the deletes; the
 *    message says they happened and where they are recorded, and the exit code becomes 1.
 *
 * Journal lines (one JSON object each, keys sorted):
 *   {"type":"file","command":C,"path":P,"kind":K,"size_bytes":N|null,"outcome":O,
 *    "error":M|null,"time_ms":T}          O = deleted | already_gone | failed
 *   {"type":"summary","command":C,"table":T,"deleted":N,"already_gone":N,"failed":N,
 *    "bytes_deleted":N,"complete":B,"exit_code":E,"report":"printed"|"failed"|"none",
 *    "time_ms":T}
 * `apply` adds "plan":PATH (the plan file it carried out) to both kinds of line, and a file
 * line for each planned file it did not delete, with O = kept | not_orphan | skipped and the
 * reason as "error" (icm_cli_journal_note); the summary counts only the deletes.
 * Strings are byte strings, written by the CLI's one JSON writer (icm_cli_json_write): a path
 * that is not UTF-8 keeps every byte (README "Output").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the journal ---- */

/* Whether the file at `path` is an earlier journal: empty (a run that stopped before its first
 * line), or its first line a JSON object whose `type` is "file" or "summary" with a
 * `command`, as every line icemaint writes. */
static bool is_earlier_journal(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char line[4096];
    bool empty = fgets(line, sizeof line, f) == NULL;
    bool read_failed = ferror(f) != 0;
    fclose(f);
    if (read_failed)
        return false; /* a folder behind a link, or unreadable */
    if (empty)
        return true;
    json_t *doc = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
    const char *type = json_string_value(json_object_get(doc, "type"));
    bool yes = type != NULL && (strcmp(type, "file") == 0 || strcmp(type, "summary") == 0) &&
               json_is_string(json_object_get(doc, "command"));
    json_decref(doc);
    return yes;
}

int icm_cli_journal_open(icm_cli_journal *j, const char *path, const char *command)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    j->command = command;
    /* Appended to only when it is an earlier journal (never a table's file, a catalog
     * database, or anything else): out_file.c's rule, shared with --plan-out. */
    int rc = icm_cli_out_file_check_existing("--log-out", path, is_earlier_journal,
                                             "an earlier journal (JSON lines of icemaint's "
                                             "--log-out)");
    if (rc != ICM_EXIT_OK)
        return rc;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    j->created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return icm_cli_error(path, "--log-out: cannot open the journal: %s", strerror(errno));
    FILE *f = fdopen(fd, "a");
    if (f == NULL) {
        int err = errno;
        close(fd);
        return icm_cli_error(path, "--log-out: cannot open the journal: %s", strerror(err));
    }
    j->path = path;
    j->fd = fd;
    j->f = f;
    return ICM_EXIT_OK;
}

int icm_cli_journal_check_table(icm_cli_journal *j, icm_table *t)
{
    if (j->f == NULL)
        return ICM_EXIT_OK;
    int rc = icm_cli_out_file_check_table("--log-out", j->path, true, t);
    if (rc != ICM_EXIT_OK) {
        icm_cli_journal_close(j);
        if (j->created)
            (void)unlink(j->path); /* made by this run, empty: leave nothing behind */
    }
    return rc;
}

/* One line (icm_cli_json_write: one-line layout; a byte string that is not UTF-8 is written
 * losslessly as README "Output" says); false (and j->broken) when it could not be written. */
static bool journal_line(icm_cli_journal *j, json_t *line_new)
{
    errno = 0;
    bool ok = line_new != NULL && icm_cli_json_write(j->f, line_new, false);
    json_decref(line_new);
    if (!ok && !j->broken) {
        j->broken = true;
        j->broken_errno = errno != 0 ? errno : ENOMEM;
    }
    return ok;
}

static bool journal_sync(icm_cli_journal *j)
{
    if (fflush(j->f) == 0 && fsync(j->fd) == 0)
        return true;
    if (!j->broken) {
        j->broken = true;
        j->broken_errno = errno;
    }
    return false;
}

int icm_cli_journal_on_delete(const icm_delete_event *ev, void *payload)
{
    icm_cli_journal *j = payload;
    if (j == NULL || j->f == NULL)
        return 0;
    j->deleted += ev->outcome == ICM_DELETE_DELETED;
    j->already_gone += ev->outcome == ICM_DELETE_ALREADY_GONE;
    j->failed += ev->outcome == ICM_DELETE_FAILED;
    if (ev->outcome == ICM_DELETE_DELETED && ev->size_bytes > 0)
        j->bytes_deleted += ev->size_bytes;
    bool ok = true;
    json_t *line = json_object();
    icm_cli_json_set(line, "type", icm_cli_json_str("file"), &ok);
    icm_cli_json_set(line, "command", icm_cli_json_str(j->command), &ok);
    if (j->plan != NULL)
        icm_cli_json_set(line, "plan", icm_cli_json_str(j->plan), &ok);
    icm_cli_json_set(line, "path", icm_cli_json_str(ev->path), &ok);
    icm_cli_json_set(line, "kind", icm_cli_json_str(ev->kind), &ok);
    icm_cli_json_set(line, "size_bytes",
                     ev->size_bytes >= 0 ? icm_cli_json_int(ev->size_bytes) : json_null(), &ok);
    icm_cli_json_set(line, "outcome", icm_cli_json_str(icm_delete_outcome_name(ev->outcome)), &ok);
    icm_cli_json_set(line, "error",
                     icm_cli_json_str(ev->outcome != ICM_DELETE_FAILED ? NULL
                                      : ev->error_message != NULL ? ev->error_message
                                                                  : "delete failed"),
                     &ok);
    icm_cli_json_set(line, "time_ms", icm_cli_json_int(wall_ms()), &ok);
    if (!ok) {
        json_decref(line);
        line = NULL;
    }
    ok = journal_line(j, line);
    if (ok && ev->batch_end)
        ok = journal_sync(j);
    return ok ? 0 : -1; /* a journal that cannot be written stops the deletes */
}

bool icm_cli_journal_note(icm_cli_journal *j, const char *path, int64_t size_bytes,
                          const char *outcome, const char *reason)
{
    if (j == NULL || j->f == NULL || j->broken)
        return j == NULL || j->f == NULL;
    bool ok = true;
    json_t *line = json_object();
    icm_cli_json_set(line, "type", icm_cli_json_str("file"), &ok);
    icm_cli_json_set(line, "command", icm_cli_json_str(j->command), &ok);
    if (j->plan != NULL)
        icm_cli_json_set(line, "plan", icm_cli_json_str(j->plan), &ok);
    icm_cli_json_set(line, "path", icm_cli_json_str(path), &ok);
    icm_cli_json_set(line, "kind", json_null(), &ok);
    icm_cli_json_set(line, "size_bytes",
                     size_bytes >= 0 ? icm_cli_json_int(size_bytes) : json_null(), &ok);
    icm_cli_json_set(line, "outcome", icm_cli_json_str(outcome), &ok);
    icm_cli_json_set(line, "error", icm_cli_json_str(reason), &ok);
    icm_cli_json_set(line, "time_ms", icm_cli_json_int(wall_ms()), &ok);
    if (!ok) {
        json_decref(line);
        line = NULL;
    }
    return journal_line(j, line);
}

bool icm_cli_journal_broken(const icm_cli_journal *j, const char **why)
{
    if (j->f == NULL || !j->broken)
        return false;
    *why = j->broken_errno != 0 ? strerror(j->broken_errno) : "write failed";
    return true;
}

int icm_cli_journal_finish(icm_cli_journal *j, const char *table, bool complete, int exit_code,
                           const char *report)
{
    if (j->f == NULL)
        return exit_code;
    bool ok = true;
    json_t *line = json_object();
    icm_cli_json_set(line, "type", icm_cli_json_str("summary"), &ok);
    icm_cli_json_set(line, "command", icm_cli_json_str(j->command), &ok);
    if (j->plan != NULL)
        icm_cli_json_set(line, "plan", icm_cli_json_str(j->plan), &ok);
    icm_cli_json_set(line, "table", icm_cli_json_str(table), &ok);
    icm_cli_json_set(line, "deleted", icm_cli_json_int((int64_t)j->deleted), &ok);
    icm_cli_json_set(line, "already_gone", icm_cli_json_int((int64_t)j->already_gone), &ok);
    icm_cli_json_set(line, "failed", icm_cli_json_int((int64_t)j->failed), &ok);
    icm_cli_json_set(line, "bytes_deleted", icm_cli_json_int(j->bytes_deleted), &ok);
    icm_cli_json_set(line, "complete", json_boolean(complete), &ok);
    icm_cli_json_set(line, "exit_code", icm_cli_json_int(exit_code), &ok);
    icm_cli_json_set(line, "report", icm_cli_json_str(report), &ok);
    icm_cli_json_set(line, "time_ms", icm_cli_json_int(wall_ms()), &ok);
    if (!ok) {
        json_decref(line);
        line = NULL;
    }
    ok = journal_line(j, line) && journal_sync(j);
    int closed = fclose(j->f);
    j->f = NULL;
    j->fd = -1;
    if ((!ok || closed != 0) && exit_code == ICM_EXIT_OK)
        exit_code = icm_cli_error(j->path, "--log-out: the journal's summary line could not be "
                                           "written (%s); the deletes it lists happened",
                                  strerror(j->broken_errno != 0 ? j->broken_errno : errno));
    return exit_code;
}

void icm_cli_journal_close(icm_cli_journal *j)
{
    if (j->f != NULL)
        fclose(j->f);
    j->f = NULL;
    j->fd = -1;
}

/* ---- the lease ---- */

int icm_cli_lease_take(icm_cli *cli, icm_table *t, const char *command, icm_lease **out)
{
    *out = NULL;
    icm_lease_options lo = ICM_LEASE_OPTIONS_INIT;
    lo.command = command;
    int rc = icm_lease_acquire(out, t, &lo);
    return rc != 0 ? icm_cli_fail(cli, rc) : ICM_EXIT_OK;
}

void icm_cli_lease_drop(icm_lease *lease)
{
    if (lease == NULL)
        return;
    if (icm_lease_release(lease) != 0)
        icm_cli_file_line(NULL, true, icm_lease_location(lease), icm_error_last()->message,
                          " (the table lease could not be removed; it expires on its own)");
    icm_lease_free(lease);
}

/* ---- the final report ---- */

int icm_cli_report_written(int rc, size_t deleted, const char *what, const char **report)
{
    /* The command's own report code said so already when stdout failed; a stdout that was
     * closed from the start (main.c put /dev/null there) swallowed the report silently. */
    if (icm_cli_stdout_closed()) {
        *report = "failed";
        int lost = icm_cli_report_lost(deleted, what, "stdout is closed");
        return rc == ICM_EXIT_OK ? lost : rc;
    }
    *report = icm_cli_stdout_ok() ? "printed" : "failed";
    return rc;
}
