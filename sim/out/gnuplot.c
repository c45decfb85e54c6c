/*
 * gnuplot.c -- line figures as SVG: the gnuplot program of a figure, and
 * gnuplot run as a child process with pipes (no file written).
 *
 * The child's standard input is one end of a socket pair, written with
 * send(MSG_NOSIGNAL): a gnuplot that dies early is an EPIPE to report,
 * not a SIGPIPE that kills the process.  Its standard output and error
 * are pipes; one poll loop feeds the program and drains both, so neither
 * side can block the other however large the program or the SVG.
 */
#include "sim/out/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/base/msg.h"

extern char **environ;

/* One colour per method, the same as plots/palette.gp's (Okabe and Ito's
 * set); curves without a colour take them in turn (then other dash
 * types). */
static const struct {
    const char *key, *color;
} palette[] = {{"dp", "#d55e00"},
               {"diloco", "#0072b2"},
               {"streaming", "#009e73"},
               {"streaming_overlap", "#cc79a7"},
               {"streaming_overlap_fp4", "#e69f00"},
               {"outer", "#882255"},
               {"eager", "#56b4e9"},
               {"fedpart", "#999999"},
               {"sparta", "#332288"}};
#define NCOLORS ((int)(sizeof palette / sizeof *palette))

const char *gnuplot_method_color(const char *key) {
    for (int i = 0; key && i < NCOLORS; i++)
        if (!strcmp(palette[i].key, key)) return palette[i].color;
    return NULL;
}

void gnuplot_quote(FILE *f, const char *s) {
    fputc('\'', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'') fputs("''", f);
        else fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('\'', f);
}

static int point_ok(const gnuplot_figure *fig, double x, double y) {
    return isfinite(x) && isfinite(y) && (!fig->logx || x > 0);
}

static int curve_points(const gnuplot_figure *fig, const gnuplot_curve *c) {
    int n = 0;
    for (int i = 0; i < c->n; i++) n += point_ok(fig, c->x[i], c->y[i]);
    return n;
}

static void range(FILE *f, const char *axis, double lo, double hi) {
    fprintf(f, "set %srange [", axis);
    if (isfinite(lo)) fprintf(f, "%.17g", lo);
    else fputc('*', f);
    fputc(':', f);
    if (isfinite(hi)) fprintf(f, "%.17g", hi);
    else fputc('*', f);
    fputs("]\n", f);
}

static void label(FILE *f, const char *what, const char *text) {
    if (!text) return;
    fprintf(f, "set %s ", what);
    gnuplot_quote(f, text);
    fputc('\n', f);
}

void gnuplot_script(FILE *f, const gnuplot_figure *fig) {
    int w = fig->width > 0 ? fig->width : 900;
    int h = fig->height > 0 ? fig->height : 480;
    fputs("set encoding utf8\n", f);
    fprintf(f,
            "set terminal svg size %d,%d noenhanced font 'sans,11' "
            "background '#ffffff'\nset output\n",
            w, h);
    int any = 0;
    for (int k = 0; k < fig->ncurves; k++) {
        const gnuplot_curve *c = &fig->curve[k];
        if (!curve_points(fig, c)) continue;
        any = 1;
        fprintf(f, "$d%d << EOD\n", k);
        for (int i = 0; i < c->n; i++)
            if (point_ok(fig, c->x[i], c->y[i]))
                fprintf(f, "%.17g %.17g\n", c->x[i], c->y[i]);
        fputs("EOD\n", f);
    }
    label(f, "title", fig->title);
    label(f, "xlabel", fig->xlabel);
    label(f, "ylabel", fig->ylabel);
    if (fig->logx) fputs("set logscale x 10\nset format x '%g'\n", f);
    if (any) {
        range(f, "x", fig->xmin, fig->xmax);
        range(f, "y", fig->ymin, fig->ymax);
    } else { /* nothing to draw: empty axes rather than an error */
        range(f, "x", fig->logx ? 1 : 0, fig->logx ? 10 : 1);
        range(f, "y", 0, 1);
    }
    fputs("set grid xtics ytics mxtics lt 1 lc rgb '#dddddd'\n", f);
    fprintf(f, "set key %s\n",
            fig->key ? fig->key : "outside below horizontal");
    if (!any) {
        fputs("plot NaN notitle\n", f);
        return;
    }
    const char *sep = "plot ";
    for (int k = 0; k < fig->ncurves; k++) {
        const gnuplot_curve *c = &fig->curve[k];
        if (!curve_points(fig, c)) continue;
        fprintf(f, "%s$d%d using 1:2 ", sep, k);
        if (c->dashed) {
            fputs("with lines lw 1.5 dt 2 lc rgb '#555555' ", f);
        } else {
            const gnuplot_style *st = fig->style ? &fig->style[k] : NULL;
            fprintf(f, "with linespoints lw 2 pt 7 ps 0.5 dt %d lc rgb '%s' ",
                    st && st->dash > 0 ? st->dash : 1 + k / NCOLORS,
                    st && st->color ? st->color : palette[k % NCOLORS].color);
        }
        if (c->title) {
            fputs("title ", f);
            gnuplot_quote(f, c->title);
        } else {
            fputs("notitle", f);
        }
        sep = ", \\\n     ";
    }
    fputc('\n', f);
}

/* ---- running gnuplot ---------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
} buf;

static int buf_read(buf *b, int fd, size_t max) {
    if (b->cap - b->n < 4097) {
        size_t cap = b->cap ? 2 * b->cap : 65536;
        if (cap > max + 4097) cap = max + 4097;
        if (cap - b->n < 4097) return MSG_EIO; /* over the limit */
        char *p = realloc(b->p, cap);
        if (!p) return MSG_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    ssize_t r = read(fd, b->p + b->n, b->cap - b->n - 1);
    if (r < 0) return errno == EINTR || errno == EAGAIN ? 1 : MSG_EIO;
    if (r == 0) return 0;
    b->n += (size_t)r;
    b->p[b->n] = 0;
    return 1;
}

/* The last non-blank line of gnuplot's messages, trimmed, into out. */
static void last_line(const buf *e, char *out, size_t n) {
    out[0] = 0;
    if (!e->p) return;
    const char *s = e->p, *end = s + e->n;
    while (end > s && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
        end--;
    const char *start = end;
    while (start > s && start[-1] != '\n') start--;
    while (start < end && (*start == ' ' || *start == '\t')) start++;
    snprintf(out, n, "%.*s",
             (int)(end - start) > 400 ? 400 : (int)(end - start), start);
}

static void close_all(int *fd, int n) {
    for (int i = 0; i < n; i++)
        if (fd[i] >= 0) {
            close(fd[i]);
            fd[i] = -1;
        }
}

/* Feeds script to fd[1] (the socket) and drains fd[2] (stdout) into out,
 * fd[3] (stderr) into e, until both end. */
static int exchange(int *fd, const char *script, size_t len, buf *out, buf *e,
                    char *err, size_t errlen) {
    size_t sent = 0;
    int open_out = 1, open_err = 1;
    if (!len) {
        close(fd[1]);
        fd[1] = -1;
    }
    while (open_out || open_err) {
        struct pollfd p[3] = {{fd[2], POLLIN, 0},
                              {fd[3], POLLIN, 0},
                              {fd[1], POLLOUT, 0}};
        p[0].fd = open_out ? fd[2] : -1;
        p[1].fd = open_err ? fd[3] : -1;
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR) continue;
            return msg_set(err, errlen, MSG_EIO, "gnuplot: poll: %s",
                           strerror(errno));
        }
        if (fd[1] >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = send(fd[1], script + sent, len - sent, MSG_NOSIGNAL);
            if (w > 0) sent += (size_t)w;
            if ((w < 0 && errno != EINTR && errno != EAGAIN) || sent == len) {
                close(fd[1]); /* EOF: gnuplot ends after the program */
                fd[1] = -1;
            }
        }
        if (p[0].revents) {
            int r = buf_read(out, fd[2], GNUPLOT_MAX_OUTPUT);
            if (r < 0)
                return msg_set(err, errlen, r, "gnuplot: %s",
                               r == MSG_ENOMEM ? "out of memory"
                                               : "output too large or "
                                                 "unreadable");
            open_out = r > 0;
        }
        if (p[1].revents) {
            int r = buf_read(e, fd[3], 1 << 20);
            if (r == MSG_ENOMEM)
                return msg_set(err, errlen, r, "gnuplot: out of memory");
            if (r == MSG_EIO && e->n) e->n = 0; /* many messages: the last */
            else open_err = r > 0;
        }
    }
    return 0;
}

static int spawn(pid_t *pid, int *fd, char *err, size_t errlen) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa))
        return msg_set(err, errlen, MSG_ENOMEM, "gnuplot: out of memory");
    posix_spawn_file_actions_adddup2(&fa, fd[0], 0);
    posix_spawn_file_actions_adddup2(&fa, fd[4], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[5], 2);
    char *argv[] = {"gnuplot", NULL};
    int rc = posix_spawnp(pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == ENOENT)
        return msg_set(err, errlen, MSG_EFAIL,
                       "gnuplot: not found on PATH "
                       "(the report draws its figures with it: install "
                       "gnuplot, e.g. the gnuplot-nox package)");
    if (rc)
        return msg_set(err, errlen, MSG_EFAIL, "gnuplot: cannot run it: %s",
                       strerror(rc));
    return 0;
}

int gnuplot_run(const char *script, size_t len, char **out, size_t *outlen,
                char *err, size_t errlen) {
    /* fd: 0 child's stdin, 1 ours (socket pair); 2, 4 stdout pipe (read,
     * write); 3, 5 stderr pipe (read, write) */
    int fd[6] = {-1, -1, -1, -1, -1, -1}, sv[2], po[2], pe[2];
    *out = NULL;
    *outlen = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return msg_set(err, errlen, MSG_EIO, "gnuplot: socketpair: %s",
                       strerror(errno));
    fd[0] = sv[0];
    fd[1] = sv[1];
    if (pipe(po) || (fd[2] = po[0], fd[4] = po[1], pipe(pe))) {
        int e = errno;
        close_all(fd, 6);
        return msg_set(err, errlen, MSG_EIO, "gnuplot: pipe: %s", strerror(e));
    }
    fd[3] = pe[0];
    fd[5] = pe[1];
    for (int i = 0; i < 6; i++) fcntl(fd[i], F_SETFD, FD_CLOEXEC);
    pid_t pid;
    int rc = spawn(&pid, fd, err, errlen);
    close(fd[0]);
    close(fd[4]);
    close(fd[5]);
    fd[0] = fd[4] = fd[5] = -1;
    if (rc) {
        close_all(fd, 6);
        return rc;
    }
    buf o = {0}, e = {0};
    rc = exchange(fd, script, len, &o, &e, err, errlen);
    close_all(fd, 6);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        char line[512];
        last_line(&e, line, sizeof line);
        if (WIFEXITED(status))
            rc = msg_set(err, errlen, MSG_EFAIL,
                         "gnuplot: failed (exit "
                         "status %d)%s%s",
                         WEXITSTATUS(status), *line ? ": " : "", line);
        else
            rc = msg_set(err, errlen, MSG_EFAIL,
                         "gnuplot: killed by signal "
                         "%d",
                         WTERMSIG(status));
    }
    free(e.p);
    if (rc) {
        free(o.p);
        return rc;
    }
    if (!o.p && !(o.p = calloc(1, 1)))
        return msg_set(err, errlen, MSG_ENOMEM, "gnuplot: out of memory");
    *out = o.p;
    *outlen = o.n;
    return 0;
}

int gnuplot_check(char *err, size_t errlen) {
    static const char probe[] = "set terminal svg\nexit\n";
    char *out;
    size_t n;
    int rc = gnuplot_run(probe, sizeof probe - 1, &out, &n, err, errlen);
    free(out);
    return rc;
}

int gnuplot_svg(const gnuplot_figure *fig, char **svg, char *err,
                size_t errlen) {
    char *script = NULL;
    size_t len = 0;
    *svg = NULL;
    FILE *f = open_memstream(&script, &len);
    if (!f) return msg_set(err, errlen, MSG_ENOMEM, "gnuplot: out of memory");
    gnuplot_script(f, fig);
    if (fclose(f) || !script) {
        free(script);
        return msg_set(err, errlen, MSG_ENOMEM, "gnuplot: out of memory");
    }
    size_t n;
    int rc = gnuplot_run(script, len, svg, &n, err, errlen);
    free(script);
    return rc;
}
