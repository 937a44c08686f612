/*
 * consumer.c: a program built against an installed libicemaint, the way a user's would be
 * (scripts/test.sh stage install-consumer builds it once through pkg-config and once through
 * CMake's find_package(icemaint)). It checks that the headers and the library it linked agree
 * on the version and that a metadata document parses through the public API; exit 0 if so.
 */
#include <icemaint/errors.h>
#include <icemaint/metadata.h>

#include <stdio.h>
#include <string.h>

static const char metadata[] =
    "{\"format-version\": 2, \"table-uuid\": \"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    " \"location\": \"/tmp/consumer/t\", \"last-sequence-number\": 0,"
    " \"last-updated-ms\": 1700000000000, \"last-column-id\": 1,"
    " \"current-schema-id\": 0, \"schemas\": [{\"type\": \"struct\", \"schema-id\": 0,"
    " \"fields\": [{\"id\": 1, \"name\": \"x\", \"required\": false, \"type\": \"long\"}]}],"
    " \"default-spec-id\": 0, \"partition-specs\": [{\"spec-id\": 0, \"fields\": []}],"
    " \"last-partition-id\": 999, \"default-sort-order-id\": 0,"
    " \"sort-orders\": [{\"order-id\": 0, \"fields\": []}]}";

int main(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", ICM_VERSION_MAJOR, ICM_VERSION_MINOR,
             ICM_VERSION_PATCH);
    if (strcmp(icm_version(), want) != 0 || icm_version_number() != ICM_VERSION_NUMBER) {
        fprintf(stderr, "consumer: library %s, headers %s\n", icm_version(), want);
        return 1;
    }
    icm_table_metadata *md = NULL;
    int rc = icm_table_metadata_parse(&md, metadata, sizeof metadata - 1, "consumer");
    if (rc != ICM_OK) {
        fprintf(stderr, "consumer: parse failed: %s\n", icm_error_last()->message);
        return 1;
    }
    int ok = icm_table_metadata_format_version(md) == 2 &&
             strcmp(icm_table_metadata_location(md), "/tmp/consumer/t") == 0 &&
             icm_table_metadata_snapshot_count(md) == 0;
    icm_table_metadata_free(md);
    if (!ok) {
        fprintf(stderr, "consumer: parsed metadata has the wrong fields\n");
        return 1;
    }
    printf("consumer: libicemaint %s OK\n", icm_version());
    return 0;
}
