/*
 * test_explain.c -- expl_run: a run's wall time cut into parts that add
 * up to it exactly.
 *
 * For every shipped scenario (each variant; the paper's, the experiments'
 * and the two failure examples' with fewer steps) and
 * 200 random worlds (tests/random_world.h, with set-ups, standing queues,
 * failure traces, checkpoint and restart times besides): every worker's parts and the method's
 * sum to wall_ns to the nanosecond, none is negative, and the run_result
 * is run_simulate's byte for byte.  Then closed forms worked out by hand
 * next to the booked parts: compute only; two workers over a ring (the
 * bandwidth and latency of each step); a slower worker (its peer's gate
 * wait); a failure from a trace (its down time); a pair's set-up and the
 * step overhead.  Figures that would depend on buckets set
 * method.dp_bucket_mb=0 and method.bucket_mb=0 (BUCKETS below).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "random_world.h"
#include "sim/engine/explain.h"
#include "sim/out/explain_out.h"

/* The keys that bucket the layers of a sync, at 0 (per layer): one
 * string per key, the macro a run of elements of the lists below (a
 * second key is one more string here). */
#define BUCKETS "method.dp_bucket_mb=0", "method.bucket_mb=0"

static expl_result ex;
static run_result plain;

static int64_t parts_sum(const expl_parts *p) {
    int64_t s = 0;
    for (int k = 0; k < EXPL_PARTS; k++) {
        ck_assert_msg(p->ns[k] >= 0, "part %s is %lld", expl_part_names[k],
                      (long long)p->ns[k]);
        s += p->ns[k];
    }
    return s;
}

/* Explains cfg and checks the sums and the run_result against
 * run_simulate's. */
static void explain_checked(scn_config *cfg, const char *what) {
    char err[512];
    cfg->full = 0;
    ck_assert_msg(run_simulate(cfg, NULL, &plain, err, sizeof err) == 0,
                  "%s: %s", what, err);
    ck_assert_msg(expl_run(cfg, &ex, err, sizeof err) == 0, "%s: %s", what,
                  err);
    ck_assert_msg(memcmp(&plain, &ex.run, sizeof plain) == 0,
                  "%s: expl_run's result differs (wall %lld vs %lld)", what,
                  (long long)ex.run.wall_ns, (long long)plain.wall_ns);
    int64_t wall = ex.run.wall_ns;
    ck_assert_msg(parts_sum(&ex.method) == wall, "%s: method %lld of %lld",
                  what, (long long)parts_sum(&ex.method), (long long)wall);
    int differ = 0;
    for (int i = 0; i < ex.run.workers; i++) {
        ck_assert_msg(parts_sum(&ex.worker[i]) == wall,
                      "%s: worker %d: %lld of %lld", what, i,
                      (long long)parts_sum(&ex.worker[i]), (long long)wall);
        differ |= memcmp(&ex.worker[i], &ex.worker[0], sizeof ex.worker[0]);
    }
    ck_assert_int_eq(ex.workers_differ, differ != 0);
}

static int nchecked; /* variants scenario_file explained */

/* Each variant of a scenario file (and its base), with the sets given. */
static void scenario_file(const char *path, const char **sets, int n) {
    static scn_config cfg;
    scn_meta meta;
    char err[512];
    if (scn_meta_load(path, &meta, err, sizeof err)) return; /* not a run */
    for (int v = -1; v < meta.nvariants; v++) {
        const char *variant = v < 0 ? NULL : meta.variant[v];
        if (scn_load_variant(path, variant, sets, n, &cfg, err, sizeof err))
            continue; /* what `run` refuses too (a cost file) */
        char what[600];
        snprintf(what, sizeof what, "%s %s", path, variant ? variant : "");
        explain_checked(&cfg, what);
        nchecked++;
    }
}

/* The examples of failures over hours: fewer steps, with failures still
 * in them (a few, each with its repair and redone work), so that the
 * suite stays short. */
static const char *shorter_run(const char *name) {
    if (!strcmp(name, "failures.json")) return "steps=50000";
    if (!strcmp(name, "failures_dp.json")) return "steps=2000";
    return NULL;
}

/* Every .json below dir, recursively (the examples of shorter_run with
 * its steps instead of the sets). */
static void scenario_tree(const char *dir, const char **sets, int n) {
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[768];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = strlen(e->d_name);
        DIR *sub = opendir(path);
        if (sub) {
            closedir(sub);
            scenario_tree(path, sets, n);
        } else if (len > 5 && !strcmp(e->d_name + len - 5, ".json")) {
            const char *fewer = shorter_run(e->d_name);
            if (fewer) scenario_file(path, &fewer, 1);
            else scenario_file(path, sets, n);
        }
    }
    closedir(d);
}

START_TEST(test_shipped_scenarios) {
    scenario_file("scenarios/default.json", NULL, 0);
    scenario_tree("scenarios/examples", NULL, 0);
    scenario_tree("scenarios/train", NULL, 0);
    const char *shorter[] = {"steps=300"};
    scenario_tree("scenarios/experiments", shorter, 1);
    scenario_tree("scenarios/paper", shorter, 1);
    ck_assert_int_ge(nchecked, 90); /* none left out by a load error */
}
END_TEST

/* A failure trace of `text` at a new name made from path (mkstemp). */
static void trace_file(char *path, const char *text) {
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
}

START_TEST(test_random_worlds) {
    static scn_config cfg;
    char trace[] = "/tmp/dilosim-explain-XXXXXX";
    trace_file(trace, "2.5 0 down\n4.1 0 up\n6 1 down\n9.5 1 up\n");
    for (int k = 0; k < 200; k++) {
        random_world(&cfg, k);
        if (pick(5) == 0) cfg.startup_ms = 40;
        if (pick(5) == 0) cfg.queue_ms = 15;
        if (pick(8) == 0 && cfg.faults.mtbf_s == 0)
            snprintf(cfg.trace_path, sizeof cfg.trace_path, "%s", trace);
        if (k % 3 == 1) { /* checkpoints (by k: the picks stay the same) */
            cfg.checkpoint_every_steps = 1 + k % 7;
            cfg.checkpoint_s = 0.05 * (1 + k % 5);
        }
        if (k % 4 == 2) cfg.restart_s = 0.4 * (1 + k % 3);
        char what[64];
        snprintf(what, sizeof what, "random world %d", k);
        explain_checked(&cfg, what);
    }
    unlink(trace);
}
END_TEST

/* ---- closed forms ------------------------------------------------------ */

#define NS(s) ((int64_t)llround((s)*1e9))

/* Two workers, one layer, DP over a ring: 25e6 parameters' bf16
 * gradients are S = 5e7 bytes; at 1 Gbit/s (1.25e8 bytes/s) each of the 2
 * ring steps moves S/2 in 0.2 s after its latency.  The sets after `sets`
 * add to it. */
static void dp_pair(scn_config *cfg, const char **more, int n) {
    const char *sets[16] = {"model.params=25e6",
                            "model.layers=1",
                            "model.step_time_s=0.2",
                            "workers.count=2",
                            "method.name=\"dp\"",
                            BUCKETS,
                            "network.bandwidth_gbps=1",
                            "network.latency_ms=10",
                            "steps=5",
                            NULL};
    int k = 0;
    while (sets[k]) k++;
    for (int i = 0; i < n; i++) sets[k++] = more[i];
    char err[512];
    ck_assert_msg(scn_load_string("{}", "pair.json", sets, k, cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    explain_checked(cfg, "dp pair");
}

/* Every part but the ones listed (-1 ends the list) is 0 in p. */
static void only(const expl_parts *p, const int *keep) {
    for (int k = 0; k < EXPL_PARTS; k++) {
        int kept = 0;
        for (int j = 0; keep[j] >= 0; j++) kept |= keep[j] == k;
        if (!kept)
            ck_assert_msg(p->ns[k] == 0, "part %s is %lld", expl_part_names[k],
                          (long long)p->ns[k]);
    }
}

/* One worker (nothing to wait for, no bytes), and two over unbounded
 * links: compute only, 7 steps of 0.25 s. */
START_TEST(test_compute_only) {
    static scn_config cfg;
    const char *sets[] = {"workers.count=1", "model.step_time_s=0.25",
                          "steps=7"};
    char err[512];
    ck_assert_int_eq(scn_load_string("{}", "one.json", sets, 3, &cfg, err,
                                     sizeof err),
                     0);
    explain_checked(&cfg, "one worker");
    ck_assert_int_eq(ex.run.wall_ns, 7 * NS(0.25));
    ck_assert_int_eq(ex.method.ns[EXPL_COMPUTE], 7 * NS(0.25));
    only(&ex.method, (const int[]){EXPL_COMPUTE, -1});
    /* two workers, DP over unbounded links without latency: the same */
    const char *dp[] = {"workers.count=2", "model.step_time_s=0.25",
                        "steps=7",         "method.name=\"dp\"",
                        BUCKETS,           "network.bandwidth_gbps=\"inf\""};
    ck_assert_int_eq(scn_load_string("{}", "inf.json", dp,
                                     (int)(sizeof dp / sizeof *dp), &cfg, err,
                                     sizeof err),
                     0);
    explain_checked(&cfg, "unbounded links");
    ck_assert_int_eq(ex.run.syncs, 7);
    ck_assert_int_eq(ex.method.ns[EXPL_COMPUTE], 7 * NS(0.25));
    only(&ex.method, (const int[]){EXPL_COMPUTE, -1});
}
END_TEST

/* DP pair: every step ends in an all-reduce of 2 x (10 ms + 0.2 s), fully
 * exposed (one layer: the next forward waits for it; the run waits for
 * the last).  Bandwidth 5 x 0.4 s, latency 5 x 20 ms. */
START_TEST(test_dp_ring_by_hand) {
    static scn_config cfg;
    dp_pair(&cfg, NULL, 0);
    int64_t syncs = 5, per = 2 * (NS(0.01) + NS(0.2));
    ck_assert_int_eq(ex.run.syncs, syncs);
    ck_assert_int_eq(ex.run.wall_ns, 5 * NS(0.2) + syncs * per);
    ck_assert_int_eq(ex.method.ns[EXPL_COMPUTE], 5 * NS(0.2));
    ck_assert_int_eq(ex.method.ns[EXPL_BANDWIDTH], syncs * 2 * NS(0.2));
    ck_assert_int_eq(ex.method.ns[EXPL_LATENCY], syncs * 2 * NS(0.01));
    only(&ex.method,
         (const int[]){EXPL_COMPUTE, EXPL_BANDWIDTH, EXPL_LATENCY, -1});
    ck_assert_int_eq(ex.workers_differ, 0);
}
END_TEST

/* Worker 1 at speed 0.5: its steps take 0.4 s.  Worker 0 waits 0.2 s for
 * it at each of the 4 syncs whose next forward it blocks (gate_wait) and
 * at the last, after its last step (done_wait); worker 1 books 5 x 0.2 s
 * of straggler. */
START_TEST(test_slow_peer_by_hand) {
    static scn_config cfg;
    const char *more[] = {"workers.speed=[1, 0.5]"};
    dp_pair(&cfg, more, 1);
    int64_t per = 2 * (NS(0.01) + NS(0.2));
    ck_assert_int_eq(ex.run.wall_ns, 5 * NS(0.4) + 5 * per);
    ck_assert_int_eq(ex.worker[0].ns[EXPL_GATE_WAIT], 4 * NS(0.2));
    ck_assert_int_eq(ex.worker[0].ns[EXPL_DONE_WAIT], NS(0.2));
    ck_assert_int_eq(ex.worker[0].ns[EXPL_STRAGGLER], 0);
    ck_assert_int_eq(ex.worker[1].ns[EXPL_STRAGGLER], 5 * NS(0.2));
    ck_assert_int_eq(ex.worker[1].ns[EXPL_GATE_WAIT], 0);
    ck_assert_int_eq(ex.worker[1].ns[EXPL_COMPUTE], 5 * NS(0.2));
    ck_assert_int_eq(ex.workers_differ, 1);
}
END_TEST

/* Set-up 50 ms and step overhead 5 ms: the first all-reduce's first step
 * waits the overhead then the set-up of both pairs at once; every step
 * pays the overhead.  Startup 50 ms once, overhead 5 syncs x 2 steps x
 * 5 ms; bandwidth and latency as without them. */
START_TEST(test_startup_overhead_by_hand) {
    static scn_config cfg;
    const char *more[] = {"network.startup_ms=50",
                          "network.collective_overhead_ms=5"};
    dp_pair(&cfg, more, 2);
    int64_t per = 2 * (NS(0.005) + NS(0.01) + NS(0.2));
    ck_assert_int_eq(ex.run.wall_ns, 5 * NS(0.2) + 5 * per + NS(0.05));
    ck_assert_int_eq(ex.method.ns[EXPL_STARTUP], NS(0.05));
    ck_assert_int_eq(ex.method.ns[EXPL_OVERHEAD], 5 * 2 * NS(0.005));
    ck_assert_int_eq(ex.method.ns[EXPL_BANDWIDTH], 5 * 2 * NS(0.2));
    ck_assert_int_eq(ex.method.ns[EXPL_LATENCY], 5 * 2 * NS(0.01));
}
END_TEST

/* DiLoCo pair, worker 0 down from 1.3 s to 2.9 s (a trace): its down part
 * is 1.6 s exactly; what it lost is its redone part. */
START_TEST(test_failure_by_hand) {
    static scn_config cfg;
    char trace[] = "/tmp/dilosim-explain-XXXXXX";
    trace_file(trace, "1.3 0 down\n2.9 0 up\n");
    char set[128];
    snprintf(set, sizeof set, "faults.trace=\"%s\"", trace);
    const char *sets[] = {"model.params=25e6",
                          "model.layers=2",
                          "model.step_time_s=0.2",
                          "workers.count=2",
                          "method.name=\"diloco\"",
                          "method.H=4",
                          "steps=20",
                          set};
    char err[512];
    int rc = scn_load_string("{}", "fail.json", sets, 8, &cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    explain_checked(&cfg, "failure");
    unlink(trace);
    ck_assert_int_eq(ex.run.failures, 1);
    ck_assert_int_eq(ex.worker[0].ns[EXPL_DOWN], NS(2.9) - NS(1.3));
    ck_assert_int_eq(ex.worker[1].ns[EXPL_DOWN], 0);
    ck_assert_int_eq(ex.worker[0].ns[EXPL_REDONE],
                     ex.run.per_worker[0].lost_ns);
    ck_assert_int_gt(ex.worker[0].ns[EXPL_REDONE], 0);
    ck_assert_int_gt(ex.worker[0].ns[EXPL_RECOVERY], 0);
}
END_TEST

/* The DP pair with a checkpoint of 0.3 s after steps 2 and 4 (each
 * after its step's all-reduce, which the next forward waits for), and
 * worker 1 down from 0.1 s to 0.5 s (a trace) with a restart of 0.7 s:
 * the checkpoint part is 2 x 0.3 s on each worker (none is written twice:
 * the failure rolls back to step 0 before the first), worker 1's restart
 * part 0.7 s exactly. */
START_TEST(test_checkpoint_restart_by_hand) {
    static scn_config cfg;
    char trace[] = "/tmp/dilosim-explain-XXXXXX";
    trace_file(trace, "0.1 1 down\n0.5 1 up\n");
    char set[128];
    snprintf(set, sizeof set, "faults.trace=\"%s\"", trace);
    const char *more[] = {"faults.checkpoint_every_steps=2",
                          "faults.checkpoint_s=0.3", "faults.restart_s=0.7",
                          set};
    dp_pair(&cfg, more, 4);
    unlink(trace);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(ex.worker[i].ns[EXPL_CKPT], 2 * NS(0.3));
        ck_assert_int_eq(ex.run.per_worker[i].checkpoint_ns, 2 * NS(0.3));
    }
    ck_assert_int_eq(ex.worker[1].ns[EXPL_RESTART], NS(0.7));
    ck_assert_int_eq(ex.worker[0].ns[EXPL_RESTART], 0);
    ck_assert_int_eq(ex.run.restart_ns, NS(0.7));
    char buf[1024];
    expl_sentence(&cfg, &ex, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "; checkpoints 0.6 s; restarts 0.35 s;"));
}
END_TEST

/* The sentences of the DP pair (per step) and of a DiLoCo pair whose
 * worker 1 is slower, figures by hand: S = 5e7 bytes (50 MB), 0.42 s on
 * the stream per sync, all of it exposed; the wall 3.1 s and 5.1 s. */
START_TEST(test_sentence_by_hand) {
    static scn_config cfg;
    char buf[1024];
    dp_pair(&cfg, NULL, 0);
    int n = expl_sentence(&cfg, &ex, buf, sizeof buf);
    ck_assert_int_eq(n, (int)strlen(buf));
    ck_assert_str_eq(buf, "per step: each 50 MB gradient all-reduce takes "
                          "0.42 s at 1 Gbit/s; 0.42 s exposed x 5 steps = "
                          "2.1 s of 3.1 s; compute 1 s (CU 0.323).");
    char small[8];
    ck_assert_int_eq(expl_sentence(&cfg, &ex, small, sizeof small), n);
    ck_assert_str_eq(small, "per ste");
    const char *more[] = {"method.name=\"diloco\"", "method.H=1",
                          "workers.speed=[1, 0.5]"};
    dp_pair(&cfg, more, 3);
    expl_sentence(&cfg, &ex, buf, sizeof buf);
    ck_assert_str_eq(buf, "each 50 MB payload takes 0.42 s at 1 Gbit/s; "
                          "0.42 s exposed x 5 syncs = 2.1 s of 4.1 s; "
                          "waiting for late peers 0.5 s; slow steps and "
                          "slower workers 0.5 s; compute 1 s (CU 0.366).");
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_compute_only);
    tcase_add_test(tc, test_dp_ring_by_hand);
    tcase_add_test(tc, test_slow_peer_by_hand);
    tcase_add_test(tc, test_startup_overhead_by_hand);
    tcase_add_test(tc, test_failure_by_hand);
    tcase_add_test(tc, test_sentence_by_hand);
    tcase_add_test(tc, test_random_worlds);
    tcase_add_test(tc, test_checkpoint_restart_by_hand);
    tcase_add_test(tc, test_shipped_scenarios);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
