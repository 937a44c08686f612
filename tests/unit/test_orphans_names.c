/*
 * tests/unit/test_orphans_names.c: the orphan sweep's name filter (maint/orphans_names.c)
 * against straightforward reference implementations, on generated spellings.
 *
 *  - icm__orphans_below_root, whose shortcut runs for every listed and every reached file,
 *    answers exactly as the general rule icm__location_strip_prefix, with the same rest, for
 *    listing roots in local, file: and object-store forms (trailing slashes, no bucket path)
 *    and locations spelled in any of those forms, with repeated slashes, dot segments, hidden
 *    and partition components, and names that only share the root's bytes (`/wh/tt`);
 *  - icm__orphans_hidden_path: a component is hidden when it starts with '_' or '.', unless it
 *    is `<field>=...` for a partition field whose own name starts with '_' or '.';
 *  - icm__orphans_listing_shows is below the root, not the root itself, with no hidden component
 *    (the root's own included) and not excluded;
 *  - icm__orphans_is_metadata_json and icm__orphans_is_lease_file by their suffix and prefix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icemaint/maint.h"
#include "maint/orphans_plan.h"
#include "testutil.h"
#include "util/location.h"
#include "util/util.h"

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

/* ---- reference implementations ---- */

static bool ref_hidden_component(const char *c, size_t n, char *const *fields, size_t n_fields)
{
    if (n == 0 || (c[0] != '_' && c[0] != '.'))
        return false;
    for (size_t i = 0; i < n_fields; i++) {
        size_t m = strlen(fields[i]);
        if (n > m && strncmp(c, fields[i], m) == 0 && c[m] == '=')
            return false; /* `_f=1` names a value of the hidden partition field `_f` */
    }
    return true;
}

static bool ref_hidden_path(const char *rest, char *const *fields, size_t n_fields)
{
    const char *c = rest;
    for (;;) {
        const char *slash = strchr(c, '/');
        size_t n = slash != NULL ? (size_t)(slash - c) : strlen(c);
        if (ref_hidden_component(c, n, fields, n_fields))
            return true;
        if (slash == NULL)
            return false;
        c = slash + 1;
    }
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- generated spellings ---- */

static const char *const ROOTS[] = {
    "/wh/t",         "/wh/t/",          "/wh//t",         "file:/wh/t",      "file:///wh/t",
    "file:///wh/t/", "file://localhost/wh/t", "s3://b/wh/t", "s3://b/wh/t/", "s3://b",
    "s3://b/",       "gs://b/x/_y",     "/",              "file:///",        "/wh/_t",
    "abfss://c@a.dfs.core.windows.net/t",
};

/* Spellings of the same places, and of places beside them. */
static const char *const BASES[] = {
    "/wh/t",          "/wh//t",        "//wh/t",       "file:/wh/t",   "file:///wh/t",
    "file://localhost/wh/t", "/wh/tt",  "/wh",         "s3://b/wh/t",  "s3://b/wh//t",
    "s3a://b/wh/t",   "s3://b",        "s3://bb/wh/t", "gs://b/x/_y",  "gs://b/x",
    "/wh/_t",         "",              "/",            "file:///",
    "abfss://c@a.dfs.core.windows.net/t",
};

static const char *const SEGMENTS[] = {
    "data", "a.parquet", "_tmp", ".hidden", "..", ".", "", "x=1", "_f=3", ".g=2", "_f", "t",
    "metadata", "v1.metadata.json", "_ff=1", ".icemaint-lease", "p=_x", "_", ".",
};

static void make_location(uint64_t *s, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "%s", BASES[next(s) % ICM__ARRAY_LEN(BASES)]);
    size_t segments = next(s) % 5;
    for (size_t i = 0; i < segments && n + 40 < cap; i++) {
        const char *sep = next(s) % 6 == 0 ? "//" : "/";
        n += (size_t)snprintf(out + n, cap - n, "%s%s", sep,
                              SEGMENTS[next(s) % ICM__ARRAY_LEN(SEGMENTS)]);
    }
    if (next(s) % 10 == 0 && n + 2 < cap)
        snprintf(out + n, cap - n, "/");
}

typedef struct filter {
    plan p;
    icm_orphan_options o;
    const char *exclusions[2];
} filter;

/* A plan with just what the name filter reads: the listing root, its shortcut, the hidden
 * partition fields, whether the root is hidden below `table`, and the exclusions. */
static void filter_init(filter *f, const char *root, const char *table, char **fields,
                        size_t n_fields, const char *exclusion)
{
    memset(f, 0, sizeof *f);
    f->o = (icm_orphan_options)ICM_ORPHAN_OPTIONS_INIT;
    if (exclusion != NULL) {
        f->exclusions[0] = exclusion;
        f->o.exclude_locations = f->exclusions;
        f->o.exclude_location_count = 1;
    }
    f->p.o = &f->o;
    f->p.list_root = icm__strdup(root);
    assert_non_null(f->p.list_root);
    f->p.hidden_fields = fields;
    f->p.n_hidden_fields = n_fields;
    const char *rest;
    if (icm__location_strip_prefix(root, table, &rest))
        f->p.root_hidden = icm__orphans_hidden_path(&f->p, rest);
    icmt_ok(icm__orphans_set_root_shortcut(&f->p));
}

static void filter_dispose(filter *f)
{
    icm__free(f->p.list_root);
}

static void test_below_root_is_strip_prefix(void **state)
{
    (void)state;
    char *fields[] = {"_f", ".g"};
    size_t checked = 0, below = 0, shortcut_roots = 0;
    for (size_t r = 0; r < ICM__ARRAY_LEN(ROOTS); r++) {
        filter f;
        filter_init(&f, ROOTS[r], "/wh", fields, 2, NULL);
        shortcut_roots += f.p.root_shortcut;
        uint64_t s = r + 1;
        for (size_t i = 0; i < 20000; i++) {
            char loc[256];
            make_location(&s, loc, sizeof loc);
            const char *want = NULL, *got = NULL;
            bool expect = icm__location_strip_prefix(loc, ROOTS[r], &want);
            bool answer = icm__orphans_below_root(&f.p, loc, &got);
            if (answer != expect)
                print_error("root %s, location %s: %d, expected %d\n", ROOTS[r], loc, answer,
                            expect);
            assert_int_equal(answer, expect);
            if (expect)
                assert_string_equal(got, want);
            checked++;
            below += expect;
        }
        filter_dispose(&f);
    }
    /* the generator reaches both answers, and the shortcut is taken for most roots */
    assert_true(below > checked / 20 && below < checked - checked / 20);
    assert_true(shortcut_roots >= ICM__ARRAY_LEN(ROOTS) / 2);
}

static void test_hidden_path_and_listing_shows(void **state)
{
    (void)state;
    char *field_sets[][2] = {{NULL, NULL}, {"_f", NULL}, {"_f", ".g"}};
    size_t hidden = 0, shown = 0, total = 0;
    for (size_t fs = 0; fs < 3; fs++) {
        size_t n_fields = fs;
        for (size_t r = 0; r < ICM__ARRAY_LEN(ROOTS); r++) {
            const char *exclusion = r % 3 == 0 ? "/wh/t/data" : r % 3 == 1 ? "s3://b/wh/t/_tmp"
                                                                            : NULL;
            filter f;
            filter_init(&f, ROOTS[r], "/wh", field_sets[fs], n_fields, exclusion);
            bool root_hidden = false;
            const char *root_rest;
            if (icm__location_strip_prefix(ROOTS[r], "/wh", &root_rest))
                root_hidden = ref_hidden_path(root_rest, field_sets[fs], n_fields);
            assert_int_equal(f.p.root_hidden, root_hidden);
            uint64_t s = 7919 * (r + 1) + fs;
            for (size_t i = 0; i < 5000; i++) {
                char loc[256];
                make_location(&s, loc, sizeof loc);
                const char *rest;
                bool is_below = icm__location_strip_prefix(loc, ROOTS[r], &rest);
                if (is_below) {
                    bool h = ref_hidden_path(rest, field_sets[fs], n_fields);
                    assert_int_equal(icm__orphans_hidden_path(&f.p, rest), h);
                    hidden += h;
                }
                bool excluded = exclusion != NULL &&
                                icm__location_strip_prefix(loc, exclusion, NULL);
                bool shows = is_below && rest[0] != '\0' && !root_hidden &&
                             !ref_hidden_path(rest, field_sets[fs], n_fields) && !excluded;
                assert_int_equal(icm__orphans_listing_shows(&f.p, loc), shows);
                shown += shows;
                total++;
            }
            filter_dispose(&f);
        }
    }
    assert_true(hidden > 0 && shown > 0 && shown < total);
}

static void test_file_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "v1.metadata.json", "v1.metadata.json.gz", "metadata.json", "x.metadata.jsonx",
        ".metadata.json",   "a.json",               "",             ICM_LEASE_FILE_NAME,
        ICM_LEASE_FILE_NAME ".takeover-1", ICM_LEASE_FILE_NAME "x", ICM_LEASE_FILE_NAME ".takeover",
        ("x" ICM_LEASE_FILE_NAME), /* parenthesized: one element, not a missing comma */
    };
    for (size_t i = 0; i < ICM__ARRAY_LEN(names); i++) {
        const char *n = names[i];
        assert_int_equal(icm__orphans_is_metadata_json(n),
                         ends_with(n, ".metadata.json") || ends_with(n, ".metadata.json.gz"));
        size_t m = strlen(ICM_LEASE_FILE_NAME);
        bool lease = strncmp(n, ICM_LEASE_FILE_NAME, m) == 0 &&
                     (n[m] == '\0' || strncmp(n + m, ".takeover-", 10) == 0);
        assert_int_equal(icm__orphans_is_lease_file(n), lease);
    }
    assert_true(icm__orphans_is_lease_file(ICM_LEASE_FILE_NAME));
    assert_false(icm__orphans_is_lease_file(ICM_LEASE_FILE_NAME "x"));
    assert_true(icm__orphans_is_metadata_json("00001-abc.metadata.json.gz"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_below_root_is_strip_prefix),
        cmocka_unit_test(test_hidden_path_and_listing_shows),
        cmocka_unit_test(test_file_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
