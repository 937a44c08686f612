/*
 * fuzz/fuzz_avro_container.c: the Avro object container reader and the schema-driven skipper on
 * arbitrary bytes: header and schema parsing, every codec's block decoding with its checks, and
 * skipping every object of every block through the writer's schema. Any outcome but a crash,
 * sanitizer report or hang is fine.
 */
#include <stddef.h>
#include <stdint.h>

#include "avro/avro.h"

const char *const icm_fuzz_seed_suffixes[] = {".avro", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__avro_reader *r = NULL;
    if (icm__avro_reader_open(&r, data, size, "fuzz.avro") != 0)
        return 0;
    const icm__avro_schema *s = icm__avro_reader_schema(r);
    size_t n;
    (void)icm__avro_reader_meta(r, "avro.codec", &n);
    icm__avro_cur c;
    int64_t count;
    while (icm__avro_reader_next_block(r, &c, &count) == 0) {
        if (s->nodes[s->root].zero_size)
            continue; /* objects of zero bytes: nothing to skip */
        for (int64_t i = 0; i < count; i++)
            if (icm__avro_skip(s, s->root, &c) != 0)
                goto done;
    }
done:
    icm__avro_reader_free(r);
    return 0;
}
