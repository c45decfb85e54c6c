/*
 * cli_live.c -- the interactive page of `dilosim report` (cli_live.h):
 * finds and reads the engine module, writes the static page into memory
 * and the page with its live panel (html_live.h) to the output.
 */
#include "sim/cli/cli_live.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/config/scenario.h"
#include "sim/study/html_live.h"

#define MODULE_MAX (64L << 20) /* the module, at most (it is ~0.5 MB) */
#define DEFAULT_MODULE "/../build/wasm/dilosim-engine.js"

/* The whole file at path (at most max bytes) into *text, *len.  Returns
 * 0, ENOENT when it does not exist, or another errno. */
static int read_all(const char *path, long max, char **text, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return errno ? errno : EIO;
    char *buf = malloc((size_t)max + 1);
    size_t n = buf ? fread(buf, 1, (size_t)max + 1, f) : 0;
    int rc = !buf ? ENOMEM : ferror(f) ? EIO : n > (size_t)max ? EFBIG : 0;
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

/* The module's path: --wasm, $DILOSIM_WASM, or beside the program. */
static const char *module_path(const cli_options *o, char *buf, size_t n) {
    const char *v = cli_value(o, "--wasm");
    if (v) return v;
    if ((v = getenv("DILOSIM_WASM")) && *v) return v;
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return "build/wasm/dilosim-engine.js";
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(buf, n, "%s%s", exe, DEFAULT_MODULE);
    return buf;
}

typedef struct {
    const char *page; /* the static page */
    size_t len;
    html_live_spec spec;
} live_page;

static void write_live(FILE *f, const void *ctx) {
    const live_page *p = ctx;
    html_live_write(f, p->page, p->len, &p->spec);
}

/* The static page, written into memory: 0 or ENOMEM. */
static int static_page(void (*write_static)(FILE *f, const void *ctx),
                       const void *ctx, char **page, size_t *len) {
    FILE *m = open_memstream(page, len);
    if (!m) return ENOMEM;
    write_static(m, ctx);
    if (!fclose(m)) return 0;
    free(*page);
    *page = NULL;
    return ENOMEM;
}

int cli_live_write(const cli_options *o, const char *scenario, const char *grid,
                   double target,
                   void (*write_static)(FILE *f, const void *ctx),
                   const void *ctx) {
    char buf[PATH_MAX + 64], err[CLI_ERR_MAX];
    const char *path = module_path(o, buf, sizeof buf);
    char *module = NULL, *text = NULL, *page = NULL;
    size_t mlen, tlen, plen;
    int e = read_all(path, MODULE_MAX, &module, &mlen);
    if (e == ENOENT) {
        fprintf(stderr,
                "dilosim report: no engine module at %s (build it with "
                "'make wasm'): the static page is written\n",
                path);
        return cli_write(o, "report", write_static, ctx);
    }
    int rc = 0;
    if (e) {
        fprintf(stderr, "dilosim report: %s: %s\n", path, strerror(e));
        rc = CLI_EXIT_RUNTIME;
    } else if (html_live_check(module, mlen, err, sizeof err)) {
        fprintf(stderr, "dilosim report: %s: %s\n", path, err);
        rc = CLI_EXIT_RUNTIME;
    } else if ((e = read_all(scenario, SCN_MAX_BYTES, &text, &tlen))) {
        fprintf(stderr, "dilosim report: %s: %s\n", scenario, strerror(e));
        rc = CLI_EXIT_RUNTIME;
    } else if (static_page(write_static, ctx, &page, &plen)) {
        fprintf(stderr, "dilosim report: out of memory\n");
        rc = CLI_EXIT_RUNTIME;
    }
    if (!rc) {
        live_page p = {page, plen, {scenario, text, module, grid, target}};
        rc = cli_write(o, "report", write_live, &p);
    }
    free(page);
    free(module);
    free(text);
    return rc;
}
