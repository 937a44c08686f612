/*
 * util/location_id.c: the one location identity (rule and its sources in util/location_id.h):
 * the location parser every comparison uses, the identity key, its zero-copy span, equality and
 * containment on keys, and the path normalisations the local rule is made of.
 *
 * The keep sets key every manifest entry and every listed file through icm__location_id_span
 * (or _write when the key is not a run of the location's bytes), so the usual spellings
 * (`s3://b/t/f`, `/t/d/f`) cost one scan of the scheme and, for local paths, one scan for
 * "/." and "//". Nothing here consults the file system or the working directory: the answer
 * must be the same whether or not the file exists.
 */
#include <stdint.h>
#include <string.h>

#include "icemaint/fileio.h"
#include "util/location_id.h"
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
 * have none. A colon after the first '/' belongs to a path (`data/a:b`), not to a scheme. */
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

/* The parser's first step, alone because it is the hot one: the file system path of the `len`
 * bytes at `loc` when they are a local location (pointer into loc), else NULL; *slen is the
 * scheme's length (0: none). */
static inline const char *local_of(const char *loc, size_t len, size_t *slen)
{
    *slen = scheme_len_n(loc, len);
    if (*slen == 0)
        return len > 0 ? loc : NULL; /* `/p`, `//p` or a relative path */
    if (!ascii_ieq(loc, *slen, "file"))
        return NULL;
    const char *rest = loc + *slen + 1;
    size_t rlen = len - *slen - 1;
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

bool icm__location_split(const char *loc, size_t len, icm__location_parts *out)
{
    *out = (icm__location_parts){"file", 4, "", 0, false, loc, len, true};
    if (len == 0)
        return false;
    size_t slen;
    const char *local = local_of(loc, len, &slen);
    if (local != NULL) {
        out->path = local;
        out->path_len = len - (size_t)(local - loc);
        return true;
    }
    /* `scheme:rest`, `scheme://authority/path` (also `file://host/p`, another machine's) */
    const char *rest = loc + slen + 1;
    size_t rlen = len - slen - 1;
    bool slashes = rlen >= 2 && rest[0] == '/' && rest[1] == '/';
    out->local = false;
    out->scheme = loc;
    out->scheme_len = slen;
    out->has_authority = slashes;
    if (slashes) {
        const char *auth = rest + 2;
        const char *path = memchr(auth, '/', rlen - 2);
        out->authority = auth;
        out->authority_len = path != NULL ? (size_t)(path - auth) : rlen - 2;
        out->path = auth + out->authority_len;
    } else {
        out->path = rest;
    }
    out->path_len = len - (size_t)(out->path - loc);
    return true;
}

const char *icm__location_local_part_n(const char *loc, size_t len)
{
    size_t slen;
    return loc != NULL ? local_of(loc, len, &slen) : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* path normalisation (the local rule)                                                         */

size_t icm__path_collapse_n(const char *in, size_t len, char *out)
{
    /* Most paths have no repeated slash: those are copied whole (this runs once per manifest
     * entry in keep sets), after one strstr (`in` ends at its NUL; glibc's strstr is
     * vectorised, its memmem is not). */
    size_t n = 0;
    if (strstr(in, "//") == NULL) {
        n = len;
        memcpy(out, in, n);
    } else {
        for (size_t i = 0; i < len; i++) {
            if (in[i] == '/' && n > 0 && out[n - 1] == '/')
                continue;
            out[n++] = in[i];
        }
    }
    if (n > 1 && out[n - 1] == '/')
        n--;
    out[n] = '\0';
    return n;
}

size_t icm__path_collapse(const char *in, char *out)
{
    return icm__path_collapse_n(in, strlen(in), out);
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

/* ------------------------------------------------------------------------------------------ */
/* keys                                                                                        */

bool icm__location_scheme_is_s3(const char *s, size_t n)
{
    return (n == 2 || (n == 3 && (ascii_lower(s[2]) == 'a' || ascii_lower(s[2]) == 'n'))) &&
           ascii_lower(s[0]) == 's' && s[1] == '3';
}

/* Whether the scheme of an object-store location is written in its key as it is spelled:
 * lower case, and not an alias the flags fold. */
static bool scheme_is_canonical(const char *s, size_t n, unsigned flags)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            return false;
    return !((flags & ICM__LOCATION_ID_S3_ALIASES) && n == 3 && icm__location_scheme_is_s3(s, n));
}

size_t icm__location_id_path_write(const icm__location_parts *p, unsigned flags, char *out)
{
    if (p->local) {
        size_t n = icm__path_collapse_n(p->path, p->path_len, out);
        return icm__path_resolve_dots_if_any(out, n); /* only a file system resolves dots */
    }
    if (flags & ICM__LOCATION_ID_HADOOP_SLASHES)
        return icm__path_collapse_n(p->path, p->path_len, out);
    memcpy(out, p->path, p->path_len); /* object-store keys stay exact bytes */
    out[p->path_len] = '\0';
    return p->path_len;
}

size_t icm__location_id_write(const char *loc, unsigned flags, char *out)
{
    icm__location_parts p;
    icm__location_split(loc, strlen(loc), &p);
    if (p.local)
        return icm__location_id_path_write(&p, flags, out);
    const char *s = p.scheme;
    size_t n = 0;
    if ((flags & ICM__LOCATION_ID_S3_ALIASES) && icm__location_scheme_is_s3(s, p.scheme_len)) {
        out[n++] = 's';
        out[n++] = '3';
    } else {
        for (size_t i = 0; i < p.scheme_len; i++)
            out[n++] = ascii_lower(s[i]);
    }
    out[n++] = ':';
    if (p.has_authority) {
        out[n++] = '/';
        out[n++] = '/';
        memcpy(out + n, p.authority, p.authority_len);
        n += p.authority_len;
    }
    return n + icm__location_id_path_write(&p, flags, out + n);
}

bool icm__location_id_span(const char *loc, unsigned flags, const char **key, size_t *key_len)
{
    size_t len = strlen(loc);
    size_t slen;
    const char *local = local_of(loc, len, &slen);
    if (local == NULL) { /* an object-store location (or "", whose key is "") */
        if (!scheme_is_canonical(loc, slen, flags))
            return false;
        if (flags & ICM__LOCATION_ID_HADOOP_SLASHES) {
            icm__location_parts p;
            icm__location_split(loc, len, &p);
            if ((p.path_len > 1 && p.path[p.path_len - 1] == '/') || strstr(p.path, "//") != NULL)
                return false;
        }
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
    for (const char *s = memchr(local, '/', n); s != NULL && s + 1 < end;
         s = memchr(s + 1, '/', (size_t)(end - s - 1)))
        if (s[1] == '/' || s[1] == '.')
            return false;
    *key = local;
    *key_len = n;
    return true;
}

/* The key of `loc` under `flags`: its span, or written into `stack` (cap bytes) or a new
 * buffer (*heap, to free). Returns false on allocation failure. */
static bool key_of(const char *loc, unsigned flags, char *stack, size_t cap, char **heap,
                   const char **key, size_t *n)
{
    *heap = NULL;
    if (icm__location_id_span(loc, flags, key, n))
        return true;
    size_t len = strlen(loc);
    char *buf = len < cap ? stack : (*heap = icm__malloc(len + 1));
    if (buf == NULL)
        return false;
    *n = icm__location_id_write(loc, flags, buf);
    *key = buf;
    return true;
}

int icm__location_id_equal(const char *a, const char *b, unsigned flags, bool *out)
{
    *out = false;
    if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0')
        return 0;
    char sa[512], sb[512];
    char *ha = NULL, *hb = NULL;
    const char *ka, *kb;
    size_t na, nb;
    int rc = 0;
    if (!key_of(a, flags, sa, sizeof sa, &ha, &ka, &na) ||
        !key_of(b, flags, sb, sizeof sb, &hb, &kb, &nb))
        rc = ICM_ENOMEM;
    else
        *out = na == nb && memcmp(ka, kb, na) == 0;
    icm__free(ha);
    icm__free(hb);
    return rc;
}

bool icm__location_id_within(const char *key, size_t n, const char *dir, size_t dn)
{
    while (dn > 1 && dir[dn - 1] == '/')
        dn--;
    if (dn == 0) /* the key of `.`: the working directory holds every relative path */
        return n == 0 || (key[0] != '/' && scheme_len_n(key, n) == 0);
    if (dn == 1 && dir[0] == '/') /* the file system root */
        return n > 0 && key[0] == '/';
    if (dir[dn - 1] == ':' || (dn >= 2 && dir[dn - 1] == '/' && dir[dn - 2] == ':'))
        return false; /* `s3://` or `s3:/`: no bucket, no place */
    return n >= dn && memcmp(key, dir, dn) == 0 && (n == dn || key[dn] == '/');
}

int icm_location_identity(char **out, const char *location)
{
    if (out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "NULL output");
    *out = NULL;
    if (location == NULL || location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL, "empty location");
    int rc = icm__location_key(location, out);
    return rc == 0 ? 0 : icm__error_oom();
}

int icm__location_key(const char *loc, char **out)
{
    *out = icm__malloc(strlen(loc) + 1);
    if (*out == NULL)
        return ICM_ENOMEM;
    icm__location_id_write(loc, ICM__LOCATION_ID_DEFAULT, *out);
    return 0;
}

size_t icm__location_key_write(const char *loc, char *out)
{
    return icm__location_id_write(loc, ICM__LOCATION_ID_DEFAULT, out);
}

bool icm__location_key_span(const char *loc, const char **key, size_t *key_len)
{
    return icm__location_id_span(loc, ICM__LOCATION_ID_DEFAULT, key, key_len);
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
    /* An object-store key is the location with its scheme folded (the scheme holds no '/').
     * A local key is the local part with slashes collapsed and dot segments resolved: its last
     * segment is the local part's when that is an ordinary segment after a slash of the local
     * part (collapsing keeps every non-empty segment, and resolving removes a segment only for
     * a "." or a later ".."). A location that does not begin with a letter has no scheme: it
     * is its local part. */
    const char *local = is_alpha(loc[0]) ? icm__location_local_part_n(loc, len) : loc;
    if (local != NULL && slash < local)
        return false; /* (no such spelling is known; never guess) */
    *tail = t;
    *tail_len = n;
    return true;
}
