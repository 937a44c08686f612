/*
 * txn/txn_apply.c: a transaction's queued operations, in order, as the requirements and
 * updates of one commit attempt (icemaint/update.h), each applied at once to a working copy of
 * the base so the next validates against it: snapshot producers (txn_snapshot.c) and metadata
 * updates (properties, refs, current snapshot, caller hooks), with the validations Java's
 * TableMetadata builder and SnapshotManager make. A validation failure is bad input on the first attempt and a definitive
 * commit failure on a retry (icm__txn_invalid).
 */
#include <inttypes.h>
#include <string.h>

#include "spec/metadata_internal.h"
#include "txn/txn_internal.h"

/* Does any add of this snapshot come from add-files (name mapping needed)? */
static bool needs_name_mapping(const txn_snapshot_op *op)
{
    for (size_t i = 0; i < op->adds.len; i++)
        if (((const txn_add *)op->adds.items[i])->check_duplicate)
            return true;
    return false;
}

/* set-properties or remove-properties (value NULL) of one key, applied to md at once. */
static int emit_property(icm_table_changes *c, icm_table_metadata *md, const char *key,
                         const char *value)
{
    size_t from = icm_table_changes_update_count(c);
    icm_property p = {key, value};
    int rc = value != NULL ? icm_table_changes_set_properties(c, &p, 1)
                           : icm_table_changes_remove_properties(c, &key, 1);
    return rc == 0 ? icm__table_changes_apply_in_place(c, from, md) : rc;
}

/* PyIceberg's add_files sets the default name mapping when the table has none, so readers can
 * match Parquet columns written without Iceberg field ids by name. */
static int ensure_name_mapping(icm_table_changes *c, icm_table_metadata *md)
{
    if (icm_table_metadata_property(md, "schema.name-mapping.default") != NULL)
        return 0;
    char *mapping = NULL;
    int rc = icm__txn_name_mapping_json(md, &mapping);
    if (rc == 0)
        rc = emit_property(c, md, "schema.name-mapping.default", mapping);
    icm__free(mapping);
    return rc;
}

static int apply_set_ref(icm_txn *txn, const txn_op *op, icm_table_changes *c,
                         icm_table_metadata *md)
{
    int64_t id = op->snapshot_id;
    if (!op->has_snapshot_id && !icm_table_metadata_current_snapshot_id(&id, md))
        return icm__txn_invalid(txn, ICM_ENOTFOUND, op->name,
                                "cannot set ref %s: the table has no current snapshot", op->name);
    if (icm_table_metadata_snapshot_by_id(md, id) == NULL)
        return icm__txn_invalid(txn, ICM_ENOTFOUND, op->name,
                                "cannot set ref %s: snapshot %" PRId64 " does not exist",
                                op->name, id);
    const icm_ref *existing = icm_table_metadata_ref_by_name(md, op->name);
    if (!op->replace && existing != NULL)
        return icm__txn_invalid(txn, ICM_EEXISTS, op->name, "ref %s already exists", op->name);
    if (op->replace && existing == NULL)
        return icm__txn_invalid(txn, ICM_ENOTFOUND, op->name,
                                "cannot replace ref %s: it does not exist", op->name);
    if (op->replace && existing->type != op->ref_type)
        return icm__txn_invalid(txn, ICM_EINVALID, op->name,
                                "cannot replace %s %s with a %s",
                                existing->type == ICM_REF_TAG ? "tag" : "branch", op->name,
                                op->ref_type == ICM_REF_TAG ? "tag" : "branch");
    return icm__txn_md_set_ref(c, md, op->name, op->ref_type, id,
                               op->has_retention ? &op->retention : NULL);
}

static int apply_remove_ref(icm_txn *txn, const txn_op *op, icm_table_changes *c,
                            icm_table_metadata *md)
{
    const icm_ref *ref = icm_table_metadata_ref_by_name(md, op->name);
    if (ref == NULL || ref->implicit)
        return icm__txn_invalid(txn, ICM_ENOTFOUND, op->name,
                                "cannot remove ref %s: it does not exist", op->name);
    size_t from = icm_table_changes_update_count(c);
    int rc = icm_table_changes_remove_snapshot_ref(c, op->name);
    return rc == 0 ? icm__table_changes_apply_in_place(c, from, md) : rc;
}

static bool is_ancestor(const icm_table_metadata *md, int64_t head, int64_t id)
{
    const icm_snapshot *s = icm_table_metadata_snapshot_by_id(md, head);
    /* Bounded walk: a cycle in corrupt parent links must not loop forever. */
    for (size_t n = 0; s != NULL && n <= icm_table_metadata_snapshot_count(md); n++) {
        if (s->snapshot_id == id)
            return true;
        s = s->has_parent ? icm_table_metadata_snapshot_by_id(md, s->parent_snapshot_id) : NULL;
    }
    return false;
}

static int apply_set_current(icm_txn *txn, const txn_op *op, icm_table_changes *c,
                             icm_table_metadata *md)
{
    if (icm_table_metadata_snapshot_by_id(md, op->snapshot_id) == NULL)
        return icm__txn_invalid(txn, ICM_ENOTFOUND, NULL,
                                "cannot set the current snapshot: snapshot %" PRId64
                                " does not exist",
                                op->snapshot_id);
    int64_t current;
    if (op->rollback && (!icm_table_metadata_current_snapshot_id(&current, md) ||
                         !is_ancestor(md, current, op->snapshot_id)))
        return icm__txn_invalid(txn, ICM_EINVALID, NULL,
                                "cannot roll back to snapshot %" PRId64
                                ": it is not an ancestor of the current snapshot",
                                op->snapshot_id);
    return icm__txn_md_set_ref(c, md, "main", ICM_REF_BRANCH, op->snapshot_id, NULL);
}

/* A caller's hook edits a copy; what it changed is expressed as set-properties /
 * remove-properties. A commit is requirements and updates, so a hook that changed anything
 * else cannot be committed (ICM_EUNSUPPORTED). */
static int hook_updates(icm_table_changes *c, icm_table_metadata *md,
                        const icm_table_metadata *after)
{
    const icm_table_metadata *before = md; /* read before it is edited below */
    size_t from = icm_table_changes_update_count(c);
    int rc = 0;
    size_t n = icm_table_metadata_property_count(after);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *k = NULL, *v = NULL;
        icm_table_metadata_property_at(&k, &v, after, i);
        const char *old = icm_table_metadata_property(before, k);
        if (old == NULL || strcmp(old, v) != 0) {
            icm_property p = {k, v};
            rc = icm_table_changes_set_properties(c, &p, 1);
        }
    }
    n = icm_table_metadata_property_count(before);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *k = NULL, *v = NULL;
        icm_table_metadata_property_at(&k, &v, before, i);
        if (icm_table_metadata_property(after, k) == NULL)
            rc = icm_table_changes_remove_properties(c, &k, 1);
    }
    if (rc == 0)
        rc = icm__table_changes_apply_in_place(c, from, md);
    char *want = NULL, *got = NULL;
    if (rc == 0)
        rc = icm_table_metadata_to_json(&want, NULL, after);
    if (rc == 0)
        rc = icm_table_metadata_to_json(&got, NULL, md);
    if (rc == 0 && strcmp(want, got) != 0)
        rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_EUNSUPPORTED, NULL,
                            "a metadata update function changed more than table properties; "
                            "a commit is requirements and updates, and only property changes "
                            "can be expressed from a function");
    icm_free(want);
    icm_free(got);
    return rc;
}

static int apply_fn(icm_txn *txn, const txn_op *op, icm_table_changes *c,
                    icm_table_metadata *md)
{
    icm_table_metadata *edited = NULL;
    int rc = icm_table_metadata_copy(&edited, md);
    if (rc != 0)
        return rc;
    rc = op->fn(edited, op->payload);
    if (rc != 0 && txn->attempt > 1)
        rc = icm__txn_invalid(txn, rc, NULL, "metadata update no longer applies: %s",
                              icm_error_last()->message);
    if (rc == 0)
        rc = hook_updates(c, md, edited);
    icm_table_metadata_free(edited);
    return rc;
}

static int apply_op(icm_txn *txn, txn_op *op, icm_table_changes *c, icm_table_metadata *md)
{
    switch (op->kind) {
    case TXN_OP_SNAPSHOT: {
        int rc = needs_name_mapping(op->snap) ? ensure_name_mapping(c, md) : 0;
        return rc != 0 ? rc : icm__txn_apply_snapshot(txn, op->snap, c, md);
    }
    case TXN_OP_PROPERTY:
        return emit_property(c, md, op->key, op->value);
    case TXN_OP_SET_REF:
        return apply_set_ref(txn, op, c, md);
    case TXN_OP_REMOVE_REF:
        return apply_remove_ref(txn, op, c, md);
    case TXN_OP_SET_CURRENT:
        return apply_set_current(txn, op, c, md);
    case TXN_OP_METADATA_FN:
        return apply_fn(txn, op, c, md);
    }
    return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "unknown transaction operation");
}

int icm__txn_apply(icm_txn *txn, const icm_table_metadata *base,
                   icm_table_changes **out_changes, icm_table_metadata **out)
{
    *out_changes = NULL;
    *out = NULL;
    icm_table_changes *c = NULL;
    icm_table_metadata *md = NULL;
    int rc = icm_table_changes_new(&c);
    if (rc == 0)
        rc = icm_table_metadata_copy(&md, base);
    for (size_t i = 0; rc == 0 && i < txn->ops.len; i++)
        rc = apply_op(txn, txn->ops.items[i], c, md);
    /* What the updates were decided on (Java UpdateRequirements.forUpdateTable). */
    if (rc == 0)
        rc = icm_table_changes_require_for_update(c, base);
    if (rc != 0) {
        icm_table_changes_free(c);
        icm_table_metadata_free(md);
        return rc;
    }
    *out_changes = c;
    *out = md;
    return 0;
}
