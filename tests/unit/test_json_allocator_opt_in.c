/*
 * test_json_allocator_opt_in.c: the library leaves the JSON library's (jansson's) process-wide
 * allocator alone unless the application asks (icm_allocator_hook_json, icemaint/common.h):
 * parsing, editing and serialising metadata keep jansson's functions as they were; after the
 * call jansson allocates through the library's hooks (a failing hook fails jansson too), and
 * the library's use of it (parse, edit, serialise: json_dumps text is copied into library
 * memory and freed with jansson's own function) works either way.
 * Its own executable: the opt-in cannot be undone within a process.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "icemaint/metadata.h"
#include "testutil.h"

static const char k_metadata[] =
    "{\"format-version\": 2, \"table-uuid\": \"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    " \"location\": \"/tmp/t\", \"last-sequence-number\": 0,"
    " \"last-updated-ms\": 1700000000000, \"last-column-id\": 1,"
    " \"current-schema-id\": 0, \"schemas\": [{\"type\": \"struct\", \"schema-id\": 0,"
    " \"fields\": [{\"id\": 1, \"name\": \"x\", \"required\": false, \"type\": \"long\"}]}],"
    " \"default-spec-id\": 0, \"partition-specs\": [{\"spec-id\": 0, \"fields\": []}],"
    " \"last-partition-id\": 999, \"default-sort-order-id\": 0,"
    " \"sort-orders\": [{\"order-id\": 0, \"fields\": []}]}";

static atomic_long g_allocs;

static void *counting_malloc(size_t n)
{
    atomic_fetch_add(&g_allocs, 1);
    return malloc(n);
}

static void *counting_realloc(void *p, size_t n)
{
    atomic_fetch_add(&g_allocs, 1);
    return realloc(p, n);
}

static void *failing_malloc(size_t n)
{
    (void)n;
    return NULL;
}

static void *failing_realloc(void *p, size_t n)
{
    (void)p;
    (void)n;
    return NULL;
}

/* Parse, edit and serialise metadata through the public API (every jansson use of a run). */
static int metadata_round_trip(void)
{
    icm_table_metadata *md = NULL;
    int rc = icm_table_metadata_parse(&md, k_metadata, sizeof k_metadata - 1, "opt-in");
    if (rc != 0)
        return rc;
    rc = icm_table_metadata_set_property(md, "k", "v");
    char *json = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = icm_table_metadata_to_json(&json, &len, md);
    if (rc == 0 && strstr(json, "\"k\":\"v\"") == NULL && strstr(json, "\"k\": \"v\"") == NULL)
        rc = ICM_ERROR;
    icm_free(json);
    icm_table_metadata_free(md);
    return rc;
}

static void test_jansson_allocator_untouched_without_opt_in_then_hooked(void **state)
{
    (void)state;
    json_malloc_t m = NULL;
    json_free_t f = NULL;
    json_get_alloc_funcs(&m, &f);
    assert_ptr_equal(m, malloc);
    assert_ptr_equal(f, free);

    /* Without the opt-in: the library's own work leaves jansson's functions as they were. */
    assert_int_equal(metadata_round_trip(), 0);
    json_get_alloc_funcs(&m, &f);
    assert_ptr_equal(m, malloc);
    assert_ptr_equal(f, free);

    /* A hook that fails every allocation still fails the library's own allocations. */
    const icm_allocator failing = {failing_malloc, failing_realloc, free};
    icm_allocator_set(&failing);
    int rc = metadata_round_trip();
    icm_allocator_set(NULL);
    assert_int_equal(rc, ICM_ENOMEM);

    /* Opt in: jansson now allocates through the hooks. */
    icm_allocator_hook_json();
    icm_allocator_hook_json(); /* idempotent */
    json_get_alloc_funcs(&m, &f);
    assert_ptr_not_equal(m, malloc);
    assert_ptr_not_equal(f, free);
    const icm_allocator counting = {counting_malloc, counting_realloc, free};
    atomic_store(&g_allocs, 0);
    icm_allocator_set(&counting);
    json_t *late = json_pack("{s:i}", "b", 2);
    long n = atomic_load(&g_allocs);
    icm_allocator_set(NULL);
    assert_non_null(late);
    assert_true(n > 0);
    json_decref(late);
    assert_int_equal(metadata_round_trip(), 0);

    /* A failing hook fails jansson's allocations too now. */
    icm_allocator_set(&failing);
    json_t *none = json_object();
    icm_allocator_set(NULL);
    assert_null(none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jansson_allocator_untouched_without_opt_in_then_hooked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
