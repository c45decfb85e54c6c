#!/bin/sh
# validate.sh -- `make validate-net`: dilosim's network model against a real
# TCP stack.  For every case (workers M, link rate R, all-reduce size S,
# idle gap G) it runs the rig (rig.sh: namespaces, tbf-shaped veth links,
# H ring all-reduces over TCP), writes the same case as a scenario, runs
# `dilosim run SCENARIO --trace T.json`, reads the predicted collective
# durations from the trace (netrig_trace) and compares.
#
# The scenario of a case: one layer of S/4 parameters, DiLoCo with H 1 and
# the fp32 codec (a sync of S bytes after every step, which the next step
# waits for), M workers, steps H, step_time_s G (1e-9 s, the least
# allowed, for G 0), bandwidth_gbps R, latency_ms half the rig's measured
# round trip (UDP ping between two worker namespaces), transport "tcp"
# with the initial window of ten segments of the measured MSS and the
# namespace's tcp_slow_start_after_idle (off when the congestion control
# is BBR, which Linux exempts from the restart, see docs/validation.md),
# and efficiency the payload fraction of a full frame as tbf counts it on a
# veth: MSS / (MTU + 14), 1448 / 1514 with TCP timestamps.  A second
# prediction uses the payload fraction of the bytes the up links' tbf
# actually sent (frames plus the ACKs of the reverse flow), to separate
# the ACKs' share of the error from the rest.
#
# usage: bench/netrig/validate.sh [--help]      (root; settings below)
#   QUICK=1            a short selection (M 2 4, R 50 200, S 1 10 MB, H 3)
#   WORKERS="2 4"      worker counts
#   RATES="50 200 1000 1000/9000"  link rates in Mbit/s, RATE/MTU for an MTU
#                      other than 1500
#   SIZES="1 10 100 200"  all-reduce sizes in MB (1e6 bytes)
#   GAPS="0 2"         idle gaps in s
#   H=4                collectives per case
#   MAX_CASE_S=60      cases longer than this at the ideal rate are skipped
#   CC=NAME            the ring's congestion control (default: the kernel's)
#   OUT=build/netrig/validate   where the results go (results.csv, table.md,
#                      and each case's rig CSV, scenarios and traces)
#   DILOSIM=bin/dilosim  NETRIG=build/netrig (netrig_ring, netrig_trace)
me=validate.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

case $1 in
  -h|--help) sed -n '2,/^me=/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
  '') ;;
  *) echo "$me: unknown argument '$1' (see --help)" >&2; exit 2;;
esac
[ "$(id -u)" = 0 ] ||
  { echo "$me: needs root (network namespaces and tc); run it as root" >&2; exit 2; }

if [ -n "$QUICK" ]; then
  : "${RATES:=50 200}" "${SIZES:=1 10}" "${H:=3}"
fi
: "${WORKERS:=2 4}" "${RATES:=50 200 1000 1000/9000}" "${SIZES:=1 10 100 200}"
: "${GAPS:=0 2}" "${H:=4}" "${MAX_CASE_S:=60}"
: "${OUT:=$root/build/netrig/validate}" "${DILOSIM:=$root/bin/dilosim}"
: "${NETRIG:=$root/build/netrig}"
for f in "$DILOSIM" "$NETRIG/netrig_ring" "$NETRIG/netrig_trace"; do
  [ -x "$f" ] || { echo "$me: $f: not built (make validate-net builds it)" >&2; exit 1; }
done
mkdir -p "$OUT" || exit 1

res=$OUT/results.csv
cols="workers,rate_mbit,mtu,size_mb,gap_s,collectives,measured_mean_s,measured_first_s"
cols="$cols,measured_later_s,predicted_mean_s,predicted_first_s,predicted_later_s,error_pct"
cols="$cols,met,wire_efficiency,predicted_wire_s,error_wire_pct,efficiency,latency_ms"
cols="$cols,cc,cpu_busy_pct,retransmissions"
echo "$cols" >"$res.tmp"
t_start=$(date +%s)

# scenario FILE M SIZE GAP RATE LATENCY_MS EFF MSS SSAI: writes a case's scenario.
scenario() {
  step=$4
  [ "$step" != 0 ] || step=1e-9
  cat >"$1" <<EOF
{"model": {"params": $(($3 / 4)), "layers": 1, "step_time_s": $step},
 "workers": {"count": $2},
 "network": {"bandwidth_gbps": $(awk -v r="$5" 'BEGIN { print r / 1000 }'),
             "latency_ms": $6, "transport": "tcp",
             "tcp_init_window_kb": $(awk -v m="$8" 'BEGIN { print 10 * m / 1000 }'),
             "tcp_slow_start_after_idle": $9, "efficiency": $7},
 "method": {"name": "diloco", "H": 1, "codec": "fp32"},
 "steps": $H, "seed": 1}
EOF
}
# predict NAME ARGS...: the scenario, dilosim's trace, the predicted durations
predict() {
  name=$1; shift
  scenario "$dir/$name.json" "$@" &&
    "$DILOSIM" run "$dir/$name.json" --trace "$dir/$name.trace.json" --quiet \
      >"$dir/$name.result.json" &&
    "$NETRIG/netrig_trace" "$dir/$name.trace.json" >"$dir/$name.csv"
}
# mean_of CSV COLUMN FROM TO: the mean of a column over rows FROM..TO (1-based)
mean_of() {
  awk -F, -v c="$2" -v a="$3" -v b="$4" '
    !/^#/ && $1 ~ /^[0-9]+$/ { k = $1 + 0; if (k >= a && k <= b) { s += $c; n++ } }
    END { if (n) printf "%.6f", s / n; else printf "nan" }' "$1"
}

fails=0 n=0
for M in $WORKERS; do
  for spec in $RATES; do
    rate=${spec%/*} mtu=1500
    [ "$spec" = "$rate" ] || mtu=${spec#*/}
    for mb in $SIZES; do
      for gap in $GAPS; do
        size=$((mb * 1000000))
        est=$(awk -v M="$M" -v s="$size" -v r="$rate" -v h="$H" -v g="$gap" -v u="$mtu" \
          'BEGIN { printf "%.0f", h * (2 * (M - 1) / M * s * 8 / (r * 1e6 * (u - 52) / (u + 14))) \
                   + (h - 1) * g }')
        tag=m$M-r$rate-u$mtu-s$mb-g$gap
        if [ "$est" -gt "$MAX_CASE_S" ]; then
          echo "$me: $tag: skipped (about $est s > MAX_CASE_S $MAX_CASE_S)" >&2
          continue
        fi
        dir=$OUT/$tag
        mkdir -p "$dir" || exit 1
        echo "$me: $tag (about $est s)" >&2
        if ! sh "$here/rig.sh" -b "$NETRIG" -m "$M" -r "$rate" -u "$mtu" -s "$size" \
             -n "$H" -g "$gap" ${CC:+-c "$CC"} -o "$dir/rig.csv"; then
          echo "$me: $tag: the rig failed" >&2
          fails=$((fails + 1))
          continue
        fi
        c=$dir/rig.csv
        rtt=$(awk '/^# rtt_ms/ { print $6 }' "$c")
        # "# tcp_congestion_control bbr, tcp_slow_start_after_idle 1, mss 1448 bytes, ..."
        set -- $(awk '/^# tcp_congestion_control/ { gsub(",", ""); print $3, $5, $7 }' "$c")
        cc=$1 ssai=$2 mss=$3
        cpu=$(sed -n 's/^# host cpu busy \([0-9]*\)%.*/\1/p' "$c")
        retr=$(awk -F, '$1 ~ /^[0-9]+$/ { s += $5 } END { print s + 0 }' "$c")
        lat=$(awk -v r="$rtt" 'BEGIN { printf "%.5f", r / 2 }')
        eff=$(awk -v m="$mss" -v u="$mtu" 'BEGIN { printf "%.6f", m / (u + 14) }')
        # payload over the bytes tbf sent on the up links
        wire=$(awk -v M="$M" -v s="$size" -v h="$H" '/^# tbf w[0-9]* up:/ { b += $5 }
          END { printf "%.6f", h * 2 * (M - 1) * s / b }' "$c")
        # Linux skips the restart after idle for BBR (its own cong_control)
        restart=false
        [ "$ssai" != 1 ] || [ "$cc" = bbr ] || restart=true
        if ! predict pred "$M" "$size" "$gap" "$rate" "$lat" "$eff" "$mss" "$restart" ||
           ! predict wire "$M" "$size" "$gap" "$rate" "$lat" "$wire" "$mss" "$restart"; then
          echo "$me: $tag: dilosim failed" >&2
          fails=$((fails + 1))
          continue
        fi
        last=$H
        m_mean=$(mean_of "$c" 3 1 "$last") m_first=$(mean_of "$c" 3 1 1)
        m_later=$(mean_of "$c" 3 2 "$last")
        p_mean=$(mean_of "$dir/pred.csv" 2 1 "$last") p_first=$(mean_of "$dir/pred.csv" 2 1 1)
        p_later=$(mean_of "$dir/pred.csv" 2 2 "$last")
        w_mean=$(mean_of "$dir/wire.csv" 2 1 "$last")
        awk -v OFS=, -v M="$M" -v r="$rate" -v u="$mtu" -v mb="$mb" -v g="$gap" -v h="$H" \
          -v mm="$m_mean" -v mf="$m_first" -v ml="$m_later" -v pm="$p_mean" -v pf="$p_first" \
          -v pl="$p_later" -v we="$wire" -v wm="$w_mean" -v e="$eff" -v l="$lat" -v cc="$cc" \
          -v cpu="$cpu" -v re="$retr" 'BEGIN {
            err = 100 * (pm - mm) / mm; werr = 100 * (wm - mm) / mm
            met = mb < 10 ? "-" : (err <= 10 && err >= -10 ? "yes" : "no")
            print M, r, u, mb, g, h, mm, mf, ml, pm, pf, pl, sprintf("%.1f", err), met, we,
                  wm, sprintf("%.1f", werr), e, l, cc, cpu, re }' >>"$res.tmp"
        n=$((n + 1))
      done
    done
  done
done
mv "$res.tmp" "$res" || exit 1

# The table of docs/validation.md.
{
  echo "| M | rate Mbit/s | MTU | S MB | gap s | measured s (first; later) | predicted s" \
       "(first; later) | error % | met | wire eff. | predicted (wire) s | error (wire) % |" \
       "CPU busy % | retrans. |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %.3f (%.3f; %.3f) | %.3f (%.3f; %.3f) |" \
                           " %s | %s | %.4f | %.3f | %s | %s | %s |\n", $1, $2, $3, $4, $5,
                           $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $21, $22 }' "$res"
} >"$OUT/table.md.tmp" && mv "$OUT/table.md.tmp" "$OUT/table.md" || exit 1
cat "$OUT/table.md"
t=$(($(date +%s) - t_start))
met=$(awk -F, 'NR > 1 && $14 == "yes"' "$res" | wc -l)
due=$(awk -F, 'NR > 1 && $14 != "-"' "$res" | wc -l)
echo "$me: $n cases in $t s, $fails failed; within 10% on $met of the $due cases of" \
     "at least 10 MB; results in $OUT"
[ "$fails" = 0 ]
