/*
 * util/mounts.c: file identity and the mount table (mounts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/location.h"
#include "util/mounts.h"
#include "util/util.h"

bool icm__file_id_of(const char *path, bool follow, icm__file_id *out)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0)
        return false;
    out->dev = (uint64_t)st.st_dev;
    out->ino = (uint64_t)st.st_ino;
    return true;
}

bool icm__identity_above(const char *real, const char *above, const char **rest)
{
    icm__file_id target, id;
    if (!icm__file_id_of(above, true, &target))
        return false;
    size_t len = strlen(real);
    char *path = icm__strdup(real);
    bool found = false;
    while (path != NULL && !found) {
        path[len] = '\0';
        found = icm__file_id_of(path, true, &id) && id.dev == target.dev && id.ino == target.ino;
        if (found || len <= 1)
            break;
        while (len > 1 && path[len - 1] != '/')
            len--;
        if (len > 1)
            len--; /* the '/' ending the folder above, kept for "/" */
    }
    icm__free(path);
    if (found && rest != NULL) {
        const char *r = real + len;
        while (*r == '/')
            r++;
        *rest = r;
    }
    return found;
}

bool icm__local_nested(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    bool nested = ra != NULL && rb != NULL &&
                  (icm__location_strip_prefix(ra, rb, NULL) ||
                   icm__location_strip_prefix(rb, ra, NULL) || icm__identity_above(ra, rb, NULL) ||
                   icm__identity_above(rb, ra, NULL));
    free(ra);
    free(rb);
    return nested;
}

/* ---- the mount table ---- */

/* The next space-separated field of *s (decoded in place: mountinfo writes a space, tab,
 * newline and backslash of a path as \040, \011, \012, \134), or NULL. */
static char *next_field(char **s)
{
    char *p = *s;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return NULL;
    char *start = p, *w = p;
    while (*p != '\0' && *p != ' ') {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 4;
        } else {
            *w++ = *p++;
        }
    }
    if (*p == ' ')
        p++;
    *w = '\0';
    *s = p;
    return start;
}

/* One line: "ID PARENT MAJOR:MINOR ROOT POINT OPTIONS ... - TYPE SOURCE OPTIONS". */
static int parse_line(icm__mounts *ms, char *line, const char *file, size_t number)
{
    char *s = line, *f[5];
    for (size_t i = 0; i < 5; i++)
        f[i] = next_field(&s);
    unsigned major, minor;
    char end;
    if (f[4] == NULL || f[4][0] != '/' || sscanf(f[2], "%u:%u%c", &major, &minor, &end) != 2)
        return icm__error_set(ICM_ERRCLASS_OS, ICM_EINVALID, file,
                              "line %zu is not a mount (ID PARENT MAJOR:MINOR ROOT POINT ...)",
                              number);
    icm__mount *grown = icm__reallocarray(ms->m, ms->n + 1, sizeof *grown);
    if (grown == NULL)
        return icm__error_oom();
    ms->m = grown;
    if ((ms->m[ms->n].point = icm__strdup(f[4])) == NULL)
        return icm__error_oom();
    if ((ms->m[ms->n].root = icm__strdup(f[3])) == NULL) {
        icm__free(ms->m[ms->n].point);
        return icm__error_oom();
    }
    ms->m[ms->n].major = major;
    ms->m[ms->n].minor = minor;
    ms->n++;
    return 0;
}

int icm__mounts_read(icm__mounts *ms, const char *file)
{
    if (file == NULL)
        file = ICM__MOUNTINFO;
    ms->m = NULL;
    ms->n = 0;
    FILE *in = fopen(file, "re");
    if (in == NULL)
        return icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, file,
                                    "cannot read the mount table");
    char *line = NULL;
    size_t cap = 0, number = 0;
    ssize_t len;
    int rc = 0;
    errno = 0;
    while (rc == 0 && (len = getline(&line, &cap, in)) >= 0) {
        number++;
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        if (line[0] != '\0')
            rc = parse_line(ms, line, file, number);
    }
    if (rc == 0 && ferror(in))
        rc = icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, file,
                                  "cannot read the mount table");
    free(line);
    fclose(in);
    if (rc == 0 && ms->n == 0)
        rc = icm__error_set(ICM_ERRCLASS_OS, ICM_EIO, file, "the mount table is empty");
    if (rc != 0)
        icm__mounts_dispose(ms);
    return rc;
}

void icm__mounts_dispose(icm__mounts *ms)
{
    for (size_t i = 0; i < ms->n; i++) {
        icm__free(ms->m[i].point);
        icm__free(ms->m[i].root);
    }
    icm__free(ms->m);
    ms->m = NULL;
    ms->n = 0;
}

/* Whether the absolute path `path` is `dir` or lies below it (both without dot segments or
 * repeated slashes: realpath's and the mount table's forms). */
static bool path_at_or_below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

size_t icm__mounts_holding(const icm__mounts *ms, const char *real)
{
    size_t best = SIZE_MAX, best_len = 0;
    for (size_t i = 0; i < ms->n; i++) {
        size_t len = strlen(ms->m[i].point);
        if (path_at_or_below(real, ms->m[i].point) && (best == SIZE_MAX || len >= best_len)) {
            best = i;
            best_len = len;
        }
    }
    return best;
}

bool icm__mounts_device_shared(const icm__mounts *ms, size_t i)
{
    for (size_t j = 0; j < ms->n; j++)
        if (j != i && ms->m[j].major == ms->m[i].major && ms->m[j].minor == ms->m[i].minor)
            return true;
    return false;
}

bool icm__mounts_same_device(const icm__mounts *ms, size_t i, size_t j)
{
    return ms->m[i].major == ms->m[j].major && ms->m[i].minor == ms->m[j].minor;
}

/* The part of the absolute path `path` below `dir` ("" for `dir` itself; no leading '/'), or
 * NULL when `path` is not at or below `dir` (path_at_or_below's forms). */
static const char *part_below(const char *path, const char *dir)
{
    if (!path_at_or_below(path, dir))
        return NULL;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    const char *rest = path + (n == 1 && dir[0] == '/' ? 0 : n);
    while (*rest == '/')
        rest++;
    return rest;
}

/* `dir` joined with the relative `rest` (none: `dir`), one '/' between. */
static int join_below(char **out, const char *dir, const char *rest)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    bool root = n == 1 && dir[0] == '/';
    *out = rest[0] == '\0' ? icm__strndup(dir, n)
                           : icm__sprintf("%.*s%s%s", (int)n, dir, root ? "" : "/", rest);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

int icm__mounts_fs_path(char **out, const icm__mounts *ms, size_t i, const char *real)
{
    *out = NULL;
    const char *rest = part_below(real, ms->m[i].point);
    if (rest == NULL || ms->m[i].root[0] != '/')
        return 0;
    return join_below(out, ms->m[i].root, rest);
}

int icm__mounts_spelling(char **out, const icm__mounts *ms, size_t j, const char *fs_path)
{
    *out = NULL;
    const char *rest = ms->m[j].root[0] == '/' ? part_below(fs_path, ms->m[j].root) : NULL;
    return rest != NULL ? join_below(out, ms->m[j].point, rest) : 0;
}
