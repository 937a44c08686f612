/*
 * tests/unit/test_txn_common.h: helpers shared by the transaction tests (test_txn.c,
 * test_txn_crash.c): listing what exists under a directory, a minimal Parquet file with a
 * chosen row count, data-file descriptions, and the "every referenced file exists" check.
 */
#ifndef ICM_TEST_TXN_COMMON_H
#define ICM_TEST_TXN_COMMON_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "icemaint/catalog.h"
#include "icemaint/fileio.h"
#include "icemaint/manifest.h"
#include "icemaint/metadata.h"
#include "icemaint/transaction.h"
#include "testutil.h"

#define TXN_SCHEMA_JSON                                                                      \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["                                      \
    "{\"id\":1,\"name\":\"id\",\"required\":false,\"type\":\"long\"},"                      \
    "{\"id\":2,\"name\":\"data\",\"required\":false,\"type\":\"string\"}]}"

/* A filesystem catalog over `dir` holding namespace `db` and table `db.t` (TXN_SCHEMA_JSON;
 * commit retries wait 1-2 ms), created through `io`; the catalog is closed again. */
static inline void create_fs_table(const char *dir, icm_fileio *io)
{
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_hadoop(&cat, "fs", dir, io));
    icmt_ok(icm_catalog_create_namespace(cat, "db"));
    icm_property props[] = {{"commit.retry.min-wait-ms", "1"},
                            {"commit.retry.max-wait-ms", "2"}};
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  TXN_SCHEMA_JSON, NULL, NULL, props, 2};
    icmt_ok(icm_catalog_create_table(NULL, cat, "db.t", &o));
    icm_catalog_free(cat);
}

/* Number of regular files below dir (recursive), names not starting with '.'; hidden files
 * (temp files of the local FileIO) are counted separately in *hidden when not NULL. */
static inline int count_files(const char *dir, int *hidden)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = icmt_sprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            n += count_files(p, hidden);
        else if (e->d_name[0] == '.') {
            if (hidden != NULL)
                (*hidden)++;
        } else
            n++;
        free(p);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Files whose name ends with `suffix` directly in dir. */
static inline int count_suffix(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (e->d_name[0] != '.' && l >= s && strcmp(e->d_name + l - s, suffix) == 0)
            n++;
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* A file that is Parquet as far as its footer goes: PAR1, FileMetaData {1: version=1,
 * 2: schema [{4: name="schema"}], 3: num_rows, 4: row_groups []}, footer length, PAR1. */
static inline void write_parquet_stub(const char *path, int64_t rows)
{
    unsigned char buf[64];
    size_t n = 0;
    memcpy(buf, "PAR1", 4);
    n = 4;
    size_t footer_start = n;
    buf[n++] = 0x15; buf[n++] = 0x02;                   /* 1: i32 version = 1 */
    buf[n++] = 0x19; buf[n++] = 0x1C;                   /* 2: list<struct>, 1 element */
    buf[n++] = 0x48; buf[n++] = 6;                      /*    4: binary name */
    memcpy(buf + n, "schema", 6); n += 6;
    buf[n++] = 0x00;                                    /*    end of SchemaElement */
    buf[n++] = 0x16;                                    /* 3: i64 num_rows */
    uint64_t z = (uint64_t)rows << 1;                   /*    zigzag (rows >= 0) */
    do {
        unsigned char b = (unsigned char)(z & 0x7f);
        z >>= 7;
        buf[n++] = (unsigned char)(b | (z ? 0x80 : 0));
    } while (z);
    buf[n++] = 0x19; buf[n++] = 0x0C;                   /* 4: list<struct>, empty */
    buf[n++] = 0x00;                                    /* end of FileMetaData */
    uint32_t flen = (uint32_t)(n - footer_start);
    buf[n++] = (unsigned char)flen; buf[n++] = (unsigned char)(flen >> 8);
    buf[n++] = (unsigned char)(flen >> 16); buf[n++] = (unsigned char)(flen >> 24);
    memcpy(buf + n, "PAR1", 4);
    n += 4;
    icmt_write_file(path, buf, n);
}

static inline icm_data_file make_df(const char *path, int64_t rows, int64_t size)
{
    icm_data_file d;
    memset(&d, 0, sizeof d);
    d.content = ICM_FILE_CONTENT_DATA;
    d.file_path = path;
    d.file_format = ICM_FILE_FORMAT_PARQUET;
    d.record_count = rows;
    d.file_size_in_bytes = size;
    return d;
}

/* ---- "every file a snapshot references exists" ---- */

typedef struct ref_check {
    icm_fileio *io;
    int missing;
    int checked;
    int format_version;
} ref_check;

static inline int exists_via(icm_fileio *io, const char *loc)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    return icm_fileio_stat(&info, io, loc) == 0;
}

static inline int check_entry_cb(const icm_manifest_entry *e, void *payload)
{
    ref_check *c = payload;
    if (e->status == ICM_ENTRY_DELETED)
        return 0;
    c->checked++;
    if (!exists_via(c->io, e->data_file.file_path)) {
        print_error("missing data file %s\n", e->data_file.file_path);
        c->missing++;
    }
    return 0;
}

static inline int check_manifest_cb(const icm_manifest_file *mf, void *payload)
{
    ref_check *c = payload;
    c->checked++;
    if (!exists_via(c->io, mf->manifest_path)) {
        print_error("missing manifest %s\n", mf->manifest_path);
        c->missing++;
        return 0;
    }
    icm_manifest_read_options o = ICM_MANIFEST_READ_OPTIONS_INIT;
    o.format_version = c->format_version;
    int rc = icm_manifest_read(c->io, mf, &o, check_entry_cb, c);
    if (rc != 0) {
        print_error("cannot read manifest %s: %s\n", mf->manifest_path,
                    icm_error_last()->message);
        c->missing++;
    }
    return 0;
}

/* Number of files referenced by any snapshot of md that do not exist (0 = consistent). */
static inline int missing_referenced_files(icm_fileio *io, const icm_table_metadata *md, int *checked)
{
    ref_check c = {io, 0, 0, icm_table_metadata_format_version(md)};
    for (size_t i = 0; i < icm_table_metadata_snapshot_count(md); i++) {
        const icm_snapshot *s = icm_table_metadata_snapshot_at(md, i);
        c.checked++;
        if (!exists_via(io, s->manifest_list)) {
            print_error("missing manifest list %s\n", s->manifest_list);
            c.missing++;
            continue;
        }
        icm_manifest_list_read_options lo = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        lo.format_version = c.format_version;
        if (icm_manifest_list_read(io, s->manifest_list, &lo, check_manifest_cb, &c) != 0)
            c.missing++;
    }
    if (checked != NULL)
        *checked = c.checked;
    return c.missing;
}

/* Collect the manifest list entries of a snapshot (copies of paths and a few fields). */
typedef struct mf_row {
    char *path;
    int content;
    int64_t sequence_number;
    int64_t added_snapshot_id;
    int32_t added, existing, deleted;
    bool has_first_row_id;
    int64_t first_row_id;
} mf_row;

typedef struct mf_rows {
    mf_row rows[32];
    int n;
} mf_rows;

static inline int collect_mf_cb(const icm_manifest_file *mf, void *payload)
{
    mf_rows *r = payload;
    assert_true(r->n < 32);
    mf_row *row = &r->rows[r->n++];
    row->path = strdup(mf->manifest_path);
    row->content = (int)mf->content;
    row->sequence_number = mf->sequence_number;
    row->added_snapshot_id = mf->added_snapshot_id;
    row->added = mf->added_files_count;
    row->existing = mf->existing_files_count;
    row->deleted = mf->deleted_files_count;
    row->has_first_row_id = mf->has_first_row_id;
    row->first_row_id = mf->first_row_id;
    return 0;
}

static inline void read_list(icm_fileio *io, const char *list, mf_rows *out)
{
    memset(out, 0, sizeof *out);
    icmt_ok(icm_manifest_list_read(io, list, NULL, collect_mf_cb, out));
}

static inline void free_rows(mf_rows *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->rows[i].path);
    r->n = 0;
}

#endif
