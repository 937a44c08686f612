/*
 * txn/txn_properties.c: the table properties Iceberg gives a type, and the check of a value
 * before a transaction records it (icm_table_property_check, include/icemaint/transaction.h).
 *
 * Engines read these with Java's PropertyUtil: integers with Integer.parseInt or
 * Long.parseLong, so a value they cannot parse (`abc`, `1.5`, ` 3`) makes every later read of
 * the table's setting fail, and booleans with Boolean.parseBoolean, which reads anything but
 * `true` as false: `write.metadata.delete-after-commit.enabled=maybe` would silently turn the
 * setting off. A transaction refuses such a value for a property it knows the type of; other
 * properties are strings to Iceberg and pass as they are. The history.expire.* and
 * commit.retry.* numbers must not be negative either (icemaint refuses a negative retention
 * when it reads one: src/table/retention.c, expire_decide.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "icemaint/transaction.h"
#include "util/typo.h"
#include "util/util.h"

typedef enum prop_type { PROP_INT, PROP_LONG, PROP_BOOL } prop_type;

typedef struct typed_property {
    const char *name;
    prop_type type;
    bool non_negative;
} typed_property;

/* Java's TableProperties (Iceberg 1.10) entries read as numbers or booleans. */
static const typed_property typed[] = {
    {"commit.manifest-merge.enabled", PROP_BOOL, false},
    {"commit.manifest.min-count-to-merge", PROP_INT, false},
    {"commit.manifest.target-size-bytes", PROP_LONG, false},
    {"commit.retry.max-wait-ms", PROP_INT, true},
    {"commit.retry.min-wait-ms", PROP_INT, true},
    {"commit.retry.num-retries", PROP_INT, true},
    {"commit.retry.total-timeout-ms", PROP_INT, true},
    {"commit.status-check.max-wait-ms", PROP_LONG, true},
    {"commit.status-check.min-wait-ms", PROP_LONG, true},
    {"commit.status-check.num-retries", PROP_INT, true},
    {"commit.status-check.total-timeout-ms", PROP_LONG, true},
    {"compatibility.snapshot-id-inheritance.enabled", PROP_BOOL, false},
    {"gc.enabled", PROP_BOOL, false},
    {"history.expire.max-ref-age-ms", PROP_LONG, true},
    {"history.expire.max-snapshot-age-ms", PROP_LONG, true},
    {"history.expire.min-snapshots-to-keep", PROP_INT, true},
    {"read.split.open-file-cost", PROP_LONG, false},
    {"read.split.planning-lookback", PROP_INT, false},
    {"read.split.target-size", PROP_LONG, false},
    {"write.delete.target-file-size-bytes", PROP_LONG, false},
    {"write.metadata.delete-after-commit.enabled", PROP_BOOL, false},
    {"write.metadata.metrics.max-inferred-column-defaults", PROP_INT, false},
    {"write.metadata.previous-versions-max", PROP_INT, false},
    {"write.object-storage.enabled", PROP_BOOL, false},
    {"write.object-storage.partitioned-paths", PROP_BOOL, false},
    {"write.summary.partition-limit", PROP_INT, false},
    {"write.target-file-size-bytes", PROP_LONG, false},
    {"write.wap.enabled", PROP_BOOL, false},
};

/* Other property names Iceberg's engines read (strings to them), for "did you mean" only. */
static const char *const string_properties[] = {
    "write.data.path",
    "write.metadata.path",
    "write.folder-storage.path",
    "write.object-storage.path",
    "write.location-provider.impl",
    "write.format.default",
    "write.delete.format.default",
    "write.distribution-mode",
    "write.delete.mode",
    "write.update.mode",
    "write.merge.mode",
    "write.metadata.compression-codec",
    "write.parquet.compression-codec",
    "write.avro.compression-codec",
    "write.orc.compression-codec",
    "write.parquet.row-group-size-bytes",
    "write.parquet.page-size-bytes",
    "write.metadata.metrics.default",
    "format-version",
    "comment",
};

/* Integer.parseInt / Long.parseLong: an optional sign and ASCII digits, within range. */
static bool parse_java_integer(const char *s, int64_t min, int64_t max, int64_t *out)
{
    const char *p = s + (s[0] == '+' || s[0] == '-');
    if (*p == '\0')
        return false;
    for (const char *q = p; *q != '\0'; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int icm_table_property_check(const char **closest, const char *key, const char *value)
{
    if (closest != NULL)
        *closest = NULL;
    if (key == NULL)
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, NULL, "NULL property key");
    const typed_property *t = NULL;
    for (size_t i = 0; i < ICM__ARRAY_LEN(typed) && t == NULL; i++)
        if (strcmp(typed[i].name, key) == 0)
            t = &typed[i];
    if (t == NULL) {
        bool known = false;
        for (size_t i = 0; i < ICM__ARRAY_LEN(string_properties) && !known; i++)
            known = strcmp(string_properties[i], key) == 0;
        if (!known && closest != NULL) {
            const char *names[ICM__ARRAY_LEN(typed) + ICM__ARRAY_LEN(string_properties)];
            size_t n = 0;
            for (size_t i = 0; i < ICM__ARRAY_LEN(typed); i++)
                names[n++] = typed[i].name;
            for (size_t i = 0; i < ICM__ARRAY_LEN(string_properties); i++)
                names[n++] = string_properties[i];
            *closest = icm__typo_nearest(key, names, n, 2);
        }
        return 0;
    }
    if (value == NULL)
        return 0; /* removing it: readers fall back on the default */
    int64_t v = 0;
    switch (t->type) {
    case PROP_BOOL:
        if (strcasecmp(value, "true") == 0 || strcasecmp(value, "false") == 0)
            return 0;
        return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, key,
                              "\"%.64s\" is not a boolean (true or false; Iceberg reads any other "
                              "value as false)", value);
    case PROP_INT:
    case PROP_LONG: {
        bool wide = t->type == PROP_LONG;
        if (!parse_java_integer(value, wide ? INT64_MIN : INT32_MIN,
                                wide ? INT64_MAX : INT32_MAX, &v))
            return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, key,
                                  "\"%.64s\" is not %s (an optional sign and digits, within "
                                  "%s)", value, wide ? "a long integer" : "an integer",
                                  wide ? "64 bits" : "32 bits");
        if (t->non_negative && v < 0)
            return icm__error_set(ICM_ERRCLASS_TXN, ICM_EINVALID, key,
                                  "\"%.64s\" is negative (a count or a duration in ms: 0 or more)",
                                  value);
        return 0;
    }
    }
    return 0;
}
