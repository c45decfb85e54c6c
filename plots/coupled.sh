#!/bin/sh
# coupled.sh -- the coupled runs of docs/experiments.md: the clock of a
# 1B-parameter model, the loss of the small model of
# scenarios/train/coupled.json.  DP, DiLoCo and Streaming DiLoCo (late:
# continue) at 1, 10 and 100 Gbit/s; the three at 10 Gbit/s with random
# worker failures (MTBF 0.06 h, MTTR 0.005 h per worker); DP and Streaming
# DiLoCo at 10 Gbit/s again with seed 2 (the noise).  Writes per run
# NAME.csv and its JSON summary NAME.json, then results.csv (one line per
# run) to plots/out/coupled/, and the figures plots/out/coupled_hours
# (loss against simulated hours), coupled_failures (loss against step,
# with and without failures) and coupled_failures_hours, as PNG and SVG.
# About 40 s on two cores.
# usage: plots/coupled.sh [path/to/dilosim]
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
scenario=$root/scenarios/train/coupled.json
out=$root/plots/out/coupled
mkdir -p "$out"
faults="--set faults.mtbf_hours=0.06 --set faults.mttr_hours=0.005"

# run NAME ARGS...: one coupled run; NAME.csv and the summary NAME.json.
run() {
  name=$1
  shift
  echo "coupled: $name"
  "$bin" train "$scenario" --quiet "$@" --out "$out/$name.csv" \
    >"$out/$name.json.tmp"
  mv "$out/$name.json.tmp" "$out/$name.json"
}

for v in dp diloco streaming; do
  for b in 1 10 100; do
    run "${v}_$b" --variant $v --set network.bandwidth_gbps=$b
  done
  # shellcheck disable=SC2086
  run "${v}_10_failures" --variant $v --set network.bandwidth_gbps=10 $faults
done
for v in dp streaming; do
  run "${v}_10_seed2" --variant $v --set network.bandwidth_gbps=10 --set seed=2
done

# results.csv: the summary figures of every run, one line each.  The
# summaries hold one "key": value pair per line.
{
  echo "run,eval_loss_outer_nats,sim_time_h,sim_compute_utilization," \
    "sim_goodput,sim_failures,target_step,time_to_target_s,wan_bytes" |
    tr -d ' '
  for f in "$out"/*.json; do
    awk -v run="$(basename "$f" .json)" '
      { gsub(/[",]/, ""); v[$1] = $2 }
      END {
        t = ("time_to_target_s:" in v) ? v["time_to_target_s:"] : "";
        s = ("target_step:" in v) ? v["target_step:"] : "";
        printf "%s,%.4f,%.4f,%.4f,%.4f,%d,%s,%s,%s\n", run,
               v["eval_loss_outer_nats:"], v["sim_time_s:"] / 3600,
               v["sim_compute_utilization:"], v["sim_goodput:"],
               v["sim_failures:"], s, t, v["wan_bytes:"]
      }' "$f"
  done
} >"$out/results.csv"

# The figures: a colour per method, a dash type per bandwidth.
c_dp="#1f77b4"
c_di="#2ca02c"
c_st="#d62728"
files=""
labels=""
colors=""
dashes=""
for v in dp diloco streaming; do
  case $v in
    dp) name="DP" c=$c_dp ;;
    diloco) name="DiLoCo" c=$c_di ;;
    *) name="Streaming DiLoCo" c=$c_st ;;
  esac
  for b in 1 10 100; do
    case $b in
      1) d=3 ;;
      10) d=1 ;;
      *) d=2 ;;
    esac
    files="$files $out/${v}_$b.csv"
    labels="$labels \"$name $b Gbit/s\""
    colors="$colors $c"
    dashes="$dashes $d"
  done
done
gnuplot -e "files='$files'" -e "labels='$labels'" \
  -e "colors='$colors'; dashes='$dashes'" \
  -e "x='hours'; logx=1; ymin=1.05; ymax=1.8" \
  -e "title='Coupled runs: 1B-parameter clock, 0.14M-parameter MLP loss'" \
  -e "out='$root/plots/out/coupled_hours'" "$root/plots/loss.gp"

files=""
for v in dp diloco streaming; do
  files="$files $out/${v}_10.csv $out/${v}_10_failures.csv"
done
labels='"DP" "DP, failures" "DiLoCo" "DiLoCo, failures"'
labels="$labels \"Streaming DiLoCo\" \"Streaming DiLoCo, failures\""
colors="$c_dp $c_dp $c_di $c_di $c_st $c_st"
for x in step hours; do
  case $x in
    step) name=coupled_failures log=0 ;;
    *) name=coupled_failures_hours log=1 ;;
  esac
  gnuplot -e "files='$files'" -e "labels='$labels'" \
    -e "colors='$colors'; dashes='1 2 1 2 1 2'" \
    -e "x='$x'; logx=$log; ymin=1.05; ymax=1.8" \
    -e "title='10 Gbit/s, with and without worker failures (MTBF 0.06 h)'" \
    -e "out='$root/plots/out/$name'" "$root/plots/loss.gp"
done
echo "coupled: $out/results.csv, plots/out/coupled_*.png"
