/*
 * util/location_abs.c: icm_location_canonical(), the one place a location a user typed becomes
 * the absolute, canonical form icemaint reads, writes and records (issue #16, class 1: a
 * table named by a relative or otherwise-spelled path was planned against the wrong roots).
 *
 * Unlike util/location.c, this file consults the process: the working directory (a relative
 * path is relative to it) and, for `..` segments only, the filesystem (`a/../t` is where the
 * kernel goes, which is not `t` when `a` is a symbolic link). It runs once per table open,
 * never on a planning hot path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icemaint/fileio.h"
#include "util/location.h"
#include "util/util.h"

/* True when a '/'-separated segment of `path` is ".." (or, with `single` too, "."). */
static bool has_dot_segment(const char *path, bool single)
{
    for (const char *s = path; *s != '\0';) {
        size_t n = strcspn(s, "/");
        if ((single && n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return true;
        s += n;
        while (*s == '/')
            s++;
    }
    return false;
}

/* `path` joined below the working directory (new string); an absolute path is copied. */
static int absolute_of(const char *path, const char *shown, char **out)
{
    *out = NULL;
    if (path[0] == '/') {
        *out = icm__strdup(path);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    char *cwd = getcwd(NULL, 0); /* libc's allocation: copied below */
    if (cwd == NULL)
        return icm__error_set_errno(ICM_ERRCLASS_OS, icm__errno_to_code(errno), errno, shown,
                                    "cannot make this relative location absolute: the working "
                                    "directory is unknown");
    *out = icm__sprintf("%s/%s", cwd, path);
    free(cwd);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

/*
 * Resolve the `..` segments of the absolute `path` as the kernel does: the part up to and
 * including the last `..` is replaced by its realpath() (it must exist), the rest is kept as
 * spelled. A path without `..` is left alone (no filesystem access).
 */
static int resolve_dotdot(char **path, const char *shown)
{
    if (!has_dot_segment(*path, false))
        return 0;
    char *p = *path;
    size_t cut = 0; /* end of the last ".." segment */
    for (size_t i = 0; p[i] != '\0';) {
        size_t n = strcspn(p + i, "/");
        if (n == 2 && p[i] == '.' && p[i + 1] == '.')
            cut = i + 2;
        i += n;
        while (p[i] == '/')
            i++;
    }
    char *head = icm__strndup(p, cut);
    if (head == NULL)
        return ICM_ENOMEM;
    char *real = realpath(head, NULL); /* libc's allocation */
    int err = errno;
    icm__free(head);
    if (real == NULL)
        return icm__error_set_errno(ICM_ERRCLASS_OS, icm__errno_to_code(err), err, shown,
                                    "cannot resolve the '..' in this location (the folder "
                                    "before it must exist)");
    char *joined = icm__sprintf("%s%s", real, p + cut);
    free(real);
    if (joined == NULL)
        return ICM_ENOMEM;
    icm__free(p);
    *path = joined;
    return 0;
}

int icm_location_canonical(char **out, const char *location)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "NULL output");
    *out = NULL;
    if (location == NULL || location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "empty location");
    const char *local = icm__location_local_part(location);
    if (local == NULL) { /* an object-store URI: its bytes are its identity */
        *out = icm__strdup(location);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    char *path = NULL;
    int rc = absolute_of(local, location, &path);
    if (rc == 0)
        rc = resolve_dotdot(&path, location);
    if (rc != 0) {
        icm__free(path);
        return rc;
    }
    char *canon = icm__malloc(strlen(path) + 1);
    if (canon != NULL) {
        size_t n = icm__path_collapse(path, canon);
        icm__path_resolve_dots_if_any(canon, n); /* only "." segments are left */
    }
    icm__free(path);
    *out = canon;
    return canon != NULL ? 0 : ICM_ENOMEM;
}

int icm__location_canonical_keep_form(const char *location, char **out)
{
    *out = NULL;
    const char *local = icm__location_local_part(location);
    bool plain = local == NULL || (local[0] == '/' && !has_dot_segment(local, true));
    if (plain) {
        *out = icm__strdup(location);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    return icm_location_canonical(out, location);
}
