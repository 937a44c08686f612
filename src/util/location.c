/*
 * util/location.c: the guards on table-file locations, joining, and the public
 * icm_location_local_path() (see util/location.h for the rules; the parser they use is
 * util/location_id.c's).
 *
 * Comparisons never allocate and never consult the filesystem: they must give the same answer
 * for a location whether or not the file exists, and must not be fooled by symlinks or the
 * working directory. Where a rule is ambiguous the answer is "not inside", because callers use
 * these checks to refuse deleting files outside a table location.
 */
#include <stdint.h>
#include <string.h>

#include "icemaint/fileio.h"
#include "util/location.h"
#include "util/location_id.h"
#include "util/util.h"

const char *icm__location_local_part(const char *loc)
{
    return loc != NULL ? icm__location_local_part_n(loc, strlen(loc)) : NULL;
}

int icm__location_fs_path(const char *loc, char **out)
{
    *out = NULL;
    const char *local = icm__location_local_part(loc);
    if (local == NULL) {
        *out = icm__strdup(loc);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    char *s = icm__malloc(strlen(local) + 1);
    if (s == NULL)
        return ICM_ENOMEM;
    icm__path_collapse(local, s);
    *out = s;
    return 0;
}

bool icm_location_local_path(char **out, const char *location)
{
    if (out == NULL)
        return false;
    *out = NULL;
    if (icm__location_local_part(location) == NULL)
        return false;
    return icm__location_fs_path(location, out) == 0;
}

/* True when some '/'-separated segment of `s` is exactly "." or "..". */
static bool has_dot_segment(const char *s)
{
    if (s[0] != '.' && strstr(s, "/.") == NULL)
        return false; /* no segment even starts with '.': the usual case, one search */
    while (*s != '\0') {
        size_t n = strcspn(s, "/");
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return true;
        s += n;
        while (*s == '/')
            s++;
    }
    return false;
}

static const char *skip_slashes(const char *s)
{
    while (*s == '/')
        s++;
    return s;
}

/* Segment-wise prefix test of two local paths; on success *rest points into `p`. */
static bool local_strip(const char *p, const char *dir, const char **rest)
{
    if ((p[0] == '/') != (dir[0] == '/'))
        return false; /* absolute vs relative: unknown working directory, never equal */
    /* The usual case, in one comparison: `p` begins with the bytes of `dir`, up to a slash of
     * `p` or its end. Those bytes split into the same segments in both, the last one ending
     * where `dir` does, so the walk below would match them all and stop at the same place. */
    size_t dlen = strlen(dir);
    if (dlen > 0 && strncmp(p, dir, dlen) == 0 && (p[dlen] == '/' || p[dlen] == '\0')) {
        *rest = skip_slashes(p + dlen);
        return true;
    }
    for (;;) {
        p = skip_slashes(p);
        dir = skip_slashes(dir);
        if (*dir == '\0')
            break;
        size_t nd = strcspn(dir, "/");
        size_t np = strcspn(p, "/");
        if (nd != np || memcmp(dir, p, nd) != 0)
            return false;
        dir += nd;
        p += np;
    }
    *rest = p;
    return true;
}

/* Offset in the URI `loc` where `scheme://` ends, or 0 when it has no `scheme://`. */
static size_t authority_start(const char *loc)
{
    icm__location_parts p;
    if (!icm__location_split(loc, strlen(loc), &p) || p.local || !p.has_authority)
        return 0;
    return (size_t)(p.authority - loc);
}

/* Whether the `n` bytes at `s` are one of S3's schemes as writers spell them: `s3`, `s3a`, `s3n`
 * in lower case. */
static bool s3_scheme(const char *s, size_t n)
{
    return (n == 2 || (n == 3 && (s[2] == 'a' || s[2] == 'n'))) && s[0] == 's' && s[1] == '3';
}

/* Whether the schemes of two URIs (`n` and `m` bytes) are spelled alike: the same bytes, or
 * both S3's (s3_scheme): Hadoop's S3A and S3N connectors and Java's S3FileIO read one bucket
 * and key under each, and so does our S3 FileIO. Another case of the letters is not alike
 * here (the identity folds it, the guards need not). */
static bool same_scheme(const char *a, size_t n, const char *b, size_t m)
{
    return (n == m && memcmp(a, b, n) == 0) || (s3_scheme(a, n) && s3_scheme(b, m));
}

/* Prefix test of two URIs at a '/' boundary: the schemes alike (same_scheme), the rest byte by
 * byte; *rest points into `p`. */
static bool uri_strip(const char *p, const char *dir, const char **rest)
{
    size_t auth = authority_start(dir);
    if (auth == 0 || dir[auth] == '\0' || dir[auth] == '/')
        return false; /* no bucket/host: not a usable prefix */
    size_t pauth = authority_start(p);
    if (pauth == 0 || !same_scheme(p, pauth - 3, dir, auth - 3))
        return false;
    size_t n = icm__location_trim_len(dir) - auth; /* the authority and path of dir */
    p += pauth;
    if (strncmp(p, dir + auth, n) != 0)
        return false;
    if (p[n] == '\0')
        *rest = p + n;
    else if (p[n] == '/')
        *rest = p + n + 1;
    else
        return false; /* `s3://b/t_2` is not below `s3://b/t` */
    return true;
}

bool icm__location_strip_prefix(const char *p, const char *dir, const char **rest)
{
    if (p == NULL || dir == NULL)
        return false;
    const char *lp = icm__location_local_part(p);
    const char *ld = icm__location_local_part(dir);
    const char *r = NULL;
    bool ok;
    if (lp != NULL && ld != NULL)
        ok = local_strip(lp, ld, &r);
    else if (lp == NULL && ld == NULL)
        ok = uri_strip(p, dir, &r);
    else
        ok = false; /* a local path is never below a URI or the reverse */
    if (!ok || has_dot_segment(r))
        return false;
    if (rest != NULL)
        *rest = r;
    return true;
}

bool icm__location_is_inside(const char *p, const char *dir)
{
    const char *rest;
    return icm__location_strip_prefix(p, dir, &rest) && rest[0] != '\0';
}

bool icm__location_is_absolute(const char *loc)
{
    if (loc == NULL || loc[0] == '\0')
        return false;
    const char *local = icm__location_local_part(loc);
    return local == NULL || local[0] == '/';
}

bool icm__location_recordable(const char *loc, const char *table_location)
{
    if (icm__location_is_absolute(loc))
        return true;
    return table_location != NULL && !icm__location_is_absolute(table_location) &&
           icm__location_strip_prefix(loc, table_location, NULL);
}

bool icm__location_equal(const char *a, const char *b)
{
    const char *rest;
    return icm__location_strip_prefix(a, b, &rest) && rest[0] == '\0';
}

size_t icm__location_trim_len(const char *loc)
{
    size_t n = strlen(loc);
    size_t keep;
    const char *local = icm__location_local_part(loc);
    if (local != NULL) {
        keep = (size_t)(local - loc);
        if (local[0] == '/')
            keep++; /* the root slash */
    } else {
        icm__location_parts p;
        icm__location_split(loc, n, &p);
        keep = p.has_authority ? (size_t)(p.authority - loc) : p.scheme_len + 1;
    }
    while (n > keep && loc[n - 1] == '/')
        n--;
    return n;
}

char *icm__location_join(const char *base, const char *rel)
{
    if (base[0] == '\0')
        return icm__strdup(rel);
    size_t n = icm__location_trim_len(base);
    if (rel[0] == '\0')
        return icm__strndup(base, n);
    bool need_sep = base[n - 1] != '/';
    size_t rlen = strlen(rel);
    size_t total;
    if (icm__add_overflow(n, rlen, &total) || icm__add_overflow(total, 2, &total)) {
        icm__error_oom();
        return NULL;
    }
    char *s = icm__malloc(total);
    if (s == NULL)
        return NULL;
    memcpy(s, base, n);
    size_t off = n;
    if (need_sep)
        s[off++] = '/';
    memcpy(s + off, rel, rlen + 1);
    return s;
}

char *icm__location_checksum_name(const char *loc, bool *oom)
{
    *oom = false;
    const char *slash = strrchr(loc, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - loc) + 1 : 0;
    const char *name = loc + dir_len;
    if (name[0] == '\0' || name[0] == '.')
        return NULL;
    /* "<dir>/.<name>.crc", printf-free: asked once per orphan */
    size_t name_len = strlen(name);
    char *crc = icm__malloc(dir_len + name_len + sizeof "..crc");
    *oom = crc == NULL;
    if (crc == NULL)
        return NULL;
    memcpy(crc, loc, dir_len);
    crc[dir_len] = '.';
    memcpy(crc + dir_len + 1, name, name_len);
    memcpy(crc + dir_len + 1 + name_len, ".crc", sizeof ".crc");
    return crc;
}

size_t icm__location_root_end(const char *loc)
{
    const char *local = icm__location_local_part(loc);
    const char *auth = local == NULL ? strstr(loc, "://") : NULL;
    const char *root_slash = local != NULL  ? local
                             : auth != NULL ? strchr(auth + 3, '/')
                                            : NULL;
    return root_slash != NULL ? (size_t)(root_slash - loc) : strlen(loc);
}
