/*
 * api/library_state.c: the public functions over state the library keeps for the process: the
 * thread's last error (include/icemaint/errors.h), the allocator hooks and, on request, the JSON
 * library's (include/icemaint/common.h).
 *
 * They live here, not in src/util, because src/util is also linked, as its own copy, into the
 * CLI, tests, bench and fuzzers (CMakeLists.txt, icm_util). A program that links util and the
 * shared library must read the error the library set and free what the library allocated with
 * the library's hooks: defining these in util would bind that program's calls to its own copy
 * of the state instead.
 */
#include "spec/metadata_internal.h"
#include "util/util.h"

const icm_error *icm_error_last(void)
{
    return icm__error_last();
}

void icm_error_clear(void)
{
    icm__error_clear();
}

void icm_allocator_set(const icm_allocator *allocator)
{
    icm__set_allocator(allocator);
}

void icm_allocator_hook_json(void)
{
    icm__json_hook_allocator();
}

void icm_free(void *ptr)
{
    icm__free(ptr);
}
