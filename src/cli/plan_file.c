/*
 * cli/plan_file.c: --plan-out FILE for expire-snapshots and remove-orphan-files.
 *
 * The plan file must never cost the user a file. It is opened before the command does anything
 * (so a path that cannot be written stops the command first) as a new hidden temporary file
 * beside FILE; FILE itself is only replaced, by rename, once the report is written. A failed or
 * refused run removes the temporary file and leaves an existing FILE as it was. FILE may not
 * lie inside the table's location, `write.data.path` or `write.metadata.path` (where it could
 * overwrite one of the table's own files), after following symbolic links and path maps.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int icm_cli_plan_open(icm_cli_plan_file *p, const char *path)
{
    memset(p, 0, sizeof *p);
    const char *base = base_of(path);
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return icm_cli_usage("--plan-out", "needs a file name, not '%s'", path);
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

/* Where a table root really is on local disk (through the path map and links), or NULL when
 * it is not local. A root that does not exist yet is taken as written. */
static char *real_root(icm_fileio *io, const char *root)
{
    char *mapped = NULL, *local = NULL;
    if (icm_fileio_pathmap_apply(io, root, &mapped) != 0) {
        icm_error_clear(); /* not a path map: the root as it is */
        mapped = NULL;
    }
    bool is_local = icm_location_local_path(mapped != NULL ? mapped : root, &local);
    icm_free(mapped);
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
    for (size_t i = 0; i < 3 && rc == ICM_EXIT_OK; i++) {
        if (roots[i] == NULL || roots[i][0] == '\0')
            continue;
        char *root = real_root(icm_table_get_fileio(t), roots[i]);
        if (root != NULL && path_below(real, root)) {
            (void)icm_cli_error(p->path, "--plan-out is inside the table's location %s (it "
                                         "could replace one of the table's files): choose a "
                                         "file elsewhere", roots[i]);
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
    if (json_dumpf(doc, p->f, JSON_INDENT(2)) != 0 || fputc('\n', p->f) == EOF ||
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
