/*
 * cli.c -- option parsing, usage errors, scenario loading and progress
 * lines shared by the dilosim subcommands.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

static int in_list(const char *const *list, const char *s) {
    for (; list && *list; list++)
        if (!strcmp(*list, s)) return 1;
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dilosim %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'dilosim %s --help')\n", cmd);
    va_end(ap);
    return CLI_EXIT_INPUT;
}

int cli_parse(const char *cmd, const char *help, int argc, char **argv,
              const char *const *extra, const char *const *flags,
              cli_options *o) {
    memset(o, 0, sizeof *o);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(help, stdout);
            return -1;
        }
        if (in_list(flags, a)) {
            if (o->nflags == CLI_MAX_EXTRA)
                return cli_usage_error(cmd, "too many options");
            o->flags_seen[o->nflags++] = a;
            continue;
        }
        int is_set = !strcmp(a, "--set"), is_out = !strcmp(a, "--out");
        int is_extra = in_list(extra, a);
        if (!is_set && !is_out && !is_extra) {
            if (a[0] == '-' && a[1])
                return cli_usage_error(cmd, "unknown option '%s'", a);
            if (o->scenario)
                return cli_usage_error(cmd, "unexpected argument '%s'", a);
            o->scenario = a;
            continue;
        }
        if (i + 1 >= argc) return cli_usage_error(cmd, "%s needs a value", a);
        const char *v = argv[++i];
        if (is_out) {
            o->out = v;
        } else if (is_set) {
            if (o->nset == CLI_MAX_SETS)
                return cli_usage_error(cmd, "too many --set options");
            o->sets[o->nset++] = v;
        } else {
            if (o->nextra == CLI_MAX_EXTRA)
                return cli_usage_error(cmd, "too many options");
            o->extra_name[o->nextra] = a;
            o->extra_value[o->nextra++] = v;
        }
    }
    if (!o->scenario) return cli_usage_error(cmd, "no scenario file given");
    return 0;
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

int cli_jobs(const cli_options *o, const char *cmd, int *jobs) {
    const char *s = cli_value(o, "--jobs");
    if (!s) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        *jobs = n < 1 ? 1 : n > CLI_MAX_JOBS ? CLI_MAX_JOBS : (int)n;
        return 0;
    }
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == 0 || *end || n < 1 || n > CLI_MAX_JOBS)
        return cli_usage_error(cmd, "--jobs must be an integer in 1..%d "
                               "(got '%s')", CLI_MAX_JOBS, s);
    *jobs = (int)n;
    return 0;
}

int cli_write(const cli_options *o, const char *cmd,
              void (*write)(FILE *f, const void *ctx), const void *ctx) {
    char err[1024];
    report_file out;
    int rc = report_file_open(&out, o->out, err, sizeof err);
    if (!rc) {
        write(out.f, ctx);
        rc = report_file_commit(&out, err, sizeof err);
    }
    if (rc) fprintf(stderr, "dilosim %s: %s\n", cmd, err);
    return rc ? CLI_EXIT_RUNTIME : CLI_EXIT_OK;
}

int cli_load(const cli_options *o, const char *const *more, int nmore,
             scn_config *cfg) {
    const char *sets[CLI_MAX_SETS * 2];
    int n = 0;
    for (int i = 0; i < o->nset; i++) sets[n++] = o->sets[i];
    for (int i = 0; i < nmore && n < CLI_MAX_SETS * 2; i++) sets[n++] = more[i];
    char err[1024];
    const char *variant = cli_value(o, "--variant");
    if (scn_load_variant(o->scenario, variant, sets, n, cfg, err,
                         sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return CLI_EXIT_INPUT;
    }
    return 0;
}

double cli_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cli_progress_start(cli_progress *p, const char *label) {
    p->label = label;
    p->t0 = cli_now_s();
    p->shown = 0;
    p->enabled = isatty(STDERR_FILENO);
}

void cli_progress_update(void *ctx, double fraction) {
    cli_progress *p = ctx;
    if (!p->enabled || (!p->shown && cli_now_s() - p->t0 < 0.5)) return;
    p->shown = 1;
    int bar = (int)(fraction * 30 + 0.5);
    fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%", p->label, bar,
            "==============================", 30 - bar, "", 100 * fraction);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p) {
    if (p->shown) fputs("\n", stderr);
    p->shown = 0;
}
