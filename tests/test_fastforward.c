/*
 * test_fastforward.c -- the engine's fast paths change nothing.
 *
 * Every shipped scenario and each of its variants (the paper's at a
 * hopeless, a middling and a fast link; those with failures run --full
 * anyway and are left out), then a randomized set (methods,
 * tau, fragments, layouts, orders, codecs, collectives, latencies,
 * heterogeneous links and speeds, late: continue, sync timeouts, TCP
 * windows, stragglers, failures, checkpoint and restart times), run
 * twice: with the fast-forward and with `full`.  The two run_results
 * must be the same bytes: every time to the nanosecond, every byte
 * count, every counter.  Then the fast paths must actually have done
 * something on the paper's scenarios (a regression that turned them off
 * would pass the comparison).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "random_world.h"
#include "sim/engine/run.h"

static run_result fast, full;

/* Runs cfg both ways and compares; returns the CPU seconds of each. */
static void both_ways(scn_config *cfg, const char *what, double *t_fast,
                      double *t_full) {
    char err[512];
    struct timespec a, b, c;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    cfg->full = 0;
    ck_assert_msg(run_simulate(cfg, NULL, &fast, err, sizeof err) == 0,
                  "%s: %s", what, err);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    cfg->full = 1;
    ck_assert_msg(run_simulate(cfg, NULL, &full, err, sizeof err) == 0,
                  "%s: %s", what, err);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    ck_assert_msg(memcmp(&fast, &full, sizeof fast) == 0,
                  "%s: fast-forward and --full differ (wall %lld vs %lld ns, "
                  "bytes %llu vs %llu, events %llu vs %llu)",
                  what, (long long)fast.wall_ns, (long long)full.wall_ns,
                  (unsigned long long)fast.bytes_sent_total,
                  (unsigned long long)full.bytes_sent_total,
                  (unsigned long long)fast.events,
                  (unsigned long long)full.events);
    if (t_fast)
        *t_fast += (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    if (t_full)
        *t_full += (c.tv_sec - b.tv_sec) + 1e-9 * (c.tv_nsec - b.tv_nsec);
}

/* Each variant of a scenario file (and its base), with one extra set. */
static void scenario_file(const char *path, const char *set, double *tf,
                          double *tu) {
    static scn_config cfg;
    scn_meta meta;
    char err[512];
    ck_assert_msg(scn_meta_load(path, &meta, err, sizeof err) == 0, "%s", err);
    const char *sets[1] = {set};
    for (int v = -1; v < meta.nvariants; v++) {
        const char *variant = v < 0 ? NULL : meta.variant[v];
        ck_assert_msg(scn_load_variant(path, variant, sets, set ? 1 : 0, &cfg,
                                       err, sizeof err) == 0,
                      "%s", err);
        if (cfg.faults.mtbf_s > 0 || cfg.trace_path[0] || cfg.bw_diurnal)
            continue; /* the fast paths are off: both runs are --full (a
                         diurnal line always has a next step; traces have
                         their own worlds in test_bwtrace.c) */
        if (cfg.has_sites && cfg.site_allreduce == SCN_SITE_RING &&
            cfg.ack_bytes_per_kb > 0)
            continue; /* one ring over 16,384 accelerators with ACKs: no
                         closed form, every one of its 32,766 steps a sync
                         as flows (16 s a run); test_sites.c has its worlds
                         with ACKs */
        char what[600];
        snprintf(what, sizeof what, "%s %s %s", path,
                 variant ? variant : "(base)", set ? set : "");
        both_ways(&cfg, what, tf, tu);
    }
}

/* Every .json scenario in dir (not cost files), with one extra set (NULL:
 * none). */
static void scenario_dir_set(const char *dir, const char *set) {
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        scenario_file(path, set, NULL, NULL);
    }
    closedir(d);
}

static void scenario_dir(const char *dir) {
    scenario_dir_set(dir, NULL);
}

START_TEST(test_shipped_scenarios) {
    scenario_file("scenarios/default.json", NULL, NULL, NULL);
    scenario_dir("scenarios/examples");
    scenario_dir("scenarios/train");
    scenario_file("scenarios/experiments/markov.json", NULL, NULL, NULL);
}
END_TEST

/* The paper's setups, five methods each, at 0.5, 10 and 400 Gbit/s; and
 * the fast paths must have paid: at least 10x less CPU overall. */
START_TEST(test_paper_scenarios) {
    static const char *const bw[] = {"network.bandwidth_gbps=0.5",
                                     "network.bandwidth_gbps=10",
                                     "network.bandwidth_gbps=400"};
    static const char *const files[] = {"scenarios/paper/1b.json",
                                        "scenarios/paper/10b.json",
                                        "scenarios/paper/100b.json"};
    double tf = 0, tu = 0;
    for (int f = 0; f < 3; f++)
        for (int b = 0; b < 3; b++) scenario_file(files[f], bw[b], &tf, &tu);
    ck_assert_msg(tu > 10 * tf, "fast-forward %.3f s against --full %.3f s", tf,
                  tu);
}
END_TEST

START_TEST(test_randomized) {
    static scn_config cfg;
    for (int k = 0; k < 160; k++) {
        random_world(&cfg, k);
        if (k % 3 == 1) { /* checkpoints: periodic, in the signature;
                             mostly within the periods a jump compares
                             (longer ones simulate every period) */
            cfg.checkpoint_every_steps = k % 27 == 1 ? 7 : k % 5;
            cfg.checkpoint_s = 0.02 * (1 + k % 4);
        }
        if (k % 4 == 2) cfg.restart_s = 0.3;
        char what[64];
        snprintf(what, sizeof what, "random case %d", k);
        both_ways(&cfg, what, NULL, NULL);
    }
}
END_TEST

/* Larger worlds, where the net's and the stream's shortcuts engage: rings
 * of many alike flows (one flow per chunk size), heterogeneous rings
 * (flows stepped lazily, signatures without flow ids), an all-to-all with
 * more live flows than the heap of due instants starts at. */
START_TEST(test_larger_worlds) {
    static const char *const worlds[][6] = {
        {"method.name=\"dp\"", "workers.count=24", "steps=4", NULL},
        {"method.name=\"dp\"", "workers.count=20", "steps=4",
         "network.bandwidth_gbps=100",
         "network.up_gbps=[50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,"
         "67,68,69]",
         NULL},
        {"method.name=\"streaming\"", "workers.count=16", "method.H=6",
         "method.fragments=3", "steps=13", NULL},
        {"method.name=\"diloco\"", "workers.count=9", "method.H=4", "steps=9",
         "network.collective=\"all_to_all\"", NULL},
        {"method.name=\"dp\"", "workers.count=12", "steps=3",
         "network.latency_ms=2", "network.tcp_window_mb=8", NULL},
    };
    static scn_config cfg;
    for (size_t k = 0; k < sizeof worlds / sizeof worlds[0]; k++) {
        const char *sets[6];
        int n = 0;
        while (n < 6 && worlds[k][n]) {
            sets[n] = worlds[k][n];
            n++;
        }
        char err[512];
        ck_assert_msg(
            scn_load_string("{\"model\": {\"params\": 3e8, \"layers\": 6, "
                            "\"step_time_s\": 0.05}}",
                            "larger.json", sets, n, &cfg, err, sizeof err) == 0,
            "%s", err);
        char what[64];
        snprintf(what, sizeof what, "larger world %zu", k);
        both_ways(&cfg, what, NULL, NULL);
    }
}
END_TEST

/* The network keys that default to nothing, each set on the default
 * scenario and every example (ideal and TCP transports, rings, stars,
 * heterogeneous links, windows): a set-up per pair, ACKs on the reverse
 * links, a standing queue; and larger worlds with all three (an
 * all-to-all over TCP, a ring with a window). */
START_TEST(test_new_network_keys) {
    static const char *const sets[] = {"network.startup_ms=200",
                                       "network.ack_bytes_per_kb=22.8",
                                       "network.queue_ms=20"};
    for (int k = 0; k < 3; k++) {
        scenario_file("scenarios/default.json", sets[k], NULL, NULL);
        scenario_dir_set("scenarios/examples", sets[k]);
    }
    static const char *const worlds[] = {
        "{\"workers\": {\"count\": 6}, \"method\": {\"name\": \"diloco\", "
        "\"H\": 4}, \"network\": {\"collective\": \"all_to_all\", "
        "\"transport\": \"tcp\", \"latency_ms\": 5}, \"steps\": 9}",
        "{\"workers\": {\"count\": 8}, \"method\": {\"name\": \"dp\"}, "
        "\"network\": {\"latency_ms\": 2, \"tcp_window_mb\": 8}, "
        "\"steps\": 4}",
        "{\"workers\": {\"count\": 5}, \"method\": {\"name\": "
        "\"streaming\", \"H\": 6, \"fragments\": 3}, \"network\": "
        "{\"collective\": \"star\", \"transport\": \"tcp\"}, \"steps\": 13}",
    };
    static scn_config cfg;
    const char *model[] = {"model.params=3e8",
                           "model.layers=6",
                           "model.step_time_s=0.05",
                           sets[0],
                           sets[1],
                           sets[2]};
    for (size_t k = 0; k < sizeof worlds / sizeof worlds[0]; k++) {
        char err[512], what[64];
        ck_assert_msg(scn_load_string(worlds[k], "keys.json", model, 6, &cfg,
                                      err, sizeof err) == 0,
                      "%s", err);
        snprintf(what, sizeof what, "world %zu with the three keys", k);
        both_ways(&cfg, what, NULL, NULL);
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("fastforward");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_shipped_scenarios);
    tcase_add_test(tc, test_paper_scenarios);
    tcase_add_test(tc, test_randomized);
    tcase_add_test(tc, test_larger_worlds);
    tcase_add_test(tc, test_new_network_keys);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
