/*
 * cli/cmd_manifests.c: `icemaint manifests TABLE [--snapshot-id ID]`: the manifest list rows of
 * one snapshot (spec "Manifest Lists"), like Spark's `manifests` metadata table. The current
 * snapshot by default. A v1 snapshot without a manifest list shows its embedded manifests,
 * which carry nothing but their paths.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "icemaint/manifest.h"

static const char manifests_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] manifests TABLE [--snapshot-id ID] [--json]\n"
    "\n"
    "List the manifests of one snapshot (its manifest list rows): path, length, partition\n"
    "spec id, content (data or deletes), sequence numbers, the snapshot that added the\n"
    "manifest, and its added/existing/deleted file counts.\n"
    "\n"
    "TABLE is ns.table (through the configured catalog), a table directory in filesystem\n"
    "(Hadoop) layout, or a metadata JSON file.\n"
    "\n"
    "Options:\n"
    "  --snapshot-id ID  the snapshot to show (default: the current snapshot)\n"
    "  --json            one JSON document: {metadata_location, snapshot_id, manifest_list,\n"
    "                    manifests: [{path, size_bytes, kind, partition_spec_id, content,\n"
    "                    sequence_number, min_sequence_number, added_snapshot_id,\n"
    "                    added_files_count, existing_files_count, deleted_files_count,\n"
    "                    added_rows_count, existing_rows_count, deleted_rows_count}]}\n"
    "  -h, --help        print this help\n";

typedef struct manifests_ctx {
    bool json;
    json_t *arr;          /* --json */
    icm_cli_grid *grid;   /* human output */
    bool ok;              /* no allocation failure so far */
} manifests_ctx;

static const char *content_name(icm_manifest_content content)
{
    return content == ICM_MANIFEST_CONTENT_DELETES ? "deletes" : "data";
}

static json_t *opt_int(bool has, int64_t v)
{
    return has ? icm_cli_json_int(v) : json_null();
}

static json_t *manifest_json(const icm_manifest_file *mf, bool *ok)
{
    json_t *o = json_object();
    if (o == NULL) {
        *ok = false;
        return NULL;
    }
    icm_cli_json_set(o, "path", icm_cli_json_str(mf->manifest_path), ok);
    icm_cli_json_set(o, "size_bytes", icm_cli_json_int(mf->manifest_length), ok);
    icm_cli_json_set(o, "kind", icm_cli_json_str("manifest"), ok);
    icm_cli_json_set(o, "partition_spec_id", icm_cli_json_int(mf->partition_spec_id), ok);
    icm_cli_json_set(o, "content", icm_cli_json_str(content_name(mf->content)), ok);
    icm_cli_json_set(o, "sequence_number", icm_cli_json_int(mf->sequence_number), ok);
    icm_cli_json_set(o, "min_sequence_number", icm_cli_json_int(mf->min_sequence_number), ok);
    icm_cli_json_set(o, "added_snapshot_id",
                     opt_int(mf->has_added_snapshot_id, mf->added_snapshot_id), ok);
    icm_cli_json_set(o, "added_files_count",
                     opt_int(mf->has_added_files_count, mf->added_files_count), ok);
    icm_cli_json_set(o, "existing_files_count",
                     opt_int(mf->has_existing_files_count, mf->existing_files_count), ok);
    icm_cli_json_set(o, "deleted_files_count",
                     opt_int(mf->has_deleted_files_count, mf->deleted_files_count), ok);
    icm_cli_json_set(o, "added_rows_count",
                     opt_int(mf->has_added_rows_count, mf->added_rows_count), ok);
    icm_cli_json_set(o, "existing_rows_count",
                     opt_int(mf->has_existing_rows_count, mf->existing_rows_count), ok);
    icm_cli_json_set(o, "deleted_rows_count",
                     opt_int(mf->has_deleted_rows_count, mf->deleted_rows_count), ok);
    if (mf->has_first_row_id)
        icm_cli_json_set(o, "first_row_id", icm_cli_json_int(mf->first_row_id), ok);
    return o;
}

static const char *opt_text(bool has, int64_t v, char *buf, size_t size)
{
    return has ? icm_cli_format_int64(v, buf, size) : NULL;
}

static bool manifest_row(icm_cli_grid *g, const icm_manifest_file *mf)
{
    char len[24], spec[24], seq[24], minseq[24], added_by[24], added[24], existing[24],
        deleted[24];
    const char *cells[] = {
        icm_cli_format_int64(mf->manifest_length, len, sizeof len),
        icm_cli_format_int64(mf->partition_spec_id, spec, sizeof spec),
        content_name(mf->content),
        icm_cli_format_int64(mf->sequence_number, seq, sizeof seq),
        icm_cli_format_int64(mf->min_sequence_number, minseq, sizeof minseq),
        opt_text(mf->has_added_snapshot_id, mf->added_snapshot_id, added_by, sizeof added_by),
        opt_text(mf->has_added_files_count, mf->added_files_count, added, sizeof added),
        opt_text(mf->has_existing_files_count, mf->existing_files_count, existing,
                 sizeof existing),
        opt_text(mf->has_deleted_files_count, mf->deleted_files_count, deleted, sizeof deleted),
        mf->manifest_path,
    };
    return icm_cli_grid_add(g, cells);
}

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    manifests_ctx *ctx = payload;
    if (ctx->json)
        icm_cli_json_push(ctx->arr, manifest_json(mf, &ctx->ok), &ctx->ok);
    else if (!manifest_row(ctx->grid, mf))
        ctx->ok = false;
    /* stop early on allocation failure: ICM_EUSER tells it apart from library errors */
    return ctx->ok ? 0 : ICM_EUSER;
}

/* v1 embedded manifests: only their paths are known (no manifest list row exists). Length and
 * partition spec id stay unknown; sequence numbers are 0 as for all v1 data. */
static void embedded_rows(manifests_ctx *ctx, const icm_snapshot *snap)
{
    for (size_t i = 0; i < snap->manifest_count; i++) {
        icm_manifest_file mf = ICM_MANIFEST_FILE_INIT;
        mf.manifest_path = snap->manifests[i];
        mf.has_added_snapshot_id = true;
        mf.added_snapshot_id = snap->snapshot_id;
        if (ctx->json) {
            json_t *o = manifest_json(&mf, &ctx->ok);
            if (o != NULL) {
                icm_cli_json_set(o, "size_bytes", json_null(), &ctx->ok);
                icm_cli_json_set(o, "partition_spec_id", json_null(), &ctx->ok);
            }
            icm_cli_json_push(ctx->arr, o, &ctx->ok);
        } else {
            char added_by[24];
            const char *cells[] = {
                "-", "-", "data", "0", "0",
                icm_cli_format_int64(snap->snapshot_id, added_by, sizeof added_by),
                NULL, NULL, NULL, mf.manifest_path,
            };
            if (!icm_cli_grid_add(ctx->grid, cells))
                ctx->ok = false;
        }
    }
}

static int list_manifests(icm_cli *cli, const icm_cli_table *t, const icm_snapshot *snap,
                          manifests_ctx *ctx)
{
    if (snap == NULL)
        return ICM_EXIT_OK;
    int rc = 0;
    if (snap->manifest_list == NULL) {
        embedded_rows(ctx, snap);
    } else {
        icm_manifest_list_read_options opts = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        opts.format_version = icm_table_metadata_format_version(t->md);
        rc = icm_manifest_list_read(t->io, snap->manifest_list, &opts,
                                    on_manifest, ctx);
    }
    /* a builder failure stopped the listing with ICM_EUSER: report that, not the code */
    if (!ctx->ok)
        return ctx->json ? icm_cli_json_failed() : icm_cli_oom();
    if (rc != 0)
        return icm_cli_fail(cli, rc);
    return ICM_EXIT_OK;
}

static int run_manifests(icm_cli *cli, int argc, char **argv)
{
    const char *table = NULL, *snapshot_id = NULL;
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        int m = after_dashdash ? 0 : icm_cli_opt_value(argc, argv, &i, "--snapshot-id",
                                                       &snapshot_id);
        if (m < 0)
            return ICM_EXIT_USAGE;
        if (m > 0)
            continue;
        int rc = icm_cli_take_table("manifests", argv, i, &after_dashdash, &table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    int rc = icm_cli_need_table("manifests", table);
    if (rc != ICM_EXIT_OK)
        return rc;
    icm_cli_table t;
    rc = icm_cli_table_open(cli, table, &t);
    if (rc != ICM_EXIT_OK)
        return rc;
    const icm_snapshot *snap = NULL;
    rc = icm_cli_pick_snapshot(&t, snapshot_id, &snap);

    static const char *const headers[] = {"LENGTH",  "SPEC",  "CONTENT",  "SEQ",
                                          "MIN_SEQ", "ADDED_SNAPSHOT_ID", "ADDED",
                                          "EXISTING", "DELETED", "PATH"};
    manifests_ctx ctx = {cli->json, NULL, NULL, true};
    if (rc == ICM_EXIT_OK) {
        if (cli->json)
            ctx.arr = json_array();
        else
            ctx.grid = icm_cli_grid_new(sizeof headers / sizeof headers[0], headers);
        if (ctx.arr == NULL && ctx.grid == NULL)
            rc = icm_cli_oom();
    }
    if (rc == ICM_EXIT_OK)
        rc = list_manifests(cli, &t, snap, &ctx);
    if (rc == ICM_EXIT_OK && cli->json) {
        json_t *doc = json_object();
        bool ok = doc != NULL;
        if (doc != NULL) {
            icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(t.metadata_location), &ok);
            icm_cli_json_set(doc, "snapshot_id",
                             snap ? icm_cli_json_int(snap->snapshot_id) : json_null(), &ok);
            icm_cli_json_set(doc, "manifest_list",
                             icm_cli_json_str(snap ? snap->manifest_list : NULL), &ok);
            icm_cli_json_set(doc, "manifests", ctx.arr, &ok);
            ctx.arr = NULL;
        }
        rc = icm_cli_json_print(doc, ok);
    } else if (rc == ICM_EXIT_OK) {
        if (snap == NULL)
            icm_cli_line(stdout, "no current snapshot (%s)", t.metadata_location);
        else
            icm_cli_grid_print(ctx.grid, stdout);
    }
    json_decref(ctx.arr);
    icm_cli_grid_free(ctx.grid);
    icm_cli_table_close(&t);
    return rc;
}

const icm_cli_command icm_cli_cmd_manifests = {
    "manifests",
    "the manifest list rows of a snapshot (default: current)",
    manifests_help,
    run_manifests,
};
