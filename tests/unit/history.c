/*
 * tests/unit/history.c: the table-history builder for expiry tests (see history.h).
 *
 * Layout written: `<loc>/data/<name>.parquet` (data), `<name>-deletes.parquet` (position
 * deletes), `<name>-eq.parquet` (equality deletes), `<name>.puffin` (deletion vectors),
 * `<loc>/metadata/m<seq>-<snapshot>-<k>.avro` (manifests), `<loc>/metadata/snap-<id>.avro`
 * (manifest lists), metadata files named by icm_catalog_write_metadata_file.
 *
 * The scripted catalog keeps the current metadata location in memory and implements a real
 * compare-and-swap, plus scripted outcomes for commit-failure tests.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "icemaint/manifest.h"
#include "icemaint/sys/catalog.h"
#include "testutil.h"
#include "util/util.h"

#define SCHEMA_FIELDS "[{\"id\":1,\"name\":\"id\",\"required\":false,\"type\":\"long\"}]"

typedef struct hentry {
    char *path;
    icm_entry_status status;
    icm_file_content content;
    bool puffin;
    char *referenced;     /* DV: the data file */
    int64_t size;
    int64_t snapshot_id;  /* snapshot that added (or deleted) it */
    int64_t seq;          /* data sequence number */
} hentry;

typedef struct hmanifest {
    char *path;
    icm_manifest_content content;
    int32_t spec_id;
    int64_t added_snapshot_id;
    int64_t seq;
    hentry *entries;
    size_t n;
    int64_t length;
    int32_t added, existing, deleted;
    int64_t first_row_id;  /* v3 data manifests, as assigned by the list writer */
    bool has_first_row_id;
} hmanifest;

typedef struct hsnap {
    int64_t id;
    bool has_parent;
    int64_t parent;
    int64_t seq, ts;
    char *list;           /* NULL for v1 embedded */
    size_t *man;          /* indices into h->manifests */
    size_t nman;
    int32_t schema_id;
    const char *op;
    int64_t first_row_id, added_rows;
} hsnap;

typedef struct href {
    char *name;
    bool tag;
    int64_t id;
    int64_t max_ref_age, max_snap_age;
    int32_t min_keep;
} href;

typedef struct hstat {
    int64_t snapshot_id;
    char *path;
    int64_t size;
    bool partition;
} hstat;

typedef struct hlog {
    int64_t ts, id;
} hlog;

typedef struct hprop {
    char *key, *value;
} hprop;

typedef struct hcat {
    icm_catalog base;
    char *current;
    hist *h;
    int fail_loads;
} hcat;

struct hist {
    icm_fileio *io;
    char *loc;
    char *uuid;
    int fv;
    bool v1_embedded;
    int64_t now, last_seq, next_id, next_row_id;
    hmanifest *manifests;
    size_t nman;
    hsnap *snaps;
    size_t nsnap;
    href *refs;
    size_t nref;
    hstat *stats;
    size_t nstat;
    hlog *log;
    size_t nlog;
    hprop *props;
    size_t nprop;
    int32_t schemas[16], specs[16];
    size_t nschemas, nspecs;
    int32_t current_schema, default_spec;
    hcat *cat;
    icm_table *table;
    bool merge;
    char *data_loc; /* prefix of data and delete file paths when not h->loc */
    char *md_loc; /* `location` written to the metadata when it differs from h->loc */
    hist_commit_script script;
    void (*hook)(hist *, void *);
    void *hook_arg;
};

static char *xstrdup(const char *s)
{
    char *c = strdup(s);
    assert_non_null(c);
    return c;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    assert_non_null(q);
    return q;
}

/* ------------------------------------------------------------------------------------------ */
/* scripted catalog                                                                            */

static int cat_load(icm_catalog *c, const icm_table_ident *id, char **out)
{
    (void)id;
    hcat *hc = (hcat *)c;
    if (hc->fail_loads > 0) {
        hc->fail_loads--;
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_EIO, "test-catalog",
                              "scripted load failure");
    }
    *out = icm__strdup(hc->current);
    return *out ? 0 : ICM_ENOMEM;
}

static int cat_commit(icm_catalog *c, const icm_table_ident *id, const char *base,
                      const icm_table_metadata *md, char **out_file)
{
    (void)id;
    hcat *hc = (hcat *)c;
    *out_file = NULL;
    if (hc->h->hook != NULL) {
        void (*fn)(hist *, void *) = hc->h->hook;
        hc->h->hook = NULL;
        fn(hc->h, hc->h->hook_arg);
    }
    hist_commit_script script = hc->h->script;
    hc->h->script = HIST_COMMIT_NORMAL;
    if (strcmp(base, hc->current) != 0)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, "test-catalog",
                              "base %s is not current %s", base, hc->current);
    if (script == HIST_COMMIT_FAILED)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_FAILED, "test-catalog",
                              "scripted failure");
    char *file = NULL;
    int rc = icm_catalog_write_metadata_file(&file, c->io, base, md);
    if (rc != 0)
        return rc;
    *out_file = file;
    if (script == HIST_COMMIT_UNKNOWN_NOT_APPLIED)
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, "test-catalog",
                              "scripted unknown outcome (not applied)");
    /* The catalog's own state is the "server": plain libc, untouched by allocator hooks. */
    free(hc->current);
    hc->current = xstrdup(file);
    if (script == HIST_COMMIT_UNKNOWN_APPLIED) {
        hc->fail_loads = 1; /* reconciling cannot tell */
        return icm__error_set(ICM_ERRCLASS_CATALOG, ICM_ECOMMIT_UNKNOWN, "test-catalog",
                              "scripted unknown outcome (applied)");
    }
    return 0;
}

static void cat_free(icm_catalog *c)
{
    hcat *hc = (hcat *)c;
    free(hc->current);
    free(hc);
}

static const icm_catalog_methods CAT_METHODS = {
    ICM_CATALOG_METHODS_VERSION, "test", cat_load, cat_commit, NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, cat_free, NULL, NULL, NULL, NULL,
};

/* ------------------------------------------------------------------------------------------ */
/* metadata rendering                                                                          */

static void put(icm__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(icm__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = icm__vsprintf(fmt, ap);
    va_end(ap);
    assert_non_null(s);
    icm__buf_puts(b, s);
    icm__free(s);
}

static href *find_ref(hist *h, const char *name)
{
    for (size_t i = 0; i < h->nref; i++)
        if (strcmp(h->refs[i].name, name) == 0)
            return &h->refs[i];
    return NULL;
}

static hsnap *find_snap(hist *h, int64_t id)
{
    for (size_t i = 0; i < h->nsnap; i++)
        if (h->snaps[i].id == id)
            return &h->snaps[i];
    return NULL;
}

int64_t hist_head(hist *h, const char *branch)
{
    href *r = find_ref(h, branch);
    return r != NULL ? r->id : -1;
}

static void render_snapshot(hist *h, icm__buf *b, const hsnap *s)
{
    put(b, "{\"snapshot-id\":%lld", (long long)s->id);
    if (s->has_parent)
        put(b, ",\"parent-snapshot-id\":%lld", (long long)s->parent);
    if (h->fv >= 2)
        put(b, ",\"sequence-number\":%lld", (long long)s->seq);
    put(b, ",\"timestamp-ms\":%lld,\"summary\":{\"operation\":\"%s\"}", (long long)s->ts, s->op);
    if (s->list != NULL) {
        put(b, ",\"manifest-list\":\"%s\"", s->list);
    } else {
        put(b, ",\"manifests\":[");
        for (size_t k = 0; k < s->nman; k++)
            put(b, "%s\"%s\"", k ? "," : "", h->manifests[s->man[k]].path);
        put(b, "]");
    }
    put(b, ",\"schema-id\":%d", (int)s->schema_id);
    if (h->fv >= 3)
        put(b, ",\"first-row-id\":%lld,\"added-rows\":%lld", (long long)s->first_row_id,
            (long long)s->added_rows);
    put(b, "}");
}

static void render_refs(hist *h, icm__buf *b)
{
    put(b, "\"refs\":{");
    for (size_t i = 0; i < h->nref; i++) {
        const href *r = &h->refs[i];
        put(b, "%s\"%s\":{\"snapshot-id\":%lld,\"type\":\"%s\"", i ? "," : "", r->name,
            (long long)r->id, r->tag ? "tag" : "branch");
        if (r->max_ref_age >= 0)
            put(b, ",\"max-ref-age-ms\":%lld", (long long)r->max_ref_age);
        if (r->max_snap_age >= 0)
            put(b, ",\"max-snapshot-age-ms\":%lld", (long long)r->max_snap_age);
        if (r->min_keep >= 0)
            put(b, ",\"min-snapshots-to-keep\":%d", (int)r->min_keep);
        put(b, "}");
    }
    put(b, "}");
}

static void render_stats(hist *h, icm__buf *b)
{
    put(b, ",\"statistics\":[");
    bool first = true;
    for (size_t i = 0; i < h->nstat; i++) {
        const hstat *s = &h->stats[i];
        if (s->partition)
            continue;
        put(b, "%s{\"snapshot-id\":%lld,\"statistics-path\":\"%s\",\"file-size-in-bytes\":%lld,"
               "\"file-footer-size-in-bytes\":0,\"blob-metadata\":[]}",
            first ? "" : ",", (long long)s->snapshot_id, s->path, (long long)s->size);
        first = false;
    }
    put(b, "],\"partition-statistics\":[");
    first = true;
    for (size_t i = 0; i < h->nstat; i++) {
        const hstat *s = &h->stats[i];
        if (!s->partition)
            continue;
        put(b, "%s{\"snapshot-id\":%lld,\"statistics-path\":\"%s\",\"file-size-in-bytes\":%lld}",
            first ? "" : ",", (long long)s->snapshot_id, s->path, (long long)s->size);
        first = false;
    }
    put(b, "]");
}

static char *render(hist *h)
{
    icm__buf b = ICM__BUF_INIT;
    int64_t main_head = hist_head(h, "main");
    put(&b, "{\"format-version\":%d,\"table-uuid\":\"%s\",\"location\":\"%s\"", h->fv, h->uuid,
        h->md_loc != NULL ? h->md_loc : h->loc);
    if (h->fv >= 2)
        put(&b, ",\"last-sequence-number\":%lld", (long long)h->last_seq);
    /* The commit path logs the base's last-updated-ms, which is wall-clock time. */
    int64_t updated = icm__now_ms() > h->now ? icm__now_ms() : h->now;
    put(&b, ",\"last-updated-ms\":%lld,\"last-column-id\":1", (long long)updated);
    if (h->fv == 1)
        put(&b, ",\"schema\":{\"type\":\"struct\",\"schema-id\":%d,\"fields\":" SCHEMA_FIELDS
                "},\"partition-spec\":[]",
            (int)h->current_schema);
    put(&b, ",\"current-schema-id\":%d,\"schemas\":[", (int)h->current_schema);
    for (size_t i = 0; i < h->nschemas; i++)
        put(&b, "%s{\"type\":\"struct\",\"schema-id\":%d,\"fields\":" SCHEMA_FIELDS "}",
            i ? "," : "", (int)h->schemas[i]);
    put(&b, "],\"default-spec-id\":%d,\"partition-specs\":[", (int)h->default_spec);
    for (size_t i = 0; i < h->nspecs; i++)
        put(&b, "%s{\"spec-id\":%d,\"fields\":[]}", i ? "," : "", (int)h->specs[i]);
    put(&b, "],\"last-partition-id\":999,\"default-sort-order-id\":0,"
            "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{");
    for (size_t i = 0; i < h->nprop; i++)
        put(&b, "%s\"%s\":\"%s\"", i ? "," : "", h->props[i].key, h->props[i].value);
    put(&b, "},\"current-snapshot-id\":%lld,", (long long)main_head);
    if (h->fv >= 3)
        put(&b, "\"next-row-id\":%lld,", (long long)h->next_row_id);
    render_refs(h, &b);
    put(&b, ",\"snapshots\":[");
    for (size_t i = 0; i < h->nsnap; i++) {
        if (i)
            put(&b, ",");
        render_snapshot(h, &b, &h->snaps[i]);
    }
    put(&b, "],\"snapshot-log\":[");
    for (size_t i = 0; i < h->nlog; i++)
        put(&b, "%s{\"timestamp-ms\":%lld,\"snapshot-id\":%lld}", i ? "," : "",
            (long long)h->log[i].ts, (long long)h->log[i].id);
    put(&b, "],\"metadata-log\":[]");
    render_stats(h, &b);
    put(&b, "}");
    assert_false(b.oom);
    return icm__buf_detach(&b, NULL);
}

static icm_table_metadata *render_md(hist *h)
{
    char *json = render(h);
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_parse(&md, json, strlen(json), "history"));
    icm_free(json);
    return md;
}

static void commit(hist *h)
{
    icm_table_metadata *md = render_md(h);
    icmt_ok(icm_table_commit(h->table, md));
    icm_table_metadata_free(md);
}

/* ------------------------------------------------------------------------------------------ */
/* construction                                                                                */

hist *hist_new(icm_fileio *io, const char *location, int format_version, bool v1_embedded,
               int64_t start_ms)
{
    hist *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->io = io;
    h->loc = xstrdup(location);
    h->uuid = xstrdup("9a1c3f7e-2b4d-4e6f-8a0b-1c2d3e4f5a6b");
    h->fv = format_version;
    h->v1_embedded = v1_embedded;
    h->now = start_ms;
    h->next_id = 1;
    h->nschemas = h->nspecs = 1;
    h->schemas[0] = h->specs[0] = 0;

    hcat *c = calloc(1, sizeof *c);
    assert_non_null(c);
    icmt_ok(icm_catalog_init_base(&c->base, &CAT_METHODS, "test", io));
    c->h = h;
    h->cat = c;
    icm_table_metadata *md = render_md(h);
    char *first = NULL;
    icmt_ok(icm_catalog_write_metadata_file(&first, io, NULL, md));
    c->current = xstrdup(first);
    icm_free(first);
    icm_table_metadata_free(md);
    icmt_ok(icm_table_load(&h->table, &c->base, "ns.t"));
    return h;
}

static void free_manifest(hmanifest *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->entries[i].path);
        free(m->entries[i].referenced);
    }
    free(m->entries);
    free(m->path);
}

void hist_free(hist *h)
{
    if (h == NULL)
        return;
    icm_table_free(h->table);
    icm_catalog_free(&h->cat->base);
    for (size_t i = 0; i < h->nman; i++)
        free_manifest(&h->manifests[i]);
    free(h->manifests);
    for (size_t i = 0; i < h->nsnap; i++) {
        free(h->snaps[i].list);
        free(h->snaps[i].man);
    }
    free(h->snaps);
    for (size_t i = 0; i < h->nref; i++)
        free(h->refs[i].name);
    free(h->refs);
    for (size_t i = 0; i < h->nstat; i++)
        free(h->stats[i].path);
    free(h->stats);
    free(h->log);
    for (size_t i = 0; i < h->nprop; i++) {
        free(h->props[i].key);
        free(h->props[i].value);
    }
    free(h->props);
    free(h->loc);
    free(h->data_loc);
    free(h->md_loc);
    free(h->uuid);
    free(h);
}

icm_table *hist_open_table(hist *h)
{
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, &h->cat->base, "ns.t"));
    return t;
}

icm_fileio *hist_io(hist *h)
{
    return h->io;
}

const char *hist_location(hist *h)
{
    return h->loc;
}

void hist_set_time(hist *h, int64_t ms)
{
    h->now = ms;
}

int64_t hist_time(const hist *h)
{
    return h->now;
}

static const char *data_loc(const hist *h)
{
    return h->data_loc != NULL ? h->data_loc : h->loc;
}

void hist_set_data_location(hist *h, const char *location)
{
    free(h->data_loc);
    h->data_loc = location != NULL ? xstrdup(location) : NULL;
}

char *hist_data_path(hist *h, const char *name)
{
    return icmt_sprintf("%s/data/%s.parquet", data_loc(h), name);
}

/* ------------------------------------------------------------------------------------------ */
/* sync with the table                                                                         */

void hist_sync(hist *h)
{
    icmt_ok(icm_table_refresh(h->table));
    const icm_table_metadata *md = icm_table_get_metadata(h->table);
    size_t k = 0;
    for (size_t i = 0; i < h->nsnap; i++) {
        if (icm_table_metadata_snapshot_by_id(md, h->snaps[i].id) != NULL) {
            h->snaps[k++] = h->snaps[i];
        } else {
            free(h->snaps[i].list);
            free(h->snaps[i].man);
        }
    }
    h->nsnap = k;
    k = 0;
    for (size_t i = 0; i < h->nref; i++) {
        if (icm_table_metadata_ref_by_name(md, h->refs[i].name) != NULL)
            h->refs[k++] = h->refs[i];
        else
            free(h->refs[i].name);
    }
    h->nref = k;
    k = 0;
    for (size_t i = 0; i < h->nstat; i++) {
        bool present = false;
        for (size_t j = 0; j < icm_table_metadata_statistics_count(md); j++) {
            const icm_statistics_file *f = icm_table_metadata_statistics_at(md, j);
            present = present || (f->snapshot_id == h->stats[i].snapshot_id &&
                                  strcmp(f->path, h->stats[i].path) == 0);
        }
        if (present)
            h->stats[k++] = h->stats[i];
        else
            free(h->stats[i].path);
    }
    h->nstat = k;
    h->nlog = icm_table_metadata_snapshot_log_count(md);
    h->log = xrealloc(h->log, h->nlog * sizeof *h->log);
    for (size_t i = 0; i < h->nlog; i++) {
        const icm_snapshot_log_entry *e = icm_table_metadata_snapshot_log_at(md, i);
        h->log[i] = (hlog){e->timestamp_ms, e->snapshot_id};
    }
    char *tmp = NULL;
    k = 0;
    for (size_t i = 0; i < h->nschemas; i++) {
        if (icm_table_metadata_schema_json(&tmp, md, h->schemas[i]) == 0)
            h->schemas[k++] = h->schemas[i];
        icm_free(tmp);
        tmp = NULL;
    }
    h->nschemas = k;
    k = 0;
    for (size_t i = 0; i < h->nspecs; i++) {
        if (icm_table_metadata_spec_fields_json(&tmp, md, h->specs[i]) == 0)
            h->specs[k++] = h->specs[i];
        icm_free(tmp);
        tmp = NULL;
    }
    h->nspecs = k;
    icm_error_clear();
}

/* ------------------------------------------------------------------------------------------ */
/* writing files                                                                               */

/* A file's bytes are its name (the last segment), so that one file spelled two ways (a data
 * location given as `file://...` or with `./`) is written with the same bytes: files are
 * immutable, and one path described with two sizes is damage to the walk (reach_walk.c). */
static void write_placeholder(hist *h, const char *path, int64_t *size)
{
    const char *name = strrchr(path, '/');
    name = name != NULL && name[1] != '\0' ? name + 1 : path;
    icmt_ok(icm_fileio_write_replace(h->io, path, name, strlen(name)));
    *size = (int64_t)strlen(name);
}

/* Column bounds for the file at `path`, as a writer with metrics records them: one bound of
 * field 1, eight bytes drawn from the file's name (so two files of one size tell apart by
 * their entries, as real files with other values do, and one file named two ways has one).
 * The raw Avro of map<int, bytes>: one block of one pair, then the end block. */
static icm_raw name_bounds(const char *path, uint8_t out[12])
{
    const char *name = strrchr(path, '/');
    name = name != NULL && name[1] != '\0' ? name + 1 : path;
    uint64_t hash = UINT64_C(14695981039346656037); /* FNV-1a */
    for (const char *c = name; *c != '\0'; c++)
        hash = (hash ^ (uint8_t)*c) * UINT64_C(1099511628211);
    out[0] = 2;  /* a block of 1 pair */
    out[1] = 2;  /* key 1 */
    out[2] = 16; /* 8 bytes */
    memcpy(out + 3, &hash, 8);
    out[11] = 0; /* the end */
    return (icm_raw){out, 12};
}

static int64_t write_manifest(hist *h, hmanifest *m)
{
    char *schema = icmt_sprintf("{\"type\":\"struct\",\"schema-id\":%d,\"fields\":" SCHEMA_FIELDS
                                "}",
                                (int)h->current_schema);
    icm_manifest_writer_options wo = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    wo.format_version = h->fv;
    wo.codec = ICM_AVRO_CODEC_NULL;
    wo.compression_level = -1;
    wo.content = m->content;
    wo.schema_json = schema;
    wo.schema_id = h->current_schema;
    wo.partition_spec_json = "[]";
    wo.partition_spec_id = m->spec_id;
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &wo));
    m->added = m->existing = m->deleted = 0;
    for (size_t i = 0; i < m->n; i++) {
        const hentry *e = &m->entries[i];
        icm_manifest_entry me;
        memset(&me, 0, sizeof me);
        me.status = e->status;
        me.has_snapshot_id = true;
        me.snapshot_id = e->snapshot_id;
        if (e->status != ICM_ENTRY_ADDED && h->fv >= 2) {
            me.has_sequence_number = me.has_file_sequence_number = true;
            me.sequence_number = me.file_sequence_number = e->seq;
        }
        me.data_file.content = e->content;
        me.data_file.file_path = e->path;
        me.data_file.file_path_len = strlen(e->path);
        me.data_file.file_format = e->puffin ? ICM_FILE_FORMAT_PUFFIN : ICM_FILE_FORMAT_PARQUET;
        me.data_file.file_format_name = e->puffin ? "PUFFIN" : "PARQUET";
        me.data_file.record_count = 1;
        me.data_file.file_size_in_bytes = e->size;
        uint8_t bounds[12];
        me.data_file.lower_bounds = me.data_file.upper_bounds = name_bounds(e->path, bounds);
        if (e->referenced != NULL)
            me.data_file.referenced_data_file = e->referenced;
        if (e->puffin) {
            me.data_file.has_content_offset = me.data_file.has_content_size_in_bytes = true;
            me.data_file.content_offset = 4;
            me.data_file.content_size_in_bytes = 10;
        }
        if (e->content == ICM_FILE_CONTENT_EQUALITY_DELETES)
            me.data_file.equality_ids = (icm_raw){(const uint8_t *)"\x02\x02\x00", 3};
        icmt_ok(icm_manifest_writer_add(w, &me));
        if (e->status == ICM_ENTRY_ADDED)
            m->added++;
        else if (e->status == ICM_ENTRY_EXISTING)
            m->existing++;
        else
            m->deleted++;
    }
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_manifest_writer_finish(&data, &len, NULL, w));
    icm_manifest_writer_free(w);
    icmt_ok(icm_fileio_write_replace(h->io, m->path, data, len));
    icm_free(data);
    free(schema);
    return (int64_t)len;
}

static void list_entry_of(const hmanifest *m, icm_manifest_file *mf)
{
    memset(mf, 0, sizeof *mf);
    mf->manifest_path = m->path;
    mf->manifest_path_len = strlen(m->path);
    mf->manifest_length = m->length;
    mf->partition_spec_id = m->spec_id;
    mf->content = m->content;
    mf->sequence_number = m->seq;
    mf->min_sequence_number = m->seq;
    mf->has_added_snapshot_id = true;
    mf->added_snapshot_id = m->added_snapshot_id;
    mf->has_added_files_count = mf->has_existing_files_count = mf->has_deleted_files_count = true;
    mf->added_files_count = m->added;
    mf->existing_files_count = m->existing;
    mf->deleted_files_count = m->deleted;
    mf->has_added_rows_count = mf->has_existing_rows_count = mf->has_deleted_rows_count = true;
    mf->added_rows_count = m->added;
    mf->existing_rows_count = m->existing;
    mf->deleted_rows_count = m->deleted;
    mf->has_first_row_id = m->has_first_row_id;
    mf->first_row_id = m->first_row_id;
}

static void write_list(hist *h, hsnap *s)
{
    icm_manifest_list_writer_options lo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lo.format_version = h->fv;
    lo.codec = ICM_AVRO_CODEC_NULL;
    lo.compression_level = -1;
    lo.snapshot_id = s->id;
    lo.has_parent_snapshot_id = s->has_parent;
    lo.parent_snapshot_id = s->parent;
    lo.sequence_number = s->seq;
    lo.first_row_id = h->next_row_id;
    icm_manifest_list_writer *w = NULL;
    icmt_ok(icm_manifest_list_writer_new(&w, &lo));
    for (size_t k = 0; k < s->nman; k++) {
        icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
        list_entry_of(&h->manifests[s->man[k]], &mf);
        icmt_ok(icm_manifest_list_writer_add(w, &mf));
    }
    s->first_row_id = h->next_row_id;
    if (h->fv >= 3) {
        int64_t next = icm_manifest_list_writer_next_row_id(w);
        s->added_rows = next - h->next_row_id;
        h->next_row_id = next;
    }
    char *data = NULL;
    size_t len = 0;
    icmt_ok(icm_manifest_list_writer_finish(&data, &len, w));
    icm_manifest_list_writer_free(w);
    icmt_ok(icm_fileio_write_replace(h->io, s->list, data, len));
    icm_free(data);
}

/* ------------------------------------------------------------------------------------------ */
/* snapshot operations                                                                         */

typedef hist_file hadd;

static size_t new_manifest(hist *h, int64_t snap_id, int64_t seq, icm_manifest_content content)
{
    h->manifests = xrealloc(h->manifests, (h->nman + 1) * sizeof *h->manifests);
    hmanifest *m = &h->manifests[h->nman];
    memset(m, 0, sizeof *m);
    m->path = icmt_sprintf("%s/metadata/m%lld-%lld-%zu.avro", h->loc, (long long)seq,
                           (long long)snap_id, h->nman);
    m->content = content;
    m->spec_id = h->default_spec;
    m->added_snapshot_id = snap_id;
    m->seq = seq;
    return h->nman++;
}

static void add_entry(hmanifest *m, const hentry *e)
{
    m->entries = xrealloc(m->entries, (m->n + 1) * sizeof *m->entries);
    hentry *c = &m->entries[m->n++];
    *c = *e;
    c->path = xstrdup(e->path);
    c->referenced = e->referenced ? xstrdup(e->referenced) : NULL;
}

static char *file_path(hist *h, const hadd *a)
{
    if (a->puffin)
        return icmt_sprintf("%s/data/%s.puffin", data_loc(h), a->name);
    if (a->content == ICM_FILE_CONTENT_POSITION_DELETES)
        return icmt_sprintf("%s/data/%s-deletes.parquet", data_loc(h), a->name);
    if (a->content == ICM_FILE_CONTENT_EQUALITY_DELETES)
        return icmt_sprintf("%s/data/%s-eq.parquet", data_loc(h), a->name);
    return hist_data_path(h, a->name);
}

/* The short name of a file: its base name up to the first '.' ("A" for .../data/A.parquet,
 * "P-deletes" for .../data/P-deletes.parquet). */
static bool short_name_is(const char *path, const char *name)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    size_t n = strlen(name);
    return strncmp(base, name, n) == 0 && base[n] == '.';
}

static bool in_names(const char *const *names, const char *path, hist *h)
{
    (void)h;
    for (size_t i = 0; names != NULL && names[i] != NULL; i++)
        if (short_name_is(path, names[i]))
            return true;
    return false;
}

static bool manifest_has_live(const hmanifest *m, const char *const *del, hist *h)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->entries[i].status != ICM_ENTRY_DELETED && in_names(del, m->entries[i].path, h))
            return true;
    return false;
}

/* Rewrite manifest `src` for snapshot `id`: deleted names become DELETED, other live entries
 * EXISTING, earlier DELETED entries dropped (as Java's manifest filter does). */
static size_t rewrite_manifest(hist *h, size_t src, int64_t id, int64_t seq,
                               const char *const *del, bool delete_all)
{
    size_t mi = new_manifest(h, id, seq, h->manifests[src].content);
    for (size_t i = 0; i < h->manifests[src].n; i++) {
        hentry e = h->manifests[src].entries[i];
        if (e.status == ICM_ENTRY_DELETED)
            continue;
        if (delete_all || in_names(del, e.path, h)) {
            e.status = ICM_ENTRY_DELETED;
            e.snapshot_id = id;
        } else {
            e.status = ICM_ENTRY_EXISTING;
        }
        add_entry(&h->manifests[mi], &e);
    }
    h->manifests[mi].length = write_manifest(h, &h->manifests[mi]);
    return mi;
}

static void move_ref(hist *h, const char *branch, int64_t id, int64_t ts)
{
    href *r = find_ref(h, branch);
    if (r == NULL) {
        h->refs = xrealloc(h->refs, (h->nref + 1) * sizeof *h->refs);
        r = &h->refs[h->nref++];
        *r = (href){xstrdup(branch), false, id, -1, -1, -1};
    }
    r->id = id;
    if (strcmp(branch, "main") == 0) {
        h->log = xrealloc(h->log, (h->nlog + 1) * sizeof *h->log);
        h->log[h->nlog++] = (hlog){ts, id};
    }
}

/* The generic snapshot producer. */
static int64_t produce(hist *h, const char *branch, const char *op, const hadd *adds,
                       size_t nadd, const char *const *del, bool rewrite_all)
{
    hist_sync(h);
    int64_t parent = hist_head(h, branch != NULL ? branch : "main");
    hsnap *ps = parent >= 0 ? find_snap(h, parent) : NULL;
    int64_t id = h->next_id++;
    int64_t seq = h->fv >= 2 ? ++h->last_seq : 0;
    size_t *man = NULL, nm = 0;

    /* New files first (as Java lists new manifests first). */
    size_t data_m = SIZE_MAX, del_m = SIZE_MAX;
    for (size_t i = 0; i < nadd; i++) {
        bool is_del = adds[i].content != ICM_FILE_CONTENT_DATA;
        size_t *slot = is_del ? &del_m : &data_m;
        if (*slot == SIZE_MAX)
            *slot = new_manifest(h, id, seq,
                                 is_del ? ICM_MANIFEST_CONTENT_DELETES : ICM_MANIFEST_CONTENT_DATA);
        hentry e;
        memset(&e, 0, sizeof e);
        e.path = file_path(h, &adds[i]);
        e.status = ICM_ENTRY_ADDED;
        e.content = adds[i].content;
        e.puffin = adds[i].puffin;
        e.referenced = adds[i].referenced_name ? hist_data_path(h, adds[i].referenced_name) : NULL;
        e.snapshot_id = id;
        e.seq = seq;
        write_placeholder(h, e.path, &e.size);
        add_entry(&h->manifests[*slot], &e);
        free(e.path);
        free(e.referenced);
    }
    size_t fresh[2] = {data_m, del_m};
    for (size_t k = 0; k < 2; k++) {
        if (fresh[k] == SIZE_MAX)
            continue;
        h->manifests[fresh[k]].length = write_manifest(h, &h->manifests[fresh[k]]);
        man = xrealloc(man, (nm + 1) * sizeof *man);
        man[nm++] = fresh[k];
    }
    if (rewrite_all && ps != NULL) {
        /* RewriteManifests: all live data files into one manifest as EXISTING. */
        size_t mi = new_manifest(h, id, seq, ICM_MANIFEST_CONTENT_DATA);
        for (size_t k = 0; k < ps->nman; k++) {
            hmanifest *pm = &h->manifests[ps->man[k]];
            if (pm->content != ICM_MANIFEST_CONTENT_DATA) {
                man = xrealloc(man, (nm + 1) * sizeof *man);
                man[nm++] = ps->man[k];
                continue;
            }
            for (size_t i = 0; i < pm->n; i++) {
                if (pm->entries[i].status == ICM_ENTRY_DELETED)
                    continue;
                hentry e = pm->entries[i];
                e.status = ICM_ENTRY_EXISTING;
                add_entry(&h->manifests[mi], &e);
            }
        }
        h->manifests[mi].length = write_manifest(h, &h->manifests[mi]);
        man = xrealloc(man, (nm + 1) * sizeof *man);
        man[nm++] = mi;
    } else if (ps != NULL) {
        bool filter = h->merge || del != NULL;
        for (size_t k = 0; k < ps->nman; k++) {
            size_t mi = ps->man[k];
            const hmanifest *pm = &h->manifests[mi];
            /* Java's manifest filter drops carried manifests that have no live entry left
             * (FastAppend keeps every manifest as it is). */
            if (filter && pm->added + pm->existing == 0)
                continue;
            if (del != NULL && manifest_has_live(pm, del, h))
                mi = rewrite_manifest(h, mi, id, seq, del, false);
            man = xrealloc(man, (nm + 1) * sizeof *man);
            man[nm++] = mi;
        }
    }
    h->snaps = xrealloc(h->snaps, (h->nsnap + 1) * sizeof *h->snaps);
    ps = NULL; /* the array moved */
    hsnap *s = &h->snaps[h->nsnap++];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->has_parent = parent >= 0;
    s->parent = parent;
    s->seq = seq;
    s->ts = h->now;
    h->now += 1000;
    s->man = man;
    s->nman = nm;
    s->schema_id = h->current_schema;
    s->op = op;
    if (h->fv == 1 && h->v1_embedded) {
        s->list = NULL;
    } else {
        s->list = icmt_sprintf("%s/metadata/snap-%lld.avro", h->loc, (long long)id);
        write_list(h, s);
    }
    if (branch != NULL)
        move_ref(h, branch, id, s->ts);
    commit(h);
    return id;
}

static size_t collect(va_list ap, const char **names, size_t max)
{
    size_t n = 0;
    const char *s;
    while ((s = va_arg(ap, const char *)) != NULL) {
        assert_true(n < max);
        names[n++] = s;
    }
    names[n] = NULL;
    return n;
}

int64_t hist_append(hist *h, const char *branch, ...)
{
    const char *names[65];
    va_list ap;
    va_start(ap, branch);
    size_t n = collect(ap, names, 64);
    va_end(ap);
    hadd adds[64];
    for (size_t i = 0; i < n; i++)
        adds[i] = (hadd){names[i], ICM_FILE_CONTENT_DATA, false, NULL};
    return produce(h, branch, "append", adds, n, NULL, false);
}

int64_t hist_delete(hist *h, const char *branch, ...)
{
    const char *names[65];
    va_list ap;
    va_start(ap, branch);
    collect(ap, names, 64);
    va_end(ap);
    return produce(h, branch, "delete", NULL, 0, names, false);
}

int64_t hist_overwrite(hist *h, const char *branch, const char *const *add,
                       const char *const *del)
{
    hadd adds[64];
    size_t n = 0;
    for (; add != NULL && add[n] != NULL; n++)
        adds[n] = (hadd){add[n], ICM_FILE_CONTENT_DATA, false, NULL};
    return produce(h, branch, "overwrite", adds, n, del, false);
}

int64_t hist_position_delete(hist *h, const char *branch, const char *name,
                             const char *data_name)
{
    hadd a = {name, ICM_FILE_CONTENT_POSITION_DELETES, false, data_name};
    return produce(h, branch, "delete", &a, 1, NULL, false);
}

int64_t hist_equality_delete(hist *h, const char *branch, const char *name)
{
    hadd a = {name, ICM_FILE_CONTENT_EQUALITY_DELETES, false, NULL};
    return produce(h, branch, "delete", &a, 1, NULL, false);
}

int64_t hist_deletion_vectors(hist *h, const char *branch, const char *name, ...)
{
    const char *names[65];
    va_list ap;
    va_start(ap, name);
    size_t n = collect(ap, names, 64);
    va_end(ap);
    hadd adds[64];
    for (size_t i = 0; i < n; i++)
        adds[i] = (hadd){name, ICM_FILE_CONTENT_POSITION_DELETES, true, names[i]};
    return produce(h, branch, "delete", adds, n, NULL, false);
}

int64_t hist_commit_files(hist *h, const char *branch, const char *operation,
                          const hist_file *add, size_t n_add, const char *const *del)
{
    return produce(h, branch, operation, add, n_add, del, false);
}

void hist_set_table_location(hist *h, const char *location)
{
    hist_sync(h);
    free(h->md_loc);
    h->md_loc = xstrdup(location);
    commit(h);
}

void hist_set_merge_append(hist *h, bool merge)
{
    h->merge = merge;
}

int64_t hist_rewrite_manifests(hist *h, const char *branch)
{
    return produce(h, branch, "replace", NULL, 0, NULL, true);
}

/* ------------------------------------------------------------------------------------------ */
/* refs and metadata changes                                                                   */

void hist_branch(hist *h, const char *name, int64_t snapshot_id)
{
    hist_sync(h);
    assert_null(find_ref(h, name));
    h->refs = xrealloc(h->refs, (h->nref + 1) * sizeof *h->refs);
    h->refs[h->nref++] = (href){xstrdup(name), false, snapshot_id, -1, -1, -1};
    commit(h);
}

void hist_tag(hist *h, const char *name, int64_t snapshot_id)
{
    hist_sync(h);
    h->refs = xrealloc(h->refs, (h->nref + 1) * sizeof *h->refs);
    h->refs[h->nref++] = (href){xstrdup(name), true, snapshot_id, -1, -1, -1};
    commit(h);
}

void hist_ref_retention(hist *h, const char *name, int64_t max_ref_age_ms,
                        int64_t max_snapshot_age_ms, int32_t min_snapshots_to_keep)
{
    hist_sync(h);
    href *r = find_ref(h, name);
    assert_non_null(r);
    r->max_ref_age = max_ref_age_ms;
    r->max_snap_age = max_snapshot_age_ms;
    r->min_keep = min_snapshots_to_keep;
    commit(h);
}

void hist_set_head(hist *h, const char *branch, int64_t snapshot_id)
{
    hist_sync(h);
    move_ref(h, branch, snapshot_id, h->now);
    commit(h);
}

void hist_set_property(hist *h, const char *key, const char *value)
{
    hist_sync(h);
    for (size_t i = 0; i < h->nprop; i++)
        if (strcmp(h->props[i].key, key) == 0) {
            free(h->props[i].value);
            h->props[i].value = xstrdup(value);
            commit(h);
            return;
        }
    h->props = xrealloc(h->props, (h->nprop + 1) * sizeof *h->props);
    h->props[h->nprop++] = (hprop){xstrdup(key), xstrdup(value)};
    commit(h);
}

const char *hist_add_statistics(hist *h, int64_t snapshot_id, const char *name,
                                bool partition_statistics)
{
    hist_sync(h);
    h->stats = xrealloc(h->stats, (h->nstat + 1) * sizeof *h->stats);
    hstat *s = &h->stats[h->nstat++];
    s->snapshot_id = snapshot_id;
    s->path = icmt_sprintf("%s/metadata/%s", h->loc, name);
    s->partition = partition_statistics;
    write_placeholder(h, s->path, &s->size);
    commit(h);
    return h->stats[h->nstat - 1].path;
}

int32_t hist_add_schema(hist *h)
{
    hist_sync(h);
    int32_t id = 0;
    for (size_t i = 0; i < h->nschemas; i++)
        if (h->schemas[i] >= id)
            id = h->schemas[i] + 1;
    h->schemas[h->nschemas++] = id;
    h->current_schema = id;
    commit(h);
    return id;
}

int32_t hist_add_spec(hist *h)
{
    hist_sync(h);
    int32_t id = 0;
    for (size_t i = 0; i < h->nspecs; i++)
        if (h->specs[i] >= id)
            id = h->specs[i] + 1;
    h->specs[h->nspecs++] = id;
    h->default_spec = id;
    commit(h);
    return id;
}

void hist_script_next_commit(hist *h, hist_commit_script script)
{
    h->script = script;
}

void hist_before_next_commit(hist *h, void (*fn)(hist *h, void *arg), void *arg)
{
    h->hook = fn;
    h->hook_arg = arg;
}

/* ------------------------------------------------------------------------------------------ */
/* oracle                                                                                      */

static void strv_push(char ***v, size_t *n, const char *s)
{
    *v = xrealloc(*v, (*n + 2) * sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
    (*v)[*n] = NULL;
}

static char **strv_new(void)
{
    char **v = xrealloc(NULL, sizeof *v);
    v[0] = NULL;
    return v;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool id_chosen(const int64_t *ids, size_t n, int64_t id)
{
    if (ids == NULL)
        return true;
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

char **hist_reachable(hist *h, const int64_t *ids, size_t n)
{
    char **v = strv_new();
    size_t len = 0;
    for (size_t i = 0; i < h->nsnap; i++) {
        const hsnap *s = &h->snaps[i];
        if (!id_chosen(ids, n, s->id))
            continue;
        if (s->list != NULL)
            strv_push(&v, &len, s->list);
        for (size_t k = 0; k < s->nman; k++) {
            const hmanifest *m = &h->manifests[s->man[k]];
            strv_push(&v, &len, m->path);
            for (size_t e = 0; e < m->n; e++)
                if (m->entries[e].status != ICM_ENTRY_DELETED)
                    strv_push(&v, &len, m->entries[e].path);
        }
    }
    for (size_t i = 0; i < h->nstat; i++)
        if (id_chosen(ids, n, h->stats[i].snapshot_id))
            strv_push(&v, &len, h->stats[i].path);
    qsort(v, len, sizeof *v, cmp_str);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (k > 0 && strcmp(v[k - 1], v[i]) == 0)
            free(v[i]);
        else
            v[k++] = v[i];
    }
    v[k] = NULL;
    return v;
}

int64_t *hist_snapshot_ids(hist *h, size_t *n)
{
    int64_t *ids = xrealloc(NULL, h->nsnap * sizeof *ids);
    for (size_t i = 0; i < h->nsnap; i++)
        ids[i] = h->snaps[i].id;
    *n = h->nsnap;
    return ids;
}

char **hist_snapshot_files(hist *h, int64_t snapshot_id, bool manifests)
{
    char **v = strv_new();
    size_t len = 0;
    const hsnap *s = find_snap(h, snapshot_id);
    assert_non_null(s);
    if (s->list != NULL)
        strv_push(&v, &len, s->list);
    for (size_t k = 0; manifests && k < s->nman; k++)
        strv_push(&v, &len, h->manifests[s->man[k]].path);
    return v;
}

char **hist_live_names(hist *h, int64_t snapshot_id, bool with_delete_files)
{
    char **v = strv_new();
    size_t len = 0;
    const hsnap *s = find_snap(h, snapshot_id);
    for (size_t k = 0; s != NULL && k < s->nman; k++) {
        const hmanifest *m = &h->manifests[s->man[k]];
        for (size_t e = 0; e < m->n; e++) {
            if (m->entries[e].status == ICM_ENTRY_DELETED ||
                (m->entries[e].content != ICM_FILE_CONTENT_DATA && !with_delete_files))
                continue;
            const char *base = strrchr(m->entries[e].path, '/') + 1;
            char *name = xstrdup(base);
            *strchr(name, '.') = '\0';
            if (!hist_strv_has(v, name))
                strv_push(&v, &len, name);
            free(name);
        }
    }
    return v;
}

void hist_strv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

size_t hist_strv_len(char *const *v)
{
    size_t n = 0;
    while (v != NULL && v[n] != NULL)
        n++;
    return n;
}

bool hist_strv_has(char *const *v, const char *s)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}
