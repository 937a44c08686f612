/*
 * cli/cmd_snapshots.c: `icemaint snapshots TABLE`: one row per snapshot in the metadata (spec
 * "Snapshots"), in document order: id, parent, sequence number, timestamp, operation, the refs
 * pointing at it, and its manifest list (or the count of embedded v1 manifests).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char snapshots_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] snapshots TABLE [--json]\n"
    "\n"
    "List every snapshot in the table's current metadata: snapshot id, parent id, sequence\n"
    "number, timestamp (ISO-8601 UTC), operation, the branches and tags pointing at it, and\n"
    "its manifest list. v1 snapshots without a manifest list show their embedded manifests.\n"
    "\n"
    "TABLE is ns.table (through the configured catalog), a table directory in filesystem\n"
    "(Hadoop) layout, or a metadata JSON file.\n"
    "\n"
    "Options:\n"
    "  --json      one JSON document: {metadata_location, current_snapshot_id, snapshots:\n"
    "              [{snapshot_id, parent_snapshot_id, sequence_number, timestamp_ms,\n"
    "              operation, refs, manifest_list, manifests, schema_id}]}; ids are exact\n"
    "              JSON integers, timestamps epoch milliseconds\n"
    "  -h, --help  print this help\n";

/* Names of the refs pointing at `snapshot_id`, joined with ","; NULL when none (or OOM). */
static char *refs_joined(const icm_table_metadata *md, int64_t snapshot_id)
{
    size_t len = 0;
    size_t n = icm_table_metadata_ref_count(md);
    for (size_t i = 0; i < n; i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, i);
        if (ref->snapshot_id == snapshot_id)
            len += strlen(ref->name) + 1;
    }
    if (len == 0)
        return NULL;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, i);
        if (ref->snapshot_id != snapshot_id)
            continue;
        if (out[0] != '\0')
            strcat(out, ",");
        strcat(out, ref->name);
    }
    return out;
}

static json_t *refs_json(const icm_table_metadata *md, int64_t snapshot_id, bool *ok)
{
    json_t *arr = json_array();
    if (arr == NULL) {
        *ok = false;
        return NULL;
    }
    for (size_t i = 0; i < icm_table_metadata_ref_count(md); i++) {
        const icm_ref *ref = icm_table_metadata_ref_at(md, i);
        if (ref->snapshot_id == snapshot_id)
            icm_cli_json_push(arr, icm_cli_json_str(ref->name), ok);
    }
    return arr;
}

static json_t *snapshot_json(const icm_table_metadata *md, const icm_snapshot *s, bool *ok)
{
    json_t *o = json_object();
    if (o == NULL) {
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(o, "snapshot_id", icm_cli_json_int(s->snapshot_id), ok);
    icm_cli_json_set(o, "parent_snapshot_id",
                     s->has_parent ? icm_cli_json_int(s->parent_snapshot_id) : json_null(), ok);
    icm_cli_json_set(o, "sequence_number", icm_cli_json_int(s->sequence_number), ok);
    icm_cli_json_set(o, "timestamp_ms", icm_cli_json_int(s->timestamp_ms), ok);
    icm_cli_json_set(o, "operation", icm_cli_json_str(s->operation), ok);
    icm_cli_json_set(o, "refs", refs_json(md, s->snapshot_id, ok), ok);
    icm_cli_json_set(o, "manifest_list", icm_cli_json_str(s->manifest_list), ok);
    if (s->manifest_list == NULL) {
        json_t *manifests = json_array();
        for (size_t i = 0; manifests != NULL && i < s->manifest_count; i++)
            icm_cli_json_push(manifests, icm_cli_json_str(s->manifests[i]), ok);
        icm_cli_json_set(o, "manifests", manifests, ok);
    }
    icm_cli_json_set(o, "schema_id", s->has_schema_id ? icm_cli_json_int(s->schema_id)
                                                      : json_null(), ok);
    if (s->has_first_row_id)
        icm_cli_json_set(o, "first_row_id", icm_cli_json_int(s->first_row_id), ok);
    if (s->has_added_rows)
        icm_cli_json_set(o, "added_rows", icm_cli_json_int(s->added_rows), ok);
    return o;
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
    icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(t->metadata_location), &ok);
    icm_cli_json_set(doc, "current_snapshot_id",
                     has_current ? icm_cli_json_int(current) : json_null(), &ok);
    json_t *arr = json_array();
    size_t n = icm_table_metadata_snapshot_count(md);
    for (size_t i = 0; arr != NULL && i < n; i++)
        icm_cli_json_push(arr, snapshot_json(md, icm_table_metadata_snapshot_at(md, i), &ok),
                          &ok);
    icm_cli_json_set(doc, "snapshots", arr, &ok);
    return icm_cli_json_print(doc, ok);
}

/* One text row; returns false on allocation failure. */
static bool add_row(icm_cli_grid *g, const icm_table_metadata *md, const icm_snapshot *s)
{
    char id[24], parent[24], seq[24], when[40], manifests[48];
    char *refs = refs_joined(md, s->snapshot_id);
    const char *list = s->manifest_list;
    if (list == NULL) {
        snprintf(manifests, sizeof manifests, "(%zu embedded manifests)", s->manifest_count);
        list = manifests;
    }
    const char *cells[] = {
        icm_cli_format_int64(s->snapshot_id, id, sizeof id),
        s->has_parent ? icm_cli_format_int64(s->parent_snapshot_id, parent, sizeof parent)
                      : NULL,
        icm_cli_format_int64(s->sequence_number, seq, sizeof seq),
        icm_cli_format_time(s->timestamp_ms, when, sizeof when),
        s->operation,
        refs,
        list,
    };
    bool ok = icm_cli_grid_add(g, cells);
    free(refs);
    return ok;
}

static int print_human(const icm_cli_table *t)
{
    static const char *const headers[] = {"SNAPSHOT_ID", "PARENT_ID", "SEQ",     "TIMESTAMP_UTC",
                                          "OPERATION",   "REFS",      "MANIFEST_LIST"};
    const icm_table_metadata *md = t->md;
    size_t n = icm_table_metadata_snapshot_count(md);
    if (n == 0) {
        icm_cli_line(stdout, "no snapshots (%s)", t->metadata_location);
        return ICM_EXIT_OK;
    }
    icm_cli_grid *g = icm_cli_grid_new(sizeof headers / sizeof headers[0], headers);
    if (g == NULL)
        return icm_cli_oom();
    for (size_t i = 0; i < n; i++) {
        if (!add_row(g, md, icm_table_metadata_snapshot_at(md, i))) {
            icm_cli_grid_free(g);
            return icm_cli_oom();
        }
    }
    icm_cli_grid_print(g, stdout);
    icm_cli_grid_free(g);
    return ICM_EXIT_OK;
}

static int run_snapshots(icm_cli *cli, int argc, char **argv)
{
    icm_cli_table t;
    int rc = icm_cli_table_open_args(cli, "snapshots", argc, argv, &t);
    if (rc != ICM_EXIT_OK)
        return rc;
    rc = cli->json ? print_json(&t) : print_human(&t);
    icm_cli_table_close(&t);
    return rc;
}

const icm_cli_command icm_cli_cmd_snapshots = {
    "snapshots",
    "one row per snapshot: id, parent, sequence number, time, operation, refs",
    snapshots_help,
    run_snapshots,
};
