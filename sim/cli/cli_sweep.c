/*
 * cli_sweep.c -- `dilosim sweep`: a grid of scenarios run in parallel,
 * one CSV row each (the work is sweep_run's; see sim/study/sweep.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/study/sweep.h"
#include "sim/study/sweepfile.h"

static const cli_help_opt help_opts[] = {
    {"--vary KEY=SPEC", "vary a scenario key over SPEC (repeatable)"},
    {"--set KEY=VALUE", "override a key at every point (repeatable; not a\n"
                        "varied key)"},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--variant NAME", "run only this variant (repeatable, in this order)"},
    {"--jobs N", "worker threads, N >= 1 (default: the number of\n"
                 "CPUs this process may use, its affinity mask)"},
    {"--out FILE", "write the CSV to FILE: rows go to FILE.partial as\n"
                   "they finish, and FILE.partial becomes FILE once\n"
                   "complete (FILE never exists half-written); its\n"
                   "first line is '# dilosim sweep digest HEX', a\n"
                   "digest of every point's scenario.  A link is\n"
                   "followed (and kept); a FIFO or device is written\n"
                   "directly"},
    {"--resume", "continue an interrupted sweep: keep the complete\n"
                 "rows of FILE.partial (its digest and header must\n"
                 "match) and run only the others; do nothing when\n"
                 "FILE is already complete; refuse (exit 2) a FILE\n"
                 "or FILE.partial of another scenario (needs --out)"},
    {"--shard K/N", "compute only the points p (numbered from 0) with\n"
                    "p % N == K-1, 1 <= K <= N, in point order (needs\n"
                    "--out; its first line says 'shard K/N of P\n"
                    "points'); 'dilosim merge' joins shards 1..N into\n"
                    "the file the whole sweep writes"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim sweep SCENARIO.json [--vary KEY=SPEC]...\n"
    "                     [--set KEY=VALUE]... [--variant NAME]...\n"
    "                     [--set-from FILE.json]\n"
    "                     [--jobs N] [--out FILE] [--resume] [--shard K/N]\n"
    "\n"
    "Runs every point of a grid of scenarios and prints one CSV row per\n"
    "point, in point order (the same bytes whatever --jobs is).\n"
    "\n"
    "The grid is the scenario's variants (its \"variants\" section; all of\n"
    "them unless --variant is given) times each dimension, the first one\n"
    "varying slowest.  The dimensions are the scenario's \"sweep\" section,\n"
    "in file order, then the --vary options in the order given; a --vary of\n"
    "a key the section names replaces that key's values.\n"
    "\n"
    "SPEC is one of\n"
    "  1,2.5,10          a comma list (items trimmed; a comma inside \"...\",\n"
    "  dp,diloco           [...] or {...} does not split)\n"
    "  logspace:A:B:N    N values from 10^A to 10^B, evenly spaced in log\n"
    "                    (logspace:-1:3:50 is the Streaming DiLoCo paper's\n"
    "                    bandwidth grid)\n"
    "  linspace:A:B:N    N values from A to B, evenly spaced\n"
    "Each value is used as in --set KEY=VALUE (JSON, or else a string).\n"
    "\n"
    "Columns: variant (when the scenario has variants), the varied keys as\n"
    "given, then compute_utilization, goodput, wall_time_s, compute_time_s,\n"
    "bytes_sent_total, peak_link_gbps, avg_link_gbps, syncs, failures,\n"
    "lost_compute_s, recovery_bytes, finished, events (units: 'man\n"
    "dilosim').\n"
    "When the points count binary Gbit (network.gbit binary, as the paper\n"
    "scenarios do), the Gbit/s columns are 2^30 bit/s and the first line\n"
    "ends with '; Gbit = 2^30 bits (network.gbit binary)'; to stdout that\n"
    "line, '# dilosim sweep (dilosim VERSION, REVISION); Gbit = ...', comes\n"
    "before the header (an SI sweep starts with the header).\n"
    "\n"
    "options:\n",
    20, help_opts,
    "\n"
    "Every point is loaded before any runs: a bad value stops the sweep at\n"
    "once, naming the point (numbered from 1, as the data rows).  On an\n"
    "error FILE.partial is removed, unless --resume was given.\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n",
    1};

static void progress_points(void *ctx, int64_t done, int64_t total) {
    cli_progress_count(ctx, (double)done, (double)total);
}

/* --shard K/N into s; 0, or CLI_EXIT_INPUT after a usage error. */
static int parse_shard(const cli_options *o, sweep_spec *s) {
    const char *v = cli_value(o, "--shard");
    if (!v) return 0;
    if (sweepfile_parse_shard(v, &s->shard, &s->nshards))
        return cli_usage_error("sweep",
                               "--shard must be K/N with 1 <= K <= "
                               "N <= %d (got '%s')",
                               SWEEPFILE_MAX_SHARDS, v);
    if (!o->out || !strcmp(o->out, "-"))
        return cli_usage_error("sweep", "--shard needs --out FILE (its first "
                                        "line says which shard it holds)");
    return 0;
}

int cli_sweep(int argc, char **argv) {
    return cli_sweep_par(argc, argv, NULL);
}

int cli_sweep_par(int argc, char **argv, const cli_par *par) {
    static const char *const extra[] = {"--vary", "--variant", "--jobs",
                                        "--shard", NULL};
    static const char *const flags[] = {"--resume", NULL};
    cli_options o;
    int rc = cli_parse("sweep", &help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;

    const char *vary[CLI_MAX_EXTRA], *variants[CLI_MAX_EXTRA];
    sweep_spec s = {.scenario = o.scenario,
                    .vary = vary,
                    .variants = variants,
                    .sets = o.sets,
                    .nset = o.nset,
                    .out = o.out,
                    .resume = cli_flag(&o, "--resume"),
                    .stream = stdout,
                    .log = stderr,
                    .full = o.full};
    if ((rc = cli_values(&o, "sweep", "--vary", vary, CLI_MAX_EXTRA,
                         &s.nvary)) ||
        (rc = cli_values(&o, "sweep", "--variant", variants, CLI_MAX_EXTRA,
                         &s.nvariants)) ||
        (rc = cli_jobs(&o, "sweep", &s.jobs)) || (rc = parse_shard(&o, &s)))
        return rc;
    if (s.resume && (!o.out || !strcmp(o.out, "-")))
        return cli_usage_error("sweep", "--resume needs --out FILE");
    if (o.out && !strcmp(o.out, "-")) s.out = NULL;
    if (par) {
        s.runner = par->sweep;
        s.runner_ctx = par->sweep_ctx;
        s.worker = par->worker;
    }

    cli_progress progress;
    cli_progress_start(&progress, o.scenario);
    s.progress = progress_points;
    s.progress_ctx = &progress;
    char err[CLI_ERR_MAX];
    rc = sweep_run(&s, err, sizeof err);
    cli_progress_end(&progress);
    if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
    else if (rc) fprintf(stderr, "dilosim sweep: %s\n", err);
    return msg_exit_status(rc);
}
