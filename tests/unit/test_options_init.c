/*
 * test_options_init.c: every versioned public options struct has an icm_<thing>_options_init()
 * that gives the ICM_<THING>_OPTIONS_INIT defaults of the version asked for and refuses a
 * version the library does not know, and every operation that takes such a struct refuses an
 * unknown version with ICM_EINVALID before it does anything (docs/API.md, rule 2).
 */
#include <string.h>

#include "history.h"
#include "icemaint/catalog.h"
#include "icemaint/check.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/manifest.h"
#include "icemaint/orphans.h"
#include "icemaint/testing/fileio.h"
#include "icemaint/trash.h"
#include "testutil.h"

#define LOC "mem://wh/db/t"

static void test_init_gives_the_init_macro_defaults(void **state)
{
    (void)state;
    icm_expire_options e, e_want = ICM_EXPIRE_OPTIONS_INIT;
    memset(&e, 0x5a, sizeof e);
    icmt_ok(icm_expire_options_init(&e, ICM_EXPIRE_OPTIONS_VERSION));
    assert_int_equal(e.version, ICM_EXPIRE_OPTIONS_VERSION);
    assert_int_equal(e.decide.version, ICM_EXPIRE_DECIDE_OPTIONS_VERSION);
    assert_int_equal(e.cleanup, e_want.cleanup);
    assert_int_equal(e.max_commit_retries, e_want.max_commit_retries);
    assert_false(e.dry_run);
    assert_false(e.no_verify);
    assert_null(e.on_delete);
    assert_null(e.lease);

    icm_expire_decide_options d;
    memset(&d, 0x5a, sizeof d);
    icmt_ok(icm_expire_decide_options_init(&d, ICM_EXPIRE_DECIDE_OPTIONS_VERSION));
    assert_int_equal(d.version, ICM_EXPIRE_DECIDE_OPTIONS_VERSION);
    assert_false(d.has_older_than);
    assert_int_equal(d.retain_last, 0);
    assert_null(d.snapshot_ids);

    icm_orphan_options o, o_want = ICM_ORPHAN_OPTIONS_INIT;
    memset(&o, 0x5a, sizeof o);
    icmt_ok(icm_orphan_options_init(&o, ICM_ORPHAN_OPTIONS_VERSION));
    assert_int_equal(o.version, ICM_ORPHAN_OPTIONS_VERSION);
    assert_int_equal(o.prefix_mismatch, ICM_PREFIX_MISMATCH_ERROR);
    assert_int_equal(o.max_concurrent_deletes, o_want.max_concurrent_deletes);
    assert_false(o.dry_run);
    assert_false(o.force);
    assert_false(o.no_verify);
    assert_null(o.location);
    assert_null(o.catalog_files);

    icm_check_options c;
    memset(&c, 0x5a, sizeof c);
    icmt_ok(icm_check_options_init(&c, ICM_CHECK_OPTIONS_VERSION));
    assert_int_equal(c.version, ICM_CHECK_OPTIONS_VERSION);
    assert_false(c.all);
    assert_null(c.snapshot_ids);

    icm_lease_options l;
    memset(&l, 0x5a, sizeof l);
    icmt_ok(icm_lease_options_init(&l, ICM_LEASE_OPTIONS_VERSION));
    assert_int_equal(l.version, ICM_LEASE_OPTIONS_VERSION);
    assert_null(l.command);
    assert_int_equal(l.ttl_ms, 0);

    icm_create_table_options ct;
    memset(&ct, 0x5a, sizeof ct);
    icmt_ok(icm_create_table_options_init(&ct, ICM_CREATE_TABLE_OPTIONS_VERSION));
    assert_int_equal(ct.version, ICM_CREATE_TABLE_OPTIONS_VERSION);
    assert_null(ct.schema_json);
    assert_null(ct.properties);
    assert_int_equal(ct.n_properties, 0);

    icm_catalog_config_options g;
    memset(&g, 0x5a, sizeof g);
    icmt_ok(icm_catalog_config_options_init(&g, ICM_CATALOG_CONFIG_OPTIONS_VERSION));
    assert_int_equal(g.version, ICM_CATALOG_CONFIG_OPTIONS_VERSION);
    assert_null(g.name);
    assert_null(g.io);
    assert_false(g.ignore_environment);
}

/* An older version's init writes that version's fields only: the caller's struct ends there. */
static void test_init_of_an_older_version_writes_only_its_fields(void **state)
{
    (void)state;
    icm_expire_options e;
    memset(&e, 0x5a, sizeof e);
    icmt_ok(icm_expire_options_init(&e, 1));
    assert_int_equal(e.version, 1);
    assert_false(e.dry_run);
    const unsigned char *tail = (const unsigned char *)&e + offsetof(icm_expire_options, on_delete);
    for (size_t i = 0; i < sizeof e - offsetof(icm_expire_options, on_delete); i++)
        assert_int_equal(tail[i], 0x5a);

    icm_orphan_options o;
    memset(&o, 0x5a, sizeof o);
    icmt_ok(icm_orphan_options_init(&o, 2));
    assert_int_equal(o.version, 2);
    assert_null(o.catalog_files);
    tail = (const unsigned char *)&o + offsetof(icm_orphan_options, no_verify);
    for (size_t i = 0; i < sizeof o - offsetof(icm_orphan_options, no_verify); i++)
        assert_int_equal(tail[i], 0x5a);

    /* versions 3 to 6 end before limits, inventory, shard_index and trash: nothing past
     * them is written */
    const unsigned versions[] = {3, 4, 5, 6};
    const size_t ends[] = {offsetof(icm_orphan_options, limits),
                           offsetof(icm_orphan_options, inventory),
                           offsetof(icm_orphan_options, shard_index),
                           offsetof(icm_orphan_options, trash)};
    for (size_t v = 0; v < 4; v++) {
        memset(&o, 0x5a, sizeof o);
        icmt_ok(icm_orphan_options_init(&o, versions[v]));
        assert_int_equal(o.version, versions[v]);
        assert_false(o.no_verify);
        tail = (const unsigned char *)&o + ends[v];
        for (size_t i = 0; i < sizeof o - ends[v]; i++)
            assert_int_equal(tail[i], 0x5a);
    }
    memset(&e, 0x5a, sizeof e);
    icmt_ok(icm_expire_options_init(&e, 4));
    tail = (const unsigned char *)&e + offsetof(icm_expire_options, trash);
    for (size_t i = 0; i < sizeof e - offsetof(icm_expire_options, trash); i++)
        assert_int_equal(tail[i], 0x5a);
}

static void test_trash_options(void **state)
{
    (void)state;
    icm_trash_options t, want = ICM_TRASH_OPTIONS_INIT;
    memset(&t, 0x5a, sizeof t);
    icmt_ok(icm_trash_options_init(&t, ICM_TRASH_OPTIONS_VERSION));
    assert_int_equal(t.version, ICM_TRASH_OPTIONS_VERSION);
    assert_false(t.dry_run);
    assert_null(t.table);
    assert_null(t.paths);
    assert_int_equal(t.older_than_ms, want.older_than_ms);
    assert_null(t.on_file);
    assert_int_equal(icm_trash_options_init(&t, ICM_TRASH_OPTIONS_VERSION + 1), ICM_EINVALID);
    assert_int_equal(icm_trash_options_init(NULL, ICM_TRASH_OPTIONS_VERSION), ICM_EINVALID);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_mem_new(&io));
    icm_trash_counts c;
    t.version = ICM_TRASH_OPTIONS_VERSION + 1;
    assert_int_equal(icm_trash_restore(&c, io, "mem://trash", &t), ICM_EINVALID);
    assert_int_equal(icm_trash_expire(&c, io, "mem://trash", &t), ICM_EINVALID);
    t.version = ICM_TRASH_OPTIONS_VERSION;
    t.older_than_ms = -1;
    assert_int_equal(icm_trash_expire(&c, io, "mem://trash", &t), ICM_EINVALID);
    icm_fileio_free(io);
}

static void test_init_refuses_unknown_versions_and_null(void **state)
{
    (void)state;
    icm_expire_options e;
    icm_expire_decide_options d;
    icm_orphan_options o;
    icm_check_options c;
    icm_lease_options l;
    icm_catalog_config_options g;
    assert_int_equal(icm_expire_options_init(&e, 0), ICM_EINVALID);
    assert_int_equal(icm_expire_options_init(&e, ICM_EXPIRE_OPTIONS_VERSION + 1), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "version"));
    assert_int_equal(icm_expire_options_init(NULL, 1), ICM_EINVALID);
    assert_int_equal(icm_expire_decide_options_init(&d, 0), ICM_EINVALID);
    assert_int_equal(icm_expire_decide_options_init(&d, ICM_EXPIRE_DECIDE_OPTIONS_VERSION + 1),
                     ICM_EINVALID);
    assert_int_equal(icm_orphan_options_init(&o, 0), ICM_EINVALID);
    assert_int_equal(icm_orphan_options_init(&o, ICM_ORPHAN_OPTIONS_VERSION + 1), ICM_EINVALID);
    assert_int_equal(icm_orphan_options_init(NULL, 1), ICM_EINVALID);
    assert_int_equal(icm_check_options_init(&c, 0), ICM_EINVALID);
    assert_int_equal(icm_check_options_init(&c, ICM_CHECK_OPTIONS_VERSION + 1), ICM_EINVALID);
    assert_int_equal(icm_lease_options_init(&l, 0), ICM_EINVALID);
    assert_int_equal(icm_lease_options_init(&l, ICM_LEASE_OPTIONS_VERSION + 1), ICM_EINVALID);
    icm_create_table_options ct;
    assert_int_equal(icm_create_table_options_init(&ct, 0), ICM_EINVALID);
    assert_int_equal(icm_create_table_options_init(&ct, ICM_CREATE_TABLE_OPTIONS_VERSION + 1),
                     ICM_EINVALID);
    assert_int_equal(icm_catalog_config_options_init(&g, 0), ICM_EINVALID);
    assert_int_equal(icm_catalog_config_options_init(&g, ICM_CATALOG_CONFIG_OPTIONS_VERSION + 1),
                     ICM_EINVALID);
}

/* Each operation refuses an unknown version before it touches the table: no file changes. */
static void test_operations_refuse_unknown_versions(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    hist *h = hist_new(mem, LOC, 2, false, INT64_C(1700000000000));
    assert_non_null(h);
    int64_t s1 = hist_append(h, "main", "A", NULL);
    hist_append(h, "main", "B", NULL);
    icm_table *t = hist_open_table(h);
    assert_non_null(t);
    const char *md_before = icm_table_get_metadata_location(t);
    char *md_before_copy = strdup(md_before);

    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.version = ICM_ORPHAN_OPTIONS_VERSION + 1;
    o.force = true;
    o.has_older_than = true;
    o.older_than_ms = INT64_MAX;
    icm_orphan_result *orphans = (icm_orphan_result *)&o; /* must be reset to NULL */
    assert_int_equal(icm_orphan_sweep(&orphans, t, &o), ICM_EINVALID);
    assert_null(orphans);
    o.version = 0;
    assert_int_equal(icm_orphan_sweep(&orphans, t, &o), ICM_EINVALID);

    icm_expire_options e = ICM_EXPIRE_OPTIONS_INIT;
    e.decide.snapshot_ids = &s1;
    e.decide.snapshot_id_count = 1;
    e.version = ICM_EXPIRE_OPTIONS_VERSION + 1;
    icm_expire_result *expired = NULL;
    assert_int_equal(icm_expire_snapshots(&expired, t, &e), ICM_EINVALID);
    assert_null(expired);
    e.version = ICM_EXPIRE_OPTIONS_VERSION;
    e.decide.version = ICM_EXPIRE_DECIDE_OPTIONS_VERSION + 1;
    assert_int_equal(icm_expire_snapshots(&expired, t, &e), ICM_EINVALID);
    assert_null(expired);

    icm_expire_decision *decision = NULL;
    icm_expire_decide_options d = ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    d.now_ms = INT64_C(1800000000000);
    d.version = 7;
    assert_int_equal(icm_expire_decide(&decision, icm_table_get_metadata(t), &d), ICM_EINVALID);
    assert_null(decision);

    icm_check_options c = ICM_CHECK_OPTIONS_INIT;
    c.version = 2;
    icm_check_result *checked = NULL;
    assert_int_equal(icm_check_table(&checked, mem, icm_table_get_metadata(t), NULL, &c),
                     ICM_EINVALID);
    assert_null(checked);

    icm_lease_options l = ICM_LEASE_OPTIONS_INIT;
    l.version = 2;
    icm_lease *lease = NULL;
    assert_int_equal(icm_lease_acquire(&lease, t, &l), ICM_EINVALID);
    assert_null(lease);

    icm_catalog_config_options g = ICM_CATALOG_CONFIG_OPTIONS_INIT;
    g.version = ICM_CATALOG_CONFIG_OPTIONS_VERSION + 1;
    g.ignore_environment = true;
    char *name = NULL;
    icm_property *props = NULL;
    size_t n = 0;
    int rc = icm_catalog_config_resolve(&name, &props, &n, &g);
    assert_true(rc == ICM_EINVALID || rc == ICM_EUNSUPPORTED); /* EUNSUPPORTED: built without
                                                                  YAML, refused before that */
    assert_null(name);

    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_hadoop(&cat, "m", "mem://wh2", mem));
    icm_create_table_options ct = ICM_CREATE_TABLE_OPTIONS_INIT;
    ct.schema_json = "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,"
                     "\"name\":\"x\",\"required\":false,\"type\":\"long\"}]}";
    ct.version = ICM_CREATE_TABLE_OPTIONS_VERSION + 1;
    char *created = NULL;
    assert_int_equal(icm_catalog_create_table(&created, cat, "db.t", &ct), ICM_EINVALID);
    assert_null(created);
    icm_table *none = NULL;
    assert_int_equal(icm_table_load(&none, cat, "db.t"), ICM_ENOTFOUND);
    ct.version = ICM_CREATE_TABLE_OPTIONS_VERSION; /* the same call with the version is fine */
    icmt_ok(icm_catalog_create_table(&created, cat, "db.t", &ct));
    assert_non_null(created);
    icm_free(created);
    icm_catalog_free(cat);

    /* Nothing was committed, and both snapshots' files are still there. */
    icm_table *again = hist_open_table(h);
    assert_string_equal(icm_table_get_metadata_location(again), md_before_copy);
    assert_int_equal(icm_table_metadata_snapshot_count(icm_table_get_metadata(again)), 2);
    free(md_before_copy);
    icm_table_free(again);
    icm_table_free(t);
    hist_free(h);
    icm_fileio_free(mem);
}

#define SCHEMA                                                                               \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"x\","           \
    "\"required\":false,\"type\":\"long\"}]}"

/* The manifest structs: init gives the macro's defaults (version, then zeros), refuses 0, too
 * new and NULL; a zero-filled struct (version 0) is refused like any unknown version. */
static void test_manifest_options_init(void **state)
{
    (void)state;
    icm_manifest_list_read_options lr;
    memset(&lr, 0x5a, sizeof lr);
    icmt_ok(icm_manifest_list_read_options_init(&lr, ICM_MANIFEST_LIST_READ_OPTIONS_VERSION));
    assert_int_equal(lr.version, ICM_MANIFEST_LIST_READ_OPTIONS_VERSION);
    assert_int_equal(lr.format_version, 0);
    assert_int_equal(icm_manifest_list_read_options_init(&lr, 0), ICM_EINVALID);
    assert_int_equal(icm_manifest_list_read_options_init(&lr, 2), ICM_EINVALID);
    assert_int_equal(icm_manifest_list_read_options_init(NULL, 1), ICM_EINVALID);

    icm_manifest_read_options r;
    memset(&r, 0x5a, sizeof r);
    icmt_ok(icm_manifest_read_options_init(&r, ICM_MANIFEST_READ_OPTIONS_VERSION));
    assert_int_equal(r.version, ICM_MANIFEST_READ_OPTIONS_VERSION);
    assert_int_equal(r.fields, 0);
    assert_int_equal(r.format_version, 0);
    assert_null(r.manifest);
    assert_int_equal(icm_manifest_read_options_init(&r, 0), ICM_EINVALID);
    assert_int_equal(icm_manifest_read_options_init(&r, 2), ICM_EINVALID);
    assert_int_equal(icm_manifest_read_options_init(NULL, 1), ICM_EINVALID);

    icm_manifest_writer_options w;
    memset(&w, 0x5a, sizeof w);
    icmt_ok(icm_manifest_writer_options_init(&w, ICM_MANIFEST_WRITER_OPTIONS_VERSION));
    assert_int_equal(w.version, ICM_MANIFEST_WRITER_OPTIONS_VERSION);
    assert_int_equal(w.format_version, 0);
    assert_int_equal(w.codec, ICM_AVRO_CODEC_NULL);
    assert_int_equal(w.compression_level, 0);
    assert_int_equal(w.content, ICM_MANIFEST_CONTENT_DATA);
    assert_null(w.schema_json);
    assert_int_equal(w.schema_id, 0);
    assert_null(w.partition_spec_json);
    assert_int_equal(w.partition_spec_id, 0);
    assert_null(w.partition_avro_schema_json);
    assert_int_equal(w.block_bytes, 0);
    assert_int_equal(icm_manifest_writer_options_init(&w, 0), ICM_EINVALID);
    assert_int_equal(icm_manifest_writer_options_init(&w, 2), ICM_EINVALID);
    assert_int_equal(icm_manifest_writer_options_init(NULL, 1), ICM_EINVALID);

    icm_manifest_list_writer_options lw;
    memset(&lw, 0x5a, sizeof lw);
    icmt_ok(icm_manifest_list_writer_options_init(&lw, ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION));
    assert_int_equal(lw.version, ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION);
    assert_int_equal(lw.format_version, 0);
    assert_int_equal(lw.codec, ICM_AVRO_CODEC_NULL);
    assert_int_equal(lw.compression_level, 0);
    assert_int_equal(lw.snapshot_id, 0);
    assert_false(lw.has_parent_snapshot_id);
    assert_int_equal(lw.parent_snapshot_id, 0);
    assert_int_equal(lw.sequence_number, 0);
    assert_int_equal(lw.first_row_id, 0);
    assert_int_equal(lw.block_bytes, 0);
    assert_int_equal(icm_manifest_list_writer_options_init(&lw, 0), ICM_EINVALID);
    assert_int_equal(icm_manifest_list_writer_options_init(&lw, 2), ICM_EINVALID);
    assert_int_equal(icm_manifest_list_writer_options_init(NULL, 1), ICM_EINVALID);
}

/* Every function taking a manifest options struct refuses versions 0 and 2 with ICM_EINVALID
 * before it reads or writes anything, and the same call with the version succeeds. */
static void test_manifest_operations_refuse_unknown_versions(void **state)
{
    (void)state;
    static const unsigned bad[] = {0, 2};

    /* Writers: nothing is created. */
    icm_manifest_writer_options wo = ICM_MANIFEST_WRITER_OPTIONS_INIT;
    wo.format_version = 2;
    wo.schema_json = SCHEMA;
    wo.partition_spec_json = "[]";
    icm_manifest_list_writer_options lwo = ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT;
    lwo.format_version = 2;
    lwo.snapshot_id = 1;
    lwo.sequence_number = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        icm_manifest_writer *w = (icm_manifest_writer *)&wo; /* must be reset to NULL */
        wo.version = bad[i];
        assert_int_equal(icm_manifest_writer_new(&w, &wo), ICM_EINVALID);
        assert_null(w);
        assert_non_null(strstr(icm_error_last()->message, "version"));
        icm_manifest_list_writer *lw = (icm_manifest_list_writer *)&lwo;
        lwo.version = bad[i];
        assert_int_equal(icm_manifest_list_writer_new(&lw, &lwo), ICM_EINVALID);
        assert_null(lw);
    }
    wo.version = ICM_MANIFEST_WRITER_OPTIONS_VERSION;
    icm_manifest_writer *w = NULL;
    icmt_ok(icm_manifest_writer_new(&w, &wo));
    char *manifest = NULL;
    size_t manifest_len = 0;
    icm_manifest_file summary = ICM_MANIFEST_FILE_INIT;
    icmt_ok(icm_manifest_writer_finish(&manifest, &manifest_len, &summary, w));
    icm_manifest_writer_free(w);

    lwo.version = ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION;
    icm_manifest_list_writer *lw = NULL;
    icmt_ok(icm_manifest_list_writer_new(&lw, &lwo));
    char *list = NULL;
    size_t list_len = 0;
    icmt_ok(icm_manifest_list_writer_finish(&list, &list_len, lw));
    icm_manifest_list_writer_free(lw);

    /* Readers over the bytes just written: refused with a bad version, opened with the good. */
    icm_manifest_read_options ro = ICM_MANIFEST_READ_OPTIONS_INIT;
    icm_manifest_list_read_options lro = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
    icm_manifest_reader *src = NULL;
    icmt_ok(icm_manifest_reader_open(&src, manifest, manifest_len, "m.avro", &ro));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ro.version = bad[i];
        icm_manifest_reader *r = (icm_manifest_reader *)&ro;
        assert_int_equal(icm_manifest_reader_open(&r, manifest, manifest_len, "m.avro", &ro),
                         ICM_EINVALID);
        assert_null(r);
        lro.version = bad[i];
        icm_manifest_list_reader *lr = (icm_manifest_list_reader *)&lro;
        assert_int_equal(icm_manifest_list_reader_open(&lr, list, list_len, "l.avro", &lro),
                         ICM_EINVALID);
        assert_null(lr);
        wo.version = bad[i];
        w = (icm_manifest_writer *)&wo;
        assert_int_equal(icm_manifest_writer_new_like(&w, src, &wo), ICM_EINVALID);
        assert_null(w);
    }
    wo.version = ICM_MANIFEST_WRITER_OPTIONS_VERSION;
    icmt_ok(icm_manifest_writer_new_like(&w, src, &wo));
    icm_manifest_writer_free(w);
    icm_manifest_reader_free(src);
    lro.version = ICM_MANIFEST_LIST_READ_OPTIONS_VERSION;
    icm_manifest_list_reader *lr = NULL;
    icmt_ok(icm_manifest_list_reader_open(&lr, list, list_len, "l.avro", &lro));
    icm_manifest_list_reader_free(lr);

    /* Through FileIO: a path that does not exist gives ICM_EINVALID, not ICM_ENOTFOUND, so the
     * version was refused before anything was read. */
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
    memset(&mf, 0, sizeof mf);
    mf.manifest_path = "mem://wh/absent.avro";
    mf.manifest_path_len = strlen(mf.manifest_path);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lro.version = bad[i];
        assert_int_equal(icm_manifest_list_read(mem, "mem://wh/absent.avro", &lro, NULL, NULL),
                         ICM_EINVALID);
        ro.version = bad[i];
        assert_int_equal(icm_manifest_read(mem, &mf, &ro, NULL, NULL), ICM_EINVALID);
        assert_int_equal(icm_manifest_read_v1_embedded(mem, mf.manifest_path, 1, &ro, NULL, NULL),
                         ICM_EINVALID);
    }
    lro.version = ICM_MANIFEST_LIST_READ_OPTIONS_VERSION;
    assert_int_equal(icm_manifest_list_read(mem, "mem://wh/absent.avro", &lro, NULL, NULL),
                     ICM_ENOTFOUND);
    ro.version = ICM_MANIFEST_READ_OPTIONS_VERSION;
    assert_int_equal(icm_manifest_read(mem, &mf, &ro, NULL, NULL), ICM_ENOTFOUND);
    icm_fileio_free(mem);
    icm_free(manifest);
    icm_free(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_gives_the_init_macro_defaults),
        cmocka_unit_test(test_init_of_an_older_version_writes_only_its_fields),
        cmocka_unit_test(test_init_refuses_unknown_versions_and_null),
        cmocka_unit_test(test_trash_options),
        cmocka_unit_test(test_operations_refuse_unknown_versions),
        cmocka_unit_test(test_manifest_options_init),
        cmocka_unit_test(test_manifest_operations_refuse_unknown_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
