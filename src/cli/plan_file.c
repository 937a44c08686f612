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
 * either, after following symbolic links and path maps.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* "dir" and "base" of a path ("." for a bare name). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

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
    const char *base = base_of(path);
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return icm_cli_usage("--plan-out", "needs a file name, not '%s'", path);
    /* rename() cannot replace a folder: found only after the run, its files would be gone with
     * no plan. Anything else already there, a link included, is replaced only when it reads as
     * an earlier plan (a link to a folder does not; a replaced link is replaced itself). */
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return icm_cli_error(path, "cannot write the plan file: is a directory");
    if (exists && !is_earlier_plan(path)) {
        (void)icm_cli_error(path, "--plan-out: the file exists and is not an earlier plan "
                                  "(a JSON report with dry_run); remove it or name another "
                                  "file");
        return ICM_EXIT_REFUSED;
    }
    char *dir = dir_of(path);
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

/* p below dir (both absolute, no trailing slash but for "/"), at a segment boundary. */
static bool path_below(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return p[0] == '/';
    return strncmp(p, dir, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* Where a table root really is on local disk (through the path map when `mapped`, and links),
 * or NULL when it is not local (or has no path map). A root that does not exist yet is taken
 * as written. */
static char *real_root(icm_fileio *io, const char *root, bool mapped)
{
    char *target = NULL, *local = NULL;
    if (mapped && icm_fileio_pathmap_apply(io, root, &target) != 0) {
        icm_error_clear(); /* not a path map: nothing more to check */
        return NULL;
    }
    bool is_local = icm_location_local_path(target != NULL ? target : root, &local);
    icm_free(target);
    if (!is_local)
        return NULL;
    char *real = realpath(local, NULL);
    if (real == NULL)
        real = strdup(local);
    icm_free(local);
    return real;
}

int icm_cli_plan_check_table(icm_cli_plan_file *p, icm_table *t)
{
    char *dir = dir_of(p->tmp);
    char *real_dir = dir != NULL ? realpath(dir, NULL) : NULL; /* exists: the temp file is in it */
    free(dir);
    if (real_dir == NULL)
        return icm_cli_error(p->path, "cannot resolve the plan file's folder: %s",
                             strerror(errno));
    size_t n = strlen(real_dir) + strlen(base_of(p->path)) + 2;
    char *real = malloc(n);
    if (real == NULL) {
        free(real_dir);
        return icm_cli_oom();
    }
    snprintf(real, n, "%s/%s", strcmp(real_dir, "/") == 0 ? "" : real_dir, base_of(p->path));
    free(real_dir);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    const char *roots[] = {icm_table_metadata_location(md),
                           icm_table_metadata_property(md, "write.data.path"),
                           icm_table_metadata_property(md, "write.metadata.path")};
    int rc = ICM_EXIT_OK;
    /* Each root both as the path map sends it and as written: a map to a copy of the table
     * leaves the table it was copied from where its metadata says. */
    for (size_t k = 0; k < 6 && rc == ICM_EXIT_OK; k++) {
        const char *r = roots[k / 2];
        if (r == NULL || r[0] == '\0')
            continue;
        char *root = real_root(icm_table_get_fileio(t), r, k % 2 == 0);
        if (root != NULL && path_below(real, root)) {
            (void)icm_cli_error(p->path, "--plan-out is inside the table's location %s (it "
                                         "could replace one of the table's files): choose a "
                                         "file elsewhere", r);
            rc = ICM_EXIT_REFUSED;
        }
        free(root);
    }
    free(real);
    return rc;
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
