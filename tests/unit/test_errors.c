/*
 * test_errors.c: the last-error model: codes are pinned, messages are one line, the thread-local
 * state is per thread, and allocation failure reports ICM_ENOMEM.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/util.h"

static void test_codes_are_pinned(void **state)
{
    (void)state;
    assert_int_equal(ICM_ECOMMIT_FAILED, -11);
    assert_int_equal(ICM_ECOMMIT_UNKNOWN, -12);
    assert_int_equal(ICM_ENOTFOUND, -2);
    assert_string_equal(icm_error_code_name(ICM_ECOMMIT_UNKNOWN), "ICM_ECOMMIT_UNKNOWN");
    assert_string_equal(icm_error_code_name(12345), "ICM_UNKNOWN");
}

static void test_set_and_format(void **state)
{
    (void)state;
    int rc = icm__error_set(ICM_ERRCLASS_JSON, ICM_EINVALID, "/t/metadata/v1.metadata.json",
                            "field 'snapshots'\nis not an array");
    assert_int_equal(rc, ICM_EINVALID);
    const icm_error *e = icm_error_last();
    assert_int_equal(e->code, ICM_EINVALID);
    assert_int_equal(e->klass, ICM_ERRCLASS_JSON);
    assert_null(strchr(e->message, '\n'));
    char buf[256];
    icm_error_format(buf, sizeof buf, e);
    /* control characters are escaped as text (icm_escape_text), so the line stays one line */
    assert_string_equal(buf, "/t/metadata/v1.metadata.json: field 'snapshots'\\nis not an array");
    icm_error_clear();
    assert_int_equal(icm_error_last()->code, 0);
    assert_string_equal(icm_error_last()->message, "");
}

static void *other_thread(void *arg)
{
    (void)arg;
    /* a fresh thread starts with no error */
    return (void *)(intptr_t)icm_error_last()->code;
}

static void test_thread_local(void **state)
{
    (void)state;
    icm__error_set(ICM_ERRCLASS_IO, ICM_EIO, "x", "boom");
    pthread_t t;
    void *res;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, &res);
    assert_int_equal((intptr_t)res, 0);
    assert_int_equal(icm_error_last()->code, ICM_EIO);
}

static void *fail_alloc(size_t n)
{
    (void)n;
    return NULL;
}
static void *fail_realloc(void *p, size_t n)
{
    (void)p;
    (void)n;
    return NULL;
}

static void test_oom_reported(void **state)
{
    (void)state;
    icm_allocator a = {fail_alloc, fail_realloc, free};
    icm_allocator_set(&a);
    char *s = icm__strdup("hello");
    icm_allocator_set(NULL);
    assert_null(s);
    assert_int_equal(icm_error_last()->code, ICM_ENOMEM);
}

static void test_buf(void **state)
{
    (void)state;
    icm__buf b = ICM__BUF_INIT;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(icm__buf_printf(&b, "%d,", i), 0);
    assert_int_equal(strncmp(b.data, "0,1,2,", 6), 0);
    assert_int_equal(b.data[b.len], '\0');
    icm__buf_dispose(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_are_pinned), cmocka_unit_test(test_set_and_format),
        cmocka_unit_test(test_thread_local),     cmocka_unit_test(test_oom_reported),
        cmocka_unit_test(test_buf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
