/*
 * fuzz_cost.c -- libFuzzer target: the cost file of `dilosim plan --cost`
 * (plan_cost_parse, sim/plan.h).
 *
 * Input: the document text (cut at its first NUL byte, as a C string).
 *
 * Checks: no crash, leak or undefined behaviour; a failure returns a
 * negative code with one line that starts with the name given; a success
 * gives prices inside the documented ranges.
 */
#include "../../sim/plan.h"
#include "fuzz.h"

#include <math.h>

#define NAME "cost.json"

/* The glue to the parser under test (the one place to change when its
 * entry point changes). */
static int parse(const char *text, plan_cost *out, char *err) {
    return plan_cost_parse(text, NAME, out, err, FUZZ_ERRLEN);
}

static int finite_ge(double x, double lo) { return isfinite(x) && x >= lo; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_parts p;
    if (fuzz_split(data, size, &p)) return 0;
    plan_cost cost;
    char err[FUZZ_ERRLEN] = "";
    int rc = parse(p.part[0], &cost, err);
    if (rc) {
        /* Pending defect cost-1 (tests/fuzz/pending/cost/): the messages
         * about an unknown or duplicate key copy the key as it is,
         * control characters included, so a key "\n" gives a message of
         * two lines.  Tolerated unless strict. */
        if (!fuzz_strict())
            for (char *s = err; *s; s++)
                if ((unsigned char)*s < 0x20) *s = '?';
        fuzz_check_error("plan_cost_parse", rc, err);
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
            if (!finite_ge(cost.bandwidths_gbps[i], 0) ||
                cost.bandwidths_gbps[i] == 0)
                fuzz_fail("bandwidths_gbps[%d] %g", i,
                          cost.bandwidths_gbps[i]);
    }
    fuzz_parts_free(&p);
    return 0;
}
