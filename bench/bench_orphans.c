/*
 * bench/bench_orphans.c: the orphan sweep at scale on local disk (results: docs/BENCHMARKS.md,
 * section "Orphan sweep"; driver: bench/orphans_bench.sh).
 *
 *   bench_orphans gen DIR N_REFERENCED N_ORPHANS [LOCATION]
 *       writes a filesystem-layout table at DIR/t: N_REFERENCED empty data files referenced by
 *       one snapshot (manifests of 10,000 entries written with the library's manifest writer),
 *       plus N_ORPHANS empty unreferenced files, spread over 1,000 partition folders. With
 *       LOCATION (e.g. s3://bucket/orphans/t) the files are still written under DIR/t but the
 *       metadata names them under LOCATION: for a server that serves a directory as a bucket
 *       (bench/s3/s3_bench.sh writes into versitygw's posix bucket folder: files are objects).
 *   bench_orphans run DIR [no-verify]   (DIR: a folder holding t/, or a table location URI)
 *       a dry run of icm_orphan_sweep over DIR/t with every file old enough (with
 *       `no-verify`: options.no_verify, to see what the presence check costs); prints
 *       one line: seconds (wall and CPU), files listed, orphans, referenced, keep-set bytes (and per
 *       referenced file) and the process's peak RSS; then the same with the listing limited
 *       to metadata/, which times the keep-set build (reading every manifest) alone.
 *   bench_orphans gen-sized DIR N_REFERENCED N_ORPHANS
 *       gen, every file holding 1 + (i % 1000) bytes that its entry records (orphans too):
 *       each orphan has the size of referenced files, so the sweep also walks for twins
 *       (maint/orphans_twins.c; the files are no Parquet files, so none is held).
 *   bench_orphans meta DIR N_REFERENCED
 *       gen's metadata only (manifests naming N_REFERENCED data files), no data files on disk:
 *       the table for a sweep fed a file list (bench/sweep_list_bench.sh), where 100M files
 *       could not be created.
 *   bench_orphans list DIR N_ROWS ORPHAN_PERCENT > FILE
 *       streams a `--file-list` (path<TAB>size<TAB>mtime_ms, the mtime in 2020: old enough) of
 *       N_ROWS data rows naming DIR/t's files (after a row for each metadata file, as an
 *       inventory has them): ORPHAN_PERCENT of them unreferenced (o-*), the rest
 *       the referenced r-0..r-(k-1) in order, orphans spread evenly among them; the table needs
 *       `meta DIR k` with k = N_ROWS - N_ROWS * ORPHAN_PERCENT / 100.
 * The two steps are separate processes so the run's peak RSS is the sweep's alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "icemaint/catalog.h"
#include "icemaint/manifest.h"
#include "icemaint/orphans.h"

#define PARTITIONS 1000
#define PER_MANIFEST 10000
#define SCHEMA "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\"," \
               "\"required\":false,\"type\":\"long\"}]}"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int die(const char *what, int rc)
{
    const icm_error *e = icm_error_last();
    fprintf(stderr, "bench_orphans: %s: %d %s: %s\n", what, rc, e->location, e->message);
    return 1;
}

/* gen-sized: file i holds sized_bytes(i) bytes, and its entry says so. */
static bool g_sized;

static long sized_bytes(long i)
{
    return g_sized ? 1 + i % 1000 : 0;
}

static void touch(const char *path, long bytes)
{
    static const char fill[1000] = {0};
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || (bytes > 0 && write(fd, fill, (size_t)bytes) != (ssize_t)bytes)) {
        perror(path);
        exit(1);
    }
    close(fd);
}

/* The table location the metadata names (DIR/t unless gen was given LOCATION). */
static const char *g_name;

static void data_path(char *buf, size_t n, const char *dir, char kind, long i)
{
    snprintf(buf, n, "%s/t/data/p=%04ld/%c-%08ld.parquet", dir, i % PARTITIONS, kind, i);
}

static void data_name(char *buf, size_t n, char kind, long i)
{
    snprintf(buf, n, "%s/data/p=%04ld/%c-%08ld.parquet", g_name, i % PARTITIONS, kind, i);
}

/* Write one manifest of entries [lo, hi) and add it to the list. */
static int write_manifest(icm_fileio *io, icm_manifest_list_writer *lw, const char *dir,
                          long lo, long hi, int k)
{
    icm_manifest_writer_options wo = {.version = ICM_MANIFEST_WRITER_OPTIONS_VERSION,
                                      .format_version = 2,
                                      .codec = ICM_AVRO_CODEC_DEFLATE,
                                      .compression_level = -1,
                                      .content = ICM_MANIFEST_CONTENT_DATA,
                                      .schema_json = SCHEMA,
                                      .schema_id = 0,
                                      .partition_spec_json = "[]",
                                      .partition_spec_id = 0,
                                      .partition_avro_schema_json = NULL,
                                      .block_bytes = 0};
    icm_manifest_writer *w = NULL;
    int rc = icm_manifest_writer_new(&w, &wo);
    char path[4096];
    for (long i = lo; rc == 0 && i < hi; i++) {
        data_name(path, sizeof path, 'r', i);
        icm_manifest_entry e;
        memset(&e, 0, sizeof e);
        e.status = ICM_ENTRY_ADDED;
        e.has_snapshot_id = true;
        e.snapshot_id = 1;
        e.data_file.content = ICM_FILE_CONTENT_DATA;
        e.data_file.file_path = path;
        e.data_file.file_path_len = strlen(path);
        e.data_file.file_format = ICM_FILE_FORMAT_PARQUET;
        e.data_file.record_count = 1;
        e.data_file.file_size_in_bytes = sized_bytes(i);
        rc = icm_manifest_writer_add(w, &e);
    }
    char *buf = NULL;
    size_t len = 0;
    icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
    if (rc == 0)
        rc = icm_manifest_writer_finish(&buf, &len, &mf, w);
    icm_manifest_writer_free(w);
    if (rc != 0)
        return rc;
    snprintf(path, sizeof path, "%s/t/metadata/m-%05d.avro", dir, k);
    rc = icm_fileio_write_replace(io, path, buf, len);
    icm_free(buf);
    snprintf(path, sizeof path, "%s/metadata/m-%05d.avro", g_name, k);
    mf.manifest_path = path;
    mf.manifest_path_len = strlen(path);
    mf.has_added_snapshot_id = true;
    mf.added_snapshot_id = 1;
    if (rc == 0)
        rc = icm_manifest_list_writer_add(lw, &mf);
    return rc;
}

static int write_metadata(icm_fileio *io, const char *dir)
{
    int64_t ts = wall_ms();
    char *json = NULL;
    if (asprintf(&json,
                 "{\"format-version\":2,\"table-uuid\":\"5e1d0c2b-0000-4000-8000-00000000be0c\","
                 "\"location\":\"%s\",\"last-sequence-number\":1,\"last-updated-ms\":%" PRId64
                 ",\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[" SCHEMA "],"
                 "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
                 "\"last-partition-id\":999,\"default-sort-order-id\":0,\"sort-orders\":[{"
                 "\"order-id\":0,\"fields\":[]}],\"properties\":{},\"current-snapshot-id\":1,"
                 "\"refs\":{\"main\":{\"snapshot-id\":1,\"type\":\"branch\"}},\"snapshots\":[{"
                 "\"snapshot-id\":1,\"sequence-number\":1,\"timestamp-ms\":%" PRId64 ","
                 "\"manifest-list\":\"%s/metadata/snap-1.avro\",\"summary\":{\"operation\":"
                 "\"append\"},\"schema-id\":0}],\"snapshot-log\":[{\"timestamp-ms\":%" PRId64
                 ",\"snapshot-id\":1}],\"metadata-log\":[]}",
                 g_name, ts, ts, g_name, ts) < 0)
        return ICM_ENOMEM;
    char path[4096];
    snprintf(path, sizeof path, "%s/t/metadata/v1.metadata.json", dir);
    int rc = icm_fileio_write_replace(io, path, json, strlen(json));
    free(json);
    snprintf(path, sizeof path, "%s/t/metadata/version-hint.text", dir);
    if (rc == 0)
        rc = icm_fileio_write_replace(io, path, "1", 1);
    return rc;
}

static int gen(const char *dir, long n_ref, long n_orphan, const char *name, bool files)
{
    char path[4096];
    static char dirloc[4096];
    snprintf(dirloc, sizeof dirloc, "%s/t", dir);
    g_name = name != NULL ? name : dirloc;
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/t", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/t/data", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/t/metadata", dir);
    mkdir(path, 0755);
    for (long p = 0; p < PARTITIONS; p++) {
        snprintf(path, sizeof path, "%s/t/data/p=%04ld", dir, p);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            perror(path);
            return 1;
        }
    }
    for (long i = 0; files && i < n_ref; i++) {
        data_path(path, sizeof path, dir, 'r', i);
        touch(path, sized_bytes(i));
    }
    for (long i = 0; files && i < n_orphan; i++) {
        data_path(path, sizeof path, dir, 'o', i);
        touch(path, sized_bytes(i));
    }
    icm_fileio *io = NULL;
    int rc = icm_fileio_local_new(&io);
    icm_manifest_list_writer_options lo = {.version = ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION,
                                           .format_version = 2,
                                           .codec = ICM_AVRO_CODEC_DEFLATE,
                                           .compression_level = -1,
                                           .snapshot_id = 1,
                                           .has_parent_snapshot_id = false,
                                           .parent_snapshot_id = 0,
                                           .sequence_number = 1,
                                           .first_row_id = 0,
                                           .block_bytes = 0};
    icm_manifest_list_writer *lw = NULL;
    if (rc == 0)
        rc = icm_manifest_list_writer_new(&lw, &lo);
    int k = 0;
    for (long lo_i = 0; rc == 0 && lo_i < n_ref; lo_i += PER_MANIFEST, k++) {
        long hi = lo_i + PER_MANIFEST < n_ref ? lo_i + PER_MANIFEST : n_ref;
        rc = write_manifest(io, lw, dir, lo_i, hi, k);
    }
    char *buf = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = icm_manifest_list_writer_finish(&buf, &len, lw);
    icm_manifest_list_writer_free(lw);
    snprintf(path, sizeof path, "%s/t/metadata/snap-1.avro", dir);
    if (rc == 0)
        rc = icm_fileio_write_replace(io, path, buf, len);
    icm_free(buf);
    if (rc == 0)
        rc = write_metadata(io, dir);
    icm_fileio_free(io);
    return rc == 0 ? 0 : die("gen", rc);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(const char *dir, bool no_verify)
{
    /* DIR is a local folder holding t/, or a table location URI (s3://...: the resolving
     * FileIO, configured from the AWS environment as the CLI is without a catalog). */
    bool uri = strstr(dir, "://") != NULL;
    char loc[4096];
    snprintf(loc, sizeof loc, uri ? "%s" : "%s/t", dir);
    icm_fileio *io = NULL;
    icm_table *t = NULL;
    int rc = uri ? icm_fileio_resolving_new(&io, NULL, 0) : icm_fileio_local_new(&io);
    if (rc == 0)
        rc = icm_table_open_dir(&t, io, loc);
    if (rc != 0)
        return die("open", rc);
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.dry_run = true;
    o.no_verify = no_verify;
    o.force = true;
    o.has_older_than = true;
    o.older_than_ms = wall_ms() + 3600 * 1000;
    icm_orphan_result *r = NULL;
    double t0 = now_s(), c0 = cpu_s();
    rc = icm_orphan_sweep(&r, t, &o);
    double secs = now_s() - t0, cpu = cpu_s() - c0;
    if (rc != 0)
        return die("sweep", rc);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("dry_run_seconds=%.3f cpu_seconds=%.3f%s listed=%zu orphans=%zu referenced=%zu keep_set_bytes=%zu "
           "keep_set_bytes_per_referenced=%.1f peak_rss_kb=%ld\n",
           secs, cpu, no_verify ? " (no-verify)" : "", r->listed, r->orphan_count, r->referenced, r->keep_set_bytes,
           r->referenced ? (double)r->keep_set_bytes / (double)r->referenced : 0.0,
           ru.ru_maxrss);
    icm_orphan_result_free(r);

    /* The same with the listing limited to metadata/ (93 files): the keep-set build alone. */
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/metadata", loc);
    o.location = meta;
    t0 = now_s();
    rc = icm_orphan_sweep(&r, t, &o);
    secs = now_s() - t0;
    if (rc != 0)
        return die("sweep of metadata/", rc);
    printf("keep_set_only_seconds=%.3f (listing limited to %zu files)\n", secs, r->listed);
    icm_orphan_result_free(r);
    icm_table_free(t);
    icm_fileio_free(io);
    return 0;
}

/* The file list for `meta`'s table, to stdout through one big buffer (10 GB at 100M rows):
 * first the metadata files as they are (an inventory names them too; the sweep's presence
 * check would otherwise look each of them up in storage), then the data rows. */
static int list(const char *dir, long n_rows, long orphan_percent)
{
    static char out[1 << 20];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    char path[4096];
    snprintf(path, sizeof path, "%s/t/metadata", dir);
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return 1;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        struct stat st;
        snprintf(path, sizeof path, "%s/t/metadata/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            printf("%s\t%lld\t%lld\n", path, (long long)st.st_size,
                   (long long)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000);
    }
    closedir(d);
    long n_orphan = n_rows * orphan_percent / 100, ref = 0, orphan = 0;
    for (long j = 0; j < n_rows; j++) {
        /* row j is an orphan when the running share of orphans steps up at it */
        bool is_orphan = (j + 1) * n_orphan / n_rows != j * n_orphan / n_rows;
        long i = is_orphan ? orphan++ : ref++;
        if (printf("%s/t/data/p=%04ld/%c-%08ld.parquet\t%ld\t%" PRId64 "\n", dir,
                   i % PARTITIONS, is_orphan ? 'o' : 'r', i, 1000 + i % 100000,
                   (int64_t)1600000000000 + i) < 0)
            return 1;
    }
    fprintf(stderr, "bench_orphans list: %ld rows, %ld referenced, %ld orphans\n", n_rows, ref,
            orphan);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], atol(argv[3]), atol(argv[4]), argc == 6 ? argv[5] : NULL, true);
    if (argc == 5 && strcmp(argv[1], "gen-sized") == 0) {
        g_sized = true;
        return gen(argv[2], atol(argv[3]), atol(argv[4]), NULL, true);
    }
    if (argc == 4 && strcmp(argv[1], "meta") == 0)
        return gen(argv[2], atol(argv[3]), 0, NULL, false);
    if (argc == 5 && strcmp(argv[1], "list") == 0)
        return list(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 3 && strcmp(argv[1], "run") == 0)
        return run(argv[2], false);
    if (argc == 4 && strcmp(argv[1], "run") == 0 && strcmp(argv[3], "no-verify") == 0)
        return run(argv[2], true);
    fprintf(stderr, "usage: bench_orphans gen DIR N_REFERENCED N_ORPHANS [LOCATION]\n"
                    "       bench_orphans meta DIR N_REFERENCED\n"
                    "       bench_orphans list DIR N_ROWS ORPHAN_PERCENT > FILE\n"
                    "       bench_orphans run DIR [no-verify]\n");
    return 2;
}
