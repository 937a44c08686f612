/*
 * tests/unit/testutil.h: helpers for the cmocka unit tests: fixture paths, temp directories,
 * file helpers, and an assertion that prints the library's last error.
 */
#ifndef ICM_TESTUTIL_H
#define ICM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "icemaint/testing/fileio.h" /* in-memory and fault-injecting back ends */

/* Directory of ../shared/fixtures (ICM_FIXTURES_DIR env overrides the configured path). */
const char *icmt_fixtures_dir(void);
/* A test that cannot run says so, never passes silently. icmt_skip_because(fmt, ...) prints why
 * and skips the test, except under CI (env CI set), where everything a test needs is part of
 * the setup: there it fails with the reason. icmt_skip_here(fmt, ...) prints why and skips also
 * under CI (the test's premise does not hold on this build or host; the caller decides about
 * CI itself). icmt_need_fixture(rel) is icmt_skip_because when `rel` (below
 * icmt_fixtures_dir()) does not exist. An executable in which a test was skipped this way and
 * none failed exits 77, which ctest reports as "skipped" (SKIP_RETURN_CODE, tests/CMakeLists.txt)
 * rather than "passed". */
#define icmt_skip_because(...)                                                                 \
    do {                                                                                       \
        icmt__cannot_run(__FILE__, __LINE__, true, __VA_ARGS__);                               \
        skip();                                                                                \
    } while (0)
#define icmt_skip_here(...)                                                                    \
    do {                                                                                       \
        icmt__cannot_run(__FILE__, __LINE__, false, __VA_ARGS__);                              \
        skip();                                                                                \
    } while (0)
#define icmt_need_fixture(rel)                                                                 \
    do {                                                                                       \
        if (!icmt_fixture_exists(rel))                                                         \
            icmt_skip_because("the fixture %s/%s is missing", icmt_fixtures_dir(), (rel));     \
    } while (0)
bool icmt_fixture_exists(const char *rel);
void icmt__cannot_run(const char *file, int line, bool fail_under_ci, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The exit code of a test executable: cmocka's (the number of failed tests), or 77 when none
 * failed and one was skipped through icmt_skip_because / icmt_skip_here. */
int icmt__exit_code(int failed);
#define ICMT_SKIPPED_EXIT 77
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group_tests, group_setup, group_teardown)                        \
    icmt__exit_code(_cmocka_run_group_tests(#group_tests, group_tests,                          \
                                            sizeof(group_tests) / sizeof((group_tests)[0]),     \
                                            group_setup, group_teardown))
/* Path of the built CLI binary. */
const char *icmt_cli_path(void);
/* New empty temp directory (malloc'd path); removed by icmt_rmtree. */
char *icmt_mkdtemp(void);
/* rm -rf */
void icmt_rmtree(const char *path);
/* Write/read whole files with plain libc (not through the library). */
void icmt_write_file(const char *path, const void *data, size_t len);
char *icmt_read_file(const char *path, size_t *len); /* malloc'd; NULL if missing */
/* Below the folder `dir` (a test's temp folder); each aborts the test on failure:
 * icmt_in: "dir/rel" (malloc'd); icmt_mkdir_in: a folder; icmt_file_in: a file holding "x";
 * icmt_symlink_in: a symbolic link at rel whose text is `target` as given (a relative target
 * stays relative). */
char *icmt_in(const char *dir, const char *rel);
void icmt_mkdir_in(const char *dir, const char *rel);
void icmt_file_in(const char *dir, const char *rel);
void icmt_symlink_in(const char *dir, const char *target, const char *rel);
int icmt_file_exists(const char *path);
/* Path of libicemaint.a (malloc'd): the test binary lives in <build>/tests/. */
char *icmt_library_archive(void);
/* Whether the archive member whose name contains `member` (matched at the start of the member
 * name) has an undefined reference to `sym` (nm -A); *seen is set when the member appears at
 * all. The dry-run designs use it: planning code must not reference a delete. */
bool icmt_archive_member_references(const char *archive, const char *member, const char *sym,
                                    bool *seen);
/* malloc'd printf */
char *icmt_sprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `text` as a JSON document (new; json_decref); fails the test, showing the text, if it is not
 * one. */
json_t *icmt_json_parse(const char *text);

/* A Puffin file (Iceberg puffin-spec.md): magic, the blobs' bytes in order, and a footer
 * listing each at the offset it was laid at, as a deletion vector's blob (type
 * deletion-vector-v1, `referenced-data-file` when not NULL, `cardinality` when >= 0). New
 * (free); *len its size. */
typedef struct icmt_puffin_blob {
    const char *bytes;
    size_t len;
    const char *referenced_data_file;
    long long cardinality;
} icmt_puffin_blob;
char *icmt_puffin(const icmt_puffin_blob *blobs, size_t n, size_t *len);

/* A shell command line's exit code and captured output (malloc'd). */
typedef struct icmt_run {
    int code; /* -1 when killed by a signal */
    char *out;
    char *err;
} icmt_run;
/* Run `cmdline` with /bin/sh, stdout and stderr captured through files in `dir`. */
icmt_run icmt_shell(const char *dir, const char *cmdline);
void icmt_run_free(icmt_run *r);

/* Allocation failure injection through icm_allocator_set. Thread-safe (the library allocates
 * on its helper threads too): allocations are counted with an atomic counter. Arm installs the
 * hooks, counting from 0; the allocation numbered `fail_at` (malloc or realloc) fails, once
 * (fail_at < 0: none). Disarm restores the default allocator and returns how many allocations
 * were counted. Which allocation gets which number is the order they happen in, which may vary
 * between runs once helper threads allocate. */
void icmt_nomem_arm(long fail_at);
long icmt_nomem_disarm(void);

/* icm__fileio_list_ahead_batches (io/list_ahead.h) handing the files to `cb` one by one, as
 * icm_fileio_list_flags does: what the listing-ahead tests compare. */
int icmt_list_ahead(icm_fileio *io, const char *prefix, unsigned flags, icm_list_cb cb,
                    void *payload);

/* Assert rc == 0, printing the last error on failure. */
#define icmt_ok(expr)                                                                       \
    do {                                                                                    \
        int icmt_rc_ = (expr);                                                              \
        if (icmt_rc_ != 0) {                                                                \
            const icm_error *e_ = icm_error_last();                                         \
            print_error("%s failed: %d %s: %s: %s\n", #expr, icmt_rc_,                      \
                        icm_error_code_name(icmt_rc_), e_->location, e_->message);          \
            fail();                                                                         \
        }                                                                                   \
    } while (0)

#endif
