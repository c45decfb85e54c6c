/*
 * scenario_schema.c -- the scenario's keys as tables (one per JSON
 * object: key, type, range, where the value goes in scn_config) and the
 * tables of their enums; the "train" section's are scenario_train.c's.
 * tests/cli_docs.sh reads these tables for the documented keys.
 */
#include "sim/config/scenario_int.h"

#include <limits.h>

#include "sim/base/msg.h"

#define EXACT_INT 9007199254740992.0 /* 2^53: doubles are exact up to it */

/* Enums whose names live with their type (sim/base): read through the
 * name function, from value 0 to the last. */
static const char *n_codec(int v) {
    return codec_name((codec_kind)v);
}
static const char *n_method(int v) {
    return sched_method_name((sched_method)v);
}
static const char *n_layout(int v) {
    return sched_layout_name((sched_layout)v);
}
static const char *n_order(int v) {
    return sched_order_name((sched_order)v);
}
static const char *n_overlap(int v) {
    return sched_overlap_name((sched_overlap)v);
}
static const char *n_rule(int v) {
    return sched_rule_name((sched_rule)v);
}

static const enum_def E_CODEC = {.n = CODEC_COUNT, .name = n_codec};
static const enum_def E_METHOD = {.n = SCHED_SPARTA + 1, .name = n_method};
static const enum_def E_LAYOUT = {.n = SCHED_SLICED + 1, .name = n_layout};
static const enum_def E_ORDER = {.n = SCHED_ROTATED + 1, .name = n_order};
static const enum_def E_OVERLAP = {.n = SCHED_EAGER + 1, .name = n_overlap};
static const enum_def E_RULE = {.n = SCHED_RULE_TORCHFT + 1, .name = n_rule};
static const enum_def E_COLL = SCN__NAMES(coll_algo_names);
static const enum_def E_DIST = SCN__NAMES(faults_dist_names);

/* The config's own enums: names[i] is value i (scenario.h's order). */
static const char *const bwd_names[] = {"activations_first",
                                        "parameters_first"};
static const char *const reduce_names[] = {"fifo", "forward_first"};
static const char *const gbit_names[] = {"si", "binary"};
static const char *const late_names[] = {"wait", "continue"};
static const char *const transport_names[] = {"ideal", "tcp"};
static const char *const completion_names[] = {"group", "member"};
static const char *const measure_names[] = {"run", "steady"};
static const char *const site_names[] = {"hierarchical", "ring"};
static const enum_def E_BWD = SCN__NAMES(bwd_names);
static const enum_def E_REDUCE = SCN__NAMES(reduce_names);
static const enum_def E_GBIT = SCN__NAMES(gbit_names);
static const enum_def E_LATE = SCN__NAMES(late_names);
static const enum_def E_TRANSPORT = SCN__NAMES(transport_names);
static const enum_def E_COMPLETION = SCN__NAMES(completion_names);
static const enum_def E_MEASURE = SCN__NAMES(measure_names);
static const enum_def E_SITE = SCN__NAMES(site_names);

static const field split_fields[] = {
    K_NUM("forward", split[0], IN(0, 1)),
    K_NUM("backward_activations", split[1], IN(0, 1)),
    K_NUM("backward_parameters", split[2], IN(0, 1)),
    K_END,
};

/* step_time_s versus the four FLOP keys, and split's sum: check_model. */
static const field model_fields[] = {
    K_NUM("params", params, OC(0, 1e15)),
    K_INT("layers", layers, 1, 100000),
    K_NUM("step_time_s", step_time_s, IN(1e-9, 1e6)),
    K_NUM("tokens_per_step", tokens_per_step, OC(0, 1e15)),
    K_NUM("chips", chips, OC(0, 1e9)),
    K_NUM("peak_tflops", peak_tflops, OC(0, 1e9)),
    K_NUM("mfu", mfu, OC(0, 1)),
    K_OBJ("split", split_fields),
    K_ENUM("backward_order", bwd_order, E_BWD),
    K_U64("hidden", hidden, 0, 1e15),
    K_NUM("host_gbps", host_gbps, IN(SCN_MIN_GBPS, SCN_MAX_GBPS)),
    K_END,
};

static const field stragglers_fields[] = {
    K_NUM("probability", straggler_prob, IN(0, 1)),
    K_NUM("slowdown", straggler_slowdown, IN(1, 1000)),
    K_END,
};

/* One site of workers.sites (into a scn__site; replicas is required:
 * scenario_fields.c's load_sites).  intra_gbps in the Gbit of
 * network.gbit. */
#define AT_SITE(m) offsetof(scn__site, m)
static const field site_fields[] = {
    {.key = "replicas",
     .type = F_INT,
     .off = AT_SITE(replicas),
     .r = INT(1, 65536)},
    {.key = "intra_gbps",
     .type = F_NUM,
     .off = AT_SITE(intra_gbps),
     .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS)},
    {.key = "intra_latency_us",
     .type = F_NUM,
     .off = AT_SITE(intra_latency_us),
     .r = IN(0, 1e9)},
    K_END,
};

/* workers.power_w: both keys required (check_energy). */
static const field power_fields[] = {
    K_NUM("busy", power_busy_w, IN(0, 1e7)),
    K_NUM("idle", power_idle_w, IN(0, 1e7)),
    K_END,
};

/* count before speed and sites: per-worker arrays are checked against
 * it. */
static const field workers_fields[] = {
    K_INT("count", workers, 1, SCN_MAX_WORKERS),
    K_WORKERS("speed", speed, IN(0.001, 1000)),
    {.key = "sites", .type = F_SITES, .sub = site_fields},
    K_OBJ("stragglers", stragglers_fields),
    K_OBJ("power_w", power_fields),
    K_END,
};

/* network.bandwidth_trace.diurnal: low_gbps and high_gbps are required
 * (check_bw_trace); every key in the Gbit unit of network.gbit. */
static const field diurnal_fields[] = {
    K_NUM("low_gbps", diurnal.low_gbps, IN(SCN_MIN_GBPS, SCN_MAX_GBPS)),
    K_NUM("high_gbps", diurnal.high_gbps, IN(SCN_MIN_GBPS, SCN_MAX_GBPS)),
    K_NUM("period_h", diurnal.period_h, IN(0.001, 1e6)),
    K_NUM("phase_h", diurnal.phase_h, IN(-1e6, 1e6)),
    K_INT("steps_per_period", diurnal.steps, 1, 1000000),
    K_END,
};

/* network.bandwidth_trace: a file name (resolved and parsed in
 * check_bw_trace) or this object. */
static const field bw_trace_fields[] = {
    K_OBJ("diurnal", diurnal_fields),
    K_END,
};

/* bandwidth_gbps before up_gbps and down_gbps, which override it. */
static const field network_fields[] = {
    {.key = "bandwidth_gbps",
     .type = F_WORKERS,
     .off = AT(up_gbps),
     .off2 = AT(down_gbps),
     .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS),
     .inf_ok = 1},
    {.key = "up_gbps",
     .type = F_WORKERS,
     .off = AT(up_gbps),
     .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS),
     .inf_ok = 1},
    {.key = "down_gbps",
     .type = F_WORKERS,
     .off = AT(down_gbps),
     .r = IN(SCN_MIN_GBPS, SCN_MAX_GBPS),
     .inf_ok = 1},
    K_WORKERS("latency_ms", latency_ms, IN(0, 1e6)),
    K_ENUM("collective", collective, E_COLL),
    K_ENUM("reduce_order", reduce_order, E_REDUCE),
    K_ENUM("gbit", gbit, E_GBIT),
    K_NUM("tcp_window_mb", tcp_window_mb, IN(0, 1e6)),
    K_ENUM("transport", transport, E_TRANSPORT),
    K_ENUM("completion", completion, E_COMPLETION),
    K_NUM("tcp_init_window_kb", tcp_init_window_kb, IN(0.001, 1e9)),
    K_BOOL("tcp_slow_start_after_idle", tcp_slow_start_after_idle),
    K_NUM("efficiency", efficiency, OC(0, 1)),
    K_NUM("collective_overhead_ms", collective_overhead_ms, IN(0, 1e6)),
    K_NUM("startup_ms", startup_ms, IN(0, 1e6)),
    K_NUM("ack_bytes_per_kb", ack_bytes_per_kb, IN(0, 1000)),
    K_NUM("queue_ms", queue_ms, IN(0, 1e6)),
    K_MATRIX("latency_matrix_ms", latency_matrix_ms, IN(0, 1e6)),
    K_WORKERS("ring_order", ring_order_w, INT(0, SCN_MAX_WORKERS - 1)),
    {.key = "bandwidth_trace",
     .type = F_OBJ,
     .sub = bw_trace_fields,
     .str_ok = 1},
    K_ENUM("site_allreduce", site_allreduce, E_SITE),
    K_NUM("joules_per_gb", joules_per_gb, IN(0, 1e9)),
    K_END,
};

/* The combination is checked by sched_normalize: check_method. */
static const field method_fields[] = {
    K_ENUM("name", sched.method, E_METHOD),
    K_INT("H", sched.H, 1, INT_MAX),
    K_INT("fragments", sched.P, 1, INT_MAX),
    K_ENUM("layout", sched.layout, E_LAYOUT),
    K_ENUM("order", sched.order, E_ORDER),
    K_WORKERS("tau", tau_w, INT(0, INT_MAX)),
    K_ENUM("overlap", sched.overlap, E_OVERLAP),
    K_ENUM("rule", sched.rule, E_RULE),
    K_NUM("alpha", sched.alpha, IN(0, 1)),
    K_NUM("subset_fraction", sched.subset, OC(0, 1)),
    K_ENUM("codec", codec.kind, E_CODEC),
    K_U64("codec_block", codec.block, 0, 1e15),
    K_NUM("k_fraction", codec.k_fraction, OC(0, 1)),
    K_U64("rank", codec.rank, 1, 65536),
    K_U64("demo_chunk", codec.demo_chunk, 1, 65536),
    K_U64("demo_topk", codec.demo_topk, 1, 65536),
    K_NUM("demo_beta", codec.demo_beta, IN(0, 1)),
    K_ENUM("dp_codec", dp_codec.kind, E_CODEC),
    K_ENUM("late", late, E_LATE),
    K_NUM("sync_timeout_s", sync_timeout_s, IN(0, 1e9)),
    K_NUM("dp_bucket_mb", dp_bucket_mb, IN(0, 1e9)),
    K_NUM("bucket_mb", bucket_mb, IN(0, 1e9)),
    K_BOOL("offload_outer", offload_outer),
    K_INT("quorum", quorum, 1, SCN_MAX_WORKERS),
    K_END,
};

/* trace is resolved and checked against mtbf_hours in check_faults;
 * membership_trace resolved and parsed in check_members. */
static const field faults_fields[] = {
    {.key = "mtbf_hours",
     .type = F_NUM,
     .off = AT(faults.mtbf_s),
     .r = IN(0, 1e6),
     .scale = 3600},
    {.key = "mttr_hours",
     .type = F_NUM,
     .off = AT(faults.mttr_s),
     .r = OC(0, 1e6),
     .scale = 3600},
    K_ENUM("distribution", faults.dist, E_DIST),
    K_NUM("weibull_shape", faults.weibull_shape, IN(0.01, 1000)),
    K_STR("trace"),
    K_I64("checkpoint_steps", checkpoint_steps, 1, EXACT_INT),
    K_NUM("recovery_bytes_per_param", recovery_bytes_per_param, IN(0, 1000)),
    K_I64("checkpoint_every_steps", checkpoint_every_steps, 0, EXACT_INT),
    K_NUM("checkpoint_s", checkpoint_s, IN(0, 1e9)),
    K_NUM("restart_s", restart_s, IN(0, 1e9)),
    K_STR("membership_trace"),
    K_END,
};

/* Sections first: workers.count must be known before network. */
static const field root_fields[] = {
    K_OBJ("model", model_fields),
    K_OBJ("workers", workers_fields),
    K_OBJ("network", network_fields),
    K_OBJ("method", method_fields),
    K_OBJ("faults", faults_fields),
    K_OBJ("train", scn__train_fields),
    K_I64("steps", steps, 1, 1e12),
    K_U64("seed", seed, 0, EXACT_INT),
    K_ENUM("measure", measure, E_MEASURE),
    K_STR("name"),
    K_STR("description"),
    {.key = "variants", .type = F_VARIANTS},
    {.key = "sweep", .type = F_SWEEP},
    K_END,
};

int scn__load_root(ctx *c, const cJSON *root, scn__out *out) {
    return scn__load_object(c, root, "", root_fields, out);
}
