/*
 * test_plan_energy.c -- the plan's energy per month and emissions
 * (plan_extra.has_grid, plan_energy.c) against closed forms.
 *
 * The scenario is test_plan.c's (tests/data/table/one_layer_dp.json): DP
 * on two workers (one accelerator each), 20 steps of t = 0.1 s, each
 * followed by a ring all-reduce of S = 2e6 bytes that nothing overlaps:
 * at b Gbit/s CU = t / (t + S*8 / (b*1e9)), the wall 20 (t + S*8/(b*1e9))
 * and the bytes 20 x 2 x S = 8e7.  With P_busy 500 W, P_idle 50 W, e
 * J/GB and G g CO2 per kWh, a month of 730 h:
 *
 *   kWh = (CU 500 + (1 - CU) 50) x 2 x 730 / 1000
 *         + 8e7 / wall x 3600 x 730 / 1e9 x e / 3.6e6
 *   kg CO2 = kWh x G / 1000.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/study/plan.h"

#define SCN "tests/data/table/one_layer_dp.json"

static const char *power = "workers.power_w={\"busy\": 500, \"idle\": 50}";

/* plan_compute_extra of SCN at CU 0.95 with bandwidths [1, 10] priced,
 * the overrides and x; returns its code, the result in *r, the message
 * in err. */
static int plan_g(const char *const *sets, int nset, const plan_extra *x,
                  plan_result **r, char *err, size_t errlen) {
    static plan_cost c;
    const char *text = "{\"wan_usd_per_gbps_month\": 200, "
                       "\"accelerator_usd_per_hour\": 2.5, \"accelerators\": "
                       "2, \"bandwidths_gbps\": [1, 10]}";
    ck_assert(!plan_cost_parse(text, "c.json", &c, err, errlen));
    plan_spec spec = {SCN, NULL, 0, sets, nset, 0.95, &c, 2, 0, NULL};
    *r = malloc(sizeof **r);
    ck_assert_ptr_nonnull(*r);
    return plan_compute_extra(&spec, x, NULL, NULL, *r, err, errlen);
}

static void ck_rel(double got, double want, double tol) {
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%.10g, expected %.10g",
                  got, want);
}

/* The closed form at every option: the least (3.04 Gbit/s), 1 and 10. */
static void check_options(const plan_result *r, double e, double g) {
    const plan_method *m = &r->method[0];
    ck_assert_int_eq(m->noptions, 3);
    ck_assert_double_eq(m->power.accelerators, 2);
    for (int k = 0; k < m->noptions; k++) {
        const plan_option *o = &m->option[k];
        double step = 0.1 + 2e6 * 8 / (o->gbps * 1e9), cu = 0.1 / step;
        double wall = 20 * step;
        ck_rel(o->cu, cu, 1e-7);
        ck_assert(o->has_run);
        ck_assert_double_eq(o->run.bytes, 8e7);
        double kwh = (cu * 500 + (1 - cu) * 50) * 2 * 730 / 1000 +
                     8e7 / wall * 3600 * 730 / 1e9 * e / 3.6e6;
        ck_rel(o->energy_kwh_month, kwh, 1e-7);
        ck_rel(o->emissions_kg_co2_month, kwh * g / 1000, 1e-7);
    }
    /* at 10 Gbit/s: CU 0.1 / 0.1016 = 0.98425..., the compute part
     * 2 x 730 x (0.98425 x 500 + 0.01575 x 50) / 1000 = 719.654 kWh */
    const plan_option *ten = &m->option[2];
    ck_assert_double_eq(ten->gbps, 10);
    if (e == 0) ck_rel(ten->energy_kwh_month, 719.6535433, 1e-6);
}

START_TEST(closed_form) {
    char err[1024];
    plan_result *r;
    const char *sets[] = {power, "network.joules_per_gb=100"};
    plan_extra x = {.explain = 1, .has_grid = 1, .grid_gco2_per_kwh = 300};
    ck_assert_msg(!plan_g(sets, 2, &x, &r, err, sizeof err), "%s", err);
    ck_assert(r->has_grid && r->grid_gco2_per_kwh == 300);
    check_options(r, 100, 300);
    free(r);
    /* without joules_per_gb: the compute part only; without explain the
     * runs are made for the grid all the same */
    plan_extra y = {.has_grid = 1, .grid_gco2_per_kwh = 0};
    ck_assert_msg(!plan_g(sets, 1, &y, &r, err, sizeof err), "%s", err);
    check_options(r, 0, 0);
    ck_assert_double_eq(r->method[0].option[1].emissions_kg_co2_month, 0);
    free(r);
}
END_TEST

/* No grid: nothing computed, nothing asked of the scenario. */
START_TEST(no_grid) {
    char err[1024];
    plan_result *r;
    plan_extra x = {.explain = 1};
    ck_assert_msg(!plan_g(NULL, 0, &x, &r, err, sizeof err), "%s", err);
    ck_assert(!r->has_grid);
    for (int k = 0; k < r->method[0].noptions; k++)
        ck_assert_double_eq(r->method[0].option[k].energy_kwh_month, 0);
    free(r);
}
END_TEST

START_TEST(needs_power) {
    char err[1024];
    plan_result *r;
    plan_extra x = {.explain = 1, .has_grid = 1, .grid_gco2_per_kwh = 300};
    const char *sets[] = {"network.joules_per_gb=100"};
    ck_assert_int_eq(plan_g(sets, 1, &x, &r, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err,
                     SCN ": dp: --grid-gco2-per-kwh needs workers.power_w "
                         "in the scenario (expected {\"busy\": W, \"idle\": "
                         "W} per accelerator)");
    free(r);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("plan_energy");
    TCase *tc = tcase_create("plan_energy");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, closed_form);
    tcase_add_test(tc, no_grid);
    tcase_add_test(tc, needs_power);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
