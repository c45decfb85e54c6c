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

#include "sim/study/plan.h"
#include "sim/config/scenario.h"
#include "sim/study/sweep.h"
#include "sim/study/table.h"

typedef struct scn_train scn_train; /* sim/config/scenario_train.h */
typedef struct setfile setfile;     /* sim/config/setfile.h */

#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1
#define CLI_EXIT_INPUT 2
#define CLI_MAX_SETS 256
#define CLI_MAX_EXTRA 64
#define CLI_MAX_FILES 64 /* scenario arguments of one command */
#define CLI_ERR_MAX 8192 /* a message buffer: room for a path of PATH_MAX */

/* How progress is shown (cli_options.progress). */
enum {
    CLI_PROGRESS_AUTO, /* on a terminal only (no option) */
    CLI_PROGRESS_OFF,  /* --quiet, or stderr is no terminal */
    CLI_PROGRESS_TTY,  /* one line redrawn with \r */
    CLI_PROGRESS_PLAIN /* --progress: a plain line every ~10 s */
};
#define CLI_PROGRESS_PERIOD_S 10.0

/* The options every scenario-driven command understands (--set, --out,
 * --quiet, --progress, --full, -h/--help), plus any the command declares in
 * `extra` (long names like "--vary"; each takes one value; repeated ones
 * are collected in order). */
typedef struct {
    const char *scenario;             /* the first of files[] */
    const char *files[CLI_MAX_FILES]; /* the scenario arguments */
    int nfiles;
    const char *out;
    const char *sets[CLI_MAX_SETS];
    int nset;
    const char *set_from_path; /* --set-from FILE.json (the last one) */
    const setfile *set_from;   /* --set-from FILE.json: its overrides come
                                first in sets[]; NULL: none */
    int progress;              /* CLI_PROGRESS_AUTO/OFF/PLAIN */
    int full;                  /* --full: no fast-forward */
    /* extra options: values found, in order */
    const char *flags_seen[CLI_MAX_EXTRA]; /* flag options (no value) */
    int nflags;
    const char *extra_name[CLI_MAX_EXTRA];
    const char *extra_value[CLI_MAX_EXTRA];
    int nextra;
} cli_options;

/* The --help of a command: its usage and description, its options, then
 * the rest.  Each option is a name ("--out FILE") and a description
 * (lines joined by '\n'), printed as "  NAME" padded to the column `col`
 * (or followed by two blanks when it reaches it), the description's
 * lines below one another at col.  The description CLI_HELP_COMMON is
 * the option's line in the table of the lines several commands share
 * (cli.c: --set KEY=VALUE and --variant NAME of table and plan, --full,
 * --quiet, --progress, -h, --help), each written once; parse_opts
 * prints the last four of them after opts, for every command that
 * cli_parse parses. */
#define CLI_HELP_COMMON NULL

typedef struct {
    const char *name, *text; /* {NULL, NULL}: the end */
} cli_help_opt;

typedef struct {
    const char *head;         /* usage and description, to "options:\n" */
    int col;                  /* the column of the descriptions */
    const cli_help_opt *opts; /* up to {NULL, NULL} */
    const char *tail;         /* what follows the options */
    int parse_opts;           /* 1: opts are followed by the lines of
                                 cli_parse's own --full, --quiet,
                                 --progress and -h, --help */
} cli_help;

/* Writes the help h to f. */
void cli_help_print(FILE *f, const cli_help *h);

/* Parses argv (the arguments after the command's name, which must be
 * argv[-1]) for command `cmd`, with getopt_long: options and the one
 * scenario argument in any order, "--opt VALUE" or "--opt=VALUE", a
 * unique prefix of a long name, "--" ending the options, "-" an argument
 * (stdin).  `extra` lists further options that take a value, `flags`
 * further options that take none (both NULL-terminated "--name" strings,
 * may be NULL).  Prints `help` to stdout for -h/--help and returns -1;
 * returns 0 on success, or CLI_EXIT_INPUT after printing a usage error.
 * Sets the progress mode cli_progress_start uses. */
int cli_parse(const char *cmd, const cli_help *help, int argc, char **argv,
              const char *const *extra, const char *const *flags,
              cli_options *o);

/* cli_parse for a command that takes 1..max_files scenario arguments
 * (at most CLI_MAX_FILES), in o->files[0..nfiles-1]. */
int cli_parse_files(const char *cmd, const cli_help *help, int argc,
                    char **argv, const char *const *extra,
                    const char *const *flags, int max_files, cli_options *o);

/* --set-from FILE.json (cli_setfrom.c), for cli_parse: reads the file,
 * puts its overrides first in o->sets and o->set_from, and checks them
 * against every scenario argument.  Returns 0, or CLI_EXIT_INPUT after
 * printing the one-line message. */
int cli__set_from(const char *cmd, const char *path, cli_options *o);

/* Frees the file of overrides cli_parse read (main, as the program ends). */
void cli_set_from_free(void);

/* The last value given for an extra option, or NULL. */
const char *cli_value(const cli_options *o, const char *name);

/* 1 if the flag was given. */
int cli_flag(const cli_options *o, const char *name);

/* Every value of a repeatable option, in order, into out[max]; *n their
 * count.  Returns 0, or CLI_EXIT_INPUT (usage error printed) when there
 * are more than max. */
int cli_values(const cli_options *o, const char *cmd, const char *name,
               const char **out, int max, int *n);

/* Option `name` (e.g. "--jobs"), an integer in 1..max, into *out; absent,
 * *out is left as it is.  Returns 0, or CLI_EXIT_INPUT after a usage
 * error ("NAME must be an integer in 1..MAX (got 'V')"). */
int cli_count(const cli_options *o, const char *cmd, const char *name, int max,
              int *out);

/* --jobs N, an integer in 1..CLI_MAX_JOBS; absent: pool_cpu_count(), the
 * CPUs of the affinity mask (taskset, cgroups), not the online count.
 * Returns 0, or CLI_EXIT_INPUT after a usage error. */
#define CLI_MAX_JOBS 1024
int cli_jobs(const cli_options *o, const char *cmd, int *jobs);

/* Option `name` (e.g. "--target-cu"), a number in (0, 1], into *out;
 * absent, *out = def, or with def NAN a usage error ("NAME is
 * required").  Returns 0, or CLI_EXIT_INPUT after a usage error. */
int cli_fraction(const cli_options *o, const char *cmd, const char *name,
                 double def, double *out);

/* --thresholds LIST (absent: the list def): CU thresholds, increasing,
 * each in (0, 1], into *out (malloc'ed; free it) and *n.  Returns 0, or
 * CLI_EXIT_INPUT after a usage error. */
int cli_thresholds(const cli_options *o, const char *cmd, const char *def,
                   double **out, int *n);

/* --cost FILE.json: the prices in *cost and *has 1 (absent: *has 0).
 * Returns 0, or CLI_EXIT_INPUT after printing the cost file's one-line
 * message. */
int cli_cost(const cli_options *o, plan_cost *cost, int *has);

/* Writes the command's output to --out (outfile.h: whole or not at all,
 * devices and FIFOs written through) or stdout through write(f, ctx).
 * Returns 0, or the exit status (1; 2 for a path too long) after printing
 * "dilosim CMD: <why>" ("dilosim CMD: write error: <strerror>" when
 * stdout fails). */
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
/* cli_load that also fills *train with the train section (NULL: none
 * wanted, as cli_load). */
int cli_load_train(const cli_options *o, const char *const *more, int nmore,
                   scn_config *cfg, scn_train *train);

/* A CSV number: msg_number's shortest exact decimal ("inf", "-inf"), an
 * empty field for NaN (a value that does not apply). */
void cli_csv_number(FILE *f, double x);

/* The first line of every CSV a command writes: "# dilosim VERSION
 * (REVISION)".  CSV readers skip it as a comment (gnuplot does). */
void cli_csv_comment(FILE *f);

/* cli_csv_comment, the line ending with note (scn_gbit_note: what the
 * Gbit of its Gbit/s columns is; "" for none). */
void cli_csv_comment_note(FILE *f, const char *note);

/* Seconds on a monotonic clock (for wall-clock figures). */
double cli_now_s(void);

/* Progress on stderr: items done/total, percent, elapsed time and ETA.
 * On a terminal (no --quiet) one line redrawn at most ten times a second
 * once the work has lasted half a second; with --progress a plain line
 * every CLI_PROGRESS_PERIOD_S and a last one from cli_progress_end
 * ("LABEL: done, D/T, Xs elapsed"), for logs; else nothing. */
typedef struct {
    const char *label;
    double t0, last;
    double total; /* items, for cli_progress_update (0: percent) */
    double done;  /* the last count given */
    int shown, mode;
} cli_progress;

/* Starts the clock; the mode is the last cli_parse's.  Set p->total
 * afterwards to count items with cli_progress_update. */
void cli_progress_start(cli_progress *p, const char *label);
void cli_progress_count(cli_progress *p, double done, double total);
void cli_progress_update(void *p, double fraction); /* a run_hooks hook */
void cli_progress_end(cli_progress *p);

/* The subcommands. */
int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_table(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_train(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_explain(int argc, char **argv);

/* Where the work of sweep, table and plan runs when this process is one
 * of several (bin/dilosim-mpi); the commands above run it on this
 * process's threads. */
typedef struct {
    sweep_runner sweep; /* the rows of a sweep (sweep.h) */
    void *sweep_ctx;
    const table_runner *table; /* the batches of table and plan */
    int worker;                /* 1: computes for another process, which
                                    writes the output; this one writes
                                    none */
} cli_par;

int cli_sweep_par(int argc, char **argv, const cli_par *par);
int cli_table_par(int argc, char **argv, const cli_par *par);
int cli_plan_par(int argc, char **argv, const cli_par *par);

#endif
