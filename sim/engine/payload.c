/*
 * payload.c -- the bytes of a sync's payload (payload.h): the model's
 * parameters split into layers and slices, their size on the wire.
 */
#include "sim/engine/payload.h"

#include <math.h>

/* The model's parameters as a whole count: params beyond 2^62 cannot be
 * run (world_init stops); clamped here so the conversion is defined. */
static uint64_t model_params(const scn_config *cfg) {
    double max = (double)PAYLOAD_PARAMS_MAX;
    double np = cfg->params < max ? cfg->params : max;
    return np > 0 ? (uint64_t)llround(np) : 0;
}

uint64_t payload_slice_params(const scn_config *cfg, int l, int j, int P) {
    uint64_t N = model_params(cfg), L = (uint64_t)cfg->layers;
    uint64_t q = N / L, r = N % L, ul = (uint64_t)l;
    uint64_t n = q + ((ul + 1) * r / L - ul * r / L);
    /* n < 2^62 and j < P < 2^31: the products fit */
    uint64_t uj = (uint64_t)j, uP = (uint64_t)P;
    uint64_t part = n / uP, rem = n % uP;
    return part + ((uj + 1) * rem / uP - uj * rem / uP);
}

uint64_t payload_slice_bytes(const scn_config *cfg, codec_spec codec, int l,
                             int j, int P) {
    uint64_t row = cfg->hidden;
    if (row == 0) {
        uint64_t N = model_params(cfg);
        row = (uint64_t)llround(sqrt((double)N / (double)cfg->layers / 12.0));
        if (row == 0) row = 1;
    }
    return codec_wire_bytes(codec, payload_slice_params(cfg, l, j, P), row);
}

uint64_t payload_layer_bytes(const scn_config *cfg, codec_spec codec, int l) {
    return payload_slice_bytes(cfg, codec, l, 0, 1);
}

uint64_t payload_subset_bytes(const scn_config *cfg, codec_spec codec, int l) {
    uint64_t n = payload_slice_params(cfg, l, 0, 1);
    return codec_wire_bytes(codec, sched_subset_count(cfg->sched.subset, n), 0);
}

uint64_t payload_sparta_bytes(const scn_config *cfg, codec_spec codec, int l,
                              int P) {
    int L = cfg->layers;
    int lo = l < P ? 0 : l, hi = l + P >= L ? L : l + P;
    uint64_t b = 0;
    for (int k = lo; k < hi; k++) b += payload_subset_bytes(cfg, codec, k);
    return b;
}
