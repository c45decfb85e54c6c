/*
 * fuzz_cost.c -- libFuzzer target: the cost file of `dilosim plan --cost`
 * (plan_cost_parse_n, sim/study/plan.h).
 *
 * Input: the document, any bytes (a NUL byte is a syntax error), in an
 * allocation of exactly its size plus a terminating NUL.
 *
 * Checks: no crash, leak or undefined behaviour; a failure returns a
 * negative code with one line that starts with the name given; a success
 * gives prices inside the documented ranges, bandwidths inside a
 * scenario's; a UTF-8 byte order mark in front changes nothing (the same
 * code, message or prices: positions count from after it).
 */
#include "sim/study/plan.h"
#include "sim/config/scenario.h"
#include "fuzz.h"

#include <math.h>

#define NAME "cost.json"

/* The glue to the parser under test (the one place to change when its
 * entry point changes). */
static int parse(const char *text, size_t len, plan_cost *out, char *err) {
    return plan_cost_parse_n(text, len, NAME, out, err, FUZZ_ERRLEN);
}

static int finite_ge(double x, double lo) {
    return isfinite(x) && x >= lo;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    text[size] = 0;
    plan_cost cost;
    char err[FUZZ_ERRLEN] = "";
    int rc = parse(text, size, &cost, err);
    if (rc) {
        fuzz_check_error("plan_cost_parse_n", rc, err);
        if (strncmp(err, NAME ":", strlen(NAME ":")) != 0)
            fuzz_fail("message does not start with the name: %s", err);
    } else {
        if (!finite_ge(cost.wan_usd_per_gbps_month, 0) ||
            !finite_ge(cost.accelerator_usd_per_hour, 0))
            fuzz_fail("prices %g, %g", cost.wan_usd_per_gbps_month,
                      cost.accelerator_usd_per_hour);
        if (!finite_ge(cost.accelerators, 1) ||
            cost.accelerators != floor(cost.accelerators))
            fuzz_fail("accelerators %g", cost.accelerators);
        if (cost.nbandwidths < 0 || cost.nbandwidths > PLAN_MAX_BANDWIDTHS)
            fuzz_fail("%d bandwidths", cost.nbandwidths);
        for (int i = 0; i < cost.nbandwidths; i++)
            if (!(cost.bandwidths_gbps[i] >= SCN_MIN_GBPS &&
                  cost.bandwidths_gbps[i] <= SCN_MAX_GBPS))
                fuzz_fail("bandwidths_gbps[%d] %g", i, cost.bandwidths_gbps[i]);
    }
    if (size < 3 || memcmp(data, "\xEF\xBB\xBF", 3)) {
        char *marked = malloc(size + 4);
        if (marked) {
            memcpy(marked, "\xEF\xBB\xBF", 3);
            if (size) memcpy(marked + 3, data, size);
            marked[size + 3] = 0;
            plan_cost again;
            char e2[FUZZ_ERRLEN] = "";
            int rc2 = parse(marked, size + 3, &again, e2);
            if (rc2 != rc || (rc && strcmp(err, e2)) ||
                (!rc && memcmp(&cost, &again, sizeof cost)))
                fuzz_fail("a byte order mark changes the answer (%d, %d): "
                          "%s | %s",
                          rc, rc2, err, e2);
            free(marked);
        }
    }
    free(text);
    return 0;
}
