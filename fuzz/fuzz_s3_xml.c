/*
 * fuzz/fuzz_s3_xml.c: the S3 answers the back end parses (src/io/s3/s3_xml.c) on arbitrary
 * bytes: a ListObjectsV2 page, a DeleteObjects result, an <Error> document, and the two time
 * formats. The first byte picks the parser (so one corpus seeds them all); the rest is the
 * document.
 *
 * A page that parses must be whole: every key non-empty and free of NUL, a truncated page
 * carries its token, an entry's size is -1 or non-negative; a failure leaves nothing behind.
 * A delete result's every error has a key and a code. The error parser never fails and never
 * changes the caller's last error. Times are -1 or a UTC instant from 1970 on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "io/s3/s3_internal.h"

/* fixtures hold no S3 answers: only the checked-in corpus is replayed */
const char *const icm_fuzz_seed_suffixes[] = {".s3xml", NULL};

static void check_list(const char *s, size_t n)
{
    icm__s3_list_page p;
    int rc = icm__s3_list_parse(s, n, &p);
    if (rc != 0) {
        if ((rc != ICM_EIO && rc != ICM_ENOMEM) || p.entries != NULL || p.n_entries != 0 ||
            p.next_token != NULL)
            abort();
        return;
    }
    if (p.is_truncated && (p.next_token == NULL || p.next_token[0] == '\0'))
        abort();
    for (size_t i = 0; i < p.n_entries; i++) {
        const icm__s3_list_entry *e = &p.entries[i];
        if (e->key == NULL || e->key_len == 0 || strlen(e->key) != e->key_len ||
            e->size_bytes < -1 || e->mtime_ms < -1)
            abort();
    }
    icm__s3_list_page_clear(&p);
}

static void check_delete(const char *s, size_t n)
{
    icm__s3_delete_result r;
    int rc = icm__s3_delete_parse(s, n, &r);
    if (rc != 0) {
        if ((rc != ICM_EIO && rc != ICM_ENOMEM) || r.errors != NULL || r.n_errors != 0)
            abort();
        return;
    }
    for (size_t i = 0; i < r.n_errors; i++)
        if (r.errors[i].key == NULL || r.errors[i].code == NULL)
            abort();
    icm__s3_delete_result_clear(&r);
}

static void check_error(const char *s, size_t n)
{
    icm_error_clear();
    icm__s3_error_doc e;
    icm__s3_error_parse(s, n, &e);
    if (icm_error_last()->code != 0 || strlen(e.code) >= sizeof e.code ||
        strlen(e.request_id) >= sizeof e.request_id)
        abort();
}

static void check_times(const char *s, size_t n)
{
    char *z = malloc(n + 1);
    if (z == NULL)
        return;
    memcpy(z, s, n);
    z[n] = '\0';
    int64_t a = icm__s3_parse_iso8601_ms(z), b = icm__s3_parse_http_date_ms(z);
    if (a < -1 || b < -1)
        abort();
    free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 4) {
    case 0: check_list(s, n); break;
    case 1: check_delete(s, n); break;
    case 2: check_error(s, n); break;
    default: check_times(s, n); break;
    }
    return 0;
}
