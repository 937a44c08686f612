/*
 * fuzz/fuzz_trash_journal.c: the trash journal reader (maint/trash_journal.c) on arbitrary
 * bytes.
 *
 * Whatever parses holds only what a record may: every string non-empty, NUL-free, and the
 * times and sizes in range (trashed_at_ms >= 0, size and mtime >= -1); no more records than
 * non-blank lines. What does not parse is ICM_EINVALID or ICM_ENOMEM, the records before the
 * bad line kept and freeable. Seeds: the checked-in corpus (journals the writer wrote, escapes
 * of bytes that are not UTF-8, broken lines).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "maint/trash.h"

const char *const icm_fuzz_seed_suffixes[] = {".jsonl", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_string(const char *s)
{
    if (s == NULL || s[0] == '\0')
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__trash_record *recs = NULL;
    size_t n = 0, cap = 0;
    int rc = icm__trash_journal_parse((const char *)data, size, "fuzz", &recs, &n, &cap);
    if (rc != 0 && rc != ICM_EINVALID && rc != ICM_ENOMEM)
        abort();
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (n > lines || n > cap)
        abort();
    for (size_t i = 0; i < n; i++) {
        const icm__trash_record *r = &recs[i];
        check_string(r->table_uuid);
        check_string(r->table_location);
        check_string(r->original);
        check_string(r->trash);
        if (r->trashed_at_ms < 0 || r->size_bytes < -1 || r->mtime_ms < -1)
            abort();
    }
    icm__trash_records_free(recs, n);
    return 0;
}
