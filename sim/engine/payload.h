/*
 * payload.h -- the bytes of a sync's payload: how the model's parameters
 * split into layers and slices, and what a layer or slice takes on the
 * wire under a codec.  Pure functions of the config, shared by the run
 * (the all-reduces' sizes) and by memory.c (a worker's memory).
 */
#ifndef DILOSIM_PAYLOAD_H
#define DILOSIM_PAYLOAD_H

#include <stdint.h>

#include "sim/config/scenario.h"

/* The most parameters a model may have: 2^62 (a run stops before it
 * starts with more; the functions below clamp to it). */
#define PAYLOAD_PARAMS_MAX ((uint64_t)1 << 62)

/* Bytes of one layer's payload under a codec: the layer holds
 * sched-independent n_l = floor((l+1)*N/L) - floor(l*N/L) of the model's N
 * parameters, as rows of `hidden` values. */
uint64_t payload_layer_bytes(const scn_config *cfg, codec_spec codec, int l);

/* The values of slice j of P of layer l (layout sliced):
 * floor((j+1)*n_l/P) - floor(j*n_l/P); with P 1, n_l. */
uint64_t payload_slice_params(const scn_config *cfg, int l, int j, int P);

/* Bytes of slice j of P of layer l: its payload_slice_params values as
 * rows of `hidden` values.  With P 1, payload_layer_bytes. */
uint64_t payload_slice_bytes(const scn_config *cfg, codec_spec codec, int l,
                             int j, int P);

/* Method sparta: bytes of the subset of layer l taken after a step, k_l =
 * sched_subset_count(p, n_l) values as one row (row_len 0), so a scaled
 * codec has one scale per block (or per subset) of the k values. */
uint64_t payload_subset_bytes(const scn_config *cfg, codec_spec codec, int l);

/* Method sparta: the payload of layer l's reduction in its slot (the
 * fragment that holds it, of P = tau + 1 strided ones): every slot
 * carries the whole model's subset, layer l the subsets of layers l to
 * l + P - 1 (the slot's first layer those below it too, its last one
 * those above), so the P slots send the same bytes. */
uint64_t payload_sparta_bytes(const scn_config *cfg, codec_spec codec, int l,
                              int P);

#endif
