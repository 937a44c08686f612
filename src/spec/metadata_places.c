/*
 * spec/metadata_places.c: where a metadata file says its table's files go, from its JSON alone
 * (metadata_places.h).
 */
#include <string.h>

#include "spec/metadata_internal.h"
#include "spec/metadata_places.h"

void icm__md_places_dispose(icm__md_places *p)
{
    icm__free(p->uuid);
    for (size_t i = 0; i < ICM__MD_PLACES_N_ROOTS; i++)
        icm__free(p->roots[i]);
    icm__ptrvec_dispose(&p->log, icm__free);
    memset(p, 0, sizeof *p);
}

static int copy_string(const json_t *v, char **out)
{
    const char *s = json_string_value(v);
    if (s == NULL || s[0] == '\0')
        return 0;
    return (*out = icm__strdup(s)) != NULL ? 0 : ICM_ENOMEM;
}

/* Add what `doc` says to *p: uuid and roots (when *p has none yet), its metadata-log files. */
static int extract(const json_t *doc, icm__md_places *p)
{
    static const char *const names[] = ICM__MD_PLACES_ROOT_NAMES;
    int rc = p->uuid == NULL ? copy_string(json_object_get(doc, "table-uuid"), &p->uuid) : 0;
    if (rc == 0 && p->roots[0] == NULL)
        rc = copy_string(json_object_get(doc, names[0]), &p->roots[0]);
    const json_t *props = json_object_get(doc, "properties");
    for (size_t i = 1; rc == 0 && i < ICM__MD_PLACES_N_ROOTS; i++)
        if (p->roots[i] == NULL)
            rc = copy_string(json_object_get(props, names[i]), &p->roots[i]);
    const json_t *entries = json_object_get(doc, "metadata-log");
    size_t n = json_is_array(entries) ? json_array_size(entries) : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *f = json_string_value(json_object_get(json_array_get(entries, i),
                                                          "metadata-file"));
        if (f == NULL || f[0] == '\0')
            continue;
        char *copy = icm__strdup(f);
        if (copy == NULL || icm__ptrvec_push(&p->log, copy) != 0) {
            icm__free(copy);
            rc = ICM_ENOMEM;
        }
    }
    return rc;
}

static bool same(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Refuse when the two readings of duplicate keys name different places (or uuids). */
static int agree(const icm__md_places *first, const icm__md_places *last, const char *location)
{
    static const char *const names[] = ICM__MD_PLACES_ROOT_NAMES;
    const char *what = NULL, *a = NULL, *b = NULL;
    if (!same(first->uuid, last->uuid))
        what = "table-uuid", a = first->uuid, b = last->uuid;
    for (size_t i = 0; what == NULL && i < ICM__MD_PLACES_N_ROOTS; i++)
        if (!same(first->roots[i], last->roots[i]))
            what = names[i], a = first->roots[i], b = last->roots[i];
    if (what == NULL)
        return 0;
    return icm__error_set(ICM_ERRCLASS_JSON, ICM_EINVALID, location,
                          "duplicate JSON keys give it two values of %s (%s and %s), and "
                          "readers differ in which one they take",
                          what, a != NULL ? a : "none", b != NULL ? b : "none");
}

int icm__metadata_places_lenient(const char *data, size_t len, const char *location,
                                 icm__md_places *out)
{
    memset(out, 0, sizeof *out);
    char *inflated = NULL;
    size_t inflated_len = 0;
    int rc = icm__metadata_inflate(data, len, location, &inflated, &inflated_len);
    if (rc != 0)
        return rc;
    const char *text = inflated != NULL ? inflated : (data != NULL ? data : "");
    size_t text_len = inflated != NULL ? inflated_len : len;
    json_t *doc = NULL;
    bool duplicates = false;
    rc = icm__json_parse(text, text_len, location, &doc);
    if (rc == ICM_EINVALID) {
        icm_error_clear();
        rc = icm__json_parse_lenient(text, text_len, location, false, &doc, &duplicates);
    }
    if (rc == 0 && !json_is_object(doc))
        rc = icm__error_set(ICM_ERRCLASS_JSON, ICM_EINVALID, location,
                            "the JSON document is not an object");
    if (rc == 0)
        rc = extract(doc, out);
    if (rc == 0 && duplicates) {
        /* Read again with the last duplicate winning, as Java and Python do. */
        json_t *last_doc = NULL;
        icm__md_places last = {NULL, {NULL}, ICM__PTRVEC_INIT};
        rc = icm__json_parse_lenient(text, text_len, location, true, &last_doc, NULL);
        if (rc == 0)
            rc = extract(last_doc, &last);
        if (rc == 0)
            rc = agree(out, &last, location);
        /* Both metadata-logs when they differ (a file named twice is no harm). */
        bool same_log = rc == 0 && json_equal(json_object_get(doc, "metadata-log"),
                                              json_object_get(last_doc, "metadata-log"));
        for (size_t i = 0; rc == 0 && !same_log && i < last.log.len; i++) {
            if (icm__ptrvec_push(&out->log, last.log.items[i]) != 0)
                rc = ICM_ENOMEM;
            else
                last.log.items[i] = NULL;
        }
        icm__md_places_dispose(&last);
        json_decref(last_doc);
    }
    json_decref(doc);
    icm__free(inflated);
    return rc == ICM_ENOMEM ? icm__error_oom() : rc;
}
