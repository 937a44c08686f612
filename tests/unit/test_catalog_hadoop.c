/*
 * tests/unit/test_catalog_hadoop.c: the filesystem ("Hadoop") catalog and table directories:
 * create, commit v<N+1> without replacement, conflicts as proven failures that delete nothing
 * of the winner's, namespaces as directories, and N processes racing commits on one table
 * (exactly one winner per version, no lost update, no temp files left).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "icemaint/catalog.h"
#include "icemaint/fileio.h"
#include "icemaint/metadata.h"
#include "testutil.h"

#define SCHEMA_JSON                                                                          \
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["                                      \
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}"

typedef struct hfx {
    char *dir;
    char *table_dir;
    icm_fileio *io;
    icm_catalog *cat;
} hfx;

static int hfx_setup(void **state)
{
    hfx *f = calloc(1, sizeof *f);
    f->dir = icmt_mkdtemp();
    f->table_dir = icmt_sprintf("%s/db/events", f->dir);
    icmt_ok(icm_fileio_local_new(&f->io));
    icmt_ok(icm_catalog_open_hadoop(&f->cat, "fs", f->dir, f->io));
    icmt_ok(icm_catalog_create_namespace(f->cat, "db"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    char *loc = NULL;
    icmt_ok(icm_catalog_create_table(&loc, f->cat, "db.events", &o));
    char *want = icmt_sprintf("%s/metadata/v1.metadata.json", f->table_dir);
    assert_string_equal(loc, want);
    free(want);
    icm_free(loc);
    *state = f;
    return 0;
}

static int hfx_teardown(void **state)
{
    hfx *f = *state;
    icm_catalog_free(f->cat);
    icm_fileio_free(f->io);
    icmt_rmtree(f->dir);
    free(f->dir);
    free(f->table_dir);
    free(f);
    return 0;
}

static int commit_change(icm_table *t, const char *key, const char *value)
{
    icm_table_metadata *md = NULL;
    icmt_ok(icm_table_metadata_copy(&md, icm_table_get_metadata(t)));
    icmt_ok(icm_table_metadata_set_property(md, key, value));
    int rc = icm_table_commit(t, md);
    icm_table_metadata_free(md);
    return rc;
}

static char *hint(const hfx *f)
{
    char *p = icmt_sprintf("%s/metadata/version-hint.text", f->table_dir);
    char *text = icmt_read_file(p, NULL);
    free(p);
    return text;
}

/* Names in metadata/, joined with ';' in sorted order (readdir order is arbitrary). */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *metadata_listing(const char *table_dir)
{
    char *dir = icmt_sprintf("%s/metadata", table_dir);
    char *names[256];
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < 256)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            names[n++] = strdup(e->d_name);
    if (d != NULL)
        closedir(d);
    qsort(names, n, sizeof names[0], cmp_names);
    char *out = calloc(1, 256 * 64);
    for (size_t i = 0; i < n; i++) {
        strcat(out, names[i]);
        strcat(out, ";");
        free(names[i]);
    }
    free(dir);
    return out;
}

static void create_and_commit_publish_next_version(void **state)
{
    hfx *f = *state;
    char *h = hint(f);
    assert_string_equal(h, "1");
    free(h);
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, f->cat, "db.events"));
    icmt_ok(commit_change(t, "k", "v"));
    char *want = icmt_sprintf("%s/metadata/v2.metadata.json", f->table_dir);
    assert_string_equal(icm_table_get_metadata_location(t), want);
    h = hint(f);
    assert_string_equal(h, "2");
    free(h);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    assert_int_equal(icm_table_metadata_metadata_log_count(md), 1);
    char *v1 = icmt_sprintf("%s/metadata/v1.metadata.json", f->table_dir);
    assert_string_equal(icm_table_metadata_metadata_log_at(md, 0)->metadata_file, v1);
    /* The same table through its directory. */
    icm_table *byd = NULL;
    icmt_ok(icm_table_open_dir(&byd, f->io, f->table_dir));
    assert_string_equal(icm_table_get_metadata_location(byd), want);
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(byd), "k"), "v");
    icmt_ok(commit_change(byd, "k", "w"));
    char *listing = metadata_listing(f->table_dir);
    assert_string_equal(listing, "v1.metadata.json;v2.metadata.json;v3.metadata.json;"
                                 "version-hint.text;");
    free(listing);
    free(v1);
    free(want);
    icm_table_free(byd);
    icm_table_free(t);
}

static void conflict_fails_and_keeps_winner(void **state)
{
    hfx *f = *state;
    icm_table *a = NULL, *b = NULL;
    icmt_ok(icm_table_open_dir(&a, f->io, f->table_dir));
    icmt_ok(icm_table_open_dir(&b, f->io, f->table_dir));
    icmt_ok(commit_change(a, "writer", "a"));
    assert_int_equal(commit_change(b, "writer", "b"), ICM_ECOMMIT_FAILED);
    assert_non_null(strstr(icm_error_last()->message, "version 2 already exists"));
    /* v2 is the winner's and still there; the loser left nothing behind. */
    icm_table *check = NULL;
    icmt_ok(icm_table_open_dir(&check, f->io, f->table_dir));
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(check), "writer"),
                        "a");
    char *listing = metadata_listing(f->table_dir);
    assert_string_equal(listing, "v1.metadata.json;v2.metadata.json;version-hint.text;");
    free(listing);
    icm_table_free(check);
    icm_table_free(a);
    icm_table_free(b);
}

static void stale_hint_is_probed_past(void **state)
{
    hfx *f = *state;
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, f->io, f->table_dir));
    icmt_ok(commit_change(t, "k", "1"));
    char *p = icmt_sprintf("%s/metadata/version-hint.text", f->table_dir);
    icmt_write_file(p, "1", 1); /* a writer that crashed before updating the hint */
    free(p);
    icm_table *u = NULL;
    icmt_ok(icm_table_open_dir(&u, f->io, f->table_dir));
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(u), "k"), "1");
    icmt_ok(commit_change(u, "k", "2")); /* commits v3, not a second v2 */
    char *v3 = icmt_sprintf("%s/metadata/v3.metadata.json", f->table_dir);
    assert_string_equal(icm_table_get_metadata_location(u), v3);
    free(v3);
    icm_table_free(t);
    icm_table_free(u);
}

static void refused_properties_and_unsupported_ops(void **state)
{
    hfx *f = *state;
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, f->io, f->table_dir));
    assert_int_equal(commit_change(t, "write.metadata.path", "/elsewhere"), ICM_EINVALID);
    char *listing = metadata_listing(f->table_dir);
    assert_string_equal(listing, "v1.metadata.json;version-hint.text;");
    free(listing);
    assert_int_equal(icm_catalog_register_table(f->cat, "db.x", icm_table_get_metadata_location(t)),
                     ICM_EUNSUPPORTED);
    assert_int_equal(icm_catalog_drop_table(f->cat, "db.events"), ICM_EUNSUPPORTED);
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    assert_int_equal(icm_catalog_create_table(NULL, f->cat, "db.events", &o), ICM_EEXISTS);
    icm_table_free(t);
}

static void gzip_versions_and_stem_named_current(void **state)
{
    hfx *f = *state;
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, f->io, f->table_dir));
    icmt_ok(commit_change(t, "write.metadata.compression-codec", "gzip"));
    char *v2 = icmt_sprintf("%s/metadata/v2.gz.metadata.json", f->table_dir);
    assert_string_equal(icm_table_get_metadata_location(t), v2);
    size_t len = 0;
    char *raw = icmt_read_file(v2, &len);
    assert_true(len > 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b);
    free(raw);
    /* Another writer publishes v3 gzipped; our plain v3 must collide with it all the same. */
    icm_table *other = NULL;
    icmt_ok(icm_table_open_dir(&other, f->io, f->table_dir));
    icmt_ok(commit_change(other, "writer", "other")); /* v3.gz.metadata.json */
    assert_int_equal(commit_change(t, "write.metadata.compression-codec", "none"),
                     ICM_ECOMMIT_FAILED);
    char *plain3 = icmt_sprintf("%s/metadata/v3.metadata.json", f->table_dir);
    assert_false(icmt_file_exists(plain3));
    free(plain3);
    icmt_ok(icm_table_refresh(t));
    icmt_ok(commit_change(t, "write.metadata.compression-codec", "none")); /* v4, plain */
    free(v2);
    /* A hint naming a non-numbered file: readable, but no v<N+1> can follow it. */
    char *hint_path = icmt_sprintf("%s/metadata/version-hint.text", f->table_dir);
    char *stem_file = icmt_sprintf("%s/metadata/00007-custom.metadata.json", f->table_dir);
    char *v3 = icmt_sprintf("%s/metadata/v4.metadata.json", f->table_dir);
    size_t n = 0;
    char *content = icmt_read_file(v3, &n);
    assert_non_null(content);
    icmt_write_file(stem_file, content, n);
    icmt_write_file(hint_path, "00007-custom", strlen("00007-custom"));
    icm_table *u = NULL;
    icmt_ok(icm_table_open_dir(&u, f->io, f->table_dir));
    assert_string_equal(icm_table_get_metadata_location(u), stem_file);
    assert_int_equal(commit_change(u, "k", "w"), ICM_EUNSUPPORTED);
    free(content);
    free(v3);
    free(stem_file);
    free(hint_path);
    icm_table_free(u);
    icm_table_free(other);
    icm_table_free(t);
}

/* The in-memory FileIO publishes with create-new too: the same protocol without a disk. */
static void commit_on_memory_fileio(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    icmt_ok(icm_fileio_mem_new(&mem));
    icm_catalog *cat = NULL;
    icmt_ok(icm_catalog_open_hadoop(&cat, "m", "mem://wh", mem));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    char *loc = NULL;
    icmt_ok(icm_catalog_create_table(&loc, cat, "a.t", &o));
    assert_string_equal(loc, "mem://wh/a/t/metadata/v1.metadata.json");
    icm_free(loc);
    icm_table *a = NULL, *b = NULL;
    icmt_ok(icm_table_load(&a, cat, "a.t"));
    icmt_ok(icm_table_load(&b, cat, "a.t"));
    icmt_ok(commit_change(a, "x", "1"));
    assert_string_equal(icm_table_get_metadata_location(a),
                        "mem://wh/a/t/metadata/v2.metadata.json");
    assert_int_equal(commit_change(b, "x", "2"), ICM_ECOMMIT_FAILED);
    icmt_ok(icm_table_refresh(b));
    assert_string_equal(icm_table_metadata_property(icm_table_get_metadata(b), "x"), "1");
    icm_table_free(a);
    icm_table_free(b);
    icm_catalog_free(cat);
    icm_fileio_free(mem);
}

static int collect_cb(const char *name, void *payload)
{
    strcat(payload, name);
    strcat(payload, ";");
    return 0;
}

static void namespaces_are_directories(void **state)
{
    hfx *f = *state;
    icmt_ok(icm_catalog_create_namespace(f->cat, "db.sub"));
    icmt_ok(icm_catalog_create_namespace(f->cat, "other"));
    icm_create_table_options o = {ICM_CREATE_TABLE_OPTIONS_VERSION,
                                  SCHEMA_JSON, NULL, NULL, NULL, 0};
    icmt_ok(icm_catalog_create_table(NULL, f->cat, "db.sub.t2", &o));
    char names[512] = "";
    icmt_ok(icm_catalog_list_namespaces(f->cat, NULL, collect_cb, names));
    assert_string_equal(names, "db;other;");
    names[0] = '\0';
    icmt_ok(icm_catalog_list_namespaces(f->cat, "db", collect_cb, names));
    assert_string_equal(names, "db.sub;"); /* the table directory db/events is no namespace */
    names[0] = '\0';
    icmt_ok(icm_catalog_list_tables(f->cat, "db", collect_cb, names));
    assert_string_equal(names, "events;");
    names[0] = '\0';
    icmt_ok(icm_catalog_list_tables(f->cat, "db.sub", collect_cb, names));
    assert_string_equal(names, "t2;");
    assert_int_equal(icm_catalog_create_namespace(f->cat, "other"), ICM_EEXISTS);
    icm_table *t = NULL;
    assert_int_equal(icm_table_load(&t, f->cat, "db.missing"), ICM_ENOTFOUND);
}

/* ---- the race ---- */

#define RACERS 5
#define COMMITS_PER_RACER 4

/* Child: commit COMMITS_PER_RACER changes, each retried after a refresh until it lands.
 * Prints one line per successful commit: "<version file>". Exit 0 when all landed. */
static int racer(const char *table_dir, int id, FILE *out)
{
    icm_fileio *io = NULL;
    if (icm_fileio_local_new(&io) != 0)
        return 2;
    icm_table *t = NULL;
    if (icm_table_open_dir(&t, io, table_dir) != 0)
        return 3;
    for (int i = 0; i < COMMITS_PER_RACER; i++) {
        char key[32];
        snprintf(key, sizeof key, "racer-%d-%d", id, i);
        for (int attempt = 0;; attempt++) {
            int rc = commit_change(t, key, "done");
            if (rc == 0)
                break;
            if (rc != ICM_ECOMMIT_FAILED || attempt > 1000)
                return 4;
            if (icm_table_refresh(t) != 0)
                return 5;
        }
        fprintf(out, "%s\n", icm_table_get_metadata_location(t));
        fflush(out);
    }
    icm_table_free(t);
    icm_fileio_free(io);
    return 0;
}

static void racing_processes_one_winner_per_version(void **state)
{
    hfx *f = *state;
    char *outputs[RACERS];
    pid_t pids[RACERS];
    for (int r = 0; r < RACERS; r++) {
        outputs[r] = icmt_sprintf("%s/racer-%d.out", f->dir, r);
        pids[r] = fork();
        assert_true(pids[r] >= 0);
        if (pids[r] == 0) {
            FILE *out = fopen(outputs[r], "w");
            _exit(out != NULL ? racer(f->table_dir, r, out) : 1);
        }
    }
    for (int r = 0; r < RACERS; r++) {
        int status = 0;
        assert_int_equal(waitpid(pids[r], &status, 0), pids[r]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    /* Every reported version is distinct: one winner per version. */
    const int total = RACERS * COMMITS_PER_RACER;
    char seen[RACERS * COMMITS_PER_RACER + 2] = {0};
    for (int r = 0; r < RACERS; r++) {
        size_t len = 0;
        char *text = icmt_read_file(outputs[r], &len);
        assert_non_null(text);
        for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
            const char *name = strrchr(line, '/') + 1;
            int v = atoi(name + 1);
            assert_true(v >= 2 && v <= total + 1);
            assert_int_equal(seen[v], 0);
            seen[v] = 1;
        }
        free(text);
        free(outputs[r]);
    }
    /* No lost update: the final version carries every racer's every change, and each version's
     * log ends with its predecessor. */
    icm_table *t = NULL;
    icmt_ok(icm_table_open_dir(&t, f->io, f->table_dir));
    char *want = icmt_sprintf("%s/metadata/v%d.metadata.json", f->table_dir, total + 1);
    assert_string_equal(icm_table_get_metadata_location(t), want);
    free(want);
    const icm_table_metadata *md = icm_table_get_metadata(t);
    for (int r = 0; r < RACERS; r++)
        for (int i = 0; i < COMMITS_PER_RACER; i++) {
            char key[32];
            snprintf(key, sizeof key, "racer-%d-%d", r, i);
            assert_non_null(icm_table_metadata_property(md, key));
        }
    assert_int_equal(icm_table_metadata_metadata_log_count(md), total);
    for (int v = 1; v <= total; v++) {
        char *file = icmt_sprintf("%s/metadata/v%d.metadata.json", f->table_dir, v);
        assert_string_equal(icm_table_metadata_metadata_log_at(md, (size_t)v - 1)->metadata_file,
                            file);
        free(file);
    }
    /* No temp files: exactly v1..v(total+1) and the hint. */
    char *listing = metadata_listing(f->table_dir);
    int files = 0;
    for (char *p = listing; *p; p++)
        files += *p == ';';
    assert_int_equal(files, total + 2);
    assert_null(strstr(listing, "tmp"));
    free(listing);
    icm_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(create_and_commit_publish_next_version, hfx_setup,
                                        hfx_teardown),
        cmocka_unit_test_setup_teardown(conflict_fails_and_keeps_winner, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(stale_hint_is_probed_past, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(refused_properties_and_unsupported_ops, hfx_setup,
                                        hfx_teardown),
        cmocka_unit_test_setup_teardown(namespaces_are_directories, hfx_setup, hfx_teardown),
        cmocka_unit_test_setup_teardown(gzip_versions_and_stem_named_current, hfx_setup,
                                        hfx_teardown),
        cmocka_unit_test(commit_on_memory_fileio),
        cmocka_unit_test_setup_teardown(racing_processes_one_winner_per_version, hfx_setup,
                                        hfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
