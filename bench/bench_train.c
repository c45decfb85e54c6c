/*
 * bench_train.c -- memory and speed of the trainer: peak resident memory
 * of a run of M = 2 small transformer replicas against the bytes the run
 * needs, and lockstep steps per second.
 *
 * Model: transformer d 256, 4 layers, 4 heads, vocab 4096, batch 8,
 * seq 64, Markov data (V 4096, K 4); AdamW inside, Nesterov outside;
 * 2 threads.  Each method runs in its own child process so that each
 * peak (getrusage ru_maxrss) is its own.
 *
 * Needed bytes, from the configuration (N parameters, A activation floats
 * of one model as laid out by nn.c, FP32 everywhere):
 *   per replica  parameters 4N + gradients 4N + AdamW moments 8N + 4A
 *   outer state  parameters 4N + Nesterov momentum 4N   (not for DP)
 * Goal: peak RSS <= 1.3 x needed.  The ratio includes the process's own
 * baseline (libraries, OpenBLAS buffers), printed separately.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "models/train.h"

#define STEPS 30
#define MB (1024.0 * 1024.0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double peak_rss_bytes(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0; /* Linux: kilobytes */
}

/* Activation and scratch floats of one nn model for (B, T): the buffers
 * nn.c carves (residual stream, per-block LayerNorm, qkv, attention
 * probabilities, MLP, final LayerNorm, logits, backward scratch), without
 * its 16-float alignment padding. */
static double activation_floats(const nn_config *c, int B, int T) {
    const double n = (double)B * T, d = c->d, h = (double)c->mlp_ratio * d;
    const double v = c->vocab, t = T, L = c->layers, nh = c->heads;
    double res = (L + 1) * n * d;
    double block = 7 * n * d + 4 * n + B * nh * t * t + 2 * n * h;
    double head = n * d + 2 * n + n * v + n;
    double back = 2 * n * d + n * d + 3 * n * d + n * h + t * t;
    return res + L * block + head + back;
}

static train_config bench_config(sched_method m) {
    train_config c;
    train_config_default(&c);
    c.replicas = 2;
    c.threads = 2;
    c.steps = STEPS;
    c.batch = 8;
    c.seq = 64;
    nn_config nn = {NN_TRANSFORMER, 4096, 256, 4, 4, 64, 4};
    c.nn = nn;
    c.data.vocab = 4096;
    c.data.successors = 4;
    sched_spec s = {m,
                    0,
                    10,
                    2,
                    1,
                    0.5,
                    SCHED_STRIDED,
                    SCHED_ASCENDING,
                    SCHED_INNER,
                    SCHED_RULE_PAPER,
                    SCHED_SUBSET_DEFAULT};
    c.sched = s;
    c.codec.kind = m == SCHED_STREAMING ? CODEC_E3M0 : CODEC_FP32;
    c.inner.lr = 1e-3;
    c.inner.warmup = 5;
    c.eval_interval = 0;
    c.eval_batches = 2;
    return c;
}

static int last_report(const train_report *r, void *ctx) {
    *(train_report *)ctx = *r;
    return 0;
}

/* One method, in the current process; 0 on success. */
static int bench_one(sched_method m) {
    const char *name = sched_method_name(m);
    double base = peak_rss_bytes();
    train_config c = bench_config(m);
    train *tr;
    char err[256];
    if (train_new(&c, &tr, err, sizeof err)) {
        fprintf(stderr, "bench_train: %s\n", err);
        return 1;
    }
    train_report rep = {0};
    double t0 = now_s();
    int rc = train_run(tr, last_report, &rep);
    double dt = now_s() - t0;
    if (rc) {
        fprintf(stderr, "bench_train: %s\n", train_error(tr));
        train_free(tr);
        return 1;
    }
    double N = (double)train_num_params(tr);
    double A = activation_floats(&c.nn, c.batch, c.seq);
    double outer = m == SCHED_DP ? 0 : 8 * N;
    double need = c.replicas * (16 * N + 4 * A) + outer;
    double peak = peak_rss_bytes();
    printf("bench_train: %s: M %d, %.0f parameters, %.0f activation floats "
           "per replica, codec %s\n",
           name, c.replicas, N, A,
           codec_name(m == SCHED_DP ? c.dp_codec.kind : c.codec.kind));
    printf("bench_train: %s: needed %.1f MB (replicas %.1f MB: params, "
           "grads, AdamW %.1f MB + activations %.1f MB; outer %.1f MB)\n",
           name, need / MB, c.replicas * (16 * N + 4 * A) / MB,
           c.replicas * 16 * N / MB, c.replicas * 4 * A / MB, outer / MB);
    printf("bench_train: %s: peak RSS %.1f MB (baseline before the trainer "
           "%.1f MB), ratio %.3f (goal <= 1.3)\n",
           name, peak / MB, base / MB, peak / need);
    printf("bench_train: %s: %d steps in %.2f s: %.2f steps/s, %.0f "
           "tokens/s, final eval loss %.3f, %.1f MB sent\n",
           name, STEPS, dt, STEPS / dt, (double)rep.tokens / dt, rep.eval_loss,
           (double)rep.bytes / MB);
    train_free(tr);
    return 0;
}

int main(void) {
    const sched_method methods[3] = {SCHED_STREAMING, SCHED_DILOCO, SCHED_DP};
    int fail = 0;
    for (int i = 0; i < 3; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("bench_train: fork");
            return 1;
        }
        if (pid == 0) {
            int rc = bench_one(methods[i]);
            fflush(stdout);
            _exit(rc);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            fail = 1;
    }
    return fail;
}
