/*
 * kinds.h -- the plain kinds a scenario names that the engine implements:
 * the collective algorithm and the fault process's configuration.  They
 * live with the config (which reads them) so that the config needs no
 * engine header; sim/engine/collective.h and faults.h include this one.
 * Each enum's names are one table: its parser, its name function and the
 * loader's "expected" lists all read it.
 */
#ifndef DILOSIM_KINDS_H
#define DILOSIM_KINDS_H

/* The shape of an all-reduce (sim/engine/collective.h). */
typedef enum { COLL_RING, COLL_ALL_TO_ALL, COLL_STAR } coll_algo;

/* coll_algo_names[a] is algorithm a's name. */
extern const char *const coll_algo_names[COLL_STAR + 1];

/* Parses "ring" | "all_to_all" | "star"; returns 0 or -1. */
int coll_parse_algo(const char *name, coll_algo *out);
/* The name of a, or "unknown" out of range. */
const char *coll_algo_name(coll_algo a);

/* The distribution of up periods (sim/engine/faults.h). */
typedef enum { FAULTS_EXPONENTIAL, FAULTS_WEIBULL } faults_dist;

/* faults_dist_names[d] is distribution d's name. */
extern const char *const faults_dist_names[FAULTS_WEIBULL + 1];

typedef struct {
    double mtbf_s; /* mean up time, s; 0 = no random failures */
    double mttr_s; /* mean down time, s (> 0 when mtbf_s > 0) */
    faults_dist dist;
    double weibull_shape; /* k > 0, used with FAULTS_WEIBULL */
    const char *trace;    /* path of a trace file, or NULL */
} faults_spec;

/* Parses "exponential" | "weibull"; returns 0 or -1. */
int faults_parse_dist(const char *name, faults_dist *out);
/* The name of d, or "?" out of range. */
const char *faults_dist_name(faults_dist d);

#endif
