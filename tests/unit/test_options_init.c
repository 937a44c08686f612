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
#include "icemaint/orphans.h"
#include "icemaint/testing/fileio.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_gives_the_init_macro_defaults),
        cmocka_unit_test(test_init_of_an_older_version_writes_only_its_fields),
        cmocka_unit_test(test_init_refuses_unknown_versions_and_null),
        cmocka_unit_test(test_operations_refuse_unknown_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
