/*
 * api/options_init.c: the icm_<thing>_options_init() functions of the public options structs
 * (docs/API.md, rule 2): each sets a struct to the defaults of the version the caller was
 * written against, the same values as its ICM_<THING>_OPTIONS_INIT macro, and refuses a
 * version this library does not know. For a struct that grew (expiry's, the sweep's), an older
 * version's init writes only the fields that version has: the caller's struct is that size.
 * The library checks `version` again wherever a struct is taken, so a struct filled by hand
 * with a wrong version is refused there too.
 *
 * Together in one file, compiled in every configuration (the catalog configuration's options
 * exist without YAML support too: reading a configuration then refuses).
 */
#include <stddef.h>
#include <string.h>

#include "icemaint/catalog.h"
#include "icemaint/check.h"
#include "icemaint/expire.h"
#include "icemaint/maint.h"
#include "icemaint/manifest.h"
#include "icemaint/orphans.h"
#include "util/util.h"

static int unknown_version(const char *what, const void *opts, unsigned version,
                           unsigned newest)
{
    if (opts == NULL)
        return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL, "%s: opts is NULL", what);
    return icm__error_set(ICM_ERRCLASS_NONE, ICM_EINVALID, NULL,
                          "%s: version %u is not one this library knows (1 to %u)", what,
                          version, newest);
}

int icm_expire_decide_options_init(icm_expire_decide_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_EXPIRE_DECIDE_OPTIONS_VERSION)
        return unknown_version("icm_expire_decide_options_init", opts, version,
                               ICM_EXPIRE_DECIDE_OPTIONS_VERSION);
    *opts = (icm_expire_decide_options)ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    opts->version = version;
    return 0;
}

int icm_expire_options_init(icm_expire_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_EXPIRE_OPTIONS_VERSION)
        return unknown_version("icm_expire_options_init", opts, version,
                               ICM_EXPIRE_OPTIONS_VERSION);
    icm_expire_options full = ICM_EXPIRE_OPTIONS_INIT;
    full.version = version;
    /* A caller of an older version has an older, shorter struct: write only its fields. */
    memcpy(opts, &full,
           version >= 3   ? sizeof full
           : version == 2 ? offsetof(icm_expire_options, no_verify)
                          : offsetof(icm_expire_options, on_delete));
    return 0;
}

int icm_orphan_options_init(icm_orphan_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_ORPHAN_OPTIONS_VERSION)
        return unknown_version("icm_orphan_options_init", opts, version,
                               ICM_ORPHAN_OPTIONS_VERSION);
    icm_orphan_options full = ICM_ORPHAN_OPTIONS_INIT;
    full.version = version;
    /* A caller of an older version has an older, shorter struct: write only its fields. */
    memcpy(opts, &full,
           version >= 5   ? sizeof full
           : version == 4 ? offsetof(icm_orphan_options, inventory)
           : version == 3 ? offsetof(icm_orphan_options, limits)
           : version == 2 ? offsetof(icm_orphan_options, no_verify)
                          : offsetof(icm_orphan_options, on_delete));
    return 0;
}

int icm_check_options_init(icm_check_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_CHECK_OPTIONS_VERSION)
        return unknown_version("icm_check_options_init", opts, version,
                               ICM_CHECK_OPTIONS_VERSION);
    *opts = (icm_check_options)ICM_CHECK_OPTIONS_INIT;
    opts->version = version;
    return 0;
}

int icm_lease_options_init(icm_lease_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_LEASE_OPTIONS_VERSION)
        return unknown_version("icm_lease_options_init", opts, version,
                               ICM_LEASE_OPTIONS_VERSION);
    *opts = (icm_lease_options)ICM_LEASE_OPTIONS_INIT;
    opts->version = version;
    return 0;
}

int icm_create_table_options_init(icm_create_table_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_CREATE_TABLE_OPTIONS_VERSION)
        return unknown_version("icm_create_table_options_init", opts, version,
                               ICM_CREATE_TABLE_OPTIONS_VERSION);
    *opts = (icm_create_table_options)ICM_CREATE_TABLE_OPTIONS_INIT;
    opts->version = version;
    return 0;
}

int icm_catalog_config_options_init(icm_catalog_config_options *opts, unsigned version)
{
    if (opts == NULL || version < 1 || version > ICM_CATALOG_CONFIG_OPTIONS_VERSION)
        return unknown_version("icm_catalog_config_options_init", opts, version,
                               ICM_CATALOG_CONFIG_OPTIONS_VERSION);
    *opts = (icm_catalog_config_options)ICM_CATALOG_CONFIG_OPTIONS_INIT;
    opts->version = (int)version;
    return 0;
}

/* The manifest structs have one version each; their defaults are the version and zeros (the
 * writers' format_version and JSON fields must be set by the caller). */
#define SIMPLE_INIT(fn, type, newest, init)                                                  \
    int fn(type *opts, unsigned version)                                                     \
    {                                                                                        \
        if (opts == NULL || version < 1 || version > (newest))                               \
            return unknown_version(#fn, opts, version, (newest));                            \
        *opts = (type)init;                                                                  \
        opts->version = version;                                                             \
        return 0;                                                                            \
    }

SIMPLE_INIT(icm_manifest_list_read_options_init, icm_manifest_list_read_options,
            ICM_MANIFEST_LIST_READ_OPTIONS_VERSION, ICM_MANIFEST_LIST_READ_OPTIONS_INIT)
SIMPLE_INIT(icm_manifest_read_options_init, icm_manifest_read_options,
            ICM_MANIFEST_READ_OPTIONS_VERSION, ICM_MANIFEST_READ_OPTIONS_INIT)
SIMPLE_INIT(icm_manifest_writer_options_init, icm_manifest_writer_options,
            ICM_MANIFEST_WRITER_OPTIONS_VERSION, ICM_MANIFEST_WRITER_OPTIONS_INIT)
SIMPLE_INIT(icm_manifest_list_writer_options_init, icm_manifest_list_writer_options,
            ICM_MANIFEST_LIST_WRITER_OPTIONS_VERSION, ICM_MANIFEST_LIST_WRITER_OPTIONS_INIT)
