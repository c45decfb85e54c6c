/*
 * main.c -- the dilosim command line: dispatch to the subcommands.
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage or input error.
 * Results go to stdout or --out (written whole or not at all); progress
 * goes to stderr, only when stderr is a terminal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/adapter/coupled.h"
#include "sim/cli/cli.h"
#include "sim/out/outfile.h"
#include "sim/base/version.h"

static const char usage[] =
    "usage: dilosim <command> [options]\n"
    "\n"
    "Simulates data-parallel, DiLoCo and Streaming DiLoCo training across\n"
    "datacenters: compute utilization and bytes moved over the WAN.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.json    simulate one scenario, print the result as JSON\n"
    "  sweep SCENARIO.json  run a grid of scenarios in parallel, one CSV row "
    "each\n"
    "  merge PART...        join the shards of a sweep (sweep --shard K/N)\n"
    "  table SCENARIO.json  bandwidth needed per compute-utilization "
    "threshold\n"
    "  plan SCENARIO.json   least bandwidth, latency limit and costs per "
    "method\n"
    "  train SCENARIO.json  train the scenario's small model for real: loss "
    "CSV\n"
    "  report SCENARIO...   one HTML page of figures and tables, per scenario\n"
    "  calibrate MEAS...    fit network keys to a cluster's measurements\n"
    "  explain SCENARIO.json\n"
    "                       why the wall time is what it is, per method\n"
    "\n"
    "  version              print the version (also --version)\n"
    "\n"
    "Every command takes --quiet (no progress line on a terminal) and\n"
    "--progress (a plain progress line every ~10 s, for logs).\n"
    "\n"
    "Run 'dilosim <command> --help' for the options of a command, and\n"
    "'man dilosim' for the whole reference (keys, outputs, units).\n";

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    {"run", cli_run},         {"sweep", cli_sweep},
    {"merge", cli_merge},     {"table", cli_table},
    {"plan", cli_plan},       {"train", cli_train},
    {"report", cli_report},   {"calibrate", cli_calibrate},
    {"explain", cli_explain},
};

/* Flushes and closes stdout: what was lost in its buffer is reported
 * (e.g. a summary written to a full disk) and the status becomes 1. */
static int close_stdout(const char *cmd, int rc) {
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    bad |= fclose(stdout) != 0;
    if (!e) e = errno ? errno : EIO;
    if (bad && rc == CLI_EXIT_OK) {
        fprintf(stderr, "dilosim%s%s: write error: %s\n", *cmd ? " " : "", cmd,
                strerror(e));
        rc = CLI_EXIT_RUNTIME;
    }
    return rc;
}

int main(int argc, char **argv) {
    cpl_blas_start(); /* OpenBLAS's threads, started as it loaded: ended */
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_EXIT_INPUT;
    }
    outfile_catch_signals();
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return close_stdout("", CLI_EXIT_OK);
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("dilosim %s (%s)\n", DILOSIM_VERSION, version_revision());
        return close_stdout("", CLI_EXIT_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(cmd, commands[i].name)) {
            int rc = commands[i].fn(argc - 2, argv + 2);
            cli_set_from_free();
            return close_stdout(cmd, rc);
        }
    fprintf(stderr, "dilosim: unknown command '%s' (see 'dilosim --help')\n",
            cmd);
    return CLI_EXIT_INPUT;
}
