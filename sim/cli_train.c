/*
 * cli_train.c -- `dilosim train`: the numerics of a scenario's "train"
 * section.  Real data-parallel, DiLoCo or Streaming DiLoCo training of M
 * small replicas (models/train.h, driven in lockstep by train_run), one
 * CSV row of losses and bytes per report, and a JSON summary.
 *
 * The CSV depends only on the scenario (not on the thread count, not on
 * the machine's load): two runs give the same bytes.  The summary adds
 * wall-clock figures, which do not repeat.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../models/msg.h"
#include "cli.h"
#include "outfile.h"
#include "report.h"

static const char help[] =
    "usage: dilosim train SCENARIO.json [--variant NAME] [--set KEY=VALUE]...\n"
    "                     [--out FILE.csv] [--threads N]\n"
    "\n"
    "Trains the scenario's \"train\" section for real (FP32 on the CPU): M =\n"
    "workers.count replicas of a small transformer or MLP, the method and\n"
    "codecs of the \"method\" section, `steps` inner steps.  After every\n"
    "train.eval_interval steps and after the last it writes one CSV row:\n"
    "\n"
    "  step                    inner steps done by every replica\n"
    "  tokens                  training tokens consumed, all replicas\n"
    "  train_loss_nats         mean over replicas of their last step's loss\n"
    "  eval_loss_outer_nats    eval loss of the outer parameters\n"
    "  eval_loss_replica_nats  of replica 0 (when train.eval lists \"replica\")\n"
    "  eval_loss_average_nats  of the replicas' average (\"average\")\n"
    "  bytes_sent              bytes all replicas have sent so far\n"
    "  entropy_floor_nats      the eval chain's entropy rate (Markov data)\n"
    "\n"
    "With --out the CSV goes to FILE.csv and a JSON summary goes to stdout;\n"
    "without --out the CSV goes to stdout and the summary to stderr.  The\n"
    "summary: method, codec, replicas, schedule, steps, tokens, final\n"
    "losses, entropy floor, bytes sent in total and per step, wall_time_s,\n"
    "steps_per_s, tokens_per_s, gflops_per_s (training FLOPs, see nn.h).\n"
    "\n"
    "options:\n"
    "  --variant NAME   train one of the scenario's variants\n"
    "  --set KEY=VALUE  override a scenario key, e.g. train.inner.lr=1e-3\n"
    "                   (repeatable; VALUE is JSON, or else a string)\n"
    "  --out FILE.csv   write the CSV to FILE.csv (whole, or not at all)\n"
    "  --threads N      threads stepping replicas (overrides train.threads;\n"
    "                   the results do not depend on it)\n"
    "  --quiet          no progress line on a terminal\n"
    "  --progress       a plain progress line every ~10 s, even off a\n"
    "                   terminal (for logs)\n"
    "  -h, --help       show this help\n"
    "\n"
    "exit status: 0 success, 1 runtime failure (a diverged loss, an output\n"
    "file that cannot be written), 2 usage or input error (including a\n"
    "scenario without a \"train\" section)\n";

/* What the report callback needs and keeps. */
typedef struct {
    train *tr;
    FILE *csv;
    unsigned eval;        /* SCN_EVAL_* bits */
    double floor;         /* entropy floor, NAN unless Markov data */
    train_report last;    /* the last report */
    double replica, average; /* its extra evaluations (NAN when not asked) */
    int rc;               /* TRAIN_OK, or the error of an extra evaluation */
    int write_failed;     /* a row could not be written: stopped; */
    int write_errno;      /*   why */
} run_ctx;

static void csv_header(const run_ctx *c) {
    cli_csv_comment(c->csv);
    fputs("step,tokens,train_loss_nats,eval_loss_outer_nats", c->csv);
    if (c->eval & SCN_EVAL_REPLICA) fputs(",eval_loss_replica_nats", c->csv);
    if (c->eval & SCN_EVAL_AVERAGE) fputs(",eval_loss_average_nats", c->csv);
    fputs(",bytes_sent", c->csv);
    if (!isnan(c->floor)) fputs(",entropy_floor_nats", c->csv);
    fputc('\n', c->csv);
}

/* One row; -1 when the stream has failed (a full disk, a closed pipe). */
static int csv_row(const run_ctx *c) {
    const train_report *r = &c->last;
    fprintf(c->csv, "%lld,%llu,", (long long)r->step,
            (unsigned long long)r->tokens);
    cli_csv_number(c->csv, r->train_loss);
    fputc(',', c->csv);
    cli_csv_number(c->csv, r->eval_loss);
    if (c->eval & SCN_EVAL_REPLICA) {
        fputc(',', c->csv);
        cli_csv_number(c->csv, c->replica);
    }
    if (c->eval & SCN_EVAL_AVERAGE) {
        fputc(',', c->csv);
        cli_csv_number(c->csv, c->average);
    }
    fprintf(c->csv, ",%llu", (unsigned long long)r->bytes);
    if (!isnan(c->floor)) {
        fputc(',', c->csv);
        cli_csv_number(c->csv, c->floor);
    }
    fputc('\n', c->csv);
    /* a row at a time, for whoever follows the output */
    return fflush(c->csv) || ferror(c->csv) ? -1 : 0;
}

/* train_run's report callback: the extra evaluations, a row, progress.
 * Stops the run (non-zero) when an evaluation fails. */
static int on_report(const train_report *r, void *ctx) {
    run_ctx *c = ctx;
    c->last = *r;
    c->replica = c->average = NAN;
    if (c->eval & SCN_EVAL_REPLICA)
        c->rc = train_eval_replica(c->tr, 0, &c->replica);
    if (!c->rc && (c->eval & SCN_EVAL_AVERAGE))
        c->rc = train_eval_average(c->tr, &c->average);
    if (c->rc) return 1;
    if (csv_row(c)) {
        c->write_failed = 1;
        c->write_errno = errno ? errno : EIO;
        return 1;
    }
    return 0;
}

/* train_on_step's callback: progress after every step. */
static void on_step(void *ctx, int64_t t, int64_t steps) {
    cli_progress_count(ctx, (double)t, (double)steps);
}

/* Training FLOPs of one replica's inner step (nn_flops_per_step), from a
 * model built for the purpose; 0 when it cannot be built. */
static double flops_per_step(const train_config *t) {
    nn_model *m = nn_new(&t->nn, t->batch, t->seq);
    double f = m ? nn_flops_per_step(m) : 0;
    nn_free(m);
    return f;
}

static void json_num(FILE *f, const char *key, double x, int last) {
    fprintf(f, "  \"%s\": ", key);
    report_number(f, x);
    fputs(last ? "\n" : ",\n", f);
}

/* The summary: what ran, the final losses, bytes, speed. */
static void summary(FILE *f, const scn_config *cfg, const run_ctx *c,
                    double wall_s, double flops) {
    const train_config *t = &cfg->train;
    const train_report *r = &c->last;
    double steps = (double)r->step;
    fprintf(f, "{\n  \"method\": \"%s\",\n  \"codec\": \"%s\",\n",
            sched_method_name(t->sched.method),
            codec_name(t->sched.method == SCHED_DP ? t->dp_codec.kind
                                                   : t->codec.kind));
    json_num(f, "replicas", t->replicas, 0);
    json_num(f, "H", t->sched.H, 0);
    json_num(f, "fragments", t->sched.P, 0);
    json_num(f, "tau", t->sched.tau, 0);
    json_num(f, "alpha", t->sched.alpha, 0);
    json_num(f, "fedpart", t->fedpart, 0);
    json_num(f, "batch", t->batch, 0);
    json_num(f, "seq", t->seq, 0);
    json_num(f, "params", (double)train_num_params(c->tr), 0);
    json_num(f, "steps", steps, 0);
    json_num(f, "tokens", (double)r->tokens, 0);
    json_num(f, "train_loss_nats", r->train_loss, 0);
    json_num(f, "eval_loss_outer_nats", r->eval_loss, 0);
    if (c->eval & SCN_EVAL_REPLICA)
        json_num(f, "eval_loss_replica_nats", c->replica, 0);
    if (c->eval & SCN_EVAL_AVERAGE)
        json_num(f, "eval_loss_average_nats", c->average, 0);
    json_num(f, "entropy_floor_nats", c->floor, 0);
    json_num(f, "gap_to_floor_nats", r->eval_loss - c->floor, 0);
    json_num(f, "bytes_sent_total", (double)r->bytes, 0);
    json_num(f, "bytes_per_step", (double)r->bytes / steps, 0);
    json_num(f, "wall_time_s", wall_s, 0);
    json_num(f, "steps_per_s", steps / wall_s, 0);
    json_num(f, "tokens_per_s", (double)r->tokens / wall_s, 0);
    json_num(f, "gflops_per_s", flops * t->replicas * steps / wall_s / 1e9,
             1);
    fputs("}\n", f);
}

/* --threads N: 1..256, or a usage error. */
static int parse_threads(const char *v, int *out) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == 0 || *end || n < 1 || n > 256)
        return cli_usage_error("train", "--threads needs an integer in "
                               "1..256 (got '%s')", v);
    *out = (int)n;
    return 0;
}

/* Loads the scenario into *cfg (the --threads override applied);
 * CLI_EXIT_INPUT with the message printed, or 0. */
static int load(const cli_options *o, scn_config *cfg) {
    const char *threads = cli_value(o, "--threads");
    int rc = cli_load(o, NULL, 0, cfg);
    if (rc) return rc;
    if (!cfg->has_train) {
        fprintf(stderr, "%s: train: missing (dilosim train needs a "
                "\"train\" section)\n", o->scenario);
        return CLI_EXIT_INPUT;
    }
    if (threads && (rc = parse_threads(threads, &cfg->train.threads)))
        return rc;
    if (cfg->train_data_path[0]) cfg->train.data.path = cfg->train_data_path;
    return 0;
}

/* Runs the trainer, writing the CSV to out; fills c and *wall_s. */
static int train_to(outfile *out, run_ctx *c, const char *label,
                    double *wall_s) {
    cli_progress progress;
    c->csv = out->f;
    csv_header(c);
    cli_progress_start(&progress, label);
    train_on_step(c->tr, on_step, &progress);
    double t0 = cli_now_s();
    int rc = train_run(c->tr, on_report, c);
    train_on_step(c->tr, NULL, NULL);
    *wall_s = cli_now_s() - t0;
    cli_progress_end(&progress);
    return rc == TRAIN_STOPPED && !c->write_failed ? c->rc : rc;
}

int cli_train(int argc, char **argv) {
    static const char *const extra[] = {"--variant", "--threads", NULL};
    cli_options o;
    int rc = cli_parse("train", help, argc, argv, extra, NULL, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    scn_config *cfg = malloc(sizeof *cfg);
    if (!cfg) {
        fprintf(stderr, "dilosim train: out of memory\n");
        return CLI_EXIT_RUNTIME;
    }
    char err[CLI_ERR_MAX];
    run_ctx c = {.floor = NAN};
    outfile out;
    int to_stdout = !o.out || !strcmp(o.out, "-");
    double wall_s = 0, flops = 0;
    if ((rc = load(&o, cfg))) goto done;
    flops = flops_per_step(&cfg->train);
    if ((rc = train_new(&cfg->train, &c.tr, err, sizeof err))) {
        fprintf(stderr, "%s: %s\n", o.scenario, err);
        rc = rc == TRAIN_EINVAL ? CLI_EXIT_INPUT : CLI_EXIT_RUNTIME;
        goto done;
    }
    c.eval = cfg->train_eval;
    c.floor = train_entropy_floor(c.tr);
    if ((rc = outfile_open(&out, o.out, err, sizeof err))) {
        fprintf(stderr, "dilosim train: %s\n", err);
        rc = msg_exit_status(rc);
        goto done;
    }
    if ((rc = train_to(&out, &c, o.scenario, &wall_s)) && !c.write_failed) {
        fprintf(stderr, "%s: %s\n", o.scenario, train_error(c.tr));
        outfile_abort(&out);
        rc = CLI_EXIT_RUNTIME;
        goto done;
    }
    if (c.write_failed) {
        fprintf(stderr, "dilosim train: %s%swrite error: %s\n",
                to_stdout ? "" : o.out, to_stdout ? "" : ": ",
                strerror(c.write_errno));
        outfile_abort(&out);
        rc = CLI_EXIT_RUNTIME;
        goto done;
    }
    if ((rc = outfile_commit(&out, err, sizeof err))) {
        fprintf(stderr, "dilosim train: %s\n", err);
        rc = msg_exit_status(rc);
        goto done;
    }
    summary(to_stdout ? stderr : stdout, cfg, &c, wall_s, flops);
done:
    train_free(c.tr);
    free(cfg);
    return rc;
}
