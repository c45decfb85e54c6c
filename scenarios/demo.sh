#!/bin/sh
# The demo behind `make demo`: the Streaming DiLoCo paper's 1B setup (24
# layers, 0.1 s steps, two replicas) at a few bandwidths, for DP, DiLoCo
# and Streaming DiLoCo (overlap 1, E3M0 payloads), then the full result of
# the default scenario.
set -e
bin=${1:-bin/dilosim}
dir=$(dirname "$0")

echo "dilosim: the Streaming DiLoCo paper's 1B setup, 2 replicas, 1000 steps"
echo "(scenarios/paper/1b.json; its bandwidths count 2^30 bits per Gbit, see README)"
echo
"$bin" sweep "$dir/paper/1b.json" --jobs 2 \
  --variant data_parallel --variant diloco --variant streaming_overlap_fp4 \
  --vary network.bandwidth_gbps=1,10,100,1000 |
awk -F, 'NR == 1 { printf "%-24s %8s %12s %12s %10s\n", "method", "Gbit/s",
                   "utilization", "sent (GB)", "wall (s)"; next }
         { printf "%-24s %8s %11.1f%% %12.1f %10.1f\n", $1, $2, 100 * $3,
                  $6 / 1e9, $4 }'
echo
echo "The default scenario (scenarios/default.json), in full:"
"$bin" run "$dir/default.json"
