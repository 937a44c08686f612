/*
 * util/location.c: classify, normalise, compare and join table-file locations (see
 * util/location.h for the rules), and the public icm_location_local_path().
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
#include "util/util.h"

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* ASCII case-insensitive comparison of exactly n bytes of a with the lower-case literal b. */
static bool ascii_ieq(const char *a, size_t n, const char *lower)
{
    if (strlen(lower) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (ascii_lower(a[i]) != lower[i])
            return false;
    return true;
}

/* Length of the RFC 3986 scheme of the `len` bytes at `loc` (without the ':'), or 0 when they
 * have none; a C string may pass SIZE_MAX (its NUL ends the scan). A colon after the first '/'
 * belongs to a path (`data/a:b`), not to a scheme. */
static size_t scheme_len_n(const char *loc, size_t len)
{
    if (len == 0 || !is_alpha(loc[0]))
        return 0;
    size_t i = 1;
    while (i < len && (is_alpha(loc[i]) || is_digit(loc[i]) || loc[i] == '+' ||
                       loc[i] == '-' || loc[i] == '.'))
        i++;
    return i < len && loc[i] == ':' ? i : 0;
}

/* icm__location_local_part of the `len` bytes at `loc` (no NUL among them, and none needed
 * after: nothing past them is read), also for locations that are not C strings. */
static const char *local_part_n(const char *loc, size_t len)
{
    if (len == 0)
        return NULL;
    size_t slen = scheme_len_n(loc, len);
    if (slen == 0)
        return loc; /* `/p`, `//p` or a relative path */
    if (!ascii_ieq(loc, slen, "file"))
        return NULL;
    const char *rest = loc + slen + 1;
    size_t rlen = len - slen - 1;
    if (rlen < 2 || rest[0] != '/' || rest[1] != '/') /* `file:/p` or `file:rel` */
        return rlen > 0 ? rest : NULL;
    /* `file://authority/path`: only an empty authority or localhost is this machine. */
    const char *auth = rest + 2;
    const char *path = memchr(auth, '/', rlen - 2);
    if (path == NULL)
        return NULL;
    size_t alen = (size_t)(path - auth);
    if (alen != 0 && !ascii_ieq(auth, alen, "localhost"))
        return NULL;
    return path;
}

const char *icm__location_local_part(const char *loc)
{
    return loc != NULL ? local_part_n(loc, strlen(loc)) : NULL;
}

/* Collapse repeated slashes and drop a trailing slash (keeping a lone "/"). Most paths have
 * no repeated slash: those are copied whole (this runs once per manifest entry in keep sets). */
size_t icm__path_collapse(const char *in, char *out)
{
    size_t n = 0;
    if (strstr(in, "//") == NULL) {
        n = strlen(in);
        memcpy(out, in, n);
    } else {
        for (const char *s = in; *s != '\0'; s++) {
            if (*s == '/' && n > 0 && out[n - 1] == '/')
                continue;
            out[n++] = *s;
        }
    }
    if (n > 1 && out[n - 1] == '/')
        n--;
    out[n] = '\0';
    return n;
}

int icm__location_normalize(const char *loc, char **out)
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

bool icm_location_local_path(const char *location, char **out)
{
    if (out == NULL)
        return false;
    *out = NULL;
    if (icm__location_local_part(location) == NULL)
        return false;
    return icm__location_normalize(location, out) == 0;
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

/* Offset in `loc` where `scheme://` ends, or 0 when `loc` has no `scheme://`. */
static size_t authority_start(const char *loc)
{
    size_t slen = scheme_len_n(loc, SIZE_MAX);
    if (slen == 0 || loc[slen + 1] != '/' || loc[slen + 2] != '/')
        return 0;
    return slen + 3;
}

/* Byte-wise prefix test of two URIs at a '/' boundary; *rest points into `p`. */
static bool uri_strip(const char *p, const char *dir, const char **rest)
{
    size_t auth = authority_start(dir);
    if (auth == 0 || dir[auth] == '\0' || dir[auth] == '/')
        return false; /* no bucket/host: not a usable prefix */
    size_t n = icm__location_trim_len(dir);
    if (strncmp(p, dir, n) != 0)
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
        keep = authority_start(loc);
        if (keep == 0) {
            size_t slen = scheme_len_n(loc, SIZE_MAX);
            keep = slen > 0 ? slen + 1 : 0;
        }
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

size_t icm__path_resolve_dots(char *path)
{
    /* Segments are copied left to right into the same buffer. A separator is written before a
     * segment, never after, so the write cursor never passes the read cursor. */
    bool absolute = path[0] == '/';
    char *base = path + (absolute ? 1 : 0);
    char *w = base;     /* end of the output */
    char *floor = base; /* ".." segments kept at the start of a relative path end here */
    const char *r = base;
    while (*r != '\0') {
        while (*r == '/')
            r++;
        if (*r == '\0')
            break;
        size_t n = strcspn(r, "/");
        const char *seg = r;
        r += n;
        if (n == 1 && seg[0] == '.')
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            if (w > floor) {
                char *p = w;
                while (p > floor && p[-1] != '/')
                    p--;
                w = p > floor ? p - 1 : floor; /* drop the segment and the '/' before it */
                continue;
            }
            if (absolute)
                continue; /* "/.." is "/" */
        }
        if (w > base)
            *w++ = '/';
        memmove(w, seg, n);
        w += n;
        if (n == 2 && seg[0] == '.' && seg[1] == '.')
            floor = w; /* a kept ".." (relative path) is never removed by a later ".." */
    }
    *w = '\0';
    return (size_t)(w - path);
}

size_t icm__path_resolve_dots_if_any(char *path, size_t len)
{
    /* Most paths have no segment starting with '.': one search instead of a segment walk. */
    if (path[0] == '.' || strstr(path, "/.") != NULL)
        return icm__path_resolve_dots(path);
    return len;
}

size_t icm__location_key_write(const char *loc, char *out)
{
    const char *local = icm__location_local_part(loc);
    if (local == NULL) { /* object-store keys stay exact bytes */
        size_t n = strlen(loc);
        memcpy(out, loc, n + 1);
        return n;
    }
    size_t n = icm__path_collapse(local, out);
    return icm__path_resolve_dots_if_any(out, n); /* only a file system resolves dot segments */
}

bool icm__location_key_span(const char *loc, const char **key, size_t *key_len)
{
    size_t len = strlen(loc);
    const char *local = local_part_n(loc, len);
    if (local == NULL) { /* an object-store key is the location's bytes */
        *key = loc;
        *key_len = len;
        return true;
    }
    /* A local key is the local part when collapsing and resolving change nothing: no slash
     * followed by a slash or a dot, no leading dot, no trailing slash (but a lone "/"). */
    size_t n = len - (size_t)(local - loc);
    if (n == 0 || local[0] == '.' || (n > 1 && local[n - 1] == '/'))
        return false;
    const char *end = local + n;
    for (const char *p = memchr(local, '/', n); p != NULL && p + 1 < end;
         p = memchr(p + 1, '/', (size_t)(end - p - 1)))
        if (p[1] == '/' || p[1] == '.')
            return false;
    *key = local;
    *key_len = n;
    return true;
}

bool icm__location_key_tail(const char *loc, size_t len, const char **tail, size_t *tail_len)
{
    /* The key is built from the C string: it ends at a NUL byte. */
    return icm__location_key_tail_checked(loc, strnlen(loc, len), tail, tail_len);
}

bool icm__location_key_tail_checked(const char *loc, size_t len, const char **tail,
                                    size_t *tail_len)
{
    const char *slash = memrchr(loc, '/', len);
    if (slash == NULL)
        return false;
    const char *t = slash + 1;
    size_t n = len - (size_t)(t - loc);
    if (n == 0 || (t[0] == '.' && (n == 1 || (n == 2 && t[1] == '.'))))
        return false; /* a trailing slash, "." or "..": the key's last segment is another one */
    /* An object-store key is the location itself. A local key is the local part with slashes
     * collapsed and dot segments resolved: its last segment is the local part's when that is
     * an ordinary segment after a slash of the local part (collapsing keeps every non-empty
     * segment, and resolving removes a segment only for a "." or a later ".."). */
    /* (a location that does not begin with a letter has no scheme: it is its local part) */
    const char *local = is_alpha(loc[0]) ? local_part_n(loc, len) : loc;
    if (local != NULL && slash < local)
        return false; /* (no such spelling is known; never guess) */
    *tail = t;
    *tail_len = n;
    return true;
}

int icm__location_key(const char *loc, char **out)
{
    *out = icm__malloc(strlen(loc) + 1);
    if (*out == NULL)
        return ICM_ENOMEM;
    icm__location_key_write(loc, *out);
    return 0;
}

char *icm__location_checksum_name(const char *loc, bool *oom)
{
    *oom = false;
    const char *slash = strrchr(loc, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - loc) + 1 : 0;
    const char *name = loc + dir_len;
    if (name[0] == '\0' || name[0] == '.')
        return NULL;
    char *crc = icm__sprintf("%.*s.%s.crc", (int)dir_len, loc, name);
    *oom = crc == NULL;
    return crc;
}
