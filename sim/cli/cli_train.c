/*
 * cli_train.c -- `dilosim train`: a coupled run (sim/adapter/coupled.h).  The
 * scenario's timing world runs on the event engine and decides when each
 * replica of the "train" section steps, sends and merges; the small model
 * trains for real at those instants.  One CSV row of losses, bytes and
 * simulated time per report, and a JSON summary.  --lockstep runs the
 * same training without a clock (the reference).
 *
 * The CSV depends only on the scenario (not on the thread count, not on
 * the machine's load): two runs give the same bytes.  The summary adds
 * this machine's time (host_time_s and the rates), which does not
 * repeat.  A value that does not exist (a loss no replica has at a row,
 * the entropy floor of text) is an empty CSV field and a JSON null; a run
 * in which no step completes writes the header and no row.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/adapter/coupled.h"
#include "sim/out/outfile.h"
#include "sim/base/version.h"

static const cli_help_opt help_opts[] = {
    {"--variant NAME", "train one of the scenario's variants"},
    {"--set KEY=VALUE", "override a scenario key, e.g. train.inner.lr=1e-3\n"
                        "(repeatable; VALUE is JSON, or else a string)"},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--out FILE.csv", "write the CSV to FILE.csv (whole, or not at all)"},
    {"--jobs N", "threads stepping replicas, 1..256 (overrides\n"
                 "train.threads; the results do not depend on it)"},
    {"--lockstep", "no clock: every replica steps together, syncs\n"
                   "block, no failures (the reference the coupled run\n"
                   "equals with late: wait and no faults); the sim_*\n"
                   "columns are left out"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim train SCENARIO.json [--variant NAME] [--set KEY=VALUE]...\n"
    "                     [--set-from FILE.json]\n"
    "                     [--out FILE.csv] [--jobs N] [--lockstep]\n"
    "\n"
    "Trains the scenario's \"train\" section for real (FP32 on the CPU): M =\n"
    "workers.count replicas of a small transformer or MLP, the method and\n"
    "codecs of the \"method\" section, `steps` inner steps, driven by the\n"
    "event engine: the scenario's timing world (model, workers, network,\n"
    "faults, method.late, method.sync_timeout_s) decides when each replica\n"
    "steps, sends and merges, and who takes part in each sync.  The clock\n"
    "is the simulated model's; the loss is the small trained model's.\n"
    "After every train.eval_interval steps and after the last it writes one\n"
    "CSV row:\n"
    "\n"
    "  step                    inner steps done by the group\n"
    "  tokens                  training tokens consumed, all replicas\n"
    "  train_loss_nats         mean over replicas of their loss at step\n"
    "  eval_loss_outer_nats    eval loss of the outer parameters\n"
    "  eval_loss_replica_nats  of replica 0 (when train.eval lists "
    "\"replica\")\n"
    "  eval_loss_average_nats  of the replicas' average (\"average\")\n"
    "  bytes_sent              bytes the trained replicas have sent so far\n"
    "  entropy_floor_nats      the eval chain's entropy rate (Markov data)\n"
    "  sim_time_s              simulated wall clock of the row\n"
    "  sim_compute_utilization compute so far / (workers x sim_time_s)\n"
    "  sync_delay_mean_steps   effective sync delay so far, mean\n"
    "  sync_delay_max_steps    ... and maximum (tau with late: wait)\n"
    "  wan_bytes               bytes the simulated model has sent so far\n"
    "\n"
    "A value that does not exist is an empty field.  When no step completes\n"
    "(every worker down, say) the CSV has its header and no row, and stderr\n"
    "says why.\n"
    "\n"
    "With --out the CSV goes to FILE.csv and a JSON summary goes to stdout;\n"
    "without --out the CSV goes to stdout and the summary to stderr.  The\n"
    "summary: version, revision, method, codec, replicas, schedule, steps,\n"
    "tokens, final losses (null without a row), entropy floor, bytes, the\n"
    "simulated run (sim_time_s: run's wall_time_s, compute utilization,\n"
    "goodput, failures, sync delay histogram), the target\n"
    "(train.target_loss: time_to_target_s and target_step, or\n"
    "target_reached false), and this machine's time: host_time_s,\n"
    "steps_per_s, tokens_per_s, gflops_per_s (training FLOPs, see nn.h).\n"
    "\n"
    "options:\n",
    19, help_opts,
    "\n"
    "exit status: 0 success, 1 runtime failure (a diverged loss, an output\n"
    "file that cannot be written), 2 usage or input error (including a\n"
    "scenario without a \"train\" section)\n",
    1};

typedef struct {
    FILE *csv;
    unsigned eval; /* SCN_EVAL_* bits */
    double floor;  /* entropy floor, NAN unless Markov data */
    int sim;       /* the sim_* columns (not --lockstep) */
    int rows;      /* rows written */
} csv_ctx;

/* The header, written with the first row (which knows the floor). */
static void csv_header(const csv_ctx *c) {
    cli_csv_comment(c->csv);
    fputs("step,tokens,train_loss_nats,eval_loss_outer_nats", c->csv);
    if (c->eval & SCN_EVAL_REPLICA) fputs(",eval_loss_replica_nats", c->csv);
    if (c->eval & SCN_EVAL_AVERAGE) fputs(",eval_loss_average_nats", c->csv);
    fputs(",bytes_sent", c->csv);
    if (!isnan(c->floor)) fputs(",entropy_floor_nats", c->csv);
    if (c->sim)
        fputs(",sim_time_s,sim_compute_utilization,sync_delay_mean_steps,"
              "sync_delay_max_steps,wan_bytes",
              c->csv);
    fputc('\n', c->csv);
}

static void csv_field(FILE *f, double x) {
    fputc(',', f);
    cli_csv_number(f, x);
}

/* One row (a cpl_row_fn); non-zero when the stream has failed (a full
 * disk, a closed pipe), with errno set. */
static int csv_row(const cpl_row *r, void *ctx) {
    csv_ctx *c = ctx;
    FILE *f = c->csv;
    if (c->rows++ == 0) {
        c->floor = r->entropy_floor;
        csv_header(c);
    }
    fprintf(f, "%lld,%llu", (long long)r->step, (unsigned long long)r->tokens);
    csv_field(f, r->train_loss);
    csv_field(f, r->eval_loss);
    if (c->eval & SCN_EVAL_REPLICA) csv_field(f, r->replica_loss);
    if (c->eval & SCN_EVAL_AVERAGE) csv_field(f, r->average_loss);
    fprintf(f, ",%llu", (unsigned long long)r->bytes_sent);
    if (!isnan(c->floor)) csv_field(f, c->floor);
    if (c->sim) {
        csv_field(f, r->sim_time_s);
        csv_field(f, r->sim_utilization);
        csv_field(f, r->delay_mean_steps);
        fprintf(f, ",%lld,%llu", (long long)r->delay_max_steps,
                (unsigned long long)r->wan_bytes);
    }
    fputc('\n', f);
    /* a row at a time, for whoever follows the output */
    if (fflush(f) || ferror(f)) {
        if (!errno) errno = EIO;
        return -1;
    }
    return 0;
}

/* The simulated run and the target, in the summary. */
static void summary_sim(jw *w, const cpl_summary *s) {
    const run_result *r = &s->sim;
    jw_bool(w, "sim_finished", r->finished);
    if (!r->finished) jw_str(w, "sim_stop_reason", r->stop_reason);
    jw_num(w, "sim_time_s", r->wall_time_s);
    jw_num(w, "sim_compute_utilization", r->compute_utilization);
    jw_num(w, "sim_goodput", r->goodput);
    jw_num(w, "sim_syncs", (double)r->syncs);
    jw_num(w, "sim_failures", (double)r->failures);
    jw_num(w, "sim_sync_timeouts", (double)r->timeouts);
    jw_num(w, "wan_bytes", (double)r->bytes_sent_total);
    jw_num(w, "sync_delay_mean_steps", s->last.delay_mean_steps);
    jw_num(w, "sync_delay_max_steps", (double)r->delays.max);
    jw_array(w, "sync_delay_histogram_steps");
    for (int d = 0; d < RUN_DELAY_BINS; d++)
        jw_int(w, NULL, (long long)r->delays.hist[d]);
    jw_end(w);
}

/* train.target_loss, when set: whether a row reached it, at which step
 * and (coupled) simulated time. */
static void summary_target(jw *w, const cpl_summary *s, int sim) {
    if (isnan(s->target_loss)) return;
    jw_num(w, "target_loss_nats", s->target_loss);
    jw_bool(w, "target_reached", s->target_step >= 0);
    if (s->target_step < 0) return;
    jw_num(w, "target_step", (double)s->target_step);
    if (sim) jw_num(w, "time_to_target_s", s->target_time_s);
}

/* What ran: the build, the method and its schedule, the model's size. */
static void summary_setup(jw *w, const scn_config *cfg, const train_config *t,
                          const cpl_summary *s, int sim) {
    jw_str(w, "version", DILOSIM_VERSION);
    jw_str(w, "revision", version_revision());
    jw_str(w, "method", sched_method_name(t->sched.method));
    jw_str(w, "codec",
           codec_name(t->sched.method == SCHED_DP ? t->dp_codec.kind
                                                  : t->codec.kind));
    if (sim) jw_str(w, "late", scn_late_continues(cfg) ? "continue" : "wait");
    jw_num(w, "replicas", t->replicas);
    jw_num(w, "H", t->sched.H);
    jw_num(w, "fragments", t->sched.P);
    jw_num(w, "tau", t->sched.tau);
    jw_str(w, "overlap", sched_overlap_name(t->sched.overlap));
    jw_num(w, "alpha", t->sched.alpha);
    jw_num(w, "fedpart", t->fedpart);
    jw_num(w, "batch", t->batch);
    jw_num(w, "seq", t->seq);
    jw_num(w, "params", (double)s->params);
}

/* The summary: the build, what ran, the final losses, bytes, the
 * simulated run, this machine's time. */
static void summary(FILE *f, const scn_config *cfg, const scn_train *tr,
                    const cpl_summary *s, int sim, double host_s,
                    double flops) {
    unsigned eval = tr->train_eval;
    const cpl_row *r = &s->last;
    double steps = (double)r->step;
    jw w;
    jw_init(&w, f);
    jw_lines(&w, NULL, '{', 2, 0);
    summary_setup(&w, cfg, &tr->train, s, sim);
    jw_num(&w, "steps", steps);
    jw_num(&w, "tokens", (double)r->tokens);
    jw_num(&w, "train_loss_nats", r->train_loss);
    jw_num(&w, "eval_loss_outer_nats", r->eval_loss);
    if (eval & SCN_EVAL_REPLICA)
        jw_num(&w, "eval_loss_replica_nats", r->replica_loss);
    if (eval & SCN_EVAL_AVERAGE)
        jw_num(&w, "eval_loss_average_nats", r->average_loss);
    jw_num(&w, "entropy_floor_nats", s->entropy_floor);
    jw_num(&w, "gap_to_floor_nats", r->eval_loss - s->entropy_floor);
    jw_num(&w, "bytes_sent_total", (double)r->bytes_sent);
    jw_num(&w, "bytes_per_step", (double)r->bytes_sent / steps);
    if (sim) summary_sim(&w, s);
    summary_target(&w, s, sim);
    jw_num(&w, "host_time_s", host_s);
    jw_num(&w, "steps_per_s", steps / host_s);
    jw_num(&w, "tokens_per_s", (double)r->tokens / host_s);
    jw_num(&w, "gflops_per_s",
           flops * tr->train.replicas * steps / host_s / 1e9);
    jw_end(&w);
}

/* --jobs N (or --threads N, its former name, when --jobs is absent):
 * 1..256 threads into *out, or a usage error; neither given: 0, *out
 * unchanged. */
static int parse_jobs(const cli_options *o, int *out) {
    const char *name = cli_value(o, "--jobs") ? "--jobs" : "--threads";
    return cli_count(o, "train", name, 256, out);
}

/* Loads the scenario into *cfg and its train section into *tr (the
 * --jobs override applied); CLI_EXIT_INPUT with the message printed, or
 * 0. */
static int load(const cli_options *o, scn_config *cfg, scn_train *tr) {
    int rc = cli_load_train(o, NULL, 0, cfg, tr);
    if (rc) return rc;
    if (!tr->has_train) {
        fprintf(stderr,
                "%s: train: missing (dilosim train needs a "
                "\"train\" section)\n",
                o->scenario);
        return CLI_EXIT_INPUT;
    }
    return parse_jobs(o, &tr->train.threads);
}

/* Progress in steps (a cpl_options.progress). */
typedef struct {
    cli_progress bar;
    double steps;
} steps_progress;

static void on_progress(void *ctx, double fraction) {
    steps_progress *p = ctx;
    cli_progress_count(&p->bar, floor(fraction * p->steps), p->steps);
}

/* Runs the training, writing the CSV to out (its header even without a
 * row); fills *s and *host_s. */
static int train_to(outfile *out, const scn_config *cfg, const scn_train *tr,
                    csv_ctx *c, const char *label, cpl_summary *s,
                    double *host_s, char *err, size_t errlen) {
    steps_progress progress = {.steps = (double)cfg->steps};
    c->csv = out->f;
    cli_progress_start(&progress.bar, label);
    cpl_options o = {cfg, tr, csv_row, c, on_progress, &progress};
    double t0 = cli_now_s();
    int rc =
        c->sim ? cpl_run(&o, s, err, errlen) : cpl_lockstep(&o, s, err, errlen);
    *host_s = cli_now_s() - t0;
    if (!rc) on_progress(&progress, 1); /* the last step, whatever was shown */
    cli_progress_end(&progress.bar);
    if (!rc && c->rows == 0) {
        c->floor = s->entropy_floor;
        csv_header(c);
        if (fflush(c->csv) || ferror(c->csv)) {
            rc = msg_set(err, errlen, MSG_EIO, "write error: %s",
                         strerror(errno ? errno : EIO));
        }
    }
    return rc;
}

/* Why a coupled run has no row or stopped early, on stderr. */
static void say_why(const scn_config *cfg, const cpl_summary *s,
                    const csv_ctx *c) {
    const run_result *r = &s->sim;
    if (c->rows == 0)
        fprintf(stderr,
                "dilosim train: no step completed%s%s; the CSV has "
                "its header and no row\n",
                r->finished ? "" : ": ", r->finished ? "" : r->stop_reason);
    else if (!r->finished)
        fprintf(stderr, "dilosim train: not finished: %s\n", r->stop_reason);
    else if (s->last.step < cfg->steps)
        fprintf(stderr,
                "dilosim train: no row after step %lld: the "
                "simulated run ended before one was complete\n",
                (long long)s->last.step);
}

int cli_train(int argc, char **argv) {
    /* --threads: the former name of --jobs, still accepted */
    static const char *const extra[] = {"--variant", "--jobs", "--threads",
                                        NULL};
    static const char *const flags[] = {"--lockstep", NULL};
    cli_options o;
    int rc = cli_parse("train", &help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    scn_config *cfg = malloc(sizeof *cfg);
    cpl_summary *s = malloc(sizeof *s);
    scn_train *tr = malloc(sizeof *tr);
    if (!cfg || !tr || !s) {
        free(cfg), free(tr), free(s);
        fprintf(stderr, "dilosim train: out of memory\n");
        return CLI_EXIT_RUNTIME;
    }
    char err[CLI_ERR_MAX];
    csv_ctx c = {.floor = NAN, .sim = !cli_flag(&o, "--lockstep")};
    outfile out;
    int to_stdout = !o.out || !strcmp(o.out, "-");
    double host_s = 0;
    if ((rc = load(&o, cfg, tr))) goto done;
    c.eval = tr->train_eval;
    if ((rc = outfile_open(&out, o.out, err, sizeof err))) {
        fprintf(stderr, "dilosim train: %s\n", err);
        rc = msg_exit_status(rc);
        goto done;
    }
    rc = train_to(&out, cfg, tr, &c, o.scenario, s, &host_s, err, sizeof err);
    if (rc) {
        if (rc == MSG_EIO)
            fprintf(stderr, "dilosim train: %s%s%s\n", to_stdout ? "" : o.out,
                    to_stdout ? "" : ": ", err);
        else fprintf(stderr, "%s: %s\n", o.scenario, err);
        outfile_abort(&out);
        rc = msg_exit_status(rc);
        goto done;
    }
    if ((rc = outfile_commit(&out, err, sizeof err))) {
        fprintf(stderr, "dilosim train: %s\n", err);
        rc = msg_exit_status(rc);
        goto done;
    }
    summary(to_stdout ? stderr : stdout, cfg, tr, s, c.sim, host_s,
            cpl_flops_per_step(&tr->train));
    if (c.sim) say_why(cfg, s, &c);
done:
    free(s);
    free(tr);
    free(cfg);
    return rc;
}
