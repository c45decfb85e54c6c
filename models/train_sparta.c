/*
 * train_sparta.c -- method sparta's arithmetic (train_int.h): sparse
 * parameter averaging.  Every fragment is a slot of the schedule
 * (sim/base/schedule.h) and holds every tensor; a sync taken after step t
 * holds, of each tensor i of n_i values, the k_i = sched_subset_count(p,
 * n_i) indices sched_subset(seed, t, i, ...) draws (the same on every
 * replica: the indices are not sent), and each replica's values there,
 * encoded with the payload codec as one row of k_i values.  The reduce
 * decodes the members' values and averages them in FP32 in replica
 * order; the merge into replica r is theta[S] = alpha * theta[S] +
 * (1 - alpha) * mean[S] (alpha 0: the mean).  There is no outer step and
 * no outer state.
 */
#include "models/train_int.h"

#include <stdlib.h>
#include <string.h>

int train__sparta_build(train *tr) {
    uint64_t K = 0;
    for (int k = 0; k < tr->ntens; k++)
        K += sched_subset_count(tr->sp.subset, tr->tens[k].n);
    tr->perm = malloc(tr->maxt * sizeof *tr->perm);
    if (!tr->perm) return train__fail(tr, MSG_ENOMEM, "train: out of memory");
    for (int f = 0; f < tr->P; f++) {
        fragment *fr = &tr->frag[f];
        fr->koff = calloc((size_t)tr->ntens + 1, sizeof *fr->koff);
        fr->idx = malloc((K ? K : 1) * sizeof *fr->idx);
        fr->midx = malloc((K ? K : 1) * sizeof *fr->midx);
        fr->mean = malloc((K ? K : 1) * sizeof *fr->mean);
        if (!fr->koff || !fr->idx || !fr->midx || !fr->mean)
            return train__fail(tr, MSG_ENOMEM, "train: out of memory");
        fr->drawn = -1;
        fr->nunits = fr->ntens = 0;
        fr->wire = 0;
        for (int u = 0; u < tr->U; u++) fr->units[fr->nunits++] = u;
        for (int k = 0; k < tr->ntens; k++) {
            const tensor_info *t = &tr->tens[k];
            uint64_t n = sched_subset_count(tr->sp.subset, t->n);
            fr->koff[k + 1] = fr->koff[k] + n;
            fr->boff[fr->ntens] = fr->wire;
            fr->tens[fr->ntens++] = k;
            fr->wire += codec_wire_bytes(tr->codec, n, 0);
        }
    }
    return 0;
}

void train__sparta_free(fragment *fr) {
    free(fr->koff);
    free(fr->idx);
    free(fr->midx);
    free(fr->mean);
}

int train__sparta_draw(train *tr, fragment *fr, int64_t take) {
    if (fr->drawn == take) return 0;
    for (int k = 0; k < tr->ntens; k++)
        if (sched_subset(tr->cfg.seed, take, (uint32_t)k, tr->tens[k].n,
                         tr->sp.subset, tr->perm, fr->idx + fr->koff[k]) < 0)
            return train__fail(tr, MSG_ENOMEM,
                               "train: sparta: cannot draw the subset of "
                               "tensor %d",
                               k);
    fr->drawn = take;
    return 0;
}

uint64_t train__sparta_encode(train *tr, int r, const fragment *fr) {
    replica *rp = &tr->rep[r];
    uint64_t written = 0;
    for (int i = 0; i < fr->ntens; i++) {
        const tensor_info *t = &tr->tens[fr->tens[i]];
        const uint32_t *idx = fr->idx + fr->koff[i];
        uint64_t k = fr->koff[i + 1] - fr->koff[i];
        float *v = rp->g + t->off; /* free between steps */
        for (uint64_t m = 0; m < k; m++) v[m] = rp->p[t->off + idx[m]];
        written += codec_encode(tr->codec, v, k, 0, fr->buf[r] + fr->boff[i]);
    }
    return written;
}

void train__sparta_reduce(train *tr, int f, uint64_t members) {
    fragment *fr = &tr->frag[f];
    for (int r = 0; r < tr->M; r++) /* a merge of the slot's last sync not
                                       landed yet (a late replica) */
        if (*train__due_of(tr, r, f) >= 0) train__land_fragment(tr, r, f);
    for (int i = 0; i < fr->ntens; i++) {
        uint64_t k = fr->koff[i + 1] - fr->koff[i];
        float *mean = fr->mean + fr->koff[i];
        int count = 0;
        for (int r = 0; r < tr->M; r++) {
            if (!(members >> r & 1)) continue;
            float *dst = count == 0 ? mean : tr->scratch;
            codec_decode(tr->codec, fr->buf[r] + fr->boff[i], k, 0, dst);
            if (count++ == 0) continue;
            for (uint64_t m = 0; m < k; m++) mean[m] += dst[m];
        }
        if (count > 1)
            for (uint64_t m = 0; m < k; m++) mean[m] /= (float)count;
    }
    memcpy(fr->midx, fr->idx, fr->koff[fr->ntens] * sizeof *fr->midx);
    train__close_sync(tr, fr);
}

void train__sparta_land(train *tr, int r, int f) {
    const fragment *fr = &tr->frag[f];
    const double alpha = tr->sp.alpha;
    const float a = (float)alpha, b = (float)(1.0 - alpha);
    for (int i = 0; alpha != 1.0 && i < fr->ntens; i++) {
        float *p = tr->rep[r].p + tr->tens[fr->tens[i]].off;
        const uint32_t *idx = fr->midx + fr->koff[i];
        const float *mean = fr->mean + fr->koff[i];
        uint64_t k = fr->koff[i + 1] - fr->koff[i];
        for (uint64_t m = 0; m < k; m++)
            p[idx[m]] = alpha == 0.0 ? mean[m] : a * p[idx[m]] + b * mean[m];
    }
}
