/*
 * test_eventq.c -- the event queue pops in (time, class, push order).
 */
#include <stdlib.h>

#include "check_main.h"
#include "sim/engine/eventq.h"

START_TEST(ties_break_by_class_then_push_order) {
    eq_queue q;
    ck_assert_int_eq(eq_init(&q, 1), 0);
    /* Pushed out of order; same time 5 for most. */
    eq_push(&q, 5, 2, 0, 1, 0, 0);
    eq_push(&q, 5, 0, 0, 2, 0, 0);
    eq_push(&q, 3, 9, 0, 3, 0, 0);
    eq_push(&q, 5, 2, 0, 4, 0, 0);
    eq_push(&q, 5, 0, 0, 5, 0, 0);
    eq_push(&q, 5, 1, 0, 6, 0, 0);
    int want[] = {3, 2, 5, 6, 1, 4};
    eq_event ev;
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(eq_pop(&q, &ev), 1);
        ck_assert_int_eq(ev.a, want[i]);
    }
    ck_assert_int_eq(eq_pop(&q, &ev), 0);
    ck_assert_ptr_null(eq_peek(&q));
    eq_free(&q);
}
END_TEST

START_TEST(payload_survives) {
    eq_queue q;
    eq_init(&q, 4);
    eq_push(&q, -7, 3, 11, -42, 0xdeadbeefu, 0x0123456789abcdefull);
    eq_event ev;
    ck_assert_int_eq(eq_pop(&q, &ev), 1);
    ck_assert_int_eq(ev.time, -7);
    ck_assert_uint_eq(ev.cls, 3);
    ck_assert_uint_eq(ev.kind, 11);
    ck_assert_int_eq(ev.a, -42);
    ck_assert_uint_eq(ev.b, 0xdeadbeefu);
    ck_assert_uint_eq(ev.c, 0x0123456789abcdefull);
    eq_free(&q);
}
END_TEST

/* 10^6 random events (many equal times) come out sorted by the full key,
 * interleaving pushes and pops as a simulation does. */
START_TEST(million_random_events_sorted) {
    eq_queue q;
    eq_init(&q, 16);
    unsigned s = 12345;
    const int n = 1000000;
    int64_t last_t = INT64_MIN;
    uint32_t last_c = 0;
    uint64_t last_seq = 0;
    int popped = 0, pushed = 0;
    eq_event ev;
    while (popped < n) {
        int burst = pushed < n ? 1 + (int)(s % 3) : 0;
        for (int k = 0; k < burst && pushed < n; k++, pushed++) {
            s = s * 1103515245u + 12345u;
            /* Never before the last popped event: a simulation only
             * schedules into the future (many events share an instant). */
            int64_t base = last_t == INT64_MIN ? 0 : last_t + 1;
            eq_push(&q, base + (s >> 16) % 50, (s >> 8) % 3, 0, pushed, 0, 0);
        }
        ck_assert_int_eq(eq_pop(&q, &ev), 1);
        if (popped) {
            int ordered =
                ev.time > last_t ||
                (ev.time == last_t &&
                 (ev.cls > last_c || (ev.cls == last_c && ev.seq > last_seq)));
            ck_assert_msg(ordered, "event %d out of order", popped);
        }
        last_t = ev.time, last_c = ev.cls, last_seq = ev.seq;
        popped++;
    }
    ck_assert_uint_eq(q.len, 0);
    eq_free(&q);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("eventq");
    TCase *tc = tcase_create("order");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ties_break_by_class_then_push_order);
    tcase_add_test(tc, payload_survives);
    tcase_add_test(tc, million_random_events_sorted);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
