/*
 * kinds.c -- the names of the kinds of kinds.h, one table each.
 */
#include "sim/config/kinds.h"

#include "sim/base/msg.h"

const char *const coll_algo_names[COLL_STAR + 1] = {"ring", "all_to_all",
                                                    "star"};

int coll_parse_algo(const char *name, coll_algo *out) {
    int a = msg_parse_name(name, coll_algo_names, COLL_STAR + 1);
    if (a < 0) return -1;
    *out = (coll_algo)a;
    return 0;
}

const char *coll_algo_name(coll_algo a) {
    return a >= COLL_RING && a <= COLL_STAR ? coll_algo_names[a] : "unknown";
}

const char *const faults_dist_names[FAULTS_WEIBULL + 1] = {"exponential",
                                                           "weibull"};

int faults_parse_dist(const char *name, faults_dist *out) {
    int i = msg_parse_name(name, faults_dist_names, FAULTS_WEIBULL + 1);
    if (i < 0) return -1;
    *out = (faults_dist)i;
    return 0;
}

const char *faults_dist_name(faults_dist d) {
    return d >= FAULTS_EXPONENTIAL && d <= FAULTS_WEIBULL ? faults_dist_names[d]
                                                          : "?";
}
