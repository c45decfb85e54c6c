#!/bin/sh
# cli_plots.sh -- the figures and their make rules, in seconds: every
# gnuplot script loads the one palette (plots/palette.gp) and names no
# colour of its own, and the HTML report draws each method in the
# palette's colour; the tau_100b and layout_100b titles say the H and the
# fragments of the scenario (read from the data: a changed H changes the
# title); the tau 5 and tau 10 lines differ in dash and point type; the
# coupled_hours legend has one entry per visible line and stays off the
# data; the rules of plots/plots.mk remake exactly what is out of date
# (`make -n reproduce` with fresh CSVs lists no sweep, `make plots` no
# training run).  The parts that need gnuplot or make are skipped without
# them.
# usage: tests/cli_plots.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
abs=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
palette=$root/plots/palette.gp

# --- One palette --------------------------------------------------------
# Every gnuplot script loads it; none but it names a colour that is not a
# grey (#rrggbb with rr = gg = bb), nor do the scripts that call gnuplot
# (outside comments).
for f in "$root"/plots/*.gp "$root"/scenarios/*/*.gp; do
  [ "$f" = "$palette" ] && continue
  if grep -q '^load .*palette\.gp"' "$f"; then ok; else bad "$f does not load palette.gp"; fi
done
for f in "$root"/plots/*.gp "$root"/scenarios/*/*.gp "$root"/plots/*.sh \
         "$root"/scenarios/experiments/run.sh; do
  [ "$f" = "$palette" ] && continue
  c=$(grep -v '^[[:space:]]*#' "$f" | grep -o '#[0-9A-Fa-f]\{6\}' | tr 'A-F' 'a-f' |
      awk '{ if (substr($0, 2, 2) != substr($0, 4, 2) || substr($0, 4, 2) != substr($0, 6, 2)) print }' |
      head -3 | tr '\n' ' ')
  if [ -z "$c" ]; then ok; else bad "$f names colours of its own: $c"; fi
done
# rgb KEY: the palette's colour of KEY as gnuplot's SVG writes it.
keys=$(sed -n 's/^palette_keys = "\(.*\)"$/\1/p' "$palette")
hexes=$(sed -n '/^array palette_rgb/,/]$/p' "$palette" | grep -o '0x[0-9A-Fa-f]\{6\}' | tr '\n' ' ')
rgb() {
  i=0
  for k in $keys; do
    i=$((i + 1))
    [ "$k" = "$1" ] || continue
    h=$(echo "$hexes" | cut -d' ' -f$i)
    printf 'rgb(%3d, %3d, %3d)' "0x$(echo "$h" | cut -c3-4)" \
      "0x$(echo "$h" | cut -c5-6)" "0x$(echo "$h" | cut -c7-8)"
  done
}
if [ "$(echo "$keys" | wc -w)" = 9 ] && [ "$(echo "$hexes" | wc -w)" = 9 ]; then ok
else bad "palette.gp: $(echo "$keys" | wc -w) keys, $(echo "$hexes" | wc -w) colours"; fi

if ! command -v gnuplot >"$tmp/null"; then
  echo "cli_plots: gnuplot not found, the figure checks are skipped"
else
  # The report: each variant of methods.json (named by its method's key)
  # in that key's colour; the second eager variant dashed, the first not.
  expect 0 "report of every method" -- "$bin" report "$root/tests/data/plots/methods.json" \
    --grid 1,10 --quiet --out "$tmp/methods.html"
  awk '/-cu-gnuplot_plot_[0-9]+"/ { match($0, /plot_[0-9]+/); n = substr($0, RSTART + 5, RLENGTH - 5) }
       n && /stroke=.rgb\(/ && !(n in c) {
         match($0, /rgb\([^)]*\)/); c[n] = substr($0, RSTART, RLENGTH)
         d[n] = ($0 ~ /stroke-dasharray/) ? "dashed" : "solid"; print n, d[n], c[n] }' \
    "$tmp/methods.html" >"$tmp/strokes"
  i=0
  for k in dp diloco streaming streaming_overlap streaming_overlap_fp4 outer eager eager; do
    i=$((i + 1))
    want="$i $( [ $i = 8 ] && echo dashed || echo solid) $(rgb $k)"
    got=$(sed -n "${i}p" "$tmp/strokes")
    if [ "$got" = "$want" ]; then ok; else bad "report curve $i ($k): '$got', expected '$want'"; fi
  done

  # The 100B studies' titles from the scenario: its H and fragments.
  out=$tmp/fig
  expect 0 "sweeps tau_100b layout_100b" -- env PLOTS_OUT="$out" \
    "$root/plots/sweeps.sh" "$bin" tau_100b layout_100b
  "$bin" run "$root/scenarios/paper/100b.json" --variant streaming_overlap_fp4 \
    --set steps=1 --quiet >"$tmp/run.json"
  H=$(sed -n 's/^  "H": \([0-9]*\),$/\1/p' "$tmp/run.json")
  P=$(sed -n 's/^  "fragments": \([0-9]*\),$/\1/p' "$tmp/run.json")
  for fig in tau layout; do
    expect 0 "studies.gp $fig" -- gnuplot -e "dir='$out'; fig='$fig'" "$root/plots/studies.gp"
  done
  contains "$out/tau_100b.svg" "(E3M0, $P fragments, H $H)</tspan>" "tau_100b title"
  contains "$out/layout_100b.svg" "($P fragments of 3 layers, H $H, bf16)</tspan>" "layout_100b title"
  # ... read from the data: another H in the run result, another title.
  sed 's/^  "H": [0-9]*,$/  "H": 37,/' "$out/tau_100b.json" >"$tmp/h.json"
  mv "$tmp/h.json" "$out/tau_100b.json"
  expect 0 "studies.gp tau, H 37" -- gnuplot -e "dir='$out'; fig='tau'" "$root/plots/studies.gp"
  contains "$out/tau_100b.svg" "fragments, H 37)</tspan>" "tau_100b title from its data"
  # tau 5 and tau 10: other dash types, other points; tau 10 drawn first
  # (under tau 5).
  awk '/<title>tau [0-9]*<\/title>/ && !seen[$0]++ { match($0, /tau [0-9]+/); t = substr($0, RSTART, RLENGTH); order = order t ";" }
       t && /stroke-dasharray|gpPt/ && !(t in d) {
         dash = "solid"; if (match($0, /stroke-dasharray=.[^'"'"']*/)) dash = substr($0, RSTART, RLENGTH)
         d[t] = dash }
       t && /xlink:href=.#gpPt/ && !(t in p) { match($0, /#gpPt[0-9]+/); p[t] = substr($0, RSTART, RLENGTH) }
       END { print order; print d["tau 5"] "|" p["tau 5"]; print d["tau 10"] "|" p["tau 10"] }' \
    "$out/tau_100b.svg" >"$tmp/taus"
  { read -r order; read -r s5; read -r s10; } <"$tmp/taus"
  case $order in "tau 10;tau 5;"*) ok ;; *) bad "tau_100b: drawn in the order $order" ;; esac
  if [ "${s5%|*}" != "${s10%|*}" ] && [ "${s5#*|}" != "${s10#*|}" ] && [ -n "${s5#*|}" ]; then ok
  else bad "tau_100b: tau 5 ($s5) and tau 10 ($s10) drawn alike"; fi

  # coupled_hours from 14 made-up runs (PLOTS_ONLY): the three Streaming
  # DiLoCo runs lie on one line (1 Gbit/s 0.5% slower), one entry for
  # them; DP and DiLoCo lines apart, an entry each.
  mkdir -p "$out/coupled"
  for r in dp_1:30:0 dp_10:4:0 dp_100:1.2:0 diloco_1:1:0.08 diloco_10:1:0.01 diloco_100:1:0 \
           streaming_1:1.005:0 streaming_10:1:0 streaming_100:1:0 dp_10_failures:5:0 \
           diloco_10_failures:1.1:0.02 streaming_10_failures:1:0.01 dp_10_seed2:4:0.005 \
           streaming_10_seed2:1:0.003; do
    IFS=: read -r name slow up <<EOF
$r
EOF
    awk -v slow="$slow" -v up="$up" 'BEGIN {
      print "# made up"
      print "step,eval_loss_outer_nats,entropy_floor_nats,sim_time_s"
      for (s = 20; s <= 400; s += 20)
        printf "%d,%.6f,1.089,%.3f\n", s, 1.1 + up + 2.5 * exp(-s / 60), s * 0.5 * slow }' \
      >"$out/coupled/$name.csv"
    printf '{\n  "eval_loss_outer_nats": 1.1,\n  "sim_time_s": 200\n}\n' >"$out/coupled/$name.json"
  done
  expect 0 "coupled.sh PLOTS_ONLY" -- env PLOTS_ONLY=1 PLOTS_OUT="$out" \
    "$root/plots/coupled.sh" "$bin"
  grep -o '<title>[^<]*</title>' "$out/coupled_hours.svg" | sort -u |
    grep -v 'gnuplot_plot_\|<title>Gnuplot' >"$tmp/entries"
  contains "$tmp/entries" "<title>Streaming DiLoCo 1, 10 and 100 Gbit/s</title>" "coupled_hours legend"
  lacks "$tmp/entries" "<title>Streaming DiLoCo 10 Gbit/s</title>" "coupled_hours legend"
  for t in "DP 1 Gbit/s" "DP 100 Gbit/s" "DiLoCo 10 Gbit/s" "DiLoCo 100 Gbit/s"; do
    contains "$tmp/entries" "<title>$t</title>" "coupled_hours legend"
  done
  lines "$tmp/entries" 8 "coupled_hours legend: 7 lines and the floor"
  if command -v python3 >"$tmp/null"; then
    # No point of a line inside the legend's box.
    python3 - "$out/coupled_hours.svg" >"$tmp/inside" <<'EOF'
import re, sys
svg = open(sys.argv[1]).read()
box = re.findall(r"d='M([\d.]+),([\d.]+) L\1,([\d.]+) L([\d.]+),\3 L\4,\2 L\1,\2 Z", svg)
rects = [(float(a), float(b), float(c), float(d)) for a, b, c, d in box]
border = max(rects, key=lambda r: abs(r[3] - r[0]) * abs(r[2] - r[1]))
keys = [r for r in rects if r != border]
pts = [(float(x), float(y)) for x, y in
       re.findall(r"#gpPt\d+' transform='translate\(([\d.]+),([\d.]+)\)", svg)]
for x0, y0, y1, x1 in keys:
    lo, hi = sorted((y0, y1))
    # the key's own samples sit in it: only points inside the plot count
    n = sum(1 for x, y in pts if x0 < x < x1 and lo < y < hi
            and border[0] < x < border[3])
    print(n)
EOF
    if [ -s "$tmp/inside" ] && ! grep -qv '^0$' "$tmp/inside"; then ok
    else bad "coupled_hours: points under the legend: $(tr '\n' ' ' <"$tmp/inside")"; fi
  fi
fi

# --- The make rules ------------------------------------------------------
if ! command -v make >"$tmp/null" || [ ! -f "$root/Makefile" ]; then
  echo "cli_plots: make or the Makefile not found, the rule checks are skipped"
else
  mk() { (cd "$root" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
            make "$@" DILOSIM="$abs" PLOTS_OUT="$tmp/mk") >"$tmp/out" 2>"$tmp/err"; }
  # From nothing: the 11 steps, numbered once each, the five sweeps, and
  # no training run but the tenth of a second of mlp_smoke.
  mk -n -f plots/plots.mk plots
  n=$(grep -c '^echo "plots: .* ([0-9]*/11) -> ' "$tmp/out")
  if [ "$n" = 11 ]; then ok; else bad "make -n plots: $n step lines, expected 11"; cat "$tmp/err"; fi
  for k in 1 2 3 4 5 6 7 8 9 10 11; do contains "$tmp/out" "($k/11)" "make -n plots: step $k"; done
  for s in sweep_1b sweep_10b sweep_100b layout_100b tau_100b; do
    contains "$tmp/out" "sweeps.sh \"$abs\" $s\$" "make -n plots"
  done
  lacks "$tmp/out" "coupled" "make -n plots: no coupled run"
  lacks "$tmp/out" "experiments" "make -n plots: no experiment"
  # Every file there and newer than what it is made from: nothing to do,
  # and `make -n reproduce` lists no sweep, no run, no figure.
  mkdir -p "$tmp/mk"
  for f in sweep_1b sweep_10b sweep_100b layout_100b tau_100b loss_smoke; do
    : >"$tmp/mk/$f.csv"
  done
  for f in figure4 layout_100b tau_100b bytes loss_smoke; do : >"$tmp/mk/$f.png"; done
  mk -n -f plots/plots.mk plots
  if grep -qv '^:$' "$tmp/out"; then bad "make -n plots, all fresh: $(head -3 "$tmp/out")"; else ok; fi
  mk -n reproduce
  contains "$tmp/out" "plots/reproduce.sh" "make -n reproduce"
  for t in sweeps.sh "\" sweep " "\" run " "\" train " "gnuplot -e"; do
    lacks "$tmp/out" "$t" "make -n reproduce, CSVs fresh"
  done
  # One CSV older than its scenario: that sweep and its figure again, and
  # only them.
  touch -d 2000-01-01 "$tmp/mk/tau_100b.csv"
  mk -n -f plots/plots.mk plots
  contains "$tmp/out" 'sweeps.sh ".*" tau_100b$' "stale tau_100b.csv"
  contains "$tmp/out" "fig='tau'" "stale tau_100b.csv: its figure"
  n=$(grep -c "sweeps.sh\|gnuplot\|train" "$tmp/out")
  if [ "$n" = 2 ]; then ok; else bad "stale tau_100b.csv: $n commands, expected 2"; fi
  touch "$tmp/mk/tau_100b.csv" "$tmp/mk/tau_100b.png"
  # A newer binary: every simulation again.
  cp "$bin" "$tmp/dilosim"
  (cd "$root" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n -f plots/plots.mk plots \
     DILOSIM="$tmp/dilosim" PLOTS_OUT="$tmp/mk") >"$tmp/out" 2>"$tmp/err"
  n=$(grep -c 'sweeps.sh\|" train ' "$tmp/out")
  if [ "$n" = 6 ]; then ok; else bad "newer binary: $n simulations, expected 6"; fi
fi

finish cli_plots
