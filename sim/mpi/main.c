/*
 * main.c -- bin/dilosim-mpi: `dilosim sweep`, `table` and `plan` with
 * their points spread over the ranks of an MPI job (sim/mpi/par.h).
 *
 * Every rank parses the same command line and runs the same command
 * (sim/cli_*.c, through cli_par); rank 0 hands out the points and writes
 * the output and the messages, the other ranks compute and are silent
 * (their stdout and stderr go to /dev/null).  The exit status is rank
 * 0's, on every rank.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/adapter/coupled.h"
#include "sim/cli/cli.h"
#include "sim/out/outfile.h"
#include "sim/base/version.h"
#include "sim/mpi/par.h"

static const char usage[] =
    "usage: mpirun [-q] -np N dilosim-mpi <command> [options]\n"
    "\n"
    "dilosim's sweep, table and plan with their simulations spread over the\n"
    "N ranks of an MPI job: the same options, and the same bytes out, as\n"
    "'dilosim <command>' (stdout and --out), whatever N is.\n"
    "\n"
    "commands:\n"
    "  sweep SCENARIO.json  a grid of scenarios, one CSV row each (--resume,\n"
    "                       --shard K/N as in dilosim)\n"
    "  table SCENARIO.json  bandwidth needed per utilization threshold\n"
    "  plan SCENARIO.json   least bandwidth, latency limit, costs per method\n"
    "  version              print the version (also --version)\n"
    "\n"
    "Rank 0 hands the points out in order, to its threads and to the ranks\n"
    "that ask (each holds a few ahead), and writes the output; the other\n"
    "ranks compute and print nothing.  --jobs N is the threads of each rank\n"
    "(default: the CPUs of its affinity mask, as mpirun binds it).\n"
    "When a rank dies, mpirun stops the others: rank 0 says so in one line\n"
    "and exits; a sweep's FILE.partial keeps the rows written, and the same\n"
    "command with --resume finishes it.  mpirun -q drops mpirun's own\n"
    "banners.\n"
    "\n"
    "Run 'dilosim-mpi <command> --help' for the options of a command.\n";

/* ---- the signal note --------------------------------------------------- */

/* What rank 0 writes when a signal stops it (mpirun sends SIGTERM to every
 * rank when one dies), and the handlers it goes on to (outfile's, which
 * remove the temporary files).  Set once before the work; the handler
 * reads them: a signal handler has no other way in. */
static char stop_note[CLI_ERR_MAX];
static size_t stop_note_len;
static struct sigaction stop_next[3];
static const int stop_signals[3] = {SIGINT, SIGTERM, SIGHUP};
/* Set once the command has returned: its outcome is told already (mpirun
 * may still stop rank 0 as the other ranks end with its status). */
static volatile sig_atomic_t stop_told;

static void on_stop(int sig) {
    if (!stop_told) {
        ssize_t n = write(STDERR_FILENO, stop_note, stop_note_len);
        (void)n;
    }
    for (int k = 0; k < 3; k++)
        if (stop_signals[k] == sig && stop_next[k].sa_handler != SIG_DFL)
            stop_next[k].sa_handler(sig); /* ends the process */
    raise(sig);                           /* SA_RESETHAND: the default action */
}

/* Sets the note for command cmd, naming the sweep's partial file when
 * there is one (NULL: none), with the stop signals blocked so that the
 * handler never reads half a note. */
static void set_stop_note(const char *cmd, const char *partial) {
    sigset_t block, old;
    sigemptyset(&block);
    for (int k = 0; k < 3; k++) sigaddset(&block, stop_signals[k]);
    sigprocmask(SIG_BLOCK, &block, &old);
    int n = snprintf(stop_note, sizeof stop_note,
                     "dilosim-mpi %s: stopped by "
                     "a signal (a rank died, or the job was stopped)%s%s%s\n",
                     cmd, partial ? "; " : "", partial ? partial : "",
                     partial ? " keeps the rows written: the same command "
                               "with --resume finishes it"
                             : "");
    if (n < 0 || (size_t)n >= sizeof stop_note) /* a long name: cut, ended */
        n = (int)sizeof stop_note - 1, stop_note[n - 1] = '\n';
    stop_note_len = (size_t)n;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Installs on_stop over outfile's handlers (an ignored signal stays
 * ignored). */
static void catch_stop(const char *cmd) {
    outfile_catch_signals();
    set_stop_note(cmd, NULL);
    for (int k = 0; k < 3; k++) {
        struct sigaction sa;
        if (sigaction(stop_signals[k], NULL, &stop_next[k]) ||
            stop_next[k].sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(stop_signals[k], &sa, NULL);
    }
}

/* ---- a sweep's rows ---------------------------------------------------- */

static int sweep_task(void *ctx, int64_t i, char **res, size_t *len, char *err,
                      size_t errlen) {
    int rc = sweep_compute(ctx, i, res, err, errlen);
    *len = *res ? strlen(*res) : 0;
    return rc;
}

static void sweep_got(void *ctx, int64_t i, char *res, size_t len, int rc,
                      const char *msg) {
    (void)len;
    sweep_deliver(ctx, i, res, rc, msg);
}

static int sweep_on_ranks(void *ctx, sweep *sw, int jobs, char *err,
                          size_t errlen) {
    if (sweep_partial(sw)) set_stop_note("sweep", sweep_partial(sw));
    par_batch b = {.compute = sweep_task,
                   .deliver = sweep_got,
                   .ctx = sw,
                   .first = sweep_kept(sw),
                   .n = sweep_count(sw),
                   .jobs = jobs};
    return par_run(ctx, &b, err, errlen);
}

/* ---- the batches of table and plan ------------------------------------- */

typedef struct {
    table_task_fn task;
    table_out_fn out;
    void *ctx;
    table_progress *pr;
    int n;
} table_job;

/* Runs task i and returns a copy of what it wrote. */
static int table_task(void *ctx, int64_t i, char **res, size_t *len, char *err,
                      size_t errlen) {
    const table_job *j = ctx;
    int rc = j->task(j->ctx, (int)i, err, errlen);
    if (rc) return rc;
    void *at;
    j->out(j->ctx, (int)i, &at, len);
    if (!(*res = malloc(*len + 1)))
        return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    memcpy(*res, at, *len);
    return MSG_OK;
}

static void table_got(void *ctx, int64_t i, char *res, size_t len, int rc,
                      const char *msg) {
    const table_job *j = ctx;
    (void)msg;
    void *at;
    size_t n;
    j->out(j->ctx, (int)i, &at, &n);
    if (!rc && res && n == len && at != res) memcpy(at, res, n);
    free(res);
    table_progress_step(j->pr);
}

static int table_pack(void *ctx, char **buf, size_t *len) {
    const table_job *j = ctx;
    void *at;
    size_t n, total = 0;
    for (int i = 0; i < j->n; i++) {
        j->out(j->ctx, i, &at, &n);
        total += n;
    }
    if (!(*buf = malloc(total + 1))) return -1;
    *len = 0;
    for (int i = 0; i < j->n; i++) {
        j->out(j->ctx, i, &at, &n);
        memcpy(*buf + *len, at, n);
        *len += n;
    }
    return 0;
}

static void table_unpack(void *ctx, const char *buf, size_t len) {
    const table_job *j = ctx;
    void *at;
    size_t n, off = 0;
    for (int i = 0; i < j->n; i++) {
        j->out(j->ctx, i, &at, &n);
        if (off + n > len) return;
        memcpy(at, buf + off, n);
        off += n;
    }
}

static int table_on_ranks(void *self, int n, int jobs, table_task_fn task,
                          table_out_fn out, void *ctx, table_progress *pr,
                          char *err, size_t errlen) {
    table_job j = {task, out, ctx, pr, n};
    par_batch b = {table_task, table_got, table_pack, table_unpack,
                   &j,         0,         n,          jobs < 1 ? 1 : jobs};
    return par_run(self, &b, err, errlen);
}

/* ---- the command line -------------------------------------------------- */

/* Runs argv[1] on this rank; its exit status. */
static int command(int argc, char **argv, par *p) {
    static const struct {
        const char *name;
        int (*fn)(int argc, char **argv, const cli_par *par);
    } commands[] = {{"sweep", cli_sweep_par},
                    {"table", cli_table_par},
                    {"plan", cli_plan_par}};
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("dilosim-mpi %s (%s)\n", DILOSIM_VERSION, version_revision());
        return CLI_EXIT_OK;
    }
    table_runner tr = {table_on_ranks, p};
    cli_par par = {sweep_on_ranks, p, &tr, par_rank(p) > 0};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(cmd, commands[i].name)) {
            if (!par.worker) catch_stop(cmd);
            return commands[i].fn(argc - 2, argv + 2, &par);
        }
    fprintf(stderr,
            "dilosim-mpi: unknown command '%s' (sweep, table and plan "
            "run over MPI; see 'dilosim-mpi --help')\n",
            cmd);
    return CLI_EXIT_INPUT;
}

int main(int argc, char **argv) {
    cpl_blas_start(); /* OpenBLAS's threads, started as it loaded: ended */
    char err[256];
    const char *sched = getenv("DILOSIM_MPI_SCHEDULE");
    par *p;
    if (par_init(&argc, &argv,
                 sched && !strcmp(sched, "static") ? PAR_STATIC : PAR_QUEUE, &p,
                 err, sizeof err)) {
        fprintf(stderr, "dilosim-mpi: %s\n", err);
        return CLI_EXIT_RUNTIME;
    }
    if (par_rank(p) > 0 && (!freopen("/dev/null", "w", stdout) ||
                            !freopen("/dev/null", "w", stderr)))
        return par_end(p, CLI_EXIT_RUNTIME);
    int status = command(argc, argv, p);
    stop_told = 1;
    /* What was lost in stdout's buffer (a full disk) is an error. */
    errno = 0;
    if ((fflush(stdout) || ferror(stdout)) && status == CLI_EXIT_OK) {
        fprintf(stderr, "dilosim-mpi%s%s: write error: %s\n",
                argc > 1 ? " " : "", argc > 1 ? argv[1] : "",
                strerror(errno ? errno : EIO));
        status = CLI_EXIT_RUNTIME;
    }
    return par_end(p, status);
}
