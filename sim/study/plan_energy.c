/*
 * plan_energy.c -- the energy a plan's options draw per month and their
 * emissions on a grid of given carbon intensity (plan_extra.has_grid):
 * each method's accelerators and powers from its scenario
 * (workers.power_w, network.joules_per_gb), each option's kWh from its
 * CU and simulated bytes (plan.h, plan__energy).
 */
#include <string.h>

#include "sim/base/msg.h"
#include "sim/study/plan.h"

#define J_PER_KWH 3.6e6

int plan__power_of(const plan_result *out, const char *path,
                   const scn_config *c, plan_method *pm, char *err,
                   size_t errlen) {
    plan_power *p = &pm->power;
    memset(p, 0, sizeof *p);
    if (!out->has_grid) return 0;
    if (!c->has_power)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: %s: --grid-gco2-per-kwh needs workers.power_w in "
                       "the scenario (expected {\"busy\": W, \"idle\": W} per "
                       "accelerator)",
                       path, pm->name);
    for (int i = 0; i < c->workers; i++)
        p->accelerators += scn_accelerators(c, i);
    p->busy_w = c->power_busy_w;
    p->idle_w = c->power_idle_w;
    p->has_joules = c->has_joules_per_gb;
    p->joules_per_gb = c->joules_per_gb;
    return 0;
}

void plan__energy(plan_result *out) {
    const double h = PLAN_HOURS_PER_MONTH;
    for (int m = 0; out->has_grid && m < out->nmethods; m++) {
        const plan_power *p = &out->method[m].power;
        for (int k = 0; k < out->method[m].noptions; k++) {
            plan_option *o = &out->method[m].option[k];
            double kwh = (o->cu * p->busy_w + (1 - o->cu) * p->idle_w) *
                         p->accelerators * h / 1000;
            if (p->has_joules && o->has_run && o->run.wall_s > 0)
                kwh += o->run.bytes / o->run.wall_s * 3600 * h / PLAN_GB *
                       p->joules_per_gb / J_PER_KWH;
            o->energy_kwh_month = kwh;
            o->emissions_kg_co2_month = kwh * out->grid_gco2_per_kwh / 1000;
        }
    }
}
