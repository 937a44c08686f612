/*
 * cli/cmd_files.c: `icemaint files TABLE [--snapshot-id ID | --all]`: the live data and delete
 * files of a snapshot (spec "Manifests": entries with status ADDED or EXISTING), like Spark's
 * `files` metadata table; `--all` lists the distinct files live in any snapshot of the
 * metadata (Spark's `all_files`), which is what snapshot expiry must keep or may delete.
 *
 * Files are distinct by path: a Puffin file holding several deletion vectors is one file.
 * With --all each manifest is read once, however many snapshots share it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "icemaint/manifest.h"
#include "util/strset.h"

static const char files_help[] =
    "Usage: icemaint [GLOBAL OPTIONS] files TABLE [--snapshot-id ID | --all] [--json]\n"
    "\n"
    "List the live data and delete files of a snapshot (default: the current one): kind,\n"
    "file format, record count, size and path, and for deletion vectors the data file they\n"
    "apply to. With --all, the distinct files live in any snapshot of the metadata.\n"
    "Files are distinct by path: a Puffin file holding several deletion vectors is one\n"
    "file, listed with all the data files its vectors apply to.\n"
    "\n"
    "TABLE is ns.table (through the configured catalog), a table directory in filesystem\n"
    "(Hadoop) layout, or a metadata JSON file.\n"
    "\n"
    "Options:\n"
    "  --snapshot-id ID  the snapshot to list\n"
    "  --all             every file reachable from any snapshot in the metadata\n"
    "  --json            one JSON document: {metadata_location, snapshot_id, all, files:\n"
    "                    [{path, kind, format, record_count, size_bytes,\n"
    "                    referenced_data_file}], counts{kind: n}, total_size_bytes}; kind is\n"
    "                    data, position_deletes, equality_deletes or deletion_vector;\n"
    "                    deletion vector files add deletion_vectors (how many) and\n"
    "                    referenced_data_files (one per vector)\n"
    "  -h, --help        print this help\n";

enum { KIND_DATA, KIND_POS, KIND_EQ, KIND_DV, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"data", "position_deletes",
                                                   "equality_deletes", "deletion_vector"};

typedef struct files_ctx {
    icm_fileio *io;
    icm_manifest_read_options read_opts;
    bool all;                      /* read each manifest once across snapshots */
    icm__strset manifests_seen;    /* manifests' identities */
    icm__strset files_seen;        /* files' identities; an identity's number is its row */
    icm__strset vectors_seen;      /* "<offset>:<path>" of each deletion vector listed */
    size_t nrows;
    size_t *vector_counts;         /* per row: deletion vectors in that file */
    char **first_refs;             /* per row: data file of its first deletion vector */
    int64_t *record_counts;        /* per row: records (deleted rows, for vector files) */
    json_t *arr;                   /* --json rows */
    icm_cli_grid *grid;            /* text rows */
    size_t counts[KIND_COUNT];
    int64_t total_size_bytes;
    bool ok;                       /* no allocation failure */
} files_ctx;

/* A deletion vector is a position delete stored in a Puffin file (spec v3). */
static int file_kind(const icm_data_file *f)
{
    switch (f->content) {
    case ICM_FILE_CONTENT_POSITION_DELETES:
        return f->file_format == ICM_FILE_FORMAT_PUFFIN ? KIND_DV : KIND_POS;
    case ICM_FILE_CONTENT_EQUALITY_DELETES:
        return KIND_EQ;
    case ICM_FILE_CONTENT_DATA:
    default:
        return KIND_DATA;
    }
}

static void add_json_row(files_ctx *ctx, const icm_data_file *f, int kind)
{
    json_t *o = json_object();
    bool *ok = &ctx->ok;
    if (o != NULL) {
        icm_cli_json_set(o, "path", icm_cli_json_str(f->file_path), ok);
        icm_cli_json_set(o, "kind", icm_cli_json_str(kind_names[kind]), ok);
        icm_cli_json_set(o, "format", icm_cli_json_str(f->file_format_name), ok);
        icm_cli_json_set(o, "record_count", icm_cli_json_int(f->record_count), ok);
        icm_cli_json_set(o, "size_bytes", icm_cli_json_int(f->file_size_in_bytes), ok);
        if (f->referenced_data_file != NULL)
            icm_cli_json_set(o, "referenced_data_file", icm_cli_json_str(f->referenced_data_file),
                             ok);
        if (kind == KIND_DV) {
            json_t *refs = json_array();
            icm_cli_json_push(refs, icm_cli_json_str(f->referenced_data_file), ok);
            icm_cli_json_set(o, "referenced_data_files", refs, ok);
            icm_cli_json_set(o, "deletion_vectors", json_integer(1), ok);
        }
    }
    icm_cli_json_push(ctx->arr, o, ok);
}

static void add_text_row(files_ctx *ctx, const icm_data_file *f, int kind)
{
    char records[24], size[24];
    const char *cells[] = {
        kind_names[kind],
        f->file_format_name,
        icm_cli_format_int64(f->record_count, records, sizeof records),
        icm_cli_format_int64(f->file_size_in_bytes, size, sizeof size),
        f->file_path,
        f->referenced_data_file != NULL ? f->referenced_data_file : "",
    };
    if (!icm_cli_grid_add(ctx->grid, cells))
        ctx->ok = false;
}

/* Add the identity of `location` to `set` (icm_location_identity: `/t/x`, `file:///t/x` and
 * `/t/a/../x` are one file, listed once however its references spell it); *number (may be
 * NULL) is its number in the set, new or not. Returns 1 (new), 0 (seen before), or -1 when
 * there is no memory. */
static int add_identity(icm__strset *set, const char *location, size_t *number)
{
    char *id = NULL;
    int rc = icm_location_identity(&id, location);
    if (rc == ICM_ENOMEM)
        return -1;
    const char *key = rc == 0 ? id : location; /* an empty location has no identity: it
                                                  stands for itself */
    bool added = false;
    rc = icm__strset_add_numbered(set, key, strlen(key), &added, number);
    icm_free(id);
    return rc != 0 ? -1 : added;
}

/* Is this deletion vector new? A Puffin file holds several, told apart by their offset (or,
 * without one, by the data file they apply to); with --all the same vector comes back from
 * every snapshot that keeps it. Returns 1, 0, or -1 on allocation failure. */
static int first_vector(files_ctx *ctx, const icm_data_file *f)
{
    /* both files by their identity, so two spellings of one vector are one */
    char *file = NULL, *ref = NULL, *key = NULL;
    int rc = icm_location_identity(&file, f->file_path);
    int rc_ref = 0;
    if (!f->has_content_offset && f->referenced_data_file != NULL)
        rc_ref = icm_location_identity(&ref, f->referenced_data_file);
    if (rc == ICM_ENOMEM || rc_ref == ICM_ENOMEM) {
        icm_free(file);
        icm_free(ref);
        return -1;
    }
    const char *fp = file != NULL ? file : f->file_path; /* "" stands for itself */
    if (f->has_content_offset)
        key = malloc(strlen(fp) + 24);
    else
        key = malloc(strlen(fp) + (ref != NULL ? strlen(ref) : 0) + 3);
    int added = -1;
    if (key != NULL) {
        if (f->has_content_offset)
            sprintf(key, "%" PRId64 ":%s", f->content_offset, fp);
        else
            sprintf(key, "-:%s:%s", fp, ref != NULL ? ref : "");
        bool is_new = false;
        added = icm__strset_add(&ctx->vectors_seen, key, strlen(key), &is_new) != 0 ? -1
                                                                                  : is_new;
    }
    free(key);
    icm_free(file);
    icm_free(ref);
    return added;
}

/* Another deletion vector in the Puffin file listed at `row`: count it, add its deleted rows
 * to the file's record count and name its data file. */
static void add_vector_to_row(files_ctx *ctx, size_t row, const icm_data_file *f)
{
    size_t n = ++ctx->vector_counts[row];
    ctx->record_counts[row] += f->record_count;
    if (ctx->arr != NULL) {
        json_t *o = json_array_get(ctx->arr, row);
        icm_cli_json_push(json_object_get(o, "referenced_data_files"),
                          icm_cli_json_str(f->referenced_data_file), &ctx->ok);
        icm_cli_json_set(o, "deletion_vectors", json_integer((json_int_t)n), &ctx->ok);
        icm_cli_json_set(o, "record_count", icm_cli_json_int(ctx->record_counts[row]),
                         &ctx->ok);
        return;
    }
    char records[24];
    if (!icm_cli_grid_set(ctx->grid, row, 2,
                          icm_cli_format_int64(ctx->record_counts[row], records,
                                               sizeof records)))
        ctx->ok = false;
    /* text: the first data file, then how many more */
    char *first = ctx->first_refs[row];
    char *text = malloc(strlen(first != NULL ? first : "-") + 32);
    if (text == NULL) {
        ctx->ok = false;
        return;
    }
    sprintf(text, "%s (+%zu more)", first != NULL ? first : "-", n - 1);
    if (!icm_cli_grid_set(ctx->grid, row, 5, text))
        ctx->ok = false;
    free(text);
}

/* Remember per row what a later deletion vector of the same file needs. */
static bool track_row(files_ctx *ctx, const icm_data_file *f, int kind)
{
    size_t *counts = realloc(ctx->vector_counts, (ctx->nrows + 1) * sizeof *counts);
    if (counts == NULL)
        return false;
    ctx->vector_counts = counts;
    int64_t *records = realloc(ctx->record_counts, (ctx->nrows + 1) * sizeof *records);
    if (records == NULL)
        return false;
    ctx->record_counts = records;
    char **refs = realloc(ctx->first_refs, (ctx->nrows + 1) * sizeof *refs);
    if (refs == NULL)
        return false;
    ctx->first_refs = refs;
    records[ctx->nrows] = f->record_count;
    counts[ctx->nrows] = kind == KIND_DV ? 1 : 0;
    refs[ctx->nrows] = NULL;
    if (kind == KIND_DV && f->referenced_data_file != NULL) {
        refs[ctx->nrows] = strdup(f->referenced_data_file);
        if (refs[ctx->nrows] == NULL)
            return false;
    }
    ctx->nrows++;
    return true;
}

static int on_entry(const icm_manifest_entry *e, void *payload)
{
    files_ctx *ctx = payload;
    if (e->status == ICM_ENTRY_DELETED)
        return 0; /* removed in this manifest's snapshot: not live */
    const icm_data_file *f = &e->data_file;
    int kind = file_kind(f);
    if (kind == KIND_DV) {
        int vector = first_vector(ctx, f);
        if (vector <= 0) {
            ctx->ok = vector == 0;
            return ctx->ok ? 0 : ICM_EUSER;
        }
    }
    /* Rows are added in the order identities are first seen, so an identity's number is its
     * row. */
    size_t row = 0;
    int added = add_identity(&ctx->files_seen, f->file_path, &row);
    if (added < 0) {
        ctx->ok = false;
        return ICM_EUSER;
    }
    if (added == 0) {
        if (kind == KIND_DV)
            add_vector_to_row(ctx, row, f);
        return ctx->ok ? 0 : ICM_EUSER;
    }
    if (!track_row(ctx, f, kind)) {
        ctx->ok = false;
        return ICM_EUSER;
    }
    ctx->counts[kind]++;
    ctx->total_size_bytes += f->file_size_in_bytes;
    if (ctx->arr != NULL)
        add_json_row(ctx, f, kind);
    else
        add_text_row(ctx, f, kind);
    return ctx->ok ? 0 : ICM_EUSER;
}

/* Should this manifest be read? With --all, only the first time it is seen. */
static int first_visit(files_ctx *ctx, const char *manifest_path)
{
    if (!ctx->all)
        return 1;
    int added = add_identity(&ctx->manifests_seen, manifest_path, NULL);
    if (added < 0)
        ctx->ok = false;
    return added;
}

static int on_manifest(const icm_manifest_file *mf, void *payload)
{
    files_ctx *ctx = payload;
    int visit = first_visit(ctx, mf->manifest_path);
    if (visit <= 0)
        return visit < 0 ? ICM_EUSER : 0;
    return icm_manifest_read(ctx->io, mf, &ctx->read_opts, on_entry, ctx);
}

/* Returns 0 or the failing library code (ICM_EUSER when ctx->ok went false). */
static int snapshot_files(files_ctx *ctx, int format_version, const icm_snapshot *snap)
{
    if (snap->manifest_list != NULL) {
        icm_manifest_list_read_options opts = ICM_MANIFEST_LIST_READ_OPTIONS_INIT;
        opts.format_version = format_version;
        return icm_manifest_list_read(ctx->io, snap->manifest_list, &opts, on_manifest, ctx);
    }
    for (size_t i = 0; i < snap->manifest_count; i++) {
        int visit = first_visit(ctx, snap->manifests[i]);
        if (visit < 0)
            return ICM_EUSER;
        if (visit == 0)
            continue;
        int rc = icm_manifest_read_v1_embedded(ctx->io, snap->manifests[i], snap->snapshot_id,
                                               &ctx->read_opts, on_entry, ctx);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int collect(icm_cli *cli, const icm_cli_table *t, const icm_snapshot *snap,
                   files_ctx *ctx)
{
    int fv = icm_table_metadata_format_version(t->md);
    int rc = 0;
    if (ctx->all) {
        size_t n = icm_table_metadata_snapshot_count(t->md);
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = snapshot_files(ctx, fv, icm_table_metadata_snapshot_at(t->md, i));
    } else if (snap != NULL) {
        rc = snapshot_files(ctx, fv, snap);
    }
    if (!ctx->ok)
        return ctx->arr != NULL ? icm_cli_json_failed() : icm_cli_oom();
    return rc == 0 ? ICM_EXIT_OK : icm_cli_fail(cli, rc);
}

static int print_json(const icm_cli_table *t, const icm_snapshot *snap, files_ctx *ctx)
{
    json_t *doc = json_object();
    bool ok = doc != NULL;
    if (doc == NULL)
        return icm_cli_oom();
    icm_cli_json_set(doc, "metadata_location", icm_cli_json_str(t->metadata_location), &ok);
    icm_cli_json_set(doc, "snapshot_id",
                     snap != NULL && !ctx->all ? icm_cli_json_int(snap->snapshot_id)
                                               : json_null(),
                     &ok);
    icm_cli_json_set(doc, "all", json_boolean(ctx->all), &ok);
    icm_cli_json_set(doc, "files", ctx->arr, &ok);
    ctx->arr = NULL;
    json_t *counts = json_object();
    for (int k = 0; counts != NULL && k < KIND_COUNT; k++)
        icm_cli_json_set(counts, kind_names[k], json_integer((json_int_t)ctx->counts[k]), &ok);
    icm_cli_json_set(doc, "counts", counts, &ok);
    icm_cli_json_set(doc, "total_size_bytes", icm_cli_json_int(ctx->total_size_bytes), &ok);
    return icm_cli_json_print(doc, ok);
}

static void print_human(const files_ctx *ctx)
{
    size_t total = 0;
    for (int k = 0; k < KIND_COUNT; k++)
        total += ctx->counts[k];
    if (total > 0)
        icm_cli_grid_print(ctx->grid, stdout);
    printf("%zu files (%zu data, %zu position deletes, %zu equality deletes, %zu deletion "
           "vectors), %" PRId64 " bytes\n",
           total, ctx->counts[KIND_DATA], ctx->counts[KIND_POS], ctx->counts[KIND_EQ],
           ctx->counts[KIND_DV], ctx->total_size_bytes);
}

static int parse_args(int argc, char **argv, const char **table, const char **snapshot_id,
                      bool *all)
{
    bool after_dashdash = false;
    for (int i = 1; i < argc; i++) {
        if (!after_dashdash && strcmp(argv[i], "--all") == 0) {
            *all = true;
            continue;
        }
        int m = after_dashdash ? 0 : icm_cli_opt_value(argc, argv, &i, "--snapshot-id",
                                                       snapshot_id);
        if (m < 0)
            return ICM_EXIT_USAGE;
        if (m > 0)
            continue;
        int rc = icm_cli_take_table("files", argv, i, &after_dashdash, table);
        if (rc != ICM_EXIT_OK)
            return rc;
    }
    if (*all && *snapshot_id != NULL)
        return icm_cli_usage("--all", "cannot be combined with --snapshot-id");
    return icm_cli_need_table("files", *table);
}

static int run_files(icm_cli *cli, int argc, char **argv)
{
    const char *table = NULL, *snapshot_id = NULL;
    bool all = false;
    int rc = parse_args(argc, argv, &table, &snapshot_id, &all);
    if (rc != ICM_EXIT_OK)
        return rc;
    icm_cli_table t;
    rc = icm_cli_table_open(cli, table, &t);
    if (rc != ICM_EXIT_OK)
        return rc;

    static const char *const headers[] = {"KIND", "FORMAT", "RECORDS", "SIZE_BYTES", "PATH",
                                          "REFERENCED_DATA_FILE"};
    files_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.manifests_seen = ctx.files_seen = ctx.vectors_seen = (icm__strset)ICM__STRSET_INIT;
    ctx.io = t.io;
    ctx.all = all;
    ctx.ok = true;
    ctx.read_opts = (icm_manifest_read_options)ICM_MANIFEST_READ_OPTIONS_INIT;
    ctx.read_opts.fields = ICM_MANIFEST_FIELD_FILE_PATH | ICM_MANIFEST_FIELD_FILE_FORMAT |
                           ICM_MANIFEST_FIELD_RECORD_COUNT | ICM_MANIFEST_FIELD_FILE_SIZE |
                           ICM_MANIFEST_FIELD_REFERENCED_DATA_FILE |
                           ICM_MANIFEST_FIELD_CONTENT_OFFSET;
    ctx.read_opts.format_version = icm_table_metadata_format_version(t.md);
    const icm_snapshot *snap = NULL;
    if (!all)
        rc = icm_cli_pick_snapshot(&t, snapshot_id, &snap);
    if (rc == ICM_EXIT_OK) {
        if (cli->json)
            ctx.arr = json_array();
        else
            ctx.grid = icm_cli_grid_new(sizeof headers / sizeof headers[0], headers);
        if (ctx.arr == NULL && ctx.grid == NULL)
            rc = icm_cli_oom();
    }
    if (rc == ICM_EXIT_OK)
        rc = collect(cli, &t, snap, &ctx);
    if (rc == ICM_EXIT_OK) {
        if (cli->json)
            rc = print_json(&t, snap, &ctx);
        else
            print_human(&ctx);
    }
    json_decref(ctx.arr);
    icm_cli_grid_free(ctx.grid);
    icm__strset_dispose(&ctx.manifests_seen);
    icm__strset_dispose(&ctx.files_seen);
    icm__strset_dispose(&ctx.vectors_seen);
    for (size_t i = 0; i < ctx.nrows; i++)
        free(ctx.first_refs[i]);
    free(ctx.first_refs);
    free(ctx.vector_counts);
    free(ctx.record_counts);
    icm_cli_table_close(&t);
    return rc;
}

const icm_cli_command icm_cli_cmd_files = {
    "files",
    "live data and delete files of a snapshot, or of all snapshots (--all)",
    files_help,
    run_files,
};
