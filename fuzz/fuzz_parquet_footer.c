/*
 * fuzz/fuzz_parquet_footer.c: the Parquet footer reader (src/parquet) on arbitrary bytes, both
 * as a whole file (magic, footer length, FileMetaData) through an in-memory FileIO and as a bare
 * FileMetaData. It must return 0 with a non-negative row count or ICM_EINVALID, never crash or
 * read out of bounds. Seeds: the checked-in corpus plus every fixture named *.parquet.
 */
#include <stdint.h>
#include <stdlib.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "parquet/parquet.h"

const char *const icm_fuzz_seed_suffixes[] = {".parquet", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, int64_t rows)
{
    if (rc == 0 ? rows < 0 : rc != ICM_EINVALID && rc != ICM_ENOMEM)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t rows = -1, bytes = -1;
    check(icm__parquet_footer_num_rows(data, size, "fuzz", &rows), rows);
    icm_fileio *io = NULL;
    if (icm_fileio_mem_new(&io) != 0)
        return 0;
    if (icm_fileio_create_new(io, "/f.parquet", data, size) == 0) {
        rows = -1;
        int rc = icm__parquet_read_num_rows(io, "/f.parquet", &rows, &bytes);
        check(rc, rows);
        if (rc == 0 && bytes != (int64_t)size)
            abort();
    }
    icm_fileio_free(io);
    return 0;
}
