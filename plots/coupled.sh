#!/bin/sh
# coupled.sh -- the coupled runs of docs/experiments.md: the clock of a
# 1B-parameter model, the loss of the small model of
# scenarios/train/coupled.json.  DP, DiLoCo and Streaming DiLoCo (late:
# continue) at 1, 10 and 100 Gbit/s; the three at 10 Gbit/s with random
# worker failures (MTBF 0.06 h, MTTR 0.005 h per worker); DP and Streaming
# DiLoCo at 10 Gbit/s again with seed 2 (the noise).  Writes per run
# NAME.csv and its JSON summary NAME.json, then results.csv (one line per
# run) to OUT/coupled/, and the figures OUT/coupled_hours (loss against
# simulated hours), coupled_failures (loss against step, with and without
# failures) and coupled_failures_hours, as PNG and SVG.  OUT is $PLOTS_OUT
# (default plots/out).  14 training runs: 40 s to a few minutes on two
# cores; `make experiments` runs it (not `make plots`).
# PLOTS_ONLY=1 runs nothing and only remakes results.csv and the figures
# from the runs there (an error if one is missing); RUNS_ONLY=1 stops
# after results.csv (plots/plots.mk makes the two steps apart).
# usage: plots/coupled.sh [path/to/dilosim]
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
scenario=$root/scenarios/train/coupled.json
figs=${PLOTS_OUT:-$root/plots/out}
out=$figs/coupled
mkdir -p "$out"
faults="--set faults.mtbf_hours=0.06 --set faults.mttr_hours=0.005"

# run NAME ARGS...: one coupled run; NAME.csv and the summary NAME.json.
run() {
  name=$1
  shift
  if [ -n "$PLOTS_ONLY" ]; then
    [ -s "$out/$name.csv" ] && [ -s "$out/$name.json" ] ||
      { echo "coupled: no run $out/$name.csv" >&2; exit 1; }
    return 0
  fi
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

if [ -n "$RUNS_ONLY" ]; then
  echo "coupled: $out/results.csv"
  exit 0
fi

# legend X: reads lines RUN|PREFIX|PART|SUFFIX|METHOD|DASH (the runs of a
# figure) and prints four: the CSV files, the colours (METHOD, a key of
# plots/palette.gp), the dash types and the labels (PREFIX PART SUFFIX),
# as loss.gp takes them.  A run whose line coincides with an earlier
# run's of the same method (at each of its eval steps the earlier run has
# the same step with an eval loss within 0.5% and an x -- step, or
# sim_time_s for hours -- within 1%) has no legend entry: its PART joins
# that run's ("Streaming DiLoCo 1, 10 and 100 Gbit/s"), one entry per
# visible line, drawn in one dash type (solid if one of them is).
legend() {
  awk -F'|' -v x="$1" -v dir="$out" '
    # rows(k): reads the CSV of run k into step[k, i], loss[k, i], xv[k, i].
    function rows(k,   f, line, n, h, col, i, v) {
      f = dir "/" run[k] ".csv"; n = 0
      while ((getline line < f) > 0) {
        if (line ~ /^#/) continue
        split(line, v, ",")
        if (!h++) { for (i in v) col[v[i]] = i; continue }
        n++
        step[k, n] = v[col["step"]]; loss[k, n] = v[col["eval_loss_outer_nats"]]
        xv[k, n] = v[col[x == "step" ? "step" : "sim_time_s"]]
      }
      close(f)
      if (!h || !("sim_time_s" in col) && x != "step") {
        print "coupled: cannot read " f > "/dev/stderr"; exit 1
      }
      nrow[k] = n
    }
    function near(a, b, rel) { return (a > b ? a - b : b - a) <= rel * (b > 0 ? b : 1) }
    # on(k, j): every eval step of run k lies on the line of run j.
    function on(k, j,   i, m, found) {
      for (i = 1; i <= nrow[k]; i++) {
        found = 0
        for (m = 1; m <= nrow[j] && !found; m++)
          found = step[j, m] == step[k, i] && near(loss[k, i], loss[j, m], 0.005) &&
                  near(xv[k, i], xv[j, m], 0.01)
        if (!found) return 0
      }
      return 1
    }
    {
      n++; run[n] = $1; pre[n] = $2; part[n] = $3; suf[n] = $4; meth[n] = $5
      dash[n] = $6; rows(n); join[n] = n
      for (j = 1; j < n && join[n] == n; j++)
        if (join[j] == j && meth[j] == meth[n] && on(n, j)) {
          join[n] = j; parts[j] = parts[j] "|" part[n]
          if (dash[n] == 1) dash[j] = 1   # a joined line is solid if one is
        }
    }
    END {
      for (k = 1; k <= n; k++) {
        files = files " " dir "/" run[k] ".csv"
        colors = colors " " meth[k]; dashes = dashes " " dash[join[k]]
        label = ""
        if (join[k] == k) {
          m = split(part[k] parts[k], p, "|"); label = p[1]
          for (i = 2; i <= m; i++) label = label (i == m ? " and " : ", ") p[i]
          label = pre[k] label suf[k]
        }
        labels = labels " \"" label "\""
      }
      print files; print colors; print dashes; print labels
    }'
}

# figure NAME X LOGX TITLE: the runs legend reads (on stdin), eval loss
# against X (step or hours; LOGX 1: log axis) in FIGS/NAME.png and .svg,
# the legend beside the plot.
figure() {
  legend "$2" | {
    read -r files; read -r colors; read -r dashes; read -r labels
    gnuplot -e "files='$files'" -e "labels='$labels'" \
      -e "colors='$colors'; dashes='$dashes'" \
      -e "x='$2'; logx=$3; ymin=1.05; ymax=1.8" \
      -e "keypos='outside right top'; size='1200,600'" \
      -e "title='$4'" -e "out='$figs/$1'" "$root/plots/loss.gp"
  }
}

# The figures: a colour per method, a dash type per bandwidth (dotted 1,
# solid 10, dashed 100 Gbit/s) or for failures (dashed).  The scenario's
# streaming variant overlaps (tau 1) with E3M0 payloads.
for v in "dp|DP |dp" "diloco|DiLoCo |diloco" \
         "streaming|Streaming DiLoCo |streaming_overlap_fp4"; do
  IFS='|' read -r run name key <<EOF2
$v
EOF2
  printf '%s\n' "${run}_1|$name|1| Gbit/s|$key|3" "${run}_10|$name|10| Gbit/s|$key|1" \
    "${run}_100|$name|100| Gbit/s|$key|2"
done | figure coupled_hours hours 1 \
  'Coupled runs: 1B-parameter clock, 0.14M-parameter MLP loss'

for x in step hours; do
  case $x in
    step) name=coupled_failures log=0 ;;
    *) name=coupled_failures_hours log=1 ;;
  esac
  for v in "dp|DP|dp" "diloco|DiLoCo|diloco" \
           "streaming|Streaming DiLoCo|streaming_overlap_fp4"; do
    IFS='|' read -r run vname key <<EOF2
$v
EOF2
    printf '%s\n' "${run}_10|$vname, |without| failures|$key|1" \
      "${run}_10_failures|$vname, |with| failures|$key|2"
  done | figure $name $x $log \
    '10 Gbit/s, with and without worker failures (MTBF 0.06 h)'
done
echo "coupled: $out/results.csv, $figs/coupled_*.png"
