/*
 * cli_setfrom.c -- --set-from FILE.json, which every scenario command
 * takes: the file's overrides (setfile.h) go first in the command's
 * --set list, so an explicit --set of the same key wins, and are checked
 * at once against each scenario argument, in the variants the command
 * loads, so that a value the loader rejects is reported at its place in
 * FILE.json rather than as a --set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/msg.h"
#include "sim/cli/cli.h"
#include "sim/config/scenario_train.h"
#include "sim/config/setfile.h"

/* The command line's one file of overrides: read by cli_parse, freed by
 * cli_set_from_free as the program ends (a command's options point into
 * it until then). */
static setfile loaded;

void cli_set_from_free(void) {
    setfile_free(&loaded);
}

/* The name of the loaded file in messages. */
static const char *loaded_name(void) {
    return strcmp(loaded.path, "-") ? loaded.path : "<stdin>";
}

/* Loads file (variant NULL: the base) with o's overrides, their origins
 * in from.  Returns 0 (also when the load fails for another reason than
 * one of the file's values: the command reports that in its own words,
 * or not at all when it loads only some variants), or CLI_EXIT_INPUT
 * after printing the message about one of the file's values. */
static int check_one(const char *file, const char *variant,
                     const cli_options *o, const scn_origin *from) {
    char err[CLI_ERR_MAX];
    scn_doc *doc;
    if (scn_doc_open(file, variant, NULL, 0, &doc, err, sizeof err)) return 0;
    scn_config *cfg = malloc(sizeof *cfg);
    scn_train *train = malloc(sizeof *train);
    size_t n = strlen(loaded_name());
    int rc = 0;
    if (cfg && train &&
        scn_doc_load_train_from(doc, o->sets, from, o->nset, cfg, train, err,
                                sizeof err) &&
        !strncmp(err, loaded_name(), n) && err[n] == ':') {
        fprintf(stderr, "%s\n", err);
        rc = CLI_EXIT_INPUT;
    }
    free(cfg);
    free(train);
    scn_doc_free(doc);
    return rc;
}

/* check_one for the variants the command loads from each scenario: those
 * of --variant; without, the base, and with `every` each variant too.
 * The scenarios are the arguments, or the one of --scenario for a command
 * whose arguments are other files (calibrate's measurements); standard
 * input cannot be read twice: not checked. */
static int check_all(const cli_options *o, int every) {
    scn_origin from[CLI_MAX_SETS];
    for (int i = 0; i < o->nset; i++) {
        from[i] = (scn_origin){.sweep = -1, .item = -1};
        if (i < loaded.nset)
            from[i] = (scn_origin){.sweep = -1,
                                   .item = -1,
                                   .file = loaded_name(),
                                   .text = loaded.text,
                                   .key_off = loaded.key_off[i],
                                   .val_off = loaded.val_off[i]};
    }
    const char *named[CLI_MAX_EXTRA];
    int nnamed = 0, rc = 0;
    for (int i = 0; i < o->nextra; i++)
        if (!strcmp(o->extra_name[i], "--variant"))
            named[nnamed++] = o->extra_value[i];
    char err[CLI_ERR_MAX];
    scn_meta *meta = malloc(sizeof *meta);
    if (!meta) return CLI_EXIT_RUNTIME;
    const char *scenario = cli_value(o, "--scenario");
    const char *const *files = scenario ? &scenario : o->files;
    int nfiles = scenario ? 1 : o->nfiles;
    for (int f = 0; !rc && f < nfiles; f++) {
        if (!strcmp(files[f], "-")) continue;
        for (int v = 0; !rc && v < nnamed; v++)
            rc = check_one(files[f], named[v], o, from);
        if (nnamed) continue;
        rc = check_one(files[f], NULL, o, from);
        if (!every || scn_meta_load(files[f], meta, err, sizeof err)) continue;
        for (int v = 0; !rc && v < meta->nvariants; v++)
            rc = check_one(files[f], meta->variant[v], o, from);
    }
    free(meta);
    return rc;
}

int cli__set_from(const char *cmd, const char *path, cli_options *o) {
    char err[CLI_ERR_MAX];
    setfile_free(&loaded);
    if (setfile_load(path, &loaded, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return CLI_EXIT_INPUT;
    }
    if (o->nset + loaded.nset > CLI_MAX_SETS)
        return cli_usage_error(cmd, "more than %d overrides with %s",
                               CLI_MAX_SETS, path);
    memmove(o->sets + loaded.nset, o->sets, (size_t)o->nset * sizeof *o->sets);
    for (int i = 0; i < loaded.nset; i++) o->sets[i] = loaded.sets[i];
    o->nset += loaded.nset;
    o->set_from = &loaded;
    /* run, train and calibrate load the base without --variant; the
       others every variant */
    return check_all(o, strcmp(cmd, "run") && strcmp(cmd, "train") &&
                            strcmp(cmd, "calibrate"));
}
