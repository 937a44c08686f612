/*
 * Tests for util/parallel.c: every iteration runs exactly once, on several threads when asked
 * (and in order on the caller's thread when not), and the loop returns only when all are done.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/parallel.h"

enum { N = 5000 };

typedef struct counts {
    atomic_int hits[N];
    atomic_int in_progress, most;
    size_t order[N];
    atomic_size_t seen;
} counts;

static void visit(void *ctx, size_t i)
{
    counts *c = ctx;
    int now = atomic_fetch_add(&c->in_progress, 1) + 1;
    int most = atomic_load(&c->most);
    while (now > most && !atomic_compare_exchange_weak(&c->most, &most, now))
        ;
    if (i % 500 == 0)
        usleep(2000); /* a slow one: the others go on meanwhile */
    atomic_fetch_add(&c->hits[i], 1);
    c->order[atomic_fetch_add(&c->seen, 1)] = i;
    atomic_fetch_sub(&c->in_progress, 1);
}

static void test_each_once_on_several_threads(void **state)
{
    (void)state;
    static counts c;
    icm__parallel_for(N, 8, visit, &c);
    assert_int_equal(atomic_load(&c.seen), N); /* all done on return */
    for (size_t i = 0; i < N; i++)
        assert_int_equal(atomic_load(&c.hits[i]), 1);
    assert_true(atomic_load(&c.most) >= 2);
    assert_true(atomic_load(&c.most) <= 8);
}

static void test_in_order_on_one_thread(void **state)
{
    (void)state;
    static counts c;
    icm__parallel_for(N, 1, visit, &c);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(c.order[i], i);
    assert_int_equal(atomic_load(&c.most), 1);
    static counts none;
    icm__parallel_for(0, 8, visit, &none);
    assert_int_equal(atomic_load(&none.seen), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_once_on_several_threads),
        cmocka_unit_test(test_in_order_on_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
