/*
 * ring.c -- netrig_ring: the TCP side of the network rig (bench/netrig/).
 *
 * It forks M ranks; rank i enters the network namespace PREFIX"w<i>"
 * (made by rig.sh, /run/netns/PREFIXw<i>) and owns the address BASE+i+1.
 * The ranks run a ring all-reduce of S bytes of float32 H times, with an
 * idle gap G between collectives, over TCP connections opened once (rank
 * i connects to rank i+1, accepts rank i-1; TCP_NODELAY; the namespace's
 * congestion control and tcp_slow_start_after_idle left as they are, and
 * printed).  A collective is 2(M-1) steps: M-1 of reduce-scatter (send
 * chunk (i-k) mod M to the successor while receiving chunk (i-k-1) mod M
 * from the predecessor and adding it, float by float, as its bytes
 * arrive), then M-1 of all-gather.  The result is checked element by
 * element after every collective (exact: the inputs are small integers).
 *
 * Timing.  The ranks share one process-shared pthread barrier (an
 * anonymous shared mapping made before the fork), so the barrier puts no
 * byte on the shaped links and does not touch the connections.  Each
 * collective starts when the last rank reaches the barrier: its start is
 * the earliest instant at which a rank leaves the barrier, its end the
 * instant the last rank holds the whole result, both on CLOCK_MONOTONIC
 * (one clock for every namespace of the host).  Its duration is end minus
 * start.  After a collective each rank checks its result, then sleeps
 * until G seconds after its own end (at once when the check took longer)
 * and enters the barrier again.
 *
 * The parent waits for the ranks, kills them all when one fails or on
 * SIGINT/SIGTERM/SIGHUP (each rank also dies with its parent, and on a
 * watchdog alarm), and prints a CSV to stdout: comment lines with the
 * settings and the TCP parameters, then one row per collective.
 *
 * --ping N instead runs two ranks (w0, w1): rank 0 sends N UDP datagrams
 * of 56 bytes (ping's default size) to rank 1, which echoes them; it
 * prints the round-trip times' min, median, mean and max in ms.
 *
 * usage: netrig_ring --prefix P --workers M --size BYTES [--count H] [--gap S]
 *        netrig_ring --prefix P --ping N     (see --help)
 * Exit: 0 done, 1 a runtime failure (a rank failed, a wrong result), 2 usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_MAX_WORKERS 16
#define RING_ERR 256
#define PING_BYTES 56

/* What the command line says. */
typedef struct {
    const char *prefix; /* namespace names: prefix "w" rank */
    int workers;        /* M */
    uint64_t size;      /* S, bytes, a multiple of 4 */
    int count;          /* H */
    double gap_s;       /* G */
    int port;
    double timeout_s;    /* watchdog of every process */
    int ping;            /* N probes: ping mode when > 0 */
    struct in_addr base; /* rank i has base + i + 1 */
    const char *cc;      /* TCP_CONGESTION to set, NULL: the namespace's */
    int corrupt;         /* --corrupt: rank 0 spoils its last result */
} ring_args;

/* One rank's report, in the shared mapping. */
typedef struct {
    char err[RING_ERR];
    char cc[32];               /* TCP_CONGESTION of the sending socket */
    int slow_start_after_idle; /* the namespace's sysctl, -1 unknown */
    int mss;                   /* tcpi_snd_mss of the sending socket */
    uint32_t retrans;          /* tcpi_total_retrans of the sending socket */
} ring_rank;

/* The mapping shared by the parent and the ranks. */
typedef struct {
    pthread_barrier_t barrier;
    ring_rank rank[RING_MAX_WORKERS];
    /* per collective h and rank r, at [h * M + r] */
    double *start, *end;
    uint32_t *retrans; /* the sending socket's retransmissions during h */
    double *rtt_ms;    /* ping mode: one per probe */
} ring_shared;

static volatile sig_atomic_t g_stop;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Writes a message into the rank's slot; returns -1 (for `return fail(...)`). */
static int fail(ring_rank *me, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(me->err, sizeof me->err, fmt, ap);
    va_end(ap);
    return -1;
}

static struct sockaddr_in rank_addr(const ring_args *a, int r) {
    struct sockaddr_in s;
    memset(&s, 0, sizeof s);
    s.sin_family = AF_INET;
    s.sin_port = htons((uint16_t)a->port);
    s.sin_addr.s_addr = htonl(ntohl(a->base.s_addr) + (uint32_t)r + 1);
    return s;
}

static const char *addr_str(const struct sockaddr_in *s, char *buf, size_t n) {
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
    snprintf(buf, n, "%s:%d", ip, ntohs(s->sin_port));
    return buf;
}

/* Enters the network namespace PREFIX"w"r.  Returns 0 or -1. */
static int enter_netns(const ring_args *a, int r, ring_rank *me) {
    char path[512];
    snprintf(path, sizeof path, "/run/netns/%sw%d", a->prefix, r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(me, "%s: %s", path, strerror(errno));
    int rc = setns(fd, CLONE_NEWNET);
    int e = errno;
    close(fd);
    if (rc != 0) return fail(me, "setns %s: %s", path, strerror(e));
    return 0;
}

/* Reads an integer sysctl of the current namespace; -1 when unreadable. */
static int sysctl_int(const char *path) {
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static int set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Sets --cc on a socket (nothing without it).  Returns 0 or -1. */
static int set_cc(const ring_args *a, int fd, ring_rank *me) {
    if (a->cc &&
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, a->cc, strlen(a->cc)) != 0)
        return fail(me, "--cc %s: %s", a->cc, strerror(errno));
    return 0;
}

/* A TCP socket listening on the rank's own address. */
static int listen_on(const ring_args *a, int r, ring_rank *me) {
    struct sockaddr_in s = rank_addr(a, r);
    char b[64];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) return fail(me, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (set_cc(a, fd, me) != 0) {
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&s, sizeof s) != 0 || listen(fd, 4) != 0) {
        fail(me, "listen on %s: %s", addr_str(&s, b, sizeof b),
             strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Connects to rank r (already listening), with TCP_NODELAY. */
static int connect_to(const ring_args *a, int r, ring_rank *me) {
    struct sockaddr_in s = rank_addr(a, r);
    char b[64];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) return fail(me, "socket: %s", strerror(errno));
    if (set_cc(a, fd, me) != 0) {
        close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&s, sizeof s) != 0) {
        fail(me, "connect to %s: %s", addr_str(&s, b, sizeof b),
             strerror(errno));
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static uint32_t total_retrans(int fd) {
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return 0;
    return ti.tcpi_total_retrans;
}

/* One ring step: sends slen bytes at sbuf on `out` while receiving rlen
 * bytes into rbuf from `in`.  With acc, the received bytes are floats
 * added into acc as each one completes (rbuf is scratch); without, rbuf
 * is the destination.  Returns 0, or -1 with a message. */
static int ring_step(int out, const char *sbuf, size_t slen, int in, char *rbuf,
                     size_t rlen, float *acc, ring_rank *me) {
    size_t sent = 0, got = 0, added = 0;
    while (sent < slen || got < rlen) {
        struct pollfd p[2] = {{.fd = out, .events = sent < slen ? POLLOUT : 0},
                              {.fd = in, .events = got < rlen ? POLLIN : 0}};
        if (poll(p, 2, 1000) < 0) {
            if (errno == EINTR) continue;
            return fail(me, "poll: %s", strerror(errno));
        }
        if (p[0].revents & (POLLERR | POLLHUP))
            return fail(me, "the connection to the successor broke");
        if (p[0].revents & POLLOUT) {
            ssize_t n = send(out, sbuf + sent, slen - sent, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return fail(me, "send: %s", strerror(errno));
            if (n > 0) sent += (size_t)n;
        }
        if (p[1].revents & (POLLIN | POLLERR | POLLHUP)) {
            ssize_t n = recv(in, rbuf + got, rlen - got, 0);
            if (n == 0)
                return fail(me, "the predecessor closed its connection");
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return fail(me, "recv: %s", strerror(errno));
            if (n > 0) got += (size_t)n;
            if (acc) {
                size_t full = got / sizeof(float);
                float v;
                for (; added < full; added++) {
                    memcpy(&v, rbuf + added * sizeof v, sizeof v);
                    acc[added] += v;
                }
            }
        }
    }
    return 0;
}

/* Chunk c of n floats split into M: [lo, hi). */
static void chunk(uint64_t n, int M, int c, uint64_t *lo, uint64_t *hi) {
    *lo = n * (uint64_t)c / (uint64_t)M;
    *hi = n * (uint64_t)(c + 1) / (uint64_t)M;
}

/* Rank r's input of the first collective after a refill: small integers,
 * different on every rank and along the array, so that any sum is exact
 * and a chunk reduced twice, missed or misplaced shows. */
static float input(uint64_t j, int r) {
    return (float)(j % 251 + (uint64_t)r + 1);
}

/* The sum over M ranks of input(j, .), times scale = M^k: the result of
 * the k-th collective (k = 0 the first) since a refill. */
static double expected(uint64_t j, int M, double scale) {
    return ((double)M * (double)(j % 251) + M * (M + 1) / 2.0) * scale;
}

/* The whole collective on rank r: 2(M-1) steps of a chunk to the successor. */
static int allreduce(int out, int in, float *x, float *tmp, uint64_t n, int M,
                     int r, ring_rank *me) {
    for (int k = 0; k < 2 * (M - 1); k++) {
        int rs = k < M - 1; /* reduce-scatter, else all-gather */
        int send_c = ((r - (rs ? k : k - (M - 1) - 1)) % M + M) % M;
        int recv_c = (send_c - 1 + M) % M;
        uint64_t slo, shi, rlo, rhi;
        chunk(n, M, send_c, &slo, &shi);
        chunk(n, M, recv_c, &rlo, &rhi);
        size_t sl = (size_t)(shi - slo) * sizeof(float);
        size_t rl = (size_t)(rhi - rlo) * sizeof(float);
        char *dst = rs ? (char *)tmp : (char *)(x + rlo);
        if (ring_step(out, (char *)(x + slo), sl, in, dst, rl,
                      rs ? x + rlo : NULL, me) != 0)
            return -1;
    }
    return 0;
}

static void sleep_until(double t) {
    struct timespec ts;
    double s = floor(t);
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((t - s) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
           EINTR) {
    }
}

/* Rank r of the ring all-reduce.  Returns 0, or -1 with a message. */
static int ring_rank_main(const ring_args *a, ring_shared *sh, int r) {
    ring_rank *me = &sh->rank[r];
    int M = a->workers, lfd = -1, out = -1, in = -1, one = 1;
    uint64_t n = a->size / sizeof(float);
    if (enter_netns(a, r, me) != 0) return -1;
    me->slow_start_after_idle =
        sysctl_int("/proc/sys/net/ipv4/tcp_slow_start_after_idle");
    if ((lfd = listen_on(a, r, me)) < 0) return -1;
    pthread_barrier_wait(&sh->barrier); /* every rank listens */
    if ((out = connect_to(a, (r + 1) % M, me)) < 0) return -1;
    if ((in = accept(lfd, NULL, NULL)) < 0)
        return fail(me, "accept: %s", strerror(errno));
    setsockopt(in, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    close(lfd);
    socklen_t len = sizeof me->cc - 1;
    if (getsockopt(out, IPPROTO_TCP, TCP_CONGESTION, me->cc, &len) != 0)
        snprintf(me->cc, sizeof me->cc, "unknown");
    if (set_nonblock(out) != 0 || set_nonblock(in) != 0)
        return fail(me, "fcntl: %s", strerror(errno));
    uint64_t lo, hi, big = 0;
    for (int c = 0; c < M; c++) {
        chunk(n, M, c, &lo, &hi);
        if (hi - lo > big) big = hi - lo;
    }
    float *x = malloc((size_t)n * sizeof *x),
          *tmp = malloc((size_t)(big + 1) * sizeof *tmp);
    if (!x || !tmp)
        return fail(me, "out of memory (%llu bytes)",
                    (unsigned long long)a->size);
    double scale = 1; /* M^k, k collectives since the last refill */
    for (uint64_t j = 0; j < n; j++) x[j] = input(j, r);
    for (int h = 0; h < a->count; h++) {
        uint32_t r0 = total_retrans(out);
        pthread_barrier_wait(&sh->barrier);
        sh->start[h * M + r] = now_s();
        if (allreduce(out, in, x, tmp, n, M, r, me) != 0) return -1;
        double end = now_s();
        sh->end[h * M + r] = end;
        sh->retrans[h * M + r] = total_retrans(out) - r0;
        if (a->corrupt && r == 0 && h + 1 == a->count) x[n - 1] += 1;
        for (uint64_t j = 0; j < n; j++)
            if ((double)x[j] != expected(j, M, scale))
                return fail(
                    me, "collective %d: element %llu is %.9g, expected %.9g",
                    h + 1, (unsigned long long)j, (double)x[j],
                    expected(j, M, scale));
        /* the next input is this result while the next sum stays exact */
        if (expected(250, M, scale * M) < 16777216.0) {
            scale *= M;
        } else {
            scale = 1;
            for (uint64_t j = 0; j < n; j++) x[j] = input(j, r);
        }
        if (h + 1 < a->count && a->gap_s > 0) sleep_until(end + a->gap_s);
    }
    struct tcp_info ti;
    len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(out, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
        me->mss = (int)ti.tcpi_snd_mss;
    me->retrans = total_retrans(out);
    /* no rank closes before every rank has received everything */
    pthread_barrier_wait(&sh->barrier);
    free(x);
    free(tmp);
    close(out);
    close(in);
    return 0;
}

/* Rank r of the ping: rank 1 echoes, rank 0 measures.  Returns 0 or -1. */
static int ping_rank_main(const ring_args *a, ring_shared *sh, int r) {
    ring_rank *me = &sh->rank[r];
    if (enter_netns(a, r, me) != 0) return -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(me, "socket: %s", strerror(errno));
    struct sockaddr_in self = rank_addr(a, r), peer = rank_addr(a, 1 - r);
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (bind(fd, (struct sockaddr *)&self, sizeof self) != 0)
        return fail(me, "bind: %s", strerror(errno));
    pthread_barrier_wait(&sh->barrier);
    char buf[PING_BYTES];
    memset(buf, 0x5a, sizeof buf);
    for (int i = 0; i < a->ping; i++) {
        double t0 = now_s();
        if (r == 0 && sendto(fd, buf, sizeof buf, 0, (struct sockaddr *)&peer,
                             sizeof peer) != (ssize_t)sizeof buf)
            return fail(me, "sendto: %s", strerror(errno));
        if (recv(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
            return fail(me, "probe %d: no answer: %s", i + 1, strerror(errno));
        if (r == 0) {
            sh->rtt_ms[i] = (now_s() - t0) * 1e3;
            sleep_until(now_s() + 0.01);
        } else if (sendto(fd, buf, sizeof buf, 0, (struct sockaddr *)&peer,
                          sizeof peer) != (ssize_t)sizeof buf) {
            return fail(me, "sendto: %s", strerror(errno));
        }
    }
    close(fd);
    return 0;
}

static void on_signal(int sig) {
    g_stop = sig;
}

/* Forks the ranks, waits for them; on a failure or a signal kills the rest.
 * Returns 0 when every rank exited 0. */
static int run_ranks(const ring_args *a, ring_shared *sh, int nranks) {
    pid_t pid[RING_MAX_WORKERS];
    pid_t parent = getpid();
    for (int r = 0; r < nranks; r++) {
        fflush(NULL);
        pid[r] = fork();
        if (pid[r] < 0) {
            fprintf(stderr, "netrig_ring: fork: %s\n", strerror(errno));
            for (int q = 0; q < r; q++) kill(pid[q], SIGKILL);
            for (int q = 0; q < r; q++) waitpid(pid[q], NULL, 0);
            return -1;
        }
        if (pid[r] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(1);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            signal(SIGALRM, SIG_DFL);
            alarm((unsigned)ceil(a->timeout_s));
            _exit(
                (a->ping ? ping_rank_main(a, sh, r) : ring_rank_main(a, sh, r))
                    ? 1
                    : 0);
        }
    }
    int left = nranks, bad = 0;
    alarm((unsigned)ceil(a->timeout_s) + 2);
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, 0);
        if (p < 0 && errno == EINTR) {
            if (!g_stop) continue;
            fprintf(stderr, "netrig_ring: %s, stopping the ranks\n",
                    strsignal(g_stop));
            bad = 1;
        } else if (p < 0) {
            break;
        } else {
            left--;
            int r = 0;
            while (r < nranks && pid[r] != p) r++;
            if (r < nranks) pid[r] = 0;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
            if (r < nranks && sh->rank[r].err[0])
                fprintf(stderr, "netrig_ring: rank %d: %s\n", r,
                        sh->rank[r].err);
            else if (WIFSIGNALED(st))
                fprintf(stderr, "netrig_ring: rank %d: %s%s\n", r,
                        strsignal(WTERMSIG(st)),
                        WTERMSIG(st) == SIGALRM ? " (the watchdog: --timeout)"
                                                : "");
            else fprintf(stderr, "netrig_ring: rank %d failed\n", r);
            bad = 1;
        }
        if (bad) {
            for (int q = 0; q < nranks; q++)
                if (pid[q] > 0) kill(pid[q], SIGKILL);
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
            }
            break;
        }
    }
    alarm(0);
    return bad ? -1 : 0;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void print_ping(const ring_args *a, const ring_shared *sh) {
    double *v = sh->rtt_ms, sum = 0;
    int n = a->ping;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int i = 0; i < n; i++) sum += v[i];
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("# netrig ping: %d UDP probes of %d bytes, %sw0 to %sw1 and back\n",
           n, PING_BYTES, a->prefix, a->prefix);
    printf("rtt_min_ms,rtt_median_ms,rtt_mean_ms,rtt_max_ms\n");
    printf("%.4f,%.4f,%.4f,%.4f\n", v[0], med, sum / n, v[n - 1]);
}

static void print_ring(const ring_args *a, const ring_shared *sh) {
    int M = a->workers;
    const ring_rank *r0 = &sh->rank[0];
    printf("# netrig ring all-reduce: workers %d, size %llu bytes (float32), "
           "collectives %d, gap %g s\n",
           M, (unsigned long long)a->size, a->count, a->gap_s);
    printf("# tcp_congestion_control %s, tcp_slow_start_after_idle %d, mss %d "
           "bytes, "
           "retransmissions %u\n",
           r0->cc, r0->slow_start_after_idle, r0->mss, r0->retrans);
    for (int r = 1; r < M; r++)
        if (strcmp(sh->rank[r].cc, r0->cc) || sh->rank[r].mss != r0->mss)
            printf("# rank %d differs: %s, mss %d\n", r, sh->rank[r].cc,
                   sh->rank[r].mss);
    printf("# start_s: from the first collective's start; duration_s: the last "
           "rank's end "
           "minus the first rank's release from the barrier\n");
    printf("# every result checked element by element: all correct\n");
    printf("collective,start_s,duration_s,release_skew_s,retransmissions\n");
    double t0 = INFINITY;
    for (int r = 0; r < M; r++) t0 = fmin(t0, sh->start[r]);
    for (int h = 0; h < a->count; h++) {
        double s0 = INFINITY, s1 = -INFINITY, e1 = -INFINITY;
        uint32_t re = 0;
        for (int r = 0; r < M; r++) {
            s0 = fmin(s0, sh->start[h * M + r]);
            s1 = fmax(s1, sh->start[h * M + r]);
            e1 = fmax(e1, sh->end[h * M + r]);
            re += sh->retrans[h * M + r];
        }
        printf("%d,%.6f,%.6f,%.6f,%u\n", h + 1, s0 - t0, e1 - s0, s1 - s0, re);
    }
}

static void usage(FILE *f) {
    fputs("usage: netrig_ring --prefix P --workers M --size BYTES [options]\n"
          "       netrig_ring --prefix P --ping N [options]\n"
          "The rig's ring all-reduce over TCP between M ranks, rank i in the "
          "network\n"
          "namespace Pw<i> (made by bench/netrig/rig.sh) at the address "
          "BASE+i+1.\n"
          "Prints a CSV: comment lines (settings, congestion control, MSS), "
          "then one row\n"
          "per collective: "
          "collective,start_s,duration_s,release_skew_s,retransmissions.\n"
          "Every result is checked; a wrong one fails the run (exit 1).  A "
          "collective\n"
          "starts when the last rank reaches a shared barrier (duration: the "
          "last rank's\n"
          "end minus the first rank's release from it).\n"
          "  --prefix P      namespace name prefix (required)\n"
          "  --workers M     ranks, 2..16\n"
          "  --size BYTES    all-reduce size, a multiple of 4*M (float32)\n"
          "  --count H       collectives (default 4)\n"
          "  --gap S         idle seconds between collectives (default 0)\n"
          "  --ping N        instead: N UDP round trips w0 -> w1 (56 bytes "
          "each)\n"
          "  --base IP       address base (default 198.18.0.0: rank i is "
          "base+i+1)\n"
          "  --port N        TCP/UDP port (default 5201)\n"
          "  --timeout S     watchdog of every process, seconds (default 600)\n"
          "  --cc NAME       congestion control of the sockets (default: the "
          "namespace's)\n"
          "  --corrupt       rank 0 adds 1 to its last element after the last "
          "collective,\n"
          "                  before the check (which must then fail: for the "
          "tests)\n"
          "  -h, --help      this help\n"
          "Exit status: 0 done, 1 a runtime failure, 2 a usage error.\n",
          f);
}

/* The numeric options: letter, name, range, an integer or not, default;
 * indexed by the enum. */
enum { O_WORKERS, O_SIZE, O_COUNT, O_GAP, O_PING, O_PORT, O_TIMEOUT };
static const struct {
    int c;
    const char *name;
    double lo, hi;
    int integer;
    double dflt;
} NUM_OPTS[] = {{'M', "workers", 2, RING_MAX_WORKERS, 1, 0},
                {'S', "size", 4, 4e9, 1, 0},
                {'H', "count", 1, 100000, 1, 4},
                {'G', "gap", 0, 3600, 0, 0},
                {'p', "ping", 1, 100000, 1, 0},
                {'o', "port", 1, 65535, 1, 5201},
                {'t', "timeout", 1, 86400, 0, 600}};
#define NUM_OPTS_N (sizeof NUM_OPTS / sizeof NUM_OPTS[0])

/* Parses numeric option k's value into *v; returns 0 or prints a one-line error. */
static int num_opt(size_t k, const char *s, double *v) {
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(*v) || *v < NUM_OPTS[k].lo ||
        *v > NUM_OPTS[k].hi || (NUM_OPTS[k].integer && *v != floor(*v))) {
        fprintf(stderr, "netrig_ring: --%s: '%s' is not %s in [%g, %g]\n",
                NUM_OPTS[k].name, s,
                NUM_OPTS[k].integer ? "an integer" : "a number", NUM_OPTS[k].lo,
                NUM_OPTS[k].hi);
        return -1;
    }
    return 0;
}

/* Fills a from argv; returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, ring_args *a) {
    static const struct option opts[] = {{"prefix", required_argument, 0, 'P'},
                                         {"workers", required_argument, 0, 'M'},
                                         {"size", required_argument, 0, 'S'},
                                         {"count", required_argument, 0, 'H'},
                                         {"gap", required_argument, 0, 'G'},
                                         {"ping", required_argument, 0, 'p'},
                                         {"base", required_argument, 0, 'b'},
                                         {"port", required_argument, 0, 'o'},
                                         {"timeout", required_argument, 0, 't'},
                                         {"cc", required_argument, 0, 'c'},
                                         {"corrupt", no_argument, 0, 'x'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double v[NUM_OPTS_N];
    for (size_t k = 0; k < NUM_OPTS_N; k++) v[k] = NUM_OPTS[k].dflt;
    *a = (ring_args){0};
    inet_pton(AF_INET, "198.18.0.0", &a->base);
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        size_t k = 0;
        while (k < NUM_OPTS_N && NUM_OPTS[k].c != c) k++;
        if (k < NUM_OPTS_N) {
            if (num_opt(k, optarg, &v[k]) != 0) return 2;
            continue;
        }
        switch (c) {
        case 'P': a->prefix = optarg; break;
        case 'b':
            if (inet_pton(AF_INET, optarg, &a->base) != 1) {
                fprintf(stderr,
                        "netrig_ring: --base: '%s' is not an IPv4 address\n",
                        optarg);
                return 2;
            }
            break;
        case 'c': a->cc = optarg; break;
        case 'x': a->corrupt = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr,
                    "netrig_ring: unknown option or missing value: %s\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    a->workers = (int)v[O_WORKERS];
    a->size = (uint64_t)v[O_SIZE];
    a->count = (int)v[O_COUNT];
    a->gap_s = v[O_GAP];
    a->ping = (int)v[O_PING];
    a->port = (int)v[O_PORT];
    a->timeout_s = v[O_TIMEOUT];
    if (optind < argc) {
        fprintf(stderr, "netrig_ring: unexpected argument '%s'\n",
                argv[optind]);
        return 2;
    }
    if (!a->prefix || strchr(a->prefix, '/')) {
        fprintf(stderr,
                "netrig_ring: --prefix P is required (a name without '/')\n");
        return 2;
    }
    if (a->ping) {
        a->workers = 2;
        return -1;
    }
    if (!a->workers || !a->size) {
        fprintf(stderr, "netrig_ring: --workers and --size are required\n");
        return 2;
    }
    if (a->size % (4 * (uint64_t)a->workers)) {
        fprintf(stderr,
                "netrig_ring: --size %llu is not a multiple of 4*M = %d\n",
                (unsigned long long)a->size, 4 * a->workers);
        return 2;
    }
    return -1;
}

/* A shared anonymous mapping of n bytes, or NULL. */
static void *shared_alloc(size_t n) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv) {
    ring_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0) return rc;
    int M = a.workers, H = a.ping ? 1 : a.count;
    size_t per = (size_t)H * (size_t)M;
    ring_shared *sh = shared_alloc(sizeof *sh);
    double *times = shared_alloc(2 * per * sizeof(double) +
                                 (size_t)a.ping * sizeof(double));
    uint32_t *re = shared_alloc(per * sizeof(uint32_t));
    if (!sh || !times || !re) {
        fprintf(stderr, "netrig_ring: mmap: %s\n", strerror(errno));
        return 1;
    }
    sh->start = times;
    sh->end = times + per;
    sh->rtt_ms = times + 2 * per;
    sh->retrans = re;
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    if (pthread_barrier_init(&sh->barrier, &ba, (unsigned)M) != 0) {
        fprintf(stderr, "netrig_ring: pthread_barrier_init failed\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: waitpid returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    if (run_ranks(&a, sh, M) != 0)
        return g_stop && g_stop != SIGALRM ? 128 + g_stop : 1;
    if (a.ping) print_ping(&a, sh);
    else print_ring(&a, sh);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "netrig_ring: write error: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
