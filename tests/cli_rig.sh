#!/bin/sh
# cli_rig.sh -- tests of the network rig (bench/netrig/): the programs'
# help and usage errors; then, as root with `ip netns` and tc, a tiny case
# (2 workers, 1 MB, 1 Gbit/s): its namespaces exist while it runs and are
# gone after it, the all-reduce's results are checked (and a spoiled one
# fails the run), a run stopped by SIGTERM or SIGINT removes its
# namespaces, one killed by SIGKILL has them removed by the next run, and
# the root namespace's interfaces, routes and qdiscs are the same after.
# Skipped, saying so, when not root or without ip netns / tc.
# usage: tests/cli_rig.sh [path/to/dilosim]   (run by tests/cli.sh;
#        NETRIG_DIR: the directory of netrig_ring, default build/netrig)
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
nr=${NETRIG_DIR:-$root/build/netrig}
rig=$root/bench/netrig/rig.sh

expect 0 "rig help" -- sh "$rig" --help
contains "$tmp/out" "^usage: bench/netrig/rig.sh" "rig help"
expect 0 "validate help" -- sh "$root/bench/netrig/validate.sh" --help
contains "$tmp/out" "^usage: bench/netrig/validate.sh" "validate help"
expect 0 "netrig_ring help" -- "$nr/netrig_ring" --help
contains "$tmp/out" "^usage: netrig_ring" "netrig_ring help"
expect 0 "netrig_trace help" -- "$nr/netrig_trace" --help
contains "$tmp/out" "^usage: netrig_trace" "netrig_trace help"
expect 2 "rig: one worker" -- sh "$rig" -b "$nr" --workers 1
contains "$tmp/err" "^rig.sh: --workers: '1' is not an integer in \[2, 16\]$" "rig: one worker"
expect 2 "rig: size" -- sh "$rig" -b "$nr" --size 1002
contains "$tmp/err" "not a multiple of 4\*M = 8" "rig: size"
expect 2 "netrig_ring: size" -- "$nr/netrig_ring" --prefix x --workers 3 --size 100
lines "$tmp/err" 1 "netrig_ring: size"
expect 2 "netrig_ring: no prefix" -- "$nr/netrig_ring" --workers 2 --size 8
# The predicted durations of a trace dilosim wrote.
printf '%s\n' '{"model": {"params": 250000, "layers": 1, "step_time_s": 0.5},' \
  '"workers": {"count": 2}, "network": {"bandwidth_gbps": 0.1},' \
  '"method": {"name": "diloco", "H": 1, "codec": "fp32"}, "steps": 3}' >"$tmp/sc.json"
expect 0 "trace of a scenario" -- "$bin" run "$tmp/sc.json" --trace "$tmp/tr.json" --quiet
expect 0 "netrig_trace" -- "$nr/netrig_trace" "$tmp/tr.json"
lines "$tmp/out" 4 "netrig_trace: a header and three collectives"
contains "$tmp/out" "^3,0.080000$" "netrig_trace: 1 MB over 100 Mbit/s"
expect 1 "netrig_trace: not a trace" -- "$nr/netrig_trace" "$tmp/sc.json"

netns_of() { ip netns list 2>"$tmp/null" | awk -v p="dlsrig-$1-" 'index($1, p) == 1'; }
# root_state: the root namespace's interfaces, routes and qdiscs
root_state() { ip -o link show | awk '{ print $2 }'; ip route show; tc qdisc show; }
if [ "$(id -u)" != 0 ]; then
  echo "cli_rig: the rig's runs skipped: not root"
elif ! command -v tc >"$tmp/null" || ! ip netns list >"$tmp/null" 2>&1 ||
     ! ip netns add "dlsrig-$$-probe" 2>"$tmp/null"; then
  echo "cli_rig: the rig's runs skipped: no ip netns or tc here"
else
  ip netns del "dlsrig-$$-probe"
  root_state >"$tmp/root.before"
  # wait_netns PID N: waits up to 5 s for the N namespaces of rig PID
  wait_netns() { i=0
    while [ "$(netns_of "$1" | wc -l)" -lt "$2" ] && [ $i -lt 100 ]; do
      sleep 0.05; i=$((i + 1)); done; }
  tiny="-b $nr -m 2 -r 1000 -s 1000000"

  sh "$rig" $tiny -n 5 -g 0.2 -o "$tmp/rig.csv" 2>"$tmp/err" & pid=$!
  wait_netns $pid 3
  netns_of $pid | sort >"$tmp/during"
  printf 'dlsrig-%s-%s\n' $pid hub $pid w0 $pid w1 >"$tmp/want"
  same "$tmp/during" "$tmp/want" "the namespaces while the rig runs"
  wait $pid; st=$?
  if [ $st = 0 ]; then ok; else bad "the tiny case: exit $st"; cat "$tmp/err"; fi
  if [ -z "$(netns_of $pid)" ]; then ok; else bad "namespaces left: $(netns_of $pid)"; fi
  contains "$tmp/rig.csv" "^# every result checked element by element: all correct$" "checked"
  if [ "$(grep -c '^[1-5],' "$tmp/rig.csv")" = 5 ]; then ok; else bad "not 5 collectives"; fi
  contains "$tmp/rig.csv" "^# rtt_ms min [0-9.]* median" "the ping"
  contains "$tmp/rig.csv" "^# tbf w1 down: [1-9][0-9]* bytes" "tbf counters"
  contains "$tmp/rig.csv" "mss [1-9][0-9]* bytes" "the MSS"
  # every collective moved at least its payload through each up link
  awk '/^# tbf w[01] up:/ && $5 < 5 * 1000000 { exit 1 }' "$tmp/rig.csv" && ok ||
    bad "an up link carried less than the payload"

  # Three workers (uneven ring), and a spoiled result fails the run.
  expect 0 "three workers" -- sh "$rig" -b "$nr" -m 3 -r 1000 -s 1200000 -n 2 -p 0
  contains "$tmp/out" "all correct" "three workers"
  expect 1 "a spoiled result" -- sh "$rig" $tiny -n 2 -p 0 --corrupt
  contains "$tmp/err" "rank 0: collective 2: element 249999 is 19, expected 18" "spoiled"

  # Stopped by a signal while it runs: no namespace, no rank left.  (A
  # background job of sh starts with SIGINT ignored, which a trap cannot
  # undo: env gives it back its default, where env can.)
  sigs=TERM
  if env --default-signal=INT true 2>"$tmp/null"; then sigs="TERM INT"
  else echo "cli_rig: SIGINT not tested: env has no --default-signal"; fi
  for sig in $sigs; do
    case $sig in INT) run="env --default-signal=INT sh";; *) run=sh;; esac
    $run "$rig" $tiny -n 1000 -g 0.05 -p 0 >"$tmp/out" 2>"$tmp/err" & pid=$!
    wait_netns $pid 3
    sleep 0.3
    kill -$sig $pid
    wait $pid; st=$?
    if [ $st -gt 128 ]; then ok; else bad "SIG$sig: exit $st"; cat "$tmp/err"; fi
    if [ -z "$(netns_of $pid)" ]; then ok; else bad "SIG$sig: left $(netns_of $pid)"; fi
    if ps -eo args | grep -q "^[^ ]*netrig_ring --prefix dlsrig-$pid-"; then
      bad "SIG$sig: ranks left"; else ok; fi
    if ls -d "${TMPDIR:-/tmp}/dlsrig-$pid-"* >"$tmp/null" 2>&1; then
      bad "SIG$sig: temporary directory left"; else ok; fi
  done
  # Killed outright: the next run removes what it left.
  sh "$rig" $tiny -n 1000 -g 0.05 -p 0 >"$tmp/out" 2>"$tmp/err" & pid=$!
  wait_netns $pid 3
  sleep 0.3
  kill -KILL $pid
  wait $pid 2>"$tmp/null"
  if [ -n "$(netns_of $pid)" ]; then ok; else bad "SIGKILL left nothing to reclaim"; fi
  expect 0 "the run after a SIGKILL" -- sh "$rig" $tiny -n 1 -p 0
  contains "$tmp/err" "removing dlsrig-$pid-.*, left by process $pid" "reclaimed"
  if [ -z "$(netns_of $pid)" ]; then ok; else bad "not reclaimed: $(netns_of $pid)"; fi
  i=0
  while ps -eo args | grep -q "^[^ ]*netrig_ring --prefix dlsrig-$pid-" && [ $i -lt 40 ]; do
    sleep 0.05; i=$((i + 1)); done
  if [ $i -lt 40 ]; then ok; else bad "SIGKILL: netrig_ring still runs"; fi

  # validate.sh end to end on one tiny case, calibrated on itself: the
  # calibration's CSV, fit and columns (the figures are docs/validation.md's).
  if OUT="$tmp/val" DILOSIM="$bin" NETRIG="$nr" WORKERS=2 RATES=1000/9000 SIZES=1 GAPS=0 H=3 \
     CALIBRATE=m2-r1000-u9000-s1-g0 FIT=network.collective_overhead_ms \
     sh "$root/bench/netrig/validate.sh" >"$tmp/val.out" 2>"$tmp/val.err"; then ok
  else bad "validate.sh on one case: $(tail -2 "$tmp/val.err")"; fi
  lines "$tmp/val/calibration.csv" 4 "validate.sh: the calibration's runs (header and 3)"
  contains "$tmp/val/fit.json" '"keys": \["network.collective_overhead_ms"\]' "validate.sh: the fit"
  contains "$tmp/val/results.csv" ",predicted_cal_s,error_cal_pct,met_cal,calibration$" \
    "validate.sh: the calibrated columns"
  contains "$tmp/val.out" "^validate.sh: calibrated: within 10% on 0 of the 0 cases" \
    "validate.sh: the calibrated count"

  root_state >"$tmp/root.after"
  same "$tmp/root.before" "$tmp/root.after" "the root namespace"
fi
finish cli_rig
