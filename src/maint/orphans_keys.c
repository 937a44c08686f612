/*
 * maint/orphans_keys.c: path identity for the orphan sweep — how a referenced location and a
 * listed location are compared (orphans_internal.h, reference semantics §2.3).
 *
 * A location is split by the one location parser (icm__location_split, util/location_id.h)
 * into scheme, authority and path, and the path keyed by the one identity
 * (icm__location_id_path_write) with ICM__LOCATION_ID_HADOOP_SLASHES: local forms are their
 * file system path (dot segments resolved), object keys their exact bytes but for repeated and
 * trailing slashes, which Hadoop's Path drops in Java's DeleteOrphanFiles. That may make two
 * distinct object keys (`t//x`, `t/x`) one key, which can only keep a file that is not
 * referenced, never delete one that is.
 *
 * The keep set stores hash(origin index, path), where an origin is a distinct referenced
 * (scheme, authority) pair after the equal-schemes / equal-authorities maps. Tables reference
 * one origin (rarely a few), so a lookup costs one hash probe per referenced origin and R stays
 * at 32 bytes per file (keepset.h). Joining on the path with the origin compared afterwards is
 * what lets a file that matches "only up to scheme or authority" be told apart from an orphan:
 * that is a conflict, and the caller's prefix-mismatch mode decides.
 */
#include <string.h>

#include "maint/orphans_internal.h"
#include "util/location.h"

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* ------------------------------------------------------------------------------------------ */
/* equal maps                                                                                  */

/* New lower-case, whitespace-trimmed copy of s[0..n). */
static char *trimmed_lower(const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *c = icm__strndup(s, n);
    if (c != NULL)
        for (size_t i = 0; c[i] != '\0'; i++)
            c[i] = lower(c[i]);
    return c;
}

/* Set name → canon, replacing an earlier entry for the same name. Takes both strings. */
static int map_put(icm__equal_map *m, char *name, char *canon)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->names[i], name) == 0) {
            icm__free(name);
            icm__free(m->canon[i]);
            m->canon[i] = canon;
            return 0;
        }
    }
    char **names = icm__reallocarray(m->names, m->n + 1, sizeof *names);
    if (names != NULL)
        m->names = names;
    char **canons = names != NULL ? icm__reallocarray(m->canon, m->n + 1, sizeof *canons) : NULL;
    if (canons == NULL) {
        icm__free(name);
        icm__free(canon);
        return ICM_ENOMEM;
    }
    m->canon = canons;
    m->names[m->n] = name;
    m->canon[m->n] = canon;
    m->n++;
    return 0;
}

/* One `NAMES=CANONICAL` group of length n. */
static int parse_group(icm__equal_map *m, const char *g, size_t n, const char *what)
{
    const char *eq = memchr(g, '=', n);
    if (eq == NULL || eq == g || eq == g + n - 1)
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, what,
                              "expected NAMES=CANONICAL (names separated by commas, groups by "
                              "';'), got '%.*s'", (int)n, g);
    char *canon = trimmed_lower(eq + 1, (size_t)(g + n - eq - 1));
    if (canon == NULL)
        return ICM_ENOMEM;
    if (canon[0] == '\0' || strchr(canon, ',') != NULL || strchr(canon, '=') != NULL) {
        icm__free(canon);
        return icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, what,
                              "bad canonical name in '%.*s'", (int)n, g);
    }
    const char *p = g;
    int rc = 0;
    while (rc == 0 && p < eq) {
        const char *comma = memchr(p, ',', (size_t)(eq - p));
        const char *end = comma != NULL ? comma : eq;
        char *name = trimmed_lower(p, (size_t)(end - p));
        char *c = icm__strdup(canon);
        if (name == NULL || c == NULL) {
            icm__free(name);
            icm__free(c);
            rc = ICM_ENOMEM;
        } else if (name[0] == '\0') {
            icm__free(name);
            icm__free(c);
            rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, what,
                                "empty name in '%.*s'", (int)n, g);
        } else {
            rc = map_put(m, name, c);
        }
        p = end + 1;
    }
    icm__free(canon);
    return rc;
}

int icm__equal_map_parse(icm__equal_map *m, const char *text, const char *what)
{
    if (text == NULL)
        return 0;
    const char *p = text;
    while (*p != '\0') {
        const char *semi = strchr(p, ';');
        size_t n = semi != NULL ? (size_t)(semi - p) : strlen(p);
        bool blank = true;
        for (size_t i = 0; i < n; i++)
            blank = blank && (p[i] == ' ' || p[i] == '\t');
        if (!blank) {
            int rc = parse_group(m, p, n, what);
            if (rc != 0)
                return rc;
        }
        p += n;
        if (*p == ';')
            p++;
    }
    return 0;
}

void icm__equal_map_dispose(icm__equal_map *m)
{
    for (size_t i = 0; i < m->n; i++) {
        icm__free(m->names[i]);
        icm__free(m->canon[i]);
    }
    icm__free(m->names);
    icm__free(m->canon);
    memset(m, 0, sizeof *m);
}

/* Canonical name of the lower-case `name` (itself when unmapped). */
static const char *map_apply(const icm__equal_map *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0)
            return m->canon[i];
    return name;
}

/* ------------------------------------------------------------------------------------------ */
/* splitting                                                                                   */

typedef icm__location_parts parts;

static void split(const char *loc, parts *p)
{
    icm__location_split(loc, strlen(loc), p);
}

/* Append the sweep's key of path part `p` to b (icm__location_id_path_write with Hadoop's
 * slashes). Runs once per listed file and reference: the usual path is a single copy. */
static int put_path_key(icm__buf *b, const parts *p)
{
    if (icm__buf_grow(b, p->path_len) != 0)
        return ICM_ENOMEM;
    b->len += icm__location_id_path_write(p, ICM__LOCATION_ID_HADOOP_SLASHES, b->data + b->len);
    return 0;
}

/* Lower-case n bytes of s into b (replacing its content), fold S3's schemes into `s3` when
 * `s3_fold`, then apply the map in place. */
static int canonical_name(icm__buf *b, const char *s, size_t n, bool s3_fold,
                          const icm__equal_map *m)
{
    icm__buf_clear(b);
    if (s3_fold && icm__location_scheme_is_s3(s, n)) {
        s = "s3";
        n = 2;
    }
    if (icm__buf_put(b, s, n) != 0 || icm__buf_putc(b, '\0') != 0)
        return ICM_ENOMEM;
    b->len--; /* keep the terminator out of the length */
    for (size_t i = 0; i < n; i++)
        b->data[i] = lower(b->data[i]);
    const char *c = map_apply(m, b->data);
    if (c != b->data) {
        icm__buf_clear(b);
        if (icm__buf_puts(b, c) != 0)
            return ICM_ENOMEM;
    }
    return 0;
}

/* Whether p has the raw scheme and authority of the location last canonicalised. */
static bool same_raw_origin(const icm__orphan_keys *k, const parts *p)
{
    const icm__buf *raw = &k->raw_origin;
    return raw->len == p->scheme_len + 1 + p->authority_len && raw->data[p->scheme_len] == '\0' &&
           memcmp(raw->data, p->scheme, p->scheme_len) == 0 &&
           memcmp(raw->data + p->scheme_len + 1, p->authority, p->authority_len) == 0;
}

/* Canonical scheme and authority of split location p into k->scheme and k->authority. A
 * listing or a manifest gives long runs of locations with one origin, so the last raw origin
 * ("scheme\0authority") is remembered and a repeat costs one comparison instead of lower-casing
 * and two map lookups. */
static int canonical_origin(icm__orphan_keys *k, const parts *p)
{
    if (same_raw_origin(k, p))
        return 0;
    icm__buf_clear(&k->raw_origin);
    if (canonical_name(&k->scheme, p->scheme, p->scheme_len, true, &k->schemes) != 0 ||
        canonical_name(&k->authority, p->authority, p->authority_len, false,
                       &k->authorities) != 0)
        return ICM_ENOMEM;
    if (icm__buf_put(&k->raw_origin, p->scheme, p->scheme_len) != 0 ||
        icm__buf_putc(&k->raw_origin, '\0') != 0 ||
        icm__buf_put(&k->raw_origin, p->authority, p->authority_len) != 0) {
        icm__buf_clear(&k->raw_origin); /* no memo; the canonical names are right */
        return ICM_ENOMEM;
    }
    return 0;
}

int icm__okeys_origin_of(icm__orphan_keys *k, const char *location, const char **scheme,
                         const char **authority)
{
    parts p;
    split(location, &p);
    if (canonical_origin(k, &p) != 0)
        return ICM_ENOMEM;
    *scheme = k->scheme.data;
    *authority = k->authority.data;
    return 0;
}

char *icm__okeys_path_of(const char *location)
{
    parts p;
    split(location, &p);
    icm__buf b = ICM__BUF_INIT;
    if (put_path_key(&b, &p) != 0 || icm__buf_putc(&b, '\0') != 0) {
        icm__buf_dispose(&b);
        return NULL;
    }
    return icm__buf_detach(&b, NULL);
}

bool icm__okeys_path_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    if (n == 0)
        return true; /* a relative root "" contains every relative path */
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* ------------------------------------------------------------------------------------------ */
/* keys                                                                                        */

/* The name S3's schemes fold into: "s3" for `s3`, `s3a`, `s3n`, else `name` (lower case). */
static const char *s3_folded(const char *name)
{
    return icm__location_scheme_is_s3(name, strlen(name)) ? "s3" : name;
}

/*
 * The caller's scheme map `text` into k->schemes, with S3's schemes folded on both sides of each
 * entry, as canonical_name folds them in every location: `s3`, `s3a` and `s3n` are one object
 * store, and no map can pull them apart (a map `s3a=s3a` would otherwise make every live
 * `s3a://` file a mismatch of its `s3://` listing, deleted under --prefix-mismatch delete). An
 * entry folding to `s3=s3` says nothing and is dropped; two entries sending S3's spellings to
 * different names are refused (ICM_EINVALID): they would have to be one name. The default map
 * (ICM_ORPHAN_DEFAULT_EQUAL_SCHEMES, `s3a,s3n=s3`) is exactly this fold.
 */
static int scheme_map_init(icm__equal_map *out, const char *text)
{
    icm__equal_map user = {0};
    int rc = icm__equal_map_parse(&user, text, "equal-schemes");
    const char *s3_canon = NULL, *s3_name = NULL;
    for (size_t i = 0; rc == 0 && i < user.n; i++) {
        const char *name = s3_folded(user.names[i]), *canon = s3_folded(user.canon[i]);
        if (strcmp(name, canon) == 0)
            continue;
        if (strcmp(name, "s3") == 0) {
            if (s3_canon != NULL && strcmp(s3_canon, canon) != 0) {
                rc = icm__error_set(ICM_ERRCLASS_MAINT, ICM_EINVALID, "equal-schemes",
                                    "%s and %s are one object store (s3, s3a and s3n name the "
                                    "same objects) but are mapped to %s and %s", s3_name,
                                    user.names[i], s3_canon, canon);
                break;
            }
            s3_canon = canon;
            s3_name = user.names[i];
        }
        char *n = icm__strdup(name), *c = icm__strdup(canon);
        rc = n != NULL && c != NULL ? map_put(out, n, c) : ICM_ENOMEM;
        if (n == NULL || c == NULL) {
            icm__free(n);
            icm__free(c);
        }
    }
    icm__equal_map_dispose(&user);
    return rc;
}

int icm__okeys_init(icm__orphan_keys *k, const char *equal_schemes,
                    const char *equal_authorities)
{
    memset(k, 0, sizeof *k);
    int rc = icm__pathset_new(&k->set, 1024);
    if (rc == 0)
        rc = scheme_map_init(&k->schemes, equal_schemes);
    if (rc == 0)
        rc = icm__equal_map_parse(&k->authorities, equal_authorities, "equal-authorities");
    if (rc != 0)
        icm__okeys_dispose(k);
    return rc;
}

void icm__okeys_dispose(icm__orphan_keys *k)
{
    icm__pathset_free(k->set);
    icm__equal_map_dispose(&k->schemes);
    icm__equal_map_dispose(&k->authorities);
    for (size_t i = 0; i < k->n_origins; i++) {
        icm__free(k->origins[i].scheme);
        icm__free(k->origins[i].authority);
    }
    icm__free(k->origins);
    icm__buf_dispose(&k->key);
    icm__buf_dispose(&k->scheme);
    icm__buf_dispose(&k->authority);
    icm__buf_dispose(&k->raw_origin);
    memset(k, 0, sizeof *k);
}

/* Index of the referenced origin (scheme, authority), added when new. */
static int origin_index(icm__orphan_keys *k, const char *scheme, const char *authority,
                        uint32_t *out)
{
    for (size_t i = 0; i < k->n_origins; i++) {
        if (strcmp(k->origins[i].scheme, scheme) == 0 &&
            strcmp(k->origins[i].authority, authority) == 0) {
            *out = (uint32_t)i;
            return 0;
        }
    }
    icm__origin *grown = icm__reallocarray(k->origins, k->n_origins + 1, sizeof *grown);
    if (grown == NULL)
        return ICM_ENOMEM;
    k->origins = grown;
    char *s = icm__strdup(scheme);
    char *a = icm__strdup(authority);
    if (s == NULL || a == NULL) {
        icm__free(s);
        icm__free(a);
        return ICM_ENOMEM;
    }
    grown[k->n_origins].scheme = s;
    grown[k->n_origins].authority = a;
    *out = (uint32_t)k->n_origins++;
    return 0;
}

/* Fill k->key with a 4-byte placeholder for the origin index and the path's key. A file
 * system resolves `t/./d/f` and `t/x/../d/f` to the file the listing calls `t/d/f`: one key,
 * or a live file referenced through a dot segment would look like an orphan. Object-store keys
 * keep their dot segments (`..` is an ordinary key there). */
static int build_key(icm__orphan_keys *k, const parts *p)
{
    icm__buf_clear(&k->key);
    static const char zero[4] = {0, 0, 0, 0};
    if (icm__buf_put(&k->key, zero, sizeof zero) != 0 || put_path_key(&k->key, p) != 0)
        return ICM_ENOMEM;
    return 0;
}

static void set_key_origin(icm__orphan_keys *k, uint32_t idx)
{
    memcpy(k->key.data, &idx, sizeof idx);
}

const char *icm__okeys_last_path(const icm__orphan_keys *k)
{
    return k->key.data != NULL ? k->key.data + 4 : "";
}

const void *icm__okeys_last_key(const icm__orphan_keys *k, size_t *len)
{
    *len = k->key.len;
    return k->key.data != NULL ? (const void *)k->key.data : (const void *)"";
}

/* Build k->key (origin index left 0) for a location, with its canonical scheme and
 * authority in k->scheme and k->authority. */
static int build_listed_key(icm__orphan_keys *k, const char *location)
{
    parts p;
    split(location, &p);
    int rc = canonical_origin(k, &p);
    return rc == 0 ? build_key(k, &p) : rc;
}

/* Build k->key for a referenced location (its origin becomes a referenced one). */
static int build_ref_key(icm__orphan_keys *k, const char *location)
{
    uint32_t idx;
    int rc = build_listed_key(k, location);
    if (rc == 0)
        rc = origin_index(k, k->scheme.data, k->authority.data, &idx);
    if (rc == 0)
        set_key_origin(k, idx);
    return rc;
}

int icm__okeys_add(icm__orphan_keys *k, const char *location, bool *added)
{
    if (added != NULL)
        *added = false;
    int rc = icm__okeys_flush(k);
    if (rc == 0)
        rc = build_ref_key(k, location);
    return rc != 0 ? rc : icm__pathset_add_key(k->set, k->key.data, k->key.len, added);
}

int icm__okeys_hash(icm__orphan_keys *k, const char *location, icm__pathset_hash *out)
{
    int rc = build_ref_key(k, location);
    if (rc == 0)
        *out = icm__pathset_hash_key(k->key.data, k->key.len);
    return rc;
}

void icm__okeys_on_new(icm__orphan_keys *k,
                       void (*fn)(unsigned tag, icm__pathset_hash hash, void *payload),
                       void *payload)
{
    k->on_new = fn;
    k->on_new_payload = payload;
}

/* Insert the oldest queued hash. */
static int insert_oldest(icm__orphan_keys *k)
{
    icm__okey_pending *q = &k->pending[k->pending_first];
    bool added = false;
    int rc = icm__pathset_add_hash(k->set, q->hash, &added);
    if (rc != 0)
        return rc; /* stays queued: nothing is lost */
    k->pending_first = (k->pending_first + 1) % ICM__OKEYS_PENDING;
    k->pending_len--;
    if (added && k->on_new != NULL)
        k->on_new(q->tag, q->hash, k->on_new_payload);
    return 0;
}

int icm__okeys_add_later(icm__orphan_keys *k, icm__pathset_hash hash, unsigned tag)
{
    int rc = k->pending_len == ICM__OKEYS_PENDING ? insert_oldest(k) : 0;
    if (rc != 0)
        return rc;
    icm__pathset_prefetch(k->set, hash);
    k->pending[(k->pending_first + k->pending_len) % ICM__OKEYS_PENDING] =
        (icm__okey_pending){hash, tag};
    k->pending_len++;
    return 0;
}

int icm__okeys_flush(icm__orphan_keys *k)
{
    int rc = 0;
    while (rc == 0 && k->pending_len > 0)
        rc = insert_oldest(k);
    return rc;
}

/* Whether referenced origin o covers a listed (scheme, authority): same scheme, and the same
 * authority unless the referenced one is empty (a wildcard, as in Java). */
static bool origin_covers(const icm__origin *o, const char *scheme, const char *authority)
{
    return strcmp(o->scheme, scheme) == 0 &&
           (o->authority[0] == '\0' || strcmp(o->authority, authority) == 0);
}

int icm__okeys_probe(icm__orphan_keys *k, const char *location, icm__okey_probe *out)
{
    out->ready = false;
    int rc = icm__okeys_flush(k);
    if (rc != 0 || k->n_origins != 1)
        return rc;
    if ((rc = build_listed_key(k, location)) != 0)
        return rc;
    set_key_origin(k, 0);
    out->hash = icm__pathset_hash_key(k->key.data, k->key.len);
    out->covers = origin_covers(&k->origins[0], k->scheme.data, k->authority.data);
    out->ready = true;
    icm__pathset_prefetch(k->set, out->hash);
    return 0;
}

icm__okey_match icm__okeys_probe_match(const icm__orphan_keys *k, const icm__okey_probe *probe,
                                       size_t *conflict_origin)
{
    if (!icm__pathset_contains_hash(k->set, probe->hash))
        return ICM__OKEY_NONE;
    if (probe->covers)
        return ICM__OKEY_EXACT;
    if (conflict_origin != NULL)
        *conflict_origin = 0;
    return ICM__OKEY_CONFLICT;
}

int icm__okeys_lookup(icm__orphan_keys *k, const char *location, icm__okey_match *out,
                      size_t *conflict_origin)
{
    *out = ICM__OKEY_NONE;
    int rc = icm__okeys_flush(k);
    if (rc == 0)
        rc = build_listed_key(k, location);
    const char *scheme = k->scheme.data, *authority = k->authority.data;
    if (rc != 0) {
        *out = ICM__OKEY_EXACT; /* a caller ignoring the error still keeps the file */
        return rc;
    }
    for (size_t i = 0; i < k->n_origins; i++) {
        set_key_origin(k, (uint32_t)i);
        if (!icm__pathset_contains_key(k->set, k->key.data, k->key.len))
            continue;
        if (origin_covers(&k->origins[i], scheme, authority)) {
            *out = ICM__OKEY_EXACT;
            return 0;
        }
        *out = ICM__OKEY_CONFLICT;
        if (conflict_origin != NULL)
            *conflict_origin = i;
    }
    return 0;
}
