/*
 * cli_run.c -- `dilosim run`: one scenario, one JSON result.
 */
#include "../models/msg.h"
#include "cli.h"
#include "outfile.h"
#include "report.h"
#include "run.h"

static const char help[] =
    "usage: dilosim run SCENARIO.json [--variant NAME] [--set KEY=VALUE]...\n"
    "                   [--out FILE] [--trace FILE]\n"
    "\n"
    "Simulates the scenario and prints one JSON object: compute_utilization,\n"
    "wall_time_s, bytes_sent_total, peak_link_gbps, per_worker, ...\n"
    "(every field and its unit is listed in README.md).\n"
    "\n"
    "options:\n"
    "  --variant NAME   run one of the scenario's variants (its \"variants\"\n"
    "                   section, e.g. scenarios/paper/1b.json --variant diloco)\n"
    "  --set KEY=VALUE  override a scenario key, e.g. network.bandwidth_gbps=2.5\n"
    "                   (repeatable; VALUE is JSON, or else a string)\n"
    "  --out FILE       write the JSON result to FILE instead of stdout\n"
    "  --trace FILE     write a Chrome trace-event timeline (open it in\n"
    "                   https://ui.perfetto.dev)\n"
    "  -h, --help       show this help\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n";

static int fail(int rc, const char *err, outfile *a, outfile *b) {
    fprintf(stderr, "dilosim run: %s\n", err);
    if (a) outfile_abort(a);
    if (b) outfile_abort(b);
    return rc ? msg_exit_status(rc) : CLI_EXIT_RUNTIME;
}

int cli_run(int argc, char **argv) {
    static const char *const extra[] = {"--trace", "--variant", NULL};
    cli_options o;
    int rc = cli_parse("run", help, argc, argv, extra, NULL, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    scn_config cfg;
    if ((rc = cli_load(&o, NULL, 0, &cfg))) return rc;

    char err[CLI_ERR_MAX];
    const char *trace_path = cli_value(&o, "--trace");
    outfile out, trace;
    if ((rc = outfile_open(&out, o.out, err, sizeof err)))
        return fail(rc, err, NULL, NULL);
    run_hooks hooks = {0};
    if (trace_path) {
        if ((rc = outfile_open(&trace, trace_path, err, sizeof err)))
            return fail(rc, err, &out, NULL);
        report_trace_begin(trace.f, cfg.workers);
        hooks.span = report_trace_span;
        hooks.span_ctx = trace.f;
    }
    cli_progress progress;
    cli_progress_start(&progress, o.scenario);
    hooks.progress = cli_progress_update;
    hooks.progress_ctx = &progress;

    run_result res;
    rc = run_simulate(&cfg, &hooks, &res, err, sizeof err);
    cli_progress_end(&progress);
    if (rc) return fail(0, err, &out, trace_path ? &trace : NULL);
    if (trace_path) {
        report_trace_end(trace.f);
        if ((rc = outfile_commit(&trace, err, sizeof err)))
            return fail(rc, err, &out, NULL);
    }
    report_run_json(out.f, &cfg, &res);
    if ((rc = outfile_commit(&out, err, sizeof err)))
        return fail(rc, err, NULL, NULL);
    return CLI_EXIT_OK;
}
