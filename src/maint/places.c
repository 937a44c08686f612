/*
 * maint/places.c: where a place really is, and another catalog table's places (places.h).
 * Only reads storage: icm_fileio_resolve (a realpath) per prefix looked at, and a stat per
 * folder where places are compared by identity.
 */
#include <string.h>

#include "maint/places.h"
#include "icemaint/errors.h"
#include "util/location.h"
#include "util/mounts.h"
#include "util/util.h"

size_t icm__place_floor(const char *loc)
{
    icm__location_parts p; /* the one location parser (util/location_id.h) */
    if (!icm__location_split(loc, strlen(loc), &p))
        return 0;
    if (p.local)
        return p.path[0] == '/' ? (size_t)(p.path - loc) + 1 : 0;
    return p.authority_len > 0 ? (size_t)(p.authority - loc) + p.authority_len : 0;
}

int icm__place_real(icm_fileio *io, const char *location, char **out)
{
    *out = NULL;
    if (location == NULL || !icm__location_is_absolute(location))
        return 0;
    size_t floor = icm__place_floor(location);
    if (floor == 0)
        return 0;
    char *real = NULL;
    size_t len = icm__location_trim_len(location);
    for (;;) {
        char *prefix = icm__strndup(location, len);
        if (prefix == NULL)
            return ICM_ENOMEM;
        int rc = icm_fileio_resolve(&real, io, prefix);
        icm__free(prefix);
        if (rc == 0)
            break;
        if (rc != ICM_ENOTFOUND && rc != ICM_EUNSUPPORTED && rc != ICM_EINVALID)
            return rc; /* ICM_ENOMEM, or where it is cannot be told (the error says why) */
        icm_error_clear();
        if (rc != ICM_ENOTFOUND || len <= floor)
            return 0; /* no such place for the back end: names are compared */
        /* One segment up: the rest is appended to where the prefix really is. */
        while (len > floor && location[len - 1] != '/')
            len--;
        while (len > floor && location[len - 1] == '/')
            len--;
    }
    const char *rest = location + len;
    while (*rest == '/')
        rest++;
    if (rest[0] == '\0') {
        *out = real;
        return 0;
    }
    char *joined = icm__location_join(real, rest);
    icm_free(real);
    if (joined == NULL)
        return ICM_ENOMEM;
    int rc = icm__location_key(joined, out); /* the missing rest's `.` and `..`, by name */
    icm__free(joined);
    return rc;
}

bool icm__place_within(const char *a, const char *real_a, const char *b, const char *real_b,
                       bool strict, const icm__mounts *ms)
{
    if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0')
        return false;
    if (strict ? icm__location_is_inside(a, b) : icm__location_strip_prefix(a, b, NULL))
        return true;
    if (real_a == NULL || real_b == NULL)
        return false;
    if (strict ? icm__location_is_inside(real_a, real_b)
               : icm__location_strip_prefix(real_a, real_b, NULL))
        return true;
    /* One folder at two paths (a bind mount, a share mounted twice): by identity. */
    const char *rest;
    return icm__place_identity_below(real_a, real_b, &rest, ms) &&
           (!strict || rest[0] != '\0');
}

bool icm__place_identity_below(const char *real_a, const char *real_b, const char **rest,
                               const icm__mounts *ms)
{
    const char *la = real_a != NULL ? icm__location_local_part(real_a) : NULL;
    const char *lb = real_b != NULL ? icm__location_local_part(real_b) : NULL;
    if (la == NULL || lb == NULL || la[0] != '/' || lb[0] != '/')
        return false;
    if (ms != NULL) {
        size_t holder = icm__mounts_holding(ms, lb);
        if (holder != SIZE_MAX && !icm__mounts_device_shared(ms, holder))
            return false;
    }
    return icm__identity_above(la, lb, rest);
}

static int add_place(icm__other_places *ps, icm_fileio *io, const char *what, char *name,
                     bool file, bool written)
{
    if (name == NULL)
        return ICM_ENOMEM;
    icm__other_place *p = &ps->p[ps->n];
    *p = (icm__other_place){what, name, NULL, NULL, file, written};
    ps->n++;
    int rc = icm__place_real(io, name, &p->real);
    if (rc == 0 || rc == ICM_ENOMEM)
        return rc;
    p->unresolved = icm__strdup(icm_error_last()->message);
    icm_error_clear();
    return p->unresolved != NULL ? 0 : ICM_ENOMEM;
}

int icm__other_places_init(icm__other_places *ps, icm_fileio *io, const icm__other_table *t)
{
    static const char *const what[] = ICM__OTHER_TABLE_ROOT_NAMES;
    _Static_assert(ICM__ARRAY_LEN(what) == ICM__OTHER_TABLE_N_ROOTS,
                   "a name for each root of icm__other_table");
    memset(ps, 0, sizeof *ps);
    int rc = 0;
    if (t->pointer != NULL && t->pointer[0] != '\0')
        rc = add_place(ps, io, "metadata file", icm__strdup(t->pointer), true, false);
    for (size_t i = 0; rc == 0 && i < ICM__OTHER_TABLE_N_ROOTS; i++)
        if (t->roots[i] != NULL && t->roots[i][0] != '\0')
            rc = add_place(ps, io, what[i], icm__strdup(t->roots[i]), false, i > 0);
    /* Where its files go by default (Java's LocationProviders, and any file written before a
     * write path was set): data/ and metadata/ below its location. */
    const char *location = t->roots[0];
    if (rc == 0 && location != NULL && location[0] != '\0')
        rc = add_place(ps, io, "data folder (<location>/data)",
                       icm__location_join(location, "data"), false, true);
    if (rc == 0 && location != NULL && location[0] != '\0')
        rc = add_place(ps, io, "metadata folder (<location>/metadata)",
                       icm__location_join(location, "metadata"), false, true);
    /* Its metadata could not be read: where else its files go cannot be told. A place whose
     * whereabouts cannot be told keeps the callers on the safe side (the sweep refuses, expiry
     * holds every file), named as its location, or its metadata file when that is unknown. */
    if (rc == 0 && t->unreadable != NULL) {
        bool known = location != NULL && location[0] != '\0';
        rc = add_place(ps, io, "data", icm__strdup(known ? location : t->pointer), !known,
                       false);
        if (rc == 0) {
            icm__other_place *p = &ps->p[ps->n - 1];
            icm__free(p->unresolved);
            if ((p->unresolved = icm__strdup(t->unreadable)) == NULL)
                rc = ICM_ENOMEM;
        }
    }
    if (rc != 0)
        icm__other_places_dispose(ps);
    return rc;
}

void icm__other_places_dispose(icm__other_places *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        icm__free(ps->p[i].name);
        icm__free(ps->p[i].real);
        icm__free(ps->p[i].unresolved);
    }
    ps->n = 0;
}
