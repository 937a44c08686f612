/*
 * tests/unit/test_orphans_common.h: helpers shared by the orphan-sweep tests: listing every
 * file below a prefix, exact set assertions on survivors and orphans, planting strays with a
 * chosen mtime on the in-memory FileIO, and hand-written table metadata for tables the history
 * builder cannot express (partition fields named `_c2_trunc`, arbitrary referenced paths).
 */
#ifndef ICM_TEST_ORPHANS_COMMON_H
#define ICM_TEST_ORPHANS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/orphans.h"
#include "testutil.h"

#define DAY_MS INT64_C(86400000)

typedef struct strv {
    char **v;
    size_t n;
} strv;

static inline int strv_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline void strv_push(strv *s, const char *x)
{
    s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
    assert_non_null(s->v);
    s->v[s->n] = strdup(x);
    assert_non_null(s->v[s->n]);
    s->n++;
}

static inline void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static inline bool strv_has(const strv *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return true;
    return false;
}

static inline int collect_cb(const icm_file_info *info, void *payload)
{
    strv_push(payload, info->location);
    return 0;
}

/* Every file below prefix, sorted. */
static inline strv list_all(icm_fileio *io, const char *prefix)
{
    strv s = {NULL, 0};
    icmt_ok(icm_fileio_list(io, prefix, collect_cb, &s));
    if (s.n > 1)
        qsort(s.v, s.n, sizeof *s.v, strv_cmp);
    return s;
}

/* after == before minus exactly `gone` (NULL-terminated); every gone file was there before. */
static inline void assert_survivors(const strv *before, const strv *after,
                                    const char *const *gone)
{
    size_t n_gone = 0;
    for (; gone[n_gone] != NULL; n_gone++) {
        if (!strv_has(before, gone[n_gone]))
            print_error("expected orphan %s was not there before\n", gone[n_gone]);
        assert_true(strv_has(before, gone[n_gone]));
        if (strv_has(after, gone[n_gone]))
            print_error("%s survived\n", gone[n_gone]);
        assert_false(strv_has(after, gone[n_gone]));
    }
    for (size_t i = 0; i < before->n; i++) {
        bool is_gone = false;
        for (size_t k = 0; k < n_gone; k++)
            is_gone = is_gone || strcmp(before->v[i], gone[k]) == 0;
        if (!is_gone && !strv_has(after, before->v[i]))
            print_error("%s was deleted\n", before->v[i]);
        assert_true(is_gone || strv_has(after, before->v[i]));
    }
    assert_int_equal(after->n, before->n - n_gone);
}

/* The result's orphans are exactly `expected` (NULL-terminated), in any order. */
static inline void assert_orphans(const icm_orphan_result *r, const char *const *expected)
{
    size_t n = 0;
    for (; expected[n] != NULL; n++) {
        bool found = false;
        for (size_t i = 0; i < r->orphan_count; i++)
            found = found || strcmp(r->orphans[i].path, expected[n]) == 0;
        if (!found)
            print_error("expected orphan %s not reported\n", expected[n]);
        assert_true(found);
    }
    for (size_t i = 0; i < r->orphan_count; i++) {
        bool wanted = false;
        for (size_t k = 0; k < n; k++)
            wanted = wanted || strcmp(r->orphans[i].path, expected[k]) == 0;
        if (!wanted)
            print_error("unexpected orphan %s\n", r->orphans[i].path);
        assert_true(wanted);
    }
    assert_int_equal(r->orphan_count, n);
}

/* Write a small file at `path` whose mtime is `mtime_ms` (the in-memory store's clock). */
static inline void plant(icm_fileio *mem, const char *path, int64_t mtime_ms)
{
    icm_fileio_mem_set_time(mem, mtime_ms);
    icmt_ok(icm_fileio_write_replace(mem, path, "stray", 5));
}

/* Hand-written v2 metadata without snapshots: `specs` is the partition-specs array body,
 * `props` the properties object body, `log` the metadata-log array body (may be ""). */
static inline char *raw_metadata(const char *uuid, const char *location, const char *specs,
                          int last_partition_id, const char *props, const char *log,
                          int64_t updated_ms)
{
    return icmt_sprintf(
        "{\"format-version\":2,\"table-uuid\":\"%s\",\"location\":\"%s\","
        "\"last-sequence-number\":0,\"last-updated-ms\":%lld,\"last-column-id\":2,"
        "\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
        "{\"id\":1,\"name\":\"c1\",\"required\":false,\"type\":\"long\"},"
        "{\"id\":2,\"name\":\"c2\",\"required\":false,\"type\":\"string\"}]}],"
        "\"default-spec-id\":0,\"partition-specs\":[%s],\"last-partition-id\":%d,"
        "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
        "\"properties\":{%s},\"current-snapshot-id\":-1,\"refs\":{},\"snapshots\":[],"
        "\"snapshot-log\":[],\"metadata-log\":[%s]}",
        uuid, location, (long long)updated_ms, specs, last_partition_id, props, log);
}

#define UNPARTITIONED "{\"spec-id\":0,\"fields\":[]}"

/* A filesystem-layout table at `loc`: metadata/v1.metadata.json + version-hint.text, written
 * at mtime `mtime_ms`, opened with icm_table_open_dir. */
static inline icm_table *raw_table(icm_fileio *mem, const char *loc, const char *json,
                                   int64_t mtime_ms)
{
    char *md = icmt_sprintf("%s/metadata/v1.metadata.json", loc);
    char *hint = icmt_sprintf("%s/metadata/version-hint.text", loc);
    icm_fileio_mem_set_time(mem, mtime_ms);
    icmt_ok(icm_fileio_write_replace(mem, md, json, strlen(json)));
    icmt_ok(icm_fileio_write_replace(mem, hint, "1", 1));
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, mem, loc));
    free(md);
    free(hint);
    return t;
}

#endif
