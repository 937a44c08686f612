/*
 * bench/bench_expire.c: snapshot-expiry planning at scale on local disk (results:
 * docs/BENCHMARKS.md, section "Snapshot expiry").
 *
 *   bench_expire gen DIR SNAPSHOTS FILES_PER_SNAPSHOT [LOCATION]
 *       writes a filesystem-layout table at DIR/t with format v2, deflate ("gzip") Avro:
 *       snapshot k fast-appends one manifest of FILES_PER_SNAPSHOT data files; every 10th
 *       snapshot also deletes every file of the manifest appended 9 snapshots earlier (a
 *       rewritten manifest holding them as DELETED, dropped again by the next snapshot). Each
 *       manifest list names every live manifest, as Java's FastAppend does. Data files are not
 *       created (planning never opens them; `touch` creates them for verification).
 *       With LOCATION (e.g. s3://bucket/expire/t) the files are still written under DIR/t,
 *       but the metadata names them under LOCATION: for a server that serves a directory as
 *       a bucket (bench/s3/s3_bench.sh writes the table straight into versitygw's posix
 *       bucket folder, where every file is an object).
 *   bench_expire touch DIR SNAPSHOTS FILES_PER_SNAPSHOT
 *       creates every data file `gen` names, empty, so that verification (which stats every
 *       retained file) finds them.
 *   bench_expire run DIR [verify]   (DIR: a folder holding t/, or a table location URI)
 *       `expire-snapshots --dry-run --no-verify` in-process (with `verify`: verification on,
 *       which needs `touch` first): the older half of the snapshots expire; prints seconds
 *       (open + expiry, the table open, and the expiry call alone), snapshots expired, files
 *       planned per kind, and the process's peak RSS.
 *   bench_expire floor DIR
 *       the decode floor: read and decode every unique manifest list and manifest once (file
 *       path only), nothing else; prints seconds and peak RSS.
 *   bench_expire inflate DIR [zlib|libdeflate]
 *       the inflate floor (the definition): read every Avro file in DIR/t/metadata
 *       (for a generated table: every manifest list and every unique manifest, once) and
 *       inflate each deflate block with zlib (default) or libdeflate (what the library uses),
 *       decoding nothing; the container framing is walked by hand, so no schema is parsed.
 * Every step prints wall and CPU seconds (CPU is steadier on a shared machine).
 * Each step is its own process so peak RSS is that step's alone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <dirent.h>
#include <time.h>

#include <libdeflate.h>
#include <zlib.h>

#include "icemaint/catalog.h"
#include "icemaint/expire.h"
#include "icemaint/manifest.h"
#include "maint/keepset.h"

#define SCHEMA "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\"," \
               "\"required\":false,\"type\":\"long\"}]}"
#define T_BASE INT64_C(1700000000000)
#define T_STEP INT64_C(60000)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int die(const char *what, int rc)
{
    const icm_error *e = icm_error_last();
    fprintf(stderr, "bench_expire: %s: %d %s: %s\n", what, rc, e->location, e->message);
    return 1;
}

/* ---- generation ---- */

typedef struct man {
    char *path;
    int64_t length, snapshot_id, seq;
    int32_t added, existing, deleted;
} man;

typedef struct gen {
    icm_fileio *io;
    const char *loc;  /* where the files are written (DIR/t) */
    const char *name; /* the table location the metadata names them under */
    man *mans;       /* every manifest written */
    size_t nman;
    size_t *live;    /* indices of live manifests */
    size_t nlive;
    size_t files_per;
} gen;

/* Create the file the metadata names `named` (under g->name) at its place under g->loc. */
static int create_named(gen *g, const char *named, const void *data, size_t len)
{
    size_t skip = strlen(g->name);
    char *local = malloc(strlen(g->loc) + strlen(named + skip) + 1);
    if (local == NULL)
        return ICM_ENOMEM;
    sprintf(local, "%s%s", g->loc, named + skip);
    int rc = icm_fileio_create_new(g->io, local, data, len);
    free(local);
    return rc;
}

static int write_manifest(gen *g, int64_t snap, int64_t seq, size_t source, bool deleted,
                          size_t *out)
{
    icm_manifest_writer_options wo = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    wo.format_version = 2;
    wo.codec = ICM_AVRO_CODEC_DEFLATE;
    wo.compression_level = -1;
    wo.content = ICM_MANIFEST_CONTENT_DATA;
    wo.schema_json = SCHEMA;
    wo.schema_id = 0;
    wo.partition_spec_json = "[]";
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_writer_new(&w, &wo);
    if (rc != 0)
        return rc;
    char path[512];
    for (size_t i = 0; rc == 0 && i < g->files_per; i++) {
        snprintf(path, sizeof path, "%s/data/part-%05zu-%05zu-0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e.parquet",
                 g->name, source, i);
        icm_manifest_entry e;
        memset(&e, 0, sizeof e);
        e.status = deleted ? ICM_ENTRY_DELETED : ICM_ENTRY_ADDED;
        e.has_snapshot_id = true;
        e.snapshot_id = snap;
        if (deleted) {
            e.has_sequence_number = e.has_file_sequence_number = true;
            e.sequence_number = e.file_sequence_number = (int64_t)source + 1;
        }
        e.data_file.file_path = path;
        e.data_file.file_path_len = strlen(path);
        e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
        e.data_file.file_format_name = "PARQUET";
        e.data_file.record_count = 1000;
        e.data_file.file_size_in_bytes = 1 << 20;
        rc = icm_manifest_writer_add(w, &e);
    }
    char *data = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = icm_manifest_writer_finish(&data, &len, NULL, w);
    icm_manifest_writer_free(w);
    man m = {NULL, (int64_t)len, snap, seq, deleted ? 0 : (int32_t)g->files_per, 0,
             deleted ? (int32_t)g->files_per : 0};
    char *mpath = malloc(strlen(g->name) + 64);
    sprintf(mpath, "%s/metadata/m-%06" PRId64 "-%s.avro", g->name, snap, deleted ? "d" : "a");
    m.path = mpath;
    if (rc == 0)
        rc = create_named(g, mpath, data, len);
    icm_free(data);
    g->mans = realloc(g->mans, (g->nman + 1) * sizeof *g->mans);
    g->mans[g->nman] = m;
    *out = g->nman++;
    return rc;
}

static int write_list(gen *g, int64_t snap, int64_t seq, const size_t *idx, size_t n,
                      char *list_path)
{
    icm_manifest_list_writer_options lo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lo.format_version = 2;
    lo.codec = ICM_AVRO_CODEC_DEFLATE;
    lo.compression_level = -1;
    lo.snapshot_id = snap;
    lo.has_parent_snapshot_id = snap > 1;
    lo.parent_snapshot_id = snap - 1;
    lo.sequence_number = seq;
    icm_manifest_list_writer *w = NULL;
    int rc = icm_manifest_list_writer_new(&w, &lo);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const man *m = &g->mans[idx[k]];
        icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
        mf.manifest_path = m->path;
        mf.manifest_path_len = strlen(m->path);
        mf.manifest_length = m->length;
        mf.content = ICM_MANIFEST_CONTENT_DATA;
        mf.sequence_number = mf.min_sequence_number = m->seq;
        mf.has_added_snapshot_id = true;
        mf.added_snapshot_id = m->snapshot_id;
        mf.has_added_files_count = mf.has_existing_files_count = mf.has_deleted_files_count =
            true;
        mf.added_files_count = m->added;
        mf.existing_files_count = m->existing;
        mf.deleted_files_count = m->deleted;
        mf.has_added_rows_count = mf.has_existing_rows_count = mf.has_deleted_rows_count = true;
        mf.added_rows_count = (int64_t)m->added * 1000;
        mf.existing_rows_count = (int64_t)m->existing * 1000;
        mf.deleted_rows_count = (int64_t)m->deleted * 1000;
        rc = icm_manifest_list_writer_add(w, &mf);
    }
    char *data = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = icm_manifest_list_writer_finish(&data, &len, w);
    icm_manifest_list_writer_free(w);
    if (rc == 0)
        rc = create_named(g, list_path, data, len);
    icm_free(data);
    return rc;
}

static int generate(const char *dir, size_t snapshots, size_t files_per, const char *name)
{
    char dirloc[4096];
    snprintf(dirloc, sizeof dirloc, "%s/t", dir);
    const char *loc = name != NULL ? name : dirloc;
    gen g = {NULL, dirloc, loc, NULL, 0, calloc(snapshots + 1, sizeof(size_t)), 0, files_per};
    int rc = icm_fileio_local_new(&g.io);
    char *json_path = malloc(strlen(dirloc) + 64);
    sprintf(json_path, "%s/metadata/v1.metadata.json", dirloc);
    size_t *appended = calloc(snapshots + 1, sizeof *appended);
    char **lists = calloc(snapshots + 1, sizeof *lists);
    for (size_t k = 1; rc == 0 && k <= snapshots; k++) {
        int64_t snap = (int64_t)k, seq = (int64_t)k;
        size_t a = 0, d = SIZE_MAX;
        rc = write_manifest(&g, snap, seq, k, false, &a);
        appended[k] = a;
        size_t *cur = malloc((g.nlive + 2) * sizeof *cur);
        size_t n = 0;
        cur[n++] = a;
        if (rc == 0 && k % 10 == 0 && k > 9) {
            rc = write_manifest(&g, snap, seq, k - 9, true, &d);
            cur[n++] = d;
        }
        size_t keep = 0;
        for (size_t i = 0; i < g.nlive; i++) {
            if (d != SIZE_MAX && g.live[i] == appended[k - 9])
                continue; /* its files were deleted by this snapshot */
            g.live[keep++] = g.live[i];
            cur[n++] = g.live[i];
        }
        g.nlive = keep;
        g.live[g.nlive++] = a;
        lists[k] = malloc(strlen(loc) + 64);
        sprintf(lists[k], "%s/metadata/snap-%06zu.avro", loc, k);
        if (rc == 0)
            rc = write_list(&g, snap, seq, cur, n, lists[k]);
        free(cur);
        if (k % 200 == 0)
            fprintf(stderr, "bench_expire: %zu snapshots\n", k);
    }
    if (rc != 0)
        return die("generate", rc);
    /* metadata JSON */
    size_t cap = snapshots * 400 + 4096;
    char *j = malloc(cap);
    size_t len = (size_t)snprintf(
        j, cap,
        "{\"format-version\":2,\"table-uuid\":\"0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e\","
        "\"location\":\"%s\",\"last-sequence-number\":%zu,\"last-updated-ms\":%" PRId64 ","
        "\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[" SCHEMA "],"
        "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"last-partition-id\":999,\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,"
        "\"fields\":[]}],\"properties\":{},\"current-snapshot-id\":%zu,"
        "\"refs\":{\"main\":{\"snapshot-id\":%zu,\"type\":\"branch\"}},\"snapshots\":[",
        loc, snapshots, T_BASE + (int64_t)snapshots * T_STEP, snapshots, snapshots);
    for (size_t k = 1; k <= snapshots; k++) {
        char parent[48] = "";
        if (k > 1)
            snprintf(parent, sizeof parent, ",\"parent-snapshot-id\":%zu", k - 1);
        len += (size_t)snprintf(j + len, cap - len,
                                "%s{\"snapshot-id\":%zu%s,\"sequence-number\":%zu,"
                                "\"timestamp-ms\":%" PRId64 ",\"summary\":{\"operation\":\"%s\"},"
                                "\"manifest-list\":\"%s\",\"schema-id\":0}",
                                k > 1 ? "," : "", k, parent, k, T_BASE + (int64_t)k * T_STEP,
                                k % 10 == 0 ? "overwrite" : "append", lists[k]);
    }
    len += (size_t)snprintf(j + len, cap - len, "],\"snapshot-log\":[],\"metadata-log\":[]}");
    rc = icm_fileio_create_new(g.io, json_path, j, len);
    char *hint = malloc(strlen(dirloc) + 64);
    sprintf(hint, "%s/metadata/version-hint.text", dirloc);
    if (rc == 0)
        rc = icm_fileio_write_replace(g.io, hint, "1", 1);
    free(hint);
    free(j);
    free(json_path);
    if (rc != 0)
        return die("metadata", rc);
    printf("generated %s: %zu snapshots, %zu manifests, %zu data files\n", loc, snapshots,
           g.nman, snapshots * files_per);
    return 0;
}

/* ---- run: the dry-run expiry ---- */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(const char *dir, bool verify)
{
    /* DIR is a local folder holding t/, or a table location URI (s3://...: the resolving
     * FileIO, configured from the AWS environment as the CLI is without a catalog). */
    bool uri = strstr(dir, "://") != NULL;
    char loc[4096];
    snprintf(loc, sizeof loc, uri ? "%s" : "%s/t", dir);
    icm_fileio *io = NULL;
    icm_table *t = NULL;
    int rc = uri ? icm_fileio_resolving_new(&io, NULL, 0) : icm_fileio_local_new(&io);
    double t0 = now_s(), c0 = cpu_s();
    if (rc == 0)
        rc = icm_table_open_dir(&t, io, loc);
    if (rc != 0)
        return die("open", rc);
    double t_open = now_s(), c_open = cpu_s();
    const icm_table_metadata *md = icm_table_get_metadata(t);
    size_t n = icm_table_metadata_snapshot_count(md);
    icm_expire_options o = ICM_EXPIRE_OPTIONS_INIT;
    o.dry_run = true;
    o.no_verify = !verify;
    o.decide.has_older_than = true;
    o.decide.older_than_ms = icm_table_metadata_snapshot_at(md, n / 2)->timestamp_ms;
    icm_expire_result *r = NULL;
    rc = icm_expire_snapshots(&r, t, &o);
    double t1 = now_s(), c1 = cpu_s();
    if (rc != 0)
        return die("expire", rc);
    /* "expiry" is the icm_expire_snapshots call alone: the table already open, as Java's timed
     * ExpireSnapshots.commit() has its TableMetadata loaded before the clock starts. */
    printf("dry run%s: %.3f s (cpu %.3f s; table open %.3f s, cpu %.3f s; expiry %.3f s, cpu %.3f "
           "s), %zu expired, %zu retained, planned %zu files (data %zu, manifests %zu, lists %zu), "
           "problems %zu, peak RSS %ld KiB\n",
           verify ? " (verified)" : "", t1 - t0, c1 - c0, t_open - t0, c_open - c0, t1 - t_open, c1 - c_open,
           r->expired_count, r->retained_count, r->total,
           r->counts[ICM_EXPIRE_FILE_DATA], r->counts[ICM_EXPIRE_FILE_MANIFEST],
           r->counts[ICM_EXPIRE_FILE_MANIFEST_LIST], r->problem_count, peak_rss_kib());
    icm_expire_result_free(r);
    icm_table_free(t);
    icm_fileio_free(io);
    return 0;
}

/* ---- floor: read + decode every unique list and manifest once ---- */

typedef struct floor_ctx {
    icm_fileio *io;
    icm__pathset *seen;
    size_t manifests, entries;
    int rc;
} floor_ctx;

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    (void)e;
    ((floor_ctx *)payload)->entries++;
    return 0;
}

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    floor_ctx *c = payload;
    bool added;
    int rc = icm__pathset_add(c->seen, mf->manifest_path, &added);
    if (rc != 0 || !added)
        return rc;
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    ro.fields = ICM_MANIFEST_FIELD_FILE_PATH;
    c->manifests++;
    return icm_manifest_read(c->io, mf, &ro, on_entry, c);
}

static int floor_run(const char *dir)
{
    char loc[4096];
    snprintf(loc, sizeof loc, "%s/t", dir);
    icm_fileio *io = NULL;
    icm_table *t = NULL;
    int rc = icm_fileio_local_new(&io);
    double t0 = now_s(), c0 = cpu_s();
    if (rc == 0)
        rc = icm_table_open_dir(&t, io, loc);
    if (rc != 0)
        return die("open", rc);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    floor_ctx c = {io, NULL, 0, 0, 0};
    rc = icm__pathset_new(&c.seen, 0);
    for (size_t i = 0; rc == 0 && i < icm_table_metadata_snapshot_count(md); i++)
        rc = icm_manifest_list_read(io, icm_table_metadata_snapshot_at(md, i)->manifest_list,
                                    NULL, on_manifest, &c);
    double t1 = now_s(), c1 = cpu_s();
    if (rc != 0)
        return die("floor", rc);
    printf("floor: %.3f s (cpu %.3f s), %zu lists, %zu unique manifests, %zu entries, "
           "peak RSS %ld KiB\n",
           t1 - t0, c1 - c0, icm_table_metadata_snapshot_count(md), c.manifests, c.entries,
           peak_rss_kib());
    icm__pathset_free(c.seen);
    icm_table_free(t);
    icm_fileio_free(io);
    return 0;
}

/* ---- inflate floor: read + inflate every Avro file once, decode nothing ---- */

typedef struct inflate_totals {
    size_t files, blocks, read_bytes, inflated_bytes;
} inflate_totals;

/* Avro long (zig-zag varint) at *p; false past end. */
static bool varint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
            return true;
        }
    }
    return false;
}

/* Skip the header's metadata map; false when malformed. */
static bool skip_meta(const uint8_t **p, const uint8_t *end)
{
    int64_t count, len;
    while (varint(p, end, &count) && count != 0) {
        if (count < 0 && !varint(p, end, &len)) /* block byte size: not needed */
            return false;
        for (int64_t i = 0; i < (count < 0 ? -count : count); i++)
            for (int kv = 0; kv < 2; kv++) {
                if (!varint(p, end, &len) || len < 0 || len > end - *p)
                    return false;
                *p += len;
            }
    }
    return count == 0;
}

/* Inflate one raw deflate stream into out (thrown away); false when corrupt. */
static bool inflate_zlib(z_stream *z, const uint8_t *in, size_t in_len, uint8_t *out,
                         size_t out_cap, inflate_totals *tot)
{
    inflateReset(z);
    z->next_in = (Bytef *)(uintptr_t)in;
    z->avail_in = (uInt)in_len;
    int zr;
    do {
        z->next_out = out;
        z->avail_out = (uInt)out_cap;
        zr = inflate(z, Z_NO_FLUSH);
        tot->inflated_bytes += out_cap - z->avail_out;
    } while (zr == Z_OK);
    return zr == Z_STREAM_END;
}

/* libdeflate needs room for the whole block: out_cap is generous (bench tables only). */
static bool inflate_libdeflate(struct libdeflate_decompressor *d, const uint8_t *in,
                               size_t in_len, uint8_t *out, size_t out_cap,
                               inflate_totals *tot)
{
    size_t n = 0;
    if (libdeflate_deflate_decompress(d, in, in_len, out, out_cap, &n) != LIBDEFLATE_SUCCESS)
        return false;
    tot->inflated_bytes += n;
    return true;
}

static int inflate_file(const uint8_t *data, size_t len, z_stream *z,
                        struct libdeflate_decompressor *d, uint8_t *out, size_t out_cap,
                        inflate_totals *tot)
{
    const uint8_t *p = data + 4, *end = data + len;
    if (len < 4 || memcmp(data, "Obj\x01", 4) != 0 || !skip_meta(&p, end) || end - p < 16)
        return -1;
    p += 16;
    while (p < end) {
        int64_t count, size;
        if (!varint(&p, end, &count) || !varint(&p, end, &size) || size < 0 ||
            size > end - p - 16)
            return -1;
        bool ok = d != NULL ? inflate_libdeflate(d, p, (size_t)size, out, out_cap, tot)
                            : inflate_zlib(z, p, (size_t)size, out, out_cap, tot);
        if (!ok)
            return -1;
        p += size + 16;
        tot->blocks++;
    }
    return 0;
}

static int inflate_run(const char *dir, const char *inflater)
{
    bool use_libdeflate = strcmp(inflater, "libdeflate") == 0;
    char mdir[4096], path[8192];
    snprintf(mdir, sizeof mdir, "%s/t/metadata", dir);
    double t0 = now_s(), c0 = cpu_s();
    DIR *d = opendir(mdir);
    if (d == NULL) {
        perror(mdir);
        return 1;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    size_t out_cap = (size_t)64 << 20;
    uint8_t *out = malloc(out_cap);
    struct libdeflate_decompressor *dec = use_libdeflate ? libdeflate_alloc_decompressor() : NULL;
    if (out == NULL || inflateInit2(&z, -15) != Z_OK || (use_libdeflate && dec == NULL)) {
        closedir(d);
        free(out);
        return 1;
    }
    inflate_totals tot = {0, 0, 0, 0};
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".avro") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", mdir, e->d_name);
        FILE *f = fopen(path, "rb");
        uint8_t *data = NULL;
        long size = -1;
        if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
            fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)size + 1)) != NULL &&
            fread(data, 1, (size_t)size, f) == (size_t)size)
            rc = inflate_file(data, (size_t)size, &z, dec, out, out_cap, &tot);
        else
            rc = -1;
        if (rc != 0)
            fprintf(stderr, "bench_expire: cannot inflate %s\n", path);
        tot.files++;
        tot.read_bytes += size > 0 ? (size_t)size : 0;
        free(data);
        if (f != NULL)
            fclose(f);
    }
    closedir(d);
    inflateEnd(&z);
    libdeflate_free_decompressor(dec);
    free(out);
    double t1 = now_s(), c1 = cpu_s();
    if (rc != 0)
        return 1;
    printf("inflate floor (%s): %.3f s (cpu %.3f s), %zu files, %zu blocks, %.1f MB read, %.1f MB "
           "inflated, peak RSS %ld KiB\n",
           use_libdeflate ? "libdeflate" : "zlib", t1 - t0, c1 - c0, tot.files, tot.blocks, (double)tot.read_bytes / 1e6,
           (double)tot.inflated_bytes / 1e6, peak_rss_kib());
    return 0;
}

/* ---- touch: the data files `gen` names, empty ---- */

static int touch_files(const char *dir, size_t snapshots, size_t files_per)
{
    char path[4096];
    size_t made = 0;
    for (size_t source = 0; source <= snapshots; source++) { /* (sources count from 1) */
        for (size_t i = 0; i < files_per; i++) {
            snprintf(path, sizeof path,
                     "%s/t/data/part-%05zu-%05zu-0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e.parquet",
                     dir, source, i);
            FILE *f = fopen(path, "a");
            if (f == NULL) {
                perror(path);
                return 1;
            }
            fclose(f);
            made++;
        }
    }
    printf("touched %zu data files\n", made);
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "gen") == 0)
        return generate(argv[2], strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10),
                        argc == 6 ? argv[5] : NULL);
    if (argc == 3 && strcmp(argv[1], "run") == 0)
        return run(argv[2], false);
    if (argc == 4 && strcmp(argv[1], "run") == 0 && strcmp(argv[3], "verify") == 0)
        return run(argv[2], true);
    if (argc == 5 && strcmp(argv[1], "touch") == 0)
        return touch_files(argv[2], strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
    if (argc == 3 && strcmp(argv[1], "floor") == 0)
        return floor_run(argv[2]);
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "inflate") == 0)
        return inflate_run(argv[2], argc == 4 ? argv[3] : "zlib");
    fprintf(stderr, "usage: bench_expire gen DIR SNAPSHOTS FILES_PER_SNAPSHOT [LOCATION] | touch DIR "
                    "SNAPSHOTS FILES_PER_SNAPSHOT | run DIR [verify] | floor DIR | inflate DIR "
                    "[zlib|libdeflate]\n");
    return 2;
}
