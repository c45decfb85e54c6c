#!/bin/sh
# cli_report.sh -- `dilosim report`: a page of a small scenario (two
# variants, a train section, 9 grid points), self-contained, escaped and
# the same bytes twice; rendered by headless Chromium, whose DOM must hold
# the figures, the tables and the assumptions and whose screenshot must
# not be blank; errors (no gnuplot, bad options) leave no page behind;
# how sure the plan is (--set-from with a fit block, --seeds).
# usage: tests/cli_report.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

# A scenario name with every character HTML escapes, in a path that has
# some too.
mkdir "$tmp/a&b<c>"
sc="$tmp/a&b<c>/small.json"
cp "$root/tests/data/report/small.json" "$sc"
grid="--grid logspace:-1:3:9"
cost=$root/tests/data/table/cost.json

expect 0 "report help" -- "$bin" report --help
for o in --variant --cost --target-cu --grid --thresholds --out --quiet --set-from \
         --samples --seed --seeds; do
  contains "$tmp/out" "$o" "report help lists $o"
done
contains "$tmp/out" "exit status" "report help"
expect 0 "dilosim --help lists report" -- "$bin" --help
contains "$tmp/out" "  report " "dilosim --help"

expect 0 "report" -- "$bin" report "$sc" $grid --cost "$cost" --out "$tmp/r.html"
page=$tmp/r.html
no_temp "report"
if [ -s "$tmp/err" ]; then bad "report wrote on stderr off a terminal: $(cat "$tmp/err")"; else ok; fi
n=$(grep -c '<svg' "$page")
if [ "$n" = 2 ]; then ok; else bad "report: $n <svg> figures, expected 2 (CU, loss)"; fi
for t in 'class="assumptions"' 'class="thresholds"' 'class="bytes"' \
         'class="plan"' 'class="cost"' 'class="train"' '<h3>Assumptions</h3>' \
         'compute utilization (%)' 'streaming.e3m0-v1' 'Cheapest:' \
         '<figcaption>' 'entropy floor of the data'; do
  contains "$page" "$t" "report page"
done
# escaped: the name and the path, never raw
contains "$page" 'report &lt;test&gt; &amp; &quot;quotes&quot;' "name escaped"
contains "$page" 'a&amp;b&lt;c&gt;/small.json' "path escaped"
if grep -q 'report <test>' "$page" || grep -q 'a&b<c>' "$page"; then
  bad "report: unescaped text in the page"; else ok; fi
# self-contained: no script, nothing to fetch
if grep -qi '<script\|<link\|<img\|<iframe\|@import\|src=\|href="http\|url(http' "$page"; then
  bad "report: the page is not self-contained"; else ok; fi
# ids prefixed per figure: none repeats
dups=$(grep -o ' id="[^"]*"\| id='"'"'[^'"'"']*'"'" "$page" | sort | uniq -d | head -3)
if [ -z "$dups" ]; then ok; else bad "report: repeated ids: $dups"; fi
# the same bytes again, and --variant picks
"$bin" report "$sc" $grid --cost "$cost" >"$tmp/r2.html" 2>"$tmp/err"
same "$page" "$tmp/r2.html" "report twice"
expect 0 "report --variant" -- "$bin" report "$sc" $grid --variant dp --quiet
if grep -q 'streaming.e3m0-v1' "$tmp/out"; then bad "--variant dp shows the other"; else ok; fi
contains "$tmp/out" '<th>dp</th>' "--variant dp"

# how sure: --set-from with a fit block (the interval), --seeds (CU over
# the seeds), and their usage errors
fit=$root/tests/data/plan/fit_efficiency.json
expect 0 "report --set-from fit --seeds" -- "$bin" report "$root/tests/data/plan/failures.json" \
  --grid 0.1,10 --target-cu 0.7 --set-from "$fit" --samples 5 --seeds 5 --quiet \
  --out "$tmp/sure.html"
for t in '<th>\[5%, 95%\]</th>' '<table class="seeds">' \
         '5th and 95th percentiles of the least bandwidth over 5 draws of the fitted keys (network.efficiency)' \
         'not the model&#39;s own error' 'CU over 5 seeds' \
         'Gbit/s for the 5th percentile of CU &gt;= 0.7.</p>'; do
  contains "$tmp/sure.html" "$t" "report, how sure"
done
expect 0 "report --seeds, no randomness" -- "$bin" report "$root/tests/data/table/one_layer_dp.json" \
  --grid 1,10 --seeds 3 --quiet
contains "$tmp/out" '<td>no randomness</td>' "report --seeds without randomness"
lacks "$tmp/out" '5%, 95%\]</th>' "report --seeds: no interval without a fit"
for args in "--samples 0" "--seeds x" "--seed -2"; do
  expect 2 "report $args" -- "$bin" report "$sc" $grid --set-from "$fit" $args \
    --out "$tmp/none.html"
  contains "$tmp/err" "^dilosim report: .*(see 'dilosim report --help')$" "report $args: usage"
done
expect 2 "report --samples without a fit" -- "$bin" report "$sc" $grid --samples 5 \
  --out "$tmp/none.html"
absent "$tmp/none.html" "report, how sure: errors"

# the assumptions say what the run uses: the latency matrix (not the
# unused latency_ms), completion, transport, efficiency, overhead, ring order
cat >"$tmp/net.json" <<'EOF'
{"model": {"params": 1e8, "layers": 4, "step_time_s": 0.1},
 "workers": {"count": 3},
 "network": {"bandwidth_gbps": 10, "collective": "star", "completion": "member",
             "latency_matrix_ms": [[0, 10, 50], [10, 0, 50], [50, 50, 0]],
             "transport": "tcp", "tcp_init_window_kb": 64, "efficiency": 0.95,
             "collective_overhead_ms": 2.5, "ring_order": [1, 0, 2]},
 "method": {"name": "diloco", "H": 10}, "steps": 20, "seed": 1}
EOF
expect 0 "report of a latency matrix" -- "$bin" report "$tmp/net.json" --grid 1,10 --quiet
for t in '<th>one-way latency, ms</th><td>per pair, from row to column: 0, 10, 50; 10, 0, 50; 50, 50, 0</td>' \
         '<th>a worker passes an all-reduce</th><td>member: once it has its own result</td>' \
         '<th>transport</th><td>tcp: slow start from 64 kB, restart after idle</td>' \
         '<th>payload share of the line rate</th><td>0.95</td>' \
         '<th>overhead per collective step</th><td>2.5 ms</td>' \
         '<th>ring order (star: hub first)</th><td>1, 0, 2</td>'; do
  contains "$tmp/out" "$t" "report assumptions"
done
lacks "$tmp/out" '<th>one-way latency, ms</th><td>0</td>' "report assumptions: latency_ms unused"

# curve titles are whole: two sweep values sharing their first 1100 bytes
# are two curves (the title "description=aaa...a1" and "...a2"), not one
long=$(awk 'BEGIN { while (n++ < 1100) printf "a" }')
cat >"$tmp/long.json" <<EOF
{"model": {"params": 1e8, "layers": 4, "step_time_s": 0.1},
 "network": {"bandwidth_gbps": 10}, "method": {"name": "diloco", "H": 10},
 "steps": 20, "seed": 1, "sweep": {"description": "${long}1,${long}2"}}
EOF
expect 0 "report of long titles" -- "$bin" report "$tmp/long.json" --grid 1,10 --quiet
n=$(grep -c '<g id="s1-cu-gnuplot_plot_[0-9]*"' "$tmp/out")
if [ "$n" = 2 ]; then ok; else bad "report of long titles: $n curves, expected 2"; fi

# errors: one line, the right status, no page
printf 'old\n' >"$tmp/keep.html"
expect 1 "report without gnuplot" -- env PATH=/nonexistent-dilosim "$bin" report "$sc" \
  $grid --out "$tmp/keep.html"
contains "$tmp/err" "gnuplot: not found on PATH" "no gnuplot"
lines "$tmp/err" 1 "no gnuplot message"
contains "$tmp/keep.html" "old" "no gnuplot: the file is left alone"
expect 2 "report bad grid" -- "$bin" report "$sc" --grid 3,2 --out "$tmp/none.html"
expect 2 "report bad target" -- "$bin" report "$sc" --target-cu 2
expect 2 "report stdin" -- "$bin" report - --out "$tmp/none.html"
expect 2 "report unknown variant" -- "$bin" report "$sc" --variant nope --out "$tmp/none.html"
contains "$tmp/err" 'unknown variant "nope"' "unknown variant"
expect 2 "report no scenario" -- "$bin" report
absent "$tmp/none.html" "report errors"
no_temp "report errors"

# Two scenarios, one page; then the browser.
[ -n "$CLI_QUICK" ] || {
expect 0 "report of two" -- "$bin" report "$sc" "$root/scenarios/default.json" $grid \
  --out "$tmp/two.html"
n=$(grep -c '<section id="s[12]">' "$tmp/two.html")
if [ "$n" = 2 ]; then ok; else bad "report of two: $n sections"; fi
contains "$tmp/two.html" '<text>streaming</text>' "a base's curve is titled by its method"

chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$chrome" ]; then
  echo "cli_report: chromium not found, the rendering checks are skipped"
else
  run_chrome() {
    timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
      --user-data-dir="$tmp/chrome" --window-size=1200,2000 "$@" \
      "file://$page" 2>"$tmp/chrome.err"
  }
  run_chrome --dump-dom >"$tmp/dom.html"
  n=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
  if [ "$n" -ge 2 ]; then ok; else bad "DOM: $n <svg>, expected 2"; fi
  for t in '<table class="thresholds">' '<table class="assumptions">' \
           '<th>workers (datacenters)</th>' '<th>payload codec</th>' \
           'e3m0, one scale per tensor' '<th>CU ≥ 0.95</th>' '<polyline\|<path'; do
    contains "$tmp/dom.html" "$t" "DOM"
  done
  run_chrome --screenshot="$tmp/shot.png" >"$tmp/chrome.out"
  if [ -s "$tmp/shot.png" ] && command -v python3 >"$tmp/null"; then
    set -- $(python3 "$root/tests/png_colors.py" "$tmp/shot.png")
    # 1200 x 2000, text and lines in many colours over more than 5% of it
    if [ "$1 $2" = "1200 2000" ] && [ "$3" -ge 50 ] &&
       awk "BEGIN { exit !($4 > 0.05) }"; then ok
    else bad "screenshot looks blank: ${1}x$2, $3 colours, $4 inked"; fi
  else
    bad "no screenshot: $(tail -3 "$tmp/chrome.err")"
  fi
fi
}
finish cli_report
