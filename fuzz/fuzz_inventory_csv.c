/*
 * fuzz/fuzz_inventory_csv.c: the S3 Inventory CSV row parser (maint/inventory.h) on arbitrary
 * lines, under the schemas a report may have (current versions, all versions, the bare Key).
 *
 * Input: each line is one row. A row that parses gives a non-empty key without NUL bytes whose
 * length is key_len, a size and time that are -1 or not negative, and (with a Bucket column)
 * came from a row whose bucket is the source bucket; what does not parse is ICM_EINVALID with a
 * reason, or ICM_ENOMEM. The URL decoder alone: its output is never longer than its input.
 * Seeds: the checked-in corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "maint/inventory.h"

const char *const icm_fuzz_seed_suffixes[] = {".inventory-csv", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const schemas[] = {
    "Bucket, Key, Size, LastModifiedDate, ETag, StorageClass",
    "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate",
    "Key",
};

static void one_row(const icm__inventory_manifest *m, const char *line, size_t len,
                    icm__buf *key)
{
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return;
    memcpy(copy, line, len);
    copy[len] = '\0';
    icm__inventory_entry e;
    bool skip;
    const char *why = NULL;
    int rc = icm__inventory_csv_row(&e, &skip, m, copy, len, key, &why);
    if (rc == ICM_EINVALID && why == NULL)
        abort();
    if (rc != 0 && rc != ICM_EINVALID && rc != ICM_ENOMEM)
        abort();
    if (rc == 0 && (e.key == NULL || e.key_len == 0 || strlen(e.key) != e.key_len ||
                    e.size_bytes < -1 || e.mtime_ms < -1))
        abort();
    free(copy);
    icm__buf out = ICM__BUF_INIT;
    rc = icm__inventory_url_decode(&out, line, len);
    if (rc == 0 && out.len > len)
        abort();
    icm__buf_dispose(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__buf key = ICM__BUF_INIT;
    for (size_t s = 0; s < sizeof schemas / sizeof schemas[0]; s++) {
        icm__inventory_manifest m;
        memset(&m, 0, sizeof m);
        char json[512];
        int n = snprintf(json, sizeof json,
                         "{\"sourceBucket\":\"src-bucket\",\"destinationBucket\":\"d\","
                         "\"creationTimestamp\":\"1\",\"fileFormat\":\"CSV\","
                         "\"fileSchema\":\"%s\",\"files\":[]}", schemas[s]);
        if (icm__inventory_manifest_parse(&m, "fuzz", json, (size_t)n) != 0)
            abort();
        const char *p = (const char *)data, *end = p + size;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
            one_row(&m, p, len, &key);
            p += len + (nl != NULL);
        }
        icm__inventory_manifest_clear(&m);
    }
    icm__buf_dispose(&key);
    return 0;
}
