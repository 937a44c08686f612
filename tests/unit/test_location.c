/*
 * test_location.c: the location helpers that guard "never delete outside the table location":
 * segment-boundary prefix tests (filesystem and bucket roots, local URI forms, byte-exact
 * object-store URIs, dot segments refused), local-path extraction, normalisation and join.
 */
#include <stdlib.h>
#include <string.h>

#include "icemaint/fileio.h"
#include "testutil.h"
#include "util/location.h"
#include "util/util.h"

typedef struct prefix_case {
    const char *p;
    const char *dir;
    bool match;       /* icm__location_strip_prefix result */
    const char *rest; /* expected rest when match */
} prefix_case;

static const prefix_case prefix_cases[] = {
    /* local paths: segment boundary, repeated and trailing slashes, forms */
    {"/t/x", "/t", true, "x"},
    {"/t/x", "/t/", true, "x"},
    {"/t_2/x", "/t", false, NULL},
    {"/t_2/x", "/t/", false, NULL},
    {"/t_2", "/t", false, NULL},
    {"/tx", "/t", false, NULL},
    {"/T/x", "/t", false, NULL},
    {"/t", "/t", true, ""},
    {"/t/", "/t", true, ""},
    {"/t", "/t/", true, ""},
    {"/t//x", "/t", true, "x"},
    {"//t/x", "/t", true, "x"},
    {"/t/x", "//t//", true, "x"},
    {"/t/a/b/c", "/t/a", true, "b/c"},
    {"/t/a", "/t/a/b", false, NULL},
    {"file:/t/x", "/t", true, "x"},
    {"file:///t/x", "file:/t", true, "x"},
    {"file://localhost/t/x", "/t", true, "x"},
    {"FILE://LocalHost/t/x", "file:///t", true, "x"},
    {"/t/x", "file://localhost/t/", true, "x"},
    {"file:////t/x", "/t", true, "x"},
    /* filesystem root */
    {"/x", "/", true, "x"},
    {"/a/b", "/", true, "a/b"},
    {"/", "/", true, ""},
    {"file:///a/b", "/", true, "a/b"},
    {"/a/b", "file:///", true, "a/b"},
    {"data/x", "/", false, NULL},
    /* relative paths: only against relative prefixes, never resolved against the cwd */
    {"data/t/x", "data/t", true, "x"},
    {"file:data/t/x", "data/t", true, "x"},
    {"/data/t/x", "data/t", false, NULL},
    {"data/t/x", "/data/t", false, NULL},
    {"data/t/x", "./data/t", false, NULL},
    /* dot segments below the prefix are refused, never resolved */
    {"/t/../x", "/t", false, NULL},
    {"/t/./x", "/t", false, NULL},
    {"/t/..", "/t", false, NULL},
    {"/t/a/../../x", "/t", false, NULL},
    {"/t/..x", "/t", true, "..x"},
    {"/t/.hidden", "/t", true, ".hidden"},
    {"/a/../t/x", "/a/../t", true, "x"},
    {"s3://b/t/../x", "s3://b/t", false, NULL},
    {"s3://b/t/./x", "s3://b/t", false, NULL},
    /* object stores: exact bytes, bucket root, no aliases, no decoding */
    {"s3://b/t/x", "s3://b/t", true, "x"},
    {"s3://b/t/x", "s3://b/t/", true, "x"},
    {"s3://b/t_2/x", "s3://b/t", false, NULL},
    {"s3://b/t_2/x", "s3://b/t/", false, NULL},
    {"s3://b/t", "s3://b/t/", true, ""},
    {"s3://b/t/", "s3://b/t", true, ""},
    {"s3://b/x", "s3://b", true, "x"},
    {"s3://b/x", "s3://b/", true, "x"},
    {"s3://b", "s3://b", true, ""},
    {"s3://bx/y", "s3://b", false, NULL},
    {"s3://b/t//x", "s3://b/t", true, "/x"},
    /* S3's schemes as writers spell them are one store; other case is not a spelling */
    {"s3://b/t/x", "s3a://b/t", true, "x"},
    {"s3a://b/t/x", "s3://b/t", true, "x"},
    {"s3n://b/t/x", "s3a://b/t/", true, "x"},
    {"s3a://b/t", "s3n://b/t", true, ""},
    {"s3a://b/t_2/x", "s3://b/t", false, NULL},
    {"s3a://b/t/../x", "s3://b/t", false, NULL},
    {"s3a://c/t/x", "s3://b/t", false, NULL},
    {"S3A://b/t/x", "s3://b/t", false, NULL},
    {"s3x://b/t/x", "s3://b/t", false, NULL},
    {"s3a:/b/t/x", "s3://b/t", false, NULL},
    {"gs://b/t/x", "s3://b/t", false, NULL},
    {"s3a://b/x", "s3://", false, NULL},
    {"S3://b/t/x", "s3://b/t", false, NULL},
    {"s3://B/t/x", "s3://b/t", false, NULL},
    {"s3://b/t%2Fx", "s3://b/t", false, NULL},
    {"s3://b/t/%2e%2e/x", "s3://b/t", true, "%2e%2e/x"},
    {"s3://b/a%20b/x", "s3://b/a b", false, NULL},
    {"s3://b/x", "s3://", false, NULL},
    {"s3://b/x", "s3:///", false, NULL},
    {"gs://b/t/x", "gs://b/t", true, "x"},
    {"hdfs://localhost:20500/w/t/x", "hdfs://localhost:20500/w/t", true, "x"},
    {"hdfs://localhost:20501/w/t/x", "hdfs://localhost:20500/w/t", false, NULL},
    /* local never matches a URI and the reverse */
    {"/t/x", "s3://b/t", false, NULL},
    {"s3://b/t/x", "/t", false, NULL},
    {"s3://b/t/x", "/", false, NULL},
    /* a file URI naming another host is a URI (the malformed `file://data/...` fixtures) */
    {"file://data/persistent/t/x", "file://data/persistent/t", true, "x"},
    {"data/persistent/t/x", "file://data/persistent/t", false, NULL},
    {"file://data/persistent/t/x", "data/persistent/t", false, NULL},
    {"file://host/t/x", "/t", false, NULL},
    {"/t/x", "file://host/t", false, NULL},
};

static void test_strip_prefix_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ICM__ARRAY_LEN(prefix_cases); i++) {
        const prefix_case *c = &prefix_cases[i];
        const char *rest = NULL;
        bool got = icm__location_strip_prefix(c->p, c->dir, &rest);
        if (got != c->match) {
            print_error("case %zu: strip_prefix(\"%s\", \"%s\") = %d, want %d\n", i, c->p,
                        c->dir, got, c->match);
            fail();
        }
        if (c->match) {
            if (strcmp(rest, c->rest) != 0) {
                print_error("case %zu: strip_prefix(\"%s\", \"%s\") rest \"%s\", want \"%s\"\n",
                            i, c->p, c->dir, rest, c->rest);
                fail();
            }
            /* rest points into p, at its end */
            assert_true(rest >= c->p && rest <= c->p + strlen(c->p));
            assert_string_equal(c->p + strlen(c->p) - strlen(rest), rest);
        }
        /* is_inside is "strictly below" */
        assert_int_equal(icm__location_is_inside(c->p, c->dir), c->match && c->rest[0] != '\0');
    }
}

static void test_equal(void **state)
{
    (void)state;
    const char *same_as_p[] = {"/p", "file:/p", "file:///p", "//p", "file://localhost/p",
                               "/p/", "file:///p/", "///p//"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(same_as_p); i++)
        for (size_t j = 0; j < ICM__ARRAY_LEN(same_as_p); j++)
            assert_true(icm__location_equal(same_as_p[i], same_as_p[j]));
    assert_true(icm__location_equal("s3://b/k", "s3://b/k/"));
    assert_true(icm__location_equal("s3://b/k/", "s3://b/k"));
    assert_false(icm__location_equal("s3://b/k", "s3://b/k2"));
    assert_false(icm__location_equal("s3://b/a%20b", "s3://b/a b"));
    assert_true(icm__location_equal("s3://b/k", "s3a://b/k"));
    assert_true(icm__location_equal("s3n://b/k/", "s3a://b/k"));
    assert_false(icm__location_equal("s3://b/k", "gs://b/k"));
    assert_false(icm__location_equal("s3a://b/k", "s3a://b/k2"));
    assert_false(icm__location_equal("/p", "p"));
    assert_false(icm__location_equal("/p", "file://host/p"));
    assert_false(icm__location_equal("/a/../p", "/p"));
    assert_false(icm__location_equal("/p/x", "/p"));
    assert_false(icm__location_equal(NULL, "/p"));
    assert_false(icm__location_equal("", ""));
}

typedef struct path_case {
    const char *location;
    const char *path; /* NULL: not local */
} path_case;

static const path_case path_cases[] = {
    {"/p", "/p"},
    {"file:/p", "/p"},
    {"file:///p", "/p"},
    {"file://localhost/p", "/p"},
    {"File://LOCALHOST/p", "/p"},
    {"//p//q/", "/p/q"},
    {"file:////p", "/p"},
    {"/", "/"},
    {"file:///", "/"},
    {"///", "/"},
    {"data/x", "data/x"},
    {"data//x/", "data/x"},
    {"file:data/x", "data/x"},
    {"./x", "./x"},
    {"/a/../b", "/a/../b"},
    {"/p%20q", "/p%20q"},
    {"file:///p%20q", "/p%20q"},
    {"data/a:b", "data/a:b"},
    {"s3://b/k", NULL},
    {"s3a://b/k", NULL},
    {"gs://b/k", NULL},
    {"hdfs://h:1/p", NULL},
    {"file://data/persistent/x", NULL},
    {"file://./warehouse/x", NULL},
    {"file://localhost", NULL},
    {"file:", NULL},
    {"", NULL},
};

static void test_local_path(void **state)
{
    (void)state;
    for (size_t i = 0; i < ICM__ARRAY_LEN(path_cases); i++) {
        const path_case *c = &path_cases[i];
        char *out = (char *)"sentinel";
        bool got = icm_location_local_path(&out, c->location);
        if (got != (c->path != NULL) || (got && strcmp(out, c->path) != 0)) {
            print_error("case %zu: local_path(\"%s\") = %d \"%s\", want \"%s\"\n", i,
                        c->location, got, got ? out : "", c->path ? c->path : "(false)");
            fail();
        }
        if (!got)
            assert_null(out);
        icm_free(out);
    }
    assert_false(icm_location_local_path(NULL, NULL));
}

static void test_normalize(void **state)
{
    (void)state;
    char *out;
    icmt_ok(icm__location_fs_path("file:///a//b/", &out));
    assert_string_equal(out, "/a/b");
    icm_free(out);
    /* URIs are keys as they are: repeated and trailing slashes are part of an object key */
    icmt_ok(icm__location_fs_path("s3://b//k/", &out));
    assert_string_equal(out, "s3://b//k/");
    icm_free(out);
    icmt_ok(icm__location_fs_path("file://data/x", &out));
    assert_string_equal(out, "file://data/x");
    icm_free(out);
}

typedef struct join_case {
    const char *base;
    const char *rel;
    const char *want;
} join_case;

static const join_case join_cases[] = {
    {"/t", "x", "/t/x"},
    {"/t/", "x", "/t/x"},
    {"/t//", "x", "/t/x"},
    {"/", "x", "/x"},
    {"file:///", "x", "file:///x"},
    {"file:/", "x", "file:/x"},
    {"file:///t", "a/b", "file:///t/a/b"},
    {"file://localhost/t/", "a", "file://localhost/t/a"},
    {"s3://b", "k", "s3://b/k"},
    {"s3://b/", "k", "s3://b/k"},
    {"s3://b/t//", "k", "s3://b/t/k"},
    {"s3://b/t", "/x", "s3://b/t//x"},
    {"s3://", "b", "s3://b"},
    {"/t", "", "/t"},
    {"/t//", "", "/t"},
    {"/", "", "/"},
    {"data/t", "x", "data/t/x"},
    {"data/t/", "x", "data/t/x"},
    {"", "x", "x"},
};

static void test_join(void **state)
{
    (void)state;
    for (size_t i = 0; i < ICM__ARRAY_LEN(join_cases); i++) {
        const join_case *c = &join_cases[i];
        char *s = icm__location_join(c->base, c->rel);
        assert_non_null(s);
        if (strcmp(s, c->want) != 0) {
            print_error("case %zu: join(\"%s\", \"%s\") = \"%s\", want \"%s\"\n", i, c->base,
                        c->rel, s, c->want);
            fail();
        }
        icm_free(s);
    }
}

/* Joining then stripping gives the rest back: the two helpers agree on boundaries. */
static void test_join_strip_roundtrip(void **state)
{
    (void)state;
    const char *bases[] = {"/t", "/t/", "/", "file:///w/t", "s3://b", "s3://b/t/", "data/t",
                           "file://data/p"};
    const char *rels[] = {"x", "a/b/c.parquet", "metadata/v1.metadata.json"};
    for (size_t i = 0; i < ICM__ARRAY_LEN(bases); i++)
        for (size_t j = 0; j < ICM__ARRAY_LEN(rels); j++) {
            char *s = icm__location_join(bases[i], rels[j]);
            const char *rest;
            assert_true(icm__location_strip_prefix(s, bases[i], &rest));
            assert_string_equal(rest, rels[j]);
            assert_true(icm__location_is_inside(s, bases[i]));
            icm_free(s);
        }
}

static void test_trim_len(void **state)
{
    (void)state;
    assert_int_equal(icm__location_trim_len("/"), 1);
    assert_int_equal(icm__location_trim_len("///"), 1);
    assert_int_equal(icm__location_trim_len("/a//"), 2);
    assert_int_equal(icm__location_trim_len("file:///"), 8);
    assert_int_equal(icm__location_trim_len("s3://b/"), 6);
    assert_int_equal(icm__location_trim_len("s3://"), 5);
    assert_int_equal(icm__location_trim_len("data/"), 4);
}

/* Keep-set identity: every spelling of one local file is one key (the file system resolves dot
 * segments), object-store keys stay exact. A live file referenced as `t/./data/f` was deleted
 * by expiry and by the orphan sweep before keys resolved dot segments. */
static void test_location_key(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"/t/data/f", "/t/data/f"},
        {"/t/./data/f", "/t/data/f"},
        {"/t/metadata/../data/f", "/t/data/f"},
        {"file:///t/./data//f", "/t/data/f"},
        {"/../t/f", "/t/f"},
        {"data/./x/../f", "data/f"},
        {"../t/f", "../t/f"},
        {"s3://b/t/./f", "s3://b/t/./f"},
        {"s3://b/t/x/../f", "s3://b/t/x/../f"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        icmt_ok(icm__location_key(cases[i].in, &out));
        assert_string_equal(out, cases[i].want);
        icm_free(out);
    }
    char p[] = "a/b/c/../../../../x/./y/";
    assert_int_equal(icm__path_resolve_dots(p), strlen("../x/y"));
    assert_string_equal(p, "../x/y");
}

/* The last segment of a key, as icm__location_key_tail must give it. */
static void key_last_segment(const char *loc, const char **seg, char **key)
{
    icmt_ok(icm__location_key(loc, key));
    const char *slash = strrchr(*key, '/');
    *seg = slash != NULL ? slash + 1 : *key;
}

/* key_tail_checked over the location's bytes alone, in a buffer of exactly that size (under
 * ASan a read past them fails), answers as key_tail over the C string. */
static void check_tail_unterminated(const char *loc)
{
    size_t len = strlen(loc);
    const char *want = NULL, *got = NULL;
    size_t want_n = 0, got_n = 0;
    bool told = icm__location_key_tail(loc, len, &want, &want_n);
    char *bytes = malloc(len ? len : 1);
    assert_non_null(bytes);
    memcpy(bytes, loc, len);
    assert_int_equal(icm__location_key_tail_checked(bytes, len, &got, &got_n), told);
    if (told) {
        assert_int_equal(got_n, want_n);
        assert_true(got - bytes == want - loc);
    }
    free(bytes);
}

/* icm__location_key_span, when it answers, gives exactly the bytes of icm__location_key. */
static void check_key_span(const char *loc)
{
    const char *span = NULL;
    size_t n = 0;
    if (!icm__location_key_span(loc, &span, &n))
        return;
    char *key = NULL;
    icmt_ok(icm__location_key(loc, &key));
    if (strlen(key) != n || memcmp(key, span, n) != 0)
        print_error("%s: span \"%.*s\", key \"%s\"\n", loc, (int)n, span, key);
    assert_int_equal(strlen(key), n);
    assert_memory_equal(key, span, n);
    assert_true(span >= loc && span + n <= loc + strlen(loc));
    icm_free(key);
}

static void check_tail(const char *loc)
{
    check_key_span(loc);
    check_tail_unterminated(loc);
    const char *tail;
    size_t n;
    if (!icm__location_key_tail(loc, strlen(loc), &tail, &n))
        return;
    char *key = NULL;
    const char *seg;
    key_last_segment(loc, &seg, &key);
    if (strlen(seg) != n || memcmp(seg, tail, n) != 0)
        print_error("%s: tail \"%.*s\", key %s\n", loc, (int)n, tail, key);
    assert_int_equal(strlen(seg), n);
    assert_memory_equal(seg, tail, n);
    icm_free(key);
}

/* icm__location_key_tail gives the key's last segment or declines: the listed spellings give
 * the answers shown, and 200,000 random strings over the characters that matter (slashes,
 * dots, scheme and authority pieces) never give a wrong tail; on all of them the unterminated
 * form answers alike, and icm__location_key_span gives exactly the key's bytes or declines. */
static void test_key_tail(void **state)
{
    (void)state;
    static const struct {
        const char *loc, *tail; /* NULL: declined */
    } cases[] = {
        {"/t/data/f.parquet", "f.parquet"},
        {"file:///t//data/f", "f"},
        {"file://localhost/t/f", "f"},
        {"FILE:/t/./f", "f"},
        {"/t/x/../f", "f"},
        {"s3://b/t/x/../f", "f"},
        {"s3://b/t/f/", NULL},
        {"/t/f/", NULL},
        {"/t/f/.", NULL},
        {"/t/f/..", NULL},
        {"s3://b/t/..", NULL},
        {"f", NULL},
        {"file:f", NULL},
        {"file:d/f", "f"},
        {"file://host/d/f", "f"},
        {"/t/...", "..."},
        {"file:", NULL},
        {"file:/", NULL},
        {"file://", NULL},
        {"file://localhost", "localhost"},
        {"file://localhost/", NULL},
        {"file://localhost/f", "f"},
        {"s3", NULL},
        {"s3:", NULL},
        {"a/b", "b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *tail = NULL;
        size_t n = 0;
        bool told = icm__location_key_tail(cases[i].loc, strlen(cases[i].loc), &tail, &n);
        assert_int_equal(told, cases[i].tail != NULL);
        if (told) {
            assert_int_equal(n, strlen(cases[i].tail));
            assert_memory_equal(tail, cases[i].tail, n);
        }
        check_tail(cases[i].loc);
    }
    /* `len` bytes with a NUL among them: the key ends at the NUL, and so does the tail. */
    static const char nul[] = "s3://b/t/data/A.parquet\0/data/Q.parquet";
    const char *tail = NULL;
    size_t n = 0;
    assert_true(icm__location_key_tail(nul, sizeof nul - 1, &tail, &n));
    assert_int_equal(n, strlen("A.parquet"));
    assert_memory_equal(tail, "A.parquet", n);
    static const char *const pieces[] = {"/", "/", "//", ".", "..", "a", "b", "file:",
                                         "file://", "localhost", "s3:", "s3://", "x:", "/."};
    const size_t np = sizeof pieces / sizeof pieces[0];
    uint64_t seed = 0x9e3779b97f4a7c15u;
    char loc[128];
    for (int k = 0; k < 200000; k++) {
        size_t len = 0;
        int parts = 1 + (int)(seed % 9);
        for (int j = 0; j < parts; j++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            const char *piece = pieces[(seed >> 33) % np];
            size_t pl = strlen(piece);
            memcpy(loc + len, piece, pl);
            len += pl;
        }
        loc[len] = '\0';
        check_tail(loc);
    }
}

/* The segment-wise prefix test for two local paths, written plainly: skip slashes, compare
 * the next segments, until `dir` has none left. */
static bool ref_local_strip(const char *p, const char *dir, const char **rest)
{
    if ((p[0] == '/') != (dir[0] == '/'))
        return false;
    for (;;) {
        while (*p == '/')
            p++;
        while (*dir == '/')
            dir++;
        if (*dir == '\0')
            break;
        size_t nd = strcspn(dir, "/"), np = strcspn(p, "/");
        if (nd != np || memcmp(dir, p, nd) != 0)
            return false;
        dir += nd;
        p += np;
    }
    *rest = p;
    return true;
}

static bool ref_has_dot_segment(const char *s)
{
    while (*s != '\0') {
        size_t n = strcspn(s, "/");
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return true;
        s += n;
        while (*s == '/')
            s++;
    }
    return false;
}

/* `parts` random pieces of local paths (slashes, dots, short names) appended at buf + *len,
 * NUL-terminated. */
static void append_pieces(char *buf, size_t *len, int parts, uint64_t *seed)
{
    static const char *const pieces[] = {"/", "//", "a", "b", "ab", ".", "..", "/.", "x/"};
    for (int j = 0; j < parts; j++) {
        *seed = *seed * 6364136223846793005u + 1442695040888963407u;
        const char *piece = pieces[(*seed >> 33) % (sizeof pieces / sizeof pieces[0])];
        memcpy(buf + *len, piece, strlen(piece));
        *len += strlen(piece);
    }
    buf[*len] = '\0';
}

/* icm__location_strip_prefix on local paths answers as the plain segment-wise test (with its
 * rest at the same place) on 300,000 random pairs over slashes, dots and short names, where a
 * path often begins with the directory byte for byte (the fast case) and often does not. */
static void test_strip_prefix_local_random(void **state)
{
    (void)state;
    uint64_t seed = 0x2545f4914f6cdd1du;
    char dir[64], p[160];
    for (int k = 0; k < 300000; k++) {
        size_t dl = 0, pl = 0;
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        append_pieces(dir, &dl, (int)((seed >> 33) % 6), &seed);
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        if ((seed >> 40) % 3 != 0) { /* often: the directory's bytes first */
            memcpy(p, dir, dl);
            pl = dl;
        }
        append_pieces(p, &pl, (int)((seed >> 33) % 5), &seed);
        const char *want_rest = NULL, *got_rest = NULL;
        /* (an empty location is no local path at all: never a prefix, never below one) */
        bool want = dl > 0 && pl > 0 && ref_local_strip(p, dir, &want_rest) &&
                    !ref_has_dot_segment(want_rest);
        bool got = icm__location_strip_prefix(p, dir, &got_rest);
        if (got != want || (got && got_rest != want_rest))
            print_error("strip_prefix(\"%s\", \"%s\") = %d, want %d\n", p, dir, got, want);
        assert_int_equal(got, want);
        if (got)
            assert_ptr_equal(got_rest, want_rest);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_prefix_table),
        cmocka_unit_test(test_strip_prefix_local_random),
        cmocka_unit_test(test_equal),
        cmocka_unit_test(test_local_path),
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_join_strip_roundtrip),
        cmocka_unit_test(test_trim_len),
        cmocka_unit_test(test_location_key),
        cmocka_unit_test(test_key_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
