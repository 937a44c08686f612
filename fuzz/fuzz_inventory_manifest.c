/*
 * fuzz/fuzz_inventory_manifest.c: the S3 Inventory manifest.json parser (maint/inventory.h) on
 * arbitrary bytes.
 *
 * Whatever parses holds only what the format allows: both bucket names non-empty and without
 * `/` (an ARN prefix taken off), a positive creationTimestamp, a CSV report's Key column
 * inside its column count and every named column at a distinct position, each data file with
 * a key and an MD5 of 32 lower-case hex digits or none. What does not parse is ICM_EINVALID or
 * ICM_ENOMEM with nothing to free. Seeds: the checked-in corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "maint/inventory.h"

/* Inside directories of seeds, only these files (no fixture is an inventory manifest). */
const char *const icm_fuzz_seed_suffixes[] = {".inventory-manifest", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_columns(const icm__inventory_columns *c)
{
    const int cols[] = {c->bucket, c->key, c->size, c->last_modified, c->is_latest,
                        c->is_delete_marker};
    size_t n = sizeof cols / sizeof cols[0];
    if (c->key < 0)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (cols[i] >= (int)c->count)
            abort();
        for (size_t j = i + 1; j < n; j++)
            if (cols[i] >= 0 && cols[i] == cols[j])
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__inventory_manifest m;
    int rc = icm__inventory_manifest_parse(&m, "fuzz", (const char *)data, size);
    if (rc != 0) {
        if ((rc != ICM_EINVALID && rc != ICM_ENOMEM) || m.files != NULL ||
            m.source_bucket != NULL || m.destination_bucket != NULL)
            abort();
        return 0;
    }
    if (m.source_bucket[0] == '\0' || m.destination_bucket[0] == '\0' ||
        strchr(m.source_bucket, '/') != NULL || strchr(m.destination_bucket, '/') != NULL ||
        m.creation_ms <= 0)
        abort();
    if (m.format == ICM__INVENTORY_CSV)
        check_columns(&m.columns);
    for (size_t i = 0; i < m.n_files; i++) {
        const icm__inventory_data_file *f = &m.files[i];
        if (f->key == NULL || f->key[0] == '\0' || f->size_bytes < -1)
            abort();
        size_t n = strlen(f->md5);
        if (n != 0 && n != 32)
            abort();
        for (size_t k = 0; k < n; k++)
            if (!((f->md5[k] >= '0' && f->md5[k] <= '9') || (f->md5[k] >= 'a' && f->md5[k] <= 'f')))
                abort();
    }
    icm__inventory_manifest_clear(&m);
    return 0;
}
