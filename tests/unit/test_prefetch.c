/*
 * Tests for io/prefetch.c: objects fetched many at a time ahead of their reader give the same
 * bytes and errors as reading each on the caller's thread, really overlap, never run more than
 * the window ahead, and never deadlock however they are taken. The planners' use of it (bulk
 * reader on an object store) is covered by every planner test on the in-memory store, which is
 * not local and so is prefetched.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "icemaint/errors.h"
#include "icemaint/sys/fileio.h"
#include "icemaint/testing/fileio.h"
#include "io/prefetch.h"

/* A FileIO over the in-memory store whose reads wait (up to 2 s) until `gate` reads have been
 * in progress at once (then none waits again), and which records the most in progress at once
 * and the reads started. */
typedef struct gate_io {
    icm_fileio base;
    icm_fileio *inner;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned gate;
    unsigned in_progress;
    unsigned max_in_progress;
    size_t started;
} gate_io;

static int g_read(icm_fileio *io, const char *location, char **out, size_t *len)
{
    gate_io *g = (gate_io *)io;
    pthread_mutex_lock(&g->mu);
    g->started++;
    g->in_progress++;
    if (g->in_progress > g->max_in_progress)
        g->max_in_progress = g->in_progress;
    pthread_cond_broadcast(&g->cv);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    while (g->max_in_progress < g->gate)
        if (pthread_cond_timedwait(&g->cv, &g->mu, &until) != 0)
            break;
    pthread_mutex_unlock(&g->mu);
    int rc = icm_fileio_read(out, len, g->inner, location);
    pthread_mutex_lock(&g->mu);
    g->in_progress--;
    pthread_mutex_unlock(&g->mu);
    return rc;
}

static int g_read_range(icm_fileio *io, const char *location, int64_t offset, void *buf,
                        size_t len, size_t *out_read)
{
    return icm_fileio_read_range(out_read, ((gate_io *)io)->inner, location, offset, buf, len);
}

static int g_create(icm_fileio *io, const char *location, const void *data, size_t len)
{
    return icm_fileio_create_new(((gate_io *)io)->inner, location, data, len);
}

static int g_write(icm_fileio *io, const char *location, const void *data, size_t len)
{
    return icm_fileio_write_replace(((gate_io *)io)->inner, location, data, len);
}

static int g_remove(icm_fileio *io, const char *location)
{
    return icm_fileio_delete(((gate_io *)io)->inner, location);
}

static int g_stat(icm_fileio *io, const char *location, icm_file_info *out)
{
    return icm_fileio_stat(out, ((gate_io *)io)->inner, location);
}

static int g_list(icm_fileio *io, const char *prefix, icm_list_cb cb, void *payload)
{
    return icm_fileio_list(((gate_io *)io)->inner, prefix, cb, payload);
}

static void g_free(icm_fileio *io)
{
    (void)io; /* the test owns the struct */
}

static const icm_fileio_methods GATE_METHODS = {.version = 1,
                                                .name = "gate",
                                                .read = g_read,
                                                .read_range = g_read_range,
                                                .create_new = g_create,
                                                .write_replace = g_write,
                                                .remove = g_remove,
                                                .stat = g_stat,
                                                .list = g_list,
                                                .free = g_free};

#define N_OBJECTS 200

typedef struct fixture {
    gate_io io;
    char *names[N_OBJECTS];
} fixture;

static void content_of(size_t i, char *buf, size_t cap)
{
    snprintf(buf, cap, "object %zu:%0*zu", i, (int)(i % 50), i);
}

static void fixture_init(fixture *f, unsigned gate)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(icm_fileio_mem_new(&f->io.inner), 0);
    f->io.base.methods = &GATE_METHODS;
    f->io.gate = gate;
    pthread_mutex_init(&f->io.mu, NULL);
    pthread_cond_init(&f->io.cv, NULL);
    for (size_t i = 0; i < N_OBJECTS; i++) {
        char name[64], body[128];
        snprintf(name, sizeof name, "mem://b/t/metadata/m-%03zu.avro", i);
        f->names[i] = strdup(name);
        content_of(i, body, sizeof body);
        assert_int_equal(icm_fileio_create_new(f->io.inner, name, body, strlen(body)), 0);
    }
}

static void fixture_dispose(fixture *f)
{
    for (size_t i = 0; i < N_OBJECTS; i++)
        free(f->names[i]);
    icm_fileio_free(f->io.inner);
    pthread_cond_destroy(&f->io.cv);
    pthread_mutex_destroy(&f->io.mu);
}

static void assert_object(icm__prefetch *p, size_t i)
{
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(icm__prefetch_take(p, i, &data, &len), 0);
    char want[128];
    content_of(i, want, sizeof want);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(data, want, len);
    assert_int_equal(data[len], '\0');
    icm_free(data);
}

/* Every object's bytes, in order, as a read on this thread gives them; reads overlap (at least
 * four at once: the gate holds each read until four are going), never more than in_flight,
 * and no read starts more than `window` objects beyond the lowest not yet taken. */
static void test_same_bytes_overlapping_within_window(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 4);
    icm__prefetch *p = NULL;
    const unsigned in_flight = 8, window = 16;
    assert_int_equal(icm__prefetch_start(&p, &f.io.base, (const char *const *)f.names,
                                         N_OBJECTS, in_flight, window),
                     0);
    for (size_t i = 0; i < N_OBJECTS; i++) {
        pthread_mutex_lock(&f.io.mu);
        size_t started = f.io.started;
        pthread_mutex_unlock(&f.io.mu);
        assert_true(started <= i + window);
        assert_object(p, i);
    }
    icm__prefetch_finish(p);
    assert_int_equal(f.io.started, N_OBJECTS);
    assert_true(f.io.max_in_progress >= 4);
    assert_true(f.io.max_in_progress <= in_flight + 1); /* + a taker reading its own item */
    fixture_dispose(&f);
}

/* A missing object fails its own take with the read's code and error (naming it); the others
 * are unaffected. */
static void test_error_is_the_reads(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1);
    free(f.names[5]);
    f.names[5] = strdup("mem://b/t/metadata/missing.avro");
    icm__prefetch *p = NULL;
    assert_int_equal(icm__prefetch_start(&p, &f.io.base, (const char *const *)f.names, 10, 4,
                                         4),
                     0);
    for (size_t i = 0; i < 10; i++) {
        if (i != 5) {
            assert_object(p, i);
            continue;
        }
        char *data = (char *)"unchanged";
        size_t len = 7;
        assert_int_equal(icm__prefetch_take(p, i, &data, &len), ICM_ENOTFOUND);
        assert_null(data);
        assert_int_equal(len, 0);
        assert_int_equal(icm_error_last()->code, ICM_ENOTFOUND);
        assert_non_null(strstr(icm_error_last()->location, "missing.avro"));
    }
    icm__prefetch_finish(p);
    fixture_dispose(&f);
}

/* Taken out of order, far beyond the window, and some never taken: no take waits on a read
 * nobody starts, and finish frees what was fetched but not taken (ASan checks the leak). */
static void test_any_order_no_deadlock(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1);
    icm__prefetch *p = NULL;
    assert_int_equal(icm__prefetch_start(&p, &f.io.base, (const char *const *)f.names,
                                         N_OBJECTS, 4, 4),
                     0);
    assert_object(p, N_OBJECTS - 1); /* beyond the window: read by the taker */
    assert_object(p, 3);
    assert_object(p, 0);
    assert_object(p, 100);
    for (size_t i = 1; i < 20; i++)
        if (i != 3)
            assert_object(p, i);
    icm__prefetch_finish(p); /* items 20.. fetched or not, never taken */
    fixture_dispose(&f);
}

/* Nothing is started for one in flight or one object: take() reads on the caller's thread. */
static void test_inline_when_not_worth_threads(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f, 1);
    icm__prefetch *p = NULL;
    assert_int_equal(icm__prefetch_start(&p, &f.io.base, (const char *const *)f.names, 5, 1,
                                         8),
                     0);
    assert_int_equal(f.io.started, 0);
    for (size_t i = 0; i < 5; i++) {
        assert_object(p, i);
        assert_int_equal(f.io.started, i + 1);
    }
    icm__prefetch_finish(p);
    fixture_dispose(&f);
}

/* Local files are not prefetched; object-store and in-memory locations are. */
static void test_worthwhile(void **state)
{
    (void)state;
    icm_fileio *mem = NULL;
    assert_int_equal(icm_fileio_mem_new(&mem), 0);
    assert_false(icm__prefetch_worthwhile(mem, "/tmp/t/metadata/snap-1.avro"));
    assert_false(icm__prefetch_worthwhile(mem, "file:///tmp/t/metadata/snap-1.avro"));
    assert_true(icm__prefetch_worthwhile(mem, "mem://b/t/metadata/snap-1.avro"));
    icm_fileio_free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_overlapping_within_window),
        cmocka_unit_test(test_error_is_the_reads),
        cmocka_unit_test(test_any_order_no_deadlock),
        cmocka_unit_test(test_inline_when_not_worth_threads),
        cmocka_unit_test(test_worthwhile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
