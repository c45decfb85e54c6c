/*
 * probe.h -- one transfer on a fresh network, timed as the scenario's
 * network moves it: what `dilosim calibrate` predicts an iperf3 test
 * (sim/study/measure.h, MEAS_STREAM) takes.
 */
#ifndef DILOSIM_PROBE_H
#define DILOSIM_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/scenario.h"

/* The most parallel streams of one probe. */
#define PROBE_MAX_STREAMS (SCN_MAX_WORKERS - 1)

/* The time, in ns from its start, that `bytes` take over `streams`
 * parallel connections from worker 0 to worker 1 of the validated
 * scenario c (workers.count >= 2) on a network that has carried nothing
 * yet: worker 0's up link and worker 1's down link at the scenario's
 * rates (network.efficiency and network.gbit applied), the one-way latency
 * lat(0 -> 1) before the first byte, and with network.transport tcp each
 * stream its own new connection (slow start from
 * network.tcp_init_window_kb, round trip lat(0 -> 1) + lat(1 -> 0) +
 * network.queue_ms, the window limit network.tcp_window_mb), or with
 * ideal transport every flow capped by network.tcp_window_mb over the
 * longest round trip of the two workers (and the queue), as a run does;
 * ACKs (network.ack_bytes_per_kb) load the reverse links, which carry
 * nothing else.  The streams move ceil(bytes / streams) bytes each and
 * share the links max-min fairly.  Not paid: a collective's software cost
 * (network.collective_overhead_ms: an iperf3 test makes no collective)
 * and the set-up of a new pair (network.startup_ms: iperf3 starts its
 * clock once its connections are up).  Returns 0 with *ns set, or MSG_EINPUT (one worker, bytes
 * 0, streams outside 1..PROBE_MAX_STREAMS, more than SCN_MAX_MATRIX - 1
 * streams with a latency matrix, a transfer that never ends or ends past
 * RUN_TIME_MAX_NS) / MSG_ENOMEM with a one-line message in err. */
int probe_stream(const scn_config *c, uint64_t bytes, int streams, int64_t *ns,
                 char *err, size_t errlen);

#endif
