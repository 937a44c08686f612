/*
 * fuzz/fuzz_puffin_footer.c: the Puffin footer reader (src/puffin) on arbitrary bytes, as a
 * whole file through an in-memory FileIO and from memory. Each must return 0 with blobs that lie
 * within the file's blobs, sorted by offset, or ICM_EINVALID / ICM_EUNSUPPORTED (ICM_ENOMEM),
 * never crash or read out of bounds; the two ways agree. Seeds: the checked-in corpus plus every
 * fixture named *.puffin.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "icemaint/fileio.h"
#include "icemaint/testing/fileio.h"
#include "puffin/puffin.h"

const char *const icm_fuzz_seed_suffixes[] = {".puffin", ".stats", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, const icm__puffin_footer *f, size_t size)
{
    if (rc != 0) {
        if (rc != ICM_EINVALID && rc != ICM_EUNSUPPORTED && rc != ICM_ENOMEM)
            abort();
        return;
    }
    for (size_t i = 0; i < f->count; i++) {
        const icm__puffin_blob *b = &f->blobs[i];
        if (b->offset_bytes < 4 || b->length_bytes < 0 ||
            (uint64_t)(b->offset_bytes + b->length_bytes) > size ||
            (i > 0 && b->offset_bytes < f->blobs[i - 1].offset_bytes) || b->cardinality < -1 ||
            (b->referenced_data_file != NULL && strlen(b->referenced_data_file) > size))
            abort();
        if (icm__puffin_footer_find(f, b->offset_bytes) == NULL)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__puffin_footer a = ICM__PUFFIN_FOOTER_INIT, b = ICM__PUFFIN_FOOTER_INIT;
    int rc_a = ICM_EINVALID;
    size_t footer = 0;
    if (size >= ICM__PUFFIN_TAIL_BYTES &&
        (rc_a = icm__puffin_footer_size(data + size - ICM__PUFFIN_TAIL_BYTES, (int64_t)size,
                                        "/t/f.puffin", &footer)) == 0)
        rc_a = footer <= size ? icm__puffin_footer_decode(data + size - footer, footer,
                                                          (int64_t)size, "/t/f.puffin", &a)
                              : ICM_EINVALID;
    check(rc_a, &a, size);

    icm_fileio *io = NULL;
    if (icm_fileio_mem_new(&io) != 0)
        return 0;
    int rc_b = ICM_EINVALID;
    if (icm_fileio_write_replace(io, "/t/f.puffin", data, size) == 0) {
        rc_b = icm__puffin_read_footer(io, "/t/f.puffin", (int64_t)size, &b);
        check(rc_b, &b, size);
        /* the same verdict and blobs, except where the file is too short to hold a footer
         * (the reader says so before reading) */
        if (rc_a != ICM_ENOMEM && rc_b != ICM_ENOMEM && size >= 20 &&
            (rc_a != rc_b || a.count != b.count))
            abort();
        for (size_t i = 0; rc_a == 0 && i < a.count; i++)
            if (a.blobs[i].offset_bytes != b.blobs[i].offset_bytes ||
                a.blobs[i].length_bytes != b.blobs[i].length_bytes)
                abort();
    }
    icm__puffin_footer_dispose(&a);
    icm__puffin_footer_dispose(&b);
    icm_fileio_free(io);
    return 0;
}
