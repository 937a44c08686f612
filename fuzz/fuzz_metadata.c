/*
 * fuzz/fuzz_metadata.c: table metadata parsing on arbitrary bytes (plain, gzip or zstd).
 *
 * Whatever parses must serialise, and the serialised text must parse again into an equal
 * document with the same snapshot count: the writer may never produce what the reader refuses.
 * Whatever parses is then given to the expiry decision (src/maint/expire_decide.c: the
 * history.expire.* properties, ref ages, branch walks, the kept reasons) under a few option
 * sets: it returns 0 or a refusal (ICM_EINVALID, ICM_EREFUSED), never crashes, and a decision
 * covers every snapshot once, keeps the current one, and gives every kept snapshot at least one
 * reason. Seeds: the checked-in corpus plus every fixture named *.metadata.json or *.json.
 */
#include <stdint.h>
#include <stdlib.h>

#include "icemaint/errors.h"
#include "icemaint/expire.h"
#include "icemaint/metadata.h"
#include "spec/metadata_internal.h"

/* One decision's invariants (see the file comment). */
static void check_decision(const icm_table_metadata *md, const icm_expire_decide_options *o)
{
    icm_expire_decision *d = NULL;
    int rc = icm_expire_decide(&d, md, o);
    if (rc != 0) {
        if (d != NULL || (rc != ICM_EINVALID && rc != ICM_EREFUSED && rc != ICM_ENOMEM))
            abort();
        return;
    }
    if (d->expired_count + d->retained_count != icm_table_metadata_snapshot_count(md) ||
        (d->retained_count > 0 && d->kept == NULL))
        abort();
    int64_t current;
    bool has_current = icm_table_metadata_current_snapshot_id(&current, md);
    for (size_t i = 0; i < d->expired_count; i++)
        if (has_current && d->expired_ids[i] == current)
            abort();
    for (size_t i = 0; i < d->retained_count; i++) {
        const icm_expire_kept *k = &d->kept[i];
        if (k->snapshot_id != d->retained_ids[i] || k->reason_count == 0)
            abort();
        for (size_t r = 0; r < k->reason_count; r++)
            if ((unsigned)k->reasons[r].kind >= ICM_EXPIRE_KEEP_REASON_COUNT ||
                (k->reasons[r].kind == ICM_EXPIRE_KEEP_REF && k->reasons[r].ref == NULL))
                abort();
    }
    icm_expire_decision_free(d);
}

/* The decision at a fixed now: by the table's properties, by age with a minimum, and with the
 * widest options. */
static void check_decisions(const icm_table_metadata *md)
{
    icm_expire_decide_options o = ICM_EXPIRE_DECIDE_OPTIONS_INIT;
    o.now_ms = INT64_C(1800000000000);
    check_decision(md, &o);
    o.has_older_than = true;
    o.older_than_ms = o.now_ms;
    o.retain_last = 2;
    check_decision(md, &o);
    o.older_than_ms = INT64_MAX;
    o.retain_last = INT32_MAX;
    check_decision(md, &o);
}

const char *const icm_fuzz_seed_suffixes[] = {".metadata.json", ".json", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm_table_metadata *md = NULL;
    if (icm_table_metadata_parse(&md, (const char *)data, size, "fuzz") != 0)
        return 0;
    char *text = NULL;
    size_t len = 0;
    if (icm_table_metadata_to_json(&text, &len, md) != 0)
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
    check_decisions(md);
    icm_table_metadata_free(md);
    return 0;
}
