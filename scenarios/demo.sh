#!/bin/sh
# The demo behind `make demo`: the Streaming DiLoCo paper's 1B setup (24
# layers, 0.1 s steps, two replicas) at a few bandwidths, for DP, DiLoCo
# and Streaming DiLoCo (overlap 1, E3M0 payloads), then the full result of
# the default scenario.  The table reads the sweep's CSV columns by name
# (comment lines skipped), so new columns cannot shift it; tests/cli_demo.sh
# checks every figure it prints against `dilosim run`.
set -e
bin=${1:-bin/dilosim}
dir=$(dirname "$0")

echo "dilosim: the Streaming DiLoCo paper's 1B setup, 2 replicas, 1000 steps"
echo "(scenarios/paper/1b.json; its bandwidths count 2^30 bits per Gbit, see docs/reproduction.md)"
echo
"$bin" sweep "$dir/paper/1b.json" --jobs 2 \
  --variant data_parallel --variant diloco --variant streaming_overlap_fp4 \
  --vary network.bandwidth_gbps=1,10,100,1000 |
awk -F, '
  /^#/ { next }
  !head { for (i = 1; i <= NF; i++) col[$i] = i; head = 1
          split("variant network.bandwidth_gbps compute_utilization " \
                "bytes_sent_total wall_time_s", need, " ")
          for (k in need) if (!(need[k] in col)) {
            print "demo: the sweep has no column " need[k] > "/dev/stderr"; exit 1 }
          label["data_parallel"] = "data-parallel"
          label["diloco"] = "DiLoCo (H 100)"
          label["streaming_overlap_fp4"] = "Streaming (tau 1, E3M0)"
          printf "%-24s %8s %12s %12s %12s\n", "method", "Gbit/s",
                 "utilization", "sent (GB)", "wall (s)"; next }
  { v = $col["variant"]
    printf "%-24s %8s %11.1f%% %12.1f %12.1f\n", (v in label) ? label[v] : v,
           $col["network.bandwidth_gbps"], 100 * $col["compute_utilization"],
           $col["bytes_sent_total"] / 1e9, $col["wall_time_s"] }'
echo "(sent: the bytes both workers put on the WAN; wall: simulated time)"
echo
echo "The default scenario (scenarios/default.json), in full:"
"$bin" run "$dir/default.json"
