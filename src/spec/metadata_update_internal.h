/*
 * spec/metadata_update_internal.h: what the two halves of the requirements-and-updates module
 * share (metadata_update.c: building, wire form, requirements; metadata_update_apply.c:
 * applying updates to a base). Internal.
 */
#ifndef ICM_SPEC_METADATA_UPDATE_INTERNAL_H
#define ICM_SPEC_METADATA_UPDATE_INTERNAL_H

#include "spec/metadata_internal.h"

/* Each requirement and update is kept as the JSON object the REST OpenAPI defines. */
struct icm_table_changes {
    json_t *requirements; /* array of TableRequirement objects */
    json_t *updates;      /* array of TableUpdate objects */
};

/* The icm_update_kind of an update object by its `action`; -1 when unknown. */
int icm__update_kind_of(json_t *u);

/* Integer member `key` of `o`, else `dflt`. */
static inline int64_t icm__json_int_or(json_t *o, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

#endif /* ICM_SPEC_METADATA_UPDATE_INTERNAL_H */
