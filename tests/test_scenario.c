/*
 * test_scenario.c -- the scenario loader: defaults, every key, every
 * per-worker form, overrides, and every rejection with its exact message
 * (file:line:col: json.path: what is wrong (expected ...)).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim/base/msg.h"
#include "sim/config/json.h"
#include "sim/study/plan.h"
#include "sim/config/scenario.h"
#include "sim/config/scenario_train.h"
#include "check_main.h"

/* A scenario whose only key in section `sec` is `body`, on line 3 from
 * column 5. */
#define IN(sec, body) "{\n  \"" sec "\": {\n    " body "\n  }\n}\n"
/* A scenario whose top-level body is on line 2 from column 3. */
#define TOP(body) "{\n  " body "\n}\n"

static scn_config cfg;
static scn_train sec; /* the train section of a successful load */
static char err[2048];

static int load(const char *json, const char *const *sets, int nset) {
    err[0] = 0;
    return scn_load_string(json, "s.json", sets, nset, &cfg, err, sizeof err);
}

static void load_ok(const char *json, const char *const *sets, int nset) {
    err[0] = 0;
    int rc = scn_load_string_train(json, "s.json", sets, nset, &cfg, &sec, err,
                                   sizeof err);
    ck_assert_msg(rc == 0, "unexpected error: %s", err);
}

/* Loads json with the overrides, expects failure with exactly `msg` and
 * *out untouched. */
static void load_fail_at(int line, const char *json, const char *const *sets,
                         int nset, const char *msg) {
    static scn_config before;
    memset(&cfg, 0x5a, sizeof cfg);
    memcpy(&before, &cfg, sizeof cfg);
    int rc = load(json, sets, nset);
    ck_assert_msg(rc == MSG_EINPUT, "line %d: accepted, expected: %s", line,
                  msg);
    ck_assert_msg(strcmp(err, msg) == 0, "line %d:\n   got: %s\nwanted: %s",
                  line, err, msg);
    ck_assert_msg(memcmp(&cfg, &before, sizeof cfg) == 0,
                  "line %d: *out changed on error", line);
}
#define FAIL(json, msg) load_fail_at(__LINE__, json, NULL, 0, msg)

/* Loads json, expects failure with a message that starts with `msg`. */
static void load_fail_prefix(int line, const char *json, const char *msg) {
    int rc = load(json, NULL, 0);
    ck_assert_msg(rc == MSG_EINPUT, "line %d: accepted, expected: %s", line,
                  msg);
    ck_assert_msg(strncmp(err, msg, strlen(msg)) == 0,
                  "line %d:\n   got: %s\nwanted: %s...", line, err, msg);
}
#define FAIL_SET(json, set, msg)                                               \
    do {                                                                       \
        const char *sets_[] = {set};                                           \
        load_fail_at(__LINE__, json, sets_, 1, msg);                           \
    } while (0)

/* ------------------------------------------------------------------ */

START_TEST(test_defaults) {
    scn_config d;
    scn_defaults(&d);
    ck_assert_double_eq(d.params, 1e9);
    ck_assert_int_eq(d.layers, 24);
    ck_assert_double_eq(d.step_time_s, 0.1);
    for (int k = 0; k < 3; k++) ck_assert_double_eq(d.split[k], 1.0 / 3);
    ck_assert_int_eq(d.bwd_order, SCN_ACT_FIRST);
    ck_assert_uint_eq(d.hidden, 0);
    ck_assert_int_eq(d.workers, 2);
    for (int i = 0; i < SCN_MAX_WORKERS; i++) {
        ck_assert_double_eq(d.speed[i], 1);
        ck_assert_double_eq(d.up_gbps[i], 10);
        ck_assert_double_eq(d.down_gbps[i], 10);
        ck_assert_double_eq(d.latency_ms[i], 0);
    }
    ck_assert_double_eq(d.straggler_prob, 0);
    ck_assert_double_eq(d.straggler_slowdown, 2);
    ck_assert_int_eq(d.collective, COLL_RING);
    ck_assert_double_eq(d.tcp_window_mb, 0);
    ck_assert_int_eq(d.sched.method, SCHED_STREAMING);
    ck_assert_int_eq(d.sched.layers, 24);
    ck_assert_int_eq(d.sched.H, 100);
    ck_assert_int_eq(d.sched.P, 1);
    ck_assert_int_eq(d.sched.tau, 0);
    ck_assert_double_eq(d.sched.alpha, 0.5);
    ck_assert_int_eq(d.sched.layout, SCHED_STRIDED);
    ck_assert_int_eq(d.sched.order, SCHED_ASCENDING);
    ck_assert_int_eq(d.codec.kind, CODEC_BF16);
    ck_assert_uint_eq(d.codec.block, 0);
    ck_assert_int_eq(d.dp_codec.kind, CODEC_BF16);
    ck_assert_uint_eq(d.dp_codec.block, 0);
    ck_assert_double_eq(d.faults.mtbf_s, 0);
    ck_assert_double_eq(d.faults.mttr_s, 3600);
    ck_assert_int_eq(d.faults.dist, FAULTS_EXPONENTIAL);
    ck_assert_double_eq(d.faults.weibull_shape, 1.5);
    ck_assert_ptr_null(d.faults.trace);
    ck_assert_str_eq(d.trace_path, "");
    ck_assert_int_eq(d.checkpoint_steps, 100);
    ck_assert_double_eq(d.recovery_bytes_per_param, 4);
    ck_assert_int_eq(d.steps, 1000);
    ck_assert_uint_eq(d.seed, 1);
    ck_assert_double_eq(scn_step_time_s(&d), 0.1);

    /* An empty scenario is the defaults, byte for byte. */
    load_ok("{}", NULL, 0);
    d.digest = cfg.digest; /* the digest is the document's, not a default */
    ck_assert(memcmp(&cfg, &d, sizeof d) == 0);
    /* ... and so is one with empty sections and annotations. */
    load_ok("{\"name\": \"x\", \"description\": \"y\", \"model\": {},\n"
            " \"workers\": {}, \"network\": {}, \"method\": {},\n"
            " \"faults\": {}}",
            NULL, 0);
    d.digest = cfg.digest;
    ck_assert(memcmp(&cfg, &d, sizeof d) == 0);
}
END_TEST

static const char full[] =
    "{\n"
    "  \"name\": \"full\",\n"
    "  \"description\": \"every key but the FLOP ones and trace\",\n"
    "  \"model\": {\n"
    "    \"params\": 2e9,\n"
    "    \"layers\": 12,\n"
    "    \"step_time_s\": 0.5,\n"
    "    \"split\": {\"forward\": 0.25, \"backward_activations\": 0.25,\n"
    "              \"backward_parameters\": 0.5},\n"
    "    \"backward_order\": \"parameters_first\",\n"
    "    \"hidden\": 2048\n"
    "  },\n"
    "  \"workers\": {\n"
    "    \"count\": 3,\n"
    "    \"speed\": [1, 0.5, 2],\n"
    "    \"stragglers\": {\"probability\": 0.1, \"slowdown\": 3}\n"
    "  },\n"
    "  \"network\": {\n"
    "    \"bandwidth_gbps\": [100, \"inf\", 1],\n"
    "    \"up_gbps\": 50,\n"
    "    \"latency_ms\": [10, 20, 30.5],\n"
    "    \"collective\": \"star\",\n"
    "    \"tcp_window_mb\": 4\n"
    "  },\n"
    "  \"method\": {\n"
    "    \"name\": \"streaming\", \"H\": 30, \"fragments\": 3,\n"
    "    \"layout\": \"sequential\", \"order\": \"rotated\", \"tau\": 5,\n"
    "    \"alpha\": 0.75, \"codec\": \"e3m0\", \"codec_block\": 128,\n"
    "    \"dp_codec\": \"fp32\"\n"
    "  },\n"
    "  \"faults\": {\n"
    "    \"mtbf_hours\": 2, \"mttr_hours\": 0.5,\n"
    "    \"distribution\": \"weibull\", \"weibull_shape\": 2.5,\n"
    "    \"checkpoint_steps\": 50, \"recovery_bytes_per_param\": 2\n"
    "  },\n"
    "  \"steps\": 12345,\n"
    "  \"seed\": 9007199254740992\n"
    "}\n";

START_TEST(test_full) {
    load_ok(full, NULL, 0);
    ck_assert_double_eq(cfg.params, 2e9);
    ck_assert_int_eq(cfg.layers, 12);
    ck_assert_double_eq(cfg.step_time_s, 0.5);
    ck_assert_double_eq(scn_step_time_s(&cfg), 0.5);
    ck_assert_double_eq(cfg.split[0], 0.25);
    ck_assert_double_eq(cfg.split[1], 0.25);
    ck_assert_double_eq(cfg.split[2], 0.5);
    ck_assert_int_eq(cfg.bwd_order, SCN_PARAM_FIRST);
    ck_assert_uint_eq(cfg.hidden, 2048);
    ck_assert_int_eq(cfg.workers, 3);
    ck_assert_double_eq(cfg.speed[0], 1);
    ck_assert_double_eq(cfg.speed[1], 0.5);
    ck_assert_double_eq(cfg.speed[2], 2);
    ck_assert_double_eq(cfg.straggler_prob, 0.1);
    ck_assert_double_eq(cfg.straggler_slowdown, 3);
    for (int i = 0; i < 3; i++) ck_assert_double_eq(cfg.up_gbps[i], 50);
    ck_assert_double_eq(cfg.down_gbps[0], 100);
    ck_assert(isinf(cfg.down_gbps[1]) && cfg.down_gbps[1] > 0);
    ck_assert_double_eq(cfg.down_gbps[2], 1);
    ck_assert_double_eq(cfg.latency_ms[0], 10);
    ck_assert_double_eq(cfg.latency_ms[1], 20);
    ck_assert_double_eq(cfg.latency_ms[2], 30.5);
    ck_assert_int_eq(cfg.collective, COLL_STAR);
    ck_assert_double_eq(cfg.tcp_window_mb, 4);
    ck_assert_int_eq(cfg.sched.method, SCHED_STREAMING);
    ck_assert_int_eq(cfg.sched.layers, 12);
    ck_assert_int_eq(cfg.sched.H, 30);
    ck_assert_int_eq(cfg.sched.P, 3);
    ck_assert_int_eq(cfg.sched.layout, SCHED_SEQUENTIAL);
    ck_assert_int_eq(cfg.sched.order, SCHED_ROTATED);
    ck_assert_int_eq(cfg.sched.tau, 5);
    ck_assert_double_eq(cfg.sched.alpha, 0.75);
    ck_assert_int_eq(cfg.codec.kind, CODEC_E3M0);
    ck_assert_uint_eq(cfg.codec.block, 128);
    ck_assert_int_eq(cfg.dp_codec.kind, CODEC_FP32);
    ck_assert_uint_eq(cfg.dp_codec.block, 0);
    ck_assert_double_eq(cfg.faults.mtbf_s, 7200);
    ck_assert_double_eq(cfg.faults.mttr_s, 1800);
    ck_assert_int_eq(cfg.faults.dist, FAULTS_WEIBULL);
    ck_assert_double_eq(cfg.faults.weibull_shape, 2.5);
    ck_assert_ptr_null(cfg.faults.trace);
    ck_assert_str_eq(cfg.trace_path, "");
    ck_assert_int_eq(cfg.checkpoint_steps, 50);
    ck_assert_double_eq(cfg.recovery_bytes_per_param, 2);
    ck_assert_int_eq(cfg.steps, 12345);
    ck_assert_uint_eq(cfg.seed, 9007199254740992ull);
}
END_TEST

START_TEST(test_enum_names) {
    /* Every name of every enum is accepted. */
    static const char *const codecs[] = {"fp32", "bf16", "fp16", "fp8_e4m3",
                                         "e3m0", "e2m1", "uint8"};
    char json[256];
    for (int k = 0; k < 7; k++) {
        snprintf(json, sizeof json,
                 "{\"method\": {\"codec\": \"%s\", \"dp_codec\": \"%s\"}}",
                 codecs[k], codecs[k]);
        load_ok(json, NULL, 0);
        ck_assert_int_eq(cfg.codec.kind, k);
        ck_assert_int_eq(cfg.dp_codec.kind, k);
    }
    load_ok("{\"network\": {\"collective\": \"all_to_all\"}}", NULL, 0);
    ck_assert_int_eq(cfg.collective, COLL_ALL_TO_ALL);
    load_ok("{\"network\": {\"collective\": \"ring\"}}", NULL, 0);
    ck_assert_int_eq(cfg.collective, COLL_RING);
    load_ok("{\"faults\": {\"distribution\": \"exponential\"}}", NULL, 0);
    ck_assert_int_eq(cfg.faults.dist, FAULTS_EXPONENTIAL);
    load_ok("{\"model\": {\"backward_order\": \"activations_first\"}}", NULL,
            0);
    ck_assert_int_eq(cfg.bwd_order, SCN_ACT_FIRST);
    load_ok("{\"method\": {\"layout\": \"strided\", \"order\": \"ascending\"}}",
            NULL, 0);
    ck_assert_int_eq(cfg.sched.layout, SCHED_STRIDED);
    ck_assert_int_eq(cfg.sched.order, SCHED_ASCENDING);
}
END_TEST

START_TEST(test_methods_normalized) {
    /* DP and DiLoCo ignore fragments and tau (sched_normalize overwrites
     * them) rather than rejecting them. */
    load_ok("{\"method\": {\"name\": \"dp\", \"H\": 4, \"fragments\": 8, "
            "\"tau\": 7, \"alpha\": 0.9}}",
            NULL, 0);
    ck_assert_int_eq(cfg.sched.method, SCHED_DP);
    ck_assert_int_eq(cfg.sched.H, 1);
    ck_assert_int_eq(cfg.sched.P, 1);
    ck_assert_int_eq(cfg.sched.tau, 0);
    ck_assert_double_eq(cfg.sched.alpha, 0);
    load_ok("{\"method\": {\"name\": \"diloco\", \"H\": 4, \"fragments\": 8, "
            "\"tau\": 7}}",
            NULL, 0);
    ck_assert_int_eq(cfg.sched.method, SCHED_DILOCO);
    ck_assert_int_eq(cfg.sched.H, 4);
    ck_assert_int_eq(cfg.sched.P, 1);
    ck_assert_int_eq(cfg.sched.tau, 0);
    /* The largest tau and P = H = layers are fine. */
    load_ok("{\"model\": {\"layers\": 4}, \"method\": {\"H\": 4, "
            "\"fragments\": 4}}",
            NULL, 0);
    ck_assert_int_eq(cfg.sched.P, 4);
    load_ok("{\"method\": {\"H\": 100, \"fragments\": 8, \"tau\": 11}}", NULL,
            0);
    ck_assert_int_eq(cfg.sched.tau, 11);
}
END_TEST

START_TEST(test_per_worker_forms) {
    /* One number for every worker. */
    load_ok("{\"workers\": {\"count\": 4, \"speed\": 0.5},\n"
            " \"network\": {\"bandwidth_gbps\": 2.5, \"latency_ms\": 7}}",
            NULL, 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq(cfg.speed[i], 0.5);
        ck_assert_double_eq(cfg.up_gbps[i], 2.5);
        ck_assert_double_eq(cfg.down_gbps[i], 2.5);
        ck_assert_double_eq(cfg.latency_ms[i], 7);
    }
    /* "inf" for every worker. */
    load_ok("{\"network\": {\"bandwidth_gbps\": \"inf\"}}", NULL, 0);
    for (int i = 0; i < 2; i++) {
        ck_assert(isinf(cfg.up_gbps[i]) && cfg.up_gbps[i] > 0);
        ck_assert(isinf(cfg.down_gbps[i]) && cfg.down_gbps[i] > 0);
    }
    /* Arrays of workers.count values, "inf" among them; up/down override
     * bandwidth_gbps whatever the order in the file. */
    load_ok(
        "{\"network\": {\"up_gbps\": [1, \"inf\"], \"down_gbps\": \"inf\",\n"
        "  \"bandwidth_gbps\": [3, 4], \"latency_ms\": [0, 2.5]},\n"
        " \"workers\": {\"speed\": [2, 3], \"count\": 2}}",
        NULL, 0);
    ck_assert_double_eq(cfg.up_gbps[0], 1);
    ck_assert(isinf(cfg.up_gbps[1]));
    ck_assert(isinf(cfg.down_gbps[0]) && isinf(cfg.down_gbps[1]));
    ck_assert_double_eq(cfg.latency_ms[0], 0);
    ck_assert_double_eq(cfg.latency_ms[1], 2.5);
    ck_assert_double_eq(cfg.speed[0], 2);
    ck_assert_double_eq(cfg.speed[1], 3);
    /* bandwidth alone fills both directions. */
    load_ok("{\"network\": {\"bandwidth_gbps\": [3, \"inf\"]}}", NULL, 0);
    ck_assert_double_eq(cfg.up_gbps[0], 3);
    ck_assert_double_eq(cfg.down_gbps[0], 3);
    ck_assert(isinf(cfg.up_gbps[1]) && isinf(cfg.down_gbps[1]));
    /* The largest group. */
    char json[8192];
    int n = snprintf(json, sizeof json,
                     "{\"workers\": {\"count\": %d, "
                     "\"speed\": [",
                     SCN_MAX_WORKERS);
    for (int i = 0; i < SCN_MAX_WORKERS; i++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s%d", i ? ", " : "",
                      i + 1);
    snprintf(json + n, sizeof json - (size_t)n, "]}}");
    load_ok(json, NULL, 0);
    ck_assert_int_eq(cfg.workers, SCN_MAX_WORKERS);
    ck_assert_double_eq(cfg.speed[SCN_MAX_WORKERS - 1], SCN_MAX_WORKERS);
}
END_TEST

START_TEST(test_flop_step_time) {
    load_ok("{\"model\": {\"params\": 1e9, \"tokens_per_step\": 2097152,\n"
            "  \"chips\": 256, \"peak_tflops\": 989, \"mfu\": 0.4}}",
            NULL, 0);
    ck_assert_double_eq(cfg.step_time_s, 0);
    ck_assert_double_eq(cfg.tokens_per_step, 2097152);
    ck_assert_double_eq(cfg.chips, 256);
    ck_assert_double_eq(cfg.peak_tflops, 989);
    ck_assert_double_eq(cfg.mfu, 0.4);
    double want = 6 * 1e9 * 2097152 / (256 * 989e12 * 0.4);
    ck_assert_double_eq_tol(scn_step_time_s(&cfg), want, 1e-15 * want);
    /* mfu may be exactly 1. */
    load_ok("{\"model\": {\"params\": 1e6, \"tokens_per_step\": 1000,\n"
            "  \"chips\": 1, \"peak_tflops\": 1, \"mfu\": 1}}",
            NULL, 0);
    ck_assert_double_eq_tol(scn_step_time_s(&cfg), 6e9 / 1e12, 1e-18);
}
END_TEST

START_TEST(test_split_defaults) {
    /* Missing members default to 1/3: the others must make up the rest. */
    load_ok("{\"model\": {\"split\": {\"forward\": 0.3333333333333333,\n"
            "  \"backward_activations\": 0.3333333333333333}}}",
            NULL, 0);
    ck_assert_double_eq(cfg.split[2], 1.0 / 3);
    load_ok("{\"model\": {\"split\": {\"forward\": 1, "
            "\"backward_activations\": 0, \"backward_parameters\": 0}}}",
            NULL, 0);
    ck_assert_double_eq(cfg.split[0], 1);
    /* An empty split is the default. */
    load_ok("{\"model\": {\"split\": {}}}", NULL, 0);
    ck_assert_double_eq(cfg.split[1], 1.0 / 3);
    /* Within 1e-9 of 1 is accepted. */
    load_ok("{\"model\": {\"split\": {\"forward\": 0.2, "
            "\"backward_activations\": 0.3, "
            "\"backward_parameters\": 0.5000000005}}}",
            NULL, 0);
}
END_TEST

START_TEST(test_overrides) {
    /* A number, replacing the file's value; the last override wins. */
    const char *s1[] = {"steps=500", "seed=7", "seed=8"};
    load_ok(TOP("\"steps\": 10"), s1, 3);
    ck_assert_int_eq(cfg.steps, 500);
    ck_assert_uint_eq(cfg.seed, 8);
    /* Not JSON: a string ("inf" included). */
    const char *s2[] = {"method.name=diloco", "network.bandwidth_gbps=inf",
                        "method.codec=e2m1"};
    load_ok("{\"method\": {\"name\": \"dp\"}}", s2, 3);
    ck_assert_int_eq(cfg.sched.method, SCHED_DILOCO);
    ck_assert(isinf(cfg.up_gbps[0]) && isinf(cfg.down_gbps[1]));
    ck_assert_int_eq(cfg.codec.kind, CODEC_E2M1);
    /* A quoted JSON string is a string too. */
    const char *s3[] = {"method.name=\"dp\""};
    load_ok("{}", s3, 1);
    ck_assert_int_eq(cfg.sched.method, SCHED_DP);
    /* An array element. */
    const char *s4[] = {"workers.speed.1=0.5", "network.latency_ms.0=3"};
    load_ok("{\"workers\": {\"count\": 3, \"speed\": [1, 1, 1]},\n"
            " \"network\": {\"latency_ms\": [1, 2, 3]}}",
            s4, 2);
    ck_assert_double_eq(cfg.speed[0], 1);
    ck_assert_double_eq(cfg.speed[1], 0.5);
    ck_assert_double_eq(cfg.speed[2], 1);
    ck_assert_double_eq(cfg.latency_ms[0], 3);
    /* Missing objects are created, two levels deep if need be. */
    const char *s5[] = {"faults.mtbf_hours=10",
                        "workers.stragglers.probability=0.25",
                        "model.split.forward=0.5",
                        "model.split.backward_activations=0.25",
                        "model.split.backward_parameters=0.25"};
    load_ok("{}", s5, 5);
    ck_assert_double_eq(cfg.faults.mtbf_s, 36000);
    ck_assert_double_eq(cfg.straggler_prob, 0.25);
    ck_assert_double_eq(cfg.split[0], 0.5);
    /* A JSON array or object as the value. */
    const char *s6[] = {"workers.speed=[0.5, 2]",
                        "network={\"collective\": \"star\"}"};
    load_ok("{\"network\": {\"collective\": \"ring\"}}", s6, 2);
    ck_assert_double_eq(cfg.speed[1], 2);
    ck_assert_int_eq(cfg.collective, COLL_STAR);
    /* Only the first '=' splits; an empty value is the empty string. */
    const char *s7[] = {"name=a=b", "description="};
    load_ok("{}", s7, 2);
    /* Overrides come before validation: they can repair a file. */
    const char *s8[] = {"workers.count=3"};
    load_ok("{\"workers\": {\"speed\": [1, 2, 3]}}", s8, 1);
    ck_assert_int_eq(cfg.workers, 3);
}
END_TEST

/* Writes text to dir/name; returns the path in a static buffer. */
static const char *write_file(const char *dir, const char *name,
                              const char *text) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

START_TEST(test_files) {
    char dir[] = "/tmp/test_scenario_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[1100], want[1200];

    /* A relative trace path is taken from the scenario's directory (the
     * loader reads the trace: it must exist). */
    snprintf(path, sizeof path, "%s/traces", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    write_file(dir, "traces/t.txt", "10 down\n");
    write_file(dir, "t.txt", "# no failures\n");
    snprintf(path, sizeof path, "%s",
             write_file(dir, "a.json",
                        "{\"faults\": {\"trace\": "
                        "\"traces/t.txt\"}}\n"));
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/traces/t.txt", dir);
    ck_assert_str_eq(cfg.trace_path, want);
    ck_assert_ptr_null(cfg.faults.trace);
    /* An absolute one is kept; mtbf_hours 0 goes with a trace. */
    snprintf(want, sizeof want,
             "{\"faults\": {\"trace\": \"%s/t.txt\", "
             "\"mtbf_hours\": 0}}",
             dir);
    snprintf(path, sizeof path, "%s", write_file(dir, "b.json", want));
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/t.txt", dir);
    ck_assert_str_eq(cfg.trace_path, want);
    /* From a string: relative to the working directory, as given. */
    char cwd[1024];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(dir), 0);
    int rc = load("{\"faults\": {\"trace\": \"t.txt\"}}", NULL, 0);
    ck_assert_str_eq(cfg.trace_path, "t.txt");
    ck_assert_ptr_null(cfg.faults.trace);
    /* A file name without a directory part. */
    int rc2 = scn_load("a.json", NULL, 0, &cfg, err, sizeof err);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(rc2, 0);
    ck_assert_str_eq(cfg.trace_path, "traces/t.txt");

    /* Errors name the file as given. */
    snprintf(path, sizeof path, "%s",
             write_file(dir, "c.json", "{\n  \"steps\": 0\n}\n"));
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:2:12: steps: 0 is out of range "
             "(expected an integer in 1..1000000000000)",
             path);
    ck_assert_str_eq(err, want);

    /* A missing file, a directory. */
    snprintf(path, sizeof path, "%s/missing.json", dir);
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory",
             path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(scn_load(dir, NULL, 0, &cfg, err, sizeof err), MSG_EINPUT);
    snprintf(want, sizeof want, "%s: cannot read: Is a directory", dir);
    ck_assert_str_eq(err, want);

    /* A NUL byte inside the file. */
    snprintf(path, sizeof path, "%s/nul.json", dir);
    FILE *f = fopen(path, "wb");
    fwrite("{\n  \"a\0\": 1}", 1, 12, f);
    fclose(f);
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want, "%s:2:5: syntax error (NUL byte in input)",
             path);
    ck_assert_str_eq(err, want);

    /* An empty file. */
    snprintf(path, sizeof path, "%s", write_file(dir, "e.json", ""));
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:1:1: syntax error (empty input; "
             "expected a JSON object)",
             path);
    ck_assert_str_eq(err, want);

    const char *names[] = {"a.json", "b.json", "c.json",       "nul.json",
                           "e.json", "t.txt",  "traces/t.txt", "traces"};
    for (int k = 0; k < 8; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        remove(path);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_text_details) {
    /* A UTF-8 byte order mark is skipped. */
    load_ok("\xEF\xBB\xBF{\"steps\": 3}", NULL, 0);
    ck_assert_int_eq(cfg.steps, 3);
    /* Columns count characters, not bytes. */
    FAIL("{\"name\": \"\xC3\xA9t\xC3\xA9\", \"x\": 1}",
         "s.json:1:17: x: unknown key (expected one of: model, workers, "
         "network, method, faults, train, steps, seed, measure, name, "
         "description, variants, sweep)");
    /* CRLF line ends. */
    FAIL("{\r\n  \"steps\": -1\r\n}\r\n",
         "s.json:2:12: steps: -1 is out of range (expected an integer in "
         "1..1000000000000)");
    /* Messages are one line whatever the keys hold. */
    FAIL("{\"a\\nb\": 1}",
         "s.json:1:2: a?b: unknown key (expected one of: model, workers, "
         "network, method, faults, train, steps, seed, measure, name, "
         "description, variants, sweep)");
    /* Escapes and integers written as 1e3 or 1.0 are fine. */
    load_ok("{\"name\": \"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\",\n"
            " \"steps\": 1e3, \"seed\": 2.0}",
            NULL, 0);
    ck_assert_int_eq(cfg.steps, 1000);
    ck_assert_uint_eq(cfg.seed, 2);
    /* NULL name: "<string>". */
    ck_assert_int_eq(scn_load_string("[]", NULL, NULL, 0, &cfg, err,
                                     sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "<string>:1:1: (root): wrong type: array "
                          "(expected an object)");
    /* A short buffer is cut, never overrun; errlen 0 writes nothing. */
    char small[8] = "xxxxxxx";
    ck_assert_int_eq(scn_load_string("[]", "s.json", NULL, 0, &cfg, small,
                                     sizeof small),
                     MSG_EINPUT);
    ck_assert_str_eq(small, "s.json:");
    ck_assert_int_eq(scn_load_string("[]", "s.json", NULL, 0, &cfg, small, 0),
                     MSG_EINPUT);
    ck_assert_str_eq(small, "s.json:");
}
END_TEST

/* ---------------------------------------------------------------- errors */

START_TEST(test_syntax_errors) {
    FAIL("", "s.json:1:1: syntax error (empty input; expected a JSON object)");
    FAIL("\n  \n ",
         "s.json:3:2: syntax error (empty input; expected a JSON object)");
    /* A trailing comma is reported where it is, not at the end. */
    FAIL("{\n  \"steps\": 1,\n}\n\n\n",
         "s.json:3:1: syntax error (unexpected '}'; expected a string key "
         "after ',')");
    FAIL("{\n  \"workers\": {\"speed\": [1, 2,]}\n}",
         "s.json:2:30: syntax error (unexpected ']'; expected a value)");
    FAIL("{\n  \"steps\" 1\n}",
         "s.json:2:11: syntax error (unexpected '1'; expected ':')");
    FAIL("{\n  \"steps\": 1\n  \"seed\": 2\n}",
         "s.json:3:3: syntax error (unexpected '\"'; expected ',' or '}')");
    FAIL("{\n  \"workers\": {\"speed\": [1 2]}\n}",
         "s.json:2:27: syntax error (unexpected '2'; expected ',' or ']')");
    FAIL("{\n  steps: 1\n}",
         "s.json:2:3: syntax error (unexpected 's'; expected a string key "
         "or '}')");
    FAIL("{\n  \"name\": \"abc\n}",
         "s.json:2:15: syntax error (raw control character 0x0a in string; "
         "expected an escape such as \\n)");
    FAIL("{\n  \"name\": \"abc",
         "s.json:2:11: syntax error (unterminated string)");
    FAIL("{\n  \"name\": \"a\\qb\"\n}",
         "s.json:2:13: syntax error (invalid escape; expected one of \\\" "
         "\\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    FAIL("{\n  \"name\": \"\\ud800x\"\n}",
         "s.json:2:12: syntax error (unpaired UTF-16 surrogate in \\u "
         "escape)");
    FAIL("{\n  \"steps\": 012\n}",
         "s.json:2:12: syntax error (invalid number)");
    FAIL("{\n  \"steps\": 1.\n}", "s.json:2:12: syntax error (invalid number)");
    FAIL("{\n  \"steps\": 1.2.3\n}",
         "s.json:2:12: syntax error (invalid number)");
    FAIL("{\n  \"steps\": +1\n}",
         "s.json:2:12: syntax error (unexpected '+'; expected a value)");
    FAIL("{\n  \"steps\": 1e\n}", "s.json:2:12: syntax error (invalid number)");
    FAIL("{\"steps\": 1000000000000000000000000000000000000000000000000000000"
         "00000000000}",
         "s.json:1:11: syntax error (number longer than 63 characters)");
    FAIL("{\n  \"steps\": tru\n}",
         "s.json:2:12: syntax error (invalid literal; expected true, false "
         "or null)");
    FAIL("{\n  \"steps\": NaN\n}",
         "s.json:2:12: syntax error (unexpected 'N'; expected a value)");
    FAIL("{\n  \"steps\": 1\n",
         "s.json:3:1: syntax error (unexpected end of input; expected ',' or "
         "'}')");
    FAIL("{\"steps\": \x01}",
         "s.json:1:11: syntax error (unexpected byte 0x01; expected a "
         "value)");
    /* Trailing garbage. */
    FAIL("{\n  \"steps\": 1\n}\n}\n",
         "s.json:4:1: syntax error (unexpected '}' after the document; "
         "expected end of input)");
    FAIL("{} x", "s.json:1:4: syntax error (unexpected 'x' after the document; "
                 "expected end of input)");
    /* Too deep. */
    char deep[256] = "{\"name\": ";
    for (int i = 0; i < 101; i++) strcat(deep, "[");
    FAIL(deep, "s.json:1:109: syntax error (nesting deeper than 100 levels)");
}
END_TEST

START_TEST(test_root_and_types) {
    FAIL("\n  [1, 2]",
         "s.json:2:3: (root): wrong type: array (expected an object)");
    FAIL("3", "s.json:1:1: (root): wrong type: number (expected an object)");
    FAIL(TOP("\"model\": 5"),
         "s.json:2:12: model: wrong type: number (expected an object)");
    FAIL(TOP("\"workers\": []"),
         "s.json:2:14: workers: wrong type: array (expected an object)");
    FAIL(IN("model", "\"params\": \"1e9\""),
         "s.json:3:15: model.params: wrong type: string (expected a number in "
         "(0, 1e+15])");
    FAIL(IN("model", "\"layers\": true"),
         "s.json:3:15: model.layers: wrong type: boolean (expected an "
         "integer in 1..100000)");
    FAIL(IN("method", "\"name\": 1"),
         "s.json:3:13: method.name: wrong type: number (expected one of: dp, "
         "diloco, streaming, sparta)");
    FAIL(TOP("\"name\": null"),
         "s.json:2:11: name: wrong type: null (expected a string)");
    FAIL(TOP("\"description\": {}"),
         "s.json:2:18: description: wrong type: object (expected a string)");
    FAIL(IN("model", "\"split\": [0.3, 0.3, 0.4]"),
         "s.json:3:14: model.split: wrong type: array (expected an object)");
    FAIL(IN("workers", "\"stragglers\": 0.1"),
         "s.json:3:19: workers.stragglers: wrong type: number (expected an "
         "object)");
    FAIL(IN("faults", "\"trace\": 1"),
         "s.json:3:14: faults.trace: wrong type: number (expected a string)");
    FAIL(IN("workers", "\"speed\": \"fast\""),
         "s.json:3:14: workers.speed: wrong type: string (expected a number "
         "in [0.001, 1000], or an array of workers.count = 2 such values)");
    FAIL(IN("workers", "\"speed\": {}"),
         "s.json:3:14: workers.speed: wrong type: object (expected a number "
         "in [0.001, 1000], or an array of workers.count = 2 such values)");
    FAIL(IN("workers", "\"speed\": [1, \"inf\"]"),
         "s.json:3:18: workers.speed[1]: wrong type: string (expected a "
         "number in [0.001, 1000])");
    FAIL(IN("network", "\"bandwidth_gbps\": \"Inf\""),
         "s.json:3:23: network.bandwidth_gbps: wrong type: string (expected a "
         "number in [1e-06, 1000000000] or \"inf\", or an array of "
         "workers.count = 2 such values)");
    FAIL(IN("network", "\"latency_ms\": \"inf\""),
         "s.json:3:19: network.latency_ms: wrong type: string (expected a "
         "number in [0, 1000000], or an array of workers.count = 2 such "
         "values)");
    FAIL(IN("network", "\"up_gbps\": [1, [2]]"),
         "s.json:3:20: network.up_gbps[1]: wrong type: array (expected a "
         "number in [1e-06, 1000000000] or \"inf\")");
}
END_TEST

START_TEST(test_unknown_keys) {
    FAIL(TOP("\"steps\": 5,\n  \"step\": 5"),
         "s.json:3:3: step: unknown key (did you mean steps? expected one "
         "of: model, workers, "
         "network, method, faults, train, steps, seed, measure, name, "
         "description, variants, sweep)");
    FAIL(IN("model", "\"Params\": 1"),
         "s.json:3:5: model.Params: unknown key (did you mean model.params? "
         "expected one of: params, "
         "layers, step_time_s, tokens_per_step, chips, peak_tflops, mfu, "
         "split, backward_order, hidden, host_gbps)");
    FAIL(IN("model", "\"split\": {\"fwd\": 1}"),
         "s.json:3:15: model.split.fwd: unknown key (expected one of: "
         "forward, backward_activations, backward_parameters)");
    FAIL(IN("workers", "\"M\": 2"),
         "s.json:3:5: workers.M: unknown key (expected one of: count, speed, "
         "sites, stragglers, power_w)");
    FAIL(IN("workers", "\"stragglers\": {\"p\": 0.5}"),
         "s.json:3:20: workers.stragglers.p: unknown key (expected one of: "
         "probability, slowdown)");
    FAIL(IN("network", "\"bandwidth\": 1"),
         "s.json:3:5: network.bandwidth: unknown key (expected one of: "
         "bandwidth_gbps, up_gbps, down_gbps, latency_ms, collective, "
         "reduce_order, gbit, tcp_window_mb, transport, completion, "
         "tcp_init_window_kb, "
         "tcp_slow_start_after_idle, efficiency, collective_overhead_ms, "
         "startup_ms, ack_bytes_per_kb, queue_ms, "
         "latency_matrix_ms, ring_order, bandwidth_trace, site_allreduce, "
         "joules_per_gb)");
    FAIL(IN("method", "\"P\": 4"),
         "s.json:3:5: method.P: unknown key (expected one of: name, H, "
         "fragments, layout, order, tau, overlap, rule, alpha, "
         "subset_fraction, codec, "
         "codec_block, k_fraction, rank, demo_chunk, demo_topk, "
         "demo_beta, dp_codec, late, sync_timeout_s, "
         "dp_bucket_mb, "
         "bucket_mb, offload_outer, quorum)");
    FAIL(IN("faults", "\"mtbf\": 4"),
         "s.json:3:5: faults.mtbf: unknown key (expected one of: mtbf_hours, "
         "mttr_hours, distribution, weibull_shape, trace, checkpoint_steps, "
         "recovery_bytes_per_param, checkpoint_every_steps, checkpoint_s, "
         "restart_s, membership_trace)");
    /* Reported even when an earlier section has no error, in document
     * order within an object. */
    FAIL("{\n  \"model\": {\"x\": 1, \"y\": 2}\n}",
         "s.json:2:13: model.x: unknown key (expected one of: params, "
         "layers, step_time_s, tokens_per_step, chips, peak_tflops, mfu, "
         "split, backward_order, hidden, host_gbps)");
}
END_TEST

START_TEST(test_duplicate_keys) {
    FAIL(TOP("\"steps\": 5,\n  \"seed\": 1,\n  \"steps\": 6"),
         "s.json:4:3: steps: duplicate key (first given at 2:3)");
    FAIL(IN("method", "\"H\": 5, \"H\": 5"),
         "s.json:3:13: method.H: duplicate key (first given at 3:5)");
    FAIL("{\"model\": {}, \"model\": {}}",
         "s.json:1:15: model: duplicate key (first given at 1:2)");
}
END_TEST

START_TEST(test_numbers) {
    /* Non-integers. */
    FAIL(IN("workers", "\"count\": 2.5"),
         "s.json:3:14: workers.count: 2.5 is not an integer (expected an "
         "integer in 1..256)");
    FAIL(TOP("\"steps\": 1e-3"),
         "s.json:2:12: steps: 0.001 is not an integer (expected an integer "
         "in 1..1000000000000)");
    FAIL(IN("method", "\"H\": 10.5"),
         "s.json:3:10: method.H: 10.5 is not an integer (expected an "
         "integer in 1..2147483647)");
    /* Non-finite. */
    FAIL(IN("model", "\"params\": 1e999"),
         "s.json:3:15: model.params: not a finite number (expected a number "
         "in (0, 1e+15])");
    FAIL(IN("network", "\"latency_ms\": [1, -1e999]"),
         "s.json:3:23: network.latency_ms[1]: not a finite number (expected a "
         "number in [0, 1000000])");
    FAIL(IN("network", "\"bandwidth_gbps\": 1e400"),
         "s.json:3:23: network.bandwidth_gbps: not a finite number (expected "
         "a number in [1e-06, 1000000000] or \"inf\", or an array of "
         "workers.count = 2 such values)");
    FAIL(TOP("\"seed\": 1e999"),
         "s.json:2:11: seed: not a finite number (expected an integer in "
         "0..9007199254740992)");
    /* Hours that overflow once in seconds. */
    FAIL(IN("faults", "\"mttr_hours\": 1e306"),
         "s.json:3:19: faults.mttr_hours: 1e+306 is out of range (expected a "
         "number in (0, 1000000])");
}
END_TEST

/* Each range of the schema, at or past both ends. */
/* method.tau per worker: the schedule takes the least, each worker its
 * own extra; DP and DiLoCo have none; the largest is the one checked. */
START_TEST(test_per_worker_tau) {
    load_ok("{\"workers\": {\"count\": 3}, \"method\": {\"H\": 100, "
            "\"fragments\": 8, \"tau\": [2, 5, 3]}}",
            NULL, 0);
    ck_assert_int_eq(cfg.sched.tau, 2);
    ck_assert_int_eq(cfg.tau_extra[0], 0);
    ck_assert_int_eq(cfg.tau_extra[1], 3);
    ck_assert_int_eq(cfg.tau_extra[2], 1);
    load_ok("{\"workers\": {\"count\": 3}, \"method\": {\"name\": \"diloco\", "
            "\"tau\": [2, 5, 3]}}",
            NULL, 0);
    ck_assert_int_eq(cfg.sched.tau, 0);
    ck_assert_int_eq(cfg.tau_extra[1], 0);
    FAIL("{\n  \"workers\": {\"count\": 2},\n  \"method\": {\"H\": 10, "
         "\"tau\": [1, 10]}\n}",
         "s.json:3:30: method.tau: tau must be in 0..H-1 = 9 (got 10)");
    FAIL("{\n  \"workers\": {\"count\": 2},\n  \"method\": {\"tau\": [1]}\n}",
         "s.json:3:21: method.tau: array of 1 values (expected workers.count "
         "= 2 values)");
}
END_TEST

START_TEST(test_ranges) {
    /* model */
    FAIL(IN("model", "\"params\": 0"),
         "s.json:3:15: model.params: 0 is out of range (expected a number in "
         "(0, 1e+15])");
    FAIL(IN("model", "\"layers\": 0"),
         "s.json:3:15: model.layers: 0 is out of range (expected an integer "
         "in 1..100000)");
    FAIL(IN("model", "\"layers\": 100001"),
         "s.json:3:15: model.layers: 100001 is out of range (expected an "
         "integer in 1..100000)");
    FAIL(IN("model", "\"step_time_s\": 0"),
         "s.json:3:20: model.step_time_s: 0 is out of range (expected a "
         "number in [1e-09, 1000000])");
    FAIL(IN("model", "\"tokens_per_step\": -1"),
         "s.json:3:24: model.tokens_per_step: -1 is out of range (expected a "
         "number in (0, 1e+15])");
    FAIL(IN("model", "\"chips\": 0"),
         "s.json:3:14: model.chips: 0 is out of range (expected a number in "
         "(0, 1000000000])");
    FAIL(IN("model", "\"peak_tflops\": -0.5"),
         "s.json:3:20: model.peak_tflops: -0.5 is out of range (expected a "
         "number in (0, 1000000000])");
    FAIL(IN("model", "\"mfu\": 0"),
         "s.json:3:12: model.mfu: 0 is out of range (expected a number in "
         "(0, 1])");
    FAIL(IN("model", "\"mfu\": 1.01"),
         "s.json:3:12: model.mfu: 1.01 is out of range (expected a number in "
         "(0, 1])");
    FAIL(IN("model", "\"split\": {\"forward\": -0.5}"),
         "s.json:3:26: model.split.forward: -0.5 is out of range (expected a "
         "number in [0, 1])");
    FAIL(IN("model", "\"hidden\": -1"),
         "s.json:3:15: model.hidden: -1 is out of range (expected an integer "
         "in 0..1e+15)");
    /* workers */
    FAIL(IN("workers", "\"count\": 0"),
         "s.json:3:14: workers.count: 0 is out of range (expected an integer "
         "in 1..256)");
    FAIL(IN("workers", "\"count\": 257"),
         "s.json:3:14: workers.count: 257 is out of range (expected an "
         "integer in 1..256)");
    FAIL(IN("workers", "\"speed\": 0"),
         "s.json:3:14: workers.speed: 0 is out of range (expected a number in "
         "[0.001, 1000], or an array of workers.count = 2 such values)");
    FAIL(IN("workers", "\"speed\": [1,\n      -2]"),
         "s.json:4:7: workers.speed[1]: -2 is out of range (expected a number "
         "in [0.001, 1000])");
    FAIL(IN("workers", "\"stragglers\": {\"probability\": 1.5}"),
         "s.json:3:35: workers.stragglers.probability: 1.5 is out of range "
         "(expected a number in [0, 1])");
    FAIL(IN("workers", "\"stragglers\": {\"probability\": -0.1}"),
         "s.json:3:35: workers.stragglers.probability: -0.1 is out of range "
         "(expected a number in [0, 1])");
    FAIL(IN("workers", "\"stragglers\": {\"slowdown\": 0.5}"),
         "s.json:3:32: workers.stragglers.slowdown: 0.5 is out of range "
         "(expected a number in [1, 1000])");
    /* network */
    FAIL(IN("network", "\"bandwidth_gbps\": 0"),
         "s.json:3:23: network.bandwidth_gbps: 0 is out of range (expected a "
         "number in [1e-06, 1000000000] or \"inf\", or an array of "
         "workers.count = 2 such values)");
    FAIL(IN("network", "\"up_gbps\": [1, -1]"),
         "s.json:3:20: network.up_gbps[1]: -1 is out of range (expected a "
         "number in [1e-06, 1000000000] or \"inf\")");
    FAIL(IN("network", "\"down_gbps\": 0"),
         "s.json:3:18: network.down_gbps: 0 is out of range (expected a "
         "number in [1e-06, 1000000000] or \"inf\", or an array of "
         "workers.count = 2 such values)");
    FAIL(IN("network", "\"latency_ms\": -1"),
         "s.json:3:19: network.latency_ms: -1 is out of range (expected a "
         "number in [0, 1000000], or an array of workers.count = 2 such "
         "values)");
    FAIL(IN("network", "\"tcp_window_mb\": -1"),
         "s.json:3:22: network.tcp_window_mb: -1 is out of range (expected a "
         "number in [0, 1000000])");
    /* method */
    FAIL(IN("method", "\"H\": 0"),
         "s.json:3:10: method.H: 0 is out of range (expected an integer in "
         "1..2147483647)");
    FAIL(IN("method", "\"H\": 2147483648"),
         "s.json:3:10: method.H: 2147483648 is out of range (expected an "
         "integer in 1..2147483647)");
    FAIL(IN("method", "\"fragments\": 0"),
         "s.json:3:18: method.fragments: 0 is out of range (expected an "
         "integer in 1..2147483647)");
    FAIL(IN("method", "\"tau\": -1"),
         "s.json:3:12: method.tau: -1 is out of range (expected an integer "
         "in 0..2147483647, or an array of workers.count = 2 such values)");
    FAIL(IN("method", "\"alpha\": 1.5"),
         "s.json:3:14: method.alpha: 1.5 is out of range (expected a number "
         "in [0, 1])");
    FAIL(IN("method", "\"alpha\": -0.25"),
         "s.json:3:14: method.alpha: -0.25 is out of range (expected a "
         "number in [0, 1])");
    FAIL(IN("method", "\"codec_block\": -1"),
         "s.json:3:20: method.codec_block: -1 is out of range (expected an "
         "integer in 0..1e+15)");
    FAIL(IN("method", "\"rank\": 0"),
         "s.json:3:13: method.rank: 0 is out of range (expected an integer "
         "in 1..65536)");
    FAIL(IN("method", "\"rank\": 65537"),
         "s.json:3:13: method.rank: 65537 is out of range (expected an "
         "integer in 1..65536)");
    FAIL(IN("method", "\"demo_chunk\": 0"),
         "s.json:3:19: method.demo_chunk: 0 is out of range (expected an "
         "integer in 1..65536)");
    FAIL(IN("method", "\"demo_topk\": 0"),
         "s.json:3:18: method.demo_topk: 0 is out of range (expected an "
         "integer in 1..65536)");
    FAIL(IN("method", "\"demo_beta\": 1.5"),
         "s.json:3:18: method.demo_beta: 1.5 is out of range (expected a "
         "number in [0, 1])");
    FAIL(IN("method", "\"demo_chunk\": 4, \"demo_topk\": 5"),
         "s.json:3:35: method.demo_topk: 5 coefficients of a chunk of 4 "
         "(expected at most method.demo_chunk)");
    FAIL(IN("method", "\"demo_chunk\": 4"),
         "s.json:3:19: method.demo_topk: 8 coefficients of a chunk of 4 "
         "(expected at most method.demo_chunk)");
    FAIL(IN("method", "\"late\": \"sometimes\""),
         "s.json:3:13: method.late: unknown value \"sometimes\" (expected "
         "one of: wait, continue)");
    FAIL(IN("method", "\"sync_timeout_s\": -1"),
         "s.json:3:23: method.sync_timeout_s: -1 is out of range (expected a "
         "number in [0, 1000000000])");
    FAIL(IN("train", "\"target_loss\": -0.5"),
         "s.json:3:20: train.target_loss: -0.5 is out of range (expected a "
         "number in [0, 1000000])");
    /* faults */
    FAIL(IN("faults", "\"mtbf_hours\": -1"),
         "s.json:3:19: faults.mtbf_hours: -1 is out of range (expected a "
         "number in [0, 1000000])");
    FAIL(IN("faults", "\"mttr_hours\": 0"),
         "s.json:3:19: faults.mttr_hours: 0 is out of range (expected a "
         "number in (0, 1000000])");
    FAIL(IN("faults", "\"weibull_shape\": 0"),
         "s.json:3:22: faults.weibull_shape: 0 is out of range (expected a "
         "number in [0.01, 1000])");
    FAIL(IN("faults", "\"checkpoint_steps\": 0"),
         "s.json:3:25: faults.checkpoint_steps: 0 is out of range (expected "
         "an integer in 1..9007199254740992)");
    FAIL(IN("faults", "\"recovery_bytes_per_param\": -4"),
         "s.json:3:33: faults.recovery_bytes_per_param: -4 is out of range "
         "(expected a number in [0, 1000])");
    /* top level */
    FAIL(TOP("\"steps\": 0"),
         "s.json:2:12: steps: 0 is out of range (expected an integer in "
         "1..1000000000000)");
    FAIL(TOP("\"steps\": 1000000000001"),
         "s.json:2:12: steps: 1000000000001 is out of range (expected an "
         "integer in 1..1000000000000)");
    FAIL(TOP("\"seed\": -1"),
         "s.json:2:11: seed: -1 is out of range (expected an integer in "
         "0..9007199254740992)");
    FAIL(TOP("\"seed\": 9007199254740994"),
         "s.json:2:11: seed: 9007199254740994 is out of range (expected an "
         "integer in 0..9007199254740992)");
    /* The ends themselves are fine. */
    load_ok("{\"steps\": 1000000000000, \"seed\": 0, \"model\": {\"layers\": "
            "100000, \"params\": 1000, \"hidden\": 0, \"mfu\": 1, \"chips\": "
            "1, \"peak_tflops\": 1, \"tokens_per_step\": 1},\n \"workers\": "
            "{\"count\": 1, \"stragglers\": {\"probability\": 1, "
            "\"slowdown\": 1}}, \"method\": {\"alpha\": 0, \"tau\": 0},\n "
            "\"network\": {\"latency_ms\": 0, \"tcp_window_mb\": 0}}",
            NULL, 0);
    ck_assert_int_eq(cfg.steps, 1000000000000);
}
END_TEST

START_TEST(test_array_lengths) {
    FAIL(IN("workers", "\"speed\": [1, 2, 3]"),
         "s.json:3:14: workers.speed: array of 3 values (expected "
         "workers.count = 2 values)");
    FAIL("{\n  \"workers\": {\"count\": 3},\n"
         "  \"network\": {\"bandwidth_gbps\": [1, 2]}\n}",
         "s.json:3:33: network.bandwidth_gbps: array of 2 values (expected "
         "workers.count = 3 values)");
    FAIL(IN("network", "\"latency_ms\": []"),
         "s.json:3:19: network.latency_ms: array of 0 values (expected "
         "workers.count = 2 values)");
    FAIL(IN("network", "\"up_gbps\": [1]"),
         "s.json:3:16: network.up_gbps: array of 1 values (expected "
         "workers.count = 2 values)");
    FAIL(IN("network", "\"down_gbps\": [1, 2, 3]"),
         "s.json:3:18: network.down_gbps: array of 3 values (expected "
         "workers.count = 2 values)");
}
END_TEST

/* The network keys beyond the ideal model: defaults, what loads, and
 * every error at the value that causes it. */
START_TEST(test_network_keys) {
    load_ok("{}", NULL, 0);
    ck_assert_int_eq(cfg.transport, SCN_TRANSPORT_IDEAL);
    ck_assert_int_eq(cfg.completion, SCN_COMPLETION_GROUP);
    ck_assert(cfg.tcp_init_window_kb == 14.48 && cfg.tcp_slow_start_after_idle);
    ck_assert(cfg.efficiency == 1 && cfg.collective_overhead_ms == 0);
    ck_assert(cfg.dp_bucket_mb == 25 && cfg.bucket_mb == 25 &&
              !cfg.offload_outer && cfg.host_gbps == 256);
    ck_assert(!cfg.has_latency_matrix && !cfg.has_ring_order);
    ck_assert_int_eq(cfg.ring_order[1], 1);
    load_ok(IN("network", "\"latency_matrix_ms\": [[0, 3], [3, 0]], "
                          "\"ring_order\": [1, 0], \"transport\": \"tcp\""),
            NULL, 0);
    ck_assert(cfg.has_latency_matrix && cfg.has_ring_order);
    ck_assert(scn_latency_ms(&cfg, 0, 1) == 3 &&
              scn_latency_ms(&cfg, 1, 1) == 0);
    ck_assert_int_eq(cfg.ring_order[0], 1);
    ck_assert_int_eq(cfg.transport, SCN_TRANSPORT_TCP);
    FAIL(IN("network", "\"ring_order\": [1, 1]"),
         "s.json:3:19: network.ring_order: worker 1 given twice (expected a "
         "permutation of 0..1)");
    FAIL(IN("network", "\"ring_order\": [0, 5]"),
         "s.json:3:19: network.ring_order: worker 5 does not exist (expected a "
         "permutation of 0..1)");
    FAIL(
        IN("network", "\"latency_matrix_ms\": [[0, 3], [2, 0]]"),
        "s.json:3:36: network.latency_matrix_ms[1][0]: 2 ms but [0][1] is 3 ms "
        "(expected a symmetric matrix)");
    FAIL(
        IN("network", "\"latency_matrix_ms\": [[1, 3], [3, 0]]"),
        "s.json:3:28: network.latency_matrix_ms[0][0]: 1 ms (expected 0 on the "
        "diagonal)");
    FAIL(IN("network", "\"latency_matrix_ms\": [[0, 3]]"),
         "s.json:3:26: network.latency_matrix_ms: array of 1 values (expected "
         "workers.count = 2 arrays of 2 numbers)");
    FAIL(IN("network", "\"latency_matrix_ms\": [[0, 3], 5]"),
         "s.json:3:35: network.latency_matrix_ms[1]: wrong type: number "
         "(expected "
         "an array of workers.count = 2 numbers)");
    FAIL(
        IN("network",
           "\"latency_ms\": 1, \"latency_matrix_ms\": [[0, 3], [3, 0]]"),
        "s.json:3:43: network.latency_matrix_ms: cannot be given together with "
        "latency_ms (expected one of latency_ms and latency_matrix_ms)");
    FAIL("{\"workers\": {\"count\": 65}, \"network\": {\"latency_matrix_ms\": "
         "[[0]]}}",
         "s.json:1:61: network.latency_matrix_ms: given for 65 workers "
         "(expected "
         "at most 64 workers)");
    FAIL(IN("network", "\"completion\": \"member\"}, \"method\": {\"late\": "
                       "\"continue\""),
         "s.json:3:19: network.completion: \"member\" cannot be combined with "
         "method.late \"continue\" (expected \"group\", or late \"wait\")");
    FAIL(IN("network", "\"transport\": \"udp\""),
         "s.json:3:18: network.transport: unknown value \"udp\" (expected one "
         "of: ideal, tcp)");
    FAIL(
        IN("network", "\"efficiency\": 0"),
        "s.json:3:19: network.efficiency: 0 is out of range (expected a number "
        "in (0, 1])");
}
END_TEST

START_TEST(test_model_combinations) {
    /* step_time_s with FLOP keys: reported at whichever comes later. */
    FAIL("{\n  \"model\": {\n    \"step_time_s\": 0.2,\n"
         "    \"chips\": 8\n  }\n}",
         "s.json:4:14: model.chips: cannot be given together with "
         "step_time_s (expected either step_time_s, or tokens_per_step, "
         "chips, peak_tflops and mfu)");
    FAIL("{\n  \"model\": {\n    \"tokens_per_step\": 1e6, \"chips\": 8,\n"
         "    \"peak_tflops\": 900, \"mfu\": 0.5, \"step_time_s\": 0.2\n"
         "  }\n}",
         "s.json:4:52: model.step_time_s: cannot be given together with "
         "tokens_per_step (expected either step_time_s, or tokens_per_step, "
         "chips, peak_tflops and mfu)");
    /* Incomplete FLOP keys: at the model's brace. */
    FAIL("{\n  \"model\": {\n    \"tokens_per_step\": 1e6, \"chips\": 8,\n"
         "    \"mfu\": 0.5\n  }\n}",
         "s.json:2:12: model.peak_tflops: missing: tokens_per_step, chips, "
         "peak_tflops and mfu go together (expected either step_time_s, or "
         "tokens_per_step, chips, peak_tflops and mfu)");
    FAIL(IN("model", "\"mfu\": 0.5"),
         "s.json:2:12: model.tokens_per_step: missing: tokens_per_step, "
         "chips, peak_tflops and mfu go together (expected either "
         "step_time_s, or tokens_per_step, chips, peak_tflops and mfu)");
    /* split */
    FAIL("{\n  \"model\": {\n    \"split\": {\"forward\": 0.5,\n"
         "              \"backward_activations\": 0.5,\n"
         "              \"backward_parameters\": 0.5}\n  }\n}",
         "s.json:3:14: model.split: shares sum to 1.5 (expected forward + "
         "backward_activations + backward_parameters = 1)");
    FAIL(IN("model", "\"split\": {\"forward\": 0.5}"),
         "s.json:3:14: model.split: shares sum to 1.1666666666666665 (expected "
         "forward + backward_activations + backward_parameters = 1)");
}
END_TEST

START_TEST(test_schedule_errors) {
    FAIL("{\n  \"method\": {\n    \"H\": 4,\n    \"fragments\": 8,\n"
         "    \"rule\": \"torchft\"\n  }\n}",
         "s.json:4:18: method.fragments: fragments must be in 1..H = 4 "
         "under the torchft rule (got 8)");
    FAIL("{\n  \"method\": {\n    \"H\": 100, \"fragments\": 8,\n"
         "    \"tau\": 12, \"rule\": \"torchft\"\n  }\n}",
         "s.json:4:12: method.tau: tau must be in 0..floor(H/P)-1 = 11 "
         "(got 12)");
    FAIL("{\n  \"method\": {\n    \"H\": 100, \"fragments\": 8,\n"
         "    \"tau\": 100\n  }\n}",
         "s.json:4:12: method.tau: tau must be in 0..H-1 = 99 (got 100)");
    FAIL("{\n  \"method\": {\n    \"H\": 100, \"overlap\": \"outer\",\n"
         "    \"tau\": 1\n  }\n}",
         "s.json:4:12: method.tau: tau must be 0 with outer overlap (got 1)");
    FAIL("{\n  \"model\": {\"layers\": 4},\n"
         "  \"method\": {\"H\": 100, \"fragments\": 8}\n}",
         "s.json:3:37: method.fragments: fragments must be in 1..layers = 4 "
         "(got 8)");
    /* Given by an override: the override is named. */
    FAIL_SET("{\n  \"method\": {\"H\": 100}\n}", "method.fragments=101",
             "--set method.fragments=101: method.fragments: fragments must "
             "be in 1..layers = 24 (got 101)");
}
END_TEST

START_TEST(test_enum_errors) {
    FAIL(IN("method", "\"codec\": \"int4\""),
         "s.json:3:14: method.codec: unknown value \"int4\" (expected one "
         "of: fp32, bf16, fp16, fp8_e4m3, e3m0, e2m1, uint8, topk, int8, "
         "powersgd, "
         "demo)");
    FAIL(IN("method", "\"dp_codec\": \"BF16\""),
         "s.json:3:17: method.dp_codec: unknown value \"BF16\" (expected one "
         "of: fp32, bf16, fp16, fp8_e4m3, e3m0, e2m1, uint8, topk, int8, "
         "powersgd, "
         "demo)");
    FAIL(IN("method", "\"name\": \"sdiloco\""),
         "s.json:3:13: method.name: unknown value \"sdiloco\" (expected one "
         "of: dp, diloco, streaming, sparta)");
    FAIL(IN("method", "\"layout\": \"interleaved\""),
         "s.json:3:15: method.layout: unknown value \"interleaved\" "
         "(expected one of: sequential, strided, sliced)");
    FAIL(IN("method", "\"order\": \"descending\""),
         "s.json:3:14: method.order: unknown value \"descending\" (expected "
         "one of: ascending, rotated)");
    FAIL(IN("network", "\"collective\": \"tree\""),
         "s.json:3:19: network.collective: unknown value \"tree\" (expected "
         "one of: ring, all_to_all, star)");
    FAIL(IN("faults", "\"distribution\": \"gamma\""),
         "s.json:3:21: faults.distribution: unknown value \"gamma\" "
         "(expected one of: exponential, weibull)");
    FAIL(IN("model", "\"backward_order\": \"random\""),
         "s.json:3:23: model.backward_order: unknown value \"random\" "
         "(expected one of: activations_first, parameters_first)");
}
END_TEST

START_TEST(test_fault_errors) {
    FAIL("{\n  \"faults\": {\n    \"mtbf_hours\": 5,\n"
         "    \"trace\": \"t.txt\"\n  }\n}",
         "s.json:4:14: faults.trace: cannot be used together with "
         "mtbf_hours > 0 (expected either a trace file or random failures)");
    FAIL("{\n  \"faults\": {\n    \"trace\": \"t.txt\",\n"
         "    \"mtbf_hours\": 5\n  }\n}",
         "s.json:4:19: faults.mtbf_hours: must be 0 when a trace is given "
         "(expected either a trace file or random failures)");
    FAIL(IN("faults", "\"trace\": \"\""),
         "s.json:3:14: faults.trace: empty path (expected a file name)");
    char json[2200], longp[1100];
    memset(longp, 'a', 1024);
    longp[1024] = 0;
    snprintf(json, sizeof json, "{\"faults\": {\"trace\": \"%s\"}}", longp);
    FAIL(json, "s.json:1:22: faults.trace: path too long (expected at most "
               "1023 bytes once resolved)");
    /* 1023 bytes fit the buffer, but not the OS (a name over NAME_MAX):
     * an input error at the key, found by the loader. */
    longp[1023] = 0;
    snprintf(json, sizeof json, "{\"faults\": {\"trace\": \"%s\"}}", longp);
    ck_assert_int_eq(load(json, NULL, 0), MSG_EINPUT);
    ck_assert_msg(strncmp(err, "s.json:1:22: faults.trace: aaaa", 31) == 0 &&
                      strstr(err, ": cannot open: File name too long"),
                  "%s", err);
}
END_TEST

START_TEST(test_set_errors) {
    /* Malformed overrides. */
    FAIL_SET("{}", "steps",
             "--set steps: missing '=' (expected key.path=value)");
    FAIL_SET("{}", "=5", "--set =5: empty key (expected key.path=value)");
    FAIL_SET("{}", "model..params=5",
             "--set model..params=5: empty key segment (expected "
             "key.path=value)");
    FAIL_SET("{}", ".steps=5",
             "--set .steps=5: empty key segment (expected key.path=value)");
    FAIL_SET("{}", "model.=5",
             "--set model.=5: empty key segment (expected key.path=value)");
    /* Bad values they bring. */
    FAIL_SET("{\n  \"workers\": {\"count\": 2}\n}", "workers.count=0",
             "--set workers.count=0: workers.count: 0 is out of range "
             "(expected an integer in 1..256)");
    FAIL_SET("{}", "steps=many",
             "--set steps=many: steps: wrong type: string (expected an "
             "integer in 1..1000000000000)");
    FAIL_SET("{}", "steps=1e999",
             "--set steps=1e999: steps: not a finite number (expected an "
             "integer in 1..1000000000000)");
    FAIL_SET("{}", "steps=012",
             "--set steps=012: steps: wrong type: string (expected an integer "
             "in 1..1000000000000)");
    FAIL_SET("{}", "model.foo=1",
             "--set model.foo=1: model.foo: unknown key (expected one of: "
             "params, layers, step_time_s, tokens_per_step, chips, "
             "peak_tflops, mfu, split, backward_order, hidden, host_gbps)");
    FAIL_SET("{\"model\": {}}", "model.foo=1",
             "--set model.foo=1: model.foo: unknown key (expected one of: "
             "params, layers, step_time_s, tokens_per_step, chips, "
             "peak_tflops, mfu, split, backward_order, hidden, host_gbps)");
    FAIL_SET("{}", "modle.params=1",
             "--set modle.params=1: modle: unknown key (did you mean model? "
             "expected one of: "
             "model, workers, network, method, faults, train, steps, seed, "
             "measure, name, description, variants, sweep)");
    FAIL_SET("{}", "workers={\"count\": 2, \"speed\": [1, 0]}",
             "--set workers={\"count\": 2, \"speed\": [1, 0]}: "
             "workers.speed[1]: 0 is out of range (expected a number in "
             "[0.001, 1000])");
    FAIL_SET("{}", "workers.speed=[1, 2, 3]",
             "--set workers.speed=[1, 2, 3]: workers.speed: array of 3 values "
             "(expected workers.count = 2 values)");
    FAIL_SET("{}", "method.name=sdiloco",
             "--set method.name=sdiloco: method.name: unknown value "
             "\"sdiloco\" (expected one of: dp, diloco, streaming, sparta)");
    /* Paths that do not fit the document. */
    FAIL_SET("{\"workers\": {\"speed\": [1, 2]}}", "workers.speed.2=1",
             "--set workers.speed.2=1: workers.speed: no element \"2\" "
             "(expected an index in 0..1)");
    FAIL_SET("{\"workers\": {\"speed\": [1, 2]}}", "workers.speed.x=1",
             "--set workers.speed.x=1: workers.speed: no element \"x\" "
             "(expected an index in 0..1)");
    FAIL_SET("{\"workers\": {\"speed\": []}}", "workers.speed.0=1",
             "--set workers.speed.0=1: workers.speed: no element \"0\" (the "
             "array is empty)");
    FAIL_SET("{}", "workers.speed.1=0.5",
             "--set workers.speed.1=0.5: workers.speed: missing (expected an "
             "existing array to index)");
    FAIL_SET("{\"workers\": {\"speed\": 1}}", "workers.speed.1=0.5",
             "--set workers.speed.1=0.5: workers.speed: wrong type: number "
             "(expected an object or an array to hold \"1\")");
    FAIL_SET("{\"steps\": 5}", "steps.x.y=1",
             "--set steps.x.y=1: steps: wrong type: number (expected an "
             "object or an array to hold \"x\")");
    /* Cross-field errors in what an override made. */
    FAIL_SET("{}", "model.chips=8",
             "--set model.chips=8: model.tokens_per_step: missing: "
             "tokens_per_step, chips, peak_tflops and mfu go together "
             "(expected either step_time_s, or tokens_per_step, chips, "
             "peak_tflops and mfu)");
    FAIL_SET("{\n  \"model\": {\"step_time_s\": 0.2}\n}", "model.chips=8",
             "--set model.chips=8: model.chips: cannot be given together "
             "with step_time_s (expected either step_time_s, or "
             "tokens_per_step, chips, peak_tflops and mfu)");
    FAIL_SET("{\n  \"faults\": {\"trace\": \"t.txt\"}\n}",
             "faults.mtbf_hours=3",
             "--set faults.mtbf_hours=3: faults.mtbf_hours: must be 0 when a "
             "trace is given (expected either a trace file or random "
             "failures)");
    /* The first bad override is named, among several. */
    const char *sets[] = {"steps=5", "seed=-1", "name=x"};
    load_fail_at(__LINE__, "{}", sets, 3,
                 "--set seed=-1: seed: -1 is out of range (expected an "
                 "integer in 0..9007199254740992)");
}
END_TEST

/* ------------------------------------------------------------------
 * Variants and the sweep section
 */

static char vdir[64];

/* Writes json to a scenario file of its own and returns its path. */
static const char *scenario_file(const char *json) {
    if (!vdir[0]) {
        snprintf(vdir, sizeof vdir, "/tmp/test_scenario_v_XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(vdir));
    }
    return write_file(vdir, "v.json", json);
}

/* Removes what scenario_file made (teardown of the variants tests). */
static void drop_scenario_dir(void) {
    char path[128];
    if (!vdir[0]) return;
    snprintf(path, sizeof path, "%s/v.json", vdir);
    unlink(path);
    rmdir(vdir);
    vdir[0] = 0;
}

static int load_v(const char *json, const char *variant,
                  const char *const *sets, int nset) {
    const char *path = scenario_file(json);
    err[0] = 0;
    return scn_load_variant(path, variant, sets, nset, &cfg, err, sizeof err);
}

static void load_v_ok(int line, const char *json, const char *variant,
                      const char *const *sets, int nset) {
    const char *path = scenario_file(json);
    err[0] = 0;
    int rc =
        scn_load_train(path, variant, sets, nset, &cfg, &sec, err, sizeof err);
    ck_assert_msg(rc == 0, "line %d: unexpected error: %s", line, err);
}
#define V_OK(json, variant) load_v_ok(__LINE__, json, variant, NULL, 0)

/* Expects the load of variant to fail with "PATH" + msg. */
static void load_v_fail(int line, const char *json, const char *variant,
                        const char *const *sets, int nset, const char *msg) {
    char want[2048];
    int rc = load_v(json, variant, sets, nset);
    snprintf(want, sizeof want, "%s/v.json%s", vdir, msg);
    ck_assert_msg(rc == MSG_EINPUT, "line %d: accepted, expected: %s", line,
                  want);
    ck_assert_msg(strcmp(err, want) == 0, "line %d:\n   got: %s\nwanted: %s",
                  line, err, want);
}
#define V_FAIL(json, variant, msg)                                             \
    load_v_fail(__LINE__, json, variant, NULL, 0, msg)

static const char variants_doc[] =
    "{\n"
    "  \"model\": {\"params\": 1e9, \"layers\": 24, \"step_time_s\": 0.1},\n"
    "  \"network\": {\"bandwidth_gbps\": [10, 1], \"latency_ms\": 5},\n"
    "  \"method\": {\"name\": \"streaming\", \"H\": 100, \"fragments\": 8,\n"
    "             \"tau\": 1, \"codec\": \"e3m0\"},\n"
    "  \"steps\": 50,\n"
    "  \"variants\": {\n"
    "    \"dp\": {\"method\": {\"name\": \"dp\"}},\n"
    "    \"fast-1.b\": {\"network\": {\"bandwidth_gbps\": 100},\n"
    "                 \"steps\": 7},\n"
    "    \"slow_step\": {\"model\": {\"step_time_s\": 0.2},\n"
    "                  \"faults\": {\"mtbf_hours\": 2}}\n"
    "  },\n"
    "  \"sweep\": {\"network.bandwidth_gbps\": \"logspace:-1:3:50\",\n"
    "            \"method.codec\": [\"e3m0\", \"bf16\"]}\n"
    "}\n";

START_TEST(test_variants_merge) {
    scn_config base, v;
    /* The base ignores both sections; scn_load is the base variant. */
    V_OK(variants_doc, NULL);
    base = cfg;
    ck_assert_int_eq(base.sched.method, SCHED_STREAMING);
    ck_assert_double_eq(base.up_gbps[0], 10);
    ck_assert_double_eq(base.up_gbps[1], 1);
    ck_assert_int_eq(base.steps, 50);
    ck_assert_int_eq(scn_load(scenario_file(variants_doc), NULL, 0, &v, err,
                              sizeof err),
                     0);
    ck_assert(memcmp(&v, &base, sizeof v) == 0);

    /* Objects merge key by key: H, codec, network stay. */
    V_OK(variants_doc, "dp");
    ck_assert_int_eq(cfg.sched.method, SCHED_DP);
    ck_assert_int_eq(cfg.codec.kind, CODEC_E3M0);
    ck_assert_double_eq(cfg.up_gbps[1], 1);
    ck_assert_double_eq(cfg.latency_ms[0], 5);
    ck_assert_int_eq(cfg.steps, 50);

    /* Anything else replaces: an array by a number, a number. */
    V_OK(variants_doc, "fast-1.b");
    ck_assert_int_eq(cfg.sched.method, SCHED_STREAMING);
    ck_assert_double_eq(cfg.up_gbps[0], 100);
    ck_assert_double_eq(cfg.down_gbps[1], 100);
    ck_assert_double_eq(cfg.latency_ms[1], 5);
    ck_assert_int_eq(cfg.steps, 7);

    /* A section the base lacks is added. */
    V_OK(variants_doc, "slow_step");
    ck_assert_double_eq(cfg.step_time_s, 0.2);
    ck_assert_double_eq(cfg.params, 1e9);
    ck_assert_double_eq(cfg.faults.mtbf_s, 7200);

    /* Overrides come after the variant. */
    const char *sets[] = {"steps=9", "method.name=diloco"};
    load_v_ok(__LINE__, variants_doc, "fast-1.b", sets, 2);
    ck_assert_int_eq(cfg.steps, 9);
    ck_assert_int_eq(cfg.sched.method, SCHED_DILOCO);
    ck_assert_double_eq(cfg.up_gbps[0], 100);

    /* Unknown variants. */
    V_FAIL(variants_doc, "fast",
           ": variants: unknown variant \"fast\" (expected one of: dp, "
           "fast-1.b, slow_step)");
    V_FAIL("{\"steps\": 5}", "dp",
           ": variants: unknown variant \"dp\" (the scenario has no "
           "variants)");
    V_FAIL("{\"variants\": {}}", "dp",
           ": variants: unknown variant \"dp\" (the scenario has no "
           "variants)");
    /* The file's own errors come first. */
    V_FAIL("{\"steps\": 5,}", "dp",
           ":1:13: syntax error (unexpected '}'; expected a string key after "
           "',')");
}
END_TEST

START_TEST(test_variant_errors) {
    /* Messages about what a variant set point into the variant and name
     * it by its place in the file. */
    V_FAIL("{\"variants\": {\"v\": {\"method\": {\"name\": \"dpx\"}}}}", "v",
           ":1:40: variants.v.method.name: unknown value \"dpx\" (expected "
           "one of: dp, diloco, streaming, sparta)");
    V_FAIL("{\"method\": {\"H\": 10},\n"
           " \"variants\": {\"v\": {\"method\": {\"nmae\": 1}}}}",
           "v",
           ":2:32: variants.v.method.nmae: unknown key (did you mean "
           "method.name? expected one of: "
           "name, H, fragments, layout, order, tau, overlap, rule, alpha, "
           "subset_fraction, codec, "
           "codec_block, k_fraction, rank, demo_chunk, demo_topk, "
           "demo_beta, dp_codec, late, sync_timeout_s, "
           "dp_bucket_mb, "
           "bucket_mb, offload_outer, quorum)");
    V_FAIL("{\"network\": {},\n \"variants\": {\"v\": {\"network\": 5}}}", "v",
           ":2:32: variants.v.network: wrong type: number (expected an "
           "object)");
    /* ... and what the base set keeps its place. */
    V_FAIL("{\"steps\": 0, \"variants\": {\"v\": {\"seed\": 2}}}", "v",
           ":1:11: steps: 0 is out of range (expected an integer in "
           "1..1000000000000)");
    /* A variant counts as later than the base in conflicts. */
    V_FAIL("{\"model\": {\"step_time_s\": 0.1},\n"
           " \"variants\": {\"v\": {\"model\": {\"tokens_per_step\": 1,"
           " \"chips\": 1, \"peak_tflops\": 1, \"mfu\": 1}}}}",
           "v",
           ":2:50: variants.v.model.tokens_per_step: cannot be given "
           "together with step_time_s (expected either step_time_s, or "
           "tokens_per_step, chips, peak_tflops and mfu)");
    V_FAIL("{\"model\": {\"tokens_per_step\": 1, \"chips\": 1,"
           " \"peak_tflops\": 1, \"mfu\": 1},\n"
           " \"variants\": {\"v\": {\"model\": {\"step_time_s\": 1}}}}",
           "v",
           ":2:46: variants.v.model.step_time_s: cannot be given together "
           "with tokens_per_step (expected either step_time_s, or "
           "tokens_per_step, chips, peak_tflops and mfu)");
    /* Duplicates inside a variant, at its top and in a merged object. */
    V_FAIL("{\"variants\": {\"v\": {\"steps\": 1, \"steps\": 2}}}", "v",
           ":1:33: variants.v.steps: duplicate key (first given at 1:21)");
    V_FAIL("{\"method\": {},\n"
           " \"variants\": {\"v\": {\"method\": {\"tau\": 0, \"tau\": 1}}}}",
           "v",
           ":2:42: variants.v.method.tau: duplicate key (first given at "
           "2:32)");
    /* ... and in an object the variant brings whole. */
    V_FAIL("{\"variants\": {\"v\": {\"faults\": {\"mttr_hours\": 1, "
           "\"mttr_hours\": 2}}}}",
           "v",
           ":1:49: variants.v.faults.mttr_hours: duplicate key (first given "
           "at 1:32)");
    /* A variant holds scenario keys only. */
    V_FAIL("{\"variants\": {\"v\": {\"variants\": {}}}}", "v",
           ":1:21: variants.v.variants: not allowed in a variant (expected "
           "scenario keys)");
    V_FAIL("{\"variants\": {\"v\": {\"sweep\": {}}}}", "v",
           ":1:21: variants.v.sweep: not allowed in a variant (expected "
           "scenario keys)");
    /* Overrides are named as such. */
    const char *sets[] = {"steps=0"};
    ck_assert_int_eq(load_v("{\"variants\": {\"v\": {\"steps\": 3}}}", "v",
                            sets, 1),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "--set steps=0: steps: 0 is out of range "
                          "(expected an integer in 1..1000000000000)");
}
END_TEST

START_TEST(test_section_shapes) {
    /* The base ignores what the sections hold... */
    load_ok("{\"variants\": {\"a\": {\"method\": {\"name\": \"bogus\"}}},\n"
            " \"sweep\": {\"steps\": \"whatever\", \"x.y\": [1, \"a\", true]}}",
            NULL, 0);
    /* ... but not their shapes. */
    static const char *const cases[][2] = {
        {TOP("\"variants\": 3"), "s.json:2:15: variants: wrong type: number "
                                 "(expected an object of named variants)"},
        {TOP("\"variants\": {\"a\": 1}"),
         "s.json:2:21: variants.a: wrong "
         "type: number (expected an object of scenario keys)"},
        {TOP("\"variants\": {\"a b\": {}}"),
         "s.json:2:16: variants.a b: "
         "bad variant name (expected 1 to 63 of A-Z a-z 0-9 _ . -)"},
        {TOP("\"variants\": {\"\": {}}"),
         "s.json:2:16: variants.: bad "
         "variant name (expected 1 to 63 of A-Z a-z 0-9 _ . -)"},
        {TOP("\"variants\": {\"a\": {}, \"a\": {}}"),
         "s.json:2:25: "
         "variants.a: duplicate key (first given at 2:16)"},
        {TOP("\"sweep\": []"), "s.json:2:12: sweep: wrong type: array "
                               "(expected an object of key: grid spec)"},
        {TOP("\"sweep\": {\"k\": 3}"),
         "s.json:2:18: sweep.k: wrong type: "
         "number (expected a grid spec string or an array of numbers, "
         "strings or booleans)"},
        {TOP("\"sweep\": {\"k\": []}"),
         "s.json:2:18: sweep.k: empty array "
         "(expected a grid spec string or an array of numbers, strings or "
         "booleans)"},
        {TOP("\"sweep\": {\"k\": [1, [2]]}"),
         "s.json:2:22: sweep.k[1]: "
         "wrong type: array (expected a grid spec string or an array of "
         "numbers, strings or booleans)"},
        {TOP("\"sweep\": {\"k\": [null]}"),
         "s.json:2:19: sweep.k[0]: "
         "wrong type: null (expected a grid spec string or an array of "
         "numbers, strings or booleans)"},
        {TOP("\"sweep\": {\"k\": \"1\", \"k\": \"2\"}"),
         "s.json:2:23: "
         "sweep.k: duplicate key (first given at 2:13)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        load_fail_at(__LINE__, cases[i][0], NULL, 0, cases[i][1]);
    static const char *const bad_keys[] = {"", "a..b", ".a", "a.", "a=b"};
    for (int i = 0; i < 5; i++) {
        char json[128], msg[256];
        snprintf(json, sizeof json, "{\"sweep\": {\"%s\": \"1\"}}",
                 bad_keys[i]);
        snprintf(msg, sizeof msg,
                 "s.json:1:12: sweep.%s: bad key (expected "
                 "a dotted scenario key such as network.bandwidth_gbps, at "
                 "most 127 bytes)",
                 bad_keys[i]);
        load_fail_at(__LINE__, json, NULL, 0, msg);
    }
    /* --set reaches the sections too. */
    FAIL_SET("{}", "variants=[1]",
             "--set variants=[1]: variants: wrong "
             "type: array (expected an object of named variants)");
}
END_TEST

/* {"variants": {"v0": {}, ...}} with n variants; {"sweep": {"k0": "1",
 * ...}} with n keys. */
static char *many(const char *section, const char *fmt, int n) {
    static char json[4096];
    size_t len = (size_t)snprintf(json, sizeof json, "{\"%s\": {", section);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(json + len, sizeof json - len, fmt,
                                i ? ", " : "", i);
    snprintf(json + len, sizeof json - len, "}}");
    return json;
}

START_TEST(test_section_limits) {
    load_ok(many("variants", "%s\"v%d\": {}", SCN_MAX_VARIANTS), NULL, 0);
    FAIL(many("variants", "%s\"v%d\": {}", SCN_MAX_VARIANTS + 1),
         "s.json:1:357: variants.v32: too many keys (expected at most 32)");
    load_ok(many("sweep", "%s\"k%d\": \"1\"", SCN_MAX_SWEEP), NULL, 0);
    FAIL(many("sweep", "%s\"k%d\": \"1\"", SCN_MAX_SWEEP + 1),
         "s.json:1:194: sweep.k16: too many keys (expected at most 16)");
    /* A variant name of 63 characters; 64 is too long. */
    char json[256], name[80];
    memset(name, 'x', 64);
    name[64] = 0;
    snprintf(json, sizeof json, "{\"variants\": {\"%s\": {}}}", name + 1);
    load_ok(json, NULL, 0);
    snprintf(json, sizeof json, "{\"variants\": {\"%s\": {}}}", name);
    char msg[256];
    snprintf(msg, sizeof msg,
             "s.json:1:15: variants.%s: bad variant name "
             "(expected 1 to 63 of A-Z a-z 0-9 _ . -)",
             name);
    load_fail_at(__LINE__, json, NULL, 0, msg);
    /* A spec string, and an array as a comma list, fit SCN_SPEC_MAX. */
    char *big = malloc(SCN_SPEC_MAX + 64);
    ck_assert_ptr_nonnull(big);
    int n = snprintf(big, 32, "{\"sweep\": {\"k\": \"");
    memset(big + n, '1', SCN_SPEC_MAX);
    strcpy(big + n + SCN_SPEC_MAX, "\"}}");
    load_fail_at(__LINE__, big, NULL, 0,
                 "s.json:1:17: sweep.k: too long "
                 "(expected at most 4095 bytes)");
    /* 2048 items make 4095 bytes: they fit; one more does not. */
    n = snprintf(big, 32, "{\"sweep\": {\"k\": [");
    for (int i = 0; i < SCN_SPEC_MAX / 2; i++)
        n += sprintf(big + n, "%s1", i ? "," : "");
    strcpy(big + n, "]}}");
    load_ok(big, NULL, 0);
    strcpy(big + n, ",1]}}");
    load_fail_at(__LINE__, big, NULL, 0,
                 "s.json:1:17: sweep.k: too long "
                 "(expected at most 4095 bytes as a comma list)");
    free(big);
}
END_TEST

START_TEST(test_meta) {
    scn_meta m;
    ck_assert_int_eq(scn_meta_load(scenario_file(variants_doc), &m, err,
                                   sizeof err),
                     0);
    ck_assert_int_eq(m.nvariants, 3);
    ck_assert_str_eq(m.variant[0], "dp");
    ck_assert_str_eq(m.variant[1], "fast-1.b");
    ck_assert_str_eq(m.variant[2], "slow_step");
    ck_assert_int_eq(m.nsweep, 2);
    ck_assert_str_eq(m.sweep_key[0], "network.bandwidth_gbps");
    ck_assert_str_eq(m.sweep_spec[0], "logspace:-1:3:50");
    ck_assert_str_eq(m.sweep_key[1], "method.codec");
    ck_assert_str_eq(m.sweep_spec[1], "e3m0,bf16");

    /* Array items as --set values: numbers exactly, strings as they are
     * unless --set or the comma list would read them otherwise. */
    const char *path = scenario_file(
        "{\"sweep\": {\"k\": [0.1, 1e3, -2.5e-7, 0.12067926406393285, "
        "\"e3m0\", \"inf\", \"a,b\", \"1\", \"true\", true, false, \" x\", "
        "\"\", \"q\\\"\", \"[1]\"]}}");
    ck_assert_int_eq(scn_meta_load(path, &m, err, sizeof err), 0);
    ck_assert_int_eq(m.nvariants, 0);
    ck_assert_int_eq(m.nsweep, 1);
    ck_assert_str_eq(m.sweep_spec[0],
                     "0.1,1000,-2.5e-07,0.12067926406393285,e3m0,inf,"
                     "\"a,b\",\"1\",\"true\",true,false,\" x\",\"\","
                     "\"q\\\"\",\"[1]\"");

    /* Only syntax and the sections are checked. */
    path = scenario_file("{\"steps\": -1, \"bogus\": 1}");
    ck_assert_int_eq(scn_meta_load(path, &m, err, sizeof err), 0);
    ck_assert_int_eq(m.nvariants + m.nsweep, 0);

    /* Errors leave *meta untouched. */
    static scn_meta before;
    memset(&m, 0x5a, sizeof m);
    memcpy(&before, &m, sizeof m);
    char want[256];
    path = scenario_file("{\"variants\": {\"a\": []}}");
    ck_assert_int_eq(scn_meta_load(path, &m, err, sizeof err), MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:1:20: variants.a: wrong type: array "
             "(expected an object of scenario keys)",
             path);
    ck_assert_str_eq(err, want);
    path = scenario_file("[1]");
    ck_assert_int_eq(scn_meta_load(path, &m, err, sizeof err), MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:1:1: (root): wrong type: array "
             "(expected an object)",
             path);
    ck_assert_str_eq(err, want);
    path = scenario_file("{\"sweep\": {\"k\": 1,}}");
    ck_assert_int_eq(scn_meta_load(path, &m, err, sizeof err), MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:1:19: syntax error (unexpected '}'; "
             "expected a string key after ',')",
             path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(scn_meta_load("/nonexistent/s.json", &m, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "/nonexistent/s.json: cannot open: No such file "
                          "or directory");
    ck_assert(memcmp(&m, &before, sizeof m) == 0);
}
END_TEST

/* ------------------------------------------------------------------
 * The train section
 */

START_TEST(test_train_absent) {
    train_config d;
    train_config_default(&d);
    scn_train dflt;
    scn_train_defaults(&dflt);
    ck_assert_int_eq(dflt.has_train, 0);
    ck_assert(memcmp(&dflt.train, &d, sizeof d) == 0);
    ck_assert_str_eq(dflt.train_data_path, "");
    ck_assert_uint_eq(dflt.train_eval, SCN_EVAL_OUTER);
    /* Without the section the defaults stay, whatever the other keys. */
    load_ok("{\"workers\": {\"count\": 5}, \"steps\": 7, \"seed\": 3}", NULL,
            0);
    ck_assert_int_eq(sec.has_train, 0);
    ck_assert(memcmp(&sec.train, &d, sizeof d) == 0);
}
END_TEST

/* Every field of two train configurations is the same. */
static void same_train(const train_config *a, const train_config *b) {
    ck_assert_int_eq(a->replicas, b->replicas);
    ck_assert_int_eq(a->threads, b->threads);
    ck_assert_uint_eq(a->seed, b->seed);
    ck_assert_int_eq(a->steps, b->steps);
    ck_assert_int_eq(a->batch, b->batch);
    ck_assert_int_eq(a->seq, b->seq);
    ck_assert_int_eq(a->model, b->model);
    ck_assert(memcmp(&a->nn, &b->nn, sizeof a->nn) == 0); /* 7 ints */
    ck_assert(memcmp(&a->toy, &b->toy, sizeof a->toy) == 0);
    ck_assert_ptr_eq(a->custom_ops, b->custom_ops);
    ck_assert_ptr_eq(a->custom_cfg, b->custom_cfg);
    ck_assert_int_eq(a->data.kind, b->data.kind);
    ck_assert_int_eq(a->data.vocab, b->data.vocab);
    ck_assert_int_eq(a->data.successors, b->data.successors);
    ck_assert_double_eq(a->data.skew, b->data.skew);
    ck_assert_uint_eq(a->data.seed, b->data.seed);
    ck_assert_ptr_eq(a->data.path, b->data.path);
    ck_assert_double_eq(a->data.eval_fraction, b->data.eval_fraction);
    ck_assert_int_eq(a->sched.method, b->sched.method);
    ck_assert_int_eq(a->sched.layers, b->sched.layers);
    ck_assert_int_eq(a->sched.H, b->sched.H);
    ck_assert_int_eq(a->sched.P, b->sched.P);
    ck_assert_int_eq(a->sched.tau, b->sched.tau);
    ck_assert_double_eq(a->sched.alpha, b->sched.alpha);
    ck_assert_int_eq(a->sched.layout, b->sched.layout);
    ck_assert_int_eq(a->sched.order, b->sched.order);
    ck_assert_int_eq(a->map, b->map);
    ck_assert_int_eq(a->fedpart, b->fedpart);
    ck_assert_int_eq(a->codec.kind, b->codec.kind);
    ck_assert_uint_eq(a->codec.block, b->codec.block);
    ck_assert_int_eq(a->dp_codec.kind, b->dp_codec.kind);
    ck_assert_uint_eq(a->dp_codec.block, b->dp_codec.block);
    ck_assert_int_eq(a->inner.kind, b->inner.kind);
    ck_assert_double_eq(a->inner.lr, b->inner.lr);
    ck_assert_double_eq(a->inner.lr_min, b->inner.lr_min);
    ck_assert_int_eq(a->inner.warmup, b->inner.warmup);
    ck_assert_int_eq(a->inner.total, b->inner.total);
    ck_assert_int_eq(a->inner.cosine, b->inner.cosine);
    ck_assert_double_eq(a->inner.beta1, b->inner.beta1);
    ck_assert_double_eq(a->inner.beta2, b->inner.beta2);
    ck_assert_double_eq(a->inner.eps, b->inner.eps);
    ck_assert_double_eq(a->inner.weight_decay, b->inner.weight_decay);
    ck_assert_double_eq(a->inner.momentum, b->inner.momentum);
    ck_assert_double_eq(a->inner.clip, b->inner.clip);
    ck_assert_double_eq(a->outer_lr, b->outer_lr);
    ck_assert_double_eq(a->outer_momentum, b->outer_momentum);
    ck_assert_int_eq(a->eval_interval, b->eval_interval);
    ck_assert_int_eq(a->eval_batches, b->eval_batches);
}

START_TEST(test_train_defaults) {
    load_ok("{\"train\": {}}", NULL, 0);
    ck_assert_int_eq(sec.has_train, 1);
    ck_assert_uint_eq(sec.train_eval, SCN_EVAL_OUTER);
    ck_assert_str_eq(sec.train_data_path, "");
    /* train_config_default, but for the scenario's own keys (with the
     * scenario's defaults) and the data's vocab, the model's. */
    train_config want;
    train_config_default(&want);
    want.replicas = 2;
    want.steps = 1000;
    want.seed = want.data.seed = 1;
    want.data.vocab = want.nn.vocab;
    want.sched = (sched_spec){.method = SCHED_STREAMING,
                              .layers = 4,
                              .H = 100,
                              .P = 1,
                              .tau = 0,
                              .alpha = 0.5,
                              .layout = SCHED_STRIDED,
                              .order = SCHED_ASCENDING};
    want.codec = want.dp_codec = CODEC_SPEC(CODEC_BF16, 0);
    same_train(&sec.train, &want);
    /* The timing half is as without the section. */
    scn_config plain = cfg;
    load_ok("{}", NULL, 0);
    ck_assert(memcmp(&plain, &cfg, offsetof(scn_config, digest)) == 0);
}
END_TEST

static const char train_full[] =
    "{\n"
    "  \"workers\": {\"count\": 3},\n"
    "  \"method\": {\"name\": \"streaming\", \"H\": 24, \"fragments\": 3,\n"
    "             \"layout\": \"sequential\", \"order\": \"rotated\",\n"
    "             \"tau\": 2, \"alpha\": 0.25, \"codec\": \"e3m0\",\n"
    "             \"codec_block\": 64, \"dp_codec\": \"fp16\"},\n"
    "  \"steps\": 480, \"seed\": 7,\n"
    "  \"train\": {\n"
    "    \"model\": {\"kind\": \"transformer\", \"vocab\": 512, \"d\": 96,\n"
    "              \"heads\": 6, \"layers\": 6, \"ctx\": 128,\n"
    "              \"mlp_ratio\": 2},\n"
    "    \"data\": {\"kind\": \"markov\", \"vocab\": 300, \"successors\": 8,\n"
    "             \"skew\": 0.25},\n"
    "    \"batch\": 12, \"seq\": 96,\n"
    "    \"inner\": {\"optimizer\": \"sgd\", \"lr\": 0.05, \"lr_min\": 0.01,\n"
    "              \"warmup\": 30, \"cosine\": false, \"total\": 400,\n"
    "              \"beta1\": 0.8, \"beta2\": 0.99, \"eps\": 1e-6,\n"
    "              \"weight_decay\": 0.01, \"momentum\": 0.5, \"clip\": 0},\n"
    "    \"outer\": {\"lr\": 0.4, \"momentum\": 0},\n"
    "    \"units\": \"own\",\n"
    "    \"eval_interval\": 0, \"eval_batches\": 9,\n"
    "    \"eval\": [\"average\", \"replica\"],\n"
    "    \"threads\": 3, \"fedpart\": true\n"
    "  }\n"
    "}\n";

START_TEST(test_train_full) {
    load_ok(train_full, NULL, 0);
    ck_assert_int_eq(sec.has_train, 1);
    ck_assert_uint_eq(sec.train_eval,
                      SCN_EVAL_OUTER | SCN_EVAL_REPLICA | SCN_EVAL_AVERAGE);
    train_config want;
    train_config_default(&want);
    want.replicas = 3;
    want.threads = 3;
    want.seed = 7;
    want.steps = 480;
    want.batch = 12;
    want.seq = 96;
    want.nn = (nn_config){.kind = NN_TRANSFORMER,
                          .vocab = 512,
                          .d = 96,
                          .heads = 6,
                          .layers = 6,
                          .ctx = 128,
                          .mlp_ratio = 2};
    want.data = (data_config){.kind = DATA_MARKOV,
                              .vocab = 300,
                              .successors = 8,
                              .skew = 0.25,
                              .seed = 7,
                              .path = NULL,
                              .eval_fraction = 0.1};
    /* 6 blocks + 2 with units own */
    want.sched = (sched_spec){.method = SCHED_STREAMING,
                              .layers = 8,
                              .H = 24,
                              .P = 3,
                              .tau = 2,
                              .alpha = 0.25,
                              .layout = SCHED_SEQUENTIAL,
                              .order = SCHED_ROTATED};
    want.map = TRAIN_MAP_OWN;
    want.fedpart = 1;
    want.codec = CODEC_SPEC(CODEC_E3M0, 64);
    want.dp_codec = CODEC_SPEC(CODEC_FP16, 0);
    want.inner = (optim_config){.kind = OPTIM_SGD,
                                .lr = 0.05,
                                .lr_min = 0.01,
                                .warmup = 30,
                                .total = 400,
                                .cosine = 0,
                                .beta1 = 0.8,
                                .beta2 = 0.99,
                                .eps = 1e-6,
                                .weight_decay = 0.01,
                                .momentum = 0.5,
                                .clip = 0};
    want.outer_lr = 0.4;
    want.outer_momentum = 0;
    want.eval_interval = 0;
    want.eval_batches = 9;
    same_train(&sec.train, &want);

    /* The same through overrides of an empty section, and the other
     * enum values. */
    const char *sets[] = {"train.model.kind=mlp",
                          "train.inner.optimizer=adamw",
                          "train.units=join",
                          "train.eval=[\"outer\"]",
                          "train.inner.cosine=true",
                          "method.name=dp",
                          "workers.count=64"};
    load_ok("{\"train\": {}}", sets, 7);
    ck_assert_int_eq(sec.train.nn.kind, NN_MLP);
    ck_assert_int_eq(sec.train.inner.kind, OPTIM_ADAMW);
    ck_assert_int_eq(sec.train.map, TRAIN_MAP_JOIN);
    ck_assert_uint_eq(sec.train_eval, SCN_EVAL_OUTER);
    ck_assert_int_eq(sec.train.inner.cosine, 1);
    ck_assert_int_eq(sec.train.replicas, 64);
    /* DP: the normalised schedule, the whole model one fragment. */
    ck_assert_int_eq(sec.train.sched.method, SCHED_DP);
    ck_assert_int_eq(sec.train.sched.H, 1);
    ck_assert_int_eq(sec.train.sched.P, 1);
    /* An empty eval list still evaluates the outer parameters. */
    load_ok("{\"train\": {\"eval\": []}}", NULL, 0);
    ck_assert_uint_eq(sec.train_eval, SCN_EVAL_OUTER);
    /* The largest fragment counts: every block; every unit with own. */
    load_ok("{\"method\": {\"H\": 8, \"fragments\": 4},\n"
            " \"train\": {\"model\": {\"layers\": 4}}}",
            NULL, 0);
    ck_assert_int_eq(sec.train.sched.P, 4);
    load_ok("{\"method\": {\"H\": 8, \"fragments\": 6},\n"
            " \"train\": {\"model\": {\"layers\": 4}, \"units\": \"own\"}}",
            NULL, 0);
    ck_assert_int_eq(sec.train.sched.layers, 6);
    /* A MLP ignores ctx and heads. */
    load_ok("{\"train\": {\"model\": {\"kind\": \"mlp\", \"d\": 30, "
            "\"heads\": 7, \"ctx\": 4}, \"seq\": 100}}",
            NULL, 0);
    ck_assert_int_eq(sec.train.seq, 100);
}
END_TEST

START_TEST(test_train_errors) {
    /* Shapes, unknown keys, types. */
    FAIL(TOP("\"train\": 1"),
         "s.json:2:12: train: wrong type: number (expected an object)");
    FAIL(IN("train", "\"optimizer\": \"sgd\""),
         "s.json:3:5: train.optimizer: unknown key (expected one of: model, "
         "data, batch, seq, inner, outer, units, eval_interval, "
         "eval_batches, eval, threads, fedpart, target_loss)");
    FAIL(IN("train", "\"model\": {\"width\": 4}"),
         "s.json:3:15: train.model.width: unknown key (expected one of: "
         "kind, vocab, d, heads, layers, ctx, mlp_ratio)");
    FAIL(IN("train", "\"data\": {\"file\": \"a.txt\"}"),
         "s.json:3:14: train.data.file: unknown key (expected one of: kind, "
         "vocab, successors, skew, path, eval_fraction)");
    FAIL(IN("train", "\"inner\": {\"beta\": 0.9}"),
         "s.json:3:15: train.inner.beta: unknown key (expected one of: "
         "optimizer, lr, lr_min, warmup, cosine, total, beta1, beta2, eps, "
         "weight_decay, momentum, clip)");
    FAIL(IN("train", "\"outer\": {\"mu\": 0.9}"),
         "s.json:3:15: train.outer.mu: unknown key (expected one of: lr, "
         "momentum)");
    FAIL(IN("train", "\"model\": {\"kind\": \"rnn\"}"),
         "s.json:3:23: train.model.kind: unknown value \"rnn\" (expected one "
         "of: transformer, mlp)");
    FAIL(IN("train", "\"data\": {\"kind\": 1}"),
         "s.json:3:22: train.data.kind: wrong type: number (expected one of: "
         "markov, text)");
    FAIL(IN("train", "\"inner\": {\"optimizer\": \"adam\"}"),
         "s.json:3:28: train.inner.optimizer: unknown value \"adam\" "
         "(expected one of: adamw, sgd)");
    FAIL(IN("train", "\"units\": \"shared\""),
         "s.json:3:14: train.units: unknown value \"shared\" (expected one "
         "of: join, own)");
    FAIL(IN("train", "\"fedpart\": 1"),
         "s.json:3:16: train.fedpart: wrong type: number (expected true or "
         "false)");
    FAIL(IN("train", "\"inner\": {\"cosine\": \"yes\"}"),
         "s.json:3:25: train.inner.cosine: wrong type: string (expected "
         "true or false)");
    FAIL(IN("train", "\"eval\": \"replica\""),
         "s.json:3:13: train.eval: wrong type: string (expected an array of "
         "names from: outer, replica, average)");
    FAIL(IN("train", "\"eval\": [\"outer\", 2]"),
         "s.json:3:23: train.eval[1]: wrong type: number (expected one of: "
         "outer, replica, average)");
    FAIL(IN("train", "\"eval\": [\"mean\"]"),
         "s.json:3:14: train.eval[0]: unknown value \"mean\" (expected one "
         "of: outer, replica, average)");
    FAIL(IN("train", "\"eval\": [\"replica\", \"outer\", \"replica\"]"),
         "s.json:3:34: train.eval[2]: \"replica\" given twice (expected each "
         "name at most once)");
    FAIL(IN("train", "\"data\": {\"path\": 3}"),
         "s.json:3:22: train.data.path: wrong type: number (expected a "
         "string)");

    /* Ranges, one per kind of bound. */
    FAIL(IN("train", "\"model\": {\"vocab\": 1}"),
         "s.json:3:24: train.model.vocab: 1 is out of range (expected an "
         "integer in 2..16777216)");
    FAIL(IN("train", "\"model\": {\"mlp_ratio\": 0}"),
         "s.json:3:28: train.model.mlp_ratio: 0 is out of range (expected an "
         "integer in 1..64)");
    FAIL(IN("train", "\"data\": {\"eval_fraction\": 1}"),
         "s.json:3:31: train.data.eval_fraction: 1 is out of range (expected "
         "a number in (0, 1))");
    FAIL(IN("train", "\"data\": {\"skew\": 1.5}"),
         "s.json:3:22: train.data.skew: 1.5 is out of range (expected a "
         "number in [0, 1])");
    FAIL(IN("train", "\"batch\": 0"),
         "s.json:3:14: train.batch: 0 is out of range (expected an integer "
         "in 1..1048576)");
    FAIL(IN("train", "\"inner\": {\"beta2\": 1}"),
         "s.json:3:24: train.inner.beta2: 1 is out of range (expected a "
         "number in [0, 1))");
    FAIL(IN("train", "\"inner\": {\"eps\": 0}"),
         "s.json:3:22: train.inner.eps: 0 is out of range (expected a number "
         "in (0, 1])");
    FAIL(IN("train", "\"inner\": {\"lr\": -1e-3}"),
         "s.json:3:21: train.inner.lr: -0.001 is out of range (expected a "
         "number in [0, 1000000])");
    FAIL(IN("train", "\"inner\": {\"warmup\": 2.5}"),
         "s.json:3:25: train.inner.warmup: 2.5 is not an integer (expected "
         "an integer in 0..1000000000000)");
    FAIL(IN("train", "\"outer\": {\"momentum\": 1}"),
         "s.json:3:27: train.outer.momentum: 1 is out of range (expected a "
         "number in [0, 1))");
    FAIL(IN("train", "\"eval_batches\": 0"),
         "s.json:3:21: train.eval_batches: 0 is out of range (expected an "
         "integer in 1..100000)");
    FAIL(IN("train", "\"threads\": 257"),
         "s.json:3:16: train.threads: 257 is out of range (expected an "
         "integer in 1..256)");

    /* The model. */
    FAIL(IN("train", "\"model\": {\"d\": 100, \"heads\": 3}"),
         "s.json:3:34: train.model.heads: d = 100 is not a multiple of heads "
         "= 3 (expected heads dividing d)");
    FAIL(IN("train", "\"model\": {\"heads\": 3, \"d\": 100}"),
         "s.json:3:32: train.model.d: d = 100 is not a multiple of heads = 3 "
         "(expected heads dividing d)");
    FAIL(IN("train", "\"model\": {\"heads\": 5}"),
         "s.json:3:24: train.model.heads: d = 64 is not a multiple of heads "
         "= 5 (expected heads dividing d)");
    FAIL(IN("train", "\"seq\": 65"),
         "s.json:3:12: train.seq: seq = 65 is longer than ctx = 64 (expected "
         "seq <= train.model.ctx for the transformer)");
    FAIL(IN("train", "\"model\": {\"ctx\": 32}"),
         "s.json:3:22: train.model.ctx: seq = 64 is longer than ctx = 32 "
         "(expected seq <= train.model.ctx for the transformer)");
    FAIL(IN("train", "\"model\": {\"kind\": \"mlp\"}, \"batch\": 1048576, "
                     "\"seq\": 1024"),
         "s.json:3:56: train.seq: batch * seq = 1073741824 tokens are too "
         "many (expected at most 536870911)");

    /* The data. */
    FAIL(IN("train", "\"data\": {\"successors\": 65}"),
         "s.json:3:28: train.data.successors: successors = 65 exceed the "
         "vocabulary V = 64 (expected successors <= V)");
    FAIL(IN("train", "\"data\": {\"successors\": 8, \"vocab\": 4}"),
         "s.json:3:40: train.data.vocab: successors = 8 exceed the "
         "vocabulary V = 4 (expected successors <= V)");
    FAIL(IN("train", "\"model\": {\"vocab\": 3}"),
         "s.json:3:24: train.model.vocab: successors = 4 exceed the "
         "vocabulary V = 3 (expected successors <= V)");
    FAIL(IN("train", "\"data\": {\"vocab\": 65}"),
         "s.json:3:23: train.data.vocab: the model's vocab = 64 is smaller "
         "than the data's 65 token values (expected train.model.vocab >= "
         "65)");
    FAIL(IN("train", "\"data\": {\"vocab\": 65}, \"model\": {\"vocab\": 32}"),
         "s.json:3:47: train.model.vocab: the model's vocab = 32 is smaller "
         "than the data's 65 token values (expected train.model.vocab >= "
         "65)");
    FAIL(IN("train", "\"data\": {\"path\": \"a.txt\"}"),
         "s.json:3:14: train.data.path: not used by markov data (expected it "
         "only with kind text)");
    FAIL(IN("train", "\"data\": {\"eval_fraction\": 0.5}"),
         "s.json:3:14: train.data.eval_fraction: not used by markov data "
         "(expected it only with kind text)");
    FAIL(IN("train", "\"data\": {\"kind\": \"text\", \"successors\": 4}"),
         "s.json:3:30: train.data.successors: not used by text data "
         "(expected it only with kind markov)");
    FAIL(IN("train", "\"data\": {\"kind\": \"text\", \"skew\": 0}"),
         "s.json:3:30: train.data.skew: not used by text data (expected it "
         "only with kind markov)");
    FAIL(IN("train", "\"data\": {\"kind\": \"text\", \"vocab\": 128}"),
         "s.json:3:39: train.data.vocab: 128 is not the 256 byte values of "
         "text data (expected 256, or no vocab)");
    FAIL(IN("train", "\"data\": {\"kind\": \"text\"}"),
         "s.json:3:13: train.data.path: missing (expected a text file with "
         "kind text)");
    FAIL(IN("train", "\"data\": {\"kind\": \"text\", \"path\": \"\"}"),
         "s.json:3:38: train.data.path: empty path (expected a file name)");
    FAIL(IN("train", "\"data\": {\"kind\": \"text\", \"path\": "
                     "\"/nonexistent/a.txt\"}"),
         "s.json:3:38: train.data.path: cannot open /nonexistent/a.txt: No "
         "such file or directory");

    /* The inner optimizer. */
    FAIL(IN("train", "\"inner\": {\"lr_min\": 0.01}"),
         "s.json:3:25: train.inner.lr_min: lr_min = 0.01 exceeds lr = "
         "0.0004 (expected lr_min <= lr)");
    FAIL(IN("train", "\"inner\": {\"lr_min\": 0.01, \"lr\": 0.001}"),
         "s.json:3:37: train.inner.lr: lr_min = 0.01 exceeds lr = 0.001 "
         "(expected lr_min <= lr)");

    /* Against the scenario's shared keys. */
    FAIL("{\"workers\": {\"count\": 65}, \"train\": {}}",
         "s.json:1:23: workers.count: 65 replicas are too many to train "
         "(expected at most 64 with a train section)");
    FAIL("{\"method\": {\"name\": \"dp\"}, \"train\": {\"fedpart\": true}}",
         "s.json:1:49: train.fedpart: FedPart needs method diloco or "
         "streaming (got dp)");
    FAIL("{\"train\": {\"fedpart\": true}, \"method\": {\"name\": \"dp\"}}",
         "s.json:1:49: method.name: FedPart needs method diloco or "
         "streaming (got dp)");
    FAIL("{\"method\": {\"name\": \"sparta\"}, \"train\": {\"fedpart\": "
         "true}}",
         "s.json:1:53: train.fedpart: FedPart needs method diloco or "
         "streaming (got sparta)");
    FAIL("{\"method\": {\"name\": \"sparta\", \"tau\": 4}, \"train\": {}}",
         "s.json:1:38: method.tau: tau = 4 needs 5 slots, more than the "
         "trained model's 4 blocks (expected method.tau <= 3 with method "
         "sparta)");
    FAIL("{\"method\": {\"H\": 10, \"fragments\": 5}, \"train\": {}}",
         "s.json:1:35: method.fragments: P = 5 fragments exceed the trained "
         "model's 4 blocks (expected method.fragments <= train.model.layers "
         "= 4)");
    FAIL("{\"method\": {\"H\": 10, \"fragments\": 3},\n"
         " \"train\": {\"model\": {\"layers\": 2}}}",
         "s.json:2:32: train.model.layers: P = 3 fragments exceed the "
         "trained model's 2 blocks (expected method.fragments <= "
         "train.model.layers = 2)");
    FAIL("{\"method\": {\"H\": 10, \"fragments\": 7},\n"
         " \"train\": {\"units\": \"own\"}}",
         "s.json:1:35: method.fragments: P = 7 fragments exceed the trained "
         "model's 6 units (expected method.fragments <= train.model.layers "
         "+ 2 with units own = 6)");

    /* Through overrides and variants: the override, or the variant's
     * place in the file, is named. */
    FAIL_SET("{\"train\": {}}", "train.model.heads=3",
             "--set train.model.heads=3: train.model.heads: d = 64 is not a "
             "multiple of heads = 3 (expected heads dividing d)");
    FAIL_SET("{}", "train.eval=[\"x\"]",
             "--set train.eval=[\"x\"]: train.eval[0]: unknown value \"x\" "
             "(expected one of: outer, replica, average)");
}
END_TEST

START_TEST(test_train_files) {
    char want[2048];
    /* A relative text path is taken from the scenario's directory. */
    const char *json = "{\"train\": {\"model\": {\"vocab\": 256},\n"
                       "  \"data\": {\"kind\": \"text\", \"path\": "
                       "\"t.txt\", \"eval_fraction\": 0.2}}}";
    const char *path = scenario_file(json);
    char text[256];
    snprintf(text, sizeof text, "%s/t.txt", vdir);
    FILE *f = fopen(text, "w");
    ck_assert_ptr_nonnull(f);
    /* 400 bytes: an eval tail of 80 and 2 shards of 160, >= seq + 1. */
    for (int i = 0; i < 40; i++) fputs("some text\n", f);
    fclose(f);
    ck_assert_int_eq(scn_load_train(path, NULL, NULL, 0, &cfg, &sec, err,
                                    sizeof err),
                     0);
    ck_assert_str_eq(sec.train_data_path, text);
    ck_assert_ptr_null(sec.train.data.path);
    ck_assert_int_eq(sec.train.data.kind, DATA_TEXT);
    ck_assert_int_eq(sec.train.data.vocab, 256);
    ck_assert_double_eq(sec.train.data.eval_fraction, 0.2);
    unlink(text);
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:2:36: train.data.path: cannot open %s: "
             "No such file or directory",
             path, text);
    ck_assert_str_eq(err, want);
    /* The model must hold the 256 byte values. */
    path = scenario_file("{\"train\": {\"data\": {\"kind\": \"text\", "
                         "\"path\": \"/dev/null\"}}}");
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:1:11: train.model.vocab: the model's "
             "vocab = 64 is smaller than the data's 256 token values "
             "(expected train.model.vocab >= 256)",
             path);
    ck_assert_str_eq(err, want);

    /* A variant sets train keys like any other; errors name it. */
    static const char doc[] =
        "{\"train\": {\"inner\": {\"lr\": 0.001}},\n"
        " \"variants\": {\"fast\": {\"train\": {\"inner\": {\"lr\": 0.01}}},\n"
        "               \"bad\": {\"train\": {\"model\": {\"heads\": 3}}}}}";
    V_OK(doc, "fast");
    ck_assert_double_eq(sec.train.inner.lr, 0.01);
    V_OK(doc, NULL);
    ck_assert_double_eq(sec.train.inner.lr, 0.001);
    V_FAIL(doc, "bad",
           ":3:53: variants.bad.train.model.heads: d = 64 is "
           "not a multiple of heads = 3 (expected heads dividing d)");
}
END_TEST

/* ------------------------------------------------------------------
 * Defects of the loader, each with the test that holds it.
 */

/* s (with its NUL) copied to the very end of a page that is followed by
 * an inaccessible page: a read past the NUL faults. */
static char *guarded(const char *s) {
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(m != MAP_FAILED);
    ck_assert_int_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
    size_t n = strlen(s) + 1;
    char *p = m + pg - n;
    memcpy(p, s, n);
    return p;
}

/* defect 2: literal over-read.  The byte after a literal was read before
 * the literal matched: "n" at the end of the input read 3 bytes past it
 * (into the guard page here: the test dies before the fix). */
START_TEST(test_defect2_literal_overread) {
    static const char *const texts[] = {"n",
                                        "t",
                                        "f",
                                        "nul",
                                        "[n",
                                        "[tru",
                                        "{\"x\": fals",
                                        "{\"sweep\": "
                                        "{\"x\": [n"};
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        char *p = guarded(texts[k]);
        ck_assert(!json_valid(p));
        json_doc d;
        size_t at;
        char m[128];
        ck_assert_int_eq(json_parse(p, strlen(p), &d, &at, m, sizeof m),
                         MSG_EINPUT);
        ck_assert_str_eq(m, "invalid literal; expected true, false or null");
    }
    ck_assert(json_valid(guarded("null")) && json_valid(guarded("[true]")));
    /* Through --set: "n" is not JSON, so it is the string "n". */
    FAIL_SET("{}", "seed=n",
             "--set seed=n: seed: wrong type: string "
             "(expected an integer in 0..9007199254740992)");
    FAIL(TOP("\"sweep\": {\"x\": [n"),
         "s.json:2:19: syntax error (invalid literal; expected true, false "
         "or null)");
}
END_TEST

/* defect 8: \u0000 cut keys and values short ("steps\u0000junk" was read
 * as steps). */
START_TEST(test_defect8_nul_escape) {
    FAIL("{\"steps\\u0000junk\": 10}",
         "s.json:1:8: syntax error (\\u0000 in string; expected no NUL "
         "character)");
    FAIL("{\"name\": \"a\\u0000b\"}",
         "s.json:1:12: syntax error (\\u0000 in string; expected no NUL "
         "character)");
    load_ok("{\"name\": \"a\\u0001\\u00e9\"}", NULL, 0); /* others are fine */
}
END_TEST

/* defect 8: integers above 2^53 were silently rounded, and a literal that
 * is not exactly an integer was read as one. */
START_TEST(test_defect8_exact_integers) {
    FAIL(TOP("\"seed\": 9007199254740993"),
         "s.json:2:11: seed: 9007199254740993 is above 2^53 = "
         "9007199254740992 and cannot be read exactly (expected an integer "
         "in 0..9007199254740992)");
    FAIL(TOP("\"seed\": 9.007199254740993e15"),
         "s.json:2:11: seed: 9.007199254740993e15 is above 2^53 = "
         "9007199254740992 and cannot be read exactly (expected an integer "
         "in 0..9007199254740992)");
    FAIL(TOP("\"steps\": 10.0000000000000001"),
         "s.json:2:12: steps: 10.0000000000000001 is not an integer "
         "(expected an integer in 1..1000000000000)");
    FAIL_SET("{}", "seed=9007199254740993",
             "--set seed=9007199254740993: seed: 9007199254740993 is above "
             "2^53 = 9007199254740992 and cannot be read exactly (expected "
             "an integer in 0..9007199254740992)");
    FAIL(IN("model", "\"step_time_s\": 1e-400"),
         "s.json:3:20: model.step_time_s: 1e-400 underflows to 0 (expected a "
         "number in [1e-09, 1000000])");
    /* Exact forms of integers are fine. */
    load_ok(TOP("\"seed\": 9007199254740992, \"steps\": 1.5e1"), NULL, 0);
    ck_assert_uint_eq(cfg.seed, 9007199254740992ULL);
    ck_assert_int_eq(cfg.steps, 15);
    load_ok(TOP("\"steps\": 12000e-3"), NULL, 0);
    ck_assert_int_eq(cfg.steps, 12);
    double x;
    ck_assert_int_eq(json_literal_integer("-0.0e5", &x), 0);
    ck_assert_int_eq(json_literal_integer("1.255e2", &x), 1);
    ck_assert_int_eq(json_literal_integer("125e-1", &x), 1);
    ck_assert_int_eq(json_literal_integer("1e16", &x), 2);
    ck_assert_int_eq(json_literal_integer("-9007199254740992", &x), 0);
    ck_assert_double_eq(x, -9007199254740992.0);
}
END_TEST

/* defect 8: invalid UTF-8 was accepted although the scanner claims RFC
 * 8259. */
START_TEST(test_defect8_utf8) {
    static const struct {
        const char *bytes, *what;
    } bad[] = {
        {"\xc0\xaf", "0xc0"},         /* overlong '/' */
        {"\xe0\x80\xaf", "0xe0"},     /* overlong, 3 bytes */
        {"\xed\xa0\x80", "0xed"},     /* U+D800 encoded in UTF-8 */
        {"\xf4\x90\x80\x80", "0xf4"}, /* above U+10FFFF */
        {"\xf5\x80\x80\x80", "0xf5"}, /* a byte above F4 */
        {"\xe2\x82", "0xe2"},         /* truncated */
        {"\x80", "0x80"},             /* a lone continuation byte */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char json[64], want[160];
        snprintf(json, sizeof json, "{\"name\": \"%s\"}", bad[k].bytes);
        snprintf(want, sizeof want,
                 "s.json:1:11: syntax error (invalid "
                 "UTF-8 at byte %s in string; expected well-formed UTF-8)",
                 bad[k].what);
        load_fail_at(__LINE__, json, NULL, 0, want);
    }
    FAIL("{\"name\": \"\\uD800\"}",
         "s.json:1:11: syntax error (unpaired UTF-16 surrogate in \\u "
         "escape)");
    FAIL("{\"name\": \"\\uDC00\\uD800\"}",
         "s.json:1:11: syntax error (unpaired UTF-16 surrogate in \\u "
         "escape)");
    /* Well-formed: 2, 3 and 4 bytes, and a surrogate pair escape. */
    load_ok("{\"name\": \"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
            "\\ud83d\\ude00\"}",
            NULL, 0);
    /* A column counts code points. */
    FAIL("{\"name\": \"\xe2\x82\xac\", \"x\": 1}",
         "s.json:1:15: x: unknown key (expected one of: model, workers, "
         "network, method, faults, train, steps, seed, measure, name, "
         "description, variants, sweep)");
}
END_TEST

static void bad_cost(int line, const char *text, const char *want) {
    plan_cost c;
    err[0] = 0;
    int rc = plan_cost_parse(text, "c.json", &c, err, sizeof err);
    ck_assert_msg(rc == MSG_EINPUT, "line %d: rc %d", line, rc);
    ck_assert_msg(strcmp(err, want) == 0, "line %d:\n   got: %s\nwanted: %s",
                  line, err, want);
}
#define COST_OK "\"accelerator_usd_per_hour\": 2.5, \"accelerators\": 8"

/* defect 8: the cost file went through plain cJSON (accepting "012",
 * reporting "near byte N"): now the strict reader, with positions. */
START_TEST(test_defect8_cost_file) {
    plan_cost c;
    ck_assert_int_eq(
        plan_cost_parse("{\"wan_usd_per_gbps_month\": 200,\n " COST_OK
                        ", \"bandwidths_gbps\": [1, 10]}",
                        "c.json", &c, err, sizeof err),
        0);
    ck_assert_double_eq(c.wan_usd_per_gbps_month, 200);
    ck_assert_int_eq(c.nbandwidths, 2);
    bad_cost(__LINE__, "{\"wan_usd_per_gbps_month\": 012, " COST_OK "}",
             "c.json:1:28: syntax error (invalid number)");
    bad_cost(__LINE__, "{\"wan_usd_per_gbps_month\": 1,\n " COST_OK ",\n}",
             "c.json:3:1: syntax error (unexpected '}'; expected a string key "
             "after ',')");
    bad_cost(__LINE__,
             "{\"wan_usd_per_gbps_month\": 1,\n \"bandwith\": [1], " COST_OK
             "}",
             "c.json:2:2: bandwith: unknown key (expected one of: "
             "wan_usd_per_gbps_month, accelerator_usd_per_hour, accelerators, "
             "bandwidths_gbps, pricing, egress_usd_per_gb, links, currency)");
    bad_cost(__LINE__,
             "{\"wan_usd_per_gbps_month\": 1, " COST_OK ",\n"
             "  \"accelerators\": 9}",
             "c.json:2:3: accelerators: duplicate key (first given at 1:64)");
    bad_cost(__LINE__,
             "{\"wan_usd_per_gbps_month\": 1, " COST_OK ", "
             "\"bandwidths_gbps\": [1, 0]}",
             "c.json:1:106: bandwidths_gbps[1]: must be a number >= 1e-06, at "
             "most 1000000000 (got 0)");
    bad_cost(__LINE__, "{\"name\\u0000\": 1}",
             "c.json:1:7: syntax error (\\u0000 in string; expected no NUL "
             "character)");
    bad_cost(__LINE__, "{" COST_OK "}",
             "c.json:1:1: wan_usd_per_gbps_month: missing (expected "
             "wan_usd_per_gbps_month, accelerator_usd_per_hour and "
             "accelerators)");
    /* Bytes: a NUL inside the text is an error, not the end. */
    ck_assert_int_eq(plan_cost_parse_n("{}\0{}", 5, "c.json", &c, err,
                                       sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "c.json:1:3: syntax error (NUL byte in input)");
}
END_TEST

/* Seconds since an arbitrary origin. */
static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* defect 9: no input size limit (a 200 MB array took 12.5 GB and 67 s to
 * be rejected): files above 16 MiB are refused before they are read. */
START_TEST(test_defect9_size_cap) {
    const char *path = scenario_file("{}");
    int fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)SCN_MAX_BYTES + 1), 0);
    close(fd);
    char want[256];
    snprintf(want, sizeof want,
             "%s: larger than 16 MiB (expected a "
             "scenario of at most 16777216 bytes)",
             path);
    double t0 = now_s();
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, want);
    scn_meta m;
    ck_assert_int_eq(scn_meta_load(path, &m, err, sizeof err), MSG_EINPUT);
    ck_assert_str_eq(err, want);
    ck_assert_msg(now_s() - t0 < 0.5, "the cap is checked before reading");
    /* A document of more than 2^21 keys and values, under the byte cap,
     * is refused by the scanner before cJSON builds a node. */
    size_t n = (1 << 21) + 1;
    char *big = malloc(2 * n + 2);
    ck_assert_ptr_nonnull(big);
    big[0] = '[';
    for (size_t i = 0; i < n; i++) big[1 + 2 * i] = '0', big[2 + 2 * i] = ',';
    big[2 * n] = ']';
    big[2 * n + 1] = 0;
    ck_assert_int_eq(scn_load_string(big, "s.json", NULL, 0, &cfg, err,
                                     sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "s.json:1:4194304: syntax error (more than "
                          "2097152 keys and values)");
    free(big);
}
END_TEST

/* defect 9: merging a variant was quadratic (a 650 kB variant took 20 s):
 * duplicates, member lookups and marks are linear now. */
START_TEST(test_defect9_linear_merge) {
    const int n = 40000;
    size_t cap = (size_t)n * 40 + 256, len = 0;
    char *doc = malloc(cap);
    ck_assert_ptr_nonnull(doc);
    len += (size_t)snprintf(doc + len, cap - len, "{\"x\": {");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(doc + len, cap - len, "%s\"k%d\": 0",
                                i ? ", " : "", i);
    len += (size_t)snprintf(doc + len, cap - len,
                            "}, \"variants\": {\"v\": "
                            "{\"x\": {");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(doc + len, cap - len, "%s\"k%d\": {\"a\": 1}",
                                i ? ", " : "", n - 1 - i);
    snprintf(doc + len, cap - len, "}}}}");
    const char *path = scenario_file(doc);
    free(doc);
    double t0 = now_s();
    ck_assert_int_eq(scn_load_variant(path, "v", NULL, 0, &cfg, err,
                                      sizeof err),
                     MSG_EINPUT);
    double dt = now_s() - t0;
    ck_assert_msg(strstr(err, ":1:2: x: unknown key"), "%s", err);
    ck_assert_msg(dt < 2, "merging %d keys took %g s", n, dt);
}
END_TEST

/* defect 5: absurd numbers gave garbage with exit 0; each is now out of
 * the key's range, or of what the run can represent (int64 ns). */
START_TEST(test_defect5_ranges) {
    FAIL(IN("network", "\"bandwidth_gbps\": 1e-300"),
         "s.json:3:23: network.bandwidth_gbps: 1e-300 is out of range "
         "(expected a number in [1e-06, 1000000000] or \"inf\", or an array "
         "of workers.count = 2 such values)");
    FAIL(IN("model", "\"step_time_s\": 1e8"),
         "s.json:3:20: model.step_time_s: 100000000 is out of range "
         "(expected a number in [1e-09, 1000000])");
    FAIL(IN("model", "\"step_time_s\": 1e-10"),
         "s.json:3:20: model.step_time_s: 1e-10 is out of range (expected a "
         "number in [1e-09, 1000000])");
    FAIL(IN("workers", "\"speed\": 1e-300"),
         "s.json:3:14: workers.speed: 1e-300 is out of range (expected a "
         "number in [0.001, 1000], or an array of workers.count = 2 such "
         "values)");
    FAIL(IN("model", "\"params\": 1e19"),
         "s.json:3:15: model.params: 1e+19 is out of range (expected a "
         "number in (0, 1e+15])");
    FAIL(IN("network", "\"latency_ms\": 1e13"),
         "s.json:3:19: network.latency_ms: 10000000000000 is out of range "
         "(expected a number in [0, 1000000], or an array of workers.count "
         "= 2 such values)");
    FAIL(IN("faults", "\"weibull_shape\": 0.001"),
         "s.json:3:22: faults.weibull_shape: 0.001 is out of range (expected "
         "a number in [0.01, 1000])");
    FAIL(IN("network", "\"tcp_window_mb\": 1e-300"),
         "s.json:3:22: network.tcp_window_mb: 1e-300 is below one byte "
         "(expected 0 for none, or a number in [1e-06, 1000000])");
    FAIL(IN("faults", "\"mtbf_hours\": 1e-300"),
         "s.json:3:19: faults.mtbf_hours: 1e-300 is below 1e-06 h (expected "
         "0 for none, or a number in [1e-06, 1000000])");
    /* Products: reported at the key that dominates, naming the others. */
    FAIL(TOP("\"steps\": 1000000000000"),
         "s.json:2:12: steps: the run would last about 164000000003.2 s: "
         "100000000000 s of compute (steps * step time / speed * slowdown) "
         "and 64000000003.2 s of syncs (latencies, collective overheads and "
         "transfers at the lowest bandwidth, given model.params) (expected "
         "at most 1e+09 s, about 31.7 years; fewer steps, a shorter step or "
         "a faster network)");
    load_fail_prefix(__LINE__,
                     IN("network", "\"latency_ms\": 1000, "
                                   "\"tcp_window_mb\": 0.00001"),
                     "s.json:3:42: network.tcp_window_mb: the run would "
                     "last about ");
    load_fail_prefix(__LINE__,
                     IN("model", "\"tokens_per_step\": 1, "
                                 "\"chips\": 1e9, \"peak_tflops\": 1e9, "
                                 "\"mfu\": 1"),
                     "s.json:3:24: model.tokens_per_step: the step time 6 * "
                     "params * tokens_per_step / (chips * peak_tflops * "
                     "1e12 * mfu) = 6e-21 s is out of range (expected a "
                     "step of 1e-09 to 1e+06 s)");
    load_fail_prefix(__LINE__,
                     TOP("\"model\": {\"step_time_s\": 1000},\n"
                         "  \"steps\": 10000000"),
                     "s.json:3:12: steps: the run would last about "
                     "10000640003.2 s: 10000000000 s of compute");
    /* The limits themselves load. */
    load_ok(TOP("\"model\": {\"step_time_s\": 100}, \"steps\": 9000000"), NULL,
            0);
}
END_TEST

/* defect 7: a bad fault trace was a runtime error (exit 1, no position,
 * at every point of a sweep): the loader parses it. */
START_TEST(test_defect7_trace) {
    FAIL(IN("faults", "\"trace\": \"tests/data/faults/bad_number.trace\""),
         "s.json:3:14: faults.trace: tests/data/faults/bad_number.trace:3: "
         "bad time '1.5x' (expected a finite number of seconds)");
    FAIL(IN("faults", "\"trace\": \"tests/data/faults/no_such.trace\""),
         "s.json:3:14: faults.trace: tests/data/faults/no_such.trace: cannot "
         "open: No such file or directory");
    /* Workers are checked against workers.count. */
    FAIL("{\"faults\": {\"trace\": \"tests/data/faults/worker_range.trace\"},"
         "\n \"workers\": {\"count\": 4}}",
         "s.json:1:22: faults.trace: tests/data/faults/worker_range.trace:3: "
         "worker 4 out of range (expected 0..3)");
    load_ok("{\"faults\": {\"trace\": \"tests/data/faults/mixed.trace\"},"
            " \"workers\": {\"count\": 4}}",
            NULL, 0);
    ck_assert_str_eq(cfg.trace_path, "tests/data/faults/mixed.trace");
}
END_TEST

/* defect 7: text data was checked only when `dilosim train` started. */
START_TEST(test_defect7_text_data) {
    char text[128], want[512];
    const char *json = "{\"train\": {\"model\": {\"vocab\": 256},\n"
                       "  \"data\": {\"kind\": \"text\", \"path\": "
                       "\"t.txt\"}}}";
    char path[128];
    snprintf(path, sizeof path, "%s", scenario_file(json));
    snprintf(text, sizeof text, "%s/t.txt", vdir);
    write_file(vdir, "t.txt", "");
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:2:36: train.data.path: %s is empty "
             "(expected a text file)",
             path, text);
    ck_assert_str_eq(err, want);
    /* 600 bytes: an eval tail of 60 < seq + 1 = 65. */
    FILE *f = fopen(text, "w");
    for (int i = 0; i < 60; i++) fputs("some text\n", f);
    fclose(f);
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:2:36: train.data.path: %s: 600 bytes "
             "are too few (its eval tail has 60 bytes and each of the 2 "
             "shards 270; expected at least train.seq + 1 = 65 each)",
             path, text);
    ck_assert_str_eq(err, want);
    unlink(text);
    ck_assert_int_eq(mkdir(text, 0700), 0);
    ck_assert_int_eq(scn_load(path, NULL, 0, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:2:36: train.data.path: cannot read %s: "
             "Is a directory",
             path, text);
    ck_assert_str_eq(err, want);
    rmdir(text);
}
END_TEST

/* "-" reads the scenario from standard input. */
START_TEST(test_stdin) {
    const char *path = scenario_file("{\"steps\": 7,\n \"seed\": -1}");
    int saved = dup(0), fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, 0), 0);
    close(fd);
    clearerr(stdin);
    int rc = scn_load("-", NULL, 0, &cfg, err, sizeof err);
    ck_assert_int_eq(dup2(saved, 0), 0);
    close(saved);
    clearerr(stdin);
    ck_assert_int_eq(rc, MSG_EINPUT);
    ck_assert_str_eq(err, "<stdin>:2:10: seed: -1 is out of range (expected "
                          "an integer in 0..9007199254740992)");
}
END_TEST

typedef struct {
    const scn_doc *doc;
    int id, bad;
} doc_job;

static void *load_many(void *arg) {
    doc_job *j = arg;
    char kv[64], e[512];
    for (int i = 0; i < 100; i++) {
        scn_config c;
        snprintf(kv, sizeof kv, "steps=%d", 1 + j->id * 1000 + i);
        const char *more[] = {kv};
        if (scn_doc_load(j->doc, more, 1, &c, e, sizeof e) ||
            c.steps != 1 + j->id * 1000 + i || c.workers != 3)
            j->bad++;
    }
    return NULL;
}

/* A document parsed once and loaded many times, from several threads. */
START_TEST(test_doc) {
    const char *path = scenario_file(
        "{\"workers\": {\"count\": 2}, \"steps\": 10,\n"
        " \"variants\": {\"three\": {\"workers\": {\"count\": 3}}}}");
    const char *sets[] = {"seed=5"};
    scn_doc *d;
    ck_assert_int_eq(scn_doc_open(path, "three", sets, 1, &d, err, sizeof err),
                     0);
    ck_assert_msg(d != NULL, "%s", err);
    const char *more[] = {"steps=20"};
    ck_assert_int_eq(scn_doc_load(d, more, 1, &cfg, err, sizeof err), 0);
    ck_assert_int_eq(cfg.workers, 3);
    ck_assert_int_eq(cfg.steps, 20);
    ck_assert_uint_eq(cfg.seed, 5);
    /* The same as one load with every override. */
    scn_config one;
    const char *all[] = {"seed=5", "steps=20"};
    ck_assert_int_eq(scn_load_variant(path, "three", all, 2, &one, err,
                                      sizeof err),
                     0);
    ck_assert(memcmp(&one, &cfg, sizeof one) == 0);
    /* Messages of a further override. */
    const char *bad[] = {"steps=0"};
    ck_assert_int_eq(scn_doc_load(d, bad, 1, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err, "--set steps=0: steps: 0 is out of range "
                          "(expected an integer in 1..1000000000000)");
    scn_meta m;
    ck_assert_int_eq(scn_doc_meta(d, &m, err, sizeof err), 0);
    ck_assert_int_eq(m.nvariants, 1);
    ck_assert_str_eq(m.variant[0], "three");
    /* Concurrent loads of one doc. */
    pthread_t th[4];
    doc_job jobs[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (doc_job){d, t, 0};
        ck_assert_int_eq(pthread_create(&th[t], NULL, load_many, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        ck_assert_int_eq(jobs[t].bad, 0);
    }
    scn_doc_free(d);
    /* Errors of the open: syntax, variant, overrides. */
    ck_assert_int_eq(scn_doc_open(path, "four", NULL, 0, &d, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err, "variants: unknown variant \"four\" (expected "
                              "one of: three)"),
                  "%s", err);
}
END_TEST

/* model.host_gbps took any positive value: at 1e-9 with offload_outer
 * the run failed "out of memory" (exit 1, no position), at 1e-8 it ran
 * past the clock limit.  It is a rate like a link's, and the run-length
 * estimate counts the host copies of the outer state. */
START_TEST(test_host_gbps_range) {
    FAIL(IN("model", "\"host_gbps\": 1e-9"),
         "s.json:3:18: model.host_gbps: 1e-09 is out of range (expected a "
         "number in [1e-06, 1000000000])");
    FAIL(IN("model", "\"host_gbps\": 2e9"),
         "s.json:3:18: model.host_gbps: 2000000000 is out of range (expected "
         "a number in [1e-06, 1000000000])");
    load_ok(IN("model", "\"host_gbps\": 1e-6"), NULL, 0); /* no offload */
    ck_assert_double_eq(cfg.host_gbps, 1e-6);
    /* 1e9 parameters, 1 fragment, 10 syncs of 8e9 bytes in and out at
     * 125 bytes/s: 1.28e9 s of copies, at the key. */
    const char *off[] = {"method.offload_outer=true"};
    load_fail_at(__LINE__, IN("model", "\"host_gbps\": 1e-6"), off, 1,
                 "s.json:3:18: model.host_gbps: the run would last about "
                 "1280000167.2 s: 100 s of compute (steps * step time / "
                 "speed * slowdown), 1280000000 s of host copies "
                 "(method.offload_outer at model.host_gbps) and 67.2 s of "
                 "syncs (latencies, collective overheads and transfers at "
                 "the lowest bandwidth, given model.params) (expected at most "
                 "1e+09 s, about 31.7 years; fewer steps, a shorter step or a "
                 "faster network)");
    load_ok(IN("model", "\"host_gbps\": 1e-3"), off, 1);
    /* DP has no outer state: nothing is copied. */
    const char *dp[] = {"method.offload_outer=true", "method.name=dp"};
    load_ok(IN("model", "\"host_gbps\": 1e-6"), dp, 2);
}
END_TEST

/* collective_overhead_ms was counted once per sync, not once per
 * collective step of every layer: 1e6 ms with 100 layers and 1e4 DP steps
 * (a 2e9 s run) was accepted, and at 1e5 steps the run stopped with
 * "transfers can never complete". */
START_TEST(test_overhead_in_run_length) {
    const char *json = "{\n  \"model\": {\"params\": 1e6, \"layers\": 100, "
                       "\"step_time_s\": 0.01},\n"
                       "  \"method\": {\"name\": \"dp\", \"dp_bucket_mb\": 0}, "
                       "\"steps\": 10000,\n"
                       "  \"network\": {\"collective_overhead_ms\": 1e6}\n}\n";
    load_fail_prefix(__LINE__, json,
                     "s.json:4:41: network.collective_overhead_ms: the run "
                     "would last about 4000000164.0032 s: 100 s of compute");
    /* One layer: 4e7 s, accepted. */
    const char *one[] = {"model.layers=1"};
    load_ok(json, one, 1);
    /* DP buckets: 4 MB of fp32 gradients in buckets of 1 MB, 4 all-reduces
     * a step: 1.6e8 s. */
    const char *buckets[] = {"method.dp_bucket_mb=1"};
    load_ok(json, buckets, 1);
}
END_TEST

/* network.startup_ms, ack_bytes_per_kb and queue_ms: 0 by default, what
 * loads, the schema's errors at the value; the run-length estimate counts
 * the set-up once (1e6 ms: 1000 s more than test_overhead_in_run_length's
 * 4000000164.0032 s). */
START_TEST(test_startup_ack_queue_keys) {
    load_ok("{}", NULL, 0);
    ck_assert(cfg.startup_ms == 0 && cfg.ack_bytes_per_kb == 0 &&
              cfg.queue_ms == 0);
    load_ok(IN("network", "\"startup_ms\": 200, \"ack_bytes_per_kb\": 22.8, "
                          "\"queue_ms\": 1e6"),
            NULL, 0);
    ck_assert(cfg.startup_ms == 200 && cfg.ack_bytes_per_kb == 22.8 &&
              cfg.queue_ms == 1e6);
    FAIL(IN("network", "\"startup_ms\": -1"),
         "s.json:3:19: network.startup_ms: -1 is out of range (expected a "
         "number in [0, 1000000])");
    FAIL(IN("network", "\"ack_bytes_per_kb\": 1000.5"),
         "s.json:3:25: network.ack_bytes_per_kb: 1000.5 is out of range "
         "(expected a number in [0, 1000])");
    FAIL(IN("network", "\"queue_ms\": 2e6"),
         "s.json:3:17: network.queue_ms: 2000000 is out of range (expected a "
         "number in [0, 1000000])");
    FAIL(IN("network", "\"queue_ms\": \"20\""),
         "s.json:3:17: network.queue_ms: wrong type: string (expected a "
         "number in [0, 1000000])");
    FAIL_SET("{}", "network.ack_bytes_per_kb=-0.5",
             "--set network.ack_bytes_per_kb=-0.5: network.ack_bytes_per_kb: "
             "-0.5 is out of range (expected a number in [0, 1000])");
    const char *json = "{\n  \"model\": {\"params\": 1e6, \"layers\": 100, "
                       "\"step_time_s\": 0.01},\n"
                       "  \"method\": {\"name\": \"dp\", \"dp_bucket_mb\": 0}, "
                       "\"steps\": 10000,\n"
                       "  \"network\": {\"collective_overhead_ms\": 1e6, "
                       "\"startup_ms\": 1e6}\n}\n";
    load_fail_prefix(__LINE__, json,
                     "s.json:4:41: network.collective_overhead_ms: the run "
                     "would last about 4000001164.0032 s: 100 s of compute");
}
END_TEST

/* method.sync_timeout_s at or below 5e-10 rounded to 0 ns, no timeout:
 * a positive value below 1 ns is refused. */
START_TEST(test_sync_timeout_below_ns) {
    FAIL(IN("method", "\"sync_timeout_s\": 9.99e-10"),
         "s.json:3:23: method.sync_timeout_s: 9.99e-10 is a positive value "
         "below 1 ns (expected 0 for none, or a number in [1e-09, "
         "1000000000])");
    FAIL(IN("method", "\"sync_timeout_s\": 5e-10"),
         "s.json:3:23: method.sync_timeout_s: 5e-10 is a positive value "
         "below 1 ns (expected 0 for none, or a number in [1e-09, "
         "1000000000])");
    FAIL_SET("{}", "method.sync_timeout_s=1e-300",
             "--set method.sync_timeout_s=1e-300: method.sync_timeout_s: "
             "1e-300 is a positive value below 1 ns (expected 0 for none, or "
             "a number in [1e-09, 1000000000])");
    load_ok(IN("method", "\"sync_timeout_s\": 1e-9"), NULL, 0);
    ck_assert_double_eq(cfg.sync_timeout_s, 1e-9);
    load_ok(IN("method", "\"sync_timeout_s\": 0"), NULL, 0);
    ck_assert_double_eq(cfg.sync_timeout_s, 0);
}
END_TEST

/* An unknown key within edit distance 2 of exactly one known key names
 * it; none for a tie, for a key farther away, or for one that would be
 * replaced whole. */
START_TEST(test_did_you_mean) {
    FAIL_SET("{}", "network.bandwith_gbps=3",
             "--set network.bandwith_gbps=3: network.bandwith_gbps: unknown "
             "key (did you mean network.bandwidth_gbps? expected one of: "
             "bandwidth_gbps, up_gbps, down_gbps, latency_ms, collective, "
             "reduce_order, gbit, tcp_window_mb, transport, completion, "
             "tcp_init_window_kb, tcp_slow_start_after_idle, efficiency, "
             "collective_overhead_ms, startup_ms, ack_bytes_per_kb, "
             "queue_ms, latency_matrix_ms, ring_order, bandwidth_trace, "
             "site_allreduce, joules_per_gb)");
    FAIL(IN("method", "\"fragmnets\": 2"), /* a swap is one edit */
         "s.json:3:5: method.fragmnets: unknown key (did you mean "
         "method.fragments? expected one of: name, H, fragments, layout, "
         "order, tau, overlap, rule, alpha, subset_fraction, codec, "
         "codec_block, k_fraction, "
         "rank, demo_chunk, demo_topk, demo_beta, dp_codec, "
         "late, sync_timeout_s, dp_bucket_mb, bucket_mb, offload_outer, "
         "quorum)");
    FAIL(IN("faults", "\"mtbr_hours\": 1"), /* mtbf_hours or mttr_hours */
         "s.json:3:5: faults.mtbr_hours: unknown key (expected one of: "
         "mtbf_hours, mttr_hours, distribution, weibull_shape, trace, "
         "checkpoint_steps, recovery_bytes_per_param, "
         "checkpoint_every_steps, checkpoint_s, restart_s, membership_trace)");
    FAIL(IN("workers", "\"cnt\": 2"), /* count: 2 edits, kept */
         "s.json:3:5: workers.cnt: unknown key (did you mean "
         "workers.count? expected one of: count, speed, sites, stragglers, "
         "power_w)");
    FAIL(IN("workers", "\"ct\": 2"), /* 3 edits from count */
         "s.json:3:5: workers.ct: unknown key (expected one of: count, "
         "speed, sites, stragglers, power_w)");
    static const char *const names[] = {"steps", "seed", "model"};
    ck_assert_int_eq(msg_nearest_name("stpes", names, 3, 2), 0);
    ck_assert_int_eq(msg_nearest_name("sed", names, 3, 2), 1);
    ck_assert_int_eq(msg_nearest_name("mo", names, 3, 2), -1); /* 3 edits */
    ck_assert_int_eq(msg_nearest_name("xy", names, 3, 5), -1); /* whole */
    /* The cost file too. */
    plan_cost c;
    ck_assert_int_eq(plan_cost_parse("{\"pricng\": \"port\"}", "c.json", &c,
                                     err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(
        err, "c.json:1:2: pricng: unknown key (did you mean "
             "pricing? expected one of: wan_usd_per_gbps_month, "
             "accelerator_usd_per_hour, accelerators, "
             "bandwidths_gbps, pricing, egress_usd_per_gb, links, currency)");
}
END_TEST

/* The cost file allowed bandwidths up to 1e15 Gbit/s where a scenario
 * allows 1e9 (the plan then failed naming a --set nobody gave), and read
 * a UTF-8 byte order mark as a syntax error. */
START_TEST(test_cost_file_limits_and_bom) {
    plan_cost c;
    ck_assert_int_eq(plan_cost_parse("{\"wan_usd_per_gbps_month\": 1, " COST_OK
                                     ", \"bandwidths_gbps\": [1e-6, "
                                     "1e9]}",
                                     "c.json", &c, err, sizeof err),
                     0);
    ck_assert_double_eq(c.bandwidths_gbps[1], SCN_MAX_GBPS);
    bad_cost(__LINE__,
             "{\"wan_usd_per_gbps_month\": 1, " COST_OK ", "
             "\"bandwidths_gbps\": [1e15]}",
             "c.json:1:103: bandwidths_gbps[0]: must be a number >= 1e-06, "
             "at most 1000000000 (got 1e+15)");
    bad_cost(__LINE__,
             "{\"wan_usd_per_gbps_month\": 1, " COST_OK ", "
             "\"bandwidths_gbps\": [1e-7]}",
             "c.json:1:103: bandwidths_gbps[0]: must be a number >= 1e-06, "
             "at most 1000000000 (got 1e-07)");
    ck_assert_int_eq(plan_cost_parse("\xEF\xBB\xBF{\"wan_usd_per_gbps_month\""
                                     ": 200, " COST_OK "}",
                                     "c.json", &c, err, sizeof err),
                     0);
    ck_assert_double_eq(c.wan_usd_per_gbps_month, 200);
    /* Positions count from after the mark, as in a scenario. */
    bad_cost(__LINE__, "\xEF\xBB\xBF{\"x\": 1}",
             "c.json:1:2: x: unknown key (expected one of: "
             "wan_usd_per_gbps_month, accelerator_usd_per_hour, accelerators, "
             "bandwidths_gbps, pricing, egress_usd_per_gb, links, currency)");
    FAIL("\xEF\xBB\xBF{\"x\": 1}",
         "s.json:1:2: x: unknown key (expected one of: model, workers, "
         "network, method, faults, train, steps, seed, measure, name, "
         "description, variants, sweep)");
}
END_TEST

/* Errors about a value of the sweep section were "--set KEY=VALUE"
 * errors: they point into the file (the array item, the spec string, the
 * key for an unknown key); a --vary's say --vary. */
START_TEST(test_sweep_origins) {
    const char *path =
        scenario_file("{\"steps\": 10,\n"
                      " \"sweep\": {\"network.bandwidth_gbps\": [1, -1],\n"
                      "           \"network.latency_ms\": \"[1,2],[1,-1]\",\n"
                      "           \"network.bandwith_gbps\": [1]}}\n");
    scn_doc *d;
    ck_assert_int_eq(scn_doc_open(path, NULL, NULL, 0, &d, err, sizeof err), 0);
    scn_meta m;
    ck_assert_int_eq(scn_doc_meta(d, &m, err, sizeof err), 0);
    ck_assert_int_eq(m.sweep_line[0], 2);
    ck_assert_int_eq(m.sweep_col[0], 38);
    ck_assert_int_eq(m.sweep_line[2], 4);
    char want[1024];
    const char *bw[] = {"network.bandwidth_gbps=-1"};
    scn_origin from = {.sweep = 0, .item = 1};
    ck_assert_int_eq(scn_doc_load_from(d, bw, &from, 1, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:2:42: sweep.network.bandwidth_gbps[1]: "
             "-1 is out of range (expected a number in [1e-06, 1000000000] "
             "or \"inf\", or an array of workers.count = 2 such values)",
             path);
    ck_assert_str_eq(err, want);
    const char *lat[] = {"network.latency_ms=[1,-1]"};
    from =
        (scn_origin){.sweep = 1, .item = 1}; /* a spec string: its position */
    ck_assert_int_eq(scn_doc_load_from(d, lat, &from, 1, &cfg, err, sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:3:34: sweep.network.latency_ms: "
             "network.latency_ms[1]: -1 is out of range (expected a number in "
             "[0, 1000000])",
             path);
    ck_assert_str_eq(err, want);
    const char *typo[] = {"network.bandwith_gbps=1"};
    from = (scn_origin){.sweep = 2, .item = 0}; /* an unknown key: at the key */
    ck_assert_int_eq(scn_doc_load_from(d, typo, &from, 1, &cfg, err,
                                       sizeof err),
                     MSG_EINPUT);
    snprintf(want, sizeof want,
             "%s:4:12: sweep.network.bandwith_gbps: "
             "unknown key (did you mean network.bandwidth_gbps? expected one "
             "of: bandwidth_gbps, up_gbps, down_gbps, latency_ms, collective, "
             "reduce_order, gbit, tcp_window_mb, transport, completion, "
             "tcp_init_window_kb, tcp_slow_start_after_idle, efficiency, "
             "collective_overhead_ms, startup_ms, ack_bytes_per_kb, "
             "queue_ms, latency_matrix_ms, ring_order, bandwidth_trace, "
             "site_allreduce, joules_per_gb)",
             path);
    ck_assert_str_eq(err, want);
    from = (scn_origin){.vary = "network.bandwidth_gbps=1,-1",
                        .sweep = -1,
                        .item = 1};
    ck_assert_int_eq(scn_doc_load_from(d, bw, &from, 1, &cfg, err, sizeof err),
                     MSG_EINPUT);
    ck_assert_str_eq(err,
                     "--vary network.bandwidth_gbps=1,-1: "
                     "network.bandwidth_gbps: -1 is out of range (expected a "
                     "number in [1e-06, 1000000000] or \"inf\", or an array of "
                     "workers.count = 2 such values)");
    ck_assert_int_eq(scn_doc_load(d, bw, 1, &cfg, err, sizeof err),
                     MSG_EINPUT); /* no origin: a --set */
    ck_assert_ptr_nonnull(strstr(err, "--set network.bandwidth_gbps=-1: "));
    scn_doc_free(d);
}
END_TEST

/* The one parser of enum names. */
START_TEST(test_parse_name) {
    static const char *const names[] = {"ring", "all_to_all", "star"};
    ck_assert_int_eq(msg_parse_name("star", names, 3), 2);
    ck_assert_int_eq(msg_parse_name("Star", names, 3), -1);
    ck_assert_int_eq(msg_parse_name(NULL, names, 3), -1);
    char buf[32];
    ck_assert_str_eq(msg_name_list(names, 3, buf, sizeof buf),
                     "ring, all_to_all, star");
    ck_assert_str_eq(msg_name_list(names, 3, buf, 8), "ring, a");
}
END_TEST

/* Method sparta: its defaults (tau 1, alpha 0, p 0.005), its schedule of
 * tau + 1 slots, what it ignores (H, fragments), and each refusal. */
START_TEST(test_sparta_keys) {
    ck_assert_int_eq(load(IN("method", "\"name\": \"sparta\""), NULL, 0), 0);
    ck_assert_int_eq(cfg.sched.method, SCHED_SPARTA);
    ck_assert_int_eq(cfg.sched.tau, 1);
    ck_assert(cfg.sched.alpha == 0);
    ck_assert(cfg.sched.subset == 0.005);
    ck_assert_int_eq(cfg.sched.H, 2);
    ck_assert_int_eq(cfg.sched.P, 2);
    ck_assert_int_eq(load(IN("method", "\"name\": \"sparta\", \"H\": 50, "
                                       "\"fragments\": 4, \"tau\": 3, "
                                       "\"alpha\": 0.5, "
                                       "\"subset_fraction\": 0.25"),
                          NULL, 0),
                     0);
    ck_assert_int_eq(cfg.sched.H, 4); /* H and fragments do not apply */
    ck_assert_int_eq(cfg.sched.P, 4);
    ck_assert(cfg.sched.alpha == 0.5 && cfg.sched.subset == 0.25);
    ck_assert_int_eq(cfg.sched.layout, SCHED_STRIDED);
    FAIL(IN("method", "\"name\": \"streaming\", \"subset_fraction\": 0.1"),
         "s.json:3:45: method.subset_fraction: applies to method sparta only "
         "(got streaming)");
    FAIL(IN("method", "\"name\": \"sparta\", \"subset_fraction\": 0"),
         "s.json:3:42: method.subset_fraction: 0 is out of range (expected a "
         "number in (0, 1])");
    FAIL(IN("method", "\"name\": \"sparta\", \"tau\": 24"),
         "s.json:3:30: method.tau: tau must be in 0..layers-1 = 23 with "
         "method sparta (got 24)");
    FAIL(IN("method", "\"name\": \"sparta\", \"overlap\": \"outer\""),
         "s.json:3:34: method.overlap: sparta overlaps by tau steps "
         "(expected overlap inner, got outer)");
    FAIL(IN("method", "\"name\": \"sparta\", \"codec\": \"topk\""),
         "s.json:3:32: method.codec: topk chooses what it sends, sparta "
         "draws its subset (expected a dense codec: fp32, bf16, fp16, "
         "fp8_e4m3, e3m0, e2m1, uint8, int8)");
    FAIL(IN("method", "\"name\": \"sparta\", \"codec\": \"powersgd\""),
         "s.json:3:32: method.codec: powersgd chooses what it sends, sparta "
         "draws its subset (expected a dense codec: fp32, bf16, fp16, "
         "fp8_e4m3, e3m0, e2m1, uint8, int8)");
    FAIL(IN("method", "\"name\": \"sparta\", \"tau\": [1, 2]"),
         "s.json:3:30: method.tau: one tau for every worker with method "
         "sparta (got 1 and 2)");
    FAIL(IN("method", "\"name\": \"sparta\", \"offload_outer\": true"),
         "s.json:3:40: method.offload_outer: sparta keeps no outer "
         "parameters (expected false with method sparta)");
}
END_TEST

Suite *make_suite(void) {
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_enum_names);
    tcase_add_test(tc, test_methods_normalized);
    tcase_add_test(tc, test_per_worker_forms);
    tcase_add_test(tc, test_flop_step_time);
    tcase_add_test(tc, test_split_defaults);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_files);
    tcase_add_test(tc, test_text_details);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("errors");
    tcase_add_test(te, test_syntax_errors);
    tcase_add_test(te, test_root_and_types);
    tcase_add_test(te, test_unknown_keys);
    tcase_add_test(te, test_duplicate_keys);
    tcase_add_test(te, test_numbers);
    tcase_add_test(te, test_ranges);
    tcase_add_test(te, test_per_worker_tau);
    tcase_add_test(te, test_array_lengths);
    tcase_add_test(te, test_network_keys);
    tcase_add_test(te, test_startup_ack_queue_keys);
    tcase_add_test(te, test_model_combinations);
    tcase_add_test(te, test_schedule_errors);
    tcase_add_test(te, test_enum_errors);
    tcase_add_test(te, test_fault_errors);
    tcase_add_test(te, test_set_errors);
    suite_add_tcase(s, te);
    TCase *tv = tcase_create("variants");
    tcase_add_checked_fixture(tv, NULL, drop_scenario_dir);
    tcase_add_test(tv, test_variants_merge);
    tcase_add_test(tv, test_variant_errors);
    tcase_add_test(tv, test_section_shapes);
    tcase_add_test(tv, test_section_limits);
    tcase_add_test(tv, test_meta);
    suite_add_tcase(s, tv);
    TCase *tt = tcase_create("train");
    tcase_add_test(tt, test_sparta_keys);
    tcase_add_checked_fixture(tt, NULL, drop_scenario_dir);
    tcase_add_test(tt, test_train_absent);
    tcase_add_test(tt, test_train_defaults);
    tcase_add_test(tt, test_train_full);
    tcase_add_test(tt, test_train_errors);
    tcase_add_test(tt, test_train_files);
    suite_add_tcase(s, tt);
    TCase *td = tcase_create("defects");
    tcase_add_checked_fixture(td, NULL, drop_scenario_dir);
    tcase_set_timeout(td, 30);
    tcase_add_test(td, test_defect2_literal_overread);
    tcase_add_test(td, test_defect8_nul_escape);
    tcase_add_test(td, test_defect8_exact_integers);
    tcase_add_test(td, test_defect8_utf8);
    tcase_add_test(td, test_defect8_cost_file);
    tcase_add_test(td, test_defect9_size_cap);
    tcase_add_test(td, test_defect9_linear_merge);
    tcase_add_test(td, test_defect5_ranges);
    tcase_add_test(td, test_defect7_trace);
    tcase_add_test(td, test_defect7_text_data);
    tcase_add_test(td, test_stdin);
    tcase_add_test(td, test_doc);
    tcase_add_test(td, test_parse_name);
    tcase_add_test(td, test_host_gbps_range);
    tcase_add_test(td, test_overhead_in_run_length);
    tcase_add_test(td, test_sync_timeout_below_ns);
    tcase_add_test(td, test_did_you_mean);
    tcase_add_test(td, test_cost_file_limits_and_bom);
    tcase_add_test(td, test_sweep_origins);
    suite_add_tcase(s, td);
    return s;
}

CHECK_MAIN(make_suite)
