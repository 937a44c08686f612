/*
 * tests/unit/test_cli.c: the icemaint binary as a user sees it: --version, --help, usage errors
 * (exit 2), missing and invalid tables (exit 1, one line on stderr naming the path), and
 * `inspect` / `snapshots` on every fixture table of ../shared/fixtures/index.tsv.
 *
 * The binary is spawned (posix_spawn) with stdout and stderr sent to temp files. Expected
 * values come from index.tsv and from parsing each metadata file here with jansson (gzip read
 * with zlib), independently of libicemaint's metadata parser.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "icemaint/common.h"
#include "testutil.h"

extern char **environ;

/* The table folder, metadata/ and the file name: the part of a fixture path that its error
 * message shows whether the file is named locally or, under --path-map, by its original name. */
static const char *path_tail(const char *path)
{
    const char *p = path + strlen(path);
    int slashes = 0;
    while (p > path && slashes < 3)
        if (*--p == '/')
            slashes++;
    return slashes == 3 ? p + 1 : path;
}

/* ---- running the binary ---- */

typedef struct cli_result {
    int exit_code; /* -1 when killed by a signal */
    char *out;
    char *err;
} cli_result;

static void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Run the CLI with args (NULL-terminated, without argv[0]). */
static cli_result run_cli(const char *const *args)
{
    static char *tmp;
    if (tmp == NULL)
        tmp = icmt_mkdtemp();
    char *out_path = icmt_sprintf("%s/stdout", tmp);
    char *err_path = icmt_sprintf("%s/stderr", tmp);
    size_t n = 0;
    while (args[n] != NULL)
        n++;
    char **argv = calloc(n + 2, sizeof *argv);
    argv[0] = (char *)icmt_cli_path();
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        print_error("cannot run %s: %s\n", argv[0], strerror(rc));
        fail();
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    cli_result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = icmt_read_file(out_path, NULL);
    r.err = icmt_read_file(err_path, NULL);
    free(argv);
    free(out_path);
    free(err_path);
    return r;
}

static void show(const char *what, const cli_result *r)
{
    print_error("%s: exit %d\n--- stdout:\n%s\n--- stderr:\n%s\n", what, r->exit_code, r->out,
                r->err);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* stderr is exactly one line starting "icemaint: " */
static void assert_one_error_line(const cli_result *r)
{
    if (strncmp(r->err, "icemaint: ", 10) != 0 || count_lines(r->err) != 1 ||
        r->err[strlen(r->err) - 1] != '\n') {
        show("expected one error line", r);
        fail();
    }
}

/* With --json, stdout is exactly one document even on failure: {"error": {...}} with the
 * stderr line's message (without "icemaint: " and the usage hint) and the exit code. */
static void assert_json_error(const cli_result *r, const char *needle)
{
    json_error_t jerr;
    json_t *doc = json_loads(r->out, 0, &jerr);
    json_t *e = json_object_get(doc, "error");
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (doc == NULL || json_object_size(doc) != 1 || msg == NULL || strstr(msg, needle) == NULL ||
        strstr(r->err, msg) == NULL ||
        json_integer_value(json_object_get(e, "exit_code")) != r->exit_code) {
        print_error("bad JSON error document\n");
        show("--json", r);
        fail();
    }
    json_decref(doc);
}

static bool has_json_flag(const char *const *args)
{
    for (; *args != NULL; args++)
        if (strcmp(*args, "--json") == 0)
            return true;
    return false;
}

static void expect_usage_error(const char *const *args, const char *needle)
{
    cli_result r = run_cli(args);
    bool json = has_json_flag(args);
    if (r.exit_code != 2 || strstr(r.err, needle) == NULL || (!json && r.out[0] != '\0')) {
        show(args[0] != NULL ? args[0] : "(no arguments)", &r);
        fail();
    }
    assert_one_error_line(&r);
    if (json)
        assert_json_error(&r, needle);
    cli_result_free(&r);
}

/* ---- basic behaviour ---- */

static void test_version(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "icemaint %d.%d.%d\n", ICM_VERSION_MAJOR, ICM_VERSION_MINOR,
             ICM_VERSION_PATCH);
    cli_result r = run_cli((const char *[]){"--version", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, want);
    assert_string_equal(r.err, "");
    cli_result_free(&r);

    /* with --json, before or after it (a global option's value may stand between): a document */
    snprintf(want, sizeof want, "%d.%d.%d", ICM_VERSION_MAJOR, ICM_VERSION_MINOR,
             ICM_VERSION_PATCH);
    const char *const *argvs[] = {(const char *[]){"--json", "--version", NULL},
                                  (const char *[]){"--version", "--json", NULL},
                                  (const char *[]){"--path-map", "/a=/b", "--json", "--version",
                                                   NULL}};
    for (size_t i = 0; i < sizeof argvs / sizeof argvs[0]; i++) {
        r = run_cli(argvs[i]);
        assert_int_equal(r.exit_code, 0);
        assert_string_equal(r.err, "");
        json_t *doc = icmt_json_parse(r.out);
        assert_string_equal(json_string_value(json_object_get(doc, "name")), "icemaint");
        assert_string_equal(json_string_value(json_object_get(doc, "version")), want);
        assert_int_equal(json_object_size(doc), 2);
        json_decref(doc);
        cli_result_free(&r);
    }
}

static void test_help(void **state)
{
    (void)state;
    cli_result r = run_cli((const char *[]){"--help", NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, "Usage: icemaint [GLOBAL OPTIONS] COMMAND"));
    assert_non_null(strstr(r.out, "--path-map FROM=TO"));
    assert_non_null(strstr(r.out, "\n  inspect "));
    assert_non_null(strstr(r.out, "\n  snapshots "));
    assert_non_null(strstr(r.out, "\n  manifests "));
    assert_non_null(strstr(r.out, "\n  files "));
    assert_string_equal(r.err, "");
    cli_result_free(&r);

    const char *commands[] = {"inspect", "snapshots", "manifests", "files"};
    for (size_t i = 0; i < 4; i++) {
        char want[96];
        snprintf(want, sizeof want, "Usage: icemaint [GLOBAL OPTIONS] %s TABLE", commands[i]);
        r = run_cli((const char *[]){commands[i], "--help", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, want));
        assert_string_equal(r.err, "");
        cli_result_free(&r);
        /* -h after other arguments, too */
        r = run_cli((const char *[]){"--json", commands[i], "/nonexistent", "-h", NULL});
        assert_int_equal(r.exit_code, 0);
        assert_non_null(strstr(r.out, want));
        cli_result_free(&r);
    }
}

static void test_usage_errors(void **state)
{
    (void)state;
    expect_usage_error((const char *[]){NULL}, "no command given");
    expect_usage_error((const char *[]){"--json", NULL}, "no command given");
    expect_usage_error((const char *[]){"frobnicate", NULL}, "frobnicate: unknown command");
    expect_usage_error((const char *[]){"--bogus", "inspect", "x", NULL},
                       "--bogus: unknown global option");
    expect_usage_error((const char *[]){"snapshots", NULL}, "missing TABLE");
    expect_usage_error((const char *[]){"inspect", "--bogus", "/tmp", NULL},
                       "--bogus: unknown option for 'inspect'");
    expect_usage_error((const char *[]){"inspect", "/a", "/b", NULL}, "unexpected argument");
    expect_usage_error((const char *[]){"--path-map", NULL}, "--path-map: option needs a value");
    expect_usage_error((const char *[]){"--path-map", "nonsense", "inspect", "/t", NULL},
                       "needs FROM=TO");
    expect_usage_error((const char *[]){"--path-map", "=/x", "inspect", "/t", NULL},
                       "FROM is empty");
    expect_usage_error((const char *[]){"--path-map=/x=", "inspect", "/t", NULL},
                       "TO is empty");
    expect_usage_error((const char *[]){"files", "--all", "--snapshot-id", "1", "/t", NULL},
                       "--all: cannot be combined with --snapshot-id");
    expect_usage_error((const char *[]){"manifests", "--snapshot-id", NULL},
                       "--snapshot-id: option needs a value");
    expect_usage_error((const char *[]){"--json", "frobnicate", NULL},
                       "frobnicate: unknown command");
    expect_usage_error((const char *[]){"frobnicate", "db.t", "--json", NULL},
                       "frobnicate: unknown command");
    expect_usage_error((const char *[]){"inspect", "--bogus", "/tmp", "--json", NULL},
                       "--bogus: unknown option for 'inspect'");
}

static void test_missing_table(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *missing = icmt_sprintf("%s/no-such-table", dir);
    const char *cmds[] = {"inspect", "snapshots"};
    for (size_t i = 0; i < 2; i++) {
        cli_result r = run_cli((const char *[]){cmds[i], missing, NULL});
        if (r.exit_code != 1 || strstr(r.err, missing) == NULL) {
            show(cmds[i], &r);
            fail();
        }
        assert_one_error_line(&r);
        assert_string_equal(r.out, "");
        cli_result_free(&r);
    }
    /* --json: the same failure as a JSON document on stdout, with the library's error code */
    cli_result j = run_cli((const char *[]){"--json", "inspect", missing, NULL});
    assert_int_equal(j.exit_code, 1);
    assert_one_error_line(&j);
    assert_json_error(&j, missing);
    cli_result_free(&j);
    /* an empty directory is no table: exit 1 naming the directory */
    cli_result r = run_cli((const char *[]){"snapshots", dir, NULL});
    if (r.exit_code != 1 || strstr(r.err, dir) == NULL) {
        show("empty dir", &r);
        fail();
    }
    assert_one_error_line(&r);
    cli_result_free(&r);
    icmt_rmtree(dir);
    free(missing);
    free(dir);
}

/* `ns.table` goes to the catalog; a catalog configuration that does not exist is an error
 * naming the file (the catalog commands themselves are tested with the catalog module). */
static void test_catalog_name_needs_configuration(void **state)
{
    (void)state;
    char *dir = icmt_mkdtemp();
    char *config = icmt_sprintf("%s/missing.pyiceberg.yaml", dir);
    cli_result r = run_cli((const char *[]){"--config", config, "snapshots", "db.events", NULL});
    if (r.exit_code != 1 || strstr(r.err, config) == NULL) {
        show("missing config", &r);
        fail();
    }
    assert_one_error_line(&r);
    assert_string_equal(r.out, "");
    cli_result_free(&r);
    icmt_rmtree(dir);
    free(config);
    free(dir);
}

static void test_invalid_metadata(void **state)
{
    (void)state;
    char *bad = icmt_sprintf("%s/metadata-json/java-main/core/src/test/resources/"
                             "TableMetadataUnsupportedVersion.json",
                             icmt_fixtures_dir());
    cli_result r = run_cli((const char *[]){"inspect", bad, NULL});
    if (r.exit_code != 1 || strstr(r.err, bad) == NULL) {
        show("unsupported version", &r);
        fail();
    }
    assert_one_error_line(&r);
    assert_string_equal(r.out, "");
    cli_result_free(&r);

    /* -v adds progress lines, and the code name and class on the error line (the last) */
    r = run_cli((const char *[]){"-v", "inspect", bad, NULL});
    assert_int_equal(r.exit_code, 1);
    size_t len = strlen(r.err);
    assert_true(len > 1 && r.err[len - 1] == '\n');
    r.err[len - 1] = '\0';
    const char *last = strrchr(r.err, '\n');
    last = last != NULL ? last + 1 : r.err;
    char *want = icmt_sprintf("icemaint: %s: ", bad);
    assert_true(strncmp(last, want, strlen(want)) == 0);
    assert_non_null(strstr(last, "[ICM_EUNSUPPORTED, class "));
    free(want);
    cli_result_free(&r);
    free(bad);
}

/* ---- fixtures ---- */

typedef struct fixture_row {
    char *table_dir;        /* relative to the fixtures dir */
    char *format_version;   /* "1".."3" or "None" */
    char *current_metadata; /* relative to table_dir */
    long snapshots;
    char *location;         /* location_in_metadata */
    long data_files;        /* distinct live data files over all snapshots */
    long delete_files;      /* distinct live delete files over all snapshots */
    bool missing_refs;      /* some referenced file is not in the fixtures */
} fixture_row;

static char *dup_field(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

/* Split a TSV line into at most max fields (pointers into a copy). */
static size_t split_tsv(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        fields[n++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static int column(char **header, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(header[i], name) == 0)
            return (int)i;
    }
    print_error("index.tsv has no column %s\n", name);
    fail();
    return -1;
}

static fixture_row *load_index(size_t *count)
{
    char *path = icmt_sprintf("%s/index.tsv", icmt_fixtures_dir());
    char *text = icmt_read_file(path, NULL);
    assert_non_null(text);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    char *header[64];
    size_t nh = split_tsv(line, header, 64);
    int c_dir = column(header, nh, "table_dir");
    int c_fv = column(header, nh, "format_version");
    int c_cur = column(header, nh, "current_metadata");
    int c_snap = column(header, nh, "snapshots");
    int c_loc = column(header, nh, "location_in_metadata");
    int c_data = column(header, nh, "data_files");
    int c_del = column(header, nh, "delete_files");
    int c_missing = column(header, nh, "missing_refs");
    fixture_row *rows = NULL;
    size_t n = 0;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char *f[64];
        size_t nf = split_tsv(line, f, 64);
        assert_true(nf == nh);
        if (f[c_cur][0] == '\0')
            continue;
        rows = realloc(rows, (n + 1) * sizeof *rows);
        rows[n].table_dir = dup_field(f[c_dir], strlen(f[c_dir]));
        rows[n].format_version = dup_field(f[c_fv], strlen(f[c_fv]));
        rows[n].current_metadata = dup_field(f[c_cur], strlen(f[c_cur]));
        rows[n].snapshots = strtol(f[c_snap], NULL, 10);
        rows[n].location = dup_field(f[c_loc], strlen(f[c_loc]));
        rows[n].data_files = strtol(f[c_data], NULL, 10);
        rows[n].delete_files = strtol(f[c_del], NULL, 10);
        rows[n].missing_refs = strcmp(f[c_missing], "{}") != 0;
        n++;
    }
    free(text);
    free(path);
    *count = n;
    return rows;
}

static void free_index(fixture_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].table_dir);
        free(rows[i].format_version);
        free(rows[i].current_metadata);
        free(rows[i].location);
    }
    free(rows);
}

/* Parse a (possibly gzip-compressed) metadata file with jansson, independent of libicemaint. */
static json_t *load_metadata_json(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int got;
    while ((got = gzread(gz, buf + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)got;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    gzclose(gz);
    json_error_t jerr;
    json_t *doc = json_loadb(buf, len, 0, &jerr);
    free(buf);
    if (doc == NULL)
        print_error("%s: %s\n", path, jerr.text);
    return doc;
}

/* Is the table directory in filesystem (Hadoop) layout: a version hint, or a current metadata
 * file named v<N>.metadata.json? (PyIceberg and catalog tables use <NNNNN>-<uuid> names and
 * need a catalog or the metadata file.) */
static bool hadoop_layout(const char *table_dir, const char *current_metadata)
{
    char *hint = icmt_sprintf("%s/metadata/version-hint.text", table_dir);
    char *hint_txt = icmt_sprintf("%s/metadata/version-hint.txt", table_dir);
    bool yes = icmt_file_exists(hint) || icmt_file_exists(hint_txt);
    free(hint);
    free(hint_txt);
    const char *name = strrchr(current_metadata, '/');
    name = name != NULL ? name + 1 : current_metadata;
    if (name[0] == 'v' && isdigit((unsigned char)name[1]))
        yes = true;
    return yes;
}

/* Does `dir` appear in more than one row (several tables sharing one folder)? */
static bool dir_shared(const fixture_row *rows, size_t n, const char *dir)
{
    size_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += strcmp(rows[i].table_dir, dir) == 0;
    return hits > 1;
}

/* Build the --path-map arguments for a row: the metadata location to the local table dir,
 * plus the extra prefixes the fixtures README names. Returns how many strings were added. */
static size_t path_map_args(const fixture_row *row, const char *table_dir, const char **args,
                            char **owned)
{
    size_t n = 0;
    if (strcmp(row->location, "None") != 0 && row->location[0] != '\0')
        owned[n++] = icmt_sprintf("%s=%s", row->location, table_dir);
    /* `./lineitem_iceberg` as location, `lineitem_iceberg/metadata/...` inside */
    if (strncmp(row->location, "./", 2) == 0)
        owned[n++] = icmt_sprintf("%s=%s", row->location + 2, table_dir);
    if (strncmp(row->location, "/test-warehouse/iceberg_test/", 29) == 0)
        owned[n++] = icmt_sprintf("/test-warehouse/iceberg_test=%s/impala/testdata/data/"
                                  "iceberg_test",
                                  icmt_fixtures_dir());
    if (strncmp(row->table_dir, "duckdb-iceberg/", 15) == 0)
        owned[n++] = icmt_sprintf("data=%s/duckdb-iceberg/data", icmt_fixtures_dir());
    for (size_t i = 0; i < n; i++) {
        args[2 * i] = "--path-map";
        args[2 * i + 1] = owned[i];
    }
    return 2 * n;
}

/* Check `snapshots --json` output against the metadata parsed here. */
static void check_snapshots_json(const char *what, const cli_result *r, json_t *md,
                                 long want_count)
{
    json_error_t jerr;
    json_t *doc = json_loads(r->out, 0, &jerr); /* rejects trailing garbage: one document */
    if (r->exit_code != 0 || doc == NULL) {
        show(what, r);
        fail();
    }
    json_t *got = json_object_get(doc, "snapshots");
    json_t *want = json_object_get(md, "snapshots");
    size_t want_n = json_is_array(want) ? json_array_size(want) : 0;
    if (!json_is_array(got) || (long)json_array_size(got) != want_count ||
        json_array_size(got) != want_n) {
        show(what, r);
        print_error("want %ld snapshots (metadata has %zu)\n", want_count, want_n);
        fail();
    }
    for (size_t i = 0; i < want_n; i++) {
        json_t *g = json_array_get(got, i), *w = json_array_get(want, i);
        json_t *gid = json_object_get(g, "snapshot_id");
        json_t *wid = json_object_get(w, "snapshot-id");
        assert_true(json_is_integer(gid));
        if (json_integer_value(gid) != json_integer_value(wid)) {
            print_error("%s: snapshot %zu: id %" JSON_INTEGER_FORMAT " != %" JSON_INTEGER_FORMAT
                        "\n", what, i, json_integer_value(gid), json_integer_value(wid));
            fail();
        }
        assert_int_equal(json_integer_value(json_object_get(g, "timestamp_ms")),
                         json_integer_value(json_object_get(w, "timestamp-ms")));
        json_t *wparent = json_object_get(w, "parent-snapshot-id");
        json_t *gparent = json_object_get(g, "parent_snapshot_id");
        if (json_is_integer(wparent))
            assert_int_equal(json_integer_value(gparent), json_integer_value(wparent));
        else
            assert_true(json_is_null(gparent));
        json_t *wlist = json_object_get(w, "manifest-list");
        if (json_is_string(wlist))
            assert_string_equal(json_string_value(json_object_get(g, "manifest_list")),
                                json_string_value(wlist));
    }
    json_decref(doc);
}

static void check_inspect_json(const char *what, const cli_result *r, const fixture_row *row,
                               json_t *md)
{
    json_error_t jerr;
    json_t *doc = json_loads(r->out, 0, &jerr);
    if (r->exit_code != 0 || doc == NULL) {
        show(what, r);
        fail();
    }
    long fv = strtol(row->format_version, NULL, 10);
    assert_int_equal(json_integer_value(json_object_get(doc, "format_version")), fv);
    json_t *counts = json_object_get(doc, "counts");
    assert_int_equal(json_integer_value(json_object_get(counts, "snapshots")), row->snapshots);
    assert_string_equal(json_string_value(json_object_get(doc, "location")),
                        json_string_value(json_object_get(md, "location")));
    json_t *wcur = json_object_get(md, "current-snapshot-id");
    json_t *gcur = json_object_get(doc, "current_snapshot_id");
    if (json_is_integer(wcur) && json_integer_value(wcur) != -1)
        assert_int_equal(json_integer_value(gcur), json_integer_value(wcur));
    else
        assert_true(json_is_null(gcur));
    json_t *props = json_object_get(md, "properties");
    size_t nprops = json_is_object(props) ? json_object_size(props) : 0;
    assert_int_equal(json_object_size(json_object_get(doc, "properties")), nprops);
    json_decref(doc);
}

static void test_fixture_tables(void **state)
{
    (void)state;
    size_t n = 0;
    fixture_row *rows = load_index(&n);
    assert_true(n > 90); /* index.tsv lists 103 tables */
    size_t checked = 0, refused = 0, by_dir = 0;
    for (size_t i = 0; i < n; i++) {
        const fixture_row *row = &rows[i];
        char *table_dir = icmt_sprintf("%s/%s", icmt_fixtures_dir(), row->table_dir);
        char *md_path = icmt_sprintf("%s/%s", table_dir, row->current_metadata);
        const char *args[16];
        char *owned[6] = {0};
        size_t na = path_map_args(row, table_dir, args, owned);

        json_t *md = NULL;
        if (strcmp(row->format_version, "None") != 0) {
            md = load_metadata_json(md_path);
            assert_non_null(md);
        }
        /* The spec makes next-row-id required in v3 (Java refuses its absence too); DuckDB's
         * timestamptz_ns table lacks it. Such metadata must be refused, naming the field. */
        bool v3_without_next_row_id = md != NULL && strcmp(row->format_version, "3") == 0 &&
                                      json_object_get(md, "next-row-id") == NULL;
        if (v3_without_next_row_id) {
            args[na] = "inspect";
            args[na + 1] = md_path;
            args[na + 2] = NULL;
            cli_result r = run_cli(args);
            if (r.exit_code != 1 || strstr(r.err, path_tail(md_path)) == NULL ||
                strstr(r.err, "next-row-id") == NULL) {
                show(md_path, &r);
                fail();
            }
            assert_one_error_line(&r);
            cli_result_free(&r);
            json_decref(md);
            refused++;
        } else if (strcmp(row->format_version, "None") == 0) {
            /* a placeholder without format-version: refused with one line naming the file */
            args[na] = "snapshots";
            args[na + 1] = md_path;
            args[na + 2] = NULL;
            cli_result r = run_cli(args);
            if (r.exit_code != 1 || strstr(r.err, path_tail(md_path)) == NULL) {
                show(md_path, &r);
                fail();
            }
            assert_one_error_line(&r);
            cli_result_free(&r);
            refused++;
        } else {
            /* global --json before the command, table named by its metadata file */
            args[na] = "--json";
            args[na + 1] = "snapshots";
            args[na + 2] = md_path;
            args[na + 3] = NULL;
            cli_result r = run_cli(args);
            check_snapshots_json(md_path, &r, md, row->snapshots);
            cli_result_free(&r);

            /* --json after the command */
            args[na] = "inspect";
            args[na + 1] = md_path;
            args[na + 2] = "--json";
            r = run_cli(args);
            check_inspect_json(md_path, &r, row, md);
            cli_result_free(&r);

            /* a table directory in filesystem layout resolves to the same current metadata
             * (a folder shared by several tables has no single current one) */
            if (!dir_shared(rows, n, row->table_dir) &&
                hadoop_layout(table_dir, row->current_metadata)) {
                args[na] = "--json";
                args[na + 1] = "snapshots";
                args[na + 2] = table_dir;
                args[na + 3] = NULL;
                r = run_cli(args);
                check_snapshots_json(table_dir, &r, md, row->snapshots);
                cli_result_free(&r);
                by_dir++;
            }
            json_decref(md);
            checked++;
        }
        for (size_t k = 0; k < 6; k++)
            free(owned[k]);
        free(md_path);
        free(table_dir);
    }
    print_message("checked %zu fixture tables (%zu also by directory), %zu refused\n", checked,
                  by_dir, refused);
    assert_int_equal(checked + refused, n);
    /* big_query_error's v0.metadata.json placeholder and timestamptz_ns (no next-row-id) */
    assert_int_equal(refused, 2);
    free_index(rows, n);
}

static long json_count(json_t *counts, const char *kind)
{
    json_t *v = json_object_get(counts, kind);
    assert_true(json_is_integer(v));
    return (long)json_integer_value(v);
}

/* Is `path` listed as a data file in `files`? */
static bool lists_data_file(json_t *files, const char *path)
{
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        if (strcmp(json_string_value(json_object_get(f, "kind")), "data") == 0 &&
            strcmp(json_string_value(json_object_get(f, "path")), path) == 0)
            return true;
    }
    return false;
}

/* A deletion vector file names one distinct data file per vector, each a live data file of
 * the same listing (the fixtures have no dangling vectors). */
static void check_vector_file(json_t *f, json_t *files)
{
    if (strcmp(json_string_value(json_object_get(f, "kind")), "deletion_vector") != 0)
        return;
    json_t *refs = json_object_get(f, "referenced_data_files");
    assert_true(json_is_array(refs));
    assert_int_equal(json_integer_value(json_object_get(f, "deletion_vectors")),
                     json_array_size(refs));
    for (size_t i = 0; i < json_array_size(refs); i++) {
        const char *ref = json_string_value(json_array_get(refs, i));
        assert_non_null(ref);
        assert_true(lists_data_file(files, ref));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(ref, json_string_value(json_array_get(refs, j)));
    }
}

/* `files --all` on every fixture table whose files are present gives index.tsv's distinct live
 * data and delete file counts; a table with a missing manifest list fails with one line naming
 * it, never with a partial listing. */
static void test_fixture_files_all(void **state)
{
    (void)state;
    size_t n = 0;
    fixture_row *rows = load_index(&n);
    size_t checked = 0, refused = 0;
    for (size_t i = 0; i < n; i++) {
        const fixture_row *row = &rows[i];
        /* metadata-json/ holds metadata only; the v0 placeholder has no format version */
        if (strncmp(row->table_dir, "metadata-json/", 14) == 0 ||
            strcmp(row->format_version, "None") == 0)
            continue;
        char *table_dir = icmt_sprintf("%s/%s", icmt_fixtures_dir(), row->table_dir);
        char *md_path = icmt_sprintf("%s/%s", table_dir, row->current_metadata);
        const char *args[20];
        char *owned[6] = {0};
        size_t na = path_map_args(row, table_dir, args, owned);
        args[na] = "--json";
        args[na + 1] = "files";
        args[na + 2] = "--all";
        args[na + 3] = md_path;
        args[na + 4] = NULL;
        cli_result r = run_cli(args);
        if (row->missing_refs) {
            if (r.exit_code != 1 || strstr(r.err, ".avro") == NULL) {
                show(md_path, &r);
                fail();
            }
            assert_one_error_line(&r);
            /* stdout: the JSON error document, with the library's error code */
            assert_json_error(&r, ".avro");
            json_t *doc = json_loads(r.out, 0, NULL);
            const char *code =
                json_string_value(json_object_get(json_object_get(doc, "error"), "code"));
            assert_non_null(code);
            assert_true(strncmp(code, "ICM_E", 5) == 0);
            json_decref(doc);
            refused++;
        } else {
            json_error_t jerr;
            json_t *doc = json_loads(r.out, 0, &jerr);
            if (r.exit_code != 0 || doc == NULL) {
                show(md_path, &r);
                fail();
            }
            json_t *counts = json_object_get(doc, "counts");
            long data = json_count(counts, "data");
            long deletes = json_count(counts, "position_deletes") +
                           json_count(counts, "equality_deletes") +
                           json_count(counts, "deletion_vector");
            if (data != row->data_files || deletes != row->delete_files) {
                print_error("%s: %ld data, %ld delete files; index.tsv: %ld, %ld\n",
                            row->table_dir, data, deletes, row->data_files,
                            row->delete_files);
                fail();
            }
            /* the listing itself: one object per distinct path, kinds adding up */
            json_t *files = json_object_get(doc, "files");
            assert_int_equal(json_array_size(files), (size_t)(data + deletes));
            for (size_t k = 0; k < json_array_size(files); k++) {
                json_t *f = json_array_get(files, k);
                assert_true(json_is_string(json_object_get(f, "path")));
                assert_true(json_is_integer(json_object_get(f, "size_bytes")));
                check_vector_file(f, files);
                for (size_t j = 0; j < k; j++)
                    assert_string_not_equal(
                        json_string_value(json_object_get(f, "path")),
                        json_string_value(json_object_get(json_array_get(files, j), "path")));
            }
            json_decref(doc);
            checked++;
        }
        cli_result_free(&r);
        for (size_t k = 0; k < 6; k++)
            free(owned[k]);
        free(md_path);
        free(table_dir);
    }
    print_message("files --all: %zu tables match index.tsv, %zu refused (missing files)\n",
                  checked, refused);
    assert_true(checked > 80);
    assert_int_equal(refused, 1); /* equality_deletes/mytable: its manifest list is missing */
    free_index(rows, n);
}

/* --snapshot-id: junk is a usage error; an id the metadata lacks is an error naming the file.
 * `manifests` and `files` of an older snapshot read that snapshot's manifest list. */
static void test_snapshot_selection(void **state)
{
    (void)state;
    char *dir = icmt_sprintf("%s/duckdb-iceberg/data/iceberg/generated_spec2_0_001/"
                             "pyspark_iceberg_table",
                             icmt_fixtures_dir());
    char *md_path = icmt_sprintf("%s/metadata/v9.metadata.json", dir);
    char *map = icmt_sprintf("data/iceberg/generated_spec2_0_001/pyspark_iceberg_table=%s", dir);
    json_t *md = load_metadata_json(md_path);
    assert_non_null(md);

    expect_usage_error((const char *[]){"manifests", md_path, "--snapshot-id", "12x", NULL},
                       "12x: --snapshot-id needs a snapshot id");
    cli_result r = run_cli((const char *[]){"files", "--snapshot-id=42", md_path, NULL});
    if (r.exit_code != 1 || strstr(r.err, md_path) == NULL || strstr(r.err, "42") == NULL) {
        show("unknown snapshot", &r);
        fail();
    }
    assert_one_error_line(&r);
    cli_result_free(&r);

    json_t *snaps = json_object_get(md, "snapshots");
    for (size_t i = 0; i < json_array_size(snaps); i++) {
        json_t *snap = json_array_get(snaps, i);
        char id[32];
        snprintf(id, sizeof id, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(snap, "snapshot-id")));
        r = run_cli((const char *[]){"--path-map", map, "manifests", md_path, "--snapshot-id",
                                     id, "--json", NULL});
        json_error_t jerr;
        json_t *doc = json_loads(r.out, 0, &jerr);
        if (r.exit_code != 0 || doc == NULL) {
            show(id, &r);
            fail();
        }
        assert_string_equal(json_string_value(json_object_get(doc, "manifest_list")),
                            json_string_value(json_object_get(snap, "manifest-list")));
        assert_int_equal(json_integer_value(json_object_get(doc, "snapshot_id")),
                         json_integer_value(json_object_get(snap, "snapshot-id")));
        json_t *manifests = json_object_get(doc, "manifests");
        assert_true(json_array_size(manifests) > 0);
        for (size_t k = 0; k < json_array_size(manifests); k++) {
            json_t *m = json_array_get(manifests, k);
            /* each manifest exists, with the length the list records */
            const char *path = json_string_value(json_object_get(m, "path"));
            const char *prefix = "data/iceberg/generated_spec2_0_001/pyspark_iceberg_table";
            assert_true(strncmp(path, prefix, strlen(prefix)) == 0);
            char *local = icmt_sprintf("%s%s", dir, path + strlen(prefix));
            size_t len = 0;
            char *bytes = icmt_read_file(local, &len);
            assert_non_null(bytes);
            assert_int_equal(json_integer_value(json_object_get(m, "size_bytes")), len);
            assert_string_equal(json_string_value(json_object_get(m, "kind")), "manifest");
            free(bytes);
            free(local);
        }
        json_decref(doc);
        cli_result_free(&r);
    }
    json_decref(md);
    free(map);
    free(md_path);
    free(dir);
}

/* duckdb's multi_blob_deletion_vectors: one Puffin file holds the deletion vectors of both data
 * files (index.tsv: 2 data files, 1 delete file, 2 DV entries); it is one file that names both. */
static void test_multi_blob_deletion_vectors(void **state)
{
    (void)state;
    const char *rel = "data/persistent/multi_blob_deletion_vectors/warehouse/default/"
                      "multi_blob_deletion_vectors";
    char *dir = icmt_sprintf("%s/duckdb-iceberg/%s", icmt_fixtures_dir(), rel);
    char *map = icmt_sprintf("%s=%s", rel, dir);
    char *md_path = icmt_sprintf("%s/metadata/00003-multi-blob.metadata.json", dir);
    cli_result r = run_cli((const char *[]){"--path-map", map, "--json", "files", md_path, NULL});
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    if (r.exit_code != 0 || doc == NULL) {
        show(md_path, &r);
        fail();
    }
    json_t *files = json_object_get(doc, "files");
    assert_int_equal(json_array_size(files), 3);
    size_t vectors = 0;
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        if (strcmp(json_string_value(json_object_get(f, "kind")), "deletion_vector") != 0)
            continue;
        check_vector_file(f, files);
        vectors += (size_t)json_integer_value(json_object_get(f, "deletion_vectors"));
        assert_true(strstr(json_string_value(json_object_get(f, "path")), ".puffin") != NULL);
    }
    assert_int_equal(vectors, 2);
    json_decref(doc);
    cli_result_free(&r);

    /* text: the vector file names its first data file and how many more */
    r = run_cli((const char *[]){"--path-map", map, "files", md_path, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_non_null(strstr(r.out, ".parquet (+1 more)\n"));
    cli_result_free(&r);
    free(md_path);
    free(map);
    free(dir);
}

/* The TABLE argument goes through --path-map too: a table named by its original location is
 * read from the local copy, and the output keeps the original names. */
static void test_table_by_original_location(void **state)
{
    (void)state;
    char *map = icmt_sprintf("/test-warehouse/iceberg_test=%s/impala/testdata/data/iceberg_test",
                             icmt_fixtures_dir());
    const char *orig = "/test-warehouse/iceberg_test/hadoop_catalog/ice/"
                       "iceberg_v2_delete_equality";
    cli_result r = run_cli((const char *[]){"--path-map", map, "--json", "snapshots", orig, NULL});
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    if (r.exit_code != 0 || doc == NULL) {
        show(orig, &r);
        fail();
    }
    char *want = icmt_sprintf("%s/metadata/v4.metadata.json", orig); /* index.tsv */
    assert_string_equal(json_string_value(json_object_get(doc, "metadata_location")), want);
    assert_int_equal(json_array_size(json_object_get(doc, "snapshots")), 3);
    json_decref(doc);
    cli_result_free(&r);

    /* without the map the original location does not exist here */
    r = run_cli((const char *[]){"snapshots", orig, NULL});
    assert_int_equal(r.exit_code, 1);
    assert_one_error_line(&r);
    assert_non_null(strstr(r.err, orig));
    cli_result_free(&r);
    free(want);
    free(map);
}

/* The value printed after a label in `inspect`'s "Label   value" lines; NULL when absent. */
static char *inspect_value(const char *out, const char *label)
{
    char *text = icmt_sprintf("\n%s", out); /* every line, the first too, follows a \n */
    char *needle = icmt_sprintf("\n%s ", label);
    const char *p = strstr(text, needle);
    char *value = NULL;
    if (p != NULL) {
        p += strlen(needle);
        while (*p == ' ')
            p++;
        const char *eol = strchr(p, '\n');
        value = dup_field(p, (size_t)(eol - p));
    }
    free(needle);
    free(text);
    return value;
}

static void test_inspect_human(void **state)
{
    (void)state;
    char *md_path = icmt_sprintf("%s/duckdb-iceberg/data/iceberg/generated_spec1_0_001/"
                                 "pyspark_iceberg_table/metadata/v9.metadata.json",
                                 icmt_fixtures_dir());
    json_t *md = load_metadata_json(md_path);
    assert_non_null(md);
    cli_result r = run_cli((const char *[]){"inspect", md_path, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.err, "");

    char *v = inspect_value(r.out, "Metadata file");
    assert_string_equal(v, md_path);
    free(v);
    v = inspect_value(r.out, "Format version");
    assert_string_equal(v, "1");
    free(v);
    v = inspect_value(r.out, "Location");
    assert_string_equal(v, json_string_value(json_object_get(md, "location")));
    free(v);
    char want[64];
    snprintf(want, sizeof want, "%zu", json_array_size(json_object_get(md, "snapshots")));
    v = inspect_value(r.out, "Snapshots");
    assert_string_equal(v, want);
    free(v);
    snprintf(want, sizeof want, "%" JSON_INTEGER_FORMAT " (",
             json_integer_value(json_object_get(md, "current-snapshot-id")));
    v = inspect_value(r.out, "Current snapshot");
    assert_non_null(v);
    assert_true(strncmp(v, want, strlen(want)) == 0);
    free(v);
    snprintf(want, sizeof want, "%zu", json_object_size(json_object_get(md, "properties")));
    v = inspect_value(r.out, "Properties");
    assert_string_equal(v, want);
    free(v);
    cli_result_free(&r);
    json_decref(md);
    free(md_path);
}

/* Human output: a header plus one row per snapshot, times in ISO-8601 UTC. */
static void test_snapshots_human(void **state)
{
    (void)state;
    char *md_path = icmt_sprintf("%s/duckdb-iceberg/data/iceberg/generated_spec2_0_001/"
                                 "pyspark_iceberg_table/metadata/v9.metadata.json",
                                 icmt_fixtures_dir());
    json_t *md = load_metadata_json(md_path);
    assert_non_null(md);
    json_t *snaps = json_object_get(md, "snapshots");
    cli_result r = run_cli((const char *[]){"snapshots", md_path, NULL});
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(count_lines(r.out), json_array_size(snaps) + 1);
    assert_true(strncmp(r.out, "SNAPSHOT_ID", 11) == 0);
    for (size_t i = 0; i < json_array_size(snaps); i++) {
        json_t *s = json_array_get(snaps, i);
        char id[32], when[40];
        snprintf(id, sizeof id, "\n%" JSON_INTEGER_FORMAT " ",
                 json_integer_value(json_object_get(s, "snapshot-id")));
        int64_t ms = json_integer_value(json_object_get(s, "timestamp-ms"));
        time_t secs = (time_t)(ms / 1000);
        struct tm tm;
        gmtime_r(&secs, &tm);
        size_t len = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(when + len, sizeof when - len, ".%03dZ", (int)(ms % 1000));
        const char *row = strstr(r.out, id);
        assert_non_null(row);
        const char *eol = strchr(row + 1, '\n');
        char *line = dup_field(row + 1, (size_t)(eol - row - 1));
        if (strstr(line, when) == NULL ||
            strstr(line, json_string_value(json_object_get(s, "manifest-list"))) == NULL) {
            print_error("row '%s' lacks %s or its manifest list\n", line, when);
            fail();
        }
        free(line);
    }
    /* the current snapshot carries the main branch */
    char main_row[64];
    snprintf(main_row, sizeof main_row, "\n%" JSON_INTEGER_FORMAT " ",
             json_integer_value(json_object_get(md, "current-snapshot-id")));
    const char *row = strstr(r.out, main_row);
    assert_non_null(row);
    const char *eol = strchr(row + 1, '\n');
    char *line = dup_field(row + 1, (size_t)(eol - row - 1));
    assert_non_null(strstr(line, " main "));
    free(line);
    cli_result_free(&r);
    json_decref(md);
    free(md_path);
}

/* A table copied elsewhere and named by its local directory under --path-map: every commit and
 * every keep-set comparison must use the names the metadata uses. Before the fix, expiry wrote
 * local paths into the metadata log and the orphan sweep planned to delete the current metadata
 * file (its keep set held the local spelling, the listing the original one). */
static void test_path_map_table_named_by_local_copy(void **state)
{
    (void)state;
    const char *from = "data/iceberg/generated_spec2_0_001/pyspark_iceberg_table";
    char *tmp = icmt_mkdtemp();
    char *table = icmt_sprintf("%s/t", tmp);
    char *cmd = icmt_sprintf("cp -r '%s/duckdb-iceberg/%s' '%s' && chmod -R u+w '%s' && "
                             "find '%s' -exec touch -d '10 days ago' {} +",
                             icmt_fixtures_dir(), from, table, table, table);
    assert_int_equal(system(cmd), 0);
    char *map = icmt_sprintf("%s=%s", from, table);

    const char *expire[] = {"--json", "--path-map", map, "expire-snapshots", table,
                            "--retain-last", "2", "--older-than", "0m", NULL};
    cli_result r = run_cli(expire);
    if (r.exit_code != 0)
        show("expire-snapshots", &r);
    assert_int_equal(r.exit_code, 0);
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    assert_non_null(doc);
    const char *committed = json_string_value(json_object_get(doc, "metadata_location"));
    assert_non_null(committed);
    char *want = icmt_sprintf("%s/metadata/v10.metadata.json", from);
    assert_string_equal(committed, want);
    json_decref(doc);
    cli_result_free(&r);

    /* every metadata-log entry of the new metadata names the original location */
    char *v10 = icmt_sprintf("%s/metadata/v10.metadata.json", table);
    json_t *md = json_load_file(v10, 0, &jerr);
    assert_non_null(md);
    size_t i;
    json_t *e;
    json_t *log = json_object_get(md, "metadata-log");
    assert_true(json_array_size(log) >= 9);
    json_array_foreach(log, i, e) {
        const char *f = json_string_value(json_object_get(e, "metadata-file"));
        assert_non_null(f);
        assert_int_equal(strncmp(f, from, strlen(from)), 0);
    }
    json_decref(md);

    /* the sweep finds nothing to delete: the current metadata file and the log are referenced */
    const char *sweep[] = {"--json", "--path-map", map, "remove-orphan-files", table,
                           "--older-than", "0m", "--force", NULL};
    r = run_cli(sweep);
    if (r.exit_code != 0)
        show("remove-orphan-files", &r);
    assert_int_equal(r.exit_code, 0);
    doc = json_loads(r.out, 0, &jerr);
    assert_non_null(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "orphans")), 0);
    json_decref(doc);
    cli_result_free(&r);
    assert_true(icmt_file_exists(v10));
    char *hint = icmt_sprintf("%s/metadata/version-hint.text", table);
    assert_true(icmt_file_exists(hint));

    icmt_rmtree(tmp);
    free(hint);
    free(v10);
    free(want);
    free(map);
    free(cmd);
    free(table);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_missing_table),
        cmocka_unit_test(test_catalog_name_needs_configuration),
        cmocka_unit_test(test_invalid_metadata),
        cmocka_unit_test(test_fixture_tables),
        cmocka_unit_test(test_fixture_files_all),
        cmocka_unit_test(test_snapshot_selection),
        cmocka_unit_test(test_table_by_original_location),
        cmocka_unit_test(test_multi_blob_deletion_vectors),
        cmocka_unit_test(test_inspect_human),
        cmocka_unit_test(test_snapshots_human),
        cmocka_unit_test(test_path_map_table_named_by_local_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
