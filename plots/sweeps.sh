#!/bin/sh
# sweeps.sh -- the simulations behind the figures and the Table 4
# reproduction: compute utilization of the paper's five methods on the
# 50-point bandwidth grid for 1B, 10B and 100B, plus the 100B layout and
# overlap studies.  Writes CSV files to plots/out/.
# usage: plots/sweeps.sh [path/to/dilosim]
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/plots/out
mkdir -p "$out"
for s in 1b 10b 100b; do
  "$bin" sweep "$root/scenarios/paper/$s.json" --out "$out/sweep_$s.csv"
done
# 100B: sequential against strided fragments, tau 0 and 1, bf16.
"$bin" sweep "$root/scenarios/paper/100b.json" \
  --variant streaming --variant streaming_overlap \
  --vary method.layout=sequential,strided --out "$out/layout_100b.csv"
# 100B: growing overlap at the paper's H 100 (tau up to H - 1; several
# fragments are then in flight at once).
"$bin" sweep "$root/scenarios/paper/100b.json" --variant streaming_overlap_fp4 \
  --vary method.tau=0,1,2,5,10 --out "$out/tau_100b.csv"
