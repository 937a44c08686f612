/*
 * tests/unit/test_location_identity_cli.c: `icemaint files` (and `files --all`) list one row per
 * file, told apart by the location identity (icm_location_identity), not by how a manifest
 * entry spells it. A table whose snapshots reference one data file as `<t>/data/A.parquet` and
 * as `file://<t>/data/A.parquet` has one data file: it was listed, counted and summed twice.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "history.h"
#include "testutil.h"

/* Run the CLI in `dir` with a shell-quoted argument string; its JSON output (exit 0). */
static json_t *files_json(const char *dir, const char *args)
{
    char *cmd = icmt_sprintf("cd '%s' && '%s' --json files %s", dir, icmt_cli_path(), args);
    icmt_run r = icmt_shell(dir, cmd);
    free(cmd);
    if (r.code != 0)
        print_error("exit %d: %s\n", r.code, r.err);
    assert_int_equal(r.code, 0);
    json_t *doc = icmt_json_parse(r.out);
    icmt_run_free(&r);
    return doc;
}

static void test_one_row_per_file_identity(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *loc = icmt_sprintf("%s/t", dir);
    icm_fileio *io = NULL;
    icmt_ok(icm_fileio_local_new(&io));
    hist *h = hist_new(io, loc, 2, false, INT64_C(1700000000000));
    hist_append(h, "main", "A", "B", NULL);
    /* the same file A again, spelled `file://<t>/...` (and a new file C so spelled) */
    char *file_loc = icmt_sprintf("file://%s", loc);
    hist_set_data_location(h, file_loc);
    hist_append(h, "main", "A", "C", NULL);
    icm_table *t = hist_open_table(h);
    char *md = strdup(icm_table_get_metadata_location(t));
    icm_table_free(t);

    const char *modes[] = {"", "--all"};
    for (size_t m = 0; m < 2; m++) {
        char *args = icmt_sprintf("%s '%s'", modes[m], md);
        json_t *doc = files_json(dir, args);
        json_t *files = json_object_get(doc, "files");
        assert_true(json_is_array(files));
        /* A, B and C: the second reference to A is the same file */
        assert_int_equal(json_array_size(files), 3);
        size_t a_rows = 0;
        for (size_t i = 0; i < json_array_size(files); i++) {
            const char *path =
                json_string_value(json_object_get(json_array_get(files, i), "path"));
            assert_non_null(path);
            a_rows += strstr(path, "/data/A.parquet") != NULL;
        }
        assert_int_equal(a_rows, 1);
        json_decref(doc);
        free(args);
    }
    free(md);
    free(file_loc);
    hist_free(h);
    icm_fileio_free(io);
    free(loc);
    icmt_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_row_per_file_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
