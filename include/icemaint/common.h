/*
 * icemaint/common.h: export macros, version, allocator hooks (the JSON library's opt-in) and
 * library-owned memory.
 *
 * Every public header includes this one. It depends only on <stddef.h>, <stdint.h> and
 * <stdbool.h>. Conventions shared by all of libicemaint:
 *  - functions that can fail return int: 0 (ICM_OK) or a negative icm_error_code
 *    (icemaint/errors.h); details in icm_error_last();
 *  - objects written through `T **out` are new and belong to the caller (free with the type's
 *    _free(), which accepts NULL); `const` pointers returned by getters are borrowed from the
 *    parent object and live until it is freed or changed;
 *  - strings passed in are copied unless a function's doc says otherwise;
 *  - times are int64_t milliseconds since the Unix epoch, UTC (`_ms`); sizes are int64_t bytes
 *    (`_bytes`), as Iceberg's `long` fields;
 *  - a struct the caller allocates and the library fills (icm_file_info,
 *    icm_fileio_delete_result, icm_manifest_file as a writer's summary) starts with
 *    `size_t struct_size`, which the caller sets to sizeof the struct it was compiled with
 *    (the type's `_INIT` macro does). The library refuses a struct_size of 0, one too small
 *    to hold the first field after it, or one larger than its own (built against a newer
 *    header) with ICM_EINVALID before writing anything, and otherwise writes only the fields
 *    that lie wholly within struct_size bytes: a caller built against an older, smaller
 *    struct keeps working and nothing past its struct is touched. A struct the library hands
 *    to a callback has its struct_size set to the library's; read a field added later only
 *    when ICM_STRUCT_HAS says it is there (docs/API.md rule 3).
 */
#ifndef ICEMAINT_COMMON_H
#define ICEMAINT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define ICM_BEGIN_DECL extern "C" {
#define ICM_END_DECL }
#else
#define ICM_BEGIN_DECL
#define ICM_END_DECL
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ICM_EXTERN(type) extern __attribute__((visibility("default"))) type
#else
#define ICM_EXTERN(type) extern type
#endif

#define ICM_VERSION_MAJOR 0
#define ICM_VERSION_MINOR 1
#define ICM_VERSION_PATCH 0
#define ICM_VERSION_NUMBER (ICM_VERSION_MAJOR * 10000 + ICM_VERSION_MINOR * 100 + ICM_VERSION_PATCH)

ICM_BEGIN_DECL

/** Runtime version string of the library ("0.1.0"); static storage. */
ICM_EXTERN(const char *) icm_version(void);

/** Runtime ICM_VERSION_NUMBER of the library, to detect a header/library mismatch. */
ICM_EXTERN(int) icm_version_number(void);

/**
 * Allocator hooks. All library memory goes through them (the JSON library's internal
 * allocations only after icm_allocator_hook_json()), so tests can fail the Nth allocation and
 * check that every public call returns ICM_ENOMEM with nothing leaked. Install before any
 * other call; not thread-safe with concurrent library use. NULL restores malloc/realloc/free.
 * The hooks must be thread-safe: besides the calling thread, expiry and the orphan sweep
 * allocate on the helper thread that reads ahead for them (and deletes run on several).
 */
typedef struct icm_allocator {
    void *(*malloc_fn)(size_t size_bytes);
    void *(*realloc_fn)(void *ptr, size_t size_bytes);
    void (*free_fn)(void *ptr);
} icm_allocator;

ICM_EXTERN(void) icm_allocator_set(const icm_allocator *allocator);

/**
 * Opt in: route the allocations of the JSON library (jansson) through the hooks above too, so
 * that a failing hook also fails the library's JSON work (ICM_ENOMEM) and every byte it uses is
 * counted. Without this call libicemaint changes nothing outside itself: jansson keeps its
 * allocator (malloc/free by default, or whatever the application set) for its own objects,
 * and everything the library hands out still comes from the hooks above.
 *
 * PROCESS-WIDE: it calls jansson's json_set_alloc_funcs(), which applies to every user of
 * jansson in the process (the application and other libraries); do not call it when anything
 * else in the process sets jansson's allocator. Call it once, before any other library call and
 * while no other thread uses jansson (jansson must free each block with the allocator that
 * made it); later calls do nothing. The hooks forward to the allocator in force at each
 * allocation, so icm_allocator_set() may still be called afterwards (under its own rule).
 * Cannot fail.
 */
ICM_EXTERN(void) icm_allocator_hook_json(void);

/** Free memory the library handed out as a plain buffer or string (never use free()). NULL ok. */
ICM_EXTERN(void) icm_free(void *ptr);

/** Whether the struct at `ptr` (of type `type`, with a leading `size_t struct_size`) is large
 *  enough to hold `field`: how a caller reads a field added in a later version, and how the
 *  library decides which fields of a caller's struct it writes. */
#define ICM_STRUCT_HAS(ptr, type, field) \
    ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/** One key/value pair (catalog, table or FileIO properties). Strings are copied by every call
 *  that takes them. */
typedef struct icm_property {
    const char *key;
    const char *value;
} icm_property;

ICM_END_DECL

#endif /* ICEMAINT_COMMON_H */
