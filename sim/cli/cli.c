/*
 * cli.c -- option parsing, usage errors, scenario loading and progress
 * lines shared by the dilosim subcommands.
 */
#include "sim/cli/cli.h"
#include "sim/config/scenario_train.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/base/pool.h"
#include "sim/out/outfile.h"
#include "sim/study/table.h"
#include "sim/base/version.h"

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dilosim %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'dilosim %s --help')\n", cmd);
    va_end(ap);
    return CLI_EXIT_INPUT;
}

/* How progress is shown: set by cli_parse (--quiet, --progress), read by
 * cli_progress_start.  The one piece of state the command line keeps
 * between the two, as getopt keeps optind. */
static int progress_mode = CLI_PROGRESS_AUTO;

/* The option lines several commands' --help share, each written once:
 * an option of a command's help with the text CLI_HELP_COMMON is
 * printed with its line here. */
static const cli_help_opt common_opts[] = {
    {"--set KEY=VALUE", "override a scenario key (repeatable)"},
    {"--set-from FILE.json", "the overrides of FILE.json, as that many --set\n"
                             "before the others (dilosim calibrate writes\n"
                             "one)"},
    {"--variant NAME", "only this variant (repeatable; default: all)"},
    {"--full", "simulate every op and period (no fast-forward;\n"
               "the results are the same)"},
    {"--quiet", "no progress line on a terminal"},
    {"--progress", "a plain progress line every ~10 s, even off a\n"
                   "terminal (for logs)"},
    {"-h, --help", "show this help"},
    {NULL, NULL}};

/* The common table's text of option name ("" when it has none). */
static const char *common_text(const char *name) {
    for (const cli_help_opt *c = common_opts; c->name; c++)
        if (!strcmp(c->name, name)) return c->text;
    return "";
}

/* cli_parse's own options after a command's (cli_help.parse_opts). */
static const cli_help_opt parse_opts[] = {{"--full", CLI_HELP_COMMON},
                                          {"--quiet", CLI_HELP_COMMON},
                                          {"--progress", CLI_HELP_COMMON},
                                          {"-h, --help", CLI_HELP_COMMON},
                                          {NULL, NULL}};

/* The lines of opts (up to {NULL, NULL}), descriptions at column col. */
static void print_opts(FILE *f, const cli_help_opt *opts, int col) {
    for (const cli_help_opt *o = opts; o->name; o++) {
        const char *t = o->text ? o->text : common_text(o->name);
        int at = fprintf(f, "  %s", o->name);
        fprintf(f, "%*s", at + 2 > col ? 2 : col - at, "");
        while (*t) {
            size_t n = strcspn(t, "\n");
            fwrite(t, 1, n, f);
            fputc('\n', f);
            t += n;
            if (*t) fprintf(f, "%*s", col, ""), t++;
        }
    }
}

void cli_help_print(FILE *f, const cli_help *h) {
    fputs(h->head, f);
    print_opts(f, h->opts, h->col);
    if (h->parse_opts) print_opts(f, parse_opts, h->col);
    fputs(h->tail, f);
}

/* getopt_long ids: all above 255, so that an optopt below 256 is an
 * unknown short option's character. */
enum {
    OPT_EXTRA = 512,            /* + index in extra */
    OPT_FLAG = OPT_EXTRA + 256, /* + index in flags */
    OPT_SET = OPT_FLAG + 256,
    OPT_SET_FROM,
    OPT_OUT,
    OPT_QUIET,
    OPT_PROGRESS,
    OPT_FULL
};

#define CLI_MAX_OPTS (CLI_MAX_EXTRA + 8)

/* The getopt_long table: the command's extra options and flags, then the
 * common ones, and the terminating entry. */
static void option_table(const char *const *extra, int nextra,
                         const char *const *flags, int nflags,
                         struct option opts[CLI_MAX_OPTS]) {
    int n = 0;
    for (int i = 0; i < nextra; i++)
        opts[n++] = (struct option){extra[i] + 2, required_argument, NULL,
                                    OPT_EXTRA + i};
    for (int i = 0; i < nflags; i++)
        opts[n++] =
            (struct option){flags[i] + 2, no_argument, NULL, OPT_FLAG + i};
    opts[n++] = (struct option){"set", required_argument, NULL, OPT_SET};
    opts[n++] =
        (struct option){"set-from", required_argument, NULL, OPT_SET_FROM};
    opts[n++] = (struct option){"out", required_argument, NULL, OPT_OUT};
    opts[n++] = (struct option){"quiet", no_argument, NULL, OPT_QUIET};
    opts[n++] = (struct option){"progress", no_argument, NULL, OPT_PROGRESS};
    opts[n++] = (struct option){"full", no_argument, NULL, OPT_FULL};
    opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    opts[n] = (struct option){NULL, 0, NULL, 0};
}

/* The usage error of getopt's '?' (an unknown option, or a value given
 * to one that takes none); a is the argument. */
static int bad_option(const char *cmd, const char *const *flags, int nflags,
                      const char *a) {
    if (optopt > 0 && optopt < 256)
        return cli_usage_error(cmd, "unknown option '-%c'", optopt);
    if (optopt >= OPT_FLAG && optopt < OPT_FLAG + nflags)
        return cli_usage_error(cmd, "%s takes no value",
                               flags[optopt - OPT_FLAG]);
    if (optopt >= OPT_QUIET && optopt <= OPT_FULL)
        return cli_usage_error(cmd, "--%s takes no value",
                               optopt == OPT_QUIET      ? "quiet"
                               : optopt == OPT_PROGRESS ? "progress"
                                                        : "full");
    return cli_usage_error(cmd, "unknown or ambiguous option '%s'", a);
}

/* One option c that getopt_long accepted, with its value optarg, into
 * *o (or the progress mode).  Returns 0, or CLI_EXIT_INPUT after a usage
 * error. */
static int take_option(const char *cmd, int c, const char *const *extra,
                       const char *const *flags, cli_options *o) {
    if (c == OPT_SET) {
        if (o->nset == CLI_MAX_SETS)
            return cli_usage_error(cmd, "too many --set options");
        o->sets[o->nset++] = optarg;
    } else if (c == OPT_SET_FROM) {
        o->set_from_path = optarg;
    } else if (c == OPT_OUT) {
        o->out = optarg;
    } else if (c == OPT_QUIET) {
        progress_mode = CLI_PROGRESS_OFF;
    } else if (c == OPT_PROGRESS) {
        progress_mode = CLI_PROGRESS_PLAIN;
    } else if (c == OPT_FULL) {
        o->full = 1;
    } else if (c >= OPT_FLAG) {
        if (o->nflags == CLI_MAX_EXTRA)
            return cli_usage_error(cmd, "too many options");
        o->flags_seen[o->nflags++] = flags[c - OPT_FLAG];
    } else {
        if (o->nextra == CLI_MAX_EXTRA)
            return cli_usage_error(cmd, "too many options");
        o->extra_name[o->nextra] = extra[c - OPT_EXTRA];
        o->extra_value[o->nextra++] = optarg;
    }
    return 0;
}

int cli_parse(const char *cmd, const cli_help *help, int argc, char **argv,
              const char *const *extra, const char *const *flags,
              cli_options *o) {
    return cli_parse_files(cmd, help, argc, argv, extra, flags, 1, o);
}

int cli_parse_files(const char *cmd, const cli_help *help, int argc,
                    char **argv, const char *const *extra,
                    const char *const *flags, int max_files, cli_options *o) {
    memset(o, 0, sizeof *o);
    if (max_files > CLI_MAX_FILES) max_files = CLI_MAX_FILES;
    int nextra = 0, nflags = 0;
    while (extra && extra[nextra]) nextra++;
    while (flags && flags[nflags]) nflags++;
    if (nextra + nflags > CLI_MAX_EXTRA)
        return cli_usage_error(cmd, "too many options declared");
    struct option opts[CLI_MAX_OPTS];
    option_table(extra, nextra, flags, nflags, opts);

    /* getopt wants the program's name first: argv[-1] is the command's. */
    int gargc = argc + 1, rc;
    char **gargv = argv - 1;
    optind = 0; /* a full re-initialisation (GNU): cli_parse may run twice */
    opterr = 0;
    progress_mode = CLI_PROGRESS_AUTO;
    for (int c; (c = getopt_long(gargc, gargv, ":h", opts, NULL)) != -1;) {
        const char *a = gargv[optind - 1];
        if (c == 'h') {
            cli_help_print(stdout, help);
            return -1;
        } else if (c == '?') {
            return bad_option(cmd, flags, nflags, a);
        } else if (c == ':') {
            return cli_usage_error(cmd, "%s needs a value", a);
        } else if ((rc = take_option(cmd, c, extra, flags, o))) {
            return rc;
        }
    }
    for (int i = optind; i < gargc; i++) {
        if (o->nfiles == max_files)
            return cli_usage_error(cmd, "unexpected argument '%s'", gargv[i]);
        o->files[o->nfiles++] = gargv[i];
    }
    o->scenario = o->files[0];
    o->progress = progress_mode;
    if (!o->scenario)
        return cli_usage_error(cmd, "no %s file given",
                               strcmp(cmd, "calibrate") ? "scenario"
                                                        : "measurement");
    return o->set_from_path ? cli__set_from(cmd, o->set_from_path, o) : 0;
}

const char *cli_value(const cli_options *o, const char *name) {
    const char *v = NULL;
    for (int i = 0; i < o->nextra; i++)
        if (!strcmp(o->extra_name[i], name)) v = o->extra_value[i];
    return v;
}

int cli_flag(const cli_options *o, const char *name) {
    for (int i = 0; i < o->nflags; i++)
        if (!strcmp(o->flags_seen[i], name)) return 1;
    return 0;
}

int cli_values(const cli_options *o, const char *cmd, const char *name,
               const char **out, int max, int *n) {
    *n = 0;
    for (int i = 0; i < o->nextra; i++) {
        if (strcmp(o->extra_name[i], name)) continue;
        if (*n == max)
            return cli_usage_error(cmd, "more than %d %s options", max, name);
        out[(*n)++] = o->extra_value[i];
    }
    return 0;
}

int cli_count(const cli_options *o, const char *cmd, const char *name, int max,
              int *out) {
    const char *s = cli_value(o, name);
    if (!s) return 0;
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == 0 || *end || n < 1 || n > max)
        return cli_usage_error(cmd,
                               "%s must be an integer in 1..%d "
                               "(got '%s')",
                               name, max, s);
    *out = (int)n;
    return 0;
}

int cli_jobs(const cli_options *o, const char *cmd, int *jobs) {
    int n = pool_cpu_count();
    *jobs = n > CLI_MAX_JOBS ? CLI_MAX_JOBS : n;
    return cli_count(o, cmd, "--jobs", CLI_MAX_JOBS, jobs);
}

int cli_fraction(const cli_options *o, const char *cmd, const char *name,
                 double def, double *out) {
    const char *v = cli_value(o, name);
    char *end;
    if (!v && isnan(def)) return cli_usage_error(cmd, "%s is required", name);
    *out = def;
    if (!v) return 0;
    *out = strtod(v, &end);
    if (*v == 0 || *end || !(*out > 0 && *out <= 1))
        return cli_usage_error(cmd, "%s: '%s' is not a number in (0, 1]", name,
                               v);
    return 0;
}

int cli_thresholds(const cli_options *o, const char *cmd, const char *def,
                   double **out, int *n) {
    char err[512];
    const char *v = cli_value(o, "--thresholds");
    if (table_parse_numbers("--thresholds", v ? v : def, TABLE_MAX_THRESHOLDS,
                            out, n, err, sizeof err))
        return cli_usage_error(cmd, "%s", err);
    for (int i = 0; i < *n; i++)
        if (!((*out)[i] > 0 && (*out)[i] <= 1))
            return cli_usage_error(cmd, "--thresholds: %g is not in (0, 1]",
                                   (*out)[i]);
    return 0;
}

int cli_cost(const cli_options *o, plan_cost *cost, int *has) {
    char err[CLI_ERR_MAX];
    const char *v = cli_value(o, "--cost");
    *has = 0;
    if (!v) return 0;
    if (plan_cost_load(v, cost, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return CLI_EXIT_INPUT;
    }
    *has = 1;
    return 0;
}

int cli_write(const cli_options *o, const char *cmd,
              void (*write)(FILE *f, const void *ctx), const void *ctx) {
    char err[CLI_ERR_MAX];
    outfile out;
    int rc = outfile_open(&out, o->out, err, sizeof err);
    if (!rc) {
        write(out.f, ctx);
        rc = outfile_commit(&out, err, sizeof err);
    }
    if (rc) fprintf(stderr, "dilosim %s: %s\n", cmd, err);
    return msg_exit_status(rc);
}

int cli_load(const cli_options *o, const char *const *more, int nmore,
             scn_config *cfg) {
    return cli_load_train(o, more, nmore, cfg, NULL);
}

int cli_load_train(const cli_options *o, const char *const *more, int nmore,
                   scn_config *cfg, scn_train *train) {
    const char *sets[CLI_MAX_SETS * 2];
    int n = 0;
    for (int i = 0; i < o->nset; i++) sets[n++] = o->sets[i];
    for (int i = 0; i < nmore && n < CLI_MAX_SETS * 2; i++) sets[n++] = more[i];
    char err[1024];
    const char *variant = cli_value(o, "--variant");
    if (scn_load_train(o->scenario, variant, sets, n, cfg, train, err,
                       sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return CLI_EXIT_INPUT;
    }
    cfg->full = o->full;
    return 0;
}

void cli_csv_comment(FILE *f) {
    cli_csv_comment_note(f, "");
}

void cli_csv_comment_note(FILE *f, const char *note) {
    fprintf(f, "# dilosim %s (%s)%s\n", DILOSIM_VERSION, version_revision(),
            note);
}

void cli_csv_number(FILE *f, double x) {
    char buf[MSG_NUM_MAX];
    if (!isnan(x)) fputs(msg_number(x, buf), f);
}

double cli_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cli_progress_start(cli_progress *p, const char *label) {
    memset(p, 0, sizeof *p);
    p->label = label;
    p->t0 = p->last = cli_now_s();
    p->mode = progress_mode;
    if (p->mode == CLI_PROGRESS_AUTO)
        p->mode = isatty(STDERR_FILENO) ? CLI_PROGRESS_TTY : CLI_PROGRESS_OFF;
}

/* "1h02m", "3m07s", "12s", "3.2d" */
static void duration(double s, char *buf, size_t n) {
    if (!(s < 1e9)) snprintf(buf, n, "?");
    else if (s >= 86400 * 3) snprintf(buf, n, "%.1fd", s / 86400);
    else if (s >= 3600)
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s, 3600) / 60);
    else if (s >= 60)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%.0fs", s);
}

/* Shows fraction f of the work, with "done/total" when total > 0. */
static void show(cli_progress *p, double done, double total) {
    p->done = done;
    if (p->mode == CLI_PROGRESS_OFF || !(total > 0)) return;
    double now = cli_now_s(), el = now - p->t0;
    if (p->mode == CLI_PROGRESS_TTY) {
        if ((!p->shown && el < 0.5) ||
            (p->shown && now - p->last < 0.1 && done < total))
            return;
    } else if (now - p->last < CLI_PROGRESS_PERIOD_S) {
        return; /* the last line is cli_progress_end's */
    }
    p->shown = 1;
    p->last = now;
    double f = done / total;
    char els[32], eta[32], cnt[64];
    duration(el, els, sizeof els);
    duration(f > 0 ? el * (1 - f) / f : INFINITY, eta, sizeof eta);
    cnt[0] = 0;
    if (p->total > 0)
        snprintf(cnt, sizeof cnt, " %.0f/%.0f,", floor(done), total);
    if (p->mode == CLI_PROGRESS_TTY) {
        int bar = (int)(f * 20 + 0.5);
        fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%%s %s elapsed, ETA %s\033[K",
                p->label, bar, "====================", 20 - bar, "", 100 * f,
                cnt, els, eta);
    } else {
        fprintf(stderr, "%s: %.1f%%%s %s elapsed, ETA %s\n", p->label, 100 * f,
                cnt, els, eta);
    }
    fflush(stderr);
}

void cli_progress_count(cli_progress *p, double done, double total) {
    p->total = total;
    show(p, done, total);
}

void cli_progress_update(void *ctx, double fraction) {
    cli_progress *p = ctx;
    if (p->total > 0) show(p, fraction * p->total, p->total);
    else show(p, fraction, 1);
}

void cli_progress_end(cli_progress *p) {
    if (p->mode == CLI_PROGRESS_PLAIN) { /* the last line */
        char els[32], cnt[64] = "";
        duration(cli_now_s() - p->t0, els, sizeof els);
        if (p->total > 0)
            snprintf(cnt, sizeof cnt, " %.0f/%.0f,", floor(p->done), p->total);
        fprintf(stderr, "%s: done,%s %s elapsed\n", p->label, cnt, els);
    }
    if (p->shown && p->mode == CLI_PROGRESS_TTY) fputs("\n", stderr);
    p->shown = 0;
}
