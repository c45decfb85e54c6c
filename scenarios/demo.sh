#!/bin/sh
# The demo behind `make demo`: the paper's 1B setup (24 layers, 0.1 s
# steps, two replicas) at a few bandwidths, for DP, DiLoCo and Streaming
# DiLoCo (overlap 1, E3M0 payloads).
set -e
bin=${1:-bin/dilosim}
dir=$(dirname "$0")/paper
field() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p"; }

echo "dilosim: the Streaming DiLoCo paper's 1B setup, 2 replicas, 1000 steps"
printf '%-24s %10s %12s %14s %12s\n' method "Gbit/s" "utilization" "sent (GB)" "wall (s)"
for m in data_parallel diloco streaming_overlap_fp4; do
  for bw in 1 10 100 1000; do
    out=$("$bin" run "$dir/1b_$m.json" --set network.bandwidth_gbps=$bw)
    cu=$(echo "$out" | field compute_utilization)
    bytes=$(echo "$out" | field bytes_sent_total)
    wall=$(echo "$out" | field wall_time_s)
    awk -v m="$m" -v bw="$bw" -v cu="$cu" -v b="$bytes" -v w="$wall" \
      'BEGIN { printf "%-24s %10s %11.1f%% %14.1f %12.1f\n", m, bw, 100 * cu, b / 1e9, w }'
  done
done
echo
echo "Full result of the default scenario (scenarios/default.json):"
"$bin" run "$(dirname "$0")/default.json"
