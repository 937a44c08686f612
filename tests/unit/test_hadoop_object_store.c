/*
 * test_hadoop_object_store.c: the filesystem (Hadoop) catalog on an object store.
 *
 *  - Data-loss class "create-new ignored": a store that accepts If-None-Match: * and ignores it
 *    would let two writers publish the same version (one commit lost, its files later swept).
 *    The catalog proves create-new with a probe before its first commit at a location not on
 *    this machine's file system, and refuses (ICM_EUNSUPPORTED) a store that lets the second
 *    create of the probe through: nothing published, the probe gone. An honest store commits,
 *    probes once per catalog handle, and keeps exactly its version files afterwards.
 *  - Data-loss class "outcome from the back end's name": a failed publish is judged by what the
 *    FileIO reported: a refusal (ICM_EIO, nothing there) is FAILED whatever the back end is
 *    called; an HTTP 5xx answer or a network error may still land and is UNKNOWN; our bytes
 *    found there are our commit.
 * The store is the in-memory back end under `s3://` names (not local) behind a wrapper that can
 * ignore create-new or fail the create of the next version file as told.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/sys/fileio.h"
#include "test_txn_common.h"
#include "testutil.h"
#include "util/util.h"

#define TDIR "s3://b/db/t"

typedef struct store {
    icm_fileio base;
    icm_fileio *inner;
    bool ignore_create_new;  /* create-new overwrites, as a store ignoring If-None-Match */
    int fail_version_rc;     /* the next create of a v<N>.metadata.json fails with this */
    int fail_http_status;    /* ... carrying this HTTP status (0: none) */
    bool fail_after_apply;   /* ... after writing it (the answer was lost) */
    bool race_other_codec;   /* right before the next version create, a writer with another
                                codec publishes the same version as v<N>.gz.metadata.json */
    int creates;             /* create-new calls */
} store;

static char *replace_all(const char *text, const char *from, const char *to);

static int s_read(icm_fileio *io, const char *l, char **o, size_t *n)
{
    return icm_fileio_read(o, n, ((store *)io)->inner, l);
}
static int s_read_range(icm_fileio *io, const char *l, int64_t off, void *b, size_t n,
                        size_t *got)
{
    return icm_fileio_read_range(got, ((store *)io)->inner, l, off, b, n);
}
static bool is_version_file(const char *l)
{
    const char *name = strrchr(l, '/');
    return name != NULL && name[1] == 'v' && strstr(name, ".metadata.json") != NULL;
}
static int s_create(icm_fileio *io, const char *l, const void *d, size_t n)
{
    store *s = (store *)io;
    s->creates++;
    if (s->fail_version_rc != 0 && is_version_file(l)) {
        int rc = s->fail_version_rc;
        s->fail_version_rc = 0;
        if (s->fail_after_apply)
            icmt_ok(icm_fileio_create_new(s->inner, l, d, n));
        rc = icm__error_set(ICM_ERRCLASS_IO, rc, l, "injected create failure");
        if (s->fail_http_status != 0)
            icm__error_set_http_status(s->fail_http_status);
        return rc;
    }
    if (s->race_other_codec && is_version_file(l)) {
        s->race_other_codec = false;
        char *gz = replace_all(l, ".metadata.json", ".gz.metadata.json");
        icmt_ok(icm_fileio_create_new(s->inner, gz, "{}", 2));
        free(gz);
    }
    if (s->ignore_create_new)
        return icm_fileio_write_replace(s->inner, l, d, n);
    return icm_fileio_create_new(s->inner, l, d, n);
}
static int s_write(icm_fileio *io, const char *l, const void *d, size_t n)
{
    return icm_fileio_write_replace(((store *)io)->inner, l, d, n);
}
static int s_remove(icm_fileio *io, const char *l)
{
    return icm_fileio_delete(((store *)io)->inner, l);
}
static int s_stat(icm_fileio *io, const char *l, icm_file_info *o)
{
    return icm_fileio_stat(o, ((store *)io)->inner, l);
}
static int s_list(icm_fileio *io, const char *p, unsigned flags, icm_list_cb cb, void *pl)
{
    return icm_fileio_list_flags(((store *)io)->inner, p, flags, cb, pl);
}
static void s_free(icm_fileio *io)
{
    (void)io;
}
static int s_is_local(icm_fileio *io, const char *l)
{
    (void)io;
    (void)l;
    return 0;
}
static const icm_fileio_methods STORE = {
    .version = ICM_FILEIO_METHODS_VERSION, .name = "local", /* the name must not matter */
    .read = s_read, .read_range = s_read_range, .create_new = s_create, .write_replace = s_write,
    .remove = s_remove, .stat = s_stat, .free = s_free, .list_flags = s_list,
    .is_local = s_is_local};

/* `text` with every `from` replaced by `to` (new string). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    char *out = strdup("");
    const char *at;
    while ((at = strstr(text, from)) != NULL) {
        char *next = icmt_sprintf("%s%.*s%s", out, (int)(at - text), text, to);
        free(out);
        out = next;
        text = at + strlen(from);
    }
    char *next = icmt_sprintf("%s%s", out, text);
    free(out);
    return next;
}

/* A table v1 at TDIR in a fresh in-memory store: the metadata of a local filesystem table,
 * moved there (its location rewritten; the catalog reads and writes it only through FileIO). */
static void store_init(store *s)
{
    memset(s, 0, sizeof *s);
    s->base.methods = &STORE;
    icmt_ok(icm_fileio_mem_new(&s->inner));
    char *dir = icmt_mkdtemp();
    icm_fileio *local = NULL;
    icmt_ok(icm_fileio_local_new(&local));
    create_fs_table(dir, local);
    char *v1 = icmt_sprintf("%s/db/t/metadata/v1.metadata.json", dir);
    char *text = NULL;
    size_t len = 0;
    icmt_ok(icm_fileio_read(&text, &len, local, v1));
    char *old_dir = icmt_sprintf("%s/db/t", dir);
    char *moved = replace_all(text, old_dir, TDIR);
    icmt_ok(icm_fileio_create_new(s->inner, TDIR "/metadata/v1.metadata.json", moved,
                                  strlen(moved)));
    free(moved);
    free(old_dir);
    icmt_ok(icm_fileio_write_replace(s->inner, TDIR "/metadata/version-hint.text", "1", 1));
    icm_free(text);
    icm_fileio_free(local);
    icmt_rmtree(dir);
    free(v1);
    free(dir);
}

static void store_free(store *s)
{
    icm_fileio_free(s->inner);
}

typedef struct names {
    char *items[16];
    size_t n;
} names;

static int collect(const icm_file_info *info, void *payload)
{
    names *ns = payload;
    assert_true(ns->n < 16);
    ns->items[ns->n++] = strdup(info->location + strlen(TDIR "/metadata/"));
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The objects in the table's metadata folder, sorted and joined with ','. */
static char *metadata_objects(store *s)
{
    names ns = {{0}, 0};
    icmt_ok(icm_fileio_list(s->inner, TDIR "/metadata", collect, &ns));
    qsort(ns.items, ns.n, sizeof ns.items[0], by_name);
    char *out = strdup("");
    for (size_t i = 0; i < ns.n; i++) {
        char *next = icmt_sprintf("%s%s%s", out, i > 0 ? "," : "", ns.items[i]);
        free(out);
        free(ns.items[i]);
        out = next;
    }
    return out;
}

static int set_property(icm_table *t, const char *value)
{
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, "k", value));
    int rc = icm_table_commit(t, md);
    icm_table_metadata_free(md);
    return rc;
}

static void assert_objects(store *s, const char *want)
{
    char *got = metadata_objects(s);
    assert_string_equal(got, want);
    free(got);
}

/* An honest store: the probe runs once per handle, leaves nothing; exactly v1, v2, v3 and the
 * hint remain. */
static void test_honest_store_commits(void **state)
{
    (void)state;
    store s;
    store_init(&s);
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, &s.base, TDIR));
    icmt_ok(set_property(t, "1"));
    assert_int_equal(s.creates, 3); /* probe, probe again (EEXISTS), v2 */
    icmt_ok(set_property(t, "2"));
    assert_int_equal(s.creates, 4); /* proven once: v3 only */
    assert_string_equal(icm_table_get_metadata_location(t), TDIR "/metadata/v3.metadata.json");
    icm_table_free(t);
    assert_objects(&s, "v1.metadata.json,v2.metadata.json,v3.metadata.json,version-hint.text");
    store_free(&s);
}

/* A store that ignores create-new is refused before anything is published; the probe is gone. */
static void test_store_ignoring_create_new_refused(void **state)
{
    (void)state;
    store s;
    store_init(&s);
    s.ignore_create_new = true;
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, &s.base, TDIR));
    assert_int_equal(set_property(t, "1"), ICM_EUNSUPPORTED);
    assert_non_null(strstr(icm_error_last()->message, "ignores create-new"));
    assert_string_equal(icm_table_get_metadata_location(t), TDIR "/metadata/v1.metadata.json");
    icm_table_free(t);
    assert_objects(&s, "v1.metadata.json,version-hint.text");
    store_free(&s);
}

/* What the FileIO reported decides the outcome of a failed publish (the wrapper is even named
 * "local": the name must not matter). */
static void test_publish_failure_outcomes(void **state)
{
    (void)state;
    static const struct {
        int rc, http;
        bool applied;
        int want;
    } cases[] = {
        {ICM_EIO, 0, false, ICM_ECOMMIT_FAILED},          /* refused: nothing there */
        {ICM_EAUTH, 403, false, ICM_ECOMMIT_FAILED},      /* refused by the store */
        {ICM_EIO, 503, false, ICM_ECOMMIT_UNKNOWN},       /* a 5xx may still land */
        {ICM_ENET, 0, false, ICM_ECOMMIT_UNKNOWN},        /* the connection dropped */
        {ICM_EOUTCOME_UNKNOWN, 0, false, ICM_ECOMMIT_UNKNOWN},
        {ICM_EOUTCOME_UNKNOWN, 0, true, 0},               /* our bytes landed: committed */
        {ICM_EIO, 500, true, 0},
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(cases); i++) {
        store s;
        store_init(&s);
        icm_table *t = NULL;
        icmt_ok(icm_table_open_dir(&t, &s.base, TDIR));
        s.fail_version_rc = cases[i].rc;
        s.fail_http_status = cases[i].http;
        s.fail_after_apply = cases[i].applied;
        int rc = set_property(t, "1");
        if (rc != cases[i].want)
            fail_msg("case %zu: got %s, want %s", i, icm_error_code_name(rc),
                     icm_error_code_name(cases[i].want));
        icm_table_free(t);
        assert_objects(&s, cases[i].applied ? "v1.metadata.json,v2.metadata.json,version-hint.text"
                                            : "v1.metadata.json,version-hint.text");
        store_free(&s);
    }
}

/* Data-loss class "two spellings of one version": a writer with another metadata codec
 * publishes v2 as v2.gz.metadata.json between the check before our create and our create of
 * v2.metadata.json. Both exist; readers take one, so which commit counts is not ours to say:
 * ECOMMIT_UNKNOWN (never "committed"), and the hint is not moved. */
static void test_other_codec_publishes_the_same_version(void **state)
{
    (void)state;
    store s;
    store_init(&s);
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, &s.base, TDIR));
    s.race_other_codec = true;
    assert_int_equal(set_property(t, "1"), ICM_ECOMMIT_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "another file name"));
    icm_table_free(t);
    assert_objects(&s, "v1.metadata.json,v2.gz.metadata.json,v2.metadata.json,"
                       "version-hint.text");
    store_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_honest_store_commits),
        cmocka_unit_test(test_store_ignoring_create_new_refused),
        cmocka_unit_test(test_publish_failure_outcomes),
        cmocka_unit_test(test_other_codec_publishes_the_same_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
