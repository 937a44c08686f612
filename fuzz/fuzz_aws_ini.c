/*
 * fuzz/fuzz_aws_ini.c: the AWS shared config / credentials file reader (io/s3/aws_ini.h) on
 * arbitrary bytes.
 *
 * Whatever parses holds only what the format allows: section names without the brackets and
 * never empty, keys lower-case and non-empty without `=`, values without a line break unless
 * continued, a sub-block entry's parent a key of its section, and lines within the input; every
 * lookup the S3 configuration makes answers without crashing. What does not parse is
 * ICM_EINVALID or ICM_ENOMEM with nothing to free. Seeds: the checked-in corpus.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/errors.h"
#include "io/s3/aws_ini.h"

/* Inside directories of seeds, only these files (none of the fixtures is an AWS file). */
const char *const icm_fuzz_seed_suffixes[] = {".aws-config", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icm__aws_ini ini;
    int rc = icm__aws_ini_parse(&ini, "fuzz", (const char *)data, size);
    if (rc != 0) {
        if ((rc != ICM_EINVALID && rc != ICM_ENOMEM) || ini.sections != NULL)
            abort();
        return 0;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (size_t i = 0; i < ini.n_sections; i++) {
        const icm__aws_ini_section *s = &ini.sections[i];
        if (s->name[0] == '\0' || strchr(s->name, ']') != NULL || s->line > lines)
            abort();
        if (icm__aws_ini_find(&ini, s->name) != s)
            abort(); /* a name appears once: repeated sections are merged */
        for (size_t j = 0; j < s->n_entries; j++) {
            const icm__aws_ini_entry *e = &s->entries[j];
            if (e->key[0] == '\0' || strchr(e->key, '=') != NULL || e->line > lines ||
                e->line < s->line)
                abort();
            for (const char *k = e->key; *k; k++)
                if (isupper((unsigned char)*k))
                    abort();
            if (e->parent != NULL && icm__aws_ini_get(s, NULL, e->parent) == NULL)
                abort();
            if (icm__aws_ini_get(s, e->parent, e->key) == NULL)
                abort();
        }
        if (strncmp(s->name, "profile ", 8) == 0 &&
            icm__aws_ini_config_profile(&ini, s->name + 8) == NULL)
            abort();
    }
    (void)icm__aws_ini_config_profile(&ini, "default");
    icm__aws_ini_clear(&ini);
    return 0;
}
