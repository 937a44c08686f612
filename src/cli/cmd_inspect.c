/*
 * cli/cmd_inspect.c: `icemaint inspect TABLE`: a summary of the table metadata (spec "Table
 * Metadata"): format version, uuid, location, current snapshot, counts of snapshots, refs,
 * schemas, partition specs, sort orders, statistics files, logs, and the table properties.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char inspect_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] inspect TABLE [--json]\n"
    "\n"
    "Summarise a table's current metadata: format version, table uuid, location, current\n"
    "snapshot, counts of snapshots, refs, schemas, partition specs, sort orders, statistics\n"
    "files and log entries, and the table properties.\n"
    "\n"
    "TABLE is ns.table (through the configured catalog), a table directory in filesystem\n"
    "(Hadoop) layout, or a metadata JSON file.\n"
    "\n"
    "Options:\n"
    "  --json      one JSON document: metadata_location, format_version, table_uuid,\n"
    "              location, last_sequence_number, last_updated_ms, current_snapshot_id,\n"
    "              current_schema_id, default_spec_id, counts{...}, refs[...], properties{}\n"
    "  -h, --help  print this help\n";

/* Statistics files split by kind: `statistics` and `partition-statistics`. */
static void count_statistics(const icm_table_metadata *md, size_t *stats, size_t *part)
{
    *stats = 0;
    *part = 0;
    size_t n = icm_table_metadata_statistics_count(md);
    for (size_t i = 0; i < n; i++) {
        if (icm_table_metadata_statistics_at(md, i)->partition_statistics)
            (*part)++;
        else
            (*stats)++;
    }
}

static const char *ref_type_name(icm_ref_type type)
{
    return type == ICM_REF_TAG ? "tag" : "branch";
}

static int print_json(const icm_cli_table *t)
{
    const icm_table_metadata *md = t->md;
    bool ok = true;
    json_t *doc = json_object();
    if (doc == NULL)
        return icm_cli_oom();
    int64_t current;
    bool has_current = icm_table_metadata_current_snapshot_id(&current, md);
    size_t stats, part_stats;
    count_statistics(md, &stats, &part_stats);

    icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(t->metadata_location), &ok);
    icm_cli_json_set(doc, "format_version",
                     icm_cli_json_int(icm_table_metadata_format_version(md)), &ok);
    icm_cli_json_set(doc, "table_uuid", icm_cli_json_str(icm_table_metadata_uuid(md)), &ok);
    icm_cli_json_set(doc, "location", icm_cli_json_str(icm_table_metadata_location(md)), &ok);
    icm_cli_json_set(doc, "last_sequence_number",
                     icm_cli_json_int(icm_table_metadata_last_sequence_number(md)), &ok);
    icm_cli_json_set(doc, "last_updated_ms",
                     icm_cli_json_int(icm_table_metadata_last_updated_ms(md)), &ok);
    icm_cli_json_set(doc, "current_snapshot_id",
                     has_current ? icm_cli_json_int(current) : json_null(), &ok);
    icm_cli_json_set(doc, "current_schema_id",
                     icm_cli_json_int(icm_table_metadata_current_schema_id(md)), &ok);
    icm_cli_json_set(doc, "default_spec_id",
                     icm_cli_json_int(icm_table_metadata_default_spec_id(md)), &ok);

    json_t *counts = json_object();
    if (counts != NULL) {
        icm_cli_json_set(counts, "snapshots",
                         json_integer((json_int_t)icm_table_metadata_snapshot_count(md)), &ok);
        icm_cli_json_set(counts, "refs",
                         json_integer((json_int_t)icm_table_metadata_ref_count(md)), &ok);
        icm_cli_json_set(counts, "schemas",
                         json_integer((json_int_t)icm_table_metadata_schema_count(md)), &ok);
        icm_cli_json_set(counts, "partition_specs",
                         json_integer((json_int_t)icm_table_metadata_spec_count(md)), &ok);
        icm_cli_json_set(counts, "sort_orders",
                         json_integer((json_int_t)icm_table_metadata_sort_order_count(md)),
                         &ok);
        icm_cli_json_set(counts, "statistics_files", json_integer((json_int_t)stats), &ok);
        icm_cli_json_set(counts, "partition_statistics_files",
                         json_integer((json_int_t)part_stats), &ok);
        icm_cli_json_set(counts, "snapshot_log",
                         json_integer((json_int_t)icm_table_metadata_snapshot_log_count(md)),
                         &ok);
        icm_cli_json_set(counts, "metadata_log",
                         json_integer((json_int_t)icm_table_metadata_metadata_log_count(md)),
                         &ok);
        icm_cli_json_set(counts, "properties",
                         json_integer((json_int_t)icm_table_metadata_property_count(md)), &ok);
    }
    icm_cli_json_set(doc, "counts", counts, &ok);

    json_t *refs = json_array();
    for (size_t i = 0; refs != NULL && i < icm_table_metadata_ref_count(md); i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, i);
        json_t *r = json_object();
        if (r != NULL) {
            icm_cli_json_set(r, "name", icm_cli_json_str(ref->name), &ok);
            icm_cli_json_set(r, "type", icm_cli_json_str(ref_type_name(ref->type)), &ok);
            icm_cli_json_set(r, "snapshot_id", icm_cli_json_int(ref->snapshot_id), &ok);
        }
        icm_cli_json_push(refs, r, &ok);
    }
    icm_cli_json_set(doc, "refs", refs, &ok);

    json_t *props = json_object();
    for (size_t i = 0; props != NULL && i < icm_table_metadata_property_count(md); i++) {
        const char *key, *value;
        icm_table_metadata_property_at(&key, &value, md, i);
        icm_cli_json_set(props, key, icm_cli_json_str(value), &ok);
    }
    icm_cli_json_set(doc, "properties", props, &ok);
    return icm_cli_json_print(doc, ok);
}

static void print_current_snapshot(const icm_table_metadata *md)
{
    int64_t current;
    if (!icm_table_metadata_current_snapshot_id(&current, md)) {
        printf("%-22s none\n", "Current snapshot");
        return;
    }
    const icm_snapshot *snap = icm_table_metadata_snapshot_by_id(md, current);
    if (snap == NULL) {
        /* the metadata names a snapshot it does not contain: show it, it is worth seeing */
        printf("%-22s %" PRId64 " (not among the snapshots)\n", "Current snapshot", current);
        return;
    }
    char when[40];
    icm_cli_line(stdout, "%-22s %" PRId64 " (%s, %s)", "Current snapshot", current,
                 icm_cli_format_time(snap->timestamp_ms, when, sizeof when),
                 snap->operation != NULL ? snap->operation : "no operation");
}

static void print_human(const icm_cli_table *t)
{
    const icm_table_metadata *md = t->md;
    const char *uuid = icm_table_metadata_uuid(md);
    char when[40];
    size_t stats, part_stats;
    count_statistics(md, &stats, &part_stats);

    icm_cli_line(stdout, "%-22s %s", "Metadata file", t->metadata_location);
    printf("%-22s %d\n", "Format version", icm_table_metadata_format_version(md));
    icm_cli_line(stdout, "%-22s %s", "Table UUID", uuid != NULL ? uuid : "(none)");
    icm_cli_line(stdout, "%-22s %s", "Location", icm_table_metadata_location(md));
    printf("%-22s %s\n", "Last updated",
           icm_cli_format_time(icm_table_metadata_last_updated_ms(md), when, sizeof when));
    printf("%-22s %" PRId64 "\n", "Last sequence number",
           icm_table_metadata_last_sequence_number(md));
    print_current_snapshot(md);
    printf("%-22s %zu\n", "Snapshots", icm_table_metadata_snapshot_count(md));
    printf("%-22s %zu\n", "Refs", icm_table_metadata_ref_count(md));
    for (size_t i = 0; i < icm_table_metadata_ref_count(md); i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, i);
        icm_cli_line(stdout, "  %-20s %s -> %" PRId64, ref->name, ref_type_name(ref->type),
                     ref->snapshot_id);
    }
    printf("%-22s %zu (current %" PRId32 ")\n", "Schemas", icm_table_metadata_schema_count(md),
           icm_table_metadata_current_schema_id(md));
    printf("%-22s %zu (default %" PRId32 ")\n", "Partition specs",
           icm_table_metadata_spec_count(md), icm_table_metadata_default_spec_id(md));
    printf("%-22s %zu\n", "Sort orders", icm_table_metadata_sort_order_count(md));
    printf("%-22s %zu\n", "Statistics files", stats);
    printf("%-22s %zu\n", "Partition statistics", part_stats);
    printf("%-22s %zu\n", "Snapshot log", icm_table_metadata_snapshot_log_count(md));
    printf("%-22s %zu\n", "Metadata log", icm_table_metadata_metadata_log_count(md));
    size_t nprops = icm_table_metadata_property_count(md);
    printf("%-22s %zu\n", "Properties", nprops);
    for (size_t i = 0; i < nprops; i++) {
        const char *key, *value;
        icm_table_metadata_property_at(&key, &value, md, i);
        icm_cli_line(stdout, "  %s = %s", key, value != NULL ? value : "");
    }
}

static int run_inspect(icm_cli *cli, int argc, char **argv)
{
    icm_cli_table t;
    int rc = icm_cli_table_open_args(cli, "inspect", argc, argv, &t);
    if (rc != ICM_EXIT_OK)
        return rc;
    if (cli->json)
        rc = print_json(&t);
    else
        print_human(&t);
    icm_cli_table_close(&t);
    return rc;
}

const icm_cli_command icm_cli_cmd_inspect = {
    "inspect",
    "summary of a table's metadata (versions, counts, refs, properties)",
    inspect_help,
    run_inspect,
};
