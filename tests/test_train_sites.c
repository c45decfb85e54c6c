/*
 * test_train_sites.c -- the trainer's sites (train_config.site_replicas):
 * each of the M members is a site of G data-parallel replicas, one
 * parameter copy, G data shards (site s, replica k reads shard s G + k),
 * the G gradients averaged in FP32 in replica order every inner step.
 *
 *   - one site of G = 2 under DiLoCo with H above the steps (no outer
 *     sync) is plain DP over 2 replicas bit for bit: every report's train
 *     loss and tokens, the parameters, the eval loss of the parameters;
 *   - DiLoCo on M = 2 sites of G = 2 sends 2 sites' payloads (the bytes of
 *     M = 2 sites of one replica, and syncs x M x the payload by hand);
 *   - G = 1 given is the default bit for bit; threads 1 and 2 give the
 *     same bits with sites;
 *   - DP over 2 sites of 2 is DP over 4 replicas up to FP32 rounding (the
 *     sum is grouped by site);
 *   - the bounds' errors with their exact messages;
 *   - the adapter (sim/adapter/coupled.c): a scenario of sites runs its
 *     trainer with the sites' replicas, refusing sites that differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "models/train.h"
#include "sim/adapter/coupled.h"
#include "sim/config/scenario_train.h"
#include "train_fixture.h"

#define MAX_REPORTS 16

typedef struct {
    int n;
    train_report r[MAX_REPORTS];
} reports;

static int on_report(const train_report *r, void *ctx) {
    reports *z = ctx;
    ck_assert_int_lt(z->n, MAX_REPORTS);
    z->r[z->n++] = *r;
    return 0;
}

/* The fixture's transformer on M sites of G, method m every H steps
 * (one fragment, no overlap), 12 steps, a report every 4, with skewed
 * shards (each shard its own chain: a wrong shard shows in the bits). */
static train_config sites_cfg(int M, int G, sched_method m, int H) {
    train_config c = nn_cfg();
    c.replicas = M;
    c.site_replicas = G;
    c.steps = 12;
    c.data.skew = 0.5;
    c.sched = spec(m, H, 1, 0, 0);
    c.eval_interval = 4;
    return c;
}

static train *run(const train_config *c, reports *z) {
    train *tr;
    char err[256];
    ck_assert_msg(train_new(c, &tr, err, sizeof err) == 0, "%s", err);
    memset(z, 0, sizeof *z);
    ck_assert_msg(train_run(tr, on_report, z) == 0, "%s", train_error(tr));
    return tr;
}

static void same_reports(const reports *a, const reports *b, int eval) {
    ck_assert_int_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        ck_assert_int_eq(a->r[i].step, b->r[i].step);
        ck_assert_uint_eq(a->r[i].tokens, b->r[i].tokens);
        ck_assert_msg(a->r[i].train_loss == b->r[i].train_loss,
                      "report %d: train loss %.9g vs %.9g", i,
                      a->r[i].train_loss, b->r[i].train_loss);
        if (eval)
            ck_assert_msg(a->r[i].eval_loss == b->r[i].eval_loss,
                          "report %d: eval loss %.9g vs %.9g", i,
                          a->r[i].eval_loss, b->r[i].eval_loss);
    }
}

static void same_params(const train *a, int ra, const train *b, int rb) {
    size_t N = train_num_params(a);
    ck_assert_uint_eq(N, train_num_params(b));
    ck_assert_msg(!memcmp(train_params(a, ra), train_params(b, rb),
                          N * sizeof(float)),
                  "parameters differ");
}

START_TEST(one_site_is_dp) {
    reports zs, zd;
    train_config site = sites_cfg(1, 2, SCHED_DILOCO, 100); /* H > steps */
    train_config dp = sites_cfg(2, 1, SCHED_DP, 1);
    train *a = run(&site, &zs), *b = run(&dp, &zd);
    ck_assert_int_eq(train_site_replicas(a), 2);
    ck_assert_int_eq(zs.n, 3);
    /* DiLoCo's eval is of its outer parameters, never synced here: the
     * losses and tokens, and the parameters, are DP's */
    same_reports(&zs, &zd, 0);
    ck_assert_uint_eq(zs.r[2].tokens, 12u * 2 * 4 * 8);
    same_params(a, 0, b, 0);
    same_params(a, 0, b, 1);
    double la, lb;
    ck_assert_int_eq(train_eval_replica(a, 0, &la), 0);
    ck_assert_int_eq(train_eval_replica(b, 0, &lb), 0);
    ck_assert(la == lb);
    ck_assert_uint_eq(train_bytes(a), 0); /* no sync */
    train_free(a);
    train_free(b);
}
END_TEST

START_TEST(two_sites_bytes) {
    reports z4, z2;
    train_config sites = sites_cfg(2, 2, SCHED_DILOCO, 4);
    train_config plain = sites_cfg(2, 1, SCHED_DILOCO, 4);
    train *a = run(&sites, &z4), *b = run(&plain, &z2);
    /* 3 syncs (after steps 4, 8, 12), 2 sites, one fp32 payload each */
    uint64_t wire = train_fragment_wire_bytes(a, 0);
    ck_assert_uint_eq(wire, 4 * train_num_params(a));
    ck_assert_uint_eq(train_bytes(a), 3 * 2 * wire);
    ck_assert_uint_eq(train_bytes(a), train_bytes(b));
    ck_assert_uint_eq(z4.r[2].tokens, 12u * 4 * 4 * 8);
    /* the sites read other data than single replicas: other numbers */
    ck_assert(z4.r[2].train_loss != z2.r[2].train_loss);
    ck_assert(isfinite(z4.r[2].eval_loss));
    train_free(a);
    train_free(b);
}
END_TEST

START_TEST(one_is_default_and_threads) {
    reports za, zb;
    train_config d = sites_cfg(2, 1, SCHED_STREAMING, 4);
    d.sched.P = 2;
    d.sched.tau = 1;
    d.sched.alpha = 0.5;
    train_config dflt;
    train_config_default(&dflt);
    ck_assert_int_eq(dflt.site_replicas, 1);
    train *a = run(&d, &za), *b = run(&d, &zb);
    same_reports(&za, &zb, 1);
    same_params(a, 1, b, 1);
    train_free(a);
    train_free(b);
    train_config s1 = sites_cfg(2, 3, SCHED_STREAMING, 4), s2;
    s1.sched.P = 2;
    s1.sched.tau = 1;
    s1.sched.alpha = 0.5;
    s1.threads = 1;
    s2 = s1;
    s2.threads = 2;
    a = run(&s1, &za);
    b = run(&s2, &zb);
    same_reports(&za, &zb, 1);
    same_params(a, 0, b, 0);
    same_params(a, 1, b, 1);
    ck_assert_uint_eq(train_bytes(a), train_bytes(b));
    train_free(a);
    train_free(b);
}
END_TEST

START_TEST(dp_sites_near_dp) {
    reports za, zb;
    train_config s = sites_cfg(2, 2, SCHED_DP, 1),
                 r4 = sites_cfg(4, 1, SCHED_DP, 1);
    train *a = run(&s, &za), *b = run(&r4, &zb);
    size_t N = train_num_params(a);
    double m = 0;
    for (size_t i = 0; i < N; i++)
        m = fmax(m,
                 fabs((double)train_params(a, 0)[i] - train_params(b, 0)[i]));
    ck_assert_msg(m < 1e-5, "max difference %g", m);
    ck_assert_uint_eq(za.r[2].tokens, zb.r[2].tokens);
    ck_assert_double_eq_tol(za.r[2].train_loss, zb.r[2].train_loss, 1e-5);
    train_free(a);
    train_free(b);
}
END_TEST

static void refused(const train_config *c, const char *msg) {
    train *tr;
    char err[256];
    ck_assert_int_eq(train_new(c, &tr, err, sizeof err), MSG_EINPUT);
    ck_assert_ptr_null(tr);
    ck_assert_str_eq(err, msg);
}

START_TEST(bounds) {
    train_config c = sites_cfg(2, 0, SCHED_DILOCO, 4);
    refused(&c, "train: site_replicas 0 (expected 1..64)");
    c.site_replicas = 65;
    refused(&c, "train: site_replicas 65 (expected 1..64)");
    c.replicas = 17;
    c.site_replicas = 64;
    refused(&c, "train: 17 sites of 64 replicas are 1088 data shards "
                "(expected at most 1024)");
}
END_TEST

/* ---- the adapter ---------------------------------------------------- */

static const char *scenario =
    "{\"model\": {\"params\": 1e6, \"layers\": 2, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 1},"
    " \"method\": {\"name\": \"diloco\", \"H\": 4}, \"steps\": 8, \"seed\": 3,"
    " \"train\": {\"model\": {\"kind\": \"transformer\", \"vocab\": 16,"
    "   \"d\": 16, \"heads\": 2, \"layers\": 2, \"ctx\": 8},"
    "   \"data\": {\"kind\": \"markov\", \"successors\": 3, \"skew\": 0.5},"
    "   \"batch\": 2, \"seq\": 8, \"inner\": {\"lr\": 3e-3},"
    "   \"eval_interval\": 4, \"eval_batches\": 2, \"threads\": 1}}";

static void load(scn_config *cfg, scn_train *sec) {
    char err[512];
    ck_assert_msg(scn_load_string_train(scenario, "t.json", NULL, 0, cfg, sec,
                                        err, sizeof err) == 0,
                  "%s", err);
}

START_TEST(adapter_sites) {
    static scn_config cfg;
    static scn_train sec;
    load(&cfg, &sec);
    cpl_options o = {.cfg = &cfg, .train = &sec};
    cpl_summary plain, sites;
    char err[512];
    ck_assert_msg(cpl_run(&o, &plain, err, sizeof err) == 0, "%s", err);
    cfg.has_sites = 1;
    cfg.site_replicas[0] = cfg.site_replicas[1] = 3;
    cfg.site_intra_gbps[0] = cfg.site_intra_gbps[1] = 400;
    ck_assert_msg(cpl_run(&o, &sites, err, sizeof err) == 0, "%s", err);
    /* the same syncs of the same payloads; three times the tokens */
    ck_assert_uint_eq(sites.last.bytes_sent, plain.last.bytes_sent);
    ck_assert_uint_eq(sites.last.tokens, 3 * plain.last.tokens);
    ck_assert(sites.last.train_loss != plain.last.train_loss);
    cfg.site_replicas[1] = 2;
    ck_assert_int_eq(cpl_run(&o, &sites, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "train: site 1 has 2 replicas and site 0 has 3 "
                          "(expected every site of the same number in a "
                          "coupled run)");
    cfg.site_replicas[0] = cfg.site_replicas[1] = 65;
    ck_assert_int_eq(cpl_run(&o, &sites, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, "train: sites of 65 replicas (expected at most 64 "
                          "in a coupled run)");
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("train_sites");
    TCase *tc = tcase_create("train_sites");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, one_site_is_dp);
    tcase_add_test(tc, two_sites_bytes);
    tcase_add_test(tc, one_is_default_and_threads);
    tcase_add_test(tc, dp_sites_near_dp);
    tcase_add_test(tc, bounds);
    tcase_add_test(tc, adapter_sites);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
