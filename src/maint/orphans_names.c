/*
 * maint/orphans_names.c: the sweep's name filter: what a location's name alone says (below the
 * listing location and where, hidden, excluded, icemaint's lease, a metadata document, the
 * orphan's kind), with no storage access.
 *
 * Invariant: icm__orphans_below_root answers exactly as icm__location_strip_prefix (its shortcut
 * changes no answer), and a name is hidden exactly when a component starts with '_' or '.' and is
 * not a hidden partition field's `name=`. tests/unit/test_orphans_names.c checks both, generated.
 *
 * Pure computation: called for every listed and every reached file.
 */
#include <stdbool.h>
#include <string.h>

#include "icemaint/maint.h"
#include "catalog/catalog_internal.h"
#include "maint/orphans_plan.h"
#include "util/location.h"

/* True when some directory component of `loc` is exactly `dir`. */
static bool has_dir_component(const char *loc, const char *dir)
{
    size_t n = strlen(dir);
    const char *name = icm__basename(loc);
    for (const char *s = loc; s < name; s++) {
        if ((s == loc || s[-1] == '/') && strncmp(s, dir, n) == 0 && s[n] == '/')
            return true;
    }
    return false;
}

/* icemaint's own table lease or a takeover marker beside it (maint.h): hidden, so never a
 * candidate, and not a table file either, so not counted among the hidden ones. */
bool icm__orphans_is_lease_file(const char *name)
{
    size_t n = strlen(ICM_LEASE_FILE_NAME);
    return strncmp(name, ICM_LEASE_FILE_NAME, n) == 0 &&
           (name[n] == '\0' || strncmp(name + n, ".takeover-", 10) == 0);
}

bool icm__orphans_is_metadata_json(const char *name)
{
    return icm__str_ends_with(name, ".metadata.json") ||
           icm__str_ends_with(name, ".metadata.json.gz");
}

icm_orphan_kind icm__orphan_guess_kind(const char *loc)
{
    const char *name = icm__basename(loc);
    bool in_metadata = has_dir_component(loc, "metadata");
    if (icm__orphans_is_metadata_json(name) || strcmp(name, "version-hint.text") == 0 ||
        strcmp(name, "version-hint.txt") == 0)
        return ICM_ORPHAN_METADATA;
    if (strncmp(name, "snap-", 5) == 0 && icm__str_ends_with(name, ".avro"))
        return ICM_ORPHAN_MANIFEST_LIST;
    if (in_metadata)
        return icm__str_ends_with(name, ".avro") ? ICM_ORPHAN_MANIFEST : ICM_ORPHAN_OTHER;
    if (icm__str_ends_with(name, ".puffin") || strstr(name, "delete") != NULL ||
        strstr(name, "-eq-") != NULL)
        return ICM_ORPHAN_DELETE;
    if (icm__str_ends_with(name, ".parquet") || icm__str_ends_with(name, ".orc") || icm__str_ends_with(name, ".avro") ||
        icm__str_ends_with(name, ".parq") || has_dir_component(loc, "data"))
        return ICM_ORPHAN_DATA;
    return ICM_ORPHAN_OTHER;
}

bool icm__orphan_excluded(const icm_orphan_options *o, const char *loc)
{
    for (size_t i = 0; i < o->exclude_location_count; i++)
        if (icm__location_strip_prefix(loc, o->exclude_locations[i], NULL))
            return true;
    return false;
}

bool icm__orphans_inside_roots(const plan *p, const char *loc)
{
    for (size_t i = 0; i < p->n_roots; i++)
        if (icm__location_is_inside(loc, p->roots[i]))
            return true;
    return false;
}

/* A component that is hidden: starts with '_' or '.', unless it is `<field>=...` for a
 * partition field whose own name starts with '_' or '.' (Java's HiddenPathFilter). */
static bool hidden_component(const plan *p, const char *c, size_t n)
{
    if (n == 0 || (c[0] != '_' && c[0] != '.'))
        return false;
    for (size_t i = 0; i < p->n_hidden_fields; i++) {
        size_t m = strlen(p->hidden_fields[i]);
        if (m < n && memcmp(c, p->hidden_fields[i], m) == 0 && c[m] == '=')
            return false;
    }
    return true;
}

/* Whether any component of the relative path `rest` is hidden. */
bool icm__orphans_hidden_path(const plan *p, const char *rest)
{
    const char *s = rest;
    while (*s != '\0') {
        size_t n = strcspn(s, "/");
        if (hidden_component(p, s, n))
            return true;
        s += n;
        while (*s == '/')
            s++;
    }
    return false;
}

/* icm__orphans_below_root()'s shortcut is exact only where icm__location_strip_prefix accepts a
 * name made of list_root's bytes, '/' and a plain segment (not for a URI without a bucket,
 * say): try one. */
int icm__orphans_set_root_shortcut(plan *p)
{
    p->list_root_len = icm__location_trim_len(p->list_root);
    p->root_local = icm__location_local_part(p->list_root) != NULL;
    char *sample = icm__sprintf("%.*s/x", (int)p->list_root_len, p->list_root);
    if (sample == NULL)
        return ICM_ENOMEM;
    const char *rest;
    p->root_shortcut = icm__location_strip_prefix(sample, p->list_root, &rest) &&
                       strcmp(rest, "x") == 0;
    icm__free(sample);
    return 0;
}

/*
 * icm__location_strip_prefix(loc, list_root, rest), which runs for every listed and every
 * reached file. Usually `loc` is spelled like list_root (a listing gives names in the form of
 * its prefix; a table's files share its location's form): then it starts with list_root's
 * bytes and a '/', and the part below is the answer when it has no dot segment (no '.' at the
 * start of a segment). Local paths skip extra slashes there, as the general rule does; URIs
 * keep them. Anything else takes the general rule.
 */
bool icm__orphans_below_root(const plan *p, const char *loc, const char **rest)
{
    size_t n = p->list_root_len;
    if (p->root_shortcut && strncmp(loc, p->list_root, n) == 0 && loc[n] == '/') {
        const char *r = loc + n + 1;
        while (p->root_local && *r == '/')
            r++;
        if (r[0] != '.' && strstr(r, "/.") == NULL) {
            *rest = r;
            return true;
        }
    }
    return icm__location_strip_prefix(loc, p->list_root, rest);
}

/* Whether the listing of list_root should show this reached file (it lies below list_root,
 * and is neither hidden nor excluded). */
bool icm__orphans_listing_shows(const plan *p, const char *location)
{
    const char *rest;
    return icm__orphans_below_root(p, location, &rest) && rest[0] != '\0' && !p->root_hidden &&
           !icm__orphans_hidden_path(p, rest) && !icm__orphan_excluded(p->o, location);
}
