/*
 * test_coupled.c -- coupled runs: the event engine drives the trainer.
 *
 *   - with blocking syncs and no faults a coupled run equals the lockstep
 *     trainer bit for bit (every row's losses, tokens and bytes, the
 *     replica and average evaluations too), for dp, diloco, streaming and
 *     sparta,
 *     tau 0..4 (4 >= H/P), P > H, outer and eager overlap, bandwidths
 *     from hopeless to infinite, heterogeneous speeds and stragglers, and
 *     three workers at speeds 1, 0.9 and 1.15;
 *   - late: continue at infinite bandwidth equals wait; at finite
 *     bandwidth the effective delays and the wall time equal a case
 *     worked out by hand (one layer, closed-form transfers);
 *   - a DiLoCo and a streaming failure from a trace equal the trainer
 *     calls written out by hand; a DP failure restores its checkpoint
 *     exactly (the run ends where one without the failure ends);
 *   - checkpoint and restart times only delay: the same rows, later by
 *     the checkpoints written before each (a restart: by its time);
 *   - runs with several outages (one where a worker fails after sending
 *     its payload and rejoins before the sync completes, and random
 *     traces) finish where `run` finishes, with finite losses;
 *   - sync_timeout_s leaves exactly the late worker out;
 *   - a non-finite loss stops the run with MSG_ENUM and one line.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "models/train.h"
#include "sim/adapter/coupled.h"

/* ---- helpers ------------------------------------------------------------ */

/* Two replicas of a 2-block transformer on a Markov chain; the timing
 * world: 2 layers of a 1M-parameter model, 1 s steps, 1 Gbit/s. */
static const char *const base =
    "{\"model\": {\"params\": 1e6, \"layers\": 2, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 1},"
    " \"method\": {\"name\": \"streaming\", \"H\": 6, \"fragments\": 2,"
    "   \"tau\": 1, \"alpha\": 0.5, \"codec\": \"e3m0\", \"dp_codec\": "
    "\"fp32\"},"
    " \"steps\": 24, \"seed\": 3,"
    " \"train\": {\"model\": {\"kind\": \"transformer\", \"vocab\": 16,"
    "   \"d\": 16, \"heads\": 2, \"layers\": 2, \"ctx\": 8},"
    "   \"data\": {\"kind\": \"markov\", \"successors\": 3},"
    "   \"batch\": 2, \"seq\": 8, \"inner\": {\"lr\": 3e-3},"
    "   \"eval_interval\": 2, \"eval_batches\": 2, \"threads\": 1,"
    "   \"eval\": [\"outer\", \"replica\", \"average\"]}}";

#define MAX_ROWS 64

typedef struct {
    cpl_row row[MAX_ROWS];
    int n;
} rows;

static int keep(const cpl_row *r, void *ctx) {
    rows *rs = ctx;
    ck_assert_int_lt(rs->n, MAX_ROWS);
    rs->row[rs->n++] = *r;
    return 0;
}

/* Loads base (or json) with overrides, NULL-terminated. */
static void load(scn_config *cfg, scn_train *sec, const char *json,
                 va_list ap) {
    const char *sets[32];
    int n = 0;
    for (const char *s; (s = va_arg(ap, const char *));) sets[n++] = s;
    char err[512];
    int rc = scn_load_string_train(json ? json : base, "case.json", sets, n,
                                   cfg, sec, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
}

/* Runs coupled (lockstep 0) or lockstep (1); checks it succeeded. */
static void run(rows *rs, cpl_summary *s, int lockstep, const char *json, ...) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    ck_assert_ptr_nonnull(cfg);
    va_list ap;
    va_start(ap, json);
    load(cfg, sec, json, ap);
    va_end(ap);
    rs->n = 0;
    cpl_options o = {cfg, sec, keep, rs, NULL, NULL};
    char err[512];
    int rc = lockstep ? cpl_lockstep(&o, s, err, sizeof err)
                      : cpl_run(&o, s, err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    free(cfg);
    free(sec);
}

/* The numerics of two runs' rows are the same bits.  `all`: the replica
 * and average evaluations too (not only the last row's). */
static void same_rows(const rows *a, const rows *b, int all) {
    ck_assert_int_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const cpl_row *x = &a->row[i], *y = &b->row[i];
        ck_assert_int_eq(x->step, y->step);
        ck_assert_uint_eq(x->tokens, y->tokens);
        ck_assert_uint_eq(x->bytes_sent, y->bytes_sent);
        ck_assert_msg(x->train_loss == y->train_loss,
                      "row %d train %.17g "
                      "%.17g",
                      i, x->train_loss, y->train_loss);
        ck_assert_msg(x->eval_loss == y->eval_loss,
                      "row %d (step %lld) "
                      "outer %.17g %.17g",
                      i, (long long)x->step, x->eval_loss, y->eval_loss);
        if (all || i == a->n - 1) {
            ck_assert(x->replica_loss == y->replica_loss);
            ck_assert_msg(x->average_loss == y->average_loss,
                          "row %d (step %lld) "
                          "average %.17g %.17g",
                          i, (long long)x->step, x->average_loss,
                          y->average_loss);
        }
    }
}

/* ---- coupled = lockstep ------------------------------------------------- */

/* Every method and tau, at hopeless, modest and infinite bandwidth, with
 * heterogeneous speeds and stragglers: the rows equal the lockstep ones. */
START_TEST(test_equals_lockstep) {
    static const char *const methods[][3] = {
        {"method.name=\"dp\"", "method.tau=0", "steps=12"},
        {"method.name=\"diloco\"", "method.tau=0", "method.alpha=0"},
        {"method.name=\"streaming\"", "method.tau=0", "method.alpha=0.5"},
        {"method.name=\"streaming\"", "method.tau=1", "method.alpha=0.5"},
        {"method.name=\"streaming\"", "method.tau=2", "method.alpha=0"},
        {"method.name=\"streaming\"", "method.tau=4", "method.alpha=0.5"},
        {"method.H=1", "method.tau=0", "steps=10"}, /* P 2 > H */
        {"method.overlap=\"outer\"", "method.tau=0", "method.alpha=0.5"},
        {"method.name=\"diloco\"", "method.overlap=\"outer\"", "steps=24"},
        {"method.overlap=\"eager\"", "method.tau=0", "method.alpha=0.5"},
        {"method.name=\"diloco\"", "method.overlap=\"eager\"", "steps=24"},
        {"method.name=\"streaming\"", "method.tau=[1, 3]", "method.alpha=0.5"},
        /* each replica goes on when it has its result: the far one later */
        {"network.completion=\"member\"", "method.tau=[1, 3]",
         "network.latency_ms=[0, 40]"},
        {"network.completion=\"member\"", "method.name=\"dp\"",
         "network.collective=\"star\""},
        /* random subsets: overlapping ones, merged a step later */
        {"method.name=\"sparta\"", "method.tau=0", "method.alpha=0.5"},
        {"method.name=\"sparta\"", "method.tau=1",
         "method.subset_fraction=0.1"},
    };
    static const char *const nets[] = {"network.bandwidth_gbps=0.001",
                                       "network.bandwidth_gbps=1",
                                       "network.bandwidth_gbps=\"inf\""};
    static const char *const worlds[][2] = {
        {"workers.speed=1", "workers.stragglers.probability=0"},
        {"workers.speed=[1, 1.7]", "workers.stragglers.probability=0.3"},
    };
    rows ref, got;
    cpl_summary s;
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        run(&ref, &s, 1, NULL, methods[m][0], methods[m][1], methods[m][2],
            NULL);
        for (size_t n = 0; n < sizeof nets / sizeof *nets; n++)
            for (size_t w = 0; w < 2; w++) {
                run(&got, &s, 0, NULL, methods[m][0], methods[m][1],
                    methods[m][2], nets[n], worlds[w][0], worlds[w][1], NULL);
                ck_assert_int_eq(s.sim.finished, 1);
                same_rows(&got, &ref, 1);
                /* the last row is the end of the simulated run; with
                 * member completion, the first member's (the average
                 * exists then; the run ends when the last has it) */
                double last = got.row[got.n - 1].sim_time_s;
                if (strstr(methods[m][0], "member"))
                    ck_assert(last > 0 && last <= s.sim.wall_time_s);
                else ck_assert(last == s.sim.wall_time_s);
                ck_assert(s.sim.wall_time_s > 0);
            }
    }
}
END_TEST

/* Three workers at speeds 1, 0.9 and 1.15: the fast one is steps ahead
 * when a row completes, and every column still equals lockstep's (the
 * replicas are evaluated as they were at the row's step). */
START_TEST(test_unequal_speeds_equal_lockstep) {
    static const char *const methods[][2] = {
        {"method.name=\"streaming\"", "method.tau=1"},
        {"method.name=\"diloco\"", "method.tau=0"},
        {"method.name=\"dp\"", "method.tau=0"},
    };
    rows ref, got;
    cpl_summary s;
    for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
        run(&ref, &s, 1, NULL, methods[m][0], methods[m][1], "workers.count=3",
            NULL);
        run(&got, &s, 0, NULL, methods[m][0], methods[m][1], "workers.count=3",
            "workers.speed=[1, 0.9, 1.15]", "network.bandwidth_gbps=\"inf\"",
            NULL);
        same_rows(&got, &ref, 1);
        run(&got, &s, 0, NULL, methods[m][0], methods[m][1], "workers.count=3",
            "workers.speed=[1, 0.9, 1.15]", "train.eval_interval=1", NULL);
        run(&ref, &s, 1, NULL, methods[m][0], methods[m][1], "workers.count=3",
            "train.eval_interval=1", NULL);
        same_rows(&got, &ref, 1);
    }
}
END_TEST

/* Per-worker taus all equal are the scalar tau, bit for bit and to the
 * nanosecond. */
START_TEST(test_equal_taus_are_scalar) {
    rows a, b;
    cpl_summary sa, sb;
    run(&a, &sa, 0, NULL, "method.tau=2", "network.bandwidth_gbps=0.01", NULL);
    run(&b, &sb, 0, NULL, "method.tau=[2, 2]", "network.bandwidth_gbps=0.01",
        NULL);
    same_rows(&a, &b, 1);
    ck_assert_int_eq(sa.sim.wall_ns, sb.sim.wall_ns);
    ck_assert_int_eq(sa.sim.delays.sum, sb.sim.delays.sum);
    for (int i = 0; i < a.n; i++)
        ck_assert(a.row[i].sim_time_s == b.row[i].sim_time_s);
}
END_TEST

/* The bandwidth reaches the clock but not the loss (with wait). */
START_TEST(test_time_grows_with_slower_links) {
    rows fast, slow;
    cpl_summary s;
    run(&fast, &s, 0, NULL, "network.bandwidth_gbps=100", NULL);
    run(&slow, &s, 0, NULL, "network.bandwidth_gbps=0.0001", NULL);
    same_rows(&fast, &slow, 1);
    ck_assert(slow.row[slow.n - 1].sim_time_s >
              fast.row[fast.n - 1].sim_time_s);
    ck_assert(slow.row[slow.n - 1].sim_utilization <
              fast.row[fast.n - 1].sim_utilization);
    ck_assert_uint_eq(slow.row[slow.n - 1].wan_bytes,
                      fast.row[fast.n - 1].wan_bytes);
}
END_TEST

/* ---- late: continue ------------------------------------------------------ */

START_TEST(test_continue_at_infinite_bandwidth_is_wait) {
    static const char *const taus[] = {"method.tau=0", "method.tau=1",
                                       "method.tau=2"};
    rows w, c;
    cpl_summary sw, sc;
    for (int i = 0; i < 3; i++) {
        run(&w, &sw, 0, NULL, taus[i], "network.bandwidth_gbps=\"inf\"", NULL);
        run(&c, &sc, 0, NULL, taus[i], "network.bandwidth_gbps=\"inf\"",
            "method.late=\"continue\"", NULL);
        same_rows(&c, &w, 1);
        ck_assert_int_eq(sc.sim.wall_ns, sw.sim.wall_ns);
        ck_assert_int_eq(sc.sim.delays.max, i);
        ck_assert_int_eq(sc.sim.delays.sum, (int64_t)i * sc.sim.delays.count);
    }
}
END_TEST

/* One layer, DiLoCo H 2, 2 workers, 1 s steps (thirds: the parameter
 * backward ends at the step's end), 8 steps.  A ring all-reduce of S
 * bytes between 2 workers is 2 transfers of S/2 at B: S / B.  Syncs are
 * taken after steps 2, 4, 6, 8.
 *
 * transfer 1.5 s: take 2 at 2 s, done at 3.5 s, inside step 4 (3..4 s,
 * its forward over): the merge lands before step 5, delay 5 - 1 - 2 = 2.
 * Likewise takes 4 and 6 (done 5.5, 7.5 s): delay 2.  Take 8 at 8 s,
 * done at 9.5 s, after the last step: the workers are at their boundary,
 * merge step 9, delay 0.  Nobody waits: wall 9.5 s, compute 8 s each.
 * Delays: 6 samples of 2 and 2 of 0: sum 12, max 2.
 *
 * transfer 2.5 s: take 2 done at 4.5 s; at the take after step 4 (4 s)
 * the previous sync of the fragment is in flight: the worker waits until
 * 4.5 s (merge step 5: it is inside step 4), then sends; steps 5 and 6
 * run 4.5..6.5 s, the sync of take 4 ends at 7 s: the take after step 6
 * waits 0.5 s again (merge step 7); steps 7, 8 run 7..9 s, take 6 ends
 * at 9.5 s: take 8 waits (merge step 9 of a worker inside step 8... it
 * has finished step 8's ops but not its last arrival: merge step 9,
 * delay 2), then sends: done at 12 s, the workers are done: merge step
 * 9, delay 0.  Wall 12 s; delays as before: sum 12, max 2. */
static void continue_case(double transfer_s, int64_t wall_ns) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    ck_assert_ptr_nonnull(cfg);
    char bw[64];
    /* S = 1e6 params fp32 = 4e6 bytes; S / B = transfer: B in Gbit/s */
    snprintf(bw, sizeof bw, "network.bandwidth_gbps=%.17g",
             4e6 * 8 / transfer_s / 1e9);
    const char *sets[] = {"model.layers=1",
                          "method.name=\"diloco\"",
                          "method.H=2",
                          "method.codec=\"fp32\"",
                          "method.late=\"continue\"",
                          "steps=8",
                          bw,
                          "train.model.layers=1"};
    char err[512];
    int rc = scn_load_string_train(base, "case.json", sets, 8, cfg, sec, err,
                                   sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    run_result r;
    ck_assert_int_eq(run_simulate(cfg, NULL, &r, err, sizeof err), 0);
    ck_assert_int_eq(r.finished, 1);
    ck_assert_int_eq(r.wall_ns, wall_ns);
    ck_assert_int_eq(r.delays.count, 8);
    ck_assert_int_eq(r.delays.sum, 12);
    ck_assert_int_eq(r.delays.max, 2);
    ck_assert_int_eq(r.delays.hist[2], 6);
    ck_assert_int_eq(r.delays.hist[0], 2);
    /* and the trainer follows: every merge lands where the engine says */
    rows rs;
    cpl_summary s;
    cpl_options o = {cfg, sec, keep, &rs, NULL, NULL};
    rs.n = 0;
    ck_assert_msg(cpl_run(&o, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.last.delay_max_steps, 2);
    ck_assert(s.last.delay_mean_steps == 1.5);
    free(cfg);
    free(sec);
}

START_TEST(test_continue_delays_by_hand) {
    continue_case(1.5, 9500000000);
    continue_case(2.5, 12000000000);
}
END_TEST

/* ---- failures ------------------------------------------------------------ */

/* Writes a fault trace to a temporary file; returns its path (static). */
static const char *trace_file(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/dilosim-coupled-%d.txt", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The trainer of a scenario's train section, for hand-written calls. */
static train *trainer_of(const char *const *sets, int n) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    ck_assert_ptr_nonnull(cfg);
    char err[512];
    ck_assert_msg(scn_load_string_train(base, "case.json", sets, n, cfg, sec,
                                        err, sizeof err) == 0,
                  "%s", err);
    train *tr;
    ck_assert_int_eq(train_new(&sec->train, &tr, err, sizeof err), 0);
    free(cfg);
    free(sec);
    return tr;
}

static void ok(train *tr, int rc) {
    ck_assert_msg(rc == 0, "%s", train_error(tr));
}

/* The one row (eval_interval 0) of a coupled run of base with sets[n]
 * and a fault trace (its text); one failure happens. */
static cpl_row failed_run(const char *const *sets, int n, const char *trace) {
    char tr_set[128];
    snprintf(tr_set, sizeof tr_set, "faults.trace=\"%s\"", trace_file(trace));
    const char *all[16];
    memcpy(all, sets, (size_t)n * sizeof *all);
    all[n] = tr_set;
    rows rs;
    cpl_summary s;
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    char err[512];
    ck_assert_msg(scn_load_string_train(base, "/tmp/case.json", all, n + 1, cfg,
                                        sec, err, sizeof err) == 0,
                  "%s", err);
    cpl_options o = {cfg, sec, keep, &rs, NULL, NULL};
    rs.n = 0;
    ck_assert_msg(cpl_run(&o, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.sim.failures, 1);
    ck_assert_int_eq(rs.n, 1);
    free(cfg);
    free(sec);
    unlink(trace_file(""));
    return rs.row[0];
}

/* The hand-driven trainer tr ended where the coupled run's row did. */
static void same_as_row(train *tr, const cpl_row *row) {
    double outer, r0;
    ok(tr, train_eval_outer(tr, &outer));
    for (int r = 0; r < train_replicas(tr); r++) ok(tr, train_land(tr, r));
    ok(tr, train_eval_replica(tr, 0, &r0));
    ck_assert(row->eval_loss == outer);
    ck_assert(row->replica_loss == r0);
    ck_assert_uint_eq(row->bytes_sent, train_bytes(tr));
    train_free(tr);
}

/* Both replicas' inner steps from..to. */
static void steps_both(train *tr, int from, int to) {
    for (int t = from; t <= to; t++)
        ok(tr, train_inner_step(tr, 0)), ok(tr, train_inner_step(tr, 1));
}

/* Both replicas contribute to fragment f's sync taken after `take`,
 * which is reduced over both. */
static void sync_both(train *tr, int f, int64_t take) {
    ok(tr, train_contribute(tr, 0, f, take, NULL));
    ok(tr, train_contribute(tr, 1, f, take, NULL));
    ok(tr, train_reduce(tr, f, 3, NULL));
}

/* Replica 0 alone syncs fragment f taken after `take` (replica 1 is
 * down: no merge for it), then replica 1 rejoins from it at that step. */
static void sync_alone_then_rejoin(train *tr, int f, int64_t take) {
    ok(tr, train_contribute(tr, 0, f, take, NULL));
    int64_t ms[2] = {take + 1, -1};
    ok(tr, train_reduce(tr, f, 1, ms));
    ok(tr, train_rejoin(tr, 1, 0, take));
}

/* DiLoCo, H 2, 6 steps, one layer, infinite links: every sync ends at
 * its take's instant.  Worker 1 fails at 2.5 s (inside step 3, whose
 * forward ended at 2.33 s, so replica 1 computed step 3) and is repaired
 * at 3 s; its download is instant and it waits for the next sync, taken
 * after step 4 by worker 0 alone at 4 s, and rejoins at step 5. */
START_TEST(test_diloco_failure_by_hand) {
    const char *sets[] = {"model.layers=1",
                          "method.name=\"diloco\"",
                          "method.H=2",
                          "method.alpha=0",
                          "steps=6",
                          "network.bandwidth_gbps=\"inf\"",
                          "train.eval_interval=0"};
    cpl_row row = failed_run(sets, 7, "2.5 1 down\n3 1 up\n");
    train *tr = trainer_of(sets, 7); /* the same, without the trace */
    steps_both(tr, 1, 2);
    sync_both(tr, 0, 2);
    ok(tr, train_inner_step(tr, 0)); /* step 3 */
    ok(tr, train_inner_step(tr, 1)); /* step 3 of replica 1, then lost */
    ok(tr, train_inner_step(tr, 0)); /* step 4 */
    sync_alone_then_rejoin(tr, 0, 4);
    steps_both(tr, 5, 6);
    sync_both(tr, 0, 6);
    same_as_row(tr, &row);
}
END_TEST

/* Streaming, 2 layers (strided: fragment f is layer f, timed and
 * trained), H 4, P 2, tau 0, alpha 0.5, 8 steps of 1 s: a step's six ops
 * last 1/6 s, its last forward ends at +1/3 s, the parameter backward of
 * layer 1 at +2/3 s and of layer 0 at +1 s.  Fragment 0 is taken after
 * steps 2 and 6, fragment 1 after 4 and 8; infinite links.  Worker 1
 * fails at 4.5 s, inside step 5 (which replica 1 computed at 4.33 s),
 * and is back at 5 s; it waits for the next fragment sync, fragment 0's
 * taken after step 6 by worker 0 alone at 6 s, and rejoins at step 7. */
START_TEST(test_streaming_failure_by_hand) {
    const char *sets[] = {"method.H=4", "method.tau=0", "steps=8",
                          "network.bandwidth_gbps=\"inf\"",
                          "train.eval_interval=0"};
    cpl_row row = failed_run(sets, 5, "4.5 1 down\n5 1 up\n");
    train *tr = trainer_of(sets, 5);
    steps_both(tr, 1, 2);
    sync_both(tr, 0, 2);
    steps_both(tr, 3, 4);
    sync_both(tr, 1, 4);
    steps_both(tr, 5, 5);            /* replica 1's step 5 is lost */
    ok(tr, train_inner_step(tr, 0)); /* step 6 */
    sync_alone_then_rejoin(tr, 0, 6);
    steps_both(tr, 7, 8);
    sync_both(tr, 1, 8);
    same_as_row(tr, &row);
}
END_TEST

/* DP with a checkpoint every 3 steps; worker 0 fails at 4.5 s (inside
 * step 5) and is back at 5 s: everybody redoes steps 4 and 5 from the
 * checkpoint of step 3.  The numerics end exactly where a run without
 * the failure ends; the clock and the tokens (work done) do not. */
START_TEST(test_dp_failure_restores_checkpoint) {
    char tr_set[128];
    snprintf(tr_set, sizeof tr_set, "faults.trace=\"%s\"",
             trace_file("4.5 0 down\n5 0 up\n"));
    rows a, b;
    cpl_summary sa, sb;
    run(&a, &sa, 0, NULL, "method.name=\"dp\"", "steps=9",
        "faults.checkpoint_steps=3", "network.bandwidth_gbps=\"inf\"", NULL);
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    const char *sets[] = {"method.name=\"dp\"", "steps=9",
                          "faults.checkpoint_steps=3",
                          "network.bandwidth_gbps=\"inf\"", tr_set};
    char err[512];
    ck_assert_msg(scn_load_string_train(base, "/tmp/case.json", sets, 5, cfg,
                                        sec, err, sizeof err) == 0,
                  "%s", err);
    cpl_options o = {cfg, sec, keep, &b, NULL, NULL};
    b.n = 0;
    ck_assert_msg(cpl_run(&o, &sb, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(sb.sim.failures, 1);
    /* the row of step 4 was written before the failure and again after */
    ck_assert_int_eq(b.n, a.n + 1);
    ck_assert_int_eq(b.row[1].step, 4);
    ck_assert_int_eq(b.row[2].step, 4);
    ck_assert(b.row[1].eval_loss == b.row[2].eval_loss); /* redone alike */
    ck_assert(b.row[2].sim_time_s > b.row[1].sim_time_s);
    const cpl_row *x = &a.row[a.n - 1], *y = &b.row[b.n - 1];
    ck_assert_int_eq(y->step, 9);
    ck_assert(x->eval_loss == y->eval_loss);
    ck_assert(x->train_loss == y->train_loss);
    ck_assert(x->replica_loss == y->replica_loss);
    ck_assert(y->tokens > x->tokens);
    ck_assert(y->sim_time_s > x->sim_time_s);
    free(cfg);
    free(sec);
    unlink(trace_file(""));
}
END_TEST

/* Checkpoints only delay (faults.checkpoint_s): over unbounded links,
 * with blocking syncs, every method's rows are the same bits, each row of
 * step t later by the floor((t - 1) / N) checkpoints written before it
 * (that of step t itself comes after the row).  A restart
 * (faults.restart_s) delays DP's resume after a traced failure: the same
 * rows, the last exactly r later. */
START_TEST(test_checkpoints_shift_time_only) {
    const char *methods[][2] = {{"method.name=\"dp\"", "method.H=6"},
                                {"method.name=\"diloco\"", "method.H=6"},
                                {"method.name=\"streaming\"", "method.H=6"}};
    for (int m = 0; m < 3; m++) {
        rows a, b;
        cpl_summary sa, sb;
        run(&a, &sa, 0, NULL, methods[m][0], methods[m][1],
            "network.bandwidth_gbps=\"inf\"", NULL);
        run(&b, &sb, 0, NULL, methods[m][0], methods[m][1],
            "network.bandwidth_gbps=\"inf\"", "faults.checkpoint_every_steps=4",
            "faults.checkpoint_s=0.5", NULL);
        same_rows(&a, &b, 1);
        for (int i = 0; i < a.n; i++) /* in ns: the rows' s are rounded */
            ck_assert_msg(llround(b.row[i].sim_time_s * 1e9) -
                                  llround(a.row[i].sim_time_s * 1e9) ==
                              (a.row[i].step - 1) / 4 * 500000000,
                          "method %d, step %lld: %.17g vs %.17g", m,
                          (long long)a.row[i].step, b.row[i].sim_time_s,
                          a.row[i].sim_time_s);
    }
    char tr_set[128];
    snprintf(tr_set, sizeof tr_set, "faults.trace=\"%s\"",
             trace_file("4.5 0 down\n5 0 up\n"));
    rows a, b;
    cpl_summary sa, sb;
    run(&a, &sa, 0, NULL, "method.name=\"dp\"", "steps=9",
        "faults.checkpoint_steps=3", "network.bandwidth_gbps=\"inf\"", tr_set,
        NULL);
    run(&b, &sb, 0, NULL, "method.name=\"dp\"", "steps=9",
        "faults.checkpoint_steps=3", "network.bandwidth_gbps=\"inf\"", tr_set,
        "faults.restart_s=1.25", NULL);
    unlink(trace_file(""));
    ck_assert_int_eq(sb.sim.failures, 1);
    same_rows(&a, &b, 1);
    ck_assert(llround(b.row[b.n - 1].sim_time_s * 1e9) -
                  llround(a.row[a.n - 1].sim_time_s * 1e9) ==
              1250000000);
}
END_TEST

/* Two workers, 0.1 s steps of a 4-layer 1e8-parameter model at 100
 * Gbit/s, a small MLP trained, 10 steps, eval every step. */
static const char *const outages =
    "{\"model\": {\"params\": 1e8, \"layers\": 4, \"step_time_s\": 0.1},"
    " \"workers\": {\"count\": 2},"
    " \"network\": {\"bandwidth_gbps\": 100},"
    " \"method\": {\"name\": \"diloco\", \"H\": 2},"
    " \"steps\": 10, \"seed\": 1,"
    " \"train\": {\"model\": {\"kind\": \"mlp\", \"vocab\": 16, \"d\": 8,"
    "   \"layers\": 2, \"mlp_ratio\": 2},"
    "   \"data\": {\"kind\": \"markov\", \"successors\": 3},"
    "   \"batch\": 2, \"seq\": 4, \"eval_interval\": 1, \"eval_batches\": 1,"
    "   \"threads\": 1, \"eval\": [\"outer\", \"replica\", \"average\"]}}";

/* A coupled run of `outages` with the fault trace `trace` and sets[n]
 * finishes where `run` finishes: the same simulated run, a row for every
 * step up to the last, finite losses. */
static void outages_finish(const char *trace, const char *const *sets, int n) {
    char tr_set[128];
    snprintf(tr_set, sizeof tr_set, "faults.trace=\"%s\"", trace_file(trace));
    const char *all[16];
    memcpy(all, sets, (size_t)n * sizeof *all);
    all[n] = tr_set;
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    ck_assert_ptr_nonnull(cfg);
    char err[512];
    ck_assert_msg(scn_load_string_train(outages, "/tmp/case.json", all, n + 1,
                                        cfg, sec, err, sizeof err) == 0,
                  "%s", err);
    run_result alone;
    ck_assert_int_eq(run_simulate(cfg, NULL, &alone, err, sizeof err), 0);
    rows rs;
    cpl_summary s;
    cpl_options o = {cfg, sec, keep, &rs, NULL, NULL};
    rs.n = 0;
    ck_assert_msg(cpl_run(&o, &s, err, sizeof err) == 0, "%s\ntrace:\n%s", err,
                  trace);
    ck_assert_int_eq(s.sim.finished, alone.finished);
    ck_assert_int_eq(s.sim.wall_ns, alone.wall_ns);
    ck_assert_int_eq(s.sim.failures, alone.failures);
    ck_assert_int_eq(s.sim.syncs, alone.syncs);
    ck_assert_int_eq(rs.n, 10);
    for (int i = 0; i < rs.n; i++) {
        const cpl_row *r = &rs.row[i];
        ck_assert_int_eq(r->step, i + 1);
        ck_assert_msg(isfinite(r->eval_loss) && isfinite(r->replica_loss) &&
                          isfinite(r->average_loss),
                      "row %d\ntrace:\n%s", i, trace);
    }
    free(cfg);
    free(sec);
    unlink(trace_file(""));
}

/* Worker 1 sends its payload of the sync taken after step 6 alone (worker
 * 0 is down), fails before that sync completes and rejoins at step 5:
 * the payload it sent is the sync's only member's. */
START_TEST(test_outages_diloco_finish) {
    const char *none[1] = {NULL};
    outages_finish("0.314 0 down\n0.517 0 up\n0.572 1 down\n"
                   "0.687 0 down\n0.73 1 up\n1.01 0 up\n",
                   none, 0);
}
END_TEST

/* Random traces of three outages (fixed draws), DiLoCo H 2 and 3 with
 * both late policies, streaming with 2 fragments. */
START_TEST(test_outages_random_finish) {
    static const char *const methods[][3] = {
        {"method.H=2", "method.late=\"wait\"", "method.fragments=1"},
        {"method.H=3", "method.late=\"continue\"", "method.fragments=1"},
        {"method.name=\"streaming\"", "method.H=2", "method.fragments=2"},
    };
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    for (int k = 0; k < 12; k++) {
        char trace[256];
        int len = 0;
        double busy_until[2] = {0, 0};
        for (int j = 0; j < 3; j++) {
            double u[3];
            for (int i = 0; i < 3; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                u[i] = (double)(x >> 11) / 9007199254740992.0;
            }
            int w = u[0] < 0.5 ? 0 : 1;
            double down = busy_until[w] + 0.01 + 0.4 * u[1];
            double up = down + 0.01 + 0.3 * u[2];
            busy_until[w] = up;
            len += snprintf(trace + len, sizeof trace - (size_t)len,
                            "%.3f %d down\n%.3f %d up\n", down, w, up, w);
        }
        outages_finish(trace, methods[k % 3], 3);
    }
}
END_TEST

/* ---- sync timeout ----------------------------------------------------------
 * DiLoCo H 2, three workers, worker 2 at half speed, timeout 0.5 s: at
 * the take after step 2 workers 0 and 1 arrive at 2 s, worker 2 would at
 * 4 s; at 2.5 s the sync goes on without it (infinite links), and every
 * later one too (it never catches up). */
typedef struct {
    uint8_t member[8][4];
    int n;
} syncs_seen;

static int see(void *ctx, const run_event *e, char *err, size_t errlen) {
    (void)err, (void)errlen;
    syncs_seen *s = ctx;
    if (e->kind == RUN_EV_SYNCED && s->n < 8) {
        memcpy(s->member[s->n], e->member, 3);
        s->n++;
    }
    return 0;
}

START_TEST(test_sync_timeout_drops_the_late_worker) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    const char *sets[] = {"model.layers=1",
                          "method.name=\"diloco\"",
                          "method.H=2",
                          "steps=4",
                          "workers.count=3",
                          "workers.speed=[1, 1, 0.5]",
                          "network.bandwidth_gbps=\"inf\"",
                          "method.sync_timeout_s=0.5"};
    char err[512];
    ck_assert_msg(scn_load_string_train(base, "case.json", sets, 8, cfg, sec,
                                        err, sizeof err) == 0,
                  "%s", err);
    syncs_seen seen = {0};
    run_hooks h = {0};
    h.observe = see;
    h.observe_ctx = &seen;
    run_result r;
    ck_assert_int_eq(run_simulate(cfg, &h, &r, err, sizeof err), 0);
    ck_assert_int_eq(seen.n, 2);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(seen.member[k][0], 1);
        ck_assert_int_eq(seen.member[k][1], 1);
        ck_assert_int_eq(seen.member[k][2], 0);
    }
    ck_assert_int_eq(r.timeouts, 2);
    /* the coupled run accepts it: the late replica merges the results */
    rows rs;
    cpl_summary s;
    cpl_options o = {cfg, sec, keep, &rs, NULL, NULL};
    rs.n = 0;
    ck_assert_msg(cpl_run(&o, &s, err, sizeof err) == 0, "%s", err);
    free(cfg);
    free(sec);
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

START_TEST(test_nonfinite_loss_stops) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    const char *sets[] = {"train.inner.lr=1e6", "train.inner.clip=0",
                          "steps=60"};
    char err[512];
    ck_assert_msg(scn_load_string_train(base, "case.json", sets, 3, cfg, sec,
                                        err, sizeof err) == 0,
                  "%s", err);
    rows rs;
    cpl_summary s;
    cpl_options o = {cfg, sec, keep, &rs, NULL, NULL};
    rs.n = 0;
    int rc = cpl_run(&o, &s, err, sizeof err);
    ck_assert_int_eq(rc, MSG_ENUM);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_ptr_nonnull(strstr(err, "loss"));
    free(cfg);
    free(sec);
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("coupled");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_equals_lockstep);
    tcase_add_test(tc, test_unequal_speeds_equal_lockstep);
    tcase_add_test(tc, test_equal_taus_are_scalar);
    tcase_add_test(tc, test_time_grows_with_slower_links);
    tcase_add_test(tc, test_continue_at_infinite_bandwidth_is_wait);
    tcase_add_test(tc, test_continue_delays_by_hand);
    tcase_add_test(tc, test_diloco_failure_by_hand);
    tcase_add_test(tc, test_streaming_failure_by_hand);
    tcase_add_test(tc, test_dp_failure_restores_checkpoint);
    tcase_add_test(tc, test_checkpoints_shift_time_only);
    tcase_add_test(tc, test_outages_diloco_finish);
    tcase_add_test(tc, test_outages_random_finish);
    tcase_add_test(tc, test_sync_timeout_drops_the_late_worker);
    tcase_add_test(tc, test_nonfinite_loss_stops);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
