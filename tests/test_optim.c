/*
 * test_optim.c -- AdamW against a double-precision re-computation (bias
 * correction and decoupled decay included), the warmup + cosine schedule
 * at chosen steps, global-norm clipping, SGD with momentum, the outer
 * Nesterov sequence (hand-computed), per-range update counts and
 * configuration checks.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "models/optim.h"

/* |a - b| <= tol * max(1, |b|) */
#define REL(a, b, tol)                                                         \
    ck_assert_msg(fabs((double)(a) - (double)(b)) <=                           \
                      (tol)*fmax(1.0, fabs((double)(b))),                      \
                  "%.9g vs %.9g", (double)(a), (double)(b))

static optim_config constant_adamw(double lr) {
    optim_config c;
    optim_config_default(&c);
    c.lr = lr;
    c.cosine = 0;
    c.clip = 0;
    return c;
}

/* Three AdamW steps on [0.5, -1, 2]; the first two values decay, the
 * third does not.  Reference: the PyTorch formulas in double. */
START_TEST(adamw_three_steps) {
    const double lr = 0.01, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
    const double g[3][3] = {{0.1, -0.2, 0.3},
                            {-0.05, 0.4, 0.0},
                            {0.2, 0.1, -0.3}};
    const int decay[3] = {1, 1, 0};
    optim_config c = constant_adamw(lr);
    optim_range rg[2] = {{0, 2, 1}, {2, 1, 0}};
    optim_state *o = optim_new(&c, rg, 2, NULL, 0);
    ck_assert_ptr_nonnull(o);
    float p[3] = {0.5f, -1.0f, 2.0f};
    double pd[3] = {0.5, -1.0, 2.0}, m[3] = {0}, v[3] = {0};
    for (int t = 1; t <= 3; t++) {
        float gf[3];
        for (int i = 0; i < 3; i++) gf[i] = (float)g[t - 1][i];
        double used = optim_step(o, p, gf, NULL, 0, t);
        REL(used, lr, 1e-15);
        for (int i = 0; i < 3; i++) {
            double gi = gf[i];
            if (decay[i]) pd[i] *= 1 - lr * wd;
            m[i] = b1 * m[i] + (1 - b1) * gi;
            v[i] = b2 * v[i] + (1 - b2) * gi * gi;
            double mh = m[i] / (1 - pow(b1, t)), vh = v[i] / (1 - pow(b2, t));
            pd[i] -= lr * mh / (sqrt(vh) + eps);
            REL(p[i], pd[i], 1e-6);
        }
    }
    /* first step of Adam moves each value by about lr * sign(g) */
    ck_assert_int_eq(optim_range_steps(o, 0), 3);
    optim_free(o);
}
END_TEST

/* Hand-checked first step: p = 1, g = 0.5, lr 0.1, wd 0.1, decay on:
 * p = 1 * (1 - 0.01) - 0.1 * 1 = 0.89 (m_hat / sqrt(v_hat) = 1). */
START_TEST(adamw_first_step_by_hand) {
    optim_config c = constant_adamw(0.1);
    c.eps = 1e-12;
    float p = 1.0f, m = 0, v = 0, g = 0.5f;
    optim_adamw_update(&c, 0.1, 1, 1, 1.0f, &p, &g, &m, &v, 1);
    REL(p, 0.89, 1e-6);
    REL(m, 0.05, 1e-7);
    REL(v, 0.0125, 1e-7);
    float q = 1.0f, mq = 0, vq = 0;
    optim_adamw_update(&c, 0.1, 1, 0, 1.0f, &q, &g, &mq, &vq, 1);
    REL(q, 0.9, 1e-6); /* no decay */
}
END_TEST

START_TEST(schedule_values) {
    optim_config c;
    optim_config_default(&c);
    c.lr = 1e-3;
    c.lr_min = 1e-4;
    c.warmup = 10;
    c.total = 110;
    REL(optim_lr_at(&c, 1), 1e-4, 1e-12);
    REL(optim_lr_at(&c, 5), 5e-4, 1e-12);
    REL(optim_lr_at(&c, 10), 1e-3, 1e-12);
    /* p = 0.25: 1e-4 + 9e-4 * (1 + cos(pi/4)) / 2 */
    REL(optim_lr_at(&c, 35), 8.681980515339464e-4, 1e-12);
    REL(optim_lr_at(&c, 60), 5.5e-4, 1e-12); /* p = 0.5 */
    REL(optim_lr_at(&c, 110), 1e-4, 1e-12);
    REL(optim_lr_at(&c, 500), 1e-4, 1e-12);
    c.cosine = 0;
    REL(optim_lr_at(&c, 60), 1e-3, 1e-12);
    REL(optim_lr_at(&c, 3), 3e-4, 1e-12);
    c.cosine = 1;
    c.warmup = 0;
    c.total = 100;
    c.lr_min = 0;
    /* p = 1/100 */
    REL(optim_lr_at(&c, 1), 1e-3 * 0.5 * (1 + cos(3.141592653589793 / 100)),
        1e-12);
    REL(optim_lr_at(&c, 100), 0, 1e-12);
}
END_TEST

START_TEST(clipping) {
    ck_assert(optim_clip_factor(5.0, 0) == 1.0);
    ck_assert(optim_clip_factor(0.5, 1.0) == 1.0);
    REL(optim_clip_factor(5.0, 1.0), 1.0 / (5.0 + 1e-6), 1e-15);
    /* SGD lr 1 with clip 1 on g = (3, 4) over two ranges: p -= g / 5 */
    optim_config c;
    optim_config_default(&c);
    c.kind = OPTIM_SGD;
    c.lr = 1;
    c.cosine = 0;
    c.clip = 1;
    optim_range rg[2] = {{0, 1, 1}, {1, 1, 0}};
    optim_state *o = optim_new(&c, rg, 2, NULL, 0);
    float p[2] = {0, 0}, g[2] = {3, 4};
    optim_step(o, p, g, NULL, 0, 1);
    REL(p[0], -0.6, 1e-6);
    REL(p[1], -0.8, 1e-6);
    ck_assert(g[0] == 3 && g[1] == 4); /* gradients left alone */
    /* clipping over the selected range only: |g1| = 4 -> 1 */
    int sel = 1;
    optim_step(o, p, g, &sel, 1, 2);
    REL(p[0], -0.6, 1e-7);
    REL(p[1], -1.8, 1e-6);
    ck_assert_int_eq(optim_range_steps(o, 0), 1);
    ck_assert_int_eq(optim_range_steps(o, 1), 2);
    optim_free(o);
}
END_TEST

/* PyTorch SGD, momentum 0.9, lr 0.1, constant g = 1 from p = 1:
 * b = 1, 1.9, 2.71 -> p = 0.9, 0.71, 0.439. */
START_TEST(sgd_momentum) {
    float p = 1, g = 1, b = 0;
    const double want[3] = {0.9, 0.71, 0.439};
    for (int t = 0; t < 3; t++) {
        optim_sgd_update(0.1, 0.9, 1.0f, &p, &g, &b, 1);
        REL(p, want[t], 1e-6);
    }
    float q = 1;
    optim_sgd_update(0.5, 0, 1.0f, &q, &g, NULL, 1);
    ck_assert(q == 0.5f);
}
END_TEST

/* v = mu v + d; theta -= lr (d + mu v), lr 0.7, mu 0.9, theta 1,
 * deltas 0.5, 0.25, -0.1:
 *   v 0.5,  theta 1 - 0.7 * 0.95 = 0.335
 *   v 0.7,  theta 0.335 - 0.7 * 0.88 = -0.281
 *   v 0.53, theta -0.281 - 0.7 * 0.377 = -0.5449 */
START_TEST(nesterov_sequence) {
    float th = 1, v = 0;
    const float d[3] = {0.5f, 0.25f, -0.1f};
    const double want_t[3] = {0.335, -0.281, -0.5449};
    const double want_v[3] = {0.5, 0.7, 0.53};
    for (int k = 0; k < 3; k++) {
        optim_nesterov(0.7, 0.9, &th, &v, &d[k], 1);
        REL(th, want_t[k], 1e-6);
        REL(v, want_v[k], 1e-6);
    }
    /* mu 0: plain SGD, no buffer; lr 1 subtracts delta exactly */
    float x[2] = {3.0f, -1.5f};
    const float dd[2] = {0.75f, -0.5f};
    optim_nesterov(1.0, 0.0, x, NULL, dd, 2);
    ck_assert(x[0] == 2.25f && x[1] == -1.0f);
    optim_nesterov(2.0, 0.0, x, NULL, dd, 2);
    ck_assert(x[0] == 0.75f && x[1] == 0.0f);
}
END_TEST

START_TEST(checks) {
    optim_config c;
    optim_config_default(&c);
    char err[128];
    ck_assert_int_eq(optim_check(&c, err, sizeof err), MSG_OK);
    optim_config b = c;
    b.beta2 = 1.0;
    ck_assert_int_eq(optim_check(&b, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "betas"));
    b = c;
    b.lr_min = 1.0;
    ck_assert_int_eq(optim_check(&b, err, sizeof err), MSG_EINPUT);
    b = c;
    b.clip = -1;
    ck_assert_int_eq(optim_check(&b, NULL, 0), MSG_EINPUT);
    b = c;
    b.lr = NAN;
    ck_assert_int_eq(optim_check(&b, NULL, 0), MSG_EINPUT);
    b = c;
    b.momentum = 1;
    ck_assert_int_eq(optim_check(&b, NULL, 0), MSG_EINPUT);
    ck_assert_ptr_null(optim_new(&b, NULL, 0, err, sizeof err));
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, adamw_three_steps);
    tcase_add_test(tc, adamw_first_step_by_hand);
    tcase_add_test(tc, schedule_values);
    tcase_add_test(tc, clipping);
    tcase_add_test(tc, sgd_momentum);
    tcase_add_test(tc, nesterov_sequence);
    tcase_add_test(tc, checks);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
