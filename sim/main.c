/*
 * main.c -- the dilosim command line.
 *
 *   dilosim run SCENARIO.json [--set KEY=VALUE]... [--out FILE] [--trace FILE]
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage or input error.
 * Results go to stdout or --out (written whole or not at all); progress
 * goes to stderr, only when stderr is a terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "run.h"
#include "scenario.h"

#define MAX_SETS 256
#define EXIT_INPUT 2

static const char usage_main[] =
    "usage: dilosim <command> [options]\n"
    "\n"
    "Simulates data-parallel, DiLoCo and Streaming DiLoCo training across\n"
    "datacenters: compute utilization and bytes moved over the WAN.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.json    simulate one scenario, print the result as JSON\n"
    "\n"
    "Run 'dilosim <command> --help' for the options of a command.\n";

static const char usage_run[] =
    "usage: dilosim run SCENARIO.json [--set KEY=VALUE]... [--out FILE]\n"
    "                   [--trace FILE]\n"
    "\n"
    "Simulates the scenario and prints one JSON object: compute_utilization,\n"
    "wall_time_s, bytes_sent_total, peak_link_gbps, per_worker, ...\n"
    "(every field and its unit is listed in README.md).\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE  override a scenario key, e.g. network.bandwidth_gbps=2.5\n"
    "                   (repeatable; VALUE is JSON, or else a string)\n"
    "  --out FILE       write the JSON result to FILE instead of stdout\n"
    "  --trace FILE     write a Chrome trace-event timeline (open it in\n"
    "                   https://ui.perfetto.dev)\n"
    "  -h, --help       show this help\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n";

/* Options shared by the commands that load one scenario. */
typedef struct {
    const char *scenario, *out, *trace;
    const char *sets[MAX_SETS];
    int nset;
} options;

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "dilosim %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'dilosim %s --help')\n", cmd);
    return EXIT_INPUT;
}

/* Parses argv after the command name.  Returns -1 when it printed help,
 * 0 on success, or an exit status. */
static int parse_options(const char *cmd, const char *help, int argc,
                         char **argv, options *o) {
    memset(o, 0, sizeof *o);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(help, stdout);
            return -1;
        } else if (!strcmp(a, "--set")) {
            if (o->nset == MAX_SETS)
                return usage_error(cmd, "too many --set options%s", "");
            slot = &o->sets[o->nset++];
        } else if (!strcmp(a, "--out")) {
            slot = &o->out;
        } else if (!strcmp(a, "--trace")) {
            slot = &o->trace;
        } else if (a[0] == '-' && a[1]) {
            return usage_error(cmd, "unknown option '%s'", a);
        } else if (!o->scenario) {
            o->scenario = a;
            continue;
        } else {
            return usage_error(cmd, "unexpected argument '%s'", a);
        }
        if (i + 1 >= argc) return usage_error(cmd, "%s needs a value", a);
        *slot = argv[++i];
    }
    if (!o->scenario) return usage_error(cmd, "no scenario file given%s", "");
    return 0;
}

static void show_progress(void *ctx, double fraction) {
    fprintf(stderr, "\r%s: %3.0f%%", (const char *)ctx, 100 * fraction);
    if (fraction >= 1) fputc('\n', stderr);
}

static int cmd_run(int argc, char **argv) {
    options o;
    int rc = parse_options("run", usage_run, argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;

    char err[1024];
    scn_config cfg;
    if (scn_load(o.scenario, o.sets, o.nset, &cfg, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return EXIT_INPUT;
    }
    report_file out, trace;
    if (report_file_open(&out, o.out, err, sizeof err)) {
        fprintf(stderr, "dilosim run: %s\n", err);
        return 1;
    }
    run_hooks hooks = {0};
    if (o.trace) {
        if (report_file_open(&trace, o.trace, err, sizeof err)) {
            fprintf(stderr, "dilosim run: %s\n", err);
            report_file_abort(&out);
            return 1;
        }
        report_trace_begin(trace.f, cfg.workers);
        hooks.span = report_trace_span;
        hooks.span_ctx = trace.f;
    }
    if (isatty(STDERR_FILENO)) {
        hooks.progress = show_progress;
        hooks.progress_ctx = (void *)o.scenario;
    }

    run_result res;
    if (run_simulate(&cfg, &hooks, &res, err, sizeof err)) {
        fprintf(stderr, "dilosim run: %s\n", err);
        report_file_abort(&out);
        if (o.trace) report_file_abort(&trace);
        return 1;
    }
    if (o.trace) {
        report_trace_end(trace.f);
        if (report_file_commit(&trace, err, sizeof err)) {
            fprintf(stderr, "dilosim run: %s\n", err);
            report_file_abort(&out);
            return 1;
        }
    }
    report_run_json(out.f, &cfg, &res);
    if (report_file_commit(&out, err, sizeof err)) {
        fprintf(stderr, "dilosim run: %s\n", err);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    fprintf(stderr, "dilosim: unknown command '%s' (see 'dilosim --help')\n",
            cmd);
    return EXIT_INPUT;
}
