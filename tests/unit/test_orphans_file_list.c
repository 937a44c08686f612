/*
 * tests/unit/test_orphans_file_list.c: the sweep's file-list reader at its seams. The list is
 * read in 1 MiB blocks, split into lines in place and classified 4,096 lines at a time
 * (orphans_listing.c), so these lists are built to cross every seam: a line that straddles a
 * block's end, a line longer than a whole block, more lines than a batch, a last line without
 * its newline, CRLF endings. Proven: the orphans are exactly the unreferenced old files the
 * list names, every referenced file counts as listed, lines outside the table are counted as
 * such, and the real sweep deletes exactly the orphans. A malformed line far past the first
 * batch, or a NUL byte inside a path (the path would end there and name another file), fails
 * the sweep naming the line, and nothing at all is deleted.
 */
#include "history.h"
#include "icemaint/sys/fileio.h"
#include "test_orphans_common.h"
#include "util/util.h"

#define LOC "/w/t"
#define BLOCK ((size_t)1 << 20)

typedef struct env {
    icm_fileio *mem;
    hist *h;
    int64_t now, old;
    char *dir, *list;
} env;

static void env_init(env *e)
{
    e->now = icm__now_ms();
    e->old = e->now - 10 * DAY_MS;
    icmt_ok(icm_fileio_mem_new(&e->mem));
    icm_fileio_mem_set_time(e->mem, e->old);
    e->h = hist_new(e->mem, LOC, 2, false, e->now - 20 * DAY_MS);
    icm_fileio_mem_set_time(e->mem, e->old);
    hist_append(e->h, "main", "A", "B", NULL);
    e->dir = icmt_mkdtemp();
    e->list = icmt_sprintf("%s/inventory.tsv", e->dir);
}

static void env_free(env *e)
{
    icmt_rmtree(e->dir);
    free(e->dir);
    free(e->list);
    hist_free(e->h);
    icm_fileio_free(e->mem);
}

static int sweep(env *e, bool dry_run, icm_orphan_result **out)
{
    icm_orphan_options o = ICM_ORPHAN_OPTIONS_INIT;
    o.now_ms = e->now;
    o.has_older_than = true;
    o.older_than_ms = e->now;
    o.force = true;
    o.dry_run = dry_run;
    o.file_list = e->list;
    icm_table *t = hist_open_table(e->h);
    int rc = icm_orphan_sweep(out, t, &o);
    icm_table_free(t);
    return rc;
}

static bool message_has(const char *needle)
{
    const char *m = icm_error_last()->message;
    if (strstr(m, needle) == NULL) {
        print_error("message '%s' lacks '%s'\n", m, needle);
        return false;
    }
    return true;
}

/* One line for a file of the store, with its real size and mtime. */
static long put_file(FILE *f, env *e, const char *path, const char *eol)
{
    icm_file_info info = ICM_FILE_INFO_INIT;
    icmt_ok(icm_fileio_stat(&info, e->mem, path));
    return fprintf(f, "%s\t%lld\t%lld%s", path, (long long)info.size_bytes,
                   (long long)info.mtime_ms, eol);
}

/* A line outside the table, of about `len` bytes. */
static long put_outside(FILE *f, size_t i, size_t len)
{
    long n = fprintf(f, "/elsewhere/%08zu-", i);
    for (size_t k = 20; k < len; k++, n++)
        fputc('x', f);
    return n + fprintf(f, "\t1\t0\n");
}

static void test_block_and_batch_seams(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    plant(e.mem, LOC "/data/orphan-1.parquet", e.old);
    plant(e.mem, LOC "/data/orphan-2.parquet", e.old);
    plant(e.mem, LOC "/data/orphan-3.parquet", e.old);
    plant(e.mem, LOC "/data/orphan-last.parquet", e.old);
    strv before = list_all(e.mem, LOC);
    FILE *f = fopen(e.list, "w");
    assert_non_null(f);

    /* The table's files (orphans among them) are spread over the list; filler lines outside
     * the table carry it past two block ends, and orphan-2's line is placed across the first. */
    long at = 0;
    size_t outside = 0, next_table_file = 0;
    bool straddled = false;
    while (at < (long)(2 * BLOCK + BLOCK / 2)) {
        if (!straddled && at > (long)BLOCK - 200) {
            /* pad to 20 bytes before the block's end, then the line that crosses it */
            if (at < (long)BLOCK - 20)
                at += put_outside(f, outside++, (size_t)((long)BLOCK - 20 - at) - 5);
            assert_true(at <= (long)BLOCK - 10);
            at += put_file(f, &e, LOC "/data/orphan-2.parquet", "\n");
            assert_true(at > (long)BLOCK);
            straddled = true;
        } else if (outside % 997 == 0 && next_table_file < before.n) {
            const char *p = before.v[next_table_file++];
            if (strstr(p, "orphan-2") == NULL && strstr(p, "orphan-last") == NULL)
                at += put_file(f, &e, p, next_table_file % 2 ? "\r\n" : "\n");
            at += put_outside(f, outside++, 60);
        } else {
            at += put_outside(f, outside++, 60);
        }
    }
    /* one line longer than a block (outside the table), then the rest of the table */
    at += put_outside(f, outside++, BLOCK + BLOCK / 3);
    while (next_table_file < before.n) {
        const char *p = before.v[next_table_file++];
        if (strstr(p, "orphan-2") == NULL && strstr(p, "orphan-last") == NULL)
            put_file(f, &e, p, "\n");
    }
    put_file(f, &e, LOC "/data/orphan-last.parquet", ""); /* no newline at the end */
    fclose(f);
    assert_true(outside > 2 * 4096); /* more lines than two batches */

    icm_orphan_result *r = NULL;
    icmt_ok(sweep(&e, true, &r));
    const char *gone[] = {LOC "/data/orphan-1.parquet", LOC "/data/orphan-2.parquet",
                          LOC "/data/orphan-3.parquet", LOC "/data/orphan-last.parquet", NULL};
    assert_orphans(r, gone);
    assert_int_equal(r->listed, before.n);
    assert_int_equal(r->warning_count, 1);
    char *want = icmt_sprintf(LOC ": %zu lines of the file list name no file below", outside);
    assert_non_null(strstr(r->warnings[0], want));
    free(want);
    icm_orphan_result_free(r);

    icmt_ok(sweep(&e, false, &r));
    assert_orphans(r, gone);
    assert_int_equal(r->deleted, 4);
    icm_orphan_result_free(r);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, gone);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

static void test_bad_line_deletes_nothing(void **state)
{
    (void)state;
    env e;
    env_init(&e);
    plant(e.mem, LOC "/data/orphan.parquet", e.old);
    strv before = list_all(e.mem, LOC);
    const char *none[] = {NULL};
    icm_orphan_result *r = NULL;

    /* every file of the table, 5,000 lines outside it, then a line without its tabs */
    FILE *f = fopen(e.list, "w");
    for (size_t i = 0; i < before.n; i++)
        put_file(f, &e, before.v[i], "\n");
    for (size_t i = 0; i < 5000; i++)
        put_outside(f, i, 40);
    fprintf(f, LOC "/data/orphan.parquet 5 0\n");
    fclose(f);
    assert_int_equal(sweep(&e, false, &r), ICM_EINVALID);
    char *want = icmt_sprintf("line %zu:", before.n + 5001);
    assert_true(message_has(want));
    free(want);
    strv after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, none);
    strv_free(&after);

    /* a NUL byte in a path: "orphan.parquet\0.keep" must not become orphan.parquet */
    f = fopen(e.list, "w");
    for (size_t i = 0; i < before.n; i++)
        if (strstr(before.v[i], "orphan") == NULL)
            put_file(f, &e, before.v[i], "\n");
    static const char nul_line[] = LOC "/data/orphan.parquet\0.keep\t5\t0\n";
    fwrite(nul_line, 1, sizeof nul_line - 1, f);
    fclose(f);
    assert_int_equal(sweep(&e, false, &r), ICM_EINVALID);
    want = icmt_sprintf("line %zu:", before.n);
    assert_true(message_has(want));
    free(want);
    after = list_all(e.mem, LOC);
    assert_survivors(&before, &after, none);
    strv_free(&after);
    strv_free(&before);
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_and_batch_seams),
        cmocka_unit_test(test_bad_line_deletes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
