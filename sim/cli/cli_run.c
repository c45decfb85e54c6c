/*
 * cli_run.c -- `dilosim run`: one scenario, one JSON result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/out/outfile.h"
#include "sim/out/report.h"
#include "sim/engine/run.h"

static const cli_help_opt help_opts[] = {
    {"--variant NAME",
     "run one of the scenario's variants (its \"variants\"\n"
     "section, e.g. scenarios/paper/1b.json --variant diloco)"},
    {"--set KEY=VALUE",
     "override a scenario key, e.g. network.bandwidth_gbps=2.5\n"
     "(repeatable; VALUE is JSON, or else a string)"},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--out FILE", "write the JSON result to FILE instead of stdout"},
    {"--trace FILE", "write a Chrome trace-event timeline (open it in\n"
                     "https://ui.perfetto.dev)"},
    {"--trace-steps A:B", "put only steps A..B in the timeline (1 <= A <= B;\n"
                          "\"A\" alone is A:A)"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim run SCENARIO.json [--variant NAME] [--set KEY=VALUE]...\n"
    "                   [--set-from FILE.json]\n"
    "                   [--out FILE] [--trace FILE [--trace-steps A:B]]\n"
    "\n"
    "Simulates the scenario and prints one JSON object: the version, the\n"
    "scenario digest, the resolved inputs, then compute_utilization, goodput,\n"
    "wall_time_s, bytes_sent_total, peak_link_gbps, per_worker, ...\n"
    "(every field and its unit: 'man dilosim').  A run that cannot\n"
    "go to its end has \"finished\": 0 and a \"stop_reason\", also printed on\n"
    "stderr; it still exits 0.\n"
    "\n"
    "options:\n",
    19, help_opts,
    "\n"
    "exit status: 0 success (finished or not), 1 runtime failure, 2 usage or\n"
    "input error\n",
    1};

static int fail(int rc, const char *err, outfile *a, outfile *b) {
    fprintf(stderr, "dilosim run: %s\n", err);
    if (a) outfile_abort(a);
    if (b) outfile_abort(b);
    return rc ? msg_exit_status(rc) : CLI_EXIT_RUNTIME;
}

/* One step number of --trace-steps: an integer >= 1; -1 if it is not. */
static long long step_number(const char *s, char **end) {
    errno = 0;
    long long v = strtoll(s, end, 10);
    if (*end == s || errno || v < 1) return -1;
    return v;
}

/* Parses "A:B" or "A" into first..last.  Returns 0 or a usage error. */
static int trace_steps(const char *s, int64_t *first, int64_t *last) {
    *first = 1;
    *last = INT64_MAX;
    if (!s) return 0;
    char *end;
    long long a = step_number(s, &end), b = a;
    if (a > 0 && *end == ':') b = step_number(end + 1, &end);
    if (a < 1 || b < 1 || *end || b < a)
        return cli_usage_error("run",
                               "--trace-steps must be A:B with integers "
                               "1 <= A <= B (got '%s')",
                               s);
    *first = a;
    *last = b;
    return 0;
}

int cli_run(int argc, char **argv) {
    static const char *const extra[] = {"--trace", "--trace-steps", "--variant",
                                        NULL};
    cli_options o;
    int rc = cli_parse("run", &help, argc, argv, extra, NULL, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    const char *trace_path = cli_value(&o, "--trace");
    const char *steps = cli_value(&o, "--trace-steps");
    if (steps && !trace_path)
        return cli_usage_error("run", "--trace-steps needs --trace");
    int out_stdout = !o.out || !strcmp(o.out, "-");
    if (trace_path && !strcmp(trace_path, "-") && out_stdout)
        return cli_usage_error("run", "--trace - and the result both on "
                                      "stdout (give --out FILE)");
    int64_t first, last;
    if ((rc = trace_steps(steps, &first, &last))) return rc;
    scn_config cfg;
    if ((rc = cli_load(&o, NULL, 0, &cfg))) return rc;

    char err[CLI_ERR_MAX];
    outfile out, trace;
    report_trace tw;
    if ((rc = outfile_open(&out, o.out, err, sizeof err)))
        return fail(rc, err, NULL, NULL);
    run_hooks hooks = {0};
    if (trace_path) {
        if ((rc = outfile_open(&trace, trace_path, err, sizeof err)))
            return fail(rc, err, &out, NULL);
        report_trace_begin(&tw, trace.f, cfg.workers, first, last);
        hooks.span = report_trace_span;
        hooks.span_ctx = &tw;
    }
    cli_progress progress;
    cli_progress_start(&progress, o.scenario);
    hooks.progress = cli_progress_update;
    hooks.progress_ctx = &progress;

    run_result res;
    rc = run_simulate(&cfg, &hooks, &res, err, sizeof err);
    cli_progress_end(&progress);
    if (rc) return fail(rc, err, &out, trace_path ? &trace : NULL);
    if (trace_path) {
        report_trace_end(&tw);
        if ((rc = outfile_commit(&trace, err, sizeof err)))
            return fail(rc, err, &out, NULL);
    }
    report_run_json(out.f, &cfg, &res);
    if ((rc = outfile_commit(&out, err, sizeof err)))
        return fail(rc, err, NULL, NULL);
    if (!res.finished)
        fprintf(stderr, "dilosim run: not finished: %s\n", res.stop_reason);
    return CLI_EXIT_OK;
}
