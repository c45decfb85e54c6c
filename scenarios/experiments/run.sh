#!/bin/sh
# run.sh -- the small-scale training experiments of docs/experiments.md:
# every variant of scenarios/experiments/markov.json through `dilosim
# train` (at low priority, one after the other), then a results table and
# the loss plots.  About an hour on two cores (38 runs).
#
# A variant whose CSV and summary are already there is not run again, so
# an interrupted run resumes where it stopped; FORCE=1 runs everything;
# PLOTS_ONLY=1 runs nothing and only remakes the tables and figures from
# the CSV files there (an error if one is missing).
#
# usage: scenarios/experiments/run.sh [path/to/dilosim]
# writes, under plots/out/experiments/:
#   VARIANT.csv, VARIANT.json  the loss curve and the summary of each run
#   results.csv, results.md    one row per run (final losses, bytes, time)
#   tau.csv                    final eval loss against tau, per alpha
#   loss_*.png/svg, tau.png/svg  the figures (plots/loss.gp, tau.gp)
set -e
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/scenarios/experiments
sc=$here/markov.json
out=$root/plots/out/experiments
mkdir -p "$out"

# (a) methods, (b) codec, (c) tau x alpha, (d) FedPart, (f) replicas;
# (e) comes from the extra evaluations of the "streaming" and
# "tau1_alpha0" runs; the seed 2
# pair measures how much a difference between two runs is noise; (g) the
# overlaps of the eager-updates paper at H 30, two seeds; (h) the second
# replica's tau 1..10 with the first's at 1.
variants="dp diloco streaming streaming_fp32
  tau0_alpha0.5 tau2_alpha0.5 tau5_alpha0.5 tau10_alpha0.5
  tau0_alpha0 tau1_alpha0 tau2_alpha0 tau5_alpha0 tau10_alpha0
  fedpart m4_batch4 m4_steps480 dp_seed2 streaming_seed2
  h30_none h30_inner h30_delayed h30_delayed_lr h30_eager
  h30_none_seed2 h30_inner_seed2 h30_delayed_seed2 h30_delayed_lr_seed2
  h30_eager_seed2"

# one NAME ARG...: the run NAME (dilosim train with ARG...), unless its CSV
# and summary are there already (or PLOTS_ONLY).
one() {
  v=$1
  shift
  if [ -n "$PLOTS_ONLY" ] || { [ -z "$FORCE" ] && [ -s "$out/$v.csv" ] &&
                               [ -s "$out/$v.json" ]; }; then
    [ -s "$out/$v.json" ] || { echo "experiments: no $out/$v.json" >&2; exit 1; }
    return 0
  fi
  echo "experiments: $v ($(date +%H:%M:%S))" >&2
  nice -n 10 "$bin" train "$sc" "$@" --out "$out/$v.csv" >"$out/$v.json.tmp"
  mv "$out/$v.json.tmp" "$out/$v.json"
}

for v in $variants; do one "$v" --variant "$v"; done
# (h): the base with the second replica's tau k, the first's 1 (tau_1_k).
for k in 2 3 4 5 6 7 8 9 10; do one "tau_1_$k" --set "method.tau=[1, $k]"; done

# val KEY FILE: a number (or string) of a summary, "" when absent.
val() {
  sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$2"
}

# results.csv: one row per run; vs_dp_percent is the final outer eval loss
# relative to DP's with the same seed (the seed also draws the chain).
dp_loss=$(val eval_loss_outer_nats "$out/dp.json")
{
  echo "variant,method,codec,replicas,H,fragments,tau,alpha,fedpart,batch,steps,tokens,eval_loss_outer_nats,eval_loss_replica_nats,eval_loss_average_nats,entropy_floor_nats,gap_to_floor_nats,vs_dp_percent,bytes_sent_total,host_time_s"
  for v in $variants; do
    j=$out/$v.json
    ref=$out/dp.json
    case $v in *_seed2) ref=$out/dp_seed2.json ;; esac
    loss=$(val eval_loss_outer_nats "$j") ref_loss=$(val eval_loss_outer_nats "$ref")
    row=$v
    for k in method codec replicas H fragments tau alpha fedpart batch steps \
             tokens eval_loss_outer_nats eval_loss_replica_nats \
             eval_loss_average_nats entropy_floor_nats gap_to_floor_nats; do
      row="$row,$(val $k "$j")"
    done
    pct=$(awk -v a="$loss" -v b="$ref_loss" 'BEGIN { printf "%.2f", 100 * (a - b) / b }')
    # host_time_s: wall_time_s in the summaries of earlier versions
    host=$(val host_time_s "$j")
    [ -n "$host" ] || host=$(val wall_time_s "$j")
    row="$row,$pct,$(val bytes_sent_total "$j"),$host"
    echo "$row"
  done
} >"$out/results.csv"

# results.md: the table of docs/experiments.md.
awk -F, 'NR == 1 {
    print "| variant | method | codec | M | tau | alpha | eval loss (outer) | gap to floor | vs DP | bytes sent | host s |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    next }
  { printf "| %s | %s%s | %s | %s | %s | %s | %.4f | %.4f | %+.2f%% | %.3g | %.0f |\n",
      $1, $2, ($9 == 1 ? " (FedPart)" : ""), $3, $4, $7, $8, $13, $17, $18,
      $19, $20 }' "$out/results.csv" >"$out/results.md"
awk -F, 'BEGIN {
    print ""
    print "| final eval loss (nats) of | outer parameters | replica 0 | average of the replicas |"
    print "|---|---|---|---|" }
  $15 != "" && NR > 1 {
    printf "| %s (tau %s, alpha %s) | %.4f | %.4f | %.4f |\n", $1, $7, $8,
      $13, $14, $15 }' "$out/results.csv" >>"$out/results.md"

# tau.csv: final eval loss against tau, alpha 0.5 and alpha 0.
{
  echo "tau,alpha_0.5,alpha_0"
  for t in 0 1 2 5 10; do
    a5=tau${t}_alpha0.5
    [ "$t" = 1 ] && a5=streaming
    echo "$t,$(val eval_loss_outer_nats "$out/$a5.json"),$(val eval_loss_outer_nats "$out/tau${t}_alpha0.json")"
  done
} >"$out/tau.csv"

# overlap.md: (g), final outer eval loss per overlap and seed, and its
# difference to no overlap with the same seed.
{
  echo "| overlap (H 30, P 1) | seed 1 | seed 2 | vs none, seed 1 | vs none, seed 2 |"
  echo "|---|---|---|---|---|"
  for v in none inner delayed delayed_lr eager; do
    a=$(val eval_loss_outer_nats "$out/h30_$v.json")
    b=$(val eval_loss_outer_nats "$out/h30_${v}_seed2.json")
    a0=$(val eval_loss_outer_nats "$out/h30_none.json")
    b0=$(val eval_loss_outer_nats "$out/h30_none_seed2.json")
    awk -v v="$v" -v a="$a" -v b="$b" -v a0="$a0" -v b0="$b0" 'BEGIN {
      printf "| %s | %.4f | %.4f | %+.2f%% | %+.2f%% |\n", v, a, b,
        100 * (a - a0) / a0, 100 * (b - b0) / b0 }'
  done
} >"$out/overlap.md"

# tau2.csv: (h), final outer eval loss against the second replica's tau.
{
  echo "tau_2,eval_loss_outer_nats"
  echo "1,$(val eval_loss_outer_nats "$out/streaming.json")"
  for k in 2 3 4 5 6 7 8 9 10; do
    echo "$k,$(val eval_loss_outer_nats "$out/tau_1_$k.json")"
  done
} >"$out/tau2.csv"

# The figures.
plot() { gnuplot -e "out='$out/$1'" -e "$2" "$root/plots/loss.gp"; }
c() { for v in "$@"; do printf '%s/%s.csv ' "$out" "$v"; done; }
zoom="ymin=1.7; ymax=2.6"
plot loss_methods "files='$(c dp diloco streaming streaming_fp32)'; \
  labels='\"data-parallel (fp32)\" \"DiLoCo (H 24, alpha 0, fp32)\" \"Streaming DiLoCo (tau 1, alpha 0.5, E3M0)\" \"Streaming DiLoCo (tau 1, alpha 0.5, FP32)\"'; \
  title='(a), (b): methods at equal tokens (2 replicas)'; $zoom"
plot loss_tau_alpha0.5 "files='$(c tau0_alpha0.5 streaming tau2_alpha0.5 tau5_alpha0.5 tau10_alpha0.5)'; \
  labels='\"tau 0\" \"tau 1\" \"tau 2\" \"tau 5\" \"tau 10\"'; \
  title='(c): Streaming DiLoCo, E3M0, alpha 0.5: overlap tau'; $zoom"
plot loss_tau_alpha0 "files='$(c tau0_alpha0 tau1_alpha0 tau2_alpha0 tau5_alpha0 tau10_alpha0)'; \
  labels='\"tau 0\" \"tau 1\" \"tau 2\" \"tau 5\" \"tau 10\"'; \
  title='(c): Streaming DiLoCo, E3M0, alpha 0: overlap tau'; $zoom"
plot loss_fedpart "files='$(c streaming fedpart)'; \
  labels='\"Streaming DiLoCo\" \"FedPart (one fragment trains at a time)\"'; \
  title='(d): FedPart against Streaming DiLoCo (tau 1, alpha 0.5, E3M0)'"
plot loss_eval "files='$(c streaming)'; \
  cols='eval_loss_outer_nats eval_loss_replica_nats eval_loss_average_nats'; \
  labels='\"outer parameters\" \"replica 0\" \"average of the replicas\"'; \
  title='(e): what to evaluate (Streaming DiLoCo, tau 1, alpha 0.5, E3M0)'; $zoom"
plot loss_eval_alpha0 "files='$(c tau1_alpha0)'; \
  cols='eval_loss_outer_nats eval_loss_replica_nats eval_loss_average_nats'; \
  labels='\"outer parameters\" \"replica 0\" \"average of the replicas\"'; \
  title='(e): what to evaluate (Streaming DiLoCo, tau 1, alpha 0, E3M0)'; $zoom"
plot loss_replicas "files='$(c streaming m4_batch4 m4_steps480)'; \
  labels='\"M 2, batch 8, 960 steps\" \"M 4, batch 4, 960 steps\" \"M 4, batch 8, 480 steps\"'; \
  title='(f): 2 against 4 replicas at equal tokens (Streaming DiLoCo, E3M0)'; $zoom"
plot loss_overlap "files='$(c h30_none h30_inner h30_delayed h30_delayed_lr h30_eager)'; \
  labels='\"no overlap\" \"1 inner step (tau 1)\" \"1 outer step, delayed\" \"delayed, outer lr 0.35\" \"1 outer step, eager\"'; \
  title='(g): overlapping the outer all-reduce (H 30, P 1, E3M0, seed 1)'; ymin=1.7; ymax=3.6"
gnuplot -e "in='$out/tau.csv'; out='$out/tau'; dp=$dp_loss" "$here/tau.gp"
echo "experiments: results in $out/results.md" >&2
