/*
 * test_schedule.c -- fragments, layouts, orders and sync steps.
 */
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "sim/base/schedule.h"

/* The one fragment applied after t (-1 for none; fails on several). */
static int applied(const sched_spec *s, int64_t t) {
    int f[64], n = sched_applied_after(s, t, f);
    ck_assert_int_le(n, 1);
    ck_assert_int_eq(sched_applied_after(s, t, NULL), n);
    return n ? f[0] : -1;
}

static int taken(const sched_spec *s, int64_t t, int64_t last) {
    int f[64], n = sched_taken_after(s, t, last, f);
    ck_assert_int_le(n, 1);
    ck_assert_int_eq(sched_take_phase(s, t, last) != 0, n);
    return n ? f[0] : -1;
}

static sched_spec spec(int L, int H, int P, int tau) {
    sched_spec s = {SCHED_STREAMING,
                    L,
                    H,
                    P,
                    tau,
                    0.5,
                    SCHED_STRIDED,
                    SCHED_ASCENDING,
                    SCHED_INNER,
                    SCHED_RULE_PAPER,
                    SCHED_SUBSET_DEFAULT};
    return s;
}

/* The paper's 1B setup: H 100, P 8.  Fragment q applies after
 * floor((q+1)*100/8) + 100k: 12, 25, 37, 50, 62, 75, 87, 100. */
START_TEST(one_b_offsets_keep_period_h) {
    sched_spec s = spec(24, 100, 8, 1);
    char err[128];
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    int64_t want[] = {12, 25, 37, 50, 62, 75, 87, 100};
    for (int j = 0; j < 8; j++) {
        ck_assert_int_eq(sched_apply_step(&s, j, 0), want[j]);
        ck_assert_int_eq(sched_apply_step(&s, j, 3), want[j] + 300);
    }
    int count[8] = {0};
    for (int64_t t = 1; t <= 1000; t++) {
        int f = applied(&s, t);
        if (f < 0) continue;
        ck_assert_int_eq((t - want[f]) % 100, 0);
        count[f]++;
        /* taken tau = 1 step before */
        ck_assert_int_eq(taken(&s, t - 1, INT64_MAX), f);
    }
    for (int j = 0; j < 8; j++) ck_assert_int_eq(count[j], 10);
}
END_TEST

/* The golden vectors' convention: H 6, P 2: fragment 0 at 3, 9, 15 and
 * fragment 1 at 6, 12. */
START_TEST(golden_vector_schedule) {
    sched_spec s = spec(2, 6, 2, 0);
    char err[128];
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    for (int64_t t = 1; t <= 15; t++) {
        int want = t % 6 == 3 ? 0 : t % 6 == 0 ? 1 : -1;
        ck_assert_int_eq(applied(&s, t), want);
    }
    /* tau 1: taken after 2, 5, 8, ... ; a sync applied after 16 > 15 is
     * not taken with last_step 15. */
    s.tau = 1;
    ck_assert_int_eq(taken(&s, 2, 15), 0);
    ck_assert_int_eq(taken(&s, 5, 15), 1);
    ck_assert_int_eq(taken(&s, 14, 15), 0);
    ck_assert_int_eq(taken(&s, 15, 15), -1);
    ck_assert_int_eq(taken(&s, 0, 15), -1);
}
END_TEST

START_TEST(layouts) {
    sched_spec s = spec(10, 100, 3, 0);
    int out[64];
    s.layout = SCHED_SEQUENTIAL; /* [0,3) [3,6) [6,10) */
    int want_seq[10] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 2};
    for (int l = 0; l < 10; l++)
        ck_assert_int_eq(sched_layer_fragment(&s, l), want_seq[l]);
    ck_assert_int_eq(sched_fragment_layers(&s, 2, out), 4);
    ck_assert_int_eq(out[0], 6);
    s.layout = SCHED_STRIDED; /* {0,3,6,9} {1,4,7} {2,5,8} */
    ck_assert_int_eq(sched_fragment_layers(&s, 0, out), 4);
    ck_assert_int_eq(out[3], 9);
    ck_assert_int_eq(sched_fragment_layers(&s, 1, out), 3);
    ck_assert_int_eq(out[2], 7);
    /* Every layer in exactly one fragment, for many shapes. */
    for (int L = 1; L <= 40; L++)
        for (int P = 1; P <= L; P++)
            for (int lay = 0; lay < 2; lay++) {
                sched_spec t = spec(L, 1000, P, 0);
                t.layout = (sched_layout)lay;
                int total = 0;
                for (int j = 0; j < P; j++) {
                    int n = sched_fragment_layers(&t, j, out);
                    ck_assert_int_ge(n, 1);
                    total += n;
                }
                ck_assert_int_eq(total, L);
            }
}
END_TEST

START_TEST(rotated_order) {
    sched_spec s = spec(8, 8, 4, 0);
    s.order = SCHED_ROTATED; /* fragments 1, 2, 3, 0 at steps 2, 4, 6, 8 */
    int want[] = {-1, 1, -1, 2, -1, 3, -1, 0};
    for (int t = 1; t <= 8; t++) ck_assert_int_eq(applied(&s, t), want[t - 1]);
    for (int j = 0; j < 4; j++)
        ck_assert_int_eq(sched_fragment_at(&s, sched_position_of(&s, j)), j);
}
END_TEST

START_TEST(dp_and_diloco_are_degenerate) {
    char err[128];
    sched_spec s = spec(24, 100, 8, 3);
    s.method = SCHED_DP;
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    for (int t = 1; t < 50; t++) ck_assert_int_eq(taken(&s, t, INT64_MAX), 0);
    s = spec(24, 100, 8, 3);
    s.method = SCHED_DILOCO;
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    ck_assert_int_eq(s.P, 1);
    ck_assert_int_eq(s.tau, 0);
    for (int t = 1; t <= 300; t++)
        ck_assert_int_eq(taken(&s, t, INT64_MAX), t % 100 == 0 ? 0 : -1);
}
END_TEST

START_TEST(normalize_rejects) {
    char err[128];
    sched_spec s = spec(24, 4, 8, 0);
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0); /* P > H */
    s.rule = SCHED_RULE_TORCHFT;
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(
        err, "fragments must be in 1..H = 4 under the torchft rule (got 8)");
    s = spec(24, 100, 8, 12);
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0); /* tau < H */
    s.rule = SCHED_RULE_TORCHFT;
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "tau must be in 0..floor(H/P)-1 = 11 (got 12)");
    s = spec(24, 100, 8, 100);
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "tau must be in 0..H-1 = 99 (got 100)");
    s = spec(24, 100, 8, 1);
    s.overlap = SCHED_EAGER;
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "tau must be 0 with eager overlap (got 1)");
    s = spec(4, 100, 8, 0);
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "fragments must be in 1..layers = 4 (got 8)");
    s = spec(24, 100, 8, 0);
    s.alpha = 1.5;
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), -1);
    ck_assert_str_eq(err, "alpha must be in [0, 1] (got 1.5)");
    s = spec(24, 100, 8, 11);
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
}
END_TEST

/* P > H: several fragments after one step.  H 3, P 5: offsets
 * floor((q+1)*3/5) = 0, 1, 1, 2, 3, the 0 taken as H = 3: after steps
 * 1, 4, ... fragments 1 and 2; after 2, 5, ... fragment 3; after 3, 6,
 * ... fragments 0 and 4. */
START_TEST(more_fragments_than_steps) {
    sched_spec s = spec(10, 3, 5, 0);
    char err[128];
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    int want[3][3] = {{2, 1, 2}, {1, 3, -1}, {2, 0, 4}}; /* count, ids */
    for (int64_t t = 1; t <= 9; t++) {
        int f[5], n = sched_applied_after(&s, t, f);
        const int *w = want[(t - 1) % 3];
        ck_assert_int_eq(n, w[0]);
        for (int i = 0; i < n; i++) ck_assert_int_eq(f[i], w[1 + i]);
        ck_assert_int_eq(sched_taken_after(&s, t, 9, f), n);
    }
    ck_assert_int_eq(sched_apply_step(&s, 0, 0), 3);
    ck_assert_int_eq(sched_apply_step(&s, 4, 1), 6);
    /* every shape: each fragment once per period, at its offset */
    for (int H = 1; H <= 12; H++)
        for (int P = 1; P <= 30; P++)
            for (int rot = 0; rot < 2; rot++) {
                sched_spec t = spec(30, H, P, 0);
                t.order = rot ? SCHED_ROTATED : SCHED_ASCENDING;
                ck_assert_int_eq(sched_normalize(&t, err, sizeof err), 0);
                int seen[30] = {0}, f[30];
                for (int64_t st = 1; st <= H; st++) {
                    int n = sched_applied_after(&t, st, f);
                    for (int i = 0; i < n; i++) {
                        ck_assert_int_eq(sched_offset(&t, f[i]), st);
                        if (i) /* in sync order */
                            ck_assert_int_lt(sched_position_of(&t, f[i - 1]),
                                             sched_position_of(&t, f[i]));
                        seen[f[i]]++;
                    }
                }
                for (int j = 0; j < P; j++) ck_assert_int_eq(seen[j], 1);
            }
}
END_TEST

/* tau up to H - 1 under the paper's rule: H 8, P 4 (offsets 2, 4, 6, 8),
 * tau 5: fragment 0 taken after 5 (for 10), fragment 1 after 7 (for 12),
 * fragment 2 after 1 (for 6): three in flight after step 7. */
START_TEST(tau_up_to_h) {
    sched_spec s = spec(8, 8, 4, 5);
    char err[128];
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    ck_assert_int_eq(sched_delay(&s), 5);
    ck_assert_int_eq(taken(&s, 1, 100), 2);
    ck_assert_int_eq(taken(&s, 3, 100), 3);
    ck_assert_int_eq(taken(&s, 5, 100), 0);
    ck_assert_int_eq(taken(&s, 7, 100), 1);
    ck_assert_int_eq(taken(&s, 2, 100), -1);
    ck_assert_int_eq(taken(&s, 5, 9), -1); /* would apply after 10 > 9 */
}
END_TEST

/* Outer overlap: taken after the sync step, applied H steps later. */
START_TEST(outer_overlap_takes_at_the_sync) {
    sched_spec s = spec(8, 8, 4, 0);
    char err[128];
    for (int o = SCHED_OUTER; o <= SCHED_EAGER; o++) {
        s.overlap = (sched_overlap)o;
        ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
        ck_assert_int_eq(sched_delay(&s), 8);
        ck_assert_int_eq(taken(&s, 2, 100), 0);
        ck_assert_int_eq(taken(&s, 8, 100), 3);
        ck_assert_int_eq(taken(&s, 8, 15), -1); /* applies after 16 */
        ck_assert_int_eq(taken(&s, 8, 16), 3);
    }
    s.method = SCHED_DP; /* DP has no overlap */
    ck_assert_int_eq(sched_normalize(&s, err, sizeof err), 0);
    ck_assert_int_eq(s.overlap, SCHED_INNER);
}
END_TEST

START_TEST(names_round_trip) {
    sched_method m;
    sched_layout l;
    sched_order o;
    ck_assert_int_eq(sched_parse_method("streaming", &m), 0);
    ck_assert_str_eq(sched_method_name(m), "streaming");
    ck_assert_int_eq(sched_parse_layout("sequential", &l), 0);
    ck_assert_str_eq(sched_layout_name(l), "sequential");
    ck_assert_int_eq(sched_parse_order("rotated", &o), 0);
    ck_assert_str_eq(sched_order_name(o), "rotated");
    ck_assert_int_eq(sched_parse_method("fedavg", &m), -1);
    sched_overlap v;
    sched_rule r;
    ck_assert_int_eq(sched_parse_overlap("eager", &v), 0);
    ck_assert_str_eq(sched_overlap_name(v), "eager");
    ck_assert_int_eq(sched_parse_rule("torchft", &r), 0);
    ck_assert_str_eq(sched_rule_name(r), "torchft");
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, one_b_offsets_keep_period_h);
    tcase_add_test(tc, golden_vector_schedule);
    tcase_add_test(tc, layouts);
    tcase_add_test(tc, rotated_order);
    tcase_add_test(tc, dp_and_diloco_are_degenerate);
    tcase_add_test(tc, normalize_rejects);
    tcase_add_test(tc, more_fragments_than_steps);
    tcase_add_test(tc, tau_up_to_h);
    tcase_add_test(tc, outer_overlap_takes_at_the_sync);
    tcase_add_test(tc, names_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
