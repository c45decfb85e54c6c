/*
 * bench_nn.c -- speed of one transformer training step (forward +
 * backward) against the machine's single-precision GEMM rate, measured
 * in the same process and on one thread, like the trainer's replicas.
 *
 * Model: d 256, 4 layers, 4 heads, ctx 256, batch 8, vocab 4096.  The
 * step's FLOPs are nn_flops_per_step (6 N tokens + attention; see nn.h).
 * The GEMM reference is cblas_sgemm 1024 x 1024 x 1024 through the same
 * backend.  Goal: the step at >= 40% of the GEMM rate.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "models/nn.h"
#include "models/tensor.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best-of-`reps` GFLOP/s of an n^3 sgemm (after one warm-up call). */
static double gemm_rate(int n, int reps) {
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    float *c = malloc(nn * sizeof *c);
    if (!a || !b || !c) return 0;
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)(i % 97) / 97.0f - 0.5f;
        b[i] = (float)(i % 89) / 89.0f - 0.5f;
    }
    tn_gemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        tn_gemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double dt = now_s() - t0;
        best = dt < best ? dt : best;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * n * n * (double)n / best / 1e9;
}

typedef struct {
    double fwd_s, bwd_s; /* best of the timed steps */
    int steps;           /* timed steps */
    float loss;
} step_time;

/* Times up to `steps` steps after a warm-up one, stopping early once 10 s
 * have gone (the reference gslcblas backend is some 15 times slower). */
static int time_steps(nn_model *m, const int32_t *x, const int32_t *y,
                      int steps, step_time *out) {
    out->fwd_s = out->bwd_s = 1e30;
    out->steps = 0;
    double start = now_s();
    for (int s = 0; s <= steps; s++) { /* step 0 warms up */
        if (s > 1 && now_s() - start > 10.0) break;
        double t0 = now_s();
        out->loss = nn_forward(m, x, y);
        double t1 = now_s();
        if (nn_backward(m)) return -1;
        double t2 = now_s();
        if (s == 0) continue;
        out->steps++;
        if (t1 - t0 < out->fwd_s) out->fwd_s = t1 - t0;
        if (t2 - t1 < out->bwd_s) out->bwd_s = t2 - t1;
    }
    return 0;
}

int main(void) {
    const int B = 8, T = 256;
    nn_config c = {NN_TRANSFORMER, 4096, 256, 4, 4, 256, 4};
    char err[160];
    if (nn_check(&c, B, T, err, sizeof err)) {
        fprintf(stderr, "bench_nn: %s\n", err);
        return 1;
    }
    nn_model *m = nn_new(&c, B, T);
    int32_t *x = malloc((size_t)B * T * sizeof *x);
    int32_t *y = malloc((size_t)B * T * sizeof *y);
    if (!m || !x || !y) {
        fprintf(stderr, "bench_nn: out of memory\n");
        return 1;
    }
    nn_init(m, 1);
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i < B * T; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (int32_t)(s % 4096);
        y[i] = (int32_t)((s >> 32) % 4096);
    }
    step_time st;
    if (time_steps(m, x, y, 5, &st)) {
        fprintf(stderr, "bench_nn: backward failed\n");
        return 1;
    }
    double flops = nn_flops_per_step(m);
    double step = st.fwd_s + st.bwd_s;
    double step_rate = flops / step / 1e9;
    double gemm = gemm_rate(1024, 10);

    printf("bench_nn: blas: %s (one thread per call)\n", tn_blas_name());
    printf("bench_nn: model: transformer d 256, 4 layers, 4 heads, ctx 256, "
           "batch 8, vocab 4096, %zu parameters, loss %.3f\n",
           nn_num_params(m), st.loss);
    printf("bench_nn: step FLOPs: %.2f GFLOP (6 N tokens + attention)\n",
           flops / 1e9);
    printf("bench_nn: forward: %.1f ms, backward: %.1f ms, step: %.1f ms "
           "(best of %d)\n",
           st.fwd_s * 1e3, st.bwd_s * 1e3, step * 1e3, st.steps);
    printf("bench_nn: step rate: %.1f GFLOP/s\n", step_rate);
    printf("bench_nn: sgemm 1024^3 rate: %.1f GFLOP/s\n", gemm);
    printf("bench_nn: step / sgemm: %.0f %% (goal >= 40 %%)\n",
           100.0 * step_rate / gemm);
    free(x);
    free(y);
    nn_free(m);
    return 0;
}
