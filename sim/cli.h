/*
 * cli.h -- what the dilosim subcommands share: option parsing, usage
 * errors, scenario loading, progress on a terminal.
 *
 * Each subcommand lives in its own cli_<name>.c and has the signature
 * int cli_<name>(int argc, char **argv) with argv starting after the
 * command name; it returns the process exit status.
 */
#ifndef DILOSIM_CLI_H
#define DILOSIM_CLI_H

#include <stdio.h>

#include "scenario.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1
#define CLI_EXIT_INPUT 2
#define CLI_MAX_SETS 256
#define CLI_MAX_EXTRA 64

/* The options every scenario-driven command understands, plus any the
 * command declares in `extra` (long names like "--vary"; each takes one
 * value; repeated ones are collected in order). */
typedef struct {
    const char *scenario;
    const char *out;
    const char *sets[CLI_MAX_SETS];
    int nset;
    /* extra options: values found, in order */
    const char *flags_seen[CLI_MAX_EXTRA]; /* flag options (no value) */
    int nflags;
    const char *extra_name[CLI_MAX_EXTRA];
    const char *extra_value[CLI_MAX_EXTRA];
    int nextra;
} cli_options;

/* Parses argv for command `cmd`.  `extra` lists further options that take
 * a value, `flags` further options that take none (both NULL-terminated,
 * may be NULL).  Prints `help` to stdout for -h/--help and returns -1;
 * returns 0 on success, or CLI_EXIT_INPUT after printing a usage error. */
int cli_parse(const char *cmd, const char *help, int argc, char **argv,
              const char *const *extra, const char *const *flags,
              cli_options *o);

/* The last value given for an extra option, or NULL. */
const char *cli_value(const cli_options *o, const char *name);

/* 1 if the flag was given. */
int cli_flag(const cli_options *o, const char *name);

/* Every value of a repeatable option, in order, into out[max]; *n their
 * count.  Returns 0, or CLI_EXIT_INPUT (usage error printed) when there
 * are more than max. */
int cli_values(const cli_options *o, const char *cmd, const char *name,
               const char **out, int max, int *n);

/* --jobs N, an integer in 1..CLI_MAX_JOBS; absent: one per online core.
 * Returns 0, or CLI_EXIT_INPUT after a usage error. */
#define CLI_MAX_JOBS 1024
int cli_jobs(const cli_options *o, const char *cmd, int *jobs);

/* Writes the command's output to --out (whole or not at all) or stdout
 * through write(f, ctx).  Returns 0, or CLI_EXIT_RUNTIME after printing
 * "dilosim CMD: <why>". */
int cli_write(const cli_options *o, const char *cmd,
              void (*write)(FILE *f, const void *ctx), const void *ctx);

/* Prints "dilosim CMD: <message> (see 'dilosim CMD --help')" and returns
 * CLI_EXIT_INPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...);

/* Loads the scenario (the --variant given, if any) with the --set
 * overrides (and `more` extra ones, may be NULL/0); prints the loader's
 * one-line message and returns CLI_EXIT_INPUT on failure, 0 on success. */
int cli_load(const cli_options *o, const char *const *more, int nmore,
             scn_config *cfg);

/* Seconds on a monotonic clock (for wall-clock figures). */
double cli_now_s(void);

/* A progress line on stderr, shown only when stderr is a terminal and
 * the work has lasted more than half a second. */
typedef struct {
    const char *label;
    double t0;
    int shown, enabled;
} cli_progress;

void cli_progress_start(cli_progress *p, const char *label);
void cli_progress_update(void *p, double fraction); /* a run_hooks hook */
void cli_progress_end(cli_progress *p);

/* The subcommands. */
int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_table(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_train(int argc, char **argv);

#endif
