/*
 * test_sites.c -- sites of many accelerators (workers.sites,
 * network.site_allreduce): the keys read strictly, the closed form of a
 * site's inside fabric proven against the plain path (N plain workers
 * doing DP over links of the fabric's rate and latency: the same step
 * ends, wall time and utilization to the nanosecond), hierarchical and
 * one-ring syncs against their closed forms by hand, and the fast-forward
 * against --full on random small worlds of sites.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/engine/collective.h"
#include "sim/engine/fabric.h"
#include "sim/engine/run.h"

static scn_config cfg;
static char err[2048];
static run_result res;

/* ---- the keys --------------------------------------------------------- */

/* Loads json with the overrides; expects exactly msg (NULL: success). */
static void load_expect(int line, const char *json, const char *set,
                        const char *msg) {
    const char *sets[1] = {set};
    err[0] = 0;
    int rc = scn_load_string(json, "s.json", sets, set ? 1 : 0, &cfg, err,
                             sizeof err);
    if (!msg) {
        ck_assert_msg(rc == 0, "line %d: %s", line, err);
        return;
    }
    ck_assert_msg(rc == MSG_EINPUT, "line %d: accepted, expected: %s", line,
                  msg);
    ck_assert_msg(strcmp(err, msg) == 0, "line %d:\n   got: %s\nwanted: %s",
                  line, err, msg);
}
#define OK(json, set) load_expect(__LINE__, json, set, NULL)
#define BAD(json, set, msg) load_expect(__LINE__, json, set, msg)

/* Two sites on line 2 from column 3. */
#define TWO                                                                    \
    "{\"workers\": {\"count\": 2,\n  \"sites\": [{\"replicas\": 4}, "          \
    "{\"replicas\": 2, \"intra_gbps\": 100, \"intra_latency_us\": 3}]}}"

START_TEST(test_keys_read) {
    OK(TWO, NULL);
    ck_assert_int_eq(cfg.has_sites, 1);
    ck_assert_int_eq(cfg.site_replicas[0], 4);
    ck_assert_int_eq(cfg.site_replicas[1], 2);
    ck_assert(cfg.site_intra_gbps[0] == 400); /* the default */
    ck_assert(cfg.site_intra_latency_us[0] == 0);
    ck_assert(cfg.site_intra_gbps[1] == 100);
    ck_assert(cfg.site_intra_latency_us[1] == 3);
    ck_assert_int_eq(cfg.site_allreduce, SCN_SITE_HIERARCHICAL);
    OK(TWO, "network.site_allreduce=\"ring\"");
    ck_assert_int_eq(cfg.site_allreduce, SCN_SITE_RING);
    OK("{}", NULL);
    ck_assert_int_eq(cfg.has_sites, 0);
    ck_assert_int_eq(cfg.site_replicas[5], 1);
}
END_TEST

START_TEST(test_keys_refused) {
    BAD(TWO, "workers.count=3",
        "s.json:2:12: workers.sites: array of 2 sites (expected "
        "workers.count = 3 sites)");
    BAD(TWO, "workers.sites=4",
        "--set workers.sites=4: workers.sites: wrong type: number (expected "
        "an array of workers.count = 2 site objects)");
    BAD(TWO, "workers.sites.1.gbps=4",
        "--set workers.sites.1.gbps=4: workers.sites[1].gbps: unknown key "
        "(expected one of: replicas, intra_gbps, intra_latency_us)");
    BAD(TWO, "workers.sites.0.replicas=0",
        "--set workers.sites.0.replicas=0: workers.sites[0].replicas: 0 is "
        "out of range (expected an integer in 1..65536)");
    BAD(TWO, "workers.sites.0.replicas=2.5",
        "--set workers.sites.0.replicas=2.5: workers.sites[0].replicas: 2.5 "
        "is not an integer (expected an integer in 1..65536)");
    BAD(TWO, "workers.sites.1.intra_gbps=0",
        "--set workers.sites.1.intra_gbps=0: workers.sites[1].intra_gbps: 0 "
        "is out of range (expected a number in [1e-06, 1000000000])");
    BAD(TWO, "workers.sites.1.intra_latency_us=-1",
        "--set workers.sites.1.intra_latency_us=-1: "
        "workers.sites[1].intra_latency_us: -1 is out of range (expected a "
        "number in [0, 1000000000])");
    BAD("{\"workers\": {\"sites\": [{}, {\"replicas\": 2}]}}", NULL,
        "s.json:1:24: workers.sites[0]: replicas is missing (expected an "
        "object with replicas, an integer in 1..65536)");
    BAD("{\"workers\": {\"sites\": [3, {\"replicas\": 2}]}}", NULL,
        "s.json:1:24: workers.sites[0]: wrong type: number (expected an "
        "object)");
    BAD("{\"network\": {\"site_allreduce\": \"ring\"}}", NULL,
        "s.json:1:32: network.site_allreduce: given without workers.sites "
        "(expected workers.sites, or no site_allreduce)");
    BAD(TWO, "network.site_allreduce=\"tree\"",
        "--set network.site_allreduce=\"tree\": network.site_allreduce: "
        "unknown value \"tree\" (expected one of: hierarchical, ring)");
    BAD(TWO, "network.completion=\"member\"",
        "--set network.completion=\"member\": network.completion: \"member\" "
        "cannot be combined with workers.sites (expected \"group\")");
    const char *two_sets[2] = {"network.site_allreduce=\"ring\"",
                               "network.collective=\"star\""};
    err[0] = 0;
    ck_assert_int_eq(scn_load_string(TWO, "s.json", two_sets, 2, &cfg, err,
                                     sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "--set network.collective=\"star\": "
                          "network.collective: \"star\" cannot be combined "
                          "with network.site_allreduce \"ring\" (expected "
                          "\"ring\", or site_allreduce \"hierarchical\")");
}
END_TEST

/* ---- runs --------------------------------------------------------------- */

/* The step ends of worker 0, as an observer hears them. */
#define MAX_ENDS 64
typedef struct {
    int n;
    int64_t at[MAX_ENDS];
} ends;

static int on_event(void *ctx, const run_event *e, char *msg, size_t len) {
    ends *s = ctx;
    (void)msg, (void)len;
    if (e->kind == RUN_EV_STEP_END && e->worker == 0 && s->n < MAX_ENDS)
        s->at[s->n++] = e->now;
    return 0;
}

/* Loads a scenario of the given overrides (nset of them) and runs it,
 * fast-forwarded, into *out; with s, again observed (every step end). */
static void run_sets(const char *const *sets, int nset, run_result *out,
                     ends *s) {
    static const char base[] = "{\"model\": {\"params\": 12345677, "
                               "\"step_time_s\": 0.05}, \"steps\": 12}";
    ck_assert_msg(scn_load_string(base, "t.json", sets, nset, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    ck_assert_msg(run_simulate(&cfg, NULL, out, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(out->finished, 1);
    if (!s) return;
    run_hooks h = {.observe = on_event, .observe_ctx = s};
    run_result again;
    s->n = 0;
    ck_assert_msg(run_simulate(&cfg, &h, &again, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(again.wall_ns, out->wall_ns);
}

/* One site of N replicas against N plain workers doing DP on links of the
 * fabric's rate and latency (no WAN): the same step ends, wall,
 * utilization and compute, to the ns.  The site runs `method` (for
 * DiLoCo and streaming H is past the run: inner steps only) with
 * site_allreduce `how`. */
static void plain_vs_site(int N, int L, double bucket_mb, double lat_us,
                          const char *method, const char *how) {
    char s[8][160];
    const char *sets[8];
    for (int i = 0; i < 8; i++) sets[i] = s[i];
    snprintf(s[0], 160, "model.layers=%d", L);
    snprintf(s[1], 160, "method.dp_bucket_mb=%.17g", bucket_mb);
    snprintf(s[2], 160, "workers.count=%d", N);
    snprintf(s[3], 160, "network.bandwidth_gbps=100");
    snprintf(s[4], 160, "network.latency_ms=%.17g", lat_us / 1000);
    snprintf(s[5], 160, "method.name=\"dp\"");
    run_result plain, site;
    ends a, b;
    run_sets(sets, 6, &plain, &a);
    snprintf(s[2], 160, "workers.count=1");
    snprintf(s[3], 160,
             "workers.sites=[{\"replicas\": %d, \"intra_gbps\": 100, "
             "\"intra_latency_us\": %.17g}]",
             N, lat_us);
    snprintf(s[4], 160, "network.site_allreduce=\"%s\"", how);
    snprintf(s[5], 160, "method.name=\"%s\"", method);
    snprintf(s[6], 160, "method.H=100");
    run_sets(sets, 7, &site, &b);
    const char *what = method;
    ck_assert_msg(plain.wall_ns == site.wall_ns,
                  "N %d L %d bucket %g lat %g %s %s: wall %lld vs %lld", N, L,
                  bucket_mb, lat_us, what, how, (long long)plain.wall_ns,
                  (long long)site.wall_ns);
    ck_assert(plain.compute_utilization == site.compute_utilization);
    ck_assert(plain.per_worker[0].utilization ==
              site.per_worker[0].utilization);
    ck_assert_int_eq(plain.per_worker[0].compute_ns,
                     site.per_worker[0].compute_ns);
    ck_assert_int_eq(a.n, 12);
    ck_assert_int_eq(b.n, 12);
    for (int k = 0; k < a.n; k++)
        ck_assert_msg(a.at[k] == b.at[k],
                      "N %d L %d %s %s: step %d ends %lld "
                      "vs %lld",
                      N, L, what, how, k + 1, (long long)a.at[k],
                      (long long)b.at[k]);
    ck_assert_int_eq(site.bytes_sent_total, 0); /* nothing crosses the WAN */
    ck_assert(plain.wall_ns > 12 * 50000000ll); /* the reduce is felt */
}

START_TEST(test_site_equals_plain) {
    static const double buckets[] = {0, 25, 1e9};
    static const double lats[] = {0, 7};
    int N = 2 + _i; /* 2, 3, 4 */
    for (int L = 1; L <= 6; L += 2 + (L == 3))
        for (int b = 0; b < 3; b++)
            for (int l = 0; l < 2; l++) {
                plain_vs_site(N, L, buckets[b], lats[l], "dp", "hierarchical");
                plain_vs_site(N, L, buckets[b], lats[l], "dp", "ring");
                plain_vs_site(N, L, buckets[b], lats[l], "diloco",
                              "hierarchical");
                plain_vs_site(N, L, buckets[b], lats[l], "streaming", "ring");
            }
}
END_TEST

/* One ring over sites of sizes n[0..M-1] against T = sum n plain workers
 * in a ring whose edges inside a site are the fabric's (100 Gbit/s, 7 us)
 * and whose edges between sites the WAN's (wan_gbps, wan ms): up, down
 * and the latency matrix of each plain worker as its edges are.  DP, 12
 * steps, with a step overhead or not: the same step ends, wall and
 * bytes. */
static void ring_vs_plain(const int *n, int M, int L, double bucket_mb,
                          double overhead_ms, int wan_gbps, double wan) {
    enum { TMAX = 12 };
    static char s[8][4096];
    const char *sets[8];
    for (int i = 0; i < 8; i++) sets[i] = s[i];
    int T = 0, site_of[TMAX], first[TMAX];
    for (int k = 0; k < M; k++)
        for (int j = 0; j < n[k]; j++) first[T] = j == 0, site_of[T++] = k;
    double intra = 0.007; /* ms */
    snprintf(s[0], 4096, "model.layers=%d", L);
    snprintf(s[1], 4096, "method.dp_bucket_mb=%.17g", bucket_mb);
    snprintf(s[2], 4096, "method.name=\"dp\"");
    snprintf(s[3], 4096, "network.collective_overhead_ms=%.17g", overhead_ms);
    snprintf(s[4], 4096, "workers.count=%d", T);
    int o = snprintf(s[5], 4096, "network.up_gbps=[");
    int p = snprintf(s[6], 4096, "network.down_gbps=[");
    int q = snprintf(s[7], 4096, "network.latency_matrix_ms=[");
    for (int i = 0; i < T; i++) {
        int next = (i + 1) % T, wan_out = site_of[next] != site_of[i] ||
                                          (M > 1 && first[next] && next == 0);
        o += snprintf(s[5] + o, 4096 - (size_t)o, "%s%d", i ? ", " : "",
                      wan_out ? wan_gbps : 100);
        p += snprintf(s[6] + p, 4096 - (size_t)p, "%s%d", i ? ", " : "",
                      first[i] && M > 1 ? wan_gbps : 100);
        q += snprintf(s[7] + q, 4096 - (size_t)q, "%s[", i ? ", " : "");
        for (int j = 0; j < T; j++) {
            int d = (j - i + T) % T, near = d == 1 || d == T - 1;
            int same = site_of[i] == site_of[j];
            double v = i == j                               ? 0
                       : near && same && !(M > 1 && T == 2) ? intra
                                                            : wan;
            if (M == 1 && near) v = intra;
            q += snprintf(s[7] + q, 4096 - (size_t)q, "%s%.17g", j ? ", " : "",
                          v);
        }
        q += snprintf(s[7] + q, 4096 - (size_t)q, "]");
    }
    snprintf(s[5] + o, 4096 - (size_t)o, "]");
    snprintf(s[6] + p, 4096 - (size_t)p, "]");
    snprintf(s[7] + q, 4096 - (size_t)q, "]");
    run_result plain, site;
    ends a, b;
    run_sets(sets, 8, &plain, &a);
    snprintf(s[4], 4096, "workers.count=%d", M);
    o = snprintf(s[5], 4096, "workers.sites=[");
    for (int k = 0; k < M; k++)
        o += snprintf(s[5] + o, 4096 - (size_t)o,
                      "%s{\"replicas\": %d, \"intra_gbps\": 100, "
                      "\"intra_latency_us\": 7}",
                      k ? ", " : "", n[k]);
    snprintf(s[5] + o, 4096 - (size_t)o, "]");
    snprintf(s[6], 4096, "network.bandwidth_gbps=%d", wan_gbps);
    snprintf(s[7], 4096, "network.latency_ms=%.17g", wan);
    const char *more[9];
    for (int i = 0; i < 8; i++) more[i] = s[i];
    more[8] = "network.site_allreduce=\"ring\"";
    run_sets(more, 9, &site, &b);
    ck_assert_msg(plain.wall_ns == site.wall_ns,
                  "M %d T %d L %d bucket %g overhead %g WAN %d: wall %lld "
                  "vs %lld",
                  M, T, L, bucket_mb, overhead_ms, wan_gbps,
                  (long long)plain.wall_ns, (long long)site.wall_ns);
    for (int k = 0; k < a.n; k++) ck_assert_int_eq(a.at[k], b.at[k]);
    ck_assert_int_eq(a.n, b.n);
    ck_assert(plain.compute_utilization == site.compute_utilization);
    /* the WAN bytes: what the plain workers at the sites' edges sent */
    uint64_t wan_bytes = 0;
    for (int i = 0; i < T; i++)
        if (site_of[(i + 1) % T] != site_of[i])
            wan_bytes += plain.per_worker[i].bytes_sent;
    ck_assert_uint_eq(site.bytes_sent_total, M > 1 ? wan_bytes : 0);
}

START_TEST(test_ring_equals_plain) {
    static const int sizes[][4] = {{2, 2}, {1, 2, 3}, {3, 1}, {2, 2, 2}, {4}};
    static const int count[] = {2, 3, 2, 3, 1};
    for (int c = 0; c < 5; c++)
        for (int L = 1; L <= 3; L += 2)
            for (int b = 0; b < 2; b++)
                for (int ovh = 0; ovh < 2; ovh++) {
                    ring_vs_plain(sizes[c], count[c], L, b ? 1e9 : 0,
                                  ovh ? 0.3 : 0, 10, 1);
                    /* a WAN of 1000 Gbit/s, 1 us: the inside edges bind */
                    ring_vs_plain(sizes[c], count[c], L, b ? 1e9 : 0,
                                  ovh ? 0.3 : 0, 1000, 0.001);
                }
}
END_TEST

/* The fabric's closed forms by hand: 4 accelerators at 400 Gbit/s (5e10
 * bytes/s), 5 us; S = 4e8 bytes: chunks of 1e8 bytes, 2 ms each. */
START_TEST(test_fabric_by_hand) {
    fabric f = {.n = 4, .rate = 5e10, .lat = 5000};
    ck_assert_int_eq(fabric_max_chunk(400000000, 4), 100000000);
    ck_assert_int_eq(fabric_max_chunk(10, 4), 3); /* 2, 3, 2, 3 */
    ck_assert_int_eq(fabric_step_ns(&f, 100000000), 5000 + 2000000);
    ck_assert_int_eq(fabric_half_ns(&f, 400000000), 3 * 2005000);
    ck_assert_int_eq(fabric_allreduce_ns(&f, 400000000), 6 * 2005000);
    fabric one = {.n = 1, .rate = 5e10, .lat = 5000};
    ck_assert_int_eq(fabric_half_ns(&one, 400000000), 0);
    /* 7 bytes at 3 bytes/s: 2.333... s, rounded up */
    fabric slow = {.n = 2, .rate = 3, .lat = 0};
    ck_assert_int_eq(fabric_step_ns(&slow, 7), 2333333334);
    ck_assert_int_eq(fabric_half_ns(&slow, 14), 2333333334);
    /* as the loader reads a site: 3.3 us as latency_ms 0.0033 is read */
    ck_assert_msg(scn_load_string(TWO, "s.json", NULL, 0, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    cfg.site_intra_latency_us[1] = 3.3;
    fabric g = fabric_of(&cfg, 1);
    ck_assert_int_eq(g.n, 2);
    ck_assert(g.rate == 100e9 / 8);
    ck_assert_int_eq(g.lat, 3300);
}
END_TEST

/* DP over 2 sites of 4 accelerators, one bucket of S = 4e8 bytes (1e8
 * fp32 parameters), WAN 10 Gbit/s (1.25e9 bytes/s) with 10 ms latency,
 * inside 400 Gbit/s (5e10 bytes/s) with 5 us; steps of 0.5 s.  The
 * bucket is the last op's: every step is its compute plus the whole
 * reduction. */
static void by_hand_run(const char *how, const char *more, run_result *out) {
    char allreduce[64];
    snprintf(allreduce, sizeof allreduce, "network.site_allreduce=\"%s\"", how);
    const char *sets[2] = {allreduce, more ? more : "steps=10"};
    static const char base[] =
        "{\"model\": {\"params\": 1e8, \"layers\": 4, \"step_time_s\": 0.5},"
        " \"workers\": {\"count\": 2, \"sites\": [{\"replicas\": 4, "
        "\"intra_latency_us\": 5}, {\"replicas\": 4, \"intra_latency_us\": "
        "5}]}, \"network\": {\"bandwidth_gbps\": 10, \"latency_ms\": 10}, "
        "\"method\": {\"name\": \"dp\", \"dp_bucket_mb\": 1e9, "
        "\"bucket_mb\": 1e9, \"codec\": \"fp32\", \"dp_codec\": "
        "\"fp32\"}, \"steps\": 10}";
    ck_assert_msg(scn_load_string(base, "h.json", sets, 2, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    ck_assert_msg(run_simulate(&cfg, NULL, out, err, sizeof err) == 0, "%s",
                  err);
}

START_TEST(test_hierarchical_by_hand) {
    by_hand_run("hierarchical", NULL, &res);
    /* inside: a reduce-scatter and an all-gather, 3 steps of 1e8 bytes
     * each (2 ms + 5 us); the WAN: a ring of 2 sites, 2 steps of 2e8
     * bytes (160 ms + 10 ms) */
    int64_t inside = 2 * 3 * (2000000 + 5000);
    int64_t wan = 2 * (160000000 + 10000000);
    int64_t step = 500000000 + inside + wan;
    ck_assert_int_eq(res.wall_ns, 10 * step);
    ck_assert_int_eq(res.per_worker[0].compute_ns, 10 * 500000000ll);
    /* each site sends 2(M-1)/M S = S per step over its WAN link */
    ck_assert_uint_eq(res.bytes_sent_total, 2ull * 10 * 400000000);
    ck_assert(res.compute_utilization == 5e9 / (double)(10 * step));
}
END_TEST

START_TEST(test_ring_by_hand) {
    by_hand_run("ring", NULL, &res);
    /* one ring of T = 8 accelerators: 14 steps of S/8 = 5e7 bytes; a WAN
     * edge takes 40 ms + 10 ms, an inside edge 1 ms + 5 us: the WAN
     * bounds each step */
    int64_t step = 500000000 + 14 * (40000000 + 10000000);
    ck_assert_int_eq(res.wall_ns, 10 * step);
    /* each site: 14 chunks of 5e7 over its WAN link, 2 S (T-1)/T */
    ck_assert_uint_eq(res.bytes_sent_total, 2ull * 10 * 14 * 50000000);
    /* a WAN of 1e6 Gbit/s without latency: the inside edges bound it
     * (5e7 bytes at 1.25e14 bytes/s: 400 ns) */
    run_result fast;
    by_hand_run("ring", "network.latency_ms=0", &fast);
    cfg.up_gbps[0] = cfg.up_gbps[1] = cfg.down_gbps[0] = cfg.down_gbps[1] = 1e6;
    ck_assert_msg(run_simulate(&cfg, NULL, &fast, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(fast.wall_ns, 10ll * (500000000 + 14 * (1000000 + 5000)));
    /* hierarchical on that WAN: 2 x 3 inside steps and 2 WAN steps of
     * 2e8 bytes (1600 ns) */
    cfg.site_allreduce = SCN_SITE_HIERARCHICAL;
    ck_assert_msg(run_simulate(&cfg, NULL, &fast, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(fast.wall_ns, 10ll * (500000000 + 6 * 2005000 + 2 * 1600));
}
END_TEST

/* DiLoCo over 2 sites, H = 5: each inner step is its compute and the
 * inside all-reduce of its one bucket (6 steps of 2.005 ms); after steps
 * 5 and 10 the sync's arrival waits for that all-reduce (the pseudo-
 * gradient needs the step's update), then the sync crosses the WAN
 * hierarchically (inside phases of 3 x 2.005 ms around the WAN ring of 2
 * x 170 ms), and the next forward waits for it. */
START_TEST(test_diloco_sites_by_hand) {
    by_hand_run("hierarchical", "method.name=\"diloco\"", &res);
    cfg.sched.H = 5;
    ck_assert_msg(run_simulate(&cfg, NULL, &res, err, sizeof err) == 0, "%s",
                  err);
    int64_t inner = 500000000 + 6 * 2005000;
    int64_t sync = 6 * 2005000 + 2 * (160000000 + 10000000);
    ck_assert_int_eq(res.syncs, 2);
    ck_assert_int_eq(res.wall_ns, 10 * inner + 2 * sync);
    ck_assert_uint_eq(res.bytes_sent_total, 2ull * 2 * 400000000);
    /* one ring of 8 instead: 14 steps of 5e7 bytes, 50 ms each */
    cfg.site_allreduce = SCN_SITE_RING;
    ck_assert_msg(run_simulate(&cfg, NULL, &res, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(res.wall_ns, 10 * inner + 2 * 14 * 50000000ll);
}
END_TEST

/* ---- one ring: its closed steps against its flows ---------------------- */

#define RW 5 /* sites */
typedef struct {
    int n;
    int64_t t[16];
    uint64_t tag[16];
} done_log;

static void on_done(void *ctx, int64_t now, uint64_t tag) {
    done_log *d = ctx;
    if (d->n < 16) d->t[d->n] = now, d->tag[d->n] = tag;
    d->n++;
}

/* Sites of 1..4 accelerators on links of different rates and latencies,
 * a step overhead, a flow cap, a set-up: jobs of several sizes among
 * several member sets, queued together, run as flows (closed 0) and
 * with the closed steps (1). */
static void ring_jobs(int closed, int64_t overhead, done_log *d,
                      uint64_t bytes[2 * RW]) {
    static const double rate[RW] = {1.25e9, 1.25e9, 3e8, 1.25e9, 7e9};
    net *n = net_new(2 * RW);
    ck_assert_ptr_nonnull(n);
    for (int i = 0; i < RW; i++) {
        net_link_set(n, 2 * i, rate[i]);
        net_link_set(n, 2 * i + 1, rate[(i + 2) % RW]);
    }
    int64_t lat[RW * RW];
    for (int i = 0; i < RW; i++)
        for (int j = 0; j < RW; j++) lat[i * RW + j] = 1000 * (1 + i + 2 * j);
    coll *c = coll_new(n, RW, COLL_RING, lat, 2e9, 1 << 20, on_done, d);
    ck_assert_ptr_nonnull(c);
    fabric fab[RW];
    for (int i = 0; i < RW; i++)
        fab[i] = (fabric){.n = 1 + i % 4, .rate = 1e9 * (1 + i), .lat = 700};
    ck_assert_int_eq(coll_set_sites(c, fab, 1, closed), 0);
    coll_set_step_overhead(c, overhead);
    ck_assert_int_eq(coll_set_startup(c, 5000, NULL), 0);
    static const uint64_t sizes[4] = {123456789, 1000003, 7, 40000000};
    static const uint8_t masks[4][RW] = {{1, 1, 1, 1, 1},
                                         {1, 0, 1, 0, 1},
                                         {0, 1, 0, 0, 0},
                                         {1, 1, 0, 1, 0}};
    d->n = 0;
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(coll_submit(c, 0, sizes[k], masks[k], (uint64_t)k), 0);
    int64_t t;
    while ((t = net_next_time(n)) != INT64_MAX) net_advance(n, t);
    for (int l = 0; l < 2 * RW; l++) bytes[l] = net_link_bytes(n, l);
    coll_free(c);
    net_free(n);
}

START_TEST(test_ring_closed_equals_flows) {
    for (int64_t ovh = 0; ovh <= 300000; ovh += 300000) {
        done_log a, b;
        uint64_t ba[2 * RW], bb[2 * RW];
        ring_jobs(0, ovh, &a, ba);
        ring_jobs(1, ovh, &b, bb);
        ck_assert_int_eq(a.n, 4);
        ck_assert_int_eq(b.n, 4);
        for (int k = 0; k < 4; k++) {
            ck_assert_uint_eq(a.tag[k], b.tag[k]);
            ck_assert_msg(a.t[k] == b.t[k], "job %d: flows %lld, closed %lld",
                          k, (long long)a.t[k], (long long)b.t[k]);
        }
        for (int l = 0; l < 2 * RW; l++) ck_assert_uint_eq(ba[l], bb[l]);
    }
}
END_TEST

/* ---- fast-forward ------------------------------------------------------- */

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static int draw(int n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (int)(rs % (uint64_t)n);
}

START_TEST(test_fastforward_sites) {
    static const char *const methods[] = {"dp", "diloco", "streaming"};
    static const double intra[] = {1, 50, 400};
    static const double lat_us[] = {0, 3, 2000};
    for (int k = 0; k < 80; k++) {
        char s[10][600];
        const char *sets[10];
        int n = 0, M = 1 + draw(4), L = 1 + draw(6), H = 2 + draw(8);
        for (int i = 0; i < 10; i++) sets[i] = s[i];
        snprintf(s[n++], 600, "workers.count=%d", M);
        snprintf(s[n++], 600, "model.layers=%d", L);
        snprintf(s[n++], 600, "method.name=\"%s\"", methods[draw(3)]);
        snprintf(s[n++], 600, "method.H=%d", H);
        snprintf(s[n++], 600, "method.fragments=%d", 1 + draw(L < H ? L : H));
        snprintf(s[n++], 600, "steps=%d", 10 + draw(60));
        snprintf(s[n++], 600, "network.site_allreduce=\"%s\"",
                 draw(2) ? "ring" : "hierarchical");
        snprintf(s[n++], 600, "method.dp_bucket_mb=%d", draw(2) ? 0 : 30);
        int o = snprintf(s[n], 600, "workers.sites=[");
        for (int i = 0; i < M; i++)
            o += snprintf(s[n] + o, 600 - (size_t)o,
                          "%s{\"replicas\": %d, \"intra_gbps\": %g, "
                          "\"intra_latency_us\": %g}",
                          i ? ", " : "", 1 + draw(5), intra[draw(3)],
                          lat_us[draw(3)]);
        snprintf(s[n] + o, 600 - (size_t)o, "]");
        n++;
        ck_assert_msg(scn_load_string("{\"model\": {\"params\": 1e7, "
                                      "\"step_time_s\": 0.02}}",
                                      "r.json", sets, n, &cfg, err,
                                      sizeof err) == 0,
                      "case %d: %s", k, err);
        if (draw(3) == 0) cfg.latency_ms[0] = 4;
        if (draw(3) == 0) cfg.up_gbps[0] = 0.5;
        if (draw(4) == 0) cfg.ack_bytes_per_kb = 22.8; /* ring: as flows */
        if (draw(5) == 0) cfg.transport = SCN_TRANSPORT_TCP;
        if (draw(6) == 0) cfg.collective_overhead_ms = 1;
        run_result fast, full;
        cfg.full = 0;
        ck_assert_msg(run_simulate(&cfg, NULL, &fast, err, sizeof err) == 0,
                      "case %d: %s", k, err);
        cfg.full = 1;
        ck_assert_msg(run_simulate(&cfg, NULL, &full, err, sizeof err) == 0,
                      "case %d: %s", k, err);
        ck_assert_msg(memcmp(&fast, &full, sizeof fast) == 0,
                      "case %d: fast-forward and --full differ (wall %lld vs "
                      "%lld ns)",
                      k, (long long)fast.wall_ns, (long long)full.wall_ns);
        ck_assert_int_eq(fast.finished, 1);
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("sites");
    TCase *t = tcase_create("sites");
    tcase_add_test(t, test_keys_read);
    tcase_add_test(t, test_keys_refused);
    tcase_add_loop_test(t, test_site_equals_plain, 0, 3);
    tcase_add_test(t, test_ring_equals_plain);
    tcase_add_test(t, test_fabric_by_hand);
    tcase_add_test(t, test_hierarchical_by_hand);
    tcase_add_test(t, test_ring_by_hand);
    tcase_add_test(t, test_diloco_sites_by_hand);
    tcase_add_test(t, test_ring_closed_equals_flows);
    tcase_add_test(t, test_fastforward_sites);
    suite_add_tcase(s, t);
    return s;
}

CHECK_MAIN(make_suite)
