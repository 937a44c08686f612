/*
 * txn/txn.c: the transaction object (include/icemaint/transaction.h): queueing operations,
 * the ledger of owned files, the commit loop with retries and backoff, and the cleanup rule
 * (which owned files go after which outcome). Applying operations to a base is in
 * txn_apply.c / txn_snapshot.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_internal.h"
#include "maint/other_format.h"
#include "parquet/parquet.h"
#include "spec/metadata_internal.h"
#include "table/commit.h"
#include "txn/txn_addfiles_schema.h"
#include "txn/txn_internal.h"
#include "util/location.h"

/* ------------------------------------------------------------------------------------------ */
/* life cycle                                                                                  */

static void free_add(void *p)
{
    txn_add *a = p;
    icm_data_file *d = &a->df;
    icm__free((char *)d->file_path);
    icm__free((char *)d->file_format_name);
    icm__free((char *)d->referenced_data_file);
    icm_raw *raws[] = {&d->partition,    &d->column_sizes, &d->value_counts,
                       &d->null_value_counts, &d->nan_value_counts, &d->lower_bounds,
                       &d->upper_bounds, &d->key_metadata, &d->split_offsets,
                       &d->equality_ids};
    for (size_t i = 0; i < ICM__ARRAY_LEN(raws); i++)
        icm__free((void *)raws[i]->data);
    icm__free(a);
}

static void free_snapshot_op(txn_snapshot_op *s)
{
    if (s == NULL)
        return;
    icm__ptrvec_dispose(&s->adds, free_add);
    icm__ptrvec_dispose(&s->removes, icm__free);
    icm__free(s->data_manifest.location);
    icm__free(s->delete_manifest.location);
    icm__free(s);
}

static void free_op(void *p)
{
    txn_op *op = p;
    icm__free(op->key);
    icm__free(op->value);
    icm__free(op->name);
    free_snapshot_op(op->snap);
    icm__free(op);
}

static void free_owned(void *p)
{
    txn_owned *o = p;
    icm__free(o->location);
    icm__free(o);
}

int icm_txn_new(icm_txn **out, icm_table *table)
{
    *out = NULL;
    if (table == NULL)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "no table given");
    if (icm_table_is_read_only(table))
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EREADONLY, icm_table_get_identifier(table),
                              "cannot start a transaction on a read-only (static) table");
    icm_txn *txn = icm__calloc(1, sizeof *txn);
    if (txn == NULL)
        return ICM_ENOMEM;
    int rc = icm__uuid4(txn->commit_uuid);
    if (rc != 0) {
        icm__free(txn);
        return rc;
    }
    txn->table = table;
    *out = txn;
    return 0;
}

/* Delete owned files selected by `keep_attempt` (0: all; else those not used by it). Best
 * effort: a delete that fails leaves an orphan, and the caller's error stays the last error. */
static size_t delete_owned(icm_txn *txn, int keep_attempt)
{
    icm__error_saved *saved = icm__error_save();
    icm_fileio *io = icm_table_get_fileio(txn->table);
    size_t n = 0;
    for (size_t i = 0; i < txn->owned.len; i++) {
        const txn_owned *o = txn->owned.items[i];
        if (keep_attempt != 0 && o->last_attempt == keep_attempt)
            continue;
        if (icm_fileio_delete(io, o->location) == 0)
            n++;
    }
    icm__error_restore(saved);
    return n;
}

int icm_txn_abort(icm_txn *txn)
{
    if (txn == NULL)
        return 0;
    if (txn->state == TXN_OPEN) {
        delete_owned(txn, 0);
        txn->state = TXN_ABORTED;
    }
    return 0;
}

void icm_txn_free(icm_txn *txn)
{
    if (txn == NULL)
        return;
    icm_txn_abort(txn);
    icm__ptrvec_dispose(&txn->ops, free_op);
    icm__ptrvec_dispose(&txn->owned, free_owned);
    icm__free(txn->base_ids);
    icm__free(txn->base_uuid);
    icm__free(txn);
}

/* ------------------------------------------------------------------------------------------ */
/* the owned-file ledger                                                                       */

/* One owned file for every spelling of it: by the location identity (`/t/./x` is `/t/x`) and
 * by the guards' equality (`s3://b/k/` is the place `s3://b/k`). Finding more can only mark a
 * file used (kept); an identity that cannot be built for lack of memory counts as a match. */
static bool same_file(const char *a, const char *b)
{
    bool same = strcmp(a, b) == 0 || icm__location_equal(a, b);
    return same || icm__location_id_equal(a, b, ICM__LOCATION_ID_DEFAULT, &same) != 0 || same;
}

static txn_owned *find_owned(icm_txn *txn, const char *location)
{
    for (size_t i = 0; i < txn->owned.len; i++) {
        txn_owned *o = txn->owned.items[i];
        if (same_file(o->location, location))
            return o;
    }
    return NULL;
}

const char *icm__txn_owned_location(icm_txn *txn, const char *location, int keep_attempt)
{
    const txn_owned *o = find_owned(txn, location);
    return o != NULL && (keep_attempt == 0 || o->last_attempt != keep_attempt) ? o->location
                                                                               : NULL;
}

int icm__txn_own(icm_txn *txn, const char *location, bool used_now)
{
    txn_owned *o = find_owned(txn, location);
    if (o == NULL) {
        o = icm__calloc(1, sizeof *o);
        if (o == NULL)
            return ICM_ENOMEM;
        o->location = icm__strdup(location);
        if (o->location == NULL || icm__ptrvec_push(&txn->owned, o) != 0) {
            free_owned(o);
            return ICM_ENOMEM;
        }
    }
    if (used_now)
        o->last_attempt = txn->attempt;
    return 0;
}

void icm__txn_disown(icm_txn *txn, const char *location)
{
    for (size_t i = 0; i < txn->owned.len; i++) {
        txn_owned *o = txn->owned.items[i];
        if (strcmp(o->location, location) != 0)
            continue;
        free_owned(o);
        memmove(&txn->owned.items[i], &txn->owned.items[i + 1],
                (txn->owned.len - i - 1) * sizeof *txn->owned.items);
        txn->owned.len--;
        return;
    }
}

bool icm__txn_mark_used(icm_txn *txn, const char *location)
{
    txn_owned *o = find_owned(txn, location);
    if (o != NULL)
        o->last_attempt = txn->attempt;
    return o != NULL;
}

int icm__txn_invalid(const icm_txn *txn, int code, const char *location, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (txn->attempt <= 1)
        return icm__error_set(ICM_ERRCLASS_TXN, code, location, "%s", msg);
    return icm__error_set(ICM_ERRCLASS_TXN, ICM_ECOMMIT_FAILED, location,
                          "commit failed: after a concurrent commit (attempt %d) %s",
                          txn->attempt, msg);
}

/* ------------------------------------------------------------------------------------------ */
/* queueing                                                                                    */

static int check_open(const icm_txn *txn)
{
    if (txn == NULL)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "no transaction given");
    if (txn->state != TXN_OPEN)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL,
                              "the transaction was already committed or aborted");
    return 0;
}

static int push_op(icm_txn *txn, txn_op *op)
{
    if (icm__ptrvec_push(&txn->ops, op) != 0) {
        free_op(op);
        return ICM_ENOMEM;
    }
    return 0;
}

static txn_op *new_op(txn_op_kind kind)
{
    txn_op *op = icm__calloc(1, sizeof *op);
    if (op != NULL)
        op->kind = kind;
    return op;
}

/* The snapshot the next data change joins: the last queued op when it is an open (non-replace)
 * snapshot, else a new one. */
static txn_snapshot_op *snapshot_op(icm_txn *txn, bool fresh, bool replace)
{
    if (!fresh && txn->ops.len > 0) {
        txn_op *last = txn->ops.items[txn->ops.len - 1];
        if (last->kind == TXN_OP_SNAPSHOT && !last->snap->replace)
            return last->snap;
    }
    txn_op *op = new_op(TXN_OP_SNAPSHOT);
    if (op == NULL)
        return NULL;
    op->snap = icm__calloc(1, sizeof *op->snap);
    if (op->snap == NULL) {
        free_op(op);
        return NULL;
    }
    op->snap->replace = replace;
    txn_snapshot_op *snap = op->snap;
    return push_op(txn, op) == 0 ? snap : NULL; /* push_op frees op on failure */
}

/* After a failed queueing call: drop the snapshot op it created (ops had `len_before` ops), so
 * the queue is exactly as before the call. */
static int undo_new_op(icm_txn *txn, size_t len_before, int rc)
{
    while (txn->ops.len > len_before) {
        txn->ops.len--;
        free_op(txn->ops.items[txn->ops.len]);
    }
    return rc;
}

static int copy_raw(icm_raw *dst, icm_raw src)
{
    *dst = (icm_raw){NULL, 0};
    if (src.data == NULL)
        return 0;
    uint8_t *d = icm__malloc(src.len ? src.len : 1);
    if (d == NULL)
        return ICM_ENOMEM;
    if (src.len)
        memcpy(d, src.data, src.len);
    *dst = (icm_raw){d, src.len};
    return 0;
}

static int copy_str(const char **dst, const char *src)
{
    *dst = NULL;
    if (src == NULL)
        return 0;
    *dst = icm__strdup(src);
    return *dst != NULL ? 0 : ICM_ENOMEM;
}

static int check_data_file(const icm_txn *txn, const icm_data_file *f)
{
    if (f == NULL || f->file_path == NULL || f->file_path[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL,
                              "data file description without file_path");
    const char *table_loc = icm_table_metadata_location(icm_table_get_metadata(txn->table));
    if (!icm__location_recordable(f->file_path, table_loc)) /* issue #16, class 1 */
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, f->file_path,
                              "a data file is recorded by an absolute location, never a "
                              "relative one (readers would resolve it against their own "
                              "working directory)");
    if (f->record_count < 0 || f->file_size_in_bytes < 0)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, f->file_path,
                              "record_count and file_size_in_bytes must not be negative");
    if (f->content < ICM_FILE_CONTENT_DATA || f->content > ICM_FILE_CONTENT_EQUALITY_DELETES)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, f->file_path,
                              "data file content out of range");
    return 0;
}

/* A caller's file (not one icm_txn_new_data_file handed out) inside an icemaint trash, by
 * any name (its own, a link's, another mount's): `trash expire` and `trash restore` see no
 * table that references it (adversary round 7, finding 3). */
static int check_not_trashed(icm_txn *txn, const icm_data_file *f)
{
    if (find_owned(txn, f->file_path) != NULL)
        return 0;
    return icm__other_format_refuse_trashed(icm_table_get_fileio(txn->table), f->file_path,
                                            "added");
}

static int copy_add(const icm_data_file *f, bool check_duplicate, txn_add **out)
{
    *out = NULL;
    txn_add *a = icm__calloc(1, sizeof *a);
    if (a == NULL)
        return ICM_ENOMEM;
    a->check_duplicate = check_duplicate;
    icm_data_file *d = &a->df;
    *d = *f;
    d->file_path = d->file_format_name = d->referenced_data_file = NULL;
    const icm_raw *src[] = {&f->partition,     &f->column_sizes, &f->value_counts,
                            &f->null_value_counts, &f->nan_value_counts, &f->lower_bounds,
                            &f->upper_bounds,  &f->key_metadata, &f->split_offsets,
                            &f->equality_ids};
    icm_raw *dst[] = {&d->partition,     &d->column_sizes, &d->value_counts,
                      &d->null_value_counts, &d->nan_value_counts, &d->lower_bounds,
                      &d->upper_bounds,  &d->key_metadata, &d->split_offsets,
                      &d->equality_ids};
    for (size_t i = 0; i < ICM__ARRAY_LEN(dst); i++)
        *dst[i] = (icm_raw){NULL, 0};
    int rc = copy_str(&d->file_path, f->file_path);
    if (rc == 0)
        rc = copy_str(&d->file_format_name, f->file_format_name);
    if (rc == 0)
        rc = copy_str(&d->referenced_data_file, f->referenced_data_file);
    for (size_t i = 0; rc == 0 && i < ICM__ARRAY_LEN(dst); i++)
        rc = copy_raw(dst[i], *src[i]);
    if (rc != 0) {
        free_add(a);
        return rc;
    }
    d->file_path_len = strlen(d->file_path);
    *out = a;
    return 0;
}

static int queue_add(txn_snapshot_op *snap, const icm_data_file *f, bool check_duplicate)
{
    txn_add *a = NULL;
    int rc = copy_add(f, check_duplicate, &a);
    if (rc == 0 && icm__ptrvec_push(&snap->adds, a) != 0) {
        free_add(a);
        rc = ICM_ENOMEM;
    }
    return rc;
}

int icm_txn_append_file(icm_txn *txn, const icm_data_file *file)
{
    int rc = check_open(txn);
    if (rc == 0)
        rc = check_data_file(txn, file);
    if (rc == 0)
        rc = check_not_trashed(txn, file);
    if (rc != 0)
        return rc;
    size_t len_before = txn->ops.len;
    txn_snapshot_op *snap = snapshot_op(txn, false, false);
    rc = snap != NULL ? queue_add(snap, file, false) : ICM_ENOMEM;
    return rc == 0 ? 0 : undo_new_op(txn, len_before, rc);
}

static bool table_unpartitioned(const icm_table_metadata *md)
{
    char *fields = NULL;
    if (icm_table_metadata_spec_fields_json(&fields, md,
                                            icm_table_metadata_default_spec_id(md)) != 0)
        return false;
    bool empty = strcmp(fields, "[]") == 0;
    icm_free(fields);
    return empty;
}

int icm_txn_add_parquet_file(icm_txn *txn, const char *location)
{
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    if (location == NULL || location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "empty file location");
    /* Manifests record the path as an Avro string, which is UTF-8: other readers (PyIceberg,
     * Java) fail on every scan of a snapshot that names a path that is not. */
    if (!icm__utf8_valid(location, strlen(location)))
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, location,
                              "the file name is not valid UTF-8: Iceberg records file paths as "
                              "UTF-8 strings, so readers could not read the table; rename the "
                              "file first");
    if (!table_unpartitioned(icm_table_get_metadata(txn->table)))
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EUNSUPPORTED, location,
                              "add-files supports unpartitioned tables only (partition values "
                              "cannot be read from the file)");
    /* A trashed file: `trash expire` and `trash restore` see no table that references it
     * (adversary round 5, finding 1). */
    if ((rc = icm__other_format_refuse_trashed(icm_table_get_fileio(txn->table), location,
                                               "added")) != 0)
        return rc;
    icm_data_file df = {0};
    df.content = ICM_FILE_CONTENT_DATA;
    df.file_path = location;
    df.file_format = ICM_FILE_FORMAT_PARQUET;
    df.file_format_name = "PARQUET";
    /* Refuse a file whose columns do not fit the current schema before anything is staged:
     * readers of the new snapshot would fail on it (PyIceberg's add_files checks the same). */
    icm__parquet_schema *schema = NULL;
    rc = icm__parquet_read_schema(icm_table_get_fileio(txn->table), location, &schema,
                                  &df.file_size_in_bytes);
    if (rc == 0)
        rc = icm__txn_check_parquet_schema(icm_table_get_metadata(txn->table), schema,
                                           location);
    if (rc == 0)
        df.record_count = schema->num_rows;
    icm__parquet_schema_free(schema);
    if (rc != 0)
        return rc;
    size_t len_before = txn->ops.len;
    txn_snapshot_op *snap = snapshot_op(txn, false, false);
    rc = snap != NULL ? queue_add(snap, &df, true) : ICM_ENOMEM;
    return rc == 0 ? 0 : undo_new_op(txn, len_before, rc);
}

int icm_txn_new_data_file(char **out_location, icm_txn *txn, const char *partition_path,
                          const char *extension)
{
    *out_location = NULL;
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    if (extension == NULL || extension[0] == '\0' || strchr(extension, '/') != NULL)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL,
                              "data file extension must be a plain name such as \"parquet\"");
    /* Java's file name shape: <partition id>-<task id>-<operation uuid>-<file count>.<ext> */
    char *name = icm__sprintf("00000-0-%s-%05u.%s", txn->commit_uuid, ++txn->data_file_counter,
                              extension);
    if (name == NULL)
        return ICM_ENOMEM;
    char *loc = NULL;
    rc = icm__txn_data_location(icm_table_get_metadata(txn->table), partition_path, name, &loc);
    icm__free(name);
    if (rc == 0)
        rc = icm__txn_own(txn, loc, false);
    if (rc != 0) {
        icm__free(loc);
        return rc;
    }
    *out_location = loc;
    return 0;
}

static int queue_remove(txn_snapshot_op *snap, const char *location)
{
    if (location == NULL || location[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "empty file location");
    char *copy = icm__strdup(location);
    if (copy == NULL || icm__ptrvec_push(&snap->removes, copy) != 0) {
        icm__free(copy);
        return ICM_ENOMEM;
    }
    return 0;
}

int icm_txn_delete_file(icm_txn *txn, const char *location)
{
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    size_t len_before = txn->ops.len;
    txn_snapshot_op *snap = snapshot_op(txn, false, false);
    rc = snap != NULL ? queue_remove(snap, location) : ICM_ENOMEM;
    return rc == 0 ? 0 : undo_new_op(txn, len_before, rc);
}

int icm_txn_replace_files(icm_txn *txn, const char *const *remove, size_t n_remove,
                          const icm_data_file *add, size_t n_add)
{
    int rc = check_open(txn);
    for (size_t i = 0; rc == 0 && i < n_add; i++)
        rc = check_data_file(txn, &add[i]);
    for (size_t i = 0; rc == 0 && i < n_add; i++)
        rc = check_not_trashed(txn, &add[i]);
    if (rc == 0 && n_remove == 0)
        rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL,
                            "replace needs at least one file to remove");
    if (rc != 0)
        return rc;
    txn_snapshot_op *snap = snapshot_op(txn, true, true);
    if (snap == NULL)
        return ICM_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n_remove; i++)
        rc = queue_remove(snap, remove[i]);
    for (size_t i = 0; rc == 0 && i < n_add; i++)
        rc = queue_add(snap, &add[i], false);
    return rc == 0 ? 0 : undo_new_op(txn, txn->ops.len - 1, rc);
}

int icm_txn_set_property(icm_txn *txn, const char *key, const char *value)
{
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    if (key == NULL || key[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "empty property key");
    if ((rc = icm_table_property_check(NULL, key, value)) != 0)
        return rc;
    txn_op *op = new_op(TXN_OP_PROPERTY);
    if (op == NULL)
        return ICM_ENOMEM;
    op->key = icm__strdup(key);
    op->value = value != NULL ? icm__strdup(value) : NULL;
    if (op->key == NULL || (value != NULL && op->value == NULL)) {
        free_op(op);
        return ICM_ENOMEM;
    }
    return push_op(txn, op);
}

static int check_ref_name(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "empty ref name");
    /* Refs are keys of the metadata's JSON, whose strings are UTF-8 (jansson refuses anything
     * else, which the commit reported as out of memory); no such ref can exist either. */
    if (!icm__utf8_valid(name, strlen(name)))
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, name,
                              "the ref name is not valid UTF-8 (Iceberg metadata records ref "
                              "names as UTF-8 strings)");
    return 0;
}

int icm_txn_set_ref(icm_txn *txn, const char *name, icm_ref_type type, unsigned flags,
                    int64_t snapshot_id, const icm_ref_retention *retention)
{
    int rc = check_open(txn);
    if (rc == 0)
        rc = check_ref_name(name);
    if (rc != 0)
        return rc;
    if ((flags & ~(ICM_TXN_REF_REPLACE | ICM_TXN_REF_SNAPSHOT_ID)) != 0)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, name, "unknown flags 0x%x",
                              flags & ~(ICM_TXN_REF_REPLACE | ICM_TXN_REF_SNAPSHOT_ID));
    if (type == ICM_REF_TAG && strcmp(name, "main") == 0)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, name, "main must be a branch");
    if (type == ICM_REF_TAG && retention != NULL &&
        (retention->has_max_snapshot_age_ms || retention->has_min_snapshots_to_keep))
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, name,
                              "tags take no max-snapshot-age-ms or min-snapshots-to-keep");
    if (retention != NULL && ((retention->has_max_ref_age_ms && retention->max_ref_age_ms <= 0) ||
                              (retention->has_max_snapshot_age_ms &&
                               retention->max_snapshot_age_ms <= 0) ||
                              (retention->has_min_snapshots_to_keep &&
                               retention->min_snapshots_to_keep <= 0)))
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, name,
                              "ref retention values must be positive");
    txn_op *op = new_op(TXN_OP_SET_REF);
    if (op == NULL)
        return ICM_ENOMEM;
    op->name = icm__strdup(name);
    if (op->name == NULL) {
        free_op(op);
        return ICM_ENOMEM;
    }
    op->ref_type = type;
    op->replace = (flags & ICM_TXN_REF_REPLACE) != 0;
    op->has_snapshot_id = (flags & ICM_TXN_REF_SNAPSHOT_ID) != 0;
    op->snapshot_id = snapshot_id;
    op->has_retention = retention != NULL;
    if (retention != NULL)
        op->retention = *retention;
    return push_op(txn, op);
}

int icm_txn_remove_ref(icm_txn *txn, const char *name)
{
    int rc = check_open(txn);
    if (rc == 0)
        rc = check_ref_name(name);
    if (rc != 0)
        return rc;
    if (strcmp(name, "main") == 0)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, name,
                              "cannot remove the main branch");
    txn_op *op = new_op(TXN_OP_REMOVE_REF);
    if (op == NULL)
        return ICM_ENOMEM;
    op->name = icm__strdup(name);
    if (op->name == NULL) {
        free_op(op);
        return ICM_ENOMEM;
    }
    return push_op(txn, op);
}

int icm_txn_set_current_snapshot(icm_txn *txn, int64_t snapshot_id, bool rollback)
{
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    txn_op *op = new_op(TXN_OP_SET_CURRENT);
    if (op == NULL)
        return ICM_ENOMEM;
    op->snapshot_id = snapshot_id;
    op->has_snapshot_id = true;
    op->rollback = rollback;
    return push_op(txn, op);
}

int icm_txn_update_metadata(icm_txn *txn, icm_txn_metadata_fn fn, void *payload)
{
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    if (fn == NULL)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "no update function given");
    txn_op *op = new_op(TXN_OP_METADATA_FN);
    if (op == NULL)
        return ICM_ENOMEM;
    op->fn = fn;
    op->payload = payload;
    return push_op(txn, op);
}

/* ------------------------------------------------------------------------------------------ */
/* commit                                                                                      */

/*
 * Whether the owned files may go after a failure, once a commit request was sent. An answer
 * that says the commit did not apply (a 409, a refusal) may come from a gateway that passed the
 * request on; an attempt whose answer said conflict may have landed and been built on; and the
 * sign the table layer looks for, the attempt's own snapshot, may be gone already, expired by
 * another writer while a later snapshot carries this transaction's manifest or data files
 * (adversary rounds 19-21: refusals, conflicts, a failed reload, an earlier attempt). So the
 * files go only when the table, reloaded now, is the same table and reaches none of them from
 * a snapshot it gained since the commit began (icm__txn_reached, every attempt's files). A file
 * reached proves the commit applied; a reload or read that fails tells nothing. Either way
 * the outcome is unknown: returns ICM_ECOMMIT_UNKNOWN (message built on `reason`) with the
 * state set, nothing deleted. Returns 0 when the files may go (the error state as it was).
 */
static int keep_if_reached(icm_txn *txn, const char *reason)
{
    if (!txn->sent)
        return 0;
    icm__error_saved *saved = icm__error_save();
    char *why = icm__strdup(reason != NULL ? reason : "commit failed");
    const char *hit = NULL;
    int looked = icm__txn_reached(txn, txn->base_ids, txn->n_base_ids, 0, &hit);
    const char *uuid = icm_table_metadata_uuid(icm_table_get_metadata(txn->table));
    bool same = looked != 0 || icm__same_table_uuid(txn->base_uuid, uuid);
    if (looked == 0 && hit == NULL && same) {
        icm__error_restore(saved);
        icm__free(why);
        return 0;
    }
    icm__free(saved);
    char *read_error = looked != 0 ? icm__strdup(icm_error_last()->message) : NULL;
    txn->state = TXN_UNKNOWN;
    int rc;
    if (looked == ICM_ENOMEM)
        rc = icm__error_oom();
    else if (hit != NULL)
        rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_ECOMMIT_UNKNOWN,
                            icm_table_get_identifier(txn->table),
                            "commit outcome unknown: %s; but the table as it is now references "
                            "%s, a file this transaction wrote, so a commit of it applied; no "
                            "file of this transaction was deleted",
                            why != NULL ? why : "commit failed", hit);
    else if (!same)
        rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_ECOMMIT_UNKNOWN,
                            icm_table_get_identifier(txn->table),
                            "commit outcome unknown: %s; and the table now loaded under the name "
                            "is another one (table-uuid %s, not %s), so whether a commit of this "
                            "transaction applied cannot be checked; no file of it was deleted",
                            why != NULL ? why : "commit failed", uuid != NULL ? uuid : "none",
                            txn->base_uuid != NULL ? txn->base_uuid : "none");
    else
        rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_ECOMMIT_UNKNOWN,
                            icm_table_get_identifier(txn->table),
                            "commit outcome unknown: %s; and reading the table to check that none "
                            "of this transaction's files is referenced failed (%s); no file of "
                            "this transaction was deleted",
                            why != NULL ? why : "commit failed",
                            read_error != NULL ? read_error : "error");
    icm__free(read_error);
    icm__free(why);
    return rc;
}

/* Any failure that proves nothing was committed: delete every owned file (after a commit
 * request was sent, only while the table reaches none of them: keep_if_reached). */
static int fail_and_clean(icm_txn *txn, int rc)
{
    char *reason = icm__strdup(icm_error_last()->message);
    int kept = keep_if_reached(txn, reason);
    icm__free(reason);
    if (kept != 0)
        return kept;
    delete_owned(txn, 0);
    txn->state = TXN_FAILED;
    return rc;
}

static int fail_exhausted(icm_txn *txn, const char *reason)
{
    char *copy = icm__strdup(reason);
    int kept = keep_if_reached(txn, copy);
    if (kept != 0) {
        icm__free(copy);
        return kept;
    }
    delete_owned(txn, 0);
    txn->state = TXN_FAILED;
    int rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_ECOMMIT_FAILED,
                            icm_table_get_identifier(txn->table),
                            "commit failed after %d attempt%s: %s; the transaction's own files "
                            "were deleted",
                            txn->attempt, txn->attempt == 1 ? "" : "s",
                            copy != NULL ? copy : "conflict");
    icm__free(copy);
    return rc;
}

/* Were the snapshots of the final attempt found again in freshly loaded metadata? */
static bool committed_snapshots_found(icm_txn *txn)
{
    icm__error_saved *saved = icm__error_save();
    bool ok = icm_table_refresh(txn->table) == 0;
    icm__error_restore(saved);
    const icm_table_metadata *md = icm_table_get_metadata(txn->table);
    for (size_t i = 0; ok && i < txn->ops.len; i++) {
        const txn_op *op = txn->ops.items[i];
        if (op->kind == TXN_OP_SNAPSHOT &&
            icm_table_metadata_snapshot_by_id(md, op->snap->snapshot_id) == NULL)
            ok = false;
    }
    return ok;
}

/* Whether the table reaches an owned file the final attempt does not use, or cannot be read
 * to tell (then true: nothing goes). Without such files nothing is read. */
static bool superseded_reached(icm_txn *txn)
{
    bool any = false;
    for (size_t i = 0; i < txn->owned.len && !any; i++)
        any = ((const txn_owned *)txn->owned.items[i])->last_attempt != txn->attempt;
    if (!any)
        return false;
    icm__error_saved *saved = icm__error_save();
    const char *hit = NULL;
    int rc = icm__txn_reached(txn, txn->base_ids, txn->n_base_ids, txn->attempt, &hit);
    icm__error_restore(saved);
    return rc != 0 || hit != NULL;
}

static int finish_success(icm_txn *txn)
{
    txn->state = TXN_COMMITTED;
    /* Superseded attempts' manifests and lists, and handed-out data files that were never
     * appended, are unreferenced, but only a fresh load proves which attempt won; and an
     * attempt answered with a conflict may have landed all the same (a gateway that passed it
     * on, adversary round 20, H3): none of them goes while the table reaches it. */
    if (committed_snapshots_found(txn) && !superseded_reached(txn))
        delete_owned(txn, txn->attempt);
    icm_error_clear();
    return 0;
}

static int finish_unknown(icm_txn *txn)
{
    txn->state = TXN_UNKNOWN;
    char *reason = icm__strdup(icm_error_last()->message);
    int64_t id = 0;
    bool has = icm_txn_snapshot_id(&id, txn);
    char idtext[48] = "";
    if (has)
        snprintf(idtext, sizeof idtext, " and snapshot %" PRId64, id);
    int rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_ECOMMIT_UNKNOWN,
                            icm_table_get_identifier(txn->table),
                            "%s; no file of this transaction was deleted: reload the table and "
                            "check whether its current metadata descends from that file%s",
                            reason != NULL ? reason : "commit outcome unknown", idtext);
    icm__free(reason);
    return rc;
}

/* A failure that does not prove the commit missed: keep every file, as after an unknown
 * outcome, and say so. */
static int keep_unproven(icm_txn *txn, int rc)
{
    txn->state = TXN_UNKNOWN;
    char *reason = icm__strdup(icm_error_last()->message);
    rc = icm__error_set(ICM_ERRCLASS_TXN, rc, icm_table_get_identifier(txn->table),
                        "%s; that does not prove the commit did not happen, so no file of this "
                        "transaction was deleted",
                        reason != NULL ? reason : "commit failed");
    icm__free(reason);
    return rc;
}

/* One attempt: the operations applied to the table's current metadata, as changes. */
static int txn_attempt(icm_table *t, icm_table_changes **out, void *payload)
{
    icm_txn *txn = payload;
    txn->attempt++;
    icm_table_metadata *md = NULL;
    int rc = icm__txn_apply(txn, icm_table_get_metadata(t), out, &md);
    icm_table_metadata_free(md);
    txn->apply_failed = rc != 0;
    return rc;
}

/*
 * Which outcomes prove that this transaction's commit did not land, so its own files may go (a
 * whitelist: any other code keeps them). A definitive rejection (ICM_ECOMMIT_FAILED: CAS lost,
 * a requirement failed), and the codes icm_table_commit_changes returns only before anything
 * was swapped (refused, read-only, bad or unsupported input, an I/O or allocation failure
 * while preparing or writing the new metadata file). A REST catalog's refusals of the commit
 * request itself are of these: 400 (ICM_EINVALID), 404 (ICM_ENOTFOUND), and 401/403
 * (ICM_EAUTH: refused before it was applied, also after a renewed token; Java's
 * CleanableFailure; an authentication that fails before the request is sent is likewise
 * nothing applied). Never ICM_ECOMMIT_UNKNOWN.
 */
static bool cleanable(int rc)
{
    switch (rc) {
    case ICM_ECOMMIT_FAILED:
    case ICM_EREFUSED:
    case ICM_EREADONLY:
    case ICM_EINVALID:
    case ICM_EUNSUPPORTED:
    case ICM_ENOTFOUND:
    case ICM_EEXISTS:
    case ICM_EAUTH:
    case ICM_EIO:
    case ICM_ENOMEM:
        return true;
    default:
        return false;
    }
}

int icm_txn_commit(icm_txn *txn)
{
    int rc = check_open(txn);
    if (rc != 0)
        return rc;
    if (txn->ops.len == 0) {
        txn->state = TXN_COMMITTED;
        return 0;
    }
    icm__free(txn->base_ids);
    icm__free(txn->base_uuid);
    txn->base_uuid = NULL;
    const char *uuid = icm_table_metadata_uuid(icm_table_get_metadata(txn->table));
    if (uuid != NULL && (txn->base_uuid = icm__strdup(uuid)) == NULL)
        return ICM_ENOMEM;
    rc = icm__txn_base_ids(icm_table_get_metadata(txn->table), &txn->base_ids,
                           &txn->n_base_ids);
    if (rc != 0)
        return rc;
    icm__commit_policy policy;
    icm__commit_policy_read(icm_table_get_metadata(txn->table), &policy);
    icm__commit_outcome outcome;
    rc = icm__table_commit_retrying(txn->table, &policy, txn_attempt, txn, &outcome);
    if (rc == 0)
        return finish_success(txn);
    txn->sent = outcome.attempts > 0;
    if (txn->apply_failed)
        return fail_and_clean(txn, rc); /* this attempt sent nothing; an earlier one may have */
    if (outcome.refresh_failed) {
        char *why = icm__sprintf("a conflict, then reloading the table failed: %s",
                                 icm_error_last()->message);
        rc = fail_exhausted(txn, why != NULL ? why : "reloading the table failed");
        icm__free(why);
        return rc;
    }
    if (rc == ICM_ECOMMIT_FAILED)
        return fail_exhausted(txn, icm_error_last()->message);
    if (rc == ICM_ECOMMIT_UNKNOWN)
        return finish_unknown(txn);
    if (!cleanable(rc))
        return keep_unproven(txn, rc);
    return fail_and_clean(txn, rc); /* refused, or failed before anything was swapped */
}

int icm_txn_attempts(const icm_txn *txn)
{
    return txn != NULL ? txn->attempt : 0;
}

bool icm_txn_snapshot_id(int64_t *out, const icm_txn *txn)
{
    if (txn == NULL || txn->attempt == 0)
        return false;
    for (size_t i = txn->ops.len; i-- > 0;) {
        const txn_op *op = txn->ops.items[i];
        if (op->kind == TXN_OP_SNAPSHOT && op->snap->has_snapshot_id) {
            *out = op->snap->snapshot_id;
            return true;
        }
    }
    return false;
}
