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
