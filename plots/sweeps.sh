#!/bin/sh
# sweeps.sh -- the simulations behind the figures and the Table 4
# reproduction: compute utilization of the paper's five methods on the
# 50-point bandwidth grid for 1B, 10B and 100B, plus the 100B layout and
# overlap studies.  A couple of seconds in all.
#
# usage: plots/sweeps.sh [path/to/dilosim [NAME]...]
#   NAME: sweep_1b, sweep_10b, sweep_100b, layout_100b, tau_100b (default:
#   all five, in that order).  Each writes OUT/NAME.json, `dilosim run` of
#   the sweep's first variant at the scenario's own settings (its resolved
#   inputs -- size, layers, H, fragments, codec -- title the figures),
#   then OUT/NAME.csv, the sweep.  OUT is $PLOTS_OUT (default plots/out,
#   under the tree this script is in).  plots/plots.mk runs one NAME per
#   make rule, so that `make plots` remakes only what is out of date.
set -e
bin=${1:-bin/dilosim}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
out=${PLOTS_OUT:-$root/plots/out}
paper=$root/scenarios/paper
mkdir -p "$out"
[ $# -gt 0 ] || set -- sweep_1b sweep_10b sweep_100b layout_100b tau_100b

for name in "$@"; do
  case $name in
    sweep_1b | sweep_10b | sweep_100b)
      scenario=$paper/${name#sweep_}.json first=data_parallel args= ;;
    # 100B: sequential against strided fragments, tau 0 and 1, bf16.
    layout_100b)
      scenario=$paper/100b.json first=streaming
      args="--variant streaming --variant streaming_overlap"
      args="$args --vary method.layout=sequential,strided" ;;
    # 100B: growing overlap at the paper's H 100 (tau up to H - 1;
    # several fragments are then in flight at once).
    tau_100b)
      scenario=$paper/100b.json first=streaming_overlap_fp4
      args="--variant streaming_overlap_fp4 --vary method.tau=0,1,2,5,10" ;;
    *)
      echo "sweeps.sh: unknown sweep '$name' (expected sweep_1b, sweep_10b," \
        "sweep_100b, layout_100b or tau_100b)" >&2
      exit 2 ;;
  esac
  "$bin" run "$scenario" --variant "$first" --quiet --out "$out/$name.json"
  # shellcheck disable=SC2086
  "$bin" sweep "$scenario" $args --out "$out/$name.csv"
done
