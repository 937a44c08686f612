/*
 * fuzz/fuzz_metadata.c: table metadata parsing on arbitrary bytes (plain, gzip or zstd).
 *
 * Whatever parses must serialise, and the serialised text must parse again into an equal
 * document with the same snapshot count: the writer may never produce what the reader refuses.
 * Seeds: the checked-in corpus plus every fixture named *.metadata.json or *.json.
 */
#include <stdint.h>
#include <stdlib.h>

#include "icemaint/errors.h"
#include "icemaint/metadata.h"
#include "spec/metadata_internal.h"

const char *const icm_fuzz_seed_suffixes[] = {".metadata.json", ".json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm_table_metadata *md = NULL;
    if (icm_table_metadata_parse(&md, (const char *)data, size, "fuzz") != 0)
        return 0;
    char *text = NULL;
    size_t len = 0;
    if (icm_table_metadata_to_json(md, &text, &len) != 0)
        abort(); /* only ICM_ENOMEM could fail here, and the fuzzer does not inject it */
    icm_table_metadata *again = NULL;
    if (icm_table_metadata_parse(&again, text, len, "fuzz-reparse") != 0)
        abort();
    if (!json_equal(icm__table_metadata_json(md), icm__table_metadata_json(again)) ||
        icm_table_metadata_snapshot_count(md) != icm_table_metadata_snapshot_count(again) ||
        icm_table_metadata_ref_count(md) != icm_table_metadata_ref_count(again))
        abort();
    icm_free(text);
    icm_table_metadata_free(again);
    icm_table_metadata_free(md);
    return 0;
}
