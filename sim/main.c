/*
 * main.c -- the dilosim command line: dispatch to the subcommands.
 *
 * Exit status: 0 success, 1 runtime failure, 2 usage or input error.
 * Results go to stdout or --out (written whole or not at all); progress
 * goes to stderr, only when stderr is a terminal.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: dilosim <command> [options]\n"
    "\n"
    "Simulates data-parallel, DiLoCo and Streaming DiLoCo training across\n"
    "datacenters: compute utilization and bytes moved over the WAN.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.json    simulate one scenario, print the result as JSON\n"
    "  sweep SCENARIO.json  run a grid of scenarios in parallel, one CSV row each\n"
    "  table SCENARIO.json  bandwidth needed per compute-utilization threshold\n"
    "  plan SCENARIO.json   least bandwidth, latency limit and costs per method\n"
    "  train SCENARIO.json  train the scenario's small model for real: loss CSV\n"
    "\n"
    "Run 'dilosim <command> --help' for the options of a command.\n";

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    {"run", cli_run},
    {"sweep", cli_sweep},
    {"table", cli_table},
    {"plan", cli_plan},
    {"train", cli_train},
};

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 2, argv + 2);
    fprintf(stderr, "dilosim: unknown command '%s' (see 'dilosim --help')\n",
            cmd);
    return CLI_EXIT_INPUT;
}
