/*
 * tests/unit/testutil.c: see testutil.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/list_ahead.h"
#include "testutil.h"
#include "icemaint/common.h"

const char *icmt_fixtures_dir(void)
{
    const char *env = getenv("ICM_FIXTURES_DIR");
    return env && *env ? env : ICM_FIXTURES_DIR;
}

bool icmt_fixture_exists(const char *rel)
{
    char *p = icmt_sprintf("%s/%s", icmt_fixtures_dir(), rel);
    struct stat st;
    bool ok = stat(p, &st) == 0;
    free(p);
    return ok;
}

static bool g_skipped;

void icmt__cannot_run(const char *file, int line, bool fail_under_ci, const char *fmt, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *ci = getenv("CI");
    if (fail_under_ci && ci != NULL && ci[0] != '\0') {
        print_error("%s:%d: cannot run, and CI is set: %s\n", file, line, why);
        _fail(file, line);
    }
    print_message("%s:%d: skipped: %s\n", file, line, why);
    g_skipped = true;
}

int icmt__exit_code(int failed)
{
    return failed == 0 && g_skipped ? ICMT_SKIPPED_EXIT : failed;
}

const char *icmt_cli_path(void)
{
    const char *env = getenv("ICM_CLI");
    return env && *env ? env : ICM_CLI_PATH;
}

char *icmt_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl = icmt_sprintf("%s/icmtest.XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpl) == NULL) {
        perror("mkdtemp");
        abort();
    }
    return tmpl;
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void icmt_rmtree(const char *path)
{
    if (path != NULL)
        nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

void icmt_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len) {
        perror(path);
        abort();
    }
    fclose(f);
}

char *icmt_in(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *path = malloc(n);
    if (path == NULL)
        abort();
    snprintf(path, n, "%s/%s", dir, rel);
    return path;
}

void icmt_mkdir_in(const char *dir, const char *rel)
{
    char *path = icmt_in(dir, rel);
    if (mkdir(path, 0755) != 0) {
        perror(path);
        abort();
    }
    free(path);
}

void icmt_file_in(const char *dir, const char *rel)
{
    char *path = icmt_in(dir, rel);
    icmt_write_file(path, "x", 1);
    free(path);
}

void icmt_symlink_in(const char *dir, const char *target, const char *rel)
{
    char *path = icmt_in(dir, rel);
    if (symlink(target, path) != 0) {
        perror(path);
        abort();
    }
    free(path);
}

char *icmt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int icmt_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

json_t *icmt_json_parse(const char *text)
{
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    if (doc == NULL)
        print_error("not JSON (%s): %s\n", e.text, text);
    assert_non_null(doc);
    return doc;
}

char *icmt_sprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        abort();
    va_end(ap);
    return s;
}

icmt_run icmt_shell(const char *dir, const char *cmdline)
{
    char *out = icmt_sprintf("%s/.out", dir), *err = icmt_sprintf("%s/.err", dir);
    char *cmd = icmt_sprintf("%s >'%s' 2>'%s' </dev/null", cmdline, out, err);
    int status = system(cmd);
    icmt_run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = icmt_read_file(out, NULL);
    r.err = icmt_read_file(err, NULL);
    if (r.out == NULL || r.err == NULL) {
        fprintf(stderr, "cannot read the output of: %s\n", cmdline);
        abort();
    }
    free(cmd);
    free(out);
    free(err);
    return r;
}

void icmt_run_free(icmt_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* ---- allocation failure injection ---- */

static atomic_long g_nomem_count;
static atomic_long g_nomem_fail_at = -1;

static int nomem_now(void)
{
    return atomic_fetch_add(&g_nomem_count, 1) == atomic_load(&g_nomem_fail_at);
}

static void *nomem_malloc(size_t n)
{
    return nomem_now() ? NULL : malloc(n);
}

static void *nomem_realloc(void *p, size_t n)
{
    return nomem_now() ? NULL : realloc(p, n);
}

void icmt_nomem_arm(long fail_at)
{
    static const icm_allocator hooks = {nomem_malloc, nomem_realloc, free};
    /* jansson's allocations fail too (the opt-in of common.h; idempotent). */
    icm_allocator_hook_json();
    atomic_store(&g_nomem_count, 0);
    atomic_store(&g_nomem_fail_at, fail_at);
    icm_allocator_set(&hooks);
}

long icmt_nomem_disarm(void)
{
    icm_allocator_set(NULL);
    atomic_store(&g_nomem_fail_at, -1);
    return atomic_load(&g_nomem_count);
}

/* ---- listing ahead, one file at a time ---- */

typedef struct per_file {
    icm_list_cb cb;
    void *payload;
} per_file;

static int each_file(const icm_file_info *files, size_t n, void *payload)
{
    const per_file *pf = payload;
    for (size_t i = 0; i < n; i++) {
        int rc = pf->cb(&files[i], pf->payload);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int icmt_list_ahead(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                    void *payload)
{
    per_file pf = {cb, payload};
    return icm__fileio_list_ahead_batches(io, prefix, flags, each_file, &pf);
}

char *icmt_library_archive(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    char *a = icmt_sprintf("%s/../libicemaint.a", dirname(exe));
    assert_true(icmt_file_exists(a));
    return a;
}

bool icmt_archive_member_references(const char *archive, const char *member, const char *sym,
                                    bool *seen)
{
    char *cmd = icmt_sprintf("nm -A '%s' 2>/dev/null", archive);
    FILE *p = popen(cmd, "r");
    free(cmd);
    assert_non_null(p);
    char line[1024];
    bool found = false;
    *seen = false;
    while (fgets(line, sizeof line, p) != NULL) {
        /* "libicemaint.a:orphans_plan.c.o:                 U icm_fileio_list_flags" */
        char *colon = strchr(line, ':');
        if (colon == NULL || strstr(colon, member) != colon + 1)
            continue;
        *seen = true;
        char *u = strstr(line, " U ");
        if (u == NULL)
            continue;
        char *name = u + 3;
        name[strcspn(name, "\r\n")] = '\0';
        found = found || strcmp(name, sym) == 0;
    }
    pclose(p);
    return found;
}

char *icmt_puffin(const icmt_puffin_blob *blobs, size_t n, size_t *len)
{
    size_t body = 4, json_cap = 64;
    for (size_t i = 0; i < n; i++) {
        body += blobs[i].len;
        json_cap += 256 + (blobs[i].referenced_data_file ? strlen(blobs[i].referenced_data_file)
                                                         : 0);
    }
    char *json = malloc(json_cap), *out = malloc(body + 4 + json_cap + 12);
    if (json == NULL || out == NULL)
        abort();
    size_t j = (size_t)snprintf(json, json_cap, "{\"blobs\":[");
    size_t at = 4;
    memcpy(out, "PFA1", 4);
    for (size_t i = 0; i < n; i++) {
        memcpy(out + at, blobs[i].bytes, blobs[i].len);
        j += (size_t)snprintf(json + j, json_cap - j,
                              "%s{\"type\":\"deletion-vector-v1\",\"fields\":[2147483645],"
                              "\"snapshot-id\":-1,\"sequence-number\":-1,\"offset\":%zu,"
                              "\"length\":%zu,\"properties\":{",
                              i ? "," : "", at, blobs[i].len);
        const char *sep = "";
        if (blobs[i].referenced_data_file != NULL) {
            j += (size_t)snprintf(json + j, json_cap - j, "\"referenced-data-file\":\"%s\"",
                                  blobs[i].referenced_data_file);
            sep = ",";
        }
        if (blobs[i].cardinality >= 0)
            j += (size_t)snprintf(json + j, json_cap - j, "%s\"cardinality\":\"%lld\"", sep,
                                  blobs[i].cardinality);
        j += (size_t)snprintf(json + j, json_cap - j, "}}");
        at += blobs[i].len;
    }
    j += (size_t)snprintf(json + j, json_cap - j, "],\"properties\":{\"created-by\":\"icmt\"}}");
    memcpy(out + at, "PFA1", 4);
    memcpy(out + at + 4, json, j);
    at += 4 + j;
    uint8_t tail[12] = {(uint8_t)j, (uint8_t)(j >> 8), (uint8_t)(j >> 16), (uint8_t)(j >> 24),
                        0, 0, 0, 0, 'P', 'F', 'A', '1'};
    memcpy(out + at, tail, sizeof tail);
    *len = at + sizeof tail;
    free(json);
    return out;
}
