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
# Then the model is calibrated to the rig: `dilosim calibrate` fits the
# keys of FIT to the gap-0 cases named by CALIBRATE (their runs as a CSV
# of measured runs: after each collective k, the run of k steps), and
# every case is predicted again with `--set-from` the fit.
#
# usage: bench/netrig/validate.sh [--help]      (root; settings below)
#   QUICK=1            a short selection (M 2 4, R 50 200, S 1 10 MB, H 3)
#   WORKERS="2 4"      worker counts
#   RATES="50 200 500/9000 1000/9000"  link rates in Mbit/s, RATE/MTU for an
#                      MTU other than 1500 (from 500 Mbit/s at MTU 9000: at
#                      1500 the host cannot forward the frames, see
#                      docs/validation.md)
#   SIZES="1 10 100 200"  all-reduce sizes in MB (1e6 bytes)
#   GAPS="0 2"         idle gaps in s
#   H=4                collectives per case
#   MAX_CASE_S=60      cases longer than this at the ideal rate are skipped
#   CC=NAME            the ring's congestion control (default: the kernel's)
#   CALIBRATE="m2-r200-u1500-s100-g0 m4-r200-u1500-s10-g0"  the cases the
#                      calibration fits (tags as in OUT; empty: none)
#   FIT="network.collective_overhead_ms network.startup_ms network.ack_bytes_per_kb"
#                      the keys it fits
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
  : "${CALIBRATE=m2-r200-u1500-s10-g0 m4-r200-u1500-s10-g0}"
fi
: "${CALIBRATE=m2-r200-u1500-s100-g0 m4-r200-u1500-s10-g0}"
: "${FIT:=network.collective_overhead_ms network.startup_ms network.ack_bytes_per_kb}"
: "${WORKERS:=2 4}" "${RATES:=50 200 500/9000 1000/9000}" "${SIZES:=1 10 100 200}"
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
: >"$OUT/cases.tmp"
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
# (with $SET_FROM, if set, as --set-from)
predict() {
  name=$1; shift
  scenario "$dir/$name.json" "$@" &&
    "$DILOSIM" run "$dir/$name.json" --trace "$dir/$name.trace.json" --quiet \
      ${SET_FROM:+--set-from "$SET_FROM"} >"$dir/$name.result.json" &&
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
        echo "$tag $M $size $gap $rate $lat $eff $mss $restart" >>"$OUT/cases.tmp"
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
mv "$OUT/cases.tmp" "$OUT/cases.txt" || exit 1

# --- The calibration ---------------------------------------------------------
# The calibration cases as measured runs: after collective k, a run of k
# steps whose wall time is k step times plus the first k durations.  The
# columns past the required ones are scenario keys (the frame's payload
# fraction and the initial window differ with the MTU).
calibrate() {
  cal=$OUT/calibration.csv
  {
    echo "method,workers,params,codec,H,fragments,tau,steps,step_time_s,bandwidth_gbps,latency_ms,wall_s,network.efficiency,network.tcp_init_window_kb,network.tcp_slow_start_after_idle"
    for tag in $CALIBRATE; do
      set -- $(awk -v t="$tag" '$1 == t' "$OUT/cases.txt")
      [ $# = 9 ] || { echo "$me: CALIBRATE: no case $tag" >&2; return 1; }
      step=$4; [ "$step" != 0 ] || step=1e-9
      awk -F, -v OFS=, -v M="$2" -v s="$3" -v g="$step" -v r="$5" -v l="$6" -v e="$7" \
          -v mss="$8" -v ssai="$9" '
        !/^#/ && $1 ~ /^[0-9]+$/ { k = $1 + 0; sum += $3
          print "diloco", M, s / 4, "fp32", 1, "", "", k, g, r / 1000, l,
                sprintf("%.9f", k * g + sum), e, 10 * mss / 1000, ssai }' "$OUT/$tag/rig.csv"
    done
  } >"$cal" || return 1
  base=$OUT/calibration-base.json
  cat >"$base" <<EOF
{"model": {"params": 1e6, "layers": 1, "step_time_s": 1e-9},
 "workers": {"count": 2}, "network": {"bandwidth_gbps": 1, "transport": "tcp"},
 "method": {"name": "diloco", "H": 1, "codec": "fp32"}, "steps": 1, "seed": 1}
EOF
  fits=; for k in $FIT; do fits="$fits --fit $k"; done
  "$DILOSIM" calibrate "$cal" --scenario "$base" $fits --out "$OUT/fit.json" --quiet \
    >"$OUT/calibration.txt" || return 1
  cat "$OUT/calibration.txt"
}
if [ -n "$CALIBRATE" ] && calibrate; then
  SET_FROM=$OUT/fit.json
  echo "predicted_cal_s,error_cal_pct,met_cal,calibration" >"$OUT/cal.tmp"
  while read -r tag M size gap rate lat eff mss restart; do
    dir=$OUT/$tag
    predict cal "$M" "$size" "$gap" "$rate" "$lat" "$eff" "$mss" "$restart" || exit 1
    c_mean=$(mean_of "$dir/cal.csv" 2 1 "$H")
    m_mean=$(mean_of "$dir/rig.csv" 3 1 "$H")
    mb=$((size / 1000000))
    used=no; case " $CALIBRATE " in *" $tag "*) used=yes;; esac
    awk -v OFS=, -v c="$c_mean" -v m="$m_mean" -v mb="$mb" -v u="$used" 'BEGIN {
      err = 100 * (c - m) / m
      met = mb < 10 ? "-" : (err <= 10 && err >= -10 ? "yes" : "no")
      print c, sprintf("%.1f", err), met, u }' >>"$OUT/cal.tmp"
  done <"$OUT/cases.txt"
  paste -d, "$res" "$OUT/cal.tmp" >"$res.tmp" && mv "$res.tmp" "$res" &&
    rm "$OUT/cal.tmp" || exit 1
elif [ -n "$CALIBRATE" ]; then
  echo "$me: the calibration failed" >&2
  fails=$((fails + 1))
fi

# The table of docs/validation.md.
{
  echo "| M | rate Mbit/s | MTU | S MB | gap s | measured s (first; later) | predicted s" \
       "(first; later) | error % | met | wire eff. | predicted (wire) s | error (wire) % |" \
       "calibrated s | error (cal.) % | met (cal.) | CPU busy % | retrans. |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 { cal = $23 == "" ? "- | - | -" : sprintf("%.3f | %s | %s%s", $23, $24, $25,
                                                    $26 == "yes" ? " (fit)" : "")
                    printf "| %s | %s | %s | %s | %s | %.3f (%.3f; %.3f) | %.3f (%.3f; %.3f) |" \
                           " %s | %s | %.4f | %.3f | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5,
                           $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, cal, $21, $22 }' "$res"
} >"$OUT/table.md.tmp" && mv "$OUT/table.md.tmp" "$OUT/table.md" || exit 1
cat "$OUT/table.md"
t=$(($(date +%s) - t_start))
met=$(awk -F, 'NR > 1 && $14 == "yes"' "$res" | wc -l)
due=$(awk -F, 'NR > 1 && $14 != "-"' "$res" | wc -l)
echo "$me: $n cases in $t s, $fails failed; within 10% on $met of the $due cases of" \
     "at least 10 MB; results in $OUT"
if [ -n "$SET_FROM" ]; then
  awk -F, 'NR > 1 && $14 != "-" { due++; if ($25 == "yes") met++
                                  e = $24 < 0 ? -$24 : $24; if (e <= 15) in15++
                                  if ($26 != "yes") { odue++; if ($25 == "yes") omet++ } }
           END { printf "validate.sh: calibrated: within 10%% on %d of the %d cases of at" \
                        " least 10 MB (%d of the %d not fitted), within 15%% on %d of them\n",
                        met, due, omet, odue, in15 }' "$res"
fi
[ "$fails" = 0 ]
