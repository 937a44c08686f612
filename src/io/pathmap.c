/*
 * io/pathmap.c: a FileIO wrapper that redirects location prefixes (`--path-map FROM=TO`).
 *
 * Table metadata names files where the writer saw them (`s3://bucket/wh/t/...`,
 * `/test-warehouse/...`, repo-relative `data/persistent/...`); a local copy lives elsewhere.
 * This wrapper sends every operation on a location below a rule's FROM to TO + the rest, and
 * maps listed locations back, so the layers above only ever see the names the metadata uses.
 * It never rewrites file contents.
 *
 * Prefix matching uses icm__location_strip_prefix (path-segment boundary; local forms compare
 * equal; URIs byte-exact). When several rules match, the one matching the most of the location
 * (the shortest rest) wins. The rules are immutable after creation, so the wrapper is as
 * thread-safe as its inner back end.
 */
#include <string.h>

#include "icemaint/sys/fileio.h"
#include "io/fileio_internal.h"
#include "util/location.h"
#include "util/util.h"

typedef struct pm_rule {
    char *from;
    char *to;
} pm_rule;

typedef struct pathmap_fileio {
    icm_fileio base;
    icm_fileio *inner;
    pm_rule *rules;
    size_t n_rules;
} pathmap_fileio;

static const icm_fileio_methods pathmap_methods;

/* The rule whose FROM (or, with `by_target`, TO) covers `loc` most closely (longest match at a
 * segment boundary), and the part of loc below it. */
static const pm_rule *select_by(const pathmap_fileio *pm, const char *loc, bool by_target,
                                const char **rest)
{
    const pm_rule *best = NULL;
    size_t best_rest = 0;
    for (size_t i = 0; i < pm->n_rules; i++) {
        const char *r;
        const char *prefix = by_target ? pm->rules[i].to : pm->rules[i].from;
        if (!icm__location_strip_prefix(loc, prefix, &r))
            continue;
        size_t len = strlen(r);
        if (best == NULL || len < best_rest) {
            best = &pm->rules[i];
            best_rest = len;
            *rest = r;
        }
    }
    return best;
}

/* The rule that applies to `loc` and the part of loc below its FROM. */
static const pm_rule *select_rule(const pathmap_fileio *pm, const char *loc, const char **rest)
{
    return select_by(pm, loc, false, rest);
}

/* New string: where `loc` really is. ICM_ENOMEM only. */
static int map_location(const pathmap_fileio *pm, const char *loc, char **out)
{
    const char *rest = NULL;
    const pm_rule *rule = select_rule(pm, loc, &rest);
    *out = rule != NULL ? icm__location_join(rule->to, rest) : icm__strdup(loc);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

static int pm_read(icm_fileio *io, const char *location, char **out, size_t *out_len)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_read(out, out_len, pm->inner, real);
    icm__free(real);
    return rc;
}

static int pm_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                         size_t len, size_t *out_read)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_read_range(out_read, pm->inner, real, offset, buf, len);
    icm__free(real);
    return rc;
}

static int pm_create_new(icm_fileio *io, const char *location, const void *data, size_t len)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_create_new(pm->inner, real, data, len);
    icm__free(real);
    return rc;
}

static int pm_write_replace(icm_fileio *io, const char *location, const void *data, size_t len)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_write_replace(pm->inner, real, data, len);
    icm__free(real);
    return rc;
}

static int pm_remove(icm_fileio *io, const char *location)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_delete(pm->inner, real);
    icm__free(real);
    return rc;
}

static int pm_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_stat(out, pm->inner, real);
    icm__free(real);
    out->location = location; /* never hand out the mapped (and now freed) name */
    return rc;
}

/*
 * One pass of a listing: the inner back end lists `inner_prefix`; each entry is renamed to
 * `orig_base` + its part below inner_prefix (or kept as is when orig_base is NULL) and is
 * reported only if `rule` is the rule that applies to that original name. The last check
 * makes every original name appear in exactly one pass, even when rules nest.
 */
typedef struct pm_pass {
    const pathmap_fileio *pm;
    const pm_rule *rule;
    const char *inner_prefix;
    const char *orig_base;
    unsigned flags; /* the caller's ICM_LIST_* flags, passed on to the inner back end */
    icm_list_cb cb;
    void *payload;
} pm_pass;

static int pm_pass_cb(const icm_file_info *info, void *payload)
{
    pm_pass *p = payload;
    char *orig = NULL;
    if (p->orig_base != NULL) {
        const char *rel;
        /* Names the mapping cannot express (dot segments) cannot be mapped back: skip. */
        if (!icm__location_strip_prefix(info->location, p->inner_prefix, &rel))
            return 0;
        orig = icm__location_join(p->orig_base, rel);
        if (orig == NULL)
            return ICM_ENOMEM;
    }
    const char *name = orig != NULL ? orig : info->location;
    const char *rest;
    int rc = 0;
    if (select_rule(p->pm, name, &rest) == p->rule) {
        icm_file_info mapped = {sizeof(icm_file_info), name, info->size_bytes, info->mtime_ms};
        rc = p->cb(&mapped, p->payload);
    }
    icm__free(orig);
    return rc;
}

static int pm_list_pass(pm_pass *pass)
{
    return icm_fileio_list_flags(pass->pm->inner, pass->inner_prefix, pass->flags, pm_pass_cb,
                                 pass);
}

static int pm_list(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                   void *payload)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real = NULL;
    int rc = map_location(pm, prefix, &real);
    if (rc < 0)
        return rc;
    /* Pass 1: the prefix itself, mapped by the rule that covers it (if any). */
    const char *rest = NULL;
    const pm_rule *rule = select_rule(pm, prefix, &rest);
    pm_pass pass = {pm, rule, real, rule != NULL ? prefix : NULL, flags, cb, payload};
    rc = pm_list_pass(&pass);
    icm__free(real);
    /* Then every rule whose FROM lies strictly below the prefix: its files live elsewhere. */
    for (size_t i = 0; rc == 0 && i < pm->n_rules; i++) {
        const pm_rule *r = &pm->rules[i];
        const char *below;
        if (!icm__location_strip_prefix(r->from, prefix, &below) || below[0] == '\0')
            continue;
        char *base = icm__location_join(prefix, below); /* FROM in the prefix's form */
        if (base == NULL)
            return ICM_ENOMEM;
        pm_pass sub = {pm, r, r->to, base, flags, cb, payload};
        rc = pm_list_pass(&sub);
        icm__free(base);
    }
    return rc;
}

/* Resolve the mapped target, then name it back through the rules (a target no rule's TO
 * covers stays as the inner back end named it). */
static int pm_resolve(icm_fileio *io, const char *location, char **out)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real = NULL, *resolved = NULL;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_resolve(&resolved, pm->inner, real);
    if (rc == 0)
        rc = icm_fileio_pathmap_unapply(out, io, resolved);
    icm__free(resolved);
    icm__free(real);
    return rc;
}

/* The companion is found at the mapped target and named beside the original name (a
 * companion lies in its file's folder, so it maps with it). */
static int pm_checksum_of(icm_fileio *io, const char *location, char **out,
                          icm_file_info *info)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char *real = NULL, *found = NULL;
    int rc = map_location(pm, location, &real);
    if (rc == 0)
        rc = icm_fileio_checksum_of(&found, info, pm->inner, real);
    if (rc == 0 && found != NULL) {
        bool oom;
        *out = icm__location_checksum_name(location, &oom);
        rc = oom ? ICM_ENOMEM : 0;
    }
    icm__free(found);
    icm__free(real);
    return rc;
}

/* Every item mapped, then one batch to the inner back end (results name the mapped places, as
 * every other error of this wrapper does). */
static int pm_delete_batch(icm_fileio *io, const char *const *locations, size_t n,
                           icm_fileio_delete_result *results)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    char **real = icm__calloc(n, sizeof *real);
    if (real == NULL)
        return ICM_ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = map_location(pm, locations[i], &real[i]);
    if (rc == 0)
        rc = icm_fileio_delete_batch(results, pm->inner, (const char *const *)real, n);
    for (size_t i = 0; i < n; i++)
        icm__free(real[i]);
    icm__free(real);
    return rc;
}

static void free_rules(pm_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        icm__free(rules[i].from);
        icm__free(rules[i].to);
    }
    icm__free(rules);
}

static void pm_free(icm_fileio *io)
{
    pathmap_fileio *pm = (pathmap_fileio *)io;
    icm_fileio_free(pm->inner);
    free_rules(pm->rules, pm->n_rules);
    icm__free(pm);
}

/* The name the inner back end sees; 1 (careful) when it cannot be made. */
static int pathmap_is_local(icm_fileio *io, const char *location)
{
    char *mapped = NULL;
    if (icm_fileio_pathmap_apply(&mapped, io, location) != 0) {
        icm_error_clear();
        return 1;
    }
    bool local = icm__fileio_deletes_locally(icm__fileio_pathmap_inner(io), mapped);
    icm__free(mapped);
    return local;
}

static const icm_fileio_methods pathmap_methods = {
    ICM_FILEIO_METHODS_VERSION,
    "pathmap",
    pm_read,
    pm_read_range,
    pm_create_new,
    pm_write_replace,
    pm_remove,
    pm_stat,
    NULL, /* list: list_flags instead */
    pm_free,
    pm_list,
    pm_resolve,
    pm_checksum_of,
    pm_delete_batch,
    NULL, /* list_range: the wrapper applies a range to the names mapped back */
    pathmap_is_local,
};

/* ICM_EINVALID unless rule i is usable and its FROM differs from every earlier rule's. */
static int check_rule(const icm_path_map *rules, size_t i)
{
    const icm_path_map *r = &rules[i];
    if (r->from == NULL || r->from[0] == '\0' || r->to == NULL || r->to[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, r->from,
                              "path map rule %zu: empty FROM or TO", i + 1);
    if (!icm__location_equal(r->from, r->from) || !icm__location_equal(r->to, r->to))
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, r->from,
                              "path map rule %zu: not a usable location prefix (%s=%s)", i + 1,
                              r->from, r->to);
    for (size_t j = 0; j < i; j++)
        if (icm__location_equal(r->from, rules[j].from))
            return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, r->from,
                                  "path map rules %zu and %zu map the same FROM", j + 1, i + 1);
    return 0;
}

static int copy_rules(const icm_path_map *rules, size_t n, pm_rule **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    pm_rule *copy = icm__calloc(n, sizeof *copy);
    if (copy == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        copy[i].from = icm__strdup(rules[i].from);
        copy[i].to = icm__strdup(rules[i].to);
        if (copy[i].from == NULL || copy[i].to == NULL) {
            free_rules(copy, n);
            return ICM_ENOMEM;
        }
    }
    *out = copy;
    return 0;
}

int icm_fileio_pathmap_new(icm_fileio **out, icm_fileio *inner_take, const icm_path_map *rules,
                           size_t n_rules)
{
    int rc = 0;
    pathmap_fileio *pm = NULL;
    if (out == NULL || inner_take == NULL || (rules == NULL && n_rules > 0)) {
        rc = icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, NULL,
                            "path map: NULL output, inner back end or rules");
        goto fail;
    }
    *out = NULL;
    for (size_t i = 0; i < n_rules; i++) {
        rc = check_rule(rules, i);
        if (rc < 0)
            goto fail;
    }
    pm = icm__calloc(1, sizeof *pm);
    if (pm == NULL) {
        rc = ICM_ENOMEM;
        goto fail;
    }
    rc = copy_rules(rules, n_rules, &pm->rules);
    if (rc < 0)
        goto fail;
    pm->base.methods = &pathmap_methods;
    pm->inner = inner_take;
    pm->n_rules = n_rules;
    *out = &pm->base;
    return 0;
fail:
    icm__free(pm);
    icm_fileio_free(inner_take);
    return rc;
}

int icm_fileio_pathmap_apply(char **out, const icm_fileio *pathmap, const char *location)
{
    if (out != NULL)
        *out = NULL;
    if (pathmap == NULL || pathmap->methods != &pathmap_methods || location == NULL ||
        out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "path map apply: not a path-map FileIO or NULL argument");
    return map_location((const pathmap_fileio *)pathmap, location, out);
}

int icm_fileio_pathmap_unapply(char **out, const icm_fileio *pathmap, const char *location)
{
    if (out != NULL)
        *out = NULL;
    if (pathmap == NULL || pathmap->methods != &pathmap_methods || location == NULL ||
        out == NULL)
        return icm__error_set(ICM_ERRCLASS_IO, ICM_EINVALID, location,
                              "path map unapply: not a path-map FileIO or NULL argument");
    const pathmap_fileio *pm = (const pathmap_fileio *)pathmap;
    const char *rest = NULL;
    const pm_rule *rule = select_by(pm, location, true, &rest);
    *out = rule != NULL ? icm__location_join(rule->from, rest) : icm__strdup(location);
    return *out != NULL ? 0 : ICM_ENOMEM;
}

size_t icm__fileio_pathmap_n_rules(const icm_fileio *io)
{
    if (io == NULL || io->methods != &pathmap_methods)
        return 0;
    return ((const pathmap_fileio *)io)->n_rules;
}

void icm__fileio_pathmap_rule(const icm_fileio *io, size_t i, const char **from, const char **to)
{
    const pm_rule *rule = &((const pathmap_fileio *)io)->rules[i];
    *from = rule->from;
    *to = rule->to;
}

icm_fileio *icm__fileio_pathmap_inner(const icm_fileio *io)
{
    if (io == NULL || io->methods != &pathmap_methods)
        return NULL;
    return ((const pathmap_fileio *)io)->inner;
}
