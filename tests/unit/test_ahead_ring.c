/*
 * test_ahead_ring.c: stress test of the ordered job ring (util/ahead.c: the caller claims and
 * runs jobs itself). For n in 0..24, windows 1..5 and every
 * early stop point, with jobs and the caller's work taking varying short spins:
 *  - every job taken (get) ran exactly once, every job at most once;
 *  - the slot a job writes is never in use by the caller or by another job at that time (an
 *    atomic busy flag per slot, set by whoever uses it);
 *  - get(i) hands out job i's own result.
 * Violations are counted with atomics (cmocka is not thread-safe) and asserted at the end.
 * Meant to be run under ThreadSanitizer as well.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "testutil.h"
#include "util/ahead.h"
#include "util/util.h"

#define MAX_N 24

typedef struct slot {
    atomic_int busy;
    uint64_t value;
} slot;

typedef struct ring_ctx {
    atomic_int runs[MAX_N];
    atomic_long overlaps;
    slot *slots;
    size_t window;
    uint64_t seed;
} ring_ctx;

static void spin(uint64_t units)
{
    volatile uint64_t x = 0;
    for (uint64_t k = 0; k < units * 50; k++)
        x += k;
    (void)x;
}

static void job(void *vctx, size_t i, void *vslot)
{
    ring_ctx *c = vctx;
    slot *s = vslot;
    atomic_fetch_add(&c->runs[i], 1);
    if (s != &c->slots[i % c->window])
        atomic_fetch_add(&c->overlaps, 1000);
    if (atomic_exchange(&s->busy, 1) != 0)
        atomic_fetch_add(&c->overlaps, 1);
    spin((i * 2654435761u) % 97);
    s->value = i * 7 + 1;
    atomic_store(&s->busy, 0);
}

static void run_once(size_t n, size_t window, size_t stop_after, uint64_t seed, long *bad)
{
    ring_ctx c;
    memset(&c, 0, sizeof c);
    slot slots[8];
    memset(slots, 0, sizeof slots);
    c.slots = slots;
    c.window = window;
    c.seed = seed;
    icm__ahead *a = NULL;
    icmt_ok(icm__ahead_start(&a, n, window, slots, sizeof slots[0], job, &c));
    size_t taken = n < stop_after ? n : stop_after;
    for (size_t i = 0; i < taken; i++) {
        slot *s = icm__ahead_get(a, i);
        if (atomic_exchange(&s->busy, 2) != 0)
            (*bad)++;
        if (s->value != i * 7 + 1)
            (*bad)++;
        spin((seed + i * 40503u) % 61);
        atomic_store(&s->busy, 0);
        icm__ahead_release(a, i);
    }
    icm__ahead_finish(a);
    for (size_t i = 0; i < n; i++) {
        int r = atomic_load(&c.runs[i]);
        if (r > 1 || (i < taken && r != 1))
            (*bad)++;
    }
    *bad += atomic_load(&c.overlaps);
}

static void test_ring_stress(void **state)
{
    (void)state;
    long bad = 0;
    uint64_t seed = 1;
    for (size_t n = 0; n <= MAX_N; n++)
        for (size_t window = 1; window <= 5; window++)
            for (size_t stop = 0; stop <= n; stop += (n < 8 ? 1 : 5)) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                run_once(n, window, stop, seed >> 33, &bad);
            }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_stress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
