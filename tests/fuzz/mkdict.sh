#!/bin/sh
# mkdict.sh -- prints the libFuzzer dictionary of a target to stdout:
# the committed token list, then the names read from the sources so that
# new keys and enum values reach the fuzzer without editing a list.
# usage: tests/fuzz/mkdict.sh scenario|faults|cost|run|measure  (from the top)
set -e
words() { # quoted lowercase words and comma lists of them, one a line
  grep -oh '"[a-z][a-z0-9_]*\(, [a-z][a-z0-9_]*\)*"' "$@" |
    tr -d '"' | tr ',' '\n' | tr -d ' ' | sort -u
}
case "$1" in
scenario|run)
  cat tests/fuzz/json.dict
  words sim/config/scenario*.c sim/config/kinds.c sim/base/codec.c sim/base/schedule.c sim/engine/collective.c \
        sim/engine/faults.c sim/config/faults_trace.c | sed 's/.*/"&"\n"\\"&\\""/'
  # dotted keys for --set overrides
  for k in model.layers model.params model.step_time_s workers.count \
           workers.speed network.bandwidth_gbps network.up_gbps \
           network.latency_ms method.name method.H method.fragments \
           method.tau method.late method.sync_timeout_s faults.mtbf_hours \
           model.host_gbps method.offload_outer network.collective_overhead_ms \
           faults.trace steps seed; do
    echo "\"$k=\""
  done
  ;;
faults) cat tests/fuzz/faults.dict ;;
cost)
  cat tests/fuzz/json.dict
  words sim/study/plan.c | sed 's/.*/"\\"&\\""/'
  ;;
measure)
  cat tests/fuzz/json.dict tests/fuzz/measure.dict
  words sim/study/measure*.c | sed 's/.*/"&"\n"\\"&\\""/'
  ;;
*) echo "usage: mkdict.sh scenario|faults|cost|run|measure" >&2; exit 2 ;;
esac
