/*
 * cli_merge.c -- `dilosim merge`: the shards of a sweep joined into the
 * file the whole sweep writes (the work is sweepfile_merge's; see
 * sim/study/sweepfile.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/study/sweepfile.h"

static const cli_help_opt help_opts[] = {
    {"--out FILE", "write to FILE (whole or not at all) instead of stdout"},
    {"--quiet", "no progress line (merge shows none)"},
    {"--progress", "accepted for symmetry with the other commands"},
    {"-h, --help", CLI_HELP_COMMON},
    {NULL, NULL}};

static const cli_help help = {
    "usage: dilosim merge PART... [--out FILE]\n"
    "\n"
    "Joins the shards of a sweep (each written by 'dilosim sweep ...\n"
    "--shard K/N --out PART') into the file the whole sweep writes, byte\n"
    "for byte: its digest line (with the version of shard 1's line), the\n"
    "header, then every row in point order.  To stdout (no --out) it writes\n"
    "what the sweep writes there: the header and the rows.\n"
    "\n"
    "The parts, in any order, must be shards 1..N of one N of one sweep\n"
    "(the same digest: the same scenario, variants, overrides and grid),\n"
    "each once and complete.  Otherwise nothing is written, and one line\n"
    "names the file and what is wrong (another sweep, another N, a shard\n"
    "given twice or missing, an incomplete shard: finish it with\n"
    "'dilosim sweep ... --shard K/N --out PART --resume').\n"
    "\n"
    "options:\n",
    15, help_opts,
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage or input error\n",
    0};

int cli_merge(int argc, char **argv) {
    static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"progress", no_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    /* getopt wants the program's name first: argv[-1] is the command's. */
    int gargc = argc + 1;
    char **gargv = argv - 1;
    optind = 0;
    opterr = 0;
    for (int c; (c = getopt_long(gargc, gargv, ":h", opts, NULL)) != -1;) {
        const char *a = gargv[optind - 1];
        if (c == 'h') {
            cli_help_print(stdout, &help);
            return CLI_EXIT_OK;
        }
        if (c == 'o') out = optarg;
        else if (c == ':')
            return cli_usage_error("merge", "%s needs a value", a);
        else if (c == '?' && optopt > 0 && optopt < 256)
            return cli_usage_error("merge", "unknown option '-%c'", optopt);
        else if (c == '?')
            return cli_usage_error("merge",
                                   "unknown or ambiguous option "
                                   "'%s'",
                                   a);
    }
    int nparts = gargc - optind;
    if (nparts < 1) return cli_usage_error("merge", "no parts given");
    char err[CLI_ERR_MAX];
    int rc = sweepfile_merge((const char *const *)gargv + optind, nparts, out,
                             err, sizeof err);
    if (rc == MSG_EINPUT) fprintf(stderr, "%s\n", err);
    else if (rc) fprintf(stderr, "dilosim merge: %s\n", err);
    return msg_exit_status(rc);
}
