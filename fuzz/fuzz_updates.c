/*
 * fuzz/fuzz_updates.c: a commit request's wire form (icemaint/update.h) on arbitrary bytes.
 *
 * Whatever parses must serialise, and the text must parse again and serialise the same: the
 * writer never produces what the reader refuses. Its requirements are then checked and its
 * updates applied to a small base table (three snapshots, a branch, a tag, statistics): the
 * check returns 0 or ICM_ECOMMIT_FAILED; apply returns 0 or a refusal (ICM_EINVALID,
 * ICM_EREFUSED, ICM_ENOMEM), never crashes, never changes the base, and what it returns is
 * valid metadata that serialises and parses again. Seeds: the checked-in corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "icemaint/metadata.h"
#include "icemaint/update.h"

static const char BASE[] =
    "{\"format-version\":2,\"table-uuid\":\"9a1c3f7e-2b4d-4e6f-8a0b-1c2d3e4f5a6b\","
    "\"location\":\"/t\",\"last-sequence-number\":3,\"last-updated-ms\":1700000003000,"
    "\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\","
    "\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"x\",\"required\":false,"
    "\"type\":\"long\"}]},{\"type\":\"struct\",\"schema-id\":1,\"fields\":[]}],"
    "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]},"
    "{\"spec-id\":1,\"fields\":[]}],\"last-partition-id\":999,\"default-sort-order-id\":0,"
    "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{\"a\":\"1\"},"
    "\"current-snapshot-id\":3,\"refs\":{\"main\":{\"snapshot-id\":3,\"type\":\"branch\"},"
    "\"b\":{\"snapshot-id\":2,\"type\":\"branch\"},\"t\":{\"snapshot-id\":1,\"type\":\"tag\"}},"
    "\"snapshots\":[{\"snapshot-id\":1,\"sequence-number\":1,\"timestamp-ms\":1700000001000,"
    "\"manifest-list\":\"/t/m1.avro\",\"summary\":{\"operation\":\"append\"},\"schema-id\":0},"
    "{\"snapshot-id\":2,\"parent-snapshot-id\":1,\"sequence-number\":2,"
    "\"timestamp-ms\":1700000002000,\"manifest-list\":\"/t/m2.avro\","
    "\"summary\":{\"operation\":\"append\"},\"schema-id\":0},{\"snapshot-id\":3,"
    "\"parent-snapshot-id\":2,\"sequence-number\":3,\"timestamp-ms\":1700000003000,"
    "\"manifest-list\":\"/t/m3.avro\",\"summary\":{\"operation\":\"append\"},\"schema-id\":0}],"
    "\"snapshot-log\":[{\"timestamp-ms\":1700000001000,\"snapshot-id\":1},"
    "{\"timestamp-ms\":1700000002000,\"snapshot-id\":2},"
    "{\"timestamp-ms\":1700000003000,\"snapshot-id\":3}],\"metadata-log\":[],"
    "\"statistics\":[{\"snapshot-id\":1,\"statistics-path\":\"/t/s1.stats\","
    "\"file-size-in-bytes\":1,\"file-footer-size-in-bytes\":1,\"blob-metadata\":[]}],"
    "\"x-unknown\":[1]}";

static char *text_of(const icm_table_metadata *md)
{
    char *out = NULL;
    if (icm_table_metadata_to_json(&out, NULL, md) != 0)
        abort();
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm_table_changes *c = NULL;
    if (icm_table_changes_from_json(&c, (const char *)data, size) != 0) {
        if (c != NULL)
            abort();
        return 0;
    }
    char *once = NULL, *twice = NULL;
    size_t n1 = 0, n2 = 0;
    icm_table_changes *again = NULL;
    if (icm_table_changes_to_json(&once, &n1, c) != 0 ||
        icm_table_changes_from_json(&again, once, n1) != 0 ||
        icm_table_changes_to_json(&twice, &n2, again) != 0 || n1 != n2 ||
        memcmp(once, twice, n1) != 0)
        abort();
    icm_table_metadata *base = NULL;
    if (icm_table_metadata_parse(&base, BASE, sizeof BASE - 1, "base.metadata.json") != 0)
        abort();
    char *before = text_of(base);
    int rc = icm_table_changes_check(c, base);
    if (rc != 0 && rc != ICM_ECOMMIT_FAILED)
        abort();
    icm_table_metadata *md = NULL;
    rc = icm_table_changes_apply(&md, c, base);
    if (rc != 0 && (md != NULL || (rc != ICM_EINVALID && rc != ICM_EREFUSED &&
                                   rc != ICM_ENOMEM && rc != ICM_EUNSUPPORTED)))
        abort();
    char *after = text_of(base);
    if (strcmp(before, after) != 0)
        abort();
    if (md != NULL) {
        char *text = text_of(md);
        icm_table_metadata *back = NULL;
        if (icm_table_metadata_parse(&back, text, strlen(text), NULL) != 0)
            abort();
        icm_table_metadata_free(back);
        icm_free(text);
    }
    icm_table_metadata_free(md);
    icm_free(before);
    icm_free(after);
    icm_table_metadata_free(base);
    icm_free(once);
    icm_free(twice);
    icm_table_changes_free(again);
    icm_table_changes_free(c);
    return 0;
}
