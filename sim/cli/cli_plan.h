/*
 * cli_plan.h -- between the files of `dilosim plan` (cli_plan.c the
 * command and its text, cli_plan_out.c its JSON and how sure it is,
 * cli_plan_sum.c the summary that opens the text) and
 * `dilosim report`, which takes the same options of how sure the plan is:
 * --samples, --seed and --seeds, with --set-from's fit block.
 */
#ifndef DILOSIM_CLI_PLAN_H
#define DILOSIM_CLI_PLAN_H

#include <stdio.h>

#include "sim/cli/cli.h"
#include "sim/study/plan.h"

/* The help lines of the options (name, text), for plan's and report's
 * tables. */
#define CLI_PLAN_HELP_SAMPLES                                                  \
    {                                                                          \
        "--samples N", "with --set-from FIT.json and its fit block: the\n"     \
                       "least bandwidth as [5%, 95%] over N draws of the\n"    \
                       "fitted keys from their normal (default 200,\n"         \
                       "1..100000), each a whole search"                       \
    }
#define CLI_PLAN_HELP_SEED                                                     \
    { "--seed S", "the seed of those draws (default 1)" }
#define CLI_PLAN_HELP_SEEDS                                                    \
    {                                                                          \
        "--seeds N", "with random failures: CU at each candidate as its\n"     \
                     "5th, 50th and 95th percentiles over N seeds (the\n"      \
                     "scenario's seed + k, 1..100000), and the least\n"        \
                     "bandwidth whose 5th percentile reaches the target"       \
    }

/* --samples, --seed and --seeds (and o->set_from) into x: fit, samples,
 * sample_seed, seeds.  Returns 0, or CLI_EXIT_INPUT after a usage error
 * (a bad value; --samples or --seed without a fit block to draw from). */
int cli_plan_sure(const cli_options *o, const char *cmd, plan_extra *x);

/* --sensitivity, --mtbf-hours, --train-hours and --tokens (those cmd
 * takes) into x.  Returns 0, or CLI_EXIT_INPUT after a usage error. */
int cli_plan_extra(const cli_options *o, const char *cmd, plan_extra *x);

/* The plan as one JSON object (`dilosim plan --json`); fit_path names the
 * file of the fit (NULL without one). */
void cli_plan_write_json(FILE *f, const char *scenario, const plan_result *r,
                         const char *fit_path);

/* The text of how sure the plan is: what the interval column of the
 * methods' table means (nothing without a fit), and CU over the seeds
 * (nothing without seeds).  w: the method column's width. */
void cli_plan_text_interval(FILE *f, const plan_result *r,
                            const char *fit_path);
void cli_plan_text_seeds(FILE *f, const plan_result *r, int w);

/* The summary block that opens the plan's text (cli_plan_sum.c): what to
 * buy, the runner-up, the margin to the target, the links' load and the
 * training at the option, and that quality is not assessed, each wrapped
 * at 78 columns; then an empty line. */
void cli_plan_text_summary(FILE *f, const plan_result *r);

#endif
