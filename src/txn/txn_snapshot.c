/*
 * txn/txn_snapshot.c: produce one snapshot of a transaction on top of the working metadata's
 * `main` branch (Java's SnapshotProducer with fast-append manifests):
 *  1. read the parent snapshot's manifest list; carry every manifest over unchanged, except
 *     manifests holding a file to remove, which are rewritten (removed files as DELETED with the
 *     new snapshot id, every other live entry as EXISTING with its sequence numbers and row id,
 *     earlier DELETED entries dropped). The same scan validates that every removed path is live
 *     and that no add-files path is live already;
 *  2. write a manifest of the added data files and one of the added delete files (reused by
 *     later attempts when nothing they depend on changed);
 *  3. write the manifest list (new manifests first), which assigns the sequence number (v2+)
 *     and v3 first row ids;
 *  4. add the snapshot with its summary (counts and totals as Java writes them) to the metadata
 *     and make it the head of `main`.
 * Every file written is recorded as owned by the transaction before anything else can fail.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "spec/metadata_internal.h"
#include "txn/txn_internal.h"
#include "util/location.h"

/* ---- owned copies of manifest list entries ---- */

typedef struct mf_vec {
    icm_manifest_file *items;
    size_t len, cap;
} mf_vec;

static void mf_dispose(icm_manifest_file *mf)
{
    icm__free((char *)mf->manifest_path);
    icm__free((void *)mf->partitions.data);
    icm__free((void *)mf->key_metadata.data);
}

static void mf_vec_dispose(mf_vec *v)
{
    for (size_t i = 0; i < v->len; i++)
        mf_dispose(&v->items[i]);
    icm__free(v->items);
    *v = (mf_vec){0};
}

static int raw_copy(icm_raw *dst, icm_raw src)
{
    *dst = (icm_raw){NULL, 0};
    if (src.data == NULL)
        return 0;
    uint8_t *d = icm__malloc(src.len ? src.len : 1);
    if (d == NULL)
        return ICM_ENOMEM;
    memcpy(d, src.data, src.len);
    *dst = (icm_raw){d, src.len};
    return 0;
}

/* Append a deep copy of `mf`. */
static int mf_vec_push(mf_vec *v, const icm_manifest_file *mf)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        icm_manifest_file *items = icm__reallocarray(v->items, cap, sizeof *items);
        if (items == NULL)
            return ICM_ENOMEM;
        v->items = items;
        v->cap = cap;
    }
    icm_manifest_file c = *mf;
    c.manifest_path = icm__strdup(mf->manifest_path);
    int rc = c.manifest_path != NULL ? 0 : ICM_ENOMEM;
    c.partitions = c.key_metadata = (icm_raw){NULL, 0};
    if (rc == 0)
        rc = raw_copy(&c.partitions, mf->partitions);
    if (rc == 0)
        rc = raw_copy(&c.key_metadata, mf->key_metadata);
    if (rc != 0) {
        mf_dispose(&c);
        return rc;
    }
    c.manifest_path_len = strlen(c.manifest_path);
    v->items[v->len++] = c;
    return 0;
}

static int collect_mf(const icm_manifest_file *mf, void *payload)
{
    return mf_vec_push(payload, mf);
}

/* ---- sorted set of location identity keys (icm__location_key) with "seen" flags ---- */

typedef struct path_entry {
    char *key;
    const char *given; /* as the caller wrote it, for messages */
    bool seen;
} path_entry;

typedef struct path_set {
    path_entry *items;
    size_t len;
} path_set;

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const path_entry *)a)->key, ((const path_entry *)b)->key);
}

static void path_set_dispose(path_set *s)
{
    for (size_t i = 0; i < s->len; i++)
        icm__free(s->items[i].key);
    icm__free(s->items);
    *s = (path_set){0};
}

static int path_set_add(path_set *s, size_t cap, const char *given)
{
    char *key = NULL;
    int rc = icm__location_key(given, &key);
    if (rc != 0)
        return rc;
    if (s->items == NULL) {
        s->items = icm__calloc(cap, sizeof *s->items);
        if (s->items == NULL) {
            icm__free(key);
            return ICM_ENOMEM;
        }
    }
    s->items[s->len++] = (path_entry){key, given, false};
    return 0;
}

static void path_set_sort(path_set *s)
{
    if (s->len > 1)
        qsort(s->items, s->len, sizeof *s->items, cmp_entry);
}

/* The entry for `location`, or NULL. *err is set on allocation failure. */
static path_entry *path_set_find(const path_set *s, const char *location, int *err)
{
    if (s->len == 0)
        return NULL;
    char *key = NULL;
    *err = icm__location_key(location, &key);
    if (*err != 0)
        return NULL;
    path_entry probe = {key, NULL, false};
    path_entry *hit = bsearch(&probe, s->items, s->len, sizeof *s->items, cmp_entry);
    icm__free(key);
    return hit;
}

/* ---- summary counters ---- */

typedef struct counts {
    int64_t added_data_files, added_delete_files, added_pos_files, added_eq_files;
    int64_t added_records, added_pos_deletes, added_eq_deletes, added_size;
    int64_t deleted_data_files, removed_delete_files, removed_pos_files, removed_eq_files;
    int64_t deleted_records, removed_pos_deletes, removed_eq_deletes, removed_size;
    icm__ptrvec partitions; /* icm_raw* copies: distinct partition tuples touched */
} counts;

static void free_raw(void *p)
{
    icm_raw *r = p;
    icm__free((void *)r->data);
    icm__free(r);
}

static int note_partition(counts *c, icm_raw part)
{
    for (size_t i = 0; i < c->partitions.len; i++) {
        const icm_raw *r = c->partitions.items[i];
        if (r->len == part.len && (part.len == 0 || memcmp(r->data, part.data, part.len) == 0))
            return 0;
    }
    icm_raw *r = icm__calloc(1, sizeof *r);
    if (r == NULL)
        return ICM_ENOMEM;
    int rc = raw_copy(r, part.data != NULL ? part : (icm_raw){(const uint8_t *)"", 0});
    if (rc == 0)
        rc = icm__ptrvec_push(&c->partitions, r);
    if (rc != 0)
        free_raw(r);
    return rc;
}

static int count_file(counts *c, const icm_data_file *d, bool added)
{
    int64_t *files, *kind_files = NULL, *rows;
    switch (d->content) {
    case ICM_FILE_CONTENT_POSITION_DELETES:
        files = added ? &c->added_delete_files : &c->removed_delete_files;
        kind_files = added ? &c->added_pos_files : &c->removed_pos_files;
        rows = added ? &c->added_pos_deletes : &c->removed_pos_deletes;
        break;
    case ICM_FILE_CONTENT_EQUALITY_DELETES:
        files = added ? &c->added_delete_files : &c->removed_delete_files;
        kind_files = added ? &c->added_eq_files : &c->removed_eq_files;
        rows = added ? &c->added_eq_deletes : &c->removed_eq_deletes;
        break;
    default:
        files = added ? &c->added_data_files : &c->deleted_data_files;
        rows = added ? &c->added_records : &c->deleted_records;
        break;
    }
    (*files)++;
    if (kind_files != NULL)
        (*kind_files)++;
    *rows += d->record_count;
    *(added ? &c->added_size : &c->removed_size) += d->file_size_in_bytes;
    return note_partition(c, d->partition);
}

/* ---- the producer ---- */

typedef struct producer {
    icm_txn *txn;
    txn_snapshot_op *op;
    icm_table_metadata *md;  /* working metadata (edited at the end) */
    icm_fileio *io;
    int fv;
    int64_t snapshot_id;
    int64_t seq;
    const icm_snapshot *parent;
    char *mdir;
    icm_avro_codec codec;
    path_set removes;
    path_set dups;           /* add-files paths that must not be live yet */
    mf_vec added;            /* manifests of added files */
    mf_vec kept;             /* carried over or rewritten */
    counts c;
} producer;

static void producer_dispose(producer *p)
{
    icm__free(p->mdir);
    path_set_dispose(&p->removes);
    path_set_dispose(&p->dups);
    mf_vec_dispose(&p->added);
    mf_vec_dispose(&p->kept);
    icm__ptrvec_dispose(&p->c.partitions, free_raw);
}

static int random_snapshot_id(int64_t *out)
{
    uint64_t v = 0;
    do {
        if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
            return icm__error_set(ICM_ERRCLASS_OS, ICM_EIO, NULL,
                                  "cannot get random bytes for a snapshot id");
        v &= (uint64_t)INT64_MAX; /* Java: positive ids */
    } while (v == 0);
    *out = (int64_t)v;
    return 0;
}

/* Write `data` at a new location in the metadata directory and own it. */
static int write_owned(producer *p, const char *name, const char *data, size_t len,
                       char **out_location)
{
    char *loc = icm__location_join(p->mdir, name);
    if (loc == NULL)
        return ICM_ENOMEM;
    /* Own before writing: an error after the object was published must still clean it. */
    int rc = icm__txn_own(p->txn, loc, true);
    if (rc == 0)
        rc = icm_fileio_create_new(p->io, loc, data, len);
    if (rc == ICM_EOUTCOME_UNKNOWN) {
        /* The answer was lost: the object may be there, or land later. It stays owned (and so
         * cleaned) only when read back with our bytes; the write fails either way. */
        char why[256];
        snprintf(why, sizeof why, "%s", icm_error_last()->message);
        bool ours = false;
        if (icm_fileio_holds(&ours, p->io, loc, data, len) != 0 || !ours)
            icm__txn_disown(p->txn, loc);
        rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_EOUTCOME_UNKNOWN, loc,
                            "%s (%s)", why,
                            ours ? "it holds our bytes: cleaned with the transaction"
                                 : "not proven ours: left in place, never cleaned");
    }
    if (rc != 0) {
        icm__free(loc);
        return rc;
    }
    *out_location = loc;
    return 0;
}

static char *next_manifest_name(producer *p)
{
    return icm__sprintf("%s-m%u.avro", p->txn->commit_uuid, p->txn->manifest_counter++);
}

/* Entries of one manifest: does any live entry match a removal (or a refused duplicate)? */
static int scan_manifest(producer *p, const icm_manifest_file *mf, const char *data, size_t len,
                         bool *out_matches)
{
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.fields = ICM_MANIFEST_FIELD_FILE_PATH;
    o.format_version = p->fv;
    o.manifest = mf;
    icm_manifest_reader *r = NULL;
    int rc = icm_manifest_reader_open(&r, data, len, mf->manifest_path, &o);
    *out_matches = false;
    while (rc == 0) {
        const icm_manifest_entry *e;
        rc = icm_manifest_reader_next(&e, r);
        if (rc != 0 || e->status == ICM_ENTRY_DELETED)
            continue;
        int err = 0;
        path_entry *hit = path_set_find(&p->removes, e->data_file.file_path, &err);
        if (hit != NULL) {
            hit->seen = true;
            *out_matches = true;
        }
        path_entry *dup = err == 0 ? path_set_find(&p->dups, e->data_file.file_path, &err)
                                   : NULL;
        if (err != 0)
            rc = err;
        else if (dup != NULL)
            rc = icm__txn_invalid(p->txn, ICM_EINVALID, dup->given,
                                  "cannot add %s: it is already a live file of the table "
                                  "(manifest %s)",
                                  dup->given, mf->manifest_path);
    }
    icm_manifest_reader_free(r);
    return rc == ICM_ITEROVER ? 0 : rc;
}

/* Rewrite a manifest without the removed files (see the file comment). */
static int rewrite_manifest(producer *p, const icm_manifest_file *mf, const char *data,
                            size_t len)
{
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.format_version = p->fv;
    o.manifest = mf;
    icm_manifest_reader *r = NULL;
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_reader_open(&r, data, len, mf->manifest_path, &o);
    icm_manifest_writer_options wo = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    wo.format_version = p->fv;
    wo.codec = p->codec;
    wo.compression_level = -1;
    if (rc == 0)
        rc = icm_manifest_writer_new_like(&w, r, &wo);
    while (rc == 0) {
        const icm_manifest_entry *e;
        rc = icm_manifest_reader_next(&e, r);
        if (rc != 0 || e->status == ICM_ENTRY_DELETED)
            continue; /* deletes of earlier snapshots are not carried (as Java) */
        icm_manifest_entry out = *e;
        int err = 0;
        if (path_set_find(&p->removes, e->data_file.file_path, &err) != NULL) {
            out.status = ICM_ENTRY_DELETED;
            out.has_snapshot_id = true;
            out.snapshot_id = p->snapshot_id;
            err = count_file(&p->c, &e->data_file, false);
        } else if (err == 0) {
            out.status = ICM_ENTRY_EXISTING;
        }
        rc = err != 0 ? err : icm_manifest_writer_add(w, &out);
    }
    if (rc == ICM_ITEROVER)
        rc = 0;
    char *bytes = NULL, *name = NULL, *loc = NULL;
    size_t blen = 0;
    icm_manifest_file sum = ICM_MANIFEST_FILE_INIT;
    if (rc == 0)
        rc = icm_manifest_writer_finish(&bytes, &blen, &sum, w);
    if (rc == 0 && (name = next_manifest_name(p)) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0)
        rc = write_owned(p, name, bytes, blen, &loc);
    if (rc == 0) {
        sum.manifest_path = loc;
        sum.has_added_snapshot_id = true;
        sum.added_snapshot_id = p->snapshot_id;
        sum.sequence_number = -1;
        sum.has_first_row_id = false;
        sum.partitions = mf->partitions; /* the live files are a subset: bounds still hold */
        sum.key_metadata = (icm_raw){NULL, 0};
        rc = mf_vec_push(&p->kept, &sum);
    }
    icm__free(loc);
    icm__free(name);
    icm_free(bytes);
    icm_manifest_writer_free(w);
    icm_manifest_reader_free(r);
    return rc;
}

static bool may_hold_live_files(const icm_manifest_file *mf)
{
    if (!mf->has_added_files_count || !mf->has_existing_files_count)
        return true;
    return mf->added_files_count > 0 || mf->existing_files_count > 0;
}

static int carry_manifest(producer *p, const icm_manifest_file *mf)
{
    if ((p->removes.len == 0 && p->dups.len == 0) || !may_hold_live_files(mf))
        return mf_vec_push(&p->kept, mf);
    char *data = NULL;
    size_t len = 0;
    int rc = icm_fileio_read(&data, &len, p->io, mf->manifest_path);
    bool matches = false;
    if (rc == 0)
        rc = scan_manifest(p, mf, data, len, &matches);
    if (rc == 0)
        rc = matches ? rewrite_manifest(p, mf, data, len) : mf_vec_push(&p->kept, mf);
    icm_free(data);
    return rc;
}

static int carry_parent(producer *p)
{
    if (p->parent == NULL)
        return 0;
    if (p->parent->manifest_list == NULL)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EUNSUPPORTED, NULL,
                              "snapshot %" PRId64 " has embedded v1 manifests and no manifest "
                              "list; new snapshots cannot be built on it",
                              p->parent->snapshot_id);
    mf_vec parent = {0};
    icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    lo.format_version = p->fv;
    int rc = icm_manifest_list_read(p->io, p->parent->manifest_list, &lo, collect_mf, &parent);
    for (size_t i = 0; rc == 0 && i < parent.len; i++)
        rc = carry_manifest(p, &parent.items[i]);
    mf_vec_dispose(&parent);
    return rc;
}

static int check_removes_seen(producer *p)
{
    for (size_t i = 0; i < p->removes.len; i++) {
        if (!p->removes.items[i].seen)
            return icm__txn_invalid(
                p->txn, ICM_EINVALID, p->removes.items[i].given,
                "cannot remove %s: it is not a live file of the table's current snapshot",
                p->removes.items[i].given);
    }
    return 0;
}

static bool is_delete_file(const icm_data_file *d)
{
    return d->content != ICM_FILE_CONTENT_DATA;
}

/* The Avro encoding of an empty array: the partition summaries of an unpartitioned spec. */
static const uint8_t empty_avro_array[1] = {0};

static bool cache_valid(const txn_cached_manifest *c, const producer *p, int32_t schema_id,
                        int32_t spec_id)
{
    return c->location != NULL && c->format_version == p->fv && c->schema_id == schema_id &&
           c->spec_id == spec_id && c->snapshot_id == p->snapshot_id;
}

static int open_added_writer(producer *p, icm_manifest_content content, int32_t schema_id,
                             int32_t spec_id, icm_manifest_writer **w)
{
    char *schema = NULL, *spec = NULL;
    int rc = icm_table_metadata_schema_json(&schema, p->md, schema_id);
    if (rc == 0)
        rc = icm_table_metadata_spec_fields_json(&spec, p->md, spec_id);
    if (rc == 0) {
        icm_manifest_writer_options o = ICM_MANIFEST_WRITER_OPTIONS_INIT;
        o.format_version = p->fv;
        o.codec = p->codec;
        o.compression_level = -1;
        o.content = content;
        o.schema_json = schema;
        o.schema_id = p->fv >= 2 ? schema_id : -1;
        o.partition_spec_json = spec;
        o.partition_spec_id = spec_id;
        rc = icm_manifest_writer_new(w, &o);
    }
    icm_free(schema);
    icm_free(spec);
    return rc;
}

/* Write (or reuse) the manifest of the added files of one content class. */
static int added_manifest(producer *p, bool deletes, txn_cached_manifest *cache)
{
    size_t n = 0;
    for (size_t i = 0; i < p->op->adds.len; i++)
        n += is_delete_file(&((txn_add *)p->op->adds.items[i])->df) == deletes;
    if (n == 0)
        return 0;
    if (deletes && p->fv < 2)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL,
                              "delete files need table format version 2 or later");
    int32_t schema_id = icm_table_metadata_current_schema_id(p->md);
    int32_t spec_id = icm_table_metadata_default_spec_id(p->md);
    if (!cache_valid(cache, p, schema_id, spec_id)) {
        icm__free(cache->location); /* a stale one stays owned: superseded, deleted later */
        cache->location = NULL;
        icm_manifest_writer *w = NULL;
        int rc = open_added_writer(
            p, deletes ? ICM_MANIFEST_CONTENT_DELETES : ICM_MANIFEST_CONTENT_DATA, schema_id,
            spec_id, &w);
        for (size_t i = 0; rc == 0 && i < p->op->adds.len; i++) {
            const txn_add *a = p->op->adds.items[i];
            if (is_delete_file(&a->df) != deletes)
                continue;
            icm_manifest_entry e = {0};
            e.status = ICM_ENTRY_ADDED;
            e.has_snapshot_id = true;
            e.snapshot_id = p->snapshot_id;
            e.data_file = a->df;
            e.data_file.has_first_row_id = false; /* inherited from the manifest (v3) */
            rc = icm_manifest_writer_add(w, &e);
        }
        char *bytes = NULL, *name = NULL;
        size_t blen = 0;
        cache->mf = (icm_manifest_file)ICM_MANIFEST_FILE_INIT;
        if (rc == 0)
            rc = icm_manifest_writer_finish(&bytes, &blen, &cache->mf, w);
        icm_manifest_writer_free(w);
        if (rc == 0 && (name = next_manifest_name(p)) == NULL)
            rc = ICM_ENOMEM;
        if (rc == 0)
            rc = write_owned(p, name, bytes, blen, &cache->location);
        icm__free(name);
        icm_free(bytes);
        if (rc != 0)
            return rc;
        cache->format_version = p->fv;
        cache->schema_id = schema_id;
        cache->spec_id = spec_id;
        cache->snapshot_id = p->snapshot_id;
    } else {
        icm__txn_mark_used(p->txn, cache->location);
    }
    icm_manifest_file mf = cache->mf;
    mf.manifest_path = cache->location;
    mf.has_added_snapshot_id = true;
    mf.added_snapshot_id = p->snapshot_id;
    mf.sequence_number = -1;
    mf.min_sequence_number = -1;
    mf.has_first_row_id = false;
    mf.partitions = (icm_raw){NULL, 0};
    mf.key_metadata = (icm_raw){NULL, 0};
    char *fields = NULL;
    if (icm_table_metadata_spec_fields_json(&fields, p->md, spec_id) == 0 &&
        strcmp(fields, "[]") == 0)
        mf.partitions = (icm_raw){empty_avro_array, 1};
    icm_free(fields);
    return mf_vec_push(&p->added, &mf);
}

static int count_adds(producer *p)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->op->adds.len; i++)
        rc = count_file(&p->c, &((txn_add *)p->op->adds.items[i])->df, true);
    return rc;
}

/* Write the manifest list; *out_added_rows gets the v3 rows assigned. */
static int write_list(producer *p, int64_t first_row_id, char **out_location,
                      int64_t *out_added_rows)
{
    icm_manifest_list_writer_options o = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    o.format_version = p->fv;
    o.codec = p->codec;
    o.compression_level = -1;
    o.snapshot_id = p->snapshot_id;
    o.has_parent_snapshot_id = p->parent != NULL;
    o.parent_snapshot_id = p->parent != NULL ? p->parent->snapshot_id : 0;
    o.sequence_number = p->seq;
    o.first_row_id = first_row_id;
    icm_manifest_list_writer *w = NULL;
    int rc = icm_manifest_list_writer_new(&w, &o);
    for (size_t i = 0; rc == 0 && i < p->added.len; i++)
        rc = icm_manifest_list_writer_add(w, &p->added.items[i]);
    for (size_t i = 0; rc == 0 && i < p->kept.len; i++)
        rc = icm_manifest_list_writer_add(w, &p->kept.items[i]);
    char *bytes = NULL, *name = NULL;
    size_t len = 0;
    if (rc == 0) {
        *out_added_rows = icm_manifest_list_writer_next_row_id(w) - first_row_id;
        rc = icm_manifest_list_writer_finish(&bytes, &len, w);
    }
    if (rc == 0 && (name = icm__sprintf("snap-%" PRId64 "-%d-%s.avro", p->snapshot_id,
                                        p->txn->attempt, p->txn->commit_uuid)) == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0)
        rc = write_owned(p, name, bytes, len, out_location);
    icm__free(name);
    icm_free(bytes);
    icm_manifest_list_writer_free(w);
    return rc;
}

static const char *operation_name(const producer *p)
{
    const txn_snapshot_op *op = p->op;
    if (op->replace)
        return "replace";
    /* Java: only new data files is an append; data files with removals or delete files is an
     * overwrite; removals or delete files alone are a delete. */
    bool adds_data = p->c.added_data_files > 0, adds_deletes = p->c.added_delete_files > 0;
    if (op->removes.len == 0 && !adds_deletes)
        return "append";
    return adds_data ? "overwrite" : "delete";
}

static int put_count(json_t *s, const char *key, int64_t v, bool always)
{
    if (v == 0 && !always)
        return 0;
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, v);
    json_t *str = json_string(num);
    if (str == NULL || json_object_set_new(s, key, str) != 0)
        return icm__error_oom();
    return 0;
}

/* Java's updateTotal: previous total (0 without a parent) + added - removed; omitted when the
 * parent's summary has no parseable total. */
static int put_total(producer *p, json_t *s, const char *key, int64_t added, int64_t removed)
{
    int64_t prev = 0;
    if (p->parent != NULL && !icm__snapshot_summary_count(p->md, p->parent, key, &prev))
        return 0;
    return put_count(s, key, prev + added - removed, true);
}

static json_t *build_summary(producer *p)
{
    const counts *c = &p->c;
    json_t *s = json_object();
    if (s == NULL || json_object_set_new(s, "operation", json_string(operation_name(p))) != 0) {
        json_decref(s);
        icm__error_oom();
        return NULL;
    }
    int rc = 0;
    rc = rc ? rc : put_count(s, "added-data-files", c->added_data_files, false);
    rc = rc ? rc : put_count(s, "deleted-data-files", c->deleted_data_files, false);
    rc = rc ? rc : put_count(s, "added-delete-files", c->added_delete_files, false);
    rc = rc ? rc : put_count(s, "added-position-delete-files", c->added_pos_files, false);
    rc = rc ? rc : put_count(s, "added-equality-delete-files", c->added_eq_files, false);
    rc = rc ? rc : put_count(s, "removed-delete-files", c->removed_delete_files, false);
    rc = rc ? rc : put_count(s, "removed-position-delete-files", c->removed_pos_files, false);
    rc = rc ? rc : put_count(s, "removed-equality-delete-files", c->removed_eq_files, false);
    rc = rc ? rc : put_count(s, "added-records", c->added_records, false);
    rc = rc ? rc : put_count(s, "deleted-records", c->deleted_records, false);
    rc = rc ? rc : put_count(s, "added-position-deletes", c->added_pos_deletes, false);
    rc = rc ? rc : put_count(s, "removed-position-deletes", c->removed_pos_deletes, false);
    rc = rc ? rc : put_count(s, "added-equality-deletes", c->added_eq_deletes, false);
    rc = rc ? rc : put_count(s, "removed-equality-deletes", c->removed_eq_deletes, false);
    rc = rc ? rc : put_count(s, "added-files-size", c->added_size, false);
    rc = rc ? rc : put_count(s, "removed-files-size", c->removed_size, false);
    rc = rc ? rc : put_count(s, "changed-partition-count", (int64_t)c->partitions.len, true);
    rc = rc ? rc : put_total(p, s, "total-records", c->added_records, c->deleted_records);
    rc = rc ? rc : put_total(p, s, "total-files-size", c->added_size, c->removed_size);
    rc = rc ? rc : put_total(p, s, "total-data-files", c->added_data_files,
                             c->deleted_data_files);
    rc = rc ? rc : put_total(p, s, "total-delete-files", c->added_delete_files,
                             c->removed_delete_files);
    rc = rc ? rc : put_total(p, s, "total-position-deletes", c->added_pos_deletes,
                             c->removed_pos_deletes);
    rc = rc ? rc : put_total(p, s, "total-equality-deletes", c->added_eq_deletes,
                             c->removed_eq_deletes);
    if (rc != 0) {
        json_decref(s);
        return NULL;
    }
    return s;
}

static int set_int(json_t *o, const char *key, int64_t v)
{
    json_t *i = json_integer(v);
    if (i == NULL || json_object_set_new(o, key, i) != 0)
        return icm__error_oom();
    return 0;
}

/* The snapshot object, in the key order Java writes. */
static json_t *build_snapshot(producer *p, const char *list, int64_t ts, int64_t first_row_id,
                              int64_t added_rows)
{
    json_t *s = json_object();
    json_t *summary = build_summary(p);
    int rc = s != NULL && summary != NULL ? 0 : ICM_ENOMEM;
    if (rc == 0 && p->fv >= 2)
        rc = set_int(s, "sequence-number", p->seq);
    if (rc == 0)
        rc = set_int(s, "snapshot-id", p->snapshot_id);
    if (rc == 0 && p->parent != NULL)
        rc = set_int(s, "parent-snapshot-id", p->parent->snapshot_id);
    if (rc == 0)
        rc = set_int(s, "timestamp-ms", ts);
    if (rc == 0) {
        rc = json_object_set_new(s, "summary", summary) == 0 ? 0 : icm__error_oom();
        summary = NULL;
    }
    if (rc == 0 && json_object_set_new(s, "manifest-list", json_string(list)) != 0)
        rc = icm__error_oom();
    if (rc == 0)
        rc = set_int(s, "schema-id", icm_table_metadata_current_schema_id(p->md));
    if (rc == 0 && p->fv >= 3)
        rc = set_int(s, "first-row-id", first_row_id);
    if (rc == 0 && p->fv >= 3)
        rc = set_int(s, "added-rows", added_rows);
    json_decref(summary);
    if (rc != 0) {
        json_decref(s);
        return NULL;
    }
    return s;
}

static int prepare(producer *p, icm_txn *txn, txn_snapshot_op *op, icm_table_metadata *md)
{
    p->txn = txn;
    p->op = op;
    p->md = md;
    p->io = icm_table_get_fileio(txn->table);
    p->fv = icm_table_metadata_format_version(md);
    int rc = icm_avro_codec_from_property(
        &p->codec, icm_table_metadata_property(md, "write.avro.compression-codec"));
    if (rc != 0)
        return rc;
    if (!op->has_snapshot_id || icm_table_metadata_snapshot_by_id(md, op->snapshot_id) != NULL) {
        do {
            rc = random_snapshot_id(&op->snapshot_id);
        } while (rc == 0 && icm_table_metadata_snapshot_by_id(md, op->snapshot_id) != NULL);
        if (rc != 0)
            return rc;
        op->has_snapshot_id = true;
    }
    p->snapshot_id = op->snapshot_id;
    p->seq = p->fv >= 2 ? icm_table_metadata_last_sequence_number(md) + 1 : 0;
    const icm_ref *main_ref = icm_table_metadata_ref_by_name(md, "main");
    p->parent = main_ref != NULL ? icm_table_metadata_snapshot_by_id(md, main_ref->snapshot_id)
                                 : NULL;
    p->mdir = icm__txn_metadata_dir(md);
    if (p->mdir == NULL)
        return ICM_ENOMEM;
    if (!icm__location_recordable(p->mdir, icm_table_metadata_location(md))) /* issue #16 */
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, p->mdir,
                              "new manifests would be written and recorded below this relative "
                              "location (the table's location or write.metadata.path); metadata "
                              "never records a relative location");
    for (size_t i = 0; rc == 0 && i < op->removes.len; i++)
        rc = path_set_add(&p->removes, op->removes.len, op->removes.items[i]);
    size_t ndup = 0;
    for (size_t i = 0; i < op->adds.len; i++)
        ndup += ((txn_add *)op->adds.items[i])->check_duplicate;
    for (size_t i = 0; rc == 0 && i < op->adds.len; i++) {
        const txn_add *a = op->adds.items[i];
        if (a->check_duplicate)
            rc = path_set_add(&p->dups, ndup, a->df.file_path);
    }
    path_set_sort(&p->removes);
    path_set_sort(&p->dups);
    for (size_t i = 1; rc == 0 && i < p->dups.len; i++)
        if (strcmp(p->dups.items[i - 1].key, p->dups.items[i].key) == 0)
            rc = icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, p->dups.items[i].given,
                                "cannot add %s twice in one snapshot", p->dups.items[i].given);
    return rc;
}

int icm__txn_apply_snapshot(icm_txn *txn, txn_snapshot_op *op, icm_table_changes *c,
                            icm_table_metadata *md)
{
    producer p = {0};
    int rc = prepare(&p, txn, op, md);
    if (rc == 0)
        rc = carry_parent(&p);
    if (rc == 0)
        rc = check_removes_seen(&p);
    if (rc == 0)
        rc = count_adds(&p);
    if (rc == 0)
        rc = added_manifest(&p, false, &op->data_manifest);
    if (rc == 0)
        rc = added_manifest(&p, true, &op->delete_manifest);
    /* Owned data files appended here are referenced by this attempt. */
    for (size_t i = 0; rc == 0 && i < op->adds.len; i++)
        icm__txn_mark_used(txn, ((txn_add *)op->adds.items[i])->df.file_path);
    int64_t first_row_id = 0, added_rows = 0;
    (void)icm_table_metadata_next_row_id(&first_row_id, md);
    char *list = NULL;
    if (rc == 0)
        rc = write_list(&p, first_row_id, &list, &added_rows);
    int64_t ts = icm__now_ms();
    if (icm_table_metadata_last_updated_ms(md) > ts)
        ts = icm_table_metadata_last_updated_ms(md);
    json_t *snap = rc == 0 ? build_snapshot(&p, list, ts, first_row_id, added_rows) : NULL;
    if (rc == 0 && snap == NULL)
        rc = ICM_ENOMEM;
    if (rc == 0)
        rc = icm__txn_md_add_snapshot(c, md, snap); /* seq, next-row-id: from the snapshot */
    icm__free(list);
    producer_dispose(&p);
    return rc;
}
