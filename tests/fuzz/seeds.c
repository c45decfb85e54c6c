/*
 * seeds.c -- writes the seed corpus of the scenario targets (fuzz_scenario,
 * fuzz_run) from the shipped scenario files, in the input format of
 * fuzz_scenario.c: document \0 variant \0 override ...
 *
 * usage: seeds OUTDIR FILE.json...
 *
 * For each file it writes OUTDIR/<name>.base (the document alone), one
 * OUTDIR/<name>.<variant> per variant (the variant names come from
 * scn_meta_load), and OUTDIR/<name>.set with a few overrides.  A file
 * that scn_meta_load rejects still gives its .base seed.  Exit 0, or 1
 * when a file cannot be read or a seed cannot be written.
 */
#include "sim/config/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes doc, then each of the n extra parts after a NUL, to dir/name.tag. */
static int put(const char *dir, const char *name, const char *tag,
               const char *doc, size_t len, const char *const *extra, int n) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, tag);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "seeds: %s: cannot write\n", path);
        return -1;
    }
    fwrite(doc, 1, len, f);
    for (int i = 0; i < n; i++) {
        fputc('\0', f);
        fputs(extra[i], f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: seeds OUTDIR FILE.json...\n");
        return 2;
    }
    static scn_meta meta;
    int bad = 0;
    for (int a = 2; a < argc; a++) {
        size_t len;
        char *doc = slurp(argv[a], &len), name[256], err[512];
        if (!doc) {
            fprintf(stderr, "seeds: %s: cannot read\n", argv[a]);
            bad = 1;
            continue;
        }
        const char *base = strrchr(argv[a], '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : argv[a]);
        char *dot = strrchr(name, '.');
        if (dot) *dot = '\0';
        const char *sets[] = {"", "steps=3", "network.bandwidth_gbps=1",
                              "method.name=dp"};
        bad |= put(argv[1], name, "base", doc, len, NULL, 0) != 0;
        bad |= put(argv[1], name, "set", doc, len, sets, 4) != 0;
        if (scn_meta_load(argv[a], &meta, err, sizeof err) == 0)
            for (int v = 0; v < meta.nvariants; v++) {
                const char *extra[] = {meta.variant[v], "steps=5"};
                bad |= put(argv[1], name, meta.variant[v], doc, len, extra,
                           v % 2 ? 2 : 1) != 0;
            }
        free(doc);
    }
    return bad;
}
