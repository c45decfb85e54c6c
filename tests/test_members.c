/*
 * test_members.c -- members that come and go (faults.membership_trace,
 * sim/config/member_trace.h, sim/engine/member.c) and method.quorum.
 *
 *   - every parse error of a membership trace with its exact message, and
 *     the loader's lines (the trace's, quorum above workers.count);
 *   - a join by hand: the download of the outer state at the WAN rate
 *     after restart_s (recovery = 4 P / B), the joiner's first step at
 *     the group's next sync (quorum 1) or at once, behind the group
 *     (quorum 2), whose first sync then waits until the joiner has done
 *     its H steps: the instants of docs/faults.md in closed form;
 *     (explain books the absence as its part `absent`);
 *   - a leave by hand: the step in progress and the steps since the last
 *     contribution are lost, the others go on; member time, joins and
 *     leaves in the result; a quorum nobody can reach ends the run
 *     unfinished with its reason;
 *   - a coupled run with a join and a leave equals the trainer calls
 *     written out by hand; right after its join the joiner's parameters
 *     are the outer parameters bit for bit, and the sync of 2 of 3
 *     members equals the lockstep train_prepare / train_apply of those
 *     two (and differs from the sync of all three).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "random_world.h"
#include "run_protocol.h"
#define TRACE_DIR_TEMPLATE "/tmp/dilosim-members-XXXXXX"
#include "trace_dir.h"
#include "models/train.h"
#include "sim/adapter/coupled.h"
#include "sim/config/member_trace.h"
#include "sim/engine/explain.h"
#include "sim/engine/run.h"

/* ---- parse errors, exactly ------------------------------------------------ */

/* text's n bytes (0: up to its NUL) give msg, for 3 workers. */
static void bad_n(const char *text, size_t n, const char *msg) {
    mbt_trace *t = (mbt_trace *)1;
    char err[512];
    ck_assert_int_eq(mbt_parse(text, n ? n : strlen(text), "m.txt", 3, &t, err,
                               sizeof err),
                     MSG_EINPUT);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err, msg);
}

static void bad(const char *text, const char *msg) {
    bad_n(text, 0, msg);
}

START_TEST(parse_errors) {
    bad("1x 0 join\n", "m.txt:1:1: bad time '1x' (expected a finite number "
                       "of seconds)");
    bad("\n -1 0 join", "m.txt:2:2: negative time '-1' (expected seconds "
                        ">= 0)");
    bad("1e10 0 join", "m.txt:1:1: time '1e10' too large (expected at most "
                       "9.2e+09 s)");
    bad("1 3 join", "m.txt:1:3: worker 3 out of range (expected a worker "
                    "0..2)");
    bad("1 x join", "m.txt:1:3: bad worker 'x' (expected a worker 0..2)");
    bad("1 -1 join", "m.txt:1:3: bad worker '-1' (expected a worker 0..2)");
    bad("1 0 enter", "m.txt:1:5: unknown event 'enter' (expected join or "
                     "leave)");
    bad("1 0 Join", "m.txt:1:5: unknown event 'Join' (expected join or "
                    "leave)");
    bad("1 0 join x", "m.txt:1:10: trailing 'x' after the event (expected "
                      "'t_s worker join|leave' and nothing more)");
    bad("1 0", "m.txt:1:4: missing event (expected 't_s worker "
               "join|leave')");
    bad("1  # c", "m.txt:1:2: missing worker and event (expected 't_s "
                  "worker join|leave')");
    bad("2 0 leave\n1 1 leave\n", "m.txt:2:1: time 1 s is before 2 s of "
                                  "line 1 (expected non-decreasing times)");
    bad("1 0 join\n2 0 leave\n3 0 leave\n",
        "m.txt:3:5: worker 0 leaves but is absent since line 2 (expected a "
        "join before its next leave)");
    bad("1 2 leave\n# back\n2 2 join\n3 2 join\n",
        "m.txt:4:5: worker 2 joins but is a member since line 3 (expected a "
        "leave before its next join)");
    bad_n("1 0 j\0oin\n", 10, "m.txt:1:6: NUL byte (expected a text line)");
}
END_TEST

START_TEST(parse_events) {
    const char *text = "# idle machines\n1.5 2 join\t# at night\n\n"
                       "2 0 leave\r\n2 1 leave\n3e0 0 join\n";
    mbt_trace *t;
    char err[256];
    ck_assert_int_eq(mbt_parse(text, strlen(text), "m.txt", 3, &t, err,
                               sizeof err),
                     0);
    size_t n;
    const mbt_event *e = mbt_events(t, &n);
    ck_assert_uint_eq(n, 4);
    const mbt_event want[] = {{1500000000, 2, 1},
                              {2000000000, 0, 0},
                              {2000000000, 1, 0},
                              {3000000000, 0, 1}};
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(e[i].t, want[i].t);
        ck_assert_int_eq(e[i].worker, want[i].worker);
        ck_assert_int_eq(e[i].join, want[i].join);
    }
    ck_assert_int_eq(mbt_absent_at_start(t, 0), 0); /* first a leave */
    ck_assert_int_eq(mbt_absent_at_start(t, 1), 0);
    ck_assert_int_eq(mbt_absent_at_start(t, 2), 1); /* first a join */
    mbt_free(t);
}
END_TEST

/* Through the loader: the scenario's position, the key, the file's. */
START_TEST(loader_messages) {
    const char *path = trace_file("bad.txt", "1 0 leave\n2 1 sleep\n");
    char json[512], err[1024], want[1024];
    snprintf(json, sizeof json, "{\"faults\": {\"membership_trace\": \"%s\"}}",
             path);
    static scn_config cfg;
    ck_assert_int_eq(scn_load_string(json, "t.json", NULL, 0, &cfg, err,
                                     sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "t.json:1:33: faults.membership_trace: %s:2:5: unknown event "
             "'sleep' (expected join or leave)",
             path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(scn_load_string("{\"workers\": {\"count\": 2},\n"
                                     " \"method\": {\"quorum\": 3}}",
                                     "t.json", NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "t.json:2:23: method.quorum: 3 is above "
                          "workers.count 2 (expected 1..2)");
    ck_assert_int_eq(scn_load_string("{\"method\": {\"quorum\": 0}}", "t.json",
                                     NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "t.json:1:23: method.quorum: 0 is out of range "
                          "(expected an integer in 1..256)");
    ck_assert_int_eq(scn_load_string("{\"faults\": {\"membership_trace\": "
                                     "\"/nonexistent/m.txt\"}}",
                                     "t.json", NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "t.json:1:33: faults.membership_trace: "
                          "/nonexistent/m.txt: cannot open: No such file or "
                          "directory");
}
END_TEST

/* ---- the timing by hand --------------------------------------------------- */

/* What a run's timeline says about two workers. */
typedef struct {
    int64_t rec_start, rec_end; /* worker 1's recovery download */
    int64_t first_fwd;          /* worker 1's first forward */
    int64_t first_step;         /* the step it computes first */
    int64_t fwd5;               /* worker 0's forward of step 5 */
    int absent;                 /* worker 1's absent spans */
} seen;

static void see(void *ctx, const run_span *s) {
    seen *v = ctx;
    if (s->worker == 1 && !strcmp(s->name, "recovery"))
        v->rec_start = s->start_ns, v->rec_end = s->end_ns;
    if (s->worker == 1 && !strcmp(s->name, "absent")) v->absent++;
    if (s->worker == 1 && !strcmp(s->name, "forward") && v->first_fwd < 0)
        v->first_fwd = s->start_ns, v->first_step = s->step;
    if (s->worker == 0 && !strcmp(s->name, "forward") && s->step == 5 &&
        v->fwd5 < 0)
        v->fwd5 = s->start_ns;
}

/* DiLoCo, H 4, one layer of P = 1e8 parameters (bf16: S = 2e8 bytes),
 * steps of 1 s, two workers at 8 Gbit/s = B = 1e9 B/s, no latency,
 * restart_s 0.25, the membership trace `trace`, method.quorum q. */
static run_result two_workers(const char *trace, int q, seen *v) {
    char json[1024], err[1024];
    snprintf(json, sizeof json,
             "{\"model\": {\"params\": 1e8, \"layers\": 1, \"step_time_s\": "
             "1}, \"workers\": {\"count\": 2}, \"method\": {\"name\": "
             "\"diloco\", \"H\": 4, \"quorum\": %d}, \"network\": "
             "{\"bandwidth_gbps\": 8, \"latency_ms\": 0}, \"faults\": "
             "{\"restart_s\": 0.25, \"membership_trace\": \"%s\"}, "
             "\"steps\": 12}",
             q, trace_file("m.txt", trace));
    static scn_config cfg;
    ck_assert_msg(scn_load_string(json, "t.json", NULL, 0, &cfg, err,
                                  sizeof err) == 0,
                  "%s", err);
    *v = (seen){-1, -1, -1, -1, -1, 0};
    run_hooks h = {.span = see, .span_ctx = v};
    run_result r, full;
    ck_assert_msg(run_simulate(&cfg, &h, &r, err, sizeof err) == 0, "%s", err);
    cfg.full = 1; /* the fast paths are off: the same run */
    ck_assert_int_eq(run_simulate(&cfg, NULL, &full, err, sizeof err), 0);
    ck_assert_int_eq(memcmp(&r, &full, sizeof r), 0);
    /* explained, the absence is its own part: worker 1's absent time is
     * its member time's complement */
    static expl_result ex;
    ck_assert_int_eq(expl_run(&cfg, &ex, err, sizeof err), 0);
    ck_assert_int_eq(memcmp(&ex.run, &r, sizeof r), 0);
    ck_assert_int_eq(ex.worker[1].ns[EXPL_ABSENT],
                     r.wall_ns - r.per_worker[1].member_ns);
    ck_assert_int_eq(ex.worker[0].ns[EXPL_ABSENT], 0);
    ck_assert_int_eq(ex.worker[1].ns[EXPL_DOWN], 0);
    return r;
}

#define NS(s) llround((s)*1e9)

START_TEST(join_by_hand) {
    const double tj = 1.5, restart = 0.25, P = 1e8, B = 1e9, H = 4, S = 2 * P;
    const double D = 4 * P / B; /* recovery_bytes_per_param 4 */
    seen v;
    /* quorum 1: the joiner downloads, then waits for the group's next
     * sync (worker 0 alone after step H, at H s: a ring of one moves
     * nothing) and computes from step H + 1 on */
    run_result r = two_workers("1.5 1 join\n", 1, &v);
    ck_assert_int_eq(v.rec_start, NS(tj + restart));
    ck_assert_int_eq(v.rec_end, NS(tj + restart + D));
    ck_assert_int_eq(v.first_step, H + 1);
    ck_assert_int_eq(v.first_fwd, NS(H));
    ck_assert_int_eq(v.absent, 1);
    ck_assert_int_eq(r.finished, 1);
    ck_assert_int_eq(r.joins, 1);
    ck_assert_int_eq(r.leaves, 0);
    ck_assert_int_eq(r.per_worker[1].joins, 1);
    ck_assert_int_eq(r.per_worker[1].member_ns, r.wall_ns - NS(tj));
    ck_assert_int_eq(r.per_worker[0].member_ns, r.wall_ns);
    ck_assert_int_eq(r.member_ns, 2 * r.wall_ns - NS(tj));
    ck_assert_uint_eq(r.recovery_bytes, 4 * P);
    /* quorum 2: the first sync waits for the joiner, which rejoins at
     * once at step 1 (behind the group) and does its H steps; the ring
     * of two then moves S / B (2 steps of S / 2 at B) */
    r = two_workers("1.5 1 join\n", 2, &v);
    double t0 = tj + restart + D;
    ck_assert_int_eq(v.rec_end, NS(t0));
    ck_assert_int_eq(v.first_step, 1);
    ck_assert_int_eq(v.first_fwd, NS(t0));
    ck_assert_int_eq(v.fwd5, NS(t0 + H + S / B));
    ck_assert_int_eq(r.finished, 1);
    /* the same instants without the quorum would not wait for it */
    two_workers("1.5 1 join\n", 1, &v);
    ck_assert_int_lt(v.fwd5, NS(t0 + H + S / B));
}
END_TEST

START_TEST(leave_by_hand) {
    const double S = 2e8, B = 1e9;
    seen v;
    /* worker 1 leaves at 5.5 s, inside step 6: the sync of step 4 ended
     * at 4 + S / B, worker 1 contributed its 4 s of steps 1..4 to it, so
     * step 5 (1 s) and the 0.3 s of step 6 (its op cut short) are lost;
     * worker 0 goes on alone: its syncs after steps 8 and 12 move
     * nothing, the wall is 4 + S / B + 8 */
    run_result r = two_workers("5.5 1 leave\n", 1, &v);
    ck_assert_int_eq(r.finished, 1);
    ck_assert_int_eq(r.wall_ns, NS(4 + S / B + 8));
    ck_assert_int_eq(r.per_worker[1].compute_ns, NS(5.3));
    ck_assert_int_eq(r.per_worker[1].lost_ns, NS(1.3));
    ck_assert_int_eq(r.per_worker[1].member_ns, NS(5.5));
    ck_assert_int_eq(r.per_worker[1].leaves, 1);
    ck_assert_int_eq(r.failures, 0);
    ck_assert_int_eq(r.syncs, 3);
    /* quorum 2 with worker 1 gone for good: the sync after step 8 waits
     * for a join that never comes */
    r = two_workers("5.5 1 leave\n", 2, &v);
    ck_assert_int_eq(r.finished, 0);
    ck_assert_str_eq(r.stop_reason, "a sync waits for a quorum of 2 members "
                                    "and no worker is left to join "
                                    "(method.quorum)");
    ck_assert_int_eq(r.syncs, 1);
    /* it comes back at 7 s: the quorum is met again, nothing is stuck */
    r = two_workers("5.5 1 leave\n7 1 join\n", 2, &v);
    ck_assert_int_eq(r.finished, 1);
    ck_assert_int_eq(r.syncs, 3);
}
END_TEST

/* ---- the coupled run ------------------------------------------------------ */

/* Three replicas of a 2-block transformer on a Markov chain, DiLoCo H 2,
 * alpha 0, 8 steps of 1 s, one layer, infinite links (downloads and
 * syncs take no time). */
static const char *const coupled_json =
    "{\"model\": {\"params\": 1e6, \"layers\": 1, \"step_time_s\": 1},"
    " \"workers\": {\"count\": 3},"
    " \"network\": {\"bandwidth_gbps\": \"inf\"},"
    " \"method\": {\"name\": \"diloco\", \"H\": 2, \"alpha\": 0,"
    "   \"codec\": \"e3m0\"},"
    " \"steps\": 8, \"seed\": 5,"
    " \"train\": {\"model\": {\"kind\": \"transformer\", \"vocab\": 16,"
    "   \"d\": 16, \"heads\": 2, \"layers\": 2, \"ctx\": 8},"
    "   \"data\": {\"kind\": \"markov\", \"successors\": 3},"
    "   \"batch\": 2, \"seq\": 8, \"inner\": {\"lr\": 3e-3},"
    "   \"eval_interval\": 0, \"threads\": 1,"
    "   \"eval\": [\"outer\", \"replica\"]}}";

static int keep_row(const cpl_row *r, void *ctx) {
    *(cpl_row *)ctx = *r;
    return 0;
}

static void ok(train *tr, int rc) {
    ck_assert_msg(rc == 0, "%s", train_error(tr));
}

/* Replicas in `set` (bits) compute their next inner step. */
static void steps(train *tr, unsigned set) {
    for (int r = 0; r < 3; r++)
        if (set >> r & 1) ok(tr, train_inner_step(tr, r));
}

/* The members in `set` contribute to the sync taken after `take` and it
 * is reduced over them; the others get no merge. */
static void sync_of(train *tr, unsigned set, int64_t take) {
    int64_t ms[3];
    for (int r = 0; r < 3; r++) {
        if (set >> r & 1) ok(tr, train_contribute(tr, r, 0, take, NULL));
        ms[r] = set >> r & 1 ? take + 1 : -1;
    }
    ok(tr, train_reduce(tr, 0, set, ms));
}

/* Fragment 0's outer parameters as a copy (the caller frees it). */
static float *outer_copy(train *tr) {
    size_t n = train_num_params(tr);
    float *p = malloc(n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    memcpy(p, train_outer(tr), n * sizeof *p);
    return p;
}

/* Worker 2 is absent until 2.5 s: it downloads at once, waits for the
 * sync after step 4 (at 4 s, of workers 0 and 1) and rejoins at step 5.
 * Worker 1 leaves at 4.5 s, inside step 5 (whose last forward ended at
 * 4.33 s: replica 1 computed it, then it is lost).  The syncs after
 * steps 6 and 8 are of workers 0 and 2: 2 of 3 members. */
START_TEST(coupled_join_and_leave_by_hand) {
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *sec = malloc(sizeof *sec);
    ck_assert_ptr_nonnull(cfg);
    ck_assert_ptr_nonnull(sec);
    char set[300], err[512];
    snprintf(set, sizeof set, "faults.membership_trace=\"%s\"",
             trace_file("m.txt", "2.5 2 join\n4.5 1 leave\n"));
    const char *sets[] = {set};
    ck_assert_msg(scn_load_string_train(coupled_json, "/tmp/case.json", sets, 1,
                                        cfg, sec, err, sizeof err) == 0,
                  "%s", err);
    cpl_row row;
    cpl_summary s;
    cpl_options o = {cfg, sec, keep_row, &row, NULL, NULL};
    ck_assert_msg(cpl_run(&o, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.sim.joins, 1);
    ck_assert_int_eq(s.sim.leaves, 1);
    ck_assert_int_eq(row.step, 8);

    train *tr;
    ck_assert_int_eq(train_new(&sec->train, &tr, err, sizeof err), 0);
    steps(tr, 3), steps(tr, 3); /* steps 1, 2 of replicas 0 and 1 */
    sync_of(tr, 3, 2);
    steps(tr, 3), steps(tr, 3);
    sync_of(tr, 3, 4);
    ok(tr, train_rejoin(tr, 2, 0, 4));
    /* (a) the joiner holds the outer parameters, bit for bit */
    size_t n = train_num_params(tr);
    ck_assert_int_eq(memcmp(train_params(tr, 2), train_outer(tr),
                            n * sizeof(float)),
                     0);
    steps(tr, 7); /* step 5: replica 1's is lost */
    steps(tr, 5); /* step 6 of replicas 0 and 2 */
    /* (b) the sync of 2 of 3 members is the lockstep prepare / apply of
     * those two, and not the sync of all three */
    uint64_t bytes = train_bytes(tr); /* the lockstep syncs count theirs */
    train_snapshot *snap = train_snapshot_new(tr);
    ck_assert_ptr_nonnull(snap);
    ok(tr, train_snapshot_take(tr, snap));
    ok(tr, train_prepare(tr, 0, 5, NULL));
    ok(tr, train_apply(tr, 0, 5));
    float *two = outer_copy(tr);
    ok(tr, train_snapshot_restore(tr, snap));
    ok(tr, train_prepare(tr, 0, 7, NULL));
    ok(tr, train_apply(tr, 0, 7));
    float *three = outer_copy(tr);
    ok(tr, train_snapshot_restore(tr, snap));
    uint64_t extra = train_bytes(tr) - bytes;
    sync_of(tr, 5, 6);
    ck_assert_int_eq(memcmp(train_outer(tr), two, n * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(train_outer(tr), three, n * sizeof(float)), 0);
    free(two);
    free(three);
    train_snapshot_free(snap);
    steps(tr, 5), steps(tr, 5);
    sync_of(tr, 5, 8);
    /* the coupled run made the same calls: its last row is this state */
    double outer, r0;
    ok(tr, train_eval_outer(tr, &outer));
    for (int r = 0; r < 3; r++) ok(tr, train_land(tr, r));
    ok(tr, train_eval_replica(tr, 0, &r0));
    ck_assert(row.eval_loss == outer);
    ck_assert(row.replica_loss == r0);
    ck_assert_uint_eq(row.bytes_sent, train_bytes(tr) - extra);
    train_free(tr);
    free(cfg);
    free(sec);
}
END_TEST

/* ---- random worlds with members that come and go ------------------------- */

/* Every method, collective, completion and transport of random_world,
 * with a random membership trace over the run's length, a random quorum
 * and sometimes random failures: no run fails (an internal error would),
 * the observer's protocol holds (never ahead of the group, contributions
 * once, merges in the future), the figures are in range, and a run with
 * the observer and one without give the same bytes. */
START_TEST(random_worlds_with_members) {
    static scn_config cfg;
    static run_result r, again;
    char err[512];
    for (int k = 0; k < 300; k++) {
        random_world(&cfg, k);
        int M = cfg.workers;
        ck_assert_int_eq(run_simulate(&cfg, NULL, &r, err, sizeof err), 0);
        double wall = r.wall_time_s > 0 ? r.wall_time_s : 1;
        char text[4096];
        int len = 0, member[SCN_MAX_WORKERS], events = 1 + pick(10);
        for (int i = 0; i < M; i++) member[i] = 1;
        double t = 0;
        for (int e = 0; e < events; e++) {
            t += wall / events * (0.2 + pick(100) / 100.0);
            int w = pick(M);
            if (e == 0 && pick(2)) member[w] = 0; /* absent from 0 */
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "%.9f %d %s\n", t, w, member[w] ? "leave" : "join");
            member[w] = !member[w];
        }
        snprintf(cfg.member_trace_path, sizeof cfg.member_trace_path, "%s",
                 trace_file("m.txt", text));
        cfg.quorum = pick(3) ? 1 : 1 + pick(M);
        if (pick(4) == 0) cfg.faults.mtbf_s = wall, cfg.faults.mttr_s = 1;
        run_protocol p;
        run_protocol_init(&p, &cfg);
        run_hooks h = {.observe = run_protocol_observe, .observe_ctx = &p};
        ck_assert_msg(run_simulate(&cfg, &h, &r, err, sizeof err) == 0,
                      "case %d: %s\n%s", k, err, text);
        ck_assert_msg(
            !p.bad[0],
            "case %d (method %d, quorum %d, mtbf %g, H %d, T %lld): %s\n%s", k,
            cfg.sched.method, cfg.quorum, cfg.faults.mtbf_s, cfg.sched.H,
            (long long)cfg.steps, p.bad, text);
        ck_assert_int_eq(run_simulate(&cfg, NULL, &again, err, sizeof err), 0);
        ck_assert_msg(memcmp(&r, &again, sizeof r) == 0, "case %d", k);
        ck_assert(r.finished || r.stop_reason[0]);
        ck_assert(r.compute_utilization >= 0 && r.compute_utilization <= 1);
        for (int i = 0; i < M; i++) {
            ck_assert_int_ge(r.per_worker[i].member_ns, 0);
            ck_assert_int_le(r.per_worker[i].member_ns, r.wall_ns);
            ck_assert_msg(r.per_worker[i].useful_ns >= 0, "case %d: %lld", k,
                          (long long)r.per_worker[i].useful_ns);
            ck_assert_int_le(r.per_worker[i].compute_ns, r.wall_ns);
        }
        ck_assert_int_le(r.joins + r.leaves, events);
        cfg.member_trace_path[0] = 0;
        cfg.quorum = 1;
    }
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("members");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, trace_dir_setup, trace_dir_teardown);
    tcase_add_test(tc, parse_errors);
    tcase_add_test(tc, parse_events);
    tcase_add_test(tc, loader_messages);
    tcase_add_test(tc, join_by_hand);
    tcase_add_test(tc, leave_by_hand);
    tcase_add_test(tc, coupled_join_and_leave_by_hand);
    tcase_add_test(tc, random_worlds_with_members);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
