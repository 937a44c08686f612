/*
 * cli/out_file.c: the rule for the files the maintenance commands write besides stdout
 * (`--plan-out FILE`, cli/plan_file.c, and the `--log-out FILE` journal, cli/deletes.c). Such a
 * file must never cost the user a file (issue #16 round 8: a journal appended to the table's
 * current metadata file, or to a live Parquet file, broke the table):
 *
 *  - an existing FILE is written only when it is an earlier output of the same option (the
 *    caller's test: an earlier plan, an earlier journal); a folder is an error (exit 1), any
 *    other file (a link to a folder too) a refusal (exit 5): a catalog database, another
 *    table's file, a data file;
 *  - FILE may not lie inside the table's location, `write.data.path` or
 *    `write.metadata.path`, after following symbolic links and path maps (exit 5).
 * The same rules hold for `--metrics FILE` (maintain, health: the metrics helpers below), whose
 * earlier output is recognised by its first line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

char *icm_cli_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

const char *icm_cli_base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

int icm_cli_out_file_check_existing(const char *option, const char *path,
                                    bool (*is_earlier)(const char *path), const char *earlier)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return ICM_EXIT_OK; /* new: nothing to lose */
    if (S_ISDIR(st.st_mode))
        return icm_cli_error(path, "cannot write the %s file: is a directory", option);
    if (is_earlier(path))
        return ICM_EXIT_OK;
    (void)icm_cli_error(path, "%s: the file exists and is not %s; remove it or name another "
                              "file",
                        option, earlier);
    return ICM_EXIT_REFUSED;
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
    if (mapped && icm_fileio_pathmap_apply(&target, io, root) != 0) {
        icm_error_clear(); /* not a path map: nothing more to check */
        return NULL;
    }
    bool is_local = icm_location_local_path(&local, target != NULL ? target : root);
    icm_free(target);
    if (!is_local)
        return NULL;
    char *real = realpath(local, NULL);
    if (real == NULL)
        real = strdup(local);
    icm_free(local);
    return real;
}

/* Where `path` really is: its folder resolved, plus its name; with `follow`, the file itself
 * resolved when it exists (a journal is appended through a link). NULL with errno set. */
static char *real_out_path(const char *path, bool follow)
{
    char *real = follow ? realpath(path, NULL) : NULL;
    if (real != NULL)
        return real;
    char *dir = icm_cli_dir_of(path);
    char *real_dir = dir != NULL ? realpath(dir, NULL) : NULL;
    free(dir);
    if (real_dir == NULL)
        return NULL;
    size_t n = strlen(real_dir) + strlen(icm_cli_base_of(path)) + 2;
    real = malloc(n);
    if (real != NULL)
        snprintf(real, n, "%s/%s", strcmp(real_dir, "/") == 0 ? "" : real_dir,
                 icm_cli_base_of(path));
    free(real_dir);
    return real;
}

int icm_cli_out_file_check_table(const char *option, const char *path, bool follow,
                                 icm_table *t)
{
    char *real = real_out_path(path, follow);
    if (real == NULL)
        return errno == ENOMEM ? icm_cli_oom()
                               : icm_cli_error(path, "%s: cannot resolve the file's folder: %s",
                                               option, strerror(errno));
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
            (void)icm_cli_error(path, "%s is inside the table's location %s (it could replace "
                                      "one of the table's files, or write into it): choose a "
                                      "file elsewhere",
                                option, r);
            rc = ICM_EXIT_REFUSED;
        }
        free(root);
    }
    free(real);
    return rc;
}

/* ---- --metrics FILE ---- */

/* The first line of every metrics file icemaint writes: the HELP line of its first family
 * (icemaint_maintain_*, icemaint_health_*). No catalog database, metadata or data file begins
 * so, and the format has no other place for a mark its parsers all accept. */
#define METRICS_FIRST_LINE "# HELP icemaint_"

static bool is_earlier_metrics(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char line[64] = "";
    bool ok = fgets(line, sizeof line, f) != NULL &&
              strncmp(line, METRICS_FIRST_LINE, sizeof METRICS_FIRST_LINE - 1) == 0;
    fclose(f);
    return ok;
}

int icm_cli_metrics_check_existing(const char *path)
{
    return icm_cli_out_file_check_existing("--metrics", path, is_earlier_metrics,
                                           "an earlier icemaint metrics file");
}

FILE *icm_cli_metrics_create(const char *path, char **tmp, int *rc)
{
    size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
    *tmp = malloc(n);
    if (*tmp == NULL) {
        *rc = icm_cli_oom();
        return NULL;
    }
    snprintf(*tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(*tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        *rc = icm_cli_error(path, "--metrics: cannot create a file beside it (%s)",
                            strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
        }
        free(*tmp);
        *tmp = NULL;
        return NULL;
    }
    /* mkstemp makes it 0600; the collector (another user) reads it as a file fopen made:
     * 0666 less the umask */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    return f;
}

int icm_cli_metrics_publish(FILE *f, char *tmp, const char *path)
{
    bool written = fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0;
    written = fclose(f) == 0 && written;
    int rc = written ? ICM_EXIT_OK
                     : icm_cli_error(path, "--metrics: cannot write (%s)", strerror(errno));
    if (rc == ICM_EXIT_OK) /* it may have become something else while the tables ran */
        rc = icm_cli_metrics_check_existing(path);
    if (rc == ICM_EXIT_OK && rename(tmp, path) != 0)
        rc = icm_cli_error(path, "--metrics: cannot write (%s)", strerror(errno));
    if (rc != ICM_EXIT_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}
