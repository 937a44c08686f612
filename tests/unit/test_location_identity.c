/*
 * tests/unit/test_location_identity.c: the one location identity (util/location_id.h) against
 * the rules it replaced, on generated spellings, and its invariants.
 *
 * Before issue #17 three rules decided whether two spellings name one object:
 *   OLD-NORMALIZE  icm__location_normalize: the in-memory FileIO's object keys and a
 *                  transaction's remove / duplicate sets. Local: slashes collapsed; URIs exact.
 *   OLD-KEEP       icm__location_key: expiry's keep set. Local: collapsed and dot-resolved;
 *                  URIs exact.
 *   OLD-SWEEP      orphans_keys.c's own split and key: (scheme, authority) apart, the path
 *                  collapsed (object keys too, as Hadoop's Path) and, when local, dot-resolved.
 * and the guards (icm__location_strip_prefix / _equal) decided "inside" and "equal" for the
 * delete checks. Their code is frozen below, as it was at 6b184e6, under old_* names.
 *
 * What the tests establish, on every pair of a few thousand systematic and random spellings:
 *  - the sweep's split and path key are byte-for-byte OLD-SWEEP's (no answer changes);
 *  - the guards answer exactly as before but for S3's schemes: `s3`, `s3a` and `s3n` (as
 *    writers spell them, lower case) are one store, so `s3a://b/t/x` is inside `s3://b/t`
 *    (issue #18: expiry left such files behind as "outside the table");
 *  - the identity (ICM__LOCATION_ID_KEEP) equates every pair OLD-KEEP and OLD-NORMALIZE equate
 *    (it is never finer), and the pairs it equates beyond them are exactly these classes:
 *      C1 scheme case (`S3://b/k` is `s3://b/k`; RFC 3986 3.1) — over OLD-KEEP and
 *         OLD-NORMALIZE. Safer: expiry kept `s3://b/k` for a kept snapshot but deleted the
 *         same object through a removed snapshot's `S3://b/k`;
 *      C2 local dot segments (`/t/a/../x` is `/t/x`) — over OLD-NORMALIZE only (OLD-KEEP
 *         already had it). Safer: the test FileIO and a transaction's file sets now name the
 *         file the file system names; a transaction removing or re-adding a file spelled with
 *         a dot segment finds it instead of missing it;
 *  - guard-equal implies each identity is within the other (one place), and strip_prefix(p,
 *    dir) implies the identity of p is within the identity of dir (the guards are the
 *    identity's containment, restricted to spellings every reader agrees on);
 *  - identity equality is an equivalence (reflexive, symmetric, transitive: checked on the
 *    generated sets through icm__location_id_equal, not only through key bytes), the span is
 *    the key whenever it answers, and keys are fixed points (the key of a key is itself);
 *  - ICM__LOCATION_ID_S3_ALIASES equates exactly what the identity equates after `s3a:`/`s3n:`
 *    become `s3:`;
 *  - for local paths without links, identity equality is the file system's (same device and
 *    inode) for every spelling the kernel resolves.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "util/location.h"
#include "util/location_id.h"
#include "util/util.h"

/* ============================================================================================
 * FROZEN REFERENCE: the old rules, copied from src/util/location.c and src/maint/orphans_keys.c
 * at 6b184e6 (renamed old_*). Do not edit: they are what the differential tests compare with.
 * ========================================================================================== */

static size_t old_trim_len(const char *loc);

static bool old_is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool old_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char old_ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* ASCII case-insensitive comparison of exactly n bytes of a with the lower-case literal b. */
static bool old_ascii_ieq(const char *a, size_t n, const char *lower)
{
    if (strlen(lower) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (old_ascii_lower(a[i]) != lower[i])
            return false;
    return true;
}

/* Length of the RFC 3986 scheme of the `len` bytes at `loc` (without the ':'), or 0 when they
 * have none; a C string may pass SIZE_MAX (its NUL ends the scan). A colon after the first '/'
 * belongs to a path (`data/a:b`), not to a scheme. */
static size_t old_scheme_len_n(const char *loc, size_t len)
{
    if (len == 0 || !old_is_alpha(loc[0]))
        return 0;
    size_t i = 1;
    while (i < len && (old_is_alpha(loc[i]) || old_is_digit(loc[i]) || loc[i] == '+' ||
                       loc[i] == '-' || loc[i] == '.'))
        i++;
    return i < len && loc[i] == ':' ? i : 0;
}

/* old_local_part of the `len` bytes at `loc` (no NUL among them, and none needed
 * after: nothing past them is read), also for locations that are not C strings. */
static const char *old_local_part_n(const char *loc, size_t len)
{
    if (len == 0)
        return NULL;
    size_t slen = old_scheme_len_n(loc, len);
    if (slen == 0)
        return loc; /* `/p`, `//p` or a relative path */
    if (!old_ascii_ieq(loc, slen, "file"))
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
    if (alen != 0 && !old_ascii_ieq(auth, alen, "localhost"))
        return NULL;
    return path;
}

static const char *old_local_part(const char *loc)
{
    return loc != NULL ? old_local_part_n(loc, strlen(loc)) : NULL;
}

/* Collapse repeated slashes and drop a trailing slash (keeping a lone "/"). Most paths have
 * no repeated slash: those are copied whole (this runs once per manifest entry in keep sets). */
static size_t old_path_collapse(const char *in, char *out)
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

static int old_normalize(const char *loc, char **out)
{
    *out = NULL;
    const char *local = old_local_part(loc);
    if (local == NULL) {
        *out = icm__strdup(loc);
        return *out != NULL ? 0 : ICM_ENOMEM;
    }
    char *s = icm__malloc(strlen(local) + 1);
    if (s == NULL)
        return ICM_ENOMEM;
    old_path_collapse(local, s);
    *out = s;
    return 0;
}

static bool old_has_dot_segment(const char *s)
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

static const char *old_skip_slashes(const char *s)
{
    while (*s == '/')
        s++;
    return s;
}

/* Segment-wise prefix test of two local paths; on success *rest points into `p`. */
static bool old_local_strip(const char *p, const char *dir, const char **rest)
{
    if ((p[0] == '/') != (dir[0] == '/'))
        return false; /* absolute vs relative: unknown working directory, never equal */
    /* The usual case, in one comparison: `p` begins with the bytes of `dir`, up to a slash of
     * `p` or its end. Those bytes split into the same segments in both, the last one ending
     * where `dir` does, so the walk below would match them all and stop at the same place. */
    size_t dlen = strlen(dir);
    if (dlen > 0 && strncmp(p, dir, dlen) == 0 && (p[dlen] == '/' || p[dlen] == '\0')) {
        *rest = old_skip_slashes(p + dlen);
        return true;
    }
    for (;;) {
        p = old_skip_slashes(p);
        dir = old_skip_slashes(dir);
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
static size_t old_authority_start(const char *loc)
{
    size_t slen = old_scheme_len_n(loc, SIZE_MAX);
    if (slen == 0 || loc[slen + 1] != '/' || loc[slen + 2] != '/')
        return 0;
    return slen + 3;
}

/* Byte-wise prefix test of two URIs at a '/' boundary; *rest points into `p`. */
static bool old_uri_strip(const char *p, const char *dir, const char **rest)
{
    size_t auth = old_authority_start(dir);
    if (auth == 0 || dir[auth] == '\0' || dir[auth] == '/')
        return false; /* no bucket/host: not a usable prefix */
    size_t n = old_trim_len(dir);
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

static bool old_strip_prefix(const char *p, const char *dir, const char **rest)
{
    if (p == NULL || dir == NULL)
        return false;
    const char *lp = old_local_part(p);
    const char *ld = old_local_part(dir);
    const char *r = NULL;
    bool ok;
    if (lp != NULL && ld != NULL)
        ok = old_local_strip(lp, ld, &r);
    else if (lp == NULL && ld == NULL)
        ok = old_uri_strip(p, dir, &r);
    else
        ok = false; /* a local path is never below a URI or the reverse */
    if (!ok || old_has_dot_segment(r))
        return false;
    if (rest != NULL)
        *rest = r;
    return true;
}

static bool old_is_inside(const char *p, const char *dir)
{
    const char *rest;
    return old_strip_prefix(p, dir, &rest) && rest[0] != '\0';
}


static bool old_equal(const char *a, const char *b)
{
    const char *rest;
    return old_strip_prefix(a, b, &rest) && rest[0] == '\0';
}

static size_t old_trim_len(const char *loc)
{
    size_t n = strlen(loc);
    size_t keep;
    const char *local = old_local_part(loc);
    if (local != NULL) {
        keep = (size_t)(local - loc);
        if (local[0] == '/')
            keep++; /* the root slash */
    } else {
        keep = old_authority_start(loc);
        if (keep == 0) {
            size_t slen = old_scheme_len_n(loc, SIZE_MAX);
            keep = slen > 0 ? slen + 1 : 0;
        }
    }
    while (n > keep && loc[n - 1] == '/')
        n--;
    return n;
}


static size_t old_resolve_dots(char *path)
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

static size_t old_resolve_dots_if_any(char *path, size_t len)
{
    /* Most paths have no segment starting with '.': one search instead of a segment walk. */
    if (path[0] == '.' || strstr(path, "/.") != NULL)
        return old_resolve_dots(path);
    return len;
}

static size_t old_key_write(const char *loc, char *out)
{
    const char *local = old_local_part(loc);
    if (local == NULL) { /* object-store keys stay exact bytes */
        size_t n = strlen(loc);
        memcpy(out, loc, n + 1);
        return n;
    }
    size_t n = old_path_collapse(local, out);
    return old_resolve_dots_if_any(out, n); /* only a file system resolves dot segments */
}


/* OLD-SWEEP: orphans_keys.c's split (origin) and build_key (path key), at 6b184e6. */
typedef struct old_parts {
    const char *scheme;
    size_t scheme_len;
    const char *authority;
    size_t authority_len;
    const char *path; /* rest of the string */
    bool local;       /* a local form: its path is a file system path */
} old_parts;

static size_t old_sweep_scheme_len(const char *loc)
{
    if (!old_is_alpha(loc[0]))
        return 0;
    size_t i = 1;
    while (old_is_alpha(loc[i]) || (loc[i] >= '0' && loc[i] <= '9') || loc[i] == '+' ||
           loc[i] == '-' || loc[i] == '.')
        i++;
    return loc[i] == ':' ? i : 0;
}

static void old_sweep_split(const char *loc, old_parts *p)
{
    const char *local = old_local_part(loc);
    size_t slen = local == NULL ? old_sweep_scheme_len(loc) : 0;
    if (local != NULL || slen == 0) {
        p->scheme = "file";
        p->scheme_len = 4;
        p->authority = "";
        p->authority_len = 0;
        p->path = local != NULL ? local : loc;
        p->local = local != NULL;
        return;
    }
    p->local = false;
    p->scheme = loc;
    p->scheme_len = slen;
    const char *rest = loc + slen + 1;
    if (rest[0] == '/' && rest[1] == '/') {
        const char *a = rest + 2;
        size_t alen = strcspn(a, "/");
        p->authority = a;
        p->authority_len = alen;
        p->path = a + alen;
    } else {
        p->authority = "";
        p->authority_len = 0;
        p->path = rest;
    }
}

/* The path part of build_key: collapsed, then dot-resolved when local. */
static size_t old_sweep_path_key(const old_parts *p, char *out)
{
    size_t n = old_path_collapse(p->path, out);
    return p->local ? old_resolve_dots_if_any(out, n) : n;
}

/* ============================================================================================
 * end of the frozen reference
 * ========================================================================================== */

/* ---- generated spellings ---- */

typedef struct spellings {
    char **v;
    size_t n;
} spellings;

static void push(spellings *s, const char *x)
{
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    assert_non_null(s->v);
    s->v[s->n] = strdup(x);
    assert_non_null(s->v[s->n]);
    s->n++;
}

static void spellings_free(spellings *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* Scheme and authority forms, joined with every path form below (and random paths). */
static const char *const prefixes[] = {
    "", "file:", "file://", "file://localhost", "FILE://LocalHost", "file://host", "File:",
    "s3://b", "s3a://b", "s3n://b", "S3://b", "S3A://b", "s3://B", "s3://bb", "gs://b",
    "abfss://c@acct.dfs.core.windows.net", "hdfs://nn:8020", "s3://", "s3:", "mem://",
};

static const char *const paths[] = {
    "/t/x", "/t//x", "//t/x", "/t/x/", "/t/./x", "/t/a/../x", "/t/../t/x", "/t/%2e%2e/x",
    "/t/a%20b", "/t/a b", "t/x", "./t/x", "../t/x", "t/a/../x", "/", "", "/t", "/t/", "/T/x",
    "/t/.x", "/t/..x", "/t/x/..", "/..", "/t/x/.", "///t///x///",
};

/* Deterministic pseudo-random numbers (the test must not depend on the run). */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)((rng_state >> 33) % n);
}

static void generate(spellings *s, size_t n_random)
{
    for (size_t i = 0; i < ICM__ARRAY_LEN(prefixes); i++)
        for (size_t j = 0; j < ICM__ARRAY_LEN(paths); j++) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s%s", prefixes[i], paths[j]);
            push(s, buf);
        }
    static const char *const pieces[] = {"/", "/", "//", ".", "..", "a", "b", "t", "x",
                                         "%2e", "%20", " ", "A", "p.parquet", "/."};
    for (size_t k = 0; k < n_random; k++) {
        char buf[256];
        size_t len = (size_t)snprintf(buf, sizeof buf, "%s",
                                      prefixes[rnd(ICM__ARRAY_LEN(prefixes))]);
        unsigned parts = 1 + rnd(7);
        for (unsigned q = 0; q < parts; q++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s",
                                    pieces[rnd(ICM__ARRAY_LEN(pieces))]);
        push(s, buf);
    }
}

/* Keys of each spelling under one rule (malloc'd strings). */
typedef char *(*rule_fn)(const char *loc);

static char *key_keep(const char *loc)
{
    char *k = malloc(strlen(loc) + 1);
    icm__location_id_write(loc, ICM__LOCATION_ID_KEEP, k);
    return k;
}

static char *key_aliases(const char *loc)
{
    char *k = malloc(strlen(loc) + 1);
    icm__location_id_write(loc, ICM__LOCATION_ID_S3_ALIASES, k);
    return k;
}

static char *key_old_keep(const char *loc)
{
    char *k = malloc(strlen(loc) + 1);
    old_key_write(loc, k);
    return k;
}

static char *key_old_normalize(const char *loc)
{
    char *k = NULL;
    icmt_ok(old_normalize(loc, &k));
    char *c = strdup(k);
    icm__free(k);
    return c;
}

/* `loc` with its RFC 3986 scheme (if any) in lower case, and with `s3a`/`s3n` as `s3` when
 * asked: the spelling classes C1 and the alias refinement are defined by these rewrites. */
static char *rewrite_scheme(const char *loc, bool aliases)
{
    char *c = strdup(loc);
    size_t slen = old_scheme_len_n(c, strlen(c));
    for (size_t i = 0; i < slen; i++)
        c[i] = (char)tolower((unsigned char)c[i]);
    if (aliases && slen == 3 && c[0] == 's' && c[1] == '3' && (c[2] == 'a' || c[2] == 'n'))
        memmove(c + 2, c + 3, strlen(c + 3) + 1);
    return c;
}

static char **keys_of(const spellings *s, rule_fn fn)
{
    char **k = calloc(s->n, sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < s->n; i++)
        k[i] = fn(s->v[i]);
    return k;
}

static char **keys_of_rewritten(const spellings *s, rule_fn fn, bool aliases)
{
    char **k = calloc(s->n, sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < s->n; i++) {
        char *r = rewrite_scheme(s->v[i], aliases);
        k[i] = fn(r);
        free(r);
    }
    return k;
}

static void keys_free(char **k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(k[i]);
    free(k);
}

static bool eq(char **k, size_t i, size_t j)
{
    return strcmp(k[i], k[j]) == 0;
}

/* The identity against OLD-KEEP and OLD-NORMALIZE: never finer, and coarser exactly by C1 (and
 * C2 over OLD-NORMALIZE): identity-equal ⇔ OLD-KEEP-equal after the scheme is lower-cased. */
static void test_identity_vs_old_keep_and_normalize(void **state)
{
    (void)state;
    spellings s = {0};
    generate(&s, 1500);
    char **now = keys_of(&s, key_keep);
    char **keep = keys_of(&s, key_old_keep);
    char **norm = keys_of(&s, key_old_normalize);
    char **keep_lc = keys_of_rewritten(&s, key_old_keep, false);
    size_t c1_keep = 0, c1_norm = 0, c2_norm = 0;
    for (size_t i = 0; i < s.n; i++)
        for (size_t j = 0; j < s.n; j++) {
            bool e = eq(now, i, j);
            if ((eq(keep, i, j) && !e) || (eq(norm, i, j) && !e) || e != eq(keep_lc, i, j)) {
                print_error("\"%s\" vs \"%s\": identity %d, old keep %d, old normalize %d, "
                            "old keep of lower-cased schemes %d\n", s.v[i], s.v[j], e,
                            eq(keep, i, j), eq(norm, i, j), eq(keep_lc, i, j));
                fail();
            }
            if (e && !eq(keep, i, j))
                c1_keep++; /* C1: only the scheme's case told them apart */
            if (e && !eq(norm, i, j)) {
                if (eq(keep, i, j))
                    c2_norm++; /* C2: dot segments (OLD-KEEP resolved them) */
                else
                    c1_norm++; /* C1, possibly with C2 */
            }
        }
    /* each class occurs in the generated spellings: the checks above were exercised */
    assert_true(c1_keep > 0);
    assert_true(c1_norm > 0);
    assert_true(c2_norm > 0);
    keys_free(now, s.n);
    keys_free(keep, s.n);
    keys_free(norm, s.n);
    keys_free(keep_lc, s.n);
    spellings_free(&s);
}

/* The sweep's split and path key are OLD-SWEEP's, byte for byte: no answer changes. */
static void test_sweep_keys_unchanged(void **state)
{
    (void)state;
    spellings s = {0};
    generate(&s, 3000);
    for (size_t i = 0; i < s.n; i++) {
        const char *loc = s.v[i];
        if (loc[0] == '\0')
            continue; /* not a location (icm__location_split says false); never keyed */
        old_parts o;
        old_sweep_split(loc, &o);
        icm__location_parts p;
        icm__location_split(loc, strlen(loc), &p);
        char *ko = malloc(strlen(loc) + 1), *kn = malloc(strlen(loc) + 1);
        size_t no = old_sweep_path_key(&o, ko);
        size_t nn = icm__location_id_path_write(&p, ICM__LOCATION_ID_HADOOP_SLASHES, kn);
        bool same = o.local == p.local && o.scheme_len == p.scheme_len &&
                    memcmp(o.scheme, p.scheme, o.scheme_len) == 0 &&
                    o.authority_len == p.authority_len &&
                    memcmp(o.authority, p.authority, o.authority_len) == 0 && no == nn &&
                    memcmp(ko, kn, no) == 0;
        if (!same) {
            print_error("\"%s\": old sweep (%.*s, %.*s, %s) local %d, now (%.*s, %.*s, %s) "
                        "local %d\n", loc, (int)o.scheme_len, o.scheme, (int)o.authority_len,
                        o.authority, ko, o.local, (int)p.scheme_len, p.scheme,
                        (int)p.authority_len, p.authority, kn, p.local);
            fail();
        }
        free(ko);
        free(kn);
    }
    spellings_free(&s);
}

/* The length of `loc`'s scheme when it is one of S3's as writers spell them (`s3`, `s3a`,
 * `s3n`, lower case) followed by "://", else 0. */
static size_t s3_scheme_len(const char *loc)
{
    size_t n = strncmp(loc, "s3://", 5) == 0                                        ? 2
               : strncmp(loc, "s3a://", 6) == 0 || strncmp(loc, "s3n://", 6) == 0 ? 3
                                                                                  : 0;
    return n;
}

/* What the old guard answers for `p` below `dir` with S3's lower-case schemes made one (the
 * one change since: an `s3a://` file of an `s3://` table is inside it): `p` spelled with
 * dir's S3 scheme is asked. *rest is an offset into `p` (or -1). */
static bool old_strip_prefix_s3(const char *p, const char *dir, ptrdiff_t *rest)
{
    size_t ps = s3_scheme_len(p), ds = s3_scheme_len(dir);
    char *q = ps != 0 && ds != 0 ? malloc(strlen(p) - ps + ds + 1) : NULL;
    if (q != NULL) {
        memcpy(q, dir, ds);
        strcpy(q + ds, p + ps);
    }
    const char *r = NULL;
    bool o = old_strip_prefix(q != NULL ? q : p, dir, &r);
    *rest = o ? (r - (q != NULL ? q : p)) + (q != NULL ? (ptrdiff_t)ps - (ptrdiff_t)ds : 0) : -1;
    free(q);
    return o;
}

/* The guards answer exactly as before but for S3's schemes (old_strip_prefix_s3), and never
 * say "same" or "inside" where the identity (S3's schemes folded, as the keep sets key) says
 * otherwise. */
static void test_guards_unchanged_and_within_identity(void **state)
{
    (void)state;
    spellings s = {0};
    generate(&s, 1000);
    char **now = keys_of(&s, key_aliases);
    size_t inside = 0, s3_spellings = 0;
    for (size_t i = 0; i < s.n; i++)
        for (size_t j = 0; j < s.n; j++) {
            const char *p = s.v[i], *dir = s.v[j];
            const char *r_old = NULL, *r_new = NULL;
            ptrdiff_t r_want = -1;
            bool o = old_strip_prefix(p, dir, &r_old);
            bool w = old_strip_prefix_s3(p, dir, &r_want);
            bool n = icm__location_strip_prefix(p, dir, &r_new);
            if (w != n || (w && r_new - p != r_want) ||
                (w && p[r_want] == '\0') != icm__location_equal(p, dir) ||
                (w && p[r_want] != '\0') != icm__location_is_inside(p, dir) ||
                old_trim_len(p) != icm__location_trim_len(p)) {
                print_error("guards changed on \"%s\", \"%s\"\n", p, dir);
                fail();
            }
            if (o == w && (r_old != r_new || old_equal(p, dir) != icm__location_equal(p, dir) ||
                           old_is_inside(p, dir) != icm__location_is_inside(p, dir))) {
                print_error("guards changed on \"%s\", \"%s\"\n", p, dir);
                fail();
            }
            s3_spellings += w && !o;
            /* guard-equal names one place: each identity within the other (a place's
             * trailing slash does not matter to the guard, `s3://b/k/` is the place
             * `s3://b/k`, while as objects they are two keys) */
            if (icm__location_equal(p, dir) &&
                !(icm__location_id_within(now[i], strlen(now[i]), now[j], strlen(now[j])) &&
                  icm__location_id_within(now[j], strlen(now[j]), now[i], strlen(now[i])))) {
                print_error("guard-equal but not one place: \"%s\", \"%s\"\n", p, dir);
                fail();
            }
            if (n && !icm__location_id_within(now[i], strlen(now[i]), now[j], strlen(now[j]))) {
                print_error("\"%s\" inside \"%s\" by the guard, but its key \"%s\" is not "
                            "within \"%s\"\n", p, dir, now[i], now[j]);
                fail();
            }
            inside += n;
        }
    assert_true(inside > 0);
    assert_true(s3_spellings > 0); /* the generated spellings hold such pairs */
    keys_free(now, s.n);
    spellings_free(&s);
}

/* S3_ALIASES equates exactly what the identity equates once `s3a:` / `s3n:` read `s3:`. */
static void test_s3_aliases(void **state)
{
    (void)state;
    spellings s = {0};
    generate(&s, 800);
    char **alias = keys_of(&s, key_aliases);
    char **mapped = keys_of_rewritten(&s, key_keep, true);
    size_t folded = 0;
    char **plain = keys_of(&s, key_keep);
    for (size_t i = 0; i < s.n; i++)
        for (size_t j = 0; j < s.n; j++) {
            if (eq(alias, i, j) != eq(mapped, i, j)) {
                print_error("aliases: \"%s\" vs \"%s\"\n", s.v[i], s.v[j]);
                fail();
            }
            folded += eq(alias, i, j) && !eq(plain, i, j);
        }
    assert_true(folded > 0);
    char k[32];
    icm__location_id_write("s3a://b/k", ICM__LOCATION_ID_S3_ALIASES, k);
    assert_string_equal(k, "s3://b/k");
    icm__location_id_write("S3N://b/k", ICM__LOCATION_ID_S3_ALIASES, k);
    assert_string_equal(k, "s3://b/k");
    icm__location_id_write("s3a://b/k", ICM__LOCATION_ID_KEEP, k);
    assert_string_equal(k, "s3a://b/k");
    keys_free(alias, s.n);
    keys_free(mapped, s.n);
    keys_free(plain, s.n);
    spellings_free(&s);
}

/* Equality through icm__location_id_equal is an equivalence on the generated spellings, the
 * span is the written key whenever it answers, and every key is its own key. */
static void test_equivalence_span_fixed_point(void **state)
{
    (void)state;
    spellings s = {0};
    generate(&s, 600);
    static const unsigned flags[] = {ICM__LOCATION_ID_KEEP, ICM__LOCATION_ID_S3_ALIASES,
                                     ICM__LOCATION_ID_HADOOP_SLASHES,
                                     ICM__LOCATION_ID_S3_ALIASES |
                                         ICM__LOCATION_ID_HADOOP_SLASHES};
    for (size_t f = 0; f < ICM__ARRAY_LEN(flags); f++) {
        for (size_t i = 0; i < s.n; i++) {
            const char *loc = s.v[i];
            char *key = malloc(strlen(loc) + 1), *again = malloc(strlen(loc) + 1);
            size_t n = icm__location_id_write(loc, flags[f], key);
            assert_int_equal(n, strlen(key));
            const char *span;
            size_t span_n;
            if (icm__location_id_span(loc, flags[f], &span, &span_n)) {
                assert_int_equal(span_n, n);
                assert_memory_equal(span, key, n);
            }
            if (key[0] != '\0') {
                icm__location_id_write(key, flags[f], again);
                if (strcmp(key, again) != 0) {
                    print_error("\"%s\": key \"%s\", its key \"%s\"\n", loc, key, again);
                    fail();
                }
            }
            bool e;
            icmt_ok(icm__location_id_equal(loc, loc, flags[f], &e));
            assert_int_equal(e, loc[0] != '\0'); /* reflexive (an empty name names nothing) */
            free(key);
            free(again);
        }
        enum { M = 150 };
        size_t m = s.n < M ? s.n : M;
        static bool rel[M][M];
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                icmt_ok(icm__location_id_equal(s.v[i * s.n / m], s.v[j * s.n / m], flags[f],
                                               &rel[i][j]));
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++) {
                assert_int_equal(rel[i][j], rel[j][i]); /* symmetric */
                if (!rel[i][j])
                    continue;
                for (size_t k = 0; k < m; k++)
                    if (rel[j][k])
                        assert_true(rel[i][k]); /* transitive */
            }
    }
    /* a key longer than the stack buffers goes through the heap */
    char a[1500], b[1600];
    memset(a, 'a', sizeof a);
    a[0] = '/';
    a[sizeof a - 1] = '\0';
    snprintf(b, sizeof b, "file://%s/", a);
    bool e = false;
    icmt_ok(icm__location_id_equal(a, b, ICM__LOCATION_ID_KEEP, &e));
    assert_true(e);
    b[100] = 'b';
    icmt_ok(icm__location_id_equal(a, b, ICM__LOCATION_ID_KEEP, &e));
    assert_false(e);
    spellings_free(&s);
}

/* Containment on identities: a segment boundary, the roots, trailing slashes of the place. */
static void test_within(void **state)
{
    (void)state;
    static const struct {
        const char *key, *dir;
        bool within;
    } cases[] = {
        {"/t/x", "/t", true},          {"/t", "/t", true},           {"/t/x", "/t/", true},
        {"/t_2/x", "/t", false},       {"/tx", "/t", false},         {"/x", "/", true},
        {"/", "/", true},              {"t/x", "/", false},          {"t/x", "t", true},
        {"/t/x", "t", false},          {"s3://b/t/x", "s3://b/t", true},
        {"s3://b/t//x", "s3://b/t/", true},                          {"s3://b/x", "s3://b", true},
        {"s3://bx/y", "s3://b", false}, {"s3://b/x", "s3://", false}, {"s3://b/x", "s3:", false},
        {"s3a://b/x", "s3://b", false}, {"gs://b/t/x", "s3://b/t", false},
        {"t/x", "", true},             {"", "", true},               {"/t/x", "", false},
        {"s3://b/x", "", false},
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(cases); i++)
        if (icm__location_id_within(cases[i].key, strlen(cases[i].key), cases[i].dir,
                                    strlen(cases[i].dir)) != cases[i].within) {
            print_error("within(\"%s\", \"%s\") != %d\n", cases[i].key, cases[i].dir,
                        cases[i].within);
            fail();
        }
}

/* Bytes are identity: percent escapes and case in keys are never decoded or folded. */
static void test_bytes_are_identity(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"s3://b/a%20b", "s3://b/a b"}, {"s3://b/%2e%2e/x", "s3://b/../x"},
        {"/t/a%20b", "/t/a b"},         {"s3://B/k", "s3://b/k"},
        {"s3://b/K", "s3://b/k"},       {"s3://b/t//x", "s3://b/t/x"},
        {"s3://b/t/../x", "s3://b/x"},  {"file://host/t/x", "/t/x"},
        {"/t/x", "t/x"},                {"s3://b/t/x/", "s3://b/t/x"},
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(pairs); i++) {
        bool e = true;
        icmt_ok(icm__location_id_equal(pairs[i][0], pairs[i][1], ICM__LOCATION_ID_KEEP, &e));
        if (e) {
            print_error("\"%s\" and \"%s\" were made one object\n", pairs[i][0], pairs[i][1]);
            fail();
        }
    }
    static const char *const same[] = {"/t/x", "file:/t/x", "file:///t/x",
                                       "file://localhost/t/x", "FILE://LOCALHOST//t//x/",
                                       "/t/./x", "/t/a/../x", "//t/x", "/../t/x"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(same); i++) {
        bool e = false;
        icmt_ok(icm__location_id_equal(same[0], same[i], ICM__LOCATION_ID_KEEP, &e));
        if (!e) {
            print_error("\"%s\" and \"%s\" should be one file\n", same[0], same[i]);
            fail();
        }
    }
}

/* For local paths without links, the identity is the file system's: two spellings the kernel
 * resolves are one key exactly when they reach the same inode. */
static void test_local_identity_matches_file_system(void **state)
{
    (void)state;
    char *root = icmt_mkdtemp();
    char *real = realpath(root, NULL); /* the spellings below start at a path without links */
    assert_non_null(real);
    static const char *const dirs[] = {"t", "t/a", "t/b", "t/a/c"};
    static const char *const files[] = {"t/x", "t/a/y", "t/b/y", "t/a/c/z", "t/.h"};
    char buf[4096];
    for (size_t i = 0; i < ICM__ARRAY_LEN(dirs); i++) {
        snprintf(buf, sizeof buf, "%s/%s", real, dirs[i]);
        assert_int_equal(mkdir(buf, 0700), 0);
    }
    for (size_t i = 0; i < ICM__ARRAY_LEN(files); i++) {
        snprintf(buf, sizeof buf, "%s/%s", real, files[i]);
        icmt_write_file(buf, "x", 1);
    }
    static const char *const forms[] = {"", "file:", "file://", "file://localhost"};
    static const char *const rels[] = {
        "t/x", "t//x", "t/./x", "t/a/../x", "t/a/c/../../x", "t/b/../a/y", "t/a/y",
        "t/b/y", "t/a/./c/z", "t/a/c/z", "t/b/../a/c/../c/z", "t/./.h", "t/a/../.h",
        "t/a/c/../../b/y", "t/x/", "t/a/../b/../x", "t/a/c/../../a/c/z",
    };
    spellings s = {0};
    for (size_t f = 0; f < ICM__ARRAY_LEN(forms); f++)
        for (size_t r = 0; r < ICM__ARRAY_LEN(rels); r++) {
            snprintf(buf, sizeof buf, "%s%s/%s", forms[f], real, rels[r]);
            push(&s, buf);
        }
    struct stat *st = calloc(s.n, sizeof *st);
    bool *ok = calloc(s.n, sizeof *ok);
    for (size_t i = 0; i < s.n; i++) {
        const char *p = icm__location_local_part(s.v[i]);
        assert_non_null(p);
        ok[i] = stat(p, &st[i]) == 0;
    }
    size_t same = 0, compared = 0;
    for (size_t i = 0; i < s.n; i++)
        for (size_t j = 0; j < s.n; j++) {
            if (!ok[i] || !ok[j])
                continue;
            bool fs = st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino;
            bool e;
            icmt_ok(icm__location_id_equal(s.v[i], s.v[j], ICM__LOCATION_ID_KEEP, &e));
            if (e != fs) {
                print_error("\"%s\" vs \"%s\": identity %d, file system %d\n", s.v[i], s.v[j],
                            e, fs);
                fail();
            }
            same += fs;
            compared++;
        }
    assert_true(compared > 1000);
    assert_true(same > s.n);
    free(st);
    free(ok);
    spellings_free(&s);
    free(real);
    icmt_rmtree(root);
    free(root);
}

/* The public face of the identity (the CLI's `files --all` lists one row per identity). */
static void test_public_identity(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"file:///t//x/", "/t/x"},        {"file://localhost/t/a/../x", "/t/x"},
        {"/t/./x", "/t/x"},               {"S3://b/t//x", "s3://b/t//x"},
        {"s3a://b/t/x", "s3://b/t/x"},    {"S3N://b/t/x", "s3://b/t/x"},   {"s3://b/a%20b/../x", "s3://b/a%20b/../x"},
        {"data/./x", "data/x"},           {"file://host/t/x", "file://host/t/x"},
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(cases); i++) {
        char *out = NULL;
        icmt_ok(icm_location_identity(&out, cases[i].in));
        assert_string_equal(out, cases[i].want);
        icm_free(out);
    }
    char *out = (char *)"x";
    assert_int_equal(icm_location_identity(&out, ""), ICM_EINVALID);
    assert_null(out);
    assert_int_equal(icm_location_identity(&out, NULL), ICM_EINVALID);
    assert_int_equal(icm_location_identity(NULL, "/t"), ICM_EINVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_vs_old_keep_and_normalize),
        cmocka_unit_test(test_sweep_keys_unchanged),
        cmocka_unit_test(test_guards_unchanged_and_within_identity),
        cmocka_unit_test(test_s3_aliases),
        cmocka_unit_test(test_equivalence_span_fixed_point),
        cmocka_unit_test(test_within),
        cmocka_unit_test(test_bytes_are_identity),
        cmocka_unit_test(test_local_identity_matches_file_system),
        cmocka_unit_test(test_public_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
