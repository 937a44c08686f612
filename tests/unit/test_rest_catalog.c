/*
 * test_rest_catalog.c: the REST catalog back end (src/catalog/rest) against a scripted
 * Iceberg REST server served by a thread of this test on 127.0.0.1.
 *
 * Configuration: GET /v1/config first (with ?warehouse=), defaults < client < overrides, the
 * prefix inserted verbatim (and no empty segment without one), header.* sent, a load with
 * the vended-credentials header and never `snapshots`, the table configuration (server
 * override, load `config`, the longest matching storage credential). Paths: namespace levels
 * holding '.', '/', space and a literal "%1F" each encoded, joined with %1F or the advertised
 * separator; listings followed through their page tokens and nested namespaces. OAuth2: the
 * client-credentials form, the bearer token, renewal after a 401 with the request sent once
 * more. Commits: every status to its exact icm code and how many times the POST was sent
 * (200, 409, 400, 401 after renewal, 403, 404, 429 re-sent, 500, 502, 503 with and without
 * Retry-After, 504, a connection dropped after the request, an unreadable 200, 409 after a
 * re-send), and the request body carrying the identifier and every requirement. Errors: the
 * Iceberg error shape to http_status / remote_code, a proxy's HTML page. The table's FileIO
 * comes from the load's configuration.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "catalog/catalog_internal.h"
#include "icemaint/catalog.h"
#include "icemaint/sys/catalog.h"
#include "icemaint/sys/fileio.h"
#include "icemaint/update.h"
#include "io/sigv4.h"
#include "rest_server.h"
#include "testutil.h"

/* ---- fixtures ---- */

#define UUID "9c12d441-03fe-4693-9a96-a0705ddf69c1"

/* A v2 table with snapshots 1 and 2, main at 2 and tag t1 at 1, at `location`. */
static char *metadata_json(const char *location)
{
    return icmt_sprintf(
        "{\"format-version\":2,\"table-uuid\":\"" UUID "\",\"location\":\"%s\","
        "\"last-sequence-number\":2,\"last-updated-ms\":1700000000000,\"last-column-id\":1,"
        "\"current-schema-id\":0,\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,"
        "\"fields\":[{\"id\":1,\"name\":\"x\",\"required\":false,\"type\":\"long\"}]}],"
        "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
        "\"last-partition-id\":999,\"default-sort-order-id\":0,"
        "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"properties\":{},"
        "\"current-snapshot-id\":2,"
        "\"snapshots\":[{\"snapshot-id\":1,\"sequence-number\":1,\"timestamp-ms\":1700000000000,"
        "\"manifest-list\":\"%s/metadata/snap-1.avro\",\"summary\":{\"operation\":\"append\"},"
        "\"schema-id\":0},{\"snapshot-id\":2,\"parent-snapshot-id\":1,\"sequence-number\":2,"
        "\"timestamp-ms\":1700000001000,\"manifest-list\":\"%s/metadata/snap-2.avro\","
        "\"summary\":{\"operation\":\"append\"},\"schema-id\":0}],"
        "\"refs\":{\"main\":{\"snapshot-id\":2,\"type\":\"branch\"},"
        "\"t1\":{\"snapshot-id\":1,\"type\":\"tag\"}},"
        "\"snapshot-log\":[],\"metadata-log\":[]}",
        location, location, location);
}

/* A LoadTableResult for `location` with `extra` members (",\"config\":{...}" or ""). */
static char *load_result(const char *location, const char *md_file, const char *extra)
{
    char *md = metadata_json(location);
    char *r = icmt_sprintf("{\"metadata-location\":\"%s\",\"metadata\":%s%s}", md_file, md,
                           extra);
    free(md);
    return r;
}

typedef struct env {
    server *s;
    icm_fileio *io;
    char *uri;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    e->s = server_start();
    e->uri = icmt_sprintf("http://127.0.0.1:%d", e->s->port);
    icmt_ok(icm_fileio_resolving_new(&e->io, NULL, 0));
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    server_stop(e->s);
    icm_fileio_free(e->io);
    free(e->uri);
    free(e);
    return 0;
}

/* Open a REST catalog on the fake server with `extra` properties (key, value pairs, NULL
 * ended) beyond uri. */
static int open_cat(env *e, icm_catalog **out, const char *const *extra)
{
    icm_property props[16];
    size_t n = 0;
    props[n++] = (icm_property){"uri", e->uri};
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i += 2)
        props[n++] = (icm_property){extra[i], extra[i + 1]};
    return icm_catalog_open_rest(out, "rest_test", e->io, props, n);
}

static icm_table_ident ident(const char *const *levels, size_t n, const char *name)
{
    return (icm_table_ident){"", name, levels, n};
}

static const char *const NS[] = {"ns"};

/* ---- configuration and paths ---- */

static void test_config_merge_and_prefix(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config?warehouse=s3%3A%2F%2Fwh%20b",
           200,
           "{\"defaults\":{\"clients\":\"4\",\"s3.endpoint\":\"http://default\","
           "\"s3.region\":\"eu-1\"},"
           "\"overrides\":{\"prefix\":\"p/x\",\"s3.endpoint\":\"http://override\"}}");
    char *body = load_result(
        "s3://bucket/wh/t", "s3://bucket/wh/t/metadata/00002-a.metadata.json",
        ",\"config\":{\"s3.access-key-id\":\"AKCONFIG\",\"client.region\":\"us-2\"},"
        "\"storage-credentials\":["
        "{\"prefix\":\"s3://bucket\",\"config\":{\"s3.access-key-id\":\"AKBUCKET\"}},"
        "{\"prefix\":\"s3://bucket/wh/t\",\"config\":{\"s3.access-key-id\":\"AKTABLE\","
        "\"s3.session-token\":\"ST\"}},"
        "{\"prefix\":\"s3://other\",\"config\":{\"s3.access-key-id\":\"AKOTHER\"}}]");
    route1(e->s, "GET", "/v1/p/x/namespaces/ns/tables/tbl", 200, body);
    const char *extra[] = {"warehouse", "s3://wh b", "token", "tok-1", "header.X-Custom", "v 1",
                           "s3.region", "client-region", NULL};
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, extra));
    assert_string_equal(icm_catalog_kind(cat), "rest");
    const req *cfg = nth(e->s, 0);
    assert_string_equal(cfg->method, "GET");
    assert_string_equal(cfg->path, "/v1/config?warehouse=s3%3A%2F%2Fwh%20b");
    assert_string_equal(header(cfg, "Authorization"), "Bearer tok-1");
    assert_string_equal(header(cfg, "X-Custom"), "v 1");

    icm_table_ident id = ident(NS, 1, "tbl");
    icm_catalog_table_info info;
    icmt_ok(cat->methods->load_table_info(cat, &id, &info));
    const req *load = nth(e->s, -1);
    assert_string_equal(load->path, "/v1/p/x/namespaces/ns/tables/tbl");
    assert_null(strstr(load->path, "snapshots"));
    assert_string_equal(header(load, "X-Iceberg-Access-Delegation"), "vended-credentials");
    assert_string_equal(header(load, "Authorization"), "Bearer tok-1");
    assert_string_equal(info.metadata_location, "s3://bucket/wh/t/metadata/00002-a.metadata.json");
    assert_non_null(info.metadata);
    assert_string_equal(icm_table_metadata_uuid(info.metadata), UUID);
    /* the table's FileIO configuration: what the server added (s3.endpoint overridden,
     * defaults the client did not set), then config, then the longest matching credential;
     * the client's own (s3.region) is not repeated: the catalog FileIO has it */
    const char *ak = icm_fileio_property(info.config, info.n_config, "s3.access-key-id");
    assert_string_equal(ak, "AKTABLE");
    assert_string_equal(icm_fileio_property(info.config, info.n_config, "s3.session-token"), "ST");
    assert_string_equal(icm_fileio_property(info.config, info.n_config, "client.region"), "us-2");
    assert_string_equal(icm_fileio_property(info.config, info.n_config, "s3.endpoint"),
                        "http://override");
    assert_string_equal(icm_fileio_property(info.config, info.n_config, "clients"), "4");
    assert_null(icm_fileio_property(info.config, info.n_config, "s3.region"));
    icm_catalog_table_info_dispose(&info);
    icm_catalog_free(cat);
    free(body);
}

static void test_no_prefix_no_empty_segment(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{\"defaults\":{},\"overrides\":{}}");
    char *body = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    route1(e->s, "GET", "/v1/namespaces/ns/tables/tbl", 200, body);
    icm_catalog *cat = NULL;
    char *slash_uri = icmt_sprintf("%s/", e->uri); /* a trailing slash is no empty segment */
    icm_property props[] = {{"uri", slash_uri}};
    icmt_ok(icm_catalog_open_rest(&cat, "c", e->io, props, 1));
    char *loc = NULL;
    icmt_ok(icm_catalog_load_table_location(&loc, cat, "ns.tbl"));
    assert_string_equal(loc, "/wh/t/metadata/00001-a.metadata.json");
    assert_string_equal(nth(e->s, -1)->path, "/v1/namespaces/ns/tables/tbl");
    assert_null(header(nth(e->s, 0), "Authorization"));
    icm_free(loc);
    icm_catalog_free(cat);
    free(slash_uri);
    free(body);
}

static void test_namespace_encoding(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    const char *levels[] = {"a.b", "c/d e", "p%1Fq"};
    const char *path = "/v1/namespaces/a.b%1Fc%2Fd%20e%1Fp%251Fq/tables/t%2F1%20%2B";
    char *body = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    route1(e->s, "GET", path, 200, body);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    icm_table_ident id = ident(levels, 3, "t/1 +");
    char *loc = NULL;
    icmt_ok(cat->methods->load_table(cat, &id, &loc));
    assert_string_equal(nth(e->s, -1)->path, path);
    icm_free(loc);
    icm_catalog_free(cat);

    /* an advertised separator replaces %1F */
    route1(e->s, "GET", "/v1/config", 200,
           "{\"overrides\":{\"namespace-separator\":\"%1E\"}}");
    const char *sep_path = "/v1/namespaces/a.b%1Ec%2Fd%20e%1Ep%251Fq/tables/t%2F1%20%2B";
    route1(e->s, "GET", sep_path, 200, body);
    icmt_ok(open_cat(e, &cat, NULL));
    icmt_ok(cat->methods->load_table(cat, &id, &loc));
    assert_string_equal(nth(e->s, -1)->path, sep_path);
    icm_free(loc);
    icm_catalog_free(cat);
    free(body);
}

typedef struct names {
    char *v[16];
    int n;
} names;

static int take_name(const char *name, void *payload)
{
    names *ns = payload;
    assert_true(ns->n < 16);
    ns->v[ns->n++] = strdup(name);
    return 0;
}

static void names_free(names *ns)
{
    for (int i = 0; i < ns->n; i++)
        free(ns->v[i]);
    ns->n = 0;
}

static void test_listings_pages_and_nesting(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{\"overrides\":{\"prefix\":\"cat\"}}");
    route1(e->s, "GET", "/v1/cat/namespaces", 200,
           "{\"namespaces\":[[\"a\"]],\"next-page-token\":\"tok/1 2\"}");
    route1(e->s, "GET", "/v1/cat/namespaces?pageToken=tok%2F1%202", 200,
           "{\"namespaces\":[[\"b.c\"]],\"next-page-token\":null}");
    route1(e->s, "GET", "/v1/cat/namespaces?parent=a", 200, "{\"namespaces\":[[\"a\",\"x\"]]}");
    route1(e->s, "GET", "/v1/cat/namespaces?parent=a%1Fx", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/cat/namespaces?parent=b.c", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/cat/namespaces/a%1Fx/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"a\",\"x\"],\"name\":\"t1\"}],"
           "\"next-page-token\":\"p2\"}");
    route1(e->s, "GET", "/v1/cat/namespaces/a%1Fx/tables?pageToken=p2", 200,
           "{\"identifiers\":[{\"namespace\":[\"a\",\"x\"],\"name\":\"t2\"}]}");
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    names ns = {{0}, 0};
    icmt_ok(cat->methods->list_all_namespaces(cat, take_name, &ns));
    assert_int_equal(ns.n, 3);
    assert_string_equal(ns.v[0], "a");
    assert_string_equal(ns.v[1], "a.x");
    assert_string_equal(ns.v[2], "b.c");
    names_free(&ns);
    icmt_ok(icm_catalog_list_namespaces(cat, "a", take_name, &ns));
    assert_int_equal(ns.n, 1);
    assert_string_equal(ns.v[0], "a.x");
    names_free(&ns);
    icmt_ok(icm_catalog_list_tables(cat, "a.x", take_name, &ns));
    assert_int_equal(ns.n, 2);
    assert_string_equal(ns.v[0], "t1");
    assert_string_equal(ns.v[1], "t2");
    names_free(&ns);
    icm_catalog_free(cat);
}

/* Data-loss class "namespace level with a dot": the other-table walk (the sweep's guard,
 * expiry's hold, retention) lists a REST catalog level by level. Joined and split on '.', the
 * level "a.b" became the namespace a -> b: its table t1 was never seen (and a -> b's t2 was
 * listed in its place), so t1's files were nobody's as far as the guard could tell. */
typedef struct seen_tables {
    char *v[8];
    int n;
} seen_tables;

static int take_other_levels(const icm__other_table *o, void *payload)
{
    seen_tables *st = payload;
    assert_true(st->n < 8);
    assert_non_null(o->id);
    char *levels = icmt_sprintf("%zu", o->id->n_levels);
    for (size_t i = 0; i < o->id->n_levels; i++) {
        char *next = icmt_sprintf("%s|%s", levels, o->id->levels[i]);
        free(levels);
        levels = next;
    }
    st->v[st->n++] = icmt_sprintf("%s|%s @ %s", levels, o->name, o->roots[0]);
    free(levels);
    return 0;
}

static void test_other_tables_walked_by_levels(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    route1(e->s, "GET", "/v1/namespaces", 200, "{\"namespaces\":[[\"a\"],[\"a.b\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=a", 200, "{\"namespaces\":[[\"a\",\"b\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=a%1Fb", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/namespaces?parent=a.b", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/namespaces/a/tables", 200, "{\"identifiers\":[]}");
    route1(e->s, "GET", "/v1/namespaces/a.b/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"a.b\"],\"name\":\"t1\"}]}");
    route1(e->s, "GET", "/v1/namespaces/a%1Fb/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"a\",\"b\"],\"name\":\"t2\"}]}");
    char *t1 = load_result("/wh/dotted/t1", "/wh/dotted/t1/metadata/00001-a.metadata.json", "");
    char *t2 = load_result("/wh/nested/t2", "/wh/nested/t2/metadata/00001-a.metadata.json", "");
    route1(e->s, "GET", "/v1/namespaces/a.b/tables/t1", 200, t1);
    route1(e->s, "GET", "/v1/namespaces/a%1Fb/tables/t2", 200, t2);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    seen_tables st = {{NULL}, 0};
    icmt_ok(icm__catalog_each_other_table(cat, "x.self", take_other_levels, &st));
    assert_int_equal(st.n, 2);
    assert_string_equal(st.v[0], "2|a|b|t2 @ /wh/nested/t2"); /* depth first: a, a -> b, a.b */
    assert_string_equal(st.v[1], "1|a.b|t1 @ /wh/dotted/t1");
    /* the swept table is a.b.t2 by its dotted name: a -> b -> t2 is skipped, never a.b's */
    for (int i = 0; i < st.n; i++)
        free(st.v[i]);
    st.n = 0;
    icmt_ok(icm__catalog_each_other_table(cat, "a.b.t1", take_other_levels, &st));
    assert_int_equal(st.n, 2); /* ["a.b"].t1 is not "a.b.t1" (the levels a, b) */
    for (int i = 0; i < st.n; i++)
        free(st.v[i]);
    st.n = 0;
    icmt_ok(icm__catalog_each_other_table(cat, "a.b.t2", take_other_levels, &st));
    assert_int_equal(st.n, 1);
    assert_string_equal(st.v[0], "1|a.b|t1 @ /wh/dotted/t1");
    free(st.v[0]);
    icm_catalog_free(cat);
    free(t1);
    free(t2);
}

/* load_result with the table-uuid `uuid` (as long as UUID) in place of UUID. */
static char *load_result_uuid(const char *location, const char *md_file, const char *uuid)
{
    char *r = load_result(location, md_file, "");
    char *at = strstr(r, UUID);
    assert_non_null(at);
    assert_int_equal(strlen(uuid), strlen(UUID));
    memcpy(at, uuid, strlen(uuid));
    return r;
}

static void seen_clear(seen_tables *st)
{
    for (int i = 0; i < st->n; i++)
        free(st->v[i]);
    st->n = 0;
}

/* Data-loss class "a registered copy named like the table once split at its dots": the table
 * opened by its levels n -> "b.t" was matched by its identifier split at every dot, n -> b ->
 * t, so a copy registered at n -> b -> t from the table's older metadata file (the same
 * table-uuid, since it is the same table's file) was skipped as the table itself, and the
 * metadata file it stands on was no other table's: metadata retention after a commit, the
 * sweep and expiry's hold could delete it. The table is matched by the parts it was opened
 * by; a candidate alike only when joined needs the table-uuid AND the current metadata file. */
static void test_registered_copy_named_like_the_table_split_at_dots_is_another_table(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    route1(e->s, "GET", "/v1/namespaces", 200, "{\"namespaces\":[[\"n\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=n", 200, "{\"namespaces\":[[\"n\",\"b\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=n%1Fb", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/namespaces/n/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"n\"],\"name\":\"b.t\"}]}");
    route1(e->s, "GET", "/v1/namespaces/n%1Fb/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"n\",\"b\"],\"name\":\"t\"}]}");
    const char *uuid = "aaaaaaaa-03fe-4693-9a96-a0705ddf69c1";
    char *table = load_result_uuid("/wh/x", "/wh/x/metadata/00002-b.metadata.json", uuid);
    char *copy = load_result_uuid("/wh/x", "/wh/x/metadata/00001-a.metadata.json", uuid);
    route1(e->s, "GET", "/v1/namespaces/n/tables/b.t", 200, table);
    route1(e->s, "GET", "/v1/namespaces/n%1Fb/tables/t", 200, copy);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    seen_tables st = {{NULL}, 0};

    const char *n[] = {"n"};
    icm_table *t = NULL;
    icmt_ok(icm_table_load_levels(&t, cat, n, 1, "b.t"));
    icmt_ok(icm__catalog_each_other_table_of(t, take_other_levels, &st));
    assert_int_equal(st.n, 1);
    assert_string_equal(st.v[0], "2|n|b|t @ /wh/x");
    seen_clear(&st);
    icm_table_free(t);

    /* The copy opened by its levels: the table n -> "b.t" is another table to it as well
     * (alike only when joined, and its current metadata file is not the copy's). */
    icmt_ok(icm_table_load(&t, cat, "n.b.t"));
    icmt_ok(icm__catalog_each_other_table_of(t, take_other_levels, &st));
    assert_int_equal(st.n, 1);
    assert_string_equal(st.v[0], "1|n|b.t @ /wh/x");
    seen_clear(&st);
    icm_table_free(t);

    icm_catalog_free(cat);
    free(table);
    free(copy);
}

/* Data-loss class "another table whose name has a dot" (adversary round 20, H1): namespace n
 * with table "b.t" and namespace n -> b with table t are both "n.b.t" joined with '.'. The
 * walk compared the swept table's dotted identifier with levels and name joined, so the
 * sweep of n.b.t skipped n's "b.t" as the table itself, and its files below n.b.t's location
 * were swept. The table itself is the one with the same parts and, when the walk knows it,
 * the same table-uuid; one alike only when joined must also have its metadata file. */
static void test_other_table_whose_name_has_a_dot_is_not_taken_for_the_table_itself(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    route1(e->s, "GET", "/v1/namespaces", 200, "{\"namespaces\":[[\"n\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=n", 200, "{\"namespaces\":[[\"n\",\"b\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=n%1Fb", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/namespaces/n/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"n\"],\"name\":\"b.t\"}]}");
    route1(e->s, "GET", "/v1/namespaces/n%1Fb/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"n\",\"b\"],\"name\":\"t\"}]}");
    char *x = load_result_uuid("/wh/x", "/wh/x/metadata/00001-a.metadata.json",
                               "aaaaaaaa-03fe-4693-9a96-a0705ddf69c1");
    char *y = load_result_uuid("/wh/y", "/wh/y/metadata/00001-a.metadata.json",
                               "bbbbbbbb-03fe-4693-9a96-a0705ddf69c1");
    route1(e->s, "GET", "/v1/namespaces/n%1Fb/tables/t", 200, x);
    route1(e->s, "GET", "/v1/namespaces/n/tables/b.t", 200, y);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    seen_tables st = {{NULL}, 0};

    /* By name alone (retention's walk): n.b.t is n -> b -> t, never n's "b.t". */
    icmt_ok(icm__catalog_each_other_table(cat, "n.b.t", take_other_levels, &st));
    assert_int_equal(st.n, 1);
    assert_string_equal(st.v[0], "1|n|b.t @ /wh/y");
    seen_clear(&st);

    /* The sweep's and expiry's walk for the table n -> b -> t: the same. */
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "n.b.t"));
    icmt_ok(icm__catalog_each_other_table_of(t, take_other_levels, &st));
    assert_int_equal(st.n, 1);
    assert_string_equal(st.v[0], "1|n|b.t @ /wh/y");
    seen_clear(&st);
    icm_table_free(t);

    /* n's "b.t" opened by its levels (also "n.b.t" as a dotted identifier): n -> b -> t has
     * those parts once split at the dots, but another table-uuid, so it is another table;
     * n's "b.t" is the table itself by its table-uuid and metadata file. */
    const char *n[] = {"n"};
    icmt_ok(icm_table_load_levels(&t, cat, n, 1, "b.t"));
    assert_string_equal(icm_table_get_identifier(t), "n.b.t");
    icmt_ok(icm__catalog_each_other_table_of(t, take_other_levels, &st));
    assert_int_equal(st.n, 1);
    assert_string_equal(st.v[0], "2|n|b|t @ /wh/x");
    seen_clear(&st);
    icm_table_free(t);

    icm_catalog_free(cat);
    free(x);
    free(y);
}

/* What the walk hands over of each table: where it is, or why that cannot be told. */
static int take_other_or_why(const icm__other_table *o, void *payload)
{
    seen_tables *st = payload;
    assert_true(st->n < 8);
    if (o->pointer != NULL) {
        st->v[st->n++] = icmt_sprintf("%s @ %s", o->name, o->roots[0]);
        return 0;
    }
    /* never "not found": a listed table is not known to be gone */
    assert_true(o->md == NULL && !o->lenient && o->md_rc != ICM_ENOTFOUND);
    assert_non_null(o->unreadable);
    assert_null(strchr(o->unreadable, '\n'));
    assert_null(o->roots[0]);
    st->v[st->n++] = icmt_sprintf("%s: %s", o->name, o->unreadable);
    return 0;
}

/* Data-loss class "another table that cannot be loaded" (adversary round 20, H4): every
 * failure to load a listed table was cleared and the table taken for one without files, so
 * a 403 (a principal that may list a table but not load it) or a 404 let the sweep delete its
 * files. A listed table is passed over only when its 404 is confirmed by a fresh listing that
 * no longer names it; otherwise the walk hands it over with why its places cannot be told. */
static void test_other_table_that_cannot_be_loaded_is_never_a_table_without_files(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    route1(e->s, "GET", "/v1/namespaces", 200, "{\"namespaces\":[[\"n\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=n", 200, "{\"namespaces\":[]}");
#define TABLE_ID(name) "{\"namespace\":[\"n\"],\"name\":\"" name "\"}"
    /* the walk's listing; again after z's 404 (still there); again after w's (gone) */
    step lists[] = {
        {200, NULL, "{\"identifiers\":[" TABLE_ID("x") "," TABLE_ID("y") "," TABLE_ID("z") ","
                    TABLE_ID("w") "]}", ANSWER},
        {200, NULL, "{\"identifiers\":[" TABLE_ID("x") "," TABLE_ID("y") "," TABLE_ID("z") ","
                    TABLE_ID("w") "]}", ANSWER},
        {200, NULL, "{\"identifiers\":[" TABLE_ID("x") "," TABLE_ID("y") "," TABLE_ID("z") "]}",
         ANSWER}};
#undef TABLE_ID
    route_set(e->s, "GET", "/v1/namespaces/n/tables", lists, 3);
    char *x = load_result("/wh/x", "/wh/x/metadata/00001-a.metadata.json", "");
    route1(e->s, "GET", "/v1/namespaces/n/tables/x", 200, x);
    route1(e->s, "GET", "/v1/namespaces/n/tables/y", 403,
           "{\"error\":{\"message\":\"not yours\",\"type\":\"ForbiddenException\",\"code\":403}}");
    const char *gone = "{\"error\":{\"message\":\"no such table\",\"type\":"
                       "\"NoSuchTableException\",\"code\":404}}";
    route1(e->s, "GET", "/v1/namespaces/n/tables/z", 404, gone);
    route1(e->s, "GET", "/v1/namespaces/n/tables/w", 404, gone);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    seen_tables st = {{NULL}, 0};
    icmt_ok(icm__catalog_each_other_table(cat, "n.self", take_other_or_why, &st));
    assert_int_equal(st.n, 3);
    assert_string_equal(st.v[0], "x @ /wh/x");
    assert_non_null(strstr(st.v[1], "y: the catalog lists it, but loading it failed: "));
    assert_non_null(strstr(st.v[1], "HTTP 403"));
    assert_non_null(strstr(st.v[2], "z: the catalog lists it, but loading it failed ("));
    assert_non_null(strstr(st.v[2], "HTTP 404"));
    assert_non_null(strstr(st.v[2], "still listed"));
    /* w: its 404 confirmed by the third listing, which no longer names it */
    assert_int_equal(count(e->s, "GET", "/v1/namespaces/n/tables"), 3);
    seen_clear(&st);
    icm_catalog_free(cat);
    free(x);
}

/* ---- OAuth2 ---- */

static void test_oauth_fetch_and_refresh_after_401(void **state)
{
    env *e = *state;
    step tokens[] = {{200, NULL, "{\"access_token\":\"T1\",\"token_type\":\"bearer\","
                                 "\"expires_in\":3600}", ANSWER},
                     {200, NULL, "{\"access_token\":\"T2\",\"token_type\":\"Bearer\"}", ANSWER}};
    route_set(e->s, "POST", "/auth/token", tokens, 2);
    route1(e->s, "GET", "/v1/config", 200, "{}");
    char *body = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    step loads[] = {{401, NULL, "{\"error\":{\"message\":\"expired\",\"type\":"
                                "\"NotAuthorizedException\",\"code\":401}}", ANSWER},
                    {200, NULL, body, ANSWER}};
    route_set(e->s, "GET", "/v1/namespaces/ns/tables/tbl", loads, 2);
    char *auth_uri = icmt_sprintf("%s/auth/token", e->uri);
    const char *extra[] = {"credential", "client:se:cret", "oauth2-server-uri", auth_uri,
                           "scope", "PRINCIPAL_ROLE:ALL", NULL};
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, extra));
    const req *tok = nth(e->s, 0);
    assert_string_equal(tok->path, "/auth/token");
    assert_string_equal(header(tok, "Content-Type"), "application/x-www-form-urlencoded");
    assert_string_equal(tok->body, "grant_type=client_credentials&client_id=client&"
                                   "client_secret=se%3Acret&scope=PRINCIPAL_ROLE%3AALL");
    assert_string_equal(header(nth(e->s, 1), "Authorization"), "Bearer T1");

    char *loc = NULL;
    icmt_ok(icm_catalog_load_table_location(&loc, cat, "ns.tbl"));
    assert_string_equal(loc, "/wh/t/metadata/00001-a.metadata.json");
    /* 401 with T1, a new token, the same request once more with T2 */
    assert_int_equal(count(e->s, "GET", "/v1/namespaces/ns/tables/tbl"), 2);
    assert_int_equal(count(e->s, "POST", "/auth/token"), 2);
    assert_string_equal(header(nth(e->s, -1), "Authorization"), "Bearer T2");
    /* no secret in anything sent but the token request */
    for (int i = 1; i < e->s->n_reqs; i++)
        assert_null(strstr(e->s->reqs[i].headers, "cret"));
    icm_free(loc);
    icm_catalog_free(cat);

    /* a credential without a colon is the secret alone; a refused token request is
     * ICM_EAUTH with the OAuth error, never the secret */
    route1(e->s, "POST", "/v1/oauth/tokens", 401,
           "{\"error\":\"invalid_client\",\"error_description\":\"bad secret\"}");
    const char *alone[] = {"credential", "s3cr3t", NULL};
    assert_int_equal(open_cat(e, &cat, alone), ICM_EAUTH);
    assert_null(cat);
    assert_string_equal(nth(e->s, -1)->body, "grant_type=client_credentials&"
                                             "client_secret=s3cr3t&scope=catalog");
    const icm_error *err = icm_error_last();
    assert_int_equal(err->http_status, 401);
    assert_string_equal(err->remote_code, "invalid_client");
    assert_non_null(strstr(err->message, "bad secret"));
    assert_null(strstr(err->message, "s3cr3t"));
    free(auth_uri);
    free(body);
}

static void test_token_renewed_when_due(void **state)
{
    env *e = *state;
    step tokens[] = {{200, NULL, "{\"access_token\":\"A\",\"token_type\":\"bearer\","
                                 "\"expires_in\":0}", ANSWER},
                     {200, NULL, "{\"access_token\":\"B\",\"token_type\":\"bearer\","
                                 "\"expires_in\":3600}", ANSWER}};
    route_set(e->s, "POST", "/v1/oauth/tokens", tokens, 2);
    route1(e->s, "GET", "/v1/config", 200, "{}");
    char *body = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    route1(e->s, "GET", "/v1/namespaces/ns/tables/tbl", 200, body);
    const char *extra[] = {"credential", "id:secret", NULL};
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, extra));
    char *loc = NULL;
    icmt_ok(icm_catalog_load_table_location(&loc, cat, "ns.tbl"));
    /* A expired at once: B was fetched before the load, which was sent once */
    assert_int_equal(count(e->s, "POST", "/v1/oauth/tokens"), 2);
    assert_int_equal(count(e->s, "GET", "/v1/namespaces/ns/tables/tbl"), 1);
    assert_string_equal(header(nth(e->s, -1), "Authorization"), "Bearer B");
    icm_free(loc);
    icm_catalog_free(cat);
    free(body);
}

/* ---- commits ---- */

#define COMMIT_PATH "/v1/namespaces/ns/tables/tbl"

static icm_table_changes *expiry_changes(void)
{
    icm_table_changes *c = NULL;
    icmt_ok(icm_table_changes_new(&c));
    icmt_ok(icm_table_changes_require_table_uuid(c, UUID));
    int64_t main_id = 2, tag_id = 1;
    icmt_ok(icm_table_changes_require_ref_snapshot_id(c, "main", &main_id));
    icmt_ok(icm_table_changes_require_ref_snapshot_id(c, "t1", &tag_id));
    icmt_ok(icm_table_changes_remove_snapshot_ref(c, "t1"));
    int64_t ids[] = {1};
    icmt_ok(icm_table_changes_remove_snapshots(c, ids, 1));
    return c;
}

/* Commit expiry_changes through a catalog whose commit POST answers `steps`; the code. */
static int commit_with(env *e, const step *steps, int n, const char *const *extra,
                       char **out_loc)
{
    route_set(e->s, "POST", COMMIT_PATH, steps, n);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, extra));
    icm_table_changes *c = expiry_changes();
    icm_table_ident id = ident(NS, 1, "tbl");
    char *loc = NULL;
    int rc = cat->methods->commit_changes(cat, &id, "/wh/t/metadata/00001-a.metadata.json", c,
                                          &loc);
    if (out_loc != NULL)
        *out_loc = loc;
    else
        icm_free(loc);
    icm_table_changes_free(c);
    icm_catalog_free(cat);
    return rc;
}

static const char COMMIT_OK[] =
    "{\"metadata-location\":\"/wh/t/metadata/00002-b.metadata.json\",\"metadata\":{}}";
static const char CONFLICT[] =
    "{\"error\":{\"message\":\"Requirement failed: branch main has changed\","
    "\"type\":\"CommitFailedException\",\"code\":409}}";

static void test_commit_ok_and_body(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    step ok = {200, NULL, COMMIT_OK, ANSWER};
    char *loc = NULL;
    icmt_ok(commit_with(e, &ok, 1, NULL, &loc));
    assert_string_equal(loc, "/wh/t/metadata/00002-b.metadata.json");
    icm_free(loc);
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 1);
    const req *r = nth(e->s, -1);
    assert_string_equal(header(r, "Content-Type"), "application/json");
    /* the identifier, then every requirement (each ref's assert) and update as given */
    json_t *got = icmt_json_parse(r->body);
    json_t *want = icmt_json_parse(
        "{\"identifier\":{\"namespace\":[\"ns\"],\"name\":\"tbl\"},"
        "\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"" UUID "\"},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":2},"
        "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"t1\",\"snapshot-id\":1}],"
        "\"updates\":[{\"action\":\"remove-snapshot-ref\",\"ref-name\":\"t1\"},"
        "{\"action\":\"remove-snapshots\",\"snapshot-ids\":[1]}]}");
    assert_true(json_equal(got, want));
    json_decref(got);
    json_decref(want);
}

typedef struct outcome_case {
    step steps[3];
    int n;
    int want_rc;
    int want_posts;
} outcome_case;

static void test_commit_outcomes(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    const char *err500 = "{\"error\":{\"message\":\"boom\",\"type\":\"CommitStateUnknownException\","
                         "\"code\":500}}";
    const outcome_case cases[] = {
        {{{409, NULL, CONFLICT, ANSWER}}, 1, ICM_ECOMMIT_FAILED, 1},
        {{{400, NULL, "{\"error\":{\"message\":\"bad\",\"type\":\"BadRequestException\","
                      "\"code\":400}}", ANSWER}}, 1, ICM_EINVALID, 1},
        {{{403, NULL, "{\"error\":{\"message\":\"no\",\"type\":\"ForbiddenException\","
                      "\"code\":403}}", ANSWER}}, 1, ICM_EAUTH, 1},
        {{{401, NULL, "{}", ANSWER}}, 1, ICM_EAUTH, 1}, /* a static token cannot be renewed */
        {{{404, NULL, "{\"error\":{\"message\":\"gone\",\"type\":\"NoSuchTableException\","
                      "\"code\":404}}", ANSWER}}, 1, ICM_ENOTFOUND, 1},
        {{{500, NULL, err500, ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1},
        {{{502, NULL, "<html>Bad Gateway</html>", ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1},
        {{{503, NULL, "", ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1}, /* no Retry-After: never re-sent */
        {{{504, NULL, "", ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1},
        {{{418, NULL, "", ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1},
        {{{0, NULL, NULL, DROP}}, 1, ICM_ECOMMIT_UNKNOWN, 1}, /* connection lost after send */
        {{{200, NULL, "not json", ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1},
        {{{200, NULL, "{\"metadata\":{}}", ANSWER}}, 1, ICM_ECOMMIT_UNKNOWN, 1},
        {{{429, "Retry-After: 0\r\n", "", ANSWER}, {200, NULL, COMMIT_OK, ANSWER}}, 2, 0, 2},
        {{{503, "Retry-After: 0\r\n", "", ANSWER}, {200, NULL, COMMIT_OK, ANSWER}}, 2, 0, 2},
        /* a 409 after a re-send may answer our own first attempt */
        {{{429, "Retry-After: 0\r\n", "", ANSWER}, {409, NULL, CONFLICT, ANSWER}}, 2,
         ICM_ECOMMIT_UNKNOWN, 2},
        {{{503, "Retry-After: 0\r\n", "", ANSWER}, {500, NULL, err500, ANSWER}}, 2,
         ICM_ECOMMIT_UNKNOWN, 2},
    };
    const char *extra[] = {"token", "static", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const outcome_case *k = &cases[i];
        int before = count(e->s, "POST", COMMIT_PATH);
        int rc = commit_with(e, k->steps, k->n, extra, NULL);
        if (rc != k->want_rc)
            print_error("case %zu (status %d): got %d (%s), want %d\n", i, k->steps[0].status,
                        rc, icm_error_last()->message, k->want_rc);
        assert_int_equal(rc, k->want_rc);
        assert_int_equal(count(e->s, "POST", COMMIT_PATH) - before, k->want_posts);
        if (rc != 0 && k->steps[k->n - 1].status >= 400) {
            const icm_error *err = icm_error_last();
            assert_int_equal(err->http_status, k->steps[k->n - 1].status);
            assert_non_null(strstr(err->location, COMMIT_PATH));
        }
    }
    /* the Iceberg error type and message reach icm_error */
    step conflict = {409, NULL, CONFLICT, ANSWER};
    assert_int_equal(commit_with(e, &conflict, 1, extra, NULL), ICM_ECOMMIT_FAILED);
    assert_string_equal(icm_error_last()->remote_code, "CommitFailedException");
    assert_non_null(strstr(icm_error_last()->message, "branch main has changed"));
}

/* A commit POST leaves at most once: libcurl sends a request again by itself when the reused
 * keep-alive connection it went out on dies without an answer; a commit that may have been
 * applied would then be answered 409 for our own change and its files cleaned up. */
static void test_commit_never_resent_on_dead_keepalive(void **state)
{
    env *e = *state;
    step kept = {200, NULL, "{}", KEEP}; /* the config answer keeps its connection open */
    route_set(e->s, "GET", "/v1/config", &kept, 1);
    step steps[] = {{0, NULL, NULL, DROP}, {409, NULL, CONFLICT, ANSWER}};
    assert_int_equal(commit_with(e, steps, 2, NULL, NULL), ICM_ECOMMIT_UNKNOWN);
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 1);
}

/* ---- a lost commit answer, reconciled by reloading the table ---- */

/* The LoadTableResult of metadata_json("/wh/t") after expiry_changes applied (snapshot 1 and
 * tag t1 gone), with `uuid` as its table-uuid; `logged` (NULL: none) is its metadata-log's
 * one entry (the base, 00001-a, for a successor of the base). */
static char *applied_load_result(const char *uuid, const char *logged)
{
    char *md = metadata_json("/wh/t");
    json_t *doc = icmt_json_parse(md);
    json_array_remove(json_object_get(doc, "snapshots"), 0);
    json_object_del(json_object_get(doc, "refs"), "t1");
    json_object_set_new(doc, "table-uuid", json_string(uuid));
    if (logged != NULL)
        json_array_append_new(json_object_get(doc, "metadata-log"),
                              json_pack("{s:I,s:s}", "timestamp-ms", (json_int_t)1700000000000,
                                        "metadata-file", logged));
    char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *r = icmt_sprintf("{\"metadata-location\":\"/wh/t/metadata/00002-b.metadata.json\","
                           "\"metadata\":%s}",
                           text);
    free(text);
    json_decref(doc);
    free(md);
    return r;
}

#define BASE_FILE "/wh/t/metadata/00001-a.metadata.json"

static int commit_answered_then(env *e, const step *commit, const step *reloads, int n,
                                icm_table **t_out);

/* Load ns.tbl (its first answer is the base), commit expiry_changes; the commit POST answers
 * 500, the loads after it answer `reloads` in turn. Returns the commit's code; *t_out kept. */
static int commit_unknown_then(env *e, const step *reloads, int n, icm_table **t_out)
{
    step boom = {500, NULL, "{\"error\":{\"message\":\"boom\",\"type\":\"ServerError\","
                            "\"code\":500}}", ANSWER};
    return commit_answered_then(e, &boom, reloads, n, t_out);
}

/* The same with the commit POST answering `commit`. */
static int commit_answered_then(env *e, const step *commit, const step *reloads, int n,
                                icm_table **t_out)
{
    route1(e->s, "GET", "/v1/config", 200, "{}");
    char *base = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    step loads[MAX_STEPS];
    loads[0] = (step){200, NULL, base, ANSWER};
    for (int i = 0; i < n; i++)
        loads[i + 1] = reloads[i];
    route_set(e->s, "GET", COMMIT_PATH, loads, n + 1);
    route_set(e->s, "POST", COMMIT_PATH, commit, 1);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "ns.tbl"));
    icm_table_changes *c = expiry_changes();
    int rc = icm_table_commit_changes(t, c);
    icm_table_changes_free(c);
    icm_catalog_free(cat);
    free(base);
    *t_out = t;
    return rc;
}

static void test_commit_unknown_reconciled_by_reload(void **state)
{
    env *e = *state;
    /* the change is there on the first reload: committed, and said so */
    char *applied = applied_load_result(UUID, BASE_FILE);
    step shown = {200, NULL, applied, ANSWER};
    icm_table *t = NULL;
    icmt_ok(commit_unknown_then(e, &shown, 1, &t));
    assert_true(icm_table_last_commit_reconciled(t));
    assert_string_equal(icm_table_get_metadata_location(t),
                        "/wh/t/metadata/00002-b.metadata.json");
    assert_string_equal(icm_table_last_commit_location(t),
                        "/wh/t/metadata/00002-b.metadata.json");
    assert_int_equal(icm_table_commit_warning_count(t), 1);
    assert_non_null(strstr(icm_table_commit_warning(t, 0), "the commit's answer was lost"));
    assert_non_null(strstr(icm_table_commit_warning(t, 0), "shows the change in place"));
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 1);
    assert_int_equal(count(e->s, "GET", COMMIT_PATH), 2);
    icm_table_free(t);
    free(applied);
}

static void test_commit_unknown_not_shown_stays_unknown(void **state)
{
    env *e = *state;
    /* the base on every reload: a request on its way may still apply it; still unknown */
    char *base = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    step same = {200, NULL, base, ANSWER};
    icm_table *t = NULL;
    assert_int_equal(commit_unknown_then(e, &same, 1, &t), ICM_ECOMMIT_UNKNOWN);
    assert_false(icm_table_last_commit_reconciled(t));
    assert_non_null(strstr(icm_error_last()->message, "boom"));
    assert_non_null(strstr(icm_error_last()->message, "does not show the change"));
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 1);
    assert_int_equal(count(e->s, "GET", COMMIT_PATH), 4); /* the load and three reloads */
    icm_table_free(t);
    free(base);
}

static void test_commit_unknown_other_table_or_no_reload(void **state)
{
    env *e = *state;
    /* the effect in a stale answer (no successor of the base: a lagging replica) tells
     * nothing (docs/semantics.md#commit-outcomes) */
    char *stale = applied_load_result(UUID, NULL);
    step lagging = {200, NULL, stale, ANSWER};
    icm_table *t0 = NULL;
    assert_int_equal(commit_unknown_then(e, &lagging, 1, &t0), ICM_ECOMMIT_UNKNOWN);
    assert_false(icm_table_last_commit_reconciled(t0));
    assert_null(icm_table_last_commit_location(t0));
    icm_table_free(t0);
    free(stale);
    /* the change's effect in a table of another uuid (dropped and created again): not ours */
    char *other = applied_load_result("0b0b0b0b-0000-4000-8000-000000000000", BASE_FILE);
    step replaced = {200, NULL, other, ANSWER};
    icm_table *t = NULL;
    assert_int_equal(commit_unknown_then(e, &replaced, 1, &t), ICM_ECOMMIT_UNKNOWN);
    assert_false(icm_table_last_commit_reconciled(t));
    icm_table_free(t);
    free(other);
    /* every reload fails: unknown, and the message says the reload failed too */
    step gone = {404, NULL, "{\"error\":{\"message\":\"no\",\"type\":\"NoSuchTableException\","
                            "\"code\":404}}", ANSWER};
    assert_int_equal(commit_unknown_then(e, &gone, 1, &t), ICM_ECOMMIT_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "reloading the table failed too"));
    icm_table_free(t);
}

/* Data-loss class "refused after it was passed on": a gateway passes
 * the commit on, the catalog applies it, the gateway answers 401. Before a transaction deletes
 * its files for a refusal, the table is reloaded: the change there → committed; no reload →
 * unknown; reloads without it → the refusal stands (cleanable). */
static void test_refusal_checked_by_reloading(void **state)
{
    env *e = *state;
    step refused = {401, NULL, "{\"error\":{\"message\":\"no\",\"type\":\"NotAuthorizedException\","
                               "\"code\":401}}", ANSWER};
    char *applied = applied_load_result(UUID, BASE_FILE);
    step shown = {200, NULL, applied, ANSWER};
    icm_table *t = NULL;
    icmt_ok(commit_answered_then(e, &refused, &shown, 1, &t));
    assert_true(icm_table_last_commit_reconciled(t));
    assert_non_null(strstr(icm_table_commit_warning(t, 0), "the catalog refused the commit"));
    icm_table_free(t);
    step gone = {404, NULL, "{\"error\":{\"message\":\"no\",\"type\":\"NoSuchTableException\","
                            "\"code\":404}}", ANSWER};
    assert_int_equal(commit_answered_then(e, &refused, &gone, 1, &t), ICM_ECOMMIT_UNKNOWN);
    assert_non_null(strstr(icm_error_last()->message, "reloading the table failed"));
    icm_table_free(t);
    char *base = load_result("/wh/t", BASE_FILE, "");
    step same = {200, NULL, base, ANSWER};
    assert_int_equal(commit_answered_then(e, &refused, &same, 1, &t), ICM_EAUTH);
    assert_int_equal(icm_error_last()->http_status, 401);
    assert_false(icm_table_last_commit_reconciled(t));
    icm_table_free(t);
    free(base);
    free(applied);
}

/* Data-loss class "stale reload after a commit": the commit is
 * answered 200 with its new metadata file, the reload after it answers an older one (a lagging
 * replica). The table keeps the state it had; the committed file is the catalog's answer. */
static void test_commit_then_stale_reload(void **state)
{
    env *e = *state;
    step ok = {200, NULL, COMMIT_OK, ANSWER};
    char *base = load_result("/wh/t", BASE_FILE, "");
    step stale = {200, NULL, base, ANSWER};
    icm_table *t = NULL;
    icmt_ok(commit_answered_then(e, &ok, &stale, 1, &t));
    assert_false(icm_table_last_commit_reconciled(t));
    assert_string_equal(icm_table_last_commit_location(t),
                        "/wh/t/metadata/00002-b.metadata.json");
    assert_string_equal(icm_table_get_metadata_location(t), BASE_FILE);
    icm_table_free(t);
    /* a reload that follows the commit is taken */
    char *next = applied_load_result(UUID, "/wh/t/metadata/00002-b.metadata.json");
    step follows = {200, NULL, next, ANSWER};
    icmt_ok(commit_answered_then(e, &ok, &follows, 1, &t));
    assert_string_equal(icm_table_get_metadata_location(t),
                        "/wh/t/metadata/00002-b.metadata.json");
    icm_table_free(t);
    free(next);
    free(base);
}

static void test_commit_401_renewed_once(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    step tokens[] = {{200, NULL, "{\"access_token\":\"T1\",\"token_type\":\"bearer\"}", ANSWER},
                     {200, NULL, "{\"access_token\":\"T2\",\"token_type\":\"bearer\"}", ANSWER}};
    route_set(e->s, "POST", "/v1/oauth/tokens", tokens, 2);
    const char *extra[] = {"credential", "id:secret", NULL};
    step steps[] = {{401, NULL, "{}", ANSWER}, {200, NULL, COMMIT_OK, ANSWER}};
    icmt_ok(commit_with(e, steps, 2, extra, NULL));
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 2);
    assert_string_equal(header(nth(e->s, -1), "Authorization"), "Bearer T2");
    /* refused again with the new token: not sent a third time; the outcome is open, since a
     * gateway may have passed the first copy on before refusing it */
    step twice[] = {{401, NULL, "{}", ANSWER}};
    route_set(e->s, "POST", "/v1/oauth/tokens", tokens, 2);
    assert_int_equal(commit_with(e, twice, 1, extra, NULL), ICM_ECOMMIT_UNKNOWN);
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 4);
    /* a 409 after a renewal may answer the first copy: unknown, never a cleanable failure */
    step then409[] = {{401, NULL, "{}", ANSWER}, {409, NULL, CONFLICT, ANSWER}};
    assert_int_equal(commit_with(e, then409, 2, extra, NULL), ICM_ECOMMIT_UNKNOWN);
}

static void test_endpoints_honoured(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200,
           "{\"endpoints\":[\"GET /v1/{prefix}/namespaces\","
           "\"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}\"]}");
    step ok = {200, NULL, COMMIT_OK, ANSWER};
    assert_int_equal(commit_with(e, &ok, 1, NULL, NULL), ICM_EUNSUPPORTED);
    assert_non_null(strstr(icm_error_last()->message,
                           "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"));
    assert_int_equal(count(e->s, "POST", COMMIT_PATH), 0);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    icm_table_ident id = ident(NS, 1, "tbl");
    assert_int_equal(cat->methods->register_table(cat, &id, "/wh/t/metadata/x.metadata.json"),
                     ICM_EUNSUPPORTED);
    assert_int_equal(count(e->s, "POST", "/v1/namespaces/ns/register"), 0);
    icm_catalog_free(cat);
    /* advertised: register is sent */
    route1(e->s, "GET", "/v1/config", 200,
           "{\"endpoints\":[\"POST /v1/{prefix}/namespaces/{namespace}/register\"]}");
    char *body = load_result("/wh/t", "/wh/t/metadata/x.metadata.json", "");
    route1(e->s, "POST", "/v1/namespaces/ns/register", 200, body);
    icmt_ok(open_cat(e, &cat, NULL));
    icmt_ok(cat->methods->register_table(cat, &id, "/wh/t/metadata/x.metadata.json"));
    assert_string_equal(nth(e->s, -1)->body,
                        "{\"name\":\"tbl\",\"metadata-location\":\"/wh/t/metadata/x.metadata.json\"}");
    icm_catalog_free(cat);
    free(body);
}

/* ---- SigV4 ---- */

/* The request as it arrived must carry a signature of exactly what arrived: its Host, path
 * (canonical form: encoded once more, as for every AWS service but S3), query, the headers it
 * names in SignedHeaders with their received values, and the SHA-256 of its body. The signer
 * itself is checked against AWS's vectors (test_sigv4); this checks that what is signed is
 * what is sent. */
static void verify_sigv4(const req *r, const char *akid, const char *secret, const char *region,
                         const char *service)
{
    char auth[2048], signed_names[2048];
    snprintf(auth, sizeof auth, "%s", header(r, "Authorization"));
    char scope[256];
    snprintf(scope, sizeof scope, "AWS4-HMAC-SHA256 Credential=%s/", akid);
    assert_int_equal(strncmp(auth, scope, strlen(scope)), 0);
    snprintf(scope, sizeof scope, "/%s/%s/aws4_request,", region, service);
    assert_non_null(strstr(auth, scope));
    const char *sh = strstr(auth, "SignedHeaders=");
    assert_non_null(sh);
    sh += strlen("SignedHeaders=");
    snprintf(signed_names, sizeof signed_names, "%.*s", (int)strcspn(sh, ","), sh);
    char body_sha[65];
    icm__sha256_hex(r->body, strlen(r->body), body_sha);
    assert_string_equal(header(r, "x-amz-content-sha256"), body_sha);
    char host[2048], amz_date[2048];
    snprintf(host, sizeof host, "%s", header(r, "Host"));
    snprintf(amz_date, sizeof amz_date, "%s", header(r, "X-Amz-Date"));
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    assert_non_null(strptime(amz_date, "%Y%m%dT%H%M%SZ", &tm));
    /* the other signed headers with their values as received */
    static char values[16][2048];
    static char hnames[16][128];
    icm__http_header hdrs[20];
    size_t n = 0;
    for (char *save = NULL, *name = strtok_r(signed_names, ";", &save); name != NULL;
         name = strtok_r(NULL, ";", &save)) {
        if (strcmp(name, "host") == 0 || strcmp(name, "x-amz-content-sha256") == 0 ||
            strcmp(name, "x-amz-date") == 0 || strcmp(name, "x-amz-security-token") == 0)
            continue;
        const char *v = header(r, name);
        assert_non_null(v);
        assert_true(n < 16);
        snprintf(hnames[n], sizeof hnames[n], "%s", name);
        snprintf(values[n], sizeof values[n], "%s", v);
        hdrs[n] = (icm__http_header){hnames[n], values[n]};
        n++;
    }
    char path[1024];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(r->path, "?"), r->path);
    const char *q = strchr(r->path, '?');
    icm__buf cu = ICM__BUF_INIT;
    icmt_ok(icm__sigv4_encode(&cu, path, strlen(path), true));
    icm__sigv4_request sreq = {r->method, host, cu.data, q != NULL ? q + 1 : "", hdrs, n,
                               body_sha, region, service, (int64_t)timegm(&tm)};
    icm__sigv4_credentials creds = {akid, secret, NULL};
    icm__sigv4_signed sig;
    icm__http_header added[4];
    size_t n_added = 0;
    icmt_ok(icm__sigv4_sign(&sreq, &creds, &sig, added, &n_added));
    assert_string_equal(sig.authorization, auth);
    icm__buf_dispose(&cu);
}

static void test_sigv4_signs_what_is_sent(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    char *body = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json", "");
    route1(e->s, "GET", "/v1/namespaces/a%1Fb%20c/tables/t%2B1", 200, body);
    const char *extra[] = {"rest.sigv4-enabled", "true", "rest.signing-region", "eu-west-1",
                           "rest.access-key-id", "AKIDREST", "rest.secret-access-key",
                           "SECRETREST", "token", "tok", "header.X-Custom", "v  1", NULL};
    step ok = {200, NULL, COMMIT_OK, ANSWER};
    icmt_ok(commit_with(e, &ok, 1, extra, NULL));
    verify_sigv4(nth(e->s, 0), "AKIDREST", "SECRETREST", "eu-west-1", "execute-api");
    const req *post = nth(e->s, -1);
    assert_string_equal(post->method, "POST");
    verify_sigv4(post, "AKIDREST", "SECRETREST", "eu-west-1", "execute-api");
    /* a bearer token moves to Original-Authorization, which is signed too (Java's rule) */
    assert_string_equal(header(post, "Original-Authorization"), "Bearer tok");
    assert_non_null(strstr(header(post, "Authorization"), "original-authorization"));

    const char *glue[] = {"rest.sigv4-enabled", "true", "rest.signing-region", "us-east-2",
                          "rest.signing-name", "glue", "rest.access-key-id", "AKIDG",
                          "rest.secret-access-key", "SG", NULL};
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, glue));
    const char *levels[] = {"a", "b c"};
    icm_table_ident id = ident(levels, 2, "t+1");
    icm_catalog_table_info info;
    icmt_ok(cat->methods->load_table_info(cat, &id, &info));
    const req *load = nth(e->s, -1);
    assert_string_equal(load->path, "/v1/namespaces/a%1Fb%20c/tables/t%2B1");
    verify_sigv4(load, "AKIDG", "SG", "us-east-2", "glue");
    assert_null(header(load, "Original-Authorization"));
    icm_catalog_table_info_dispose(&info);
    icm_catalog_free(cat);
    free(body);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    route1(e->s, "GET", "/v1/namespaces/ns/tables/nope", 404,
           "{\"error\":{\"message\":\"Table does not exist: ns.nope\","
           "\"type\":\"NoSuchTableException\",\"code\":404}}");
    route1(e->s, "GET", "/v1/namespaces/ns/tables/proxy", 403, "<html>\n<body>denied</body>");
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    char *loc = NULL;
    assert_int_equal(icm_catalog_load_table_location(&loc, cat, "ns.nope"), ICM_ENOTFOUND);
    const icm_error *err = icm_error_last();
    assert_int_equal(err->http_status, 404);
    assert_string_equal(err->remote_code, "NoSuchTableException");
    assert_non_null(strstr(err->message, "Table does not exist: ns.nope"));
    assert_non_null(strstr(err->location, "/v1/namespaces/ns/tables/nope"));
    assert_int_equal(icm_catalog_load_table_location(&loc, cat, "ns.proxy"), ICM_EAUTH);
    assert_int_equal(icm_error_last()->http_status, 403);
    assert_non_null(strstr(icm_error_last()->message, "<html>"));
    icm_catalog_free(cat);

    /* the config request's failure is the open's */
    route1(e->s, "GET", "/v1/config", 400,
           "{\"error\":{\"message\":\"unknown warehouse\",\"type\":\"BadRequestException\","
           "\"code\":400}}");
    assert_int_equal(open_cat(e, &cat, NULL), ICM_EINVALID);
    assert_non_null(strstr(icm_error_last()->message, "unknown warehouse"));
    /* no http uri */
    icm_property bad[] = {{"uri", "thrift://x"}};
    assert_int_equal(icm_catalog_open_rest(&cat, "c", e->io, bad, 1), ICM_EINVALID);
}

/* ---- the table's FileIO ---- */

static void test_table_fileio_from_config(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    char *with = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json",
                             ",\"config\":{\"s3.access-key-id\":\"AK1\"}");
    char *renewed = load_result("/wh/t", "/wh/t/metadata/00001-a.metadata.json",
                                ",\"config\":{\"s3.access-key-id\":\"AK2\"}");
    step loads[] = {{200, NULL, with, ANSWER}, {200, NULL, with, ANSWER},
                    {200, NULL, renewed, ANSWER}};
    route_set(e->s, "GET", "/v1/namespaces/ns/tables/tbl", loads, 3);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    icm_table *t = NULL;
    icmt_ok(icm_table_load(&t, cat, "ns.tbl"));
    icm_fileio *first = icm_table_get_fileio(t);
    assert_ptr_not_equal(first, icm_catalog_fileio(cat)); /* its own, from the config */
    assert_string_equal(icm_table_metadata_uuid(icm_table_get_metadata(t)), UUID);
    icmt_ok(icm_table_refresh(t)); /* the same configuration: the same FileIO */
    assert_ptr_equal(icm_table_get_fileio(t), first);
    icmt_ok(icm_table_refresh(t)); /* renewed credentials: a new one */
    assert_ptr_not_equal(icm_table_get_fileio(t), first);
    /* the server writes a REST table's metadata files: no pointer-swap slot */
    assert_null(cat->methods->commit);
    icm_table_free(t);
    icm_catalog_free(cat);
    free(with);
    free(renewed);
}

/* The other tables the orphan sweep and expiry hold files for are judged by the metadata the
 * catalog hands out: their files may be readable only with the credentials it vends (here the
 * catalog's FileIO has none at all, and the mem:// files do not exist). */
typedef struct others {
    int n;
    char roots[4][128];
} others;

static int take_other(const icm__other_table *o, void *payload)
{
    others *x = payload;
    assert_non_null(o->md);
    assert_null(o->unreadable);
    assert_true(x->n < 4);
    snprintf(x->roots[x->n++], sizeof x->roots[0], "%s.%s %s", o->ns, o->name, o->roots[0]);
    return 0;
}

static void test_other_tables_from_catalog_metadata(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200, "{}");
    route1(e->s, "GET", "/v1/namespaces", 200, "{\"namespaces\":[[\"ns\"]]}");
    route1(e->s, "GET", "/v1/namespaces?parent=ns", 200, "{\"namespaces\":[]}");
    route1(e->s, "GET", "/v1/namespaces/ns/tables", 200,
           "{\"identifiers\":[{\"namespace\":[\"ns\"],\"name\":\"tbl\"},"
           "{\"namespace\":[\"ns\"],\"name\":\"other\"}]}");
    char *self = load_result("s3://b/wh/tbl", "s3://b/wh/tbl/metadata/1.metadata.json", "");
    char *other = load_result("s3://b/wh/tbl/nested", "s3://b/wh/tbl/nested/metadata/1.metadata.json",
                              ",\"config\":{\"s3.access-key-id\":\"AK\"}");
    route1(e->s, "GET", "/v1/namespaces/ns/tables/tbl", 200, self);
    route1(e->s, "GET", "/v1/namespaces/ns/tables/other", 200, other);
    icm_catalog *cat = NULL;
    icmt_ok(open_cat(e, &cat, NULL));
    others x = {0, {{0}}};
    icmt_ok(icm__catalog_each_other_table(cat, "ns.tbl", take_other, &x));
    assert_int_equal(x.n, 1);
    assert_string_equal(x.roots[0], "ns.other s3://b/wh/tbl/nested");
    icm_catalog_free(cat);
    free(self);
    free(other);
}

/* Every allocation of open, load and commit failing in turn: ICM_ENOMEM (or, once the commit
 * was sent, ICM_ECOMMIT_UNKNOWN: an answer that cannot be read is no proof), never a crash, a
 * leak (ASan) or a wrong "failed". */
static void test_nomem(void **state)
{
    env *e = *state;
    route1(e->s, "GET", "/v1/config", 200,
           "{\"defaults\":{\"a\":\"1\"},\"overrides\":{\"prefix\":\"p\"}}");
    char *body = load_result("s3://b/wh/t", "s3://b/wh/t/metadata/1.metadata.json",
                             ",\"config\":{\"s3.access-key-id\":\"AK\"},\"storage-credentials\":"
                             "[{\"prefix\":\"s3://b\",\"config\":{\"s3.session-token\":\"S\"}}]");
    route1(e->s, "GET", "/v1/p/namespaces/ns/tables/tbl", 200, body);
    route1(e->s, "POST", "/v1/p/namespaces/ns/tables/tbl", 200, COMMIT_OK);
    const char *extra[] = {"token", "t", "header.X-A", "b", NULL};
    icm_table_changes *c = expiry_changes();
    icm_table_ident id = ident(NS, 1, "tbl");
    long total = 0;
    for (long i = 0;; i++) {
        icm_catalog *cat = NULL;
        icm_catalog_table_info info;
        memset(&info, 0, sizeof info);
        char *loc = NULL;
        icmt_nomem_arm(i);
        int orc = open_cat(e, &cat, extra);
        int lrc = orc == 0 ? cat->methods->load_table_info(cat, &id, &info) : 0;
        int crc = orc == 0 ? cat->methods->commit_changes(cat, &id, "x", c, &loc) : 0;
        total = icmt_nomem_disarm();
        assert_true(orc == 0 || orc == ICM_ENOMEM);
        assert_true(lrc == 0 || lrc == ICM_ENOMEM);
        assert_true(crc == 0 || crc == ICM_ENOMEM || crc == ICM_ECOMMIT_UNKNOWN);
        icm_free(loc);
        icm_catalog_table_info_dispose(&info);
        icm_catalog_free(cat);
        if (i > total)
            break;
    }
    assert_true(total > 50);
    icm_table_changes_free(c);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_config_merge_and_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_prefix_no_empty_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_encoding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listings_pages_and_nesting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oauth_fetch_and_refresh_after_401, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_renewed_when_due, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_ok_and_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_outcomes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_never_resent_on_dead_keepalive, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_401_renewed_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoints_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigv4_signs_what_is_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_tables_walked_by_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_other_table_whose_name_has_a_dot_is_not_taken_for_the_table_itself, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_registered_copy_named_like_the_table_split_at_dots_is_another_table, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_other_table_that_cannot_be_loaded_is_never_a_table_without_files, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_commit_unknown_reconciled_by_reload, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_unknown_not_shown_stays_unknown, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_commit_unknown_other_table_or_no_reload, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refusal_checked_by_reloading, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_then_stale_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_fileio_from_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_tables_from_catalog_metadata, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nomem, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
