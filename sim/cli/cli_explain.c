/*
 * cli_explain.c -- `dilosim explain`: why a run's wall time is what it
 * is, per method (each variant of the scenario, or its base): the parts
 * that add up to it exactly, per worker where they differ, and the
 * sentence a person would say (sim/engine/explain.h, sim/out/explain_out.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jw.h"
#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/engine/explain.h"
#include "sim/out/explain_out.h"
#include "sim/study/table.h"

static const cli_help_opt help_opts[] = {
    {"--variant NAME", "explain this variant only (repeatable; default:\n"
                       "every variant, or the base without variants)"},
    {"--set KEY=VALUE",
     "override a scenario key, e.g. network.bandwidth_gbps=2.5\n"
     "(repeatable; VALUE is JSON, or else a string)"},
    {"--set-from FILE.json", CLI_HELP_COMMON},
    {"--json", "print a JSON array, one object per method, instead of\n"
               "the text tables"},
    {"--out FILE", "write the output to FILE instead of stdout"},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim explain SCENARIO.json [--variant NAME]... [--set "
    "KEY=VALUE]...\n"
    "                       [--set-from FILE.json] [--json] [--out FILE]\n"
    "\n"
    "Runs each method of the scenario (each variant, or its base) and cuts\n"
    "its wall time into parts that add up to it exactly: compute at nominal\n"
    "speed, straggler, exposed communication by cause (bandwidth, latency,\n"
    "tcp_ramp, startup, queue, overhead), gate_wait, down, redone, recovery,\n"
    "offload, stalled, done_wait, checkpoint, restart (every part: 'man\n"
    "dilosim').  Text: per method a table of seconds and % of the wall (a\n"
    "column per worker when they differ) and one sentence; --json: the\n"
    "same as an array.\n"
    "\n"
    "options:\n",
    23, help_opts,
    "\n"
    "exit status: 0 success (finished or not), 1 runtime failure, 2 usage or\n"
    "input error\n",
    1};

/* The methods explained, in order. */
typedef struct {
    int n, json;
    char name[SCN_MAX_VARIANTS][SCN_NAME_MAX];
    scn_config *cfg;  /* n of them */
    expl_result *res; /* n of them */
} explained;

static void write_out(FILE *f, const void *ctx) {
    const explained *e = ctx;
    if (e->json) {
        jw w;
        jw_init(&w, f);
        jw_lines(&w, NULL, '[', 2, 0);
        for (int i = 0; i < e->n; i++)
            expl_write_json(&w, NULL, e->name[i], &e->cfg[i], &e->res[i]);
        jw_end(&w);
        return;
    }
    for (int i = 0; i < e->n; i++) {
        if (i) fputc('\n', f);
        expl_write_text(f, e->name[i], &e->cfg[i], &e->res[i]);
    }
}

/* Loads and explains method i of docs; returns 0 or the exit status
 * after printing the message. */
static int explain_one(const cli_options *o, scn_doc *doc, const char *name,
                       explained *e, int i) {
    char err[CLI_ERR_MAX];
    int rc = scn_doc_load(doc, o->sets, o->nset, &e->cfg[i], err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return msg_exit_status(rc);
    }
    e->cfg[i].full = o->full;
    snprintf(e->name[i], sizeof e->name[i], "%s",
             name ? name : sched_method_name(e->cfg[i].sched.method));
    if ((rc = expl_run(&e->cfg[i], &e->res[i], err, sizeof err))) {
        fprintf(stderr, "dilosim explain: %s\n", err);
        return msg_exit_status(rc);
    }
    if (!e->res[i].run.finished)
        fprintf(stderr, "dilosim explain: %s: not finished: %s\n", e->name[i],
                e->res[i].run.stop_reason);
    return 0;
}

static int explain_all(const cli_options *o, const char **wanted, int nwanted,
                       explained *e) {
    char err[CLI_ERR_MAX];
    const char *names[SCN_MAX_VARIANTS];
    scn_doc *docs[SCN_MAX_VARIANTS];
    scn_meta *meta = malloc(sizeof *meta);
    if (!meta) return CLI_EXIT_RUNTIME;
    int n = table_docs_open(o->scenario, wanted, nwanted, names, meta, docs,
                            err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "%s\n", err);
        free(meta);
        return msg_exit_status(n);
    }
    e->n = n;
    e->cfg = calloc((size_t)n, sizeof *e->cfg);
    e->res = calloc((size_t)n, sizeof *e->res);
    int rc = e->cfg && e->res ? 0 : CLI_EXIT_RUNTIME;
    cli_progress progress;
    cli_progress_start(&progress, o->scenario);
    for (int i = 0; i < n && !rc; i++) {
        rc = explain_one(o, docs[i], names[i], e, i);
        cli_progress_count(&progress, i + 1, n);
    }
    cli_progress_end(&progress);
    table_docs_free(docs, n);
    free(meta);
    return rc;
}

int cli_explain(int argc, char **argv) {
    static const char *const extra[] = {"--variant", NULL};
    static const char *const flags[] = {"--json", NULL};
    cli_options o;
    int rc = cli_parse("explain", &help, argc, argv, extra, flags, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    const char *wanted[SCN_MAX_VARIANTS];
    int nwanted;
    if ((rc = cli_values(&o, "explain", "--variant", wanted, SCN_MAX_VARIANTS,
                         &nwanted)))
        return rc;
    static explained e; /* its names take 32 KB */
    e.json = cli_flag(&o, "--json");
    rc = explain_all(&o, wanted, nwanted, &e);
    if (!rc) rc = cli_write(&o, "explain", write_out, &e);
    free(e.cfg);
    free(e.res);
    return rc;
}
